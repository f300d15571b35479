"""`kernelbench sweep` (kernelbench/experiment/sweep.py) and the figures that read sweeps: each point
is an ordinary run folder with its swept values in run.json; a size the solver refuses ends its
line; the threads and test-size sweeps feed the speed-up and predict-time figures. Tiny synthetic
replicas: seconds each, and no timing is asserted."""
from __future__ import annotations

import json
import math

import matplotlib
import numpy as np
import pytest
import yaml

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from kernelbench.cli import main  # noqa: E402
from kernelbench.experiment.sweep import parse_over  # noqa: E402
from kernelbench.errors import ConfigError  # noqa: E402
from kernelbench.experiment.sweep import Limits, point_name, run_sweep, sweep_points  # noqa: E402
from kernelbench.figures import gu2018  # noqa: E402  (its test_time: not collected)
from kernelbench.figures.gu2018 import speedup, thread_speedups  # noqa: E402
from kernelbench.figures.scaling import (fit_slope, scaling_rows, slopes, stop_reason,  # noqa: E402
                                         time_and_memory_vs_size)
from kernelbench.results import RunRecord, collect_results, final_rows, read_results  # noqa: E402


COST_GROWTH = {"paper": "geng2019", "figure": "fig2", "panel": "cost growth"}


def _config(tmp_path, name="tiny", **sections):
    config = {"name": name, "tags": COST_GROWTH,
              "dataset": {"name": "synthetic", "shape": "susy", "n": 1500, "n_test": 300, "scale": "standard"},
              "algorithm": {"name": "dsg", "params": {"batch_size": 16, "block_size": 16}},
              "stop": {"passes": 1}, "evaluate": {"every": 10**9, "on": ["test_error"]}}
    config.update(sections)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


# ------------------------------------------------------------------------------ the grid of points

def test_points_are_the_product_of_the_values_the_last_key_fastest():
    points = sweep_points({"a": [1, 2], "b": ["x", "y", "z"]})
    assert points == [{"a": a, "b": b} for a in (1, 2) for b in ("x", "y", "z")]
    assert point_name("run", {"dataset.n": 1000, "algorithm.name": "dsg", "step": 0.5},
                      ["algorithm.name", "dataset.n", "step"]) == "run-dsg-n1000-step0.5"


def test_over_reads_yaml_values_and_refuses_what_is_not_key_equals_values():
    assert parse_over(["dataset.subsample=1000,2e3", "tags.figure=fig2"]) == {
        "dataset.subsample": [1000, "2e3"], "tags.figure": ["fig2"]}
    assert parse_over(["evaluate.on=[test_error, objective]"]) == {"evaluate.on": [["test_error", "objective"]]}
    for bad in (["dataset.subsample"], ["=1,2"], ["stop.passes="], ["a=1", "a=2"]):
        with pytest.raises(ConfigError):
            parse_over(bad)


def test_the_stop_reason_comes_from_the_final_row():
    assert stop_reason("ok", 3.0, None) == "" and stop_reason("ok", 3.0, 5.0) == ""
    assert stop_reason("ok", 5.0, 5.0) == "time"
    assert stop_reason("skipped", 0.0, 5.0) == "budget"
    assert stop_reason("diverged", 1.0, None) == "error"
    assert stop_reason("failed", math.nan, 5.0, json.dumps({"stopped": "memory"})) == "memory"


# ------------------------------------------------------------------------------ training-size sweeps

def test_a_size_sweep_makes_one_run_per_value_and_the_scaling_figure_reads_them(tmp_path):
    config = _config(tmp_path)
    sizes = [500, 1000, 2000]
    points = run_sweep([config], {"dataset.n": sizes}, out_dir=tmp_path / "out", echo=lambda _: None)
    assert [p.stopped for p in points] == ["", "", ""]
    for point, n in zip(points, sizes):
        record = RunRecord.load(point.folder)
        assert record.sweep == {"dataset.n": n} and record.dataset["n_train"] == n
        assert record.experiment == f"tiny-n{n}" and record.config["dataset"]["n"] == n
        last = final_rows(read_results(point.folder))
        assert list(last["status"]) == ["ok"] and last["test_error"].between(0, 1).all()

    df = collect_results(tmp_path / "out")
    rows = scaling_rows(df)
    assert sorted(rows["n"]) == sizes and set(rows["algorithm"]) == {"dsg"}
    expected = fit_slope(rows["n"], rows["train_seconds"])["slope"]   # the rows' own fit
    assert slopes(rows)["dsg"]["slope"] == pytest.approx(expected)
    fig = time_and_memory_vs_size(df)
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert any(t.startswith(f"dsg (slope {expected:.2f}") for t in legend), legend
    plt.close(fig)
    assert scaling_rows(df.assign(panel="Cod RNA")).empty          # another panel's sweep: not drawn
    assert scaling_rows(df.assign(sweep="")).empty                  # nor a run that is no sweep point


