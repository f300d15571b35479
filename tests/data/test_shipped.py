"""The small sets shipped inside the package: byte-for-byte the staged copies, the registry's pinned
content, found before the cache and the mirrors, and enough for their configs with no network and
no mirror."""
from __future__ import annotations

import hashlib
import lzma
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kernelbench.data import dataset_info, load_dataset
from kernelbench.data.registry import load_registry
from kernelbench.data.shipped import SHIPPED_DIR, shipped_sha256

from conftest import MIRROR, REPO

BIG_SETS = ("ijcnn1", "w8a", "cod-rna", "skin_nonskin", "dota2", "covtype")
SHIPPED_SETS = ("a9a", "phishing", "abalone", "heart_scale", "australian_scale", "fourclass_scale", "svmguide1")


@pytest.fixture
def no_mirror(tmp_path, monkeypatch):
    """A fresh machine: an empty cache, no mirror, no network."""
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_MIRROR", "")
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    monkeypatch.delenv("KERNELBENCH_REGISTRY", raising=False)


def _sums(name: str) -> dict:
    return {f: sha for sha, f in (line.split() for line in (SHIPPED_DIR / name).read_text().splitlines())}


def test_each_shipped_file_holds_the_content_the_registry_pins():
    pins = {f.name: f.sha256 for spec in load_registry().values() for f in spec.files.values()}
    stored = _sums("SHA256SUMS")
    files = sorted(p.name for p in SHIPPED_DIR.glob("*.xz"))
    assert files == sorted(stored) == sorted(shipped_sha256())
    for name in files:
        data = (SHIPPED_DIR / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == stored[name], name
        assert hashlib.sha256(lzma.decompress(data)).hexdigest() == pins[name[:-3]] == shipped_sha256()[name], name


def test_the_shipped_files_are_the_staged_copies_byte_for_byte_and_small():
    total = sum(p.stat().st_size for p in SHIPPED_DIR.glob("*.xz"))
    assert total < 1_000_000, f"{total:,} bytes shipped: keep the package small, the big sets stay downloads"
    assert not any(name.startswith(BIG_SETS) for name in shipped_sha256())
    if (MIRROR / "a9a.xz").is_file():
        for p in SHIPPED_DIR.glob("*.xz"):
            assert p.read_bytes() == (MIRROR / p.name).read_bytes(), p.name
    sources = (SHIPPED_DIR / "SOURCES.md").read_text()
    for name in shipped_sha256():
        assert re.search(rf"^\| {re.escape(name)} \|.*@ [0-9a-f]{{40}}", sources, re.M), f"{name}: no provenance row"


@pytest.mark.parametrize("name", SHIPPED_SETS)
def test_a_shipped_set_loads_on_a_machine_without_network_or_mirror(no_mirror, name):
    info = dataset_info(name)
    assert info["available"]
    assert all(Path(f["local"]).parent == SHIPPED_DIR for f in info["files"].values())
    ds = load_dataset(name, progress=False)
    assert ds.n_train == info["files"]["train"]["n"] or ds.n_train + ds.n_test == info["files"]["train"]["n"]


def test_a_shipped_copy_stands_only_for_the_content_it_holds(no_mirror, tmp_path, monkeypatch):
    """A registry naming heart_scale with another pin (a test's, a user's) never reads the shipped copy."""
    entry = yaml.safe_load((REPO / "datasets" / "registry.yaml").read_text())["datasets"]["heart_scale"]
    entry["files"]["train"]["sha256"] = "0" * 64
    registry = tmp_path / "registry.yaml"
    registry.write_text(yaml.safe_dump({"datasets": {"heart_scale": entry}}))
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(registry))
    assert dataset_info("heart_scale")["files"]["train"]["local"] is None


def test_a_config_on_a_shipped_set_runs_with_no_network_and_no_mirror(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "KERNELBENCH_DATA": str(tmp_path / "cache"),
           "KERNELBENCH_MIRROR": "", "KERNELBENCH_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "kernelbench.cli", "run", str(REPO / "configs" / "phishing_bsgd.yaml"),
                           "--smoke", "--out", str(tmp_path / "out"), "-q"], capture_output=True, text=True, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "test_error=" in proc.stdout


def test_a_wheel_carries_the_shipped_files():
    """pyproject's package data names every shipped file, so an installed kernelbench has them too."""
    import fnmatch

    tomllib = pytest.importorskip("tomllib")        # Python 3.11 on
    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["kernelbench.data"]
    for p in SHIPPED_DIR.iterdir():
        assert any(fnmatch.fnmatch(f"shipped/{p.name}", g) for g in globs), f"{p.name} is not package data"
