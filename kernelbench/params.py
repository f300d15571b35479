"""Parameters declared once, in the spirit of scikit-learn's `_parameter_constraints`.

An estimator class lists its parameters in one place:

    class DSGClassifier(...):
        parameters = declare(C=C, gamma=GAMMA, batch_size=Param(64, "mini-batch size B", Integer(1, 10**7)))

and everything else derives from that declaration: the keyword-only `__init__` (generated, so
scikit-learn's get_params/clone see the same names), `_validate_params()` (run when training
begins), the config layer's checks of `algorithm.params`, `kernelbench algorithms` and the documentation
site's parameter tables. A value is valid when it satisfies any one of the parameter's constraints.

Parameters shared by several algorithms (C, gamma, kernel, threads, ...) are declared here once.
"""
from __future__ import annotations

import inspect
import math
import numbers
from dataclasses import dataclass, replace
from typing import Any

from kernelbench.errors import SolverError
from kernelbench.spaces import LogUniform


# ---- constraints ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    """A number in [low, high] (an open end with `open_low` / `open_high`; None = unbounded);
    `integer` admits integers only (bool never counts as a number)."""
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    integer: bool = False

    def accepts(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if self.integer and not isinstance(value, numbers.Integral):
            return False
        if not math.isfinite(value):
            return False
        if self.low is not None and (value < self.low or (self.open_low and value == self.low)):
            return False
        if self.high is not None and (value > self.high or (self.open_high and value == self.high)):
            return False
        return True

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a number"
        low = None if self.low is None else f"{'>' if self.open_low else '>='} {_number(self.low)}"
        high = None if self.high is None else f"{'<' if self.open_high else '<='} {_number(self.high)}"
        bounds = " and ".join(b for b in (low, high) if b)
        return f"{kind} {bounds}" if bounds else kind


def Real(low=None, high=None, *, open_low=False, open_high=False) -> Interval:
    return Interval(low, high, open_low, open_high, integer=False)


def Integer(low=None, high=None) -> Interval:
    return Interval(low, high, integer=True)


POSITIVE = Real(0, open_low=True)


@dataclass(frozen=True)
class Options:
    """One of a fixed set of words (or values)."""
    words: tuple

    def accepts(self, value) -> bool:
        return any(type(value) is type(w) and value == w for w in self.words)

    def describe(self) -> str:
        if len(self.words) == 1:
            return repr(self.words[0])
        return "one of " + ", ".join(repr(w) for w in self.words)


def Choice(*words) -> Options:
    return Options(tuple(words))


@dataclass(frozen=True)
class _Kind:
    """Any value of a Python type (bool: true/false; None: null)."""
    kind: type
    name: str

    def accepts(self, value) -> bool:
        if self.kind is type(None):
            return value is None
        if self.kind is bool:
            return isinstance(value, bool) or type(value).__name__ == "bool_"
        return isinstance(value, self.kind)

    def describe(self) -> str:
        return self.name


BOOLEAN = _Kind(bool, "true or false")
NONE = _Kind(type(None), "null")
TEXT = _Kind(str, "a string")


def _number(x) -> str:
    return f"{x:,}" if isinstance(x, int) and abs(x) >= 10_000 else f"{x:g}"


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

    def accepts(self, value) -> bool:
        return any(c.accepts(value) for c in self.allowed)

    def describe(self) -> str:
        return " or ".join(c.describe() for c in self.allowed)

    def words(self) -> tuple:
        """The words (strings) this parameter accepts."""
        return tuple(w for c in self.allowed if isinstance(c, Options) for w in c.words
                     if isinstance(w, str))

    def number_kind(self):
        """int or float when numbers are accepted (int when only integers are), else None."""
        kinds = [c for c in self.allowed if isinstance(c, Interval)]
        if not kinds:
            return None
        return int if all(c.integer for c in kinds) else float

    def but(self, **changes) -> "Param":
        """This parameter with some fields changed (another default, doc or constraints)."""
        if "allowed" in changes:
            changes["allowed"] = tuple(changes["allowed"])
        return replace(self, **changes)

    def check(self, name: str, value, owner: str = "") -> None:
        """Raise ValueError naming the parameter, the value and what is allowed."""
        if not self.accepts(value):
            where = f"{owner}: " if owner else ""
            raise ValueError(f"{where}{name} must be {self.describe()}, got {value!r}")


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
    words = [w for c in allowed if isinstance(c, Options) for w in c.words]
    rest = [c for c in allowed if not isinstance(c, Options)]
    pooled = tuple(dict.fromkeys(words))
    return tuple(rest) + ((Options(pooled),) if pooled else ())


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
                     _Kind(object, "an integer, None or a numpy random generator"), config=False)
PASSES = param(1.0, "passes over the data made by fit() (the experiment loop uses `stop` instead)",
               POSITIVE, config=False)
