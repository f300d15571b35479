"""Cost growth of solvers on a training-size sweep, drawn in the style of Geng et al. 2019, Fig. 2:
training time vs training size, log-log, one line per algorithm with its fitted slope (1 = linear,
2 = quadratic); a second panel with the peak memory of each point's process.

Which rows: the final rows of the points of a `kernelbench sweep` over a training size
(`dataset.n` of a replica, or `dataset.subsample`) tagged panel: cost growth (a paper's own sweeps
are its figures', e.g. geng2019_fig2). The size is the rows each point trained on (run.json's
dataset.n_train; the swept value for a point stopped before it loaded its data), the peak memory
run.json's (a point's own when the sweep ran it with --processes), e.g.

    kernelbench sweep configs/synthetic_dsg_cost_growth.yaml --processes --max-seconds 900 \
        --over algorithm.name=dsg,bsgd,libsvm --over dataset.n=50000,158000,500000,1580000,5000000

Where a line stops, and why (stop_reason, drawn on the dashed time-budget line):
  ^  time: training reached the budget (stop.seconds), or the point was killed at its wall-clock limit
  x  budget: the solver refused the size itself (a `skipped` row: an O(n²) baseline past its
     max_samples / max_points, a feature matrix past its memory budget)
  v  memory: the point's process ran out of the sweep's memory limit
  s  error: the run failed otherwise (its message says how)
"""
from __future__ import annotations

import json
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from kernelbench.figures.base import register_figure
from kernelbench.figures.geng2019 import loglog_slope
from kernelbench.results import config_values, final_rows

TRAINING_SIZE_KEYS = ("dataset.n", "dataset.subsample")
PANEL = "cost growth"            # tags.panel of the sweeps drawn here (configs/synthetic_dsg_cost_growth.yaml)
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


def stop_reason(status, train_seconds, seconds_limit, counters="") -> str:
    """Why a point ends its line, from its final row: the reason a sweep wrote (`counters.stopped`:
    time, memory, error), `budget` for a size the solver refused (skipped: an O(n²) baseline past
    max_points), `time` when training reached `seconds_limit`, `error` when it failed; "" otherwise."""
    written = json.loads(counters).get("stopped", "") if isinstance(counters, str) and counters else ""
    if written:
        return written
    if status == "skipped":
        return "budget"
    if status in ("failed", "diverged"):
        return "error"
    if seconds_limit is not None and train_seconds is not None and math.isfinite(seconds_limit) \
            and train_seconds >= seconds_limit:
        return "time"
    return ""


def _swept_size(text) -> float:
    values = json.loads(text) if text else {}
    return next((float(values[k]) for k in TRAINING_SIZE_KEYS if values.get(k) is not None), math.nan)


def scaling_rows(df):
    """The final row of every point of a training-size sweep of the cost-growth panel, with `n` (rows
    trained on), `seconds_limit` (stop.seconds) and `stopped` (why its line ends, "" if it does not); empty
    if none."""
    if df.empty or "sweep" not in df.columns or "panel" not in df.columns:
        return pd.DataFrame()
    rows = final_rows(df)
    swept = rows["sweep"].map(_swept_size)
    rows = rows[swept.notna() & (rows["panel"] == PANEL)].copy()
    if rows.empty:
        return pd.DataFrame()
    trained = pd.to_numeric(rows["n_train"], errors="coerce").astype(float)
    rows["n"] = trained.where(trained.notna(), swept[rows.index])
    rows["seconds_limit"] = pd.to_numeric(config_values(rows, "stop.seconds"), errors="coerce").astype(float)
    rows["stopped"] = [stop_reason(r.status, r.train_seconds, None if math.isnan(r.seconds_limit) else r.seconds_limit,
                                   r.counters) for r in rows.itertuples()]
    return rows


def finished(rows):
    """Points that count as measurements: trained to their stop rule within the budget."""
    return rows[(rows["status"].astype(str) == "ok") & (rows["stopped"] == "")
                & rows["train_seconds"].notna()]


def slopes(rows) -> dict:
    """{algorithm: fit_slope(...)} over each algorithm's finished points."""
    good = finished(rows)
    return {name: fit_slope(part["n"], part["train_seconds"]) for name, part in good.groupby("algorithm")}


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
    names = sorted(rows["algorithm"].astype(str).unique())
    cmap = plt.get_cmap("tab10")     # 10 colours, then the same colours dashed
    colors = {s: cmap(i % 10) for i, s in enumerate(names)}
    styles = {s: "-" if i < 10 else "--" for i, s in enumerate(names)}
    seconds_limit = float(rows["seconds_limit"].max())
    fitted = slopes(rows)
    good = finished(rows)

    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(12.5, 4.8))
    handles = []
    for name in names:
        color = colors[name]
        part = good[good["algorithm"] == name].groupby("n")[["train_seconds", "peak_memory_mb"]].mean()
        stops = rows[(rows["algorithm"] == name) & (rows["stopped"] != "")].sort_values("n")
        fit = fitted.get(name)
        label = name
        if fit and math.isfinite(fit["slope"]):
            label += f" (slope {fit['slope']:.2f}, {_fmt_n(fit['n_min'])}–{_fmt_n(fit['n_max'])})"
        elif not part.empty:
            label += " (one size)"
        if not stops.empty:
            first = stops.iloc[0]
            label += f"; stops at {_fmt_n(first['n'])}: {first['stopped']}"
        if not part.empty:
            ax_t.loglog(part.index, part["train_seconds"], "o", ls=styles[name], color=color, ms=3.5, lw=1.3)
            ax_m.loglog(part.index, part["peak_memory_mb"], "o", ls=styles[name], color=color, ms=3.5, lw=1.3)
        for _, stop in stops.iterrows():
            marker = STOP_MARKERS.get(stop["stopped"], "s")
            y_time = float(seconds_limit if math.isfinite(seconds_limit) else stop["train_seconds"])
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
        handles.append(Line2D([], [], color=color, marker="o", ls=styles[name], ms=3.5, lw=1.3, label=label))

    if math.isfinite(seconds_limit):
        ax_t.axhline(seconds_limit, color="0.3", ls="--", lw=1)
        ax_t.text(0.99, seconds_limit, f"time budget {seconds_limit:g} s ", transform=ax_t.get_yaxis_transform(),
                  ha="right", va="top", fontsize=7, color="0.3")
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
