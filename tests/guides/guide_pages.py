"""A guide page of the documentation as its reader follows it: its fenced code blocks, and its shell
blocks run in a folder of the test's own, `kernelbench` being the package under test."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import kernelbench

REPO = Path(__file__).resolve().parents[2]
GUIDES = REPO / "docs" / "guide"
# the folder the package under test is imported from: the shell's `kernelbench` runs that one
PACKAGE_ROOT = Path(kernelbench.__file__).resolve().parents[1]


def code_blocks(page: str, language: str) -> list[str]:
    """The page's fenced blocks of `language` (```yaml, ```python, ```bash), in the page's order."""
    text = (GUIDES / page).read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)


def named_file(block: str) -> str:
    """The path a block's first line names, as in `# configs/churn_libsvm.yaml`."""
    first = block.splitlines()[0]
    assert first.startswith("# "), f"the block does not name its file on its first line: {first!r}"
    return first[2:].strip()


def run_shell(block: str, cwd: Path, env: dict | None = None, *, package_root: Path = PACKAGE_ROOT
              ) -> subprocess.CompletedProcess:
    """A bash block run in `cwd`, stopping at the first command that fails; `kernelbench` is
    `python -m kernelbench.cli` of this interpreter and of the package in `package_root` (this one,
    or a copy a test has changed)."""
    script = f'kernelbench() {{ "{sys.executable}" -m kernelbench.cli "$@"; }}\nset -e\n{block}'
    path = os.pathsep.join(filter(None, [str(package_root), os.environ.get("PYTHONPATH")]))
    return subprocess.run(["bash", "-c", script], cwd=cwd, env={**os.environ, "PYTHONPATH": path, **(env or {})},
                          capture_output=True, text=True, timeout=300)


def describe(proc: subprocess.CompletedProcess) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"