def test_a_size_the_solver_refuses_ends_its_line_with_a_skipped_row(tmp_path):
    config = _config(tmp_path, "ssl", dataset={"name": "synthetic", "shape": "susy", "n": 500, "n_test": 200,
                                               "labeled": 40, "scale": "standard"},
                     algorithm={"name": "tsvm-cccp", "params": {"max_points": 700}}, stop=None)
    points = run_sweep([config], {"dataset.n": [500, 1000, 2000]}, out_dir=tmp_path / "out",
                       echo=lambda _: None)
    assert [RunRecord.load(p.folder).sweep["dataset.n"] for p in points] == [500, 1000]   # 2000 not run
    assert [p.stopped for p in points] == ["", "budget"]
    refused = final_rows(read_results(points[1].folder)).iloc[0]
    assert refused["status"] == "skipped" and "max_points" in refused["message"]
    rows = scaling_rows(collect_results(tmp_path / "out"))
    assert dict(zip(rows["n"].astype(int), rows["stopped"])) == {500: "", 1000: "budget"}


def test_a_point_past_the_wall_clock_limit_is_killed_and_says_so(tmp_path):
    config = _config(tmp_path)
    points = run_sweep([config], {"dataset.n": [1000, 2000]}, out_dir=tmp_path / "out", processes=True,
                       limits=Limits(seconds=0.1, grace=0.0), echo=lambda _: None)
    assert len(points) == 1 and points[0].stopped == "time"       # the larger size is not run
    record = RunRecord.load(points[0].folder)
    assert record.status == "failed" and "wall-clock limit" in record.error
    assert record.sweep == {"dataset.n": 1000}
    row = final_rows(read_results(points[0].folder)).iloc[0]
    assert row["status"] == "failed" and json.loads(row["counters"]) == {"stopped": "time"}
    assert scaling_rows(collect_results(tmp_path / "out"))["stopped"].tolist() == ["time"]


@pytest.mark.slow          # a child process per point (imports: seconds)
def test_a_point_in_its_own_process_records_its_own_peak_memory(tmp_path, capsys):
    config = _config(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["sweep", str(config), "--over", "dataset.n=800", "--processes", "--out", str(tmp_path / "out")])
    assert exc.value.code in (0, None)
    (folder,) = [p for p in (tmp_path / "out").iterdir()]
    record = RunRecord.load(folder)
    assert record.sweep == {"dataset.n": 800} and record.dataset["n_train"] == 800
    assert record.peak_memory_mb > 0 and record.command[:2] == ["kernelbench", "run"]   # what the child stands for
    assert "dataset.n=800" in record.command


# ------------------------------------------------------------------------------ evaluation-side sweeps

def test_threads_sweep_on_one_and_two_threads_feeds_the_speedup_figure(tmp_path):
    config = _config(tmp_path, "asy", tags={"paper": "gu2018", "figure": "fig1"}, trials=2,
                     algorithm={"name": "asydsskl", "params": {"rounds": 2, "features_per_round": 32,
                                                               "outer_loops": 2, "threads": 1}},
                     evaluate={"every": 1, "on": ["objective", "test_error"]})
    points = run_sweep([config], {"tags.figure": ["fig2"], "algorithm.params.threads": [1, 2]},
                       out_dir=tmp_path / "out", echo=lambda _: None)
    assert [p.name for p in points] == ["asy-threads1", "asy-threads2"]
    df = collect_results(tmp_path / "out")
    assert set(df["figure"]) == {"fig2"} and sorted(df["threads"].unique()) == [1, 2]
    got = thread_speedups(df[df["objective"].notna()])
    assert sorted(got) == [1, 2] and got[1] == [1.0, 1.0]        # each seed's 1-thread run against itself
    fig = speedup(df)
    assert fig is not None
    plt.close(fig)


def test_a_test_size_sweep_trains_once_a_trial_and_times_predict_at_each_size(tmp_path):
    config = _config(tmp_path, "pred", tags={"paper": "gu2018", "figure": "fig1"}, trials=2)
    sizes = [100, 400, 1600]
    (point,) = run_sweep([config], {"predict.n_test": sizes}, out_dir=tmp_path / "out", echo=lambda _: None)
    assert point.name == "pred-predict_time"                       # never taken for the config's own run
    rows = read_results(point.folder)
    assert [json.loads(c)["n_test"] for c in rows["counters"]] == sizes * 2
    assert rows["trial"].tolist() == [0, 0, 0, 1, 1, 1] and rows["seed"].tolist() == [0, 0, 0, 1, 1, 1]
    assert (rows["predict_seconds"] > 0).all() and rows["final"].tolist() == [0, 0, 1] * 2
    for _, trial in rows.groupby("trial"):                         # one model a trial, trained once
        assert trial["iteration"].nunique() == 1 and trial["test_error"].nunique() == 1
    assert RunRecord.load(point.folder).sweep == {"predict.n_test": sizes}
    fig = gu2018.test_time(collect_results(tmp_path / "out"))
    (line,) = fig.axes[0].get_lines()
    assert list(line.get_xdata()) == sizes
    np.testing.assert_allclose(line.get_ydata(), rows.groupby(rows.index % 3)["predict_seconds"].mean())
    plt.close(fig)


def test_the_command_refuses_a_sweep_without_points_or_a_memory_limit_in_process(tmp_path, capsys):
    config = _config(tmp_path)
    for args, words in ((["sweep", str(config)], "--over"),
                        (["sweep", str(config), "--over", "dataset.n=500", "--max-memory-mb", "100"], "--processes"),
                        (["sweep", str(config), "--over", "dataset.nn=500"], "dataset.nn")):
        with pytest.raises(SystemExit) as exc:
            main(args)
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err
