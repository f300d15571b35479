"""Cost growth of every solver on a SUSY replica, drawn in the style of Geng et
al. 2019, Fig. 2: training time vs training size, log-log, one line per solver with its fitted
slope (1 = linear, 2 = quadratic); a second panel with the peak memory of each point's process.

Which rows: the summary that scripts/bench_scaling.py writes as `<out>/results.csv` (default
results/bench/scaling/results.csv), one row per (solver, training size), marked by the column
`bench = "scaling"`. Each point was its own `kernelbench run` process; that run folder (results.csv
and run.json) is named in `run_folder`. The summary carries what a run's own results.csv does not
(the training size, the process's peak memory, why a line stops), so the figure reads it alone and
`kernelbench figures results` finds it like any results file. The summary names the algorithm in
`solver` (not `algorithm`), so the per-paper figures never mistake it for training rows.

Where a line stops, and why (column `stopped`, drawn on the dashed time-budget line):
  ^  time: training took longer than the bench's --max-seconds (or the process was killed at its
     wall-clock limit); bigger sizes were not run
  x  budget: the solver refused the size itself (a `skipped` row: an O(n²) baseline past its
     max_samples / max_points, a feature matrix past its memory budget)
  v  memory: the process ran out of the bench's memory limit
  s  error: the run failed otherwise (the summary's message says how)
"""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from kernelbench.figures.base import register_figure
from kernelbench.figures.geng_s3vm import loglog_slope

BENCH = "scaling"
STOP_MARKERS = {"time": "^", "budget": "x", "memory": "v", "error": "s"}
STOP_LABELS = {"time": "over the time budget", "budget": "refused by its own size/memory budget",
               "memory": "out of the memory limit", "error": "failed"}


def fit_slope(sizes, seconds) -> dict:
    """Least-squares slope of log(seconds) on log(size) over the points with both > 0, and the
    range it was fitted over: {slope, n_min, n_max, points} (slope NaN below two sizes)."""
    sizes, seconds = np.asarray(sizes, float), np.asarray(seconds, float)
    keep = np.isfinite(sizes) & np.isfinite(seconds) & (sizes > 0) & (seconds > 0)
    sizes, seconds = sizes[keep], seconds[keep]
    slope = loglog_slope(sizes, seconds) if sizes.size else float("nan")
    return {"slope": slope, "n_min": int(sizes.min()) if sizes.size else None,
            "n_max": int(sizes.max()) if sizes.size else None, "points": int(sizes.size)}


def scaling_rows(df):
    """The bench's summary rows (column bench == "scaling"), typed; empty if there are none."""
    if df.empty or "bench" not in df.columns or "solver" not in df.columns:
        return pd.DataFrame()
    rows = df[df["bench"].astype(str) == BENCH].copy()
    for column in ("n", "train_seconds", "peak_memory_mb", "data_mb", "max_seconds", "max_memory_mb",
                   "test_error"):
        if column in rows.columns:
            rows[column] = pd.to_numeric(rows[column], errors="coerce").astype(float)
    rows["stopped"] = rows["stopped"].fillna("").astype(str) if "stopped" in rows.columns else ""
    return rows[rows["n"].notna()]


def finished(rows):
    """Points that count as measurements: trained to their stop rule within the budget."""
    return rows[(rows["status"].astype(str) == "ok") & (rows["stopped"] == "")
                & rows["train_seconds"].notna()]


def slopes(rows) -> dict:
    """{solver: fit_slope(...)} over each solver's finished points."""
    good = finished(rows)
    return {solver: fit_slope(part["n"], part["train_seconds"]) for solver, part in good.groupby("solver")}


def _fmt_n(n) -> str:
    n = float(n)
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.3g}{unit}"
    return f"{n:.0f}"


