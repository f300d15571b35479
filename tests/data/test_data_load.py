"""Loading: mirror sets against SOURCES.md, the memory-mapped cache, splits, user files, bad files, prepare."""
from __future__ import annotations

import bz2
import gzip
import lzma
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from kernelbench.data import Dataset, formats, load_dataset, prepare
from kernelbench.errors import DataError

from conftest import MIRROR  # noqa: E402
needs_mirror = pytest.mark.skipif(not (MIRROR / "a9a.xz").is_file(),
                                  reason=f"staged benchmark mirror {MIRROR} is absent")


pytestmark = pytest.mark.usefixtures("isolated_data")


def _counts(y) -> dict:
    u, c = np.unique(y, return_counts=True)
    return dict(zip(u.tolist(), c.tolist()))


# ------------------------------------------------------------------ mirror sets vs SOURCES.md

@needs_mirror
def test_a9a_official_split_matches_sources_md():
    ds = load_dataset("a9a", progress=False)
    assert ds.task == "binary" and ds.name == "a9a"
    assert ds.X_train.shape == (32561, 123) and ds.X_test.shape == (16281, 123)
    assert ds.X_train.dtype == np.float64 and ds.y_train.dtype == np.float64
    assert _counts(ds.y_train) == {-1.0: 24720, 1.0: 7841}
    assert _counts(ds.y_test) == {-1.0: 12435, 1.0: 3846}
    assert "official test file" in ds.description


@needs_mirror
def test_ijcnn1_matches_sources_md_and_second_load_is_memory_map(monkeypatch):
    ds = load_dataset("ijcnn1", progress=False)
    assert ds.X_train.shape == (49990, 22) and ds.X_test.shape == (91701, 22)
    assert _counts(ds.y_train) == {-1.0: 45137, 1.0: 4853}
    assert _counts(ds.y_test) == {-1.0: 82989, 1.0: 8712}

    def no_parse(*args, **kwargs):
        raise AssertionError("second load must not parse the file again")

    # every format's parser is called through the format table (formats.py)
    monkeypatch.setattr(formats, "PARSERS", {f: replace(p, parse=no_parse) for f, p in formats.PARSERS.items()})
    again = load_dataset("ijcnn1", progress=False)
    assert isinstance(again.X_train, np.memmap) and isinstance(again.X_test, np.memmap)
    assert not again.X_train.flags.writeable
    np.testing.assert_array_equal(np.asarray(again.X_test[:50]), np.asarray(ds.X_test[:50]))


@needs_mirror
def test_mirror_files_are_read_in_place(tmp_path):
    load_dataset("svmguide1", progress=False)
    cache = tmp_path / "cache"
    raw = [p.name for p in cache.iterdir() if p.is_file()]
    assert raw == []                                   # nothing copied into the cache


@needs_mirror
def test_no_official_test_file_falls_back_to_stratified_split_and_says_so():
    ds = load_dataset("phishing", seed=3, progress=False)
    assert ds.X_train.shape[0] + ds.X_test.shape[0] == 11055
    assert ds.X_test.shape[0] == pytest.approx(11055 * 0.25, abs=1)
    assert "no official test file" in ds.description and "stratified 25%" in ds.description
    # Stratified: class proportions agree to within one row.
    frac_train = np.mean(ds.y_train == 1.0)
    frac_test = np.mean(ds.y_test == 1.0)
    assert abs(frac_train - 6157 / 11055) < 1e-3 and abs(frac_test - 6157 / 11055) < 1e-3
    again = load_dataset("phishing", seed=3, progress=False)
    np.testing.assert_array_equal(again.y_test, ds.y_test)


@needs_mirror
def test_fraction_and_none_test_options():
    ds = load_dataset("heart_scale", test=0.2, seed=1, progress=False)
    assert ds.X_test.shape[0] == 54 and ds.X_train.shape[0] == 216
    ds = load_dataset("heart_scale", test="none", progress=False)
    assert ds.X_test is None and ds.y_test is None and ds.X_train.shape == (270, 13)
    for bad in (0, 1, 1.5, "half", True):
        with pytest.raises(DataError, match="test="):
            load_dataset("heart_scale", test=bad, progress=False)


