"""`kernelbench compare RUN_OR_FOLDER...`: one page for a user's own runs, whatever paper they are
for or none. Per dataset: each method's final metric and training time as mean ± std (n) over its
trials and runs, a method being an (algorithm, params) pair, and its curves (the metric against
training time and samples seen, the objective against time). Written as compare.md beside PNG files
and as compare.html, a page with the figures inside it that renders alone."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from kernelbench._io import atomic_write_bytes, atomic_write_text, output_error, safe_name
from kernelbench._vocab import HEADLINE_METRICS, METRICS
from kernelbench.errors import KernelbenchError, OutputError
from kernelbench.figures.base import png_bytes
from kernelbench.figures.curves import method_curves
from kernelbench.report.numbers import setting_differences
from kernelbench.report.page import markdown_to_html
from kernelbench.results import (META_FILE, RESULTS_FILE, RunRecord, final_rows, raw_rows, run_folders,
                                 run_frame)

# the results.csv columns a comparison reads: a file without them was not written by this schema
NEEDED_COLUMNS = ("run_id", "dataset", "algorithm", "params", "trial", "iteration", "train_seconds", "status")
PAGE = "compare.md"
FIGURES_DIR = "figures"
# (x, y) of each panel; None: the section's metric (test error, or test MSE / MAE of a regression)
PANELS = (("train_seconds", None), ("samples_seen", None), ("train_seconds", "objective"))


@dataclass
class Comparison:
    markdown: str               # compare.md's text (figures as FIGURES_DIR/<name>.png)
    figures: dict               # path in the markdown -> PNG bytes
    tables: list                # (dataset title, final_table frame) per section


def find_runs(paths) -> list[Path]:
    """The run folders named, or found below the folders named (kernelbench.results.run_folders),
    each once, in the order given; a KernelbenchError for a path that is neither."""
    runs: list[Path] = []
    for path in map(Path, paths):
        if not path.exists():
            raise KernelbenchError(f"{path} does not exist; name a run folder (it holds {RESULTS_FILE} and "
                                   f"{META_FILE}) or a folder that holds run folders, e.g. results/")
        if (path / RESULTS_FILE).is_file():
            found = [path]
        elif path.is_dir():
            found = run_folders(path)
        else:
            found = []
        if not found:
            raise KernelbenchError(f"{path} is not a run folder and holds no run folder (none has a {RESULTS_FILE}); "
                                   "name the folder `kernelbench run` printed (results: <run folder>/results.csv) "
                                   "or the --out folder of your runs")
        runs += [run for run in found if run.resolve() not in {r.resolve() for r in runs}]
    return runs


def read_run(run_dir: Path) -> pd.DataFrame:
    """One run's rows (kernelbench.results.run_frame) with `task`, `smoke` and `run_dir`; a
    KernelbenchError when its run.json is unreadable or its results.csv lacks a column compared."""
    try:
        record = RunRecord.load(run_dir)
    except OutputError as e:
        raise KernelbenchError(f"{run_dir} is not a run folder that can be compared: {e}; leave it out, or name "
                               "the run folder itself") from None
    rows = raw_rows(run_dir)
    missing = [c for c in NEEDED_COLUMNS if not rows or c not in rows[0]]
    if missing:
        raise KernelbenchError(f"{run_dir / RESULTS_FILE} has another schema than this kernelbench's: no column(s) "
                               f"{', '.join(missing)}; leave that run out, or re-run its config with this "
                               "kernelbench (its run.json names the config)")
    frame = run_frame(run_dir, record)
    dataset = record.dataset if isinstance(record.dataset, dict) else {}
    frame["task"] = dataset.get("task") or ""
    frame["smoke"] = bool(record.smoke)
    frame["run_dir"] = str(run_dir)
    frame["run_status"] = record.status
    return frame


def method_labels(final: pd.DataFrame) -> dict:
    """(dataset, algorithm, params JSON) -> what tells the method apart: the algorithm, with the
    parameters whose values differ between that algorithm's settings on that dataset."""
    labels = {}
    for (dataset, algorithm), rows in final.groupby(["dataset", "algorithm"]):
        settings = {p: json.loads(p) if p else {} for p in rows["params"].unique()}
        differ = sorted(k for k in set().union(*settings.values())
                        if len({json.dumps(s.get(k), sort_keys=True) for s in settings.values()}) > 1)
        for text, values in settings.items():
            shown = ", ".join(f"{k}={value_text(values.get(k))}" for k in differ)
            labels[dataset, algorithm, text] = f"{algorithm} {shown}".strip()
    return labels


