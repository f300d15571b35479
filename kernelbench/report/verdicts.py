"""The claims' verdicts: each conclusion a paper draws from an experiment (its file's `claims:`,
kernelbench.papers.Claim) tested on the runs, with the measurement in words.

Per set of the claim's `on`, each compared method's number is the mean over its finished trials
(status ok, final rows; or, with `at: seconds:…`, each trial's last evaluation within that many
training seconds; a method whose first evaluation comes later has no model by then, behind any
that has one) of the runs tagged with the claim's paper (and figure), that dataset and that
algorithm (and params). A set is untested when a compared method has no such run, or its runs
finished no cell; not comparable when the test misses only between methods that both sit at the
constant classifier's test error (within FLOOR_POINTS of the claim's `floor`) or both make no test
error: an ordering between classifiers that learned nothing (or tie at perfect) means nothing,
while one that beats the constant classifier against one that does not is a measurement. The claim holds when its test holds on every
tested set (quantifier all) or on more than half of them (most); with no tested set it is not
testable here. Any stand-in set among those tested gives the "on stand-in data" forms, naming it: a
set the claim's `stand_in` names, or one whose compared runs read a synthetic replica of it
(`kernelbench datasets synth`) in place of the set itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from kernelbench.papers import ACROSS_SETS, Claim, Paper, Selector

from .numbers import (
    GAIN_METRICS,
    STAND_IN,
    _counter,
    _at_seconds_rows,
    _final_and_curves,
    _values,
    build_numbers,
    pooling_conflict,
    replicas,
    report_papers,
    results_frame,
    select_rows,
)
from .numbers import rows_read as number_rows_read

CLAIM_VERDICTS = ("holds", f"holds{STAND_IN}", "does not hold", f"does not hold{STAND_IN}", "not testable here")
QUOTE_CHARS = 120      # a claim's quote is shown shortened to about this many characters
# A set's outcome: tested (holds, does not hold) or not (untested, not comparable)
HOLDS, FAILS, UNTESTED, NOT_COMPARABLE = "holds", "does not hold", "untested", "not comparable"
# An ordering among methods whose test error lies this close (points) to the constant classifier's
# compares classifiers that learned nothing
FLOOR_POINTS = 0.5
# A compared method's number at `at: seconds:…` when it has no model by then (its first evaluation
# comes later): behind any method that has one in an ordering, never similar to one
NO_MODEL = None


@dataclass(frozen=True)
class SetOutcome:
    dataset: str
    outcome: str                # HOLDS, FAILS, UNTESTED or NOT_COMPARABLE
    text: str                   # the measurement in words, or what is missing
    runs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClaimVerdict:
    claim: Claim
    verdict: str                # one of CLAIM_VERDICTS
    measurement: str
    sets: tuple[SetOutcome, ...] = ()
    runs: tuple[str, ...] = ()

    @property
    def tested(self) -> str:
        """"k of n" sets tested."""
        tested = sum(s.outcome in (HOLDS, FAILS) for s in self.sets)
        return f"{tested} of {len(self.claim.on)}"


def _number(x: float) -> str:
    return f"{x:.4g}"


def _column(metric: str) -> str:
    """The results.csv column a claim's metric is read from."""
    return "test_error" if metric == "test_accuracy" else metric


class _Untested(Exception):
    """Why a set cannot be tested (its text is the reason, in words)."""


