"""`algorithm:`, `grid:` and `then:` read against the algorithm's own parameter declarations
(kernelbench/params.py): a value is checked as the declaration says, and the estimator's own checks
(its cross-parameter rules) speak before any work starts."""
from __future__ import annotations

import itertools

import numpy as np

from kernelbench.config.sections import ALGORITHM_KEYS, AlgorithmConfig
from kernelbench.errors import ConfigError, KernelbenchError
from kernelbench.estimators import algorithms
from kernelbench.schema import as_float, as_int, check_keys, fail, join_path, read_mapping, show, suggest

VALUE_RULES = """\
Values of algorithm parameters (and grid values): bool is not an int; an int is fine where a float is
expected, an integral float (1000.0) where an int is; `1e-3` (which YAML 1.1 reads as a string) is a
number, other quoted numbers ("0.5") are refused; NaN and infinities are refused everywhere. Overrides
from the command line (`--set KEY=VALUE` with a dotted key, `--seed`, `--threads`, `--trials`, ...) are
applied before validation."""

_MAX_GRID_AXIS = 1000
_MAX_GRID_CELLS = 100_000


def expand_grid(grid: dict) -> list[dict]:
    """Cartesian product of a grid: one dict per cell. Keys are taken in sorted order and the last
    key varies fastest (as scikit-learn's ParameterGrid); each axis keeps its given order. An axis
    is a list or {log10: [lo, hi, num]} (np.logspace). An empty grid gives one empty cell."""
    if grid is None:
        return [{}]
    if not isinstance(grid, dict):
        raise ConfigError(f"grid: expected a mapping of parameter -> values, got {show(grid)}")
    keys = sorted(grid, key=str)
    axes = [_grid_axis(grid[k], join_path("grid", k)) for k in keys]
    _check_grid_size(keys, axes)
    return [dict(zip(keys, combo)) for combo in itertools.product(*axes)]


def _same(a, b) -> bool:
    return type(a) is type(b) and a == b


def read_algorithm(raw, *, threads, task=None):
    """-> (AlgorithmConfig, spec, its config parameters)."""
    if isinstance(raw, str):                   # shorthand: `algorithm: dsg`
        raw = {"name": raw}
    if raw is None:
        fail("algorithm", f"required: the algorithm to run, e.g. `algorithm: {{name: NAME}}`; "
                           f"known algorithms: {', '.join(sorted(algorithms())) or '(none)'}")
    raw = read_mapping(raw, "algorithm", ALGORITHM_KEYS)
    known = algorithms()
    name = raw.get("name")
    if name is None:
        fail("algorithm.name", f"required; known algorithms: {', '.join(sorted(known)) or '(none)'}")
    if not isinstance(name, str):
        fail("algorithm.name", f"expected a string, got {show(name)}; known algorithms: "
                                f"{', '.join(sorted(known)) or '(none)'}")
    if name not in known:
        fail("algorithm.name", f"unknown algorithm {name!r}{suggest(name, known)}; known "
                                f"algorithms: {', '.join(sorted(known)) or '(none)'}")
    spec = known[name]
    declared = spec.parameters
    params = raw.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        fail("algorithm.params", f"expected a mapping of parameter names to values, got "
                                  f"{show(params)}; parameters of {name}: {', '.join(declared)}")
    params = dict(params)
    if threads is not None:
        if "threads" not in declared:
            fail("threads", f"algorithm {name!r} has no `threads` parameter (it runs on one "
                             f"thread), so --threads/threads cannot be set; its parameters: "
                             f"{', '.join(declared) or '(none)'}")
        params["threads"] = threads
    check_keys(params, tuple(declared), "algorithm.params")
    resolved = {}
    for pname, decl in declared.items():
        path = f"algorithm.params.{pname}"
        resolved[pname] = decl.read(params[pname], path) if pname in params else decl.default
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
        tasks = [spec.tasks[0]]     # a task the algorithm does not take is reported by the experiment loop
    errors = []
    for t in tasks:
        try:
            spec.build(params, task=t)._check_params()
            return
        except (ValueError, TypeError, KernelbenchError) as e:
            errors.append(e)
    fail(path, f"refused by algorithm {spec.name!r}: {errors[0]}")


