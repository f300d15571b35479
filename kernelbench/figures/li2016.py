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

from kernelbench.figures.base import (
    ALGORITHM_STYLE,
    configurations,
    legend_below,
    log_scale,
    panel_grid,
    panel_title,
    register_figure,
    with_trials,
)
from kernelbench.papers import get_paper
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
    """Mean over the trials of one configuration's runs at each evaluation index (trials share the
    schedule of evaluations)."""
    rows = rows.sort_values(["run_id", "trial", "iteration"]).copy()
    rows["point"] = rows.groupby(["run_id", "trial"]).cumcount()
    return rows.groupby("point")[["train_seconds", y]].mean()


@register_figure("li2016_fig1_objective_vs_time")
def objective_vs_time(df: pd.DataFrame, figure: str = "fig1"):
    rows = _lp_rows(df, figure)
    rows = rows[rows["algorithm"].isin(ALGORITHMS) & rows["objective"].notna()] if len(rows) else rows
    if rows.empty:
        return None
    datasets = sorted(rows["dataset"].unique())
    fig, axes = panel_grid(len(datasets), 4.4, 3.6, columns=3)
    for ax, name in zip(axes, datasets):
        part = rows[rows["dataset"] == name]
        for algorithm in ALGORITHMS:
            color, marker = ALGORITHM_STYLE[algorithm]
            for setting, alg in configurations(part[part["algorithm"] == algorithm]):
                if alg.empty:
                    continue
                for _, trial in alg.groupby(["run_id", "trial"]):
                    ax.plot(trial["train_seconds"], trial["objective"], color=color, lw=0.5, alpha=0.35)
                curve = _mean_curve(alg, "objective")
                n = len(alg[["run_id", "trial"]].drop_duplicates())
                ax.plot(curve["train_seconds"], curve["objective"], color=color, marker=marker, ms=3, lw=1.4,
                        label=with_trials(f"{algorithm}{setting}", n))
        log_scale(ax, "x")
        log_scale(ax, "y")
        ax.set_title(panel_title("li2016", name, rows=part), fontsize=10)
        ax.set_xlabel("training time (s)")
        ax.set_ylabel("training objective (logistic loss + L2)")
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(f"Li & Póczos 2016, Fig. {figure[3:]}: training objective vs time "
                 "(thin: each trial; thick: their mean)", fontsize=10)
    legend_below(fig, axes)
    return fig


@register_figure("li2016_fig2_objective_vs_time")
def objective_vs_time_mnist8m(df: pd.DataFrame):
    """Fig. 2: the same curves on MNIST-8M (§5.2, configs/mnist8m_*_li2016.yaml)."""
    return objective_vs_time(df, "fig2")


def table3(df: pd.DataFrame) -> pd.DataFrame:
    """dataset × algorithm: training error (mean over trials) at the last evaluation within the
    time LIBSVM took to converge on that dataset (the mean of its trials; Li & Póczos Table 3), plus
    LIBSVM's own; the runs tagged for Table 3 (kernel SVMs: hinge loss), never Fig. 1's logistic ones."""
    rows = _lp_rows(df, "table3")
    if rows.empty or "train_error" not in rows:
        return pd.DataFrame()
    rows = rows[rows["train_error"].notna()]
    out = {}
    for name, part in rows.groupby("dataset"):
        lib = part[part["algorithm"] == "libsvm"]
        if lib.empty:
            continue
        final = lib.sort_values("train_seconds").groupby("trial").tail(1)
        limit = float(final["train_seconds"].mean())    # the mean of its trials, as the report's rows read it
        entry = {"libsvm": float(final["train_error"].mean()), "libsvm_seconds": limit}
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
    """Table 3 as the paper prints it: ours per set (stand-ins named), then the paper's own rows (its
    Epsilon and CIFAR-10, in percent as printed) for comparison."""
    table = table3(df)
    if table.empty:
        return None
    columns = [c for c in ("libsvm_seconds", "libsvm", *ALGORITHMS) if c in table]
    cells = [[f"{table.loc[i, c]:.1f} s" if c == "libsvm_seconds" else
              ("" if pd.isna(table.loc[i, c]) else f"{100 * table.loc[i, c]:.1f} %") for c in columns]
             for i in table.index]
    labels = [panel_title("li2016", name) for name in table.index]
    for name, printed in _printed_table3().items():
        cells.append([f"{printed[c]:g} s" if c == "libsvm_seconds" else f"{printed[c]:g} %" if c in printed else ""
                      for c in columns])
        labels.append(f"paper: {name}")
    fig, ax = plt.subplots(figsize=(2.6 + 1.1 * len(columns), 0.8 + 0.3 * len(cells)))
    ax.axis("off")
    ax.table(cellText=cells, rowLabels=labels, loc="center",
             colLabels=["LIBSVM time" if c == "libsvm_seconds" else f"{c} train error" for c in columns])
    ax.set_title("Li & Póczos 2016, Table 3: training error at the time LIBSVM converges", fontsize=9)
    return fig


def _printed_table3() -> dict:
    """{the paper's set: {column: value}} of the Table 3 the paper prints (kernelbench/papers/li2016.yaml)."""
    printed: dict = {}
    for e in get_paper("li2016").published:
        if e.figure != "table3" or e.metric not in ("train_error", "train_seconds", "at_seconds:train_error:libsvm"):
            continue
        column = "libsvm_seconds" if e.metric == "train_seconds" else e.algorithm
        printed.setdefault(e.dataset, {})[column] = e.value
    return printed


__all__ = ["objective_vs_time", "objective_vs_time_mnist8m", "table3", "train_error_table"]
