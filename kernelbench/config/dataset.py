"""`dataset:` read: the declared fields (kernelbench/config/sections.py) and the rules that tie them
together -- exactly one of `name` and `path`, the generator's keys only with `name: synthetic`,
`labeled` within `subsample`, `labeled_only` with `labeled`, a test part that exists, classes of a
classification task."""
from __future__ import annotations

from pathlib import Path

from kernelbench._vocab import SYNTHETIC
from kernelbench.config.declare import read_section
from kernelbench.config.sections import DATASET_KEYS, SYNTHETIC_KEYS, DatasetConfig
from kernelbench.config.values import _as_float, _fail, _number_from_string, _show, _suggest
from kernelbench.data.load import classes_task
from kernelbench.data.registry import dataset_names, get_spec

_ALLOWED_TEST = "'official', 'none' or a fraction in (0, 1) such as 0.2"


def read_dataset(raw, base_dir: Path) -> DatasetConfig:
    if raw is None:
        _fail("dataset", "required: `dataset: {name: NAME}` for a registry dataset or "
                         "`dataset: {path: FILE}` for your own data")
    synthetic = isinstance(raw, dict) and raw.get("name") == SYNTHETIC
    values = read_section(DatasetConfig, raw, "dataset", DATASET_KEYS + (SYNTHETIC_KEYS if synthetic else ()))
    name, path = raw.get("name"), raw.get("path")
    if name is not None and path is not None:
        _fail("dataset", "give exactly one of `name` (a registry dataset) or `path` (your own "
                         "file), not both")
    if name is None and path is None:
        _fail("dataset", "give exactly one of `name` (a registry dataset) or `path` (your own file)")
    if name is None:
        path = _data_file(path, base_dir)
    elif name != SYNTHETIC:
        _check_registered(name)
    if values["subsample"] is not None and values["labeled"] is not None and values["labeled"] > values["subsample"]:
        _fail("dataset.labeled", f"{values['labeled']} labeled points cannot come from a subsample of "
                                 f"{values['subsample']}")
    if values["labeled_only"] and values["labeled"] is None:
        _fail("dataset.labeled_only", "needs dataset.labeled (the number of labeled rows to train on)")
    values["test"] = _test_part(raw.get("test", "official" if name is not None else 0.2), name)
    if values["classes"] is not None and values["task"] == "regression":
        _fail("dataset.classes", "selects classes of a classification task, but dataset.task is regression; "
                                 "drop one of them")
    if synthetic and values["shape"] is None:
        values["shape"] = "susy"
    return DatasetConfig(name=name, path=path if name is None else None, **values)


def _check_registered(name) -> None:
    known = list(dataset_names()) + [SYNTHETIC]
    if not isinstance(name, str):
        _fail("dataset.name", f"expected a string, got {_show(name)}; known datasets: "
                              f"{', '.join(sorted(known))}")
    if name not in known:
        _fail("dataset.name", f"unknown dataset {name!r}{_suggest(name, known)}; known "
                              f"datasets: {', '.join(sorted(known)) or '(none)'}; for your own "
                              f"file write `path: FILE` instead")


def _data_file(path, base_dir: Path) -> str:
    """A user data file, resolved against the config's folder; it must exist."""
    if not isinstance(path, str) or not path.strip():
        _fail("dataset.path", f"expected a file path (a string), got {_show(path)}")
    try:
        resolved = Path(path).expanduser()
        if not resolved.is_absolute():
            resolved = base_dir / resolved
        resolved = resolved.resolve()
        exists, is_file = resolved.exists(), resolved.is_file()
    except (OSError, ValueError, RuntimeError) as e:
        _fail("dataset.path", f"invalid path {path!r}: {e}")
    if not exists:
        _fail("dataset.path", f"file not found: {resolved} (given as {path!r}; a relative path "
                              f"is taken from the config file's folder)")
    if not is_file:
        _fail("dataset.path", f"not a file: {resolved}")
    return str(resolved)


def _test_part(test, name):
    """dataset.test: 'official' (a registry dataset's test file), 'none' (null too) or a fraction."""
    if test is None:
        return "none"
    if isinstance(test, str) and test.strip().lower() in ("official", "none"):
        test = test.strip().lower()
        if test == "official" and name is None:
            _fail("dataset.test", "'official' needs a registry dataset (dataset.name); for your "
                                  "own file use a fraction such as 0.2, or 'none'")
        return test
    if isinstance(test, (int, float, str)) and not isinstance(test, bool):
        if isinstance(test, str) and _number_from_string(test) is None:
            _fail("dataset.test", f"expected {_ALLOWED_TEST}, got {_show(test)}"
                                  f"{_suggest(test, ('official', 'none'))}")
        fraction = _as_float(test, "dataset.test")
        if not 0 < fraction < 1:
            _fail("dataset.test", f"a fraction must lie strictly between 0 and 1, got {test!r}")
        return fraction
    _fail("dataset.test", f"expected {_ALLOWED_TEST}, got {_show(test)}")


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
            _fail("dataset.classes", f"selects classes of a classification task, but dataset "
                                     f"{dataset.name!r} is a regression task; set dataset.task to binary "
                                     f"or multiclass to read its targets as class labels, or drop classes")
        return classes_task(dataset.classes)
    return registered
