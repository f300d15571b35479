"""The dataset registry: `datasets/registry.yaml` -> validated, typed entries.

The registry file is found at `$KERNELBENCH_REGISTRY` if set (tests point it at a small file whose
URLs are a local HTTP server), else at `<repository>/datasets/registry.yaml`.
Every problem in the file is a DataError naming the file, the dataset and the field.
"""
from __future__ import annotations

import copy
import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from kernelbench._vocab import TASKS
from kernelbench.errors import DataError

FORMATS = ("svmlight", "csv", "builtin", "qm7")   # qm7: the QM7 MATLAB file (qm7.py parse_qm7)
COMPRESSIONS = ("none", "xz", "bz2", "gz", "zip")
SPLIT_PROTOCOLS = ("official", "stratified", "random", "tail")
BUILTIN_SOURCES = ("sklearn_digits_8_vs_6",)
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

# The repository's datasets/registry.yaml (source checkout, editable install); a wheel carries a
# copy next to this module (setup.py copies it at build time).
_REPO_REGISTRY = Path(__file__).resolve().parents[2] / "datasets" / "registry.yaml"
_PACKAGED_REGISTRY = Path(__file__).resolve().parent / "registry.yaml"
DEFAULT_REGISTRY = _REPO_REGISTRY if _REPO_REGISTRY.exists() else _PACKAGED_REGISTRY


@dataclass(frozen=True)
class FileSpec:
    role: str                 # "train" | "test"
    name: str                 # decompressed file name, e.g. "ijcnn1.t"
    url: str | None
    compression: str          # compression of the download
    sha256: str | None        # of the decompressed content
    n: int | None             # rows
    member: str | None = None  # file inside a zip download
    dataset: str = ""          # the registry entry it belongs to (named in messages)

    @property
    def download_name(self) -> str | None:
        """File name the download is stored under in the cache (the URL's basename)."""
        if not self.url:
            return None
        return self.url.rstrip("/").rsplit("/", 1)[-1] or None

    def candidates(self) -> list[str]:
        """Names a local copy may have: decompressed, or .xz/.bz2/.gz, or as downloaded."""
        base = self.name
        for suffix in (".xz", ".bz2", ".gz"):
            if base.endswith(suffix):
                base = base[: -len(suffix)]
        names = [base, base + ".xz", base + ".bz2", base + ".gz"]
        if self.download_name and self.download_name not in names:
            names.append(self.download_name)
        return names


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    task: str
    format: str
    d: int
    description: str
    files: dict                # role -> FileSpec
    split: dict                # {"protocol": ..., "test_fraction"/"n_test": ...}
    note: str = ""
    papers: tuple = ()
    csv: dict = field(default_factory=dict)
    source: str | None = None  # builtin data source
    raw: dict = field(default_factory=dict)   # the entry as written in the YAML


def registry_path() -> Path:
    env = os.environ.get("KERNELBENCH_REGISTRY")
    return Path(env).expanduser() if env else DEFAULT_REGISTRY


_CACHE: dict = {}


def load_registry() -> dict[str, DatasetSpec]:
    """All registry entries, validated. Cached per (path, mtime)."""
    path = registry_path()
    try:
        stat = path.stat()
    except OSError:
        raise DataError(
            f"Dataset registry not found at {path}. "
            + ("Fix $KERNELBENCH_REGISTRY (it names a missing file) or unset it."
               if os.environ.get("KERNELBENCH_REGISTRY")
               else "The repository's datasets/registry.yaml is missing: restore it from git.")
        ) from None
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = _parse_registry(path)
    return _CACHE[key]


def _parse_registry(path: Path) -> dict[str, DatasetSpec]:
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(f"Dataset registry {path} is not valid YAML: {exc}. Fix the file.") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("datasets"), dict):
        raise DataError(f"Dataset registry {path} must be a mapping with a 'datasets:' mapping. Fix the file.")
    out = {}
    for name, entry in doc["datasets"].items():
        out[str(name)] = _parse_entry(path, str(name), entry)
    return out