def _grid_axis(value, path: str) -> list:
    """One grid axis as an explicit list (log10 specs expanded), structure checked."""
    if isinstance(value, dict):
        check_keys(value, ("log10",), path)
        spec = value.get("log10")
        if not isinstance(spec, (list, tuple)) or len(spec) != 3:
            fail(join_path(path, "log10"), f"expected [lo, hi, num] (exponents of 10 and a count), "
                                        f"got {show(spec)}")
        lo = as_float(spec[0], join_path(path, "log10") + "[0]")
        hi = as_float(spec[1], join_path(path, "log10") + "[1]")
        num = as_int(spec[2], join_path(path, "log10") + "[2]", minimum=1)
        if num > _MAX_GRID_AXIS:
            fail(join_path(path, "log10") + "[2]", f"at most {_MAX_GRID_AXIS} values, got {num}")
        if max(abs(lo), abs(hi)) > 300:
            fail(join_path(path, "log10"), f"exponents must lie in [-300, 300], got [{lo}, {hi}]")
        # 12 significant digits: 10**-3 is written 0.001, not 0.0010000000000000002.
        return [float(f"{x:.12g}") for x in np.logspace(lo, hi, num)]
    if isinstance(value, (list, tuple)):
        if not value:
            fail(path, "empty list; give at least one value")
        if len(value) > _MAX_GRID_AXIS:
            fail(path, f"at most {_MAX_GRID_AXIS} values, got {len(value)}")
        return list(value)
    fail(path, f"expected a list of values or {{log10: [lo, hi, num]}}, got {show(value)}")


def _check_grid_size(keys, axes, field="grid"):
    cells = 1
    for axis in axes:
        cells *= len(axis)
    if cells > _MAX_GRID_CELLS:
        fail(field, f"{cells} cells ({' x '.join(str(len(a)) for a in axes)} over "
                      f"{', '.join(map(str, keys))}) is more than {_MAX_GRID_CELLS}; narrow it")


def read_grid(raw, spec, fields, params, *, task=None, field="grid") -> dict:
    """`grid:` (or `then:`, field="then") as {param: [explicit values]}."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        fail(field, f"expected a mapping of parameter -> list or {{log10: [lo, hi, num]}}, "
                     f"got {show(raw)}")
    check_keys(raw, tuple(fields), field)
    grid = {}
    for key, value in raw.items():
        path = join_path(field, key)
        declared = fields[key]
        values = []
        for i, item in enumerate(_grid_axis(value, path)):
            if isinstance(value, dict) and declared.number_kind() is int and isinstance(item, float):
                item = round(item)          # log-spaced counts (budget, batch_size): nearest int
            item = declared.read(item, f"{path}[{i}]")
            if not any(_same(item, v) for v in values):     # duplicates would repeat cells
                values.append(item)
        grid[key] = values
    _check_grid_size(list(grid), list(grid.values()), field)
    for key, values in grid.items():          # each value on its own must satisfy the estimator
        for i, v in enumerate(values):
            _construct(spec, {**params, key: v}, f"{field}.{key}[{i}]", task)
    return grid


def read_then(raw, grid: dict, spec, fields, params, *, task=None) -> dict:
    """`then:`: the second stage of `kernelbench grid`, searched with the best `grid:` values fixed."""
    then = read_grid(raw, spec, fields, params, task=task, field="then")
    if then and not grid:
        fail("then", "a second search stage needs a first one: add `grid:` (searched first, its "
                      "best values then fixed), or write these parameters under `grid:`")
    repeated = sorted(set(then) & set(grid), key=str)
    if repeated:
        fail("then", f"{', '.join(map(str, repeated))} already in `grid:`; a parameter is searched in "
                      "one stage only: remove it from `then:` or from `grid:`")
    return then


