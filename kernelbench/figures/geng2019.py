"""Geng et al. (IJCAI 2019): Fig. 2 — running time vs training size per dataset and S3VM solver,
with the slope of log(time) on log(size) printed per line (1 = linear); Fig. 3 — boxplot of the
test error per dataset and method. Read from results CSVs only, never re-run.

Which rows: the final row of every finished cell of the runs tagged {paper: geng2019}: the
semi-supervised algorithms (tsgs3vm, frs3vm and, when present, bgs3vm, tsvm-ls = S3VMlight-style,
tsvm-cccp = BLS3VM) and the supervised comparison (dsg or libsvm with dataset.labeled_only: the
same algorithm trained on the 200 labeled rows alone). A TSGS3VM run of more than one pass
(stop.passes in its resolved config) is its own method. Fig. 3 draws the runs tagged figure: fig3
(configs/<dataset>_<method>.yaml), held-out runs and `protocol: paper` runs (each trial the mean
of its folds) in two figures, never one box; Fig. 2 those tagged figure: fig2 (a sweep over training
sizes, kernelbench/papers/geng2019.yaml `sweeps:`: `kernelbench sweep configs/<dataset>_<method>.yaml
--over tags.figure=fig2 --over dataset.subsample=1000,2000,...`), at the training size each run used
(run.json's dataset.n_train: labeled + unlabeled rows).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import NullFormatter

from kernelbench.figures.base import panel_grid, panel_title, register_figure
from kernelbench.results import config_values, final_rows, tagged

SIZE_SWEEPS = ("fig2", "fig2mem")      # the sweeps over training sizes: time (Fig. 2) and memory (§6.2)
METHODS = ("tsvm-cccp", "tsvm-ls", "bgs3vm", "frs3vm", "tsgs3vm", "tsgs3vm-passes", "dsg-labeled",
           "libsvm-labeled")
SEMI_SUPERVISED = METHODS[:5]
LABELS = {"tsvm-cccp": "BLS3VM (CCCP)", "tsvm-ls": "S3VMlight (TSVM)", "bgs3vm": "BGS3VM",
          "frs3vm": "FRS3VM", "tsgs3vm": "TSGS3VM", "tsgs3vm-passes": "TSGS3VM, {passes} passes",
          "dsg-labeled": "DSG, 200 labeled only",
          "libsvm-labeled": "SVC, 200 labeled only"}
COLORS = {"tsvm-cccp": "tab:purple", "tsvm-ls": "tab:brown", "bgs3vm": "tab:green",
          "frs3vm": "tab:orange", "tsgs3vm": "tab:red", "tsgs3vm-passes": "tab:pink", "dsg-labeled": "tab:blue",
          "libsvm-labeled": "tab:gray"}


def geng_rows(df):
    """One row per finished cell of the Geng et al. runs, with `method`, `passes` (stop.passes) and
    `train_size` (the rows trained on; Fig. 2 runs only, NaN otherwise)."""
    rows = final_rows(tagged(df, paper="geng2019"))
    if rows.empty:
        return pd.DataFrame()
    rows = rows.copy()
    algorithm = rows["algorithm"].astype(str)
    rows["passes"] = config_values(rows, "stop.passes")
    labeled_only = config_values(rows, "dataset.labeled_only").map(lambda v: v is True)
    method = algorithm.where(algorithm.isin(SEMI_SUPERVISED))
    method = method.mask((algorithm == "tsgs3vm") & rows["passes"].map(lambda p: p is not None and p > 1),
                         "tsgs3vm-passes")
    for supervised in ("dsg", "libsvm"):
        method = method.mask((algorithm == supervised) & labeled_only, f"{supervised}-labeled")
    rows["method"] = method
    rows = rows[rows["method"].notna()]
    n_train = rows["n_train"].astype(float) if "n_train" in rows else np.nan
    rows["train_size"] = np.where(rows["figure"].isin(SIZE_SWEEPS), n_train, np.nan)
    return rows


def _label(method: str, rows) -> str:
    passes = sorted({f"{p:g}" for p in rows.loc[rows["method"] == method, "passes"] if p is not None})
    return LABELS[method].format(passes=" / ".join(passes))


def loglog_slope(sizes, seconds) -> float:
    """Least-squares slope of log(seconds) on log(size): 1 = linear growth, 2 = quadratic."""
    sizes, seconds = np.asarray(sizes, float), np.asarray(seconds, float)
    keep = (sizes > 0) & (seconds > 0)
    if np.unique(sizes[keep]).size < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes[keep]), np.log(seconds[keep]), 1)[0])


@register_figure("geng2019_fig2_time_vs_training_size")
def time_vs_size(df):
    return _against_size(df, "fig2", "train_seconds", "training time (s)",
                         "Geng et al. 2019, Fig. 2: running time vs training size (log-log; slope 1 = linear)")


@register_figure("geng2019_fig2mem_memory_vs_training_size")
def memory_vs_size(df):
    return _against_size(df, "fig2mem", "train_memory_mb", "memory training holds (MB)",
                         "Geng et al. 2019, §6.2: training memory vs training size (log-log; slope 2 = a kernel matrix)")


def _against_size(df, figure: str, column: str, ylabel: str, title: str):
    """One panel per set: `column`'s mean per training size of each method of the `figure` sweep."""
    rows = geng_rows(df)
    if rows.empty:
        return None
    rows = rows[(rows["figure"] == figure) & rows["train_size"].notna() & (rows["status"] == "ok")]
    if rows.empty or column not in rows:
        return None
    datasets = sorted(rows["dataset"].unique())
    fig, axes = panel_grid(len(datasets), 3.6, 4.2)
    for ax, name in zip(axes, datasets):
        part = rows[rows["dataset"] == name]
        for method in METHODS:
            m = part[part["method"] == method]
            if m.empty:
                continue
            mean = m.groupby("train_size")[column].mean()
            slope = loglog_slope(m["train_size"], m[column])
            ax.loglog(mean.index, mean.values, "o-", color=COLORS[method],
                      label=f"{_label(method, part)} (slope {slope:.2f})")
        ax.set_title(panel_title("geng2019", name, rows=part), fontsize=9)
        ax.xaxis.set_minor_formatter(NullFormatter())     # log axes: label the decades only
        ax.set_xlabel("training size (labeled + unlabeled rows)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
        # each panel's methods carry their own slope: a legend under each panel, off its data
        ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.3), frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


