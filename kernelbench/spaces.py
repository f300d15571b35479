"""Search spaces: what `kernelbench tune` samples and what `grid` enumerates when a
config has no `grid:`.

A space maps parameter names to distributions. Each algorithm's default space is declared with its
parameters (`param(..., search=LogUniform(...))` in params.py and the estimator modules); a config
may give its own in a `search:` section:

    search:
      C: {log-uniform: [0.01, 10000]}
      gamma: {log-uniform: [0.0625, 64], times: median}   # × the median-trick γ of the training part
      eta: {uniform: [1, 100]}
      loss: {choice: [hinge, logistic]}

`times: median` scales a range by the data's median-trick γ (computed on the training part when a
search starts: kernelbench/experiment/selection.py), so one default range fits features of any scale. Integer parameters get integer values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from difflib import get_close_matches

import numpy as np

from kernelbench.errors import ConfigError

SCALES = ("median",)          # what `times:` may name
GRID_POINTS = 5               # values per continuous axis when a space becomes a grid


@dataclass(frozen=True)
class Range:
    """low ≤ x ≤ high, uniform in log x (`log`: scale parameters such as C, γ, steps) or in x;
    with `times`, the bounds are multiples of a data scale (SCALES)."""
    low: float
    high: float
    times: str | None = None
    integer: bool = False
    log: bool = True

    def bounds(self, scales: dict) -> tuple[float, float]:
        factor = scales[self.times] if self.times else 1.0
        return self.low * factor, self.high * factor

    def grid(self, scales: dict, points: int = GRID_POINTS) -> list:
        low, high = self.bounds(scales)
        return _values((np.geomspace if self.log else np.linspace)(low, high, points), self.integer)

    def around(self, value, scales: dict, rng, width: float):
        """A value near `value`, within ±width/2 of the range (in log x for a log range), kept
        inside the bounds."""
        low, high = self.bounds(scales)
        if self.log:
            x = value * math.exp(rng.uniform(-1, 1) * width * math.log(high / low) / 2)
        else:
            x = value + rng.uniform(-1, 1) * width * (high - low) / 2
        return _values([float(np.clip(x, low, high))], self.integer)[0]

    @property
    def kind(self) -> str:
        return "log-uniform" if self.log else "uniform"

    def describe(self) -> str:
        times = f" × {self.times} γ" if self.times else ""
        return f"{self.kind} [{self.low:g}, {self.high:g}]{times}"


def LogUniform(low, high, times=None, integer=False) -> Range:
    return Range(low, high, times, integer, log=True)


def Uniform(low, high, times=None, integer=False) -> Range:
    return Range(low, high, times, integer, log=False)


@dataclass(frozen=True)
class Choices:
    """One of the values."""
    values: tuple

    def grid(self, scales: dict, points: int = GRID_POINTS) -> list:
        return list(self.values)

    def around(self, value, scales: dict, rng, width: float):
        return value                    # a refinement keeps the best's choice

    def describe(self) -> str:
        return "one of " + ", ".join(map(repr, self.values))


def _values(values, integer: bool) -> list:
    if integer:
        return list(dict.fromkeys(int(round(v)) for v in values))
    return [float(v) for v in values]


# ---- a space from a config, or the algorithm's declared one ------------------------------------

def default_space(parameters: dict) -> dict:
    """The declared search ranges of an estimator's parameters (`Param.search`)."""
    return {name: p.search for name, p in parameters.items() if p.search is not None and p.config}


