"""Baselines are thin adapters: they must behave exactly as the library they wrap."""
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.datasets import make_moons
from sklearn.svm import SVC

from kernelbench.estimators import LibSVMClassifier
from kernelbench.estimators import algorithms


def test_libsvm_adapter_equals_svc_with_the_same_settings():
    X, y = make_moons(300, noise=0.25, random_state=0)
    ours = LibSVMClassifier(C=4.0, gamma=2.0).fit(X, np.array([3, 7])[y])
    svc = SVC(C=4.0, gamma=2.0).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), rtol=1e-10)
    np.testing.assert_array_equal(ours.predict(X), np.array([3, 7])[svc.predict(X)])
    assert ours.n_support_vectors_ == svc.n_support_.sum()


def test_libsvm_has_no_partial_fit():
    """LIBSVM solves the dual of one fixed training set: no partial_fit (one that trained on the
    first chunk only would silently ignore the rest)."""
    assert not hasattr(LibSVMClassifier(), "partial_fit")


def test_libsvm_takes_int64_sparse_input():
    X, y = make_moons(200, noise=0.25, random_state=1)
    Xs = sp.csr_matrix(X)
    Xs.indices, Xs.indptr = Xs.indices.astype(np.int64), Xs.indptr.astype(np.int64)
    ours = LibSVMClassifier(C=1.0, gamma=1.0).fit(Xs, y)
    np.testing.assert_allclose(ours.decision_function(X), SVC(C=1.0, gamma=1.0).fit(X, y).decision_function(X),
                               rtol=1e-8)


def test_libsvm_run_records_one_final_row(tmp_path):
    assert "libsvm" in algorithms()
    config = tmp_path / "c.yaml"
    config.write_text("dataset: {name: digits86}\nalgorithm: {name: libsvm, params: {C: 10.0, gamma: 0.02}}\n"
                      "stop: {iterations: 5}\nevaluate: {every: 1, on: [test_error]}\n")
    env = {**os.environ, "KERNELBENCH_DATA": str(tmp_path / "cache"), "KERNELBENCH_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "kernelbench.cli", "run", str(config), "--out",
                           str(tmp_path / "out"), "-q"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    folder, = (tmp_path / "out").iterdir()
    df = pd.read_csv(folder / "results.csv")
    assert len(df) == 1 and df["final"].iloc[0] == 1 and df["iteration"].iloc[0] == 1
    assert df["n_support_vectors"].iloc[0] > 0 and df["test_error"].iloc[0] <= 0.05
