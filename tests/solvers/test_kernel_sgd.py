"""NORMA and k-SDCA (the exact-kernel baselines of Dai et al. 2014): compiled cores against the
NumPy references step for step, k-SDCA against scikit-learn's SVC / KernelRidge and its own
duality gap, and the O(n²) size limit."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC

import reference_baselines as ref
from kernelbench.errors import SolverError
from kernelbench.solvers.base import BudgetExceededError
from kernelbench.solvers.kernels import kernel_matrix
from kernelbench.solvers.ksdca import KSDCAClassifier, KSDCARegressor
from kernelbench.solvers.norma import NormaClassifier, NormaRegressor


def _problem(n=30, d=3, seed=0, regression=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if regression:
        y = np.sin(X[:, 0]) + 0.3 * X[:, 1]
    else:
        y = np.where(X[:, 0] * X[:, 1] + 0.2 * X[:, 2] > 0, 1.0, -1.0)
    return X, y


# ---------------------------------------------------------------------------------------------
# NORMA
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["hinge", "logistic", "smooth_hinge", "squared"])
@pytest.mark.parametrize("budget", [0, 7])
def test_norma_matches_reference_step_for_step(loss, budget):
    X, y = _problem(regression=(loss == "squared"))
    cls = NormaRegressor if loss == "squared" else NormaClassifier
    est = cls(loss=loss, gamma=0.7, C=0.5, batch_size=4, step=30.0, t0=10.0, budget=budget,
              random_state=1)
    est.begin(X, y)
    rows = est._order.copy()
    est.run(est.steps_per_pass)                      # one full pass, last batch partial (30 = 7·4 + 2)
    terms = ref.norma(X, y, rows, batch_size=4, gamma=0.7, loss=loss, lam=est.lambda_, step=30.0,
                      t0=10.0, budget=budget)
    S, c = est.expansion()
    assert len(terms) == len(c) == est.n_support_vectors_
    np.testing.assert_allclose(S, np.array([s for s, _ in terms]), rtol=0, atol=0)
    np.testing.assert_allclose(c, [ci for _, ci in terms], rtol=1e-12, atol=1e-15)
    Xq = np.random.default_rng(5).normal(size=(9, 3))
    f_ref = [sum(ci * ref.rbf(s, x, 0.7) for s, ci in terms) for x in Xq]
    f_est = est.decision_function(Xq) if loss != "squared" else est.predict(Xq)
    np.testing.assert_allclose(f_est, f_ref, rtol=1e-10, atol=1e-13)
    # ‖f‖²_H as the objective uses it, against the exact Gram form c K c
    K = np.array([[ref.rbf(a, b, 0.7) for b, _ in terms] for a, _ in terms])
    np.testing.assert_allclose(est.norm_sq_(), c @ K @ c, rtol=1e-9, atol=1e-14)


def test_norma_learns_a_nonlinear_boundary():
    X = np.random.default_rng(3).normal(size=(300, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.2, 1, -1)
    est = NormaClassifier(gamma=1.0, C=10.0, batch_size=8, passes=5, random_state=0).fit(X, y)
    svc = SVC(C=10.0, gamma=1.0).fit(X, y)
    assert est.score(X, y) > svc.score(X, y) - 0.05


def test_norma_refuses_large_n_with_a_budget_error():
    X, y = _problem(n=50)
    with pytest.raises(BudgetExceededError, match="max_samples"):
        NormaClassifier(max_samples=40).fit(X, y)
    with pytest.raises(SolverError, match="NormaClassifier: kernel must be (one of )?'rbf', got 'laplacian'"):
        NormaClassifier(kernel="laplacian").fit(X, y)


# ---------------------------------------------------------------------------------------------
# k-SDCA
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("loss", ["hinge", "smooth_hinge", "squared"])
@pytest.mark.parametrize("batch_size", [1, 5])
def test_ksdca_matches_plain_sdca(loss, batch_size):
    """A mini-batch is visited coordinate by coordinate: identical to plain sequential SDCA."""
    X, y = _problem(n=23, regression=(loss == "squared"))
    cls = KSDCARegressor if loss == "squared" else KSDCAClassifier
    est = cls(loss=loss, gamma=0.6, C=2.0, batch_size=batch_size, random_state=4)
    est.begin(X, y)
    rows = [est._order.copy()]
    est.run(est.steps_per_pass)
    est.run(1)                                      # a new pass: a fresh order
    rows.append(est._order[:batch_size].copy())
    rows = np.concatenate(rows)
    alpha = ref.sdca(X, y, rows, gamma=0.6, loss=loss, lam=est.lambda_)
    np.testing.assert_allclose(est.dual_coef_, alpha, rtol=1e-10, atol=1e-13)
    K = kernel_matrix(X, gamma=0.6)
    lam_n = est.lambda_ * len(X)
    f = K @ alpha / lam_n
    np.testing.assert_allclose(est.predict(X) if loss == "squared" else est.decision_function(X), f,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(est.norm_sq_(), alpha @ K @ alpha / lam_n**2, rtol=1e-9)


@pytest.mark.parametrize("loss", ["hinge", "smooth_hinge", "squared"])
def test_ksdca_duality_gap_is_nonnegative_and_goes_to_zero(loss):
    X, y = _problem(n=60, seed=2, regression=(loss == "squared"))
    cls = KSDCARegressor if loss == "squared" else KSDCAClassifier
    est = cls(loss=loss, gamma=0.5, C=1.0, batch_size=8, random_state=0)
    est.begin(X, y)
    gaps = []
    for _ in range(60):
        est.run(est.steps_per_pass)
        gaps.append(est.duality_gap())
    assert min(gaps) >= -1e-12                      # weak duality
    assert gaps[0] > 1e-4                           # one pass is not optimal ...
    assert gaps[-1] < 1e-9                          # ... 60 are (linear convergence)


def test_ksdca_hinge_solution_is_svc():
    """No-bias SVM = SVC when the optimal bias is 0: a data set symmetric under (x, y) → (−x, −y)
    (the RBF kernel is invariant under x → −x). Same C: λ = 1/(nC), α/(λn) = SVC's dual_coef_."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)
    X, y = np.vstack([X, -X]), np.concatenate([y, -y])
    est = KSDCAClassifier(C=1.0, gamma=0.5, batch_size=8, random_state=0)
    est.begin(X, y)
    for _ in range(200):
        est.run(est.steps_per_pass)
    assert est.duality_gap() < 1e-10
    svc = SVC(C=1.0, gamma=0.5, tol=1e-10).fit(X, y)
    assert abs(svc.intercept_[0]) < 1e-6
    svc_coef = np.zeros(len(X))
    svc_coef[svc.support_] = svc.dual_coef_[0]
    np.testing.assert_allclose(est.dual_coef_ / (est.lambda_ * len(X)), svc_coef, atol=1e-6)
    np.testing.assert_allclose(est.decision_function(X), svc.decision_function(X), atol=1e-6)


