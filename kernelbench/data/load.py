"""Datasets as arrays: registry files and user files (each parsed by its format's parser, formats.py,
and cached by parse.py), the builtin digits and synthetic data, each with its test part (official,
or a split: parts.py).

Dataset.provenance records, for run.json, what each file was: its path, the sha256 of its
decompressed content, rows, the repairs the parser made (counted per kind; `strict` refuses them)
and, for synthetic data or a synthetic replica, the generator and its Bayes error.
"""
from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from kernelbench._vocab import DTYPES, SYNTHETIC
from kernelbench.errors import DataError

from .fetch import fetch_file
from .formats import read_file, registry_reading
from .local import check_sha256, compression_of, data_dirs, stamped_sha256, verify_file
from .parts import check_labels, classes_task, concat_features, keep_classes, split_fraction
from .registry import DatasetSpec, FileSpec, get_spec
from .synthetic import SIDECAR_SUFFIX, SyntheticSpec, make
from .tables import checked_arrays
from .user import DENSE_FORMATS, FileOptions, UserPart, class_names_note, read_user_files

MAX_INFERRED_CLASSES = 20     # user files: <= this many integer labels -> multiclass, else regression


@dataclass
class Dataset:
    name: str                 # registry name or the user's file path
    task: str                 # "binary" | "multiclass" | "regression"
    X_train: object           # np.ndarray | scipy.sparse.csr_matrix, float64 (or float32 when asked)
    y_train: np.ndarray       # float64 raw labels as in the file
    X_test: object = None     # None when there is no test part
    y_test: np.ndarray | None = None
    description: str = ""     # one line: where the data came from, and caveats
    provenance: dict = field(default_factory=dict)   # files (sha256, rows, repairs), synthetic generator

    @property
    def n_train(self) -> int:
        return int(self.X_train.shape[0])

    @property
    def n_test(self) -> int:
        return 0 if self.X_test is None else int(self.X_test.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X_train.shape[1])


def _file_key(path: Path, sha: str | None, label: str) -> str:
    if sha:
        return sha
    st = path.stat()
    real = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
    return f"{label}-{st.st_size}-{st.st_mtime_ns}-{real}"


def _file_record(path: Path, role: str, meta: dict, strict: bool) -> dict:
    """The provenance of one parsed file; refuses a cached parse with repairs under `strict`, and
    says on stderr (one line) when the file needed repairs."""
    report = meta.get("parse", {})
    repairs, first = report.get("repairs", {}), report.get("first_line", {})
    if strict and repairs:
        kind = next(iter(repairs))
        raise DataError(f"{path}: line {first[kind]:,} has a defect ({kind.replace('_', ' ')}) that the loader "
                        "repairs, but `dataset.strict: true` refuses repairs. Fix the file, or drop `strict` "
                        "to let the loader repair it (the repairs are counted in run.json).")
    if repairs:
        kinds = ", ".join(f"{n:,} line(s) with {k.replace('_', ' ')} (first: line {first[k]:,})"
                          for k, n in repairs.items())
        print(f"kernelbench: {Path(path).name}: repaired {kinds}; `dataset.strict: true` would refuse "
              "the file instead", file=sys.stderr)
    record = {"role": role, "path": str(path), "sha256": report.get("sha256") or None,
              "rows": report.get("rows"), "repairs": repairs, "first_repaired_line": first,
              "parse_seconds": report.get("seconds")}
    replica = _replica_sidecar(path)
    if replica:
        record["synthetic_replica"] = replica
    return record


def _replica_sidecar(path: Path) -> dict | None:
    """The generator's description written beside a synthetic replica file (synthetic.py)."""
    side = Path(str(path) + SIDECAR_SUFFIX)
    try:
        return json.loads(side.read_text()) if side.is_file() else None
    except (OSError, ValueError):
        return None


# ------------------------------------------------------------------ registry files

