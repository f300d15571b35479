"""AsyDSSKL (Gu et al. 2018): the prox step, the Table 1 losses, the compiled solver against the
NumPy reference step for step (threads=1), convergence to an optimum found independently by
scipy.optimize, the OpenMP build, and the estimator API."""
import os

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar
from sklearn.base import clone

import reference
import reference_asydsskl as ref
from kernelbench.errors import SolverError
from kernelbench.solvers import _asydsskl
from kernelbench.solvers.losses import code
from kernelbench.solvers.asydsskl import AsyDSSKLClassifier, AsyDSSKLRegressor, _features


def _binary(n=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(np.sin(X[:, 0] * 1.5) + 0.5 * X[:, 1] ** 2 - 0.5 + 0.3 * rng.normal(size=n) > 0, 1, -1)
    return X, y


# ---- the proximal step (Alg. 2 line 10) ------------------------------------------------------
@pytest.mark.parametrize("u", [-3.0, -0.7, -0.2, 0.0, 0.1, 0.5, 2.5])
@pytest.mark.parametrize("t", [0.0, 0.3, 1.0])
def test_prox_step_is_the_argmin(u, t):
    """soft threshold = argmin_x ½(x − u)² + t|x|, found here by a scalar minimiser."""
    best = minimize_scalar(lambda x: 0.5 * (x - u) ** 2 + t * abs(x), bounds=(-5, 5), method="bounded",
                           options={"xatol": 1e-10}).x
    assert _asydsskl.prox_l1(u, t) == pytest.approx(best, abs=1e-6)
    assert _asydsskl.prox_l1(u, t) == ref.soft_threshold(u, t)


# ---- the compiled solver against the NumPy reference ---------------------------------------------
def _reference_phi(X, est, rounds):
    """Φ columns of every feature the run can use (ids round·R + k), ω from tests/reference.py,
    evaluated by the estimator's float32 feature map (checked separately below) and, for half
    storage, rounded to float16 by NumPy (an independent conversion)."""
    R = est.features_per_round
    cols = []
    for r in range(rounds):
        W, b = reference.feature_block(est._feature_seed, r, R, X.shape[1], gamma=est.gamma_)
        cols.append(_features(X.astype(np.float32), W.astype(np.float32), b.astype(np.float32)))
    Phi = np.hstack(cols)
    return (Phi.astype(np.float16) if est.feature_dtype == "float16" else Phi).astype(np.float64)


@pytest.mark.parametrize("feature_dtype", ["float32", "float16"])
@pytest.mark.parametrize("loss", ["logistic", "smooth_hinge", "sigmoid"])
def test_one_thread_matches_numpy_reference_step_for_step(loss, feature_dtype):
    X, y = _binary(n=200, d=4)
    rounds, S = 3, 2
    est = AsyDSSKLClassifier(loss=loss, gamma=0.5, C=0.05, rounds=rounds, features_per_round=12,
                             outer_loops=S, inner_steps=1100, batch_size=3, step=0.8, threads=1,
                             feature_dtype=feature_dtype, random_state=3)
    est.begin(X, y)
    Phi_all = _reference_phi(X, est, rounds)
    yy = np.where(y == est.classes_[1], 1.0, -1.0)
    ids, w = np.zeros(0, dtype=int), np.zeros(0)
    zero_dropped = 0
    for k in range(rounds * S):
        if k % S == 0:                                            # Alg. 1 line 3
            ids = np.concatenate([ids, (k // S) * 12 + np.arange(12)])
            w = np.concatenate([w, np.zeros(12)])
        w = ref.outer_loop(Phi_all[:, ids], yy, w, loss=loss, sigma=1.0, lam=est.lambda_, eta=est.eta_,
                           batch=3, steps=1100, rng_seed=est._rng_seed, outer_index=k)
        if k % S == S - 1:                                        # Alg. 1 line 5
            zero_dropped += int(np.sum(w == 0))
            ids, w = ids[w != 0], w[w != 0]
        est.run(1)
        np.testing.assert_array_equal(est.feature_ids_, ids)
        np.testing.assert_allclose(est.coef_, w, rtol=1e-9, atol=1e-12, err_msg=f"outer loop {k}")
    assert zero_dropped > 0, "the L1 penalty should zero some weights (C too large for this test)"
    # the objective the estimator reports is problem (4) on the same features
    a = len(ids)
    assert est.objective(X, y) == pytest.approx(ref.objective(Phi_all[:, ids], yy, w, est.lambda_, loss), rel=1e-5)
    assert a == est.n_random_features_ == est.counters()["working_set"]


@pytest.mark.parametrize("feature_dtype", ["float32", "float16"])
def test_feature_matrix_matches_reference_generator(feature_dtype):
    """Φ held by the solver = √2 cos(ωx + b) with ω, b from the independent NumPy generator (to
    float32 accuracy, or to half precision: |error| ≤ 2⁻¹¹|φ| + float32 error)."""
    X, y = _binary(n=100, d=6)
    est = AsyDSSKLClassifier(gamma=0.3, rounds=1, features_per_round=20, outer_loops=1, inner_steps=10,
                             feature_dtype=feature_dtype, random_state=0)
    est.begin(X, y)
    est.run(1)   # round 0 added; nothing dropped before the end of the round (S = 1: dropped now)
    W, b, Phi = ref.features(X, est._feature_seed, 0, 20, "rbf", 0.3)
    np.testing.assert_allclose(est.omega_, W[est.feature_ids_], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(est.phase_, b[est.feature_ids_], rtol=1e-6, atol=1e-6)
    held = est.feature_matrix_.astype(np.float64)
    assert held.dtype == np.float64 and est.feature_matrix_.dtype == np.dtype(feature_dtype)
    truth = Phi[:, est.feature_ids_]
    tolerance = 2e-5 + (2.0 ** -11 * np.abs(truth) if feature_dtype == "float16" else 0.0)
    assert np.all(np.abs(held - truth) <= tolerance)
    # and the model's decision function is Σ w_h φ_h(x) on the kept features
    np.testing.assert_allclose(est.decision_function(X), Phi[:, est.feature_ids_] @ est.coef_, atol=1e-4)


def _scipy_l1_optimum(Phi, y, lam, loss):
    """min mean ℓ(Φw, y) + λ‖w‖₁ by L-BFGS-B on w = u − v, u, v ≥ 0 (an independent solver)."""
    n, a = Phi.shape

    def fun(uv):
        w = uv[:a] - uv[a:]
        z = Phi @ w
        g = Phi.T @ ref.loss_derivative(loss, z, y) / n
        return np.mean(ref.loss_value(loss, z, y)) + lam * uv.sum(), np.concatenate([g + lam, -g + lam])

    res = minimize(fun, np.zeros(2 * a), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * a),
                   options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12})
    return res.x[:a] - res.x[a:], res.fun


@pytest.mark.parametrize("feature_dtype", ["float32", "float16"])
@pytest.mark.parametrize("loss", ["logistic", "squared"])
def test_converges_to_the_scipy_optimum_on_a_small_convex_problem(loss, feature_dtype):
    """One round of Algorithm 1 (A fixed: 24 features) with many SVRG outer loops solves the
    convex problem (4); its objective and weights match scipy's on the same features (for half
    storage: the half-rounded features, the problem the solver is given)."""
    X, y = _binary(n=240, d=3, seed=5)
    est = AsyDSSKLClassifier(loss=loss, gamma=0.4, C=0.1, rounds=1, features_per_round=24,
                             outer_loops=60, inner_steps=2000, batch_size=4, step=0.5 if loss == "logistic" else 0.1, threads=1,
                             feature_dtype=feature_dtype, random_state=7)
    est.begin(X, y)
    Phi = _reference_phi(X, est, 1)
    yy = np.where(y == est.classes_[1], 1.0, -1.0)
    w_opt, p_opt = _scipy_l1_optimum(Phi, yy, est.lambda_, loss)
    est.run(est.steps_per_pass)
    w = np.zeros(24)
    w[est.feature_ids_] = est.coef_
    p = ref.objective(Phi, yy, w, est.lambda_, loss)
    assert p == pytest.approx(p_opt, rel=1e-6, abs=1e-9)
    np.testing.assert_allclose(w, w_opt, atol=2e-3)
    assert np.sum(w_opt == 0) >= 1 and np.array_equal(w == 0, np.abs(w_opt) < 1e-6)


@pytest.mark.parametrize("feature_dtype", ["float32", "float16"])
def test_two_threads_reach_the_same_optimum(feature_dtype):
    """Lock-free with 2 threads: nondeterministic, but the same convex problem is solved."""
    X, y = _binary(n=240, d=3, seed=5)
    kw = dict(gamma=0.4, C=0.1, rounds=1, features_per_round=24, outer_loops=60, inner_steps=2000,
              batch_size=4, step=0.5, feature_dtype=feature_dtype, random_state=7)
    one = AsyDSSKLClassifier(threads=1, **kw).fit(X, y)
    two = AsyDSSKLClassifier(threads=2, **kw).fit(X, y)
    assert two.objective(X, y) == pytest.approx(one.objective(X, y), rel=1e-4)


# ---- OpenMP --------------------------------------------------------------------------------------
@pytest.mark.skipif(os.environ.get("KERNELBENCH_ALLOW_NO_OPENMP") == "1", reason="KERNELBENCH_ALLOW_NO_OPENMP=1")
def test_module_with_prange_is_built_with_openmp():
    assert _asydsskl.OPENMP_BUILD is True, "_asydsskl uses prange but was compiled without OpenMP"


# ---- estimator behaviour ---------------------------------------------------------------------------
def test_same_seed_one_thread_is_deterministic_and_sparse():
    X, y = _binary()
    kw = dict(gamma=0.5, C=0.02, rounds=3, features_per_round=32, outer_loops=3, inner_steps=500,
              threads=1, random_state=11)
    a, b = AsyDSSKLClassifier(**kw).fit(X, y), AsyDSSKLClassifier(**kw).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = a.counters()
    assert c["n_nonzero"] == np.count_nonzero(a.coef_) == a.n_random_features_ < c["features_sampled"]


def test_accuracy_close_to_libsvm_on_held_out_data():
    from sklearn.svm import SVC
    X, y = _binary(n=1200, seed=2)
    train, test = slice(0, 800), slice(800, None)
    libsvm = SVC(gamma=0.5, C=1.0).fit(X[train], y[train]).score(X[test], y[test])   # the yardstick
    est = AsyDSSKLClassifier(gamma=0.5, C=1.0, rounds=3, features_per_round=64, outer_loops=5,
                             step=0.5, random_state=0).fit(X[train], y[train])
    assert est.score(X[test], y[test]) >= libsvm - 0.03


def test_regression_with_correntropy_loss():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(400, 2))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] + 0.05 * rng.normal(size=400)
    y[:10] += 20.0                               # outliers: correntropy is robust to them
    kw = dict(gamma=1.0, C=10.0, features_per_round=64, rounds=3, outer_loops=5, step=0.3, random_state=0)
    clean = slice(10, None)
    robust = AsyDSSKLRegressor(**kw).fit(X, y)
    square = AsyDSSKLRegressor(loss="squared", **kw).fit(X, y)
    mse = np.mean((robust.predict(X[clean]) - y[clean]) ** 2)
    assert mse < 0.2 * np.var(y[clean])
    assert mse < np.mean((square.predict(X[clean]) - y[clean]) ** 2)   # outliers pull the squared fit


def test_sklearn_api_and_errors():
    X, y = _binary(n=120)
    est = AsyDSSKLClassifier(rounds=1, outer_loops=2, features_per_round=8, inner_steps=50, random_state=0)
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(SolverError, match="loss must be one of"):
        AsyDSSKLClassifier(loss="correntropy").fit(X, y)
    with pytest.raises(SolverError, match="max_feature_mb"):
        AsyDSSKLClassifier(max_feature_mb=1e-6).fit(X, y)
    with pytest.raises(SolverError, match=r"step must be a number > 0, got -1\.0"):
        AsyDSSKLClassifier(step=-1.0).fit(X, y)
    with pytest.raises(SolverError, match="loss must be one of 'auto', 'squared', 'correntropy'"):
        AsyDSSKLRegressor(loss="logistic").fit(X, y.astype(float))
    with pytest.raises(SolverError, match="feature_dtype must be one of"):
        AsyDSSKLClassifier(feature_dtype="float64").fit(X, y)
    est.fit(X, y)
    assert set(est.predict(X)) <= set(np.unique(y))
    assert not hasattr(est, "_phi")              # finish() dropped the training features


def test_sparse_input_gives_the_dense_result():
    """CSR input (rcv1-like) is never densified for Φ; the model equals the dense-input one."""
    import scipy.sparse as sp
    X, y = _binary(n=200, d=8)
    X[np.abs(X) < 0.8] = 0.0
    kw = dict(gamma=0.5, rounds=2, features_per_round=16, outer_loops=2, inner_steps=300, random_state=1)
    dense = AsyDSSKLClassifier(**kw).fit(X, y)
    sparse = AsyDSSKLClassifier(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X), atol=1e-4)


