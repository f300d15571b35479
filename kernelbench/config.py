"""YAML experiment config -> validated, typed, frozen `ExperimentConfig`.

Everything a user can get wrong is refused here, before any work starts, as a `ConfigError` whose
message starts with the field's dotted path (`algorithm.params.gamma: ...`), says what was given
and what is allowed (the known keys, algorithms, datasets or the expected type) and, for a
misspelt key or name, suggests the closest match.

The fields, their defaults and meanings are declared once, in config_fields.yaml (read into
`FIELDS`): the key lists the validation accepts are derived from it, `kernelbench config` prints it, and the README's config
section is generated from it (`kernelbench config --markdown`, kept equal by tests/test_readme.py).
"""
from __future__ import annotations

import copy
import dataclasses
import difflib
import itertools
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from kernelbench import _vocab
from kernelbench._io import safe_name
from kernelbench._vocab import (DTYPES, METRICS, PROTOCOLS, REGRESSION_ONLY_METRICS, ROLES, SCALINGS, SYNTHETIC,
                                TAGS, TASKS, VALIDATIONS)
from kernelbench.data.load import classes_task
from kernelbench.data.registry import dataset_names, get_spec
from kernelbench.data.synthetic import MAX_ROWS, SHAPES, VARIANTS
from kernelbench.errors import ConfigError, KernelbenchError
from kernelbench.estimators import algorithms
from kernelbench.papers import paper_ids
from kernelbench.search import parse_space, space_to_dict

__all__ = [
    "DatasetConfig", "AlgorithmConfig", "StopConfig", "EvaluateConfig", "ExperimentConfig", "TagsConfig",
    "TuneConfig", "FIELDS", "load_config", "config_from_dict", "config_to_dict", "expand_grid",
    "parse_duration", "fields_markdown",
]


# --------------------------------------------------------------------------------------------
# The fields (one declaration: documentation, and the keys each section accepts)
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Field:
    key: str            # dotted path, e.g. "dataset.labeled"
    default: str        # as the user would write it, or a sentence
    doc: str


def _load_fields() -> tuple[Field, ...]:
    """config_fields.yaml, with each {NAME} in a doc replaced by the words of _vocab.NAME."""
    vocab = {name: getattr(_vocab, name) for name in dir(_vocab)
             if name.isupper() and isinstance(getattr(_vocab, name), tuple)}
    words = {name: (", " if name == "METRICS" else " and " if name == "REGRESSION_ONLY_METRICS" else " | ")
             .join(values) for name, values in vocab.items()}
    data = yaml.safe_load((Path(__file__).with_name("config_fields.yaml")).read_text(encoding="utf-8"))
    return tuple(Field(key, entry["default"], re.sub(r"\{([A-Z_]+)\}", lambda m: words[m.group(1)], entry["doc"]))
                 for key, entry in data.items())


FIELDS = _load_fields()

VALUE_RULES = """\
Values of algorithm parameters (and grid values): bool is not an int; an int is fine where a float is
expected, an integral float (1000.0) where an int is; `1e-3` (which YAML 1.1 reads as a string) is a
number, other quoted numbers ("0.5") are refused; NaN and infinities are refused everywhere. Overrides
from the command line (`--set KEY=VALUE` with a dotted key, `--seed`, `--threads`, `--trials`, ...) are
applied before validation."""


def _keys(section: str = "") -> tuple:
    """The keys FIELDS declares directly under `section` ("" = the top level)."""
    depth = section.count(".") + 1 if section else 0
    prefix = f"{section}." if section else ""
    return tuple(f.key.split(".")[depth] for f in FIELDS
                 if f.key.startswith(prefix) and f.key.count(".") == depth)


def fields_markdown() -> str:
    """The README's config section: every field, its default and meaning, and the value rules."""
    lines = ["| field | default | meaning |", "|---|---|---|"]
    for f in FIELDS:
        doc = f.doc.replace("|", "\\|")
        default = f.default.replace("|", "\\|")
        lines.append(f"| `{f.key}` | {default} | {doc} |")
    return "\n".join(lines + ["", VALUE_RULES])


TOP_LEVEL_KEYS = _keys()
SYNTHETIC_KEYS = ("shape", "n", "n_test", "noise", "data_seed", "variant")
DATASET_KEYS = tuple(k for k in _keys("dataset") if k not in SYNTHETIC_KEYS)
ALGORITHM_KEYS = _keys("algorithm")
STOP_KEYS = _keys("stop")
EVALUATE_KEYS = _keys("evaluate")
TUNE_KEYS = _keys("tune")
EVALUATE_METRICS = METRICS
_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(s|m|min|h)?\s*$")
_FIGURE_RE = re.compile(r"^(fig|table)[0-9]+[a-z]*$")
_METRIC_ALIASES = {"train_objective": "objective"}   # the objective measured on the training rows
_MAX_GRID_AXIS = 1000
_MAX_GRID_CELLS = 100_000
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
# YAML 1.1 (PyYAML) reads numbers with an exponent but no dot, or no sign in the exponent
# ("1e-3", "1.0e3"), as strings.
_EXPONENT_RE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