@needs_mirror
def test_subset_dataset_is_labelled_subset_and_dota2_csv_loads():
    ds = load_dataset("covtype_subset20k", test="none", progress=False)
    assert ds.X_train.shape == (20000, 54) and "SUBSET" in ds.description
    assert _counts(ds.y_train) == {1.0: 10186, 2.0: 9814}
    dota = load_dataset("dota2", progress=False)
    assert dota.X_train.shape == (92650, 116) and dota.X_test.shape == (10294, 116)
    assert _counts(dota.y_train) == {-1.0: 43868, 1.0: 48782}


@needs_mirror
def test_regression_set_and_task_override():
    ds = load_dataset("abalone", progress=False)
    assert ds.task == "regression" and ds.X_train.shape[0] + ds.X_test.shape[0] == 4177
    with pytest.raises(DataError, match="declared binary, but the training labels hold 28"):
        load_dataset("abalone", task="binary", progress=False)


def test_digits86_offline_two_classes():
    ds = load_dataset("digits86", progress=False)
    assert ds.task == "binary" and ds.X_train.shape[1] == 64
    assert ds.X_train.shape[0] + ds.X_test.shape[0] == 174 + 181          # sklearn's 8s and 6s
    assert set(np.unique(ds.y_train)) == {-1.0, 1.0} == set(np.unique(ds.y_test))
    assert "stratified 25%" in ds.description


def test_unknown_dataset_and_bad_arguments():
    with pytest.raises(DataError, match="Did you mean ijcnn1"):
        load_dataset("ijcnn", progress=False)
    with pytest.raises(DataError, match="exactly one"):
        load_dataset()
    with pytest.raises(DataError, match="exactly one"):
        load_dataset("digits86", path="x.svm")


def test_offline_registry_dataset_without_copy_names_file(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(tmp_path))
    with pytest.raises(DataError, match="HIGGS") as err:
        load_dataset("higgs", progress=False)
    assert "KERNELBENCH_OFFLINE" in str(err.value)


# ------------------------------------------------------------------ user files

def _write(path: Path, text: bytes) -> Path:
    opener = {".xz": lzma.open, ".bz2": bz2.open, ".gz": gzip.open}.get(path.suffix, open)
    with opener(path, "wb") as fh:
        fh.write(text)
    return path


GOOD = b"".join(b"%d 1:%d 2:0.5\n" % (1 if i % 2 else -1, i) for i in range(40))


@pytest.mark.parametrize("suffix", ["", ".xz", ".bz2", ".gz"])
def test_user_svmlight_file_any_compression(tmp_path, suffix):
    p = _write(tmp_path / f"mine.svm{suffix}", GOOD)
    ds = load_dataset(path=p, test="none", progress=False)
    assert ds.name == str(p) and ds.task == "binary"
    assert ds.X_train.shape == (40, 2) and ds.X_train[3, 0] == 3.0 and ds.X_train[3, 1] == 0.5


def test_user_csv_with_label_first_and_header(tmp_path):
    text = b"label,a,b\n" + b"".join(b"%d,%d,%d\n" % (i % 3, i, 2 * i) for i in range(30))
    ds = load_dataset(path=_write(tmp_path / "m.csv.gz", text), test="none", progress=False)
    assert ds.task == "multiclass" and ds.X_train.shape == (30, 2)
    np.testing.assert_array_equal(ds.y_train[:4], [0, 1, 2, 0])
    assert ds.X_train[5, 1] == 10.0 and "header" in ds.description


