"""A user's own data files (svmlight, delimited text, .npy, .npz, Parquet): each file resolved once --
where it is, its format, the file inside a zip, the key of its parsed arrays -- then read through the
format table (formats.py) into the parsed-array cache like a registry file, and checked as arrays
handed over in Python are (tables.py).

    infer_format       the format a file's suffix says (None: a suffix of some other format)
    near_file_name     the file beside a missing one whose name is closest (a typo)
    FileOptions        how a file is read: format, delimiter, header, label column, npz array names
    user_file_path     a file path located and checked, at config time and at load time alike
    user_file_format   the format its suffix says (refused where kernelbench reads no such file), alike
    resolve_user_file  a file path -> a UserFile (or the DataError saying why it cannot be read)
    read_user_files    the training file and its test file -> a UserPart each (arrays, note, parse meta)
"""
from __future__ import annotations

import csv
import difflib
import hashlib
import os
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from kernelbench._vocab import FILE_FORMATS
from kernelbench.errors import DataError
from kernelbench.schema import fail, refusals_as, show

from .delimited import CsvOptions, csv_has_header
from .formats import FileReading, read_file
from .local import DECOMPRESSION_ERRORS, compression_of, open_decompressed
from .svmlight import SvmlightOptions
from .tables import TableOptions, checked_arrays, column_by_index, column_by_name

__all__ = ["DENSE_FORMATS", "FileOptions", "UserFile", "UserPart", "checked_arrays", "class_names_note",
           "infer_format", "near_file_name", "read_user_files", "resolve_user_file", "user_file_format",
           "user_file_path"]

# suffix -> format; any other suffix (LIBSVM files carry .t, .scale, .tr, none, ...) is svmlight unless
# it names a format we do not read
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".npy": "npy", ".npz": "npz", ".parquet": "parquet",
            ".pq": "parquet", ".svm": "svmlight", ".svmlight": "svmlight", ".libsvm": "svmlight"}
OTHER_FORMATS = (".xlsx", ".xls", ".ods", ".json", ".jsonl", ".h5", ".hdf5", ".hdf", ".mat", ".pkl", ".pickle",
                 ".feather", ".arrow", ".arff", ".orc", ".avro", ".sav", ".dta", ".sas7bdat", ".xml", ".html")
DELIMITERS = {"csv": ",", "tsv": "\t"}
SNIFFED = ",;\t|"              # the delimiters csv.Sniffer may pick for a file whose config names none
TABLE_FORMATS = ("npy", "npz", "parquet")   # binary files, read as they are (never decompressed)
DENSE_FORMATS = ("csv", "tsv") + TABLE_FORMATS        # every row has every column
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
    return _suffix_format(path, member)


def _suffix_format(path: Path, member: str | None) -> str | None:
    """The format the suffix of the file (of its zip member, when given) says; None: one not read."""
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


@dataclass(frozen=True)
class UserFile:
    """A user's data file as resolved once: its path (~ expanded), its format (given or by its suffix),
    the file inside a zip archive (None: the file itself) and the key of its parsed arrays."""
    path: Path
    format: str
    member: str | None
    key: str