# --------------------------------------------------------------------------------------------
# The typed config
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DatasetConfig:
    name: str | None
    path: str | None
    subsample: int | None = None
    test: str | float = "official"      # "official" | "none" | fraction in (0, 1)
    labeled: int | None = None
    scale: str = "none"                 # none | standard | minmax
    labeled_only: bool = False          # supervised algorithm + labeled: train on the labeled rows alone
    pca: int | None = None              # project onto <= this many principal components (train-fitted)
    task: str | None = None             # override the registry's / inferred task (e.g. regression)
    dtype: str = "float64"              # float64 | float32 features
    strict: bool = False                # refuse files that need repairs
    classes: tuple | None = None        # keep only rows of these labels; two make a binary task
    shape: str | None = None            # name: synthetic -- the generator's arguments
    n: int | None = None
    n_test: int | None = None
    noise: float | None = None
    data_seed: int | None = None
    variant: int | None = None

    def synthetic(self) -> dict | None:
        """The synthetic generator's arguments (kernelbench.data.synthetic.SyntheticSpec), or None."""
        if self.name != SYNTHETIC:
            return None
        return {"shape": self.shape or "susy", "n": self.n, "n_test": self.n_test, "noise": self.noise,
                "seed": self.data_seed or 0, "variant": self.variant or 1}


@dataclass(frozen=True)
class AlgorithmConfig:
    name: str
    params: dict                        # every parameter of the algorithm, defaults filled in


@dataclass(frozen=True)
class StopConfig:
    """When a run stops. All unset (a config without `stop`): as the estimator's own `fit`, i.e. its
    `passes` parameter (`auto`: the data-driven count it resolves at begin). `fraction` (not a config
    key) scales that count: tune's rungs on a config without `stop`."""
    passes: float | None = None
    iterations: int | None = None
    seconds: float | None = None
    fraction: float | None = None

    @property
    def as_fit(self) -> bool:
        return self.passes is None and self.iterations is None and self.seconds is None

    def as_dict(self) -> dict:
        """The config keys that are set (config_to_dict)."""
        return {key: getattr(self, key) for key in STOP_KEYS if getattr(self, key) is not None}


@dataclass(frozen=True)
class EvaluateConfig:
    every: int | None = None            # None: about 10 evaluation points per pass
    on: tuple[str, ...] = ("objective", "train_error", "test_error")


@dataclass(frozen=True)
class TagsConfig:
    """What a run is for: labels only, they change nothing that is computed."""
    paper: str | None = None            # a paper id (kernelbench.papers)
    figure: str | None = None           # fig<N> | table<N>
    panel: str | None = None
    role: str | None = None             # one of ROLES

    def as_dict(self) -> dict:
        """The tags that are set (the form run.json and config_to_dict use)."""
        return {key: getattr(self, key) for key in TAGS if getattr(self, key) is not None}


@dataclass(frozen=True)
class TuneConfig:
    """How `kernelbench tune` searches (see the module docstring)."""
    validation: str | None = None       # None: holdout, or cv with dataset.labeled
    holdout: float = 0.2
    shuffle: bool = True
    rungs: int = 3
    eta: int = 3
    candidates: int | None = None
    budget: float | None = None         # seconds
    refine: int | None = None           # None: eta


@dataclass(frozen=True)
class ExperimentConfig:
    name: str
    dataset: DatasetConfig
    algorithm: AlgorithmConfig
    grid: dict                          # {param: [explicit values]}, log10 specs resolved
    cv: int
    trials: int
    seed: int
    stop: StopConfig
    evaluate: EvaluateConfig
    tags: TagsConfig = TagsConfig()
    source: str | None = None           # the config file, if it came from one
    search: dict = dataclasses.field(default_factory=dict)   # {param: distribution}; {} = the declared space
    tune: TuneConfig = TuneConfig()
    protocol: str = "held-out"          # one of PROTOCOLS
    then: dict = dataclasses.field(default_factory=dict)     # second grid stage ({} = none), as `grid`
    shortened: str | None = None        # how it departs from the paper's protocol to fit a budget


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------