class _Set:
    """One set of a claim: the rows of each compared method, and the numbers the test reads."""

    def __init__(self, claim: Claim, dataset: str, every: pd.DataFrame, final: pd.DataFrame, curves: pd.DataFrame,
                 absent: dict | None = None, runs_are: str = "published"):
        self.claim, self.dataset, self.absent = claim, dataset, absent or {}
        self.runs_are = runs_are        # "published" (REPRODUCTION.md) or "local" (a results folder's report)
        self.every, self.final, self.curves = every, final, curves
        self.runs: set[str] = set()

    def select(self, frame: pd.DataFrame, method: Selector) -> pd.DataFrame:
        return select_rows(frame, self.claim.paper, self.dataset, method.algorithm, method.params,
                           figure=self.claim.figure)

    def final_rows(self, method: Selector) -> pd.DataFrame:
        """The method's finished cells on this set; _Untested when there are none, saying why."""
        rows = self.select(self.final, method)
        if not len(rows):
            if len(self.select(self.every, method)):
                raise _Untested(f"the runs of {method} on {self.dataset} finished 0 cells")
            if self.dataset in self.absent:
                raise _Untested(f"no data here: the publishing machine had no copy of {self.dataset} "
                                f"({self.absent[self.dataset]})")
            raise _Untested(f"no {self.runs_are} run of {method} on {self.dataset}")
        return rows

    def mean(self, method: Selector, rows: pd.DataFrame, metric: str) -> float | None:
        """The mean over trials of `metric` on the method's final rows `rows` (of one training size),
        read where the test's `at` says."""
        if metric.startswith(GAIN_METRICS):
            return self.gain(method, metric)
        conflict = pooling_conflict(rows)
        if conflict:
            raise _Untested(f"{method} on {self.dataset}: {conflict}")
        if self.claim.test.at != "final":
            picks = self.picks(method, rows, metric)
            limit = self.seconds_limit(self.claim.test.at.partition(':')[2])
            if not picks and (rows["train_seconds"].astype(float) > limit).all():
                # every trial trained past the limit before its first evaluation: at that time the
                # method has no model yet (an exact solver's one evaluation comes at its end)
                self.runs.update(rows["run_id"])
                return NO_MODEL
            if not picks:
                raise _Untested(f"no evaluation of {method} on {self.dataset} within "
                                f"{_number(self.seconds_limit(self.claim.test.at.partition(':')[2]))} s")
            rows = self.curves.loc[picks]
        values = _values(rows, metric)
        if not len(values):
            raise _Untested(f"no {metric} in the runs of {method} on {self.dataset}")
        self.runs.update(rows["run_id"])
        return float(values.mean())

    def picks(self, method: Selector, rows: pd.DataFrame, metric: str) -> list:
        """With `at: seconds:…`, the curve rows (index labels) read: per trial of the runs of the
        method's final rows `rows`, its last evaluation within the limit."""
        limit = self.seconds_limit(self.claim.test.at.partition(":")[2])
        chosen = self.select(self.curves, method)
        chosen = chosen[chosen["run_id"].isin(set(rows["run_id"]))]
        for column in ("n_train", "fold"):      # the sizes measured; never a model-selection fold's curve
            if column in chosen and column in rows:
                chosen = chosen[chosen[column].astype(str).isin(set(rows[column].astype(str)))]
        return _at_seconds_rows(chosen, _column(metric), limit, stopped_early_counts=True)

    def seconds_limit(self, limit: str) -> float:
        """The s of at: seconds:<s>, or of seconds:<algorithm> the mean training seconds of that
        algorithm's finished cells on this set."""
        try:
            return float(limit)
        except ValueError:
            rows = self.final_rows(Selector(limit))
            return float(rows["train_seconds"].astype(float).mean())

    def groups(self, rows_by_method: dict) -> list:
        """[(training size or None, {method: its rows at that size})]: one group, or with `per:
        n_train` one per size every compared method was run at (sweep points are separate runs)."""
        if self.claim.test.per != "n_train":
            return [(None, rows_by_method)]
        sizes = None
        for rows in rows_by_method.values():
            known = set(rows["n_train"].dropna().astype(int)) if "n_train" in rows else set()
            sizes = known if sizes is None else sizes & known
        if not sizes:
            raise _Untested(f"no training size with runs of every compared method on {self.dataset}")
        return [(n, {m: rows[rows["n_train"] == n] for m, rows in rows_by_method.items()}) for n in sorted(sizes)]

    def below_floor(self, rows_by_method: dict) -> str | None:
        """Which compared method's test error lies within FLOOR_POINTS of the set's floor, if any."""
        saturated = self.saturated(rows_by_method)
        return next(iter(saturated.values()), None)

    def saturated(self, rows_by_method: dict) -> dict:
        """{method: why} of the compared methods whose test error says nothing about what they
        learned: within FLOOR_POINTS of the constant classifier's (the set's floor), or exactly 0
        (every test row right: two such methods tie whatever they learned)."""
        floor = self.claim.floor.get(self.dataset)
        found = {}
        for method, rows in rows_by_method.items():
            errors = _values(rows, "test_error")
            if not len(errors):
                continue
            if floor is not None and abs(errors.mean() - floor) <= FLOOR_POINTS:
                found[method] = (f"{method} test error {_number(errors.mean())} % lies within {FLOOR_POINTS:g} points "
                                 f"of the constant classifier's {_number(floor)} %")
            elif errors.max() == 0:
                found[method] = f"{method} test error 0 % (every test row right)"
        return found

    def gain(self, method: Selector, metric: str) -> float:
        """improvement_vs_gss:<merge> (merge_time_improvement_vs_gss:<merge>): 100·(1 − mean
        training (merging) time of that merge method / that of GSS-standard), both at the method's
        other params (its budget), as the published numbers compute it."""
        def seconds(merge: str) -> float:
            rows = self.final_rows(replace(method, params={**method.params, "merge": merge}))
            conflict = pooling_conflict(rows)
            if conflict:
                raise _Untested(f"{method} merge={merge} on {self.dataset}: {conflict}")
            self.runs.update(rows["run_id"])
            if metric.startswith("merge_time_"):
                return float(_counter(rows, "maintenance_seconds").mean())
            return float(rows["train_seconds"].astype(float).mean())
        return 100.0 * (1.0 - seconds(metric.split(":", 1)[1]) / seconds("gss"))


