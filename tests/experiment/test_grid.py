"""`kernelbench grid` / `run`: k-fold CV, parallel cells (joblib), a real local Dask cluster on
127.0.0.1, and SIGKILL + --resume. Equality is always against an uninterrupted, sequential run
with the same seeds (timing columns and run ids aside)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

TIMING = ["run_id", "train_seconds", "predict_seconds", "train_memory_mb"]
KEY = ["params", "trial", "fold", "iteration"]

GRID = """\
name: grid_test
dataset: {{name: digits86, scale: minmax}}
algorithm: {{name: dsg, params: {{batch_size: 16, block_size: 32, step: 100.0, t0: 10.0}}}}
grid: {{gamma: [0.03, 0.3], C: [1.0, 100.0]}}
trials: 2
stop: {{passes: {passes}}}
evaluate: {{every: 20, on: [objective, test_error]}}
"""


def kb(*args, env=None, check=True, timeout=300):
    proc = subprocess.run([sys.executable, "-m", "kernelbench.cli", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=timeout)
    if check:
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ, KERNELBENCH_DATA=str(tmp_path / "cache"), KERNELBENCH_OFFLINE="1")
    return e


def write_config(tmp_path, passes=3) -> Path:
    path = tmp_path / "grid.yaml"
    path.write_text(GRID.format(passes=passes))
    return path


def only_folder(out: Path) -> Path:
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 1, folders
    return folders[0]


def comparable(folder: Path) -> pd.DataFrame:
    df = pd.read_csv(folder / "results.csv", keep_default_na=False, dtype=str)
    return df.drop(columns=TIMING).sort_values(KEY).reset_index(drop=True)


def test_grid_rows_cv_and_refit(tmp_path, env):
    config = write_config(tmp_path)
    kb("grid", config, "--cv", 3, "--out", tmp_path / "out", "-q", env=env)
    df = pd.read_csv(only_folder(tmp_path / "out") / "results.csv")
    cv = df[df["fold"].notna()]
    assert len(cv) == 4 * 3                                   # 4 cells × 3 folds, one row each
    assert cv.groupby("params")["fold"].apply(sorted).map(list).tolist() == [[0, 1, 2]] * 4
    assert (cv["final"] == 1).all()
    refit = df[df["fold"].isna()]
    assert sorted(refit["trial"].unique()) == [0, 1] and refit["params"].nunique() == 1
    # the refit cell is the one with the lowest mean validation error
    means = cv.groupby("params")["test_error"].mean()
    assert refit["params"].iloc[0] == means.idxmin()


def test_parallel_jobs_equal_the_sequential_run(tmp_path, env):
    config = write_config(tmp_path)
    kb("grid", config, "--cv", 3, "--out", tmp_path / "seq", "-q", env=env)
    kb("grid", config, "--cv", 3, "--out", tmp_path / "par", "-q", "--jobs", 2, env=env)
    pd.testing.assert_frame_equal(comparable(only_folder(tmp_path / "seq")),
                                  comparable(only_folder(tmp_path / "par")))


@pytest.mark.slow          # starts a Dask cluster (scheduler + workers)
def test_dask_cluster_equals_the_local_run(tmp_path, env):
    distributed = pytest.importorskip("distributed")
    config = write_config(tmp_path)
    kb("grid", config, "--cv", 3, "--out", tmp_path / "local", "-q", env=env)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        proc = kb("grid", config, "--cv", 3, "--out", tmp_path / "dask", "-q",
                  "--scheduler", cluster.scheduler_address, env=env)
    local, remote = only_folder(tmp_path / "local"), only_folder(tmp_path / "dask")
    pd.testing.assert_frame_equal(comparable(local), comparable(remote))
    assert "best:" in proc.stdout


@pytest.mark.slow          # waits out the scheduler connection's timeout
def test_unreachable_scheduler_is_a_clear_error(tmp_path, env):
    proc = kb("grid", write_config(tmp_path), "--cv", 3, "--out", tmp_path / "out",
              "--scheduler", "tcp://127.0.0.1:9", env=env, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "Dask scheduler" in proc.stderr


def rows_written(out: Path) -> int:
    folders = [p for p in out.glob("*") if p.is_dir()] if out.exists() else []
    try:
        return max(0, len((folders[0] / "results.csv").read_text().splitlines()) - 1)
    except (IndexError, FileNotFoundError):        # the folder is made just before its CSV
        return 0


@pytest.mark.slow          # kills and resumes whole runs many times
@pytest.mark.parametrize("command", ["grid", "run"])
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path, env, command):
    config = write_config(tmp_path, passes=40)                # long enough to kill mid-way
    extra = ["--cv", 3] if command == "grid" else []
    kb(command, config, *extra, "--out", tmp_path / "whole", "-q", env=env)

    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "kernelbench.cli", command, str(config), *map(str, extra),
                             "--out", str(out), "-q"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while rows_written(out) < 5 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "the run finished before it could be killed; make it longer"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    folder = only_folder(out)
    import json
    assert json.loads((folder / "run.json").read_text())["status"] == "running"   # not finished

    resumed = kb(command, config, *extra, "--out", out, "-q", "--resume", env=env)
    assert "resuming" in resumed.stderr
    assert only_folder(out) == folder                          # the same folder, completed
    meta = json.loads((folder / "run.json").read_text())
    assert meta["status"] == "finished" and len(meta["resumed"]) == 1
    pd.testing.assert_frame_equal(comparable(only_folder(tmp_path / "whole")), comparable(folder))


def test_resume_with_nothing_to_resume_starts_a_new_run(tmp_path, env):
    proc = kb("run", write_config(tmp_path), "--out", tmp_path / "out", "-q", "--resume", env=env)
    assert "nothing to resume" in proc.stderr
    assert only_folder(tmp_path / "out")


def test_a_time_limit_alone_stops_every_cell(tmp_path, env):
    """stop: {seconds} with CV cells (no curve): the clock is read between one-pass chunks, so
    the grid ends instead of running one endless chunk."""
    config = tmp_path / "secs.yaml"
    config.write_text("dataset: {name: digits86}\nalgorithm: {name: dsg, params: {batch_size: 16}}\n"
                      "grid: {C: [1.0]}\nstop: {seconds: 0.2}\nevaluate: {every: 50, on: [test_error]}\n")
    proc = kb("grid", config, "--cv", 2, "--out", tmp_path / "out", "-q", env=env, timeout=120)
    df = pd.read_csv(only_folder(tmp_path / "out") / "results.csv")
    cv = df[df["fold"].notna()]
    assert len(cv) == 2 and (cv["train_seconds"] >= 0.2).all() and (cv["train_seconds"] < 5).all()
    assert "best:" in proc.stdout


# ------------------------------------------------------------------ `then:`: a second search stage

THEN = GRID.format(passes=1).replace("name: grid_test", "name: then_test") + \
    "then: {batch_size: [8, 16, 32]}\n"          # the config's batch_size (16) is one of them


def fold_means(cv: pd.DataFrame) -> pd.Series:
    """Mean validation error per cell, from the CV rows of results.csv (params as sorted JSON)."""
    return cv.groupby("params")["test_error"].mean()


def test_then_searches_the_second_stage_with_the_first_stage_best_fixed(tmp_path, env):
    import json

    config = tmp_path / "then.yaml"
    config.write_text(THEN)
    proc = kb("grid", config, "--cv", 3, "--out", tmp_path / "out", "-q", env=env)
    folder = only_folder(tmp_path / "out")
    df = pd.read_csv(folder / "results.csv")
    assert (df["status"] == "ok").all()
    cv, refit = df[df["fold"].notna()], df[df["fold"].isna() & (df["final"] == 1)]
    params = cv["params"].map(json.loads)
    # stage 1: the 2 × 2 grid at the config's batch_size; recomputed from the rows, independently
    stage1 = fold_means(cv[params.map(lambda p: p["batch_size"] == 16)])
    assert len(stage1) == 4
    best1 = json.loads(stage1.idxmin())
    assert stage1.min() == stage1[stage1.idxmin()]
    # stage 2: every cell with another batch_size carries the stage-1 best C and gamma
    others = params[params.map(lambda p: p["batch_size"] != 16)]
    assert len(others) == 2 * 3 and all((p["C"], p["gamma"]) == (best1["C"], best1["gamma"]) for p in others)
    same = params.map(lambda p: (p["C"], p["gamma"]) == (best1["C"], best1["gamma"]))
    stage2 = fold_means(cv[same])
    assert sorted(json.loads(p)["batch_size"] for p in stage2.index) == [8, 16, 32]
    # the refit is the argmin of stage 2 (a tie: any of the tied cells)
    assert refit["params"].nunique() == 1 and sorted(refit["trial"]) == [0, 1]
    assert stage2[refit["params"].iloc[0]] == stage2.min()
    meta = json.loads((folder / "run.json").read_text())
    assert [row["stage"] for row in meta["cells"]] == [1] * 4 + [2] * 3
    chosen = json.loads(refit["params"].iloc[0])
    assert meta["best"]["stage"] == 2 and meta["best"]["params"] == \
        {k: chosen[k] for k in ("C", "gamma", "batch_size")}
    means = {tuple(json.loads(p)[k] for k in ("C", "gamma", "batch_size")): m for p, m in fold_means(cv).items()}
    for row in meta["cells"]:         # run.json's table: the same fold means
        values = {"batch_size": 16, **row["params"]}
        assert row["mean_test_error"] == pytest.approx(means[tuple(values[k] for k in ("C", "gamma", "batch_size"))])
    lines = proc.stdout.splitlines()
    assert any(line.startswith("then:") for line in lines) and any(line.startswith("best: C=") for line in lines)


def test_a_run_killed_in_the_second_stage_resumes_to_the_same_result(tmp_path, env):
    """Cell keys are (params, trial, fold): a run holding stage 1 and part of stage 2 resumes."""
    import json
    import shutil

    config = tmp_path / "then.yaml"
    config.write_text(THEN)
    kb("grid", config, "--cv", 3, "--out", tmp_path / "whole", "-q", env=env)
    whole = only_folder(tmp_path / "whole")
    folder = tmp_path / "killed" / whole.name
    shutil.copytree(whole, folder)
    lines = (folder / "results.csv").read_text().splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    df = pd.read_csv(folder / "results.csv")
    # keep stage 1 and one stage-2 cell (its 3 folds); drop the other stage-2 cell and the refit
    stage2 = df["params"].map(lambda p: json.loads(p)["batch_size"] != 16) & df["fold"].notna()
    kept_stage2 = sorted(df.loc[stage2, "params"].unique())[0]
    keep = (~stage2 & df["fold"].notna()) | (df["params"] == kept_stage2)
    (folder / "results.csv").write_text(header + "".join(r for r, k in zip(rows, keep) if k))
    meta = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**meta, "status": "running"}))

    resumed = kb("grid", config, "--cv", 3, "--out", tmp_path / "killed", "-q", "--resume", env=env)
    assert f"({4 * 3 + 3} finished cells kept)" in resumed.stderr
    assert only_folder(tmp_path / "killed") == folder
    pd.testing.assert_frame_equal(comparable(whole), comparable(folder))
    again = json.loads((folder / "run.json").read_text())
    assert again["cells"] == meta["cells"] and again["best"] == meta["best"]


def test_run_refuses_a_then_stage(tmp_path, env):
    config = tmp_path / "then.yaml"
    config.write_text(THEN)
    proc = kb("run", config, "--out", tmp_path / "out", "-q", env=env, check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "then:" in proc.stderr and "kernelbench grid" in proc.stderr
    assert not (tmp_path / "out").exists()


def test_an_algorithm_that_refuses_the_refit_is_skipped_without_a_search(tmp_path, env):
    """An O(n²) baseline above its max_points on the whole training part: clean "skipped" refit
    rows, one per trial, and no fold trained (a best it could not be refitted with is not searched)."""
    import json

    config = tmp_path / "skip.yaml"
    config.write_text("dataset: {name: digits86, labeled: 20}\n"
                      "algorithm: {name: tsvm-ls, params: {max_points: 50}}\n"
                      "grid: {C: [1.0, 10.0]}\ntrials: 2\n")
    proc = kb("grid", config, "--cv", 2, "--out", tmp_path / "out", "-q", env=env)
    folder = only_folder(tmp_path / "out")
    df = pd.read_csv(folder / "results.csv")
    assert len(df) == 2 and (df["status"] == "skipped").all() and df["fold"].isna().all()
    assert sorted(df["trial"]) == [0, 1] and df["message"].str.contains("max_points").all()
    meta = json.loads((folder / "run.json").read_text())
    assert meta["status"] == "finished" and meta["best"] is None and meta["cells"] == []
    assert [r["status"] for r in meta["refit"]] == ["skipped", "skipped"]
    assert "max_points" in meta["skipped"] and "no search" in proc.stdout


def test_a_best_cell_on_the_edge_of_the_grid_is_flagged_with_the_way_to_extend_it(tmp_path, env):
    """fourclass_scale (2-D, a curved boundary, shipped) with a fixed gamma: an exact SVM's error falls as C
    grows from 0.01 (nearly a constant classifier) to 1, so the best cell is the largest C tried."""
    config = tmp_path / "edge.yaml"
    config.write_text("dataset: {name: fourclass_scale}\nalgorithm: {name: libsvm, params: {gamma: 10.0}}\n"
                      "grid: {C: [0.01, 0.1, 1.0]}\n")
    proc = kb("grid", config, "--cv", 3, "--out", tmp_path / "out", "-q", env=dict(env, KERNELBENCH_MIRROR=""))
    lines = proc.stdout.splitlines()
    assert lines[0] == "3 cells, each scored by 3-fold cross-validation on the training part", lines
    assert lines[1].split() == ["C", "validation", "error:", "mean", "±", "std", "(folds)"]
    assert [line.split()[0] for line in lines[2:5]] == ["0.01", "0.1", "1"]
    assert all(re.fullmatch(r"\S+ +0\.\d{4} ± 0\.\d{4} \(3\)", line) for line in lines[2:5]), lines
    assert lines[5].startswith("best: C=1: validation error 0.")
    assert lines[6] == ("warning: the best cell lies on the edge of the grid: C=1 is the largest value tried; "
                        "extend the values of C above it and search again")


def test_the_edge_check_looks_at_each_numeric_axis_of_three_values_or_more():
    from kernelbench.cli.summaries import edge_warnings

    axes = {"C": [0.1, 1.0, 10.0], "gamma": [0.5, 1.0], "loss": ["hinge", "logistic", "squared"]}
    assert edge_warnings(axes, {"C": 1.0, "gamma": 1.0, "loss": "squared"}) == []
    (warning,) = edge_warnings(axes, {"C": 0.1, "gamma": 1.0, "loss": "hinge"})
    assert "C=0.1 is the smallest value tried" in warning and "below it" in warning