def load_config(path, *, overrides: dict | None = None) -> ExperimentConfig:
    """Read a YAML config (yaml.safe_load only), apply CLI overrides, validate, resolve."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a config file") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config file: {e.strerror or e}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
    if data is None:
        raise ConfigError(f"{path}: the config file is empty; it needs at least `dataset:` and "
                          f"`algorithm:` (see configs/quickstart.yaml)")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys "
                          f"({', '.join(TOP_LEVEL_KEYS)}), got {_show(data)}")
    try:
        return _build(data, default_name=safe_name(path.stem, default="experiment"), overrides=overrides,
                      base_dir=path.resolve().parent, source=str(path))
    except ConfigError as e:
        err = ConfigError(f"{path}: {e}")
        err.field = getattr(e, "field", None)
        raise err from None


def config_from_dict(data: dict, *, default_name: str = "experiment", overrides: dict | None = None,
                     base_dir=None) -> ExperimentConfig:
    """Validate an already-parsed config. `base_dir` resolves a relative dataset.path (default: cwd)."""
    if not isinstance(data, dict):
        raise ConfigError(f"the config must be a mapping of keys ({', '.join(TOP_LEVEL_KEYS)}), "
                          f"got {_show(data)}")
    return _build(data, default_name=default_name, overrides=overrides,
                  base_dir=Path(base_dir) if base_dir is not None else Path.cwd(), source=None)


def config_to_dict(cfg: ExperimentConfig) -> dict:
    """The resolved config as plain YAML/JSON data; `config_from_dict` of it gives `cfg` back
    (except `source`, which is run metadata, not config)."""
    return {
        "name": cfg.name,
        "dataset": {f.name: _plain(getattr(cfg.dataset, f.name)) for f in dataclasses.fields(cfg.dataset)
                    if (f.name not in SYNTHETIC_KEYS or cfg.dataset.name == SYNTHETIC)
                    # classes and variant only when set: the configs (and resume) of earlier runs stay
                    # as they were
                    and not (f.name in ("classes", "variant") and getattr(cfg.dataset, f.name) is None)},
        "algorithm": {"name": cfg.algorithm.name, "params": _plain(cfg.algorithm.params)},
        "grid": _plain(cfg.grid),
        "cv": cfg.cv,
        "trials": cfg.trials,
        "seed": cfg.seed,
        **({"stop": cfg.stop.as_dict()} if not cfg.stop.as_fit else {}),
        "evaluate": {"every": cfg.evaluate.every, "on": list(cfg.evaluate.on)},
        "tags": cfg.tags.as_dict(),
        **({"search": space_to_dict(cfg.search)} if cfg.search else {}),
        **({"tune": dataclasses.asdict(cfg.tune)} if cfg.tune != TuneConfig() else {}),
        # only when not the default: held-out runs keep the config (and resume) they had before
        **({"protocol": cfg.protocol} if cfg.protocol != "held-out" else {}),
        **({"then": _plain(cfg.then)} if cfg.then else {}),     # only when set, as protocol
        **({"shortened": cfg.shortened} if cfg.shortened else {}),
    }


def expand_grid(grid: dict) -> list[dict]:
    """Cartesian product of a grid: one dict per cell. Keys are taken in sorted order and the last
    key varies fastest (as scikit-learn's ParameterGrid); each axis keeps its given order. An axis
    is a list or {log10: [lo, hi, num]} (np.logspace). An empty grid gives one empty cell."""
    if grid is None:
        return [{}]
    if not isinstance(grid, dict):
        raise ConfigError(f"grid: expected a mapping of parameter -> values, got {_show(grid)}")
    keys = sorted(grid, key=str)
    axes = [_grid_axis(grid[k], _join("grid", k)) for k in keys]
    _check_grid_size(keys, axes)
    return [dict(zip(keys, combo)) for combo in itertools.product(*axes)]


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------

def _fail(field: str, message: str):
    err = ConfigError(f"{field}: {message}" if field else message)
    err.field = field
    raise err


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _show(value) -> str:
    """A short description of a value as the user wrote it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return f"the string {text!r}"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (dict, list, tuple)):
        text = repr(value)
        text = text if len(text) <= 60 else text[:57] + "..."
        return f"a {'mapping' if isinstance(value, dict) else 'list'} {text}"
    return f"a {type(value).__name__} ({str(value)[:40]})"


def _suggest(word, choices) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_keys(mapping: dict, allowed, path: str):
    for key in mapping:
        if key not in allowed:
            where = f"in {path}" if path else "at the top level"
            _fail(_join(path, key), f"unknown key; allowed {where}: {', '.join(allowed)}"
                                    f"{_suggest(key, allowed)}")


def _mapping(value, path: str, allowed) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail(path, f"expected a mapping with keys {', '.join(allowed)}, got {_show(value)}")
    _check_keys(value, allowed, path)
    return value


def _number_from_string(value: str):
    if _EXPONENT_RE.match(value.strip()):
        return float(value)
    return None


def _as_int(value, path: str, *, minimum: int | None = None, what: str = "an integer") -> int:
    result = None
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        result = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        result = int(value)
    elif isinstance(value, str):
        number = _number_from_string(value)
        if number is not None and math.isfinite(number) and number.is_integer():
            result = int(number)
    if result is None:
        _fail(path, f"expected {what}, got {_show(value)}")
    if minimum is not None and result < minimum:
        _fail(path, f"must be >= {minimum}, got {result}")
    return result


def _as_float(value, path: str) -> float:
    result = None
    if isinstance(value, bool):
        pass
    elif isinstance(value, (int, float)):
        try:
            result = float(value)
        except OverflowError:
            _fail(path, f"number too large: {value}")
    elif isinstance(value, str):
        result = _number_from_string(value)
    if result is None:
        _fail(path, f"expected a number, got {_show(value)}")
    if not math.isfinite(result):
        _fail(path, f"must be a finite number, got {value!r}")
    return result


