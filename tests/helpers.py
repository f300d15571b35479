"""Helpers several test modules share (imported by name, as flaky_server is: tests/ is on the path)."""
from __future__ import annotations


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


def dsg_problem(loss: str, n: int, n_rows: int):
    """(X, Y, rows) for stepping a DSG-family core by hand: `n` points in 3 dimensions, targets for
    `loss` (squared: a smooth function; softmax: one-hot over 3 classes; else ±1 labels of an XOR-like
    rule) and `n_rows` sample indices, pass after pass of fresh permutations, the last one cut short."""
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    if loss == "squared":
        Y = (np.sin(X[:, 0]) + 0.3 * X[:, 1]).reshape(-1, 1)
    elif loss == "softmax":
        Y = np.eye(3)[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)]
    else:
        Y = np.where(X[:, 0] * X[:, 1] + 0.2 * X[:, 2] > 0, 1.0, -1.0).reshape(-1, 1)
    passes = [rng.permutation(n) for _ in range(-(-n_rows // n))]
    rows = np.concatenate(passes)[:n_rows].astype(np.int64)
    return X, Y, rows
