"""Your own data through `kernelbench run`: a CSV pair with a named label column trains on the training
file and scores the test file, and every mistake in one's own data or its keys exits 2 with a message
naming the problem and the fix, before a run folder exists."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from conftest import REPO
from helpers import cli_in_process

HEADER = "height,weight,target,age\n"
ROWS = "".join(f"{0.1 * i:.1f},{(-1) ** i * 0.3 * i:.1f},{1 if i % 2 else -1},{i % 5}\n" for i in range(1, 21))
CONFIG = "dataset: {{path: train.csv{extra}}}\nalgorithm: {{name: libsvm, params: {{C: 1.0, gamma: 0.5}}}}\n"


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array))
    return buffer.getvalue()


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


# (case, files (name -> text or bytes), the dataset keys after `path: train.csv`, algorithm, needles)
BAD = [
    ("label-name-not-in-header", {"train.csv": HEADER + ROWS}, ", label: taget", None,
     ["dataset.label 'taget'", "not a column of the header", "'target'", "did you mean 'target'"]),
    ("label-index-out-of-range", {"train.csv": HEADER + ROWS}, ", label: 4", None,
     ["dataset.label 4", "out of range", "4 column(s)", "-4..3"]),
    ("label-name-without-header", {"train.csv": ROWS}, ", label: target, header: false", None,
     ["dataset.label", "column name", "header: false", "index"]),
    ("non-numeric-cell", {"train.csv": HEADER + ROWS + "0.5,heavy,1,3\n"}, ", label: target", None,
     ["train.csv", "line 22", "column 2 ('weight')", "'heavy' is not a number"]),
    ("non-numeric-label", {"train.csv": HEADER + ROWS + "0.5,1.0,yes,3\n"}, ", label: target", None,
     ["line 22", "label", "'yes' is not a number", "encode"]),
    ("nan-in-a-cell", {"train.csv": HEADER + ROWS + "0.5,,1,3\n"}, ", label: target", None,
     ["train.csv", "line 22 (column 2, 'weight')", "missing, nan or infinite", "remove that line"]),
    ("inf-in-npy", {"train.npy": _npy([[1.0, 0.5], [-1.0, np.inf], [1.0, 0.2]])}, None, None,
     ["train.npy", "row 2, column 0 of the features is infinite", "impute"]),
    ("empty-file", {"train.csv": ""}, "", None, ["train.csv", "no data rows"]),
    ("header-only", {"train.csv": HEADER}, ", label: target", None, ["train.csv", "no data rows"]),
    ("mismatched-feature-counts", {"train.csv": HEADER + ROWS, "test.csv": "height,target,age\n0.1,1,2\n0.2,-1,3\n"},
     ", label: target, test_path: test.csv", None,
     ["training file", "3 feature columns", "test file", "has 2", "has 'weight'", "same place"]),
    ("mismatched-feature-counts-without-headers", {"train.csv": ROWS, "test.csv": "0.1,0.2,1\n0.3,0.1,-1\n"},
     ", label: 2, test_path: test.csv", None, ["3 feature columns", "has 2", "feature column 2 has no counterpart"]),
    ("missing-file-near-name", {"trian.csv": HEADER + ROWS}, ", label: target", None,
     ["dataset.path", "train.csv", "file not found", "did you mean", "trian.csv"]),
    ("semicolons-in-varying-numbers", {"train.csv": "a;b;target\n1;2\n3;4;5;6\n"}, ", label: target", None,
     ["cannot tell how the fields are separated", "';'", "dataset.delimiter"]),
    ("class-names-in-training-numbers-in-test", {"train.csv": HEADER + ROWS.replace(",-1,", ",no,").replace(",1,", ",yes,"),
                                                 "test.csv": HEADER + ROWS}, ", label: target, test_path: test.csv",
     None, ["class names", "with numbers", "the same way"]),
    ("test-class-names-unseen-in-training", {"train.csv": HEADER + ROWS.replace(",-1,", ",no,").replace(",1,", ",yes,"),
                                             "test.csv": HEADER + "0.1,0.2,maybe,1\n"},
     ", label: target, test_path: test.csv", None, ["'maybe'", "never occur in the training file", "'no', 'yes'"]),
    ("test-labels-unseen-in-training", {"train.csv": HEADER + ROWS, "test.csv": HEADER + "0.1,0.2,7,1\n"},
     ", label: target, test_path: test.csv", None, ["test labels include 7", "never occur in the training"]),
    ("single-class", {"train.csv": HEADER + "".join(f"{i},{i},1,{i}\n" for i in range(10))}, ", label: target",
     None, ["single class", "at least two"]),
    ("regression-targets-for-a-binary-algorithm",
     {"train.csv": HEADER + "".join(f"{i},{i % 3},{0.37 * i:.2f},{i}\n" for i in range(30))}, ", label: target",
     "bsgd", ["regression task", "not all integers", "set dataset.task", "bsgd", "binary"]),
    ("unknown-suffix", {"train.xlsx": b"PK\x03\x04"}, None, None,
     ["dataset.path", "train.xlsx", "cannot tell the format", "convert", "dataset.format"]),
    ("missing-file", {}, None, None, ["dataset.path", "train.csv", "file not found"]),
    ("missing-test-file", {"train.csv": HEADER + ROWS}, ", label: target, test_path: gone.csv", None,
     ["dataset.test_path", "gone.csv", "file not found"]),
    ("test-file-and-a-split", {"train.csv": HEADER + ROWS, "test.csv": HEADER + ROWS},
     ", label: target, test_path: test.csv, test: 0.3", None, ["dataset.test", "test file", "drop dataset.test"]),
    ("label-for-svmlight", {"train.svm": "1 1:0.5\n-1 1:0.2\n"}, ", label: 1", None,
     ["dataset.label", "svmlight", "drop it"]),
    ("bare-carriage-return-in-a-line", {"train.csv": b"\r\x00"}, "", None,
     ["train.csv", "line 1", "not a delimited-text record", "one row per line"]),
    ("npz-without-the-named-arrays", {"train.npz": _npz(features=np.ones((4, 2)), y=np.array([1, -1, 1, -1]))},
     None, None, ["train.npz", "no array named 'x'", "'features'", "dataset.npz_features"]),
]


def _config(case, files, extra, algorithm) -> str:
    data = next((name for name in files if name.startswith("train.")), "train.csv")
    text = CONFIG.format(extra=extra or "").replace("train.csv", data, 1)
    return text.replace("name: libsvm", f"name: {algorithm}") if algorithm else text


def _main_in_process(args, *, cwd, data_dir, monkeypatch, capsys):
    monkeypatch.setenv("KERNELBENCH_DATA", str(data_dir))
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.chdir(cwd)
    return cli_in_process(args, capsys)


@pytest.mark.parametrize("case, files, extra, algorithm, needles", BAD, ids=[b[0] for b in BAD])
def test_a_mistake_in_ones_own_data_exits_2_naming_it(case, files, extra, algorithm, needles, tmp_path,
                                                     monkeypatch, capsys):
    for name, content in files.items():
        target = tmp_path / name
        target.write_bytes(content) if isinstance(content, bytes) else target.write_text(content)
    (tmp_path / "c.yaml").write_text(_config(case, files, extra, algorithm))
    out = tmp_path / "out"
    code, stdout, stderr = _main_in_process(["run", str(tmp_path / "c.yaml"), "--out", str(out)], cwd=tmp_path,
                                            data_dir=tmp_path / "cache", monkeypatch=monkeypatch, capsys=capsys)
    report = f"exit {code}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    assert code == 2, report
    assert "Traceback" not in stderr + stdout, report
    for needle in needles:
        assert needle.lower() in stderr.lower(), (needle, report)
    assert not out.exists() or not any(out.iterdir()), "a run folder was made before the data were refused"


def test_parquet_without_pyarrow_exits_2_naming_the_extra(tmp_path):
    """A real process in which pyarrow cannot be imported (a module of that name that fails)."""
    (tmp_path / "train.parquet").write_bytes(b"PAR1")
    (tmp_path / "c.yaml").write_text(CONFIG.format(extra="").replace("train.csv", "train.parquet"))
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pyarrow.py").write_text("raise ImportError('pyarrow is not installed')\n")
    env = {"PYTHONPATH": f"{shadow}:{REPO}", "KERNELBENCH_DATA": str(tmp_path / "cache"), "KERNELBENCH_OFFLINE": "1",
           "PATH": "/usr/bin:/bin", "COLUMNS": "250"}
    proc = subprocess.run([sys.executable, "-m", "kernelbench.cli", "run", str(tmp_path / "c.yaml"), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    # the package imported from the source checkout (PYTHONPATH): the hint installs into it
    assert "Parquet" in proc.stderr and f"pip install -e '{REPO}[parquet]'" in proc.stderr, proc.stderr


def test_the_shipped_csv_example_trains_on_its_training_file_and_scores_its_test_file(tmp_path, monkeypatch, capsys):
    """configs/own_data_csv.yaml: no split (all training rows train, every test row is scored), and
    its test error is scikit-learn's SVC fitted directly on the same CSV files read by pandas."""
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    out = tmp_path / "out"
    code, _, stderr = _main_in_process(["run", str(REPO / "configs" / "own_data_csv.yaml"), "--out", str(out)],
                                       cwd=tmp_path, data_dir=tmp_path / "cache", monkeypatch=monkeypatch,
                                       capsys=capsys)
    assert code == 0, stderr
    (run_dir,) = list(out.iterdir())
    dataset = json.loads((run_dir / "run.json").read_text())["dataset"]
    train = pd.read_csv(REPO / "datasets" / "examples" / "churn_train.csv")
    test = pd.read_csv(REPO / "datasets" / "examples" / "churn_test.csv")
    assert (dataset["n_train"], dataset["n_test"]) == (len(train), len(test))
    features = [c for c in train.columns if c != "churned"]
    scaler = StandardScaler().fit(train[features])
    svc = SVC(C=10.0, gamma="scale").fit(scaler.transform(train[features]), train["churned"])
    expected = 1 - svc.score(scaler.transform(test[features]), test["churned"])
    rows = pd.read_csv(run_dir / "results.csv")
    assert rows.loc[rows["final"] == 1, "test_error"].item() == pytest.approx(expected, abs=1e-12)