def _param_value(value, declared, path: str):
    """One algorithm parameter checked against its declaration (kernelbench/params.py): numbers
    written as strings (YAML 1.1 reads `1e-3` as one) become numbers, an integer where a float is
    declared becomes a float, and a refused value is reported with what is allowed."""
    if _same(value, declared.default):
        return value                # the algorithm's own default is valid by declaration
    kind = declared.number_kind()
    result = value
    if isinstance(value, str) and kind is not None and value not in declared.words():
        number = _number_from_string(value)
        if number is not None:
            result = number
    if kind is float and isinstance(result, int) and not isinstance(result, bool):
        result = float(result)
    if kind is int and isinstance(result, float) and math.isfinite(result) and result.is_integer():
        result = int(result)
    if not declared.accepts(result):
        suggestion = _suggest(value, declared.words()) if isinstance(value, str) else ""
        _fail(path, f"expected {declared.describe()}, got {_show(value)}{suggestion}")
    return result


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def _validate_algorithm(raw, *, threads, task=None):
    """-> (AlgorithmConfig, spec, its config parameters)."""
    if isinstance(raw, str):                   # shorthand: `algorithm: dsg`
        raw = {"name": raw}
    if raw is None:
        _fail("algorithm", f"required: the algorithm to run, e.g. `algorithm: {{name: NAME}}`; "
                           f"known algorithms: {', '.join(sorted(algorithms())) or '(none)'}")
    raw = _mapping(raw, "algorithm", ALGORITHM_KEYS)
    known = algorithms()
    name = raw.get("name")
    if name is None:
        _fail("algorithm.name", f"required; known algorithms: {', '.join(sorted(known)) or '(none)'}")
    if not isinstance(name, str):
        _fail("algorithm.name", f"expected a string, got {_show(name)}; known algorithms: "
                                f"{', '.join(sorted(known)) or '(none)'}")
    if name not in known:
        _fail("algorithm.name", f"unknown algorithm {name!r}{_suggest(name, known)}; known "
                                f"algorithms: {', '.join(sorted(known)) or '(none)'}")
    spec = known[name]
    declared = spec.parameters
    params = raw.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        _fail("algorithm.params", f"expected a mapping of parameter names to values, got "
                                  f"{_show(params)}; parameters of {name}: {', '.join(declared)}")
    params = dict(params)
    if threads is not None:
        if "threads" not in declared:
            _fail("threads", f"algorithm {name!r} has no `threads` parameter (it runs on one "
                             f"thread), so --threads/threads cannot be set; its parameters: "
                             f"{', '.join(declared) or '(none)'}")
        params["threads"] = threads
    _check_keys(params, tuple(declared), "algorithm.params")
    resolved = {}
    for pname, decl in declared.items():
        path = f"algorithm.params.{pname}"
        resolved[pname] = _param_value(params[pname], decl, path) if pname in params else decl.default
    _construct(spec, resolved, "algorithm.params", task)
    return AlgorithmConfig(name=name, params=resolved), spec, declared


def _construct(spec, params: dict, path: str, task: str | None):
    """Let the estimator's own checks (its declaration and cross-parameter rules) speak, as a
    ConfigError, before any work starts. `task` None (a user file, task known once loaded): the
    parameters must suit one of the algorithm's estimators (e.g. a regression-only loss)."""
    if task in spec.tasks:
        tasks = [task]
    elif task is None:
        tasks = list(spec.tasks)
    else:
        tasks = [spec.tasks[0]]     # a task the algorithm does not take is reported by the runner
    errors = []
    for t in tasks:
        try:
            spec.build(params, task=t)._check_params()
            return
        except (ValueError, TypeError, KernelbenchError) as e:
            errors.append(e)
    _fail(path, f"refused by algorithm {spec.name!r}: {errors[0]}")


def _dataset_task(dataset) -> str | None:
    """The task a config's dataset has: its `task` override, else that of its `classes` (two: binary,
    more: multi-class), else the registry's (None: a user file)."""
    if dataset.task is not None:
        return dataset.task
    registered = None
    if dataset.name is not None and dataset.name in list(dataset_names()):
        registered = get_spec(dataset.name).task
    if dataset.classes is not None:
        if registered == "regression":
            _fail("dataset.classes", f"selects classes of a classification task, but dataset "
                                     f"{dataset.name!r} is a regression task; set dataset.task to binary "
                                     f"or multiclass to read its targets as class labels, or drop classes")
        return classes_task(dataset.classes)
    return registered


def _grid_axis(value, path: str) -> list:
    """One grid axis as an explicit list (log10 specs expanded), structure checked."""
    if isinstance(value, dict):
        _check_keys(value, ("log10",), path)
        spec = value.get("log10")
        if not isinstance(spec, (list, tuple)) or len(spec) != 3:
            _fail(_join(path, "log10"), f"expected [lo, hi, num] (exponents of 10 and a count), "
                                        f"got {_show(spec)}")
        lo = _as_float(spec[0], _join(path, "log10") + "[0]")
        hi = _as_float(spec[1], _join(path, "log10") + "[1]")
        num = _as_int(spec[2], _join(path, "log10") + "[2]", minimum=1)
        if num > _MAX_GRID_AXIS:
            _fail(_join(path, "log10") + "[2]", f"at most {_MAX_GRID_AXIS} values, got {num}")
        if max(abs(lo), abs(hi)) > 300:
            _fail(_join(path, "log10"), f"exponents must lie in [-300, 300], got [{lo}, {hi}]")
        # 12 significant digits: 10**-3 is written 0.001, not 0.0010000000000000002.
        return [float(f"{x:.12g}") for x in np.logspace(lo, hi, num)]
    if isinstance(value, (list, tuple)):
        if not value:
            _fail(path, "empty list; give at least one value")
        if len(value) > _MAX_GRID_AXIS:
            _fail(path, f"at most {_MAX_GRID_AXIS} values, got {len(value)}")
        return list(value)
    _fail(path, f"expected a list of values or {{log10: [lo, hi, num]}}, got {_show(value)}")


def _check_grid_size(keys, axes, field="grid"):
    cells = 1
    for axis in axes:
        cells *= len(axis)
    if cells > _MAX_GRID_CELLS:
        _fail(field, f"{cells} cells ({' x '.join(str(len(a)) for a in axes)} over "
                      f"{', '.join(map(str, keys))}) is more than {_MAX_GRID_CELLS}; narrow it")


