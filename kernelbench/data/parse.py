"""Data files -> arrays, streamed: decompression on one thread, parsing on another, results spooled
to the parsed-array cache as they are produced.

Representation (one rule):
  * svmlight files with at most DENSE_MAX_FEATURES (300) features -> dense ndarray (every benchmark
    set here except rcv1, epsilon, mnist, mnist8m, cifar10); more features -> scipy CSR with int32
    indices/indptr (scikit-learn's SVC refuses int64 indices);
  * CSV files -> dense; y is float64, the raw labels as written (-1/1, 0/1, 1/2, targets);
  * the QM7 .mat file (registry format qm7) -> dense upper triangles of its Coulomb matrices;
  * X is float64, or float32 when asked (`dataset.dtype: float32`: half the memory).

Reading: a background thread decompresses (xz, bz2, gz, zip: the codecs release the GIL) into a
short queue of blocks; this thread hashes each block (sha256 of the decompressed content) and parses
it -- svmlight with the compiled parser of _svmlight.pyx (nogil; scikit-learn's loader is the
reference it agrees with, value for value, in tests), CSV with pandas in chunks -- and writes the
rows to disk as they come. So a first load costs about one decompression, and memory stays a few
blocks above the arrays themselves. Defects with one reading are repaired and counted
(_svmlight.REPAIR_KINDS; `strict` refuses them); anything else is a DataError naming the line.

Cache: <cache>/parsed/<key>-<options hash>/ holds X.npy (or X_data/X_indices/X_indptr/X_shape.npy),
y.npy and meta.json (source, sha256, rows, repairs, parse time). Entries are built in a temporary
folder under a file lock and renamed into place, loaded with allow_pickle=False and mmap_mode="r":
a second load is a read-only memory map.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import queue
import shutil
import struct
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from tqdm import tqdm

from kernelbench.errors import DataError

from . import _svmlight
from .fetch import DECOMPRESSION_ERRORS, cache_lock, compression_of, corrupt_error, data_dirs, open_decompressed

DENSE_MAX_FEATURES = 300
PARSER_VERSION = 2            # bump to invalidate parsed caches when parsing changes
BLOCK_BYTES = 8 << 20         # decompressed bytes per block
QUEUE_BLOCKS = 4              # blocks decompressed ahead of the parser
PROGRESS_MIN_BYTES = 50 << 20 # files above this show a progress bar (on a terminal)
MAX_LINE_BYTES = 64 << 20     # a longer "line" is refused (a file without newlines)

_INT32_MAX = np.iinfo(np.int32).max
_STATUS = _svmlight.Status
_BASE_TXT = {1: "1-based", 0: "0-based", -1: "0- or 1-based"}
_REASONS = {
    _STATUS.ERR_LABEL: "the first token is not a numeric label (multi-label lines such as '1,2' "
                         "are not supported)",
    _STATUS.ERR_TOKEN: "a token is not <index>:<value>",
    _STATUS.ERR_INDEX: "a feature index is not a non-negative integer",
    _STATUS.ERR_VALUE: "a feature value is not a number",
    _STATUS.ERR_ORDER: "feature indices must be strictly increasing",
    _STATUS.ERR_AMBIGUOUS: "a value glued to the next index (or a missing index) that has no "
                             "unique reading",
}


@dataclass
class ParseReport:
    """What parsing one file found: written to the cache's meta.json and into run.json."""
    source: str
    sha256: str = ""
    rows: int = 0
    text_bytes: int = 0
    seconds: float = 0.0
    repairs: dict = field(default_factory=dict)        # kind -> lines repaired (only kinds seen)
    first_line: dict = field(default_factory=dict)     # kind -> first repaired line (1-based)

    def summary(self) -> str:
        """One line: the repairs, or '' when there were none."""
        if not self.repairs:
            return ""
        kinds = ", ".join(f"{n:,} {k.replace('_', ' ')} (first at line {self.first_line[k]:,})"
                          for k, n in self.repairs.items())
        return f"{Path(self.source).name}: repaired {kinds}"


# ------------------------------------------------------------------ reading blocks