@register_figure("geng2019_fig3_test_error_boxplot")
def test_error_boxplot(df, protocol: str = "held-out"):
    rows = geng_rows(df)
    if rows.empty or "test_error" not in rows.columns:
        return None
    rows = rows[(rows["figure"] == "fig3") & (rows["status"] == "ok") & rows["test_error"].notna()]
    paper = (config_values(rows, "protocol") == "paper").astype(bool)
    rows = rows[paper] if protocol == "paper" else rows[~paper]
    if protocol == "paper" and len(rows):       # a trial's test error: the mean over its folds (§6.1)
        rows = rows.groupby(["run_id", "params", "trial"], as_index=False).agg(
            {"test_error": "mean", "dataset": "first", "method": "first", "passes": "first"})
    if rows.empty:
        return None
    datasets = sorted(rows["dataset"].unique())
    methods = [m for m in METHODS if (rows["method"] == m).any()]
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(datasets) * len(methods) / 2), 3.6))
    width = 0.8 / len(methods)
    for j, method in enumerate(methods):
        data, pos = [], []
        for i, name in enumerate(datasets):
            values = rows[(rows["dataset"] == name) & (rows["method"] == method)]["test_error"]
            if len(values):
                data.append(100 * values.to_numpy())
                pos.append(i - 0.4 + width * (j + 0.5))
        if not data:
            continue
        box = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True, manage_ticks=False)
        for patch in box["boxes"]:
            patch.set_facecolor(COLORS[method])
            patch.set_alpha(0.6)
        ax.plot([], [], "s", color=COLORS[method], label=_label(method, rows))
    named = [name if panel_title("geng2019", name, rows=rows[rows["dataset"] == name]) == name else f"{name}\n(stand-in data)"
             for name in datasets]
    ax.set_xticks(range(len(datasets)), named, fontsize=8)
    ax.set_ylabel("test error (%)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=min(len(methods), 4), loc="upper center", bbox_to_anchor=(0.5, -0.15), frameon=False)
    where = ("the paper's fold scheme (mean of each trial's folds)" if protocol == "paper"
             else "held-out test part")
    ax.set_title(f"Geng et al. 2019, Fig. 3: test error, 200 labeled points, trials per method; {where}",
                 fontsize=9)
    fig.tight_layout()
    return fig


@register_figure("geng2019_fig3_test_error_boxplot_paper_protocol")
def test_error_boxplot_paper_protocol(df):
    """Fig. 3 from the runs made with `protocol: paper` (never mixed with held-out runs)."""
    return test_error_boxplot(df, "paper")