def _parse_entry(path: Path, name: str, entry) -> DatasetSpec:
    def bad(fld, why):
        return DataError(f"Dataset registry {path}: dataset '{name}', field '{fld}': {why}. Fix the registry entry.")

    if not isinstance(entry, dict):
        raise bad("(entry)", "must be a mapping")
    task = entry.get("task")
    if task not in TASKS:
        raise bad("task", f"{task!r} is not one of {', '.join(TASKS)}")
    fmt = entry.get("format")
    if fmt not in FORMATS:
        raise bad("format", f"{fmt!r} is not one of {', '.join(FORMATS)}")
    d = entry.get("d")
    if not isinstance(d, int) or isinstance(d, bool) or d < 1:
        raise bad("d", f"{d!r} must be a positive integer (number of features)")
    description = entry.get("description")
    if not isinstance(description, str) or not description.strip():
        raise bad("description", "a one-line description is required")
    files_raw = entry.get("files") or {}
    if not isinstance(files_raw, dict):
        raise bad("files", "must be a mapping with 'train' and optional 'test'")
    unknown = set(files_raw) - {"train", "test"}
    if unknown:
        raise bad("files", f"unknown part(s) {sorted(unknown)}; allowed: train, test")
    files = {}
    for role, f in files_raw.items():
        files[role] = _parse_file(bad, name, role, f)
    source = entry.get("source")
    if fmt == "builtin":
        if source not in BUILTIN_SOURCES:
            raise bad("source", f"{source!r} is not one of {', '.join(BUILTIN_SOURCES)}")
        if files:
            raise bad("files", "a builtin dataset has no files")
    elif "train" not in files:
        raise bad("files.train", "missing")
    split = entry.get("split") or {"protocol": "stratified", "test_fraction": 0.25}
    if not isinstance(split, dict) or split.get("protocol") not in SPLIT_PROTOCOLS:
        raise bad("split.protocol", f"{split!r}: protocol must be one of {', '.join(SPLIT_PROTOCOLS)}")
    if split["protocol"] in ("stratified", "random"):
        frac = split.get("test_fraction")
        if not isinstance(frac, (int, float)) or not 0 < frac < 1:
            raise bad("split.test_fraction", f"{frac!r} must be a number in (0, 1)")
    if split["protocol"] == "tail":
        k = split.get("n_test")
        if not isinstance(k, int) or k < 1:
            raise bad("split.n_test", f"{k!r} must be a positive integer")
    if split["protocol"] == "official" and "test" not in files:
        raise bad("split", "protocol 'official' needs a files.test entry")
    csv = entry.get("csv") or {}
    if fmt == "csv":
        csv = {"label_column": 0, "header_rows": 0, "delimiter": ",", **csv}
        if not isinstance(csv["label_column"], int) or csv["label_column"] < 0:
            raise bad("csv.label_column", f"{csv['label_column']!r} must be a column index >= 0")
        if not isinstance(csv["header_rows"], int) or csv["header_rows"] < 0:
            raise bad("csv.header_rows", f"{csv['header_rows']!r} must be an integer >= 0")
    return DatasetSpec(
        name=name, task=task, format=fmt, d=d, description=description.strip(), files=files,
        split=dict(split), note=str(entry.get("note") or "").strip(),
        papers=tuple(entry.get("papers") or ()), csv=csv, source=source, raw=copy.deepcopy(entry),
    )


def _parse_file(bad, dataset, role, f) -> FileSpec:
    if not isinstance(f, dict):
        raise bad(f"files.{role}", "must be a mapping with name, url, compression, sha256, n")
    fname = f.get("name")
    if not isinstance(fname, str) or not fname or "/" in fname or fname.startswith("."):
        raise bad(f"files.{role}.name", f"{fname!r} must be a plain file name")
    url = f.get("url")
    if url is not None and (not isinstance(url, str) or not re.match(r"^https?://", url)):
        raise bad(f"files.{role}.url", f"{url!r} must be an http(s) URL or null")
    if url is not None and url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1] in ("", ".", ".."):
        raise bad(f"files.{role}.url", f"{url!r} must end in a file name (it names the download in the cache)")
    comp = f.get("compression", "none")
    if comp not in COMPRESSIONS:
        raise bad(f"files.{role}.compression", f"{comp!r} is not one of {', '.join(COMPRESSIONS)}")
    member = f.get("member")
    if comp == "zip" and not member:
        raise bad(f"files.{role}.member", "a zip download needs the member (file inside the archive)")
    sha = f.get("sha256")
    if sha is not None:
        sha = str(sha).lower()
        if not _SHA256.match(sha):
            raise bad(f"files.{role}.sha256", f"{f.get('sha256')!r} is not 64 hex digits (or null); write it in quotes")
    n = f.get("n")
    if n is not None and (not isinstance(n, int) or n < 1):
        raise bad(f"files.{role}.n", f"{n!r} must be a positive integer or null")
    return FileSpec(role=role, name=fname, url=url, compression=comp, sha256=sha, n=n, member=member,
                    dataset=dataset)


def get_spec(name: str) -> DatasetSpec:
    reg = load_registry()
    if not isinstance(name, str) or name not in reg:
        close = difflib.get_close_matches(str(name), list(reg), n=3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise DataError(
            f"Unknown dataset {name!r}.{hint} Known datasets: {', '.join(sorted(reg))} "
            f"(see `kernelbench datasets list`), or pass `path:` for your own file."
        )
    return reg[name]


def dataset_names() -> list[str]:
    """Registry keys, sorted."""
    return sorted(load_registry())
