"""Crash safety, concurrency, full disk and determinism of `kernelbench run`.

* SIGKILL at random moments, repeatedly, on one run folder: after every kill results.csv has no
  torn or duplicated row and run.json says the run did not finish; `--resume` completes it and
  the result equals an uninterrupted run's (timing columns and run_id aside).
* Several processes at once on one --out folder and one fresh dataset cache that must parse a
  file: all exit 0, distinct run folders, well-formed CSVs, and an uncorrupted cache entry.
* A full disk: an OutputError naming the path, earlier rows intact.
* Determinism: threads = 1 and the same seed give the same results.csv across processes and
  after the cache is deleted and rebuilt.
"""
from __future__ import annotations

import errno
import json
import lzma
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import (MIRROR, ROW_KEY, assert_user_error, check_results_file, comparable, describe, env_for,
                      figure, kb, run_folders)

KILL_CONFIG = """\
name: killme
dataset: {{name: digits86, scale: minmax}}
algorithm: {{name: dsg, params: {{batch_size: 16, block_size: 32, step: 100.0, t0: 10.0, threads: 1}}}}
grid: {{gamma: [0.03, 0.3], C: [1.0, 100.0]}}
trials: 2
seed: 3
stop: {{passes: {passes}}}
evaluate: {{every: 20, on: [objective, test_error]}}
"""


def _rows(out: Path) -> int:
    folders = run_folders(out)
    try:
        return max(0, len((folders[0] / "results.csv").read_bytes().splitlines()) - 1)
    except (IndexError, FileNotFoundError):
        return 0


def _kill_cycle(tmp_path, kill_points: int, seed: int):
    env = env_for(tmp_path / "cache")
    config = tmp_path / "kill.yaml"
    config.write_text(KILL_CONFIG.format(passes=12))
    whole = kb("run", config, "--out", tmp_path / "whole", "-q", env=env)
    assert whole.returncode == 0, describe(whole)
    (whole_folder,) = run_folders(tmp_path / "whole")
    total_rows = len(check_results_file(whole_folder / "results.csv"))

    rng = random.Random(seed)
    out = tmp_path / "killed"
    tried = killed = attempts = 0
    while killed < kill_points and attempts < kill_points * 4:
        attempts += 1
        args = ["run", str(config), "--out", str(out), "-q"] + (["--resume"] if run_folders(out) else [])
        before = _rows(out)
        proc = subprocess.Popen([sys.executable, "-m", "kernelbench.cli", *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        # a random moment: after a random number of new rows, plus a random extra delay
        target = before + rng.randint(0, 12)
        deadline = time.monotonic() + 60
        while _rows(out) < target and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.05))
        tried += 1
        if proc.poll() is not None:              # finished before the kill point: start over
            assert proc.returncode == 0, proc.stderr.read()[-3000:]
            shutil.rmtree(out)
            continue
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        folders = run_folders(out)
        meta_file = folders[0] / "run.json" if folders else None
        if meta_file is not None and meta_file.exists() and \
                json.loads(meta_file.read_text())["status"] == "finished":
            # the kill landed after the run had written its last row and closed: only a complete
            # run may say so; it counts as finished before the kill point
            assert len(check_results_file(folders[0] / "results.csv")) == total_rows
            shutil.rmtree(out)
            continue
        killed += 1
        # --resume reuses the folder; none yet when the kill came before the run created it
        # (a kill point at 0 rows after a few ms: seed 2's first draw)
        assert len(folders) <= 1, folders
        if folders and (folders[0] / "results.csv").exists():
            check_results_file(folders[0] / "results.csv")
        if folders and (folders[0] / "run.json").exists():
            assert json.loads((folders[0] / "run.json").read_text())["status"] == "running"
    assert killed == kill_points, f"only {killed} of {attempts} attempts were killed mid-run"
    final = kb("run", config, "--out", out, "-q", "--resume", env=env)
    assert final.returncode == 0, describe(final)
    (folder,) = run_folders(out)
    meta = json.loads((folder / "run.json").read_text())
    assert meta["status"] == "finished"
    rows = check_results_file(folder / "results.csv")
    expected = {tuple(r[k] for k in ROW_KEY) for r in check_results_file(whole_folder / "results.csv")}
    lost = len(expected - {tuple(r[k] for k in ROW_KEY) for r in rows})
    fig = figure("crash safety (SIGKILL)")
    fig["kill points tried"] += tried
    fig["processes killed"] += killed
    fig["rows lost"] += lost
    print(f"\nSIGKILL: {tried} kill points tried, {killed} runs killed mid-way, {lost} rows lost "
          f"of {total_rows}")
    assert lost == 0
    pd.testing.assert_frame_equal(comparable(whole_folder), comparable(folder))