def test_task_inference(tmp_path):
    reg = b"".join(b"%.3f 1:%d\n" % (0.1 * i, i) for i in range(50))
    assert load_dataset(path=_write(tmp_path / "r.svm", reg), test="none").task == "regression"
    many = b"".join(b"%d 1:%d\n" % (i % 30, i) for i in range(90))      # 30 integer labels: regression
    assert load_dataset(path=_write(tmp_path / "m.svm", many), test="none").task == "regression"
    assert load_dataset(path=tmp_path / "m.svm", test="none", task="multiclass").task == "multiclass"


def test_high_dimensional_svmlight_is_int32_csr_memory_map_usable_by_svc(tmp_path):
    from sklearn.svm import SVC

    rows = b"".join(b"%d 1:1 %d:0.5 %d:1.5\n" % (1 if i % 2 else -1, 10 + i, 400 + i) for i in range(60))
    p = _write(tmp_path / "wide.svm", rows)
    ds = load_dataset(path=p, test=0.25, progress=False)
    assert sp.isspmatrix_csr(ds.X_train) and ds.X_train.shape[1] == 459
    assert ds.X_train.indices.dtype == np.int32 and ds.X_train.indptr.dtype == np.int32
    SVC(kernel="rbf").fit(ds.X_train, ds.y_train).predict(ds.X_test)    # refuses int64 indices
    again = load_dataset(path=p, test="none", progress=False)
    assert sp.isspmatrix_csr(again.X_train) and not again.X_train.data.flags.writeable   # memory map
    assert again.X_train.indices.dtype == np.int32


# ------------------------------------------------------------------ malformed files: DataError naming the file

BAD_FILES = {
    "empty.svm": (b"", "no data rows"),
    "comments.svm": (b"# nothing\n\n", "no data rows"),
    "badline.svm": (b"1 1:2\n-1 1:3\n1 1:abc\n", "line 3"),
    "badindex.svm": (b"1 1:2\n-1 x:3\n", "line 2"),
    "unsorted.svm": (b"1 1:2\n-1 2:3 1:1\n", "line 2"),
    "nan.svm": (b"1 1:2\n-1 1:nan\n", "row 2"),
    "inf.svm": (b"1 1:inf\n-1 1:3\n", "row 1"),
    "label.svm": (b"1 1:2\nyes 1:3\n", "line 2"),
    "onecls.svm": (b"1 1:2\n1 1:3\n1 1:4\n", "single class"),
    "empty.csv": (b"", "no data rows"),
    "label.csv": (b"1,2,3\nyes,4,5\n", "line 2, label"),
    "value.csv": (b"1,2,3\n0,4,five\n", "line 2, column 3"),
    "nan.csv": (b"1,2,3\n0,4,\n", "line 2"),
    "ragged.csv": (b"1,2,3\n0,4,5,6\n", "line 2"),
}


@pytest.mark.parametrize("fname", sorted(BAD_FILES))
def test_malformed_user_file_is_data_error_naming_file(tmp_path, fname):
    text, where = BAD_FILES[fname]
    p = _write(tmp_path / fname, text)
    with pytest.raises(DataError) as err:
        load_dataset(path=p, test="none", task="binary" if fname == "onecls.svm" else None, progress=False)
    assert str(p) in str(err.value) and where in str(err.value)


