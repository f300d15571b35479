"""UDSG and CDSG (Li & Póczos 2016, Alg. 3–4): rule (9) against a numeric solution of the
inequality, the compiled core step for step against tests/reference_cdsg.py, and the estimators
against exact kernel methods (SVC, KernelRidge)."""
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_moons
from sklearn.kernel_ridge import KernelRidge
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms
from kernelbench.solvers import _dsg
from kernelbench.solvers.losses import code
from kernelbench.solvers.cdsg import (CDSGClassifier, CDSGRegressor, UDSGClassifier, UDSGRegressor,
                                      estimate_feature_variance)
from kernelbench.solvers.dsg import DSGClassifier

import reference_cdsg as ref
from helpers import dsg_problem


# ---------------------------------------------------------------------------------------------
# rule (9): closed form in the core vs the inequality solved numerically
# ---------------------------------------------------------------------------------------------

def test_rule9_closed_form_matches_numeric_solution():
    rng = np.random.default_rng(0)
    admissible = 0
    for trial in range(300):
        K = int(rng.integers(1, 4))
        beta = rng.normal(size=K) * 10 ** rng.uniform(-2, 1)
        g = rng.normal(size=K) * 10 ** rng.uniform(-2, 0)
        s2 = float(rng.choice([0.0, 10 ** rng.uniform(-6, 0)]))
        gamma_t = 10 ** rng.uniform(-2, 1)
        got = _dsg.cdsg_steps(beta.reshape(K, 1).copy(), g, s2, gamma_t)[0]
        want = ref.rule9_step(beta, g, s2, gamma_t)
        assert got == pytest.approx(want, rel=1e-7, abs=1e-12), (beta, g, s2, gamma_t)
        if got > 0:
            admissible += 1
            assert got > gamma_t
            # (9) holds at η = −|η| (with equality: the largest step) and fails just beyond it
            slack_scale = np.sum(beta**2) + gamma_t**2 * np.sum(g**2)
            assert ref.rule9_slack(-got, beta, g, s2, gamma_t) <= 1e-9 * slack_scale
            assert ref.rule9_slack(-got * (1 + 1e-6), beta, g, s2, gamma_t) > 0
        else:   # no admissible step: (9) fails on a grid of η < −γ_t
            etas = -gamma_t * np.geomspace(1.0 + 1e-9, 1e4, 400)
            assert all(ref.rule9_slack(e, beta, g, s2, gamma_t) > -1e-12 for e in etas)
    assert 20 < admissible < 280     # both branches were exercised


def test_rule9_needs_aligned_weight_and_gradient():
    # β·ḡ ≤ 0: the old block's weight would grow, never admissible (the comment in cdsg_step)
    assert _dsg.cdsg_steps(np.array([[1.0]]), np.array([-0.5]), 0.0, 0.1)[0] == 0.0
    # β = c γ ḡ with c in (2 − √3, 2 + √3) and no variance: admissible (2(c−1)² ≤ c² + 1)
    assert _dsg.cdsg_steps(np.array([[0.2]]), np.array([1.0]), 0.0, 0.1)[0] > 0.1
    assert _dsg.cdsg_steps(np.array([[0.02]]), np.array([1.0]), 0.0, 0.1)[0] == 0.0


# ---------------------------------------------------------------------------------------------
# compiled core vs the NumPy reference, step for step
# ---------------------------------------------------------------------------------------------

MODE_SETTINGS = {
    "dsg": {},
    "udsg": {"new_iterations": 2, "old_iterations": 3},
    "cdsg": {"max_step": 3.0, "variance": 0.7},
}


@pytest.mark.parametrize("mode", ["dsg", "udsg", "cdsg"])
@pytest.mark.parametrize("loss", ["hinge", "logistic", "squared", "softmax"])
@pytest.mark.parametrize("cache,threads", [(True, 1), (False, 2)])
def test_core_matches_reference(mode, loss, cache, threads):
    X, Y, rows = dsg_problem(loss, n=41, n_rows=2 * 41 + 9)        # two passes and 9 rows of a third
    settings = dict(batch_size=5, block_size=4, kernel="rbf", gamma=0.7, lam=0.01, step=3.0, t0=2.0,
                    seed=11)
    extra = MODE_SETTINGS[mode]
    grad_bound = 0.0 if loss == "squared" else 1.0
    core = _dsg.DSGCore(n_dims=X.shape[1], n_outputs=Y.shape[1], block_size=settings["block_size"],
                        kernel="rbf", gamma=settings["gamma"],
                        loss=code(loss),
                        lam=settings["lam"], step=settings["step"], t0=settings["t0"], seed=settings["seed"],
                        dtype="float64", cache_features=cache, threads=threads, mode=_dsg.MODES[mode],
                        udsg_new=extra.get("new_iterations", 1), udsg_old=extra.get("old_iterations", 1),
                        max_step=extra.get("max_step", 1.0), variance=extra.get("variance", 0.0),
                        grad_bound=grad_bound)
    # in two calls: the state (scale, β, M, iteration count) must carry over
    half = 10 * settings["batch_size"]
    for part in (rows[:half], rows[half:]):
        status, _ = core.train(X, Y, np.ascontiguousarray(part), settings["batch_size"])
        assert status == _dsg.OK
    blocks, predict, reused = ref.dsg_family(X, Y, rows, mode=mode, loss=loss, grad_bound=grad_bound,
                                             **settings, **extra)
    assert core.n_blocks == len(blocks)
    assert core.n_reused == reused
    if mode == "dsg":
        assert reused == 0
    else:
        assert reused > 0           # the re-use branch was exercised
    want = np.concatenate([c for _, _, c, _ in blocks], axis=1)
    np.testing.assert_allclose(core.coef(), want, rtol=1e-9, atol=1e-11 * np.max(np.abs(want)))
    np.testing.assert_allclose(core.block_weights(), np.column_stack([b for *_, b in blocks]),
                               rtol=1e-9, atol=1e-12)
    Xq = np.random.default_rng(5).normal(size=(7, X.shape[1]))
    np.testing.assert_allclose(core.predict(Xq), predict(Xq), rtol=1e-9, atol=1e-10)


