"""The data-file formats and their parsers, in one table: registry files (load.py) and a user's own
files (user.py) each say how a file is read -- a FileReading: its format, the options of that
format's parser, the file inside a zip -- and read_file parses it through the table into the
parsed-array cache (parse.py).

A registry entry is read as a user's file of its format would be, with the options the entry fixes
(registry_reading): one-based indices and the entry's width for svmlight (LIBSVM's convention), the
entry's label column, header lines and delimiter for csv, and its row count for every format.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .delimited import CsvOptions, parse_csv
from .parse import parse_cached
from .qm7 import Qm7Options, parse_qm7
from .svmlight import DENSE_MAX_FEATURES, SvmlightOptions, parse_svmlight
from .tables import parse_npy, parse_npz, parse_parquet


@dataclass(frozen=True)
class FileReading:
    """How one file is parsed: its format (a key of PARSERS), that parser's options, and the file
    inside a zip archive (None: the file itself)."""
    format: str
    options: object        # SvmlightOptions | CsvOptions | Qm7Options | TableOptions
    member: str | None = None


# What keys a file's parsed arrays in the cache (parse.py hashes it): the options that change the
# arrays. The keys are those the arrays were cached under before the table existed, so existing
# cache entries stay valid.

def _svmlight_cache(reading: FileReading) -> dict:
    options = reading.options
    keyed = {"format": "svmlight", "member": reading.member, "dtype": options.dtype}
    if options.n_features is not None:          # a registry file: its width and layout are given
        return {**keyed, "n_features": options.n_features, "zero_based": options.base == 0, "dense": options.dense}
    # the base decided from the data ("auto"); "base recorded": entries parsed before the report said
    # which base "auto" chose are parsed again
    return {**keyed, "zero_based": options.base == 0 or "auto", "base recorded": True}


def _csv_cache(reading: FileReading) -> dict:
    options = reading.options
    return {"format": "csv", "header_rows": options.header_rows, "delimiter": options.delimiter,
            "label_column": options.label_column, "member": reading.member, "dtype": options.dtype}


def _qm7_cache(reading: FileReading) -> dict:
    return {"format": "qm7", "member": reading.member, "dtype": reading.options.dtype}


def _table_cache(reading: FileReading) -> dict:
    options = reading.options
    return {"format": reading.format, "label": options.label, "X": options.npz_features, "y": options.npz_labels,
            "dtype": options.dtype}


def _svmlight_registry(ds, fspec, dtype: str) -> SvmlightOptions:
    dense = ds.d <= DENSE_MAX_FEATURES
    return SvmlightOptions(n_features=ds.d, base=1, dense=dense, dtype=dtype, expected_rows=fspec.n)


def _csv_registry(ds, fspec, dtype: str) -> CsvOptions:
    return CsvOptions(label_column=ds.csv["label_column"], header_rows=ds.csv["header_rows"],
                      delimiter=ds.csv["delimiter"], dtype=dtype, expected_rows=fspec.n)


def _qm7_registry(ds, fspec, dtype: str) -> Qm7Options:
    return Qm7Options(dtype=dtype, expected_rows=fspec.n)


@dataclass(frozen=True)
class Parser:
    """One format's parser: parse(path, folder, options, member=, progress=) writes the arrays into a
    cache folder and returns its ParseReport; cache_options(reading) keys them; registry(entry, file
    spec, dtype) -> the options a registry file of the format is read with (None: not a registry format)."""
    parse: Callable
    cache_options: Callable[[FileReading], dict]
    registry: Callable | None = None


PARSERS = {
    "svmlight": Parser(parse_svmlight, _svmlight_cache, _svmlight_registry),
    "csv": Parser(parse_csv, _csv_cache, _csv_registry),
    "tsv": Parser(parse_csv, _csv_cache),        # delimited text like csv: the delimiter is an option
    "qm7": Parser(parse_qm7, _qm7_cache, _qm7_registry),
    "npy": Parser(parse_npy, _table_cache),
    "npz": Parser(parse_npz, _table_cache),
    "parquet": Parser(parse_parquet, _table_cache),
}


def registry_reading(ds, fspec, member: str | None, dtype: str) -> FileReading:
    """How the file `fspec` of the registry entry `ds` is read (a registry DatasetSpec and FileSpec)."""
    return FileReading(ds.format, PARSERS[ds.format].registry(ds, fspec, dtype), member)


def read_file(path: Path, reading: FileReading, *, key: str, progress: bool, check: Callable | None = None):
    """(X, y, meta) of one file: from the parsed-array cache, else parsed by its format's parser;
    `check(report)` runs on a fresh parse's report before the arrays are cached (it may refuse them)."""
    parser = PARSERS[reading.format]

    def parse(folder, show):
        report = parser.parse(path, folder, reading.options, member=reading.member, progress=show)
        if check is not None:
            check(report)
        return report

    return parse_cached(path, key=key, options=parser.cache_options(reading), progress=progress, parse=parse)
