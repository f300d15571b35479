"""The CLI's side of downloads: a large download that `run`, `sweep` or `bench` would start is
refused without a terminal unless --yes is given (exit 2, naming --yes and `datasets fetch`), and a
file that changed since its hash was recorded on first use is exit 2 with both hashes and the fix."""
from __future__ import annotations

import bz2
import hashlib
import os
import pty
import select
import subprocess
import sys
import json
import time
from pathlib import Path

import pytest

from flaky_server import registry_text

REPO = Path(__file__).resolve().parents[2]
ROWS = b"".join(b"%d 1:%d.5 2:%d 3:0.%03d\n" % (1 if i % 3 else -1, i % 7, i % 5, (37 * i) % 1000)
                for i in range(400))
BODY = bz2.compress(ROWS)
CONFIG = """
name: toy-download
dataset: {name: toy, test: official, scale: minmax}
algorithm:
  name: dsg
  params: {loss: hinge, gamma: 1.0, C: 1.0, batch_size: 16, block_size: 16, step: 1.0, t0: 10.0}
trials: 1
seed: 0
stop: {passes: 1}
evaluate: {every: 5, on: [test_error]}
"""


@pytest.fixture
def setup(tmp_path, server):
    server.routes["/toy.bz2"] = BODY
    registry = tmp_path / "registry.yaml"
    registry.write_text(registry_text(server.base + "/toy.bz2", None, n=400))
    config = tmp_path / "toy.yaml"
    config.write_text(CONFIG)
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy") and k != "KERNELBENCH_OFFLINE"}
    env.update(KERNELBENCH_DATA=str(tmp_path / "cache"), KERNELBENCH_MIRROR=str(tmp_path / "no-mirror"),
               KERNELBENCH_REGISTRY=str(registry), KERNELBENCH_ALLOW_HTTP_LOOPBACK="1", NO_PROXY="127.0.0.1",
               KERNELBENCH_CONFIRM_ABOVE="100", KERNELBENCH_DOWNLOAD_BACKOFF="0.01", COLUMNS="250",
               OMP_NUM_THREADS="1")
    return {"config": config, "env": env, "cache": tmp_path / "cache", "out": tmp_path / "out"}


def kb(setup, *args):
    # stdin is not a terminal: nobody can be asked
    return subprocess.run([sys.executable, "-m", "kernelbench.cli", *map(str, args)], cwd=REPO, env=setup["env"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)


def test_run_refuses_a_large_download_without_a_terminal_then_yes_downloads(setup, server):
    proc = kb(setup, "run", setup["config"], "--out", setup["out"], "-q")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "--yes" in proc.stderr and "kernelbench datasets fetch toy" in proc.stderr
    assert len(BODY) < 1000 and f"{len(BODY)} bytes" in proc.stderr and "Traceback" not in proc.stderr
    assert server.gets() == [] and not (setup["cache"] / "toy.bz2").exists()
    assert not setup["out"].exists()

    proc = kb(setup, "run", setup["config"], "--out", setup["out"], "-q", "--yes")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (setup["cache"] / "toy.bz2").read_bytes() == BODY
    assert (next(setup["out"].iterdir()) / "results.csv").is_file()


def test_sweep_refuses_a_large_download_without_yes_and_passes_yes_to_its_point_processes(setup, server):
    """Every point's data is fetched before the first point runs; with --processes a point is a
    child `kernelbench run`, and it is given --yes too (its run.json records its command line)."""
    sweep = ["sweep", setup["config"], "--over", "dataset.subsample=300", "--out", setup["out"], "-q"]
    proc = kb(setup, *sweep)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "--yes" in proc.stderr and "kernelbench datasets fetch toy" in proc.stderr and "Traceback" not in proc.stderr
    assert server.gets() == [] and not (setup["cache"] / "toy.bz2").exists()
    assert not setup["out"].exists()

    proc = kb(setup, *sweep, "--processes", "--yes")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (setup["cache"] / "toy.bz2").read_bytes() == BODY
    (folder,) = setup["out"].iterdir()
    record = json.loads((folder / "run.json").read_text())
    assert record["sweep"] == {"dataset.subsample": 300} and record["status"] == "finished"
    assert record["command"][record["command"].index("run") + 1] == str(setup["config"])   # the child's own run
    assert "--yes" in record["command"]


def test_bench_refuses_a_large_download_without_yes(setup, server, tmp_path):
    """equal-time reads its configs' own data set: configs/toy_dsg_gu2018.yaml here."""
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "toy_dsg_gu2018.yaml").write_text(setup["config"].read_text())
    bench = ["bench", "equal-time", "--dataset", "toy", "--only", "dsg_gu2018", "--seconds", "0.5",
             "--configs", configs, "--out", setup["out"]]
    proc = kb(setup, *bench)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "--yes" in proc.stderr and "kernelbench datasets fetch toy" in proc.stderr and "Traceback" not in proc.stderr
    assert server.gets() == [] and not setup["out"].exists()

    proc = kb(setup, *bench, "-y")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (setup["cache"] / "toy.bz2").read_bytes() == BODY
    (folder,) = (setup["out"] / "runs").iterdir()
    record = json.loads((folder / "run.json").read_text())
    assert record["status"] == "finished" and record["config"]["dataset"]["name"] == "toy"


