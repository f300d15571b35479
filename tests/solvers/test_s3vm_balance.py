"""The class-balance constraint of the semi-supervised SVMs (`offset: balanced`, the default of
tsgs3vm, frs3vm and bgs3vm; kernelbench/solvers/tsgs3vm.py, module doc): the balance step against
hand-computed values and a brute-force reference, its tolerance against a simulation of the two
sampled rates it compares, the compiled loop with an active balance against the NumPy reference,
and the behaviour it exists for: a setting that collapses to one class without it does not with
it, and the defaults never predict one class on a skewed, separable set."""
import glob

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from kernelbench.config import load_config
from kernelbench.solvers._tsgs3vm import OFFSETS, TSGCore, balance_tolerance, balanced_offset
from kernelbench.solvers.bgs3vm import BALANCE_WINDOW, BGS3VMClassifier
from kernelbench.solvers.losses import code, unlabeled_code
from kernelbench.solvers.tsgs3vm import FRS3VMClassifier, TSGS3VMClassifier, balance_offset

import reference_s3vm

S3VMS = (TSGS3VMClassifier, FRS3VMClassifier, BGS3VMClassifier)


# ---------------------------------------------------------------------------------------------
# the balance step
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rate, tol, expected", [
    (0.5, 0.0, 0.0),      # 3 of 6 outputs positive already: no offset
    (1 / 6, 0.0, -2.5),   # one positive: the threshold halfway between the largest two, 3 and 2
    (0.0, 0.0, -4.0),     # none positive: one unit beyond the largest output, 3 + 1
    (1.0, 0.0, 4.0),      # all positive: one unit beyond the smallest, -3 - 1
    (0.8, 0.2, 1.5),      # band 0.6-1.0 holds 4-6 positives; 4 is nearest: b in (1, 2]
    (0.5, 0.2, 0.0),      # 3 positives within 0.3-0.7
])
def test_balance_step_by_hand(rate, tol, expected):
    h = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    assert balanced_offset(h, rate, tol) == pytest.approx(expected, abs=1e-15)
    assert reference_s3vm.balanced_offset(h, rate, tol) == pytest.approx(expected, abs=1e-15)


def test_balance_step_matches_the_brute_force_reference():
    rng = np.random.default_rng(0)
    for trial in range(300):
        n = int(rng.integers(1, 40))
        h = rng.normal(size=n) * rng.uniform(0.01, 3) + rng.normal()
        if trial % 3 == 0:                       # ties
            h = np.round(h, 1)
        rate, tol = rng.uniform(0.02, 0.98), rng.choice([0.0, rng.uniform(0, 0.3)])
        b = balanced_offset(h, rate, tol)
        assert b == pytest.approx(reference_s3vm.balanced_offset(h, rate, tol), abs=1e-12)
        share = np.mean(h + b > 0)
        admissible = [k / n for k in range(n + 1) if (rate - tol) * n - 1e-9 <= k <= (rate + tol) * n + 1e-9]
        if admissible and len(np.unique(h)) == n:
            # the share lands in the band (or at the nearest count, when none fits in it)
            nearest = min(admissible, key=lambda a: abs(a - np.mean(h > 0)))
            assert share == pytest.approx(nearest) or (b == 0.0 and share in admissible)


def test_balance_step_refuses_no_unlabeled_values():
    with pytest.raises(ValueError, match="at least one unlabeled value"):
        balanced_offset(np.empty(0), 0.5, 0.1)


def test_tolerance_covers_95_percent_of_sampling_differences():
    """The band 2·sqrt(p(1−p)(1/n_l + 1/n_u)) is about a 95 % interval for the difference of the
    positive shares of n_l labeled and n_u unlabeled rows drawn from one population with rate p."""
    rng = np.random.default_rng(1)
    for p, n_l, n_u in [(0.33, 200, 256), (0.1, 200, 256), (0.5, 60, 1000)]:
        diff = rng.binomial(n_l, p, 40000) / n_l - rng.binomial(n_u, p, 40000) / n_u
        covered = np.mean(np.abs(diff) <= balance_tolerance(p, n_l, n_u))
        assert 0.93 < covered < 0.97, (p, n_l, n_u, covered)


