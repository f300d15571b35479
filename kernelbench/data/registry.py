"""The dataset registry: `datasets/registry.yaml` -> validated, typed entries.

The registry file is found at `$KERNELBENCH_REGISTRY` if set (tests point it at a small file whose
URLs are a local HTTP server), else at `<repository>/datasets/registry.yaml`.
Every problem in the file is a DataError naming the file, the dataset and the field. An entry's keys
are declared once (kernelbench/schema: `DatasetSpec` and the sections in it); the documentation
site's reference of registry entries is generated from the declarations (`reference_markdown`).
"""
from __future__ import annotations

import copy
import difflib
import os
import re
from pathlib import Path

import yaml

from kernelbench._vocab import TASKS
from kernelbench.errors import DataError
from kernelbench.schema import (Count, Items, Named, Number, Text, Words, documented, fail, field, markdown,
                                read_mapping, read_section, refusals_as, rule, section, show)

FORMATS = ("svmlight", "csv", "builtin", "qm7")   # qm7: the QM7 MATLAB file (qm7.py parse_qm7)
COMPRESSIONS = ("none", "xz", "bz2", "gz", "zip")
SPLIT_PROTOCOLS = ("official", "stratified", "random", "tail")
BUILTIN_SOURCES = ("sklearn_digits_8_vs_6",)
ROLES = ("train", "test")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_TEXT = Text(None, "non-empty text")

# The repository's datasets/registry.yaml (source checkout, editable install); a wheel carries a
# copy next to this module (setup.py copies it at build time).
_REPO_REGISTRY = Path(__file__).resolve().parents[2] / "datasets" / "registry.yaml"
_PACKAGED_REGISTRY = Path(__file__).resolve().parent / "registry.yaml"
DEFAULT_REGISTRY = _REPO_REGISTRY if _REPO_REGISTRY.exists() else _PACKAGED_REGISTRY


@rule("an http(s) URL ending in a file name")
def URL(value, path: str) -> str:
    """An http(s) URL whose last segment is a file name (it names the download in the cache)."""
    if not isinstance(value, str) or not re.match(r"^https?://", value):
        fail(path, f"expected an http(s) URL or null, got {show(value)}")
    if value.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1] in ("", ".", ".."):
        fail(path, f"{value!r} must end in a file name (it names the download in the cache)")
    return value


@rule("64 hex digits, in quotes")
def SHA256(value, path: str) -> str:
    """64 hex digits (kept lower-case)."""
    digest = str(value).lower()
    if not _SHA256.match(digest):
        fail(path, f"{value!r} is not 64 hex digits (or null); write it in quotes")
    return digest


@section
class FileSpec:
    role: str = field(None, "train | test", key=False, required=True)
    name: str = field(None, "the decompressed file name, e.g. ijcnn1.t; local copies are found as name, name.xz, "
                            "name.bz2, name.gz or the URL's basename, in the cache dir and in every mirror dir",
                      Text(None, "a plain file name (no folder, not starting with '.')", r"[^./][^/]*\Z"),
                      required=True, mandatory=True)
    url: str | None = field(None, "the canonical download (the LIBSVM site, UCI, quantum-machine.org); null: no "
                                  "public download known (the note then says where the data comes from and why it "
                                  "cannot be fetched)", URL, required=True)
    compression: str = field("none", "of the download (zip: `member` names the file inside)", Words(COMPRESSIONS),
                             required=True)
    sha256: str | None = field(None, "of the decompressed content; null: not pinned, the sha256 of the first use is "
                                     "recorded in the cache dir and later uses are checked against it (trust on "
                                     "first use)", SHA256, required=True)
    n: int | None = field(None, "rows in the file", Count(1, "a positive integer"), required=True)
    member: str | None = field(None, "the file inside a zip download", _TEXT)
    dataset: str = field("", "the registry entry it belongs to (named in messages)", key=False)

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


@section
class Split:
    """How a test part is made when a config asks for `test: official` and there is no test file."""
    protocol: str = field(None, "official: the test file; stratified: a seeded stratified split of the train file; "
                                "random: a seeded random split (regression); tail: its last n_test rows",
                          Words(SPLIT_PROTOCOLS), required=True, mandatory=True)
    test_fraction: float | None = field(None, "stratified, random: the test part's share of the rows",
                                        Number(0, 1, "must lie in (0, 1), got {}", open_low=True, open_high=True))
    n_test: int | None = field(None, "tail: the test part's rows", Count(1, "a positive integer"))


@section
class CsvOptions:
    """How a csv file is read (format csv)."""
    label_column: int = field(0, "the labels' column, 0 the first", Count(0, "a column index >= 0"))
    header_rows: int = field(0, "lines before the first row", Count(0, "an integer >= 0"))
    delimiter: str = field(",", "what separates the fields of a line", Text(1, "one character", r"[^\r\n]\Z", empty=True))


