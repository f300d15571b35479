"""Dataset files on this machine: the cache dir and its locks, compressed files read as their
decompressed content, and the sha256 check of that content (against the registry's pin, or the hash
recorded on the file's first use) with the stamps that remember it.

Layout of the cache dir (`$KERNELBENCH_DATA`, default `platformdirs.user_cache_dir("kernelbench")`):

    <cache>/<download name>          checked downloads, as downloaded (e.g. ijcnn1.bz2), or files a user put there
    <cache>/<download name>.part     an unfinished download (resumed with a Range request; never read as data)
    <cache>/<download name>.part.json  the version (ETag / Last-Modified) the .part is of (If-Range on resume)
    <cache>/verified/*.json          "this path with this size and mtime has this sha256" stamps (a speed-up)
    <cache>/recorded-sha256/*.json   the sha256 of a file the registry pins none for, recorded on its first use
    <cache>/parsed/<key>/*.npy       parsed arrays (see parse.py)
    <cache>/.locks/*.lock            filelock files

Mirror dirs (`$KERNELBENCH_MIRROR`, colon-separated) are read in place, never copied or written.
"""
from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import os
import re
import sys
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock
from tqdm import tqdm

from kernelbench._io import atomic_write_text, cache_root, safe_name
from kernelbench.errors import DataError, OutputError

from .registry import FileSpec

CHUNK = 1 << 20
_COMPRESSED_SUFFIXES = {".xz": "xz", ".bz2": "bz2", ".gz": "gz", ".zip": "zip"}


# ------------------------------------------------------------------ directories

def data_dirs() -> dict:
    """{"cache": Path, "mirrors": [Path, ...]} from $KERNELBENCH_DATA and $KERNELBENCH_MIRROR."""
    cache = cache_root()
    mirrors = [Path(p).expanduser() for p in os.environ.get("KERNELBENCH_MIRROR", "").split(os.pathsep) if p.strip()]
    return {"cache": cache, "mirrors": mirrors}


def ensure_cache(cache: Path) -> None:
    try:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / ".locks").mkdir(exist_ok=True)
    except OSError as exc:
        raise DataError(
            f"Cannot create the dataset cache dir {cache}: {exc}. "
            "Set $KERNELBENCH_DATA to a writable folder."
        ) from None


@contextmanager
def cache_lock(cache: Path, key: str):
    """An inter-process lock on one cache entry (download or parsed arrays)."""
    ensure_cache(cache)
    with FileLock(str(cache / ".locks" / f"{safe_name(key, default='entry', max_length=150)}.lock")):
        yield


# ------------------------------------------------------------------ reading compressed files

def compression_of(path: Path) -> str:
    """Compression by file extension (.xz/.bz2/.gz/.zip); files without one are sniffed by magic bytes."""
    suffix = Path(path).suffix.lower()
    if suffix in _COMPRESSED_SUFFIXES:
        return _COMPRESSED_SUFFIXES[suffix]
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
    except OSError:
        return "none"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"BZh"):
        return "bz2"
    if head.startswith(b"\x1f\x8b"):
        return "gz"
    return "none"


def open_decompressed(path: Path, compression: str | None = None, member: str | None = None, raw=None):
    """A binary stream of the decompressed content of `path`; `raw`: an open binary file of it to
    read from instead (e.g. one that counts the compressed bytes, for a progress bar)."""
    comp = compression or compression_of(path)
    source = path if raw is None else raw
    try:
        if comp == "xz":
            return lzma.open(source, "rb")
        if comp == "bz2":
            return bz2.open(source, "rb")
        if comp == "gz":
            return gzip.open(source, "rb")
        if comp == "zip":
            zf = zipfile.ZipFile(source)
            names = zf.namelist()
            if member is None:
                if len(names) != 1:
                    raise DataError(f"{path}: zip archive holds {len(names)} files ({', '.join(names[:5])}); "
                                    "the registry must name the member to read.")
                member = names[0]
            if member.startswith(("/", "\\")) or ".." in re.split(r"[/\\]", member) or re.match(r"^[A-Za-z]:", member):
                raise DataError(f"{path}: refusing zip member {member!r}: an absolute path or one with '..' "
                                "(path traversal). Replace the archive.")
            if member not in names:
                raise DataError(f"{path}: zip archive has no member {member!r} (it holds {', '.join(names[:10])}). "
                                "Replace the archive with the one from the registry URL.")
            return zf.open(member)
        return open(path, "rb") if raw is None else raw
    except (OSError, zipfile.BadZipFile) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"Cannot open {path}: {exc}. Check the file exists and is a complete {comp} file.") from None