def _validate_grid(raw, spec, fields, params, *, task=None, field="grid") -> dict:
    """`grid:` (or `then:`, field="then") as {param: [explicit values]}."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        _fail(field, f"expected a mapping of parameter -> list or {{log10: [lo, hi, num]}}, "
                     f"got {_show(raw)}")
    _check_keys(raw, tuple(fields), field)
    grid = {}
    for key, value in raw.items():
        path = _join(field, key)
        declared = fields[key]
        values = []
        for i, item in enumerate(_grid_axis(value, path)):
            if isinstance(value, dict) and declared.number_kind() is int and isinstance(item, float):
                item = round(item)          # log-spaced counts (budget, batch_size): nearest int
            item = _param_value(item, declared, f"{path}[{i}]")
            if not any(_same(item, v) for v in values):     # duplicates would repeat cells
                values.append(item)
        grid[key] = values
    _check_grid_size(list(grid), list(grid.values()), field)
    for key, values in grid.items():          # each value on its own must satisfy the estimator
        for i, v in enumerate(values):
            _construct(spec, {**params, key: v}, f"{field}.{key}[{i}]", task)
    return grid


def _validate_then(raw, grid: dict, spec, fields, params, *, task=None) -> dict:
    """`then:`: the second stage of `kernelbench grid`, searched with the best `grid:` values fixed."""
    then = _validate_grid(raw, spec, fields, params, task=task, field="then")
    if then and not grid:
        _fail("then", "a second search stage needs a first one: add `grid:` (searched first, its "
                      "best values then fixed), or write these parameters under `grid:`")
    repeated = sorted(set(then) & set(grid), key=str)
    if repeated:
        _fail("then", f"{', '.join(map(str, repeated))} already in `grid:`; a parameter is searched in "
                      "one stage only: remove it from `then:` or from `grid:`")
    return then


def _validate_dataset(raw, base_dir: Path) -> DatasetConfig:
    if raw is None:
        _fail("dataset", "required: `dataset: {name: NAME}` for a registry dataset or "
                         "`dataset: {path: FILE}` for your own data")
    allowed = DATASET_KEYS + (SYNTHETIC_KEYS if isinstance(raw, dict) and raw.get("name") == SYNTHETIC else ())
    raw = _mapping(raw, "dataset", allowed)
    name, path = raw.get("name"), raw.get("path")
    if name is not None and path is not None:
        _fail("dataset", "give exactly one of `name` (a registry dataset) or `path` (your own "
                         "file), not both")
    if name is None and path is None:
        _fail("dataset", "give exactly one of `name` (a registry dataset) or `path` (your own file)")
    if name == SYNTHETIC:
        pass                                   # the generator's keys are checked below
    elif name is not None:
        known = list(dataset_names()) + [SYNTHETIC]
        if not isinstance(name, str):
            _fail("dataset.name", f"expected a string, got {_show(name)}; known datasets: "
                                  f"{', '.join(sorted(known))}")
        if name not in known:
            _fail("dataset.name", f"unknown dataset {name!r}{_suggest(name, known)}; known "
                                  f"datasets: {', '.join(sorted(known)) or '(none)'}; for your own "
                                  f"file write `path: FILE` instead")
    else:
        if not isinstance(path, str) or not path.strip():
            _fail("dataset.path", f"expected a file path (a string), got {_show(path)}")
        try:
            resolved = Path(path).expanduser()
            if not resolved.is_absolute():
                resolved = base_dir / resolved
            resolved = resolved.resolve()
            exists, is_file = resolved.exists(), resolved.is_file()
        except (OSError, ValueError, RuntimeError) as e:
            _fail("dataset.path", f"invalid path {path!r}: {e}")
        if not exists:
            _fail("dataset.path", f"file not found: {resolved} (given as {path!r}; a relative path "
                                  f"is taken from the config file's folder)")
        if not is_file:
            _fail("dataset.path", f"not a file: {resolved}")
        path = str(resolved)

    subsample = raw.get("subsample")
    if subsample is not None:
        subsample = _as_int(subsample, "dataset.subsample", minimum=1, what="a positive integer")
    labeled = raw.get("labeled")
    if labeled is not None:
        labeled = _as_int(labeled, "dataset.labeled", minimum=1, what="a positive integer")
    if subsample is not None and labeled is not None and labeled > subsample:
        _fail("dataset.labeled", f"{labeled} labeled points cannot come from a subsample of "
                                 f"{subsample}")
    labeled_only = raw.get("labeled_only", False)
    if labeled_only is None:
        labeled_only = False
    if not isinstance(labeled_only, bool):
        _fail("dataset.labeled_only", f"expected true or false, got {_show(labeled_only)}")
    if labeled_only and labeled is None:
        _fail("dataset.labeled_only", "needs dataset.labeled (the number of labeled rows to train on)")

    allowed_test = "'official', 'none' or a fraction in (0, 1) such as 0.2"
    test = raw.get("test", "official" if name is not None else 0.2)
    if test is None:
        test = "none"
    if isinstance(test, str) and test.strip().lower() in ("official", "none"):
        test = test.strip().lower()
        if test == "official" and name is None:
            _fail("dataset.test", "'official' needs a registry dataset (dataset.name); for your "
                                  "own file use a fraction such as 0.2, or 'none'")
    elif isinstance(test, (int, float, str)) and not isinstance(test, bool):
        if isinstance(test, str) and _number_from_string(test) is None:
            _fail("dataset.test", f"expected {allowed_test}, got {_show(test)}"
                                  f"{_suggest(test, ('official', 'none'))}")
        fraction = _as_float(test, "dataset.test")
        if not 0 < fraction < 1:
            _fail("dataset.test", f"a fraction must lie strictly between 0 and 1, got {test!r}")
        test = fraction
    else:
        _fail("dataset.test", f"expected {allowed_test}, got {_show(test)}")

    scale = raw.get("scale", "none")
    if scale is None:
        scale = "none"
    if not isinstance(scale, str) or scale not in SCALINGS:
        hint = _suggest(scale, SCALINGS) if isinstance(scale, str) else ""
        _fail("dataset.scale", f"expected one of {', '.join(SCALINGS)}, got {_show(scale)}{hint}")
    pca = raw.get("pca")
    if pca is not None:
        pca = _as_int(pca, "dataset.pca", minimum=1, what="a positive integer (number of components)")
    task = raw.get("task")
    if task is not None and (not isinstance(task, str) or task not in TASKS):
        hint = _suggest(task, TASKS) if isinstance(task, str) else ""
        _fail("dataset.task", f"expected one of {', '.join(TASKS)}, got {_show(task)}{hint}")
    dtype = raw.get("dtype", "float64")
    dtype = "float64" if dtype is None else dtype
    if not isinstance(dtype, str) or dtype not in DTYPES:
        hint = _suggest(dtype, DTYPES) if isinstance(dtype, str) else ""
        _fail("dataset.dtype", f"expected one of {', '.join(DTYPES)}, got {_show(dtype)}{hint}")
    strict = raw.get("strict", False)
    strict = False if strict is None else strict
    if not isinstance(strict, bool):
        _fail("dataset.strict", f"expected true or false, got {_show(strict)}")
    classes = _validate_classes(raw.get("classes"), task)
    synthetic = _validate_synthetic(raw) if name == SYNTHETIC else {}
    return DatasetConfig(name=name, path=path if name is None else None, subsample=subsample,
                         test=test, labeled=labeled, scale=scale, labeled_only=labeled_only, pca=pca,
                         task=task, dtype=dtype, strict=strict, classes=classes, **synthetic)


def _validate_classes(raw, task) -> tuple | None:
    """dataset.classes: a list of >= 2 distinct labels (numbers), kept as written."""
    if raw is None:
        return None
    if not isinstance(raw, (list, tuple)) or len(raw) < 2:
        _fail("dataset.classes", f"expected a list of at least two labels, e.g. [8, 6], got {_show(raw)}")
    for i, label in enumerate(raw):
        if isinstance(label, bool) or not isinstance(label, (int, float)) or not math.isfinite(label):
            _fail(f"dataset.classes[{i}]", f"expected a label (a number, as in the data file), got {_show(label)}")
    if len({float(v) for v in raw}) != len(raw):
        _fail("dataset.classes", f"a label is listed twice in {_show(raw)}; list each class once")
    if task == "regression":
        _fail("dataset.classes", "selects classes of a classification task, but dataset.task is regression; "
                                 "drop one of them")
    return tuple(raw)


def _validate_synthetic(raw: dict) -> dict:
    """The generator's arguments of `name: synthetic` (ranges as synthetic.SyntheticSpec checks them)."""
    shape = raw.get("shape", "susy")
    shape = "susy" if shape is None else shape
    if not isinstance(shape, str) or shape not in SHAPES:
        hint = _suggest(shape, SHAPES) if isinstance(shape, str) else ""
        _fail("dataset.shape", f"expected one of {', '.join(SHAPES)}, got {_show(shape)}{hint}")
    out = {"shape": shape}
    for key, minimum in (("n", 1), ("n_test", 0), ("data_seed", 0)):
        value = raw.get(key)
        if value is not None:
            value = _as_int(value, f"dataset.{key}", minimum=minimum, what="an integer")
            if key != "data_seed" and value > MAX_ROWS:
                _fail(f"dataset.{key}", f"at most {MAX_ROWS:,} rows, got {value:,}")
        out[key] = value
    noise = raw.get("noise")
    if noise is not None:
        noise = _as_float(noise, "dataset.noise")
        if not 0 <= noise < 0.5:
            _fail("dataset.noise", f"the label-noise rate (= Bayes error) must lie in [0, 0.5), got {noise}")
    out["noise"] = noise
    variant = raw.get("variant")
    if variant is not None:
        variant = _as_int(variant, "dataset.variant", minimum=1, what="an integer")
        if variant not in VARIANTS:
            _fail("dataset.variant", f"expected one of {', '.join(map(str, VARIANTS))}, got {variant}")
    out["variant"] = variant
    return out