def test_partial_fit_is_not_offered():
    """Φ is built from one fixed training set: the estimator has no partial_fit (so scikit-learn
    and callers see it is absent), rather than one that fails when called."""
    est = AsyDSSKLClassifier()
    assert not hasattr(est, "partial_fit")
    with pytest.raises(AttributeError, match="partial_fit"):
        est.partial_fit(*_binary(n=50))


def test_loss_auto_trains_the_papers_loss_per_task():
    """loss 'auto' is logistic for classification and correntropy for regression (Gu et al.'s
    experiments): the same model as naming that loss."""
    X, y = _binary(n=150)
    kw = dict(gamma=0.5, rounds=1, features_per_round=16, outer_loops=2, inner_steps=300, random_state=3)
    auto = AsyDSSKLClassifier(**kw).fit(X, y)
    named = AsyDSSKLClassifier(loss="logistic", **kw).fit(X, y)
    assert auto.loss == "auto" and auto.loss_ == "logistic"
    np.testing.assert_array_equal(auto.coef_, named.coef_)
    t = np.sin(X[:, 0])
    auto = AsyDSSKLRegressor(**kw).fit(X, t)
    named = AsyDSSKLRegressor(loss="correntropy", **kw).fit(X, t)
    assert auto.loss_ == "correntropy"
    np.testing.assert_array_equal(auto.coef_, named.coef_)


