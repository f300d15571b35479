"""Parameters declared once, in the spirit of scikit-learn's `_parameter_constraints`.

An estimator class lists its parameters in one place:

    class DSGClassifier(...):
        parameters = declare(C=C, gamma=GAMMA, batch_size=Param(64, "mini-batch size B", Integer(1, 10**7)))

and everything else derives from that declaration: the keyword-only `__init__` (generated, so
scikit-learn's get_params/clone see the same names), `_validate_params()` (run when training
begins), the config layer's checks of `algorithm.params`, `kernelbench algorithms` and the documentation
site's parameter tables. A value is valid when it satisfies any one of the parameter's constraints.

Parameters shared by several algorithms (C, gamma, kernel, threads, ...) are declared here once.
The constraints are kernelbench.schema's kinds (`Real`, `Integer`, `Choice` are their names here);
a value is checked as it is, without conversion (Either.holds), and refused in the schema's words.

A value derived from the data when the parameter is not given is spelt None (null in a config), and
the parameter's text says how it is derived ("None = ⌈√n⌉"): `Param.derived`. A word names it only
where the parameter's values are words and the derived one is one of them (loss 'auto': hinge or
squared by the task; storage 'auto': dense or sparse), as scikit-learn's solver='auto' -- and where
published runs record the word (DSG's step and t0, CDSG's feature_variance: 'auto'): a config's
resolved params, and so its hash, must stay those of its published runs.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, replace
from typing import Any

from kernelbench.errors import ConfigError, SolverError
from kernelbench.schema import (Anything, Count, Either, Flag, Null, Number, Text, Words, fail, number_from_string, show,
                                suggest)
from kernelbench.spaces import LogUniform


# ---- constraints: the schema's kinds (kernelbench/schema/kinds.py), spelt as estimators declare them --
def Real(low=None, high=None, *, open_low=False, open_high=False) -> Number:
    return Number(low, high, open_low=open_low, open_high=open_high)


def Integer(low=None, high=None) -> Count:
    return Count(low, "an integer", most=high)


def Choice(*words) -> Words:
    return Words(tuple(words))


POSITIVE = Real(0, open_low=True)
BOOLEAN = Flag()
NONE = Null()
TEXT = Text(None, "a string", empty=True)


# ---- one parameter -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Param:
    """A parameter: default, one-line doc, the constraints a value may satisfy (any one of them).
    `config=False` for parameters the experiment loop sets (random_state from `seed`, passes from `stop`);
    `search`: the range `tune` samples by default (kernelbench/spaces.py), None = not searched."""
    default: Any
    doc: str
    allowed: tuple
    config: bool = True
    search: Any = None

    @property
    def kind(self) -> Either:
        """The value it takes, as one schema kind: any one of its constraints, taken as it is."""
        return Either(self.allowed)

    def accepts(self, value) -> bool:
        return self.kind.holds(value)

    def describe(self) -> str:
        return self.kind.describe()

    def words(self) -> tuple:
        """The words (strings) this parameter accepts."""
        return tuple(w for c in self.allowed if isinstance(c, Words) for w in c.words
                     if isinstance(w, str))

    def number_kind(self):
        """int or float when numbers are accepted (int when only integers are), else None."""
        kinds = [c for c in self.allowed if isinstance(c, (Number, Count))]
        if not kinds:
            return None
        return int if all(isinstance(c, Count) for c in kinds) else float

    def but(self, **changes) -> "Param":
        """This parameter with some fields changed (another default, doc or constraints)."""
        if "allowed" in changes:
            changes["allowed"] = tuple(changes["allowed"])
        return replace(self, **changes)

    def read(self, value, path: str):
        """A value a config gives (kernelbench/config/algorithm.py), as YAML leaves it: a number written
        as a string (YAML 1.1 reads `1e-3` as one) becomes a number, an integer where a float is
        declared a float, an integral float where an integer is an integer; then it must be held as
        set in code (`accepts`), else refused naming `path` and what is allowed."""
        if type(value) is type(self.default) and value == self.default:
            return value                # the algorithm's own default is valid by declaration
        kind = self.number_kind()
        result = value
        if isinstance(value, str) and kind is not None and value not in self.words():
            number = number_from_string(value)
            if number is not None:
                result = number
        if kind is float and isinstance(result, int) and not isinstance(result, bool):
            result = float(result)
        if kind is int and isinstance(result, float) and math.isfinite(result) and result.is_integer():
            result = int(result)
        if not self.accepts(result):
            suggestion = suggest(value, self.words()) if isinstance(value, str) else ""
            fail(path, f"expected {self.describe()}, got {show(value)}{suggestion}")
        return result

    def derived(self, doc: str) -> "Param":
        """This parameter derived from the data unless given: None by default, `doc` saying how
        ("None = ..."), the one spelling of a derived value (the module's docstring)."""
        return self.but(default=None, allowed=self.allowed + (NONE,), doc=doc)

    def check(self, name: str, value, owner: str = "") -> None:
        """Raise ValueError naming the parameter, the value and what is allowed (the schema's refusal,
        worded as a Python error: `owner: name must be ..., got value`)."""
        try:
            self.kind.read(value, name)
        except ConfigError as refused:
            where = f"{owner}: " if owner else ""
            raise ValueError(f"{where}{name} {refused.problem}") from None


def param(default, doc: str, *allowed, config: bool = True, search=None) -> Param:
    if not allowed:
        raise TypeError("a parameter needs at least one constraint")
    declared = Param(default, doc, tuple(allowed), config, search)
    declared.check("default", default)      # a declaration that refuses its own default is a bug
    return declared


def declare(*bases: dict, **params: Param) -> dict:
    """A parameters mapping: the bases' entries (in order), then `params` (added or replaced)."""
    merged: dict = {}
    for base in bases:
        merged.update(base)
    merged.update(params)
    return merged


def with_defaults(parameters: dict, **defaults) -> dict:
    """The same parameters with other defaults (e.g. a regressor's loss)."""
    out = dict(parameters)
    for name, value in defaults.items():
        out[name] = out[name].but(default=value)
        out[name].check(name, value)
    return out


# ---- what an estimator class derives from its declaration ------------------------------------------
def make_init(parameters: dict):
    """A keyword-only __init__ that stores each parameter unchanged (scikit-learn's convention)."""
    names = tuple(parameters)
    defaults = {n: p.default for n, p in parameters.items()}

    def __init__(self, **kwargs):
        unknown = [k for k in kwargs if k not in defaults]
        if unknown:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword argument(s) "
                            f"{', '.join(map(repr, unknown))}; its parameters: {', '.join(names)}")
        for name in names:
            setattr(self, name, kwargs.get(name, defaults[name]))

    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=defaults[n]) for n in names])
    return __init__