def _relation(x: float, y: float) -> str:
    return "<" if x < y else (">" if x > y else "=")


def _pair_holds(claim: Claim, ma: float | None, mb: float | None) -> bool:
    """Whether an order / similar / ratio test holds between a's mean and one b's (NO_MODEL: that
    method has no model at the test's time)."""
    test = claim.test
    if ma is NO_MODEL or mb is NO_MODEL:
        return ma is not NO_MODEL and test.kind == "order"      # a model is ahead of none
    if test.kind == "order":
        return ma < mb if test.direction == "lower" else ma > mb
    if test.kind == "similar":
        return abs(ma - mb) <= test.margin
    return (mb / ma if ma > 0 else math.inf) >= test.at_least        # ratio: mean b / mean a


def _shown(x: float | None) -> str:
    return "no model yet" if x is NO_MODEL else _number(x)


def _pair_text(claim: Claim, ma: float | None, mb: float | None, b) -> str:
    test = claim.test
    if mb is NO_MODEL:
        return f"{'ahead of' if ma is not NO_MODEL and test.kind == 'order' else 'vs'} {b} (no model yet)"
    if ma is NO_MODEL:
        return f"behind {b} {_number(mb)}"
    if test.kind == "order":
        return f"{_relation(ma, mb)} {b} {_number(mb)}"
    if test.kind == "similar":
        gap = abs(ma - mb)
        return f"{b} {_number(mb)} (|Δ| {_number(gap)} {'≤' if gap <= test.margin else '>'} {test.margin:g})"
    r = mb / ma if ma > 0 else math.inf
    return f"{b} {_number(mb)} ({_number(r)}× {'≥' if r >= test.at_least else '<'} {test.at_least:g}×)"


