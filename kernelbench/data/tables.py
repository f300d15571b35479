"""Binary tables -- .npy (a 2-D array, the label in one column), .npz (arrays X and y) and Parquet (named
columns) -- parsed into the parsed-array cache like text files, and the checks every user data source
gets, files and arrays handed over in Python alike: numbers only, finite, one label per row, at least
one feature.

    parse_npy, parse_npz, parse_parquet   a table file -> X.npy / y.npy in a cache folder (formats.py)
    checked_arrays                         arrays -> float arrays, or a DataError naming the row and column
    column_by_name, column_by_index        the label column a `dataset.label` names
"""
from __future__ import annotations

import difflib
import hashlib
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kernelbench.errors import DataError, require_extra

from .blocks import ParseReport, to_csr32
from .delimited import class_codes, class_names


@dataclass(frozen=True)
class TableOptions:
    """How a table file is read (the dataset keys of the same names; None: the default)."""
    label: int | str | None = None          # the label column (npy, Parquet): index or name; None: 0
    npz_features: str | None = None         # the arrays of an .npz file; None: X and y
    npz_labels: str | None = None
    dtype: str = "float64"


def parse_npy(path: Path, folder: Path, options: TableOptions, *, member=None, progress: bool = False) -> ParseReport:
    """A 2-D .npy array, the label in column `options.label`, checked and written as X.npy / y.npy."""
    started = time.perf_counter()
    p = Path(path)
    table = _npy_table(p)
    if isinstance(options.label, str):
        raise DataError(f"{p}: dataset.label {options.label!r} is a column name, but a .npy array has no "
                        "column names. Give the label column's index (0 the first, -1 the last).")
    return _write_table(p, folder, table, None, None, options, started)


def parse_parquet(path: Path, folder: Path, options: TableOptions, *, member=None,
                  progress: bool = False) -> ParseReport:
    """A Parquet table, the label in column `options.label` (index or name; class names become 0, 1, ...)."""
    started = time.perf_counter()
    p = Path(path)
    table, names, classes = _parquet_table(p, options.label)
    return _write_table(p, folder, table, names, classes, options, started)


def parse_npz(path: Path, folder: Path, options: TableOptions, *, member=None, progress: bool = False) -> ParseReport:
    """The features and labels arrays of an .npz archive (class names as labels become 0, 1, ...)."""
    started = time.perf_counter()
    p = Path(path)
    X, y = _npz_arrays(p, options)
    classes = None
    if class_names(y):              # string labels, as scikit-learn takes them
        classes, y = class_codes(y)
    return _write_arrays(p, folder, X, y, None, classes, options.dtype, started)


def _write_table(p: Path, folder: Path, table, names, classes, options: TableOptions, started: float) -> ParseReport:
    """A table split into its label column and the feature columns, then written."""
    width = table.shape[1]
    column = _label_column(p, options.label, names, width)
    if width < 2:
        raise DataError(f"{p}: {width} column; need the label column and at least one feature column.")
    y = table[:, column]
    X = np.delete(table, column, axis=1)
    if names is not None:
        names = [n for i, n in enumerate(names) if i != column]
    return _write_arrays(p, folder, X, y, names, classes, options.dtype, started)


