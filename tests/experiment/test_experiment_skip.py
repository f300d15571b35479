"""A solver that would exceed its memory/time budget (BudgetExceededError) yields one clean row
with status "skipped" and the solver's message — never a crash, never a half-written cell."""
from __future__ import annotations

import numpy as np
import pytest

from kernelbench.config import EvaluateConfig, StopConfig
from kernelbench.algorithms import AlgorithmSpec
from kernelbench.experiment import Cell, Prepared, train_cell
from kernelbench.params import BOOLEAN, RANDOM_STATE, Integer, declare, param
from kernelbench.solvers.base import BudgetExceededError, Solver

from helpers import toy_dataset  # noqa: E402


class _QuadraticSolver(Solver):
    """Stands in for an O(n²) baseline: refuses more than `limit` rows, here or after some steps."""
    parameters = declare(limit=param(10, "most rows", Integer(1)),
                         fail_in_run=param(False, "refuse after 2 steps instead", BOOLEAN),
                         random_state=RANDOM_STATE)
    predicts_before_training = False
    n_iter_ = 0
    samples_seen_ = 0
    steps_per_pass = 4

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


def _prepared():
    spec = AlgorithmSpec("quadratic", _QuadraticSolver, None, "test double", ("binary",))
    return Prepared(spec, toy_dataset(40), np.arange(40))


@pytest.mark.parametrize("fail_in_run", [False, True])
def test_budget_exceeded_is_one_clean_skipped_row(fail_in_run):
    rows = []
    cell = Cell(params={"fail_in_run": fail_in_run}, trial=0, seed=0,
                evaluate=EvaluateConfig(every=1, on=("test_error",)), stop=StopConfig(passes=1))
    final = train_cell(_prepared(), cell, "exp", sink=rows)
    assert final["status"] == "skipped" and final["final"] == 1
    assert ("exceed the budget of 10" if not fail_in_run else "memory budget") in final["message"]
    assert rows[-1] is final and all(r.get("status") == "ok" for r in rows[:-1])