def _compare(claim: Claim, means: dict, saturated: dict | None = None) -> tuple[str, str]:
    """(outcome, measurement) of an order / similar / ratio test on one set's means. A pair of
    methods both saturated (at the constant classifier, or both error-free) tells nothing: a miss
    against any other method fails the set; otherwise a saturated pair leaves it not comparable."""
    saturated = saturated or {}
    test = claim.test
    a = test.a
    ma = means[a]
    blind = [b for b in test.b if a in saturated and b in saturated]
    misses = [b for b in test.b if b not in blind and not _pair_holds(claim, ma, means[b])]
    text = f"{a} {_shown(ma)}" + ("; " if test.kind != "order" else " ") + ", ".join(
        _pair_text(claim, ma, means[b], b) for b in test.b)
    if misses:
        return FAILS, text
    if blind:           # holding or not, a saturated pair is no evidence
        return NOT_COMPARABLE, text + "; " + "; ".join(saturated[m] for m in (a, *blind))
    return HOLDS, text


def _bound(claim: Claim, case: _Set, ma: float | None, rows: pd.DataFrame) -> tuple[str, str]:
    """(outcome, measurement) of a bound test: a's mean against the stated value, or against the
    mean of the `than` metric of the same runs."""
    test = claim.test
    if ma is NO_MODEL:
        return FAILS, f"{test.a} has no model yet"
    if test.than is None:
        limit, named = test.value, f"{test.value:g}"
    else:
        limit = case.mean(test.a, rows, test.than)
        if limit is NO_MODEL:
            return FAILS, f"{test.a} has no model yet"
        named = f"{test.than} {limit:.6g}"
    ok = ma < limit if test.direction == "lower" else ma > limit
    # six digits: a bound may sit close to its limit (a weight-degradation factor of 1.00007 against 1.06)
    return (HOLDS if ok else FAILS), f"{test.metric} of {test.a} {ma:.6g} {_relation(ma, limit)} {named}"


def _test_set(claim: Claim, case: _Set) -> tuple[str, str]:
    """(outcome, measurement) of the claim's test on one set; _Untested when it cannot run."""
    test = claim.test
    metric = test.metric
    if test.kind == "speedup":
        methods = [replace(test.a, params={**test.a.params, "threads": k}) for k in test.threads]
    else:
        methods = [test.a, *test.b]
    rows_by_method = {m: case.final_rows(m) for m in methods}
    if test.kind == "growth":
        (method, rows), = rows_by_method.items()
        sizes = sorted(set(rows["n_train"].dropna().astype(int))) if "n_train" in rows else []
        if len(sizes) < 2:
            raise _Untested(f"{method} on {case.dataset} ran at {len(sizes)} training size(s); a growth needs two or more")
        floor = case.below_floor(rows_by_method)
        if floor:
            return NOT_COMPARABLE, floor
        means = [case.mean(method, rows[rows["n_train"] == n], metric) for n in sizes]
        if min(means) <= 0:
            raise _Untested(f"{metric} of {method} on {case.dataset} is not positive: no log-log slope")
        slope = float(np.polyfit(np.log(sizes), np.log(means), 1)[0])
        ok = slope <= test.at_most
        return (HOLDS if ok else FAILS), (f"{metric} of {method} grows with slope {slope:.2f} "
                                          f"{'≤' if ok else '>'} {test.at_most:g} over n_train {sizes[0]}–{sizes[-1]} "
                                          f"({len(sizes)} sizes)")
    outcomes = []
    for size, rows in case.groups(rows_by_method):
        at = f"n_train {size}: " if size is not None else ""
        means = {m: case.mean(m, rows[m], metric) for m in methods}
        if test.kind == "bound":
            outcome, text = _bound(claim, case, means[test.a], rows[test.a])
        elif test.kind == "speedup":
            base = means[methods[0]]
            checks = [(k, base / means[m], test.at_least * k / test.threads[0])
                      for k, m in zip(test.threads[1:], methods[1:])]
            ok = all(speedup >= wanted for _, speedup, wanted in checks)
            text = f"{test.a} {metric} {_number(base)} at {test.threads[0]} thread(s); " + ", ".join(
                f"speed-up {_number(speedup)} at {k} {'≥' if speedup >= wanted else '<'} {_number(wanted)}"
                for k, speedup, wanted in checks)
            outcome = HOLDS if ok else FAILS
        else:
            outcome, text = _compare(claim, means, case.saturated(rows))
        outcomes.append((outcome, at + text))
    texts = "; ".join(text for _, text in outcomes)
    if any(o == FAILS for o, _ in outcomes):
        return FAILS, texts
    if any(o == NOT_COMPARABLE for o, _ in outcomes):
        return NOT_COMPARABLE, texts
    return HOLDS, texts