def _write_arrays(p: Path, folder: Path, X, y, names, classes, dtype: str, started: float) -> ParseReport:
    """Check the arrays as arrays handed over in Python are checked, write X.npy / y.npy, hash the file."""
    report = ParseReport(source=str(p), classes=classes)
    X, y = checked_arrays(X, y, str(p), dtype=dtype, names=names)
    np.save(folder / "X.npy", np.ascontiguousarray(X))
    np.save(folder / "y.npy", y)
    digest = hashlib.sha256()
    with open(p, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    report.sha256, report.rows, report.seconds = digest.hexdigest(), int(X.shape[0]), time.perf_counter() - started
    return report


def _npy_table(p: Path) -> np.ndarray:
    try:
        table = np.load(p, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataError(f"{p}: not a readable .npy array ({exc}). Save it with numpy.save (no object arrays).") from None
    if table.ndim != 2:
        raise DataError(f"{p}: a .npy array of shape {table.shape}; expected a 2-D array (rows × columns, the label "
                        "in one column). Stack the labels beside the features, or use .npz with X and y.")
    return table


def _npz_arrays(p: Path, options: TableOptions):
    names = (options.npz_features or "X", options.npz_labels or "y")
    try:
        with np.load(p, allow_pickle=False) as archive:
            present = list(archive.files)
            missing = [n for n in names if n not in present]
            if missing:
                raise DataError(f"{p}: no array named {missing[0]!r}; the file holds {', '.join(map(repr, present))}. "
                                "Set dataset.npz_features and dataset.npz_labels to the arrays' names.")
            return archive[names[0]], archive[names[1]]
    except (ValueError, OSError, zipfile.BadZipFile) as exc:
        raise DataError(f"{p}: not a readable .npz archive ({exc}). Save it with numpy.savez (no object "
                        "arrays).") from None


def _label_column(p: Path, label, names, width: int) -> int:
    """The index of the label column of a table: `dataset.label` by name or index (default 0)."""
    label = 0 if label is None else label
    return column_by_name(p, label, names) if isinstance(label, str) else column_by_index(p, label, width)


def _parquet_table(p: Path, label):
    """(the table as float64, its column names, the class names its label column held or None)."""
    require_extra("pyarrow", "reading Parquet files")
    import pandas as pd     # heavy, and only tables need it

    try:
        frame = pd.read_parquet(p)
    except (OSError, ValueError) as exc:
        raise DataError(f"{p}: not a readable Parquet file ({exc}). Replace it.") from None
    names = [str(c) for c in frame.columns]
    column = frame.columns[_label_column(p, label, names, len(names))]
    classes = None
    if class_names(frame[column]):      # string labels, as scikit-learn takes them
        classes, codes = class_codes(frame[column].to_numpy())
        frame[column] = codes
    return _numeric_frame(frame, str(p), names).to_numpy(dtype=np.float64), names, classes


def column_by_name(p: Path, name: str, names: list) -> int:
    """The index of the column `name` of a header, or a DataError naming the closest name."""
    if name in names:
        return names.index(name)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    shown = ", ".join(repr(n) for n in names[:20]) + (", ..." if len(names) > 20 else "")
    raise DataError(f"{p}: dataset.label {name!r} is not a column of the header ({shown}). Set dataset.label to "
                    f"one of those names{f' (did you mean {close[0]!r}?)' if close else ''}.")


def column_by_index(p, index: int, width: int) -> int:
    """`index` (negative: from the last column) as a column of `width`, or a DataError saying the range."""
    if not -width <= index < width:
        raise DataError(f"{p}: dataset.label {index} is out of range: the file has {width} column(s), so the "
                        f"index must lie in {-width}..{width - 1}. Set dataset.label to a column of the file.")
    return index % width


# ------------------------------------------------------------------ the checks every source gets

def _numeric_frame(frame, where: str, names=None):
    """`frame` with every column numeric, or a DataError naming the first cell that is not a number."""
    import pandas as pd     # heavy, and only tables need it

    for i, col in enumerate(frame.columns):
        if pd.api.types.is_bool_dtype(frame[col].dtype) or not pd.api.types.is_numeric_dtype(frame[col].dtype):
            converted = pd.to_numeric(frame[col], errors="coerce")
            bad = np.flatnonzero(converted.isna().to_numpy() & frame[col].notna().to_numpy())
            if bad.size:
                raise DataError(f"{where}: row {int(bad[0]) + 1}, {_column_text(i, names)}: "
                                f"{str(frame[col].iloc[bad[0]])[:40]!r} is not a number. Every value, labels "
                                "included, must be numeric: encode categories (and class names) as numbers.")
            frame[col] = converted
    return frame


def _column_text(index: int, names) -> str:
    return f"column {index}" + (f" ({names[index]!r})" if names else "")


def checked_arrays(X, y, where: str, *, dtype: str = "float64", names=None):
    """(X as `dtype`, dense C-contiguous or CSR; y as float64) of a data set's features and labels, or a
    DataError naming the problem (shape, row count, a value that is not a finite number) and the fix.
    Rows and columns are counted from 1 and 0 as a reader of the file counts lines and indexes."""
    if X is None or y is None:
        raise DataError(f"{where}: features and labels go together: give both X and y.")
    if sp.issparse(X):
        X = to_csr32(sp.csr_matrix(X, dtype=dtype))
        values = X.data
    else:
        X = np.asarray(X)
        if X.dtype.kind not in "biuf":
            import pandas as pd     # heavy, and only tables need it

            if X.ndim == 2:
                X = _numeric_frame(pd.DataFrame(X), where, names).to_numpy(dtype=np.float64)
        values = X
    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:
        y = y.reshape(-1)
    if X.ndim != 2:
        raise DataError(f"{where}: features of shape {X.shape}; expected a 2-D array (rows × features). Reshape "
                        "them (a single feature: X.reshape(-1, 1)).")
    if y.ndim != 1:
        raise DataError(f"{where}: labels of shape {y.shape}; expected one label per row (a 1-D array).")
    if X.shape[0] == 0:
        raise DataError(f"{where}: no rows. Give a non-empty data set.")
    if X.shape[1] == 0:
        raise DataError(f"{where}: no feature columns. Give at least one feature beside the label.")
    if y.shape[0] != X.shape[0]:
        raise DataError(f"{where}: {X.shape[0]:,} rows of features but {y.shape[0]:,} labels. Give one label per row.")
    if y.dtype.kind not in "biuf":
        import pandas as pd     # heavy, and only tables need it

        y = _numeric_frame(pd.DataFrame({"label": y}), where + " labels", None).to_numpy(dtype=np.float64)[:, 0]
    y = y.astype(np.float64)
    if not sp.issparse(X):
        X = np.ascontiguousarray(X, dtype=dtype)
        values = X
    with np.errstate(over="ignore"):
        bad = ~np.isfinite(values)
    if bad.any():
        if sp.issparse(X):
            k = int(np.flatnonzero(bad)[0])
            row = int(np.searchsorted(X.indptr, k, side="right")) - 1
            col = int(X.indices[k])
        else:
            row, col = (int(v) for v in np.argwhere(bad)[0])
        raise DataError(f"{where}: row {row + 1}, {_column_text(col, names)} of the features is "
                        f"{'NaN' if np.isnan(X[row, col]) else 'infinite'}"
                        f"{' (beyond the range of ' + dtype + ')' if dtype != 'float64' else ''}. Missing values "
                        "are not supported: impute them or drop those rows.")
    bad = np.flatnonzero(~np.isfinite(y))
    if bad.size:
        raise DataError(f"{where}: the label of row {int(bad[0]) + 1} is {y[bad[0]]}. Every row needs a finite "
                        "label: drop the rows without one.")
    return X, y
