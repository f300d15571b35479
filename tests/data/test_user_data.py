"""A user's own data: every format (delimited text, .npy, .npz, Parquet) reads back the table it was
written from, with the label column chosen by name or index, a separate test file, and the checks
every source shares (kernelbench/data/user.py)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from kernelbench.data import UserArrays, load_dataset
from kernelbench.data.user import FileOptions, checked_arrays, infer_format
from kernelbench.errors import DataError, MissingExtraError

from conftest import REPO

RNG = np.random.default_rng(3)
FEATURES = np.round(RNG.normal(size=(40, 3)), 4)
LABELS = np.where(FEATURES[:, 0] + 0.5 * FEATURES[:, 2] > 0, 1.0, -1.0)
NAMES = ["height", "weight", "target", "age"]      # the label is the third column


def _table() -> pd.DataFrame:
    frame = pd.DataFrame(FEATURES, columns=["height", "weight", "age"])
    frame.insert(2, "target", LABELS)
    return frame


@pytest.fixture(autouse=True)
def _own_cache(isolated_data):
    pass


def _load(path, **options):
    test_path = options.pop("test_path", None)
    return load_dataset(path=path, test_path=test_path, test="official" if test_path else "none", progress=False,
                        file_options=FileOptions(**options))


def _written(tmp_path, kind: str):
    """(file, reading options) of the same table in each format."""
    frame = _table()
    if kind == "csv":
        frame.to_csv(tmp_path / "t.csv", index=False)
        return tmp_path / "t.csv", {"label": "target"}
    if kind == "tsv":
        frame.to_csv(tmp_path / "t.tsv", index=False, sep="\t")
        return tmp_path / "t.tsv", {"label": 2}
    if kind == "semicolon":
        frame.to_csv(tmp_path / "t.txt", index=False, sep=";")
        return tmp_path / "t.txt", {"format": "csv", "delimiter": ";", "label": "target"}
    if kind == "no-header":
        frame.to_csv(tmp_path / "t.csv", index=False, header=False)
        return tmp_path / "t.csv", {"header": False, "label": -2}
    if kind == "npy":
        np.save(tmp_path / "t.npy", frame.to_numpy())
        return tmp_path / "t.npy", {"label": -2}
    if kind == "npz":
        np.savez(tmp_path / "t.npz", features=FEATURES, classes=LABELS)
        return tmp_path / "t.npz", {"npz_features": "features", "npz_labels": "classes"}
    pytest.importorskip("pyarrow")
    frame.to_parquet(tmp_path / "t.parquet")
    return tmp_path / "t.parquet", {"label": "target"}


@pytest.mark.parametrize("kind", ["csv", "tsv", "semicolon", "no-header", "npy", "npz", "parquet"])
def test_every_format_reads_back_the_table_it_was_written_from(tmp_path, kind):
    path, options = _written(tmp_path, kind)
    ds = _load(path, **options)
    np.testing.assert_array_equal(np.asarray(ds.X_train), FEATURES)
    np.testing.assert_array_equal(ds.y_train, LABELS)
    assert ds.task == "binary" and ds.X_test is None
    again = _load(path, **options)                  # the second load is the parsed cache's
    np.testing.assert_array_equal(np.asarray(again.X_train), FEATURES)


def test_a_test_file_is_the_test_part_and_the_training_file_is_not_split(tmp_path):
    frame = _table()
    frame.iloc[:30].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[30:].to_csv(tmp_path / "test.csv", index=False)
    ds = _load(tmp_path / "train.csv", test_path=tmp_path / "test.csv", label="target")
    np.testing.assert_array_equal(np.asarray(ds.X_train), FEATURES[:30])
    np.testing.assert_array_equal(np.asarray(ds.X_test), FEATURES[30:])
    np.testing.assert_array_equal(ds.y_test, LABELS[30:])
    assert [f["role"] for f in ds.provenance["files"]] == ["train", "test"]


def test_a_test_file_with_other_columns_is_refused(tmp_path):
    frame = _table()
    frame.iloc[:30].to_csv(tmp_path / "train.csv", index=False)
    frame.iloc[30:].rename(columns={"age": "years"}).to_csv(tmp_path / "test.csv", index=False)
    with pytest.raises(DataError, match="'years' there, 'age' here"):
        _load(tmp_path / "train.csv", test_path=tmp_path / "test.csv", label="target")
    frame.iloc[30:].drop(columns="age").to_csv(tmp_path / "test.csv", index=False)
    with pytest.raises(DataError, match="has 3 feature columns but test file .* has 2"):
        _load(tmp_path / "train.csv", test_path=tmp_path / "test.csv", label="target")


def test_svmlight_test_file_is_padded_to_the_training_width(tmp_path):
    """svmlight rows name their columns: a test file whose last features are all zero is narrower."""
    (tmp_path / "tr.svm").write_text("1 1:1 3:2\n-1 2:1\n1 3:1\n-1 1:2\n")
    (tmp_path / "te.svm").write_text("1 1:1\n-1 2:1\n")
    ds = _load(tmp_path / "tr.svm", test_path=tmp_path / "te.svm")
    assert ds.X_train.shape[1] == ds.X_test.shape[1] == 3


@pytest.mark.parametrize("name, expected", [
    ("a.csv", "csv"), ("a.csv.gz", "csv"), ("a.tsv", "tsv"), ("a.npy", "npy"), ("a.npz", "npz"),
    ("a.parquet", "parquet"), ("a.pq", "parquet"), ("a9a", "svmlight"), ("a9a.t", "svmlight"),
    ("mnist.scale.bz2", "svmlight"), ("a.svm", "svmlight"), ("a.xlsx", None), ("a.json", None)])
def test_the_format_follows_the_suffix(name, expected):
    assert infer_format(name) == expected



def test_every_format_a_file_may_have_has_its_parser():
    """One table reads every file: each format a registry entry may name for a file (builtin data have
    none) comes with the options its entry fixes, and each format a user's file may have has a parser."""
    from kernelbench._vocab import FILE_FORMATS
    from kernelbench.data.formats import PARSERS
    from kernelbench.data.registry import FORMATS

    assert {fmt for fmt, parser in PARSERS.items() if parser.registry is not None} == set(FORMATS) - {"builtin"}
    assert set(FILE_FORMATS) <= set(PARSERS)


