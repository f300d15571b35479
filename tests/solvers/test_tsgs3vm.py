"""TSGS3VM and FRS3VM (Geng et al., IJCAI 2019): the unlabeled losses of Table 2 against finite
differences and the paper's formulas, the compiled core against the NumPy reference step for step,
and the estimators' semi-supervised behaviour and errors."""
import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_moons
from threadpoolctl import threadpool_limits

from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms
from kernelbench.solvers.losses import (code, unlabeled_code, unlabeled_loss_derivatives,
                                        unlabeled_loss_values)
from kernelbench.solvers._tsgs3vm import OFFSETS, TSGCore
from kernelbench.solvers.base import DivergenceError
from kernelbench.solvers.tsgs3vm import FRS3VMClassifier, TSGS3VMClassifier

import reference
import reference_s3vm

UNLABELED = ("shg", "sshg", "ramp", "da")
KINKS = {"shg": (-1.0, 0.0, 1.0), "sshg": (-1.0, 0.0, 1.0), "ramp": (-1.0, -0.3, 0.3, 1.0), "da": ()}


# ---------------------------------------------------------------------------------------------
# unlabeled losses (Table 2)
# ---------------------------------------------------------------------------------------------

def _points_away_from_kinks(name, n=400, seed=0):
    r = np.random.default_rng(seed).uniform(-2.5, 2.5, n)
    for k in KINKS[name]:
        r = r[np.abs(r - k) > 1e-3]
    return r


