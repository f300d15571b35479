"""The exact SVM within a time budget: LIBSVM (or oneDAL's SVC) on the largest training prefix whose
fit finishes within `fit_seconds` -- what a user does with an O(n²) solver at millions of rows. A
peer for equal-time comparisons (`kernelbench bench`), not a paper's baseline.

The prefix sizes grow ×2 from `start` to the whole training part (the replicas' rows are i.i.d., so
a prefix is a uniform subsample). Each fit runs in a process of its own, killed once it passes
`fit_seconds` (a LIBSVM solve cannot be interrupted from Python); the largest one that finished is
the model. Importing the library and reading the rows are not timed. Without `fit_seconds` the
whole training part is fitted here, as `libsvm` does. The one iteration is the whole procedure;
the counters record the prefix chosen, its fit time and every size tried.
"""
from __future__ import annotations

import multiprocessing
import os
import queue
import tempfile
import time

import numpy as np

from kernelbench.baselines.libsvm import PARAMETERS, ExactClassifierMixin, ExactSVM
from kernelbench.params import NONE, POSITIVE, THREADS, Choice, Integer, declare, param
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers.base import BudgetExceededError, as_dense

START_TIMEOUT = 600.0             # seconds a child may take to import and read its rows (untimed)


def _fit_prefix(estimator, path: str, m: int, channel) -> None:
    """In a child process: fit `estimator` on the first m rows saved at `path`, send the fit time
    and the fitted estimator back (or the error)."""
    try:
        X = np.ascontiguousarray(np.load(path + ".X.npy", mmap_mode="r")[:m])
        y = np.ascontiguousarray(np.load(path + ".y.npy", mmap_mode="r")[:m])
        channel.put(("ready",))
        started = time.perf_counter()
        estimator.fit(X, y)
        seconds = time.perf_counter() - started
        channel.put(("fit", seconds, estimator))    # the queue carries the fitted model across
    except BaseException as e:              # noqa: BLE001  (reported to the parent, which goes on)
        channel.put(("error", f"{type(e).__name__}: {e}"))


def doubling_sizes(start: int, n: int) -> list[int]:
    """start, 2·start, 4·start, ... below n, then n itself."""
    sizes, m = [], int(start)
    while m < n:
        sizes.append(m)
        m *= 2
    return sizes + [n]


def timed_fit(estimator, path: str, m: int, limit: float) -> tuple:
    """One prefix fit in its own process, killed past `limit` seconds of fitting: ("fit", seconds,
    fitted estimator), ("timeout",) or ("error", message)."""
    context = multiprocessing.get_context("spawn")
    channel = context.Queue()
    child = context.Process(target=_fit_prefix, args=(estimator, path, m, channel))
    child.start()
    try:
        message = channel.get(timeout=START_TIMEOUT)
        if message[0] == "ready":
            message = channel.get(timeout=limit + 5)
        return message
    except queue.Empty:
        return ("timeout",)
    finally:
        if child.is_alive():
            child.kill()
        child.join()


class SubsampleSVMClassifier(ExactClassifierMixin, ExactSVM):
    parameters = declare(
        {k: v for k, v in PARAMETERS.items() if k != "epsilon"},
        engine=param("libsvm", "the exact solver: libsvm (scikit-learn's SVC, one thread) or onedal "
                               "(scikit-learn-intelex's SVC on `threads` cores)", Choice("libsvm", "onedal")),
        threads=THREADS.but(doc="cores oneDAL uses (engine onedal; 0 = all cores)"),
        fit_seconds=param(None, "the budget T: the largest prefix whose fit finishes within T seconds "
                                "(null: the whole training part)", POSITIVE, NONE),
        start=param(2000, "the first prefix size, doubled until the budget is passed", Integer(1, 10**9)))

    def _init_model(self, X):
        # with a budget the prefixes are fitted dense: γ from the same dense features
        super()._init_model(X if self.fit_seconds is None else as_dense(X, np.float64))
        self.tried_ = None

    def run(self, n_steps: int) -> int:
        if self.fit_seconds is None:
            return super().run(n_steps)
        if n_steps < 1 or self.n_iter_ >= 1:
            return 0
        X, y = as_dense(self._train_X, np.float64), self._train_Y.ravel()
        tried, best = [], None
        with tempfile.TemporaryDirectory(prefix="kernelbench-svm-") as folder:
            path = os.path.join(folder, "train")
            np.save(path + ".X.npy", X)
            np.save(path + ".y.npy", y)
            for m in doubling_sizes(self.start, X.shape[0]):
                outcome = timed_fit(self.svm_, path, m, float(self.fit_seconds))
                if outcome[0] == "fit" and outcome[1] <= self.fit_seconds:
                    best = (m, outcome[1], outcome[2])
                    tried.append(f"{m}: {outcome[1]:.1f} s")
                    continue
                why = {"fit": lambda o: f"{o[1]:.1f} s > T", "timeout": lambda o: "killed at T",
                       "error": lambda o: o[1]}[outcome[0]](outcome)
                tried.append(f"{m}: {why}")
                break
        self.tried_ = tried
        self.converged_ = True
        self.n_iter_ = 1
        if best is None:
            raise BudgetExceededError(f"no prefix of {self.start} rows or more was fitted within "
                                      f"{self.fit_seconds} s (sizes tried: {'; '.join(tried)})")
        self.subsample_, self.fit_seconds_, self.svm_ = best
        self.samples_seen_ = self.subsample_
        return 1

    def counters(self) -> dict:
        if getattr(self, "tried_", None) is None:
            return {}
        return {"subsample": self.subsample_, "fit_seconds": self.fit_seconds_, "sizes_tried": "; ".join(self.tried_)}


register_algorithm(
    "svm-subsample", classifier=SubsampleSVMClassifier, tasks=("binary", "multiclass"),
    description="Exact SVM within a time budget: LIBSVM (or oneDAL) on the largest doubling training prefix "
                "whose fit finishes within fit_seconds; a peer at equal time",
)