def final_table(final: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per (dataset, algorithm, params): the mean, standard deviation (n - 1 in the denominator;
    NaN for one value) and count of `metric` over the final rows whose status is ok, and the mean
    and standard deviation of their training seconds. `final`: rows as final_rows gives them."""
    ok = final[final["status"] == "ok"].astype({metric: float, "train_seconds": float})
    table = (ok.groupby(["dataset", "algorithm", "params"])
             .agg(mean=(metric, "mean"), std=(metric, "std"), n=(metric, "count"),
                  seconds_mean=("train_seconds", "mean"), seconds_std=("train_seconds", "std"))
             .reset_index())
    table["n"] = table["n"].astype(int)
    return table


def value_text(value) -> str:
    """A parameter's value as a label shows it: a float to 4 significant digits (C=0.3162, not
    0.31622776601683794), anything else as written."""
    if not isinstance(value, float):
        return str(value)
    text = f"{value:.4g}"
    return f"{value:.0f}" if "e+" in text and float(text) == value else text     # 10000, not 1e+04


def decimals_for(values, *, digits: int = 4) -> int:
    """Decimals that give the largest of `values` `digits` significant digits (NaN ignored): one
    precision for a whole column."""
    largest = max((abs(v) for v in values if v == v), default=0.0)
    return digits if largest == 0 else min(10, max(0, digits - 1 - math.floor(math.log10(largest))))


def mean_std_text(mean: float, std: float, n: int, *, digits: int = 4, decimals: int | None = None) -> str:
    """"mean ± std (n)", both to the same decimals: `decimals` (a column's, decimals_for), else
    `digits` significant ones of the larger; "mean (1)" for one value, "—" for none."""
    if n == 0 or mean != mean:
        return "—"
    spread = 0.0 if std != std else std
    if decimals is None:
        decimals = decimals_for([mean, spread], digits=digits)
    if n == 1 or std != std:
        return f"{mean:.{decimals}f} ({n})"
    return f"{mean:.{decimals}f} ± {std:.{decimals}f} ({n})"


def section_metric(final: pd.DataFrame, metric: str | None) -> str | None:
    """The metric a dataset's section shows: the one asked for, else the first of HEADLINE_METRICS
    its final rows measured (test error; a regression's test MAE or MSE); None when none."""
    candidates = (metric,) if metric else HEADLINE_METRICS
    return next((m for m in candidates if m in final and final[m].notna().any()), None)


def _cell(text: str) -> str:
    """`text` in a Markdown table cell: a `|` in it (a parameter's value, a folder name) would end the cell."""
    return str(text).replace("|", "\\|")


def _statuses(rows: pd.DataFrame) -> str:
    counts = rows["status"].value_counts()
    return ", ".join(f"{counts[s]} {s}" for s in ("ok", "diverged", "skipped", "failed") if s in counts)


def _check_metric(metric: str | None, final: pd.DataFrame) -> None:
    if metric is None:
        return
    if metric not in final or final[metric].isna().all():
        measured = [m for m in METRICS if m in final and final[m].notna().any()]
        raise KernelbenchError(f"no run compared measured {metric}; these runs have {', '.join(measured) or 'none'} "
                               "(evaluate.on in the config chooses what a run measures): pick one of those")


def build_comparison(runs, *, metric: str | None = None) -> Comparison:
    """The page of `runs` (run folders): see the module docstring."""
    frames = [read_run(run) for run in runs]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if df.empty:
        raise KernelbenchError(f"the runs named have no rows yet ({', '.join(map(str, runs))}); compare them once "
                               "they have evaluated (a run writes a row per evaluation)")
    final = final_rows(df, old_runs=True)
    _check_metric(metric, final)
    labels = method_labels(final)
    # None for a setting with no final row on the test part (a grid's searched cells): drawn by no curve
    df["method"] = [labels.get(key) for key in zip(df["dataset"], df["algorithm"], df["params"])]
    final = final.assign(method=df.loc[final.index, "method"])
    lines = ["# kernelbench compare", "",
             f"{len(runs)} run(s). Each method is an algorithm with its parameters (those that differ between "
             "its settings are shown; all are listed under Parameters). Final values: mean ± standard deviation "
             "(n) over the trials and runs whose final status is ok; curves: the mean over them at each "
             "evaluation.", ""]
    figures, tables = {}, []
    for (dataset, task), part in final.groupby(["dataset", "task"], sort=True):
        shown = section_metric(part, metric)
        title = f"{dataset} ({task})" if task else dataset
        lines += [f"## {title}", ""]
        if shown is None:
            lines += [f"No final row of these runs measured {' or '.join(HEADLINE_METRICS)}.", ""]
            continue
        table = final_table(part, shown)
        tables.append((title, table))
        lines += [f"| method | {shown} | training time (s) | final status |", "|---|---:|---:|---|"]
        stats = table.set_index(["algorithm", "params"])
        value_decimals = decimals_for([*table["mean"], *table["std"]])           # one precision per column
        seconds_decimals = decimals_for([*table["seconds_mean"], *table["seconds_std"]], digits=3)
        for (algorithm, params), rows in part.groupby(["algorithm", "params"]):
            value = seconds = "—"           # a method with no ok final row: its statuses say why
            if (algorithm, params) in stats.index:
                s = stats.loc[(algorithm, params)]
                value = mean_std_text(s["mean"], s["std"], s["n"], decimals=value_decimals)
                seconds = mean_std_text(s["seconds_mean"], s["seconds_std"], s["n"], decimals=seconds_decimals)
            lines.append(f"| {_cell(rows['method'].iloc[0])} | {value} | {seconds} | {_statuses(rows)} |")
        lines.append("")
        for method, rows in part.groupby("method"):
            found = setting_differences(rows)
            if found:
                differ, groups = found
                lines += [f"Note: the row of {method} pools runs whose {', '.join(differ)} differ "
                          f"({' | '.join(groups)}); compare them one by one to tell them apart.", ""]
        curves = df[(df["dataset"] == dataset) & (df["task"] == task) & (df["status"] == "ok") & df["method"].notna()]
        if "fold" in curves:
            curves = curves[curves["fold"].isna()]          # the test part's curves, not validation folds
        panels = [(x, y or shown) for x, y in PANELS if x in curves and (y or shown) in curves]
        fig = method_curves(curves, panels, title=title)
        if fig is not None:
            name = f"{FIGURES_DIR}/{safe_name(f'{dataset}-{task}' if task else dataset)}.png"
            figures[name] = png_bytes(fig)
            lines += [f"![{title}: curves]({name})", ""]
    lines += _parameters(labels) + _runs(df)
    return Comparison("\n".join(lines) + "\n", figures, tables)


def _parameters(labels: dict) -> list[str]:
    """Every parameter of each method, as the runs recorded them (defaults filled in)."""
    lines = ["## Parameters", ""]
    for (dataset, algorithm, params), label in sorted(labels.items()):
        values = json.loads(params) if params else {}
        text = ", ".join(f"{k}={json.dumps(v)}" for k, v in sorted(values.items()))
        lines.append(f"- {dataset}, **{label}**: `{text}`")
    return lines + [""]


def _runs(df: pd.DataFrame) -> list[str]:
    """A row per run folder: where it is, what it ran, how it ended."""
    lines = ["## Runs", "", "| run | experiment | dataset | algorithm | trials | status |", "|---|---|---|---|---|---|"]
    for run, rows in df.groupby("run_dir", sort=False):
        smoke = " (smoke)" if rows["smoke"].iloc[0] else ""
        datasets, algorithms = (", ".join(sorted(rows[c].unique())) for c in ("dataset", "algorithm"))
        lines.append(f"| `{_cell(run)}` | {_cell(rows['experiment'].iloc[0])}{smoke} | {datasets} | {algorithms} | "
                     f"{rows['trial'].nunique()} | {rows['run_status'].iloc[0]} |")
    return lines


def write_comparison(comparison: Comparison, out_dir) -> tuple[Path, Path]:
    """compare.md with its PNG files under FIGURES_DIR, and compare.html with them inside."""
    out = Path(out_dir)
    try:
        (out / FIGURES_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise output_error("create", out / FIGURES_DIR, e) from e
    for name, png in comparison.figures.items():
        atomic_write_bytes(out / name, png)
    atomic_write_text(out / PAGE, comparison.markdown)
    page = out / Path(PAGE).with_suffix(".html")
    atomic_write_text(page, markdown_to_html(comparison.markdown, title="kernelbench compare",
                                             images=comparison.figures))
    return out / PAGE, page
