"""The timing harness: a solver trained in timed pieces, paused at evaluation points.

Set-up (`begin`) and `run` calls are timed; whatever the caller does between points (evaluating,
printing) is not, and afterwards the solver's working set is read back into the CPU caches, so that
the next timed piece does not depend on what the caller did: training time must not depend on how
often one evaluates (scripts/bench_eval_overhead.py measures it). The experiment loop times its cells with
`trace`; benchmarks and scripts use it too.
"""
from __future__ import annotations

import functools
import gc
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelbench.config import StopConfig

from .stopping import total_steps

RUN_PIECES_PER_PASS = 100       # a timed chunk is run in pieces of at most 1/100 pass (see Trace)
_STATUS, _CLEAR_REFS = Path("/proc/self/status"), Path("/proc/self/clear_refs")


def _resident_kb() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in kB: resident now, and its peak since the last reset; NaN
    where /proc does not say (not Linux)."""
    found = {}
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(("VmRSS:", "VmHWM:")):
                found[line[:5]] = float(line.split()[1])
    except OSError:
        pass
    return found.get("VmRSS", math.nan), found.get("VmHWM", math.nan)


def _reset_peak() -> None:
    """Set the process's peak resident memory (VmHWM) to its resident memory now (Linux: "5" to
    clear_refs), so that the next VmHWM reading is the peak of what runs in between."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        pass


@dataclass(frozen=True)
class Point:
    """Where a timed run stands when `trace` hands over: training is paused, and whatever the
    caller does now (evaluate, print, ...) is outside the timer."""
    iteration: int            # the estimator's n_iter_
    samples_seen: int
    train_seconds: float      # wall time of begin and of every run call so far
    cpu_seconds: float        # CPU time of the process (all threads) in the same calls
    final: bool               # the last point: a stop rule, the solver's own end (converged_), or a time limit
    train_memory_mb: float = math.nan   # the largest resident memory in those calls above that before begin


