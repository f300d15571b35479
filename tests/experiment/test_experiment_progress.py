"""Long runs stay legible: an overall bar over cells with ETA on a terminal, Ctrl-C
says what was kept and how to resume (exit 130), and a large test part is predicted in row
chunks, on the cell's cores where the estimator allows it, with the same predictions as one call.

Truths: results.csv itself (row count, one final row per cell), the estimator's own one-call
prediction, the thread identities seen inside predict."""
from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import kernelbench.experiment as experiment
from kernelbench.experiment import metrics
from kernelbench.estimators import algorithms

MODES = ("internal", "rows", "serial")


@pytest.fixture
def env(tmp_path):
    e = dict(os.environ, KERNELBENCH_DATA=str(tmp_path / "cache"), KERNELBENCH_OFFLINE="1")
    e.pop("KERNELBENCH_REGISTRY", None)
    return e


def only_folder(out: Path) -> Path:
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 1, folders
    return folders[0]


def csv_rows(folder: Path) -> int:
    return len((folder / "results.csv").read_text().splitlines()) - 1


# ------------------------------------------------------------------ chunked, parallel evaluation

@pytest.mark.parametrize("name", sorted(algorithms()))
def test_chunked_prediction_equals_one_call(name, monkeypatch):
    """Every registered algorithm declares how a large part may be predicted, and the experiment loop's
    chunked (and, for "rows", threaded) prediction gives bit-identical decision values."""
    spec = algorithms()[name]
    params = dict(spec.smoke_params)
    if "threads" in spec.defaults():
        params["threads"] = 2
    est = spec.build(params, seed=0, task="binary")
    assert getattr(est, "predict_parallelism", "serial") in MODES
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(float)
    if "semi-supervised" in spec.tasks:
        y[100:] = np.nan                                   # the unlabeled rows
    est.begin(X, y)
    est.run(min(20, est.steps_per_pass))
    est.finish()
    X_test = rng.normal(size=(20_000, 6))
    # smaller parts than in a real run, with a chunk that is still a multiple of the solvers' own
    # prediction blocks, as the real PREDICT_CHUNK_ROWS is
    assert metrics.PREDICT_CHUNK_ROWS % 8192 == 0
    monkeypatch.setattr(metrics, "PREDICT_SPLIT_ROWS", 10_000)
    monkeypatch.setattr(metrics, "PREDICT_CHUNK_ROWS", 8192)
    one_call = est.decision_function(X_test)
    est.predict = est.decision_function         # compare real-valued outputs, not only labels
    assert np.array_equal(metrics.predict(est, X_test, threads=2), one_call)


class _Recorder:
    """A model whose predict records (thread, rows) and returns the row index: order visible."""

    def __init__(self, mode, barrier=None):
        self.predict_parallelism = mode
        self.calls, self.barrier = [], barrier

    def predict(self, X):
        self.calls.append((threading.get_ident(), X.shape[0]))
        if self.barrier is not None:
            self.barrier.wait(timeout=30)       # both chunks at once, or BrokenBarrierError
        return X[:, 0].copy()


def test_how_each_mode_splits_a_large_part(monkeypatch):
    monkeypatch.setattr(metrics, "PREDICT_SPLIT_ROWS", 100)
    monkeypatch.setattr(metrics, "PREDICT_CHUNK_ROWS", 64)
    X = np.arange(150, dtype=float).reshape(-1, 1)
    internal = _Recorder("internal")
    assert np.array_equal(metrics.predict(internal, X, threads=2), X[:, 0])
    assert [rows for _, rows in internal.calls] == [150]                     # one call

    serial = _Recorder("serial")
    assert np.array_equal(metrics.predict(serial, X, threads=2), X[:, 0])
    assert serial.calls == [(threading.get_ident(), 64), (threading.get_ident(), 64),
                            (threading.get_ident(), 22)]                    # in order, here

    small = _Recorder("rows")
    assert np.array_equal(metrics.predict(small, X[:100], threads=2), X[:100, 0])
    assert [rows for _, rows in small.calls] == [100]                        # not large: one call

    rows = _Recorder("rows", barrier=threading.Barrier(2))
    X2 = X[:128]
    assert np.array_equal(metrics.predict(rows, X2, threads=2), X2[:, 0])
    threads = {ident for ident, _ in rows.calls}
    assert len(rows.calls) == 2 and len(threads) == 2 and threading.get_ident() not in threads


