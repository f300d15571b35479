"""The experiment loop's evaluation between timed training chunks must not slow the next chunk down: it
runs with BLAS on one thread, because OpenBLAS workers keep spinning for a while after a parallel
call and would take the cores from an OpenMP solver's next timed chunk (measured: +40% training
time for AsyDSSKL on ijcnn1 when it predicted between outer loops with 2 BLAS threads)."""
from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from kernelbench.config import EvaluateConfig, StopConfig
from kernelbench.algorithms import AlgorithmSpec
from kernelbench.experiment import Cell, Prepared, train_cell
from kernelbench.params import RANDOM_STATE, declare
from kernelbench.solvers.base import Solver

from helpers import toy_dataset  # noqa: E402


def _blas_threads():
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


class _RecordingSolver(Solver):
    """Records the BLAS thread counts seen while training and while being evaluated."""
    parameters = declare(random_state=RANDOM_STATE)
    predicts_before_training = False
    n_iter_ = 0
    samples_seen_ = 0
    steps_per_pass = 3
    built: list = []                    # the instances the experiment loop made

    def begin(self, X, y):
        self.in_run, self.in_predict = [], []
        _RecordingSolver.built.append(self)

    def run(self, n):
        self.in_run.append(_blas_threads())
        self.n_iter_ += n
        return n

    def finish(self):
        pass

    def predict(self, X):
        self.in_predict.append(_blas_threads())
        return np.ones(X.shape[0])


def test_evaluation_runs_with_one_blas_thread_and_training_keeps_its_own():
    spec = AlgorithmSpec("recording", _RecordingSolver, None, "test double", ("binary",))
    data = toy_dataset(30)
    with threadpool_limits(limits=2, user_api="blas"):
        if not _blas_threads():
            pytest.skip("threadpoolctl finds no BLAS library in this process")
        train_cell(Prepared(spec, data, np.arange(30)),
                   Cell(params={}, trial=0, seed=0, evaluate=EvaluateConfig(every=1, on=("train_error", "test_error")),
                        stop=StopConfig(passes=1)), "exp", sink=[])
    solver = _RecordingSolver.built[-1]
    assert solver.in_predict and all(counts and max(counts) == 1 for counts in solver.in_predict)
    assert solver.in_run and all(max(counts) == 2 for counts in solver.in_run)
