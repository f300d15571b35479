"""The paper figures find their runs by tags (never by experiment names) and read sizes and pass
counts from each run's resolved config: run folders are written with kernelbench.results.Run, as
`kernelbench run` and `kernelbench sweep` write them, and read back with collect_results."""
from __future__ import annotations

import json
import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from kernelbench.figures import DATA_FREE, FIGURES, render_all  # noqa: E402
from kernelbench.figures.glasmachers2019 import final_bsgd_rows  # noqa: E402
from kernelbench.figures import dai2014, geng2019, gu2018  # noqa: E402  (names test_*: not imported)
from kernelbench.figures.geng2019 import geng_rows, loglog_slope, time_vs_size  # noqa: E402
from kernelbench.figures.gu2018 import accuracy_vs_time, speedup, thread_speedups  # noqa: E402
from kernelbench.figures.li2016 import table3  # noqa: E402
from kernelbench.papers import get_paper  # noqa: E402
from kernelbench.results import Run, collect_results  # noqa: E402


def make_run(root, experiment, tags, rows, *, config=None, n_train=None):
    """A finished run folder: rows get the run's tags, as `kernelbench run` writes them."""
    run = Run.create(root, experiment, {"name": experiment, **(config or {})}, tags=tags)
    if n_train is not None:
        run.update(dataset={"n_train": n_train})
    for row in rows:
        run.append({"trial": 0, "seed": 0, "iteration": 1, "params": "{}", **row})
    run.finish()
    return run


def legend(fig) -> list[str]:
    """The legends' entries: the panels' own, then the figure's (one for all panels, below them)."""
    boxes = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    return [text.get_text() for box in boxes for text in box.get_texts()]


def titles(fig) -> list[str]:
    return [ax.get_title() for ax in fig.axes if ax.get_visible()]


# ---------------------------------------------------------------------------------------- Geng et al.

def test_geng_figures_select_by_tags_and_read_sizes_and_passes_from_the_runs(tmp_path):
    geng3 = {"paper": "geng2019", "figure": "fig3", "panel": "Cod RNA"}
    sizes = [1000, 2000, 4000, 8000]
    assert math.isclose(loglog_slope(np.array(sizes), 3e-6 * np.array(sizes) ** 1.5), 1.5, rel_tol=1e-9)
    for n in sizes:         # a sweep over dataset.subsample: the config's tags with figure fig2, one size each
        for algorithm in ("tsgs3vm", "frs3vm"):
            make_run(tmp_path, f"scaling-{algorithm}-{n}", {**geng3, "figure": "fig2"}, n_train=n,
                     config={"stop": {"passes": 1}},
                     rows=[{"dataset": "cod-rna", "algorithm": algorithm, "train_seconds": 1e-4 * n,
                            "test_error": 0.1, "final": 1}])
    make_run(tmp_path, "cod_rna_tsgs3vm", geng3, n_train=41000, config={"stop": {"passes": 1}},
             rows=[{"dataset": "cod-rna", "algorithm": "tsgs3vm", "trial": t, "test_error": 0.07 + 0.01 * t,
                    "final": 1} for t in range(3)])
    make_run(tmp_path, "cod_rna_tsgs3vm_5pass", geng3, config={"stop": {"passes": 5}},
             rows=[{"dataset": "cod-rna", "algorithm": "tsgs3vm", "test_error": 0.066, "final": 1}])
    make_run(tmp_path, "cod_rna_dsg_geng2019", {**geng3, "role": "baseline"},
             config={"dataset": {"labeled": 200, "labeled_only": True}},
             rows=[{"dataset": "cod-rna", "algorithm": "dsg", "trial": t, "test_error": 0.08 + 0.01 * t,
                    "final": 1} for t in range(3)])
    # DSG on cod-rna for another paper, an untagged run and a CV fold: none of them is Geng's
    make_run(tmp_path, "cod_rna_dsg_li2016", {"paper": "li2016", "figure": "fig1"},
             rows=[{"dataset": "cod-rna", "algorithm": "dsg", "test_error": 0.2, "final": 1}])
    make_run(tmp_path, "mine", {}, rows=[{"dataset": "cod-rna", "algorithm": "tsgs3vm", "test_error": 0.3,
                                          "final": 1}])
    make_run(tmp_path, "cod_rna_tsgs3vm_grid", {"paper": "geng2019"},
             rows=[{"dataset": "cod-rna", "algorithm": "tsgs3vm", "fold": 0, "test_error": 0.5, "final": 1}])
    df = collect_results(tmp_path)

    got = geng_rows(df)
    assert sorted(got["method"].unique()) == ["dsg-labeled", "frs3vm", "tsgs3vm", "tsgs3vm-passes"]
    assert (got["test_error"] < 0.2).all()                          # li2016, untagged and CV rows left out
    fig2 = got[got["figure"] == "fig2"]
    assert sorted(fig2.loc[fig2["method"] == "tsgs3vm", "train_size"]) == sizes   # run.json n_train
    assert got[got["figure"] == "fig3"]["train_size"].isna().all()
    assert (got.loc[got["method"] == "tsgs3vm-passes", "passes"] == 5).all()

    fig = time_vs_size(df)
    assert any(label.startswith("TSGS3VM (slope 1.00)") for label in legend(fig))
    box = geng2019.test_error_boxplot(df)
    labels = legend(box)
    assert "TSGS3VM, 5 passes" in labels and "DSG, 200 labeled only" in labels and "FRS3VM" not in labels


