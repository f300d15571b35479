"""Glasmachers & Qaadan, Fig. 3: breakdown of the merging time (section A: computing h, or WD for
Lookup-WD; section B: the rest of budget maintenance) per merge method, one panel per dataset and
budget, mean over trials. Reads only the `counters` column of the final rows of the BSGD runs
tagged {paper: glasmachers2019, figure: table2} (configs/<dataset>_bsgd.yaml: the runs whose
timings Tables 2-3 report), never re-runs anything."""
from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from kernelbench.figures.base import register_figure
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
    data = final_bsgd_rows(df)
    if data.empty:
        return None
    data = data[data["merge"].isin(METHOD_ORDER)]
    if data.empty:
        return None
    panels = sorted({(d, int(b)) for d, b in zip(data["dataset"], data["budget"])})
    fig, axes = plt.subplots(1, len(panels), figsize=(3.2 * len(panels), 3.2), squeeze=False)
    for ax, (name, budget) in zip(axes[0], panels):
        part = data[(data["dataset"] == name) & (data["budget"] == budget)]
        means = part.groupby("merge")[["merge_seconds_a", "merge_seconds_b"]].mean()
        methods = [m for m in METHOD_ORDER if m in means.index]
        x = np.arange(len(methods))
        a = means.loc[methods, "merge_seconds_a"].to_numpy()
        b = means.loc[methods, "merge_seconds_b"].to_numpy()
        ax.bar(x, a, label="section A (h or WD)", color="tab:orange")
        ax.bar(x, b, bottom=a, label="section B (rest)", color="tab:blue")
        ax.set_xticks(x, [LABELS[m] for m in methods], rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{name}, B = {budget}", fontsize=9)
        ax.set_ylabel("merging time (s)")
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig
