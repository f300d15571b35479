"""The SVC-based transductive SVMs (kernelbench/baselines/tsvm.py): Joachims' label switching and
Collobert et al.'s CCCP TSVM on two moons with few labels (independent truth: the moons are the
classes) against SVC on the labeled points alone, their balancing constraints, Joachims' stopping
rule, and the O(n²) budget becoming a clean "skipped" row through the experiment loop."""
import numpy as np
import pytest
from sklearn.svm import SVC

from kernelbench.config import EvaluateConfig, StopConfig
from kernelbench.data import Dataset
from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms
from kernelbench.experiment import Cell, Prepared, train_cell
from kernelbench.solvers.base import BudgetExceededError
from kernelbench.baselines.tsvm import TSVMCCCP, TSVMLabelSwitching

import reference_bgs3vm


def _moons(n=600, labeled_per_class=4, seed=0):
    return reference_bgs3vm.semi_supervised_moons(n, labeled_per_class=labeled_per_class, seed=seed, n_test=1000)


@pytest.mark.parametrize("cls", [TSVMLabelSwitching, TSVMCCCP])
def test_beats_svc_on_the_labeled_points_using_the_cluster_structure(cls):
    errors = []
    for seed in (0, 1, 4):
        X, ys, lab, y, Xt, yt = _moons(seed=seed)
        svc = SVC(C=1.0, gamma=5.0).fit(X[lab], y[lab])
        model = cls(C=1.0, gamma=5.0).fit(X, ys)
        assert model.converged_ and model.n_iter_ <= model.max_iter
        errors.append((np.mean(svc.predict(Xt) != yt), np.mean(model.predict(Xt) != yt)))
    svc_err, tsvm_err = np.mean(errors, axis=0)
    assert tsvm_err < 0.02 and tsvm_err < 0.5 * svc_err, errors


def test_label_switching_keeps_the_ratio_and_ends_without_switchable_pairs():
    X, ys, lab, y, Xt, yt = _moons(seed=1, labeled_per_class=6)
    ys[lab[:2]] = 1.0                           # an unbalanced labeled set: p_L = 8/12
    model = TSVMLabelSwitching(C=1.0, gamma=5.0, max_switch_rounds=200)
    model.begin(X, ys)
    n_u = model.n_unlabeled_
    assert model.n_positive_ == round(n_u * 8 / 12)
    while not model.converged_:
        model.run(1)
        assert np.sum(model._Y_u > 0) == model.n_positive_        # the constraint, every step
    # Joachims' loop ends when no pair of opposite labels has ξ_m, ξ_l > 0 and ξ_m + ξ_l > 2
    xi = np.maximum(0, 1 - model._Y_u * model.decision_function(model._X_u))
    pos_max = xi[(model._Y_u > 0) & (xi > 0)].max(initial=0)
    neg_max = xi[(model._Y_u < 0) & (xi > 0)].max(initial=0)
    assert pos_max == 0 or neg_max == 0 or pos_max + neg_max <= 2
    # the last C* level was C* = C n_l / n_u
    assert model.C_unlabeled_ == pytest.approx(12 / n_u)
    assert model.counters()["svc_solves"] == model.n_solves_ >= model.n_iter_


@pytest.mark.parametrize("balance", ["sign", "mean"])
def test_cccp_balancing_constraint_and_fixed_point(balance):
    X, ys, lab, y, Xt, yt = _moons(seed=4, labeled_per_class=5)
    ys[lab[:3]] = 1.0                                 # unbalanced labels: p_L = 8/10
    model = TSVMCCCP(C=1.0, gamma=5.0, balance=balance)
    model.begin(X, ys)
    unl = np.isnan(ys)
    target = np.mean(np.where(ys[~unl] == 1, 1.0, -1.0))
    while not model.converged_:
        model.run(1)
        f = model.decision_function(X[unl])
        if balance == "mean":    # eq. (6): the mean output on U is the mean label on L, every step
            assert np.mean(f) == pytest.approx(target, abs=1e-9)
        else:                    # the share of U predicted positive is the labeled one
            assert np.sum(f > 0) == round(unl.sum() * 0.8)
    assert model.n_iter_ < model.max_iter            # it stopped at a fixed point of β
    f = model.decision_function(X[unl])
    state = np.where(f > 0.3, 1, np.where(f < -0.3, -1, 0))
    np.testing.assert_array_equal(state, model._state)
    assert model.counters()["dropped_active"] == 0   # the SVC steps were the exact CCCP steps


@pytest.mark.parametrize("cls", [TSVMLabelSwitching, TSVMCCCP])
def test_budget_errors_and_labels(cls):
    X, ys, lab, y, Xt, yt = _moons(n=200)
    with pytest.raises(BudgetExceededError, match="max_points = 150"):
        cls(max_points=150).begin(X, ys)
    named = np.where(np.isnan(ys), np.nan, np.where(ys == 1, 5.0, -2.0))
    model = cls(C=1.0, gamma=5.0, max_iter=3).fit(X, named)
    assert set(model.predict(Xt)) <= {5.0, -2.0} and model.n_iter_ <= 3
    with pytest.raises(SolverError, match="2 classes"):
        cls().fit(X, np.where(np.isnan(ys), np.nan, 1.0))
    assert not hasattr(cls(), "partial_fit")          # transductive: fit on all rows at once
    with pytest.raises(SolverError, match=r"C_unlabeled must be a number > 0 or null, got 0\.0"):
        cls(C_unlabeled=0.0).fit(X, ys)
    with pytest.raises(SolverError, match="max_iter must be an integer >= 1, got 0"):
        cls(max_iter=0).fit(X, ys)


