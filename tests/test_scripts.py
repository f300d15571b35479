"""scripts/ are users of the package: public names only (no private attributes or modules), run
as programs (never imported by a test); the evaluation-overhead benchmark runs end to end."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MIRROR

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "scripts").glob("*.py"))


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_script_uses_public_names_only(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    private = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):            # est._phi
            private.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):                      # the package's own
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            for dotted in [m for m in modules if m.split(".")[0] == "kernelbench"]:
                if any(_private(part) for part in dotted.split(".")):           # kernelbench.solvers._dsg
                    private.append(f"line {node.lineno}: module {dotted}")
                private += [f"line {node.lineno}: {dotted}.{n}" for n in names if _private(n)]
    assert not private, f"{path.name} reaches into private names: {private}"


def test_no_test_imports_a_script():
    """Tests run scripts as subprocesses; logic a test needs lives in the package."""
    for test in sorted((ROOT / "tests").glob("test_*.py")):
        loads = re.findall(r"spec_from_file_location\(([^)]*)\)", test.read_text())
        assert not [args for args in loads if "scripts" in args], test.name


@pytest.mark.slow          # a benchmark run end to end
@pytest.mark.skipif(not all((MIRROR / f).is_file() for f in ("ijcnn1.xz", "ijcnn1.t.xz")),
                    reason=f"the benchmark's workload is ijcnn1, not in the mirror {MIRROR}: put ijcnn1.xz and "
                           "ijcnn1.t.xz there (or run `kernelbench datasets fetch ijcnn1` with KERNELBENCH_MIRROR "
                           "pointing at the cache)")
def test_the_evaluation_overhead_bench_runs(tmp_path):
    """One algorithm, one repetition: the table and its summary line (numbers are not checked:
    timings live in benchmarks, not in tests)."""
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_eval_overhead.py"),
                          "--algorithms", "libsvm", "--repeat", "1"],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(row for row in out.stdout.splitlines() if row.startswith("libsvm"))
    assert "skipped" not in line and "differ" not in line, out.stdout
    assert "largest difference" in out.stdout