def test_a_registry_file_reads_as_the_same_file_given_as_a_users_file():
    """A registry entry is a user's file with a URL and a pinned hash: the shipped heart_scale reads the
    same either way (one-based LIBSVM indices, all 13 features occurring)."""
    from kernelbench.data.registry import get_spec
    from kernelbench.data.shipped import shipped_copy

    registered = load_dataset("heart_scale", test="none", progress=False)
    own = load_dataset(path=shipped_copy(get_spec("heart_scale").files["train"]), test="none", progress=False)
    assert own.X_train.dtype == registered.X_train.dtype and own.y_train.dtype == registered.y_train.dtype
    assert np.array_equal(own.X_train, registered.X_train) and np.array_equal(own.y_train, registered.y_train)

# ------------------------------------------------------------------ the checks every source shares

@pytest.mark.parametrize("X, y, match", [
    (np.ones(4), np.ones(4), "expected a 2-D array"),
    (np.ones((4, 2)), np.ones(3), "4 rows of features but 3 labels"),
    (np.ones((0, 2)), np.ones(0), "no rows"),
    (np.ones((4, 0)), np.ones(4), "no feature columns"),
    (np.array([[1.0, 2.0], [3.0, np.nan]]), np.ones(2), "row 2, column 1 of the features is NaN"),
    (np.array([[1.0, np.inf], [3.0, 4.0]]), np.ones(2), "row 1, column 1 of the features is infinite"),
    (sp.csr_matrix(np.array([[0.0, 1.0], [np.nan, 0.0]])), np.ones(2), "row 2, column 0"),
    (np.array([[1, "x"], [2, 3]], dtype=object), np.ones(2), "row 1, column 1: 'x' is not a number"),
    (np.ones((2, 2)), np.array([1.0, np.nan]), "the label of row 2 is nan"),
    (np.ones((2, 2)), np.array(["cat", "dog"]), "'cat' is not a number"),
])
def test_arrays_are_checked_as_rows_of_a_file(X, y, match):
    with pytest.raises(DataError, match=match):
        checked_arrays(X, y, "the arrays")


