"""Multi-class kernel logistic regression (softmax) in the DSG family: the compiled gradient
against finite differences of the loss, the objective against its definition, and the classifiers
against exact-kernel multi-class SVC on scikit-learn's digits."""
import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms
from kernelbench.solvers import _dsg
from kernelbench.solvers.cdsg import CDSGClassifier, UDSGClassifier
from kernelbench.solvers.dsg import DSGClassifier
from kernelbench.solvers.losses import loss_values

import reference_cdsg as ref


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    F = rng.normal(scale=3.0, size=(20, 5))
    Y = np.eye(5)[rng.integers(0, 5, size=20)]
    G = _dsg.softmax_gradients(F, Y)
    h = 1e-6
    for k in range(5):
        E = np.zeros_like(F)
        E[:, k] = h
        fd = (ref.softmax_loss(F + E, Y) - ref.softmax_loss(F - E, Y)) / (2 * h)
        np.testing.assert_allclose(G[:, k], fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(G.sum(axis=1), 0.0, atol=1e-12)      # softmax − one-hot sums to 0


def test_gradient_and_loss_are_stable_for_huge_scores():
    F = np.array([[1000.0, -1000.0, 0.0], [-800.0, 800.0, 799.0]])
    Y = np.eye(3)[[0, 2]]
    G = _dsg.softmax_gradients(F, Y)
    assert np.all(np.isfinite(G))
    np.testing.assert_allclose(G[0], [0.0, 0.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(loss_values("softmax", F, Y), [0.0, np.log1p(np.e)], rtol=1e-12)


def _digits():
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    return train_test_split(X, y, test_size=0.3, random_state=0)


@pytest.mark.parametrize("cls", [DSGClassifier, UDSGClassifier, CDSGClassifier])
def test_multiclass_digits_close_to_svc(cls):
    X_tr, X_te, y_tr, y_te = _digits()
    svc_err = 1 - SVC(C=10.0, gamma=0.05).fit(X_tr, y_tr).score(X_te, y_te)     # exact kernel, one-vs-one
    # a few passes of a stochastic method: within 6 points of the exact solver (chance is 90% error)
    est = cls(loss="softmax", gamma=0.05, C=1000.0, batch_size=16, block_size=32, step=1000.0, t0=100.0,
              passes=4, random_state=0).fit(X_tr, y_tr)
    assert est.predict(X_te).dtype == y_te.dtype
    assert set(np.unique(est.predict(X_te))) <= set(est.classes_)
    assert est.decision_function(X_te).shape == (len(X_te), 10)
    assert 1 - est.score(X_te, y_te) <= svc_err + 0.06


def test_objective_is_mean_softmax_loss_plus_penalty():
    X_tr, X_te, y_tr, y_te = _digits()
    est = DSGClassifier(loss="softmax", gamma=0.05, batch_size=64, block_size=16, random_state=0).fit(X_tr[:300], y_tr[:300])
    F = est.core_.predict(X_te.astype(np.float32))
    Y = (y_te[:, None] == est.classes_[None, :]).astype(float)
    beta = est.core_.coef()
    want = np.mean(ref.softmax_loss(F, Y)) + 0.5 * est.lambda_ * 0.5 * est.block_size * np.sum(beta**2)
    assert est.objective(X_te, y_te) == pytest.approx(want, rel=1e-9)


def test_binary_softmax_decision_is_score_difference():
    X_tr, X_te, y_tr, y_te = _digits()
    keep = np.isin(y_tr, [3, 8])
    est = DSGClassifier(loss="softmax", gamma=0.05, random_state=0).fit(X_tr[keep], y_tr[keep])
    F = est.core_.predict(X_te.astype(np.float32))
    np.testing.assert_allclose(est.decision_function(X_te), F[:, 1] - F[:, 0], rtol=1e-5, atol=1e-6)
    assert set(est.predict(X_te)) <= {3, 8}


def test_margin_loss_on_multiclass_is_a_clear_error():
    X_tr, _, y_tr, _ = _digits()
    with pytest.raises(SolverError, match="softmax"):
        DSGClassifier(loss="hinge").fit(X_tr, y_tr)


def test_multiclass_task_defaults_to_softmax():
    X_tr, _, y_tr, _ = _digits()
    two = np.isin(y_tr, y_tr[:2])
    for name in ("dsg", "udsg", "cdsg"):
        est = algorithms()[name].build({"batch_size": 32, "block_size": 8}, seed=0, task="multiclass")
        est.set_params(passes=1.0)      # the loss is resolved in begin: one pass is enough to see it
        assert est.loss == "auto" and est.fit(X_tr, y_tr).loss_ == "softmax"
        binary = algorithms()[name].build({"batch_size": 32, "block_size": 8}, seed=0, task="binary")
        binary.set_params(passes=1.0)
        assert binary.fit(X_tr[two], y_tr[two]).loss_ == "hinge"