@pytest.mark.parametrize("name", UNLABELED)
def test_unlabeled_subgradient_matches_finite_differences(name):
    r = _points_away_from_kinks(name)
    h = 1e-6
    numeric = (unlabeled_loss_values(name, r + h) - unlabeled_loss_values(name, r - h)) / (2 * h)
    np.testing.assert_allclose(unlabeled_loss_derivatives(name, r), numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", UNLABELED)
def test_unlabeled_losses_are_table_2(name):
    r = np.linspace(-3, 3, 601)
    np.testing.assert_allclose(unlabeled_loss_values(name, r), reference_s3vm.unlabeled_loss(name, r),
                               rtol=1e-12, atol=1e-12)
    away = _points_away_from_kinks(name)
    np.testing.assert_allclose(unlabeled_loss_derivatives(name, away),
                               reference_s3vm.unlabeled_derivative(name, away), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", UNLABELED)
def test_unlabeled_losses_are_symmetric_and_favour_large_margins(name):
    r = np.linspace(0, 3, 31)
    assert np.allclose(unlabeled_loss_values(name, r), unlabeled_loss_values(name, -r))
    assert np.allclose(unlabeled_loss_derivatives(name, r), -unlabeled_loss_derivatives(name, -r))
    values = unlabeled_loss_values(name, r)
    assert np.all(np.diff(values) <= 1e-15), "u must not grow with |f(x)|"
    assert unlabeled_loss_values(name, np.array([5.0]))[0] < 1e-10 or name == "ramp"


def test_unknown_unlabeled_loss_is_refused():
    with pytest.raises(ValueError, match="shg"):
        unlabeled_loss_values("hinge", np.zeros(3))


# ---------------------------------------------------------------------------------------------
# compiled core vs reference_s3vm.tsgs3vm
# ---------------------------------------------------------------------------------------------

def _problem(seed=0, n=70, d=3, n_labeled=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3, 1.0, -1.0)
    lab = np.arange(n_labeled)
    unl = np.arange(n_labeled, n)
    lab_idx = np.stack([rng.permutation(lab)[:7] for _ in range(6)]).astype(np.int64)
    unl_idx = rng.permutation(unl).astype(np.int64)       # 58 rows, batches of 10: the last one holds 8
    return X, y, lab_idx, unl_idx


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("offset", ["none", "learned", "balanced"])
@pytest.mark.parametrize("loss", UNLABELED)
def test_core_matches_reference(loss, offset, dtype, cache, threads):
    X, y, lab_idx, unl_idx = _problem()
    params = dict(block_size=16, kernel="rbf", gamma=0.4, C=5.0, C_unlabeled=3.0, step=0.2, seed=99)
    coef, predict, bias = reference_s3vm.tsgs3vm(X, y, lab_idx, unl_idx, 10, unlabeled_loss_name=loss,
                                                 offset=offset, **params)
    core = TSGCore(n_dims=3, block_size=16, kernel="rbf", gamma=0.4, labeled_loss=code("hinge"),
                   unlabeled_loss=unlabeled_code(loss), C=5.0, C_unlabeled=3.0, step=0.2, seed=99,
                   dtype=dtype, cache_features=cache, threads=threads, offset=OFFSETS[offset],
                   positive_rate=float(np.mean(y[np.unique(lab_idx)] > 0)), n_labeled=len(np.unique(lab_idx)))
    Xc = np.ascontiguousarray(X, dtype=dtype)
    with threadpool_limits(limits=1, user_api="blas"):
        assert core.train(Xc, y, lab_idx, unl_idx, 10) == (0, 6)
        f = core.predict(Xc)
    assert core.n_iter == 6 and core.n_random_features == 6 * 16
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    scale = max(1.0, np.max(np.abs(coef)))
    # reference: f = Σ α √2 cos(·); core: f = Σ β cos(·)  ⇒  β = √2 α
    np.testing.assert_allclose(core.coef() / scale, np.sqrt(2.0) * coef / scale, **tol)
    np.testing.assert_allclose(core.bias, bias, **tol)
    np.testing.assert_allclose(f, predict(X), **tol)
    assert np.max(np.abs(coef)) > 1e-3, "the reference problem must move the model"


def test_step_one_forgets_the_past_and_step_zero_like_shrink_is_exact():
    """γ = 1 (eta = 1): f_{t+1} = −ζ_t exactly (Alg. 1 line 8 with 1 − γ = 0)."""
    X, y, lab_idx, unl_idx = _problem(seed=3)
    coef, _, _ = reference_s3vm.tsgs3vm(X, y, lab_idx, unl_idx, 10, block_size=8, kernel="rbf",
                                        gamma=0.5, C=2.0, C_unlabeled=1.0, step=1.0, seed=5,
                                        unlabeled_loss_name="shg")
    core = TSGCore(n_dims=3, block_size=8, kernel="rbf", gamma=0.5, labeled_loss=code("hinge"),
                   unlabeled_loss=unlabeled_code("shg"), C=2.0, C_unlabeled=1.0, step=1.0, seed=5,
                   dtype="float64", cache_features=True, threads=1)
    core.train(np.ascontiguousarray(X), y, lab_idx, unl_idx, 10)
    assert np.all(core.coef()[:-8] == 0.0) and np.all(coef[:-8] == 0.0)
    np.testing.assert_allclose(core.coef(), np.sqrt(2.0) * coef, rtol=1e-10, atol=1e-14)


def test_regenerated_features_need_only_the_coefficients():
    X, y, lab_idx, unl_idx = _problem(seed=4)
    cores = []
    for cache in (True, False):
        core = TSGCore(n_dims=3, block_size=16, kernel="rbf", gamma=0.4, labeled_loss=code("hinge"),
                       unlabeled_loss=unlabeled_code("shg"), C=5.0, C_unlabeled=3.0, step=0.2,
                       seed=1, dtype="float64", cache_features=cache, threads=1)
        core.train(np.ascontiguousarray(X), y, lab_idx, unl_idx, 10)
        cores.append(core)
    m = cores[0].n_random_features
    assert cores[1].model_bytes() == 8 * m                          # O(T): the coefficients alone
    assert cores[0].model_bytes() == 8 * m + 8 * m * 4              # + ω (d = 3) and b when cached
    W, b = reference.feature_block(1, 2, 16, 3, gamma=0.4)          # block 2 = iteration 3's seed
    np.testing.assert_allclose(cores[0].W[32:48], W, rtol=1e-12)
    np.testing.assert_allclose(cores[0].predict(np.ascontiguousarray(X)),
                               cores[1].predict(np.ascontiguousarray(X)), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------------------------

def _moons(n=1200, n_labeled=12, seed=0):
    X, y = make_moons(n_samples=n, noise=0.08, random_state=seed)
    y = np.where(y == 1, 1, -1)
    rng = np.random.default_rng(seed)
    labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), n_labeled // 2, replace=False)
                              for c in (-1, 1)])
    y_semi = np.full(n, np.nan)
    y_semi[labeled] = y[labeled]
    return X, y, y_semi