def test_ksdca_squared_solution_is_kernel_ridge_without_intercept():
    X, y = _problem(n=50, regression=True)
    est = KSDCARegressor(C=3.0, gamma=0.4, batch_size=10, passes=200, random_state=0)
    est.fit(X, y)
    # (1/n)Σ ½(f − y)² + λ/2‖f‖²  ⇔  KernelRidge with alpha = λn (dual coefficients = α/(λn))
    lam_n = 1.0 / 3.0
    kr = KernelRidge(alpha=lam_n, kernel="rbf", gamma=0.4).fit(X, y)
    Xq = np.random.default_rng(9).normal(size=(20, 3))
    np.testing.assert_allclose(est.predict(Xq), kr.predict(Xq), atol=1e-8)


def test_kernel_baselines_are_sklearn_estimators():
    for est in (NormaClassifier(budget=5), KSDCAClassifier(C=2.0), NormaRegressor(), KSDCARegressor()):
        twin = clone(est)
        assert twin.get_params() == est.get_params()
    X, y = _problem(n=40)
    Xr, yr = _problem(n=40, regression=True)
    # loss 'auto' (the default): hinge for classification (Dai et al.'s K-SVM), squared for regression
    for cls in (NormaClassifier, KSDCAClassifier):
        assert cls().loss == "auto" and cls(passes=0.1).fit(X, y).loss_ == "hinge"
    for cls in (NormaRegressor, KSDCARegressor):
        assert cls(passes=0.1).fit(Xr, yr).loss_ == "squared"
    with pytest.raises(SolverError, match="KSDCARegressor: loss must be one of 'auto', 'squared', got 'hinge'"):
        KSDCARegressor(loss="hinge").fit(Xr, yr)
    with pytest.raises(SolverError, match="loss must be one of"):
        KSDCAClassifier(loss="logistic").fit(X, y)
    with pytest.raises(BudgetExceededError, match="O\\(n²\\)"):
        KSDCAClassifier(max_samples=10).fit(X, y)


def test_experiment_loop_writes_a_clean_skipped_row_beyond_max_samples(tmp_path, isolated_data):
    """The O(n²) limit is a BudgetExceededError in begin(): the experiment loop records "skipped", no crash."""
    from kernelbench.config import config_from_dict
    from kernelbench.results import read_results
    from kernelbench.experiment import run_experiment

    cfg = config_from_dict({"name": "skip", "dataset": {"name": "digits86"},
                            "algorithm": {"name": "k-sdca", "params": {"max_samples": 100}},
                            "stop": {"passes": 1}})
    run = run_experiment(cfg, out_dir=tmp_path, quiet=True)
    rows = read_results(run)
    assert list(rows["status"]) == ["skipped"]
    assert "max_samples = 100" in rows["message"].iloc[0]
