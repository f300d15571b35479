"""Downloads of registry files into the cache dir.

Downloads follow only https URLs (plain http only to a loopback host and only when
`KERNELBENCH_ALLOW_HTTP_LOOPBACK=1`, for tests); they stream into `<name>.part` under a file lock,
are decompressed and checked against the sha256 pinned in the registry (or, for an unpinned file,
the one recorded at its first use; with none, the hash is recorded now) and only then renamed into
place, so a partial or unchecked download never becomes a cache entry.

Transient failures are retried with exponential back-off (RetryPolicy): a connection that fails or
times out, and HTTP 429 / 5xx answers (honouring Retry-After), by urllib3's Retry for each request; a
body cut off mid-transfer by resuming the `.part` file with a Range request. A server that ignores
the Range gets the file from the start again; a 416 (the `.part` is as long as the file, or longer)
checks the `.part` as it is, or starts over.

Large downloads are confirmed: above `confirm_threshold()` bytes (the server's announced size; a
server that announces none is stopped there) the caller's `confirm` callback decides, and without
one the download is refused (DownloadNotConfirmed). The data layer never prompts: the CLI does.
"""
from __future__ import annotations

import concurrent.futures
import ipaddress
import json
import os
import re
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import urljoin, urlparse

from kernelbench.errors import DataError

from .local import CHUNK, PINNED, Trust, byte_bar, cache_lock, check_sha256, expected_sha256, sha256_of
from .registry import FileSpec

CONNECT_TIMEOUT = 10.0      # seconds to resolve + connect; no network must fail fast
READ_TIMEOUT = 60.0         # seconds without a byte before a download is abandoned (resumable)
MAX_REDIRECTS = 5
RETRY_STATUSES = (429, 500, 502, 503, 504)
MAX_RETRY_AFTER = 120.0     # seconds: a longer Retry-After is shortened (the attempts stay bounded)
DEFAULT_CONFIRM_ABOVE = "1GB"


# ------------------------------------------------------------------ settings

