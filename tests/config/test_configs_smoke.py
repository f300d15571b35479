"""Smoke-run every experiment config in configs/ (`kernelbench run CONFIG --smoke`), so that no
config can rot unnoticed. The list is collected at import time: a new configs/*.yaml is tested by
being added. A config whose dataset files are not available locally (cache or mirror) is skipped,
with the reason naming the missing file and where to put it.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIG_DIR = REPO / "configs"
CONFIGS = sorted(CONFIG_DIR.glob("*.yaml")) + sorted(CONFIG_DIR.glob("*.yml"))
from conftest import MIRROR as _MIRROR  # noqa: E402
MIRROR = str(_MIRROR)
SMOKE_SECONDS = 60          # a smoke run is a few iterations on a small subsample


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """One tmp cache for all configs (parsed arrays are shared between configs of one dataset)."""
    return tmp_path_factory.mktemp("kb-cache")


@pytest.fixture
def kb_env(data_dir, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_DATA", str(data_dir))
    monkeypatch.setenv("KERNELBENCH_MIRROR", MIRROR)
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")      # a smoke run never downloads
    return dict(os.environ)


def test_there_are_configs():
    assert CONFIGS, f"no *.yaml in {CONFIG_DIR}"
    assert CONFIG_DIR / "quickstart.yaml" in CONFIGS


def _missing_files(cfg) -> list[str]:
    """Why the config's data is not available locally, one entry per missing file ([] if it is)."""
    from kernelbench.data import dataset_info

    if cfg.dataset.name is None:          # a user file: load_config already checked it exists
        return []
    if cfg.dataset.synthetic() is not None:   # generated: no file to miss
        return []
    info = dataset_info(cfg.dataset.name)
    if info["format"] == "builtin":
        return []
    roles = ["train"]
    if cfg.dataset.test == "official" and "test" in info["files"]:
        roles.append("test")
    missing = []
    for role in roles:
        f = info["files"][role]
        if not f["local"]:
            missing.append(
                f"dataset {cfg.dataset.name!r}: {role} file {f['name']!r} is not available locally "
                f"(looked for {', '.join(f['looked_for'])} in the cache dir {info['cache_dir']} and the "
                f"mirror dirs {', '.join(info['mirrors']) or '(none)'}); put it into one of them, e.g. "
                f"with `kernelbench datasets fetch {cfg.dataset.name}`"
                + (f" (download: {f['url']})" if f["url"] else ""))
    return missing


@pytest.mark.parametrize("config", CONFIGS, ids=[p.name for p in CONFIGS])
def test_config_smoke_runs(config, kb_env, tmp_path, monkeypatch, capsys):
    """`kernelbench run CONFIG --smoke` through the command's own entry point, in this process (a
    fresh process per config would import scikit-learn and the compiled cores 200 times; the
    console program itself runs as a subprocess in tests/cli/test_cli.py)."""
    from kernelbench.cli import main
    from kernelbench.config import load_config

    cfg = load_config(config)             # an invalid config fails here, with the field named
    missing = _missing_files(cfg)
    if missing:
        pytest.skip("; ".join(missing))
    out = tmp_path / "out"
    monkeypatch.chdir(REPO)
    capsys.readouterr()
    started = time.monotonic()
    try:
        main(["run", str(config), "--smoke", "--out", str(out), "--quiet"])
        code = 0
    except SystemExit as e:
        code = 0 if e.code is None else e.code
    elapsed = time.monotonic() - started
    captured = capsys.readouterr()
    report = f"exit {code}\n--- stdout\n{captured.out[-3000:]}\n--- stderr\n{captured.err[-3000:]}"
    assert code == 0, report
    assert "Traceback" not in captured.err, report
    folders = [p for p in out.iterdir() if p.is_dir()]
    assert len(folders) == 1, folders
    results = folders[0] / "results.csv"
    *_, results_line, compare_line = captured.out.strip().splitlines()
    assert results_line == f"results: {results}", report
    assert compare_line.startswith("compare: ") and compare_line.endswith(f" compare {folders[0]}"), report
    frame = pd.read_csv(results)
    assert len(frame) >= 1 and frame["final"].iloc[-1] == 1, frame   # the cell finished
    assert (frame["status"] == "ok").all(), frame[["iteration", "status", "message"]]
    assert (frame["experiment"] == cfg.name).all()
    assert set(frame["trial"]) == {0}                     # smoke: one trial
    assert elapsed < SMOKE_SECONDS, f"smoke run of {config.name} took {elapsed:.0f} s"
