"""What a claim reads from the runs on one of its sets: per compared method, a sample of one number
per finished trial (kernelbench.report.noise decides differences between samples).

A method's rows are the runs tagged with the claim's paper (and figure), that dataset and that
algorithm (and params), status ok, final rows; with `at: seconds:…`, each trial's last evaluation
within that many training seconds, and a method whose first evaluation after its untrained starting
point comes later has no model by then (NoModel, saying when its first model came).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

import pandas as pd

from kernelbench.measures import measure
from kernelbench.papers import Claim, Selector

from .noise import Sample
from .numbers import at_seconds_rows, pooling_conflict, select_rows
from .reading import row_values, time_saved, trial_values

# A horizon's time points, as fractions of its limit: log-spaced, as the papers' time axes are
HORIZON = (0.125, 0.25, 0.5, 1.0)


@dataclass(frozen=True)
class NoModel:
    """A method with no model by the test's time `limit`: its first evaluation came at `first` s
    (the mean over its trials)."""
    limit: float
    first: float


class Untested(Exception):
    """Why a set cannot be tested (its text is the reason, in words)."""


def number(x: float) -> str:
    return f"{x:.4g}"


def column(metric: str) -> str:
    """The results.csv column a metric is read from (a counter's: counters)."""
    found, _ = measure(metric)
    return found.source if found.read in ("column", "percent", "accuracy") else "counters"


def seed_free(rows: pd.DataFrame) -> bool:
    """Whether every row of `rows` comes from a run whose results do not depend on the seed (run.json's
    determinism says "identical results for the same data / thread count", with no seed in it). A text
    with a clause per thread count ("threads=1: …; threads>1: …", an asynchronous solver's) is read at
    each row's own thread count: asynchronous updates make runs differ even where the method draws
    nothing at random."""
    if "determinism" not in rows or not len(rows):
        return False
    for text, params in zip(rows["determinism"].fillna("").astype(str), rows["params"]):
        clause = _clause_for_threads(text, _threads(params))
        if "identical results" not in clause or "seed" in clause:
            return False
    return True


def _threads(params) -> int:
    try:
        threads = json.loads(params).get("threads") if isinstance(params, str) and params else None
    except ValueError:
        return 1
    return int(threads) if isinstance(threads, (int, float)) else 1


def _clause_for_threads(text: str, threads: int) -> str:
    """The part of a determinism text that speaks of `threads` threads (all of it when it has no
    "threads=1: …; threads>1: …" clauses)."""
    parts = re.match(r"threads=1: (.*?); threads>1: (.*)", text)
    if not parts:
        return text
    return parts.group(1) if threads <= 1 else parts.group(2)


class SetRuns:
    """One set of a claim: the rows of each compared method, and the samples the test reads."""

    def __init__(self, claim: Claim, dataset: str, every: pd.DataFrame, final: pd.DataFrame, curves: pd.DataFrame,
                 absent: dict | None = None, runs_are: str = "published"):
        self.claim, self.dataset, self.absent = claim, dataset, absent or {}
        self.runs_are = runs_are        # "published" (REPRODUCTION.md) or "local" (a results folder's report)
        self.every, self.final, self.curves = every, final, curves
        self.runs: set[str] = set()
        self.curve_rows_read: set = set()       # the curve rows (index labels) read before the final ones
        # where the samples are read: final, or seconds:<s> (a horizon's test reads its points in turn)
        self.at = claim.test.at if claim.test is not None and not claim.test.at.startswith("horizon:") else "final"

    def horizon(self) -> list[float]:
        """The training seconds a test with `at: horizon:…` reads: HORIZON fractions of its limit."""
        limit = self.seconds_limit(self.claim.test.at.partition(":")[2])
        return [f * limit for f in HORIZON]

    def select(self, frame: pd.DataFrame, method: Selector) -> pd.DataFrame:
        return select_rows(frame, self.claim.paper, self.dataset, method.algorithm, method.params,
                           figure=self.claim.figure)

    def final_rows(self, method: Selector) -> pd.DataFrame:
        """The method's finished cells on this set; Untested when there are none, saying why."""
        rows = self.select(self.final, method)
        if not len(rows):
            if len(self.select(self.every, method)):
                raise Untested(f"the runs of {method} on {self.dataset} finished 0 cells")
            if self.dataset in self.absent:
                raise Untested(f"no data here: the publishing machine had no copy of {self.dataset} "
                               f"({self.absent[self.dataset]})")
            raise Untested(f"no {self.runs_are} run of {method} on {self.dataset}")
        return rows

    def sample(self, method: Selector, rows: pd.DataFrame, metric: str) -> Sample | NoModel:
        """The method's trials' values of `metric` on its final rows `rows` (of one training size),
        read where the test's `at` says."""
        found, _ = measure(metric)
        if found.read == "gain":
            return self.gain(method, metric)
        conflict = pooling_conflict(rows)
        if conflict:
            raise Untested(f"{method} on {self.dataset}: {conflict}")
        if self.at != "final":
            limit = self.seconds_limit(self.at.partition(':')[2])
            picks = [p for p in self.picks(method, rows, metric) if not self.untrained(p)]
            if not picks and (rows["train_seconds"].astype(float) > limit).all():
                # every trial trained past the limit before its first evaluation of a trained model
                # (its starting point, iteration 0, is none): at that time the method has no model
                # yet (an exact solver's one evaluation comes at its end)
                self.runs.update(rows["run_id"])
                return NoModel(limit, self.first_model(method, rows))
            if not picks:
                raise Untested(f"no evaluation of {method} on {self.dataset} within {number(limit)} s")
            rows = self.curves.loc[picks]
        if found.first_trial:
            rows = rows[rows["trial"] == rows.groupby("run_id")["trial"].transform("min")]
        values = trial_values(rows, metric)
        if not len(values):
            raise Untested(f"no {metric} in the runs of {method} on {self.dataset}")
        self.runs.update(rows["run_id"])
        return Sample.of(values, exact=not found.varies and seed_free(rows))

    def mean(self, method: Selector, rows: pd.DataFrame, metric: str) -> float | NoModel:
        drawn = self.sample(method, rows, metric)
        return drawn if isinstance(drawn, NoModel) else drawn.mean

    def trial_curves(self, method: Selector, rows: pd.DataFrame) -> pd.DataFrame:
        """The curve rows of the method's runs `rows`, at the sizes (and never a selection fold) measured."""
        chosen = self.select(self.curves, method)
        chosen = chosen[chosen["run_id"].isin(set(rows["run_id"]))]
        for key in ("n_train", "fold"):
            if key in chosen and key in rows:
                chosen = chosen[chosen[key].astype(str).isin(set(rows[key].astype(str)))]
        return chosen

    def untrained(self, label) -> bool:
        """Whether the curve row `label` evaluates the starting point (iteration 0), before any
        training: not a model of the method."""
        return "iteration" in self.curves and self.curves.at[label, "iteration"] == 0

    def first_model(self, method: Selector, rows: pd.DataFrame) -> float:
        """When the method's first model came: per trial its first evaluation after the starting
        point (its final row's, for a run that evaluates once), the mean over trials."""
        curves = self.trial_curves(method, rows)
        if len(curves) and "iteration" in curves:
            curves = curves[curves["iteration"] != 0]
        frame = curves if len(curves) else rows
        firsts = frame.groupby(["run_id", "trial"])["train_seconds"].min().astype(float)
        return float(firsts.mean())

    def time_to(self, method: Selector, rows: pd.DataFrame, metric: str, target: float,
                direction: str) -> tuple[Sample | None, int]:
        """(the training seconds at which each trial of the method's runs `rows` first reached
        `target` on its curve, or None when none did; how many trials never did)."""
        reached, missed = [], 0
        curves = self.trial_curves(method, rows)
        for _, trial in curves.groupby(["run_id", "trial"]):
            values = row_values(trial, metric)
            hit = trial[values <= target] if direction == "lower" else trial[values >= target]
            if len(hit):
                first = hit["train_seconds"].astype(float).idxmin()
                self.curve_rows_read.add(first)
                reached.append(float(hit.loc[first, "train_seconds"]))
            else:
                missed += 1
        self.runs.update(curves["run_id"])
        return (Sample.of(reached) if reached else None), missed

    def picks(self, method: Selector, rows: pd.DataFrame, metric: str) -> list:
        """With `at: seconds:…`, the curve rows (index labels) read: per trial of the runs of the
        method's final rows `rows`, its last evaluation within the limit."""
        limit = self.seconds_limit(self.at.partition(":")[2])
        picked = at_seconds_rows(self.trial_curves(method, rows), column(metric), limit, stopped_early_counts=True)
        self.curve_rows_read.update(picked)
        return picked

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
            raise Untested(f"no training size with runs of every compared method on {self.dataset}")
        return [(n, {m: rows[rows["n_train"] == n] for m, rows in rows_by_method.items()}) for n in sorted(sizes)]

    def saturated(self, rows_by_method: dict, floor_points: float) -> dict:
        """{method: why} of the compared methods whose test error says nothing about what they
        learned: within `floor_points` of the constant classifier's (the set's floor), or exactly 0
        (every test row right: two such methods tie whatever they learned)."""
        floor = self.claim.floor.get(self.dataset)
        found = {}
        for method, rows in rows_by_method.items():
            errors = trial_values(rows, "test_error")
            if not len(errors):
                continue
            if floor is not None and abs(errors.mean() - floor) <= floor_points:
                found[method] = (f"{method} test error {number(errors.mean())} % lies within {floor_points:g} points "
                                 f"of the constant classifier's {number(floor)} %")
            elif errors.max() == 0:
                found[method] = f"{method} test error 0 % (every test row right)"
        return found

    def gain(self, method: Selector, metric: str) -> Sample:
        """A gain measure of the merge method its argument names against GSS-standard, both at the
        method's other params (its budget): reading.time_saved, trial by trial."""
        found, merge = measure(metric)
        def rows_of(merge: str) -> pd.DataFrame:
            rows = self.final_rows(replace(method, params={**method.params, "merge": merge}))
            conflict = pooling_conflict(rows)
            if conflict:
                raise Untested(f"{method} merge={merge} on {self.dataset}: {conflict}")
            self.runs.update(rows["run_id"])
            return rows
        return Sample.of(time_saved(found, rows_of(merge), rows_of("gss")))
