"""`protocol: paper` (`kernelbench run --protocol paper`): Geng et al.'s §6.1 test error -- per
trial, L labeled rows + one unlabeled fold train, the other folds are scored -- as a run's
measurement. Truths asserted against: the rows a spy estimator is given and asked to predict
(identity in feature 0), scikit-learn-style fit / predict on the same rows, the config file."""
import json

import numpy as np
import pandas as pd
import pytest
import yaml
from sklearn.datasets import make_classification

import kernelbench.experiment as experiment
from kernelbench.experiment import prepare, run
from kernelbench.cli import main
from kernelbench.config import config_from_dict
from kernelbench.data.load import Dataset
from kernelbench.errors import ConfigError
from kernelbench.algorithms import AlgorithmSpec
from kernelbench.report import pooling_conflict
from kernelbench.results import collect_results, final_rows
from kernelbench.semisupervised import paper_folds
from kernelbench.solvers.tsgs3vm import TSGS3VMClassifier

TEST_ID = 10_000          # test rows carry ids from here on (feature 0)


class _Spy(TSGS3VMClassifier):
    """Records, in order, the rows it is fitted on (ids, labels) and the rows it predicts (ids)."""
    events: list = []

    def begin(self, X, y, *, classes=None):
        _Spy.events.append(("fit", np.asarray(X)[:, 0].astype(int), np.array(y, dtype=float)))
        return super().begin(X, y, classes=classes)

    def predict(self, X):
        _Spy.events.append(("predict", np.asarray(X)[:, 0].astype(int)))
        return super().predict(X)


def _marked_data(n_train=300, n_test=100):
    """Row identity in feature 0: training rows 0.., test rows TEST_ID..; label from feature 1."""
    rng = np.random.default_rng(0)
    X_tr = np.column_stack([np.arange(n_train), rng.normal(size=(n_train, 2))])
    X_te = np.column_stack([TEST_ID + np.arange(n_test), rng.normal(size=(n_test, 2))])
    return Dataset("marked", "binary", X_tr, np.where(X_tr[:, 1] > 0, 1.0, -1.0),
                   X_te, np.where(X_te[:, 1] > 0, 1.0, -1.0))


def _use_data(monkeypatch, data):
    monkeypatch.setattr(prepare, "load_dataset", lambda *a, **k: data)


def _cfg(**extra):
    """A semi-supervised config on a registry binary set (its rows replaced by `_use_data`)."""
    data = {"name": "paper", "dataset": {"name": "digits86", "test": 0.3, "labeled": 20},
            "algorithm": {"name": "tsgs3vm", "params": {"batch_size": 32}},
            "trials": 2, "protocol": "paper", "evaluate": {"every": 10**6, "on": ["test_error"]}}
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key] = {**data[key], **value}
        else:
            data[key] = value
    return config_from_dict(data)


def _final(folder) -> pd.DataFrame:
    df = pd.read_csv(folder / "results.csv")
    return df[df["final"] == 1]


# ------------------------------------------------------------------------------------------ (a)

