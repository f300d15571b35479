"""AsyGCD (You et al. NIPS 2016) on the no-bias kernel SVM dual: the compiled core against a NumPy
greedy coordinate descent step for step, the solution against scipy's box-constrained QP (exact for
the no-bias dual), KKT conditions, two threads, the model (support vectors only), the budget guard
and scikit-learn compatibility."""
import json

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_moons
from sklearn.metrics.pairwise import rbf_kernel

from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms
from kernelbench.solvers import _asygcd
from kernelbench.solvers.asygcd import AsyGCDClassifier
from kernelbench.solvers.base import BudgetExceededError

import reference_asygcd as ref


def _moons(n=120, seed=0, noise=0.25):
    X, y = make_moons(n, noise=noise, random_state=seed)
    return X, np.where(y == 1, 1.0, -1.0)


def _sparse_data(n=90, d=12, seed=1):
    """Mostly-zero features (binary indicators plus one real column), as a9a-like data."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.2).astype(float)
    X[:, 0] = rng.normal(size=n)
    y = np.where(X[:, 0] + X[:, 1] - X[:, 2] > 0.1, 1.0, -1.0)
    return X, y


def _core(X, y, *, gamma, C, slots, blocks=None, storage="dense", tol=0.0, atomic=True):
    n = len(y)
    blocks = [0, n] if blocks is None else blocks
    if storage == "sparse":
        S = sp.csr_matrix(X)
        data = dict(csr=(S.indptr, S.indices, S.data, X.shape[1]))
    else:
        data = dict(X=X)
    return _asygcd.AsyGCDCore(**data, y=y, gamma=gamma, C=C, tol=tol, blocks=blocks,
                              slots_per_thread=slots, atomic=atomic)


def test_module_is_built_with_openmp():
    assert _asygcd.OPENMP_BUILD is True


@pytest.mark.parametrize("storage", ["dense", "sparse"])
@pytest.mark.parametrize("data", ["moons", "sparse"])
def test_kernel_rows_match_the_exact_kernel(storage, data):
    X, y = _moons(50) if data == "moons" else _sparse_data(50)
    gamma = 0.7
    Q = ref.q_matrix(X, y, gamma)
    core = _core(X, y, gamma=gamma, C=1.0, slots=3, storage=storage)
    for i in [0, 7, 49, 7, 3, 0, 21]:                # hits, misses and evictions (3 slots)
        np.testing.assert_allclose(core.kernel_row(i), Q[i], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("slots", [2, 200])
@pytest.mark.parametrize("storage", ["dense", "sparse"])
@pytest.mark.parametrize("data", ["moons", "sparse"])
def test_one_thread_matches_reference_greedy_cd_step_for_step(storage, data, slots):
    X, y = _moons(70) if data == "moons" else _sparse_data(70)
    gamma, C = 0.9, 2.0
    trace = ref.greedy_cd(ref.q_matrix(X, y, gamma, float32=True), C, steps=60)
    core = _core(X, y, gamma=gamma, C=C, slots=slots, storage=storage)
    for step, (i, alpha, g) in enumerate(trace):
        before = core.alpha.copy()
        assert core.run(1) == 1
        changed = np.flatnonzero(core.alpha != before)
        assert set(changed) <= {i}, f"step {step}: updated {changed}, reference updated {i}"
        np.testing.assert_allclose(core.alpha, alpha, rtol=1e-9, atol=1e-12, err_msg=f"step {step}")
        np.testing.assert_allclose(core.gradient(), g, rtol=1e-9, atol=1e-9, err_msg=f"step {step}")
    hits, misses = core.cache_hits, core.cache_misses
    assert hits + misses == len(trace)
    distinct = len({i for i, _, _ in trace})
    assert misses == distinct if slots >= distinct else misses > distinct


def _qp_truth(X, y, gamma, C):
    Q = ref.q_matrix(X, y, gamma)
    alpha = ref.box_qp(Q, C)
    return Q, alpha, ref.dual_objective(Q, alpha)


@pytest.mark.parametrize("storage", ["dense", "sparse"])
def test_converges_to_the_no_bias_qp_solution(storage):
    X, y = _moons(120)
    gamma, C = 1.0, 1.0
    Q, alpha_qp, d_qp = _qp_truth(X, y, gamma, C)
    est = AsyGCDClassifier(C=C, gamma=gamma, tol=1e-7, passes=500, storage=storage).fit(X, y)
    assert est.converged_
    d = ref.dual_objective(Q, est.alpha_)
    assert d == pytest.approx(d_qp, rel=1e-9, abs=1e-9)
    assert d >= d_qp - 1e-9                                   # the QP is the minimum
    np.testing.assert_allclose(est.alpha_, alpha_qp, atol=1e-4)  # unique: Q is positive definite
    # the decision function of the no-bias truth, f(x) = Σ α_i y_i k(x_i, x)
    Xt, _ = _moons(60, seed=5)
    f_true = rbf_kernel(Xt, X, gamma=gamma) @ (alpha_qp * y)
    np.testing.assert_allclose(est.decision_function(Xt), f_true, atol=1e-4)
    # the estimator's own dual objective (from its maintained gradient) agrees
    assert est.dual_objective() == pytest.approx(d, rel=1e-6)


def test_kkt_conditions_hold_at_the_end():
    X, y = _moons(150, seed=3)
    gamma, C, tol = 2.0, 5.0, 1e-5
    est = AsyGCDClassifier(C=C, gamma=gamma, tol=tol, passes=1000).fit(X, y)
    assert est.converged_
    a = est.alpha_
    g = ref.q_matrix(X, y, gamma) @ a - 1.0                    # exact gradient, from α alone
    assert np.all((a >= 0) & (a <= C))
    assert np.all(g[a <= 0] >= -tol - 1e-7)                   # at 0: may not want to increase
    assert np.all(g[a >= C] <= tol + 1e-7)                    # at C: may not want to decrease
    free = (a > 0) & (a < C)
    assert free.any() and np.all(np.abs(g[free]) <= tol + 1e-7)


@pytest.mark.parametrize("gradient_update, partition", [
    ("per_thread", "kmeans"),
    # seconds each on an oversubscribed machine (coarse interleaving, locked adds)
    pytest.param("atomic", "random", marks=pytest.mark.slow),
    pytest.param("racy", "kmeans", marks=pytest.mark.slow)])
def test_two_threads_still_converge(gradient_update, partition):
    """Not a timing test: on a busy machine the two threads interleave coarsely (the method then
    behaves like block coordinate descent), but it must reach the QP optimum either way.
    Lock-free ("racy") adds can be lost while the other thread writes the same gradient entry;
    how many depends on how the threads interleave; the gradient is recomputed from α after every
    pass, and the adds become atomic once a pass loses as much as the violation left. What holds whatever the scheduling is the
    objective: the dual value reached is the QP optimum's, and the exact gradient nearly satisfies KKT."""
    X, y = _moons(200, seed=2)
    gamma, C = 1.0, 1.0
    Q, alpha_qp, d_qp = _qp_truth(X, y, gamma, C)
    est = AsyGCDClassifier(C=C, gamma=gamma, tol=1e-4, threads=2, passes=2000,
                           gradient_update=gradient_update, partition=partition, random_state=0)
    est.fit(X, y)
    assert est.threads_ == 2
    d = ref.dual_objective(Q, est.alpha_)
    g = Q @ est.alpha_ - 1.0
    violation = np.max(np.abs(ref.projected_gradient(est.alpha_, g, C)))
    assert est.converged_
    if gradient_update != "racy":       # no update can be lost: only float32 rounding of Q rows
        assert est.gradient_drift_ < 1e-5
    assert d == pytest.approx(d_qp, rel=1e-5)
    assert violation <= 1e-4 + 1e-7


