"""`dataset:` read: the declared fields (kernelbench/config/sections.py) and the rules that tie them
together -- exactly one of `name` and `path` (neither for arrays handed over in Python), the generator's
keys only with `name: synthetic`, a user file's reading options only where its format uses them, a
test file or a test fraction but not both, `labeled` within `subsample`, `labeled_only` with
`labeled`, a test part that exists, classes of a classification task."""
from __future__ import annotations

from pathlib import Path

from kernelbench._vocab import SYNTHETIC
from kernelbench.config.sections import DATASET_KEYS, FILE_KEYS, SYNTHETIC_KEYS, DatasetConfig
from kernelbench.data.load import classes_task
from kernelbench.data.registry import dataset_names, get_spec
from kernelbench.data.user import infer_format, user_file_format, user_file_path
from kernelbench.schema import as_float, fail, number_from_string, read_section, show, suggest

_ALLOWED_TEST = "'official', 'none' or a fraction in (0, 1) such as 0.2"


def read_dataset(raw, base_dir: Path, arrays: str | None = None) -> DatasetConfig:
    """`arrays`: the data come as arrays (kernelbench.api.run), `train` or `train+test`; the section
    then names no file and may be left out."""
    if raw is None and arrays is None:
        fail("dataset", "required: `dataset: {name: NAME}` for a registry dataset or "
                         "`dataset: {path: FILE}` for your own data")
    synthetic = isinstance(raw, dict) and raw.get("name") == SYNTHETIC
    values = read_section(DatasetConfig, raw, "dataset", DATASET_KEYS + (SYNTHETIC_KEYS if synthetic else ()))
    raw = raw or {}
    name, path = raw.get("name"), raw.get("path")
    if arrays is not None:
        given = [key for key in ("name", "path") + FILE_KEYS if raw.get(key) is not None]
        if given:
            fail(f"dataset.{given[0]}", "the data are the arrays handed over (X, y): drop the data file's keys "
                                         f"({', '.join(given)}) from the config, or pass no arrays")
    elif name is not None and path is not None:
        fail("dataset", "give exactly one of `name` (a registry dataset) or `path` (your own "
                         "file), not both")
    elif name is None and path is None:
        fail("dataset", "give exactly one of `name` (a registry dataset) or `path` (your own file)")
    if arrays is not None:
        path = None
    elif name is None:
        path = str(user_file_path(path, "dataset.path", base_dir))
        values.update(_file_options(raw, values, path, base_dir))
    else:
        if name != SYNTHETIC:
            _check_registered(name)
        given = [key for key in FILE_KEYS if raw.get(key) is not None]
        if given:
            fail(f"dataset.{given[0]}", "says how your own file (`path`) is read; a registry dataset is read as "
                                         "the registry says: drop it")
    if values["subsample"] is not None and values["labeled"] is not None and values["labeled"] > values["subsample"]:
        fail("dataset.labeled", f"{values['labeled']} labeled points cannot come from a subsample of "
                                 f"{values['subsample']}")
    if values["labeled_only"] and values["labeled"] is None:
        fail("dataset.labeled_only", "needs dataset.labeled (the number of labeled rows to train on)")
    has_test_file = values.get("test_path") is not None or arrays == "train+test"
    values["test"] = _test_part(raw.get("test", "official" if name is not None or has_test_file else 0.2), name,
                                has_test_file)
    if values["classes"] is not None and values["task"] == "regression":
        fail("dataset.classes", "selects classes of a classification task, but dataset.task is regression; "
                                 "drop one of them")
    if synthetic and values["shape"] is None:
        values["shape"] = "susy"
    return DatasetConfig(name=name, path=path if name is None else None, arrays=arrays, **values)


