"""The one rule by which a difference between two methods' numbers counts: beyond the trials' noise.

Each side is a sample, one number per trial. A difference counts when a one-sided Welch t-test
rejects "no such difference" at ALPHA (5 %); when neither direction does, the outcome is "within
noise", its own verdict, counted apart from holds and fails. A side with no spread across trials
by construction (a number the paper states; the error of a method whose results do not depend on
the seed) is exact: its variance is 0 and one trial of it suffices. A side of one trial that is not
exact has an unknown spread, and no difference against it counts. Timings are never exact. A bound
on a growth (a log-log slope against the training size) is tested by the same rule, on the slope; a
bound on a rank correlation across sets by a bootstrap of the trials behind each set's means.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

ALPHA = 0.05
ABOVE, BELOW, EQUAL, WITHIN = "above", "below", "equal", "within noise"
RULE = (f"a difference counts when a one-sided Welch t-test over the trials rejects its absence at "
        f"{ALPHA:.0%}; otherwise it is within noise (a method of one trial has no spread to test, unless its "
        "result does not depend on the seed); a bound on a growth, the same way, by a one-sided t-test of the "
        "least-squares log-log slope over every trial's value; a bound on a rank correlation by a bootstrap of "
        f"the trials (it holds when {1 - ALPHA:.0%} of the resampled ρ lie at or above it)")


@dataclass(frozen=True)
class Sample:
    """One method's numbers on one set: a value per trial; `exact`: no spread across trials."""
    values: tuple[float, ...]
    exact: bool = False

    @classmethod
    def of(cls, values, exact: bool = False) -> "Sample":
        return cls(tuple(float(v) for v in np.asarray(values, dtype=float).ravel()), exact)

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return float(np.mean(self.values))

    def scaled(self, factor: float) -> "Sample":
        return Sample(tuple(factor * v for v in self.values), self.exact)

    def variance_of_mean(self) -> float | None:
        """s²/n, 0 for an exact sample or identical trials, None when one trial leaves it unknown."""
        if self.exact:
            return 0.0
        if self.n < 2:
            return None
        return float(np.var(self.values, ddof=1)) / self.n


@dataclass(frozen=True)
class Difference:
    """The outcome of comparing mean x − mean y with a shift: ABOVE, BELOW, EQUAL or WITHIN, and
    the one-sided p-value of the direction the means point to (None: decided without noise, or
    one side's spread unknown)."""
    outcome: str
    p: float | None = None
    unknown: str = ""           # why the spread is unknown

    def words(self) -> str:
        if self.unknown:
            return self.unknown
        return "" if self.p is None else f"p {self.p:.2g}"


def compare(x: Sample, y: Sample, shift: float = 0.0, *, names: tuple[str, str] = ("x", "y")) -> Difference:
    """Whether mean x − mean y lies above `shift`, below it, or within the trials' noise."""
    d = x.mean - y.mean - shift
    terms = [(s, s.variance_of_mean()) for s in (x, y)]
    unknown = [name for name, (s, v) in zip(names, terms) if v is None]
    if unknown:
        return Difference(WITHIN, None, " and ".join(unknown) + " ran one trial: the spread is unknown")
    var = sum(v for _, v in terms)
    if var == 0.0:
        return Difference(ABOVE if d > 0 else BELOW if d < 0 else EQUAL)
    # Welch–Satterthwaite degrees of freedom over the sides with a spread
    df = var ** 2 / sum(v ** 2 / (s.n - 1) for s, v in terms if v > 0)
    t = d / math.sqrt(var)
    p_above, p_below = float(stats.t.sf(t, df)), float(stats.t.cdf(t, df))
    if p_above < ALPHA:
        return Difference(ABOVE, p_above)
    if p_below < ALPHA:
        return Difference(BELOW, p_below)
    return Difference(WITHIN, min(p_above, p_below))


def slope_against(samples: dict[int, Sample], bound: float) -> tuple[float, Difference]:
    """(the log-log slope of the samples' values against their sizes, whether it lies above `bound`,
    below it, or within the noise): the same rule for a growth, a one-sided t-test of the least-squares
    slope fitted to every trial's value (its standard error from the residuals, N − 2 degrees of
    freedom). Two points leave the spread unknown."""
    x = [math.log(n) for n, s in samples.items() for _ in s.values]
    y = [math.log(v) for s in samples.values() for v in s.values]
    fit = stats.linregress(x, y)
    slope, d = float(fit.slope), float(fit.slope) - bound
    if len(x) < 3:
        return slope, Difference(WITHIN, None, "two points: the slope's spread is unknown")
    if fit.stderr == 0:
        return slope, Difference(ABOVE if d > 0 else BELOW if d < 0 else EQUAL)
    t, df = d / float(fit.stderr), len(x) - 2
    p_above, p_below = float(stats.t.sf(t, df)), float(stats.t.cdf(t, df))
    if p_above < ALPHA:
        return slope, Difference(ABOVE, p_above)
    if p_below < ALPHA:
        return slope, Difference(BELOW, p_below)
    return slope, Difference(WITHIN, min(p_above, p_below))


def correlation_against(points: list[tuple[Sample, Sample]], bound: float, resamples: int = 2000
                        ) -> tuple[float, Difference]:
    """(Spearman's ρ of the points' means, whether it lies above `bound`, below it, or within the
    noise): the trials' noise carried to ρ by a bootstrap, each sample's trials drawn again with
    replacement `resamples` times (a fixed seed, so the report is a function of the runs); ρ lies
    above the bound when the ALPHA quantile of the resampled ρ does, below when the 1 − ALPHA one does."""
    def rho(pairs) -> float:
        return round(float(stats.spearmanr(*zip(*pairs)).statistic), 12)     # exact ranks, float Pearson
    observed = rho([(x.mean, y.mean) for x, y in points])
    if any(s.n < 2 and not s.exact for point in points for s in point):
        return observed, Difference(WITHIN, None, "a set ran one trial: the spread is unknown")
    rng = np.random.default_rng(0)
    drawn = [rho([tuple(float(np.mean(rng.choice(s.values, s.n))) for s in point) for point in points])
             for _ in range(resamples)]
    low, high = np.nanquantile(drawn, [ALPHA, 1 - ALPHA])
    if low >= bound:
        return observed, Difference(ABOVE)
    if high < bound:
        return observed, Difference(BELOW)
    return observed, Difference(WITHIN, None, f"{1 - 2 * ALPHA:.0%} of the resampled ρ within "
                                              f"{low:.2f}–{high:.2f}")


def within_margin(x: Sample, y: Sample, margin: float, *, names: tuple[str, str] = ("x", "y")) -> Difference:
    """Whether |mean x − mean y| ≤ margin beyond the noise (two one-sided tests, both at ALPHA):
    BELOW when the difference lies inside ±margin, ABOVE when it lies outside, WITHIN otherwise."""
    upper = compare(x, y, margin, names=names)
    lower = compare(x, y, -margin, names=names)
    if upper.unknown:
        return upper
    if upper.outcome == ABOVE or lower.outcome == BELOW:
        return Difference(ABOVE, upper.p if upper.outcome == ABOVE else lower.p)
    if upper.outcome in (BELOW, EQUAL) and lower.outcome in (ABOVE, EQUAL):
        ps = [p for p in (upper.p, lower.p) if p is not None]
        return Difference(BELOW, max(ps) if ps else None)
    ps = [p for p in (upper.p, lower.p) if p is not None]
    return Difference(WITHIN, max(ps) if ps else None)