def _stand_in(claim: Claim, tested: SetOutcome, every: pd.DataFrame) -> str:
    """Why a tested set stands in for the paper's ("" when it does not): the claim's own words, or
    the synthetic replica its compared runs read, which stands in whether or not the claim says so."""
    if tested.dataset in claim.stand_in:
        return claim.stand_in[tested.dataset]
    return "; ".join(replicas(every[every["run_id"].isin(tested.runs)]))


def _stand_ins(claim: Claim, tested, every: pd.DataFrame) -> tuple[str, str]:
    """(the verdict's suffix, the measurement's "; stand-in data: …" words) of the tested sets."""
    why = {s.dataset: w for s in tested if (w := _stand_in(claim, s, every))}
    if not why:
        return "", ""
    return STAND_IN, "; stand-in data: " + "; ".join(f"{d} ({w})" for d, w in why.items())


def judge_claim(claim: Claim, every: pd.DataFrame, final: pd.DataFrame | None = None,
                curves: pd.DataFrame | None = None, absent: dict | None = None,
                runs_are: str = "published") -> ClaimVerdict:
    """The claim's verdict from `every` row of the runs (collect_results; `final` and `curves`
    are derived from it when not given). `absent`: {dataset: how to get it} of the data the
    publishing machine had no copy of, named where a set has no run; `runs_are`: what the runs
    are called where a set has none ("published", or "local" for a results folder's)."""
    if claim.needs:
        return ClaimVerdict(claim, "not testable here", f"needs {claim.needs}")
    if final is None or curves is None:
        final, curves = _final_and_curves(every)
    if claim.test.kind in ACROSS_SETS:
        return _judge_across_sets(claim, every, final, curves, absent, runs_are)
    sets = []
    for dataset in claim.on:
        case = _Set(claim, dataset, every, final, curves, absent, runs_are)
        try:
            outcome, text = _test_set(claim, case)
        except _Untested as why:
            outcome, text = UNTESTED, str(why)
        sets.append(SetOutcome(dataset, outcome, text, tuple(sorted(case.runs))))
    tested = [s for s in sets if s.outcome in (HOLDS, FAILS)]
    shown = [f"{s.dataset}: {s.text}" if s.outcome in (HOLDS, FAILS) else f"{s.dataset} {s.outcome}: {s.text}"
             for s in sets]
    runs = tuple(sorted({r for s in tested for r in s.runs}))
    if not tested:
        return ClaimVerdict(claim, "not testable here", "no set tested: " + "; ".join(shown), tuple(sets), runs)
    held = sum(s.outcome == HOLDS for s in tested)
    ok = held == len(tested) if claim.quantifier == "all" else held > len(tested) / 2
    suffix, named = _stand_ins(claim, tested, every)
    summary = (f"holds on {held} of {len(tested)} sets tested ({'every one' if claim.quantifier == 'all' else 'more than half'}"
               f" needed); {len(tested)} of {len(claim.on)} sets tested{named}")
    return ClaimVerdict(claim, (HOLDS if ok else FAILS) + suffix, "; ".join(shown) + f". {summary}", tuple(sets), runs)