def test_arrays_load_as_a_dataset_with_their_test_part():
    arrays = UserArrays(FEATURES[:30], LABELS[:30], FEATURES[30:], LABELS[30:])
    ds = load_dataset(arrays=arrays, test="official", progress=False)
    np.testing.assert_array_equal(ds.X_test, FEATURES[30:])
    assert ds.provenance["arrays"]["test"]["rows"] == 10
    with pytest.raises(DataError, match="has 3 feature columns but X_test has 2"):
        load_dataset(arrays=UserArrays(FEATURES, LABELS, FEATURES[:, :2], LABELS), test="official")


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    (tmp_path / "t.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(__import__("sys").modules, "pyarrow", None)     # import pyarrow fails
    monkeypatch.chdir(tmp_path)             # outside the source checkout the tests import kernelbench from
    with pytest.raises(MissingExtraError) as err:
        _load(tmp_path / "t.parquet")
    assert f"pip install -e '{REPO}[parquet]'" in str(err.value)


def test_svmlight_train_and_test_files_share_one_index_base(tmp_path):
    """An index 0 in either file makes both zero-based, as scikit-learn reads a set of files."""
    from sklearn.datasets import load_svmlight_files

    (tmp_path / "tr.svm").write_text("1 1:1 2:2\n-1 2:1\n1 1:3\n-1 2:2\n")
    (tmp_path / "te.svm").write_text("1 0:5 1:1\n-1 2:1\n")
    X_tr, y_tr, X_te, y_te = load_svmlight_files([str(tmp_path / "tr.svm"), str(tmp_path / "te.svm")],
                                                 zero_based="auto")
    ds = _load(tmp_path / "tr.svm", test_path=tmp_path / "te.svm")
    np.testing.assert_array_equal(np.asarray(ds.X_train.todense() if sp.issparse(ds.X_train) else ds.X_train),
                                  X_tr.toarray())
    np.testing.assert_array_equal(np.asarray(ds.X_test.todense() if sp.issparse(ds.X_test) else ds.X_test),
                                  X_te.toarray())


def test_an_npz_with_class_names_as_labels_reads_them_as_scikit_learn_encodes_them(tmp_path):
    from sklearn.preprocessing import LabelEncoder

    names = np.array(["setosa", "virginica", "versicolor"])[np.arange(40) % 3]
    np.savez(tmp_path / "tr.npz", X=FEATURES, y=names)
    np.savez(tmp_path / "te.npz", X=FEATURES[:5], y=names[1:6])
    ds = _load(tmp_path / "tr.npz", test_path=tmp_path / "te.npz")
    encoder = LabelEncoder().fit(names)
    assert np.array_equal(ds.y_train, encoder.transform(names)) and np.array_equal(ds.y_test, encoder.transform(names[1:6]))
    assert ds.provenance["files"][0]["label_classes"] == {name: i for i, name in enumerate(encoder.classes_)}


def test_a_parquet_label_column_of_class_names_reads_as_scikit_learn_encodes_it(tmp_path):
    from sklearn.preprocessing import LabelEncoder

    names = np.array(["no", "yes"])[(FEATURES[:, 0] > 0).astype(int)]
    pd.DataFrame({"a": FEATURES[:, 0], "answer": names, "b": FEATURES[:, 1]}).to_parquet(tmp_path / "t.parquet")
    ds = _load(tmp_path / "t.parquet", label="answer")
    assert np.array_equal(ds.y_train, LabelEncoder().fit_transform(names))
    assert ds.provenance["files"][0]["label_classes"] == {"no": 0, "yes": 1}
    pd.DataFrame({"a": FEATURES[:, 0], "answer": names, "b": names}).to_parquet(tmp_path / "f.parquet")
    with pytest.raises(DataError, match="column 2 \\('b'\\).*not a number"):        # a feature of names is not a label
        _load(tmp_path / "f.parquet", label="answer")