@section
class DatasetSpec:
    name: str = field(None, "the entry's key under `datasets:`", key=False, required=True)
    task: str = field(None, "what the labels are", Words(TASKS), required=True, mandatory=True)
    format: str = field(None, "of the files (qm7: the QM7 MATLAB v5 file, kernelbench/data/qm7.py; builtin: "
                              "generated from `source`)", Words(FORMATS), required=True, mandatory=True)
    d: int = field(None, "number of features (svmlight files are parsed with n_features = d, 1-based indices)",
                   Count(1, "a positive integer (number of features)"), required=True, mandatory=True)
    description: str = field(None, "one line", _TEXT, required=True, mandatory=True)
    files: dict = field(None, "train (required unless the format is builtin) and an optional test file",
                        Named(FileSpec, "role"), shown="none (builtin)", required=True)     # role -> FileSpec
    split: dict = field({"protocol": "stratified", "test_fraction": 0.25}, "how a test part is made", Split,
                        shown="{protocol: stratified, test_fraction: 0.25}", required=True)    # as written
    note: str = field("", "caveats shown in `kernelbench datasets info` and in Dataset.description",
                      Text(None, "text", empty=True))
    papers: tuple = field((), "the set's names in the papers, e.g. \"001 Adult\"", Items(_TEXT))
    csv: dict = field({}, "format csv: how the file is read (the defaults when not given)", CsvOptions)
    source: str | None = field(None, "builtin: the data source", Words(BUILTIN_SOURCES))
    raw: dict = field({}, "the entry as written in the YAML", key=False)
    n = field(None, "builtin: rows (a set without files says its size here)", Count(1, "a positive integer"))


@section
class RegistryFile:
    version: int = field(1, "the registry format's version",
                         Count(1, "an integer", among=(1,), refusal="expected 1, got {}"), required=True)
    datasets: dict = field(None, "one entry per data set, under its name", Named(DatasetSpec, "dataset"),
                           required=True, mandatory=True)


REGISTRY_RULES = """\
The registry is `datasets/registry.yaml` (or the file `$KERNELBENCH_REGISTRY` names). A builtin dataset names a
`source` and has no files; any other has a `files.train`. `split` with protocol official needs a `files.test`,
stratified and random a `test_fraction`, tail an `n_test`. `csv` is read only for format csv."""


def reference_markdown() -> str:
    """The documentation site's reference of registry entries: every key, its default and meaning."""
    return markdown(documented(RegistryFile), REGISTRY_RULES)


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
    with refusals_as(lambda where, why: DataError(f"Dataset registry {path}: {where}: {why}. Fix the file.")):
        read_section(RegistryFile, doc, "")
    out = {}
    for name, entry in doc["datasets"].items():
        with refusals_as(lambda where, why: DataError(f"Dataset registry {path}: dataset '{name}', field "
                                                      f"'{where or '(entry)'}': {why}. Fix the registry entry.")):
            out[str(name)] = _read_entry(str(name), entry)
    return out


def _read_entry(name: str, entry) -> DatasetSpec:
    """One entry: its keys as declared, then the rules that tie them together."""
    values = read_section(DatasetSpec, entry, "")
    del values["n"]                     # kept in `raw` (kernelbench datasets info shows it)
    given = read_mapping(entry.get("files"), "files", ROLES)
    files = {role: _read_file(raw, role, name) for role, raw in given.items()}
    if values["format"] == "builtin":
        if values["source"] is None:
            fail("source", f"a builtin dataset needs one of {', '.join(BUILTIN_SOURCES)}")
        if files:
            fail("files", "a builtin dataset has no files")
    elif "train" not in files:
        fail("files.train", "missing")
    split = entry.get("split") or DatasetSpec.declared["split"].default
    protocol = read_section(Split, split, "split")
    if protocol["protocol"] in ("stratified", "random") and protocol["test_fraction"] is None:
        fail("split.test_fraction", f"missing: a {protocol['protocol']} split needs the test part's share, e.g. 0.25")
    if protocol["protocol"] == "tail" and protocol["n_test"] is None:
        fail("split.n_test", "missing: a tail split needs the test part's rows")
    if protocol["protocol"] == "official" and "test" not in files:
        fail("split", "protocol 'official' needs a files.test entry")
    if values["format"] == "csv":
        csv = read_section(CsvOptions, entry.get("csv"), "csv")
    elif entry.get("csv"):
        fail("csv", "says how a csv file is read, but the format is not csv: drop it")
    else:
        csv = {}
    values.update(description=values["description"].strip(), note=values["note"].strip())
    return DatasetSpec(name=name, files=files, split=dict(split), csv=csv, raw=copy.deepcopy(entry), **values)


def _read_file(raw, role: str, dataset: str) -> FileSpec:
    values = read_section(FileSpec, raw, f"files.{role}")
    if values["compression"] == "zip" and not values["member"]:
        fail(f"files.{role}.member", "a zip download needs the member (file inside the archive)")
    return FileSpec(role=role, dataset=dataset, **values)


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