@pytest.mark.slow          # five killed runs and their resumes (the fast tier kills a grid's second stage)
def test_sigkill_at_random_moments_then_resume(tmp_path):
    _kill_cycle(tmp_path, kill_points=5, seed=20240601)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_sigkill_many_times(tmp_path, seed):
    _kill_cycle(tmp_path, kill_points=15, seed=seed)


# ------------------------------------------------------------------------------ concurrency

CONC_CONFIG = """\
name: conc
dataset: {{name: heart_scale, scale: standard, test: 0.25}}
algorithm: {{name: dsg, params: {{batch_size: 8, block_size: 16, gamma: 0.1, threads: 1}}}}
trials: {trials}
seed: 1
stop: {{passes: 2}}
evaluate: {{every: 5, on: [objective, test_error]}}
"""


def _private_mirror(tmp_path) -> Path:
    src = MIRROR / "heart_scale.xz"
    if not src.is_file():
        pytest.skip(f"{src} is not staged (set KERNELBENCH_MIRROR)")
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    shutil.copy(src, mirror / "heart_scale.xz")
    return mirror


@pytest.mark.parametrize("n_procs", [3, pytest.param(6, marks=pytest.mark.slow)])
def test_concurrent_runs_share_out_folder_and_fresh_cache(tmp_path, n_procs):
    mirror = _private_mirror(tmp_path)
    cache = tmp_path / "cache"
    env = env_for(cache, mirror=mirror)
    config = tmp_path / "conc.yaml"
    config.write_text(CONC_CONFIG.format(trials=2))
    out = tmp_path / "out"
    procs = [subprocess.Popen([sys.executable, "-m", "kernelbench.cli", "run", str(config), "--out", str(out), "-q"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(n_procs)]
    results = [(p.wait(timeout=300), *p.communicate()) for p in procs]
    for rc, stdout, stderr in results:
        assert rc == 0 and "Traceback" not in stderr, stderr[-3000:]
    folders = run_folders(out)
    assert len(folders) == n_procs                       # distinct run folders
    frames = []
    for folder in folders:
        rows = check_results_file(folder / "results.csv")
        assert {r["run_id"] for r in rows} == {folder.name}
        assert json.loads((folder / "run.json").read_text())["status"] == "finished"
        frames.append(comparable(folder))
    for frame in frames[1:]:                             # same config, same seed: the same rows
        pd.testing.assert_frame_equal(frames[0], frame)

    # the cache: one parsed entry, and it loads identically to a fresh parse of the file
    from sklearn.datasets import load_svmlight_file

    from kernelbench.data.parse import load_arrays
    entries = [p for p in (cache / "parsed").iterdir() if not p.name.startswith(".tmp-")]
    leftovers = [p for p in (cache / "parsed").iterdir() if p.name.startswith(".tmp-")]
    corrupt = 0
    with lzma.open(mirror / "heart_scale.xz", "rb") as fh:          # the fresh truth: scikit-learn's reader
        fresh_X, fresh_y = load_svmlight_file(fh, n_features=13, zero_based=False)
    fresh_X = fresh_X.toarray()
    for entry in entries:
        X, y, _meta = load_arrays(entry)
        if not (np.array_equal(np.asarray(X), fresh_X) and np.array_equal(np.asarray(y), fresh_y)):
            corrupt += 1
    fig = figure("concurrency")
    fig["processes"] += n_procs
    fig["cache corruptions"] += corrupt + len(leftovers)
    print(f"\nconcurrency: {n_procs} processes, {len(entries)} cache entries, {corrupt} corrupt, "
          f"{len(leftovers)} temporary leftovers")
    assert len(entries) == 1 and corrupt == 0 and not leftovers
    assert not list(cache.glob("*.part"))


# ------------------------------------------------------------------------------ full disk

SMALL = """\
name: disk
dataset: {name: digits86, scale: minmax}
algorithm: {name: dsg, params: {batch_size: 16, block_size: 16, gamma: 0.1, threads: 1}}
trials: 1
stop: {iterations: 30}
evaluate: {every: 5, on: [objective, test_error]}
"""


def test_full_disk_in_process_is_output_error_and_keeps_earlier_rows(tmp_path, monkeypatch):
    """ENOSPC on the 4th row append: OutputError naming results.csv; rows 1-3 intact."""
    from kernelbench.results import writing as results_module
    from kernelbench.errors import OutputError
    from kernelbench.results import Run

    run = Run.create(tmp_path, "disk", {"x": 1})
    real_write = os.write
    calls = {"n": 0}

    def write(fd, data):
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")) == "results.csv":
            calls["n"] += 1
            if calls["n"] == 4:
                real_write(fd, bytes(data)[:7])        # part of the row lands, then the disk is full
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(results_module.os, "write", write)
    for i in range(3):
        run.append({"params": {"a": 1}, "trial": 0, "iteration": i, "objective": 0.5})
    with pytest.raises(OutputError) as info:
        run.append({"params": {"a": 1}, "trial": 0, "iteration": 3, "objective": 0.5})
    assert str(run.results_path) in str(info.value) and "disk is full" in str(info.value)
    monkeypatch.undo()
    rows = check_results_file(run.results_path)
    assert [r["iteration"] for r in rows] == ["0", "1", "2"]


def test_results_to_dev_full_is_exit_2_naming_the_path(tmp_path):
    """A run whose results.csv is /dev/full (every write: ENOSPC): exit 2, the path in the message."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    code = (
        "import os, sys\n"
        "from kernelbench import results as r\n"
        "real = r.Run.create.__func__\n"
        "def create(cls, *a, **k):\n"
        "    run = real(cls, *a, **k)\n"
        "    os.replace(run.results_path, run.path / 'kept.csv')\n"
        "    os.symlink('/dev/full', run.results_path)\n"
        "    return run\n"
        "r.Run.create = classmethod(create)\n"
        "from kernelbench.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    config = tmp_path / "disk.yaml"
    config.write_text(SMALL)
    proc = subprocess.run([sys.executable, "-c", code, "run", str(config), "--out", str(tmp_path / "out"), "-q"],
                          env=env_for(tmp_path / "cache"), capture_output=True, text=True, timeout=120)
    (folder,) = run_folders(tmp_path / "out")
    assert_user_error(proc, folder / "results.csv")
    assert "No space left" in proc.stderr or "disk is full" in proc.stderr
    assert json.loads((folder / "run.json").read_text())["status"] == "failed"


# ------------------------------------------------------------------------------ determinism

def test_same_seed_threads_1_is_identical_across_processes_and_cache_rebuilds(tmp_path):
    mirror = _private_mirror(tmp_path)
    cache = tmp_path / "cache"
    env = env_for(cache, mirror=mirror)
    config = tmp_path / "det.yaml"
    config.write_text(CONC_CONFIG.format(trials=2))
    folders = []
    for i in range(3):
        if i == 2:
            shutil.rmtree(cache)                    # rebuild the parsed cache from the file
        proc = kb("run", config, "--out", tmp_path / f"out{i}", "-q", "--threads", 1, env=env)
        assert proc.returncode == 0, describe(proc)
        (folder,) = run_folders(tmp_path / f"out{i}")
        folders.append(folder)
    assert (cache / "parsed").is_dir()
    frames = [comparable(f) for f in folders]
    assert len(frames[0]) > 0 and (frames[0]["threads"] == "1").all()
    identical = all(frames[0].equals(f) for f in frames[1:])
    figure("determinism")["identical runs (of 3, incl. cache rebuild)"] = 1 + sum(frames[0].equals(f) for f in frames[1:])
    for frame in frames[1:]:
        pd.testing.assert_frame_equal(frames[0], frame)
    assert identical