def test_geng_memory_panel_draws_the_training_memory_of_its_own_sweep_only(tmp_path):
    for n in (1000, 2000, 4000):
        for algorithm, mb in (("tsgs3vm", 0.5), ("tsvm-ls", 2e-6 * n * n)):      # flat, and a kernel matrix
            for figure, scale in (("fig2mem", 1.0), ("fig2", 100.0)):             # fig2's are not the panel's
                make_run(tmp_path, f"{figure}-{algorithm}-{n}", {"paper": "geng2019", "figure": figure}, n_train=n,
                         config={"stop": {"passes": 1}},
                         rows=[{"dataset": "cod-rna", "algorithm": algorithm, "train_memory_mb": scale * mb,
                                "test_error": 0.1, "final": 1}])
    fig = geng2019.memory_vs_size(collect_results(tmp_path))
    labels = sorted(legend(fig))
    assert labels[0] == "S3VMlight (TSVM) (slope 2.00)" and labels[1] in ("TSGS3VM (slope 0.00)", "TSGS3VM (slope -0.00)")
    line = next(l for l in fig.axes[0].get_lines() if l.get_label().startswith("S3VMlight"))
    assert list(line.get_ydata()) == [2.0, 8.0, 32.0]


def test_geng_fig3_draws_paper_protocol_runs_apart_with_a_value_per_trial(tmp_path):
    """The fold scheme's runs (protocol: paper, one row per fold) are a figure of their own, each
    trial the mean of its folds; the held-out figure never shows them."""
    geng3 = {"paper": "geng2019", "figure": "fig3", "panel": "Cod RNA"}
    make_run(tmp_path, "cod_rna_tsgs3vm", geng3, config={"stop": {"passes": 1}},
             rows=[{"dataset": "cod-rna", "algorithm": "tsgs3vm", "trial": t, "test_error": 0.07, "final": 1}
                   for t in range(2)])
    make_run(tmp_path, "cod_rna_tsgs3vm_paper", geng3, config={"stop": {"passes": 1}, "protocol": "paper"},
             rows=[{"dataset": "cod-rna", "algorithm": "tsgs3vm", "trial": t, "fold": i,
                    "test_error": 0.10 + 0.02 * i + 0.1 * t, "final": 1} for t in range(2) for i in range(5)])
    df = collect_results(tmp_path)
    held_out = geng2019.test_error_boxplot(df)
    paper = geng2019.test_error_boxplot_paper_protocol(df)
    def levels(fig):            # y of the boxes' horizontal segments: caps (min, max) and median
        (ax,) = fig.axes
        return sorted(round(float(line.get_ydata()[0]), 6) for line in ax.lines if len(line.get_ydata()) == 2
                      and line.get_ydata()[0] == line.get_ydata()[1] and line.get_xdata()[0] != line.get_xdata()[1])
    assert set(levels(held_out)) == {7.0}
    assert sorted(set(levels(paper))) == [14.0, 19.0, 24.0]    # trials 14 % and 24 % (fold means), not folds
    assert "fold scheme" in titles(paper)[0] and "held-out" in titles(held_out)[0]