def _load_registry_file(ds: DatasetSpec, fspec: FileSpec, *, progress: bool, dtype: str, strict: bool):
    path = fetch_file(ds, fspec, progress=progress, verify=False)
    member = fspec.member if compression_of(path) == "zip" else None
    # A file is checked against its pinned or recorded sha256 (or its hash recorded, on first use):
    # from its stamp when it was hashed before, else while it is parsed (one pass over the file).
    sha = stamped_sha256(path, fspec)
    if sha is not None:
        check_sha256(path, fspec, sha, stamp=False)
    elif fspec.sha256 is not None:
        # pinned: the parsed arrays are keyed by it, so an unstamped file whose entry exists must be
        # hashed before that entry may stand for it
        sha = verify_file(path, fspec, progress=progress).sha256 if _cached_elsewhere(fspec) else fspec.sha256
    hashed = []

    def check(report):
        check_sha256(path, fspec, report.sha256)      # a mismatch: nothing is cached
        hashed.append(report.sha256)

    # only a pinned hash keys the parsed arrays by content: a recorded one is not known before the
    # first parse, and a second key would parse the file again
    X, y, meta = read_file(path, registry_reading(ds, fspec, member, dtype),
                           key=_file_key(path, sha if fspec.sha256 else None, fspec.name), progress=progress,
                           check=check)
    if sha is None and not hashed:       # parsed before its hash was recorded, and not stamped since
        verify_file(path, fspec, progress=progress)
    if X.shape[1] != ds.d:
        raise DataError(f"{path}: {X.shape[1]} feature columns, but the registry says dataset '{ds.name}' has "
                        f"{ds.d}. The file is not the registry's file: replace it.")
    if fspec.n is not None and X.shape[0] != fspec.n:
        raise DataError(f"{path}: {X.shape[0]} rows, but the registry says the {fspec.role} file of '{ds.name}' has "
                        f"{fspec.n}. The file is truncated or a different version: replace it with the file from "
                        f"{fspec.url or 'the mirror'}.")
    return path, X, y, _file_record(path, fspec.role, meta, strict)


def _cached_elsewhere(fspec: FileSpec) -> bool:
    """Whether some parsed entry is keyed by this file's registry sha256 (then an unstamped local
    file must be hashed before that entry may stand for it)."""
    parsed = data_dirs()["cache"] / "parsed"
    return parsed.is_dir() and any(p.name.startswith(fspec.sha256) for p in parsed.iterdir())


def _load_builtin(ds: DatasetSpec):
    if ds.source == "sklearn_digits_8_vs_6":
        from sklearn.datasets import load_digits     # heavy: the data layer answers `datasets` commands without it

        X, y = load_digits(return_X_y=True)
        keep = (y == 8) | (y == 6)
        # DSG paper's "MNIST 8 vs 6": 8 -> +1, 6 -> -1.
        return np.ascontiguousarray(X[keep], dtype=np.float64), np.where(y[keep] == 8, 1.0, -1.0)
    raise DataError(f"Dataset '{ds.name}': unknown builtin source {ds.source!r}. Fix the registry entry.")


# ------------------------------------------------------------------ user files

@dataclass(frozen=True)
class UserArrays:
    """A data set handed over in Python (kernelbench.api.run): features and labels, and optionally a test
    part. X may be dense (array-like) or scipy sparse."""
    X: object
    y: object
    X_test: object = None
    y_test: object = None


def _file_with_record(part: UserPart, role: str, strict: bool):
    """(path, X, y, note, provenance record) of one user file as read_user_files read it."""
    note, meta = part.note, part.meta
    record = _file_record(part.file.path, role, meta, strict)
    if meta.get("columns") is not None:
        record["feature_columns"] = meta["columns"]
    classes = meta.get("parse", {}).get("classes")
    if classes:             # the numbers the class names became, in training and test alike
        record["label_classes"] = {name: i for i, name in enumerate(classes)}
        note += f"; {class_names_note(classes)}"
    return part.file.path, part.X, part.y, note, record


def infer_task(y: np.ndarray) -> str:
    """2 distinct labels -> binary; <= MAX_INFERRED_CLASSES integer labels -> multiclass; else regression."""
    labels = np.unique(y)
    if labels.size == 2:
        return "binary"
    if labels.size <= MAX_INFERRED_CLASSES and np.all(labels == np.round(labels)):
        return "multiclass"
    return "regression"


# ------------------------------------------------------------------ public entry point

def _parse_test(test):
    if isinstance(test, str):
        t = test.strip().lower()
        if t in ("official", "none"):
            return t
        try:
            test = float(t)
        except ValueError:
            test = None
    if isinstance(test, bool) or not isinstance(test, (int, float)) or not 0 < float(test) < 1:
        raise DataError(f"test={test!r} is not allowed: use 'official', 'none', or a fraction in (0, 1) such as 0.2.")
    return float(test)


