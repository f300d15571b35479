"""`kernelbench tune` (kernelbench/experiment/tuning.py) and search spaces (kernelbench/spaces.py): spaces parsed
and checked against the declarations, successive halving stopping bad settings early, validation
that never sees a test row, resume after an interrupt, and the tuned config re-running to the
refit's result. Small data (digits 8 vs 6, bundled with scikit-learn): seconds."""
from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from kernelbench.config import StopConfig, TuneConfig, config_from_dict, load_config
from kernelbench.errors import ConfigError
from kernelbench.estimators import algorithms
from kernelbench.experiment.selection import data_scales
from kernelbench.experiment.tuning import INCUMBENT
from kernelbench.spaces import Choices, LogUniform, default_space, grid_from_space, parse_space

BASE = {"name": "tune_test", "dataset": {"name": "digits86", "scale": "minmax"},
        "algorithm": {"name": "dsg", "params": {"batch_size": 16, "block_size": 32}},
        "stop": {"passes": 9},
        # a held-out fifth: quicker than the default folds on a set this small (tests of the
        # default say validation: null)
        "tune": {"validation": "holdout"}}


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")


def config(**changes):
    data = json.loads(json.dumps(BASE))
    data["tune"] = {**data["tune"], **changes.pop("tune", {})}
    data.update(changes)
    return config_from_dict(data)


def tune_run(cfg, out, **kwargs) -> Path:
    from kernelbench.experiment import tune
    return tune(cfg, out_dir=out, quiet=True, **kwargs)


def final(folder: Path) -> pd.DataFrame:
    from kernelbench.results import read_results
    df = read_results(folder)
    return df[df["final"] == 1]


# ---- search spaces -----------------------------------------------------------------------------------

def test_a_config_space_is_parsed_against_the_declarations():
    dsg = algorithms()["dsg"].parameters
    space = parse_space({"C": {"log-uniform": [0.01, 100]}, "gamma": {"log-uniform": [0.1, 10], "times": "median"},
                         "batch_size": {"uniform": [8, 64]}, "loss": {"choice": ["hinge", "logistic"]}}, dsg)
    assert space["C"] == LogUniform(0.01, 100.0)
    assert space["gamma"] == LogUniform(0.1, 10.0, times="median")
    assert space["batch_size"].integer and not space["C"].integer     # batch_size is declared an integer
    assert space["loss"] == Choices(("hinge", "logistic"))


@pytest.mark.parametrize("raw, field, words", [
    ({"Cc": {"log-uniform": [1, 2]}}, "search.Cc", "did you mean 'C'"),
    ({"C": {"log-uniform": [0, 2]}}, "search.C.log-uniform", "low > 0"),
    ({"C": {"log-uniform": [5, 2]}}, "search.C.log-uniform", "low < high"),
    ({"C": {"uniform": [-1, 2]}}, "search.C.uniform", "must be a number > 0"),
    ({"C": [1, 2]}, "search.C", "expected one of"),
    ({"C": {"normal": [1, 2]}}, "search.C", "unknown distribution"),
    ({"loss": {"choice": ["hinge", "hnge"]}}, "search.loss.choice[1]", "must be one of"),
    ({"loss": {"log-uniform": [1, 2]}}, "search.loss", "use {choice"),
    ({"C": {"log-uniform": [1, 2], "times": "mean"}}, "search.C.times", "median"),
    ({"tune": {"budget": "ten"}}, "tune.budget", "10m"),
    ({"tune": {"validation": "holdot"}}, "tune.validation", "did you mean 'holdout'"),
    ({"tune": {"eta": 1}}, "tune.eta", ">= 2"),
])
def test_a_bad_space_or_tune_section_is_a_clear_config_error(raw, field, words):
    extra = raw if "tune" in raw else {"search": raw}
    with pytest.raises(ConfigError) as e:
        config(**extra)
    assert str(e.value).startswith(field) and words in str(e.value)


def test_every_algorithm_declares_a_space_and_median_scales_gamma():
    from sklearn.metrics import pairwise_distances

    X = np.random.default_rng(0).normal(size=(300, 5)) * 7.0
    for name, spec in algorithms().items():
        space = default_space(spec.parameters)
        assert {"C", "gamma"} <= set(space), name
    space = {"gamma": LogUniform(0.5, 2.0, times="median")}
    scales = data_scales(space, X, {"kernel": "rbf"}, seed=0)
    D = pairwise_distances(X)                                  # the median trick by hand
    sigma = np.median(D[np.triu_indices_from(D, k=1)])
    assert scales["median"] == pytest.approx(1 / (2 * sigma**2))
    assert grid_from_space(space, scales, points=3)["gamma"] == pytest.approx(
        [0.5 / (2 * sigma**2), 1 / (2 * sigma**2), 2 / (2 * sigma**2)])


