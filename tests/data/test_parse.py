"""The dataset parsing layer: kernelbench/data/svmlight.py with its compiled parser (_svmlight.pyx),
delimited.py (CSV), blocks.py (streaming) and parse.py (the parsed-array cache).

Independent truths: scikit-learn's `load_svmlight_file` (the parser must equal it, value for value),
pandas.read_csv, hand-written arrays and hashlib. Repairs of published defects are checked against the
arrays of the same file without the defect.
"""
from __future__ import annotations

import bz2
import functools
import gzip
import hashlib
import io
import json
import lzma
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

import kernelbench.data.load as load_mod
from kernelbench.data import _svmlight, delimited, formats, load_dataset, parse, svmlight
from kernelbench.data.blocks import QUEUE_BLOCKS, BlockReader
from kernelbench.data.delimited import CsvOptions
from kernelbench.data.svmlight import SvmlightOptions
from kernelbench.errors import DataError

from conftest import MIRROR  # noqa: E402

needs_mirror = pytest.mark.skipif(not (MIRROR / "a9a.xz").is_file(),
                                  reason=f"staged benchmark mirror {MIRROR} is absent")

COMPRESS = {"": lambda b: b, ".gz": lambda b: gzip.compress(b, mtime=0), ".bz2": bz2.compress,
            ".xz": lzma.compress}


@pytest.fixture(autouse=True)
def _private_data(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(tmp_path / "no-mirror"))
    monkeypatch.delenv("KERNELBENCH_REGISTRY", raising=False)


# ------------------------------------------------------------------ helpers

def _write(path: Path, text: bytes) -> Path:
    suffix = next((s for s in (".gz", ".bz2", ".xz") if path.name.endswith(s)), "")
    path.write_bytes(COMPRESS[suffix](text))
    return path


def _read_folder(folder: Path):
    """The arrays parse_svmlight / parse_csv wrote, read with NumPy alone (not parse.load_arrays)."""
    y = np.load(folder / "y.npy", allow_pickle=False)
    if (folder / "X_data.npy").is_file():
        shape = tuple(int(v) for v in np.load(folder / "X_shape.npy"))
        indices, indptr = np.load(folder / "X_indices.npy"), np.load(folder / "X_indptr.npy")
        assert indices.dtype == np.int32 and indptr.dtype == np.int32          # what SVC accepts
        X = sp.csr_matrix((np.load(folder / "X_data.npy"), indices, indptr), shape=shape)
        return X, y
    return np.load(folder / "X.npy", allow_pickle=False), y


def _parse_file(path: Path, block_bytes: int | None = None, **options):
    """parse_svmlight into a fresh folder -> (X, y, report); block_bytes: blocks that small."""
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        if block_bytes is None:
            report = svmlight.parse_svmlight(path, Path(tmp), SvmlightOptions(**options))
        else:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(svmlight, "BlockReader", functools.partial(BlockReader, block_bytes=block_bytes))
                report = svmlight.parse_svmlight(path, Path(tmp), SvmlightOptions(**options))
        X, y = _read_folder(Path(tmp))          # read into memory (no memory map): the folder goes
        return X, y, report


def _spy_blocks(seen: list, block_bytes: int):
    """A BlockReader of `block_bytes` blocks that appends each block's length to `seen`: which blocks
    the parser really read."""
    class Spy(BlockReader):
        def __iter__(self):
            for item in super().__iter__():
                seen.append(len(item[0]))
                yield item

    return functools.partial(Spy, block_bytes=block_bytes)


def _parse_text(folder: Path, text: bytes, name="f.svm", **options):
    return _parse_file(_write(folder / name, text), **options)


def _sklearn(text_or_path, **kwargs):
    if isinstance(text_or_path, Path):
        with lzma.open(text_or_path, "rb") as fh:
            return load_svmlight_file(fh, **kwargs)
    return load_svmlight_file(io.BytesIO(text_or_path), **kwargs)


def _densify(X_ref):
    """scikit-learn's CSR as an array, by assignment (toarray() adds into zeros: a stored -0.0 becomes 0.0)."""
    coo = sp.coo_matrix(X_ref)
    dense = np.zeros(X_ref.shape, dtype=X_ref.dtype)
    dense[coo.row, coo.col] = coo.data
    return dense


def _assert_same(X, y, X_ref, y_ref, dtype, dense_ref=None):
    """X equals scikit-learn's X value for value (dense: as an array; sparse: the same CSR after sorting)."""
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, y_ref)
    assert X.dtype == np.dtype(dtype)
    if sp.issparse(X):
        assert X.shape == X_ref.shape
        assert X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
        a, b = sp.csr_matrix(X), sp.csr_matrix(X_ref)
        a.sort_indices()
        b.sort_indices()
        np.testing.assert_array_equal(a.indptr, b.indptr)
        np.testing.assert_array_equal(a.indices, b.indices)
        np.testing.assert_array_equal(a.data, b.data)          # explicit zeros kept, as sklearn keeps them
        assert a.data.dtype == b.data.dtype
    else:
        assert isinstance(X, np.ndarray) and X.shape == X_ref.shape
        dense = _densify(X_ref) if dense_ref is None else dense_ref
        assert dense.dtype == X.dtype
        # bit for bit (so -0.0 is not 0.0); assert_array_equal only to describe a difference
        if not np.array_equal(X.view(f"u{X.itemsize}"), dense.view(f"u{X.itemsize}")):
            np.testing.assert_array_equal(X, dense)
            np.testing.assert_array_equal(np.signbit(X), np.signbit(dense))


def _no_entries(cache: Path):
    parsed = cache / "parsed"
    return [] if not parsed.is_dir() else sorted(p.name for p in parsed.iterdir())


def _rows(n, fmt=b"%d %d:%d %d:0.5\n"):
    return b"".join(fmt % (1 if i % 2 else -1, 1, i, 3) for i in range(n))


# ------------------------------------------------------------------ 1. the staged mirror files vs sklearn

MIRROR_SVMLIGHT = {      # file -> the registry's d
    "a9a": 123, "a9a.t": 123, "abalone_scale": 8, "australian_scale": 14, "cod-rna": 8,
    "covtype_binary_scale_subset20k": 54, "fourclass_scale": 2, "heart_scale": 13, "ijcnn1": 22,
    "ijcnn1.t": 22, "phishing": 68, "skin_nonskin": 3, "svmguide1": 4, "svmguide1.t": 4, "w8a": 300,
}


