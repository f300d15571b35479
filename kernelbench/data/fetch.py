"""Make dataset files available locally: cache dir -> mirror dirs -> download.

Layout of the cache dir (`$KERNELBENCH_DATA`, default `platformdirs.user_cache_dir("kernelbench")`):

    <cache>/<download name>          verified downloads, as downloaded (e.g. ijcnn1.bz2), or files a user put there
    <cache>/<download name>.part     an unfinished download (resumed with a Range request; never read as data)
    <cache>/verified/*.json          "this path with this size and mtime has this sha256" stamps
    <cache>/parsed/<key>/*.npy       parsed arrays (see load.py)
    <cache>/.locks/*.lock            filelock files

Mirror dirs (`$KERNELBENCH_MIRROR`, colon-separated) are read in place, never copied or written.
A file is looked up as its decompressed name, with .xz/.bz2/.gz, or as the URL's basename.

Downloads follow only https URLs (plain http only to a loopback host and only when
`KERNELBENCH_ALLOW_HTTP_LOOPBACK=1`, for tests); they stream into `<name>.part` under a file lock,
are decompressed and checked against the registry's sha256 and only then renamed into place, so a
partial or unverified download never becomes a cache entry. `KERNELBENCH_OFFLINE=1` skips them.
"""
from __future__ import annotations

import bz2
import concurrent.futures
import gzip
import hashlib
import ipaddress
import json
import lzma
import os
import re
import socket
import sys
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urljoin, urlparse

from filelock import FileLock
from tqdm import tqdm

from kernelbench._io import atomic_write_text, cache_root, safe_name
from kernelbench.errors import DataError, OutputError

from .registry import DatasetSpec, FileSpec, get_spec, registry_path

CONNECT_TIMEOUT = 10.0      # seconds to resolve + connect; no network must fail fast
READ_TIMEOUT = 60.0         # seconds without a byte before a download is abandoned (resumable)
CHUNK = 1 << 20
MAX_REDIRECTS = 5
_COMPRESSED_SUFFIXES = {".xz": "xz", ".bz2": "bz2", ".gz": "gz", ".zip": "zip"}


# ------------------------------------------------------------------ directories

def data_dirs() -> dict:
    """{"cache": Path, "mirrors": [Path, ...]} from $KERNELBENCH_DATA and $KERNELBENCH_MIRROR."""
    cache = cache_root()
    mirrors = [Path(p).expanduser() for p in os.environ.get("KERNELBENCH_MIRROR", "").split(os.pathsep) if p.strip()]
    return {"cache": cache, "mirrors": mirrors}


def _offline() -> bool:
    return os.environ.get("KERNELBENCH_OFFLINE", "").strip().lower() not in ("", "0", "false", "no")


def _ensure_cache(cache: Path) -> None:
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
    _ensure_cache(cache)
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
    bar = _bar(progress, total=None, desc=f"verify {Path(path).name}")
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


def _bar(progress: bool, total, desc: str, initial: int = 0):
    return tqdm(total=total, initial=initial, desc=desc, unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, disable=not (progress and sys.stderr.isatty()), leave=False)


# ------------------------------------------------------------------ resolution

def resolve_local(fspec: FileSpec) -> Path | None:
    """The first local copy of a file: cache dir, then each mirror dir; None if there is none."""
    dirs = data_dirs()
    for folder in [dirs["cache"], *dirs["mirrors"]]:
        for cand in fspec.candidates():
            p = folder / cand
            if p.is_file():
                return p
    return None


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


def _write_stamp(cache: Path, path: Path, member: str | None, sha: str) -> None:
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
    _write_stamp(data_dirs()["cache"], path, _member_for(path, fspec), sha)


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
    _write_stamp(cache, path, member, found)
    return found


# ------------------------------------------------------------------ download

def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url_allowed(url: str) -> None:
    parsed = urlparse(url)
    if parsed.scheme == "https":
        return
    if parsed.scheme == "http" and _is_loopback(parsed.hostname) and os.environ.get("KERNELBENCH_ALLOW_HTTP_LOOPBACK") == "1":
        return
    raise DataError(
        f"Refusing to download {url}: only https URLs are followed (plain http only to a loopback host with "
        "KERNELBENCH_ALLOW_HTTP_LOOPBACK=1). Fix the registry URL, or download the file yourself."
    )


def _resolve_host_quickly(url: str) -> None:
    """Name resolution has no timeout in requests; bound it so no network fails in seconds."""
    import requests     # only when downloading: the data layer answers offline commands without it

    host = urlparse(url).hostname
    if not host or _is_loopback(host) or requests.utils.get_environ_proxies(url):
        return
    try:
        ipaddress.ip_address(host)
        return
    except ValueError:
        pass
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        pool.submit(socket.getaddrinfo, host, 443).result(timeout=CONNECT_TIMEOUT)
    except concurrent.futures.TimeoutError:
        raise OSError(f"resolving {host} took more than {CONNECT_TIMEOUT:.0f} s") from None
    except OSError as exc:
        raise OSError(f"cannot resolve {host}: {exc}") from None
    finally:
        pool.shutdown(wait=False)


def _get(session, url: str, headers: dict):
    """GET with redirects followed by hand, so that every hop is checked against the https rule."""
    for _ in range(MAX_REDIRECTS + 1):
        check_url_allowed(url)
        _resolve_host_quickly(url)
        resp = session.get(url, headers=headers, stream=True, allow_redirects=False,
                           timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
        if resp.status_code in (301, 302, 303, 307, 308) and "Location" in resp.headers:
            nxt = urljoin(url, resp.headers["Location"])
            resp.close()
            url = nxt
            continue
        return resp
    raise OSError(f"more than {MAX_REDIRECTS} redirects")


class _DownloadFailed(Exception):
    """Network-level failure: reported as 'missing file' with the reason."""


def _download(fspec: FileSpec, cache: Path, *, progress: bool) -> Path:
    """Download fspec.url into the cache (resuming a .part), verify, rename into place."""
    import requests     # only when downloading (see _resolve_host_quickly)
    from urllib3.exceptions import HTTPError

    fname = fspec.download_name
    final = cache / fname
    part = cache / (fname + ".part")
    comp = fspec.compression
    with cache_lock(cache, "download-" + fname):
        if final.is_file():           # another process finished it while we waited for the lock
            return final
        with requests.Session() as session:
            for attempt in range(2):
                offset = part.stat().st_size if part.is_file() else 0
                # identity: store the bytes exactly as served (no transparent gzip decoding)
                headers = {"Accept-Encoding": "identity"}
                if offset:
                    headers["Range"] = f"bytes={offset}-"
                try:
                    resp = _get(session, fspec.url, headers)
                except requests.RequestException as exc:
                    raise _DownloadFailed(f"{type(exc).__name__}: {_short(exc)}") from None
                except OSError as exc:
                    raise _DownloadFailed(str(exc)) from None
                with resp:
                    if resp.status_code == 416 and offset:
                        part.unlink(missing_ok=True)      # stale .part larger than the file: start over
                        continue
                    if resp.status_code not in (200, 206):
                        raise _DownloadFailed(f"HTTP {resp.status_code} {resp.reason} from {resp.url}")
                    mode = "ab"
                    if resp.status_code == 206:
                        start = _content_range_start(resp.headers.get("Content-Range"))
                        if start != offset:
                            part.unlink(missing_ok=True)
                            continue
                    else:
                        offset, mode = 0, "wb"              # server ignored the Range: start over
                    length = resp.headers.get("Content-Length")
                    total = offset + int(length) if length and length.isdigit() else None
                    bar = _bar(progress, total, f"download {fname}", initial=offset)
                    written = offset
                    try:
                        with open(part, mode) as out:
                            # read1 hands over whatever arrived, so bytes received before a broken
                            # connection reach the .part file and a later fetch can resume after them
                            while True:
                                chunk = resp.raw.read1(CHUNK, decode_content=False)
                                if not chunk:
                                    break
                                out.write(chunk)
                                written += len(chunk)
                                bar.update(len(chunk))
                    except (requests.RequestException, OSError, HTTPError) as exc:
                        raise DataError(
                            f"Download of {fspec.url} was interrupted after {written} bytes "
                            f"({type(exc).__name__}: {_short(exc)}). The partial file {part} is kept and is "
                            "not used as data; run the fetch again to resume it."
                        ) from None
                    finally:
                        bar.close()
                    if total is not None and written != total:
                        raise DataError(
                            f"Download of {fspec.url} is incomplete: got {written} of {total} bytes. The partial "
                            f"file {part} is kept and is not used as data; run the fetch again to resume it."
                        )
                break
            else:
                raise _DownloadFailed(f"the server did not honour a resume request for {fspec.url}")
        # Verify the complete .part before it becomes a cache entry.
        member = fspec.member if comp == "zip" else None
        try:
            found = sha256_of(part, comp, member, progress=progress)
        except DataError as exc:
            part.unlink(missing_ok=True)
            raise DataError(f"Downloaded file from {fspec.url} is unusable and was deleted: {exc}") from None
        if fspec.sha256 is not None and found != fspec.sha256:
            part.unlink(missing_ok=True)
            raise DataError(
                f"Checksum mismatch for the download of {fspec.url} (saved as {part}, now deleted): expected "
                f"sha256 {fspec.sha256} (decompressed content, from the registry), found {found}. The server "
                "holds a different or corrupt file; check the URL or put a verified copy in the cache dir."
            )
        os.replace(part, final)
        _write_stamp(cache, final, member, found)
        return final


def _content_range_start(value: str | None) -> int | None:
    # "bytes 100-199/200"
    try:
        return int(value.split()[1].split("-")[0])
    except (AttributeError, IndexError, ValueError):
        return None


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) < 300 else text[:300] + "..."