def test_fit_with_nan_labels_learns_from_few_labels():
    X, y, y_semi = _moons()
    X_test, y_test = make_moons(n_samples=2000, noise=0.08, random_state=1)
    y_test = np.where(y_test == 1, 1, -1)
    clf = TSGS3VMClassifier(C=100.0, gamma=2.0, eta=100.0, batch_size=64, passes=1,
                            random_state=0).fit(X, y_semi)
    assert clf.n_labeled_ == 12 and clf.n_unlabeled_ == 1188
    assert math.isclose(clf.C_unlabeled_, 100.0 * 12 / 1188)       # §6.1: C* = C n_l / n_u
    assert clf.n_iter_ == math.ceil(1188 / 64)                      # one pass over the unlabeled set
    assert set(np.unique(clf.predict(X_test))) <= {-1, 1}
    assert np.mean(clf.predict(X_test) != y_test) < 0.15
    assert np.isfinite(clf.objective(X, y_semi))


def test_objective_is_the_s3vm_objective():
    X, y, y_semi = _moons(n=300)
    clf = TSGS3VMClassifier(C=10.0, C_unlabeled=2.0, gamma=1.0, eta=20.0, batch_size=32,
                            dtype="float64", random_state=0).fit(X, y_semi)
    f = clf.decision_function(X)
    known = ~np.isnan(y_semi)
    hinge = np.maximum(0, 1 - y_semi[known] * f[known])
    r = 0.5 * clf.coef_norm_sq() + 10.0 * hinge.mean() + 2.0 * reference_s3vm.unlabeled_loss("shg", f[~known]).mean()
    # reported divided by C (kernelbench/solvers/objectives.py): the labeled hinge enters as its mean
    assert math.isclose(clf.objective(X, y_semi), r / 10.0, rel_tol=1e-9)


def test_same_seed_same_model_and_clone():
    X, _, y_semi = _moons(n=400)
    a = TSGS3VMClassifier(batch_size=32, random_state=3).fit(X, y_semi)
    b = clone(a).fit(X, y_semi)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    assert b.get_params()["batch_size"] == 32


def test_any_two_label_values_and_all_labeled_input():
    X, y, y_semi = _moons(n=400)
    labels = np.where(np.isnan(y_semi), np.nan, np.where(y_semi > 0, 2.0, 1.0))
    clf = TSGS3VMClassifier(batch_size=32, random_state=0).fit(X, labels)
    assert set(clf.classes_) == {1.0, 2.0}
    full = TSGS3VMClassifier(batch_size=32, passes=1, random_state=0).fit(X, y)   # no NaN: supervised
    assert full.n_unlabeled_ == 0 and full.C_unlabeled_ == 0.0 and full.n_iter_ == math.ceil(400 / 32)


@pytest.mark.parametrize("make, match", [
    (lambda X, y: (X, np.full(len(y), np.nan)), "no labeled rows"),
    (lambda X, y: (X, np.where(np.arange(len(y)) < 5, 1.0, np.nan)), "only one class"),
    (lambda X, y: (X, y[:-1]), "rows"),
])
def test_bad_labels_are_clear_errors(make, match):
    X, y, _ = _moons(n=100)
    X, labels = make(X, y.astype(float))
    with pytest.raises(SolverError, match=match):
        TSGS3VMClassifier(batch_size=16).fit(X, labels)


@pytest.mark.parametrize("cls, params, error, match", [
    (TSGS3VMClassifier, {"eta": 0.5}, SolverError, r"eta must be a number >= 1, got 0\.5"),
    (TSGS3VMClassifier, {"unlabeled_loss": "hinge"}, SolverError,
     "unlabeled_loss must be one of 'shg', 'sshg', 'ramp', 'da', got 'hinge'"),
    (TSGS3VMClassifier, {"offset": "bias"}, SolverError, "offset must be one of 'none', 'learned', 'balanced', got 'bias'"),
    (FRS3VMClassifier, {"n_components": 0}, SolverError, "n_components must be an integer >= 1"),
    (TSGS3VMClassifier, {"C": 1e12, "eta": 1.0, "batch_size": 16}, DivergenceError, "eta"),
])
def test_bad_params_are_clear_errors(cls, params, error, match):
    X, _, y_semi = _moons(n=100)
    with pytest.raises(error, match=match):
        cls(**params).fit(X, y_semi)