# ---- the in-place working-set matrix (no serial copy between rounds) -------------------------------
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("sparse", [False, True])
def test_fill_features_in_place_matches_numpy_cos(threads, sparse):
    """fill_features writes √2 cos(xω + b) into columns col0..col0+R of a wider Φ (float64 NumPy
    truth), and leaves every other column untouched. Half storage holds exactly NumPy's float16
    rounding of the float32 features."""
    import scipy.sparse as sp
    rng = np.random.default_rng(4)
    X = rng.normal(size=(301, 7)).astype(np.float32)
    X[np.abs(X) < 0.5] = 0.0
    W = rng.normal(size=(13, 7)).astype(np.float32)
    b = rng.uniform(0, 2 * np.pi, 13).astype(np.float32)
    Phi = np.full((301, 40), 7.0, dtype=np.float32)
    Xin = sp.csr_matrix(X) if sparse else X
    if sparse:
        Xin.indices, Xin.indptr = Xin.indices.astype(np.intc), Xin.indptr.astype(np.intc)
    _asydsskl.fill_features(Phi, 5, Xin, np.ascontiguousarray(W.T), b, threads)
    truth = np.sqrt(2.0) * np.cos(X.astype(np.float64) @ W.T.astype(np.float64) + b)
    np.testing.assert_allclose(Phi[:, 5:18], truth, atol=2e-5)
    assert np.all(Phi[:, :5] == 7.0) and np.all(Phi[:, 18:] == 7.0)
    with pytest.raises(ValueError, match="do not fit"):
        _asydsskl.fill_features(Phi, 30, X, np.ascontiguousarray(W.T), b, threads)
    half = np.full((301, 40), 7.0, dtype=np.float16).view(np.uint16)
    _asydsskl.fill_features(half, 5, Xin, np.ascontiguousarray(W.T), b, threads)
    np.testing.assert_array_equal(half[:, 5:18], Phi[:, 5:18].astype(np.float16).view(np.uint16))
    assert np.all(half.view(np.float16)[:, :5] == 7.0) and np.all(half.view(np.float16)[:, 18:] == 7.0)


