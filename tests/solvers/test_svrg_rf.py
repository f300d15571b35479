"""SVRG-RF (Li & Póczos 2016 §5.1's competitor): the compiled core against the NumPy reference
step for step, its features against DSG's (and the documented generator), its objective against
DSG's on the same features and coefficients, and convergence to the optimum of the same
finite-feature problem found by scipy.optimize."""
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.base import clone

import reference
import reference_baselines as ref
from kernelbench.errors import SolverError
from kernelbench.estimators import DSGClassifier, DSGRegressor
from scipy.special import logsumexp
from kernelbench.solvers.svrg_rf import SVRGRFClassifier, SVRGRFRegressor


def _problem(n=60, d=3, seed=0, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if regression:
        return X, np.sin(X[:, 0]) + 0.3 * X[:, 1]
    return X, np.where(X[:, 0] * X[:, 1] + 0.2 * X[:, 2] > 0, 1.0, -1.0)


def _make(loss, **kw):
    cls = SVRGRFRegressor if loss == "squared" else SVRGRFClassifier
    return cls(loss=loss, gamma=0.5, dtype="float64", **kw)


def _loss(loss, f, y):
    m = y * f
    if loss == "logistic":
        return np.logaddexp(0, -m)
    if loss == "squared":
        return 0.5 * (f - y) ** 2
    return np.where(m >= 1, 0.0, np.where(m <= 0, 0.5 - m, 0.5 * (1 - m) ** 2))


@pytest.mark.parametrize("loss", ["logistic", "smooth_hinge", "squared"])
def test_core_matches_reference_step_for_step(loss):
    X, y = _problem(n=23, regression=(loss == "squared"))
    est = _make(loss, C=2.0, batch_size=4, block_size=3, n_blocks=4, epoch_length=5, random_state=7)
    est.begin(X, y)
    first = est._order.copy()
    est.run(est.steps_per_pass)                     # 6 iterations: snapshots at 0 and 5
    est.run(3)                                      # a new pass: a fresh order
    second = est._order[:12].copy()
    # the first pass ends with a partial batch (23 = 5·4 + 3), then the new pass's full batches
    batches = [first[i:i + 4] for i in range(0, 23, 4)] + [second[i:i + 4] for i in range(0, 12, 4)]
    Z = np.cos(X @ est.W_.T + est.b_)
    beta = ref.svrg(Z, y, batches, epoch_length=5, eta=est.eta_, reg=est.reg_, loss=loss)
    np.testing.assert_allclose(est.coef_, beta, rtol=1e-10, atol=1e-13)
    assert est.samples_seen_ == 23 + 12 + 2 * 23    # batches + two snapshots of n


def test_features_are_dsgs_first_blocks():
    """Same random_state → the same seed and γ as DSG → ω, b of DSG's blocks 0..n_blocks-1, as the
    documented generator (tests/reference.feature_block) defines them."""
    X, y = _problem()
    est = _make("logistic", block_size=5, n_blocks=4, random_state=11).fit(X, y)
    dsg = DSGClassifier(gamma=0.5, block_size=5, dtype="float64", random_state=11)
    dsg.begin(X, y)
    dsg.run(4)
    np.testing.assert_array_equal(est.W_, dsg.core_.W[:20])
    np.testing.assert_array_equal(est.b_, dsg.core_.b[:20])
    for t in range(4):
        W, b = reference.feature_block(est.seed_, t, 5, 3, "rbf", est.gamma_)
        np.testing.assert_allclose(est.W_[5 * t:5 * t + 5], W, rtol=1e-12)
        np.testing.assert_allclose(est.b_[5 * t:5 * t + 5], b, rtol=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "smooth_hinge", "squared"])