def test_rungs_scale_the_configs_stop():
    from kernelbench.experiment.stopping import rung_budgets
    rungs = rung_budgets(StopConfig(passes=9.0), TuneConfig(rungs=3, eta=3))
    assert [b for _, b in rungs] == pytest.approx([1.0, 3.0, 9.0])
    rungs = rung_budgets(StopConfig(passes=None, iterations=100), TuneConfig(rungs=2, eta=4))
    assert [s.iterations for s, _ in rungs] == [25, 100]


def test_a_split_trains_as_many_steps_as_the_final_run():
    from kernelbench.experiment.stopping import same_training
    assert same_training(StopConfig(passes=1.0), 1000, 200).passes == pytest.approx(5.0)   # a fifth: 5 passes
    assert same_training(StopConfig(passes=None, iterations=50), 1000, 200).iterations == 50


# ---- validation on the training part only --------------------------------------------------------------

def test_validation_splits_hold_out_training_rows_only():
    from kernelbench.experiment import prepare_experiment
    from kernelbench.experiment.tuning import validation_splits

    for tune in ({"validation": "holdout"}, {"validation": "cv"}, {"validation": None}):
        cfg = config(tune=tune, cv=4)
        prepared = prepare_experiment(cfg, progress=False)
        n = prepared.data.X_train.shape[0]
        splits = validation_splits(prepared, cfg)
        # by default a part this small (a fifth of it: far below MIN_HOLDOUT_ROWS) is validated by folds
        assert len(splits) == (1 if tune.get("validation") == "holdout" else 4)
        for train, valid, labeled in splits:
            assert labeled is None and not np.intersect1d(train, valid).size
            assert train.max() < n and valid.max() < n          # indices into the training part
        if len(splits) > 1:
            assert np.array_equal(np.sort(np.concatenate([v for _, v, _ in splits])), np.arange(n))
    cfg = config(tune={"shuffle": False, "holdout": 0.25, "validation": "holdout"})   # time-ordered: the last quarter
    prepared = prepare_experiment(cfg, progress=False)
    n = prepared.data.X_train.shape[0]
    (train, valid, _), = validation_splits(prepared, cfg)
    assert np.array_equal(valid, np.arange(n - round(n / 4), n)) and np.array_equal(train, np.arange(n - round(n / 4)))


def test_semi_supervised_validation_scores_labeled_rows_and_keeps_unlabeled_ones_in_training():
    from kernelbench.experiment import prepare_experiment
    from kernelbench.semisupervised import draw_labeled
    from kernelbench.experiment.tuning import validation_splits

    cfg = config(dataset={"name": "digits86", "scale": "minmax", "labeled": 40},
                 algorithm={"name": "tsgs3vm"}, stop={"passes": 1}, tune={"validation": None})
    prepared = prepare_experiment(cfg, progress=False)
    y = prepared.data.y_train
    labeled = draw_labeled(y, 40, cfg.seed)
    unlabeled = np.setdiff1d(np.arange(len(y)), labeled)
    splits = validation_splits(prepared, cfg)
    assert len(splits) == 5                                     # default: 5 folds of the labeled rows
    held = np.concatenate([valid for _, valid, _ in splits])
    assert np.array_equal(np.sort(held), labeled)               # every labeled row held out once, no other
    for train, valid, lab in splits:
        assert np.isin(unlabeled, train).all()                  # unlabeled rows always train
        assert np.array_equal(np.sort(np.concatenate([lab, valid])), labeled)
    paper = validation_splits(prepared, replace(cfg, tune=TuneConfig(validation="paper")))
    assert all(np.isin(valid, unlabeled).all() for _, valid, _ in paper)   # the papers' protocol


def test_tune_never_validates_on_the_test_part(tmp_path, monkeypatch):
    """The test part's labels are flipped: validation on training rows stays good, the refit's
    test error is bad. Had any validation row come from the test part, validation would be bad."""
    import kernelbench.experiment as experiment
    from kernelbench.experiment import prepare

    real = prepare.load_dataset

    def flipped(*args, **kwargs):
        data = real(*args, **kwargs)
        classes = np.unique(data.y_train)
        return replace(data, y_test=np.where(data.y_test == classes[0], classes[1], classes[0]))

    monkeypatch.setattr(prepare, "load_dataset", flipped)
    cfg = config(tune={"candidates": 3, "rungs": 1})
    folder = tune_run(cfg, tmp_path)
    meta = json.loads((folder / "run.json").read_text())
    assert meta["best"]["validation_error"] < 0.1
    assert meta["refit"][0]["test_error"] > 0.9
    # the choice comes with the binomial standard error over the distinct validation rows
    from kernelbench.experiment.tuning import validation_splits
    splits = validation_splits(experiment.prepare_experiment(cfg, progress=False), cfg)
    n = len(np.unique(np.concatenate([valid for _, valid, _ in splits])))
    p = meta["best"]["validation_error"]
    assert meta["best"]["validation_standard_error"] == pytest.approx(math.sqrt(p * (1 - p) / n))


