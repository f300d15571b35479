"""kernelbench.api.run: a config (a dict or a YAML file) and one's own arrays in, results.csv's rows out,
checked against scikit-learn's SVC fitted directly on the same arrays; arrays pass the checks a file's
rows pass."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from kernelbench.api import run
from kernelbench.errors import ConfigError, DataError

C, GAMMA = 2.0, 0.3
LIBSVM = {"algorithm": {"name": "libsvm", "params": {"C": C, "gamma": GAMMA}},
          "evaluate": {"on": ["train_error", "test_error"]}}


@pytest.fixture(autouse=True)
def _own_cache(isolated_data):
    pass


def _data(n=160, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.2 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X[:120], y[:120], X[120:], y[120:]


def _with_nan(X, row, col):
    X = X.copy()
    X[row, col] = np.nan
    return X


def _svc_error(X, y, X_test, y_test) -> float:
    from sklearn.svm import SVC

    return 1.0 - SVC(C=C, gamma=GAMMA).fit(X, y).score(X_test, y_test)


def _final(rows: pd.DataFrame) -> pd.Series:
    return rows.loc[rows["final"] == 1].iloc[0]


def test_arrays_with_a_test_part_give_sklearns_svc_test_error(tmp_path):
    X, y, X_test, y_test = _data()
    rows = run(LIBSVM, X, y, X_test, y_test, out=tmp_path)
    final = _final(rows)
    assert final["status"] == "ok"
    assert final["test_error"] == pytest.approx(_svc_error(X, y, X_test, y_test), abs=1e-12)
    assert (rows.attrs["run_dir"] / "results.csv").is_file()


def test_sparse_arrays_give_the_same_test_error(tmp_path):
    X, y, X_test, y_test = _data()
    X[np.abs(X) < 0.5] = 0.0
    X_test[np.abs(X_test) < 0.5] = 0.0
    rows = run(LIBSVM, sp.csr_matrix(X), y, sp.csr_matrix(X_test), y_test, out=tmp_path)
    assert _final(rows)["test_error"] == pytest.approx(_svc_error(X, y, X_test, y_test), abs=1e-12)


def test_arrays_without_a_test_part_are_split_as_dataset_test_says(tmp_path):
    X, y, _, _ = _data()
    rows = run({**LIBSVM, "dataset": {"test": 0.25}}, X, y, out=tmp_path)
    import json

    dataset = json.loads((rows.attrs["run_dir"] / "run.json").read_text())["dataset"]
    assert (dataset["n_train"], dataset["n_test"]) == (90, 30)
    assert dataset["arrays"]["train"]["rows"] == 120


def test_a_config_file_with_a_csv_pair_gives_sklearns_svc_test_error(tmp_path):
    X, y, X_test, y_test = _data()
    columns = [f"f{i}" for i in range(X.shape[1])]
    for name, features, labels in (("train", X, y), ("test", X_test, y_test)):
        frame = pd.DataFrame(features, columns=columns)
        frame.insert(1, "outcome", labels)
        frame.to_csv(tmp_path / f"{name}.csv", index=False, float_format="%.17g")
    (tmp_path / "c.yaml").write_text(
        "dataset: {path: train.csv, test_path: test.csv, label: outcome}\n"
        f"algorithm: {{name: libsvm, params: {{C: {C}, gamma: {GAMMA}}}}}\n")
    rows = run(tmp_path / "c.yaml", out=tmp_path / "out")
    assert _final(rows)["test_error"] == pytest.approx(_svc_error(X, y, X_test, y_test), abs=1e-12)


@pytest.mark.parametrize("arrays, error, match", [
    (lambda X, y, Xt, yt: (X, None, None, None), DataError, "X and y"),
    (lambda X, y, Xt, yt: (X, y, Xt, None), DataError, "X_test and y_test"),
    (lambda X, y, Xt, yt: (None, None, Xt, yt), DataError, "give the training arrays"),
    (lambda X, y, Xt, yt: (_with_nan(X, 7, 2), y, Xt, yt), DataError, "row 8, column 2 of the features is NaN"),
    (lambda X, y, Xt, yt: (X, y, _with_nan(Xt, 0, 4), yt), DataError, r"test arrays .*: row 1, column 4"),
    (lambda X, y, Xt, yt: (X, y[:-1], Xt, yt), DataError, "120 rows of features but 119 labels"),
    (lambda X, y, Xt, yt: (X, y, Xt[:, :3], yt), DataError, "5 feature columns but X_test has 3"),
    (lambda X, y, Xt, yt: (X, np.where(y > 0, 1.0, 3.0) * np.arange(120) / 7, Xt, yt), DataError,
     "regression task"),
])
def test_bad_arrays_are_refused_naming_the_problem(tmp_path, arrays, error, match):
    with pytest.raises(error, match=match):
        run(LIBSVM | {"algorithm": {"name": "bsgd"}}, *arrays(*_data()), out=tmp_path)
    assert not (tmp_path / "results.csv").exists()


def test_arrays_and_a_data_file_in_the_config_are_refused(tmp_path):
    X, y, _, _ = _data()
    with pytest.raises(ConfigError, match="dataset.name: the data are the arrays handed over"):
        run({**LIBSVM, "dataset": {"name": "digits86"}}, X, y, out=tmp_path)
    with pytest.raises(ConfigError, match="dataset.test: the test part is the test file .* or the test arrays"):
        run({**LIBSVM, "dataset": {"test": 0.2}}, *_data(), out=tmp_path)
