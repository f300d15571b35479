"""The Python entry point: one experiment from a config (a YAML file or a dict) and, optionally, your own
arrays, with the rows of its results.csv back as a DataFrame.

    from kernelbench.api import run
    rows = run({"algorithm": {"name": "libsvm", "params": {"C": 1.0, "gamma": 0.5}}},
               X, y, X_test, y_test, out="results")
    rows[rows.final == 1][["test_error", "train_seconds"]]

It is `kernelbench run`: the same validation (the config's, and the data's -- arrays are checked as a
file's rows are), the same run folder (results.csv, run.json; `rows.attrs["run_dir"]` says where), the same
errors (a kernelbench.errors.KernelbenchError naming the problem and the fix).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernelbench.data import UserArrays
from kernelbench.errors import DataError
from kernelbench.experiment import Execution
from kernelbench.experiment.plan import Plan, execute
from kernelbench.results.read import read_results


def run(config, X=None, y=None, X_test=None, y_test=None, *, out="results", seed: int | None = None,
        trials: int | None = None, jobs: int = 1, quiet: bool = True) -> pd.DataFrame:
    """Run one experiment and return its rows (results.csv: one row per evaluation point).

    config: a YAML file's path, or the config as a dict (a relative dataset.path is then taken from the
        current folder). With arrays its `dataset:` names no file (no name, path or reading options)
        and may be left out; its other keys (test, scale, task, subsample, classes, ...) apply.
    X, y: the training features (rows × features, dense or scipy sparse) and labels; without them the
        config's dataset is read.
    X_test, y_test: a test part; without them `dataset.test` (default 0.2) is split off X, y.
    out: the parent folder of the run folder; seed, trials: override the config's; jobs: cells in
        parallel processes (`kernelbench run --jobs`); quiet: no progress bar.
    """
    if (X is None) != (y is None):
        raise DataError("give the training features and labels together: X and y (or neither, to read the "
                        "config's data file)")
    if (X_test is None) != (y_test is None):
        raise DataError("give the test features and labels together: X_test and y_test")
    if X is None and X_test is not None:
        raise DataError("X_test and y_test are the test part of arrays: give the training arrays X and y too, "
                        "or set dataset.test_path for a test file")
    plan = Plan(configs=(config,), overrides={"seed": seed, "trials": trials}, out_dir=out,
                execution=Execution(jobs=jobs), arrays=None if X is None else UserArrays(X, y, X_test, y_test))
    run_dir = execute(plan, quiet=quiet, command=["kernelbench.api.run"])
    rows = read_results(run_dir)
    rows.attrs["run_dir"] = Path(run_dir)
    return rows
