"""A solver that would exceed its memory/time budget (BudgetExceededError) yields one clean row
with status "skipped" and the solver's message — never a crash, never a half-written cell."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from kernelbench.config import StopConfig
from kernelbench.data import Dataset
from kernelbench.registry import AlgorithmSpec
from kernelbench.runner import Cell, Prepared, train_cell
from kernelbench.solvers.base import BudgetExceededError


@dataclass
class _Params:
    limit: int = 10


class _QuadraticSolver:
    """Stands in for an O(n²) baseline: refuses more than `limit` rows, here or after some steps."""
    predicts_before_training = False
    n_iter_ = 0
    samples_seen_ = 0
    steps_per_pass = 4

    def __init__(self, limit, fail_in_run=False):
        self.limit, self.fail_in_run = limit, fail_in_run

    def begin(self, X, y):
        if X.shape[0] > self.limit and not self.fail_in_run:
            raise BudgetExceededError(f"{X.shape[0]} rows exceed the budget of {self.limit}")

    def run(self, n):
        self.n_iter_ += n
        if self.fail_in_run and self.n_iter_ >= 2:
            raise BudgetExceededError("kernel cache would exceed its memory budget")
        return n

    def finish(self):
        pass

    def predict(self, X):
        return np.ones(X.shape[0])


def _prepared(fail_in_run):
    spec = AlgorithmSpec("quadratic", _Params, lambda p, *, seed, task: _QuadraticSolver(p.limit, fail_in_run),
                         "test double", ("binary",))
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), np.where(rng.random(40) < .5, -1.0, 1.0)
    data = Dataset(name="toy", task="binary", X_train=X, y_train=y, X_test=X[:10], y_test=y[:10],
                   description="toy")
    return Prepared(spec, data, np.arange(40))


@pytest.mark.parametrize("fail_in_run", [False, True])
def test_budget_exceeded_is_one_clean_skipped_row(fail_in_run):
    rows = []
    final = train_cell(_prepared(fail_in_run), Cell(params={}, trial=0, seed=0, every=1,
                                                    on=("test_error",)),
                       StopConfig(passes=1), "exp", sink=rows)
    assert final["status"] == "skipped" and final["final"] == 1
    assert ("exceed the budget of 10" if not fail_in_run else "memory budget") in final["message"]
    assert rows[-1] is final and all(r.get("status") == "ok" for r in rows[:-1])
