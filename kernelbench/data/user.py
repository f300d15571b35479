"""A user's own data: files (svmlight, delimited text, .npy, .npz, Parquet) and arrays handed over in
Python, each checked the same way -- numbers only, finite, one label per row, at least one feature --
and parsed once into the parsed-array cache (parse.py) like a registry file.

    infer_format      the format a file's suffix says (None: a suffix of some other format)
    near_file_name    the file beside a missing one whose name is closest (a typo)
    FileOptions       how a file is read: format, delimiter, header, label column, npz array names
    read_user_files   the training file and its test file -> (X, y, how it was read, the parse meta) each
    checked_arrays    arrays -> float arrays, or a DataError naming the row and column at fault
"""
from __future__ import annotations

import csv
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
from .delimited import CsvOptions, class_codes, class_names, csv_has_header, parse_csv
from .local import DECOMPRESSION_ERRORS, compression_of, open_decompressed
from .parse import parse_cached
from .svmlight import SvmlightOptions, parse_svmlight

# suffix -> format; any other suffix (LIBSVM files carry .t, .scale, .tr, none, ...) is svmlight unless
# it names a format we do not read
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".npy": "npy", ".npz": "npz", ".parquet": "parquet",
            ".pq": "parquet", ".svm": "svmlight", ".svmlight": "svmlight", ".libsvm": "svmlight"}
OTHER_FORMATS = (".xlsx", ".xls", ".ods", ".json", ".jsonl", ".h5", ".hdf5", ".hdf", ".mat", ".pkl", ".pickle",
                 ".feather", ".arrow", ".arff", ".orc", ".avro", ".sav", ".dta", ".sas7bdat", ".xml", ".html")
DELIMITERS = {"csv": ",", "tsv": "\t"}
SNIFFED = ",;\t|"              # the delimiters csv.Sniffer may pick for a file whose config names none
DENSE_FORMATS = ("csv", "tsv", "npy", "npz", "parquet")        # every row has every column
_COMPRESSIONS = (".xz", ".bz2", ".gz")


def _data_name(path: Path, member: str | None = None) -> str:
    """The file's name as its format sees it: a zip's member, or the name without .gz / .bz2 / .xz."""
    name = (member or path.name).lower()
    for suffix in _COMPRESSIONS:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def infer_format(path) -> str | None:
    """The format the file's suffix says; None for a suffix of a format kernelbench does not read."""
    path = Path(path)
    member = _zip_member(path) if compression_of(path) == "zip" else None
    suffix = Path(_data_name(path, member)).suffix
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    if suffix in OTHER_FORMATS:
        return None
    return "svmlight"


def _zip_member(path: Path) -> str | None:
    try:
        names = zipfile.ZipFile(path).namelist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataError(f"{path}: not a valid zip archive ({exc}). Replace the file.") from None
    if len(names) != 1:
        raise DataError(f"{path}: zip archive holds {len(names)} files; pass a single data file instead.")
    return names[0]


@dataclass(frozen=True)
class FileOptions:
    """How a user's file is read (the dataset keys of the same names); None: the default."""
    format: str | None = None
    delimiter: str | None = None
    header: bool | str | None = None
    label: int | str | None = None
    npz_features: str | None = None
    npz_labels: str | None = None


def read_user_files(path, test_path, options: FileOptions, *, dtype: str, progress: bool):
    """read_user_file of the training file and of the test file (None without one). Two svmlight files
    are zero-based when either holds an index 0 (scikit-learn's rule for a set of files): a file read
    one-based while the other is zero-based is read again, zero-based."""
    train = read_user_file(path, "train", options, dtype=dtype, progress=progress)
    if test_path is None:
        return train, None
    test = read_user_file(test_path, "test", options, dtype=dtype, progress=progress)
    zero_based = [part[3].get("parse", {}).get("zero_based") for part in (train, test)]
    if True in zero_based and False in zero_based:
        if zero_based[0] is False:
            train = read_user_file(path, "train", options, dtype=dtype, progress=progress, zero_based=True)
        else:
            test = read_user_file(test_path, "test", options, dtype=dtype, progress=progress, zero_based=True)
    return train, _test_in_training_classes(train, test, path, test_path)


def _test_in_training_classes(train, test, path, test_path):
    """The test file's labels coded as the training file's class names are (each file numbers its
    own names in sorted order); a name the training file lacks is a DataError naming it."""
    classes = [part[3].get("parse", {}).get("classes") for part in (train, test)]
    if classes[0] == classes[1]:
        return test
    if None in classes:
        named, numbered = (path, test_path) if classes[0] else (test_path, path)
        raise DataError(f"{named} labels its rows with class names but {numbered} with numbers. Label both files "
                        "the same way.")
    unseen = sorted(set(classes[1]) - set(classes[0]))
    if unseen:
        raise DataError(f"{test_path}: class(es) {', '.join(map(repr, unseen))} never occur in the training file "
                        f"{path} (its classes: {', '.join(map(repr, classes[0]))}). Give the training file rows "
                        "of every class, or drop those rows from the test file.")
    X, y, note, meta = test
    codes = np.searchsorted(classes[0], classes[1])[y.astype(np.int64)].astype(np.float64)
    return X, codes, note, {**meta, "parse": {**meta["parse"], "classes": classes[0]}}