@needs_mirror
@pytest.mark.parametrize("name", sorted(MIRROR_SVMLIGHT))
def test_mirror_file_parses_to_sklearn_arrays(name, tmp_path):
    path = MIRROR / f"{name}.xz"
    if not path.is_file():
        pytest.skip(f"{path} is not staged")
    d = MIRROR_SVMLIGHT[name]
    text_sha = hashlib.sha256(lzma.decompress(path.read_bytes())).hexdigest()
    X_ref, y_ref = _sklearn(path, n_features=d, zero_based=False)
    dense_ref = _densify(X_ref)
    # registry-like (width and base known: dense rows written straight), and the CSR layout
    X, y, report = _parse_file(path, n_features=d, base=1)
    _assert_same(X, y, X_ref, y_ref, "float64", dense_ref)
    assert report.sha256 == text_sha and report.rows == X_ref.shape[0]
    X, y, _ = _parse_file(path, n_features=d, base=1, dense=False)
    _assert_same(X, y, X_ref, y_ref, "float64")
    # a user file: width and base from the data (one-based here: no index 0), dense when narrow
    X, y, _ = _parse_file(path, base=-1)
    width = int(X_ref.indices.max()) + 1
    assert X.shape[1] == width
    _assert_same(X, y, X_ref[:, :width], y_ref, "float64", dense_ref[:, :width])


BIGGEST = ("ijcnn1", "ijcnn1.t", "skin_nonskin")        # 386 k rows: their float32 check runs with -m slow


@needs_mirror
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in BIGGEST else n
                                  for n in sorted(MIRROR_SVMLIGHT)])
def test_mirror_file_float32_equals_sklearn_float32(name, tmp_path):
    path = MIRROR / f"{name}.xz"
    if not path.is_file():
        pytest.skip(f"{path} is not staged")
    d = MIRROR_SVMLIGHT[name]
    X32_ref, y32_ref = _sklearn(path, n_features=d, zero_based=False, dtype=np.float32)
    assert X32_ref.dtype == np.float32
    X, y, _ = _parse_file(path, n_features=d, base=1, dtype="float32")
    _assert_same(X, y, X32_ref, y32_ref, "float32")
    if name in ("a9a", "w8a"):                           # the CSR layout in float32 too
        X, y, _ = _parse_file(path, n_features=d, base=1, dtype="float32", dense=False)
        _assert_same(X, y, X32_ref, y32_ref, "float32")


# ------------------------------------------------------------------ 2. property: random valid svmlight text

SEP = st.sampled_from([" ", " ", " ", "\t", "  ", " \t ", "\x0b"])
LABEL = st.one_of(st.integers(-3, 5).map(str),
                  st.sampled_from(["+1", "-0", "1e3", "-2.5E-2", ".5", "5.", "1.0", "3e0", "-1e+00"]),
                  st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(repr))
VALUE = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.floats(-1e3, 1e3, allow_nan=False, width=32).map(lambda v: "%.18e" % v),        # LIBSVM's writers
    st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: "%g" % v),
    st.integers(-10**6, 10**6).map(str),
    st.sampled_from(["0", "-0", "0.0", "-0.0", "1e-320", "4.9e-324", "1e-400", "1E5", "+.5", "5.", "-3",
                     "1.7976931348623157e308", "0.1000000000000000055511151231257827021181583404541015625"]))
COMMENT_TEXT = st.text(alphabet="abc xyz:#1.-\t", max_size=12)


@st.composite
def svmlight_texts(draw):
    """(text, base, n_features, dense): valid svmlight text that scikit-learn reads."""
    base = draw(st.sampled_from([0, 1]))
    wide = draw(st.booleans())
    top = draw(st.integers(301, 2000)) if wide else draw(st.integers(base + 1, 40))
    n_rows = draw(st.integers(1, 12))
    lines = []
    has_feature = False
    for r in range(n_rows):
        if draw(st.integers(0, 6)) == 0:
            lines.append("#" + draw(COMMENT_TEXT))              # a comment line (legal, not a row)
        idx = sorted(draw(st.sets(st.integers(base, top), max_size=7)))
        if r == 0 and not idx:
            idx = [top]
        has_feature = has_feature or bool(idx)
        toks = [draw(LABEL)]
        if draw(st.integers(0, 5)) == 0:
            toks.append(f"qid:{draw(st.integers(0, 99))}")
        toks += [f"{i}:{draw(VALUE)}" for i in idx]
        line = draw(st.sampled_from(["", "", " ", "\t"]))       # leading whitespace
        for k, tok in enumerate(toks):
            line += (draw(SEP) if k else "") + tok
        line += draw(st.sampled_from(["", "", " ", "  ", "\t"]))   # trailing whitespace (LIBSVM writes one)
        if draw(st.integers(0, 4)) == 0:
            line += draw(st.sampled_from(["#", " #", " # "])) + draw(COMMENT_TEXT)
        lines.append(line)
    assert has_feature
    max_idx = max(int(t.split(":")[0]) for ln in lines if not ln.startswith("#")
                  for t in ln.split("#")[0].split()[1:] if not t.startswith("qid"))
    n_features = draw(st.one_of(st.none(), st.integers(max_idx + (base == 0), max_idx + 5)))
    dense = draw(st.sampled_from([None, None, True, False]))
    return ("\n".join(lines) + "\n").encode(), base, n_features, dense


PROPERTY = settings(max_examples=100, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(case=svmlight_texts(), auto=st.booleans(), dtype=st.sampled_from(["float64", "float32"]),
       suffix=st.sampled_from(["", "", ".gz", ".xz", ".bz2"]), block=st.integers(1, 90))
def test_random_valid_svmlight_equals_sklearn_at_any_block_size(case, auto, dtype, suffix, block):
    text, base, n_features, dense = case
    zero_based = "auto" if auto else bool(base == 0)
    X_ref, y_ref = load_svmlight_file(io.BytesIO(text), n_features=n_features, zero_based=zero_based,
                                      dtype=np.float32 if dtype == "float32" else np.float64)
    options = dict(n_features=n_features, base=-1 if auto else base, dense=dense, dtype=dtype, strict=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp) / f"p.svm{suffix}", text)
        if not np.isfinite(X_ref.data).all():          # a value beyond float32's range: refused, not inf
            assert dtype == "float32"
            with pytest.raises(DataError, match="NaN or infinite"):
                _parse_file(path, block_bytes=block, **options)
            return
        results = [_parse_file(path, **options), _parse_file(path, block_bytes=block, **options)]
    for X, y, report in results:
        expect_dense = dense if dense is not None else X_ref.shape[1] <= svmlight.DENSE_MAX_FEATURES
        assert sp.issparse(X) != expect_dense
        _assert_same(X, y, X_ref, y_ref, dtype)
        assert report.repairs == {} and report.first_line == {}            # valid text: nothing repaired
        assert report.rows == X_ref.shape[0]
        assert report.sha256 == hashlib.sha256(text).hexdigest() and report.text_bytes == len(text)