def _validate_stop(raw) -> StopConfig:
    if raw is None:
        return StopConfig()
    raw = _mapping(raw, "stop", STOP_KEYS)
    passes, iterations, seconds = (raw.get(k) for k in STOP_KEYS)
    if passes is not None:
        passes = _as_float(passes, "stop.passes")
        if passes <= 0:
            _fail("stop.passes", f"must be > 0, got {passes}")
    if iterations is not None:
        iterations = _as_int(iterations, "stop.iterations", minimum=1, what="a positive integer")
    if seconds is not None:
        seconds = _as_float(seconds, "stop.seconds")
        if seconds <= 0:
            _fail("stop.seconds", f"must be > 0, got {seconds}")
    if passes is None and iterations is None and seconds is None:
        _fail("stop", f"set at least one of {', '.join(STOP_KEYS)} (or leave `stop` out to train as "
                      f"the algorithm's fit does: its `passes`)")
    return StopConfig(passes=passes, iterations=iterations, seconds=seconds)


def _validate_evaluate(raw, dataset: DatasetConfig, protocol: str = "held-out") -> EvaluateConfig:
    # protocol paper scores the unlabeled folds in the test_* columns, with or without a test part
    has_test = dataset.test != "none" or protocol == "paper"
    if isinstance(raw, dict) and True in raw and "on" not in raw:
        # YAML 1.1 (PyYAML) reads the bare key `on` as the boolean true: `evaluate: {on: [...]}`
        raw = {("on" if k is True else k): v for k, v in raw.items()}
    raw = _mapping(raw, "evaluate", EVALUATE_KEYS)
    every = raw.get("every")
    every = None if every is None else _as_int(every, "evaluate.every", minimum=1,
                                             what="a positive integer")
    on = raw.get("on")
    if on is None:
        on = ("objective", "train_error") + (("test_error",) if has_test else ())
        return EvaluateConfig(every=every, on=on)
    if isinstance(on, str):
        on = [on]
    if not isinstance(on, (list, tuple)) or not on:
        _fail("evaluate.on", f"expected a non-empty list of {', '.join(EVALUATE_METRICS)}, "
                             f"got {_show(on)}")
    metrics = []
    for i, metric in enumerate(on):
        metric = _METRIC_ALIASES.get(metric, metric) if isinstance(metric, str) else metric
        if not isinstance(metric, str) or metric not in EVALUATE_METRICS:
            hint = _suggest(metric, EVALUATE_METRICS) if isinstance(metric, str) else ""
            _fail(f"evaluate.on[{i}]", f"expected one of {', '.join(EVALUATE_METRICS)}, got "
                                       f"{_show(metric)}{hint}")
        if metric.startswith("test_") and not has_test:
            _fail(f"evaluate.on[{i}]", f"{metric} needs a test set, but dataset.test is 'none'")
        if metric not in metrics:
            metrics.append(metric)
    return EvaluateConfig(every=every, on=tuple(metrics))