def parse_space(raw, parameters: dict, path: str = "search") -> dict:
    """A config's `search:` mapping → {name: distribution}, checked against the declarations
    (a ConfigError names the field and what is allowed)."""
    def fail(where, message):
        raise ConfigError(f"{where}: {message}")

    if not isinstance(raw, dict) or not raw:
        fail(path, "expected a mapping of parameter -> {log-uniform: [low, high]}, "
                   "{uniform: [low, high]} or {choice: [values...]}, e.g. search: {C: {log-uniform: [0.01, 10000]}}")
    space = {}
    for name, spec in raw.items():
        where = f"{path}.{name}"
        declared = parameters.get(name)
        if declared is None or not declared.config:
            close = get_close_matches(str(name), [n for n, p in parameters.items() if p.config], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            fail(where, f"not a parameter of this algorithm{hint} (kernelbench algorithms lists them)")
        if not isinstance(spec, dict) or len(set(spec) - {"times"}) != 1:
            fail(where, "expected one of {log-uniform: [low, high]}, {uniform: [low, high]}, "
                        "{choice: [values...]} (log-uniform and uniform may add `times: median`)")
        kind = next(k for k in spec if k != "times")
        times = spec.get("times")
        if times is not None and (kind == "choice" or times not in SCALES):
            fail(f"{where}.times", f"must be one of {', '.join(SCALES)} on a log-uniform or uniform "
                                   f"range, got {times!r}")
        values = spec[kind]
        if kind == "choice":
            if not isinstance(values, list) or not values:
                fail(f"{where}.choice", "expected a non-empty list of values")
            for i, v in enumerate(values):
                if not declared.accepts(v):
                    fail(f"{where}.choice[{i}]", f"must be {declared.describe()}, got {v!r}")
            space[name] = Choices(tuple(values))
            continue
        if kind not in ("log-uniform", "uniform"):
            fail(where, f"unknown distribution {kind!r}: log-uniform, uniform or choice")
        kind_of = declared.number_kind()
        if kind_of is None:
            fail(where, f"{name} takes {declared.describe()}: use {{choice: [...]}}")
        if (not isinstance(values, list) or len(values) != 2
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)):
            fail(f"{where}.{kind}", f"expected [low, high] (two numbers), got {values!r}")
        low, high = (float(v) for v in values)
        if not (math.isfinite(low) and math.isfinite(high) and low < high):
            fail(f"{where}.{kind}", f"expected finite low < high, got {values!r}")
        if kind == "log-uniform" and low <= 0:
            fail(f"{where}.{kind}", f"a log-uniform range needs low > 0, got {values!r}")
        if times is None:                     # a scaled range is checked once the scale is known
            for v in (low, high):
                value = int(v) if kind_of is int else v
                if not declared.accepts(value):
                    fail(f"{where}.{kind}", f"{name} must be {declared.describe()}, got {v:g}")
        space[name] = (LogUniform if kind == "log-uniform" else Uniform)(
            low, high, times, integer=kind_of is int)
    return space


def space_to_dict(space: dict) -> dict:
    """The YAML form of a space (parse_space's inverse), for run.json and tuned configs."""
    out = {}
    for name, d in space.items():
        if isinstance(d, Choices):
            out[name] = {"choice": list(d.values)}
        else:
            out[name] = {d.kind: [d.low, d.high]}
            if d.times:
                out[name]["times"] = d.times
    return out


def inside(space: dict, scales: dict, params: dict) -> dict:
    """The entries of `params` that lie in the space (a scale's word, e.g. gamma 'median', read
    as its value): a config's own setting, to try first."""
    out = {}
    for name, d in space.items():
        value = params.get(name)
        if isinstance(value, str) and value in scales:
            value = scales[value]
        if isinstance(d, Choices):
            if value in d.values:
                out[name] = value
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            low, high = d.bounds(scales)
            if low <= value <= high:
                out[name] = int(value) if d.integer else float(value)
    return out


def grid_from_space(space: dict, scales: dict, points: int = GRID_POINTS) -> dict:
    """An explicit grid over a space: `points` values per range (geometric for log-uniform)."""
    return {name: d.grid(scales, points) for name, d in space.items()}


def optuna_distributions(space: dict, scales: dict) -> dict:
    """The space as Optuna distributions (absolute bounds)."""
    # Optuna is heavy (SQLAlchemy, alembic): only `tune` needs it
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    out = {}
    for name, d in space.items():
        if isinstance(d, Choices):
            out[name] = CategoricalDistribution(list(d.values))
            continue
        low, high = d.bounds(scales)
        log = d.log
        if d.integer:
            out[name] = IntDistribution(max(1, math.ceil(low)) if log else math.ceil(low),
                                        math.floor(high), log=log)
        else:
            out[name] = FloatDistribution(low, high, log=log)
    return out
