"""Shared test settings."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The staged LIBSVM/UCI copies: $KERNELBENCH_MIRROR (the Makefile and .ci/run set it), else the
# shared/ folder beside the checkout. Tests that need them skip, saying so, when absent.
MIRROR = Path((os.environ.get("KERNELBENCH_MIRROR") or "").split(os.pathsep)[0]
              or REPO.parent / "shared" / "datasets")


import pytest  # noqa: E402


def cli_in_process(args, capsys) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of kernelbench.cli.main(args), as the console script gives them
    (the caller sets the environment and working folder)."""
    from kernelbench.cli import main

    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as e:
        code = 0 if e.code is None else e.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def toy_dataset(n: int):
    """A binary problem of `n` rows (3 features, labels ±1 at random; its first 10 rows the test
    part) for test doubles of a solver."""
    import numpy as np

    from kernelbench.data import Dataset

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(n, 3)), np.where(rng.random(n) < .5, -1.0, 1.0)
    return Dataset(name="toy", task="binary", X_train=X, y_train=y, X_test=X[:10], y_test=y[:10],
                   description="toy")


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