@pytest.mark.slow
def test_lock_free_plain_adds_reach_the_optimum_in_every_fit():
    """A lost add makes a later step wrong by its size, and that step's adds can be lost in turn:
    with threads truly in parallel on 200 rows, 13 of 50 fits that only recomputed the gradient
    every pass ended at 0.65-0.98 of the optimal dual after 2,000 passes. Once a pass loses as much
    as the violation left, the adds become atomic, so every fit reaches the QP optimum. (A machine
    that runs the two threads one after the other loses no add and passes either way.)"""
    X, y = _moons(200, seed=2)
    Q, _, d_qp = _qp_truth(X, y, 1.0, 1.0)
    for fit in range(20):
        est = AsyGCDClassifier(C=1.0, gamma=1.0, tol=1e-4, threads=2, passes=2000,
                               gradient_update="racy", random_state=fit).fit(X, y)
        assert est.converged_, fit
        assert ref.dual_objective(Q, est.alpha_) == pytest.approx(d_qp, rel=1e-5), fit


def test_lock_free_plain_adds_have_their_gradient_recomputed_every_pass():
    """With racy adds at 2 threads a lost add is never seen by the maintained gradient, so it is
    recomputed from α after each pass (before, only once the drifted gradient itself looked
    converged: 150 of 150 fits on 200 rows stopped unconverged at 2,000 passes on a machine where the
    threads ran truly in parallel). The other modes lose no add and keep their one check. A thread
    whose block the drifted gradient shows within tol stops its pass short, and the steps it left
    run in one more pass: racy fits refresh at least once a pass, not exactly."""
    X, y = _moons(200, seed=2)
    passes = 5
    racy = AsyGCDClassifier(C=1.0, gamma=1.0, tol=1e-12, threads=2, passes=passes, gradient_update="racy",
                            random_state=0).fit(X, y)
    assert not racy.converged_ and racy.gradient_refreshes_ >= passes
    per_thread = AsyGCDClassifier(C=1.0, gamma=1.0, tol=1e-12, threads=2, passes=passes,
                                  gradient_update="per_thread", random_state=0).fit(X, y)
    assert not per_thread.converged_ and per_thread.gradient_refreshes_ == 0