class _Counted(io.RawIOBase):
    """A raw file that counts the (compressed) bytes read: the progress measure."""

    def __init__(self, path):
        self._fh = open(path, "rb")
        self.bytes = 0

    def readable(self):
        return True

    def seekable(self):
        return self._fh.seekable()

    def seek(self, offset, whence=0):
        return self._fh.seek(offset, whence)

    def tell(self):
        return self._fh.tell()

    def readinto(self, buffer):
        n = self._fh.readinto(buffer)
        self.bytes += n or 0
        return n

    def close(self):
        self._fh.close()
        super().close()


_END = object()


class BlockReader:
    """Decompressed blocks of a file, read ahead by a background thread.

    Iterate for (block, compressed bytes read so far); `close()` stops the thread early."""

    def __init__(self, path: Path, member=None, block_bytes: int | None = None):
        self.path = Path(path)
        self.comp = compression_of(self.path)
        self.size = self.path.stat().st_size
        self._raw = _Counted(self.path)
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUE_BLOCKS)
        self._stop = threading.Event()
        try:
            self._stream = open_decompressed(self.path, self.comp, member,
                                             raw=io.BufferedReader(self._raw, 1 << 20))
        except BaseException as exc:
            self._raw.close()
            if isinstance(exc, DECOMPRESSION_ERRORS) and not isinstance(exc, DataError):
                raise corrupt_error(self.path, exc, self.comp) from None
            raise
        self._thread = threading.Thread(target=self._fill, args=(block_bytes or BLOCK_BYTES,), daemon=True,
                                        name="kernelbench-decompress")
        self._thread.start()

    def _put(self, item):
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _fill(self, block_bytes):
        try:
            while not self._stop.is_set():
                block = self._stream.read(block_bytes)
                if not block:
                    break
                if not self._put((block, self._raw.bytes)):
                    return
            self._put(_END)
        except BaseException as exc:          # handed to the consumer, raised there
            self._put(exc)

    def __iter__(self):
        while True:
            item = self._queue.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                if isinstance(item, DataError):
                    raise item
                if isinstance(item, DECOMPRESSION_ERRORS):
                    raise corrupt_error(self.path, item, self.comp) from None
                raise item
            yield item

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)
        for closable in (self._stream, self._raw):
            try:
                closable.close()
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _progress(path: Path, size: int, show: bool):
    return tqdm(total=size, desc=f"parse {path.name}", unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, leave=False,
                disable=not (show and size >= PROGRESS_MIN_BYTES and sys.stderr.isatty()))


# ------------------------------------------------------------------ writing arrays

def _npy_header(dtype, shape) -> bytes:
    """A version-1.0 .npy header padded to 128 bytes (written last, over the placeholder)."""
    text = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (np.dtype(dtype).str, tuple(shape))
    body = text.encode("latin1")
    pad = 128 - 10 - len(body) - 1
    if pad < 0:
        raise ValueError(f"shape {shape} too large for the fixed .npy header")
    body += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body


class _DenseWriter:
    """Rows of a dense array appended to `path` (.npy) as they come; the header goes in at close."""

    def __init__(self, path: Path, width: int, dtype):
        self.path, self.width, self.dtype = path, width, np.dtype(dtype)
        self._fh = open(path, "wb")
        self._fh.write(b"\0" * 128)
        self.rows = 0

    def append(self, block: np.ndarray):
        np.ascontiguousarray(block, dtype=self.dtype).tofile(self._fh)
        self.rows += block.shape[0]

    def close(self):
        self._fh.seek(0)
        self._fh.write(_npy_header(self.dtype, (self.rows, self.width)))
        self._fh.close()

    def abort(self):
        """Close without a header (the folder is about to be removed)."""
        self._fh.close()