def load_dataset(name=None, *, path=None, test="official", seed=0, task=None, progress=True,
                 dtype="float64", strict=False, synthetic=None, classes=None, test_path=None,
                 file_options: FileOptions | None = None, arrays: UserArrays | None = None) -> Dataset:
    """Load a registry dataset (`name`), a user's file (`path`, with its test file `test_path`), arrays
    (`arrays`: a UserArrays) or synthetic data (name="synthetic", `synthetic`: a SyntheticSpec or a dict
    of its fields) with a test part.

    test: "official" (the registry's test file, else its split protocol, else a seeded 25% split;
          for synthetic data its independent test rows; a user's test file or test arrays), a
          fraction in (0, 1) (seeded split of the training file, stratified for classification),
          or "none".
    file_options: how a user's files are read (format, delimiter, header, label column, npz names).
    task: overrides the registry's task (e.g. 'regression' for a multi-class set) or the inferred one.
    dtype: "float64" or "float32" (features; parsed caches are kept in this type).
    strict: refuse a file that needs repairs (svmlight.py) instead of repairing it.
    classes: None, or the labels to keep (e.g. [8, 6]: Dai et al.'s MNIST8M 8 vs 6); rows of other
          labels leave both parts before any split; two classes make a binary task (the labels keep
          their raw values: the binary solvers encode them), more a multi-class one.
    """
    if sum(source is not None for source in (name, path, arrays)) != 1:
        raise DataError("Give exactly one of a dataset name (a registry key), path= (your own data file) or "
                        "arrays= (your own arrays).")
    if test_path is not None and path is None:
        raise DataError("test_path= is the test file of a user's data file: give path= too.")
    if dtype not in DTYPES:
        raise DataError(f"dtype={dtype!r} is not allowed: use one of {', '.join(DTYPES)}.")
    test = _parse_test(test)
    if (test_path is not None or (arrays is not None and arrays.X_test is not None)) and test != "official":
        raise DataError(f"test={test!r} with a test file (or test arrays): the test part is that file; drop "
                        "test= (or pass test='official'), or drop the test file to split the training file.")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise DataError(f"seed={seed!r} must be an integer.")
    seed = int(seed)
    if name == SYNTHETIC:
        parts = _synthetic_parts(synthetic, test=test, task=task, dtype=dtype)
    elif name is not None:
        parts = _registry_parts(name, test=test, task=task, dtype=dtype, strict=strict, progress=progress)
    elif arrays is not None:
        parts = _array_parts(arrays, task=task, dtype=dtype)
    else:
        parts = _user_parts(path, test_path=test_path, options=file_options or FileOptions(), task=task,
                            dtype=dtype, strict=strict, progress=progress)
    if classes is not None:
        _keep_classes(parts, classes, task)
    _add_test_part(parts, test, seed)
    return _dataset(parts)


@dataclass
class _Loaded:
    """A dataset on its way from its source to a Dataset: the arrays so far, and what was said of them."""
    label: str                # Dataset.name
    where: str                # how error messages name the data
    task: str
    X_train: object
    y_train: np.ndarray
    X_test: object = None
    y_test: np.ndarray | None = None
    declared_task: str | None = None    # the registry's task (None: inferred or synthetic)
    split: dict = field(default_factory=lambda: {"protocol": "stratified", "test_fraction": 0.25})
    official_test: str = "official test file"     # what the given test part is (synthetic: its test rows)
    notes: list = field(default_factory=list)
    files: list = field(default_factory=list)
    provenance: dict = field(default_factory=dict)


def _synthetic_parts(synthetic, *, test, task, dtype) -> _Loaded:
    spec = synthetic if isinstance(synthetic, SyntheticSpec) else SyntheticSpec(**(synthetic or {}))
    X_tr, y_tr, X_te, y_te, info = make(spec)
    parts = _Loaded(label=SYNTHETIC, where=f"synthetic {info['shape']} data", task=task or "binary",
                   X_train=X_tr, y_train=y_tr, official_test="official test rows", provenance={"synthetic": info})
    parts.notes.append(f"synthetic replica of {info['shape']} ({info['generator']}, variant {info.get('variant', 1)}, "
                       f"seed {info['seed']}): "
                       f"{info['n']:,} training rows, label noise {info['noise']:g} = Bayes error")
    if test == "official":
        parts.X_test, parts.y_test = X_te, y_te
        check_labels(parts.task, y_tr, y_te, parts.where)
    parts.X_train, parts.X_test = _as_dtype(parts.X_train, dtype), _as_dtype(parts.X_test, dtype)
    return parts