def test_block_splitting_is_really_exercised(tmp_path):
    """The small-block path above does split lines: a 1-byte block reader sees many blocks."""
    seen = []
    text = _rows(20)
    path = _write(tmp_path / "s.svm", text)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(svmlight, "BlockReader", _spy_blocks(seen, block_bytes=7))
        X, y, _ = _parse_file(path, n_features=3, base=1)
    assert len(seen) == -(-len(text) // 7) and max(seen) == 7
    X_ref, y_ref = load_svmlight_file(io.BytesIO(text), n_features=3, zero_based=False)
    _assert_same(X, y, X_ref, y_ref, "float64")


def test_hand_written_expected_arrays(tmp_path):
    text = (b"# a header comment\n"
            b"+1 qid:7 1:0.5 3:-2e-1   # trailing comment 4:9\n"
            b"-1\t2:1E2\t3:0 \n"
            b"0.25 1:-0 2:.5#glued comment\n")
    X, y, report = _parse_text(tmp_path, text, n_features=4, base=1)
    np.testing.assert_array_equal(y, [1.0, -1.0, 0.25])
    np.testing.assert_array_equal(X, [[0.5, 0, -0.2, 0], [0, 100.0, 0, 0], [-0.0, 0.5, 0, 0]])
    assert np.signbit(X[2, 0]) and report.rows == 3 and report.repairs == {}
    X, y, _ = _parse_text(tmp_path, text, base=0, dense=False)              # zero-based, sparse
    assert X.shape == (3, 4)
    np.testing.assert_array_equal(X.indptr, [0, 2, 4, 6])
    np.testing.assert_array_equal(X.indices, [1, 3, 2, 3, 1, 2])
    np.testing.assert_array_equal(X.data, [0.5, -0.2, 100.0, 0.0, -0.0, 0.5])


def test_property_can_fail(tmp_path):
    """The comparison helper is not vacuous: a one-ulp difference, a lost explicit zero, a shifted
    column are all caught."""
    text = b"1 1:0.1 2:0 5:3\n-1 2:7\n"
    X, y, _ = _parse_text(tmp_path, text, base=1, dense=False)
    X_ref, y_ref = load_svmlight_file(io.BytesIO(text), zero_based=False)
    _assert_same(X, y, X_ref, y_ref, "float64")
    off = X_ref.copy()
    off.data[0] = np.nextafter(off.data[0], 1)
    with pytest.raises(AssertionError):
        _assert_same(X, y, off, y_ref, "float64")
    pruned = X_ref.copy()
    pruned.eliminate_zeros()
    with pytest.raises(AssertionError):
        _assert_same(X, y, pruned, y_ref, "float64")
    X1, y1, _ = _parse_text(tmp_path, text, base=0, dense=False)            # zero-based: a shifted column
    with pytest.raises(AssertionError):
        _assert_same(X1, y1, X_ref, y_ref, "float64")


# ------------------------------------------------------------------ 3. repairs

def _clean_lines(n=12, d=18):
    rng = np.random.default_rng(5)
    rows = []
    for i in range(n):
        vals = " ".join(f"{j}:{v:.18e}" for j, v in zip(range(1, d + 1), rng.random(d).astype(np.float32)))
        rows.append(f"{i % 2} {vals}")
    return rows


def _glue_line(line: str, k: int) -> str:
    """Remove the space before the k-th `index:` token (1-based feature k+1 glued to feature k)."""
    toks = line.split(" ")
    toks[k: k + 2] = [toks[k] + toks[k + 1]]
    return " ".join(toks)


CLEAN = _clean_lines()
CLEAN_TEXT = ("\n".join(CLEAN) + "\n").encode()


def _defect(kind):
    """(defective text, repaired lines count, first repaired line (1-based)) for each repair kind."""
    lines = list(CLEAN)
    if kind == "missing_separator":                    # the SUSY.xz defect: `13:6.64e-0114:...`
        lines[3] = _glue_line(lines[3], 13)
        lines[8] = _glue_line(_glue_line(lines[8], 4), 10)     # two on one line: one line counted
        return ("\n".join(lines) + "\n").encode(), 2, 4
    if kind == "missing_index":
        for r in (5, 6, 10):
            toks = lines[r].split(" ")
            toks[7] = toks[7][toks[7].index(":"):]     # `:value` where index 7 belongs
            lines[r] = " ".join(toks)
        return ("\n".join(lines) + "\n").encode(), 3, 6
    if kind == "crlf":
        return ("\n".join(lines[:2]) + "\n" + "\r\n".join(lines[2:]) + "\r\n").encode(), 10, 3
    if kind == "blank_line":
        lines.insert(4, "")
        lines.insert(7, " \t ")
        return ("\n".join(lines) + "\n").encode(), 2, 5
    if kind == "no_final_newline":
        return "\n".join(lines).encode(), 1, 12
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", _svmlight.REPAIR_KINDS)
def test_each_repair_gives_the_clean_arrays_and_is_counted(tmp_path, kind):
    text, count, first = _defect(kind)
    assert text != CLEAN_TEXT
    X_ref, y_ref, clean = _parse_text(tmp_path, CLEAN_TEXT, name="clean.svm", n_features=18, base=1)
    assert clean.repairs == {}
    for block in (None, 50):
        X, y, report = _parse_file(_write(tmp_path / "bad.svm", text), block_bytes=block, n_features=18, base=1)
        np.testing.assert_array_equal(X, X_ref)
        np.testing.assert_array_equal(y, y_ref)
        assert report.repairs == {kind: count} and report.first_line == {kind: first}
        assert report.sha256 == hashlib.sha256(text).hexdigest()          # the file as it is, not the repair
        assert kind.replace("_", " ") in report.summary() and f"line {first}" in report.summary()
    # strict: the same defect is an error naming the line and the kind
    with pytest.raises(DataError) as err:
        _parse_text(tmp_path, text, name="strict.svm", n_features=18, base=1, strict=True)
    msg = str(err.value)
    assert f"line {first} " in msg and f"({kind.replace('_', ' ')})" in msg and "strict" in msg
    assert str(tmp_path / "strict.svm") in msg


@pytest.mark.parametrize("kind", ["missing_index", "crlf", "blank_line", "no_final_newline"])
def test_repairs_through_load_dataset_provenance_and_stderr(tmp_path, capsys, kind):
    """A user file (width and base from the data). The SUSY-style glue is tested below: without a
    known width its last-token case has two readings."""
    text, count, first = _defect(kind)
    clean = load_dataset(path=_write(tmp_path / "clean.svm", CLEAN_TEXT), test="none", progress=False)
    assert capsys.readouterr().err == ""
    path = _write(tmp_path / "bad.svm", text)
    ds = load_dataset(path=path, test="none", progress=False)
    np.testing.assert_array_equal(np.asarray(ds.X_train), np.asarray(clean.X_train))
    np.testing.assert_array_equal(ds.y_train, clean.y_train)
    (record,) = ds.provenance["files"]
    assert record["repairs"] == {kind: count} and record["first_repaired_line"] == {kind: first}
    assert record["path"] == str(path) and record["rows"] == 12
    assert record["sha256"] == hashlib.sha256(text).hexdigest()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.svm" in err[0] and kind.replace("_", " ") in err[0]
    assert f"first: line {first})" in err[0] and f"{count} line(s)" in err[0]
    with pytest.raises(DataError) as exc:
        load_dataset(path=path, test="none", strict=True, progress=False)
    assert f"line {first} " in str(exc.value) and kind.replace("_", " ") in str(exc.value)


def test_missing_separator_through_registry_like_loader(tmp_path, capsys, monkeypatch):
    text, count, first = _defect("missing_separator")
    _registry(tmp_path, monkeypatch, text, d=18, n=12)
    ds = load_dataset("toy", test="none", progress=False)
    X_ref, y_ref, _ = _parse_text(tmp_path, CLEAN_TEXT, name="clean.svm", n_features=18, base=1)
    np.testing.assert_array_equal(np.asarray(ds.X_train), X_ref)
    (record,) = ds.provenance["files"]
    assert record["repairs"] == {"missing_separator": count}
    assert record["first_repaired_line"] == {"missing_separator": first}
    err = capsys.readouterr().err
    assert "missing separator" in err and f"first: line {first})" in err
    with pytest.raises(DataError, match=rf"line {first} .*missing separator"):
        load_dataset("toy", test="none", strict=True, progress=False)


def test_the_published_susy_defect(tmp_path):
    """LIBSVM's SUSY.xz: `13:6.64e-0114:8.74e-01` -- 14 and 114 both cut the digits; the registry's
    width (18) leaves one reading. Without a width and with no index after it, it has two: an error."""
    good = b"0 1:1 13:6.64e-01 14:8.74e-01\n1 2:2 18:1\n"
    bad = b"0 1:1 13:6.64e-0114:8.74e-01\n1 2:2 18:1\n"
    X_ref, y_ref, _ = _parse_text(tmp_path, good, n_features=18, base=1)
    X, y, report = _parse_text(tmp_path, bad, n_features=18, base=1)
    np.testing.assert_array_equal(X, X_ref)
    assert X[0, 12] == 0.664 and X[0, 13] == 0.874
    assert report.repairs == {"missing_separator": 1} and report.first_line == {"missing_separator": 1}
    with pytest.raises(DataError, match=r"line 1 .*no unique reading"):
        _parse_text(tmp_path, bad, base=1)
    # an index after it bounds the cut again
    X, _, report = _parse_text(tmp_path, b"0 1:1 13:6.64e-0114:8.74e-01 15:2\n", base=1)
    np.testing.assert_array_equal(X[0], [1] + [0] * 11 + [0.664, 0.874, 2.0])


@pytest.mark.parametrize("label_text", [b"1.0e+001:0.5", b"01:0.5", b"-11:0.5", b"12:0.5"])
def test_a_label_glued_to_the_first_index_is_refused(tmp_path, label_text):
    """Only a *value* glued to the next index is repaired (the published defect): `12:0.5` may be a
    line without a label as well as label 1 + index 2, so a label with a colon is an error."""
    text = b"1 1:0.25 2:1\n" + label_text + b" 2:3\n"
    with pytest.raises(DataError, match=r"line 2 .*numeric label"):
        _parse_text(tmp_path, text, n_features=2, base=1)


def test_a_missing_first_index_of_a_file_of_unknown_base_is_refused(tmp_path):
    """`:0.7 1:0.1` fits index 0 only in a zero-based file: where the base comes from the data,
    repairing it would decide the base of the whole file."""
    with pytest.raises(DataError, match=r"line 1 .*no unique reading"):
        _parse_text(tmp_path, b"1 :0.7 1:0.1\n0 1:2 2:3\n", base=-1)
    X, _, report = _parse_text(tmp_path, b"1 :0.7 2:0.1\n0 1:2 2:3\n", n_features=2, base=1)
    np.testing.assert_array_equal(X, [[0.7, 0.1], [2, 3]])
    assert report.repairs == {"missing_index": 1}


def test_repair_first_lines_across_many_blocks(tmp_path):
    lines = [f"{i % 2} 1:{i} 2:0.5 3:{i / 3!r}" for i in range(300)]
    lines[170] = lines[170].replace(" 2:", " :")        # missing index on line 171
    lines[250] = lines[250].replace(" 3:", "3:")        # glued on line 251
    text = ("\r\n".join(lines[:100]) + "\r\n" + "\n".join(lines[100:]) + "\n\n").encode()
    X, y, report = _parse_file(_write(tmp_path / "m.svm.gz", text), block_bytes=64, n_features=3, base=1)
    assert report.repairs == {"missing_separator": 1, "missing_index": 1, "crlf": 100, "blank_line": 1}
    assert report.first_line == {"missing_separator": 251, "missing_index": 171, "crlf": 1, "blank_line": 301}
    np.testing.assert_array_equal(X[:, 0], np.arange(300))
    np.testing.assert_array_equal(X[:, 1], 0.5)


def test_leading_and_trailing_spaces_are_not_defects(tmp_path):
    text = b"  1 1:0.5 2:1 \n\t-1 2:3\t\n1 1:2  \n"
    X, y, report = _parse_text(tmp_path, text, n_features=2, base=1, strict=True)
    assert report.repairs == {}
    np.testing.assert_array_equal(X, [[0.5, 1], [0, 3], [2, 0]])


def test_comment_lines_are_not_blank_lines(tmp_path):
    X, y, report = _parse_text(tmp_path, b"# header\n1 1:1\n   # indented comment\n-1 1:2\n", base=1, strict=True)
    assert report.repairs == {} and X.shape == (2, 1)


# ------------------------------------------------------------------ 4. invalid lines: DataError naming the line

GOOD_HEAD = b"1 1:0.5 2:1\n# a comment line counts as a line\n\n-1 3:2\n"      # the bad line is line 5
INVALID = {
    "two readings": (b"1 2:0.512:0.1", {"base": 1}, "no unique reading"),        # 12 or 512
    "two readings, width": (b"1 2:0.512:0.1", {"base": 1, "n_features": 600}, "no unique reading"),
    "no colon": (b"1 1:0.5 7 9:0.2", {"base": 1}, "not <index>:<value>"),
    "non-numeric value": (b"1 1:0.5 2:abc", {"base": 1}, "not a number"),
    "empty value": (b"1 1:0.5 2:", {"base": 1}, "not a number"),
    "hex value": (b"1 1:0x10", {"base": 1}, "not a number"),
    "non-numeric label": (b"yes 1:0.5", {"base": 1}, "numeric label"),
    "no label": (b"1:0.5 2:0.5", {"base": 1}, "numeric label"),
    "bad index": (b"1 x:0.5", {"base": 1}, "non-negative integer"),
    "negative index": (b"1 -2:0.5", {"base": 1}, "non-negative integer"),
    "decreasing": (b"1 4:1 3:1", {"base": 1}, "strictly increasing"),
    "repeated": (b"1 3:1 3:1", {"base": 1}, "strictly increasing"),
    "index 0, 1-based": (b"1 0:1 2:1", {"base": 1, "n_features": 5}, "outside 1..5"),
    "index 0, 1-based, no width": (b"1 0:1 2:1", {"base": 1}, "index 0 in a 1-based file"),
    "above n_features": (b"1 2:1 6:1", {"base": 1, "n_features": 5}, "outside 1..5"),
    "at n_features, 0-based": (b"1 2:1 5:1", {"base": 0, "n_features": 5}, "outside 0..4"),
    "index >= 2**31": (b"1 2147483648:1", {"base": 1}, "2**31"),
    "missing index, gap of two": (b"1 1:0.5 :0.3 4:0.1", {"base": 1}, "no unique reading"),
    "missing index, no room": (b"1 1:0.5 :0.3 2:0.1", {"base": 1}, "no unique reading"),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_line_is_data_error_naming_the_line(tmp_path, case):
    line, options, reason = INVALID[case]
    text = GOOD_HEAD + line + b"\n" + b"1 1:1\n" * 3
    for block in (None, 16):
        with pytest.raises(DataError) as err:
            _parse_file(_write(tmp_path / "bad.svm", text), block_bytes=block, **options)
        msg = str(err.value)
        assert str(tmp_path / "bad.svm") in msg and "line 5 " in msg and reason in msg, msg
        assert repr(line.decode()) in msg                    # the offending line is shown
    # the same line deep in a file that is read in many blocks
    text = b"1 1:1\n" * 1200 + line + b"\n" + b"1 1:1\n"
    with pytest.raises(DataError, match=r"line 1,201 "):
        _parse_file(_write(tmp_path / "deep.svm.xz", text), block_bytes=100, **options)


def test_invalid_line_message_can_fail(tmp_path):
    """The line check is strict: the same bad line one line later is not 'line 5'."""
    with pytest.raises(DataError) as err:
        _parse_text(tmp_path, GOOD_HEAD + b"1 1:1\n1 1:abc\n", base=1)
    assert "line 6 " in str(err.value) and "line 5 " not in str(err.value)


def test_non_finite_values_name_the_row(tmp_path):
    with pytest.raises(DataError, match=r"data row 3 holds a NaN or infinite feature"):
        _parse_text(tmp_path, b"# c\n1 1:1\n-1 1:2\n1 1:nan\n", base=1)
    with pytest.raises(DataError, match=r"data row 2 has a NaN or infinite label"):
        _parse_text(tmp_path, b"1 1:1\ninf 1:2\n", base=1)
    with pytest.raises(DataError, match=r"NaN or infinite feature"):
        _parse_text(tmp_path, b"1 1:1e400\n", base=1)


def test_empty_and_comment_only_files(tmp_path):
    for text in (b"", b"# only a comment\n", b"#\n# two\n"):
        with pytest.raises(DataError, match="no data rows"):
            _parse_text(tmp_path, text, base=1)


# ------------------------------------------------------------------ 5. truncated files, row counts

@pytest.mark.parametrize("suffix", [".xz", ".gz", ".bz2"])
def test_truncated_compressed_file_is_data_error(tmp_path, suffix):
    body = COMPRESS[suffix](_rows(3000))
    path = tmp_path / f"cut.svm{suffix}"
    path.write_bytes(body[: len(body) // 2])
    for block in (None, 4096):
        with pytest.raises(DataError, match="truncated or corrupt") as err:
            _parse_file(path, block_bytes=block, n_features=3, base=1)
        assert str(path) in str(err.value)


def _parse_cached(path, options: SvmlightOptions, key="k"):
    return parse.parse_cached(path, key=key, options={"o": repr(options)},
                              parse=lambda folder, show: svmlight.parse_svmlight(path, folder, options))


@pytest.mark.parametrize("n_rows, found", [(4, "4 rows"), (8, "more than 5 rows")])
def test_row_count_mismatch_names_found_and_expected_and_caches_nothing(tmp_path, n_rows, found):
    path = _write(tmp_path / "r.svm.xz", _rows(n_rows))
    with pytest.raises(DataError) as err:
        _parse_cached(path, SvmlightOptions(n_features=3, base=1, expected_rows=5))
    msg = str(err.value)
    assert str(path) in msg and found in msg and "registry says this file has 5" in msg
    assert _no_entries(tmp_path / "cache") == []             # no entry, no .tmp- leftover
    X, y, meta = _parse_cached(_write(tmp_path / "ok.svm", _rows(5)),
                               SvmlightOptions(n_features=3, base=1, expected_rows=5))
    assert X.shape == (5, 3) and meta["parse"]["rows"] == 5


def test_row_count_exceeded_stops_early(tmp_path, monkeypatch):
    """A file with far more rows than the registry says is refused after the first blocks."""
    blocks = []
    monkeypatch.setattr(svmlight, "BlockReader", _spy_blocks(blocks, block_bytes=1000))
    path = _write(tmp_path / "long.svm", _rows(20000))
    with pytest.raises(DataError, match="more than 10 rows"):
        svmlight.parse_svmlight(path, tmp_path, SvmlightOptions(n_features=3, base=1, expected_rows=10))
    assert len(blocks) <= 1 + QUEUE_BLOCKS + 1


# ------------------------------------------------------------------ 6. the cache

def test_second_load_is_a_memory_map_without_parsing(tmp_path, monkeypatch):
    path = _write(tmp_path / "u.svm.bz2", _rows(50))
    first = load_dataset(path=path, test="none", progress=False)
    assert isinstance(first.X_train, np.memmap) and first.X_train.shape == (50, 3)

    def no_parse(*args, **kwargs):
        raise AssertionError("a cached file must not be parsed again")

    monkeypatch.setattr(formats, "PARSERS", {f: replace(p, parse=no_parse) for f, p in formats.PARSERS.items()})
    monkeypatch.setattr(svmlight, "parse_svmlight", no_parse)
    again = load_dataset(path=path, test="none", progress=False)
    assert isinstance(again.X_train, np.memmap) and not again.X_train.flags.writeable
    np.testing.assert_array_equal(np.asarray(again.X_train), np.asarray(first.X_train))
    # parse_cached itself: a present entry never calls the parse callable
    opts = SvmlightOptions(n_features=3, base=1)
    X, y, meta = parse.parse_cached(path, key="direct", options={"a": 1},
                                    parse=lambda folder, show: _real_parse(path, folder, opts))
    X2, y2, meta2 = parse.parse_cached(path, key="direct", options={"a": 1}, parse=no_parse)
    assert isinstance(X2, np.memmap) and meta2 == meta
    np.testing.assert_array_equal(np.asarray(X2), np.asarray(X))


_real_parse = svmlight.parse_svmlight


def test_float32_is_float32_and_a_separate_cache_entry(tmp_path):
    text = b"".join(b"%d 1:%r 2:%r\n" % (i % 2, 0.1 * i, 1 / (i + 3)) for i in range(40))
    path = _write(tmp_path / "f.svm", text)
    d64 = load_dataset(path=path, test="none", progress=False)
    d32 = load_dataset(path=path, test="none", dtype="float32", progress=False)
    assert d64.X_train.dtype == np.float64 and d32.X_train.dtype == np.float32
    assert d32.y_train.dtype == np.float64
    X_ref, _ = load_svmlight_file(io.BytesIO(text), zero_based=False, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(d32.X_train), X_ref.toarray())
    np.testing.assert_array_equal(np.asarray(d32.X_train), np.asarray(d64.X_train).astype(np.float32))
    assert len(_no_entries(tmp_path / "cache")) == 2
    meta = [json.loads((tmp_path / "cache" / "parsed" / e / "meta.json").read_text())
            for e in _no_entries(tmp_path / "cache")]
    assert sorted(m["options"]["dtype"] for m in meta) == ["float32", "float64"]


def test_cached_entry_with_repairs_is_refused_under_strict_without_reparsing(tmp_path, monkeypatch, capsys):
    text, _, first = _defect("crlf")
    path = _write(tmp_path / "r.svm", text)
    load_dataset(path=path, test="none", progress=False)
    assert "crlf" in capsys.readouterr().err

    def no_parse(*args, **kwargs):
        raise AssertionError("must not parse again")

    monkeypatch.setattr(formats, "PARSERS", {f: replace(p, parse=no_parse) for f, p in formats.PARSERS.items()})
    with pytest.raises(DataError, match=rf"line {first} has a defect \(crlf\).*strict"):
        load_dataset(path=path, test="none", strict=True, progress=False)
    ds = load_dataset(path=path, test="none", progress=False)                 # non-strict: still fine
    assert ds.provenance["files"][0]["repairs"] == {"crlf": 10}


def test_damaged_cache_entry_is_parsed_again(tmp_path):
    path = _write(tmp_path / "d.svm", _rows(30))
    first = np.array(load_dataset(path=path, test="none", progress=False).X_train)
    (entry,) = (tmp_path / "cache" / "parsed").iterdir()
    (entry / "X.npy").write_bytes(b"not a npy file")
    again = load_dataset(path=path, test="none", progress=False)
    np.testing.assert_array_equal(np.asarray(again.X_train), first)


def _registry(tmp_path, monkeypatch, text: bytes, *, d=3, n=None, sha=None, name="toy") -> Path:
    """A private registry with one svmlight set whose file lies in a private mirror (xz)."""
    mirror = tmp_path / "mirror"
    mirror.mkdir(exist_ok=True)
    _write(mirror / f"{name}.xz", text)
    reg = tmp_path / "registry.yaml"
    reg.write_text(f"""
version: 1
datasets:
  toy:
    task: binary
    format: svmlight
    d: {d}
    description: "a test set"
    files:
      train: {{name: {name}, url: null, compression: xz, sha256: {repr(sha) if sha else 'null'}, n: {n if n else 'null'}}}
    split: {{protocol: stratified, test_fraction: 0.25}}
""")
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(reg))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(mirror))
    return mirror / f"{name}.xz"


def test_registry_checksum_mismatch_while_parsing_caches_nothing(tmp_path, monkeypatch):
    text = _rows(40)
    real = hashlib.sha256(text).hexdigest()
    path = _registry(tmp_path, monkeypatch, text, sha="2" * 64, n=40)
    with pytest.raises(DataError, match="Checksum mismatch") as err:
        load_dataset("toy", test="none", progress=False)
    msg = str(err.value)
    assert "2" * 64 in msg and real in msg and str(path) in msg
    cache = tmp_path / "cache"
    assert _no_entries(cache) == []
    assert not (cache / "verified").is_dir() or list((cache / "verified").iterdir()) == []


def test_registry_checksum_is_verified_in_the_parsing_pass(tmp_path, monkeypatch):
    text = _rows(40)
    sha = hashlib.sha256(text).hexdigest()
    _registry(tmp_path, monkeypatch, text, sha=sha, n=40)

    def no_second_pass(*args, **kwargs):
        raise AssertionError("the file must be hashed while it is parsed, not in a separate pass")

    monkeypatch.setattr(load_mod, "verify_file", no_second_pass)
    ds = load_dataset("toy", test="none", progress=False)
    assert ds.provenance["files"][0]["sha256"] == sha and ds.X_train.shape == (40, 3)
    assert len(_no_entries(tmp_path / "cache")) == 1
    monkeypatch.setattr(formats, "PARSERS", {f: replace(p, parse=no_second_pass) for f, p in formats.PARSERS.items()})
    again = load_dataset("toy", test="none", progress=False)                 # stamped + cached
    assert isinstance(again.X_train, np.memmap)


def test_registry_row_count_mismatch_through_loader(tmp_path, monkeypatch):
    _registry(tmp_path, monkeypatch, _rows(7), n=9)
    with pytest.raises(DataError, match=r"7 rows, but the registry says this file has 9"):
        load_dataset("toy", test="none", progress=False)
    assert _no_entries(tmp_path / "cache") == []


# ------------------------------------------------------------------ 7. CSV

def _csv_text(n, header=True, bad_at=None):
    rng = np.random.default_rng(3)
    vals = rng.normal(size=(n, 4))
    lines = ["f0,f1,label,f3,f4"] if header else []
    for i in range(n):
        cells = [repr(float(v)) for v in vals[i]]
        cells.insert(2, str(i % 3 - 1))
        if bad_at is not None and i == bad_at:
            cells[3] = "oops"
        lines.append(",".join(cells))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_csv_equals_pandas(tmp_path, dtype):
    path = _write(tmp_path / "t.csv.gz", _csv_text(500))
    ref = pd.read_csv(path, header=0).to_numpy(dtype=np.float64)
    y_ref, X_ref = ref[:, 2], np.delete(ref, 2, axis=1)
    for block in (None, 97):
        with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
            reader = BlockReader if block is None else functools.partial(BlockReader, block_bytes=block)
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(delimited, "BlockReader", reader)
                report = delimited.parse_csv(path, Path(tmp), CsvOptions(label_column=2, header_rows=1, dtype=dtype))
            X, y = _read_folder(Path(tmp))
            assert X.dtype == np.dtype(dtype) and y.dtype == np.float64
            np.testing.assert_array_equal(X, X_ref.astype(dtype))
            np.testing.assert_array_equal(y, y_ref)
            assert report.rows == 500
            assert report.sha256 == hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest()


def test_csv_user_file_with_header_through_loader(tmp_path):
    text = b"label,a,b\n" + b"".join(b"%d,%r,%d\n" % (i % 2, i / 7, 2 * i) for i in range(30))
    path = _write(tmp_path / "u.csv.xz", text)
    ds = load_dataset(path=path, test="none", dtype="float32", progress=False)
    ref = pd.read_csv(io.BytesIO(text)).to_numpy()
    np.testing.assert_array_equal(np.asarray(ds.X_train), ref[:, 1:].astype(np.float32))
    np.testing.assert_array_equal(ds.y_train, ref[:, 0])
    assert ds.X_train.dtype == np.float32 and "header" in ds.description


def test_csv_non_numeric_cell_names_the_line(tmp_path):
    path = _write(tmp_path / "bad.csv", _csv_text(40, bad_at=10))          # header + 10 rows before it
    with pytest.raises(DataError) as err:
        delimited.parse_csv(path, tmp_path, CsvOptions(label_column=2, header_rows=1))
    assert "line 12, column 4: 'oops' is not a number" in str(err.value) and str(path) in str(err.value)
    label_bad = _write(tmp_path / "label.csv", b"1,2\n0,3\nx,4\n")
    with pytest.raises(DataError, match=r"line 3, label: 'x'"):
        delimited.parse_csv(label_bad, tmp_path, CsvOptions())


def test_csv_error_line_in_a_later_pandas_chunk(tmp_path):
    """parse_csv reads 200,000 rows per pandas chunk: a bad cell in the second chunk keeps its line."""
    n = 200_010
    body = b"".join([b"1,2,3\n" * 200_004, b"0,zz,1\n", b"1,2,3\n" * (n - 200_005)])
    path = _write(tmp_path / "big.csv", body)
    with pytest.raises(DataError, match=r"line 200005, column 2: 'zz'"):
        delimited.parse_csv(path, tmp_path, CsvOptions())
    good = _write(tmp_path / "good.csv", b"1,2,3\n" * 200_001 + b"0,4,5\n")
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        report = delimited.parse_csv(good, Path(tmp), CsvOptions(expected_rows=200_002))
        X, y = _read_folder(Path(tmp))
        assert report.rows == 200_002 and X.shape == (200_002, 2)
        np.testing.assert_array_equal(X[-1], [4, 5])
        assert y[-1] == 0 and y[:-1].min() == 1


def test_csv_row_count_mismatch(tmp_path):
    path = _write(tmp_path / "n.csv", b"1,2\n0,3\n")
    with pytest.raises(DataError, match=r"2 rows, but the registry says this file has 3"):
        delimited.parse_csv(path, tmp_path, CsvOptions(expected_rows=3))


# ------------------------------------------------------------------ helpers of the compiled module

def test_count_block_and_format_rows_round_trip(tmp_path):
    assert _svmlight.count_block(np.frombuffer(b"1 1:2 3:4\n\n5:6", dtype=np.uint8)) == (2, 3)
    X = np.array([[0.1, -2.0, 3e-20], [np.float32(0.7), 0.0, -0.0]])
    y = np.array([1.0, -1.0])
    text = _svmlight.format_rows(X, y, b"%.0f", b"%.18e", True, b" ")
    assert text.splitlines()[0].startswith(b"1 1:1.000000000000000056e-01 2:")
    X_ref, y_ref = load_svmlight_file(io.BytesIO(text), n_features=3, zero_based=False)
    np.testing.assert_array_equal(X_ref.toarray(), X)       # %.18e round-trips a double exactly
    X2, y2, _ = _parse_text(tmp_path, text, n_features=3, base=1)
    np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, y)


# ------------------------------------------------------------------ synthetic replicas (light)

def test_synthetic_generate_prefix_and_bayes_error(tmp_path):
    from kernelbench.data import synthetic

    spec = synthetic.SyntheticSpec(shape="susy", n=3000, seed=4)
    X, y = synthetic.generate(spec, 0, 3000)
    X_short, y_short = synthetic.generate(spec, 0, 1000)
    X_mid, y_mid = synthetic.generate(spec, 0, 500, start=1200)
    np.testing.assert_array_equal(X_short, X[:1000])
    np.testing.assert_array_equal(y_mid, y[1200:1700])
    np.testing.assert_array_equal(X_mid, X[1200:1700])
    X_test, _ = synthetic.generate(spec, 1, 1000)
    assert not np.array_equal(X_test, X[:1000])                              # test rows: another stream
    assert np.array_equal(X, X.astype(np.float32).astype(np.float64))        # float32 values
    # x determines z: low-level features are z (or exp(z/2) for every third latent dim)
    latent = synthetic.SHAPES["susy"].latent
    z = X[:, :latent].copy()
    momenta = [i for i in range(latent) if i % 3 == 0]
    z[:, momenta] = 2.0 * np.log(z[:, momenta])
    clean = synthetic.decision(z) > 0
    noiseless_X, noiseless_y = synthetic.generate(synthetic.SyntheticSpec(shape="susy", n=3000, seed=4, noise=0.0), 0, 3000)
    np.testing.assert_array_equal(noiseless_X, X)                            # noise only flips labels
    assert np.mean(noiseless_y != clean) < 0.002                             # float32 rounding at the boundary
    flips = np.mean(y != noiseless_y)
    assert abs(flips - spec.resolved().noise) < 0.03                          # Bayes error = noise (0.2)


def test_synthetic_replica_files_round_trip_through_the_loader(tmp_path, monkeypatch):
    from kernelbench.data import synthetic

    spec = synthetic.SyntheticSpec(shape="susy", n=3000, n_test=500, seed=2)
    X_tr, y_tr, X_te, y_te, _ = synthetic.make(spec)
    (path,) = synthetic.write_files(spec, tmp_path / "clean", defects=0, progress=False)
    ds = load_dataset(path=path, test="none", progress=False)
    np.testing.assert_array_equal(np.asarray(ds.X_train), np.vstack([X_tr, X_te]))
    np.testing.assert_array_equal(ds.y_train, np.concatenate([y_tr, y_te]))
    assert ds.provenance["files"][0]["repairs"] == {}
    assert ds.provenance["synthetic"]["bayes_error"] == 0.2
    # with the published defect (a value glued to the next index), read with the registry's width
    (bad,) = synthetic.write_files(spec, tmp_path / "defects", defects=3, progress=False)
    side = json.loads(Path(str(bad) + synthetic.SIDECAR_SUFFIX).read_text())
    lines = side["defects"]["missing_separator"]
    X, y, report = _parse_file(bad, n_features=18, base=1)
    np.testing.assert_array_equal(X, np.vstack([X_tr, X_te]))
    np.testing.assert_array_equal(y, np.concatenate([y_tr, y_te]))
    assert report.repairs == {"missing_separator": 3}
    assert report.first_line == {"missing_separator": min(lines)}


# ------------------------------------------------------------------ fixed defects of the rewrite (regressions)

def test_float32_value_beyond_range_is_refused_not_inf(tmp_path):
    """1e39 is finite as float64 but inf as float32: refused like any non-finite value."""
    text = b"1 1:1 2:1\n-1 1:2 2:1e39\n"
    X, _, _ = _parse_text(tmp_path, text, base=1)
    assert X[1, 1] == 1e39
    for dense in (True, False):
        with pytest.raises(DataError, match=r"data row 2 .*beyond the range of float32"):
            _parse_text(tmp_path, text, base=1, dense=dense, dtype="float32")
    X, _, _ = _parse_text(tmp_path, b"1 1:3.4028235e38\n", base=1, dtype="float32")    # float32's max: kept
    assert X[0, 0] == np.finfo(np.float32).max
    csv = _write(tmp_path / "big.csv", b"1,2,3\n1e39,4,5\n0,4,-1e39\n")
    with pytest.raises(DataError, match=r"line 3 .*beyond the range of float32"):   # the label may be big
        delimited.parse_csv(csv, tmp_path, CsvOptions(dtype="float32"))


@pytest.mark.parametrize("dense", [None, False])
def test_auto_base_with_given_width_refuses_an_index_past_it(tmp_path, dense):
    """Auto base and n_features=3: `0:` makes the file zero-based, so index 3 is past the width
    (scikit-learn refuses it too); it must not be written past the array's end."""
    text = b"1 0:1 3:2\n-1 1:1\n"
    with pytest.raises(ValueError):
        load_svmlight_file(io.BytesIO(text), n_features=3, zero_based="auto")
    with pytest.raises(DataError, match=r"feature index 3 .*outside the 3 features"):
        _parse_text(tmp_path, text, n_features=3, base=-1, dense=dense)
    X, _, _ = _parse_text(tmp_path, b"1 1:1 3:2\n-1 2:1\n", n_features=3, base=-1, dense=dense)   # one-based
    X = X.toarray() if sp.issparse(X) else X
    np.testing.assert_array_equal(X, [[1, 0, 2], [0, 1, 0]])


def test_registry_checksum_change_is_noticed_for_a_stamped_cached_file(tmp_path, monkeypatch):
    """A file verified (stamped) and cached under one registry sha256 is refused once the registry
    says another: the stamp records what the file was, not what the registry now expects."""
    text = _rows(40)
    sha = hashlib.sha256(text).hexdigest()
    path = _registry(tmp_path, monkeypatch, text, sha=sha, n=40)
    load_dataset("toy", test="none", progress=False)                       # stamped and cached
    reg = tmp_path / "registry.yaml"
    reg.write_text(reg.read_text().replace(sha, "4" * 64))
    with pytest.raises(DataError, match="Checksum mismatch") as err:
        load_dataset("toy", test="none", progress=False)
    assert "4" * 64 in str(err.value) and sha in str(err.value) and str(path) in str(err.value)


def test_builtin_dataset_honours_float32():
    ds = load_dataset("digits86", dtype="float32", progress=False)
    assert ds.X_train.dtype == np.float32 and ds.X_test.dtype == np.float32
    ref = load_dataset("digits86", progress=False)
    np.testing.assert_array_equal(ds.X_train, ref.X_train.astype(np.float32))
