"""Geng et al. (IJCAI 2019): Fig. 2 — running time vs training size per dataset and S3VM solver,
with the slope of log(time) on log(size) printed per line (1 = linear); Fig. 3 — boxplot of the
test error per dataset and method. Read from results CSVs only, never re-run.

Which rows: the final row of every finished cell of the semi-supervised algorithms (tsgs3vm,
frs3vm and, when present, bgs3vm, tsvm-ls = S3VMlight-style, tsvm-cccp = BLS3VM) and of the
supervised comparison runs (experiment names containing "ssl_dsg" / "ssl_libsvm": the same
algorithm trained on the 200 labeled rows alone). Fig. 2 uses the runs of scripts/geng_scaling.py,
whose experiment names end in "-n<training size>", and of part B's scripts/ssl_baseline_scaling.py
("_nu<unlabeled count>": 200 labeled + that many unlabeled); Fig. 3 uses every other run.
"""
from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from kernelbench.figures import register_figure

METHODS = ("tsvm-cccp", "tsvm-ls", "bgs3vm", "frs3vm", "tsgs3vm", "tsgs3vm-5pass", "dsg-labeled",
           "libsvm-labeled")
LABELS = {"tsvm-cccp": "BLS3VM (CCCP)", "tsvm-ls": "S3VMlight (TSVM)", "bgs3vm": "BGS3VM",
          "frs3vm": "FRS3VM", "tsgs3vm": "TSGS3VM", "tsgs3vm-5pass": "TSGS3VM, 5 passes",
          "dsg-labeled": "DSG, 200 labeled only",
          "libsvm-labeled": "SVC, 200 labeled only"}
COLORS = {"tsvm-cccp": "tab:purple", "tsvm-ls": "tab:brown", "bgs3vm": "tab:green",
          "frs3vm": "tab:orange", "tsgs3vm": "tab:red", "tsgs3vm-5pass": "tab:pink", "dsg-labeled": "tab:blue",
          "libsvm-labeled": "tab:gray"}
SIZE_RE = re.compile(r"-n(\d+)$")           # scripts/geng_scaling.py: -n<training size>
UNLABELED_RE = re.compile(r"_nu(\d+)$")      # part B's scripts/ssl_baseline_scaling.py: _nu<n_u>
N_LABELED = 200


def final_rows(df):
    """One row per finished cell of the Geng et al. experiments, with `method` and `train_size`."""
    import pandas as pd

    need = {"algorithm", "experiment", "final", "status"}
    if df.empty or not need <= set(df.columns):
        return pd.DataFrame()
    rows = df[(df["final"] == 1)].copy()
    if "fold" in rows.columns:                       # CV folds are model selection, not results
        rows = rows[rows["fold"].isna() | (rows["fold"].astype(str) == "")]
    experiment = rows["experiment"].astype(str)
    method = rows["algorithm"].astype(str).where(rows["algorithm"].isin(METHODS[:5]))
    method = method.mask(experiment.str.contains("ssl_dsg") & (rows["algorithm"] == "dsg"), "dsg-labeled")
    method = method.mask(experiment.str.contains("ssl_libsvm") & (rows["algorithm"] == "libsvm"),
                         "libsvm-labeled")
    method = method.mask(experiment.str.endswith("_5pass") & (rows["algorithm"] == "tsgs3vm"), "tsgs3vm-5pass")
    rows["method"] = method
    rows = rows[rows["method"].notna()]
    rows["train_size"] = experiment.loc[rows.index].map(_train_size)
    return rows


def _train_size(experiment: str) -> float:
    match = SIZE_RE.search(experiment)
    if match:
        return int(match.group(1))
    match = UNLABELED_RE.search(experiment)
    return N_LABELED + int(match.group(1)) if match else np.nan


def loglog_slope(sizes, seconds) -> float:
    """Least-squares slope of log(seconds) on log(size): 1 = linear growth, 2 = quadratic."""
    sizes, seconds = np.asarray(sizes, float), np.asarray(seconds, float)
    keep = (sizes > 0) & (seconds > 0)
    if np.unique(sizes[keep]).size < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes[keep]), np.log(seconds[keep]), 1)[0])


@register_figure("geng2019_fig2_time_vs_training_size")
def time_vs_size(df):
    rows = final_rows(df)
    if rows.empty:
        return None
    rows = rows[rows["train_size"].notna() & (rows["status"] == "ok")]
    if rows.empty:
        return None
    datasets = sorted(rows["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(3.6 * len(datasets), 3.3), squeeze=False)
    for ax, name in zip(axes[0], datasets):
        part = rows[rows["dataset"] == name]
        for method in METHODS:
            m = part[part["method"] == method]
            if m.empty:
                continue
            mean = m.groupby("train_size")["train_seconds"].mean()
            slope = loglog_slope(m["train_size"], m["train_seconds"])
            ax.loglog(mean.index, mean.values, "o-", color=COLORS[method],
                      label=f"{LABELS[method]} (slope {slope:.2f})")
        ax.set_title(name, fontsize=9)
        ax.xaxis.set_minor_formatter(NullFormatter())     # log axes: label the decades only
        ax.set_xlabel("training size (labeled + unlabeled)")
        ax.set_ylabel("training time (s)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=6)
    fig.suptitle("Geng et al. 2019, Fig. 2: running time vs training size (log-log; slope 1 = linear)",
                 fontsize=9)
    fig.tight_layout()
    return fig


@register_figure("geng2019_fig3_test_error_boxplot")
def test_error_boxplot(df):
    rows = final_rows(df)
    if rows.empty or "test_error" not in rows.columns:
        return None
    rows = rows[rows["train_size"].isna() & (rows["status"] == "ok") & rows["test_error"].notna()]
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
        ax.plot([], [], "s", color=COLORS[method], label=LABELS[method])
    ax.set_xticks(range(len(datasets)), datasets, fontsize=8)
    ax.set_ylabel("test error (%)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Geng et al. 2019, Fig. 3: test error, 200 labeled points, trials per method", fontsize=9)
    fig.tight_layout()
    return fig