def _validate_tags(raw) -> TagsConfig:
    raw = _mapping(raw, "tags", TAGS)
    tags = {}
    for key in TAGS:
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip() or len(value) > 100:
            _fail(f"tags.{key}", f"expected a non-empty string of at most 100 characters, got "
                                 f"{_show(value)}")
        if key == "paper" and value not in paper_ids():
            _fail("tags.paper", f"unknown paper {value!r}{_suggest(value, paper_ids())}; known papers: "
                                f"{', '.join(paper_ids())} (first author and year)")
        if key == "role" and value not in ROLES:
            _fail("tags.role", f"expected one of {', '.join(ROLES)}, got {_show(value)}"
                               f"{_suggest(value, ROLES)}")
        if key == "figure" and not _FIGURE_RE.match(value):
            _fail("tags.figure", f"expected fig<N> or table<N> as the paper numbers it (e.g. fig1, "
                                 f"table3), got {_show(value)}")
        tags[key] = value
    return TagsConfig(**tags)


def _apply_overrides(data: dict, overrides: dict | None):
    """-> (data with overrides written in, threads)."""
    threads = None
    if not overrides:
        return data, threads
    if not isinstance(overrides, dict):
        raise TypeError(f"overrides must be a dict, got {type(overrides).__name__}")
    for key, value in overrides.items():
        if value is None:
            continue                      # an option not given on the command line
        if key == "threads":
            threads = value
        elif isinstance(key, str) and key.split(".")[0] in TOP_LEVEL_KEYS:
            parts = key.split(".")
            target = data
            for i, part in enumerate(parts[:-1]):
                if not isinstance(target.get(part), dict):
                    if target.get(part) is not None:
                        _fail(".".join(parts[:i + 1]), f"cannot set {key} (from the command "
                                                       f"line): {_show(target.get(part))} is "
                                                       f"not a mapping")
                    target[part] = {}
                target = target[part]
            target[parts[-1]] = value
        else:
            allowed = TOP_LEVEL_KEYS + ("threads",)
            _fail(str(key), f"unknown override (from the command line); allowed: "
                            f"{', '.join(allowed)} or a dotted path such as stop.seconds"
                            f"{_suggest(key, allowed)}")
    return data, threads