# ---- successive halving -------------------------------------------------------------------------------

def test_successive_halving_stops_bad_settings_early(tmp_path):
    folder = tune_run(config(tune={"candidates": 9, "refine": 0, "validation": "holdout"},
                             search={"C": {"log-uniform": [1e-3, 1e3]}, "gamma": {"log-uniform": [1e-3, 30]}}),
                      tmp_path)
    rows = final(folder)
    cv = rows[rows["budget"].notna() & (rows["trial"] >= 0)]     # the searched settings (not the recheck)
    per_budget = cv.groupby("budget")["trial"].nunique()
    assert per_budget.to_dict() == {1.0: 9, 3.0: 3, 9.0: 1}     # 9 settings, the best third go on
    for low, high in ((1.0, 3.0), (3.0, 9.0)):                  # promoted = the best of the rung below
        below = cv[cv["budget"] == low].set_index("trial")["test_error"]
        promoted = set(cv[cv["budget"] == high]["trial"])
        assert below[list(promoted)].max() <= below.drop(list(promoted)).min()
    seen = cv.groupby("trial")["iteration"].max()
    assert (seen[list(set(cv["trial"]) - promoted)] < seen[list(promoted)].min()).all()   # stopped early
    meta = json.loads((folder / "run.json").read_text())
    assert meta["best"]["trial"] in promoted | {INCUMBENT}
    assert (folder / "search.png").stat().st_size > 0


def test_without_stop_each_rung_trains_its_share_of_the_fit(tmp_path):
    # No `stop`: a rung trains the share rung_budgets gives it of the algorithm's own fit (here
    # `passes` None), so a setting's iterations grow with the rung's budget, eta-fold per rung.
    cfg = replace(config(algorithm={"name": "r-pegasos", "params": {"n_components": 16, "batch_size": 16}},
                         search={"C": {"log-uniform": [0.1, 10]}},
                         tune={"candidates": 3, "rungs": 2, "eta": 3, "refine": 0}), stop=StopConfig())
    folder = tune_run(cfg, tmp_path)
    rows = final(folder)
    searched = rows[rows["budget"].notna() & (rows["trial"] >= 0)]
    assert sorted(searched["budget"].unique()) == pytest.approx([1 / 3, 1.0])
    full = searched[searched["budget"] == 1.0]["iteration"].max()
    assert full > 3
    for budget, iterations in searched.groupby("budget")["iteration"]:
        assert iterations.min() == iterations.max() == math.ceil(budget * full - 1e-9)


def test_a_diverging_setting_counts_as_the_worst(tmp_path):
    # A huge step makes DSG diverge (status diverged): it must be pruned, never chosen. The
    # config's own setting is the first one tried.
    cfg = config(algorithm={"name": "dsg", "params": {"batch_size": 16, "block_size": 32, "step": 1e12,
                                                      "t0": 10.0}},
                 tune={"candidates": 3, "rungs": 2, "refine": 0},
                 search={"step": {"choice": [1e12, 1.0, 3.0]}})
    folder = tune_run(cfg, tmp_path)
    meta = json.loads((folder / "run.json").read_text())
    assert meta["best"]["params"]["step"] != 1e12
    rows = final(folder)
    assert (rows[rows["params"].str.contains('"step": 1000000000000.0')]["status"] != "ok").any()


# ---- resume and the tuned config ----------------------------------------------------------------------

def test_an_interrupted_tune_resumes_without_retraining_finished_cells(tmp_path, monkeypatch):
    from kernelbench.experiment import Interrupted, cells

    real, calls = cells.train_cell, {"n": 0}

    def counting(*args, **kwargs):
        calls["n"] += 1
        if calls.get("stop_at") == calls["n"]:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(cells, "train_cell", counting)
    cfg = config(tune={"candidates": 3, "rungs": 2, "refine": 1, "validation": "holdout"})
    fresh = tune_run(cfg, tmp_path / "fresh")
    total = calls["n"]                             # 3 + 1 + 1 refined + 2 rechecked (own, best) + 1 refit
    calls.update(n=0, stop_at=5)
    with pytest.raises(Interrupted):
        tune_run(cfg, tmp_path / "killed")
    calls.update(n=0, stop_at=None)
    resumed = tune_run(cfg, tmp_path / "killed", resume=True)
    assert total == 8 and calls["n"] == total - 4               # the 4 finished cells are not trained again
    a, b = (json.loads((f / "run.json").read_text()) for f in (fresh, resumed))
    assert a["settings"] == b["settings"] and a["best"] == b["best"]
    assert a["refit"][0]["test_error"] == b["refit"][0]["test_error"]


