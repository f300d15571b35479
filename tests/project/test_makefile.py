"""The Makefile's targets as a newcomer meets them, read with `make -n` (what would run, nothing run):
the install says it compiles before it does, the extras and the docs never compile again, `make
figures` draws the committed runs too, and `make demo` is the paper panel on shipped data."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def planned(target: str, venv, *, installed: bool) -> list[str]:
    """The commands `make TARGET` would run with the virtual environment `venv`; `installed`: its
    install is done (its stamp taken as up to date)."""
    old = ["-o", f"{venv}/.installed"] if installed else []
    # --no-print-directory: run under `make test`, a nested make would print "Entering directory" lines
    proc = subprocess.run(["make", "-n", "--no-print-directory", f"VENV={venv}", *old, target], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_the_install_says_it_compiles_before_the_compile_starts(tmp_path):
    lines = planned("install", tmp_path / "venv", installed=False)
    said = next(i for i, line in enumerate(lines) if "compiling the solvers, about two minutes" in line)
    compile_ = next(i for i, line in enumerate(lines) if "pip install -e ." in line)
    assert said < compile_


@pytest.mark.parametrize("target, extra", [("docs", "docs"), ("test", "test")])
def test_the_docs_and_the_tests_add_their_extra_without_compiling_again(tmp_path, target, extra):
    lines = planned(target, tmp_path / "venv", installed=True)
    assert any(line.endswith(f"pip install 'kernelbench[{extra}]'") for line in lines), lines
    assert not any("pip install -e" in line for line in lines), lines


def test_make_figures_draws_the_committed_runs_too(tmp_path):
    lines = planned("figures", tmp_path / "venv", installed=True)
    assert any(line.endswith("kernelbench figures results/published --out results/figures/published")
               for line in lines), lines


def test_make_demo_is_the_paper_panel_on_shipped_data(tmp_path):
    lines = planned("demo", tmp_path / "venv", installed=True)
    assert lines[-1].endswith("/kernelbench demo"), lines