def test_truncated_compressed_user_file(tmp_path):
    full = lzma.compress(GOOD * 50)
    p = tmp_path / "cut.svm.xz"
    p.write_bytes(full[: len(full) // 2])
    with pytest.raises(DataError, match="truncated or corrupt") as err:
        load_dataset(path=p, progress=False)
    assert str(p) in str(err.value)


def test_declared_binary_with_three_labels(tmp_path):
    p = _write(tmp_path / "three.svm", b"1 1:2\n2 1:3\n3 1:4\n1 1:1\n")
    with pytest.raises(DataError, match="declared binary, but the training labels hold 3") as err:
        load_dataset(path=p, task="binary", test="none", progress=False)
    assert str(p) in str(err.value)


def test_registry_dataset_with_wrong_labels_or_shape(tmp_path, monkeypatch):
    """A registry set declared binary whose (unverified) mirror file has 3 labels, and one with too few rows."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    _write(mirror / "tri.xz", b"1 1:2\n2 1:3\n3 1:4\n")
    _write(mirror / "short.xz", b"1 1:2\n-1 1:3\n")
    reg = tmp_path / "reg.yaml"
    reg.write_text("""
datasets:
  tri: {task: binary, format: svmlight, d: 1, description: "three labels",
        files: {train: {name: tri, url: null, compression: xz, sha256: null, n: 3}}}
  short: {task: binary, format: svmlight, d: 1, description: "two rows",
          files: {train: {name: short, url: null, compression: xz, sha256: null, n: 5}}}
""")
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(reg))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(mirror))
    with pytest.raises(DataError, match="declared binary") as err:
        load_dataset("tri", progress=False)
    assert str(mirror / "tri.xz") in str(err.value)
    with pytest.raises(DataError, match="2 rows, but the registry says") as err:
        load_dataset("short", progress=False)
    assert str(mirror / "short.xz") in str(err.value)


def test_missing_user_file():
    with pytest.raises(DataError, match="does not exist"):
        load_dataset(path="/nonexistent/file.svm")


# ------------------------------------------------------------------ prepare

def _toy(sparse=False) -> Dataset:
    rng = np.random.default_rng(0)
    X = rng.normal(3.0, 2.0, size=(200, 4))
    X[:, 3] = 7.0                                           # a constant feature
    Xt = rng.normal(3.0, 2.0, size=(50, 4))
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0)
    yt = np.where(rng.random(50) < 0.5, -1.0, 1.0)
    if sparse:
        X, Xt = sp.csr_matrix(X), sp.csr_matrix(Xt)
    return Dataset("toy", "binary", X, y, Xt, yt, "toy data")


def test_prepare_standard_fits_on_train_only():
    ds = _toy()
    out = prepare(ds, scale="standard")
    np.testing.assert_allclose(out.X_train[:, :3].mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(out.X_train[:, :3].std(axis=0), 1, atol=1e-12)
    mu, sd = ds.X_train.mean(axis=0), ds.X_train.std(axis=0)
    np.testing.assert_allclose(out.X_test[:, :3], (ds.X_test[:, :3] - mu[:3]) / sd[:3])
    assert np.all(out.X_train[:, 3] == 0) and np.all(np.isfinite(out.X_test))
    assert "fitted on the training part only" in out.description


def test_prepare_minmax_and_subsample():
    ds = _toy()
    out = prepare(ds, subsample=50, scale="minmax", seed=4)
    assert out.X_train.shape == (50, 4) and out.y_train.shape == (50,)
    assert out.X_train[:, :3].min() == 0.0 and out.X_train[:, :3].max() == 1.0
    assert out.X_test.shape == (50, 4)
    again = prepare(ds, subsample=50, seed=4)
    same = prepare(ds, subsample=50, seed=4)
    np.testing.assert_array_equal(again.X_train, same.X_train)
    rows = {tuple(r) for r in ds.X_train.tolist()}
    assert all(tuple(r) in rows for r in again.X_train.tolist())        # a subset of the training rows
    assert "SUBSAMPLE of 50 of 200" in again.description
    assert prepare(ds, subsample=10_000).X_train.shape == (200, 4)


def test_prepare_sparse_keeps_csr_int32():
    out = prepare(_toy(sparse=True), scale="standard")
    assert sp.isspmatrix_csr(out.X_train) and out.X_train.indices.dtype == np.int32
    np.testing.assert_allclose(out.X_train.toarray()[:, :3].std(axis=0), 1, atol=1e-12)


def test_prepare_bad_arguments():
    ds = _toy()
    with pytest.raises(DataError, match="scale="):
        prepare(ds, scale="zscore")
    for bad in (0, -3, 2.5, True):
        with pytest.raises(DataError, match="subsample="):
            prepare(ds, subsample=bad)
