"""BGS3VM (budgeted SGD semi-supervised SVM): the compiled core against the literal NumPy reference
(with and without merging, every merge method), budget ≥ n against an independent unbudgeted kernel
SGD, a merge's weight degradation against the exact kernel, without unlabeled rows against BSGD's
core step for step, the estimator on two moons against SVC on the labeled points alone, and the
estimator API (a fully labeled y trains supervised, with a warning)."""
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from kernelbench.errors import SolverError
from kernelbench.estimators import algorithms
from kernelbench.solvers._bgs3vm import BGS3VMCore
from kernelbench.solvers._bsgd import BSGDCore
from kernelbench.solvers.bgs3vm import BGS3VMClassifier
from kernelbench.solvers.bsgd import BSGDClassifier
from kernelbench.solvers.merging import lookup_tables

import reference_bgs3vm

METHODS = ("gss", "gss-precise", "lookup-h", "lookup-wd", "removal")


def _problem(n=80, d=3, steps=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1.0, -1.0)
    lab = rng.choice(20, size=steps).astype(np.int64)               # rows 0..19 are labeled
    unl = rng.integers(20, n, size=steps).astype(np.int64)
    return X, y, lab, unl


def _core(method, d, **kw):
    H, W = lookup_tables(400) if method.startswith("lookup") else (None, None)
    return BGS3VMCore(n_dims=d, method=method, H=H, W=W, **kw)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("budgets", [(6, 9), (500, 500)], ids=["merging", "no-merging"])
def test_core_matches_reference_step_for_step(method, budgets):
    X, y, lab, unl = _problem()
    kw = dict(budget_labeled=budgets[0], budget_unlabeled=budgets[1], gamma=0.7, lam=1.0 / (20 * 2.0),
              unlabeled_weight=0.8)
    core = _core(method, X.shape[1], **kw)
    H, W = lookup_tables(400) if method.startswith("lookup") else (None, None)
    # step by step: after every step the pools equal the reference's
    for t in range(0, len(lab), 50):
        core.train(X, y, lab[t:t + 50], unl[t:t + 50])
        L, U, wds = reference_bgs3vm.bgs3vm(X, y, lab[:t + 50], unl[:t + 50], merge=method, H=H, W=W, **kw)
        tol = 1e-6 if method == "gss-precise" else 1e-9        # ε = 1e-10 pins h only to ~1e-8
        for pool, ref in ((core.labeled, L), (core.unlabeled, U)):
            assert pool.n_sv == len(ref)
            ref_alpha = np.array([a for a, _ in ref])
            name = "labeled" if pool is core.labeled else "unlabeled"
            np.testing.assert_allclose(core.coef(name), ref_alpha, rtol=tol, atol=tol * np.abs(ref_alpha).max())
            np.testing.assert_allclose(pool.support_vectors(), np.array([x for _, x in ref]), rtol=tol, atol=tol)
        events = sum(p.n_merges + p.n_removals + p.n_fallback_removals for p in (core.labeled, core.unlabeled))
        assert events == len(wds)
        assert core.wd_sum == pytest.approx(sum(wds), rel=max(tol, 1e-9), abs=1e-12)
    assert core.n_iter == len(lab)
    if budgets[0] < 100:
        assert core.labeled.n_sv == 6 and core.unlabeled.n_sv == 9 and len(wds) >= 20
        assert core.n_unlabeled_updates > 20       # the unlabeled loss was active
    else:
        assert len(wds) == 0
    Xq = np.random.default_rng(9).normal(size=(13, 3))
    ref_f = [sum(a * np.exp(-0.7 * np.sum((x - q) ** 2)) for a, x in L + U) for q in Xq]
    np.testing.assert_allclose(core.decision(Xq), ref_f, rtol=1e-6, atol=1e-9 * np.abs(ref_f).max())


def test_budget_at_least_n_is_the_unbudgeted_kernel_sgd():
    X, y, lab, unl = _problem(n=120, steps=300, seed=4)
    kw = dict(gamma=0.5, lam=1.0 / (20 * 5.0), unlabeled_weight=1.3)
    core = BGS3VMCore(n_dims=3, budget_labeled=300, budget_unlabeled=300, method="lookup-wd",
                      H=lookup_tables(400)[0], W=lookup_tables(400)[1], **kw)
    core.train(X, y, lab, unl)
    P, beta = reference_bgs3vm.kernel_sgd_s3vm(X, y, lab, unl, **kw)
    assert core.labeled.n_merges + core.unlabeled.n_merges == 0
    Xq = np.random.default_rng(1).normal(size=(50, 3))
    np.testing.assert_allclose(core.decision(Xq), rbf_kernel(Xq, P, gamma=0.5) @ beta, rtol=1e-9, atol=1e-9)
    # the model: the non-zero β are the SVs of the two pools
    assert core.labeled.n_sv + core.unlabeled.n_sv == np.count_nonzero(beta)


def _w_distance_sq(alpha1, S1, alpha2, S2, gamma):
    a = np.concatenate([alpha1, -alpha2])
    S = np.vstack([S1, S2])
    return float(a @ rbf_kernel(S, gamma=gamma) @ a)


