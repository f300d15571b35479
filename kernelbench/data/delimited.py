"""Delimited text (CSV) files -> dense arrays, read by pandas in chunks from the decompressed blocks.

y is float64, the raw labels as written (-1/1, 0/1, 1/2, targets); X is float64, or float32 when
asked. A value that is not a number, missing or not finite is a DataError naming the line. A label
column of names only (yes/no, setosa/virginica, as scikit-learn accepts them) is read as classes:
label i is the i-th name in sorted order, and the names are kept in the parse report.
"""
from __future__ import annotations

import hashlib
import io
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelbench.errors import DataError

from .blocks import BlockReader, DenseWriter, ParseReport, progress_bar, row_count_error
from .local import DECOMPRESSION_ERRORS, open_decompressed


@dataclass
class CsvOptions:
    label_column: int = 0
    header_rows: int = 0
    delimiter: str = ","
    dtype: str = "float64"
    expected_rows: int | None = None
    column_names: tuple = ()       # the header's names: errors name the column


def csv_has_header(path: Path, member, delimiter: str) -> bool:
    """Whether the first line is a header: it holds a field that is not a number, unless that is its
    only such field and the next line has a name in the same column (a column of class names)."""
    try:
        with open_decompressed(path, None, member) as fh:
            lines = [line.decode("utf-8", "replace") for line, _ in zip(fh, range(2))]
    except DECOMPRESSION_ERRORS:
        return False
    rows = [[t.strip() for t in line.strip().split(delimiter)] for line in lines]
    words = [i for i, token in enumerate(rows[0] if rows else []) if token and not _is_number(token)]
    below = rows[1][words[0]] if len(words) == 1 and len(rows) > 1 and len(rows[1]) > words[0] else ""
    if below and not _is_number(below):
        return False
    return bool(words)


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


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
    labels, names, writer, bar = [], [], None, None

    def on_block(block, read):
        digest.update(block)
        report.text_bytes += len(block)
        bar.update(read - bar.n)
        bar.set_postfix_str(f"{report.rows:,} rows", refresh=False)

    try:
        with BlockReader(path, member) as reader:
            bar = progress_bar(path, reader.size, progress)
            stream = io.BufferedReader(_QueueStream(reader, on_block), 1 << 20)
            try:
                chunks = pd.read_csv(stream, header=None, skiprows=options.header_rows,
                                     sep=options.delimiter, low_memory=False, chunksize=200_000)
                for frame in chunks:
                    first_line = report.rows + 1 + options.header_rows
                    if _class_names(frame[options.label_column]) or names:
                        names.append(_names_column(path, frame, options, first_line))
                    values = _csv_values(path, frame, options, first_line=first_line)
                    y = np.ascontiguousarray(values[:, options.label_column])
                    X = np.delete(values, options.label_column, axis=1)
                    if writer is None:
                        if X.shape[1] < 1:
                            raise DataError(f"{path}: {values.shape[1]} column(s); need the label in column "
                                            f"{options.label_column} and at least one feature column. Check "
                                            "the delimiter and the label column.")
                        writer = DenseWriter(folder / "X.npy", X.shape[1], options.dtype)
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
        raise row_count_error(path, f"{report.rows:,}", options)
    writer.close()
    y = np.concatenate(labels)
    if names:
        report.classes, y = class_codes(np.concatenate(names))
    np.save(folder / "y.npy", y)
    report.sha256 = digest.hexdigest()
    report.seconds = time.perf_counter() - started
    return report


def class_codes(names: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Class names as the labels 0, 1, ... in sorted order (scikit-learn's LabelEncoder order), and
    the names in that order."""
    classes, codes = np.unique(names, return_inverse=True)
    return [str(c) for c in classes], codes.astype(np.float64)


def class_names(labels) -> bool:
    """Whether labels are names only (strings, none of them reading as a number)."""
    import pandas as pd     # heavy, and only CSV files need it

    return _class_names(pd.Series(labels)) if np.asarray(labels).dtype.kind in "USO" else False


def _class_names(column) -> bool:
    """Whether a label column holds names only (no value of it reads as a number)."""
    import pandas as pd     # heavy, and only CSV files need it

    if pd.api.types.is_numeric_dtype(column.dtype) or column.isna().any():
        return False
    return bool(pd.to_numeric(column, errors="coerce").isna().all())


def _names_column(path, frame, options: CsvOptions, first_line: int) -> np.ndarray:
    """The class names of a chunk's label column, which then reads as 0 (the codes come once every
    name is known); a number or a missing value among names is a DataError naming its line."""
    column = frame[options.label_column]
    if not _class_names(column):
        import pandas as pd     # heavy, and only CSV files need it

        bad = int(np.flatnonzero(column.isna().to_numpy() | pd.to_numeric(column, errors="coerce").notna().to_numpy())[0])
        raise DataError(f"{path}: line {first_line + bad}, label: {str(column.iloc[bad])[:40]!r} among class names "
                        "(the labels above it are names, not numbers). Give every row a class name, or number "
                        "every class.")
    frame[options.label_column] = 0.0
    return column.astype(str).str.strip().to_numpy()


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
                if options.column_names and col < len(options.column_names):
                    what += f" ({options.column_names[col]!r})"
                raise DataError(
                    f"{path}: line {first_line + int(bad[0])}, {what}: {str(frame[col].iloc[bad[0]])[:40]!r} is "
                    "not a number. Every value (labels included) must be numeric: fix that line, or encode "
                    "categories (and class names) as numbers"
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
        col = int(np.flatnonzero(bad[bad_rows[0]])[0])
        what = "the label" if col == options.label_column else f"column {col + 1}"
        if options.column_names and col < len(options.column_names):
            what += f", {options.column_names[col]!r}"
        raise DataError(f"{path}: line {first_line + int(bad_rows[0])} ({what}) holds a missing, NaN or infinite value"
                        f"{' (or one beyond the range of ' + options.dtype + ')' if options.dtype != 'float64' else ''}. "
                        "Fix or remove that line; missing values are not supported.")
    return values
