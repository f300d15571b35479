"""Glasmachers & Qaadan (BSGD), the paper's figures.

Fig. 2 (`merge_surfaces`): the graphs of (a) h(m, κ), the optimal merge coefficient, and
(b) the weight degradation WD(m, κ) on a log value axis, over (m, κ) ∈ [0, 1]² (§3).

h(m, κ) = argmax_h s(h), s(h) = m κ^{(1−h)²} + (1 − m) κ^{h²} (Alg. 1 line 8), and
WD = (α_i + α_j)² · (m² + (1 − m)² + 2m(1 − m)κ − s(h)²) (§3, proof of Lemma 1). WD depends on
(m, κ) only through the bracket; the total weight α_i + α_j merely scales it, so, like the paper's
graph of WD as a function of (m, κ), we plot it at unit total weight α_i + α_j = 1, which is exactly
the normalised table W that BSGD's Lookup-WD interpolates.

The figure needs no results: it is drawn from the merging lookup tables
(kernelbench.solvers.merging.lookup_tables, the paper's 400 × 400 grid, golden section search to
ε = 1e-10), read at every `step`-th grid node through kernelbench.solvers.merging.merge_lookup, the
solver's own lookup, so m > 1/2 uses the same symmetries h(m) = 1 − h(1 − m), WD(m) = WD(1 − m) as the
solver. The nodes are taken symmetric about m = 1/2 so both halves of the surface match. Two
conventions of the tables show on edges where the maximiser is not unique: at m = 1/2, κ ≤ e^{-2}
(the set Z of Lemma 1, two modes) h is the lower branch; at κ = 1 every h is optimal (s ≡ 1) and
we draw the limit κ → 1, h = m (the maximiser of the second-order expansion of s), not the search's
tie-breaking h ≈ 0. WD = 0 on the edges m = 0, m = 1 and κ = 1, so panel (b) draws log10 of
max(WD, WD_FLOOR) with ticks labelled as powers of ten (mplot3d has no true log axis).

Being data-free, it is registered with `needs_results=False`: kernelbench.figures.render_all draws it
whenever its name is selected by the prefix, even when the results folder holds no rows.

Fig. 3: breakdown of the merging time (section A: computing h, or WD for
Lookup-WD; section B: the rest of budget maintenance) per merge method, one panel per dataset and
budget, mean over trials; and Table 2 drawn: test accuracy per merge method, ours (mean ± std over
trials) beside the paper's. Both read only the final rows of the BSGD runs tagged
{paper: glasmachers2019, figure: table2} (configs/<dataset>_bsgd.yaml: the runs whose timings
Tables 2-3 report), never re-run anything.
"""
from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, MultipleLocator

from kernelbench.figures.base import legend_below, panel_grid, panel_title, published_values, register_figure
from kernelbench.results import final_rows, tagged
from kernelbench.solvers.merging import lookup_tables, merge_lookup

GRID_SIZE = 400      # the paper's lookup grid (§3)
DRAW_STEP = 8        # draw every 8th node: a 50 × 50 surface
WD_FLOOR = 1e-8      # below the smallest positive WD drawn (~3e-7); the WD = 0 edges sit here


def merge_surfaces(grid_size: int = GRID_SIZE, step: int = DRAW_STEP):
    """(m, κ, h, WD): the drawn nodes m_i = κ_i = i/(grid_size − 1) (every `step`-th, symmetric
    about 1/2, endpoints included) and h[a, b] = h(m_a, κ_b), WD[a, b] = WD(m_a, κ_b) at unit
    total weight, read from the lookup tables (module docstring: conventions at m = 1/2, κ = 1)."""
    if step < 1:
        raise ValueError(f"step must be >= 1, got {step}")
    H, W = lookup_tables(grid_size)
    lower = np.arange(0, (grid_size + 1) // 2, step)             # nodes with m ≤ 1/2 ...
    nodes = np.union1d(lower, grid_size - 1 - lower)             # ... and their mirrors 1 − m
    grid = nodes / (grid_size - 1)
    h = np.empty((grid.size, grid.size))
    wd = np.empty_like(h)
    for a, m in enumerate(grid):
        for b, kappa in enumerate(grid):
            h[a, b], wd[a, b] = merge_lookup(H, W, m, kappa)
    h[:, grid == 1.0] = grid[:, None]           # κ = 1: s ≡ 1, draw the limit κ → 1 (h = m)
    return grid, grid.copy(), h, wd


@register_figure("glasmachers2019_fig2_merge_surfaces", needs_results=False)
def merge_surfaces_figure(_results=None):
    m, kappa, h, wd = merge_surfaces()
    M, K = np.meshgrid(m, kappa, indexing="ij")
    log_wd = np.log10(np.maximum(wd, WD_FLOOR))
    fig = plt.figure(figsize=(11, 4.8))
    panels = (("(a) h(m, κ)", h, "h(m, κ)"), ("(b) WD(m, κ), log scale", log_wd, "WD(m, κ)"))
    for number, (title, values, zlabel) in enumerate(panels, start=1):
        ax = fig.add_subplot(1, 2, number, projection="3d")
        ax.plot_surface(M, K, values, cmap="viridis", rstride=1, cstride=1, linewidth=0.1,
                        edgecolor="k", antialiased=True)
        ax.set_xlabel("m")
        ax.set_ylabel("κ")
        ax.set_zlabel(zlabel)
        ax.set_title(title, fontsize=10)
        ax.view_init(elev=25, azim=-130)
    ax.zaxis.set_major_locator(MultipleLocator(2))
    ax.zaxis.set_major_formatter(FuncFormatter(lambda z, _: f"$10^{{{round(z)}}}$"))
    fig.tight_layout()
    return fig


METHOD_ORDER = ("gss-precise", "gss", "lookup-h", "lookup-wd")
LABELS = {"gss-precise": "GSS-precise", "gss": "GSS", "lookup-h": "Lookup-h", "lookup-wd": "Lookup-WD"}


def final_bsgd_rows(df):
    """One row per finished BSGD cell of those runs (its final row), with merge, budget and the
    counters unpacked; diagnostic runs (their timings are not comparable) are left out."""
    rows = final_rows(tagged(df, paper="glasmachers2019", figure="table2"), statuses=("ok",))
    if rows.empty:
        return pd.DataFrame()
    last = rows[(rows["algorithm"] == "bsgd") & (rows["counters"].astype(str) != "")].copy()
    if last.empty:
        return pd.DataFrame()
    params = last["params"].map(json.loads)
    last["merge"] = params.map(lambda p: p.get("merge"))
    last["budget"] = params.map(lambda p: p.get("budget"))
    last["diagnose"] = params.map(lambda p: bool(p.get("diagnose")))
    counters = last["counters"].map(json.loads)
    for name in ("merge_seconds_a", "merge_seconds_b", "merge_frequency"):
        last[name] = counters.map(lambda c, n=name: c.get(n, np.nan))
    return last[~last["diagnose"]]


@register_figure("glasmachers2019_fig3_merge_time_breakdown")
def merge_time_breakdown(df):
    data = _drawn_rows(df)
    if data.empty:
        return None
    panels = _panels(data)
    fig, axes = panel_grid(len(panels), 3.2, 3.2)
    for ax, (name, budget, part) in zip(axes, panels):
        means = part.groupby("merge")[["merge_seconds_a", "merge_seconds_b"]].mean()
        methods = [m for m in METHOD_ORDER if m in means.index]
        x = np.arange(len(methods))
        a = means.loc[methods, "merge_seconds_a"].to_numpy()
        b = means.loc[methods, "merge_seconds_b"].to_numpy()
        ax.bar(x, a, label="section A (h or WD)", color="tab:orange")
        ax.bar(x, b, bottom=a, label="section B (rest)", color="tab:blue")
        _label_panel(ax, methods, panel_title("glasmachers2019", name, f"{name}, B = {budget}", rows=part),
                     "merging time (s)")
    fig.suptitle("Glasmachers & Qaadan, Fig. 3: merging time per run, by section of the merge", fontsize=10)
    legend_below(fig, axes)
    return fig


def _drawn_rows(df, *measured):
    """final_bsgd_rows of the drawn merge methods, with every column of `measured` present and set."""
    data = final_bsgd_rows(df)
    if data.empty or any(column not in data for column in measured):
        return pd.DataFrame()
    keep = data["merge"].isin(METHOD_ORDER)
    for column in measured:
        keep &= data[column].notna()
    return data[keep]


def _panels(data) -> list:
    """(dataset, budget, its rows) of each panel, in order: one panel per dataset and budget."""
    return [(name, budget, data[(data["dataset"] == name) & (data["budget"] == budget)])
            for name, budget in sorted({(d, int(b)) for d, b in zip(data["dataset"], data["budget"])})]


def _label_panel(ax, methods, title, ylabel):
    ax.set_xticks(np.arange(len(methods)), [LABELS[m] for m in methods], rotation=30, ha="right", fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)


@register_figure("glasmachers2019_table2_accuracy")
def table2_accuracy(df):
    """Table 2 as a figure: one panel per dataset and budget, the merge methods along x; ours as
    filled markers with the trials' std, the paper's value (± its std) as hollow ones beside."""
    data = _drawn_rows(df, "test_error")
    if data.empty:
        return None
    panels = _panels(data)
    fig, axes = panel_grid(len(panels), 2.8, 3.2)
    for ax, (name, budget, part) in zip(axes, panels):
        accuracy = 100 * (1 - part["test_error"].astype(float))
        ours = accuracy.groupby(part["merge"]).agg(["mean", "std", "count"])
        paper = {e.params.get("merge"): e for e in published_values("glasmachers2019", name, "test_accuracy",
                                                                     figure="table2")
                 if e.params.get("budget") == budget}
        methods = [m for m in METHOD_ORDER if m in ours.index]
        x = np.arange(len(methods))
        ax.errorbar(x - 0.1, ours.loc[methods, "mean"], yerr=ours.loc[methods, "std"].fillna(0), fmt="o",
                    color="C3", ms=4, capsize=2, label="ours (mean ± std over trials)")
        shown = [(i, paper[m]) for i, m in enumerate(methods) if m in paper]
        if shown:
            ax.errorbar([i + 0.1 for i, _ in shown], [e.value for _, e in shown],
                        yerr=[e.std or 0 for _, e in shown], fmt="o", mfc="none", color="k", ms=4, capsize=2,
                        label="paper (Table 2)")
        _label_panel(ax, methods, panel_title("glasmachers2019", name, f"{name}, B = {budget}", rows=part),
                     "test accuracy (%)")
    fig.suptitle("Glasmachers & Qaadan, Table 2: test accuracy by merge method (mean ± std over trials)",
                 fontsize=10)
    legend_below(fig, axes)
    return fig