def _env_number(var: str, default: float, kind, minimum) -> float:
    text = os.environ.get(var, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise DataError(f"${var} is {text!r}: it must be a {kind.__name__} >= {minimum}. Fix or unset it.")
    return value


@dataclass(frozen=True)
class RetryPolicy:
    """How hard a download tries: `attempts` tries per request (urllib3's Retry), and resumes in a
    row that bring no new byte; `backoff` is the back-off factor: the waits grow as backoff x 2^n
    (urllib3 retries a request the first time at once)."""
    attempts: int = 5
    backoff: float = 0.5

    @classmethod
    def from_env(cls) -> "RetryPolicy":
        """$KERNELBENCH_DOWNLOAD_ATTEMPTS and $KERNELBENCH_DOWNLOAD_BACKOFF (seconds) override the defaults."""
        return cls(attempts=int(_env_number("KERNELBENCH_DOWNLOAD_ATTEMPTS", cls.attempts, int, 1)),
                   backoff=_env_number("KERNELBENCH_DOWNLOAD_BACKOFF", cls.backoff, float, 0))

    def delay(self, retry: int) -> float:
        """Seconds before retry number `retry` (1, 2, ...) of a resume."""
        return self.backoff * 2 ** (retry - 1)

    def urllib3_retry(self):
        from urllib3.util.retry import Retry   # only when downloading (see _resolve_host_quickly)

        class CappedRetry(Retry):
            def parse_retry_after(self, retry_after):
                return min(super().parse_retry_after(retry_after), MAX_RETRY_AFTER)

        n = self.attempts - 1
        return CappedRetry(total=n, connect=n, read=n, status=n, status_forcelist=RETRY_STATUSES,
                           allowed_methods=frozenset({"GET", "HEAD"}), backoff_factor=self.backoff,
                           respect_retry_after_header=True, raise_on_status=False)


def parse_size(text: str) -> int:
    """'1GB', '500 MB', '2.5G', '100' (bytes) -> bytes (decimal units); ValueError otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)b?\s*", text.lower())
    if not m:
        raise ValueError(text)
    return int(float(m.group(1)) * 1000 ** " kmgt".index(m.group(2) or " "))


def format_size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def confirm_threshold() -> int:
    """Bytes above which a download needs a confirmation: $KERNELBENCH_CONFIRM_ABOVE (e.g. 500MB), default 1GB."""
    text = os.environ.get("KERNELBENCH_CONFIRM_ABOVE", "").strip() or DEFAULT_CONFIRM_ABOVE
    try:
        return parse_size(text)
    except ValueError:
        raise DataError(f"$KERNELBENCH_CONFIRM_ABOVE is {text!r}: give a size such as 500MB, 2GB or a number of "
                        "bytes. Fix or unset it.") from None


@dataclass(frozen=True)
class DownloadOffer:
    """What a confirmation callback is asked: may this download go ahead?"""
    dataset: str
    file: str                 # the download's name in the cache
    url: str
    size: int | None          # bytes still to download; None: not announced (more than `threshold` so far)
    threshold: int

    def describe(self) -> str:
        size = (format_size(self.size) if self.size is not None
                else f"more than {format_size(self.threshold)} (the server did not announce its size)")
        return f"{self.file}, {size}, from {self.url}"


Confirm = Callable[[DownloadOffer], bool]


def always(offer: DownloadOffer) -> bool:
    """The confirmation of an explicit fetch: the command itself is the confirmation."""
    return True


class DownloadNotConfirmed(DataError):
    """A download above the confirmation threshold that nobody confirmed."""

    def __init__(self, offer: DownloadOffer, part: Path | None = None):
        kept = (f" The {part.stat().st_size:,} bytes received so far are kept in {part}; the next fetch "
                "resumes them." if part is not None and part.is_file() else " Nothing was downloaded.")
        super().__init__(
            f"Dataset '{offer.dataset}': downloading {offer.describe()} needs a confirmation (downloads "
            f"above {format_size(offer.threshold)} do; $KERNELBENCH_CONFIRM_ABOVE sets the limit).{kept} "
            f"To download it: answer yes at the prompt (on a terminal), or pass --yes (-y), or fetch it "
            f"first with `kernelbench datasets fetch {offer.dataset}`.")
        self.offer = offer


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


def _request(session, method: str, url: str, headers: dict):
    """GET or HEAD with redirects followed by hand, so that every hop is checked against the https rule."""
    for _ in range(MAX_REDIRECTS + 1):
        check_url_allowed(url)
        _resolve_host_quickly(url)
        resp = session.request(method, url, headers=headers, stream=True, allow_redirects=False,
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


class _Interrupted(Exception):
    """The body stopped before its end (resumable)."""


class _SizeNotAnnounced(Exception):
    """A body without an announced size passed the confirmation threshold."""


def download(fspec: FileSpec, cache: Path, *, progress: bool, confirm: Confirm | None = None,
             policy: RetryPolicy | None = None) -> tuple[Path, Trust | None]:
    """Download fspec.url into the cache (resuming a .part), check its sha256 (pinned or recorded; on
    first use recorded), rename it into place. Returns the path and what the check established (None:
    another process downloaded it meanwhile, and the caller checks it). `confirm` decides on a
    download above confirm_threshold() (None: refuse it)."""
    import requests     # only when downloading (see _resolve_host_quickly)
    from requests.adapters import HTTPAdapter

    policy = policy or RetryPolicy.from_env()
    fname = fspec.download_name
    final = cache / fname
    part = cache / (fname + ".part")
    with cache_lock(cache, "download-" + fname):
        if final.is_file():           # another process finished it while we waited for the lock
            return final, None
        with requests.Session() as session:
            adapter = HTTPAdapter(max_retries=policy.urllib3_retry())
            session.mount("https://", adapter)
            session.mount("http://", adapter)
            _download_part(session, fspec, part, progress=progress, confirm=confirm, policy=policy)
        found = _checked_part(fspec, part, progress=progress)
        os.replace(part, final)
        _validator_path(part).unlink(missing_ok=True)
        return final, check_sha256(final, fspec, found)


def _validator_path(part: Path) -> Path:
    return part.with_name(part.name + ".json")


def _discard(part: Path) -> None:
    part.unlink(missing_ok=True)
    _validator_path(part).unlink(missing_ok=True)


def _remember_version(part: Path, url: str, resp) -> None:
    """Keep the server's ETag (a strong one) or Last-Modified of the file the .part starts: a resume
    asks with If-Range, so that a file changed on the server meanwhile is sent whole, never spliced."""
    etag = resp.headers.get("ETag", "")
    version = etag if etag and not etag.startswith("W/") else resp.headers.get("Last-Modified")
    try:
        if version:
            _validator_path(part).write_text(json.dumps({"url": url, "if_range": version}))
        else:
            _validator_path(part).unlink(missing_ok=True)
    except OSError:
        pass        # a stale one only makes the server send the whole file again


def _remembered_version(part: Path, url: str) -> str | None:
    try:
        doc = json.loads(_validator_path(part).read_text())
        return doc["if_range"] if doc.get("url") == url and isinstance(doc.get("if_range"), str) else None
    except (OSError, ValueError, KeyError, AttributeError):
        return None


def _approve(fspec: FileSpec, size: int | None, confirm: Confirm | None, part: Path) -> None:
    """Return when a download of `size` bytes may go ahead; raise DownloadNotConfirmed if not."""
    offer = DownloadOffer(dataset=fspec.dataset, file=fspec.download_name, url=fspec.url, size=size,
                          threshold=confirm_threshold())
    if confirm is None or not confirm(offer):
        raise DownloadNotConfirmed(offer, part)


def _announced_size(session, url: str) -> int | None:
    """The size a HEAD request announces, or None (no answer, no Content-Length: the GET tells)."""
    try:
        resp = _request(session, "HEAD", url, {"Accept-Encoding": "identity"})
    except Exception:       # the GET that follows reports what is wrong
        return None
    with resp:
        length = resp.headers.get("Content-Length", "")
        return int(length) if resp.status_code == 200 and length.isdigit() else None


def _confirmed_before_get(session, fspec: FileSpec, part: Path, confirm: Confirm | None, threshold: int) -> bool:
    """Whether the download was confirmed before the GET: asked when a HEAD tells a size (less what
    the .part holds) above the threshold; False when it does not tell, or tells one below."""
    size = _announced_size(session, fspec.url)
    have = part.stat().st_size if part.is_file() else 0
    if size is None:
        return False
    wanted = size - have if 0 < have <= size else size
    if wanted <= threshold:
        return False
    _approve(fspec, wanted, confirm, part)
    return True


def _get_from(session, url: str, part: Path, offset: int, policy: RetryPolicy):
    """The GET of `url` from byte `offset` on (If-Range: the version the .part's bytes came from);
    DownloadFailed, naming what the .part keeps, when no answer comes."""
    import requests     # only when downloading (see _resolve_host_quickly)

    # identity: store the bytes exactly as served (no transparent gzip decoding)
    headers = {"Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
        version = _remembered_version(part, url)
        if version:
            headers["If-Range"] = version
    try:
        return _request(session, "GET", url, headers)
    except requests.RequestException as exc:
        raise DownloadFailed(f"{type(exc).__name__}: {_short(exc)} (tried {policy.attempts} times)"
                             + _kept(part)) from None
    except OSError as exc:
        raise DownloadFailed(str(exc) + _kept(part)) from None


def _download_part(session, fspec: FileSpec, part: Path, *, progress: bool, confirm: Confirm | None,
                   policy: RetryPolicy) -> None:
    """The whole of fspec.url in `part`, resuming what is there with a Range request, retrying
    interruptions; a download above the confirmation threshold only when `confirm` says yes."""
    threshold = None if confirm is always else confirm_threshold()
    # once confirmed, for the whole file
    confirmed = threshold is None or _confirmed_before_get(session, fspec, part, confirm, threshold)
    # attempts in a row that leave the .part no longer than it ever was (a server that ignores
    # Range and cuts every response short makes no progress), and restarts from zero
    stalls = restarts = 0
    longest = part.stat().st_size if part.is_file() else 0
    while True:
        offset = part.stat().st_size if part.is_file() else 0
        resp = _get_from(session, fspec.url, part, offset, policy)
        with resp:
            if resp.status_code == 416 and offset:
                if _content_range_total(resp.headers.get("Content-Range")) == offset:
                    return                 # the .part is complete (stopped before its check): check it
                restart = "the partial file is longer than the file on the server"
            elif resp.status_code not in (200, 206):
                raise DownloadFailed(f"HTTP {resp.status_code} {resp.reason} from {resp.url}"
                                     + (f" (tried {policy.attempts} times)" if resp.status_code in RETRY_STATUSES
                                        else "") + _kept(part))
            elif resp.status_code == 206 and _content_range_start(resp.headers.get("Content-Range")) != offset:
                restart = "the server resumed at another offset than asked"
            else:
                restart = None
                mode = "ab"
                if resp.status_code == 200:
                    # a first request, or the Range ignored (or refused by If-Range): from the start
                    offset, mode = 0, "wb"
                    _remember_version(part, fspec.url, resp)
                length = resp.headers.get("Content-Length", "")
                remaining = int(length) if length.isdigit() else None
                # the answer's own size decides (a server may ignore the Range and send it all)
                if not confirmed and remaining is not None and remaining > threshold:
                    _approve(fspec, remaining, confirm, part)
                    confirmed = True
                try:
                    _write_body(resp, fspec, part, mode, offset, remaining, progress=progress,
                                limit=None if confirmed or remaining is not None else threshold)
                    return
                except _Interrupted as exc:
                    size = part.stat().st_size if part.is_file() else 0
                    stalls = 0 if size > longest else stalls + 1
                    longest = max(longest, size)
                    if stalls >= policy.attempts:
                        raise DataError(
                            f"Download of {fspec.url} was interrupted {stalls} times in a row without a new byte "
                            f"(last: {exc}).{_kept(part)} Run `kernelbench datasets fetch {fspec.dataset}` "
                            "later to resume it.") from None
                    time.sleep(policy.delay(max(stalls, 1)))
                    continue
                except _SizeNotAnnounced:
                    _approve(fspec, None, confirm, part)
                    confirmed = True
                    continue
        restarts += 1
        if restarts >= policy.attempts:
            raise DownloadFailed(f"the server did not honour a resume request for {fspec.url} ({restart})")
        _discard(part)


def _kept(part: Path) -> str:
    size = part.stat().st_size if part.is_file() else 0
    return (f" The {size:,} bytes received are kept in {part} (never read as data); the next fetch resumes "
            "them." if size else "")


def _write_body(resp, fspec: FileSpec, part: Path, mode: str, offset: int, remaining: int | None, *,
                progress: bool, limit: int | None) -> None:
    """The response's body appended to (mode "ab") or written over (mode "wb") the .part file;
    _Interrupted when it stops short, _SizeNotAnnounced past `limit` bytes."""
    import requests     # only when downloading (see _resolve_host_quickly)
    from urllib3.exceptions import HTTPError

    total = offset + remaining if remaining is not None else None
    bar = byte_bar(progress, total, f"download {fspec.download_name}", initial=offset)
    written = offset
    try:
        with open(part, mode) as out:
            # read1 hands over whatever arrived, so bytes received before a broken
            # connection reach the .part file and the next attempt resumes after them
            while True:
                chunk = resp.raw.read1(CHUNK, decode_content=False)
                if not chunk:
                    break
                if limit is not None:       # not a byte more than needed to know the limit is passed
                    chunk = chunk[: limit + 1 - (written - offset)]
                out.write(chunk)
                written += len(chunk)
                bar.update(len(chunk))
                if limit is not None and written - offset > limit:
                    raise _SizeNotAnnounced()
    except (requests.RequestException, OSError, HTTPError) as exc:
        raise _Interrupted(f"{type(exc).__name__}: {_short(exc)}") from None
    finally:
        bar.close()
    if total is not None and written != total:
        raise _Interrupted(f"got {written:,} of {total:,} bytes")


def _checked_part(fspec: FileSpec, part: Path, *, progress: bool) -> str:
    """The sha256 of the complete .part's decompressed content, checked against the pinned or
    recorded one before it becomes a cache entry; a .part that is unusable or not that file is deleted."""
    member = fspec.member if fspec.compression == "zip" else None
    try:
        found = sha256_of(part, fspec.compression, member, progress=progress)
    except DataError as exc:
        _discard(part)
        raise DataError(f"Downloaded file from {fspec.url} is unusable and was deleted: {exc}") from None
    trust = expected_sha256(fspec)
    if trust is not None and found != trust.sha256:
        _discard(part)
        if trust.kind == PINNED:
            where = "pinned in the registry"
            fix = "check the URL, or put a copy with the pinned hash in the cache dir"
        else:
            where = (f"recorded when this file was first used, {trust.recorded_at}, in {trust.record}; the "
                     "registry pins none")
            fix = (f"if the publisher changed the file and you want the new one, delete {trust.record} and "
                   f"run `kernelbench datasets fetch {fspec.dataset}` again")
        raise DataError(
            f"Checksum mismatch for the download of {fspec.url} (saved as {part}, now deleted): expected "
            f"sha256 {trust.sha256} (of the decompressed content, {where}), found {found}. The server holds "
            f"a different or corrupt file; {fix}.")
    return found


def _content_range_total(value: str | None) -> int | None:
    # "bytes */200" (a 416) or "bytes 100-199/200"
    try:
        return int(value.rsplit("/", 1)[1])
    except (AttributeError, IndexError, ValueError):
        return None


def _content_range_start(value: str | None) -> int | None:
    # "bytes 100-199/200"
    try:
        return int(value.split()[1].split("-")[0])
    except (AttributeError, IndexError, ValueError):
        return None


def _short(exc: BaseException) -> str:
    text = str(exc)
    return text if len(text) < 300 else text[:300] + "..."
