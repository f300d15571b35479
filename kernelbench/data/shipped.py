"""The small LIBSVM sets that ship inside the package (kernelbench/data/shipped/): looked up before
the cache and the mirrors, so configs on them run on a machine with no network and no mirror.

A shipped copy stands for a registry file only when the registry pins a sha256 and the copy's
decompressed content has that very hash (SHA256SUMS-decompressed beside the files): a registry that names a
different file the same way (a test's, a user's) never reads a shipped copy. Provenance: SOURCES.md.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .registry import FileSpec

SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"


@lru_cache(maxsize=1)
def shipped_sha256() -> dict[str, str]:
    """{file name: sha256 of its decompressed content}, from SHA256SUMS-decompressed (sha256sum's line format)."""
    try:
        lines = (SHIPPED_DIR / "SHA256SUMS-decompressed").read_text(encoding="utf-8").splitlines()
    except OSError:
        return {}
    return {name.strip(): sha for sha, _, name in (line.partition("  ") for line in lines) if name.strip()}


def shipped_copy(fspec: FileSpec) -> Path | None:
    """The shipped copy of a registry file, or None when none ships with exactly its pinned content."""
    if fspec.sha256 is None:
        return None
    for name in fspec.candidates():
        if shipped_sha256().get(name) == fspec.sha256 and (SHIPPED_DIR / name).is_file():
            return SHIPPED_DIR / name
    return None