# ---------------------------------------------------------------------------------------- Gu et al.

def test_a_peer_is_drawn_dotted_and_marked_not_in_the_paper_by_its_tag(tmp_path):
    """A run tagged role: peer (Falkon) draws beside the paper's methods, dotted and labelled as not
    in the paper; Falkon tagged otherwise is not so labelled; its squared-loss objective is kept
    off the objective axes of the DSG family."""
    for role, panel in (("peer", "ijcnn1"), ("baseline", "a9a")):
        make_run(tmp_path, f"{panel}_falkon_gu2018", {"paper": "gu2018", "figure": "fig1", "panel": panel,
                                                      "role": role},
                 rows=[{"dataset": panel, "algorithm": "falkon", "iteration": i, "train_seconds": float(i),
                        "samples_seen": 100 * i, "objective": 1.0 / i, "test_error": 0.1 / i,
                        "final": int(i == 3)} for i in (1, 2, 3)])
    make_run(tmp_path, "covtype_falkon_dai2014", {"paper": "dai2014", "figure": "fig1", "panel": "(3)",
                                                  "role": "peer"},
             rows=[{"dataset": "covtype_subset20k", "algorithm": "falkon", "iteration": i, "samples_seen": 100 * i,
                    "train_seconds": float(i), "objective": 1.0 / i, "test_error": 0.1 / i,
                    "final": int(i == 3)} for i in (1, 2, 3)])
    df = collect_results(tmp_path)
    curves = accuracy_vs_time(df)
    labels = {ax.get_title(): ax.lines[0].get_label() for ax in curves.axes}
    assert "NOT in the paper" in labels["ijcnn1 (added) (stand-in data)"]
    assert "NOT in the paper" not in labels["a9a (added) (stand-in data)"]
    styles = {ax.get_title(): ax.lines[0].get_linestyle() for ax in curves.axes}
    assert styles == {"ijcnn1 (added) (stand-in data)": ":", "a9a (added) (stand-in data)": "-"}
    dai = dai2014.test_error_vs_samples(df)
    assert legend(dai)[0] == "falkon: NOT in the paper (peer) (1 trial)" and dai.axes[0].lines[0].get_linestyle() == ":"
    assert dai2014.objective_vs_time(df) is None



def test_gu_figures_split_fig1_curves_test_time_and_fig2_by_tags(tmp_path):
    fig1 = {"paper": "gu2018", "figure": "fig1", "panel": "ijcnn1"}
    make_run(tmp_path, "ijcnn1_asydsskl_gu2018", {**fig1, "role": "ours"},
             rows=[{"dataset": "ijcnn1", "algorithm": "asydsskl", "iteration": i, "train_seconds": float(i),
                    "test_error": 0.1 / i, "final": int(i == 3)} for i in (1, 2, 3)])
    make_run(tmp_path, "ijcnn1_dsg_li2016", {"paper": "li2016", "figure": "fig1"},
             rows=[{"dataset": "ijcnn1", "algorithm": "dsg", "train_seconds": 1.0, "test_error": 0.3, "final": 1}])
    make_run(tmp_path, "gu_test_time", {"paper": "gu2018", "figure": "fig1", "panel": "(g-h)"},
             rows=[{"dataset": "covtype_subset20k", "algorithm": "asydsskl", "iteration": size,
                    "predict_seconds": size * 1e-6, "n_features": 100, "test_error": 0.2,
                    "counters": json.dumps({"n_test": size}), "final": int(size == 2000)} for size in (1000, 2000)])
    df = collect_results(tmp_path)

    curves = accuracy_vs_time(df)
    assert titles(curves) == ["ijcnn1 (added) (stand-in data)"]    # the test-time run is not a curve
    assert legend(curves) == ["AsyDSSKL (1 trial)"]               # nor is Li & Poczos' DSG
    times = gu2018.test_time(df)
    assert titles(times) == ["(a) Covtype B: 20k SUBSET"] and legend(times) == ["AsyDSSKL (100 features)"]
    assert (times.axes[0].get_xscale(), times.axes[0].get_yscale()) == ("log", "log")   # ratios readable
    assert speedup(df) is None                                     # no run tagged fig2