def test_primal_objective_equals_minus_dual_over_nc_at_the_optimum():
    """Strong duality of the no-bias SVM: P(w*) = −D(α*); objective() is P/(nC) (DSG's scale)."""
    X, y = _moons(100, seed=4)
    C = 2.0
    est = AsyGCDClassifier(C=C, gamma=1.5, tol=1e-8, passes=1000).fit(X, y)
    n = len(y)
    assert est.objective(X, y) == pytest.approx(-est.dual_objective() / (n * C), rel=1e-6)


def test_predictions_use_the_support_vectors_only():
    X, y = _moons(120, seed=6)
    est = AsyGCDClassifier(C=1.0, gamma=1.0, passes=3).fit(X, y)
    sv = np.flatnonzero(est.alpha_ > 0)
    assert 0 < len(sv) < len(y)
    assert est.n_support_vectors_ == len(sv) and sorted(est.support_) == list(sv)
    np.testing.assert_array_equal(est.support_vectors_, X[est.support_])
    Xt, _ = _moons(40, seed=7)
    f = rbf_kernel(Xt, X[sv], gamma=1.0) @ (est.alpha_[sv] * y[sv])
    np.testing.assert_allclose(est.decision_function(Xt), f, rtol=1e-10, atol=1e-12)
    # sparse test input gives the same values
    np.testing.assert_allclose(est.decision_function(sp.csr_matrix(Xt)), f, rtol=1e-10, atol=1e-12)


def test_predicts_before_training_and_counters():
    X, y = _moons(60)
    est = AsyGCDClassifier(C=1.0, gamma=1.0)
    assert est.predicts_before_training
    est.begin(X, y)
    np.testing.assert_array_equal(est.decision_function(X), 0.0)   # α = 0 ⇒ f = 0
    assert est.objective(X, y) == pytest.approx(1.0)                # mean hinge at f = 0
    est.run(10)
    c = est.counters()
    json.dumps(c)
    assert c["coordinate_updates"] == est.samples_seen_ == 10
    assert c["n_support_vectors"] == est.n_support_vectors_ > 0
    assert c["kernel_rows_computed"] + round(c["cache_hit_rate"] * 10) == 10
    assert c["dual_objective"] == pytest.approx(ref.dual_objective(ref.q_matrix(X, y, 1.0),
                                                                    est._training_order(est.core_.alpha)), rel=1e-6)


def test_one_thread_is_deterministic_and_labels_are_any_two_values():
    X, y = _moons(80)
    labels = np.where(y > 0, "yes", "no")
    a = AsyGCDClassifier(C=1.0, gamma=1.0, passes=2).fit(X, labels)
    b = clone(a).fit(X, labels)
    np.testing.assert_array_equal(a.alpha_, b.alpha_)
    assert set(a.predict(X)) <= {"yes", "no"}
    assert a.score(X, labels) > 0.8


def test_budget_guard_raises_budget_exceeded_in_begin():
    X, y = _moons(100)
    with pytest.raises(BudgetExceededError, match="max_samples"):
        AsyGCDClassifier(max_samples=50).begin(X, y)
    with pytest.raises(BudgetExceededError, match="max_memory_mb"):
        AsyGCDClassifier(max_memory_mb=1e-4).begin(X, y)


@pytest.mark.parametrize("params, message", [
    (dict(gamma=-1.0), "gamma"), (dict(C=0.0), "C must be"), (dict(kernel="laplacian"), "kernel"),
    (dict(gradient_update="locks"), "gradient_update"), (dict(tol=-1.0), "tol"),
    (dict(cache_mb=0), "cache_mb"),
])
def test_bad_parameters_are_clear_errors(params, message):
    X, y = _moons(30)
    with pytest.raises(SolverError, match=message):
        AsyGCDClassifier(**params).fit(X, y)


def test_registered_and_params_validated():
    spec = algorithms()["asygcd"]
    assert spec.tasks == ("binary",)
    est = spec.build({"C": 32.0, "gamma": 2.0}, seed=3)
    assert isinstance(est, AsyGCDClassifier) and est.C == 32.0 and est.random_state == 3
    # the check the config layer runs before any work: the field, the value and what is allowed
    with pytest.raises(SolverError, match=r"tol must be a number >= 0, got -1\.0"):
        spec.build({"tol": -1.0})._check_params()
