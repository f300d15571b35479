"""Polyak–Ruppert averaging of the DSG family (`average: true`): the compiled running sum against
the literal mean of independently re-computed iterates (tests/reference_cdsg.py), the trajectory
left unchanged, the estimator API, and bad input."""
import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_moons

from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms
from kernelbench.solvers import _dsg
from kernelbench.solvers.losses import code
from kernelbench.solvers.cdsg import CDSGClassifier, UDSGClassifier
from kernelbench.solvers.dsg import DSGClassifier, DSGRegressor

import reference_cdsg as ref
from helpers import dsg_problem

MODE_SETTINGS = {
    "dsg": {},
    "udsg": {"new_iterations": 2, "old_iterations": 3},
    "cdsg": {"max_step": 3.0, "variance": 0.7},
}


@pytest.mark.parametrize("mode", ["dsg", "udsg", "cdsg"])
@pytest.mark.parametrize("loss", ["logistic", "squared", "softmax"])
def test_core_average_matches_mean_of_iterates(mode, loss):
    X, Y, rows = dsg_problem(loss, n=31, n_rows=31 + 19)           # a pass and 19 rows of a second
    settings = dict(batch_size=5, block_size=4, kernel="rbf", gamma=0.7, lam=0.01, step=3.0, t0=2.0, seed=11)
    extra = MODE_SETTINGS[mode]
    grad_bound = 0.0 if loss == "squared" else 1.0
    average_from = 3
    common = dict(n_dims=X.shape[1], n_outputs=Y.shape[1], block_size=settings["block_size"], kernel="rbf",
                  gamma=settings["gamma"], loss=code(loss),
                  lam=settings["lam"], step=settings["step"], t0=settings["t0"], seed=settings["seed"],
                  dtype="float64", cache_features=True, threads=1, mode=_dsg.MODES[mode],
                  udsg_new=extra.get("new_iterations", 1), udsg_old=extra.get("old_iterations", 1),
                  max_step=extra.get("max_step", 1.0), variance=extra.get("variance", 0.0),
                  grad_bound=grad_bound)
    core = _dsg.DSGCore(**common, average_from=average_from)
    plain = _dsg.DSGCore(**common)
    # in two calls (the second one grows the arrays): the running sum must carry over
    half = 4 * settings["batch_size"]
    for part in (rows[:half], rows[half:]):
        assert core.train(X, Y, np.ascontiguousarray(part), settings["batch_size"])[0] == _dsg.OK
        assert plain.train(X, Y, np.ascontiguousarray(part), settings["batch_size"])[0] == _dsg.OK
    T = math.ceil(len(rows) / settings["batch_size"])
    assert core.n_averaged == T - average_from
    mean, predict = ref.polyak_average(X, Y, rows, average_from=average_from, mode=mode, loss=loss,
                                       grad_bound=grad_bound, **settings, **extra)
    np.testing.assert_allclose(core.coef(average=True), mean, rtol=1e-9, atol=1e-11 * np.max(np.abs(mean)))
    Xq = np.random.default_rng(5).normal(size=(7, X.shape[1]))
    np.testing.assert_allclose(core.predict(Xq, average=True), predict(Xq), rtol=1e-9, atol=1e-10)
    # averaging only watches: the iterate itself is the one a core without averaging reaches
    np.testing.assert_array_equal(core.coef(), plain.coef())
    np.testing.assert_array_equal(core.predict(Xq), plain.predict(Xq))
    assert not np.allclose(core.predict(Xq, average=True), core.predict(Xq))


def test_no_average_before_start_means_current_iterate():
    X, Y, rows = dsg_problem("logistic", n=31, n_rows=31 + 19)
    core = _dsg.DSGCore(n_dims=3, n_outputs=1, block_size=4, kernel="rbf", gamma=0.7, loss=code("logistic"),
                        lam=0.01, step=3.0, t0=2.0, seed=1, dtype="float64", cache_features=True, threads=1,
                        average_from=100)
    core.train(X, Y, rows[:20], 5)
    assert core.n_averaged == 0
    np.testing.assert_array_equal(core.coef(average=True), core.coef())
    np.testing.assert_array_equal(core.predict(X, average=True), core.predict(X))


@pytest.mark.parametrize("cls", [DSGClassifier, UDSGClassifier, CDSGClassifier])
def test_estimator_average_predicts_with_averaged_function(cls):
    X, y = make_moons(400, noise=0.2, random_state=0)
    kw = dict(gamma=1.0, batch_size=20, block_size=16, passes=3, random_state=0, loss="logistic")
    avg = cls(**kw, average=True, average_from=1.0).fit(X, y)
    last = cls(**kw).fit(X, y)
    steps = math.ceil(400 / 20)
    assert avg.core_.n_averaged == 3 * steps - steps          # iterates after the first pass
    np.testing.assert_array_equal(avg.core_.coef(), last.core_.coef())
    F = avg.core_.predict(np.ascontiguousarray(X, dtype=np.float32), average=True).ravel()
    np.testing.assert_allclose(avg.decision_function(X), F)
    np.testing.assert_array_equal(avg.predict(X), np.where(F > 0, avg.classes_[1], avg.classes_[0]))
    assert avg.score(X, y) > 0.9
    # the objective is that of the averaged function: λ/2‖f̄‖² uses the averaged coefficients
    norm = 0.5 * 16 * np.sum(avg.core_.coef(average=True) ** 2)
    assert avg.coef_norm_sq() == pytest.approx(norm)
    assert clone(avg).get_params()["average"] is True


def test_average_reduces_noise_of_constant_step_regression():
    """Independent truth: with a constant step the last SGD iterate keeps bouncing around the
    kernel ridge solution; the Polyak–Ruppert mean sits much closer to it (Bach & Moulines 2013)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(300, 1))
    y = np.sin(2 * X[:, 0]) + 0.3 * rng.normal(size=300)
    kw = dict(gamma=1.0, C=10.0, batch_size=1, block_size=64, step=2e6, t0=1e7, passes=4, random_state=0)
    Xg = np.linspace(-2, 2, 200).reshape(-1, 1)
    truth = np.sin(2 * Xg[:, 0])
    err_last = np.mean((DSGRegressor(**kw).fit(X, y).predict(Xg) - truth) ** 2)
    err_avg = np.mean((DSGRegressor(**kw, average=True, average_from=1.0).fit(X, y).predict(Xg) - truth) ** 2)
    assert err_avg < 0.5 * err_last, (err_avg, err_last)


@pytest.mark.parametrize("params, field", [({"average": "yes"}, "average"),
                                           ({"average": True, "average_from": -1.0}, "average_from")])
def test_bad_average_parameters_are_clear_errors(params, field):
    X, y = make_moons(60, random_state=0)
    with pytest.raises(SolverError, match=field):
        DSGClassifier(**params, random_state=0).fit(X, y)


def test_config_layer_refuses_negative_average_from():
    from kernelbench.config import config_from_dict
    from kernelbench.errors import ConfigError
    with pytest.raises(ConfigError, match="average_from"):
        config_from_dict({"dataset": {"name": "digits86"},
                          "algorithm": {"name": "cdsg", "params": {"average_from": -0.5}}})
    assert algorithms()["cdsg"].defaults()["average"] is False
