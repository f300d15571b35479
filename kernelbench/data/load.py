"""Parse dataset files into arrays, cache them as .npy memory maps, make train/test parts.

Representation (one rule, documented in DESIGN.md §5 terms):
  * svmlight files with at most DENSE_MAX_FEATURES (300) features -> dense float64 ndarray
    (every benchmark set here except rcv1, epsilon, mnist, mnist8m, cifar10);
  * svmlight files with more features -> scipy.sparse.csr_matrix, float64, int32 indices/indptr
    (scikit-learn 1.9's load_svmlight_file returns int64 indices, which SVC refuses);
  * CSV files and the builtin digits -> dense float64.
  * y is float64, the raw labels as written in the file (e.g. -1/1, 0/1, 1/2, regression targets).

Parsed arrays are cached under <cache>/parsed/<key>/ as .npy files (CSR as data/indices/indptr/shape),
keyed by the file's verified sha256, or by (name, size, mtime) for files without a known sha256,
plus the parse options. They are written to a temporary folder under a file lock and renamed into
place, and loaded with allow_pickle=False and mmap_mode="r": a second load is a read-only memory map.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kernelbench.errors import DataError

from .fetch import (DECOMPRESSION_ERRORS, cache_lock, compression_of, corrupt_error, data_dirs, fetch_file,
                    open_decompressed, verify_file)
from .registry import DatasetSpec, FileSpec, get_spec

DENSE_MAX_FEATURES = 300
MAX_INFERRED_CLASSES = 20     # user files: <= this many integer labels -> multiclass, else regression
PARSER_VERSION = 1            # bump to invalidate parsed caches when parsing changes
_INT32_MAX = np.iinfo(np.int32).max
_BASE_TXT = {True: "0", False: "1", "auto": "0- or 1"}


@dataclass
class Dataset:
    name: str                 # registry name or the user's file path
    task: str                 # "binary" | "multiclass" | "regression"
    X_train: object           # np.ndarray | scipy.sparse.csr_matrix, float64
    y_train: np.ndarray       # float64 raw labels as in the file
    X_test: object = None     # None when there is no test part
    y_test: np.ndarray | None = None
    description: str = ""     # one line: where the data came from, and caveats

    @property
    def n_train(self) -> int:
        return int(self.X_train.shape[0])

    @property
    def n_test(self) -> int:
        return 0 if self.X_test is None else int(self.X_test.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X_train.shape[1])


# ------------------------------------------------------------------ parsing

def _to_csr32(X) -> sp.csr_matrix:
    X = sp.csr_matrix(X)
    if X.nnz <= _INT32_MAX and X.shape[1] <= _INT32_MAX:
        X.indices = np.asarray(X.indices, dtype=np.int32)
        X.indptr = np.asarray(X.indptr, dtype=np.int32)
    return X


def _find_bad_svmlight_line(path: Path, comp: str, member, n_features, zero_based) -> tuple[int, str, str] | None:
    """Locate the first line the svmlight parser rejects: (line number, line text, parser message).

    Uses scikit-learn's own parser on blocks of lines, then on single lines: no second parser.
    Only runs after a parse failed.
    """
    from sklearn.datasets import load_svmlight_file

    def fails(lines):
        try:
            load_svmlight_file(io.BytesIO(b"".join(lines)), n_features=n_features, zero_based=zero_based)
            return None
        except (ValueError, OverflowError) as exc:   # OverflowError: a feature index >= 2**31
            return str(exc)

    block, start, lineno = [], 1, 0
    try:
        with open_decompressed(path, comp, member) as fh:
            for line in fh:
                lineno += 1
                block.append(line if line.endswith(b"\n") else line + b"\n")
                if len(block) >= 2000:
                    hit = _scan_block(block, start, fails)
                    if hit:
                        return hit
                    block, start = [], lineno + 1
            return _scan_block(block, start, fails) if block else None
    except DECOMPRESSION_ERRORS:
        return None


def _scan_block(block, start, fails):
    if not fails(block):
        return None
    for i, line in enumerate(block):
        msg = fails([line])
        if msg:
            return start + i, line.decode("utf-8", "replace").strip()[:120], msg
    return None


def _parse_svmlight(path: Path, member, *, n_features, zero_based, dense):
    from sklearn.datasets import load_svmlight_file

    comp = compression_of(path)
    try:
        with open_decompressed(path, comp, member) as fh:
            X, y = load_svmlight_file(fh, n_features=n_features, zero_based=zero_based, dtype=np.float64)
    except DataError:
        raise
    except (ValueError, OverflowError) as exc:   # OverflowError: a feature index >= 2**31
        hit = _find_bad_svmlight_line(path, comp, member, n_features, zero_based)
        if hit:
            lineno, text, msg = hit
            raise DataError(
                f"{path}: line {lineno} is not valid svmlight/LIBSVM format ({msg}): {text!r}. Each line must be "
                f"'<numeric label> <index>:<value> ...' with {_BASE_TXT.get(zero_based, '1')}-based, increasing "
                f"feature indices{f' up to {n_features}' if n_features else ''}. Fix or remove that line."
            ) from None
        raise DataError(f"{path}: not valid svmlight/LIBSVM format ({exc}). Fix the file.") from None
    except DECOMPRESSION_ERRORS as exc:
        raise corrupt_error(path, exc, comp) from None
    if X.shape[0] == 0:
        raise DataError(f"{path}: the file holds no data rows (empty, or only comments/blank lines). "
                        "Replace it with a non-empty svmlight file.")
    bad = np.flatnonzero(~np.isfinite(X.data))
    if bad.size:
        row = int(np.searchsorted(X.indptr, bad[0], side="right")) - 1
        raise DataError(f"{path}: data row {row + 1} holds a NaN or infinite feature value "
                        f"({X.data[bad[0]]}). Fix or remove that row; missing values are not supported.")
    _check_finite_labels(path, y)
    if dense is None:
        dense = X.shape[1] <= DENSE_MAX_FEATURES
    X = X.toarray() if dense else _to_csr32(X)
    return X, np.asarray(y, dtype=np.float64)


def _check_finite_labels(path, y):
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        raise DataError(f"{path}: data row {int(bad[0]) + 1} has a NaN or infinite label. Fix or remove that row.")


def _csv_has_header(path: Path, member, delimiter: str) -> bool:
    try:
        with open_decompressed(path, None, member) as fh:
            first = fh.readline().decode("utf-8", "replace")
    except DECOMPRESSION_ERRORS:
        return False
    tokens = [t.strip() for t in first.strip().split(delimiter)]
    for t in tokens:
        try:
            float(t)
        except ValueError:
            if t:
                return True
    return False


def _parse_csv(path: Path, member, *, label_column: int, header_rows: int, delimiter: str):
    import pandas as pd

    comp = compression_of(path)
    try:
        with open_decompressed(path, comp, member) as fh:
            frame = pd.read_csv(fh, header=None, skiprows=header_rows, sep=delimiter, low_memory=False)
    except DataError:
        raise
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: the CSV file holds no data rows. Replace it with a non-empty file.") from None
    except pd.errors.ParserError as exc:
        raise DataError(f"{path}: not a valid CSV file ({str(exc).strip()}). Every line needs the same number of "
                        f"'{delimiter}'-separated fields; fix that line.") from None
    except DECOMPRESSION_ERRORS as exc:
        raise corrupt_error(path, exc, comp) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot read as CSV ({exc}). Fix the file.") from None
    if frame.shape[0] == 0:
        raise DataError(f"{path}: the CSV file holds no data rows. Replace it with a non-empty file.")
    if frame.shape[1] <= label_column or frame.shape[1] < 2:
        raise DataError(f"{path}: {frame.shape[1]} column(s); need the label in column {label_column} and at least "
                        "one feature column. Check the delimiter and the label column.")
    for col in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[col].dtype):
            conv = pd.to_numeric(frame[col], errors="coerce")
            bad = np.flatnonzero(conv.isna().to_numpy() & frame[col].notna().to_numpy())
            if bad.size:
                what = "label" if col == label_column else f"column {col + 1}"
                raise DataError(
                    f"{path}: line {int(bad[0]) + 1 + header_rows}, {what}: {str(frame[col].iloc[bad[0]])[:40]!r} is "
                    "not a number. Every value (labels included) must be numeric; fix that line"
                    + (" (or remove a header line)" if bad[0] == 0 else "") + "."
                )
            frame[col] = conv
    values = frame.to_numpy(dtype=np.float64)
    bad_rows = np.flatnonzero(~np.isfinite(values).all(axis=1))
    if bad_rows.size:
        raise DataError(f"{path}: line {int(bad_rows[0]) + 1 + header_rows} holds a missing, NaN or infinite value. "
                        "Fix or remove that line; missing values are not supported.")
    y = np.ascontiguousarray(values[:, label_column])
    X = np.ascontiguousarray(np.delete(values, label_column, axis=1))
    return X, y


# ------------------------------------------------------------------ parsed-array cache

def _save_arrays(folder: Path, X, y, meta: dict) -> None:
    if sp.issparse(X):
        np.save(folder / "X_data.npy", X.data)
        np.save(folder / "X_indices.npy", X.indices)
        np.save(folder / "X_indptr.npy", X.indptr)
        np.save(folder / "X_shape.npy", np.asarray(X.shape, dtype=np.int64))
        meta["sparse"] = True
    else:
        np.save(folder / "X.npy", np.ascontiguousarray(X, dtype=np.float64))
        meta["sparse"] = False
    np.save(folder / "y.npy", np.asarray(y, dtype=np.float64))
    (folder / "meta.json").write_text(json.dumps(meta, indent=1))


def _load_arrays(folder: Path):
    meta = json.loads((folder / "meta.json").read_text())

    def ld(name):
        return np.load(folder / name, mmap_mode="r", allow_pickle=False)

    if meta["sparse"]:
        shape = tuple(int(s) for s in np.load(folder / "X_shape.npy", allow_pickle=False))
        X = sp.csr_matrix((ld("X_data.npy"), ld("X_indices.npy"), ld("X_indptr.npy")), shape=shape, copy=False)
    else:
        X = ld("X.npy")
    return X, ld("y.npy")


def parse_cached(path: Path, *, key: str, parse, options: dict, progress: bool = False):
    """Parsed arrays of one file, from the cache when present, else parsed and cached atomically."""
    cache = data_dirs()["cache"]
    opt_hash = hashlib.sha1(json.dumps({**options, "v": PARSER_VERSION}, sort_keys=True).encode()).hexdigest()[:12]
    safe_key = "".join(c if c.isalnum() or c in "._-" else "_" for c in key)[:120]
    folder = cache / "parsed" / f"{safe_key}-{opt_hash}"
    if (folder / "meta.json").is_file():
        try:
            return _load_arrays(folder)
        except (OSError, ValueError, KeyError):
            pass  # damaged entry: re-parse below
    with cache_lock(cache, f"parsed-{folder.name}"):
        if (folder / "meta.json").is_file():
            try:
                return _load_arrays(folder)
            except (OSError, ValueError, KeyError):
                shutil.rmtree(folder, ignore_errors=True)
        X, y = parse()
        tmp = cache / "parsed" / f".tmp-{folder.name}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir(parents=True)
        try:
            _save_arrays(tmp, X, y, {"source": str(path), "key": key, "options": options})
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
            os.replace(tmp, folder)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            return X, y   # cache not writable: still return the data
    return _load_arrays(folder)


def _file_key(path: Path, sha: str | None, label: str) -> str:
    if sha:
        return sha
    st = path.stat()
    real = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
    return f"{label}-{st.st_size}-{st.st_mtime_ns}-{real}"


# ------------------------------------------------------------------ registry files

def _load_registry_file(ds: DatasetSpec, fspec: FileSpec, *, progress: bool):
    path = fetch_file(ds, fspec, progress=progress)
    sha = verify_file(path, fspec)        # stamp hit after fetch_file: no re-hash
    member = fspec.member if compression_of(path) == "zip" else None
    if ds.format == "svmlight":
        dense = ds.d <= DENSE_MAX_FEATURES
        options = {"format": "svmlight", "n_features": ds.d, "zero_based": False, "dense": dense, "member": member}

        def parse():
            return _parse_svmlight(path, member, n_features=ds.d, zero_based=False, dense=dense)
    else:
        options = {"format": "csv", "member": member, **ds.csv}

        def parse():
            return _parse_csv(path, member, label_column=ds.csv["label_column"],
                              header_rows=ds.csv["header_rows"], delimiter=ds.csv["delimiter"])
    X, y = parse_cached(path, key=_file_key(path, sha, fspec.name), parse=parse, options=options, progress=progress)
    if X.shape[1] != ds.d:
        raise DataError(f"{path}: {X.shape[1]} feature columns, but the registry says dataset '{ds.name}' has "
                        f"{ds.d}. The file is not the registry's file: replace it.")
    if fspec.n is not None and X.shape[0] != fspec.n:
        raise DataError(f"{path}: {X.shape[0]} rows, but the registry says the {fspec.role} file of '{ds.name}' has "
                        f"{fspec.n}. The file is truncated or a different version: replace it with the file from "
                        f"{fspec.url or 'the mirror'}.")
    return path, X, y


def _load_builtin(ds: DatasetSpec):
    if ds.source == "sklearn_digits_8_vs_6":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
        keep = (y == 8) | (y == 6)
        # DSG paper's "MNIST 8 vs 6": 8 -> +1, 6 -> -1.
        return np.ascontiguousarray(X[keep], dtype=np.float64), np.where(y[keep] == 8, 1.0, -1.0)
    raise DataError(f"Dataset '{ds.name}': unknown builtin source {ds.source!r}. Fix the registry entry.")


# ------------------------------------------------------------------ user files

def _user_file(path) -> tuple[Path, object, np.ndarray, str]:
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataError(f"Data file {p} does not exist (or is not a file). Check the `path:` value.")
    stem = p.name.lower()
    for suffix in (".xz", ".bz2", ".gz"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    member = None
    if compression_of(p) == "zip":
        import zipfile

        try:
            names = zipfile.ZipFile(p).namelist()
        except zipfile.BadZipFile as exc:
            raise DataError(f"{p}: not a valid zip archive ({exc}). Replace the file.") from None
        if len(names) != 1:
            raise DataError(f"{p}: zip archive holds {len(names)} files; pass a single data file instead.")
        member = names[0]
        stem = member.lower()
    st = p.stat()
    key = _file_key(p, None, "user-" + p.name)
    if stem.endswith(".csv"):
        header_rows = 1 if _csv_has_header(p, member, ",") else 0
        note = "CSV, label in the first column" + (", first line taken as a header" if header_rows else "")
        X, y = parse_cached(p, key=key, options={"format": "csv", "header_rows": header_rows, "member": member,
                                                 "size": st.st_size},
                            parse=lambda: _parse_csv(p, member, label_column=0, header_rows=header_rows, delimiter=","))
    else:
        note = "svmlight/LIBSVM format"
        X, y = parse_cached(p, key=key, options={"format": "svmlight", "zero_based": "auto", "member": member},
                            parse=lambda: _parse_svmlight(p, member, n_features=None, zero_based="auto", dense=None))
    return p, X, y, note


def infer_task(y: np.ndarray) -> str:
    """2 distinct labels -> binary; <= MAX_INFERRED_CLASSES integer labels -> multiclass; else regression."""
    labels = np.unique(y)
    if labels.size == 2:
        return "binary"
    if labels.size <= MAX_INFERRED_CLASSES and np.all(labels == np.round(labels)):
        return "multiclass"
    return "regression"


# ------------------------------------------------------------------ labels and splits

def _fmt_labels(labels) -> str:
    shown = ", ".join(f"{v:g}" for v in labels[:8])
    return shown + (", ..." if len(labels) > 8 else "")


def check_labels(task: str, y_train, y_test, where: str) -> None:
    """Binary: exactly 2 labels; classification: at least 2; test labels must occur in training."""
    if task not in ("binary", "multiclass", "regression"):
        raise DataError(f"Unknown task {task!r}; use binary, multiclass or regression.")
    if task == "regression":
        return
    labels = np.unique(y_train)
    if labels.size < 2:
        raise DataError(f"{where}: the training labels hold a single class ({_fmt_labels(labels)}); "
                        f"{task} classification needs at least two. Use a file with both classes "
                        "(or a larger subsample).")
    if task == "binary" and labels.size != 2:
        raise DataError(f"{where}: declared binary, but the training labels hold {labels.size} distinct values "
                        f"({_fmt_labels(labels)}). Use task='multiclass' or 'regression', or relabel the file "
                        "to two classes.")
    if y_test is not None:
        extra = np.setdiff1d(np.unique(y_test), labels)
        if extra.size:
            raise DataError(f"{where}: the test labels include {_fmt_labels(extra)}, which never occur in the "
                            f"training labels ({_fmt_labels(labels)}). Check that train and test files match.")


def _take(X, idx):
    if sp.issparse(X):
        return _to_csr32(X[idx])
    return np.ascontiguousarray(X[idx])


def split_fraction(X, y, task: str, fraction: float, seed: int, where: str = ""):
    """Seeded split of (X, y): stratified for classification. Rows keep their file order."""
    from sklearn.model_selection import train_test_split

    n = y.shape[0]
    idx = np.arange(n)
    stratify = None if task == "regression" else np.asarray(y)
    try:
        tr, te = train_test_split(idx, test_size=fraction, random_state=seed, stratify=stratify)
    except ValueError as exc:
        raise DataError(f"{where + ': ' if where else ''}"
                        f"Cannot make a {'stratified ' if stratify is not None else ''}{fraction:g} test split "
                        f"of {n} rows ({exc}). Use a larger file, a different fraction, or test='none'.") from None
    tr.sort()
    te.sort()
    return _take(X, tr), np.ascontiguousarray(y[tr]), _take(X, te), np.ascontiguousarray(y[te])


def _parse_test(test):
    if isinstance(test, str):
        t = test.strip().lower()
        if t in ("official", "none"):
            return t
        try:
            test = float(t)
        except ValueError:
            test = None
    if isinstance(test, bool) or not isinstance(test, (int, float)) or not 0 < float(test) < 1:
        raise DataError(f"test={test!r} is not allowed: use 'official', 'none', or a fraction in (0, 1) such as 0.2.")
    return float(test)


def _concat_features(X_a, X_b):
    """Give train and test the same number of columns (the larger)."""
    d = max(X_a.shape[1], X_b.shape[1])

    def pad(X):
        if X.shape[1] == d:
            return X
        if sp.issparse(X):
            X = X.copy()
            X.resize((X.shape[0], d))
            return _to_csr32(X)
        return np.hstack([X, np.zeros((X.shape[0], d - X.shape[1]))])

    return pad(X_a), pad(X_b)


# ------------------------------------------------------------------ public entry point

def load_dataset(name=None, *, path=None, test="official", seed=0, task=None, progress=True) -> Dataset:
    """Load a registry dataset (`name`) or a user's file (`path`) with a test part.

    test: "official" (the registry's test file, else its split protocol, else a seeded 25% split),
          a fraction in (0, 1) (seeded split of the training file, stratified for classification),
          or "none".
    task: overrides the registry's task (e.g. 'regression' for a multi-class set) or the inferred one.
    """
    if (name is None) == (path is None):
        raise DataError("Give exactly one of a dataset name (a registry key) or path= (your own data file).")
    test = _parse_test(test)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise DataError(f"seed={seed!r} must be an integer.")
    seed = int(seed)
    notes = []
    X_te = y_te = None
    split_protocol = {"protocol": "stratified", "test_fraction": 0.25}
    if name is not None:
        ds = get_spec(name)
        label = ds.name
        notes.append(ds.description)
        if ds.note:
            notes.append(ds.note)
        split_protocol = ds.split
        if ds.format == "builtin":
            X_tr, y_tr = _load_builtin(ds)
            where = f"dataset '{ds.name}'"
        else:
            p_tr, X_tr, y_tr = _load_registry_file(ds, ds.files["train"], progress=progress)
            where = f"dataset '{ds.name}' ({p_tr})"
            used = [ds.files["train"]]
            if test == "official" and "test" in ds.files:
                p_te, X_te, y_te = _load_registry_file(ds, ds.files["test"], progress=progress)
                where = f"dataset '{ds.name}' ({p_tr}, {p_te})"
                used.append(ds.files["test"])
            unverified = [f.name for f in used if f.sha256 is None]
            if unverified:
                notes.append(f"sha256 unknown for {', '.join(unverified)}: accepted unverified")
        resolved_task = task or ds.task
        if task and task != ds.task:
            notes.append(f"task overridden: {ds.task} -> {task}")
    else:
        p, X_tr, y_tr, fmt_note = _user_file(path)
        label = str(path)
        where = str(p)
        resolved_task = task or infer_task(y_tr)
        notes.append(f"user file {p} ({fmt_note}); task {resolved_task}" + ("" if task else " (inferred; pass task= to override)"))

    if X_te is not None:
        X_tr, X_te = _concat_features(X_tr, X_te)
        check_labels(resolved_task, y_tr, y_te, where)
        notes.append(f"test = official test file ({X_te.shape[0]} rows)")
    elif test == "none":
        check_labels(resolved_task, y_tr, None, where)
        notes.append("no test part")
    else:
        check_labels(resolved_task, y_tr, None, where)
        if test == "official":
            if split_protocol["protocol"] == "tail":
                k = int(split_protocol["n_test"])
                if k >= y_tr.shape[0]:
                    raise DataError(f"{where}: {y_tr.shape[0]} rows, but the split protocol takes the last {k} as "
                                    "the test set. Use test=<fraction> instead.")
                X_te, y_te = X_tr[-k:], y_tr[-k:]
                X_tr, y_tr = X_tr[:-k], y_tr[:-k]
                check_labels(resolved_task, y_tr, y_te, where)
                notes.append(f"test = the last {k} rows (the dataset's official protocol)")
            else:
                frac = float(split_protocol.get("test_fraction", 0.25))
                X_tr, y_tr, X_te, y_te = split_fraction(X_tr, y_tr, resolved_task, frac, seed, where)
                kind = "stratified " if resolved_task != "regression" else ""
                notes.append(f"no official test file: test = seeded {kind}{frac:.0%} split of the training file "
                             f"(seed {seed})")
        else:
            X_tr, y_tr, X_te, y_te = split_fraction(X_tr, y_tr, resolved_task, test, seed, where)
            kind = "stratified " if resolved_task != "regression" else ""
            notes.append(f"test = seeded {kind}{test:.0%} split of the training file (seed {seed})")
    description = "; ".join(n.rstrip(".") for n in notes if n)
    return Dataset(name=label, task=resolved_task, X_train=X_tr, y_train=np.asarray(y_tr), X_test=X_te,
                   y_test=None if y_te is None else np.asarray(y_te), description=description)


def with_description(ds: Dataset, extra: str) -> Dataset:
    return replace(ds, description=f"{ds.description}; {extra}" if ds.description else extra)