def test_objective_is_dsgs_on_the_same_features_and_coefficients(loss):
    """Li & Póczos Fig. 1 plots DSG's and SVRG-RF's objectives on one axis: for the same features
    and coefficients the two must be the same number."""
    X, y = _problem(regression=(loss == "squared"))
    common = dict(loss=loss, gamma=0.5, C=3.0, batch_size=10, block_size=6, dtype="float64",
                  random_state=2)
    dsg = (DSGRegressor if loss == "squared" else DSGClassifier)(**common)
    dsg.begin(X, y)
    dsg.run(4)                                      # 4 blocks = 4F features with coefficients
    est = _make(loss, C=3.0, batch_size=10, block_size=6, n_blocks=4, random_state=2)
    est.begin(X, y)
    est.core_.beta[:] = dsg.core_.coef().ravel()
    np.testing.assert_allclose(est.decision_function(X) if loss != "squared" else est.predict(X),
                               dsg.decision_function(X) if loss != "squared" else dsg.predict(X),
                               rtol=1e-12, atol=1e-12)
    assert est.objective(X, y) == pytest.approx(dsg.objective(X, y), rel=1e-12)
    # and the number itself, from its definition: mean loss + λ/2 (F/2)‖β‖²
    beta = dsg.core_.coef().ravel()
    f = np.cos(X @ est.W_.T + est.b_) @ beta
    Y = y if loss == "squared" else np.where(y == est.classes_[1], 1.0, -1.0)
    expected = np.mean(_loss(loss, f, Y)) + 0.5 * est.lambda_ * 3.0 * beta @ beta
    assert est.objective(X, y) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "smooth_hinge", "squared"])
def test_converges_to_the_scipy_optimum_of_the_finite_feature_problem(loss):
    X, y = _problem(n=150, regression=(loss == "squared"))
    est = _make(loss, C=1.0, batch_size=10, block_size=8, n_blocks=4, step=2.0, epoch_length=150,
                random_state=3)
    est.begin(X, y)
    Z = np.cos(X @ est.W_.T + est.b_)
    Y = est._train_Y.ravel()
    lam, F = est.lambda_, 8

    def fun(beta):                                  # R(β), written out independently
        f = Z @ beta
        m = Y * f
        if loss == "logistic":
            g = -Y / (1 + np.exp(m))
        elif loss == "squared":
            g = f - Y
        else:
            g = np.where(m >= 1, 0.0, np.where(m <= 0, -Y, -Y * (1 - m)))
        return (np.mean(_loss(loss, f, Y)) + 0.5 * lam * (F / 2) * beta @ beta,
                Z.T @ g / len(Y) + lam * (F / 2) * beta)

    best = minimize(fun, np.zeros(Z.shape[1]), jac=True, method="L-BFGS-B",
                    options=dict(gtol=1e-13, ftol=1e-16, maxiter=20000))
    gaps = []
    for _ in range(25):
        est.run(150)
        gaps.append(fun(est.coef_)[0] - best.fun)
    assert gaps[0] > 1e-6                            # not there after one epoch ...
    assert gaps[-1] < 1e-10                          # ... linear convergence to the optimum
    np.testing.assert_allclose(est.coef_, best.x, atol=1e-4 * max(1.0, np.abs(best.x).max()))
    assert est.objective(X, y) == pytest.approx(best.fun, rel=1e-8)


def test_finite_difference_gradient_of_the_snapshot():
    """μ + reg·β̃ at a snapshot is ∇R(β̃): check against central finite differences."""
    X, y = _problem(n=40)
    est2 = _make("logistic", C=0.7, batch_size=8, block_size=4, n_blocks=2, random_state=5)
    est2.begin(X, y)
    beta0 = np.random.default_rng(0).normal(size=8) * 0.3
    est2.core_.beta[:] = beta0
    est2.run(1)                                     # snapshot at β0 first, then one step
    grad = est2.core_.mu[0] + est2.reg_ * beta0
    Z = np.cos(X @ est2.W_.T + est2.b_)
    Y = est2._train_Y.ravel()

    def R(b):
        return np.mean(np.logaddexp(0, -Y * (Z @ b))) + 0.5 * est2.reg_ * b @ b

    h = 1e-6
    fd = np.array([(R(beta0 + h * e) - R(beta0 - h * e)) / (2 * h) for e in np.eye(8)])
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-9)