def _judge_across_sets(claim: Claim, every: pd.DataFrame, final: pd.DataFrame, curves: pd.DataFrame,
                       absent: dict | None, runs_are: str) -> ClaimVerdict:
    """An extreme or correlation test: each set's mean of a's runs is one point; the sets without
    one are left out, and too few points leave the claim not testable here."""
    test = claim.test
    points, sets = {}, []
    for dataset in claim.on:
        case = _Set(claim, dataset, every, final, curves, absent, runs_are)
        try:
            rows = case.final_rows(test.a)
            point = tuple(case.mean(test.a, rows, m) for m in (test.metric, test.against) if m is not None)
            if any(x is None or not math.isfinite(x) for x in point):
                raise _Untested(f"no {test.metric} of {test.a} on {dataset}")
        except _Untested as why:
            sets.append(SetOutcome(dataset, UNTESTED, str(why)))
            continue
        points[dataset] = point
        sets.append(SetOutcome(dataset, HOLDS, ", ".join(_number(x) for x in point), tuple(sorted(case.runs))))
    shown = "; ".join(f"{d} {', '.join(_number(x) for x in p)}" for d, p in points.items())
    missing = "; ".join(f"{s.dataset} untested: {s.text}" for s in sets if s.outcome == UNTESTED)
    least = 2 if test.kind == "extreme" else 3
    if len(points) < least or (test.kind == "extreme" and test.on_set not in points):
        why = f"{test.on_set} has no point" if test.kind == "extreme" and len(points) >= least else \
            f"{len(points)} set(s) with a point, {least} needed"
        return ClaimVerdict(claim, "not testable here", f"{why}: " + "; ".join(x for x in (shown, missing) if x),
                            tuple(sets))
    if test.kind == "extreme":
        values = {d: p[0] for d, p in points.items()}
        best = (max if test.direction == "higher" else min)(values, key=values.get)
        ok = all((values[test.on_set] > v if test.direction == "higher" else values[test.on_set] < v)
                 for d, v in values.items() if d != test.on_set)
        text = (f"{test.metric} of {test.a} per set: {shown}; {'largest' if test.direction == 'higher' else 'smallest'} "
                f"on {best}")
    else:
        from scipy.stats import spearmanr

        rho = round(float(spearmanr(*zip(*points.values())).statistic), 12)     # exact ranks, float Pearson
        ok = rho >= test.value
        text = (f"({test.metric}, {test.against}) of {test.a} per set: {shown}; Spearman's ρ {rho:.2f} "
                f"{'≥' if ok else '<'} {test.value:g} over {len(points)} sets")
    if missing:
        text += f"; {missing}"
    runs = tuple(sorted({r for s in sets for r in s.runs}))
    suffix, named = _stand_ins(claim, [s for s in sets if s.dataset in points], every)
    outcome = HOLDS if ok else FAILS
    return ClaimVerdict(claim, outcome + suffix, text + named, tuple(replace(s, outcome=outcome) if s.dataset in points
                                                                     else s for s in sets), runs)


def judge_paper(paper: Paper, every: pd.DataFrame, absent: dict | None = None,
                runs_are: str = "published") -> list[ClaimVerdict]:
    """Every claim of the paper judged on `every` row of the runs (collect_results); `absent` and
    `runs_are` as judge_claim's."""
    final, curves = _final_and_curves(every)
    return [judge_claim(claim, every, final, curves, absent, runs_are) for claim in paper.claims]


def rows_read(df: pd.DataFrame, paper: str | None = None) -> list:
    """The index labels of the curve rows, beyond the final ones, that a number or a claim of the
    report is read from (kernelbench.publish keeps them when it thins curves): those of the
    numbers' at_seconds entries, and each trial's evaluation a claim's `at: seconds:…` picks."""
    chosen = set(number_rows_read(df, paper))
    final, curves = _final_and_curves(df)
    for claim in (c for p in report_papers(paper) for c in p.claims):
        if claim.needs or claim.test is None or claim.test.at == "final":
            continue
        chosen.update(_picked(claim, df, final, curves))
    return sorted(chosen)


def _picked(claim: Claim, every: pd.DataFrame, final: pd.DataFrame, curves: pd.DataFrame) -> set:
    """The curve rows a claim with `at: seconds:…` reads, per set and compared method."""
    picked = set()
    for dataset in claim.on:
        case = _Set(claim, dataset, every, final, curves)
        for method in (claim.test.a, *claim.test.b):
            try:
                picked.update(case.picks(method, case.final_rows(method), claim.test.metric))
            except _Untested:
                continue
    return picked


