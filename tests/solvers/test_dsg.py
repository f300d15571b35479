"""DSG (Dai et al. 2014, Alg. 1–2): the compiled core against the NumPy reference, and the
scikit-learn estimators against exact kernel methods (SVC, KernelRidge) and sklearn's checks."""
import math

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from kernelbench.errors import SolverError
from kernelbench.estimators import DSGClassifier, DSGRegressor
from kernelbench.solvers._dsg import DSGCore
from kernelbench.solvers.losses import code
from kernelbench.solvers._random_features import feature_block
from kernelbench.solvers.base import DivergenceError

import reference

LOSS_NAMES = ("hinge", "logistic", "squared", "smooth_hinge")


# ---------------------------------------------------------------------------------------------
# compiled core vs tests/reference.dsg
# ---------------------------------------------------------------------------------------------

def _core(*, d, loss, kernel, gamma, lam, step, t0, seed, dtype, cache, threads, block_size):
    return DSGCore(n_dims=d, n_outputs=1, block_size=block_size, kernel=kernel, gamma=gamma,
                   loss=code(loss), lam=lam, step=step, t0=t0, seed=seed, dtype=dtype,
                   cache_features=cache, threads=threads)


def _problem(loss, n=37, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if loss == "squared":
        y = np.sin(X[:, 0]) + 0.3 * X[:, 1]
    else:
        y = np.where(X[:, 0] * X[:, 1] + 0.2 * X[:, 2] > 0, 1.0, -1.0)
    # one pass in a random order, then part of a second: the last batch is partial
    rows = np.concatenate([rng.permutation(n), rng.permutation(n)[:8]]).astype(np.int64)
    return X, y, rows


def _reference_coef(blocks):
    # reference: f = Σ α √2 cos(·); core: f = Σ β cos(·)  ⇒  β = √2 α
    return np.sqrt(2.0) * np.concatenate([alpha for _, _, alpha in blocks])


def _tolerances(dtype, ref):
    scale = np.max(np.abs(ref))
    if dtype == "float64":
        return dict(rtol=1e-10, atol=1e-12 * scale)
    return dict(rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_core_matches_reference(loss, kernel, dtype, cache, threads):
    X, y, rows = _problem(loss)
    batch, block = 8, 16                      # 45 rows -> 5 full batches + one of 5
    params = dict(kernel=kernel, gamma=0.5, lam=0.05, step=1.5, t0=2.0, seed=1234)
    blocks, ref_predict = reference.dsg(X, y, rows, batch_size=batch, block_size=block, loss=loss, **params)

    core = _core(d=X.shape[1], loss=loss, dtype=dtype, cache=cache, threads=threads,
                 block_size=block, **params)
    with threadpool_limits(limits=1, user_api="blas"):
        status, steps = core.train(np.ascontiguousarray(X, dtype=dtype), y.reshape(-1, 1), rows, batch)
        assert (status, steps) == (0, math.ceil(len(rows) / batch)) == (0, 6)
        assert core.n_iter == 6 and core.n_blocks == 6 and core.n_random_features == 6 * block

        ref_coef = _reference_coef(blocks)
        coef = core.coef()
        assert coef.shape == (1, 6 * block) and coef.dtype == np.float64
        np.testing.assert_allclose(coef[0], ref_coef, **_tolerances(dtype, ref_coef))

        Xq = np.random.default_rng(5).normal(size=(23, X.shape[1]))
        F = core.predict(np.ascontiguousarray(Xq, dtype=dtype))
        ref_f = ref_predict(Xq)
        assert F.shape == (23, 1)
        np.testing.assert_allclose(F[:, 0], ref_f, **_tolerances(dtype, ref_f))
    # the model is not trivial: it learned something of the targets' size
    assert np.max(np.abs(ref_f)) > 0.05


def test_core_hinge_reference_run_avoids_the_kink():
    """Guard for the float32 hinge comparison above: no margin lies near the kink y f = 1, where
    float32 rounding could legitimately pick the other branch."""
    X, y, rows = _problem("hinge")
    blocks, predict = reference.dsg(X, y, rows, batch_size=8, block_size=16, loss="hinge",
                                    kernel="rbf", gamma=0.5, lam=0.05, step=1.5, t0=2.0, seed=1234)
    assert np.min(np.abs(y * predict(X) - 1.0)) > 1e-3


@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_core_many_features_and_rows_in_chunks(cache, threads):
    """More than FEATURE_CHUNK (1024) features and more than ROW_CHUNK (256) prediction rows per
    thread, so every chunking path of _accumulate is used; two train calls continue the schedule
    exactly as one reference run."""
    rng = np.random.default_rng(3)
    n, d, batch, block = 90, 4, 4, 64
    X = rng.normal(size=(n, d))
    y = np.cos(X[:, 0]) - X[:, 2]
    rows = rng.integers(0, n, size=84).astype(np.int64)           # 21 batches -> 1344 features
    params = dict(kernel="rbf", gamma=0.3, lam=0.01, step=1.0, t0=1.0, seed=77)
    blocks, ref_predict = reference.dsg(X, y, rows, batch_size=batch, block_size=block,
                                        loss="squared", **params)
    core = _core(d=d, loss="squared", dtype="float64", cache=cache, threads=threads,
                 block_size=block, **params)
    Y = y.reshape(-1, 1)
    with threadpool_limits(limits=1, user_api="blas"):
        assert core.train(X, Y, rows[:40], batch) == (0, 10)
        assert core.train(X, Y, rows[40:], batch) == (0, 11)
        ref_coef = _reference_coef(blocks)
        assert core.n_random_features == 1344
        np.testing.assert_allclose(core.coef()[0], ref_coef, **_tolerances("float64", ref_coef))
        Xq = rng.normal(size=(700, d))
        ref_f = ref_predict(Xq)
        np.testing.assert_allclose(core.predict(Xq)[:, 0], ref_f, **_tolerances("float64", ref_f))


def test_core_rescaling_of_tiny_shrink_scale():
    """With γ_t λ ≈ 0.99 the product of shrink factors falls below 1e-100 within ~50 iterations,
    so the core's renormalisation of R·scale runs; the coefficients must still match Alg. 1."""
    rng = np.random.default_rng(4)
    n, d, batch, block = 40, 2, 2, 4
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    rows = np.concatenate([rng.permutation(n), rng.permutation(n)]).astype(np.int64)  # 40 its
    params = dict(kernel="rbf", gamma=1.0, lam=0.99, step=1e6, t0=1e6, seed=5)
    blocks, ref_predict = reference.dsg(X, y, rows, batch_size=batch, block_size=block,
                                        loss="logistic", **params)
    core = _core(d=d, loss="logistic", dtype="float64", cache=True, threads=1, block_size=block, **params)
    with threadpool_limits(limits=1, user_api="blas"):
        assert core.train(X, y.reshape(-1, 1), rows, batch) == (0, 40)
    ref_coef = _reference_coef(blocks)
    # old coefficients are ~0.01^age: compare each block at its own scale
    coef = core.coef()[0].reshape(-1, block)
    for k, ref_k in enumerate(ref_coef.reshape(-1, block)):
        np.testing.assert_allclose(coef[k], ref_k, rtol=1e-9, err_msg=f"block {k}")
    assert np.all(np.isfinite(core.coef()))
    np.testing.assert_allclose(core.predict(X)[:, 0], ref_predict(X), rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# estimators: determinism, labels, input validation
# ---------------------------------------------------------------------------------------------

def _moons(n=200, seed=0):
    return make_moons(n, noise=0.2, random_state=seed)


FAST = dict(batch_size=16, block_size=16, passes=2, gamma=1.0, step=50.0, t0=50.0)


def test_same_random_state_same_predictions():
    X, y = _moons()
    a = DSGClassifier(**FAST, random_state=3).fit(X, y)
    b = DSGClassifier(**FAST, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    # refitting the same object gives the same model again
    first = a.decision_function(X).copy()
    a.fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), first)
    r1 = DSGRegressor(**FAST, random_state=3).fit(X, X[:, 0])
    r2 = DSGRegressor(**FAST, random_state=3).fit(X, X[:, 0])
    np.testing.assert_array_equal(r1.predict(X), r2.predict(X))


@pytest.mark.parametrize("dtype, rtol", [("float64", 1e-10), ("float32", 1e-4)])
@pytest.mark.parametrize("cache", [True, False])
def test_threads_do_not_change_the_model(dtype, rtol, cache):
    X, y = _moons(300)
    kw = dict(FAST, dtype=dtype, cache_features=cache, random_state=7)
    one = DSGClassifier(**kw, threads=1).fit(X, y)
    two = DSGClassifier(**kw, threads=2).fit(X, y)
    f1, f2 = one.decision_function(X), two.decision_function(X)
    np.testing.assert_allclose(f2, f1, rtol=rtol, atol=rtol * np.max(np.abs(f1)))
    c1, c2 = one.core_.coef(), two.core_.coef()
    np.testing.assert_allclose(c2, c1, rtol=rtol, atol=rtol * np.max(np.abs(c1)))


def test_different_random_state_different_model():
    X, y = _moons()
    a = DSGClassifier(**FAST, random_state=1).fit(X, y).decision_function(X)
    b = DSGClassifier(**FAST, random_state=2).fit(X, y).decision_function(X)
    assert np.mean(np.abs(a - b)) > 1e-3 * np.mean(np.abs(a))
    assert not np.any(a == b)


@pytest.mark.parametrize("labels", [(3, 7), (-1, 1), ("cat", "dog"), (-2.0, 5.0), (True, False)])
def test_any_two_labels_round_trip(labels):
    X, y01 = _moons(200)
    y = np.asarray(labels)[y01]
    m = DSGClassifier(**FAST, random_state=0).fit(X, y)
    np.testing.assert_array_equal(m.classes_, np.unique(np.asarray(labels)))
    pred = m.predict(X)
    assert pred.dtype == y.dtype
    assert set(pred.tolist()) <= set(np.asarray(labels).tolist())
    assert np.mean(pred == y) > 0.8
    # classes_[1] is the positive side of the decision function
    np.testing.assert_array_equal(pred == m.classes_[1], m.decision_function(X) > 0)


def test_three_classes_with_a_margin_loss_is_a_clear_error_and_auto_is_softmax():
    X, _ = _moons(90)
    y = np.repeat([0, 1, 2], 30)
    with pytest.raises(SolverError, match="2 classes") as info:
        DSGClassifier(**FAST, loss="hinge").fit(X, y)
    assert isinstance(info.value, ValueError)
    assert DSGClassifier(**FAST).fit(X, y).loss_ == "softmax"   # the default, loss "auto"


@pytest.mark.parametrize("Estimator", [DSGClassifier, DSGRegressor])
def test_nan_and_empty_input_raise_value_error(Estimator):
    X, y = _moons(40)
    Xn = X.copy()
    Xn[3, 1] = np.nan
    with pytest.raises(ValueError):
        Estimator(**FAST).fit(Xn, y)
    with pytest.raises(ValueError):
        Estimator(**FAST).fit(np.empty((0, 2)), np.empty(0))
    m = Estimator(**FAST, random_state=0).fit(X, y)
    with pytest.raises(ValueError):
        m.predict(Xn)
    with pytest.raises(ValueError):
        m.predict(np.empty((3, 5)))          # wrong number of features


def test_regressor_rejects_nan_targets():
    X, _ = _moons(40)
    y = X[:, 0].copy()
    y[5] = np.inf
    with pytest.raises(ValueError):
        DSGRegressor(**FAST).fit(X, y)


@pytest.mark.parametrize("bad", [dict(loss="hinge"), dict(kernel="poly"), dict(dtype="float16"),
                                 dict(block_size=0), dict(batch_size=0), dict(step=-1.0),
                                 dict(C=0.0), dict(gamma="auto")])
def test_invalid_parameters_raise_solver_error(bad):
    X, _ = _moons(40)
    with pytest.raises(SolverError):
        DSGRegressor(**dict(FAST, **bad)).fit(X, X[:, 0])


# ---------------------------------------------------------------------------------------------
# estimators against exact kernel methods
# ---------------------------------------------------------------------------------------------

def test_classifier_accuracy_close_to_svc():
    X, y = make_moons(600, noise=0.2, random_state=0)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.5, random_state=0)
    gamma, C = 1.0, 1.0
    svc = SVC(C=C, gamma=gamma, kernel="rbf").fit(Xtr, ytr).score(Xte, yte)
    # DSG objective (1/n) Σ hinge + λ/2‖f‖², λ = 1/(nC)  ≡  SVC's C Σ hinge + ½‖f‖² (up to bias)
    dsg = DSGClassifier(gamma=gamma, C=C, batch_size=32, block_size=32, step=300.0, t0=300.0,
                        passes=5, random_state=0).fit(Xtr, ytr).score(Xte, yte)
    assert svc > 0.85                         # the problem is learnable and nonlinear
    assert dsg >= svc - 0.04, (dsg, svc)
    # and it's not a linear classifier in disguise
    from sklearn.linear_model import LogisticRegression
    linear = LogisticRegression().fit(Xtr, ytr).score(Xte, yte)
    assert dsg > linear + 0.03, (dsg, linear)


def _sine(n=400, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, size=(n, 1))
    y = np.sin(3 * x[:, 0]) + 0.1 * rng.normal(size=n)
    xt = np.linspace(-2, 2, 200)[:, None]
    return x, y, xt, np.sin(3 * xt[:, 0])


def test_regressor_mse_close_to_kernel_ridge():
    x, y, xt, yt = _sine()
    gamma, C = 2.0, 1.0
    # (1/n) Σ ½(f−y)² + λ/2‖f‖² with λ = 1/(nC), times 2n: Σ(f−y)² + (1/C)‖f‖²  ⇒  alpha = 1/C
    krr = KernelRidge(alpha=1.0 / C, kernel="rbf", gamma=gamma).fit(x, y)
    mse_krr = np.mean((krr.predict(xt) - yt) ** 2)
    m = DSGRegressor(gamma=gamma, C=C, batch_size=32, block_size=32, step=400.0, t0=400.0,
                     passes=10, random_state=0).fit(x, y)
    mse_dsg = np.mean((m.predict(xt) - yt) ** 2)
    assert mse_krr < 0.01
    assert mse_dsg < 2 * mse_krr + 0.002, (mse_dsg, mse_krr)
    assert mse_dsg < 0.05 * np.var(yt)


def test_more_passes_approach_the_exact_kernel_solution():
    x, y, xt, _ = _sine()
    gamma, C = 2.0, 1.0
    f_krr = KernelRidge(alpha=1.0 / C, kernel="rbf", gamma=gamma).fit(x, y).predict(xt)
    gaps = {}
    for passes in (1, 30):
        m = DSGRegressor(gamma=gamma, C=C, batch_size=32, block_size=32, step=400.0, t0=400.0,
                         passes=passes, dtype="float64", random_state=0).fit(x, y)
        gaps[passes] = np.mean(np.abs(m.predict(xt) - f_krr))
    assert gaps[30] < 0.5 * gaps[1], gaps
    assert gaps[30] < 0.02, gaps


# ---------------------------------------------------------------------------------------------
# divergence, partial_fit, objective
# ---------------------------------------------------------------------------------------------

def test_huge_step_raises_divergence_error_not_nan():
    x, y, _, _ = _sine(200)
    # γ_1 λ ≥ 1: the shrink (1 − γ_t λ) would flip signs
    with pytest.raises(DivergenceError, match="smaller step"):
        DSGRegressor(step=1e30, t0=100.0, batch_size=16, block_size=8, gamma=1.0, random_state=0).fit(x, y)
    # λ tiny, so the shrink is fine, but f overflows within a few iterations -> NaN/inf detected
    with pytest.raises(DivergenceError, match="smaller step"):
        DSGRegressor(step=1e30, t0=100.0, C=1e300, batch_size=4, block_size=8, gamma=1.0, random_state=0).fit(x, y)
    assert issubclass(DivergenceError, SolverError) and issubclass(DivergenceError, ValueError)


def test_huge_step_classifier_raises():
    X, y = _moons(200)
    with pytest.raises(DivergenceError, match="smaller step"):
        DSGClassifier(step=1e30, t0=100.0, loss="squared", C=1e300, batch_size=4, block_size=8, gamma=1.0,
                      random_state=0).fit(X, y)


def test_partial_fit_continues_iterations_and_schedule():
    X, y = _moons(64)
    kw = dict(batch_size=8, block_size=4, gamma=1.0, step=2.0, t0=3.0, dtype="float64", random_state=0)
    m = DSGClassifier(**kw)
    m.partial_fit(X[:40], y[:40], classes=[0, 1])
    assert m.n_iter_ == 5 and m.core_.n_iter == 5 and m.n_random_features_ == 20
    assert m.samples_seen_ == 40
    coef_before = m.core_.coef().copy()
    lam = m.lambda_
    assert lam == pytest.approx(1.0 / 40)          # λ = 1/(nC) of the first chunk
    m.partial_fit(X[40:], y[40:])
    assert m.n_iter_ == 8 and m.core_.n_iter == 8 and m.n_random_features_ == 32
    assert m.samples_seen_ == 64
    # Alg. 1 line 6 with the step schedule continuing at t = 6, 7, 8 (not restarting at 1)
    shrink = np.prod([1 - kw["step"] / (kw["t0"] + t) * lam for t in (6, 7, 8)])
    np.testing.assert_allclose(m.core_.coef()[:, :20], coef_before * shrink, rtol=1e-12)
    assert np.all(m.core_.coef()[:, 20:] != 0)
    assert set(m.predict(X)) <= {0, 1}


def _f_from_coef(model, X):
    """f(x) = Σ_j β_j cos(ω_j·x + b_j), with ω regenerated block by block from the seed."""
    core = model.core_
    beta = core.coef()[0]
    F = model.block_size
    f = np.zeros(len(X))
    for t in range(core.n_blocks):
        W, b = feature_block(core.seed, t, F, X.shape[1], model.kernel, model.gamma_)
        f += np.cos(X @ W.T + b) @ beta[t * F:(t + 1) * F]
    return f


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_objective_matches_independent_computation(loss):
    X, y01 = _moons(120)
    y = np.array([3, 7])[y01]
    m = DSGClassifier(loss=loss, batch_size=16, block_size=8, passes=2, gamma=1.0, C=2.0, step=20.0,
                      t0=20.0, dtype="float64", random_state=0).fit(X, y)
    f = _f_from_coef(m, X)
    np.testing.assert_allclose(m.decision_function(X), f, rtol=1e-10, atol=1e-12)
    ypm = np.where(y == 7, 1.0, -1.0)
    mrg = ypm * f
    losses = {"hinge": np.maximum(0, 1 - mrg), "logistic": np.logaddexp(0, -mrg),
              "squared": 0.5 * (f - ypm) ** 2,
              "smooth_hinge": np.where(mrg >= 1, 0, np.where(mrg <= 0, 0.5 - mrg, 0.5 * (1 - mrg) ** 2))}
    lam = 1.0 / (len(X) * 2.0)
    beta = m.core_.coef()
    expected = np.mean(losses[loss]) + lam / 2 * (m.block_size / 2) * np.sum(beta ** 2)
    assert m.objective(X, y) == pytest.approx(expected, rel=1e-10)


def test_regressor_objective_and_training_decreases_it():
    x, y, _, _ = _sine(300)
    kw = dict(gamma=2.0, batch_size=32, block_size=16, step=300.0, t0=300.0, dtype="float64", random_state=0)
    short = DSGRegressor(**kw, passes=0.2).fit(x, y)
    long = DSGRegressor(**kw, passes=5).fit(x, y)
    for m in (short, long):
        f = _f_from_coef(m, x)
        expected = np.mean(0.5 * (f - y) ** 2) + m.lambda_ / 2 * (m.block_size / 2) * np.sum(m.core_.coef() ** 2)
        assert m.objective(x, y) == pytest.approx(expected, rel=1e-10)
    assert long.objective(x, y) < 0.5 * short.objective(x, y)


# ---------------------------------------------------------------------------------------------
# regressions: bugs found while writing these tests, now fixed
# ---------------------------------------------------------------------------------------------

def _readonly(a):
    a = np.array(a, order="C")               # C-contiguous: no copy is made on the way in
    a.setflags(write=False)
    return a


@pytest.mark.parametrize("what", ["fit X", "fit y", "predict X"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_read_only_inputs(what, dtype):
    """Read-only data (joblib memmaps) already in the feature dtype is used without a copy."""
    X, _ = _moons(60)
    X = X.astype(dtype)
    y = X[:, 0] - X[:, 1]
    ref = DSGRegressor(**FAST, dtype=dtype, random_state=0).fit(X, y).predict(X)
    m = DSGRegressor(**FAST, dtype=dtype, random_state=0)
    if what == "fit X":
        m.fit(_readonly(X), y)
    elif what == "fit y":
        m.fit(X, _readonly(y.astype(np.float64)))
    else:
        m.fit(X, y)
    np.testing.assert_array_equal(m.predict(_readonly(X)), ref)


@pytest.mark.parametrize("cache", [True, False])
def test_read_only_model_can_predict(cache):
    """A model loaded read-only (joblib.load(mmap_mode='r')) predicts as the writable one."""
    X, y = _moons(60)
    m = DSGClassifier(**FAST, cache_features=cache, random_state=0).fit(X, y)
    expected = m.decision_function(X)
    for arr in (m.core_.R, m.core_.W, m.core_.b):
        if arr is not None:
            arr.setflags(write=False)
    np.testing.assert_array_equal(m.decision_function(X), expected)


def test_unfitted_predict_raises_not_fitted_error():
    from sklearn.exceptions import NotFittedError
    with pytest.raises(NotFittedError):
        DSGClassifier().predict(np.zeros((2, 2)))


def test_fit_after_partial_fit_starts_afresh():
    X, y = _moons(64)
    m = DSGClassifier(**FAST, random_state=0)
    m.partial_fit(X, y, classes=[0, 1])
    m.fit(X, np.array([3, 7])[y])
    np.testing.assert_array_equal(m.classes_, [3, 7])


def test_registered_algorithm_builds_the_estimators():
    from kernelbench.estimators import algorithms
    spec = algorithms()["dsg"]
    clf = spec.build({"batch_size": 8}, seed=5, task="binary")
    reg = spec.build({"batch_size": 8}, seed=5, task="regression")
    assert isinstance(clf, DSGClassifier) and clf.loss == "auto" and clf.random_state == 5
    assert isinstance(reg, DSGRegressor) and reg.loss == "auto" and reg.batch_size == 8
    X, y = _moons(40)
    assert clf.fit(X, y).loss_ == "hinge"                    # Dai et al.'s SVM for two classes
    assert reg.fit(X, y.astype(float)).loss_ == "squared"    # kernel ridge regression


def test_regressor_passes_sklearns_training_check_with_enough_steps():
    """The registry-wide checks (test_registry_estimators.py) run the defaults, whose one pass is too
    short for check_regressors_train; with a few passes of small batches DSG regression passes it."""
    from sklearn.utils.estimator_checks import check_regressors_train
    # step = t0 keeps γ_1 λ < 1 even for n = 1 (λ = 1/(nC) = 1)
    reg = DSGRegressor(batch_size=8, block_size=8, passes=3, step=30.0, t0=30.0, random_state=0)
    check_regressors_train("DSGRegressor", reg)


def test_step_too_large_reports_the_right_iteration():
    X, _ = _moons(20)
    m = DSGRegressor(step=1e6, t0=1.0, batch_size=4, block_size=4, gamma=1.0, random_state=0)
    with pytest.raises(DivergenceError) as info:
        m.fit(X, X[:, 0])                     # γ_1 λ = 1e6/2 · 1/20 ≥ 1 at iteration 1
    assert "at iteration 1:" in str(info.value)
    assert m.core_.n_iter == m.core_.n_blocks == 0