@register_figure("bench_scaling_time_memory")
def time_and_memory_vs_size(df):
    rows = scaling_rows(df)
    if rows.empty:
        return None
    solvers = sorted(rows["solver"].astype(str).unique())
    cmap = plt.get_cmap("tab10")     # 10 colours, then the same colours dashed
    colors = {s: cmap(i % 10) for i, s in enumerate(solvers)}
    styles = {s: "-" if i < 10 else "--" for i, s in enumerate(solvers)}
    budget = float(rows["max_seconds"].max()) if "max_seconds" in rows else math.nan
    memory_limit = float(rows["max_memory_mb"].max()) if "max_memory_mb" in rows else math.nan
    fitted = slopes(rows)
    good = finished(rows)

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12.5, 4.8))
    handles = []
    for solver in solvers:
        color = colors[solver]
        part = good[good["solver"] == solver].groupby("n")[["train_seconds", "peak_memory_mb"]].mean()
        stops = rows[(rows["solver"] == solver) & (rows["stopped"] != "")].sort_values("n")
        fit = fitted.get(solver)
        label = solver
        if fit and math.isfinite(fit["slope"]):
            label += f" (slope {fit['slope']:.2f}, {_fmt_n(fit['n_min'])}–{_fmt_n(fit['n_max'])})"
        elif not part.empty:
            label += " (one size)"
        if not stops.empty:
            first = stops.iloc[0]
            label += f"; stops at {_fmt_n(first['n'])}: {first['stopped']}"
        if not part.empty:
            ax_t.loglog(part.index, part["train_seconds"], "o", ls=styles[solver], color=color, ms=3.5, lw=1.3)
            ax_m.loglog(part.index, part["peak_memory_mb"], "o", ls=styles[solver], color=color, ms=3.5, lw=1.3)
        for _, stop in stops.iterrows():
            marker = STOP_MARKERS.get(stop["stopped"], "s")
            y_time = float(budget if math.isfinite(budget) else stop["train_seconds"])
            if not math.isfinite(y_time):
                continue
            ax_t.plot([stop["n"]], [y_time], marker, color=color, ms=8, mew=2,
                      mfc="none" if marker != "x" else color)
            if not part.empty and stop["stopped"] == "time":   # dotted: from the last measured point to the budget
                ax_t.plot([part.index[-1], stop["n"]], [part["train_seconds"].iloc[-1], y_time], ":",
                          color=color, lw=1)
            if math.isfinite(float(stop.get("peak_memory_mb", math.nan))):
                ax_m.plot([stop["n"]], [stop["peak_memory_mb"]], marker, color=color, ms=8, mew=2,
                          mfc="none" if marker != "x" else color)
        handles.append(Line2D([], [], color=color, marker="o", ls=styles[solver], ms=3.5, lw=1.3, label=label))

    if math.isfinite(budget):
        ax_t.axhline(budget, color="0.3", ls="--", lw=1)
        ax_t.text(0.99, budget, f"time budget {budget:g} s ", transform=ax_t.get_yaxis_transform(),
                  ha="right", va="top", fontsize=7, color="0.3")
    if "data_mb" in rows and rows["data_mb"].notna().any():
        data = rows.groupby("n")["data_mb"].max().sort_index()
        ax_m.loglog(data.index, data.values, "--", color="0.5", lw=1)
        ax_m.text(data.index[0], data.values[0], " training data (float64)", fontsize=7, color="0.4",
                  ha="left", va="top")
    if math.isfinite(memory_limit) and memory_limit > 0:
        ax_m.axhline(memory_limit, color="0.3", ls="--", lw=1)
        ax_m.text(0.01, memory_limit, f" memory limit {memory_limit / 1024:.3g} GiB",
                  transform=ax_m.get_yaxis_transform(), va="top", fontsize=7, color="0.3")
    sizes = sorted(rows["n"].unique())
    for ax, ylabel in ((ax_t, "training time (s)"), (ax_m, "peak memory of the process (MB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        if len(sizes) <= 12:              # label the sizes that were run
            ax.set_xticks(sizes, [_fmt_n(n) for n in sizes], fontsize=7)
        ax.set_xlabel("training size n (rows)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
    used = sorted(set(rows["stopped"]) - {""})
    handles += [Line2D([], [], color="0.2", marker=STOP_MARKERS.get(r, "s"), ls="none", ms=7,
                       mfc="none" if r != "budget" else "0.2", label=f"stopped: {STOP_LABELS.get(r, r)}")
                for r in used]
    ax_m.legend(handles=handles, fontsize=6.5, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                framealpha=0.8)
    datasets = ", ".join(sorted(rows["dataset"].astype(str).unique())) if "dataset" in rows else ""
    fig.suptitle(f"Cost growth on {datasets}: training time and peak memory vs training size "
                 "(log-log; slope 1 = linear), as Geng et al. 2019 Fig. 2", fontsize=9)
    fig.tight_layout()
    return fig
