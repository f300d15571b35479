"""Dai et al. 2014, Fig. 1 (1)–(3): test error vs number of training samples seen, one panel per
dataset, one line per algorithm (mean over trials); plus training objective vs training time."""
from __future__ import annotations

import matplotlib.pyplot as plt

from kernelbench.figures import register_figure

# The algorithms Dai et al. and Li & Póczos plot (those registered so far draw; others join later)
DSG_FAMILY = ("dsg", "udsg", "cdsg", "libsvm", "norma", "k-sdca", "r-pegasos", "n-pegasos", "svrg-rf")


def _panels(df, x, y, xlabel, ylabel, logx=True):
    ok = df[(df["status"] == "ok") & df[y].notna() & df["algorithm"].isin(DSG_FAMILY)]
    if "fold" in ok:
        ok = ok[ok["fold"].isna()]                       # curves on the test split, not CV folds
    if ok.empty:
        return None
    datasets = sorted(ok["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 3.4), squeeze=False)
    for ax, name in zip(axes[0], datasets):
        part = ok[ok["dataset"] == name]
        for algorithm, rows in part.groupby("algorithm"):
            curve = rows.groupby(x)[y].mean()
            curve = curve[curve.index > 0] if logx else curve
            ax.plot(curve.index, curve.values, marker="o", ms=3, label=algorithm)
        ax.set_title(name)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logx:
            ax.set_xscale("log")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@register_figure("dai2014_fig1_test_error_vs_samples")
def test_error_vs_samples(df):
    return _panels(df, "samples_seen", "test_error", "training samples seen", "test error")


@register_figure("objective_vs_time")
def objective_vs_time(df):
    return _panels(df, "train_seconds", "objective", "training time (s)", "training objective")