def user_file_path(path, key: str = "dataset.path", base_dir: Path | None = None) -> Path:
    """A user's data file located and checked -- the one place that does it, for the config when it
    is read and for the loader when it reads the file: ~ expanded; with `base_dir` (the config file's
    folder) a relative path is taken from it and links are resolved (the run records where the data
    were), else the path is taken as given (from the working directory). A path that is not one, is
    missing (naming the closest name beside it) or is not a file is a refusal (kernelbench.schema's,
    a ConfigError) naming `key`, the config key that gave it."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        fail(key, f"expected a file path (a string), got {show(path)}")
    try:
        p = Path(path).expanduser()
        if base_dir is not None:
            p = (p if p.is_absolute() else base_dir / p).resolve()
        exists, is_file = p.exists(), p.is_file()
    except (OSError, ValueError, RuntimeError) as e:
        fail(key, f"invalid path {path!r}: {e}")
    if not exists:
        near = near_file_name(p)
        origin = "the config file's folder" if base_dir is not None else "the working directory"
        fail(key, f"file not found: {p} does not exist (given as {path!r}; a relative path is taken from {origin})"
                  + (f"; did you mean {near}?" if near else ""))
    if not is_file:
        fail(key, f"not a file: {p}")
    return p


def user_file_format(path, key: str = "dataset.path", *, member: str | None = None) -> str:
    """The format a user's file is read as when dataset.format does not say: its suffix's (that of
    the file inside a zip: `member`, else read from the archive) -- at config time and at load time
    alike; a suffix of a format kernelbench does not read is a refusal naming `key`."""
    path = Path(path)
    fmt = infer_format(path) if member is None else _suffix_format(path, member)
    if fmt is None:
        fail(key, f"cannot tell the format of {path.name} from its suffix, and it is not one kernelbench reads; "
                  f"convert the file to {', '.join(FILE_FORMATS)}, or set dataset.format if the suffix misleads")
    return fmt


def resolve_user_file(path, role: str, options: FileOptions) -> UserFile:
    """The UserFile of a `role` ("train" | "test") file, or the DataError saying why it cannot be read:
    missing (user_file_path's refusal), a format kernelbench does not read (user_file_format's), a compressed binary
    table, a zip archive that is damaged or holds more than one file."""
    key = "dataset.path" if role == "train" else "dataset.test_path"
    with refusals_as(lambda where, why: DataError(f"{role} file: {where}: {why}" + ("" if why.endswith("?") else "."))):
        p = user_file_path(path, key)
        compression = compression_of(p)
        # a zip's member names the format; with the format given, a table's zip is refused before it is opened
        member = _zip_member(p) if compression == "zip" and options.format is None else None
        fmt = options.format or user_file_format(p, key, member=member)
    if fmt in TABLE_FORMATS and compression != "none":
        raise DataError(f"{p}: a compressed {fmt} file; decompress it first ({fmt} files are read as they are).")
    if compression == "zip" and member is None:
        member = _zip_member(p)
    st = p.stat()
    key = f"user-{p.name}-{st.st_size}-{st.st_mtime_ns}-{hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:8]}"
    return UserFile(path=p, format=fmt, member=member, key=key)


@dataclass(frozen=True)
class UserPart:
    """One user file as read: its UserFile, the arrays, a note saying how it was read, the parse meta."""
    file: UserFile
    X: object
    y: np.ndarray
    note: str
    meta: dict


def read_user_files(path, test_path, options: FileOptions, *, dtype: str, progress: bool):
    """The UserPart of the training file and of the test file (None without one); each file is
    resolved just before it is read. Two svmlight files are zero-based when either holds an index 0
    (scikit-learn's rule for a set of files): a file read one-based while the other is zero-based is
    read again, zero-based."""
    train_file = resolve_user_file(path, "train", options)
    train = read_user_file(train_file, options, dtype=dtype, progress=progress)
    if test_path is None:
        return train, None
    test_file = resolve_user_file(test_path, "test", options)
    test = read_user_file(test_file, options, dtype=dtype, progress=progress)
    zero_based = [part.meta.get("parse", {}).get("zero_based") for part in (train, test)]
    if True in zero_based and False in zero_based:
        if zero_based[0] is False:
            train = read_user_file(train_file, options, dtype=dtype, progress=progress, zero_based=True)
        else:
            test = read_user_file(test_file, options, dtype=dtype, progress=progress, zero_based=True)
    return train, _test_in_training_classes(train, test, path, test_path)


def _test_in_training_classes(train: UserPart, test: UserPart, path, test_path) -> UserPart:
    """The test file's labels coded as the training file's class names are (each file numbers its
    own names in sorted order); a name the training file lacks is a DataError naming it."""
    classes = [part.meta.get("parse", {}).get("classes") for part in (train, test)]
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
    codes = np.searchsorted(classes[0], classes[1])[test.y.astype(np.int64)].astype(np.float64)
    return replace(test, y=codes, meta={**test.meta, "parse": {**test.meta["parse"], "classes": classes[0]}})


def class_names_note(classes) -> str:
    """How class names became numbers, as the run's notes and run.json say it."""
    return "class names as labels: " + ", ".join(f"{name!r} -> {i}" for i, name in enumerate(classes))


def read_user_file(file: UserFile, options: FileOptions, *, dtype: str, progress: bool, zero_based=None) -> UserPart:
    """One resolved user file, read through the format table; `zero_based`: an svmlight file's indices
    start at 0 (None: at 0 when an index 0 occurs, else at 1)."""
    columns = None
    if file.format == "svmlight":
        reading = FileReading("svmlight", SvmlightOptions(n_features=None, base=0 if zero_based else -1, dtype=dtype),
                              file.member)
        note = "svmlight/LIBSVM format"
    elif file.format in ("csv", "tsv"):
        reading, note, columns = _delimited_reading(file, options, dtype)
    else:
        reading = FileReading(file.format, TableOptions(label=options.label, npz_features=options.npz_features,
                                                        npz_labels=options.npz_labels, dtype=dtype))
        note = _table_note(file.format, options)
    X, y, meta = read_file(file.path, reading, key=file.key, progress=progress)
    if file.format in ("csv", "tsv"):
        meta = {**meta, "columns": columns}
    return UserPart(file, X, y, note, meta)


def _table_note(fmt: str, options: FileOptions) -> str:
    note = {"npy": "NumPy .npy, label in column {}", "parquet": "Parquet, label in column {}",
            "npz": "NumPy .npz, arrays {}"}[fmt]
    shown = (f"{options.npz_features or 'X'!r} and {options.npz_labels or 'y'!r}" if fmt == "npz"
             else repr(0 if options.label is None else options.label))
    return note.format(shown)


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


def _delimited_reading(file: UserFile, options: FileOptions, dtype: str):
    """(the FileReading, the note, the feature columns' names or None) of a csv / tsv file: the
    delimiter given or sniffed, the header given or detected, the label column by name or index."""
    p, member, fmt = file.path, file.member, file.format
    delimiter = options.delimiter or _sniffed_delimiter(p, member, fmt)
    header = csv_has_header(p, member, delimiter) if options.header in (None, "auto") else options.header
    names = _first_line_fields(p, member, delimiter)
    label = 0 if options.label is None else options.label
    if isinstance(label, str):
        if not header:
            raise DataError(f"{p}: dataset.label {label!r} is a column name, but the file has no header line"
                            f"{' (header: false)' if options.header is False else ''}. Give the label column's "
                            "index instead (0 the first, -1 the last), or add a header line.")
        column = column_by_name(p, label, names)
    else:
        column = column_by_index(p, label, len(names))
    shown_label = f"{names[column]!r}" if header else f"column {column}"
    note = (f"{'CSV' if delimiter == ',' else 'delimited text'}, label {shown_label}"
            + (f", fields separated by {delimiter!r} (sniffed)" if not options.delimiter and delimiter != DELIMITERS[fmt]
               else "")
            + (", first line taken as a header" if header else ""))
    parse_options = CsvOptions(label_column=column, header_rows=int(bool(header)), delimiter=delimiter, dtype=dtype,
                               column_names=tuple(names) if header else ())
    columns = [n for i, n in enumerate(names) if i != column] if header else None
    return FileReading(fmt, parse_options, member), note, columns


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