def test_speedup_figure_reads_per_seed_rows_of_one_run_per_thread_count(tmp_path):
    """Gu et al. Fig. 2 from a threads sweep (one run per thread count): T_1 / T_k per seed, where
    T_k is the first time the k-thread curve reaches the same seed's 1-thread final objective."""
    rows = []
    for seed, (t_two, floor) in enumerate([(2.0, 0.5), (2.5, 0.5), (4.0, 0.6)]):
        for it in range(6):          # 1 thread: objective 1/(it+1) at it seconds -> final 1/6 at 5 s
            rows.append(dict(seed=seed, threads=1, iteration=it, train_seconds=float(it), objective=1 / (it + 1)))
        for it in range(8):          # 2 threads: same curve, `t_two`× faster; the last seed stalls
            value = 1 / (it + 1) if seed < 2 else max(1 / (it + 1), floor)
            rows.append(dict(seed=seed, threads=2, iteration=it, train_seconds=it / t_two, objective=value))
    for k in (1, 2):
        make_run(tmp_path, f"ijcnn1_asydsskl_gu2018-threads{k}", {"paper": "gu2018", "figure": "fig2", "role": "ours"},
                 rows=[{"dataset": "ijcnn1", "algorithm": "asydsskl", **r} for r in rows if r["threads"] == k])
    df = collect_results(tmp_path)
    got = thread_speedups(df)
    assert got[1] == [1.0, 1.0, 1.0]
    assert got[2][:2] == [2.0, 2.5] and np.isnan(got[2][2])          # never reached: nan, not a number
    assert speedup(df) is not None
    assert speedup(df.assign(figure="fig1")) is None                 # a run not tagged fig2 is no speedup


# ------------------------------------------------------------------------------ Dai et al., Li & Poczos

def test_dai_figure_draws_only_its_tagged_runs(tmp_path):
    curve = [{"dataset": "a9a", "iteration": i, "samples_seen": 64 * i, "test_error": 0.2 - 0.01 * i,
              "final": int(i == 3)} for i in (1, 2, 3)]
    make_run(tmp_path, "a9a_norma_dai2014", {"paper": "dai2014", "figure": "fig1", "panel": "(1)"},
             rows=[{"algorithm": "norma", **r} for r in curve])
    make_run(tmp_path, "a9a_dsg_li2016", {"paper": "li2016", "figure": "fig1"},
             rows=[{"algorithm": "dsg", **r} for r in curve])
    make_run(tmp_path, "a9a_dsg", {"paper": "dai2014"}, rows=[{"algorithm": "dsg", **r} for r in curve])
    df = collect_results(tmp_path)
    fig = dai2014.test_error_vs_samples(df)
    # the paper's final errors on Adult (kernelbench/papers/dai2014.yaml), drawn as levels beside ours
    assert titles(fig) == ["(1) Adult (a9a)"] and legend(fig) == [
        "norma (1 trial)", "paper: dsg 15.3 %", "paper: norma 15 %", "paper: k-sdca 15 %"]
    levels = sorted(line.get_ydata()[0] for line in fig.axes[0].lines if line.get_label().startswith("paper"))
    assert levels == pytest.approx([0.15, 0.15, 0.153])
    assert dai2014.test_error_vs_samples(df[df["figure"] != "fig1"]) is None
    # on the 20k covtype subset, the paper's full-covtype number is labelled as such
    make_run(tmp_path, "covtype_subset20k_dsg_dai2014", {"paper": "dai2014", "figure": "fig1", "panel": "(3)"},
             rows=[{"algorithm": "dsg", **r, "dataset": "covtype_subset20k"} for r in curve])
    fig = dai2014.test_error_vs_samples(collect_results(tmp_path))
    assert "paper (covtype_binary): dsg 15 %" in legend(fig)