def _file_options(raw: dict, values: dict, path: str, base_dir: Path) -> dict:
    """The test file and the reading options of a user's file, each refused where its format has no use
    for it. The format itself is decided when the file is read (a zip's member names it)."""
    out = {}
    if raw.get("test_path") is not None:
        out["test_path"] = str(user_file_path(raw["test_path"], "dataset.test_path", base_dir))
    fmt = values["format"]
    if fmt is None:
        fmt = user_file_format(path, "dataset.path")
        test_format = None if out.get("test_path") is None else infer_format(out["test_path"])
        if test_format not in (None, fmt):
            fail("dataset.test_path", f"{Path(out['test_path']).name} is {test_format} by its suffix but "
                                       f"{Path(path).name} is {fmt}; give both files one format (or set "
                                       "dataset.format)")
    allowed = {"delimiter": ("csv", "tsv"), "header": ("csv", "tsv"), "label": ("csv", "tsv", "npy", "parquet"),
               "npz_features": ("npz",), "npz_labels": ("npz",)}
    for key, formats in allowed.items():
        if values[key] is not None and fmt not in formats:
            fail(f"dataset.{key}", f"applies to {' / '.join(formats)} files, but {Path(path).name} is read as "
                                    f"{fmt}; drop it{' (svmlight rows start with their label)' if fmt == 'svmlight' else ''}"
                                    f"{', or set dataset.format' if values['format'] is None else ''}")
    if isinstance(values["label"], str) and values["header"] is False:
        fail("dataset.label", f"{values['label']!r} is a column name, but `header: false` says the file has no "
                               "header line; give the label column's index (0 the first, -1 the last) instead")
    if isinstance(values["label"], str) and fmt == "npy":
        fail("dataset.label", f"{values['label']!r} is a column name, but a .npy array has no column names; "
                               "give the label column's index (0 the first, -1 the last)")
    return out


def _check_registered(name) -> None:
    known = list(dataset_names()) + [SYNTHETIC]
    if not isinstance(name, str):
        fail("dataset.name", f"expected a string, got {show(name)}; known datasets: "
                              f"{', '.join(sorted(known))}")
    if name not in known:
        fail("dataset.name", f"unknown dataset {name!r}{suggest(name, known)}; known "
                              f"datasets: {', '.join(sorted(known)) or '(none)'}; for your own "
                              f"file write `path: FILE` instead")


def _test_part(test, name, has_test_file: bool):
    """dataset.test: 'official' (a registry dataset's test file, a user's test_path or test arrays),
    'none' (null too) or a fraction."""
    if has_test_file and not (isinstance(test, str) and test.strip().lower() == "official"):
        fail("dataset.test", f"the test part is the test file (test_path) or the test arrays, so it cannot also "
                              f"be {show(test)}; drop dataset.test, or drop the test file to split the "
                              "training file")
    if test is None:
        return "none"
    if isinstance(test, str) and test.strip().lower() in ("official", "none"):
        test = test.strip().lower()
        if test == "official" and name is None and not has_test_file:
            fail("dataset.test", "'official' needs a registry dataset (dataset.name) or a test file "
                                  "(dataset.test_path); for your own file alone use a fraction such as 0.2, "
                                  "or 'none'")
        return test
    if isinstance(test, (int, float, str)) and not isinstance(test, bool):
        if isinstance(test, str) and number_from_string(test) is None:
            fail("dataset.test", f"expected {_ALLOWED_TEST}, got {show(test)}"
                                  f"{suggest(test, ('official', 'none'))}")
        fraction = as_float(test, "dataset.test")
        if not 0 < fraction < 1:
            fail("dataset.test", f"a fraction must lie strictly between 0 and 1, got {test!r}")
        return fraction
    fail("dataset.test", f"expected {_ALLOWED_TEST}, got {show(test)}")


def dataset_task(dataset: DatasetConfig) -> str | None:
    """The task a config's dataset has: its `task` override, else that of its `classes` (two: binary,
    more: multi-class), else the registry's (None: a user file)."""
    if dataset.task is not None:
        return dataset.task
    registered = None
    if dataset.name is not None and dataset.name in list(dataset_names()):
        registered = get_spec(dataset.name).task
    if dataset.classes is not None:
        if registered == "regression":
            fail("dataset.classes", f"selects classes of a classification task, but dataset "
                                     f"{dataset.name!r} is a regression task; set dataset.task to binary "
                                     f"or multiclass to read its targets as class labels, or drop classes")
        return classes_task(dataset.classes)
    return registered