def test_resume_command_is_the_users_command_with_resume():
    cli = str(Path(experiment.__file__).parent.parent / "cli" / "__main__.py")
    cmd = experiment.resume_command([cli, "run", "my configs/a.yaml", "--out", "res", "-j", "2"])
    argv = shlex.split(cmd)
    assert argv[1:3] == ["-m", "kernelbench.cli"]                 # `python -m kernelbench.cli`
    assert os.path.samefile(argv[0] if os.sep in argv[0] else shutil.which(argv[0]), sys.executable)
    assert argv[3:] == ["run", "my configs/a.yaml", "--out", "res", "-j", "2", "--resume"]
    again = experiment.resume_command(["/nowhere/bin/kernelbench", "grid", "c.yaml", "--resume"])
    assert shlex.split(again) == ["/nowhere/bin/kernelbench", "grid", "c.yaml", "--resume"]
    # reproduce has no --resume: called again, it resumes what it finds unfinished
    paper = experiment.resume_command(["/nowhere/bin/kernelbench", "reproduce", "dai2014", "--budget", "1h"])
    assert shlex.split(paper) == ["/nowhere/bin/kernelbench", "reproduce", "dai2014", "--budget", "1h"]


# ------------------------------------------------------------------ Ctrl-C

SLOW = """\
name: interrupt_me
dataset: {name: synthetic, shape: susy, n: 40000, n_test: 1000}
algorithm: {name: dsg, params: {batch_size: 64, block_size: 32, threads: 1}}
grid: {C: [1.0, 10.0, 100.0]}
trials: 3
stop: {passes: 1}
evaluate: {every: 100, on: [test_error]}
"""
# about 1 s per cell here, so Ctrl-C after the third row still finds ~8 s of the run left even on a
# loaded machine (with 10,000 rows the whole run took ~1 s and could end before the signal arrived)


