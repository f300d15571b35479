"""Dai et al. 2014, Fig. 1 (1)–(3): test error vs number of training samples seen, one panel per
dataset, one line per algorithm (DSG and every baseline present in the results; mean over
trials); plus training objective vs training time.

Panels come in the paper's order — (1) Adult, (2) MNIST 8 vs 6, (3) Forest — and are titled
with what was actually run: the 20k covtype subset and the digits 8-vs-6 miniature say so. The
paper's final errors (kernelbench/papers/dai2014.yaml) are drawn as dashed levels, labelled with
the set the paper ran.
Fig. 1 draws the runs tagged {paper: dai2014, figure: fig1} only (configs/*_dai2014.yaml), so other
experiments on the same data (other losses, grids, other papers) do not mix in; objective_vs_time
draws every run of the DSG family.
"""
from __future__ import annotations

import matplotlib.pyplot as plt

from kernelbench.figures.base import (
    ALGORITHM_STYLE,
    PEERS,
    configurations,
    draw_published,
    is_peer,
    legend_below,
    log_scale,
    panel_title,
    peer_label,
    published_values,
    register_figure,
    with_trials,
)
from kernelbench.results import tagged

# The algorithms Dai et al. and Li & Póczos plot (those present in the results draw)
DSG_FAMILY = ("dsg", "udsg", "cdsg", "libsvm", "norma", "k-sdca", "r-pegasos", "n-pegasos", "r-sdca",
              "n-sdca", "svrg-rf", *PEERS)
# dataset -> (panel order, title): what Dai et al. call it, and what we ran
PANELS = {
    "a9a": (1, "(1) Adult (a9a)"),
    "mnist8m": (2, "(2) MNIST8M 8 vs 6"),
    "digits86": (2, "(2) MNIST 8 vs 6 in miniature:\nsklearn digits86, not mnist8m"),
    "covtype_binary": (3, "(3) Forest (covtype)"),
    "covtype_subset20k": (3, "(3) Forest: 20k SUBSET of covtype"),
}
# the paper's numbers drawn on a panel of a stand-in set: the set the paper ran (digits86 is not matched)
PAPER_SET = {"covtype_subset20k": "covtype_binary"}


def _ok_rows(df, y):
    # a peer's objective is another function (Falkon: squared loss): not on the objective axes
    family = DSG_FAMILY if y != "objective" else tuple(a for a in DSG_FAMILY if a not in PEERS)
    ok = df[(df["status"] == "ok") & df[y].notna() & df["algorithm"].isin(family)]
    if "fold" in ok:
        ok = ok[ok["fold"].isna()]                       # curves on the test split, not CV folds
    return ok


def _order(datasets):
    return sorted(datasets, key=lambda name: (PANELS.get(name, (9, ""))[0], name))


def _draw(ax, part, x, y, logx):
    for algorithm, of_algorithm in sorted(part.groupby("algorithm"), key=lambda item: DSG_FAMILY.index(item[0])):
        color, marker = ALGORITHM_STYLE.get(algorithm, (None, "o"))
        for setting, rows in configurations(of_algorithm):
            # trials of one run, plus runs of the same config with other --seed values
            trials = len(rows[["run_id", "trial"]].drop_duplicates()) if {"run_id", "trial"} <= set(rows) else 1
            curve = rows.groupby(x)[y].mean()
            curve = curve[curve.index > 0] if logx else curve
            if curve.empty:
                continue
            if algorithm == "libsvm" and len(curve) == 1:   # one solve: a reference level, as in the paper
                ax.axhline(curve.iloc[0], color=color, ls="--", lw=1,
                           label=f"libsvm{setting} (exact, {curve.iloc[0]:.3f})")
                continue
            peer = is_peer(rows)
            ax.plot(curve.index, curve.values, color=color, marker=marker, ms=3, lw=1.2, ls=":" if peer else "-",
                    label=with_trials(f"{peer_label(algorithm) if peer else algorithm}{setting}", trials))


def _skipped_note(ax, df, name):
    if "status" not in df:
        return
    skipped = sorted(df[(df["dataset"] == name) & (df["status"] == "skipped")]["algorithm"].unique())
    if skipped:
        ax.text(0.02, 0.02, "skipped (too large): " + ", ".join(skipped), transform=ax.transAxes,
                fontsize=7, color="0.4")


def _panels(df, x, y, xlabel, ylabel, logx=True, dai_only=False):
    runs = tagged(df, paper="dai2014", figure="fig1") if dai_only else df
    ok = _ok_rows(runs, y) if not runs.empty else runs
    if ok.empty:
        return None
    datasets = _order(ok["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.4 * len(datasets), 3.6), squeeze=False)
    for ax, name in zip(axes[0], datasets):
        _draw(ax, ok[ok["dataset"] == name], x, y, logx)
        ax.set_title(panel_title("dai2014", name, PANELS.get(name, (0, None))[1] if dai_only else None,
                                 rows=ok[ok["dataset"] == name]), fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if logx:
            log_scale(ax, "x")
        ax.grid(alpha=0.3)
        if dai_only:
            _skipped_note(ax, runs, name)
            if y == "test_error":
                paper_set = PAPER_SET.get(name, name)
                draw_published(ax, published_values("dai2014", paper_set, "test_error", figure="fig1"),
                               label="paper" if paper_set == name else f"paper ({paper_set})")
    legend_below(fig, axes[0])
    return fig


@register_figure("dai2014_fig1_test_error_vs_samples")
def test_error_vs_samples(df):
    """Dai et al. Fig. 1 (1)–(3)."""
    return _panels(df, "samples_seen", "test_error", "number of training samples seen", "test error (fraction)",
                   dai_only=True)


@register_figure("objective_vs_time")
def objective_vs_time(df):
    return _panels(df, "train_seconds", "objective", "training time (s)", "training objective")
