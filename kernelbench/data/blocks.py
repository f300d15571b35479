"""The streaming pieces every parser shares: decompressed blocks in (read ahead by a background
thread), array files out (rows appended as they come), and the report of what one parse found.

A background thread decompresses (xz, bz2, gz, zip: the codecs release the GIL) into a short queue
of blocks, so the parser's thread hashes and parses one block while the next is decompressed, and
memory stays a few blocks above the arrays themselves.
"""
from __future__ import annotations

import io
import queue
import struct
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from tqdm import tqdm

from kernelbench.errors import DataError

from .local import DECOMPRESSION_ERRORS, compression_of, corrupt_error, open_decompressed

BLOCK_BYTES = 8 << 20         # decompressed bytes per block
QUEUE_BLOCKS = 4              # blocks decompressed ahead of the parser
PROGRESS_MIN_BYTES = 50 << 20 # files above this show a progress bar (on a terminal)

INT32_MAX = np.iinfo(np.int32).max


@dataclass
class ParseReport:
    """What parsing one file found: written to the cache's meta.json and into run.json."""
    source: str
    sha256: str = ""
    rows: int = 0
    text_bytes: int = 0
    seconds: float = 0.0
    repairs: dict = field(default_factory=dict)        # kind -> lines repaired (only kinds seen)
    first_line: dict = field(default_factory=dict)     # kind -> first repaired line (1-based)
    zero_based: bool | None = None    # svmlight read with base "auto": whether an index 0 made it zero-based
    classes: list | None = None       # delimited text with class names as labels: label i is classes[i]

    def summary(self) -> str:
        """One line: the repairs, or '' when there were none."""
        if not self.repairs:
            return ""
        kinds = ", ".join(f"{n:,} {k.replace('_', ' ')} (first at line {self.first_line[k]:,})"
                          for k, n in self.repairs.items())
        return f"{Path(self.source).name}: repaired {kinds}"


# ------------------------------------------------------------------ reading blocks

class _Counted(io.RawIOBase):
    """A raw file that counts the (compressed) bytes read: the progress measure."""

    def __init__(self, path):
        self._fh = open(path, "rb")
        self.bytes = 0

    def readable(self):
        return True

    def seekable(self):
        return self._fh.seekable()

    def seek(self, offset, whence=0):
        return self._fh.seek(offset, whence)

    def tell(self):
        return self._fh.tell()

    def readinto(self, buffer):
        n = self._fh.readinto(buffer)
        self.bytes += n or 0
        return n

    def close(self):
        self._fh.close()
        super().close()


_END = object()


class BlockReader:
    """Decompressed blocks of a file, read ahead by a background thread.

    Iterate for (block, compressed bytes read so far); `close()` stops the thread early."""

    def __init__(self, path: Path, member=None, block_bytes: int | None = None):
        self.path = Path(path)
        self.comp = compression_of(self.path)
        self.size = self.path.stat().st_size
        self._raw = _Counted(self.path)
        self._queue: queue.Queue = queue.Queue(maxsize=QUEUE_BLOCKS)
        self._stop = threading.Event()
        try:
            self._stream = open_decompressed(self.path, self.comp, member,
                                             raw=io.BufferedReader(self._raw, 1 << 20))
        except BaseException as exc:
            self._raw.close()
            if isinstance(exc, DECOMPRESSION_ERRORS) and not isinstance(exc, DataError):
                raise corrupt_error(self.path, exc, self.comp) from None
            raise
        self._thread = threading.Thread(target=self._fill, args=(block_bytes or BLOCK_BYTES,), daemon=True,
                                        name="kernelbench-decompress")
        self._thread.start()

    def _put(self, item):
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _fill(self, block_bytes):
        try:
            while not self._stop.is_set():
                block = self._stream.read(block_bytes)
                if not block:
                    break
                if not self._put((block, self._raw.bytes)):
                    return
            self._put(_END)
        except BaseException as exc:          # handed to the consumer, raised there
            self._put(exc)

    def __iter__(self):
        while True:
            item = self._queue.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                if isinstance(item, DataError):
                    raise item
                if isinstance(item, DECOMPRESSION_ERRORS):
                    raise corrupt_error(self.path, item, self.comp) from None
                raise item
            yield item

    def close(self):
        self._stop.set()
        self._thread.join(timeout=5)
        for closable in (self._stream, self._raw):
            try:
                closable.close()
            except Exception:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def progress_bar(path: Path, size: int, show: bool):
    """A byte-count bar of a parse, shown on a terminal for files of PROGRESS_MIN_BYTES or more."""
    return tqdm(total=size, desc=f"parse {path.name}", unit="B", unit_scale=True, unit_divisor=1024,
                file=sys.stderr, leave=False,
                disable=not (show and size >= PROGRESS_MIN_BYTES and sys.stderr.isatty()))


# ------------------------------------------------------------------ writing arrays

def _npy_header(dtype, shape) -> bytes:
    """A version-1.0 .npy header padded to 128 bytes (written last, over the placeholder)."""
    text = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (np.dtype(dtype).str, tuple(shape))
    body = text.encode("latin1")
    pad = 128 - 10 - len(body) - 1
    if pad < 0:
        raise ValueError(f"shape {shape} too large for the fixed .npy header")
    body += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body


class DenseWriter:
    """Rows of a dense array appended to `path` (.npy) as they come; the header goes in at close."""

    def __init__(self, path: Path, width: int, dtype):
        self.path, self.width, self.dtype = path, width, np.dtype(dtype)
        self._fh = open(path, "wb")
        self._fh.write(b"\0" * 128)
        self.rows = 0

    def append(self, block: np.ndarray):
        np.ascontiguousarray(block, dtype=self.dtype).tofile(self._fh)
        self.rows += block.shape[0]

    def close(self):
        self._fh.seek(0)
        self._fh.write(_npy_header(self.dtype, (self.rows, self.width)))
        self._fh.close()

    def abort(self):
        """Close without a header (the folder is about to be removed)."""
        self._fh.close()


class SparseSpool:
    """CSR pieces (row lengths, raw indices, values) spooled to disk until the shape is known."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._files = {name: open(folder / f"spool-{name}.bin", "wb") for name in ("nnz", "cols", "vals")}
        self.rows = 0
        self.nnz = 0

    def append(self, row_nnz, cols, vals):
        row_nnz.tofile(self._files["nnz"])
        cols.tofile(self._files["cols"])
        vals.tofile(self._files["vals"])
        self.rows += row_nnz.shape[0]
        self.nnz += cols.shape[0]

    def close(self):
        for fh in self._files.values():
            fh.close()

    def read(self, name, dtype):
        return np.fromfile(self.folder / f"spool-{name}.bin", dtype=dtype)

    def remove(self):
        for name in self._files:
            (self.folder / f"spool-{name}.bin").unlink(missing_ok=True)


def row_count_error(path, found: str, options) -> DataError:
    return DataError(f"{path}: {found} rows, but the registry says this file has {options.expected_rows:,}. "
                     "The file is truncated, or a different version: replace it with the published file "
                     "(`kernelbench datasets info NAME` shows its URL).")


def to_csr32(X) -> sp.csr_matrix:
    """X as CSR with int32 indices and indptr where they fit (scikit-learn's SVC refuses int64 ones)."""
    X = sp.csr_matrix(X)
    if X.nnz <= INT32_MAX and X.shape[1] <= INT32_MAX:
        X.indices = np.asarray(X.indices, dtype=np.int32)
        X.indptr = np.asarray(X.indptr, dtype=np.int32)
    return X
