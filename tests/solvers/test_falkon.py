"""Falkon (Rudi et al. 2017, Alg. 1): Nyström kernel ridge regression by preconditioned CG, against
a dense NumPy solve of the same Nyström system, scikit-learn's KernelRidge (M = n), plain CG, SVC,
and the experiment loop's timed loop."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_wine, make_classification, make_regression
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from kernelbench.config import StopConfig
from kernelbench.solvers.falkon import FalkonClassifier, FalkonRegressor, _upper_cholesky
from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms
from kernelbench.experiment.timing import trace

GAMMA = 0.3


def _regression(n=300, d=5, seed=0):
    X, y = make_regression(n_samples=n + 200, n_features=d, noise=5.0, random_state=seed)
    X = StandardScaler().fit_transform(X)
    y = np.sin(y / 40.0) + 0.1 * X[:, 0] ** 2          # non-linear targets of order 1
    return X[:n], y[:n], X[n:]


def _dense_nystrom(X, Y, centers, gamma, lam):
    """α of (K_nMᵀK_nM + λnK_MM) α = K_nMᵀ y, and J(α) as a function: the problem Falkon solves."""
    K_nM, K_MM = rbf_kernel(X, centers, gamma=gamma), rbf_kernel(centers, gamma=gamma)
    n = X.shape[0]
    alpha = np.linalg.solve(K_nM.T @ K_nM + lam * n * K_MM, K_nM.T @ Y)

    def objective(a):
        a = a.reshape(len(centers), -1)
        residual = K_nM @ a - Y.reshape(n, -1)
        return float(np.mean(np.sum(residual**2, axis=0) / n + lam * np.einsum("ij,ij->j", a, K_MM @ a)))
    return alpha, objective


# ---- the solution: the Nyström system's, KernelRidge's with M = n ------------------------------------
def test_converges_to_the_dense_nystrom_solution():
    X, y, X_test = _regression()
    est = FalkonRegressor(n_centers=60, gamma=GAMMA, C=10.0, max_iter=60, tol=1e-14, dtype="float64",
                          random_state=0).fit(X, y)
    centers = X[est.center_indices_]
    np.testing.assert_array_equal(est.centers_, centers)                 # uniform rows of X, seeded
    alpha, _ = _dense_nystrom(X, y, centers, GAMMA, est.lambda_)
    assert est.lambda_ == pytest.approx(1 / (300 * 10.0))
    np.testing.assert_allclose(est.coef_.ravel(), alpha, rtol=1e-6, atol=1e-6 * np.abs(alpha).max())
    expected = rbf_kernel(X_test, centers, gamma=GAMMA) @ alpha
    np.testing.assert_allclose(est.predict(X_test), expected, rtol=1e-8, atol=1e-8)
    assert not any(hasattr(est, name) for name in ("_T", "_A", "_rows"))   # fit keeps centres and α only


def test_all_rows_as_centres_is_kernel_ridge_with_alpha_one_over_C():
    X, y, X_test = _regression(n=250)
    C = 3.0                                   # λ = 1/(nC): KernelRidge's alpha = λn = 1/C
    est = FalkonRegressor(n_centers=10_000, gamma=GAMMA, C=C, tol=1e-14, dtype="float64",
                          random_state=0).fit(X, y)
    assert est.n_support_vectors_ == 250
    ridge = KernelRidge(alpha=1 / C, kernel="rbf", gamma=GAMMA).fit(X, y)
    np.testing.assert_allclose(est.predict(X_test), ridge.predict(X_test), rtol=1e-7, atol=1e-7)
    # with every row a centre, (n/M) K_MM² is K_nMᵀK_nM exactly: the preconditioner is H's inverse
    # and CG is done after a step or two
    assert est.n_iter_ <= 3 and est.converged_


# ---- CG: monotone objective, residual, its objective counter, preconditioning ----------------------------
def test_objective_decreases_and_the_counter_is_the_nystrom_objective():
    X, y, _ = _regression()
    est = FalkonRegressor(n_centers=80, gamma=GAMMA, C=10.0, tol=1e-14, dtype="float64", random_state=1)
    est.begin(X, y)
    _, objective = _dense_nystrom(X, y, X[est.center_indices_], GAMMA, est.lambda_)
    assert est.krr_objective_ == pytest.approx(np.mean(y**2))          # α = 0 before any iteration
    values, residuals = [], []
    for _ in range(12):
        assert est.run(1) == 1
        values.append(est.krr_objective_)
        residuals.append(est.cg_residual_)
        # read off CG's vectors, it is J(α) of the current α on the whole training set
        assert est.krr_objective_ == pytest.approx(objective(est.coef_), rel=1e-9)
    assert all(b <= a * (1 + 1e-12) for a, b in zip(values, values[1:]))
    assert residuals[-1] < 1e-2 * residuals[0]
    # the experiment loop's objective column: (mean squared loss + λ αᵀK_MMα)/2 on the rows it is given
    assert est.objective(X, y) == pytest.approx(objective(est.coef_) / 2, rel=1e-9)
    assert est.samples_seen_ == 12 * 300 and est.n_iter_ == 12
    est.finish()


def _plain_cg(H, b, target, max_iter=2000):
    """Iterations of unpreconditioned CG on H α = b until J reaches `target` (J: its quadratic)."""
    alpha, r = np.zeros_like(b), b.copy()
    p, rs = r.copy(), r @ r
    for k in range(1, max_iter + 1):
        Hp = H @ p
        step = rs / (p @ Hp)
        alpha += step * p
        r -= step * Hp
        if alpha @ H @ alpha - 2 * alpha @ b <= target:
            return k
        rs, rs_old = r @ r, rs
        p = r + rs / rs_old * p
    return max_iter + 1


def test_preconditioning_takes_fewer_iterations_than_plain_cg():
    X, y, _ = _regression(n=400)
    est = FalkonRegressor(n_centers=100, gamma=GAMMA, C=1e4, max_iter=200, tol=1e-14, dtype="float64",
                          random_state=0)
    est.begin(X, y)
    centers = X[est.center_indices_]
    alpha, objective = _dense_nystrom(X, y, centers, GAMMA, est.lambda_)
    best = objective(alpha)
    target = best + 1e-6 * (objective(np.zeros_like(alpha)) - best)     # 1e-6 of the way left
    falkon = next(k for k in range(1, 201) if est.run(1) and objective(est.coef_) <= target)
    K_nM, K_MM = rbf_kernel(X, centers, gamma=GAMMA), rbf_kernel(centers, gamma=GAMMA)
    n = len(X)
    H, b = (K_nM.T @ K_nM + est.lambda_ * n * K_MM) / n, K_nM.T @ y / n
    plain = _plain_cg(H, b, target - np.mean(y**2))
    assert falkon <= 25 and plain > 5 * falkon, (falkon, plain)
    est.finish()


# ---- tasks: multi-class jointly, binary against SVC, regression -----------------------------------------
def test_multiclass_is_one_vs_all_solved_jointly():
    X, y = load_wine(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(StandardScaler().fit_transform(X), y, test_size=0.3,
                                                        random_state=0, stratify=y)
    params = dict(n_centers=64, gamma=0.05, C=10.0, max_iter=30, tol=1e-14, dtype="float64", random_state=0)
    est = FalkonClassifier(**params).fit(X_train, y_train)
    F = est.decision_function(X_test)
    assert F.shape == (len(X_test), 3) and est.coef_.shape == (64, 3)
    for k, label in enumerate(est.classes_):                 # column k: regression on ±1 (label k or not)
        column = FalkonRegressor(**params).fit(X_train, np.where(y_train == label, 1.0, -1.0))
        np.testing.assert_allclose(F[:, k], column.predict(X_test), rtol=1e-8, atol=1e-8)
    assert np.array_equal(est.predict(X_test), est.classes_[np.argmax(F, axis=1)])
    svc = SVC().fit(X_train, y_train).score(X_test, y_test)
    assert est.score(X_test, y_test) >= svc - 0.02


def test_binary_breast_cancer_is_as_accurate_as_svc():
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    svc = SVC().fit(X_train, y_train).score(X_test, y_test)
    for seed in (0, 1):                         # the defaults: float32, median γ, C = 1, 20 iterations
        est = FalkonClassifier(n_centers=200, random_state=seed).fit(X_train, y_train)
        assert est.decision_function(X_test).shape == (len(X_test),)
        assert set(est.predict(X_test)) <= set(est.classes_)
        assert est.score(X_test, y_test) >= svc - 0.025      # 143 test rows: 0.025 is 3 rows


def test_regression_matches_kernel_ridge_accuracy():
    X, y = make_regression(n_samples=900, n_features=4, noise=1.0, random_state=3)
    X = StandardScaler().fit_transform(X)
    y = np.sin(y / 50.0)
    X_train, X_test, y_train, y_test = X[:600], X[600:], y[:600], y[600:]
    ridge = KernelRidge(alpha=1e-2, kernel="rbf", gamma=0.2).fit(X_train, y_train)
    exact = np.mean((ridge.predict(X_test) - y_test) ** 2)
    est = FalkonRegressor(n_centers=150, gamma=0.2, C=100.0, random_state=0).fit(X_train, y_train)
    mse = np.mean((est.predict(X_test) - y_test) ** 2)
    assert mse <= 1.5 * exact + 1e-4, (mse, exact)


# ---- precision, caching, blocks, sparse input, duplicates --------------------------------------------------
def test_float32_blocks_agree_with_float64():
    X, y, X_test = _regression()
    p64 = FalkonRegressor(n_centers=60, gamma=GAMMA, dtype="float64", random_state=0).fit(X, y).predict(X_test)
    p32 = FalkonRegressor(n_centers=60, gamma=GAMMA, random_state=0).fit(X, y).predict(X_test)
    np.testing.assert_allclose(p32, p64, atol=1e-4 * np.abs(p64).max())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_cached_kernel_matrix_changes_time_not_results(dtype):
    X, y, X_test = _regression()
    kw = dict(n_centers=50, gamma=GAMMA, block_size=64, dtype=dtype, random_state=0)
    itemsize = np.dtype(dtype).itemsize
    cached = FalkonRegressor(kernel_cache_bytes=300 * 50 * itemsize, **kw)
    cached.begin(X, y)
    assert cached._kernel_cache.shape == (300, 50)
    cached.run(20)
    fresh = FalkonRegressor(kernel_cache_bytes=300 * 50 * itemsize - 1, **kw)
    fresh.begin(X, y)
    assert fresh._kernel_cache is None                # one byte short: recomputed in every pass
    fresh.run(20)
    np.testing.assert_array_equal(cached.coef_, fresh.coef_)
    np.testing.assert_array_equal(cached.predict(X_test), fresh.predict(X_test))


def test_block_size_and_sparse_input_do_not_change_the_model():
    X, y, X_test = _regression()
    X[np.abs(X) < 0.7] = 0.0                                  # about half the entries zero
    kw = dict(n_centers=70, gamma=GAMMA, dtype="float64", random_state=2)
    one = FalkonRegressor(block_size=10_000, **kw).fit(X, y)
    small = FalkonRegressor(block_size=7, **kw).fit(X, y)
    sparse = FalkonRegressor(block_size=33, **kw).fit(sp.csr_matrix(X), y)
    # dense rows stream through the compiled pass whatever the block size: the same sums
    np.testing.assert_array_equal(small.coef_, one.coef_)
    # sparse rows go through NumPy's blocks, which round differently; near convergence α itself is
    # ill-conditioned (|α| ≈ 1e3 here), so compare what it defines: the function and J(α)
    np.testing.assert_allclose(sparse.predict(sp.csr_matrix(X_test)), one.predict(X_test), rtol=1e-6, atol=1e-7)
    assert sparse.krr_objective_ == pytest.approx(one.krr_objective_, rel=1e-10)


def test_a_singular_matrix_raises_the_jitter_until_it_factorises():
    U, jitter = _upper_cholesky(lambda: np.ones((5, 5)), 0.0, "ones")     # rank 1
    assert jitter > 0
    np.testing.assert_allclose(U.T @ U, np.ones((5, 5)) + jitter * np.eye(5), atol=1e-12)
    assert np.allclose(np.tril(U, -1), 0)
    with pytest.raises(SolverError, match="not positive definite"):
        _upper_cholesky(lambda: -np.eye(3), 0.0, "minus I")


def test_duplicated_rows_still_solve():
    X, y, X_test = _regression(n=100)
    X2, y2 = np.vstack([X, X]), np.concatenate([y, y])       # K_MM singular when M = n
    est = FalkonRegressor(n_centers=200, gamma=GAMMA, C=10.0, dtype="float64", random_state=0).fit(X2, y2)
    # every row twice: the mean loss is that on the distinct rows, λ = 1/(200·C) that of KernelRidge
    # on them with alpha = 100 λ = 1/(2C); repeated centres span the same functions
    ridge = KernelRidge(alpha=1 / 20.0, kernel="rbf", gamma=GAMMA).fit(X, y)
    np.testing.assert_allclose(est.predict(X_test), ridge.predict(X_test), atol=1e-4)


def test_one_class_and_unknown_labels_are_refused():
    X, _, _ = _regression(n=40)
    with pytest.raises(SolverError, match="at least 2 classes"):
        FalkonClassifier().fit(X, np.zeros(40))
    with pytest.raises(SolverError, match="n_centers must be"):
        FalkonClassifier(n_centers=0).fit(X, np.arange(40) % 2)


# ---- the stepping protocol and the experiment loop ----------------------------------------------------------------
def test_one_step_is_one_cg_iteration_and_fit_makes_max_iter():
    X, y = make_classification(300, 6, random_state=0)
    est = FalkonClassifier(n_centers=40, max_iter=7, tol=1e-14, random_state=0)
    est.begin(X, y)
    assert est.steps_per_pass == 1 and est.planned_steps() == 7 and est.planned_steps(0.5) == 4
    assert est.run(5) == 5 and not est.converged_
    assert est.run(5) == 2 and est.converged_ and est.run(5) == 0      # max_iter: the procedure's end
    assert est.n_iter_ == 7 and est.samples_seen_ == 7 * 300 and est.cg_residual_ > 1e-14
    est.finish()
    assert FalkonClassifier(n_centers=40, max_iter=7, tol=1e-14, random_state=0).fit(X, y).n_iter_ == 7
    # tol: stops early (converged_) once the residual is small enough
    early = FalkonClassifier(n_centers=40, max_iter=50, tol=1e-2, random_state=0).fit(X, y)
    assert early.converged_ and early.n_iter_ < 50 and early.cg_residual_ <= 1e-2


def test_timed_loop_records_a_point_per_iteration_and_ends_at_max_iter():
    X, y = make_classification(400, 6, random_state=1)
    est = FalkonClassifier(n_centers=50, max_iter=6, tol=1e-14, random_state=0)
    points = list(trace(est, X, y, StopConfig(iterations=100), every=1))
    assert [p.iteration for p in points] == list(range(7))              # 0 (f = 0), then each CG iteration
    assert points[-1].final and points[-1].samples_seen == 6 * 400
    assert all(b.train_seconds >= a.train_seconds for a, b in zip(points, points[1:]))
    est = FalkonClassifier(n_centers=50, max_iter=6, random_state=0)
    assert list(trace(est, X, y, StopConfig(passes=3), every=1))[-1].iteration == 3  # passes count CG iterations
    est = FalkonClassifier(n_centers=50, tol=1e-14, random_state=0)
    last = list(trace(est, X, y, StopConfig(seconds=60.0), every=5))[-1]
    assert last.final and last.iteration == 20                          # the default max_iter


def test_experiment_loop_draws_test_error_and_objective_curves(tmp_path):
    from kernelbench.config import config_from_dict
    from kernelbench.experiment import run_experiment
    from kernelbench.results import collect_results

    cfg = config_from_dict({
        "name": "digits86_falkon", "dataset": {"name": "digits86", "test": 0.25},
        "algorithm": {"name": "falkon", "params": {"n_centers": 128, "C": 10.0}},
        "trials": 1, "stop": {"iterations": 8}, "evaluate": {"every": 1, "on": ["objective", "test_error"]}})
    run_experiment(cfg, out_dir=tmp_path, quiet=True)
    rows = collect_results(tmp_path).sort_values("iteration")
    assert list(rows["iteration"]) == list(range(9)) and (rows["status"] == "ok").all()
    assert (np.diff(rows["objective"].to_numpy()) <= 1e-9).all()         # CG: J decreases
    assert rows["test_error"].iloc[-1] < 0.05
    assert (rows["n_support_vectors"].iloc[1:] == 128).all()
    assert '"krr_objective"' in rows["counters"].iloc[-1]


def test_registered_for_every_task_with_c_and_gamma_searched():
    spec = algorithms()["falkon"]
    assert spec.tasks == ("binary", "multiclass", "regression")
    assert spec.classifier is FalkonClassifier and spec.regressor is FalkonRegressor
    defaults = spec.defaults()
    assert defaults["n_centers"] == 1024 and defaults["max_iter"] == 20 and defaults["dtype"] == "float32"
    assert defaults["kernel_cache_bytes"] == 0
    assert spec.parameters["C"].search is not None and spec.parameters["gamma"].search is not None
    assert math.isclose(FalkonClassifier(C=4.0).fit(*make_classification(50, 3, n_informative=2, n_redundant=0,
                                                                          random_state=0)).lambda_, 1 / 200)


# ---- the compiled pass (solvers/_nystrom.pyx) against NumPy's exact kernel ----------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("M", [1, 7, 64, 130])            # below, at and across the 4 × vector tiles
def test_compiled_pass_is_the_kernel_matrix_product(dtype, M):
    from kernelbench.solvers.falkon import _augment, _center_terms
    from kernelbench.solvers._nystrom import kernel_values, stored_products, streamed_products
    rng = np.random.default_rng(M)
    X = rng.standard_normal((203, 9))                       # 203 rows: chunks with a remainder of rows
    centers = np.vstack([X[:1], rng.standard_normal((M - 1, 9))])   # one centre equals a row: k = 1
    gamma = 0.3
    K = rbf_kernel(X, centers, gamma=gamma)                 # the exact kernel, float64
    A = rng.standard_normal((2, M))
    Y = rng.standard_normal((203, 3))
    rows, centers_t = _augment(X, dtype), np.ascontiguousarray(_center_terms(centers, gamma, dtype).T)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    values = np.empty((203, M), dtype=dtype)
    kernel_values(rows, centers_t, values, threads=2)
    assert values.max() <= 1.0
    np.testing.assert_allclose(values, K, rtol=tol, atol=tol)
    F, acc = streamed_products(rows, centers_t, A=A, forward=True, backward=True, threads=2)
    np.testing.assert_allclose(F, K @ A.T, rtol=tol * 10, atol=tol * 10 * np.abs(K @ A.T).max())
    np.testing.assert_allclose(acc, (K.T @ (K @ A.T)).T, rtol=tol * 10, atol=tol * 10 * np.abs(acc).max())
    _, accY = streamed_products(rows, centers_t, Y=Y, backward=True, threads=2)
    np.testing.assert_allclose(accY, (K.T @ Y).T, rtol=tol * 10, atol=tol * 10 * np.abs(accY).max())
    # values kept and values streamed: the same sums in the same order
    F2, acc2 = stored_products(values, A=A, forward=True, backward=True, threads=2)
    np.testing.assert_array_equal(F2, F)
    np.testing.assert_array_equal(acc2, acc)
    # a row's values do not depend on the rows computed with it, nor on the thread count
    F_one, _ = streamed_products(rows[5:6].copy(), centers_t, A=A, forward=True, threads=1)
    np.testing.assert_array_equal(F_one, F[5:6])
    F1, acc1 = streamed_products(rows, centers_t, A=A, forward=True, backward=True, threads=1)
    np.testing.assert_array_equal(F1, F)
    np.testing.assert_allclose(acc1, acc, rtol=1e-12, atol=1e-12 * np.abs(acc).max())


def test_compiled_pass_refuses_mismatched_shapes():
    from kernelbench.solvers._nystrom import streamed_products
    rows, centers_t = np.ones((4, 3)), np.ones((2, 5))
    with pytest.raises(ValueError, match="columns"):
        streamed_products(rows, centers_t, A=np.ones((1, 5)), forward=True)
    with pytest.raises(ValueError, match="exactly one"):
        streamed_products(rows, np.ones((3, 5)), forward=True)