DECOMPRESSION_ERRORS = (EOFError, lzma.LZMAError, zlib.error, zipfile.BadZipFile, OSError)


def corrupt_error(path: Path, exc: BaseException, comp: str) -> DataError:
    return DataError(
        f"{path}: the {comp}-compressed file is truncated or corrupt ({type(exc).__name__}: {exc}). "
        "Delete it and fetch it again (`kernelbench datasets fetch NAME`), or replace it with a complete copy."
    )


def sha256_of(path: Path, compression: str | None = None, member: str | None = None, progress: bool = False) -> str:
    """sha256 of the DECOMPRESSED content; a truncated/corrupt compressed file is a DataError."""
    comp = compression or compression_of(path)
    h = hashlib.sha256()
    bar = byte_bar(progress, total=None, desc=f"sha256 {Path(path).name}")
    try:
        with open_decompressed(path, comp, member) as fh:
            while True:
                chunk = fh.read(CHUNK)
                if not chunk:
                    break
                h.update(chunk)
                bar.update(len(chunk))
    except DataError:
        raise
    except DECOMPRESSION_ERRORS as exc:
        raise corrupt_error(path, exc, comp) from None
    finally:
        bar.close()
    return h.hexdigest()


def byte_bar(progress: bool, total, desc: str, initial: int = 0):
    return tqdm(total=total, initial=initial, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, disable=not (progress and sys.stderr.isatty()), leave=False)


# ------------------------------------------------------------------ stamps: hashes remembered per path

def _member_for(path: Path, fspec: FileSpec) -> str | None:
    return fspec.member if compression_of(path) == "zip" else None


def _stamp_path(cache: Path, path: Path, member: str | None) -> Path:
    key = hashlib.sha1(f"{Path(path).resolve()}::{member or ''}".encode()).hexdigest()
    return cache / "verified" / f"{key}.json"