def _build(data: dict, *, default_name: str, overrides, base_dir: Path, source) -> ExperimentConfig:
    data = copy.deepcopy(data)
    data, threads = _apply_overrides(data, overrides)
    _check_keys(data, TOP_LEVEL_KEYS, "")

    name = data.get("name")
    if name is None:
        name = default_name
    if not isinstance(name, str) or not _NAME_RE.match(name):
        _fail("name", f"expected a run name of letters, digits, '.', '_' or '-' (at most 100 "
                      f"characters, used in the results folder name), got {_show(name)}")
    dataset = _validate_dataset(data.get("dataset"), base_dir)
    task = _dataset_task(dataset)
    algorithm, spec, fields = _validate_algorithm(data.get("algorithm"), threads=threads, task=task)
    grid = _validate_grid(data.get("grid"), spec, fields, algorithm.params, task=task)
    then = _validate_then(data.get("then"), grid, spec, fields, algorithm.params, task=task)
    cv = data.get("cv")
    cv = 5 if cv is None else _as_int(cv, "cv", minimum=2, what="an integer >= 2 (folds)")
    trials = data.get("trials")
    trials = 1 if trials is None else _as_int(trials, "trials", minimum=1,
                                              what="a positive integer")
    seed = data.get("seed")
    seed = 0 if seed is None else _as_int(seed, "seed", minimum=0, what="a non-negative integer")
    if seed + trials - 1 > 2**32 - 1:
        _fail("seed", f"seeds seed .. seed + trials - 1 must stay below 2**32, got seed={seed}, "
                      f"trials={trials}")
    stop = _validate_stop(data.get("stop"))
    protocol = _validate_protocol(data.get("protocol"), dataset)
    evaluate = _validate_evaluate(data.get("evaluate"), dataset, protocol)
    for metric in evaluate.on:
        if metric in REGRESSION_ONLY_METRICS and task not in (None, "regression"):
            _fail("evaluate.on", f"{metric} (mean absolute error) is for regression, but the "
                                       f"dataset is a {task} task; use train_error / test_error")
    tags = _validate_tags(data.get("tags"))
    search = {} if data.get("search") is None else parse_space(data["search"], fields)
    tune = _validate_tune(data.get("tune"))
    return ExperimentConfig(name=name, dataset=dataset, algorithm=algorithm, grid=grid, cv=cv,
                            trials=trials, seed=seed, stop=stop, evaluate=evaluate, tags=tags,
                            source=source, search=search, tune=tune, protocol=protocol,
                            then=then, shortened=_validate_shortened(data.get("shortened")))


def _validate_shortened(raw) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip() or len(raw) > 500:
        _fail("shortened", f"expected a sentence of at most 500 characters saying how the config departs from "
                           f"the paper's protocol (e.g. 'a 4 x 4 sub-grid of the 7 x 7, 3 trials'), got {_show(raw)}")
    return " ".join(raw.split())


def _validate_protocol(raw, dataset: DatasetConfig) -> str:
    if raw is None:
        return "held-out"
    if raw not in PROTOCOLS:
        _fail("protocol", f"expected one of {', '.join(PROTOCOLS)}, got {_show(raw)}"
                          f"{_suggest(raw, PROTOCOLS) if isinstance(raw, str) else ''}")
    if raw == "paper" and dataset.labeled is None:
        _fail("protocol", "paper is the semi-supervised fold scheme of Geng et al. (§6.1): L labeled "
                          "rows + one unlabeled fold train, the other folds are scored; it needs "
                          "dataset.labeled (e.g. 200); set it, or use protocol: held-out")
    return raw


def _validate_tune(raw) -> TuneConfig:
    raw = _mapping(raw, "tune", TUNE_KEYS)
    out = {}
    validation = raw.get("validation")
    if validation is not None:
        if validation not in VALIDATIONS:
            _fail("tune.validation", f"expected one of {', '.join(VALIDATIONS)}, got {_show(validation)}"
                                     f"{_suggest(validation, VALIDATIONS) if isinstance(validation, str) else ''}")
        out["validation"] = validation
    if raw.get("holdout") is not None:
        holdout = _as_float(raw["holdout"], "tune.holdout")
        if not 0 < holdout < 1:
            _fail("tune.holdout", f"expected a fraction in (0, 1), got {holdout}")
        out["holdout"] = holdout
    if raw.get("shuffle") is not None:
        if not isinstance(raw["shuffle"], bool):
            _fail("tune.shuffle", f"expected true or false, got {_show(raw['shuffle'])}")
        out["shuffle"] = raw["shuffle"]
    for key, minimum, what in (("rungs", 1, "an integer >= 1"), ("eta", 2, "an integer >= 2"),
                               ("candidates", 1, "a positive integer"), ("refine", 0, "an integer >= 0")):
        if raw.get(key) is not None:
            out[key] = _as_int(raw[key], f"tune.{key}", minimum=minimum, what=what)
    if raw.get("budget") is not None:
        out["budget"] = parse_duration(raw["budget"], "tune.budget")
    return TuneConfig(**out)


def parse_duration(value, field: str = "budget") -> float:
    """Seconds from a number or "90s", "10m", "1.5h"; a ConfigError naming `field` otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        match = _DURATION_RE.match(value) if isinstance(value, str) else None
        if not match:
            _fail(field, f"expected seconds or a duration like 90s, 10m, 1h, got {_show(value)}")
        seconds = float(match.group(1)) * {"s": 1, None: 1, "m": 60, "min": 60, "h": 3600}[match.group(2)]
    if not math.isfinite(seconds) or seconds <= 0:
        _fail(field, f"expected a positive duration, got {_show(value)}")
    return seconds


def duration_text(seconds, unknown: str = "?") -> str:
    """Seconds as a table shows them (parse_duration reads them back): "45 s", "12 min", "2.5 h";
    `unknown` for None or a non-finite number."""
    if seconds is None or not math.isfinite(seconds):
        return unknown
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _plain(value):
    """Tuples -> lists, numpy scalars -> Python numbers: YAML/JSON-serialisable data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