class _SparseSpool:
    """CSR pieces (row lengths, raw indices, values) spooled to disk until the shape is known."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._files = {name: open(folder / f"spool-{name}.bin", "wb") for name in ("nnz", "cols", "vals")}
        self.rows = 0
        self.nnz = 0

    def append(self, row_nnz, cols, vals):
        row_nnz.tofile(self._files["nnz"])
        cols.tofile(self._files["cols"])
        vals.tofile(self._files["vals"])
        self.rows += row_nnz.shape[0]
        self.nnz += cols.shape[0]

    def close(self):
        for fh in self._files.values():
            fh.close()

    def read(self, name, dtype):
        return np.fromfile(self.folder / f"spool-{name}.bin", dtype=dtype)

    def remove(self):
        for name in self._files:
            (self.folder / f"spool-{name}.bin").unlink(missing_ok=True)


# ------------------------------------------------------------------ svmlight

@dataclass
class SvmlightOptions:
    n_features: int | None = None     # None: from the file
    base: int = 1                     # 1 one-based (LIBSVM), 0 zero-based, -1 decide from the data
    dense: bool | None = None         # None: dense when the width is at most DENSE_MAX_FEATURES
    dtype: str = "float64"
    strict: bool = False              # refuse any defect instead of repairing it
    expected_rows: int | None = None  # the registry's row count


def parse_svmlight(path: Path, folder: Path, options: SvmlightOptions, *, member=None,
                   progress: bool = False) -> ParseReport:
    """Parse an svmlight/LIBSVM file into cache files under `folder` (X*.npy, y.npy)."""
    path = Path(path)
    report = ParseReport(source=str(path))
    repairs = np.zeros(len(_svmlight.REPAIR_KINDS), dtype=np.int64)
    first_line = np.full(len(_svmlight.REPAIR_KINDS), -1, dtype=np.int64)
    n_features = -1 if options.n_features is None else int(options.n_features)
    # A known width and base write dense rows straight into X.npy; otherwise CSR pieces are
    # spooled and the layout is decided at the end (a user file's width and base).
    direct_dense = (options.n_features is not None and options.base >= 0
                    and (options.dense if options.dense is not None
                         else options.n_features <= DENSE_MAX_FEATURES))
    writer = _DenseWriter(folder / "X.npy", n_features, options.dtype) if direct_dense else None
    spool = None if direct_dense else _SparseSpool(folder)
    labels = []
    min_index, max_index = None, -1
    digest = hashlib.sha256()
    started = time.perf_counter()
    carry = b""
    lines_before = 0
    bar = None
    try:
        with BlockReader(path, member) as reader:
            bar = _progress(path, reader.size, progress)
            blocks = iter(reader)
            done = False
            while not done:
                item = next(blocks, None)
                if item is None:
                    done = True
                    block, read = b"", reader.size
                else:
                    block, read = item
                    digest.update(block)
                    report.text_bytes += len(block)
                text = carry + block if carry else block
                if not text:
                    break
                n_lines, n_colons = _svmlight.count_block(text)
                y = np.empty(n_lines + 1)
                vals = np.empty(n_colons + 1)
                cols = np.empty(n_colons + 1, dtype=np.int32)
                row_nnz = np.empty(n_lines + 1, dtype=np.int32)
                out = _svmlight.parse_block(text, done, n_features, options.base, options.strict,
                                            lines_before, y, vals, cols, row_nnz, repairs, first_line)
                if out["status"] != _STATUS.OK:
                    raise _line_error(path, text, out, options)
                rows, nnz = out["rows"], out["nnz"]
                y, vals, cols, row_nnz = y[:rows], vals[:nnz], cols[:nnz], row_nnz[:rows]
                _check_finite(path, vals, y, row_nnz, report.rows, options.dtype)
                if rows:
                    if writer is not None:
                        dense = np.zeros((rows, n_features), dtype=options.dtype)
                        _svmlight.scatter_dense(row_nnz, cols, vals, options.base, dense)
                        writer.append(dense)
                    else:
                        spool.append(row_nnz, cols, vals)
                    labels.append(y.copy())
                if out["max_index"] >= 0:
                    min_index = out["min_index"] if min_index is None else min(min_index, out["min_index"])
                    max_index = max(max_index, out["max_index"])
                report.rows += rows
                lines_before += out["lines"]
                carry = text[out["consumed"]:]
                if len(carry) > MAX_LINE_BYTES:        # no newline in sight: not a line-based file
                    raise DataError(f"{path}: line {lines_before + 1:,} is longer than {MAX_LINE_BYTES >> 20} MB "
                                    "(no newline): not an svmlight text file, or one with old-Mac CR-only "
                                    "line ends. Convert the line ends to \\n (e.g. `tr '\\r' '\\n'`).")
                bar.set_postfix_str(f"{report.rows:,} rows", refresh=False)
                bar.update(read - bar.n)
                if (options.expected_rows is not None and report.rows > options.expected_rows):
                    raise _row_count_error(path, f"more than {options.expected_rows:,}", options)
    except BaseException:
        if writer is not None:
            writer.abort()
        if spool is not None:
            spool.close()
        raise
    finally:
        if bar is not None:
            bar.close()
    if report.rows == 0:
        raise DataError(f"{path}: the file holds no data rows (empty, or only comments/blank lines). "
                        "Replace it with a non-empty svmlight file.")
    if options.expected_rows is not None and report.rows != options.expected_rows:
        raise _row_count_error(path, f"{report.rows:,}", options)
    np.save(folder / "y.npy", np.concatenate(labels))
    if writer is not None:
        writer.close()
    else:
        spool.close()
        _assemble_spool(spool, folder, options, min_index, max_index, path)
        spool.remove()
    report.sha256 = digest.hexdigest()
    report.seconds = time.perf_counter() - started
    for k, kind in enumerate(_svmlight.REPAIR_KINDS):
        if repairs[k]:
            report.repairs[kind] = int(repairs[k])
            report.first_line[kind] = int(first_line[k]) + 1
    return report


def _assemble_spool(spool: _SparseSpool, folder: Path, options: SvmlightOptions, min_index, max_index, path=None):
    """Write the spooled CSR pieces as X.npy (dense) or X_data/X_indices/X_indptr/X_shape.npy."""
    base = options.base
    if base < 0:                    # scikit-learn's "auto": one-based unless an index 0 occurs
        base = 0 if min_index == 0 else 1
    width = options.n_features if options.n_features is not None else max(max_index + 1 - base, 1)
    if max_index - base >= width:   # "auto" with a given width: index n_features is valid only 1-based
        raise DataError(f"{path}: feature index {max_index} with {_BASE_TXT[base]} indices (an index 0 occurs) "
                        f"is outside the {width} features given. Fix the file or the number of features.")
    dense = options.dense if options.dense is not None else width <= DENSE_MAX_FEATURES
    row_nnz = spool.read("nnz", np.int32)
    if dense:
        cols, vals = spool.read("cols", np.int32), spool.read("vals", np.float64)
        writer = _DenseWriter(folder / "X.npy", width, options.dtype)
        indptr = np.concatenate([[0], np.cumsum(row_nnz, dtype=np.int64)])
        step = max(1, (32 << 20) // max(1, width * 8))       # rows per written block
        for start in range(0, row_nnz.shape[0], step):
            stop = min(start + step, row_nnz.shape[0])
            block = np.zeros((stop - start, width), dtype=options.dtype)
            a, b = indptr[start], indptr[stop]
            _svmlight.scatter_dense(row_nnz[start:stop], cols[a:b], vals[a:b], base, block)
            writer.append(block)
        writer.close()
        return
    index_dtype = np.int32 if spool.nnz <= _INT32_MAX and width <= _INT32_MAX else np.int64
    cols = spool.read("cols", np.int32)
    if base:
        cols -= base
    np.save(folder / "X_indices.npy", cols.astype(index_dtype, copy=False))
    del cols
    np.save(folder / "X_data.npy", spool.read("vals", np.float64).astype(options.dtype, copy=False))
    indptr = np.zeros(row_nnz.shape[0] + 1, dtype=index_dtype)
    np.cumsum(row_nnz, out=indptr[1:])
    np.save(folder / "X_indptr.npy", indptr)
    np.save(folder / "X_shape.npy", np.asarray([row_nnz.shape[0], width], dtype=np.int64))


def _check_finite(path, vals, y, row_nnz, rows_before, dtype="float64"):
    with np.errstate(over="ignore"):      # float32: a value beyond its range would become inf
        bad = np.flatnonzero(~np.isfinite(vals.astype(dtype, copy=False)))
    if bad.size:
        row = int(np.searchsorted(np.cumsum(row_nnz), bad[0], side="right"))
        beyond = f", beyond the range of {dtype}" if np.isfinite(vals[bad[0]]) else ""
        raise DataError(f"{path}: data row {rows_before + row + 1:,} holds a NaN or infinite feature value "
                        f"({vals[bad[0]]}{beyond}). Fix or remove that row; missing values are not supported.")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        raise DataError(f"{path}: data row {rows_before + int(bad[0]) + 1:,} has a NaN or infinite label. "
                        "Fix or remove that row.")


def _line_error(path, text: bytes, out: dict, options: SvmlightOptions) -> DataError:
    start = out["start"]
    end = text.find(b"\n", start)
    line = text[start: end if end >= 0 else len(text)].decode("utf-8", "replace").rstrip("\r")
    shown = line if len(line) <= 160 else line[:157] + "..."
    lineno = out["line"] + 1
    code = out["status"]
    if code == _STATUS.ERR_STRICT:
        kind = _svmlight.REPAIR_KINDS[out["kind"]].replace("_", " ")
        return DataError(f"{path}: line {lineno:,} has a defect ({kind}) that the loader would repair, but "
                         f"`dataset.strict: true` refuses repairs: {shown!r}. Fix the file, or drop `strict` "
                         "to let the loader repair it (the repairs are counted in run.json).")
    if code == _STATUS.ERR_RANGE:
        if options.n_features is not None:
            lo = 1 if options.base == 1 else 0
            hi = options.n_features if options.base == 1 else options.n_features - 1
            reason = f"a feature index outside {lo}..{hi} (the file should have {options.n_features} features)"
        else:
            reason = "a feature index 0 in a 1-based file, or one of 2**31 or more"
    else:
        reason = _REASONS.get(code, f"parse error {code}")
    return DataError(
        f"{path}: line {lineno:,} is not valid svmlight/LIBSVM format ({reason}): {shown!r}. Each line must be "
        f"'<numeric label> <index>:<value> ...' with {_BASE_TXT.get(options.base, '1-based')}, increasing "
        f"feature indices{f' up to {options.n_features}' if options.n_features else ''}. Fix or remove that line.")


def _row_count_error(path, found: str, options) -> DataError:
    return DataError(f"{path}: {found} rows, but the registry says this file has {options.expected_rows:,}. "
                     "The file is truncated, or a different version: replace it with the published file "
                     "(`kernelbench datasets info NAME` shows its URL).")


# ------------------------------------------------------------------ CSV

@dataclass
class CsvOptions:
    label_column: int = 0
    header_rows: int = 0
    delimiter: str = ","
    dtype: str = "float64"
    expected_rows: int | None = None


def csv_has_header(path: Path, member, delimiter: str) -> bool:
    try:
        with open_decompressed(path, None, member) as fh:
            first = fh.readline().decode("utf-8", "replace")
    except DECOMPRESSION_ERRORS:
        return False
    for token in (t.strip() for t in first.strip().split(delimiter)):
        try:
            float(token)
        except ValueError:
            if token:
                return True
    return False


class _QueueStream(io.RawIOBase):
    """The decompressed blocks of a BlockReader as a readable stream (for pandas)."""

    def __init__(self, reader: BlockReader, on_block):
        self._blocks = iter(reader)
        self._buffer = memoryview(b"")
        self._on_block = on_block

    def readable(self):
        return True

    def readinto(self, target):
        while not len(self._buffer):
            item = next(self._blocks, None)
            if item is None:
                return 0
            block, read = item
            self._on_block(block, read)
            self._buffer = memoryview(block)
        n = min(len(target), len(self._buffer))
        target[:n] = self._buffer[:n]
        self._buffer = self._buffer[n:]
        return n


def parse_csv(path: Path, folder: Path, options: CsvOptions, *, member=None,
              progress: bool = False) -> ParseReport:
    """Parse a numeric CSV file (label in `label_column`) into X.npy / y.npy under `folder`."""
    import pandas as pd     # heavy, and only CSV files need it

    path = Path(path)
    report = ParseReport(source=str(path))
    digest = hashlib.sha256()
    started = time.perf_counter()
    labels, writer, bar = [], None, None

    def on_block(block, read):
        digest.update(block)
        report.text_bytes += len(block)
        bar.update(read - bar.n)
        bar.set_postfix_str(f"{report.rows:,} rows", refresh=False)

    try:
        with BlockReader(path, member) as reader:
            bar = _progress(path, reader.size, progress)
            stream = io.BufferedReader(_QueueStream(reader, on_block), 1 << 20)
            try:
                chunks = pd.read_csv(stream, header=None, skiprows=options.header_rows,
                                     sep=options.delimiter, low_memory=False, chunksize=200_000)
                for frame in chunks:
                    values = _csv_values(path, frame, options, first_line=report.rows + 1 + options.header_rows)
                    y = np.ascontiguousarray(values[:, options.label_column])
                    X = np.delete(values, options.label_column, axis=1)
                    if writer is None:
                        if X.shape[1] < 1:
                            raise DataError(f"{path}: {values.shape[1]} column(s); need the label in column "
                                            f"{options.label_column} and at least one feature column. Check "
                                            "the delimiter and the label column.")
                        writer = _DenseWriter(folder / "X.npy", X.shape[1], options.dtype)
                    writer.append(X)
                    labels.append(y)
                    report.rows += X.shape[0]
            except pd.errors.EmptyDataError:
                raise DataError(f"{path}: the CSV file holds no data rows. Replace it with a non-empty file.") from None
            except pd.errors.ParserError as exc:
                raise DataError(f"{path}: not a valid CSV file ({str(exc).strip()}). Every line needs the same "
                                f"number of '{options.delimiter}'-separated fields; fix that line.") from None
            except (ValueError, UnicodeDecodeError) as exc:
                if isinstance(exc, DataError):
                    raise
                raise DataError(f"{path}: cannot read as CSV ({exc}). Fix the file.") from None
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        if bar is not None:
            bar.close()
    if writer is None or report.rows == 0:
        if writer is not None:
            writer.abort()
        raise DataError(f"{path}: the CSV file holds no data rows. Replace it with a non-empty file.")
    if options.expected_rows is not None and report.rows != options.expected_rows:
        writer.abort()
        raise _row_count_error(path, f"{report.rows:,}", options)
    writer.close()
    np.save(folder / "y.npy", np.concatenate(labels))
    report.sha256 = digest.hexdigest()
    report.seconds = time.perf_counter() - started
    return report


def _csv_values(path, frame, options: CsvOptions, first_line: int) -> np.ndarray:
    import pandas as pd     # heavy, and only CSV files need it

    if frame.shape[1] <= options.label_column or frame.shape[1] < 2:
        raise DataError(f"{path}: {frame.shape[1]} column(s); need the label in column {options.label_column} "
                        "and at least one feature column. Check the delimiter and the label column.")
    for col in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[col].dtype):
            conv = pd.to_numeric(frame[col], errors="coerce")
            bad = np.flatnonzero(conv.isna().to_numpy() & frame[col].notna().to_numpy())
            if bad.size:
                what = "label" if col == options.label_column else f"column {col + 1}"
                raise DataError(
                    f"{path}: line {first_line + int(bad[0])}, {what}: {str(frame[col].iloc[bad[0]])[:40]!r} is "
                    "not a number. Every value (labels included) must be numeric; fix that line"
                    + (" (or remove a header line)" if first_line + int(bad[0]) == 1 else "") + ".")
            frame[col] = conv
    values = frame.to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values)
    if options.dtype != "float64":        # features beyond float32's range would become inf
        with np.errstate(over="ignore"):
            cast = ~np.isfinite(values.astype(options.dtype))
        cast[:, options.label_column] = False
        bad |= cast
    bad_rows = np.flatnonzero(bad.any(axis=1))
    if bad_rows.size:
        raise DataError(f"{path}: line {first_line + int(bad_rows[0])} holds a missing, NaN or infinite value"
                        f"{' (or one beyond the range of ' + options.dtype + ')' if options.dtype != 'float64' else ''}. "
                        "Fix or remove that line; missing values are not supported.")
    return values


# ------------------------------------------------------------------ QM7 (MATLAB .mat)

@dataclass
class Qm7Options:
    dtype: str = "float64"
    expected_rows: int | None = None


def parse_qm7(path: Path, folder: Path, options: Qm7Options, *, member=None,
              progress: bool = False) -> ParseReport:
    """The QM7 file (qm7.mat, MATLAB v5: X n×23×23 Coulomb matrices, T 1×n atomization energies in
    kcal/mol; Montavon et al. NIPS 2012, Dai et al.'s QuantumMachine) into X.npy / y.npy under
    `folder`: a row is the upper triangle of one Coulomb matrix, diagonal included, in the order of
    numpy.triu_indices (276 columns for 23 atoms); y = T. The fold indices P are not used."""
    from scipy.io import loadmat     # only QM7's .mat file needs it
    from scipy.io.matlab import MatReadError

    path = Path(path)
    started = time.perf_counter()
    try:
        with open_decompressed(path, None, member) as fh:
            raw = fh.read()
    except DECOMPRESSION_ERRORS as exc:
        raise corrupt_error(path, exc, compression_of(path)) from None
    try:
        mat = loadmat(io.BytesIO(raw))
    except (MatReadError, ValueError, TypeError, IndexError, NotImplementedError, OSError) as exc:
        raise DataError(f"{path}: not a readable MATLAB v5 .mat file ({type(exc).__name__}: {exc}). The QM7 "
                        "file is qm7.mat from quantum-machine.org: replace the file with it.") from None
    keys = sorted(k for k in mat if not k.startswith("__"))
    missing = [k for k in ("X", "T") if k not in mat]
    if missing:
        raise DataError(f"{path}: the .mat file has no variable {' or '.join(missing)} (it holds "
                        f"{', '.join(keys) or 'none'}); QM7 needs X (Coulomb matrices) and T (energies). "
                        "Replace the file with qm7.mat from quantum-machine.org.")
    coulomb, energy = np.asarray(mat["X"]), np.asarray(mat["T"], dtype=np.float64).ravel()
    if coulomb.ndim != 3 or coulomb.shape[1] != coulomb.shape[2]:
        raise DataError(f"{path}: X has shape {coulomb.shape}; QM7 needs n square Coulomb matrices "
                        "(n × 23 × 23). Replace the file with qm7.mat from quantum-machine.org.")
    if energy.shape[0] != coulomb.shape[0]:
        raise DataError(f"{path}: X holds {coulomb.shape[0]} molecules but T holds {energy.shape[0]} energies; "
                        "the file is damaged or not QM7: replace it.")
    if not (np.all(np.isfinite(coulomb)) and np.all(np.isfinite(energy))):
        raise DataError(f"{path}: X or T holds NaN or infinite values; the file is damaged: replace it.")
    if not np.allclose(coulomb, coulomb.transpose(0, 2, 1)):
        raise DataError(f"{path}: the matrices in X are not symmetric, so they are not Coulomb matrices and "
                        "their upper triangle would lose entries. Replace the file with qm7.mat.")
    rows, cols = np.triu_indices(coulomb.shape[1])
    X = np.ascontiguousarray(coulomb[:, rows, cols], dtype=options.dtype)
    report = ParseReport(source=str(path), sha256=hashlib.sha256(raw).hexdigest(), rows=int(X.shape[0]),
                         text_bytes=len(raw))
    if options.expected_rows is not None and report.rows != options.expected_rows:
        raise _row_count_error(path, f"{report.rows:,}", options)
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", np.ascontiguousarray(energy))
    report.seconds = time.perf_counter() - started
    return report


# ------------------------------------------------------------------ the parsed-array cache

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


def to_csr32(X) -> sp.csr_matrix:
    X = sp.csr_matrix(X)
    if X.nnz <= _INT32_MAX and X.shape[1] <= _INT32_MAX:
        X.indices = np.asarray(X.indices, dtype=np.int32)
        X.indptr = np.asarray(X.indptr, dtype=np.int32)
    return X