class Trace:
    """A timed run of a Solver (begin, then `run` in timed pieces), pausing at evaluation
    points; see `trace`. `train_seconds` / `cpu_seconds` hold the totals so far, also after an
    exception (e.g. DivergenceError from run); `pieces` lists (iterations, wall seconds) of every
    timed call, begin first (iterations 0), for benchmarks. `every` may be set after `begin()`,
    when `total` is known. `train_memory_mb`: the process's peak resident memory within the timed
    calls above its resident memory before begin, less what the caller added between them -- what
    training itself holds (a model, a kernel matrix, features), not the interpreter, the data or
    an evaluation between points (NaN off Linux)."""

    def __init__(self, estimator, X, y, stop: StopConfig = StopConfig(), *, every=None, initial=True,
                 progress=None):
        self.estimator, self.X, self.y = estimator, X, y
        self.stop = stop                # whole: a rung's `fraction` of the estimator's own fit included
        self.every, self.initial, self.progress = every, initial, progress
        self.train_seconds = self.cpu_seconds = 0.0
        self.train_memory_mb = math.nan
        self._resident_before = math.nan        # kB, just before begin
        self._resident_after = math.nan         # kB, at the end of the last timed call
        self._outside = 0.0                     # kB the caller added (or freed) between timed calls
        self.pieces: list[tuple[int, float]] = []
        self.total = math.nan           # iterations the stop rule allows (inf: a time limit only)
        self.began = False

    def begin(self) -> Trace:
        """`estimator.begin(X, y)`, timed: set-up is training work too (e.g. a feature matrix).
        A BudgetExceededError propagates with `began` still False."""
        self._timed(self.estimator.begin, self.X, self.y)
        self.began = True
        self.total = total_steps(self.stop, self.estimator)
        return self

    def __iter__(self):
        est, stop = self.estimator, self.stop
        if not self.began:
            self.begin()
        try:
            per_pass = est.steps_per_pass
            at_end_only = self.every is not None and math.isinf(self.every)
            if at_end_only:
                chunk_size = self.total if math.isfinite(self.total) else 10**9
            else:
                chunk_size = self.every or max(1, per_pass // 10)
            if stop.seconds:            # the clock is read between chunks: keep them to one pass
                chunk_size = max(1, min(chunk_size, per_pass))
            piece = max(1, per_pass // RUN_PIECES_PER_PASS)
            if self.initial and est.predicts_before_training:
                yield self._point(final=False)
                _warm(est.working_set())
            while True:
                left, ended = int(min(chunk_size, self.total - est.n_iter_)), False
                # A chunk runs in pieces: Ctrl-C is only handled when a compiled loop returns to
                # Python, and a time limit is read between them (a full-size pass is minutes long).
                while left > 0:
                    asked = min(left, piece)
                    done = self._timed(est.run, asked)
                    if self.progress is not None:
                        self.progress(done)
                    left -= done
                    ended = done < asked            # the solver's procedure is over (protocol)
                    if ended or self._out_of_time() or est.converged_:
                        break
                final = (ended or est.n_iter_ >= self.total or self._out_of_time()
                         or est.converged_)            # e.g. LIBSVM: solved to its tolerance
                if final:
                    yield self._point(final)
                    return
                if not at_end_only:             # a time limit cuts chunks to one pass: no point
                    yield self._point(final)
                    _warm(est.working_set())
        finally:
            est.finish()

    def _timed(self, call, *args):
        """call(*args) under the clocks, with the cyclic garbage collector off (as timeit does):
        collections are triggered by allocation counts that evaluation advances, so one landing
        inside a timed call would depend on how often the caller evaluates."""
        collecting = gc.isenabled()
        gc.disable()
        steps = 0
        resident, _ = _resident_kb()
        if math.isnan(self._resident_before):
            self._resident_before = resident
        elif not math.isnan(self._resident_after):
            self._outside += resident - self._resident_after
        _reset_peak()                          # the peak of this call alone, read after it
        try:
            cpu = time.process_time()          # the wall clock brackets the call alone
            wall = time.perf_counter()
            try:
                steps = call(*args)
                return steps
            finally:
                seconds = time.perf_counter() - wall
                self.cpu_seconds += time.process_time() - cpu
                self.train_seconds += seconds
                self.pieces.append((int(steps) if isinstance(steps, (int, np.integer)) else 0, seconds))
                self._resident_after, peak = _resident_kb()
                held = (peak - self._resident_before - self._outside) / 1024
                if not math.isnan(held):
                    self.train_memory_mb = max(held, 0.0 if math.isnan(self.train_memory_mb) else self.train_memory_mb)
        finally:
            if collecting:
                gc.enable()

    def _out_of_time(self) -> bool:
        return bool(self.stop.seconds) and self.train_seconds >= self.stop.seconds

    def _point(self, final: bool) -> Point:
        est = self.estimator
        return Point(est.n_iter_, est.samples_seen_, self.train_seconds, self.cpu_seconds, final, self.train_memory_mb)


def trace(estimator, X, y, stop: StopConfig = StopConfig(), *, every=None, initial=True,
          progress=None) -> Trace:
    """A timed training run of `estimator` (a kernelbench Solver) on (X, y), as the experiment loop times
    its cells: iterate it for `Point`s. Set-up (begin) and `run` calls are timed; the caller's
    work between points is not, and afterwards the solver's working set is read back into the
    CPU caches (outside the timer) so that the next timed chunk does not depend on what the
    caller did (training time must not depend on how often one evaluates).

    Stops as the rule `stop` says: at its passes / iterations / seconds of training (the first
    reached; none given: the iterations the estimator's own fit makes, or its `fraction` of them),
    or when the solver ends itself (converged_). Points: at iteration 0 (`initial`, if the model predicts before
    training), every `every` iterations (None: about 10 a pass; math.inf: at the end only) and at
    the end (final). `progress(done)` is called after every timed piece. The estimator is
    finished (training data dropped) when the iteration ends, however it ends.

        for point in trace(est, X, y, StopConfig(passes=2), every=100):
            print(point.iteration, point.train_seconds, est.score(X_valid, y_valid))
    """
    return Trace(estimator, X, y, stop, every=every, initial=initial, progress=progress)


def _warm(arrays) -> None:
    """Read one byte of every cache line of `arrays`, from the last one back while they fit in
    half the last-level cache, then in order, so that the
    last listed -- what the loop reads most -- is the most recent. What an uninterrupted run keeps
    cached comes back. Half: the cache is shared with the other cores (and, on a virtual machine,
    other tenants); reading a working set about its whole size back evicts what the loop reads
    most and slowed the next chunk (SVRG-RF's feature matrix in a cache barely larger than it). Of an array that does not fit whole, the part that does is read. Reading, not
    writing: nothing changes."""
    chosen, left = [], _cache_bytes() // 2
    for a in reversed(arrays):
        if not (a.size and a.flags.c_contiguous) or left < 64:
            continue
        data = a.reshape(-1).view(np.uint8)
        # An array larger than what is left: its first part. A loop that reads it at random (the
        # rows of an SVRG or AsyDSSKL feature matrix) keeps part of it cached when uninterrupted.
        chosen.append(data[:left])
        left -= min(left, data.size)
    for data in reversed(chosen):
        data[::64].max()


@functools.cache
def _cache_bytes() -> int:
    """The largest CPU cache (Linux sysfs: the last level, e.g. "32768K"); 32 MiB if unknown."""
    sizes = []
    for entry in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = entry.read_text().strip().upper()
            sizes.append(int(text.rstrip("KMG")) * {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1))
        except (OSError, ValueError):
            continue
    return max(sizes, default=32 * 2**20)
