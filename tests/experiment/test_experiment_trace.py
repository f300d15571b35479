"""kernelbench.experiment.trace, the experiment loop's one timed loop, and the stepping protocol it drives
(kernelbench.solvers.base.Solver).

Truths: a clock that only the test advances (so "training time" is known exactly), the calls a
protocol double sees, and an unevaluated twin of every registered algorithm."""
from __future__ import annotations

import gc
import json
import math
import time

import numpy as np
import pytest

from kernelbench.config import StopConfig
from kernelbench.experiment import timing
from kernelbench.params import RANDOM_STATE, declare
from kernelbench.estimators import algorithms
from kernelbench.experiment import trace
from kernelbench.solvers.dsg import DSGClassifier
from kernelbench.solvers.base import IterativeEstimator, Solver

BEGIN_SECONDS, STEP_SECONDS, CALLER_SECONDS = 0.5, 1.0, 100.0


class Clock:
    """perf_counter / process_time that move only when told to."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(time, "perf_counter", fake)
    monkeypatch.setattr(time, "process_time", fake)
    return fake


class Steps(Solver):
    """A protocol double: 100 iterations a pass, each advancing the clock by STEP_SECONDS;
    it ends itself at `end_at` (converged_), or stops returning steps at `stall_at`."""
    parameters = declare(random_state=RANDOM_STATE)
    steps_per_pass = 100

    def __init__(self, clock=None, *, end_at=None, stall_at=None, predicts_before_training=True):
        self.clock, self.end_at, self.stall_at = clock, end_at, stall_at
        self.predicts_before_training = predicts_before_training
        self.events, self.gc_in_run, self.finished = [], [], False

    def begin(self, X, y):
        if self.clock is not None:
            self.clock.now += BEGIN_SECONDS
        self.n_iter_ = self.samples_seen_ = 0
        return self

    def run(self, n_steps):
        self.events.append(("run", n_steps))
        self.gc_in_run.append(gc.isenabled())
        done = n_steps if self.stall_at is None else max(0, min(n_steps, self.stall_at - self.n_iter_))
        if self.end_at is not None:
            done = min(done, self.end_at - self.n_iter_)
        self.n_iter_ += done
        self.samples_seen_ += done
        if self.clock is not None:
            self.clock.now += STEP_SECONDS * done
        if self.end_at is not None and self.n_iter_ >= self.end_at:
            self.converged_ = True
        return done

    def working_set(self):
        self.events.append(("working_set", self.n_iter_))
        return []

    def finish(self):
        self.finished = True
        return self


X, Y = np.zeros((4, 2)), np.array([0.0, 1.0, 0.0, 1.0])


def iterations(timed, caller=None):
    out = []
    for point in timed:
        out.append((point.iteration, point.final))
        if caller is not None:
            caller()
    return out


def test_training_time_is_begin_and_run_only(clock):
    est = Steps(clock)

    def caller():                         # evaluating, printing, ...: the caller's own time
        clock.now += CALLER_SECONDS

    timed = trace(est, X, Y, StopConfig(passes=2), every=40)
    points = [(p.iteration, p.train_seconds) for p in timed if caller() is None]
    assert points == [(i, BEGIN_SECONDS + STEP_SECONDS * i) for i in (0, 40, 80, 120, 160, 200)]
    assert timed.train_seconds == timed.cpu_seconds == BEGIN_SECONDS + 200 * STEP_SECONDS
    assert sum(s for _, s in timed.pieces) == timed.train_seconds       # pieces: every timed call
    assert timed.pieces[0] == (0, BEGIN_SECONDS)


@pytest.mark.parametrize("stop, kwargs, expected", [
    (StopConfig(passes=1), {}, [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]),     # ~10 points a pass
    (StopConfig(passes=1), {"every": 25}, [0, 25, 50, 75, 100]),
    (StopConfig(passes=1), {"every": 30}, [0, 30, 60, 90, 100]),
    (StopConfig(passes=1), {"every": math.inf}, [0, 100]),                   # the end only
    (StopConfig(passes=1), {"every": math.inf, "initial": False}, [100]),
    (StopConfig(iterations=7), {"every": 5}, [0, 5, 7]),
    (StopConfig(passes=2, iterations=150), {"every": 100}, [0, 100, 150]),   # the tighter rule
    (StopConfig(fraction=0.25), {"every": math.inf}, [0, 25]),    # a share of the fit's one pass
])
def test_points_follow_the_schedule_and_only_the_last_is_final(stop, kwargs, expected):
    points = iterations(trace(Steps(), X, Y, stop, **kwargs))
    assert [i for i, _ in points] == expected
    assert [final for _, final in points] == [False] * (len(expected) - 1) + [True]


def test_no_point_before_training_for_a_model_that_does_not_exist_yet():
    points = iterations(trace(Steps(predicts_before_training=False), X, Y, StopConfig(passes=1), every=50))
    assert points == [(50, False), (100, True)]


def test_the_solver_ending_itself_ends_the_trace():
    points = iterations(trace(Steps(end_at=37), X, Y, StopConfig(passes=1), every=25))
    assert points == [(0, False), (25, False), (37, True)]
    # returning fewer steps than asked means the procedure is over (the protocol), even unconverged
    assert iterations(trace(Steps(stall_at=60), X, Y, StopConfig(passes=1), every=25))[-1] == (60, True)


def test_a_time_limit_is_read_between_pieces(clock):
    timed = trace(Steps(clock), X, Y, StopConfig(seconds=10.2), every=1000)
    assert iterations(timed)[-1] == (10, True)             # 0.5 + 10 × 1.0 ≥ 10.2 after step 10
    assert timed.train_seconds == BEGIN_SECONDS + 10 * STEP_SECONDS


def test_no_stop_rule_trains_as_fit_does():
    # no passes/iterations/seconds: the estimator's own fit, one pass for a solver without `passes`
    assert iterations(trace(Steps(), X, Y, every=1000))[-1] == (100, True)
    # and `passes` (None) resolved at begin (defaults.default_passes), as fit() trains
    rng = np.random.default_rng(0)
    Xs, ys = rng.normal(size=(300, 3)), np.repeat([-1.0, 1.0], 150)
    fitted = DSGClassifier(random_state=0).fit(Xs, ys)
    traced = DSGClassifier(random_state=0)
    last = list(trace(traced, Xs, ys, every=math.inf))[-1]
    assert fitted.passes_ > 1 and last.iteration == fitted.n_iter_ == fitted.passes_ * math.ceil(300 / 64)


def test_the_working_set_is_read_back_after_every_point_but_the_last():
    est = Steps()
    seen = []
    for point in trace(est, X, Y, StopConfig(passes=1), every=50):
        seen.append(point.iteration)
        est.events.append(("point", point.iteration))
    kinds = [kind for kind, _ in est.events]
    # after each non-final point, the working set first, then training resumes
    assert [e for e in est.events if e[0] != "run"] == [("point", 0), ("working_set", 0), ("point", 50),
                                                        ("working_set", 50), ("point", 100)]
    assert kinds.index("working_set") < kinds.index("run")


def test_the_garbage_collector_is_off_only_inside_timed_calls():
    assert gc.isenabled()
    est = Steps()
    for _ in trace(est, X, Y, StopConfig(passes=1), every=50):
        assert gc.isenabled()                    # the caller's code runs with it on
    assert est.gc_in_run and not any(est.gc_in_run)
    assert gc.isenabled()


def test_the_estimator_is_finished_however_the_iteration_ends():
    est = Steps()
    for point in trace(est, X, Y, StopConfig(passes=1), every=10):
        if point.iteration == 30:
            break
    assert est.finished and est.n_iter_ == 30


def test_warm_reads_without_writing():
    arrays = [np.arange(10_000, dtype=np.float64), np.zeros(0), np.arange(12.0).reshape(3, 4)[:, ::2],
              np.ones((300, 7), dtype=np.float16)]
    copies = [a.copy() for a in arrays]
    timing._warm(arrays)                         # empty and non-contiguous arrays are skipped
    assert all(np.array_equal(a, c) for a, c in zip(arrays, copies))


# ------------------------------------------------------------------ every registered algorithm

def _small_problem(spec):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(240, 5))
    y = (X[:, 0] * X[:, 1] + X[:, 2] > 0).astype(float)
    if "semi-supervised" in spec.tasks:
        y[80:] = np.nan                                   # unlabeled rows
    return X, y, rng.normal(size=(200, 5))


def _build(spec):
    params = dict(spec.smoke_params)
    if "threads" in spec.defaults():
        params["threads"] = 1
    return spec.build(params, seed=3, task="binary")


@pytest.mark.parametrize("name", sorted(algorithms()))
def test_evaluating_between_chunks_does_not_change_the_model(name):
    """The experiment loop's evaluation reads the model (record, objective, predictions) between timed
    chunks: the trained model equals that of an unevaluated twin with the same chunks."""
    spec = algorithms()[name]
    X, y, X_test = _small_problem(spec)
    decisions = []
    for evaluated in (True, False):
        est = _build(spec)
        timed = trace(est, X, y, StopConfig(iterations=12), every=3)
        for point in timed:
            if evaluated and (point.iteration or est.predicts_before_training):
                json.dumps(est.record())
                est.objective(X, y)
                est.predict(X_test)
        decisions.append(est.decision_function(X_test))
    np.testing.assert_array_equal(decisions[0], decisions[1])


@pytest.mark.parametrize("name", sorted(algorithms()))
def test_record_holds_the_model_size_and_counters(name):
    spec = algorithms()[name]
    X, y, _ = _small_problem(spec)
    est = _build(spec)
    est.begin(X, y)
    est.run(min(12, est.steps_per_pass))
    recorded = est.record()
    assert set(recorded) <= {"n_features", "n_support_vectors", "counters"}
    sizes = {"n_features": "n_random_features_", "n_support_vectors": "n_support_vectors_"}
    assert len(set(recorded) & set(sizes)) == 1, recorded       # one model-size column
    for column, attribute in sizes.items():
        if column in recorded:
            assert recorded[column] == getattr(est, attribute)
    json.dumps(recorded.get("counters", {}))
    assert all(isinstance(a, np.ndarray) for a in est.working_set())
    est.finish()


@pytest.mark.parametrize("name", sorted(algorithms()))
def test_only_mini_batch_solvers_carry_a_batch_schedule(name):
    """A solver that steps otherwise derives from Solver directly; no class sets a batch_size
    attribute just to satisfy a base class (batch_size is a declared parameter, or the fixed
    batch of a mini-batch solver such as BSGD's one sample per step)."""
    for cls in algorithms()[name].classes:
        fixed = [c.__name__ for c in cls.__mro__ if "batch_size" in vars(c)]
        if fixed:
            assert issubclass(cls, IterativeEstimator), (cls.__name__, fixed)
        assert issubclass(cls, Solver)


class Holds(Steps):
    """Steps that allocates `mb` megabytes (touched) in begin and keeps them while it trains."""

    def __init__(self, mb, **kw):
        super().__init__(**kw)
        self.mb, self.held = mb, None

    def begin(self, X, y):
        self.held = np.ones(self.mb * 2**20 // 8)         # written: resident, not only reserved
        return super().begin(X, y)


@pytest.mark.skipif(not timing._STATUS.is_file(), reason="reads /proc/self/status (Linux)")
def test_training_memory_is_what_the_timed_calls_hold_above_what_was_resident_before():
    before = np.ones(150 * 2**20 // 8)                    # resident before training: not training's
    points = list(trace(Holds(200), X, Y, StopConfig(passes=1), every=50))
    held = points[-1].train_memory_mb
    assert 190 <= held <= 260 and all(p.train_memory_mb <= held for p in points)
    kept = []
    for point in trace(Holds(0), X, Y, StopConfig(passes=1), every=25):
        kept.append(np.ones(100 * 2**20 // 8))            # the caller's, between points: not training's
    assert point.train_memory_mb < 40 and len(kept) >= 4
    del before


HIDDEN = '''
import numpy as np
from kernelbench.config import StopConfig
from kernelbench.experiment.timing import Trace

class Allocates:
    steps_per_pass, predicts_before_training, converged_ = 10, False, False
    def begin(self, X, y):
        self.n_iter_ = self.samples_seen_ = 0
        self.held = np.ones(3 * 2**20 // 8)         # 3 MiB, held while it trains
        return self
    def run(self, n):
        self.n_iter_ += n
        self.samples_seen_ += n
        return n
    def working_set(self):
        return []
    def finish(self):
        return self

a = np.ones(4 * 2**20 // 8); del a        # a mapping, freed: glibc raises its mmap threshold to 4 MiB
b = np.ones(3 * 2**20 // 8); del b        # then from the heap, freed: left resident at the heap's top
for point in Trace(Allocates(), None, None, StopConfig(iterations=10)):
    pass
print(point.train_memory_mb)
'''


@pytest.mark.skipif(not timing._STATUS.is_file(), reason="reads /proc/self/status (Linux)")
def test_a_sweep_points_process_sees_an_allocation_that_reuses_freed_heap_pages():
    """Without EXACT_MEMORY the 3 MiB would reuse the freed heap pages and read about 0 under glibc."""
    import os
    import subprocess
    import sys

    from kernelbench.experiment.sweep import EXACT_MEMORY

    env = {**os.environ, **EXACT_MEMORY}
    out = subprocess.run([sys.executable, "-c", HIDDEN], env=env, capture_output=True, text=True, check=True)
    assert 2.9 <= float(out.stdout) <= 4
