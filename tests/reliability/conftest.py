"""Shared helpers of the reliability suite: subprocess runner, CSV checks, and the
figures the suite measures (counts, rates), printed at the end of the pytest run."""
from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
MIRROR = Path((os.environ.get("KERNELBENCH_MIRROR") or "").split(os.pathsep)[0]
              or REPO.parent / "shared" / "datasets")
TIMING = ["run_id", "train_seconds", "predict_seconds", "train_memory_mb"]
ROW_KEY = ["params", "trial", "fold", "iteration"]

# figure name -> Counter / value; filled by the tests, printed by pytest_terminal_summary
FIGURES: dict = {}


def figure(name: str) -> Counter:
    return FIGURES.setdefault(name, Counter())


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for name, value in FIGURES.items():
        terminalreporter.write_line(f"{name}: {dict(value) if isinstance(value, Counter) else value}")


def env_for(cache, *, mirror=None, **extra) -> dict:
    env = dict(os.environ)
    for key in ("KERNELBENCH_ALLOW_HTTP_LOOPBACK", "KERNELBENCH_REGISTRY"):
        env.pop(key, None)
    env.update(KERNELBENCH_DATA=str(cache), KERNELBENCH_OFFLINE="1",
               KERNELBENCH_MIRROR=str(MIRROR if mirror is None else mirror),
               COLUMNS="250", TERM="dumb", NO_COLOR="1", PYTHONIOENCODING="utf-8")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def kb(*args, env, timeout=300, cwd=None):
    """`python -m kernelbench.cli ARGS` as a subprocess; returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "kernelbench.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=timeout, cwd=cwd or REPO)


def describe(proc) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-2000:]}\n--- stderr\n{proc.stderr[-3000:]}"


def assert_user_error(proc, *needles):
    """Exit 2, a message, no traceback; every needle appears in stderr."""
    assert proc.returncode == 2, describe(proc)
    assert "Traceback" not in proc.stderr + proc.stdout, describe(proc)
    for needle in needles:
        assert str(needle) in proc.stderr, f"{needle!r} not in the message\n{describe(proc)}"


def run_folders(out: Path) -> list[Path]:
    return sorted(p for p in Path(out).iterdir() if p.is_dir()) if Path(out).is_dir() else []


def check_results_file(path: Path) -> list[dict]:
    """results.csv is well formed: it ends with a newline, every line parses as CSV with the
    header's column count, and no (params, trial, fold, iteration) occurs twice. Returns rows."""
    data = Path(path).read_bytes()
    assert data.endswith(b"\n"), f"{path}: torn last line {data[-200:]!r}"
    text = data.decode("utf-8")
    lines = text.splitlines()
    parsed = list(csv.reader(io.StringIO(text)))
    assert len(parsed) == len(lines), f"{path}: a quoted field spans lines (interleaved/torn rows)"
    header = parsed[0]
    assert header[0] == "run_id"
    for i, row in enumerate(parsed[1:], start=2):
        assert len(row) == len(header), f"{path}: line {i} has {len(row)} fields, header {len(header)}: {lines[i-1]!r}"
    rows = [dict(zip(header, r)) for r in parsed[1:]]
    keys = [tuple(r[k] for k in ROW_KEY) for r in rows]
    dupes = [k for k, n in Counter(keys).items() if n > 1]
    assert not dupes, f"{path}: duplicated rows {dupes[:3]}"
    run_ids = {r["run_id"] for r in rows}
    assert len(run_ids) <= 1, f"{path}: rows of several runs {run_ids}"
    return rows


def comparable(folder: Path) -> pd.DataFrame:
    df = pd.read_csv(Path(folder) / "results.csv", keep_default_na=False, dtype=str)
    return df.drop(columns=TIMING).sort_values(ROW_KEY).reset_index(drop=True)


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "cache"