def test_half_conversion_is_numpys_on_every_path():
    """float32 -> half rounding (nearest even; subnormals, overflow, inf, nan) and half -> float in
    the dot and axpy kernels give NumPy's float16 results on every conversion path this machine has
    (AVX-512 / AVX2 F16C and the portable bit-level code)."""
    rng = np.random.default_rng(8)
    special = [0.0, -0.0, 1e-8, -1e-8, 2.0 ** -24, 1.5 * 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -25, 6.1e-5,
               -6.1e-5, 2.0 ** -14, 1.0 + 2.0 ** -11, 1.0 + 3 * 2.0 ** -11, 65504.0, 65519.0, 65520.0,
               1e9, np.inf, -np.inf]
    x = np.concatenate([special, rng.normal(size=5000) * 2.0, rng.normal(size=500) * 1e-5,
                        np.float32(np.sqrt(2.0)) * np.cos(rng.uniform(0, 7, 2000))]).astype(np.float32)
    with np.errstate(over="ignore"):                  # 65520, 1e9 -> inf is the point
        expected = x.astype(np.float16).view(np.uint16)
    X = rng.normal(size=(64, 3)).astype(np.float32)
    Phi32 = _features(X, rng.normal(size=(37, 3)), rng.uniform(0, 6, 37))
    Phi16 = Phi32.astype(np.float16)
    w = rng.normal(size=37)
    detected = _asydsskl.half_path()
    try:
        for path in range(detected + 1):
            _asydsskl.set_half_path(path)
            np.testing.assert_array_equal(_asydsskl.to_half(x), expected, err_msg=f"path {path}")
            nan_bits = _asydsskl.to_half(np.array([np.nan], dtype=np.float32))
            assert np.isnan(nan_bits.view(np.float16)[0])
            z = _asydsskl.predict_features(Phi16.view(np.uint16), 37, w, 1)        # the dot kernel
            np.testing.assert_allclose(z, Phi16.astype(np.float64) @ w, rtol=1e-12, atol=1e-12)
            y = np.sign(rng.normal(size=64))
            dz, grad = np.zeros(64), np.zeros(37)                                   # the axpy kernel
            _asydsskl.full_gradient(Phi16.view(np.uint16), 37, y, w, code("squared"), 1.0, dz, grad, 1)
            np.testing.assert_allclose(grad, Phi16.astype(np.float64).T @ (z - y) / 64, rtol=1e-10, atol=1e-12)
    finally:
        _asydsskl.set_half_path(detected)


