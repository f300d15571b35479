"""scripts/ are users of the package: public names only (no private attributes or modules), data
and configs read through the package (a config is validated: never yaml-loaded by hand), no script
importing another, run as programs (never imported by a test); each starts, and the
evaluation-overhead benchmark runs end to end."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MIRROR

ROOT = Path(__file__).resolve().parents[2]
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


def _imports(path: Path):
    """(line, top-level module) of every import statement of the file."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name.split(".")[0]) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.lineno, node.module.split(".")[0]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_script_imports_no_other_script_and_leaves_sys_path_alone(path):
    """A helper two scripts share belongs in the package; sys.path edits are how one script reaches
    another."""
    others = {p.stem for p in SCRIPTS}
    found = [f"line {line}: imports {module}" for line, module in _imports(path) if module in others]
    found += [f"line {node.lineno}: sys.path" for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Attribute) and node.attr == "path"
              and isinstance(node.value, ast.Name) and node.value.id == "sys"]
    assert not found, f"{path.name}: {found}"


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_script_reads_configs_through_the_package(path):
    """Configs go through kernelbench.config.load_config / config_from_dict, which validate them;
    a script with yaml in hand reads (or writes) a config the package never checks."""
    found = [f"line {line}" for line, module in _imports(path) if module == "yaml"]
    assert not found, f"{path.name} imports yaml: {found}"


@pytest.mark.slow          # one interpreter start per script
@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_script_starts(path):
    """Its imports resolve (the package names it uses exist) and its options parse."""
    out = subprocess.run([sys.executable, str(path), "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "usage:" in out.stdout, out.stderr[-3000:]


def test_no_test_imports_a_script():
    """Tests run scripts as subprocesses; logic a test needs lives in the package."""
    for test in sorted((ROOT / "tests").rglob("test_*.py")):
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
                         capture_output=True, text=True, timeout=600, cwd=tmp_path,
                         env={**os.environ, "KERNELBENCH_MIRROR": str(MIRROR)})    # where the skip found ijcnn1
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(row for row in out.stdout.splitlines() if row.startswith("libsvm"))
    assert "skipped" not in line and "differ" not in line, out.stdout
    assert "largest difference" in out.stdout