# ---- the claims in words ----

def table_cell(text: str) -> str:
    """Text fit for a markdown table cell: one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def shortened_quote(claim: Claim) -> str:
    """The claim's quote, shortened to about QUOTE_CHARS characters, with its line in the paper's text."""
    quote = " ".join(claim.quote.split())
    if len(quote) > QUOTE_CHARS:
        quote = quote[:QUOTE_CHARS].rsplit(" ", 1)[0] + " …"
    return f"“{quote}” (line {claim.line})"


def described_test(claim: Claim) -> str:
    """A claim's test as a sentence, e.g. "test_error of cdsg lower than dsg, udsg; on all sets"."""
    test = claim.test
    if test is None:
        return ""
    others = ", ".join(map(str, test.b))
    limit = test.at.partition(":")[2]
    try:
        at = "" if test.at == "final" else f", within {float(limit):g} s"
    except ValueError:
        at = f", within {limit}'s mean training time"
    per = ", at every training size" if test.per else ""
    if test.kind == "order":
        words = f"{test.metric} of {test.a} {test.direction} than {others}{at}{per}"
    elif test.kind == "similar":
        words = f"{test.metric} of {test.a} within {test.margin:g} of {others}{at}{per} (margin: {test.margin_why})"
    elif test.kind == "ratio":
        words = f"{test.metric} of {others} at least {test.at_least:g}× that of {test.a}{per}"
    elif test.kind == "speedup":
        words = (f"{test.metric} of {test.a}: speed-up from {test.threads[0]} to k threads ≥ {test.at_least:g}·k "
                 f"for k = {', '.join(map(str, test.threads[1:]))}")
    elif test.kind == "extreme":                # across the sets: no quantifier
        return (f"{test.metric} of {test.a} {'largest' if test.direction == 'higher' else 'smallest'} on "
                f"{test.on_set} among the sets")
    elif test.kind == "correlation":
        return (f"Spearman's rank correlation over the sets of {test.metric} of {test.a} with {test.against} ≥ "
                f"{test.value:g} ({test.value_why})")
    elif test.kind == "bound":
        than = (f"{test.value:g} ({test.value_why})" if test.than is None
                else f"{test.than} of the same runs")
        words = f"{test.metric} of {test.a} {test.direction} than {than}{at}{per}"
    else:
        words = f"{test.metric} of {test.a} grows with n_train at a log-log slope ≤ {test.at_most:g}"
    return f"{words}; on {claim.quantifier} sets"


def claims_table(verdicts: list[ClaimVerdict]) -> list[str]:
    """The markdown table of a paper's claims: where, quote, test, sets tested, verdict,
    measurement, runs."""
    lines = ["| where | claim | test | sets tested | verdict | measurement | runs |", "|---|---|---|---|---|---|---|"]
    for v in verdicts:
        lines.append(f"| {table_cell(v.claim.where)} | {table_cell(shortened_quote(v.claim))} | "
                     f"{table_cell(described_test(v.claim))} | {v.tested} | {v.verdict} | {table_cell(v.measurement)} | "
                     f"{', '.join(v.runs)} |")
    return lines


def build_report(results_dirs, *, paper: str | None = None) -> tuple[str, list[dict]]:
    """(markdown, numbers' table rows): every published number (of one paper: its id) next to
    ours (build_numbers), then each paper's claims with their verdicts on the same runs."""
    df = results_frame(results_dirs)
    markdown, table = build_numbers(results_dirs, paper=paper, df=df)
    lines = []
    for p in report_papers(paper):
        if p.claims:
            lines += [f"## {p.name}: claims", "", *claims_table(judge_paper(p, df, runs_are="local")), ""]
    return markdown + ("\n" + "\n".join(lines) if lines else ""), table