def _model(core):
    return (np.concatenate([core.coef("labeled"), core.coef("unlabeled")]),
            np.vstack([core.labeled.support_vectors(), core.unlabeled.support_vectors()]))


def _events(core):
    return sum(p.n_merges + p.n_removals + p.n_fallback_removals for p in (core.labeled, core.unlabeled))


@pytest.mark.parametrize("method", ["gss", "lookup-wd", "removal"])
def test_a_merge_changes_f_by_exactly_the_computed_weight_degradation(method):
    """WD (Alg. 1 line 10) is ‖f_before − f_after‖² in the RKHS, by the exact kernel."""
    X, y, lab, unl = _problem(seed=3)
    gamma, lam = 0.7, 1 / 40
    core = _core(method, 3, budget_labeled=5, budget_unlabeled=5, gamma=gamma, lam=lam, unlabeled_weight=1.0)
    checked = 0
    for t in range(1, len(lab) + 1):
        alpha, S = _model(core)
        wd_before, events = core.wd_sum, _events(core)
        core.train(X, y, lab[t - 1:t], unl[t - 1:t])
        if _events(core) != events + 1:        # one maintenance (two WDs add with a cross term)
            continue
        # the model before maintenance: shrunk SVs plus this step's new ones (f before the step)
        xl, xu, eta = X[lab[t - 1]], X[unl[t - 1]], 1.0 / (lam * t)
        fl, fu = (rbf_kernel(np.vstack([xl, xu]), S, gamma=gamma) @ alpha if len(alpha) else (0.0, 0.0))
        A, P = [alpha * (1 - 1 / t)], [S]
        if y[lab[t - 1]] * fl < 1:
            A.append([eta * y[lab[t - 1]]])
            P.append(xl[None])
        if fu != 0 and abs(fu) < 1:
            A.append([eta * np.sign(fu)])
            P.append(xu[None])
        a_after, S_after = _model(core)
        a = np.concatenate(A + [-a_after])
        Q = np.vstack(P + [S_after])
        exact = float(a @ rbf_kernel(Q, gamma=gamma) @ a)
        assert exact == pytest.approx(core.wd_sum - wd_before, rel=1e-6, abs=1e-9 * np.sum(a ** 2))
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("method", METHODS)
def test_core_without_unlabeled_rows_is_bsgd_step_for_step(method):
    """No unlabeled rows (an empty unlabeled_rows): each step is the labeled update alone, Pegasos
    with budget maintenance on the labeled hinge, the objective with its unlabeled term absent;
    BSGD's core (bsgd.py, no bias) is that algorithm, written separately."""
    X, y, lab, _ = _problem(steps=300)
    H, W = lookup_tables(400) if method.startswith("lookup") else (None, None)
    lam = 1.0 / (20 * 2.0)
    core = _core(method, X.shape[1], budget_labeled=6, budget_unlabeled=1, gamma=0.7, lam=lam,
                 unlabeled_weight=0.8)
    bsgd = BSGDCore(n_dims=X.shape[1], budget=6, gamma=0.7, lam=lam, method=method, H=H, W=W)
    assert core.train(X, y, lab, np.empty(0, dtype=np.int64)) == len(lab) == core.n_iter
    bsgd.train(X, y, lab)
    assert core.unlabeled.n_sv == 0 and core.n_unlabeled_updates == 0
    assert core.labeled.n_sv == bsgd.n_sv and core.labeled.n_merges == bsgd.n_merges
    assert core.labeled.n_merges > 0 or method == "removal"
    tol = 1e-6 if method == "gss-precise" else 1e-9        # ε = 1e-10 pins h only to ~1e-8
    np.testing.assert_allclose(core.decision(X), bsgd.decision(X), rtol=tol, atol=tol)
    with pytest.raises(ValueError, match="one entry per step"):
        core.train(X, y, lab, lab[:5])


# ---------------------------------------------------------------------------------------------
# the estimator
# ---------------------------------------------------------------------------------------------

def _moons(n=1500, labeled_per_class=4, seed=0):
    return reference_bgs3vm.semi_supervised_moons(n, labeled_per_class=labeled_per_class, seed=seed)


def test_uses_the_unlabeled_cluster_structure_on_two_moons():
    """Independent truth: the two moons are the classes; with 8 labels SVC on the labeled points
    alone misses part of each moon, the S3VM follows the low-density gap between them."""
    errors = []
    for seed in range(5):
        X, ys, lab, y, Xt, yt = _moons(seed=seed)
        svc = SVC(C=1.0, gamma=5.0).fit(X[lab], y[lab])
        model = BGS3VMClassifier(C=1.0, gamma=5.0, passes=3, random_state=seed).fit(X, ys)
        errors.append((np.mean(svc.predict(Xt) != yt), np.mean(model.predict(Xt) != yt)))
        assert model.n_support_vectors_ <= 100 + model.budget_unlabeled_
        assert model.budget_unlabeled_ == int(np.ceil(0.2 * (len(X) - len(lab))))
    svc_err, s3vm_err = np.mean(errors, axis=0)
    assert s3vm_err < 0.03 and s3vm_err < 0.5 * svc_err, errors
    assert all(s3vm <= svc + 0.01 for svc, s3vm in errors), errors