def test_each_fold_scores_exactly_the_unlabeled_rows_it_did_not_train_on(tmp_path, monkeypatch):
    data = _marked_data()
    _use_data(monkeypatch, data)
    spy = AlgorithmSpec("tsgs3vm", classifier=_Spy, regressor=None, description="spy",
                        tasks=("binary", "semi-supervised"), fixed={"gamma": 1.0})
    for module in (prepare, run):       # where the experiment layer looks the algorithm up
        monkeypatch.setattr(module, "algorithms", lambda: {"tsgs3vm": spy})
    _Spy.events = []
    folder = experiment.run_experiment(_cfg(), out_dir=tmp_path, quiet=True)    # cv: the default 5

    final = _final(folder)
    assert sorted(zip(final["trial"], final["fold"])) == [(t, i) for t in range(2) for i in range(5)]
    assert (final["status"] == "ok").all()
    meta = json.loads((folder / "run.json").read_text())
    assert meta["protocol"] == "paper" and meta["cv"] == 5 and meta["config"]["protocol"] == "paper"

    # one cell = a fit followed by its predictions (sequential run: trials, then folds, in order)
    cells = []
    for event in _Spy.events:
        if event[0] == "fit":
            cells.append({"fit": event[1], "y": event[2], "scored": []})
        else:
            cells[-1]["scored"].append(event[1])
    assert len(cells) == 10
    everything = np.arange(data.X_train.shape[0])
    labeled_per_trial = []
    for trial in range(2):
        folds = cells[5 * trial: 5 * trial + 5]
        labeled = [c["fit"][~np.isnan(c["y"])] for c in folds]
        for ids in labeled[1:]:
            np.testing.assert_array_equal(np.sort(ids), np.sort(labeled[0]))   # one draw per trial
        labeled = np.sort(labeled[0])
        assert labeled.size == 20 and set(data.y_train[labeled]) == {-1.0, 1.0}
        labeled_per_trial.append(labeled)
        unlabeled = np.setdiff1d(everything, labeled)
        own = []
        for i, cell in enumerate(folds):
            fold_rows = np.sort(cell["fit"][np.isnan(cell["y"])])
            own.append(fold_rows)
            assert abs(fold_rows.size - unlabeled.size / 5) <= 1
            assert cell["scored"], "the fold was never scored"
            for scored in cell["scored"]:
                assert not np.isin(scored, labeled).any(), "a labeled row was scored"
                assert not (scored >= TEST_ID).any(), "the test part was used"
                np.testing.assert_array_equal(np.sort(scored), np.setdiff1d(unlabeled, fold_rows))
            assert not (cell["fit"] >= TEST_ID).any(), "the test part was trained on"
            row = final[(final["trial"] == trial) & (final["fold"] == i)].iloc[0]
            y_scored = data.y_train[np.setdiff1d(unlabeled, fold_rows)]
            # a test error over those rows: a multiple of 1 / their number
            assert round(row["test_error"] * y_scored.size, 6) == round(row["test_error"] * y_scored.size)
        np.testing.assert_array_equal(np.sort(np.concatenate(own)), unlabeled)   # a partition
    assert not np.array_equal(*labeled_per_trial), "a new labeled draw per trial"
    # the per-trial fold means in run.json
    for s in meta["summary"]:
        values = final[final["trial"] == s["trial"]].sort_values("fold")["test_error"]
        assert s["folds"] == 5 and s["test_error"] == pytest.approx(values.mean())


def test_resume_keeps_finished_folds(tmp_path, monkeypatch):
    _use_data(monkeypatch, _marked_data())
    cfg = _cfg(trials=1, cv=3)
    folder = experiment.run_experiment(cfg, out_dir=tmp_path, quiet=True)
    before = pd.read_csv(folder / "results.csv")
    again = experiment.run_experiment(cfg, out_dir=tmp_path, quiet=True, resume=True)
    assert again == folder
    pd.testing.assert_frame_equal(pd.read_csv(folder / "results.csv"), before)   # nothing redone


# ------------------------------------------------------------------------------------------ (b)

def test_fold_test_error_equals_fit_and_predict_on_the_same_rows(tmp_path, monkeypatch):
    X, y = make_classification(n_samples=500, n_features=5, n_informative=3, random_state=1)
    y = np.where(y == 1, 1.0, -1.0)
    rng = np.random.default_rng(2)
    X_te = rng.normal(size=(50, 5))
    _use_data(monkeypatch, Dataset("cls", "binary", X, y, X_te, np.ones(50)))
    params = {"batch_size": 32, "C": 10.0, "gamma": 0.2}
    # no stop: each cell trains as the estimator's fit does
    cfg = _cfg(algorithm={"name": "tsgs3vm", "params": params}, cv=3, seed=4, dataset={"labeled": 30})
    final = _final(experiment.run_experiment(cfg, out_dir=tmp_path, quiet=True))
    assert len(final) == 2 * 3
    errors = []
    for trial in range(2):
        for i, (train, valid, labeled) in enumerate(paper_folds(y, 30, 3, seed=4 + trial)):
            y_fit = np.where(np.isin(train, labeled), y[train], np.nan)
            est = TSGS3VMClassifier(**params, random_state=4 + trial).fit(X[train], y_fit)
            expected = float(np.mean(est.predict(X[valid]) != y[valid]))
            row = final[(final["trial"] == trial) & (final["fold"] == i)].iloc[0]
            assert row["test_error"] == pytest.approx(expected, abs=1e-12)
            errors.append(expected)
    assert max(errors) < 0.4, "the check needs a model that learned something"


