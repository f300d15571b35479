"""Downloads of registry files into the cache dir.

Downloads follow only https URLs (plain http only to a loopback host and only when
`KERNELBENCH_ALLOW_HTTP_LOOPBACK=1`, for tests); they stream into `<name>.part` under a file lock,
are decompressed and checked against the registry's sha256 and only then renamed into place, so a
partial or unverified download never becomes a cache entry.
"""
from __future__ import annotations

import concurrent.futures
import ipaddress
import os
import socket
from pathlib import Path
from urllib.parse import urljoin, urlparse

from kernelbench.errors import DataError

from .local import CHUNK, byte_bar, cache_lock, sha256_of, write_stamp
from .registry import FileSpec

CONNECT_TIMEOUT = 10.0      # seconds to resolve + connect; no network must fail fast
READ_TIMEOUT = 60.0         # seconds without a byte before a download is abandoned (resumable)
MAX_REDIRECTS = 5


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


class DownloadFailed(Exception):
    """Network-level failure: reported as 'missing file' with the reason."""


def download(fspec: FileSpec, cache: Path, *, progress: bool) -> Path:
    """Download fspec.url into the cache (resuming a .part), verify, rename into place."""
    fname = fspec.download_name
    final = cache / fname
    part = cache / (fname + ".part")
    with cache_lock(cache, "download-" + fname):
        if final.is_file():           # another process finished it while we waited for the lock
            return final
        _download_part(fspec, part, progress=progress)
        member, found = _verified_part(fspec, part, progress=progress)
        os.replace(part, final)
        write_stamp(cache, final, member, found)
        return final


def _download_part(fspec: FileSpec, part: Path, *, progress: bool) -> None:
    """The whole of fspec.url in `part`, resuming what is there with a Range request."""
    import requests     # only when downloading (see _resolve_host_quickly)

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
                raise DownloadFailed(f"{type(exc).__name__}: {_short(exc)}") from None
            except OSError as exc:
                raise DownloadFailed(str(exc)) from None
            with resp:
                if resp.status_code == 416 and offset:
                    part.unlink(missing_ok=True)      # stale .part larger than the file: start over
                    continue
                if resp.status_code not in (200, 206):
                    raise DownloadFailed(f"HTTP {resp.status_code} {resp.reason} from {resp.url}")
                mode = "ab"
                if resp.status_code == 206:
                    start = _content_range_start(resp.headers.get("Content-Range"))
                    if start != offset:
                        part.unlink(missing_ok=True)
                        continue
                else:
                    offset, mode = 0, "wb"              # server ignored the Range: start over
                _write_body(resp, fspec, part, mode, offset, progress=progress)
            return
        raise DownloadFailed(f"the server did not honour a resume request for {fspec.url}")


def _write_body(resp, fspec: FileSpec, part: Path, mode: str, offset: int, *, progress: bool) -> None:
    """The response's body appended to (mode "ab") or written over (mode "wb") the .part file."""
    import requests     # only when downloading (see _resolve_host_quickly)
    from urllib3.exceptions import HTTPError

    length = resp.headers.get("Content-Length")
    total = offset + int(length) if length and length.isdigit() else None
    bar = byte_bar(progress, total, f"download {fspec.download_name}", initial=offset)
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


def _verified_part(fspec: FileSpec, part: Path, *, progress: bool) -> tuple[str | None, str]:
    """(zip member, sha256) of the complete .part, checked before it becomes a cache entry; a
    .part that is unusable or not the registry's file is deleted."""
    member = fspec.member if fspec.compression == "zip" else None
    try:
        found = sha256_of(part, fspec.compression, member, progress=progress)
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
    return member, found


def _content_range_start(value: str | None) -> int | None:
    # "bytes 100-199/200"
    try:
        return int(value.split()[1].split("-")[0])
    except (AttributeError, IndexError, ValueError):
        return None


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) < 300 else text[:300] + "..."