def test_api_labels_objective_errors_and_pickle():
    X, ys, lab, y, Xt, yt = _moons(n=400)
    ys_named = np.where(np.isnan(ys), np.nan, np.where(ys == 1, 7.0, 3.0))      # any two labels
    model = BGS3VMClassifier(C=10.0, gamma=2.0, budget_unlabeled=30, random_state=0).fit(X, ys_named)
    assert set(model.predict(Xt)) <= {3.0, 7.0}
    assert model.n_iter_ == 400 - len(lab) and model.samples_seen_ == 2 * model.n_iter_
    again = BGS3VMClassifier(C=10.0, gamma=2.0, budget_unlabeled=30, random_state=0).fit(X, ys_named)
    np.testing.assert_array_equal(model.decision_function(Xt), again.decision_function(Xt))
    clone(model).fit(X, ys_named)
    # the objective at the model: its parts by hand
    F = model.decision_function(X)
    known = ~np.isnan(ys)
    Y = np.where(ys_named[known] == 7.0, 1.0, -1.0)
    mu = model.C_unlabeled_ * model.n_unlabeled_ / (model.C * model.n_labeled_)
    assert mu == pytest.approx(1.0)             # C* = C n_l / n_u: both parts weigh the same
    expected = (0.5 * model.lambda_ * model.coef_norm_sq() + np.mean(np.maximum(0, 1 - Y * F[known]))
                + mu * np.mean(np.maximum(0, 1 - np.abs(F[~known]))))
    assert model.objective(X, ys_named) == pytest.approx(expected)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.decision_function(Xt), model.decision_function(Xt))
    c = model.counters()
    assert c["n_unlabeled_support_vectors"] <= 30 and c["merges_unlabeled"] > 0
    with pytest.raises(SolverError, match="2 classes"):
        BGS3VMClassifier().fit(X, np.where(np.isnan(ys), np.nan, 1.0))
    with pytest.raises(SolverError, match="budget_labeled must be an integer >= 1, got 0"):
        BGS3VMClassifier(budget_labeled=0).fit(X, ys)
    with pytest.raises(SolverError, match="merge must be one of 'gss', .*'removal', got 'nope'"):
        BGS3VMClassifier(merge="nope").fit(X, ys)
    with pytest.raises(SolverError, match="grid_size must be an integer >= 2, got 1"):
        BGS3VMClassifier(grid_size=1).fit(X, ys)


def test_fully_labeled_y_trains_supervised_with_a_warning():
    """y without NaN: the S3VM objective with its unlabeled sum empty (C* = 0), i.e. budgeted
    Pegasos on the labeled rows (one pass = n_l steps), as scikit-learn's semi-supervised
    estimators train on fully labeled y; it says so with a UserWarning."""
    X, _, _, y, Xt, yt = _moons(n=300)                 # every row labeled
    with pytest.warns(UserWarning, match="no unlabeled rows .* trains as a supervised classifier"):
        model = BGS3VMClassifier(C=10.0, gamma=2.0, budget_labeled=50, passes=3, random_state=0).fit(X, y)
    assert model.n_unlabeled_ == 0 and model.C_unlabeled_ == 0.0 and model.budget_unlabeled_ == 0
    assert model.n_iter_ == model.samples_seen_ == 3 * len(X)
    counters = model.counters()
    assert counters["n_unlabeled_support_vectors"] == 0 and counters["merges_unlabeled"] == 0
    assert 0 < counters["n_labeled_support_vectors"] <= 50
    # the objective is the labeled part alone: λ/2‖f‖² + mean hinge
    Y = np.where(y == model.classes_[1], 1.0, -1.0)
    expected = 0.5 * model.lambda_ * model.coef_norm_sq() + np.mean(np.maximum(0, 1 - Y * model.decision_function(X)))
    assert model.objective(X, y) == pytest.approx(expected)
    # the same algorithm as BSGD on these rows (its own row order): the same test error within 2 points
    bsgd = BSGDClassifier(C=10.0, gamma=2.0, budget=50, passes=3, random_state=0).fit(X, y)
    assert abs(np.mean(model.predict(Xt) != yt) - np.mean(bsgd.predict(Xt) != yt)) <= 0.02
    with pytest.warns(UserWarning, match="no unlabeled rows"):     # explicit C* has nothing to weigh
        assert BGS3VMClassifier(C_unlabeled=2.0, random_state=0).fit(X, y).unlabeled_term()[1] == 0.0


def test_registered_for_semi_supervised_configs():
    spec = algorithms()["bgs3vm"]
    assert spec.tasks == ("binary", "semi-supervised")
    model = spec.build({"C": 4.0, **spec.smoke_params}, seed=3)
    assert isinstance(model, BGS3VMClassifier) and model.C == 4.0 and model.random_state == 3
    assert spec.defaults()["budget_labeled"] == 100 and spec.defaults()["budget_unlabeled"] is None