def class_names_note(classes) -> str:
    """How class names became numbers, as the run's notes and run.json say it."""
    return "class names as labels: " + ", ".join(f"{name!r} -> {i}" for i, name in enumerate(classes))


def read_user_file(path, role: str, options: FileOptions, *, dtype: str, progress: bool, zero_based=None):
    """(X, y, a note saying how it was read, the parse report's meta) of one user file; `zero_based`:
    an svmlight file's indices start at 0 (None: at 0 when an index 0 occurs, else at 1)."""
    p = Path(path).expanduser()
    if not p.is_file():
        near = near_file_name(p)
        raise DataError(f"{role} file {p} does not exist (or is not a file)"
                        + (f"; did you mean {near}?" if near else ".") + " Check `dataset."
                        f"{'path' if role == 'train' else 'test_path'}`.")
    fmt = options.format or infer_format(p)
    if fmt is None:
        raise DataError(f"{p}: kernelbench cannot read a {Path(_data_name(p)).suffix} file. Convert it to CSV, "
                        ".npy / .npz or Parquet, or set dataset.format if the suffix misleads.")
    if fmt in ("npz", "npy", "parquet") and compression_of(p) != "none":
        raise DataError(f"{p}: a compressed {fmt} file; decompress it first ({fmt} files are read as they are).")
    st = p.stat()
    key = f"user-{p.name}-{st.st_size}-{st.st_mtime_ns}-{hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:8]}"
    if fmt == "svmlight":
        member = _zip_member(p) if compression_of(p) == "zip" else None
        parse_options = SvmlightOptions(n_features=None, base=0 if zero_based else -1, dtype=dtype)
        X, y, meta = parse_cached(
            # "base recorded": entries parsed before the report said which base "auto" chose are parsed again
            p, key=key, options={"format": "svmlight", "zero_based": bool(zero_based) or "auto", "base recorded": True,
                                 "member": member, "dtype": dtype},
            progress=progress,
            parse=lambda folder, show: parse_svmlight(p, folder, parse_options, member=member, progress=show))
        return X, y, "svmlight/LIBSVM format", meta
    if fmt in ("csv", "tsv"):
        return _read_delimited(p, key, fmt, options, dtype=dtype, progress=progress)
    label = options.label
    cache_options = {"format": fmt, "label": label, "X": options.npz_features, "y": options.npz_labels,
                     "dtype": dtype}
    X, y, meta = parse_cached(p, key=key, options=cache_options, progress=progress,
                              parse=lambda folder, show: _parse_array_file(p, folder, fmt, options, dtype))
    note = {"npy": "NumPy .npy, label in column {}", "parquet": "Parquet, label in column {}",
            "npz": "NumPy .npz, arrays {}"}[fmt]
    shown = (f"{options.npz_features or 'X'!r} and {options.npz_labels or 'y'!r}" if fmt == "npz"
             else repr(0 if label is None else label))
    return X, y, note.format(shown), meta


def near_file_name(p: Path) -> Path | None:
    """The file beside `p` whose name is closest to its name (a typo, another suffix), or None."""
    try:
        names = [child.name for child in p.parent.iterdir() if child.is_file()]
    except OSError:
        return None
    close = difflib.get_close_matches(p.name, names, n=1, cutoff=0.6)
    return p.parent / close[0] if close else None


# ------------------------------------------------------------------ delimited text

def _sniffed_delimiter(p: Path, member, fmt: str) -> str:
    """The delimiter of a file whose config names none: csv.Sniffer's pick among , ; tab | on the
    first lines; else the suffix's, unless only another of them occurs (then the refusal names
    dataset.delimiter)."""
    try:
        with open_decompressed(p, None, member) as fh:
            sample = fh.read(1 << 16).decode("utf-8", "replace")
    except DECOMPRESSION_ERRORS as exc:
        raise DataError(f"{p}: cannot read the file ({exc}). Replace it.") from None
    sample = "\n".join(line for line in sample.splitlines()[:50] if line.strip())
    try:
        return csv.Sniffer().sniff(sample, delimiters=SNIFFED).delimiter
    except csv.Error:
        pass
    default = DELIMITERS[fmt]
    others = [d for d in SNIFFED if d != default and d in sample]
    if default in sample or not others:
        return default          # the checks of the rows say what is wrong, if anything
    raise DataError(f"{p}: cannot tell how the fields are separated: the first lines hold no {default!r} but "
                    f"{' and '.join(map(repr, others))}, in varying numbers. Set dataset.delimiter to the character "
                    f"between the fields (e.g. delimiter: {others[0]!r}).")