def test_li_poczos_table3_reads_only_its_kernel_svm_runs(tmp_path):
    """Table 3 compares kernel SVMs: the hinge-loss runs tagged table3, read at LIBSVM's time (the mean
    of its trials, as the report reads it: 10 s, not its slower trial's 12 s); Fig. 1's logistic runs on
    the same set (tagged fig1) never enter it."""
    lp = {"paper": "li2016", "panel": "CIFAR-10"}
    make_run(tmp_path, "cifar10_libsvm_li2016", {**lp, "figure": "table3"},     # two trials: 8 s and 12 s
             rows=[{"dataset": "cifar10", "algorithm": "libsvm", "trial": trial, "train_seconds": seconds,
                    "train_error": 0.386, "final": 1} for trial, seconds in enumerate((8.0, 12.0))])
    for trial, errors in enumerate([(0.5, 0.41, 0.30), (0.5, 0.39, 0.30)]):   # the last point: 11 s > 10 s
        make_run(tmp_path, f"cifar10_cdsg_li2016_table3_{trial}", {**lp, "figure": "table3"},
                 rows=[{"dataset": "cifar10", "algorithm": "cdsg", "trial": trial, "iteration": i,
                        "train_seconds": s, "train_error": e, "final": int(i == 2)}
                       for i, (s, e) in enumerate(zip((1.0, 9.0, 11.0), errors))])
    make_run(tmp_path, "cifar10_dsg_li2016", {**lp, "figure": "fig1"},                   # Fig. 1: logistic
             rows=[{"dataset": "cifar10", "algorithm": "dsg", "train_seconds": 1.0, "train_error": 0.2,
                    "objective": 1.0, "final": 1}])
    make_run(tmp_path, "cifar10_dsg_other", {"paper": "dai2014", "figure": "fig1"},       # not Li & Poczos'
             rows=[{"dataset": "cifar10", "algorithm": "dsg", "train_seconds": 1.0, "train_error": 0.9, "final": 1}])
    got = table3(collect_results(tmp_path))
    assert got.loc["cifar10", "libsvm"] == pytest.approx(0.386) and got.loc["cifar10", "libsvm_seconds"] == 10.0
    assert got.loc["cifar10", "cdsg"] == pytest.approx(0.40) and "dsg" not in got.columns
    assert "li2016_fig1_objective_vs_time" in FIGURES and "li2016_table3_train_error_at_libsvm_time" in FIGURES


# ------------------------------------------------------------------------------- Glasmachers & Qaadan

def test_bsgd_breakdown_uses_the_final_rows_of_the_table2_runs(tmp_path):
    def rows(merge, seconds_a, diagnose=False):
        params = json.dumps({"merge": merge, "budget": 100, "diagnose": diagnose})
        counters = json.dumps({"merge_seconds_a": seconds_a, "merge_seconds_b": 1.0, "merge_frequency": 0.1})
        return [{"dataset": "ijcnn1", "algorithm": "bsgd", "params": params, "iteration": 1,
                 "counters": json.dumps({"merge_seconds_a": 99.0})},              # a curve point
                {"dataset": "ijcnn1", "algorithm": "bsgd", "params": params, "iteration": 2,
                 "counters": counters, "final": 1}]
    gq = {"paper": "glasmachers2019", "panel": "IJCNN"}
    make_run(tmp_path, "ijcnn1_bsgd", {**gq, "figure": "table2"}, rows=rows("gss", 2.0) + rows("lookup-wd", 0.5))
    make_run(tmp_path, "ijcnn1_bsgd_diag", {**gq, "figure": "table3"}, rows=rows("lookup-wd", 7.0, diagnose=True))
    make_run(tmp_path, "mine", {}, rows=rows("gss", 5.0))
    got = final_bsgd_rows(collect_results(tmp_path))
    assert sorted(zip(got["merge"], got["merge_seconds_a"])) == [("gss", 2.0), ("lookup-wd", 0.5)]
    assert FIGURES["glasmachers2019_fig3_merge_time_breakdown"](collect_results(tmp_path)) is not None