# ---------------------------------------------------------------------------------------------
# the compiled loop with the balance acting
# ---------------------------------------------------------------------------------------------

def _skewed(n=2000, rate=0.15, n_labeled=60, separation=3.0, d=5, seed=0):
    """Two Gaussian classes along x_0, `rate` of them positive, 3 standard deviations either side
    of 0 (separable up to a few rows); n_labeled rows keep their label, the others are NaN."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < rate, 1.0, -1.0)
    X = rng.normal(size=(n, d)) * 0.5
    X[:, 0] += 0.5 * separation * y
    y_semi = np.full(n, np.nan)
    labeled = rng.choice(n, n_labeled, replace=False)
    y_semi[labeled] = y[labeled]
    return X, y, y_semi


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_core_with_an_active_balance_matches_the_reference(dtype):
    X, y, y_semi = _skewed(n=950, n_labeled=150)
    rng = np.random.default_rng(2)
    lab = np.flatnonzero(~np.isnan(y_semi))
    lab_idx = np.stack([rng.permutation(lab)[:40] for _ in range(8)]).astype(np.int64)
    unl_idx = rng.permutation(np.flatnonzero(np.isnan(y_semi)))[:780].astype(np.int64)
    # a wide kernel (γ = 0.05) and a small step: f stays close to C·(mean label)·k, negative on
    # nearly every row, and b has to lift it in each iteration after the first
    params = dict(block_size=16, kernel="rbf", gamma=0.05, C=1.0, C_unlabeled=0.5, step=0.1, seed=7)
    offsets = []
    coef, predict, bias = reference_s3vm.tsgs3vm(X, y, lab_idx, unl_idx, 100, unlabeled_loss_name="shg",
                                                 offset="balanced", offsets=offsets, **params)
    assert sum(b != 0.0 for b in offsets) == 7, "the balance must act after the first iteration"
    core = TSGCore(n_dims=X.shape[1], labeled_loss=code("hinge"), unlabeled_loss=unlabeled_code("shg"),
                   dtype=dtype, cache_features=True, threads=1, offset=OFFSETS["balanced"],
                   positive_rate=float(np.mean(y[np.unique(lab_idx)] > 0)),
                   n_labeled=len(np.unique(lab_idx)), **params)
    Xc = np.ascontiguousarray(X, dtype=dtype)
    with threadpool_limits(limits=1, user_api="blas"):
        assert core.train(Xc, y, lab_idx, unl_idx, 100) == (0, 8)
        f = core.predict(Xc)
    tol = dict(rtol=1e-9, atol=1e-11) if dtype == "float64" else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(core.coef(), np.sqrt(2.0) * coef, **tol)
    np.testing.assert_allclose(core.bias, bias, **tol)
    np.testing.assert_allclose(f, predict(X), **tol)


def test_balanced_offset_needs_both_classes_in_the_core():
    with pytest.raises(ValueError, match="both classes"):
        TSGCore(n_dims=2, block_size=4, kernel="rbf", gamma=1.0, labeled_loss=code("hinge"),
                unlabeled_loss=unlabeled_code("shg"), C=1.0, C_unlabeled=1.0, step=0.1, seed=0,
                dtype="float64", cache_features=True, threads=1, offset=OFFSETS["balanced"],
                positive_rate=1.0, n_labeled=5)


@pytest.mark.parametrize("cls", S3VMS)
def test_training_does_not_depend_on_where_run_calls_end(cls):
    """The experiment loop steps an estimator in chunks (evaluations in between); the b each step uses is
    solved afresh (TSGS3VM, FRS3VM) or is 0 (BGS3VM), and the b prediction uses, solved after each
    run(), does not feed back, so one run and many short runs give the same model."""
    X, _, y_semi = _skewed(n=1200)
    params = dict(random_state=3, batch_size=64) if cls is not BGS3VMClassifier else dict(random_state=3)
    whole, parts = cls(**params), cls(**params)
    whole.begin(X, y_semi)
    parts.begin(X, y_semi)
    total = whole.steps_per_pass
    whole.run(total)
    done = 0
    while done < total:
        done += parts.run(min(7, total - done))
    np.testing.assert_array_equal(whole.decision_function(X), parts.decision_function(X))


def test_bgs3vm_predicts_with_b_balanced_on_its_last_window():
    X, _, y_semi = _skewed(n=900)
    est = BGS3VMClassifier(C=0.01, random_state=0)
    est.begin(X, y_semi)
    est.run(est.steps_per_pass)
    # the last BALANCE_WINDOW unlabeled rows stepped on (a whole pass: the end of its order),
    # evaluated with the final model; the SGD steps themselves run with b = 0
    h = est.core_.decision(X[est._order[-BALANCE_WINDOW:]])
    expected = reference_s3vm.balanced_offset(
        h, est.positive_rate_, reference_s3vm.balance_tolerance(est.positive_rate_, est.n_labeled_, len(h)))
    assert est.offset_ == pytest.approx(expected, abs=1e-12)
    assert est.offset_ != 0.0, "C = 0.01 alone predicts one class here: the balance must act"


# ---------------------------------------------------------------------------------------------
# what it is for
# ---------------------------------------------------------------------------------------------

# settings that put every (or all but a handful of) unlabeled rows on one side without the offset:
# a small C leaves f ≈ C·(mean labeled label)·k, negative everywhere when most labels are.
COLLAPSING = [(TSGS3VMClassifier, dict(C=1.0, eta=10.0, passes=1)),
              (FRS3VMClassifier, dict(C=1.0, eta=10.0)),
              (BGS3VMClassifier, dict(C=0.01))]


@pytest.mark.parametrize("cls, params", COLLAPSING, ids=lambda v: getattr(v, "__name__", ""))
def test_balance_prevents_the_collapse_to_one_class(cls, params):
    X, y, y_semi = _skewed()
    unlabeled = np.isnan(y_semi)
    labeled_rate = np.mean(y_semi[~unlabeled] > 0)
    without = cls(offset="none", random_state=0, **params).fit(X, y_semi).predict(X[unlabeled])
    assert min(np.mean(without > 0), np.mean(without < 0)) < 0.01, "the setting must collapse without it"
    predicted = cls(offset="balanced", random_state=0, **params).fit(X, y_semi).predict(X[unlabeled])
    # within the band the step keeps on a batch / window of 256, widened by two standard errors
    # of one batch's share against the whole unlabeled set's
    band = balance_tolerance(labeled_rate, int((~unlabeled).sum()), 256)
    assert abs(np.mean(predicted > 0) - labeled_rate) <= band + 2 * np.sqrt(labeled_rate * (1 - labeled_rate) / 256)
    assert np.mean(predicted != y[unlabeled]) < np.mean(without != y[unlabeled])


@pytest.mark.parametrize("cls", S3VMS)
@pytest.mark.parametrize("rate", [0.15, 0.8])
def test_defaults_never_predict_one_class_on_a_skewed_separable_set(cls, rate):
    X, y, y_semi = _skewed(rate=rate, seed=4)
    unlabeled = np.isnan(y_semi)
    est = cls(random_state=0).fit(X, y_semi)
    assert est.get_params()["offset"] == "balanced"
    predicted = est.predict(X[unlabeled])
    assert 0.0 < np.mean(predicted > 0) < 1.0
    assert abs(np.mean(predicted > 0) - np.mean(y[unlabeled] > 0)) < 0.03
    assert np.mean(predicted != y[unlabeled]) < 0.03


def test_balance_offset_is_the_step_with_its_tolerance():
    h = np.linspace(-2.0, 1.0, 100)
    assert balance_offset(h, 0.4, 200) == balanced_offset(h, 0.4, balance_tolerance(0.4, 200, 100))


def test_paper_configs_pin_their_offset():
    """The Geng et al. reproductions predate the balance: their configs say `offset` explicitly, so
    the default's change cannot move their results."""
    checked = 0
    for path in sorted(glob.glob("configs/*.yaml")):
        cfg = load_config(path)
        if cfg.algorithm.name in ("tsgs3vm", "frs3vm", "bgs3vm") and cfg.tags.paper == "geng2019":
            assert "offset" in cfg.algorithm.params, path
            checked += 1
    assert checked >= 20