def test_class_names_as_labels_are_numbered_recorded_and_scored_as_scikit_learn_scores_them(tmp_path, monkeypatch,
                                                                                            capsys):
    """yes/no labels in a ;-separated pair of files with no dataset.delimiter: the delimiter is sniffed, the
    names become 0/1 in sorted order (recorded in run.json for both files), and the test error is
    scikit-learn's SVC fitted on the very same names."""
    from sklearn.svm import SVC

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    names = np.where(X[:, 0] * X[:, 1] > 0, "yes", "no")
    frame = pd.DataFrame({"x1": X[:, 0].round(4), "answer": names, "x2": X[:, 1].round(4)})
    frame[:80].to_csv(tmp_path / "train.csv", sep=";", index=False)
    frame[80:].to_csv(tmp_path / "test.csv", sep=";", index=False)
    (tmp_path / "c.yaml").write_text("dataset: {path: train.csv, test_path: test.csv, label: answer}\n"
                                     "algorithm: {name: libsvm, params: {C: 1.0, gamma: 0.5}}\n")
    code, stdout, stderr = _main_in_process(["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out")],
                                            cwd=tmp_path, data_dir=tmp_path / "cache", monkeypatch=monkeypatch,
                                            capsys=capsys)
    assert code == 0, stderr
    (run_dir,) = list((tmp_path / "out").iterdir())
    dataset = json.loads((run_dir / "run.json").read_text())["dataset"]
    files = json.dumps(dataset)
    assert files.count('"label_classes": {"no": 0, "yes": 1}') == 2, files
    assert "fields separated by ';' (sniffed)" in files and "'no' -> 0, 'yes' -> 1" in files
    train, test = frame[:80], frame[80:]
    svc = SVC(C=1.0, gamma=0.5).fit(train[["x1", "x2"]], train["answer"])
    expected = 1 - svc.score(test[["x1", "x2"]], test["answer"])
    rows = pd.read_csv(run_dir / "results.csv")
    assert rows.loc[rows["final"] == 1, "test_error"].item() == pytest.approx(expected, abs=1e-12)


def test_a_file_without_header_whose_first_column_holds_class_names_keeps_its_first_row(tmp_path, monkeypatch,
                                                                                       capsys):
    """"yes,0.3,..." opens the file: a name in the label column of every line is a class, not a header."""
    rows = "".join(f"{'yes' if i % 2 else 'no'},{0.1 * i:.1f},{(-1) ** i * 0.2:.1f}\n" for i in range(30))
    (tmp_path / "train.csv").write_text(rows)
    (tmp_path / "c.yaml").write_text("dataset: {path: train.csv, test: none}\n"
                                     "algorithm: {name: libsvm, params: {C: 1.0, gamma: 0.5}}\n")
    code, _, stderr = _main_in_process(["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out")],
                                       cwd=tmp_path, data_dir=tmp_path / "cache", monkeypatch=monkeypatch, capsys=capsys)
    assert code == 0, stderr
    (run_dir,) = list((tmp_path / "out").iterdir())
    dataset = json.loads((run_dir / "run.json").read_text())["dataset"]
    assert dataset["n_train"] == 30 and '"label_classes": {"no": 0, "yes": 1}' in json.dumps(dataset)