def test_errors_and_sklearn_api():
    X, y = _problem()
    with pytest.raises(SolverError, match="got 'hinge' \\(SVRG needs a smooth loss: use smooth_hinge"):
        SVRGRFClassifier(loss="hinge").fit(X, y)
    with pytest.raises(SolverError, match="n_blocks must be an integer >= 1 and <= 10,000, got 0"):
        SVRGRFClassifier(n_blocks=0).fit(X, y)
    est = SVRGRFClassifier(block_size=16, n_blocks=4, random_state=0)
    assert clone(est).get_params() == est.get_params()
    est.fit(X, y)
    assert est.loss_ == "smooth_hinge"          # loss 'auto' for two classes: the smoothed SVM
    assert SVRGRFClassifier().fit(*_three_classes()).loss_ == "softmax"
    assert SVRGRFRegressor().fit(*_problem(regression=True)).loss_ == "squared"
    assert est.n_random_features_ == 64
    assert set(est.predict(X)) <= set(y)


# ---------------------------------------------------------------------------------------------
# softmax: K scores (Li & Póczos Fig. 1 (a)-(c): multi-class kernel logistic regression)
# ---------------------------------------------------------------------------------------------

def _three_classes(n=45, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.digitize(X[:, 0] + 0.5 * X[:, 1] * X[:, 2], [-0.5, 0.5])     # labels 0, 1, 2
    return X, y


def _softmax_grad(F, Y):
    P = np.exp(F - F.max(axis=1, keepdims=True))
    return P / P.sum(axis=1, keepdims=True) - Y


def test_softmax_matches_reference_step_for_step():
    X, y = _three_classes(n=23)
    est = SVRGRFClassifier(loss="softmax", gamma=0.5, C=2.0, batch_size=4, block_size=3, n_blocks=2,
                           epoch_length=4, dtype="float64", random_state=1)
    est.begin(X, y)
    order = est._order.copy()
    est.run(est.steps_per_pass)
    batches = [order[i:i + 4] for i in range(0, 23, 4)]
    Z = np.cos(X @ est.W_.T + est.b_)
    Y = (y[:, None] == np.arange(3)[None, :]).astype(float)
    beta = np.zeros((3, 6))                          # SVRG written out for K scores
    for t, idx in enumerate(batches):
        if t % 4 == 0:
            G = _softmax_grad(Z @ beta.T, Y)
            mu = G.T @ Z / len(Z)
        step = mu + est.reg_ * beta
        for i in idx:
            step = step + np.outer(_softmax_grad((Z[i] @ beta.T)[None], Y[i][None])[0] - G[i], Z[i]) / len(idx)
        beta = beta - est.eta_ * step
    np.testing.assert_allclose(est.coef_, beta, rtol=1e-10, atol=1e-13)
    assert set(est.predict(X)) <= {0, 1, 2} and est.decision_function(X).shape == (23, 3)


def test_softmax_converges_to_the_scipy_optimum_and_agrees_with_dsg():
    X, y = _three_classes(n=90)
    est = SVRGRFClassifier(loss="softmax", gamma=0.5, C=1.0, batch_size=10, block_size=5, n_blocks=4,
                           step=2.0, epoch_length=90, dtype="float64", random_state=3)
    est.begin(X, y)
    Z = np.cos(X @ est.W_.T + est.b_)
    Y = (y[:, None] == np.arange(3)[None, :]).astype(float)
    reg = est.lambda_ * 5 / 2

    def fun(b):
        B = b.reshape(3, -1)
        F = Z @ B.T
        value = np.mean(logsumexp(F, axis=1) - np.sum(Y * F, axis=1)) + 0.5 * reg * np.sum(B * B)
        return value, (_softmax_grad(F, Y).T @ Z / len(Z) + reg * B).ravel()

    best = minimize(fun, np.zeros(3 * 20), jac=True, method="L-BFGS-B",
                    options=dict(gtol=1e-13, ftol=1e-16, maxiter=20000))
    for _ in range(30):
        est.run(90)
    assert fun(est.coef_.ravel())[0] - best.fun < 1e-10
    assert est.objective(X, y) == pytest.approx(best.fun, rel=1e-8)
    # the same coefficients in DSG (softmax, 4 blocks of 5): the same objective
    dsg = DSGClassifier(loss="softmax", gamma=0.5, C=1.0, batch_size=10, block_size=5, dtype="float64",
                        random_state=3)
    dsg.begin(X, y)
    dsg.run(4)
    est.core_.beta[:] = dsg.core_.coef()
    assert est.objective(X, y) == pytest.approx(dsg.objective(X, y), rel=1e-12)
