"""Property-based fuzzing of the dataset loaders with bad input, through the public API.

Every generated file (svmlight or CSV, plain or gz/bz2/xz, whole or cut off, random bytes, empty)
either loads as valid data or raises kernelbench.errors.DataError whose message names the file;
never another exception. A handful of representative cases also go through the CLI (exit 2, a
message naming the file, no traceback).
"""
from __future__ import annotations

import bz2
import gzip
import itertools
import lzma

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import assert_user_error, env_for, figure, kb
from kernelbench.data import load_dataset
from kernelbench.errors import DataError

SETTINGS = dict(deadline=None, derandomize=False, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
COMPRESS = {"": lambda b: b, ".gz": lambda b: gzip.compress(b, mtime=0), ".bz2": bz2.compress,
            ".xz": lzma.compress}
_counter = itertools.count()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KERNELBENCH_DATA", str(folder / "cache"))
        mp.setenv("KERNELBENCH_OFFLINE", "1")
        mp.delenv("KERNELBENCH_REGISTRY", raising=False)
        yield folder


# ------------------------------------------------------------------------------ strategies

NUM = st.one_of(st.integers(-3, 3).map(str), st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: f"{v:.4g}"),
                st.sampled_from(["nan", "NaN", "inf", "-inf", "1e400", "-1e400", "0", "1", "-1", "2", "+1",
                                 "1.5", "0x10", "1e-320", " "]))
WORD = st.sampled_from(["abc", "yes", "", "?", "NA", "1,5", "1:2", "#", "\x00", "é", "--", "1..2"])
LABEL = st.one_of(NUM, WORD)
INDEX = st.one_of(st.integers(0, 12), st.sampled_from([-1, 300, 301, 2**31 - 1, 2**31, 2**40, 10**7]))


@st.composite
def svmlight_line(draw):
    label = draw(LABEL)
    feats = draw(st.lists(st.tuples(INDEX, st.one_of(NUM, WORD)), max_size=5))
    if draw(st.booleans()):
        feats.sort()                                   # mostly well formed; sometimes unsorted
    toks = [label] + [f"{i}:{v}" for i, v in feats]
    if draw(st.integers(0, 9)) == 0:
        toks.insert(1, draw(st.sampled_from(["qid:1", "qid:x", ":3", "4:", "4", "4:5:6"])))
    line = " ".join(toks)
    if draw(st.integers(0, 9)) == 0:
        line += " # comment"
    return line


@st.composite
def svmlight_file(draw):
    """Mostly-valid svmlight text with injected faults (every fault kind is a small draw)."""
    n = draw(st.one_of(st.integers(0, 3), st.integers(8, 40)))
    kind = draw(st.sampled_from(["clean", "clean", "fuzzed", "labels"]))
    if kind == "fuzzed":
        lines = draw(st.lists(svmlight_line(), min_size=n, max_size=n))
    else:
        labels = draw(st.sampled_from([["-1", "1"], ["-1", "1"], ["-1", "1"], ["1"], ["0", "1", "2"], ["1", "2", "3", "4"], ["0.5", "1.5"],
                                       ["1", "-1", "abc"]]))
        lines = []
        for i in range(n):
            lab = labels[i % len(labels)] if kind == "clean" else draw(st.sampled_from(labels))
            feats = sorted(draw(st.sets(st.integers(1, 8), min_size=1, max_size=4)))
            lines.append(lab + " " + " ".join(f"{j}:{draw(st.floats(-5, 5, allow_nan=False)):.3g}" for j in feats))
        if lines and draw(st.booleans()):
            k = draw(st.integers(0, len(lines) - 1))
            lines[k] = draw(svmlight_line())            # one bad line among good ones
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n", "\r\n"]))
    data = text.encode("utf-8")
    if data and draw(st.integers(0, 5)) == 0:
        data = data[: draw(st.integers(0, len(data)))]   # truncated line
    return data


