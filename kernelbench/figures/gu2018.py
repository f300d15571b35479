"""Gu et al. 2018 (AsyDSSKL): Fig. 1a–f (test accuracy or MSE vs training time, one panel per
dataset, every algorithm present: asydsskl, asygcd, dsg, libsvm, libsvm-p), Fig. 1g–h (testing time vs number
of test samples) and Fig. 2 (objective vs time per thread count, and speedup vs threads).

Only runs tagged {paper: gu2018} are drawn, so other papers' runs on the same data do not mix in:
Fig. 1a-f the runs of the configs configs/*_gu2018.yaml (figure: fig1), never a sweep's; Fig. 1g-h
the rows of a sweep over test sizes (`kernelbench sweep CONFIG --over tags.figure=fig1gh --over
predict.n_test=...`: predict_seconds and counters.n_test; figure fig1 in runs made before the sweep
was tagged apart); Fig. 2 the runs of a sweep over threads
(`kernelbench sweep CONFIG --over tags.figure=fig2 --over algorithm.params.threads=1,2`), one run
per thread count. Curves are means over trials.
"""
from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from kernelbench.figures.base import (
    ALGORITHM_STYLE,
    PEERS,
    is_peer,
    legend_below,
    log_scale,
    panel_title,
    peer_label,
    register_figure,
    with_trials,
)
from kernelbench.results import tagged

ALGORITHMS = ("asydsskl", "asygcd", "dsg", "libsvm", "libsvm-p", *PEERS)
LABELS = {"asydsskl": "AsyDSSKL", "asygcd": "AsyGCD", "dsg": "Double SGD (DSG, logistic)",
          "libsvm": "LIBSVM (sklearn SVC/SVR)", "libsvm-p": "LIBSVM(P) stand-in (oneDAL SVC/SVR)",
          "falkon": "Falkon (Nyström KRR)"}
# dataset -> (panel order, title): the paper's panels first, the sets added here after
PANELS = {"covtype_binary": (1, "(a) Covtype B"), "covtype_subset20k": (1, "(a) Covtype B: 20k SUBSET"),
          "rcv1": (2, "(b) RCV1"), "susy": (3, "(c) SUSY"), "ijcnn1": (4, "ijcnn1 (added)"),
          "a9a": (5, "a9a (added)"), "covtype": (6, "(d) Covtype M"), "mnist": (7, "(e) MNIST"),
          "aloi": (8, "(f) Aloi"), "abalone": (9, "abalone (added)")}


def _test_sizes(rows):
    """counters.n_test of each row: the test size a predict-time row was timed at (NaN elsewhere)."""
    if rows.empty:
        return pd.Series(dtype=float)
    return rows["counters"].map(lambda c: json.loads(c).get("n_test", np.nan) if c else np.nan).astype(float)


def _gu_rows(df, figure):
    rows = tagged(df, paper="gu2018", figure=figure)
    if rows.empty:
        return rows
    rows = rows[(rows["status"] == "ok") & rows["algorithm"].isin(ALGORITHMS)]
    if "fold" in rows:
        rows = rows[rows["fold"].isna()]
    return rows


def _order(names):
    return sorted(names, key=lambda name: (PANELS.get(name, (99, ""))[0], name))


def _dataset_panels(rows):
    """A figure with a panel per dataset of `rows`, the paper's first: the figure, its row of axes,
    and (axes, dataset, its rows) of each panel."""
    datasets = _order(rows["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.4 * len(datasets), 3.6), squeeze=False)
    return fig, axes[0], [(ax, name, rows[rows["dataset"] == name]) for ax, name in zip(axes[0], datasets)]


def _label_panel(ax, name, part, xlabel, ylabel):
    ax.set_title(panel_title("gu2018", name, PANELS.get(name, (0, None))[1], rows=part), fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)


def _curves(df, metric, ylabel, transform):
    rows = _gu_rows(df, "fig1")
    rows = rows[_test_sizes(rows).isna()] if len(rows) else rows      # not the predict-time rows
    if len(rows) and "sweep" in rows:      # a sweep's runs are points of another curve, not trials
        rows = rows[rows["sweep"] == ""]
    rows = rows[rows[metric].notna()] if metric in rows else rows.iloc[0:0]
    if rows.empty:
        return None
    fig, axes, panels = _dataset_panels(rows)
    for ax, name, part in panels:
        for algorithm in ALGORITHMS:
            alg = part[part["algorithm"] == algorithm]
            # one curve per thread count: "iteration" means different work at different counts
            threads = (alg["threads"].astype(object).where(alg["threads"].notna(), "")
                       if "threads" in alg else None)
            for count, run in (alg.groupby(threads.astype(str), sort=True) if threads is not None
                               else [("", alg)]):
                color, marker = ALGORITHM_STYLE[algorithm]
                trials = run["trial"].nunique()
                # mean over trials at each evaluation point (time: mean of the trials' times)
                curve = run.groupby("iteration").agg(t=("train_seconds", "mean"), v=(metric, "mean"))
                shown = peer_label(LABELS[algorithm]) if is_peer(run) else LABELS[algorithm]
                label = with_trials(f"{shown}{f', {int(float(count))} thr' if count != '' else ''}", trials)
                dashed = count != "" and float(count) > 1
                if len(curve) == 1:
                    ax.plot(curve["t"], transform(curve["v"]), color=color, marker=marker, ms=6,
                            ls="none", label=label)
                else:
                    ax.plot(curve["t"], transform(curve["v"]), color=color, marker=marker, ms=3, lw=1.2,
                            ls=":" if is_peer(run) else "--" if dashed else "-", label=label)
        _label_panel(ax, name, part, "training time (s)", ylabel)
    legend_below(fig, axes)
    return fig


@register_figure("gu2018_fig1abc_accuracy_vs_time")
def accuracy_vs_time(df):
    """Fig. 1a–c (+ ijcnn1, a9a): test accuracy (%) vs training time."""
    return _curves(df, "test_error", "test accuracy (%)", lambda e: 100.0 * (1.0 - e))


@register_figure("gu2018_fig1def_mse_vs_time")
def mse_vs_time(df):
    """Fig. 1d–f (+ abalone): test MSE vs training time."""
    return _curves(df, "test_mse", "test MSE", lambda v: v)


@register_figure("gu2018_fig1gh_test_time")
def test_time(df):
    """Fig. 1g–h: testing time vs number of test samples (a sweep over predict.n_test)."""
    rows = pd.concat([_gu_rows(df, "fig1gh"), _gu_rows(df, "fig1")])
    rows = rows.assign(n_test=_test_sizes(rows)) if len(rows) else rows
    rows = rows[rows["n_test"].notna() & rows["predict_seconds"].notna()] if len(rows) else rows
    if rows.empty:
        return None
    fig, _, panels = _dataset_panels(rows)
    for ax, name, part in panels:
        for algorithm in ALGORITHMS:
            alg = part[part["algorithm"] == algorithm].sort_values("n_test")
            if alg.empty:
                continue
            color, marker = ALGORITHM_STYLE[algorithm]
            size = alg["n_features"].dropna().max() if alg["n_features"].notna().any() else \
                alg["n_support_vectors"].max()
            unit = "features" if alg["n_features"].notna().any() else "SVs"
            seconds = alg.groupby("n_test")["predict_seconds"].mean()      # the trials' mean at each size
            ax.plot(seconds.index, seconds.to_numpy(), color=color, marker=marker, ms=3, lw=1.2,
                    label=f"{LABELS[algorithm]} ({int(size)} {unit})")
        _label_panel(ax, name, part, "number of testing samples", "testing time (s)")
        # log axes: the methods' times differ up to 100x, and on a linear axis the slowest one flattens the
        # others into one line; on log axes each method is a line of slope 1, its height its cost per row
        log_scale(ax, "x")
        log_scale(ax, "y")
        # each panel's methods are labelled with their own model size: a legend under each panel
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), frameon=False)
    fig.tight_layout()
    return fig


