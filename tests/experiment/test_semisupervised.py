"""The semi-supervised protocol (kernelbench/semisupervised.py + the experiment loop): labeled draws, the
paper's 5-fold scheme, what supervised and semi-supervised algorithms are fitted on, and that no
test (or validation) row ever reaches training; a y without unlabeled rows trains every
semi-supervised estimator as a supervised classifier, with a warning; scikit-learn's estimator
checks on a semi-supervised view of their data."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_classification
from sklearn.utils.estimator_checks import check_estimator

from kernelbench.config import config_from_dict
from kernelbench.data.load import Dataset
from kernelbench.errors import ConfigError, DataError
from kernelbench.estimators import algorithms
from kernelbench.algorithms import AlgorithmSpec
from kernelbench.experiment import Cell, Prepared, grid_search, run_experiment, train_cell
from kernelbench.semisupervised import draw_labeled, mask_unlabeled, paper_folds, training_view
from kernelbench.config import EvaluateConfig, StopConfig
from kernelbench.solvers.tsgs3vm import TSGS3VMClassifier


def test_draw_labeled_is_seeded_and_holds_both_classes():
    y = np.array([1] * 3 + [-1] * 997)            # a rare class
    for seed in range(20):
        rows = draw_labeled(y, 5, seed)
        assert len(rows) == 5 == len(np.unique(rows)) and np.all(np.diff(rows) > 0)
        assert set(y[rows]) == {1, -1}
    np.testing.assert_array_equal(draw_labeled(y, 50, 7), draw_labeled(y, 50, 7))
    assert not np.array_equal(draw_labeled(y, 50, 7), draw_labeled(y, 50, 8))


def test_draw_labeled_refuses_impossible_counts():
    y = np.array([1, -1, 1, -1])
    with pytest.raises(DataError, match="smaller than"):
        draw_labeled(y, 4, 0)
    with pytest.raises(DataError, match="each of the 2 classes"):
        draw_labeled(y, 1, 0)


def test_mask_and_views():
    y = np.array([2.0, 1.0, 2.0, 1.0, 2.0])
    X = np.arange(10.0).reshape(5, 2)
    masked = mask_unlabeled(y, [1, 4])
    np.testing.assert_array_equal(np.isnan(masked), [True, False, True, True, False])
    assert masked[1] == 1.0 and masked[4] == 2.0
    Xs, ys, rows = training_view(X, y, [1, 4], semi_supervised=False)
    np.testing.assert_array_equal(rows, [1, 4])
    np.testing.assert_array_equal(Xs, X[[1, 4]])
    Xs, ys, rows = training_view(X, y, [1, 4], semi_supervised=True)
    assert Xs.shape == X.shape and np.isnan(ys).sum() == 3


def test_paper_folds_split_the_unlabeled_rows_and_keep_the_labeled_ones():
    """§6.1: unlabeled set split in 5; fold i trains on the labeled rows + unlabeled fold i and is
    evaluated on the other four folds."""
    rng = np.random.default_rng(0)
    y = rng.choice([-1, 1], size=1003)
    folds = paper_folds(y, 40, 5, seed=3)
    assert len(folds) == 5
    labeled = folds[0][2]
    unlabeled = np.setdiff1d(np.arange(1003), labeled)
    own = []
    for train, valid, lab in folds:
        np.testing.assert_array_equal(lab, labeled)
        assert np.intersect1d(train, valid).size == 0                 # no validation row trains
        assert np.isin(labeled, train).all() and not np.isin(labeled, valid).any()
        fold_rows = np.setdiff1d(train, labeled)
        own.append(fold_rows)
        np.testing.assert_array_equal(np.sort(np.concatenate([fold_rows, valid])), unlabeled)
        assert abs(len(fold_rows) - len(unlabeled) / 5) <= 1
    np.testing.assert_array_equal(np.sort(np.concatenate(own)), unlabeled)   # a partition


# ---------------------------------------------------------------------------------------------
# the experiment loop never trains on a test row (and, in CV, on a validation row)
# ---------------------------------------------------------------------------------------------

class _Spy(TSGS3VMClassifier):
    seen: list = []

    def begin(self, X, y, *, classes=None):
        _Spy.seen.append((np.array(X), np.array(y, dtype=float)))
        return super().begin(X, y, classes=classes)


class _SupervisedSpy(_Spy):
    pass


def _marked_data(n_train=400, n_test=150, seed=0):
    """Every row carries its identity in feature 0: training rows 0.., test rows 10_000.."""
    rng = np.random.default_rng(seed)
    X_tr = np.column_stack([np.arange(n_train), rng.normal(size=(n_train, 2))])
    X_te = np.column_stack([10_000 + np.arange(n_test), rng.normal(size=(n_test, 2))])
    y_tr = np.where(X_tr[:, 1] > 0, 1.0, -1.0)
    y_te = np.where(X_te[:, 1] > 0, 1.0, -1.0)
    return Dataset("marked", "binary", X_tr, y_tr, X_te, y_te)


def _spec(cls, tasks):
    return AlgorithmSpec("spy", classifier=cls, regressor=None, description="spy", tasks=tasks,
                         fixed={"batch_size": 32, "gamma": 1.0})


@pytest.mark.parametrize("semi", [True, False])
@pytest.mark.filterwarnings("ignore:y contains no unlabeled rows")     # the supervised spy is an S3VM
def test_train_cell_never_sees_test_rows(semi):
    _Spy.seen = []
    data = _marked_data()
    spec = _spec(_Spy if semi else _SupervisedSpy, ("binary", "semi-supervised") if semi else ("binary",))
    prepared = Prepared(spec, data, np.arange(400), labeled=30)
    rows = []
    for trial in range(2):
        train_cell(prepared, Cell(params={}, trial=trial, seed=trial, evaluate=EvaluateConfig(on=("test_error",)),
                                  stop=StopConfig(passes=1)), "t", sink=rows)
    assert len(_Spy.seen) == 2
    for X, y in _Spy.seen:
        assert np.all(X[:, 0] < 10_000), "a test row reached training"
        assert (~np.isnan(y)).sum() == 30
        if semi:
            assert X.shape[0] == 400 and np.isnan(y).sum() == 370
        else:
            assert X.shape[0] == 30
        labeled_ids = X[~np.isnan(y), 0].astype(int)
        np.testing.assert_array_equal(y[~np.isnan(y)], data.y_train[labeled_ids])   # true labels
    ids = [set(X[~np.isnan(y), 0].astype(int)) for X, y in _Spy.seen]
    assert ids[0] != ids[1], "the labeled draw must follow the trial seed"
    final = [r for r in rows if r.get("final")]
    assert all(r["status"] == "ok" and 0 <= r["test_error"] <= 1 for r in final)


def test_cv_cell_trains_on_labeled_plus_its_fold_only():
    _Spy.seen = []
    data = _marked_data()
    prepared = Prepared(_spec(_Spy, ("binary", "semi-supervised")), data, np.arange(400), labeled=30)
    folds = paper_folds(data.y_train, 30, 5, seed=0)
    for i, (train, valid, lab) in enumerate(folds):
        cell = Cell(params={}, trial=0, seed=0, fold=i, train_rows=train, valid_rows=valid,
                    labeled_rows=lab, evaluate=EvaluateConfig(on=("test_error",)), curve=False,
                    stop=StopConfig(passes=1))
        train_cell(prepared, cell, "t", sink=[])
        X, y = _Spy.seen[-1]
        seen = X[:, 0].astype(int)
        assert np.all(seen < 10_000) and not np.isin(seen, valid).any()
        np.testing.assert_array_equal(np.sort(seen[~np.isnan(y)]), lab)


# ---------------------------------------------------------------------------------------------
# end to end through configs
# ---------------------------------------------------------------------------------------------

def _cfg(algorithm, **dataset):
    return config_from_dict({"name": "ssl", "dataset": {"name": "digits86", "test": 0.3, **dataset},
                             "algorithm": {"name": algorithm, "params": {"batch_size": 32}},
                             "trials": 2, "stop": {"passes": 1}})


def test_run_with_labeled_writes_test_errors(tmp_path):
    folder = run_experiment(_cfg("tsgs3vm", labeled=20), out_dir=tmp_path, quiet=True)
    df = pd.read_csv(folder / "results.csv")
    final = df[df["final"] == 1]
    assert len(final) == 2 and (final["status"] == "ok").all() and final["test_error"].between(0, 1).all()
    meta = json.loads((folder / "run.json").read_text())
    assert meta["labeled"] == 20 and meta["peak_memory_mb"] > 0
    counters = json.loads(final["counters"].iloc[0])
    assert counters["n_labeled"] == 20 and counters["n_unlabeled"] > 200


def test_supervised_algorithm_needs_labeled_only(tmp_path):
    with pytest.raises(ConfigError, match="labeled_only"):
        run_experiment(_cfg("dsg", labeled=20), out_dir=tmp_path, quiet=True)
    folder = run_experiment(_cfg("dsg", labeled=20, labeled_only=True), out_dir=tmp_path, quiet=True)
    df = pd.read_csv(folder / "results.csv")
    final = df[df["final"] == 1]
    assert (final["samples_seen"] == 20).all()              # one pass over the 20 labeled rows


def test_labeled_only_without_labeled_is_refused():
    with pytest.raises(ConfigError, match="dataset.labeled_only"):
        _cfg("dsg", labeled_only=True)


def test_grid_cv_uses_the_paper_folds(tmp_path):
    cfg = config_from_dict({"name": "sslgrid", "dataset": {"name": "digits86", "test": 0.3, "labeled": 20},
                            "algorithm": {"name": "tsgs3vm", "params": {"batch_size": 32}},
                            "grid": {"C": [1.0, 10.0]}, "cv": 5, "trials": 1, "stop": {"passes": 1}})
    folder = grid_search(cfg, out_dir=tmp_path, quiet=True)
    df = pd.read_csv(folder / "results.csv")
    cv = df[df["fold"].notna() & (df["final"] == 1)]
    assert len(cv) == 10 and (cv["status"] == "ok").all()
    n_train = json.loads((folder / "run.json").read_text())["dataset"]["n_train"]
    counters = [json.loads(c) for c in cv["counters"]]
    # each fold trains on the 20 labeled rows + one fifth of the unlabeled ones
    assert all(c["n_labeled"] == 20 and abs(c["n_unlabeled"] - (n_train - 20) / 5) <= 1 for c in counters)
    assert "tsgs3vm" in algorithms()


def test_labeled_only_folds_train_as_many_steps_as_the_refit(tmp_path):
    """A supervised algorithm under labeled_only fits the 20 labeled rows in every paper fold and in
    the refit: the fifth of the unlabeled rows each fold adds is never seen, so it must not scale
    the fold's passes (which would train five times the refit's steps)."""
    cfg = config_from_dict({"name": "sslgrid", "dataset": {"name": "digits86", "test": 0.3, "labeled": 20,
                                                           "labeled_only": True},
                            "algorithm": {"name": "dsg", "params": {"batch_size": 4, "block_size": 8}},
                            "grid": {"C": [1.0, 10.0]}, "cv": 5, "trials": 1, "stop": {"passes": 3}})
    folder = grid_search(cfg, out_dir=tmp_path, quiet=True)
    final = pd.read_csv(folder / "results.csv").query("final == 1")
    cv, refit = final[final["fold"].notna()], final[final["fold"].isna()]
    assert len(cv) == 10 and len(refit) == 1
    assert (cv["samples_seen"] == 3 * 20).all() and (refit["samples_seen"] == 3 * 20).all()


# ---------------------------------------------------------------------------------------------
# y without unlabeled rows; scikit-learn's checks with unlabeled rows
# ---------------------------------------------------------------------------------------------

SEMI_SUPERVISED = sorted({spec.classifier for spec in algorithms().values() if "semi-supervised" in spec.tasks},
                         key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", SEMI_SUPERVISED, ids=lambda c: c.__name__)
def test_fully_labeled_y_trains_supervised_with_a_warning(cls):
    """The contract (semisupervised.py): y without NaN trains a supervised classifier on every row,
    the unlabeled term absent, as scikit-learn's semi-supervised estimators accept fully labeled y;
    a UserWarning says so. The same rows with one more, unlabeled, row train without it."""
    X, y = make_classification(n_samples=120, n_features=4, n_informative=3, n_redundant=0, class_sep=2.0,
                               random_state=0)
    with pytest.warns(UserWarning, match=f"no unlabeled rows .*{cls.__name__} trains as a supervised classifier"):
        model = cls(random_state=0).fit(X, y)
    assert model.n_unlabeled_ == 0 and model.n_labeled_ == len(y)
    assert model.unlabeled_term()[1] == 0.0                 # the objective's unlabeled term is absent
    assert np.mean(model.predict(X) == y) > 0.85             # SVC with its defaults: 0.975
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        cls(random_state=0).fit(np.vstack([X, X[:1]]), np.append(y.astype(float), np.nan))


def _semi_supervised_view(cls):
    """`cls` whose fit leaves every third row of the check's y unlabeled (NaN; None for string
    labels). Defined in this module's namespace, so that the pickling check can find it."""
    def fit(self, X, y):
        if y is not None:
            y = np.array(y, dtype=object if np.asarray(y).dtype.kind in "OUS" else float)
            if y.shape[0] >= 3:
                y[2::3] = None if y.dtype == object else np.nan
        return cls.fit(self, X, y)

    name = f"SemiSupervised{cls.__name__}"
    view = type(name, (cls,), {"fit": fit, "__module__": __name__, "__qualname__": name})
    globals()[name] = view
    return view


@pytest.mark.parametrize("cls", SEMI_SUPERVISED, ids=lambda c: c.__name__)
def test_scikit_learn_checks_pass_with_unlabeled_rows(cls):
    """scikit-learn's checks give fully labeled y, which trains the supervised special case
    (tests/estimators/test_registry_estimators.py); here each runs with a third of the check's rows
    unlabeled, so that they exercise the semi-supervised training itself."""
    check_estimator(_semi_supervised_view(cls)(), expected_failed_checks=dict(cls.expected_failed_checks))
