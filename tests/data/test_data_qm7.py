"""The QM7 reader (registry format qm7, Dai et al.'s QuantumMachine = Fig. 1 (7)): a MATLAB v5 file
with X (n × 23 × 23 Coulomb matrices) and T (1 × n energies). Checked on synthetic files written by
scipy.io.savemat, against numpy.triu_indices applied here; and configs/qm7_dsg_dai2014.yaml
smoke-runs on such a file of the registered size, through the real registry entry."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.io import savemat

from kernelbench.data import load_dataset
from kernelbench.data.registry import load_registry
from kernelbench.errors import DataError

REPO = Path(__file__).resolve().parents[2]
N = load_registry()["qm7"].files["train"].n            # 7165 in the published file


def _qm7_arrays(n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, 23, 23))
    X = A + A.transpose(0, 2, 1)                        # symmetric, as Coulomb matrices are
    T = rng.normal(-1500.0, 200.0, size=(1, n))
    return X, T


@pytest.fixture
def qm7_mirror(tmp_path, monkeypatch):
    """A mirror folder holding qm7.mat of the registered size; the real registry."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    X, T = _qm7_arrays(N)
    P = np.arange(N - N % 5).reshape(5, -1)             # the fold indices: ignored by the reader
    savemat(mirror / "qm7.mat", {"X": X, "T": T, "P": P, "Z": np.zeros((N, 23)), "R": np.zeros((N, 23, 3))})
    monkeypatch.delenv("KERNELBENCH_REGISTRY", raising=False)
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(mirror))
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    return mirror, X, T


def test_rows_are_upper_triangles_in_triu_order_and_targets_are_t(qm7_mirror):
    _, X, T = qm7_mirror
    ds = load_dataset("qm7", test="none", progress=False)
    rows, cols = np.triu_indices(23)
    assert ds.task == "regression" and ds.X_train.shape == (N, 276)
    np.testing.assert_array_equal(ds.X_train, X[:, rows, cols])
    np.testing.assert_array_equal(ds.y_train, T.ravel())
    again = load_dataset("qm7", test="none", progress=False)          # from the parsed cache
    np.testing.assert_array_equal(again.X_train, ds.X_train)


def test_registry_split_is_a_seeded_random_fifth(qm7_mirror):
    _, X, T = qm7_mirror
    ds = load_dataset("qm7", seed=3, progress=False)
    assert ds.n_test == round(0.2 * N) and ds.n_train + ds.n_test == N
    assert sorted(np.concatenate([ds.y_train, ds.y_test])) == sorted(T.ravel())


def _registry_with(tmp_path, monkeypatch, n):
    reg = tmp_path / "reg.yaml"
    reg.write_text(f"""
datasets:
  small_qm7: {{task: regression, format: qm7, d: 276, description: "QM7 layout",
              files: {{train: {{name: small.mat, url: null, compression: none, sha256: null, n: {n}}}}},
              split: {{protocol: random, test_fraction: 0.2}}}}
""")
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(reg))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(tmp_path))
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))


@pytest.mark.parametrize("content, words", [
    ({"T": np.zeros((1, 10))}, "no variable X (it holds T)"),
    ({"X": np.zeros((10, 23, 23))}, "no variable T (it holds X)"),
    ({"X": np.zeros((10, 23, 22)), "T": np.zeros((1, 10))}, "square Coulomb matrices"),
    ({"X": np.zeros((10, 23, 23)), "T": np.zeros((1, 9))}, "10 molecules but T holds 9"),
    ({"X": np.triu(np.ones((10, 23, 23))), "T": np.zeros((1, 10))}, "not symmetric"),
    ({"X": np.zeros((12, 23, 23)), "T": np.zeros((1, 12))}, "12 rows, but the registry says"),
    (None, "not a readable MATLAB v5 .mat file"),
])
def test_bad_files_are_data_errors_naming_the_file(tmp_path, monkeypatch, content, words):
    _registry_with(tmp_path, monkeypatch, n=10)
    if content is None:
        (tmp_path / "small.mat").write_text("1 1:0.5\n")
    else:
        savemat(tmp_path / "small.mat", content)
    with pytest.raises(DataError, match="small.mat") as info:
        load_dataset("small_qm7", progress=False)
    assert words in str(info.value)


def test_qm7_config_smoke_runs_with_test_mae(qm7_mirror, tmp_path):
    """configs/qm7_dsg_dai2014.yaml end to end on the synthetic file: a finite test MAE."""
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-m", "kernelbench.cli", "run", "configs/qm7_dsg_dai2014.yaml",
                           "--smoke", "--out", str(tmp_path / "out"), "--quiet"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (folder,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    frame = pd.read_csv(folder / "results.csv")
    final = frame[frame["final"] == 1].iloc[-1]
    assert final["status"] == "ok" and np.isfinite(final["test_mae"]) and final["test_mae"] > 0