@pytest.mark.slow          # a real process, a real SIGINT, then the resume (the fast tier resumes a SIGKILLed grid)
def test_ctrl_c_says_what_was_kept_and_the_printed_command_resumes(tmp_path, env):
    config = tmp_path / "slow config.yaml"            # a space: the command must be quoted
    config.write_text(SLOW)
    out = tmp_path / "out"
    # a test suite started in the background by a shell without job control inherits SIGINT
    # ignored, and Python then never raises KeyboardInterrupt: give the child the default disposition
    proc = subprocess.Popen([sys.executable, "-m", "kernelbench.cli", "run", str(config),
                             "--out", str(out), "-q"], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while proc.poll() is None and time.monotonic() < deadline:
        folders = [p for p in out.glob("*") if (p / "results.csv").exists()]
        if folders and csv_rows(folders[0]) >= 3:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before Ctrl-C; make it longer"
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    folder = only_folder(out)
    assert json.loads((folder / "run.json").read_text())["status"] == "interrupted"
    kept = re.search(r"interrupted: (.+results\.csv) keeps (\d+) rows; (\d+) of 9 cells finished",
                     stderr)
    assert kept, stderr
    assert Path(kept.group(1)).resolve() == (folder / "results.csv").resolve()
    assert int(kept.group(2)) == csv_rows(folder)
    df = pd.read_csv(folder / "results.csv")
    assert int(kept.group(3)) == int((df["final"] == 1).sum())
    command = re.search(r"^kernelbench: to resume: (.+)$", stderr, re.M)
    assert command and command.group(1).endswith("--resume"), stderr

    resumed = subprocess.run(shlex.split(command.group(1)), env=env, cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resuming" in resumed.stderr
    assert only_folder(out) == folder
    assert json.loads((folder / "run.json").read_text())["status"] == "finished"
    df = pd.read_csv(folder / "results.csv")
    key = ["params", "trial", "fold", "iteration"]
    assert not df.duplicated(key).any()                               # no cell written twice
    finals = df[df["final"] == 1].groupby(["params", "trial"]).size()
    assert len(finals) == 9 and (finals == 1).all()
    assert df.groupby(["params", "trial"]).size().nunique() == 1      # every curve complete


# ------------------------------------------------------------------ progress on a terminal

SMALL = """\
name: bars
dataset: {name: digits86, scale: minmax}
algorithm: {name: dsg, params: {batch_size: 16, block_size: 32, step: 100.0, t0: 10.0}}
grid: {C: [1.0, 10.0]}
trials: 2
stop: {passes: 1}
evaluate: {every: 20, on: [test_error]}
"""


def run_on_a_terminal(args, env, cwd) -> tuple[int, str]:
    """The CLI with stderr on a pseudo-terminal (160 columns); returns (exit code, stderr)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "kernelbench.cli", *map(str, args)], env=env,
                            cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=slave)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:                                   # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=300), b"".join(chunks).decode("utf-8", "replace")


def test_an_overall_bar_over_cells_with_eta(tmp_path, env):
    config = tmp_path / "bars.yaml"
    config.write_text(SMALL)
    code, stderr = run_on_a_terminal(["run", config, "--out", tmp_path / "out"], env, tmp_path)
    assert code == 0, stderr[-3000:]
    assert re.search(r"cells: +\d+%.*\| 4/4 \[\d\d:\d\d<\d\d:\d\d", stderr), stderr[-3000:]
    assert "C=10 trial 1" in stderr                        # the cell in progress
    assert re.search(r"\| [12]/4 \[\d\d:\d\d<\d\d:\d\d, +[\d.]+(s/cell|cell/s)", stderr)   # an ETA mid-run
    assert "dsg trial 0" in stderr                          # the nested iteration bar


def test_parallel_cells_and_refit_have_their_bars(tmp_path, env):
    config = tmp_path / "bars.yaml"
    config.write_text(SMALL)
    code, stderr = run_on_a_terminal(["grid", config, "--cv", 2, "--jobs", 2, "--out", tmp_path / "out"],
                                     env, tmp_path)
    assert code == 0, stderr[-3000:]
    assert re.search(r"grid: +100%.*\| 4/4 ", stderr), stderr[-3000:]       # 2 cells × 2 folds
    assert re.search(r"refit: +100%.*\| 2/2 ", stderr), stderr[-3000:]
    assert re.search(r"last: C=(1|10) trial 0 fold [01]", stderr)


# ------------------------------------------------------------------ a timed chunk runs in pieces

@pytest.mark.parametrize("name", sorted(algorithms()))
def test_running_in_pieces_equals_one_call(name):
    """The experiment loop runs a timed chunk in pieces (so Ctrl-C and a time limit are seen during a long
    pass): for every registered algorithm, run(a) + run(b) + run(c) leaves the same model as
    run(a + b + c), on one thread."""
    spec = algorithms()[name]
    params = dict(spec.smoke_params)
    if "threads" in spec.defaults():
        params["threads"] = 1
    rng = np.random.default_rng(1)
    X = rng.normal(size=(240, 5))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(float)
    if "semi-supervised" in spec.tasks:
        y[80:] = np.nan
    X_test = rng.normal(size=(200, 5))
    decisions = []
    for pieces in ([12], [5, 1, 6]):
        est = spec.build(params, seed=3, task="binary")
        est.begin(X, y)
        total = min(12, est.steps_per_pass * 2)
        scale = total / 12
        for k in pieces:
            est.run(max(1, round(k * scale)) if k != pieces[-1] else total - est.n_iter_)
            if est.converged_:
                break
        decisions.append(est.decision_function(X_test))
        est.finish()
    np.testing.assert_array_equal(decisions[0], decisions[1])
