"""svmlight/LIBSVM files -> arrays, with the compiled parser of _svmlight.pyx (nogil; scikit-learn's
loader is the reference it agrees with, value for value, in tests).

Representation: at most DENSE_MAX_FEATURES (300) features -> a dense ndarray (every benchmark set
here except rcv1, epsilon, mnist, mnist8m, cifar10); more features -> scipy CSR with int32
indices/indptr (scikit-learn's SVC refuses int64 indices). Defects with one reading are repaired
and counted (_svmlight.REPAIR_KINDS; `strict` refuses them); anything else is a DataError naming
the line.
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelbench.errors import DataError

from . import _svmlight
from .blocks import INT32_MAX, BlockReader, DenseWriter, ParseReport, SparseSpool, progress_bar, row_count_error

DENSE_MAX_FEATURES = 300
MAX_LINE_BYTES = 64 << 20     # a longer "line" is refused (a file without newlines)

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
    parsing = _SvmlightParse(Path(path), folder, options)
    started = time.perf_counter()
    bar = None
    try:
        with BlockReader(parsing.path, member) as reader:
            bar = progress_bar(parsing.path, reader.size, progress)
            blocks = iter(reader)
            done = False
            while not done:
                item = next(blocks, None)
                done = item is None
                block, read = (b"", reader.size) if done else item
                text = parsing.text_with(block)
                if not text:
                    break
                parsing.parse(text, done)
                bar.set_postfix_str(f"{parsing.report.rows:,} rows", refresh=False)
                bar.update(read - bar.n)
                if options.expected_rows is not None and parsing.report.rows > options.expected_rows:
                    raise row_count_error(parsing.path, f"more than {options.expected_rows:,}", options)
    except BaseException:
        parsing.abort()
        raise
    finally:
        if bar is not None:
            bar.close()
    return parsing.finish(folder, started)


class _SvmlightParse:
    """One file's parse, block by block: the rows written so far, the labels, the index range,
    the repairs, the digest of the text and the unfinished line carried to the next block."""

    def __init__(self, path: Path, folder: Path, options: SvmlightOptions):
        self.path, self.options = path, options
        self.report = ParseReport(source=str(path))
        self.repairs = np.zeros(len(_svmlight.REPAIR_KINDS), dtype=np.int64)
        self.first_line = np.full(len(_svmlight.REPAIR_KINDS), -1, dtype=np.int64)
        self.n_features = -1 if options.n_features is None else int(options.n_features)
        # A known width and base write dense rows straight into X.npy; otherwise CSR pieces are
        # spooled and the layout is decided at the end (a user file's width and base).
        direct_dense = (options.n_features is not None and options.base >= 0
                        and (options.dense if options.dense is not None
                             else options.n_features <= DENSE_MAX_FEATURES))
        self.writer = DenseWriter(folder / "X.npy", self.n_features, options.dtype) if direct_dense else None
        self.spool = None if direct_dense else SparseSpool(folder)
        self.labels = []
        self.min_index, self.max_index = None, -1
        self.digest = hashlib.sha256()
        self.carry = b""
        self.lines_before = 0

    def text_with(self, block: bytes) -> bytes:
        """The text to parse next: the carried unfinished line, then `block` (hashed and counted)."""
        if block:
            self.digest.update(block)
            self.report.text_bytes += len(block)
        return self.carry + block if self.carry else block

    def parse(self, text: bytes, done: bool) -> None:
        """Parse the complete lines of `text` (all of it when `done`) and write their rows."""
        options, path = self.options, self.path
        n_lines, n_colons = _svmlight.count_block(text)
        y = np.empty(n_lines + 1)
        vals = np.empty(n_colons + 1)
        cols = np.empty(n_colons + 1, dtype=np.int32)
        row_nnz = np.empty(n_lines + 1, dtype=np.int32)
        out = _svmlight.parse_block(text, done, self.n_features, options.base, options.strict,
                                    self.lines_before, y, vals, cols, row_nnz, self.repairs, self.first_line)
        if out["status"] != _STATUS.OK:
            raise _line_error(path, text, out, options)
        rows, nnz = out["rows"], out["nnz"]
        y, vals, cols, row_nnz = y[:rows], vals[:nnz], cols[:nnz], row_nnz[:rows]
        _check_finite(path, vals, y, row_nnz, self.report.rows, options.dtype)
        if rows:
            self._write_rows(y, vals, cols, row_nnz)
        if out["max_index"] >= 0:
            self.min_index = out["min_index"] if self.min_index is None else min(self.min_index, out["min_index"])
            self.max_index = max(self.max_index, out["max_index"])
        self.report.rows += rows
        self.lines_before += out["lines"]
        self.carry = text[out["consumed"]:]
        if len(self.carry) > MAX_LINE_BYTES:        # no newline in sight: not a line-based file
            raise DataError(f"{path}: line {self.lines_before + 1:,} is longer than {MAX_LINE_BYTES >> 20} MB "
                            "(no newline): not an svmlight text file, or one with old-Mac CR-only "
                            "line ends. Convert the line ends to \\n (e.g. `tr '\\r' '\\n'`).")

    def _write_rows(self, y, vals, cols, row_nnz) -> None:
        if self.writer is not None:
            dense = np.zeros((y.shape[0], self.n_features), dtype=self.options.dtype)
            _svmlight.scatter_dense(row_nnz, cols, vals, self.options.base, dense)
            self.writer.append(dense)
        else:
            self.spool.append(row_nnz, cols, vals)
        self.labels.append(y.copy())

    def abort(self) -> None:
        if self.writer is not None:
            self.writer.abort()
        if self.spool is not None:
            self.spool.close()

    def finish(self, folder: Path, started: float) -> ParseReport:
        """Check the row count, write y.npy and close X (or assemble it from the spool)."""
        path, options, report = self.path, self.options, self.report
        if report.rows == 0:
            raise DataError(f"{path}: the file holds no data rows (empty, or only comments/blank lines). "
                            "Replace it with a non-empty svmlight file.")
        if options.expected_rows is not None and report.rows != options.expected_rows:
            raise row_count_error(path, f"{report.rows:,}", options)
        np.save(folder / "y.npy", np.concatenate(self.labels))
        if options.base < 0:
            report.zero_based = self.min_index == 0
        if self.writer is not None:
            self.writer.close()
        else:
            self.spool.close()
            _assemble_spool(self.spool, folder, options, self.min_index, self.max_index, path)
            self.spool.remove()
        report.sha256 = self.digest.hexdigest()
        report.seconds = time.perf_counter() - started
        for k, kind in enumerate(_svmlight.REPAIR_KINDS):
            if self.repairs[k]:
                report.repairs[kind] = int(self.repairs[k])
                report.first_line[kind] = int(self.first_line[k]) + 1
        return report


def _assemble_spool(spool: SparseSpool, folder: Path, options: SvmlightOptions, min_index, max_index, path=None):
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
        writer = DenseWriter(folder / "X.npy", width, options.dtype)
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
    index_dtype = np.int32 if spool.nnz <= INT32_MAX and width <= INT32_MAX else np.int64
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