@pytest.mark.parametrize("cls", [TSVMLabelSwitching, TSVMCCCP])
def test_fully_labeled_y_is_the_svm_on_the_labeled_rows(cls):
    """y without NaN: both procedures start from the SVM on L, and with U empty there is nothing to
    label, switch or balance: the model is SVC with C on the labeled rows, after one step, with a
    UserWarning (as scikit-learn's semi-supervised estimators train on fully labeled y)."""
    X, ys, lab, y, Xt, yt = _moons(n=200)
    labels = np.where(y == 1, 5.0, -2.0)
    with pytest.warns(UserWarning, match="no unlabeled rows .* trains as a supervised classifier"):
        model = cls(C=3.0, gamma=5.0).fit(X, labels)
    svc = SVC(C=3.0, kernel="rbf", gamma=5.0, tol=model.tol).fit(X, labels)
    np.testing.assert_allclose(model.decision_function(Xt), svc.decision_function(Xt), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(model.predict(Xt), svc.predict(Xt))
    assert model.converged_ and model.n_iter_ == 1 and model.n_solves_ == 1 and model.bias_shift_ == 0.0
    assert model.n_unlabeled_ == 0 and model.C_unlabeled_ == 0.0
    assert model.unlabeled_term()[1] == 0.0 and model.counters()["unlabeled_positive"] == 0
    with pytest.warns(UserWarning, match="no unlabeled rows"):
        auto = cls(C=3.0).fit(X, labels)                 # γ by the median trick over the labeled rows
    svc = SVC(C=3.0, gamma=auto.gamma_).fit(X, labels)
    np.testing.assert_allclose(auto.decision_function(Xt), svc.decision_function(Xt), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["tsvm-ls", "tsvm-cccp", "bgs3vm"])
def test_budget_exceeded_becomes_a_skipped_row_through_the_runner(name):
    spec = algorithms()[name]
    assert spec.tasks == ("binary", "semi-supervised")
    X, ys, lab, y, Xt, yt = _moons(n=300)
    data = Dataset(name="moons", task="binary", X_train=X, y_train=ys, X_test=Xt, y_test=yt.astype(float),
                   description="two moons, 8 labeled")
    prepared = Prepared(spec, data, np.arange(len(X)))
    rows = []
    params = {"max_points": 100} if name != "bgs3vm" else {}
    schedule, one_pass = EvaluateConfig(on=("test_error",)), StopConfig(passes=1)
    last = train_cell(prepared, Cell(params=params, trial=0, seed=0, evaluate=schedule, stop=one_pass), "semi",
                      sink=rows)
    if name == "bgs3vm":                 # O(B) memory: never skipped; it trains
        assert last["status"] == "ok" and last["test_error"] < 0.2
    else:
        assert [r["status"] for r in rows] == ["skipped"] and last["final"] == 1
        assert "max_points = 100" in last["message"] and "300 points" in last["message"]
        rows = []
        last = train_cell(prepared, Cell(params={"max_iter": 4}, trial=0, seed=0, evaluate=schedule, stop=one_pass),
                          "semi", sink=rows)
        assert last["status"] == "ok" and 1 <= last["iteration"] <= 4 and last["test_error"] < 0.3


def test_objective_is_the_s3vm_objective_of_the_final_svc():
    from kernelbench.solvers.kernels import kernel_matrix

    X, ys, lab, y, Xt, yt = _moons(n=300)
    model = TSVMCCCP(C=2.0, gamma=5.0).fit(X, ys)
    sv, a = model.svc_.support_vectors_, model.svc_.dual_coef_.ravel()
    F = model.decision_function(X)
    known = ~np.isnan(ys)
    Y = np.where(ys[known] == 1, 1.0, -1.0)
    s3vm = (0.5 * a @ kernel_matrix(sv, gamma=5.0) @ a + 2.0 * np.maximum(0, 1 - Y * F[known]).sum()
            + 2.0 * 8 / 292 * np.maximum(0, 1 - np.abs(F[~known])).sum())
    expected = s3vm / (2.0 * 8)     # reported divided by C·n_l (objectives.py): mean labeled hinge + ...
    assert model.C_unlabeled_ == pytest.approx(2.0 * 8 / 292)
    # the decision function is SVC's plus the balancing shift of b
    np.testing.assert_allclose(F, rbf_kernel_decision(sv, a, model.svc_.intercept_[0] + model.bias_shift_, X, 5.0))
    assert model.objective(X, ys) == pytest.approx(expected, rel=1e-10)


def rbf_kernel_decision(sv, a, b, X, gamma):
    from kernelbench.solvers.kernels import kernel_matrix

    return kernel_matrix(X, sv, gamma=gamma) @ a + b
