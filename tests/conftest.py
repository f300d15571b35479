"""Shared test settings."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The staged LIBSVM/UCI copies: $KERNELBENCH_MIRROR (the Makefile and .ci/run set it), else the
# shared/ folder beside the checkout. Tests that need them skip, saying so, when absent.
MIRROR = Path((os.environ.get("KERNELBENCH_MIRROR") or "").split(os.pathsep)[0]
              or REPO.parent / "shared" / "datasets")


import pytest  # noqa: E402


@pytest.fixture
def isolated_data(tmp_path, monkeypatch):
    """A test's own dataset cache; the real registry and the mirror; no network."""
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(MIRROR))
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    monkeypatch.delenv("KERNELBENCH_REGISTRY", raising=False)


@pytest.fixture
def server():
    """A local HTTP server whose failures a test scripts (tests/flaky_server.py), closed after it."""
    from flaky_server import FlakyServer
    s = FlakyServer()
    yield s
    s.close()
