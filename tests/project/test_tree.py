"""The tracked text files hold no unresolved merge: a conflict marker left in a file is text that
reads as content (a changelog, a paper file) and nothing else would notice it."""
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# built so that this file does not hold the markers it looks for
MARKER = re.compile("^(" + "<" * 7 + " |" + ">" * 7 + " |" + "=" * 7 + "$)", re.MULTILINE)


def _tracked_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [ROOT / name for name in listed.decode().split("\0") if name]


def test_no_tracked_file_holds_a_merge_conflict_marker():
    found = []
    for path in _tracked_files():
        if not path.is_file() or path.stat().st_size > 5_000_000:
            continue
        data = path.read_bytes()
        if b"\0" in data:                                     # binary (figures, compressed data)
            continue
        text = data.decode("utf-8", errors="replace")
        found += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}" for m in MARKER.finditer(text)]
    assert not found, f"unresolved merge conflict markers: {found}"


def test_the_marker_pattern_finds_a_conflict():
    conflict = "a\n" + "<" * 7 + " HEAD\nb\n" + "=" * 7 + "\nc\n" + ">" * 7 + " branch\n"
    assert len(MARKER.findall(conflict)) == 3 and not MARKER.findall("a ======= b\n<<<< x\n")