@st.composite
def csv_file(draw):
    ncol = draw(st.integers(1, 5))
    n = draw(st.one_of(st.integers(0, 3), st.integers(8, 30)))
    lines = []
    if draw(st.integers(0, 3)) == 0:
        lines.append(",".join(draw(st.sampled_from(["label", "x", "y", "1", ""])) for _ in range(ncol)))
    labels = draw(st.sampled_from([["-1", "1"], ["-1", "1"], ["1"], ["0", "1", "2"], ["0.25", "3.5", "7"], ["a", "b"]]))
    for i in range(n):
        width = ncol if draw(st.integers(0, 15)) else draw(st.integers(0, ncol + 2))
        cells = [labels[i % len(labels)]] + [f"{draw(st.floats(-9, 9, allow_nan=False)):.3g}" for _ in range(width - 1)]
        if cells and draw(st.integers(0, 15)) == 0:
            cells[draw(st.integers(0, len(cells) - 1))] = draw(st.one_of(NUM, WORD, st.just('"a\nb"')))
        lines.append(",".join(cells))
    data = ("\n".join(lines) + draw(st.sampled_from(["\n", ""]))).encode("utf-8")
    if data and draw(st.integers(0, 5)) == 0:
        data = data[: draw(st.integers(0, len(data)))]
    return data


def _write(folder, stem, data, suffix, cut=None):
    body = COMPRESS[suffix](data)
    if cut is not None and body:
        body = body[: max(0, min(len(body) - 1, cut))]   # a cut-off compressed (or plain) file
    path = folder / f"{next(_counter)}-{stem}{suffix}"
    path.write_bytes(body)
    return path


def _check(path, test, task, tally):
    """The property: valid data, or a DataError naming the file."""
    try:
        ds = load_dataset(path=str(path), test=test, task=task, progress=False)
    except DataError as exc:
        assert str(path) in str(exc), f"message does not name the file: {exc}"
        tally["DataError"] += 1
        return
    tally["loaded"] += 1
    for X, y in ((ds.X_train, ds.y_train), (ds.X_test, ds.y_test)):
        if X is None:
            continue
        assert X.ndim == 2 and X.shape[0] == y.shape[0] > 0
        vals = X.data if sp.issparse(X) else np.asarray(X)
        assert np.isfinite(vals).all() and np.isfinite(y).all()
    assert ds.task in ("binary", "multiclass", "regression")
    if ds.task == "binary":
        assert np.unique(ds.y_train).size == 2
    if ds.task in ("binary", "multiclass"):
        assert np.unique(ds.y_train).size >= 2


TEST = st.sampled_from([0.25, 0.5, "none"])
TASK = st.sampled_from([None, None, "binary", "multiclass", "regression"])
SUFFIX = st.sampled_from(list(COMPRESS))
CUT = st.one_of(st.none(), st.none(), st.integers(0, 200))


@settings(max_examples=700, **SETTINGS)
@given(data=svmlight_file(), suffix=SUFFIX, cut=CUT, test=TEST, task=TASK)
def test_svmlight_files_load_or_raise_data_error(workdir, data, suffix, cut, test, task):
    _check(_write(workdir, "train.svm", data, suffix, cut), test, task, figure("fuzz svmlight"))


@settings(max_examples=700, **SETTINGS)
@given(data=csv_file(), suffix=SUFFIX, cut=CUT, test=TEST, task=TASK)
def test_csv_files_load_or_raise_data_error(workdir, data, suffix, cut, test, task):
    _check(_write(workdir, "train.csv", data, suffix, cut), test, task, figure("fuzz csv"))


@settings(max_examples=400, **SETTINGS)
@given(data=st.binary(max_size=300), stem=st.sampled_from(["x.svm", "x.csv", "x"]), suffix=SUFFIX,
       raw=st.booleans(), test=TEST)
def test_random_bytes_load_or_raise_data_error(workdir, data, stem, suffix, raw, test):
    """Random bytes, written as-is under a compressed name (a corrupt archive) or compressed."""
    if raw:
        path = workdir / f"{next(_counter)}-{stem}{suffix}"
        path.write_bytes(data)
    else:
        path = _write(workdir, stem, data, suffix)
    _check(path, test, None, figure("fuzz random bytes"))


@settings(max_examples=300, **SETTINGS)
@given(base=st.sampled_from(["svm", "csv"]), suffix=st.sampled_from([".gz", ".bz2", ".xz"]),
       frac=st.floats(0.0, 0.999), test=TEST)
def test_cut_off_compressed_files_raise_data_error(workdir, base, suffix, frac, test):
    """A valid file, compressed, then cut at any byte: a DataError, never garbage or a crash."""
    rows = [f"{1 if i % 2 else -1} 1:{i / 7:.3f} 2:{(i * 3) % 5}" for i in range(60)] if base == "svm" else \
           [f"{1 if i % 2 else -1},{i / 7:.3f},{(i * 3) % 5}" for i in range(60)]
    data = ("\n".join(rows) + "\n").encode()
    body = COMPRESS[suffix](data)
    path = workdir / f"{next(_counter)}-cut.{base}{suffix}"
    path.write_bytes(body[: int(frac * len(body))])
    tally = figure("fuzz cut-off compressed")
    _check(path, test, None, tally)


