"""The search of a `kernelbench tune` run (experiment/tuning.py): validation error against training
budget, a line per setting; settings stopped early end on the left, the survivors of successive
halving go on to the full budget. Drawn into the run folder as search.png; not a paper figure."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def search_figure(df, metric: str = "test_error"):
    """A matplotlib Figure from a tune run's results (rows with a budget), or None without any."""
    rows = df[df["budget"].notna() & (df["final"] == 1)] if "budget" in df else df.iloc[:0]
    if rows.empty:
        return None
    ok = rows[rows["status"] == "ok"]
    scores = ok.groupby(["trial", "budget"])[metric].mean().reset_index()
    fig, ax = plt.subplots(figsize=(6, 4))
    best = scores.loc[scores["budget"] == scores["budget"].max()].sort_values(metric).head(1)
    for trial, points in scores.groupby("trial"):
        points = points.sort_values("budget")
        chosen = not best.empty and trial == best["trial"].iloc[0]
        ax.plot(points["budget"], points[metric], marker="o", markersize=3,
                color="C3" if chosen else "0.55", alpha=1.0 if chosen else 0.5,
                linewidth=2 if chosen else 1, label="chosen" if chosen else None, zorder=3 if chosen else 1)
    ax.set_xscale("log")
    budgets = np.sort(scores["budget"].unique())
    ax.set_xticks(budgets, [f"{b:g}" for b in budgets])
    ax.set_xlabel("budget (the config's stop unit: passes, iterations or seconds)")
    ax.set_ylabel(f"validation {metric[5:].replace('_', ' ')}")
    ax.set_title(f"{rows['experiment'].iloc[0]}: {scores['trial'].nunique()} settings")
    if not best.empty:
        ax.legend()
    return fig
