"""Glasmachers & Qaadan, Fig. 3: breakdown of the merging time (section A: computing h, or WD for
Lookup-WD; section B: the rest of budget maintenance) per merge method, one panel per dataset and
budget, mean over trials; and Table 2 drawn: test accuracy per merge method, ours (mean ± std over
trials) beside the paper's. Both read only the final rows of the BSGD runs tagged
{paper: glasmachers2019, figure: table2} (configs/<dataset>_bsgd.yaml: the runs whose timings
Tables 2-3 report), never re-run anything."""
from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from kernelbench.figures.base import published_values, register_figure
from kernelbench.results import final_rows, tagged

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
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.2), squeeze=False)
    for ax, (name, budget, part) in zip(axes[0], panels):
        means = part.groupby("merge")[["merge_seconds_a", "merge_seconds_b"]].mean()
        methods = [m for m in METHOD_ORDER if m in means.index]
        x = np.arange(len(methods))
        a = means.loc[methods, "merge_seconds_a"].to_numpy()
        b = means.loc[methods, "merge_seconds_b"].to_numpy()
        ax.bar(x, a, label="section A (h or WD)", color="tab:orange")
        ax.bar(x, b, bottom=a, label="section B (rest)", color="tab:blue")
        _label_panel(ax, methods, f"{name}, B = {budget}", "merging time (s)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
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
    fig, axes = plt.subplots(1, len(panels), figsize=(2.6 * len(panels), 3.2), squeeze=False)
    for ax, (name, budget, part) in zip(axes[0], panels):
        accuracy = 100 * (1 - part["test_error"].astype(float))
        ours = accuracy.groupby(part["merge"]).agg(["mean", "std", "count"])
        paper = {e.params.get("merge"): e for e in published_values("glasmachers2019", name, "test_accuracy",
                                                                     figure="table2")
                 if e.params.get("budget") == budget}
        methods = [m for m in METHOD_ORDER if m in ours.index]
        x = np.arange(len(methods))
        ax.errorbar(x - 0.1, ours.loc[methods, "mean"], yerr=ours.loc[methods, "std"].fillna(0), fmt="o",
                    color="C3", ms=4, capsize=2, label=f"ours ({int(ours['count'].max())} trials)")
        shown = [(i, paper[m]) for i, m in enumerate(methods) if m in paper]
        if shown:
            ax.errorbar([i + 0.1 for i, _ in shown], [e.value for _, e in shown],
                        yerr=[e.std or 0 for _, e in shown], fmt="o", mfc="none", color="k", ms=4, capsize=2,
                        label="paper (Table 2)")
        _label_panel(ax, methods, f"{name}, B = {budget}", "test accuracy (%)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig
