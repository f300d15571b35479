"""Dataset files on this machine: the cache dir and its locks, compressed files read as their
decompressed content, and the sha256 check of that content with the stamps that remember it.

Layout of the cache dir (`$KERNELBENCH_DATA`, default `platformdirs.user_cache_dir("kernelbench")`):

    <cache>/<download name>          verified downloads, as downloaded (e.g. ijcnn1.bz2), or files a user put there
    <cache>/<download name>.part     an unfinished download (resumed with a Range request; never read as data)
    <cache>/verified/*.json          "this path with this size and mtime has this sha256" stamps
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
    bar = byte_bar(progress, total=None, desc=f"verify {Path(path).name}")
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


# ------------------------------------------------------------------ verification

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
    """The sha256 this file was verified with (its stamp still matches its size and mtime), or None."""
    return _read_stamp(data_dirs()["cache"], path, _member_for(path, fspec))


def mismatch_error(path: Path, fspec: FileSpec, found: str) -> DataError:
    member = _member_for(path, fspec)
    return DataError(
        f"Checksum mismatch for {path}{f' (member {member})' if member else ''}: expected sha256 "
        f"{fspec.sha256} (of the decompressed content, from the registry), found {found}. "
        "The file is corrupt or a different version: delete or replace it"
        + (f" with the file from {fspec.url}" if fspec.url else "") + ", then fetch again.")


def record_verified(path: Path, fspec: FileSpec, sha: str) -> None:
    """Stamp a file whose decompressed content was hashed elsewhere (while parsing it)."""
    if sha != fspec.sha256:
        raise mismatch_error(path, fspec, sha)
    write_stamp(data_dirs()["cache"], path, _member_for(path, fspec), sha)


def verify_file(path: Path, fspec: FileSpec, *, progress: bool = False) -> str | None:
    """Check a local file against the registry sha256 (of the decompressed content).

    Returns the verified sha256, or None when the registry has none (accepted unverified).
    A mismatch is a DataError with expected, found and the path.
    """
    if fspec.sha256 is None:
        return None
    cache = data_dirs()["cache"]
    member = _member_for(path, fspec)
    found = _read_stamp(cache, path, member)
    if found is None:
        found = sha256_of(path, None, member, progress=progress)
    if found != fspec.sha256:
        raise mismatch_error(path, fspec, found)
    write_stamp(cache, path, member, found)
    return found