def test_the_tuned_config_reruns_to_the_refits_result(tmp_path):
    folder = tune_run(config(tune={"candidates": 3, "rungs": 2}), tmp_path / "tune")
    meta = json.loads((folder / "run.json").read_text())
    tuned = Path(meta["tuned_config"])
    cfg = load_config(tuned)                                     # a valid, runnable config
    assert {k: cfg.algorithm.params[k] for k in meta["best"]["params"]} == meta["best"]["params"]
    proc = subprocess.run([sys.executable, "-m", "kernelbench.cli", "run", str(tuned), "--out",
                           str(tmp_path / "rerun"), "-q"], capture_output=True, text=True, env=os.environ)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (rerun,) = (tmp_path / "rerun").iterdir()
    assert final(rerun)["test_error"].iloc[0] == meta["refit"][0]["test_error"]


def test_cli_tune_prints_the_best_and_refuses_a_bad_budget(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(BASE))
    run = [sys.executable, "-m", "kernelbench.cli", "tune", str(path), "--out", str(tmp_path / "out"), "-q"]
    proc = subprocess.run(run + ["--budget", "soon"], capture_output=True, text=True, env=os.environ)
    assert proc.returncode == 2 and "tune.budget" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(run + ["--candidates", "3", "--set", "tune.rungs=1"], capture_output=True,
                          text=True, env=os.environ)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert re.search(r"^best: \w+=", proc.stdout, re.M) and "tuned config:" in proc.stdout
    assert "kept the config's own setting: " in proc.stdout or "chose the search's best: " in proc.stdout


def test_grid_without_a_grid_searches_the_declared_space(tmp_path):
    from kernelbench.experiment import grid_search

    cfg = config(algorithm={"name": "libsvm"}, cv=2)
    folder = grid_search(cfg, out_dir=tmp_path, quiet=True)
    meta = json.loads((folder / "run.json").read_text())
    assert len(meta["cells"]) == 25                             # C × gamma, 5 values each
    assert set(meta["best"]["params"]) == {"C", "gamma"}


def test_parallel_cells_choose_what_the_sequential_tune_chooses(tmp_path):
    from kernelbench.experiment import Execution

    cfg = config(tune={"candidates": 3, "rungs": 2, "refine": 1})
    one = tune_run(cfg, tmp_path / "one")
    two = tune_run(cfg, tmp_path / "two", execution=Execution(jobs=2))
    a, b = (json.loads((f / "run.json").read_text()) for f in (one, two))
    assert a["settings"] == b["settings"] and a["best"] == b["best"]


# ---- the config's own setting: kept unless beaten by more than one standard error ----------------------

def test_the_configs_own_setting_is_kept_unless_clearly_beaten(tmp_path):
    """A good own setting is kept when the search finds nothing better by more than one standard
    error (a narrow space around it, on noisy data: a SUSY replica, Bayes error 0.2); a bad own
    setting (a tiny C and a huge γ) loses to the search's best; the summary says which happened
    and why."""
    noisy = {"name": "synthetic", "shape": "susy", "n": 600, "n_test": 200, "noise": 0.2, "scale": "standard"}
    good = tune_run(config(dataset=noisy, tune={"candidates": 3, "rungs": 1, "refine": 0, "validation": "cv"},
                           search={"C": {"log-uniform": [0.7, 1.4]}}), tmp_path / "good")
    best = json.loads((good / "run.json").read_text())["best"]
    assert best["kept_incumbent"] is True and best["trial"] == INCUMBENT
    assert "does not beat the config's own setting" in best["decision"]
    bad = tune_run(config(dataset=noisy, algorithm={"name": "dsg", "params": {"batch_size": 16, "block_size": 32,
                                                                             "C": 1e-4, "gamma": 1e3}},
                          tune={"candidates": 4, "rungs": 1, "refine": 0, "validation": "cv"}), tmp_path / "bad")
    best = json.loads((bad / "run.json").read_text())["best"]
    assert best["kept_incumbent"] is False and best["trial"] != INCUMBENT
    assert best["validation_error"] < best["incumbent_validation"] - best["incumbent_standard_error"]
    assert "more than one standard error" in best["decision"]