def parameters_docstring(parameters: dict) -> str:
    """The numpydoc "Parameters" section of a declaration: each parameter with what it accepts, its
    default and its doc."""
    lines = ["Parameters", "----------"]
    for name, declared in parameters.items():
        lines.append(f"{name} : {declared.describe()}, default={declared.default!r}")
        lines.append(f"    {declared.doc}")
    return "\n".join(lines)


class Declared:
    """Mixin: a subclass with `parameters` gets the generated __init__, `_check_params` and a
    docstring whose "Parameters" section is generated from the declaration (help() lists them)."""
    parameters: dict = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "parameters" in cls.__dict__ and "__init__" not in cls.__dict__:
            cls.__init__ = make_init(cls.parameters)
        if cls.parameters:
            summary = inspect.cleandoc(cls.__dict__.get("__doc__") or "")
            summary = summary.split("\n\nParameters\n----------")[0]
            cls.__doc__ = (summary + "\n\n" if summary else "") + parameters_docstring(cls.parameters)

    def _check_params(self):
        """Every declared parameter's value against its constraints (a SolverError naming it)."""
        for name, declared in self.parameters.items():
            try:
                declared.check(name, getattr(self, name), type(self).__name__)
            except ValueError as e:
                raise SolverError(str(e)) from None


def config_parameters(parameters: dict) -> dict:
    """The parameters a config may set (not the experiment loop's own: random_state, passes)."""
    return {n: p for n, p in parameters.items() if p.config}


def union(*declarations: dict) -> dict:
    """One algorithm's parameters over its task classes (classifier, regressor): the same names,
    constraints pooled (e.g. the classifier's and the regressor's losses); defaults must agree."""
    first = declarations[0]
    for other in declarations[1:]:
        if set(other) != set(first):
            raise RuntimeError(f"task classes declare different parameters: {sorted(set(first) ^ set(other))}")
    merged = {}
    for name, declared in first.items():
        allowed = list(declared.allowed)
        for other in declarations[1:]:
            if other[name].default != declared.default:
                raise RuntimeError(f"task classes give {name!r} different defaults; use 'auto'")
            allowed += [c for c in other[name].allowed if c not in allowed]
        merged[name] = declared.but(allowed=_pool_options(allowed))
    return merged


def _pool_options(allowed: list) -> tuple:
    words = [w for c in allowed if isinstance(c, Words) for w in c.words]
    rest = [c for c in allowed if not isinstance(c, Words)]
    pooled = tuple(dict.fromkeys(words))
    return tuple(rest) + ((Words(pooled),) if pooled else ())


# ---- parameters several algorithms share (one declaration each) ------------------------------------
KERNELS = ("rbf", "laplacian")
# Default search ranges (tune, and grid without `grid:`): C over six decades around LIBSVM's
# usual optimum on standardised data; γ from 1/16 to 64 times the median-trick value, which
# scales with the features (a fixed range would not).
C = param(1.0, "regularisation: λ = 1/(n·C)", POSITIVE, search=LogUniform(1e-2, 1e4))
GAMMA = param("median", "kernel width γ in exp(-γ‖x−x'‖²), or from the training data: 'median' (the median "
                        "trick, 1/(2·median‖x−x'‖²)) or 'scale' (1/(d·Var X), scikit-learn SVC's default)",
              POSITIVE, Choice("median", "scale"), search=LogUniform(1 / 16, 64, times="median"))
KERNEL = param("rbf", "rbf exp(-γ‖x−x'‖²) or laplacian exp(-γ‖x−x'‖₁)", Choice(*KERNELS))
RBF_ONLY = param("rbf", "the Gaussian kernel exp(-γ‖x−x'‖²)", Choice("rbf"))
THREADS = param(1, "OpenMP threads (set it to the number of idle cores; 0 = all cores)", Integer(0, 4096))
DTYPE = param("float32", "precision of features and phases (coefficients are float64)",
              Choice("float32", "float64"))
TOL = param(1e-3, "stopping tolerance of the solver", POSITIVE)
CACHE_MB = param(1000.0, "kernel cache size in MB", POSITIVE)
RANDOM_STATE = param(None, "seed of the run (set from the config's `seed`)",
                     Anything("an integer, None or a numpy random generator"), config=False)
PASSES = param(1.0, "passes over the data made by fit() (the experiment loop uses `stop` instead)",
               POSITIVE, config=False)
