"""Li & Póczos 2016: Fig. 1 — training objective vs training time of DSG, UDSG, CDSG and SVRG with
random features, one panel per dataset —, Fig. 2 — the same on MNIST-8M — and Table 3 — each algorithm's training error at the
time LIBSVM converges.

Only runs tagged {paper: li2016} for Fig. 1 (configs/*_li2016.yaml: the DSG family and SVRG,
logistic loss) or for Table 3 (configs/*_li2016_table3.yaml and *_libsvm_li2016.yaml: kernel SVMs,
hinge loss) are drawn, each in its own figure, so other experiments on the same data do not mix in. Curves are per trial (thin) with the trial-mean at each evaluation index (thick); times are
cumulative training seconds (evaluation excluded) as the experiment loop records them. A peer no paper
ran (tags.role: peer, Falkon) is not drawn here: its objective is another function (squared loss),
not comparable on these axes; Dai et al.'s Fig. 1 and Gu et al.'s Fig. 1 draw it (test error).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from kernelbench.figures.base import ALGORITHM_STYLE, register_figure
from kernelbench.results import tagged

ALGORITHMS = ("dsg", "udsg", "cdsg", "svrg-rf")


def _lp_rows(df: pd.DataFrame, figure: str) -> pd.DataFrame:
    rows = tagged(df, paper="li2016", figure=figure)
    if rows.empty:
        return rows
    rows = rows[rows["status"] == "ok"]
    if "fold" in rows:
        rows = rows[rows["fold"].isna()]
    return rows


def _mean_curve(rows: pd.DataFrame, y: str) -> pd.DataFrame:
    """Mean over trials at each evaluation index (trials share the schedule of evaluations)."""
    rows = rows.sort_values(["trial", "iteration"]).copy()
    rows["point"] = rows.groupby("trial").cumcount()
    return rows.groupby("point")[["train_seconds", y]].mean()


@register_figure("li2016_fig1_objective_vs_time")
def objective_vs_time(df: pd.DataFrame, figure: str = "fig1"):
    rows = _lp_rows(df, figure)
    rows = rows[rows["algorithm"].isin(ALGORITHMS) & rows["objective"].notna()] if len(rows) else rows
    if rows.empty:
        return None
    datasets = sorted(rows["dataset"].unique())
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.4 * len(datasets), 3.6), squeeze=False)
    for ax, name in zip(axes[0], datasets):
        part = rows[rows["dataset"] == name]
        for algorithm in ALGORITHMS:
            alg = part[part["algorithm"] == algorithm]
            if alg.empty:
                continue
            color, marker = ALGORITHM_STYLE[algorithm]
            for _, trial in alg.groupby("trial"):
                ax.plot(trial["train_seconds"], trial["objective"], color=color, lw=0.5, alpha=0.35)
            curve = _mean_curve(alg, "objective")
            n = alg["trial"].nunique()
            ax.plot(curve["train_seconds"], curve["objective"], color=color, marker=marker, ms=3, lw=1.4,
                    label=f"{algorithm} ({n} trial{'s' if n > 1 else ''})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name)
        ax.set_xlabel("training time (s)")
        ax.set_ylabel("training objective")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Li & Póczos 2016, Fig. {figure[3:]}: training objective vs time", fontsize=10)
    fig.tight_layout()
    return fig


@register_figure("li2016_fig2_objective_vs_time")
def objective_vs_time_mnist8m(df: pd.DataFrame):
    """Fig. 2: the same curves on MNIST-8M (§5.2, configs/mnist8m_*_li2016.yaml)."""
    return objective_vs_time(df, "fig2")


def table3(df: pd.DataFrame) -> pd.DataFrame:
    """dataset × algorithm: training error (mean over trials) at the last evaluation within the
    time LIBSVM took to converge on that dataset (Li & Póczos Table 3), plus LIBSVM's own; the runs
    tagged for Table 3 (kernel SVMs: hinge loss), never Fig. 1's logistic ones."""
    rows = _lp_rows(df, "table3")
    if rows.empty or "train_error" not in rows:
        return pd.DataFrame()
    rows = rows[rows["train_error"].notna()]
    out = {}
    for name, part in rows.groupby("dataset"):
        lib = part[part["algorithm"] == "libsvm"]
        if lib.empty:
            continue
        limit = float(lib["train_seconds"].max())
        entry = {"libsvm": float(lib.sort_values("train_seconds")["train_error"].iloc[-1]),
                 "libsvm_seconds": limit}
        for algorithm in ALGORITHMS:
            alg = part[(part["algorithm"] == algorithm) & (part["train_seconds"] <= limit)]
            if alg.empty:
                continue
            last = alg.sort_values("train_seconds").groupby("trial").tail(1)
            entry[algorithm] = float(last["train_error"].mean())
        out[name] = entry
    return pd.DataFrame(out).T


@register_figure("li2016_table3_train_error_at_libsvm_time")
def train_error_table(df: pd.DataFrame):
    table = table3(df)
    if table.empty:
        return None
    columns = [c for c in ("libsvm_seconds", "libsvm", *ALGORITHMS) if c in table]
    cells = [[f"{table.loc[i, c]:.1f} s" if c == "libsvm_seconds" else
              ("" if pd.isna(table.loc[i, c]) else f"{table.loc[i, c]:.3f}") for c in columns]
             for i in table.index]
    fig, ax = plt.subplots(figsize=(1.4 + 1.1 * len(columns), 0.6 + 0.3 * len(table)))
    ax.axis("off")
    ax.table(cellText=cells, rowLabels=list(table.index), colLabels=["LIBSVM time" if c == "libsvm_seconds" else c
                                                                     for c in columns], loc="center")
    ax.set_title("Li & Póczos 2016, Table 3: training error at the time LIBSVM converges", fontsize=9)
    return fig


__all__ = ["objective_vs_time", "objective_vs_time_mnist8m", "table3", "train_error_table"]