def test_datasets_fetch_downloads_without_asking_and_a_changed_file_is_exit_2(setup, server):
    proc = kb(setup, "datasets", "fetch", "toy", "-q")
    assert proc.returncode == 0, proc.stderr[-3000:]
    cached = setup["cache"] / "toy.bz2"
    assert proc.stdout.startswith(str(cached)) and "recorded on first use (not pinned)" in proc.stdout
    assert "verified" not in proc.stdout

    listing = kb(setup, "datasets", "list")
    assert listing.returncode == 0 and " recorded " in next(line for line in listing.stdout.splitlines()
                                                           if line.startswith("toy "))

    changed = ROWS.replace(b"1:0.5", b"1:9.5", 1)
    cached.write_bytes(bz2.compress(changed))
    proc = kb(setup, "datasets", "fetch", "toy", "-q")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    message = proc.stderr
    assert str(cached) in message and hashlib.sha256(ROWS).hexdigest() in message
    assert hashlib.sha256(changed).hexdigest() in message and "delete" in message


def _answer_on_a_terminal(setup, answer: bytes, *args):
    """Run the command with stdin and stderr on a pseudo-terminal; answer its question with `answer`."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "kernelbench.cli", *map(str, args)], cwd=REPO, env=setup["env"],
                            stdin=slave, stderr=slave, stdout=subprocess.PIPE)
    os.close(slave)
    seen, deadline = b"", time.monotonic() + 120
    try:
        while b"[y/N]" not in seen and time.monotonic() < deadline and proc.poll() is None:
            if select.select([master], [], [], 0.2)[0]:
                seen += os.read(master, 4096)
        os.write(master, answer + b"\n")
        proc.wait(timeout=180)
        while select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 4096)
            except OSError:          # the other end closed
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, seen.decode(errors="replace")


def test_on_a_terminal_the_download_is_asked_for(setup, server):
    rc, terminal = _answer_on_a_terminal(setup, b"n", "run", setup["config"], "--out", setup["out"], "-q")
    assert "[y/N]" in terminal and f"toy.bz2, {len(BODY)} bytes" in terminal
    assert rc == 2 and "--yes" in terminal and not (setup["cache"] / "toy.bz2").exists()
    rc, terminal = _answer_on_a_terminal(setup, b"y", "run", setup["config"], "--out", setup["out"], "-q")
    assert rc == 0, terminal[-3000:]
    assert (setup["cache"] / "toy.bz2").read_bytes() == BODY
