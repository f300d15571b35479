"""evaluate.on: test_mae / train_mae, the mean absolute error Dai et al. report for QuantumMachine and
MolecularSpace (Fig. 1 (7)-(8)): checked against scikit-learn's mean_absolute_error on abalone
(registered and mirrored), written as results.csv columns, and refused for classification."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from sklearn.metrics import mean_absolute_error, mean_squared_error

from kernelbench.config import config_from_dict
from kernelbench.data import load_dataset
from kernelbench.errors import ConfigError
from kernelbench.results import COLUMNS, collect_results, read_results
from kernelbench.experiment import run_experiment
from kernelbench.experiment.metrics import evaluate as _evaluate
from kernelbench.estimators import DSGRegressor

from conftest import MIRROR  # noqa: E402

needs_abalone = pytest.mark.skipif(not (MIRROR / "abalone_scale.xz").is_file(),
                                   reason=f"abalone_scale.xz is not in the mirror {MIRROR}")
ABALONE = {"dataset": {"name": "abalone"},
           "algorithm": {"name": "dsg", "params": {"loss": "squared", "gamma": 1.0, "C": 10.0, "batch_size": 16,
                                                   "block_size": 16, "step": 100.0, "t0": 100.0}},
           "stop": {"passes": 1}, "evaluate": {"on": ["test_mae", "train_mae", "test_mse"]}}


@needs_abalone
def test_mae_is_sklearns_mean_absolute_error(isolated_data):
    ds = load_dataset("abalone", progress=False)
    est = DSGRegressor(loss="squared", gamma=1.0, C=10.0, batch_size=16, block_size=16, step=100.0, t0=100.0,
                       passes=1, random_state=0).fit(ds.X_train, ds.y_train)
    row = _evaluate(est, {}, 0.0, ("train_mae", "test_mae", "test_mse"), ds.X_train, ds.y_train, ds.X_test,
                    ds.y_test, "regression")
    assert row["test_mae"] == pytest.approx(mean_absolute_error(ds.y_test, est.predict(ds.X_test)), rel=1e-12)
    assert row["train_mae"] == pytest.approx(mean_absolute_error(ds.y_train, est.predict(ds.X_train)), rel=1e-12)
    assert row["test_mse"] == pytest.approx(mean_squared_error(ds.y_test, est.predict(ds.X_test)), rel=1e-12)
    assert "train_mse" not in row and "test_error" not in row          # only what was asked for
    only = _evaluate(est, {}, 0.0, ("test_mae",), ds.X_train, ds.y_train, ds.X_test, ds.y_test, "regression")
    assert "test_mse" not in only and only["test_mae"] == row["test_mae"]


@needs_abalone
def test_a_regression_run_writes_the_mae_columns(isolated_data, tmp_path):
    folder = run_experiment(config_from_dict(ABALONE), out_dir=tmp_path / "out", quiet=True)
    header = next(csv.reader((folder / "results.csv").open()))
    assert header == COLUMNS and {"train_mae", "test_mae"} <= set(header)
    rows = read_results(folder)
    ok = rows[rows["status"] == "ok"]
    assert len(ok) > 1 and ok["test_mae"].notna().all() and ok["train_mae"].notna().all()
    # mean |e| <= sqrt(mean e²) (Jensen), and the targets (rings 1..29) are never all hit exactly
    assert (ok["test_mae"] > 0).all() and (ok["test_mae"] <= np.sqrt(ok["test_mse"]) + 1e-12).all()
    assert ok["test_error"].isna().all()


def test_mae_on_a_classification_set_is_refused():
    with pytest.raises(ConfigError, match="evaluate.on: test_mae .*regression.*binary") as info:
        config_from_dict({"dataset": {"name": "digits86"}, "algorithm": "dsg", "evaluate": {"on": ["test_mae"]}})
    assert info.value.field == "evaluate.on"


def test_results_written_before_the_mae_columns_still_load(tmp_path):
    run = tmp_path / "old-run"
    run.mkdir()
    old = [c for c in COLUMNS if c not in ("train_mae", "test_mae")]
    row = {c: "" for c in old}
    row.update(run_id="r", experiment="old", dataset="abalone", algorithm="dsg", params="{}", trial="0",
               seed="0", iteration="5", test_mse="4.5", status="ok", final="1")
    with (run / "results.csv").open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=old)
        writer.writeheader()
        writer.writerow(row)
    (run / "run.json").write_text(json.dumps({"dataset": {"n_train": 10}, "config": {"name": "old"}}))
    frame = read_results(run)
    assert list(frame.columns[:len(COLUMNS)]) == COLUMNS
    assert frame["test_mae"].isna().all() and frame["test_mse"].iloc[0] == 4.5
    collected = collect_results(tmp_path)
    assert len(collected) == 1 and collected["test_mae"].isna().all()
