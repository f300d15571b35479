"""The published runs' final numbers as Markdown tables, for the documentation site: one row per
experiment and setting, read from results/published/<paper>/*/results.csv alone, so a table can
only say what the committed runs say."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelbench.results import collect_results, final_rows

# The measure of a row: the first of these columns the experiment's final rows hold a value in.
MEASURES = (("test_error", "test error", 100.0, " %"), ("test_mse", "test MSE", 1.0, ""),
            ("test_mae", "test MAE", 1.0, ""))
HEADER = ("| experiment | role | threads | trials | measure | median | mean ± std | train s (mean) |\n"
          "|---|---|---:|---:|---|---:|---:|---:|")


@dataclass(frozen=True)
class FinalNumbers:
    """One experiment at one setting: its final rows' measure over the trials."""
    experiment: str
    setting: str             # the parameters that tell this setting from the experiment's others ("" if one)
    role: str
    threads: str
    trials: int
    measure: str             # "test error", "test MSE", ... ; "" when no trial produced a value
    values: tuple            # per trial, in the measure's unit (percent for an error)
    unit: str
    train_seconds: float
    statuses: tuple

    def row(self) -> str:
        name = self.experiment + (f" ({self.setting})" if self.setting else "")
        if self.values:
            values = np.asarray(self.values)
            median = f"{np.median(values):.2f}{self.unit}"
            spread = (f"{values.mean():.2f} ± {values.std(ddof=1):.2f}{self.unit}" if len(values) > 1
                      else f"{values.mean():.2f}{self.unit}")
            seconds = f"{self.train_seconds:.1f}"
        else:
            median, spread, seconds = ", ".join(sorted(set(self.statuses))), "—", "—"
        return (f"| {name} | {self.role} | {self.threads} | {self.trials} "
                f"| {self.measure or '—'} | {median} | {spread} | {seconds} |")


def final_numbers(paper_dir) -> list[FinalNumbers]:
    """Every experiment's final numbers below `paper_dir` (results/published/<paper>), by
    experiment name (which begins with the dataset) and setting."""
    rows = final_rows(collect_results(Path(paper_dir)))
    if rows.empty:
        return []
    out = []
    for experiment, runs in rows.groupby("experiment", sort=False):
        settings = {text: json.loads(text) for text in runs["params"].unique()}
        differing = sorted({key for params in settings.values() for key in params
                            if len({json.dumps(p.get(key)) for p in settings.values()}) > 1})
        for text, cells in runs.groupby("params", sort=False):
            out.append(_numbers(experiment, cells, ", ".join(f"{k}={settings[text].get(k)}" for k in differing)))
    return sorted(out, key=lambda n: (n.experiment, n.setting))


def _numbers(experiment: str, cells, setting: str) -> FinalNumbers:
    first = cells.iloc[0]
    measure, unit, values = "", "", ()
    for column, label, factor, suffix in MEASURES:
        present = cells[column].dropna()
        if len(present):
            measure, unit, values = label, suffix, tuple(float(v) * factor for v in present)
            break
    threads = "" if first["threads"] is None or _missing(first["threads"]) else str(int(first["threads"]))
    return FinalNumbers(experiment=experiment, setting=setting, role=first["role"],
                        threads=threads, trials=len(cells), measure=measure, values=values, unit=unit,
                        train_seconds=float(cells["train_seconds"].mean()), statuses=tuple(cells["status"]))


def _missing(value) -> bool:
    try:
        return bool(np.isnan(value))
    except (TypeError, ValueError):      # pandas NA
        return True


def final_numbers_markdown(paper_dir) -> str:
    """The table of final_numbers(paper_dir); an empty string when the paper has no published run."""
    numbers = final_numbers(paper_dir)
    return "\n".join([HEADER, *(n.row() for n in numbers)]) if numbers else ""