def _read_stamp(cache: Path, path: Path, member: str | None) -> str | None:
    sp = _stamp_path(cache, path, member)
    try:
        st = path.stat()
        doc = json.loads(sp.read_text())
        if doc["size"] == st.st_size and doc["mtime_ns"] == st.st_mtime_ns and doc["path"] == str(Path(path).resolve()):
            return doc["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def write_stamp(cache: Path, path: Path, member: str | None, sha: str) -> None:
    sp = _stamp_path(cache, path, member)
    try:
        st = path.stat()
        sp.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(sp, json.dumps({"path": str(Path(path).resolve()), "size": st.st_size,
                                          "mtime_ns": st.st_mtime_ns, "sha256": sha}))
    except (OSError, OutputError):
        pass  # a stamp is only a speed-up


def stamped_sha256(path: Path, fspec: FileSpec) -> str | None:
    """The sha256 this file was last hashed to (its stamp still matches its size and mtime), or None."""
    return _read_stamp(data_dirs()["cache"], path, _member_for(path, fspec))


# ------------------------------------------------------------------ trust: pinned and recorded sha256

PINNED, RECORDED, NOT_YET = "pinned", "recorded", "not yet"     # what `datasets list` says per file


@dataclass(frozen=True)
class Trust:
    """The sha256 a file's decompressed content must have, and where that hash comes from: pinned in
    the registry, or recorded in the cache when the file was first used (trust on first use)."""
    sha256: str
    kind: str                       # PINNED or RECORDED
    record: Path | None = None      # RECORDED: the record file (None: the cache dir was not writable)
    recorded_at: str = ""           # RECORDED: UTC time of the first use
    source: str = ""                # RECORDED: the file it was computed from
    first_use: bool = False         # RECORDED just now

    def describe(self) -> str:
        """What a check against this hash established, in words that do not overstate it."""
        if self.kind == PINNED:
            return "verified: sha256 matches the one pinned in the registry"
        if self.record is None:
            return "sha256 not pinned, and not recorded (the cache dir is not writable)"
        if self.first_use:
            return f"sha256 recorded on first use (not pinned), in {self.record}"
        return f"sha256 matches the one recorded on first use, {self.recorded_at} (not pinned)"


def record_path(fspec: FileSpec) -> Path:
    """The record of an unpinned file's sha256, keyed by what identifies the file (URL, name,
    member) so that a dataset sharing it (mnist8m's test file is mnist's) shares the record."""
    key = hashlib.sha1(f"{fspec.url or ''}|{fspec.name}|{fspec.member or ''}".encode()).hexdigest()[:10]
    return data_dirs()["cache"] / "recorded-sha256" / f"{safe_name(fspec.name, default='file')}-{key}.json"


def expected_sha256(fspec: FileSpec) -> Trust | None:
    """The pinned sha256, else the one recorded on first use, else None (not used yet)."""
    if fspec.sha256 is not None:
        return Trust(fspec.sha256, PINNED)
    path = record_path(fspec)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise DataError(f"The sha256 record {path} of '{fspec.name}' is unreadable ({exc}). Delete it: the next "
                        "use of the file records its hash again.") from None
    sha = doc.get("sha256") if isinstance(doc, dict) else None
    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{64}", sha):
        raise DataError(f"The sha256 record {path} of '{fspec.name}' holds no sha256. Delete it: the next use "
                        "of the file records its hash again.")
    return Trust(sha, RECORDED, record=path, recorded_at=str(doc.get("recorded_at", "")),
                 source=str(doc.get("source", "")))


def trust_state(fspec: FileSpec) -> str:
    """PINNED, RECORDED or NOT_YET (hashed and recorded on its first use)."""
    if fspec.sha256 is not None:
        return PINNED
    return RECORDED if record_path(fspec).is_file() else NOT_YET


def _record_first_use(fspec: FileSpec, path: Path, sha: str) -> Trust:
    record = record_path(fspec)
    at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = {"file": fspec.name, "member": fspec.member, "url": fspec.url, "dataset": fspec.dataset,
           "sha256": sha, "recorded_at": at, "source": str(Path(path).resolve())}
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(record, json.dumps(doc, indent=1) + "\n")
    except (OSError, OutputError):
        return Trust(sha, RECORDED, record=None, first_use=True)    # a read-only cache still loads data
    return Trust(sha, RECORDED, record=record, recorded_at=at, source=doc["source"], first_use=True)


def check_sha256(path: Path, fspec: FileSpec, found: str, *, stamp: bool = True) -> Trust:
    """Check the sha256 `found` for the decompressed content of `path` against the pinned or recorded
    one (a mismatch is a DataError naming the file, both hashes and the fix); an unpinned file used
    for the first time has its hash recorded. Stamps the file (unless `found` came from its stamp),
    so a later check costs no pass."""
    cache = data_dirs()["cache"]
    trust = expected_sha256(fspec)
    if trust is None:
        try:
            with cache_lock(cache, "record-" + record_path(fspec).name):
                trust = expected_sha256(fspec) or _record_first_use(fspec, path, found)   # one first use
        except (OSError, DataError):     # no lock in a read-only cache dir: the data still loads
            trust = expected_sha256(fspec) or Trust(found, RECORDED, record=None, first_use=True)
    if found != trust.sha256:
        raise mismatch_error(path, fspec, found, trust)
    if stamp:
        write_stamp(cache, path, _member_for(path, fspec), found)
    return trust


def mismatch_error(path: Path, fspec: FileSpec, found: str, trust: Trust | None = None) -> DataError:
    trust = trust or Trust(fspec.sha256, PINNED)
    member = _member_for(path, fspec)
    what = f"{path}{f' (member {member})' if member else ''}"
    refetch = f"`kernelbench datasets fetch {fspec.dataset}`" if fspec.dataset else "the fetch"
    if trust.kind == PINNED:
        return DataError(
            f"Checksum mismatch for {what}: expected sha256 {trust.sha256} (of the decompressed content, "
            f"pinned in the registry), found {found}. The file is corrupt or a different version: delete or "
            "replace it" + (f" with the file from {fspec.url}" if fspec.url else "") + f", then run {refetch} again.")
    return DataError(
        f"Checksum mismatch for {what}: its decompressed content has sha256 {found}, but {trust.sha256} was "
        f"recorded when this file was first used ({trust.recorded_at}, from {trust.source}; the record is "
        f"{trust.record}; the registry pins no sha256 for it). The file changed since then. Fix: delete or "
        f"replace {path} and run {refetch} again; if the new content is the one you want (the publisher "
        f"changed the file), delete {trust.record} instead and the next use records the new hash.")


def verify_file(path: Path, fspec: FileSpec, *, progress: bool = False) -> Trust:
    """Check a local file against its pinned or recorded sha256 (of the decompressed content), or
    record the sha256 on its first use; one pass over the file unless a stamp says it was hashed."""
    stamped = _read_stamp(data_dirs()["cache"], path, _member_for(path, fspec))
    found = stamped or sha256_of(path, None, _member_for(path, fspec), progress=progress)
    return check_sha256(path, fspec, found, stamp=stamped is None)
