"""Files written so that nothing is lost: atomic replacement, safe file names, the cache root.
Imports nothing of kernelbench but its errors."""
from __future__ import annotations

import errno
import os
import re
import tempfile
from pathlib import Path

import platformdirs

from kernelbench.errors import OutputError


def safe_name(text, default: str = "run", max_length: int = 100) -> str:
    """`text` as a file-name part: runs of characters other than letters, digits, '.', '_', '-'
    become one '_', leading and trailing '._-' go, at most `max_length` characters; `default`
    when nothing is left."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("._-")[:max_length] or default


def cache_root() -> Path:
    """Where kernelbench keeps what it can recompute (parsed datasets, lookup tables):
    $KERNELBENCH_DATA, else the platform's user cache folder."""
    env = os.environ.get("KERNELBENCH_DATA")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir("kernelbench"))


def output_error(action: str, path, e: OSError) -> OutputError:
    """An OutputError naming the path, the system's reason and the fix for the usual ones."""
    reason = e.strerror or str(e)
    hint = ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "; the disk is full: free some space or write elsewhere (--out DIR)"
    elif e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = "; no permission to write there: choose another folder (--out DIR)"
    return OutputError(f"cannot {action} {path}: {reason}{hint}")


def atomic_write_text(path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) atomically (see atomic_write_bytes)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path, data: bytes) -> None:
    """Replace `path` with `data` atomically: a temporary file in the same folder is written,
    flushed, fsynced and renamed over `path` (os.replace); then the folder is fsynced. Readers see
    the old or the new content, never a mix; on error the old file is untouched (OutputError)."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise output_error("write", path, e) from e
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
            os.fchmod(fd, _file_mode(path))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        remove_quietly(tmp)
        raise output_error("write", path, e) from e
    except BaseException:
        remove_quietly(tmp)
        raise
    fsync_dir(path.parent)


def _file_mode(path: Path) -> int:
    """Keep an existing file's mode; a new one gets 0o666 minus the umask (mkstemp makes 0o600)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:   # read it without os.umask(), which would change it for every thread for a moment
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def remove_quietly(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def fsync_dir(folder: Path) -> None:
    """Make a rename / file creation durable (best effort: not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
