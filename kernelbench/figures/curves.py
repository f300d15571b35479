"""The curves of any runs, paper or not (`kernelbench compare`): one panel per (x, y) pair, one line
per method -- a method being an algorithm with its parameters -- each point the mean over the
method's trials and runs at one evaluation (its iteration). Not a registered figure: the caller
chooses the rows, which need a `method` column (the line's label)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from kernelbench.figures.base import ALGORITHM_STYLE, legend_below, log_scale, with_trials

AXIS_LABELS = {"train_seconds": "training time (s)", "samples_seen": "samples seen", "objective": "objective",
               "test_error": "test error", "train_error": "training error", "test_mse": "test MSE",
               "train_mse": "training MSE", "test_mae": "test MAE", "train_mae": "training MAE"}


def mean_curve(rows, x: str, y: str):
    """(x, y) of one method's rows: both averaged over trials and runs at each iteration (the
    trials' clocks differ, their evaluation points do not), points without both left out."""
    points = rows[["iteration", x, y]].astype({x: float, y: float}).dropna()
    return points.groupby("iteration")[[x, y]].mean().sort_values(x)


def _wide(values) -> bool:
    """Whether values are all positive and span more than a decade: a log axis shows them better
    (an error that reaches 0 keeps a linear axis, where its zeros show)."""
    values = values.dropna()
    return len(values) > 1 and values.min() > 0 and values.max() > 10 * values.min()


def method_curves(rows, panels, *, title: str = ""):
    """A figure with one panel per (x, y) in `panels` that some method has two points of, one line
    per method (`rows`' `method` column, in sorted order, labelled with its count of trials; a
    method with one point, e.g. an exact solver's single evaluation, as one marker); None when no
    panel has a line."""
    methods = sorted(rows["method"].unique())
    curves = [{m: mean_curve(rows[rows["method"] == m], x, y) for m in methods} for x, y in panels]
    drawn = [(xy, c) for xy, c in zip(panels, curves) if any(len(curve) > 1 for curve in c.values())]
    if not drawn:
        return None
    algorithm = dict(zip(rows["method"], rows["algorithm"]))
    trials = rows[["method", "run_id", "trial"]].drop_duplicates().groupby("method").size()
    # an algorithm's own colour when it is one method; several settings of one algorithm need one each
    own_colours = len(set(algorithm.values())) == len(methods)
    fig, axes = plt.subplots(1, len(drawn), figsize=(5.2 * len(drawn), 3.9), squeeze=False)
    for ax, ((x, y), by_method) in zip(axes[0], drawn):
        for i, method in enumerate(methods):
            curve = by_method[method]
            if curve.empty:
                continue
            colour, marker = ALGORITHM_STYLE.get(algorithm[method], (f"C{i % 10}", "o"))
            if not own_colours:
                colour = f"C{i % 10}"
            lone = len(curve) == 1
            ax.plot(curve[x], curve[y], color=colour, marker=marker, ms=7 if lone else 3, lw=1.3,
                    ls="none" if lone else "-",
                    label=with_trials(method, trials[method]))
        values = [c for c in by_method.values() if not c.empty]
        if _wide(pd.concat([c[x] for c in values])):
            log_scale(ax, "x")
        if _wide(pd.concat([c[y] for c in values])):
            log_scale(ax, "y")
        ax.set_xlabel(AXIS_LABELS.get(x, x))
        ax.set_ylabel(AXIS_LABELS.get(y, y))
        ax.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title)
    legend_below(fig, axes[0], columns=3)
    return fig