def time_to_reach(seconds, objectives, target):
    """The first time at which a curve's objective is at or below `target` (nan if never)."""
    for t, value in zip(seconds, objectives):
        if value <= target:
            return float(t)
    return float("nan")


def thread_speedups(rows):
    """{threads k: [T_1 / T_k for each seed]} from the rows of one dataset, one run per thread
    count: T_k is when the k-thread curve first reaches the final objective of the 1-thread run
    of the same seed (Gu et al. Fig. 2b/d)."""
    counts = sorted(int(k) for k in rows["threads"].unique())
    speedups = {k: [] for k in counts}
    for seed in sorted(rows["seed"].unique()):
        mine = rows[rows["seed"] == seed]
        one = mine[mine["threads"] == 1].sort_values("iteration")
        target, t1 = one["objective"].iloc[-1], one["train_seconds"].iloc[-1]
        for k in counts:
            curve = mine[mine["threads"] == k].sort_values("iteration")
            speedups[k].append(t1 / time_to_reach(curve["train_seconds"], curve["objective"], target))
    return speedups


@register_figure("gu2018_fig2_speedup")
def speedup(df):
    """Fig. 2: objective vs time per thread count (the first seed), and speedup T_1 / T_k to reach
    the 1-thread final objective of the same seed: median over the seeds, bars from min to max
    (the latest run at each thread count of a sweep over algorithm.params.threads)."""
    rows = _gu_rows(df, "fig2")
    rows = rows[rows["objective"].notna()] if len(rows) else rows
    if rows.empty:
        return None
    datasets = _order(rows["dataset"].unique())
    fig, axes = plt.subplots(2, len(datasets), figsize=(4.4 * len(datasets), 7.0), squeeze=False)
    for col, name in enumerate(datasets):
        part = rows[rows["dataset"] == name]
        latest = part.groupby("threads")["run_id"].transform("max")   # a run id: its name, then its UTC start
        part = part[part["run_id"] == latest]
        speedups = thread_speedups(part)
        counts, seeds = sorted(speedups), sorted(part["seed"].unique())
        ax = axes[0][col]
        first = part[part["seed"] == seeds[0]]
        for k in counts:
            curve = first[first["threads"] == k].sort_values("iteration")
            ax.plot(curve["train_seconds"], curve["objective"], marker="o", ms=2, lw=1.2,
                    label=f"{k} thread{'s' if k > 1 else ''}")
        log_scale(ax, "y")
        ax.set_title(panel_title("gu2018", name, PANELS.get(name, (0, None))[1], rows=part) + ": objective vs time",
                     fontsize=10)
        ax.set_xlabel("training time (s)")
        ax.set_ylabel("objective P(w)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        ax = axes[1][col]
        ax.plot(counts, counts, color="0.6", ls="--", lw=1, label="linear")
        median = np.array([np.nanmedian(speedups[k]) for k in counts])
        spread = np.array([[median[i] - np.nanmin(speedups[k]), np.nanmax(speedups[k]) - median[i]]
                           for i, k in enumerate(counts)]).T
        ax.errorbar(counts, median, yerr=spread, color="C3", marker="o", capsize=3,
                    label=f"AsyDSSKL (median, min-max of {len(seeds)} seed{'s' if len(seeds) > 1 else ''})")
        ax.set_xlabel("threads")
        ax.set_ylabel("speedup (time to the 1-thread final objective)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