def _read_delimited(p: Path, key: str, fmt: str, options: FileOptions, *, dtype: str, progress: bool):
    member = _zip_member(p) if compression_of(p) == "zip" else None
    delimiter = options.delimiter or _sniffed_delimiter(p, member, fmt)
    header = csv_has_header(p, member, delimiter) if options.header in (None, "auto") else options.header
    names = _first_line_fields(p, member, delimiter)
    label = 0 if options.label is None else options.label
    if isinstance(label, str):
        if not header:
            raise DataError(f"{p}: dataset.label {label!r} is a column name, but the file has no header line"
                            f"{' (header: false)' if options.header is False else ''}. Give the label column's "
                            "index instead (0 the first, -1 the last), or add a header line.")
        column = _column_by_name(p, label, names)
    else:
        column = _column_by_index(p, label, len(names))
    shown_label = f"{names[column]!r}" if header else f"column {column}"
    note = (f"{'CSV' if delimiter == ',' else 'delimited text'}, label {shown_label}"
            + (f", fields separated by {delimiter!r} (sniffed)" if not options.delimiter and delimiter != DELIMITERS[fmt]
               else "")
            + (", first line taken as a header" if header else ""))
    parse_options = CsvOptions(label_column=column, header_rows=int(bool(header)), delimiter=delimiter, dtype=dtype,
                               column_names=tuple(names) if header else ())
    X, y, meta = parse_cached(
        p, key=key, options={"format": "csv", "header_rows": int(bool(header)), "delimiter": delimiter,
                             "label_column": column, "member": member, "dtype": dtype}, progress=progress,
        parse=lambda folder, show: parse_csv(p, folder, parse_options, member=member, progress=show))
    meta = {**meta, "columns": [n for i, n in enumerate(names) if i != column] if header else None}
    return X, y, note, meta


def _first_line_fields(p: Path, member, delimiter: str) -> list[str]:
    """The fields of the first non-blank line (the header's names, or the first row's values)."""
    try:
        with open_decompressed(p, None, member) as fh:
            first = next((line for line in fh if line.strip()), b"").decode("utf-8", "replace").rstrip("\r\n")
    except DECOMPRESSION_ERRORS as exc:
        raise DataError(f"{p}: cannot read the file ({exc}). Replace it.") from None
    if not first.strip():
        raise DataError(f"{p}: the file holds no data rows (it is empty). Replace it with a non-empty file.")
    try:
        return [name.strip() for name in next(csv.reader([first], delimiter=delimiter))]
    except csv.Error as exc:        # e.g. a bare carriage return inside the line: not one CSV record
        raise DataError(f"{p}: line 1 is not a delimited-text record ({exc}). Save the file as CSV/TSV with "
                        "one row per line (newline line endings), or set dataset.format to its real format.") from None


def _column_by_name(p: Path, name: str, names: list) -> int:
    if name in names:
        return names.index(name)
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    shown = ", ".join(repr(n) for n in names[:20]) + (", ..." if len(names) > 20 else "")
    raise DataError(f"{p}: dataset.label {name!r} is not a column of the header ({shown}). Set dataset.label to "
                    f"one of those names{f' (did you mean {close[0]!r}?)' if close else ''}.")


def _column_by_index(p, index: int, width: int) -> int:
    if not -width <= index < width:
        raise DataError(f"{p}: dataset.label {index} is out of range: the file has {width} column(s), so the "
                        f"index must lie in {-width}..{width - 1}. Set dataset.label to a column of the file.")
    return index % width


# ------------------------------------------------------------------ .npy, .npz, Parquet

def _parse_array_file(p: Path, folder: Path, fmt: str, options: FileOptions, dtype: str) -> ParseReport:
    """Read a binary table, check it as arrays handed over in Python are checked, write X.npy / y.npy."""
    started = time.perf_counter()
    report = ParseReport(source=str(p))
    names = None
    if fmt == "npz":
        X, y = _npz_arrays(p, options)
        if class_names(y):              # string labels, as scikit-learn takes them
            report.classes, y = class_codes(y)
    else:
        if fmt == "npy":
            table = _npy_table(p)
            if isinstance(options.label, str):
                raise DataError(f"{p}: dataset.label {options.label!r} is a column name, but a .npy array has no "
                                "column names. Give the label column's index (0 the first, -1 the last).")
        else:
            table, names, report.classes = _parquet_table(p, options.label)
        width = table.shape[1]
        column = _label_column(p, options.label, names, width)
        if width < 2:
            raise DataError(f"{p}: {width} column; need the label column and at least one feature column.")
        y = table[:, column]
        X = np.delete(table, column, axis=1)
        if names is not None:
            names = [n for i, n in enumerate(names) if i != column]
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


def _npz_arrays(p: Path, options: FileOptions):
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
    return _column_by_name(p, label, names) if isinstance(label, str) else _column_by_index(p, label, width)


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
