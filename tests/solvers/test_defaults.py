"""Data-driven defaults (kernelbench/solvers/defaults.py, kernels.scale_gamma): each 'auto' rule
against an independent truth — scikit-learn's gamma='scale', Bottou's schedule written out, the
objective the chosen first step reaches, hand-counted passes (DSG's, also those of the baselines
compared with it) — and the five algorithms with their defaults alone against scikit-learn's SVC
with its defaults on the breast-cancer set."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, make_moons
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from kernelbench.errors import SolverError
from kernelbench.estimators import (NormaClassifier, NormaRegressor, PegasosClassifier, SVRGRFClassifier,
                                    SVRGRFRegressor, algorithms)
from kernelbench.solvers.bsgd import BSGDClassifier
from kernelbench.solvers.cdsg import CDSGClassifier
from kernelbench.solvers.defaults import PILOT_STEPS, default_passes, first_step, sgd_schedule
from kernelbench.solvers.dsg import DSGClassifier, DSGRegressor
from kernelbench.solvers.kernels import resolve_gamma, scale_gamma

SUPERVISED = ("dsg", "udsg", "cdsg", "bsgd", "asydsskl")


# ---- γ = 1/(d·Var X) ------------------------------------------------------------------------------
def test_scale_gamma_is_scikit_learns_gamma_scale():
    X, y = make_moons(60, noise=0.3, random_state=0)
    X = X * [3.0, 0.5] + 1.0
    svc = SVC(gamma="scale").fit(X, y)
    assert scale_gamma(X) == pytest.approx(svc._gamma, rel=1e-12)
    assert scale_gamma(X) == pytest.approx(1.0 / (2 * np.var(X)), rel=1e-12)      # by hand, d = 2


def test_scale_gamma_sparse_equals_dense():
    X = sp.random(40, 7, density=0.3, random_state=1, format="csr") * 5.0
    assert scale_gamma(X) == pytest.approx(1.0 / (7 * np.var(X.toarray())), rel=1e-10)
    assert resolve_gamma("scale", X) == scale_gamma(X)


def test_scale_gamma_laplacian_and_constant_features():
    X = np.random.default_rng(0).normal(scale=2.0, size=(50, 4))
    assert scale_gamma(X, kernel="laplacian") == pytest.approx(1.0 / (4 * np.std(X)), rel=1e-12)
    assert scale_gamma(np.ones((5, 3))) == 1.0


def test_gamma_words_are_declared_and_unknown_words_refused():
    assert {"scale", "median"} <= set(DSGClassifier.parameters["gamma"].words())
    with pytest.raises(ValueError, match="'scale' or 'median'"):
        resolve_gamma("silverman", np.ones((3, 2)))


# ---- the step schedule ------------------------------------------------------------------------------
def test_schedule_is_bottous_decreasing_step():
    lam, g1 = 1e-3, 4.0
    theta, t0 = sgd_schedule(lam, g1)
    for t in (1, 10, 1000, 10**6):      # γ_t = γ_1 / (1 + γ_1 λ (t − 1)) with t counted from 1
        assert theta / (t0 + t - 1) == pytest.approx(g1 / (1 + g1 * lam * (t - 1)), rel=1e-12)
    theta, t0 = sgd_schedule(lam, g1, step=50.0)       # a given θ keeps its value, first step γ_1
    assert theta == 50.0 and theta / t0 == pytest.approx(g1)


def _moons(n=300, seed=0):
    X, y = make_moons(n, noise=0.25, random_state=seed)
    return StandardScaler().fit_transform(X), y


def test_pilot_first_step_makes_the_objective_decrease():
    X, y = _moons()
    lam = 1.0 / len(y)

    def make(**p):
        return DSGClassifier(gamma=1.0, batch_size=16, block_size=8, random_state=0, **p)

    g1 = first_step(make, X, y, lam=lam, seed=0)
    assert g1 in PILOT_STEPS
    theta, t0 = sgd_schedule(lam, g1)
    fitted = DSGClassifier(gamma=1.0, batch_size=16, block_size=8, step=theta, t0=t0, passes=10,
                           random_state=1).fit(X, y)
    # f = 0 has hinge objective 1; the chosen schedule lowers it well below, on rows and a seed the
    # pilot did not see the same way (all rows, another seed, 10 passes)
    assert fitted.objective(X, y) < 0.5
    # and it is no worse than the smallest candidate, 1/16 of a step: a step too small stalls
    theta_s, t0_s = sgd_schedule(lam, PILOT_STEPS[0])
    small = DSGClassifier(gamma=1.0, batch_size=16, block_size=8, step=theta_s, t0=t0_s, passes=10,
                          random_state=1).fit(X, y)
    assert fitted.objective(X, y) < small.objective(X, y)


def test_pilot_skips_diverging_steps_and_says_when_none_trains():
    X, y = _moons(100)
    x = X[:, :1]
    target = np.sin(3 * x[:, 0]) * 1e3

    def make(**p):
        return DSGRegressor(gamma=1.0, batch_size=8, block_size=8, random_state=0, **p)

    # squared loss with steps 1e12..1e13: every candidate diverges
    with pytest.raises(SolverError, match="give `step` and `t0`"):
        first_step(make, x, target, lam=1e-3, candidates=(1e12, 1e13))
    # with a sane candidate among them, it is the one chosen
    assert first_step(make, x, target, lam=1e-3, candidates=(1e12, 0.5, 1e13)) == 0.5


def test_estimator_resolves_auto_once_in_begin_and_pins_reproduce_it():
    X, y = _moons()
    auto = CDSGClassifier(batch_size=16, block_size=8, random_state=3).fit(X, y)
    assert auto.step_ == pytest.approx(len(y) * auto.C)                 # θ = 1/λ = n·C
    assert auto.t0_ == pytest.approx(auto.step_ / auto.first_step_)    # first step γ_1
    assert auto.gamma_ == pytest.approx(scale_gamma(X))
    assert auto.passes_ == default_passes(len(y), math.ceil(len(y) / 16), min_iterations=2000, max_passes=50)
    assert auto.n_iter_ == math.ceil(auto.passes_ * math.ceil(len(y) / 16))
    pinned = CDSGClassifier(batch_size=16, block_size=8, random_state=3, step=auto.step_, t0=auto.t0_,
                            gamma=auto.gamma_, passes=auto.passes_).fit(X, y)
    np.testing.assert_array_equal(pinned.decision_function(X), auto.decision_function(X))


def test_given_t0_keeps_it_and_starts_at_the_pilot_step():
    X, y = _moons()
    m = DSGClassifier(batch_size=16, block_size=8, t0=10.0, passes=1, random_state=0).fit(X, y)
    assert m.t0_ == 10.0 and m.step_ / m.t0_ == pytest.approx(m.first_step_)


# ---- passes ---------------------------------------------------------------------------------------
def test_default_passes_counts_iterations():
    assert default_passes(3000, 47, min_iterations=2000, max_passes=50) == 43.0     # ⌈2000/47⌉
    assert default_passes(200, 4, min_iterations=2000, max_passes=50) == 50.0       # capped
    assert default_passes(10**6, 15625, min_iterations=2000, max_passes=50) == 1.0  # one pass is enough
    assert default_passes(5000, 5000, min_iterations=100_000, min_passes=5, max_passes=100) == 20.0
    assert default_passes(10**6, 10**6, min_iterations=100_000, min_passes=5, max_passes=100) == 5.0
    with pytest.raises(ValueError):
        default_passes(0, 1, min_iterations=1)


def test_bsgd_auto_passes_in_fit():
    X, y = _moons(200)
    m = BSGDClassifier(budget=20, random_state=0).fit(X, y)
    assert m.passes_ == 100.0 and m.n_iter_ == 100 * 200          # ⌈100,000/200⌉ = 500, capped at 100
    m = BSGDClassifier(budget=20, passes=2, random_state=0).fit(X, y)
    assert m.passes_ == 2.0 and m.n_iter_ == 400


@pytest.mark.parametrize("cls", [NormaClassifier, NormaRegressor, SVRGRFClassifier, SVRGRFRegressor,
                                 PegasosClassifier], ids=lambda c: c.__name__)
def test_dsg_baselines_fit_dsgs_auto_passes(cls):
    """NORMA, SVRG-RF and Pegasos are compared with DSG at equal samples seen: their `fit` makes
    DSG's passes (auto: ⌈2000 / iterations a pass⌉, 1 to 50), where one pass over 200 rows is only
    4 mini-batch steps; a given count is kept."""
    X, y = _moons(200)
    if cls in (NormaRegressor, SVRGRFRegressor):
        y = X[:, 0] * X[:, 1] + np.sin(X[:, 0])
    m = cls(random_state=0).fit(X, y)
    assert m.passes is None and m.passes_ == 50.0 and m.n_iter_ == 50 * 4         # ⌈2000/4⌉ capped at 50
    assert m.passes_ == DSGClassifier(batch_size=64, random_state=0).fit(X, np.sign(y - np.median(y))).passes_
    m = cls(passes=2, random_state=0).fit(X, y)
    assert m.passes_ == 2.0 and m.n_iter_ == 8


# ---- defaults alone vs SVC with its defaults (breast cancer) -------------------------------------------
@pytest.fixture(scope="module")
def breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
    svc_error = np.mean(SVC().fit(X_train, y_train).predict(X_test) != y_test)
    return X_train, y_train, X_test, y_test, svc_error


@pytest.mark.parametrize("name", SUPERVISED)
def test_defaults_alone_are_within_margin_of_svc(name, breast_cancer):
    X_train, y_train, X_test, y_test, svc_error = breast_cancer
    errors = [np.mean(algorithms()[name].classifier(random_state=seed).fit(X_train, y_train)
                      .predict(X_test) != y_test) for seed in range(2)]
    # 143 test rows: 3 points is 4 rows. Before the data-driven defaults DSG was 4 points above SVC
    # (8.2 % vs 4.7 % on this split).
    assert np.mean(errors) <= svc_error + 0.03, (name, errors, svc_error)