@pytest.mark.parametrize("dtype", [np.float32, np.uint16])
@pytest.mark.parametrize("threads", [1, 2])
def test_compact_columns_in_place_equals_fancy_indexing(threads, dtype):
    rng = np.random.default_rng(5)
    Phi = rng.normal(size=(257, 50)).astype(np.float32)
    if dtype == np.uint16:
        Phi = Phi.astype(np.float16).view(np.uint16)
    keep = np.sort(rng.choice(37, size=21, replace=False)).astype(np.intp)
    expected = Phi[:, keep].copy()
    untouched = Phi[:, 21:].copy()
    _asydsskl.compact_columns(Phi, keep, threads)
    np.testing.assert_array_equal(Phi[:, :21], expected)
    np.testing.assert_array_equal(Phi[:, 21:], untouched)     # columns past |A| are not read
    with pytest.raises(ValueError, match="increasing"):
        _asydsskl.compact_columns(Phi, keep[::-1].copy(), threads)


def test_second_pass_grows_the_feature_matrix_and_keeps_the_features_exact():
    """Rounds past M (a second pass) outgrow the preallocated capacity: Φ is grown, and its first
    |A| columns still equal √2 cos(ω_h x + b_h) of the kept features (independent generator)."""
    X, y = _binary(n=150, d=4)
    est = AsyDSSKLClassifier(gamma=0.5, C=0.05, rounds=2, features_per_round=10, outer_loops=1,
                             inner_steps=400, random_state=2)
    est.begin(X, y)
    est.run(2 * est.steps_per_pass + 1)
    assert est.round_ == 5 and est._phi.shape[1] >= est.n_random_features_
    Phi = np.hstack([ref.features(X, est._feature_seed, r, 10, "rbf", 0.5)[2] for r in range(5)])
    np.testing.assert_allclose(est.feature_matrix_, Phi[:, est.feature_ids_], atol=2e-5)