def test_udsg_period_adds_blocks_only_in_new_iterations():
    X, Y, _ = dsg_problem("hinge", n=200, n_rows=200)
    est = UDSGClassifier(batch_size=10, block_size=4, new_iterations=2, old_iterations=3, random_state=0)
    est.begin(X, Y.ravel())
    est.run(23)
    # 23 iterations = 4 full periods of 5 (2 new each) + 3 (2 new, 1 old)
    assert est.n_random_features_ == (4 * 2 + 2) * 4
    assert est.core_.n_reused == 23 - 10


def test_feature_variance_estimate_limits():
    # σ² = E_ω Var_x'[φ_ω(x')φ_ω(x) − k(x', x)], φ = √2 cos(ω·x + b). Narrow kernel (γ → ∞): the
    # features at distinct points decorrelate, E_x'[2cos²(ω·x'+b)] = 1, so the variance tends to
    # E_ω[2cos²(ω·x+b)] = 1. Wide kernel (γ → 0): ω → 0, φ_ω(x') no longer depends on x', variance → 0.
    X = np.random.default_rng(0).normal(size=(400, 3))
    assert estimate_feature_variance(X, kernel="rbf", gamma=1e4, seed=0, n_omega=2000) == pytest.approx(1.0, abs=0.05)
    assert estimate_feature_variance(X, kernel="rbf", gamma=1e-8, seed=0) < 1e-6


# ---------------------------------------------------------------------------------------------
# estimators
# ---------------------------------------------------------------------------------------------

def _moons():
    X, y = make_moons(n_samples=1200, noise=0.2, random_state=0)
    return train_test_split(X, y, test_size=0.4, random_state=0)


@pytest.mark.parametrize("cls", [UDSGClassifier, CDSGClassifier])
def test_classifiers_match_svc(cls):
    X_tr, X_te, y_tr, y_te = _moons()
    svc_err = 1 - SVC(C=10.0, gamma=2.0).fit(X_tr, y_tr).score(X_te, y_te)
    est = cls(loss="hinge", gamma=2.0, C=10.0, batch_size=32, block_size=32, passes=5, random_state=0).fit(X_tr, y_tr)
    assert 1 - est.score(X_te, y_te) <= svc_err + 0.03
    assert clone(est).get_params() == est.get_params()


@pytest.mark.parametrize("cls", [UDSGRegressor, CDSGRegressor])
def test_regressors_match_kernel_ridge(cls):
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(800, 2))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=800)
    X_te = rng.uniform(-2, 2, size=(400, 2))
    y_te = np.sin(2 * X_te[:, 0]) + 0.5 * X_te[:, 1] ** 2
    C = 10.0
    krr = KernelRidge(alpha=1.0 / C, kernel="rbf", gamma=1.0).fit(X, y)   # λ n = 1/C
    krr_mse = np.mean((krr.predict(X_te) - y_te) ** 2)
    est = cls(gamma=1.0, C=C, batch_size=16, block_size=32, passes=8, random_state=0).fit(X, y)
    mse = np.mean((est.predict(X_te) - y_te) ** 2)
    assert mse <= krr_mse + 0.02 * np.var(y_te)


def test_cdsg_reuses_coordinates_and_uses_fewer_features_than_dsg():
    X_tr, X_te, y_tr, y_te = _moons()
    common = dict(loss="logistic", gamma=2.0, C=10.0, batch_size=16, block_size=16, passes=3, random_state=0)
    dsg = DSGClassifier(**common).fit(X_tr, y_tr)
    cdsg = CDSGClassifier(**common).fit(X_tr, y_tr)
    assert cdsg.core_.n_reused > 0
    assert cdsg.n_random_features_ < dsg.n_random_features_
    assert 1 - cdsg.score(X_te, y_te) <= 1 - dsg.score(X_te, y_te) + 0.02


def test_counters_report_reuse():
    X_tr, _, y_tr, _ = _moons()
    est = CDSGClassifier(batch_size=32, block_size=8, random_state=0)
    est.begin(X_tr, y_tr)
    est.run(20)
    c = est.counters()
    assert c["reused_iterations"] + c["new_blocks"] == 20


@pytest.mark.parametrize("cls,bad,match", [
    (CDSGClassifier, {"max_step": 0.5}, "max_step"),
    (CDSGClassifier, {"feature_variance": "big"}, "feature_variance"),
    (UDSGClassifier, {"new_iterations": 0}, "new_iterations"),
    (UDSGClassifier, {"old_iterations": -1}, "old_iterations"),
])
def test_bad_parameters_are_clear_errors(cls, bad, match):
    X_tr, _, y_tr, _ = _moons()
    with pytest.raises(SolverError, match=match):
        cls(**bad).fit(X_tr, y_tr)


def test_registered_with_paper_parameters():
    specs = algorithms()
    for name in ("udsg", "cdsg"):
        assert name in specs and {"binary", "multiclass", "regression"} <= set(specs[name].tasks)
    assert specs["udsg"].defaults()["new_iterations"] == 1      # Li & Póczos §5: G = U = 1
    assert specs["udsg"].defaults()["old_iterations"] == 1
    with pytest.raises(ValueError, match="max_step"):
        specs["cdsg"].build({"max_step": 0.1})._check_params()