def _registry_parts(name, *, test, task, dtype, strict, progress) -> _Loaded:
    ds = get_spec(name)
    notes = [ds.description] + ([ds.note] if ds.note else [])
    files = []
    X_te = y_te = None
    if ds.format == "builtin":
        X_tr, y_tr = _load_builtin(ds)
        X_tr = _as_dtype(X_tr, dtype)
        where = f"dataset '{ds.name}'"
    else:
        p_tr, X_tr, y_tr, record = _load_registry_file(ds, ds.files["train"], progress=progress,
                                                       dtype=dtype, strict=strict)
        files.append(record)
        where = f"dataset '{ds.name}' ({p_tr})"
        used = [ds.files["train"]]
        if test == "official" and "test" in ds.files:
            p_te, X_te, y_te, record = _load_registry_file(ds, ds.files["test"], progress=progress,
                                                           dtype=dtype, strict=strict)
            files.append(record)
            where = f"dataset '{ds.name}' ({p_tr}, {p_te})"
            used.append(ds.files["test"])
        unpinned = [f.name for f in used if f.sha256 is None]
        if unpinned:
            notes.append(f"sha256 not pinned for {', '.join(unpinned)}: checked against the hash recorded on "
                         "first use")
    if task and task != ds.task:
        notes.append(f"task overridden: {ds.task} -> {task}")
    return _Loaded(label=ds.name, where=where, task=task or ds.task, X_train=X_tr, y_train=y_tr, X_test=X_te,
                  y_test=y_te, declared_task=ds.task, split=ds.split, notes=notes, files=files)


def _user_parts(path, *, test_path, options: FileOptions, task, dtype, strict, progress) -> _Loaded:
    train, test = read_user_files(path, test_path, options, dtype=dtype, progress=progress)
    p, X_tr, y_tr, fmt_note, record = _file_with_record(train, "train", strict)
    files, where = [record], str(p)
    X_te = y_te = None
    if test is not None:
        p_te, X_te, y_te, _, test_record = _file_with_record(test, "test", strict)
        files.append(test_record)
        where = f"{p}, {p_te}"
        if train.file.format in DENSE_FORMATS:        # svmlight files name their columns: a test file may use fewer
            _same_columns(X_tr, X_te, f"training file {p}", f"test file {p_te}", record, test_record)
    resolved_task = task or infer_task(y_tr)
    note = (f"user file {p} ({fmt_note}); task {resolved_task}"
            + ("" if task else " (inferred; pass task= to override)"))
    return _Loaded(label=str(path), where=where, task=resolved_task, X_train=X_tr, y_train=y_tr, X_test=X_te,
                  y_test=y_te, official_test="the test file (test_path)", notes=[note], files=files)


def _array_parts(arrays: UserArrays, *, task, dtype) -> _Loaded:
    """Arrays handed over in Python, checked as a file's rows are."""
    X_tr, y_tr = checked_arrays(arrays.X, arrays.y, "the training arrays (X, y)", dtype=dtype)
    X_te = y_te = None
    described = {"train": _array_record(X_tr, y_tr)}
    if arrays.X_test is not None or arrays.y_test is not None:
        X_te, y_te = checked_arrays(arrays.X_test, arrays.y_test, "the test arrays (X_test, y_test)", dtype=dtype)
        _same_columns(X_tr, X_te, "X", "X_test")
        described["test"] = _array_record(X_te, y_te)
    resolved_task = task or infer_task(y_tr)
    note = (f"arrays handed over in Python; task {resolved_task}"
            + ("" if task else " (inferred; set dataset.task to override)"))
    return _Loaded(label="arrays", where="the arrays", task=resolved_task, X_train=X_tr, y_train=y_tr, X_test=X_te,
                  y_test=y_te, official_test="the test arrays (X_test, y_test)", notes=[note], provenance={"arrays": described})


def _array_record(X, y) -> dict:
    """What run.json says of arrays: their shape and a digest of their values."""
    digest = hashlib.sha256()
    for part in ((X.data, X.indices, X.indptr) if sp.issparse(X) else (X,)) + (y,):
        digest.update(np.ascontiguousarray(part).tobytes())
    return {"rows": int(X.shape[0]), "features": int(X.shape[1]), "sparse": bool(sp.issparse(X)),
            "sha256": digest.hexdigest()}


def _same_columns(X_tr, X_te, train: str, test: str, train_record=None, test_record=None) -> None:
    names = [r.get("feature_columns") for r in (train_record or {}, test_record or {})]
    if X_tr.shape[1] != X_te.shape[1]:
        raise DataError(f"{train} has {X_tr.shape[1]} feature columns but {test} has {X_te.shape[1]}: "
                        f"{_unmatched_columns(names, X_tr.shape[1], X_te.shape[1], train, test)}. The test part "
                        "needs the training part's columns (and the label column in the same place).")
    if None not in names and names[0] != names[1]:
        i = next(i for i, (a, b) in enumerate(zip(*names)) if a != b)
        raise DataError(f"{test}'s header differs from {train}'s: feature column {i} is {names[1][i]!r} there, "
                        f"{names[0][i]!r} here. Give both files the same columns in the same order.")


