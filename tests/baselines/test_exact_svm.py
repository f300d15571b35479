"""The exact-kernel baselines on every task the papers need: `libsvm` is LIBSVM (SVC / SVR)
exactly; `libsvm-p` (oneDAL) solves the same dual, so its decision values agree with LIBSVM's to the
solvers' tolerance; and both agree with the exact kernel expansion written out in NumPy."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification, make_regression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC, SVR

from kernelbench.baselines.libsvm import (LibSVMClassifier, LibSVMRegressor, ParallelSVMClassifier,
                                          ParallelSVMRegressor)
from kernelbench.estimators import algorithms

TIGHT = dict(C=2.0, gamma=0.1, tol=1e-6)


def _classes(k, n=400, seed=0):
    X, y = make_classification(n, 6, n_informative=4, n_redundant=0, n_classes=k, random_state=seed)
    return X, np.array(["a", "b", "c", "d"])[y]


def _regression(n=400, seed=0):
    X, y = make_regression(n, 6, noise=0.3, random_state=seed)
    return X, y / y.std()


def test_libsvm_is_svc_on_several_classes_and_svr_on_regression():
    X, y = _classes(3)
    ours, svc = LibSVMClassifier(**TIGHT).fit(X, y), SVC(**TIGHT).fit(X, y)
    np.testing.assert_allclose(ours.decision_function(X), svc.decision_function(X), rtol=1e-10)
    np.testing.assert_array_equal(ours.predict(X), svc.predict(X))
    assert ours.n_support_vectors_ == svc.n_support_.sum()
    X, y = _regression()
    ours, svr = LibSVMRegressor(epsilon=0.05, **TIGHT).fit(X, y), SVR(epsilon=0.05, **TIGHT).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), svr.predict(X), rtol=1e-10)


def test_svr_prediction_is_the_kernel_expansion():
    """An independent truth: f(x) = Σ_i (α_i − α_i*) k(x_i, x) + b from the dual LIBSVM solved."""
    X, y = _regression(200)
    model = LibSVMRegressor(epsilon=0.1, **TIGHT).fit(X, y)
    svr = model.svm_
    expansion = rbf_kernel(X, svr.support_vectors_, gamma=0.1) @ svr.dual_coef_.ravel() + svr.intercept_[0]
    np.testing.assert_allclose(model.predict(X), expansion, rtol=1e-9, atol=1e-12)
    # the ε-tube: every point strictly inside it is no support vector
    inside = np.abs(model.predict(X) - y) < 0.1 - 1e-4
    assert not np.any(inside[svr.support_])


@pytest.mark.parametrize("task", ["binary", "multiclass", "regression", "sparse"])
def test_parallel_svm_solves_the_same_dual_as_libsvm(task):
    if task == "regression":
        X, y = _regression()
        ours = ParallelSVMRegressor(threads=2, epsilon=0.05, **TIGHT).fit(X, y).predict(X)
        reference = LibSVMRegressor(epsilon=0.05, **TIGHT).fit(X, y).predict(X)
        np.testing.assert_allclose(ours, reference, atol=2e-3 * np.abs(reference).max())
        return
    X, y = _classes(2 if task in ("binary", "sparse") else 4)
    if task == "sparse":
        X = sp.csr_matrix(np.where(np.abs(X) > 0.8, X, 0.0))
    parallel, exact = ParallelSVMClassifier(threads=2, **TIGHT).fit(X, y), LibSVMClassifier(**TIGHT).fit(X, y)
    F, G = parallel.decision_function(X), exact.decision_function(X)
    assert F.shape == G.shape
    np.testing.assert_allclose(F, G, atol=2e-3 * np.abs(G).max())
    assert np.mean(parallel.predict(X) != exact.predict(X)) <= 0.005     # ties at the margin only
    assert abs(parallel.n_support_vectors_ - exact.n_support_vectors_) <= 0.02 * exact.n_support_vectors_


def test_parallel_svm_repeats_itself_and_agrees_across_thread_counts_to_the_tolerance():
    X, y = _classes(2)
    two = ParallelSVMClassifier(threads=2, **TIGHT).fit(X, y).decision_function(X)
    np.testing.assert_array_equal(two, ParallelSVMClassifier(threads=2, **TIGHT).fit(X, y).decision_function(X))
    one = ParallelSVMClassifier(threads=1, **TIGHT).fit(X, y).decision_function(X)
    np.testing.assert_allclose(one, two, atol=1e-5)       # sums in another order: tol = 1e-6 on the dual


def test_both_are_registered_for_every_task_the_papers_need():
    specs = algorithms()
    for name in ("libsvm", "libsvm-p"):
        assert set(specs[name].tasks) == {"binary", "multiclass", "regression"}
    assert "threads" in specs["libsvm-p"].parameters and "threads" not in specs["libsvm"].parameters
    assert specs["libsvm"].build({"epsilon": 0.2}, task="regression").epsilon == 0.2


def test_libsvm_draws_nothing_so_every_seed_gives_the_same_model():
    """What its run.json's determinism says, and what lets the report take one trial of it as exact:
    the seed changes nothing, with gamma derived from the data ("median") too."""
    X, y = _classes(2)
    first, second = (LibSVMClassifier(C=1.0, gamma="median", random_state=seed).fit(X, y) for seed in (0, 7))
    np.testing.assert_array_equal(first.decision_function(X), second.decision_function(X))
    assert "seed" not in LibSVMClassifier.determinism and "seed" not in LibSVMRegressor.determinism
