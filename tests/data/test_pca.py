"""The `pca` dataset option: fitted on the training part only, checked against scikit-learn's PCA
and the definition (orthogonal projection on the leading eigenvectors of the training covariance)."""
import numpy as np
import pytest
import scipy.sparse as sp

from kernelbench.config import config_from_dict as load_config_dict
from kernelbench.errors import ConfigError
from kernelbench.data.load import Dataset
from kernelbench.data import prepare
from kernelbench.errors import DataError


def _dataset(X_tr, X_te, task="binary"):
    rng = np.random.default_rng(1)
    return Dataset(name="toy", task=task, X_train=X_tr, y_train=np.where(rng.random(X_tr.shape[0]) > 0.5, 1.0, -1.0),
                   X_test=X_te, y_test=np.where(rng.random(X_te.shape[0]) > 0.5, 1.0, -1.0), description="toy")


def _data(n=300, d=12, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(d, d)) * np.geomspace(3, 0.01, d)
    return rng.normal(size=(n, d)) @ A.T + 5.0, rng.normal(size=(n // 2, d)) @ A.T + 5.0


def test_projection_is_the_training_covariance_eigenbasis():
    X_tr, X_te = _data()
    out = prepare(_dataset(X_tr, X_te), pca=4)
    assert out.X_train.shape == (300, 4) and out.X_test.shape == (150, 4)
    mean = X_tr.mean(axis=0)
    eigval, eigvec = np.linalg.eigh(np.cov(X_tr - mean, rowvar=False))
    V = eigvec[:, ::-1][:, :4]                         # leading eigenvectors of the TRAINING covariance
    for got, X in ((out.X_train, X_tr), (out.X_test, X_te)):
        want = (X - mean) @ V
        # each component is defined up to sign
        signs = np.sign(np.sum(got * want, axis=0))
        np.testing.assert_allclose(got, want * signs, rtol=1e-6, atol=1e-8)
    assert "PCA to 4 of 12 dims" in out.description


def test_fitted_on_training_part_only():
    X_tr, X_te = _data()
    a = prepare(_dataset(X_tr, X_te), pca=3)
    b = prepare(_dataset(X_tr, X_te * 100.0), pca=3)     # a different test part changes nothing fitted
    np.testing.assert_array_equal(a.X_train, b.X_train)


def test_sparse_input_is_densified_within_limit():
    X_tr, X_te = _data()
    dense = prepare(_dataset(X_tr, X_te), pca=5)
    sparse = prepare(_dataset(sp.csr_matrix(X_tr), sp.csr_matrix(X_te)), pca=5)
    np.testing.assert_allclose(np.abs(sparse.X_train), np.abs(dense.X_train), rtol=1e-6, atol=1e-8)


def test_large_sparse_input_uses_truncated_svd(monkeypatch):
    import sys
    mod = sys.modules["kernelbench.data.preprocess"]     # the package re-exports the function by this name
    monkeypatch.setattr(mod, "MAX_PCA_DENSE_BYTES", 1)
    X_tr, X_te = _data()
    out = mod.prepare(_dataset(sp.csr_matrix(X_tr), sp.csr_matrix(X_te)), pca=2)
    assert out.X_train.shape == (300, 2) and "TruncatedSVD" in out.description
    # uncentred: the leading right singular vector of X_tr itself
    v = np.linalg.svd(X_tr, full_matrices=False)[2][0]
    np.testing.assert_allclose(np.abs(out.X_train[:, 0]), np.abs(X_tr @ v), rtol=1e-5)


def test_more_components_than_features_keeps_data():
    X_tr, X_te = _data(d=6)
    out = prepare(_dataset(X_tr, X_te), pca=100)
    np.testing.assert_array_equal(out.X_train, X_tr)
    assert "features kept" in out.description


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "ten"])
def test_bad_values_refused(bad):
    X_tr, X_te = _data()
    with pytest.raises(DataError, match="pca"):
        prepare(_dataset(X_tr, X_te), pca=bad)


def test_config_accepts_and_validates_pca():
    base = {"dataset": {"name": "a9a"}, "algorithm": "dsg"}
    cfg = load_config_dict({**base, "dataset": {"name": "a9a", "pca": 100}})
    assert cfg.dataset.pca == 100
    assert load_config_dict(base).dataset.pca is None
    with pytest.raises(ConfigError, match="dataset.pca"):
        load_config_dict({**base, "dataset": {"name": "a9a", "pca": 0}})