def test_bsgd_table2_figure_puts_the_papers_accuracy_beside_ours(tmp_path):
    def rows(merge, errors):
        params = json.dumps({"merge": merge, "budget": 100})
        return [{"dataset": "ijcnn1", "algorithm": "bsgd", "params": params, "trial": trial, "test_error": error,
                 "counters": json.dumps({"merge_seconds_a": 1.0}), "final": 1} for trial, error in enumerate(errors)]
    make_run(tmp_path, "ijcnn1_bsgd", {"paper": "glasmachers2019", "figure": "table2", "panel": "IJCNN"},
             rows=rows("gss", [0.03, 0.05]) + rows("lookup-wd", [0.02, 0.02]))
    fig = FIGURES["glasmachers2019_table2_accuracy"](collect_results(tmp_path))
    ours, paper = fig.axes[0].containers                         # errorbar containers: ours, then the paper's
    assert list(ours.lines[0].get_ydata()) == pytest.approx([96.0, 98.0])      # GSS, Lookup-WD: 100 (1 − error)
    published = {e.params["merge"]: e.value for e in get_paper("glasmachers2019").published
                 if e.dataset == "ijcnn1" and e.metric == "test_accuracy" and e.params.get("budget") == 100}
    assert list(paper.lines[0].get_ydata()) == pytest.approx([published["gss"], published["lookup-wd"]])
    assert legend(fig) == ["ours (mean ± std over trials)", "paper (Table 2)"] and titles(fig) == ["ijcnn1, B = 100"]


def objective_rows(algorithm, params, seconds, objectives):
    return [{"dataset": "covtype_subset20k", "algorithm": algorithm, "params": json.dumps(params), "iteration": i,
             "train_seconds": t, "objective": o, "final": int(i == len(seconds))}
            for i, (t, o) in enumerate(zip(seconds, objectives), start=1)]


def test_li_figure_draws_one_line_per_configuration_and_names_the_stand_in(tmp_path):
    """Two settings of one algorithm are two lines, never one mean; the stand-in set says so."""
    tags = {"paper": "li2016", "figure": "fig1"}
    make_run(tmp_path, "cov_dsg_a", tags, objective_rows("dsg", {"eta": 0.1}, (0.04, 0.1, 0.6), (0.69, 0.62, 0.57)))
    make_run(tmp_path, "cov_dsg_b", tags, objective_rows("dsg", {"eta": 1.0}, (0.04, 0.1, 0.6), (0.69, 0.65, 0.6)))
    fig = FIGURES["li2016_fig1_objective_vs_time"](collect_results(tmp_path))
    assert titles(fig) == ["covtype_subset20k (stand-in data)"]
    assert legend(fig) == ["dsg, eta=0.1 (1 trial)", "dsg, eta=1.0 (1 trial)"]