def test_fuzz_case_count_reaches_2000():
    """Runs after the properties in file order; with -k/-p randomly it skips rather than lies."""
    total = sum(sum(c.values()) for name, c in FIGURES_ITEMS() if name.startswith("fuzz "))
    if total == 0:
        pytest.skip("the fuzz properties did not run in this session")
    assert total >= 2000, total


def FIGURES_ITEMS():
    from conftest import FIGURES
    return list(FIGURES.items())


# ------------------------------------------------------------------------------ known cases

CASES = {
    "nan_feature.svm": b"1 1:0.5\n-1 1:nan\n1 2:1\n-1 2:2\n",
    "inf_label.svm": b"1 1:0.5\ninf 1:1\n1 2:1\n-1 2:2\n",
    "word_label.svm": b"1 1:0.5\nyes 1:1\n1 2:1\n-1 2:2\n",
    "unsorted.svm": b"1 3:0.5 1:2\n-1 1:1\n1 2:1\n-1 2:2\n",
    "duplicate.svm": b"1 1:0.5 1:2\n-1 1:1\n1 2:1\n-1 2:2\n",
    "empty.svm": b"",
    "comments_only.svm": b"# nothing\n\n",
    "single_class.svm": b"1 1:0.5\n1 1:1\n1 2:1\n1 2:2\n",
    "text.csv": b"1,2,3\n-1,abc,2\n1,2,2\n-1,1,1\n",
    "ragged.csv": b"1,2,3\n-1,1\n1,2,2,4,5\n-1,1,1\n",
    "inf.csv": b"1,2,3\n-1,inf,2\n1,2,2\n-1,1,1\n",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_known_bad_files_raise_data_error_naming_the_file(tmp_path, monkeypatch, name):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    path = tmp_path / name
    path.write_bytes(CASES[name])
    with pytest.raises(DataError) as info:
        load_dataset(path=str(path), test=0.25, progress=False)
    assert str(path) in str(info.value)


def test_xz_cut_off_names_the_file_and_says_truncated(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    body = lzma.compress(b"".join(b"%d 1:%d\n" % (i % 2 * 2 - 1, i) for i in range(500)))
    path = tmp_path / "cut.svm.xz"
    path.write_bytes(body[: len(body) // 2])
    with pytest.raises(DataError, match="truncated or corrupt") as info:
        load_dataset(path=str(path), test=0.25, progress=False)
    assert str(path) in str(info.value)


# ------------------------------------------------------------------------------ through the CLI

CLI_CASES = {
    "nan_feature.svm": CASES["nan_feature.svm"],
    "word_label.svm": CASES["word_label.svm"],
    "empty.csv": b"",
    "text.csv": CASES["text.csv"],
    "three_labels.svm": b"".join(b"%d 1:%d 2:%d\n" % (i % 3, i, i % 5) for i in range(60)),
    "cut.svm.gz": gzip.compress(b"".join(b"%d 1:%d\n" % (i % 2 * 2 - 1, i) for i in range(400)), mtime=0)[:150],
}


DEFAULT_CLI = ("nan_feature.svm", "text.csv", "three_labels.svm", "cut.svm.gz")


@pytest.mark.parametrize("name", [n if n in DEFAULT_CLI else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(CLI_CASES)])
def test_bad_data_through_the_cli_is_exit_2_naming_the_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(CLI_CASES[name])
    config = tmp_path / "c.yaml"
    # three labels: a binary-only algorithm must refuse them (dsg would train softmax)
    algorithm = ("{name: bsgd, params: {budget: 10}}" if name == "three_labels.svm" else
                 "{name: dsg, params: {batch_size: 4, block_size: 4}}")
    config.write_text(f"name: fuzz\ndataset: {{path: {path}, test: 0.25}}\n"
                      f"algorithm: {algorithm}\nstop: {{iterations: 3}}\n")
    proc = kb("run", config, "--out", tmp_path / "out", "-q", env=env_for(tmp_path / "cache"))
    needle = str(path) if name != "three_labels.svm" else "multiclass"
    assert_user_error(proc, needle)
    figure("fuzz via CLI (exit 2, no traceback)")["cases"] += 1