@pytest.mark.parametrize("offset", ["none", "balanced"])
def test_frs3vm_matches_a_numpy_sgd_on_fixed_features(offset):
    """One pass written out: β ← (1−γ)β − γ (2/D) Σ_i g_i cos(ω·x_i + b) over fixed (ω, b). With
    n_l = 26 < batch_size every labeled batch is the whole labeled set (in some order). balanced:
    f = h + b, b from U_t (reference_s3vm.balanced_offset), and, for prediction, b solved again
    after the last step on the pass's last batch_size rows (the last batch holds 24); 6 positive of 26 labels against about half the unlabeled rows, so the
    balance step has work to do."""
    X, y, y_semi = _moons(n=300, n_labeled=40)
    y_semi[np.flatnonzero(y_semi == 1)[:14]] = np.nan
    clf = FRS3VMClassifier(C=20.0, C_unlabeled=1.0, gamma=0.05, eta=10.0, batch_size=50,
                           n_components=24, offset=offset, random_state=0)
    clf.begin(X, y_semi)
    unl_rows = clf._order.copy()                  # this pass's order of the unlabeled rows
    W, b, beta, bias = clf.W_.copy(), clf.b_.copy(), np.zeros(24), 0.0
    np.testing.assert_allclose(W, reference.feature_block(_seed_of(clf), 0, 24, 2, gamma=clf.gamma_)[0],
                               rtol=1e-12)
    clf.run(clf.steps_per_pass)
    rows_l = np.flatnonzero(~np.isnan(y_semi))
    nl = len(rows_l)
    assert nl == 26 and clf.labeled_batch_size == nl and clf.steps_per_pass == 6
    rate = np.mean(y[rows_l] > 0)

    def balance(h):
        return reference_s3vm.balanced_offset(h, rate, reference_s3vm.balance_tolerance(rate, nl, len(h)))

    moved = []
    for t in range(6):
        rows_u = unl_rows[t * 50:(t + 1) * 50]
        Z = np.cos(X[np.concatenate([rows_l, rows_u])] @ W.T + b)
        f = Z @ beta
        if offset == "balanced":
            bias = balance(f[nl:])
            f = f + bias
            moved.append(bias != 0.0)
        g = np.concatenate([20.0 / nl * reference_s3vm.hinge_derivative(f[:nl], y[rows_l]),
                            1.0 / len(rows_u) * reference_s3vm.unlabeled_derivative("shg", f[nl:])])
        beta = 0.9 * beta - 0.1 * (2.0 / 24) * (g @ Z)
    if offset == "balanced":      # b for prediction: on the pass's last 50 (= batch_size) rows
        bias = balance(np.cos(X[unl_rows[-50:]] @ W.T + b) @ beta)
    np.testing.assert_allclose(clf.coef_, beta, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(clf.offset_, bias, rtol=1e-9, atol=1e-12)
    assert any(moved) == (offset == "balanced"), "the balance step must act in this pass"


def _seed_of(clf):
    return clf.feature_seed_


def test_frs3vm_learns_and_defaults_to_sqrt_n_features():
    X, _, y_semi = _moons(n=900)
    X_test, y_test = make_moons(n_samples=1000, noise=0.08, random_state=1)
    y_test = np.where(y_test == 1, 1, -1)
    clf = FRS3VMClassifier(C=100.0, gamma=2.0, eta=100.0, batch_size=64, random_state=0).fit(X, y_semi)
    assert clf.n_components_ == 30                                  # ⌈√900⌉
    assert np.mean(clf.predict(X_test) != y_test) < 0.2


def test_both_are_registered_for_the_semi_supervised_task():
    specs = algorithms()
    for name in ("tsgs3vm", "frs3vm"):
        assert "semi-supervised" in specs[name].tasks and "binary" in specs[name].tasks
        est = specs[name].build({}, seed=0)
        assert est.get_params()["unlabeled_loss"] == "shg"
    assert specs["tsgs3vm"].defaults()["batch_size"] == 256          # §6.1
    # the check the config layer runs before any work: the field, the value and what is allowed
    with pytest.raises(SolverError, match=r"eta must be a number >= 1, got 0\.1"):
        specs["tsgs3vm"].build({"eta": 0.1})._check_params()
