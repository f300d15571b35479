"""Data files -> arrays, parsed once and memory-mapped after: the parsed-array cache.

Each format has its parser, streamed (blocks.py: decompression on one thread, parsing on another,
rows written to the cache as they are produced, so a first load costs about one decompression):
svmlight.py (dense up to 300 features, else CSR with int32 indices), delimited.py (CSV, dense),
qm7.py (the QM7 .mat file) and tables.py (.npy, .npz, Parquet); formats.py picks a file's parser.
X is float64, or float32 when asked (`dataset.dtype: float32`: half the memory).

Cache: <cache>/parsed/<key>-<options hash>/ holds X.npy (or X_data/X_indices/X_indptr/X_shape.npy),
y.npy and meta.json (source, sha256, rows, repairs, parse time). Entries are built in a temporary
folder under a file lock and renamed into place, loaded with allow_pickle=False and mmap_mode="r":
a second load is a read-only memory map.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kernelbench.errors import DataError

from .blocks import ParseReport
from .local import cache_lock, data_dirs

PARSER_VERSION = 2            # bump to invalidate parsed caches when parsing changes


def load_arrays(folder: Path):
    """(X, y, meta) of a cache entry, as read-only memory maps; never unpickles."""
    meta = json.loads((folder / "meta.json").read_text())

    def ld(name):
        return np.load(folder / name, mmap_mode="r", allow_pickle=False)

    if meta["sparse"]:
        shape = tuple(int(s) for s in np.load(folder / "X_shape.npy", allow_pickle=False))
        X = sp.csr_matrix((ld("X_data.npy"), ld("X_indices.npy"), ld("X_indptr.npy")), shape=shape, copy=False)
    else:
        X = ld("X.npy")
    return X, ld("y.npy"), meta


def parse_cached(path: Path, *, key: str, parse, options: dict, progress: bool = False):
    """(X, y, meta) of one file: from the cache when present, else `parse(folder, progress)` writes the
    arrays into a temporary folder (returning a ParseReport) that is renamed into place.

    A cache that cannot be written (read-only, full disk) still yields the data: the parse then
    runs in a temporary folder outside the cache."""
    cache = data_dirs()["cache"]
    opt_hash = hashlib.sha1(json.dumps({**options, "v": PARSER_VERSION}, sort_keys=True).encode()).hexdigest()[:12]
    safe_key = "".join(c if c.isalnum() or c in "._-" else "_" for c in key)[:120]
    folder = cache / "parsed" / f"{safe_key}-{opt_hash}"
    if (folder / "meta.json").is_file():
        try:
            return load_arrays(folder)
        except (OSError, ValueError, KeyError):
            pass  # damaged entry: re-parse below
    try:
        lock = cache_lock(cache, f"parsed-{folder.name}")
        lock.__enter__()
    except DataError:
        return _parse_uncached(path, parse, options, progress)
    try:
        if (folder / "meta.json").is_file():
            try:
                return load_arrays(folder)
            except (OSError, ValueError, KeyError):
                shutil.rmtree(folder, ignore_errors=True)
        tmp = cache / "parsed" / f".tmp-{folder.name}-{uuid.uuid4().hex[:8]}"
        try:
            tmp.mkdir(parents=True)
        except OSError:
            return _parse_uncached(path, parse, options, progress)
        try:
            report = parse(tmp, progress)
            _write_meta(tmp, path, key, options, report)
            if folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
            os.replace(tmp, folder)
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, DataError):
                raise
            return _parse_uncached(path, parse, options, progress)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    finally:
        lock.__exit__(None, None, None)
    return load_arrays(folder)


def _write_meta(folder: Path, path, key, options, report: ParseReport):
    meta = {"source": str(path), "key": key, "options": options, "sparse": (folder / "X_data.npy").is_file(),
            "parse": report.__dict__}
    (folder / "meta.json").write_text(json.dumps(meta, indent=1))


def _parse_uncached(path, parse, options, progress):
    """Parse into a private temporary folder (the cache is not writable); the arrays are read
    into memory and the folder removed."""
    with tempfile.TemporaryDirectory(prefix="kernelbench-parse-") as tmp:
        report = parse(Path(tmp), progress)
        _write_meta(Path(tmp), path, "", options, report)
        X, y, meta = load_arrays(Path(tmp))
        if sp.issparse(X):
            X = sp.csr_matrix((np.array(X.data), np.array(X.indices), np.array(X.indptr)), shape=X.shape)
        else:
            X = np.array(X)
        return X, np.array(y), meta
