"""Reading a measure (kernelbench.measures) from a method's rows of results.csv: the one place that
turns its `read` into numbers, for the papers' numbers and their claims alike."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from kernelbench.measures import Measure, measure


def counter(rows: pd.DataFrame, name: str) -> pd.Series:
    """One of the algorithm's counters (the rows' counters JSON) as floats; NaN where absent."""
    return rows["counters"].map(lambda c: json.loads(c).get(name, np.nan) if c else np.nan).astype(float)


def row_values(rows: pd.DataFrame, metric: str) -> pd.Series:
    """`metric` on every row of `rows` (errors in percent, NaN where a row has none): a curve read
    point by point, or a final row's number. Not for gains or at_time, which compare runs."""
    found, argument = measure(metric)
    if found.read in ("counter", "counter%"):
        return (100.0 if found.read == "counter%" else 1.0) * counter(rows, argument)
    if found.read == "share":          # 100 · the counted seconds / the training seconds
        return 100.0 * counter(rows, found.source) / rows["train_seconds"].astype(float)
    if found.source not in rows:
        return pd.Series(np.nan, index=rows.index, dtype=float)
    values = rows[found.source].astype(float)
    if found.read == "accuracy":
        return 100.0 * (1.0 - values)
    return 100.0 * values if found.read == "percent" else values


def trial_values(rows: pd.DataFrame, metric: str) -> np.ndarray:
    """The numbers `metric` gives on final rows `rows`: one per trial, the non-finite left out."""
    values = row_values(rows, metric)
    if measure(metric)[0].read in ("percent", "accuracy") and "fold" in rows and rows["fold"].notna().any():
        # protocol: paper (Geng et al. §6.1): a trial's error is the mean over its folds
        values = values.groupby([rows["run_id"], rows["params"], rows["trial"]]).mean()
    values = np.asarray(values, dtype=float)
    return values[np.isfinite(values)]


def time_saved(found: Measure, ours: pd.DataFrame, gss: pd.DataFrame) -> np.ndarray:
    """A gain measure: per trial, 100·(1 − the merge method's seconds (`found.source`: training or
    merging) / GSS-standard's in the same trial, the same seed and so the same data order); one
    number, 100·(1 − mean / mean), when the trials do not pair; none without rows of both."""
    def seconds(rows: pd.DataFrame) -> pd.Series:
        values = rows["train_seconds"].astype(float) if found.source == "train_seconds" else counter(rows, found.source)
        return pd.Series(values.to_numpy(dtype=float), index=rows["trial"].to_numpy()).groupby(level=0).mean()
    if not len(ours) or not len(gss):
        return np.array([])
    mine, reference = seconds(ours), seconds(gss)
    if len(mine) > 1 and set(mine.index) == set(reference.index):
        return (100.0 * (1.0 - mine / reference.loc[mine.index])).to_numpy(dtype=float)
    return np.array([100.0 * (1.0 - mine.mean() / reference.mean())])