def _missing_error(ds: DatasetSpec, fspec: FileSpec, reason: str) -> DataError:
    dirs = data_dirs()
    cache, mirrors = dirs["cache"], dirs["mirrors"]
    names = ", ".join(fspec.candidates())
    mirror_txt = ", ".join(str(m) for m in mirrors) if mirrors else "none ($KERNELBENCH_MIRROR is not set)"
    put_name = fspec.download_name or (fspec.name + ".xz")
    if fspec.url:
        where = f"Download URL: {fspec.url}."
        get_it = f"download {fspec.url} yourself and save it as {cache / put_name}"
    else:
        # the registry note says where such a file comes from, and why it cannot be fetched
        where = "The data cannot be fetched: there is no public download for this file" + (
            f" ({ds.note.rstrip('.')})." if ds.note else " (mirror-only).")
        get_it = f"obtain it and save it as {cache / (fspec.name + '.xz')}"
    return DataError(
        f"Dataset '{ds.name}': {fspec.role} file '{fspec.name}' is not available ({reason}). "
        f"Looked for {names} in the cache dir {cache} and in the mirror dirs: {mirror_txt}. {where} "
        f"Fix: {get_it} (the cache dir, $KERNELBENCH_DATA), or put '{fspec.name}' (plain or .xz/.bz2/.gz) into a "
        f"mirror folder listed in $KERNELBENCH_MIRROR (colon-separated); then run "
        f"`kernelbench datasets fetch {ds.name}`."
        + (" (Or load it with test=<fraction> to split the training file instead of using the official test file.)"
           if fspec.role == "test" else "")
    )


def fetch_file(ds: DatasetSpec, fspec: FileSpec, *, progress: bool = True, verify: bool = True) -> Path:
    """One file of a dataset, available locally and verified (sha256 where the registry has one).
    verify=False leaves a local copy's check to the caller (the loader hashes while it parses)."""
    path = resolve_local(fspec)
    if path is not None:
        if verify:
            verify_file(path, fspec, progress=progress)
        return path
    if not fspec.url:
        raise _missing_error(ds, fspec, "no local copy, and the registry has no download URL")
    if _offline():
        raise _missing_error(ds, fspec, "no local copy, and KERNELBENCH_OFFLINE=1 forbids downloading")
    cache = data_dirs()["cache"]
    _ensure_cache(cache)
    try:
        return _download(fspec, cache, progress=progress)
    except _DownloadFailed as exc:
        raise _missing_error(ds, fspec, f"no local copy, and the download failed: {exc}") from None


def fetch(name: str, *, progress: bool = True) -> list[Path]:
    """Make every file of a registry dataset available locally (cache or mirror), verified.

    Returns the local paths (train first, then test). A builtin dataset has none: [].
    """
    ds = get_spec(name)
    return [fetch_file(ds, ds.files[role], progress=progress) for role in ("train", "test") if role in ds.files]


# ------------------------------------------------------------------ info

def dataset_info(name: str) -> dict:
    """The registry entry, resolved local files (or None), verification notes and the cache dir."""
    ds = get_spec(name)
    dirs = data_dirs()
    files = {}
    notes = []
    for role, f in ds.files.items():
        local = resolve_local(f)
        files[role] = {
            "name": f.name, "url": f.url, "compression": f.compression, "member": f.member,
            "sha256": f.sha256, "n": f.n, "local": str(local) if local else None,
            "looked_for": f.candidates(),
        }
        if f.sha256 is None:
            notes.append(f"{role} file '{f.name}': no sha256 known; a local copy is accepted unverified (warning).")
    return {
        "name": ds.name, "task": ds.task, "format": ds.format, "d": ds.d,
        "n_train": ds.files["train"].n if "train" in ds.files else ds.raw.get("n"),
        "n_test": ds.files["test"].n if "test" in ds.files else None,
        "description": ds.description, "note": ds.note, "papers": list(ds.papers), "split": dict(ds.split),
        "files": files, "available": all(v["local"] for v in files.values()),
        "notes": notes, "cache_dir": str(dirs["cache"]), "parsed_dir": str(dirs["cache"] / "parsed"),
        "mirrors": [str(m) for m in dirs["mirrors"]], "registry": str(registry_path()),
        "entry": dict(ds.raw),
    }