def test_log_axis_tick_labels_of_a_short_span_do_not_overlap(tmp_path):
    """A span of about one decade (0.04 – 0.6 s) labelled by the default locator crowds its minor
    labels into each other: each label must keep clear of its neighbours."""
    make_run(tmp_path, "cov_dsg", {"paper": "li2016", "figure": "fig1"},
             objective_rows("dsg", {}, (0.035, 0.05, 0.08, 0.12, 0.2, 0.35, 0.6), (0.69, 0.65, 0.62, 0.6, 0.59, 0.58, 0.57)))
    fig = FIGURES["li2016_fig1_objective_vs_time"](collect_results(tmp_path))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for axis in (fig.axes[0].xaxis, fig.axes[0].yaxis):
        boxes = [t.get_window_extent(renderer) for t in axis.get_ticklabels(which="both")
                 if t.get_visible() and t.get_text()]
        assert len(boxes) >= 2, axis
        assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:]), axis


def test_li_table3_prints_the_papers_rows_beside_ours(tmp_path):
    lp = {"paper": "li2016", "figure": "table3"}
    make_run(tmp_path, "a9a_libsvm", lp, rows=[{"dataset": "a9a", "algorithm": "libsvm", "train_seconds": 10.0,
                                                "train_error": 0.15, "final": 1}])
    fig = FIGURES["li2016_table3_train_error_at_libsvm_time"](collect_results(tmp_path))
    cells = {text.get_text() for text in fig.axes[0].tables[0].get_celld().values() for text in [text.get_text()]}
    assert {"a9a (stand-in data)", "paper: epsilon", "paper: cifar10", "8457 s", "38.6 %", "15.0 %"} <= cells


# ------------------------------------------------------------------------------------------ all figures

def test_untagged_results_draw_only_the_generic_figure(tmp_path):
    make_run(tmp_path / "results", "quickstart", {},
             rows=[{"dataset": "digits86", "algorithm": "dsg", "iteration": i, "samples_seen": 16 * i,
                    "train_seconds": 0.1 * i, "objective": 1.0 / i, "test_error": 0.1, "final": int(i == 2)}
                   for i in (1, 2)])
    written = render_all(tmp_path / "results", tmp_path / "figs")
    # figures computed from no results (registered needs_results=False) are drawn regardless
    data_driven = sorted(p.name for p in written if p.stem not in DATA_FREE)
    assert data_driven == ["objective_vs_time.pdf", "objective_vs_time.png"]
    assert all(p.stem in DATA_FREE for p in render_all(tmp_path / "empty", tmp_path / "figs2"))


def test_palette_png_keeps_the_picture_in_fewer_bytes(tmp_path):
    import matplotlib.pyplot as plt
    from PIL import Image

    from kernelbench.figures.base import save_figure

    def draw():
        fig, ax = plt.subplots(figsize=(6, 3))
        for k in range(5):
            ax.plot(np.linspace(0, 1, 200) ** (k + 1), label=f"curve {k}")
        ax.legend()
        return fig

    full = save_figure(draw(), tmp_path / "full")[0]
    small = save_figure(draw(), tmp_path / "small", palette=True)[0]
    a, b = Image.open(full), Image.open(small)
    assert b.mode == "P" and a.size == b.size
    assert small.stat().st_size < full.stat().st_size
    # the same picture: each pixel's colour moves by a few levels at most on average
    diff = np.abs(np.asarray(a.convert("RGB"), dtype=int) - np.asarray(b.convert("RGB"), dtype=int))
    assert diff.mean() < 2


def test_one_legend_entry_per_method_with_the_range_of_its_panels_trials():
    """Panels of one figure may count different trials for a method (runs re-run at 10 trials where
    3 left an ordering within noise): the shared legend names the method once, with the range."""
    import matplotlib.pyplot as plt
    from kernelbench.figures.base import legend_below
    fig, axes = plt.subplots(1, 3)
    for ax, n in zip(axes, (3, 10, 3)):
        ax.plot([1, 2], [1, 2], color="C0", label=f"dsg ({n} trials)")
        ax.plot([1, 2], [2, 1], color="C1", label="cdsg (1 trial)")
        ax.plot([1, 2], [2, 2], color="C2", label="libsvm")
    legend_below(fig, list(axes))
    assert legend(fig) == ["dsg (3–10 trials)", "cdsg (1 trial)", "libsvm"]
    plt.close(fig)