def test_a_pass_counts_the_data_file_as_geng_s_one_pass_over_the_entire_dataset(tmp_path, monkeypatch):
    """stop: {passes: 1} under the fold scheme trains each fold as long as one pass over the whole
    training part (the held-out run's iterations), not one pass over the fold's fifth of it."""
    X, y = make_classification(n_samples=600, n_features=5, n_informative=3, random_state=1)
    _use_data(monkeypatch, Dataset("cls", "binary", X, np.where(y == 1, 1.0, -1.0), X[:50], np.ones(50)))
    params = {"batch_size": 16, "block_size": 16}
    held_out = _final(experiment.run_experiment(_cfg(algorithm={"name": "tsgs3vm", "params": params}, trials=1,
                                                 protocol="held-out", stop={"passes": 1}),
                                            out_dir=tmp_path / "h", quiet=True))
    paper = _final(experiment.run_experiment(_cfg(algorithm={"name": "tsgs3vm", "params": params}, trials=1,
                                              stop={"passes": 1}), out_dir=tmp_path / "p", quiet=True))
    y_semi = np.full(600, np.nan)
    y_semi[:20] = np.tile([1.0, -1.0], 10)
    expected = TSGS3VMClassifier(**params).begin(X, y_semi).steps_per_pass
    assert held_out["iteration"].iloc[0] == expected             # one pass over the 600 rows
    assert len(paper) == 5 and (paper["iteration"] - expected).abs().max() <= 1


# ------------------------------------------------------------------------------------------ (c)

def _write(tmp_path, config: dict):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


BASE = {"dataset": {"name": "digits86", "test": 0.3}, "algorithm": {"name": "tsgs3vm"}}


@pytest.mark.parametrize("config, args, message", [
    ({**BASE, "protocol": "paper"}, [], "needs dataset.labeled"),
    ({**BASE, "dataset": {**BASE["dataset"], "labeled": 20}, "protocol": "papers"}, [], "held-out, paper"),
    # the option's choices: a usage error naming them
    ({**BASE, "dataset": {**BASE["dataset"], "labeled": 20}}, ["--protocol", "crossval"], "'held-out', 'paper'"),
    (BASE, ["--protocol", "paper"], "needs dataset.labeled"),
])
def test_bad_protocol_exits_2(tmp_path, capsys, config, args, message):
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(_write(tmp_path, config)), "--out", str(tmp_path / "out"), *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "protocol" in err and message in err
    assert not (tmp_path / "out").exists(), "refused before any run folder"


def test_protocol_option_overrides_the_config(tmp_path, capsys):
    config = {**BASE, "dataset": {**BASE["dataset"], "labeled": 20}, "cv": 2,
              "algorithm": {"name": "tsgs3vm", "params": {"batch_size": 32}}, "stop": {"passes": 1}}
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(_write(tmp_path, config)), "--out", str(tmp_path / "out"), "--protocol", "paper", "-q"])
    assert exit_.value.code == 0
    (folder,) = (tmp_path / "out").iterdir()
    assert json.loads((folder / "run.json").read_text())["config"]["protocol"] == "paper"
    assert sorted(_final(folder)["fold"]) == [0, 1]
    assert "trial 0 (mean of 2 folds)" in capsys.readouterr().out


def test_paper_without_labeled_is_a_config_error():
    with pytest.raises(ConfigError, match="semi-supervised fold scheme"):
        config_from_dict({**BASE, "protocol": "paper"})
    assert config_from_dict({**BASE, "protocol": None}).protocol == "held-out"


# ------------------------------------------------------------------------------------------ (d)

def test_report_never_pools_paper_and_held_out_runs(tmp_path, monkeypatch):
    _use_data(monkeypatch, _marked_data())
    tags = {"paper": "geng2019", "figure": "fig3", "panel": "x", "role": "ours"}
    held_out = _cfg(trials=1, cv=2, tags=tags, protocol="held-out")
    for cfg in (held_out, _cfg(trials=1, cv=2, tags=tags)):
        experiment.run_experiment(cfg, out_dir=tmp_path, quiet=True)
    rows = final_rows(collect_results(tmp_path))
    assert len(rows) == 1 + 2          # the held-out trial and the paper trial's two folds
    conflict = pooling_conflict(rows)
    assert conflict is not None and "run.protocol" in conflict
    assert pooling_conflict(rows[rows["fold"].isna()]) is None          # held-out alone: poolable
    experiment.run_experiment(held_out, out_dir=tmp_path / "again", quiet=True)
    both = final_rows(collect_results(tmp_path / "again"))
    assert pooling_conflict(pd.concat([rows[rows["fold"].isna()], both])) is None