def _unmatched_columns(names, n_train: int, n_test: int, train: str, test: str) -> str:
    """The feature columns one file has and the other lacks: by name where both have a header, else
    the feature columns beyond the narrower file (counted from 0, as `label:` counts)."""
    if None not in names:
        only = [(where, [c for c in mine if c not in theirs])
                for where, mine, theirs in ((train, *names), (test, *names[::-1]))]
        said = [f"only {where} has {', '.join(map(repr, cols))}" for where, cols in only if cols]
        if said:
            return "; ".join(said)
    wider = train if n_train > n_test else test
    first, last = min(n_train, n_test), max(n_train, n_test) - 1
    columns = f"column {first} has" if first == last else f"columns {first}..{last} have"
    return f"feature {columns} no counterpart in the other file ({wider} is the wider)"


def _keep_classes(parts: _Loaded, classes, task) -> None:
    if (task or parts.declared_task) == "regression":
        raise DataError(f"{parts.where}: `classes` selects classes of a classification task, but this is a "
                        "regression task. Set task: binary or multiclass to read its targets as class "
                        "labels, or drop classes.")
    parts.X_train, parts.y_train, parts.X_test, parts.y_test, note = keep_classes(
        parts.X_train, parts.y_train, parts.X_test, parts.y_test, classes, parts.where)
    parts.notes.append(note)
    parts.task = task or classes_task(classes)


def _add_test_part(parts: _Loaded, test, seed: int) -> None:
    """The official test part (padded to the training part's width), none, or a split of the
    training part: the registry's protocol for "official" without a test file, else `test`."""
    task, where = parts.task, parts.where
    if parts.X_test is not None:
        parts.X_train, parts.X_test = concat_features(parts.X_train, parts.X_test)
        check_labels(task, parts.y_train, parts.y_test, where)
        parts.notes.append(f"test = {parts.official_test} ({parts.X_test.shape[0]} rows)")
        return
    check_labels(task, parts.y_train, None, where)
    if test == "none":
        parts.notes.append("no test part")
        return
    kind = "stratified " if task != "regression" else ""
    if test != "official":
        parts.X_train, parts.y_train, parts.X_test, parts.y_test = split_fraction(
            parts.X_train, parts.y_train, task, test, seed, where)
        parts.notes.append(f"test = seeded {kind}{test:.0%} split of the training file (seed {seed})")
    elif parts.split["protocol"] == "tail":
        k = int(parts.split["n_test"])
        X, y = parts.X_train, parts.y_train
        if k >= y.shape[0]:
            raise DataError(f"{where}: {y.shape[0]} rows, but the split protocol takes the last {k} as "
                            "the test set. Use test=<fraction> instead.")
        parts.X_test, parts.y_test = X[-k:], y[-k:]
        parts.X_train, parts.y_train = X[:-k], y[:-k]
        check_labels(task, parts.y_train, parts.y_test, where)
        parts.notes.append(f"test = the last {k} rows (the dataset's official protocol)")
    else:
        frac = float(parts.split.get("test_fraction", 0.25))
        parts.X_train, parts.y_train, parts.X_test, parts.y_test = split_fraction(
            parts.X_train, parts.y_train, task, frac, seed, where)
        parts.notes.append(f"no official test file: test = seeded {kind}{frac:.0%} split of the training file "
                           f"(seed {seed})")


def _dataset(parts: _Loaded) -> Dataset:
    description = "; ".join(n.rstrip(".") for n in parts.notes if n)
    provenance = parts.provenance
    if parts.files:
        provenance["files"] = parts.files
        replicas = [f["synthetic_replica"] for f in parts.files if "synthetic_replica" in f]
        if replicas:
            provenance["synthetic"] = replicas[0]
            description += (f"; the file is a synthetic replica ({replicas[0]['generator']}): Bayes error "
                            f"{replicas[0]['bayes_error']:g}")
    return Dataset(name=parts.label, task=parts.task, X_train=parts.X_train, y_train=np.asarray(parts.y_train),
                   X_test=parts.X_test, y_test=None if parts.y_test is None else np.asarray(parts.y_test),
                   description=description, provenance=provenance)


def _as_dtype(X, dtype):
    return None if X is None else np.ascontiguousarray(X, dtype=dtype)


def with_description(ds: Dataset, extra: str) -> Dataset:
    return replace(ds, description=f"{ds.description}; {extra}" if ds.description else extra)
