"""What every iterative solver shares: the stepping protocol the runner drives, input checks,
label encoding and the pass-by-pass batch schedule.

Protocol (DESIGN.md §6): `begin(X, y)` validates and allocates, `run(n_steps)` advances by that
many iterations (mini-batches) and can be timed on its own, `finish()` drops the training data.
`fit` is begin + run for `passes` passes + finish; `partial_fit` runs one pass over the given
chunk. The runner evaluates between `run` calls, outside its timer.
"""
from __future__ import annotations

import math
import os

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from kernelbench.errors import SolverError

MAX_DENSE_BYTES = 8 * 2**30   # densifying sparse input beyond this is refused with a clear message


class DivergenceError(SolverError):
    """The iterates became NaN/inf (or a step made no sense); the message suggests a smaller step."""


class BudgetExceededError(SolverError):
    """A solver would exceed its memory or time budget on this input (e.g. an O(n²) baseline at
    large n): the runner writes a clean row with status "skipped" and this message, not a crash."""


def resolve_threads(threads: int) -> int:
    """threads <= 0 means every core this process may use."""
    if threads and threads > 0:
        return int(threads)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def as_dense(X, dtype):
    """C-contiguous dense array of `dtype` (sparse input densified, within MAX_DENSE_BYTES)."""
    if sp.issparse(X):
        nbytes = X.shape[0] * X.shape[1] * np.dtype(dtype).itemsize
        if nbytes > MAX_DENSE_BYTES:
            raise SolverError(
                f"this solver works on dense features and the sparse input ({X.shape[0]} × "
                f"{X.shape[1]}) would need {nbytes / 2**30:.1f} GiB dense; reduce the dimension "
                "first (e.g. PCA) or subsample the data")
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=dtype)


class IterativeEstimator(BaseEstimator):
    """Base of the mini-batch solvers; subclasses define `_init_model`, `_train_rows`, `_decision`."""

    predicts_before_training = True    # a model exists at iteration 0 (f = 0): curves start there
    _training_only: tuple = ()         # a subclass's own per-fit data, dropped by finish()
    # What a user can expect when re-running with the same seed (recorded in run.json).
    determinism = "identical results for the same seed and thread count"
    # How the runner may predict a large test part (runner._predict; results identical either way):
    #   "internal": predict already runs on the estimator's own OpenMP `threads` and bounds its own
    #               memory: one call (a thread pool on top would oversubscribe the cores);
    #   "rows":     predict on disjoint row chunks may run in several threads at once (it releases
    #               the GIL and shares no scratch buffer): chunks on the cell's cores;
    #   "serial":   chunks one after another (bounded memory). The safe default.
    predict_parallelism = "serial"

    def _validate_params_common(self):
        if not (isinstance(self.batch_size, (int, np.integer)) and self.batch_size >= 1):
            raise SolverError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        if not (np.isfinite(self.C) and self.C > 0):
            raise SolverError(f"C must be a positive number, got {self.C!r}")

    # ---- the stepping protocol -----------------------------------------------------------
    def begin(self, X, y, *, classes=None):
        """Validate (X, y), set up the model; no iteration is run. `classes` (classifiers): all
        labels the model will ever see (partial_fit's first call), default the labels in y."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             y_numeric=not self._is_classifier(), reset=True)
        if X.shape[0] < 1:
            raise SolverError("no training samples")
        self._validate_params_common()
        self._train_X = X
        self._train_Y = self._encode_targets(y, fitting=True, classes=classes)
        self._rng = np.random.default_rng(self.random_state)
        self._order = self._rng.permutation(X.shape[0])
        self._position = 0
        self.n_iter_ = 0
        self.samples_seen_ = 0
        self._init_model(X)
        return self

    @property
    def steps_per_pass(self) -> int:
        return math.ceil(self._train_X.shape[0] / self.batch_size)

    def run(self, n_steps: int) -> int:
        """Advance by up to n_steps iterations (each pass visits every sample once, in a fresh
        random order). Returns the iterations done."""
        done = 0
        n = self._train_X.shape[0]
        while done < n_steps:
            if self._position >= n:
                self._order = self._rng.permutation(n)
                self._position = 0
            left_in_pass = math.ceil((n - self._position) / self.batch_size)
            k = min(n_steps - done, left_in_pass)
            rows = self._order[self._position: self._position + k * self.batch_size]
            steps = self._train_rows(self._dense_train_X(), self._train_Y, rows)
            self._position += len(rows)
            done += steps
            self.n_iter_ += steps
            self.samples_seen_ += len(rows)
        return done

    def finish(self):
        """Forget the training data (the model stays)."""
        for name in ("_train_X", "_train_Y", "_dense_X_cache", "_order") + self._training_only:
            self.__dict__.pop(name, None)
        return self

    # ---- scikit-learn API ----------------------------------------------------------------
    def fit(self, X, y):
        self.begin(X, y)
        self.run(math.ceil(self.passes * self.steps_per_pass))
        return self.finish()

    def partial_fit(self, X, y, classes=None):
        """One pass over (X, y), continuing the model; the first call sets it up (λ then uses
        this chunk's size, and `classes` must name every label to come)."""
        if not hasattr(self, "n_iter_"):
            self.begin(X, y, classes=classes)
        else:
            X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                                 y_numeric=not self._is_classifier(), reset=False)
            self._train_X = X
            self._train_Y = self._encode_targets(y, fitting=False)
            self._order = self._rng.permutation(X.shape[0])
            self._position = 0
        self.run(self.steps_per_pass)
        return self.finish()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True      # CSR accepted (densified within MAX_DENSE_BYTES)
        return tags

    def _raw_decision(self, X):
        """f(X) as (n, n_outputs), after the fitted and input checks."""
        check_is_fitted(self, "n_iter_")
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        return self._decision(X)

    # ---- helpers ---------------------------------------------------------------------------
    def _dense_train_X(self):
        if getattr(self, "_dense_X_cache", None) is None:
            self._dense_X_cache = as_dense(self._train_X, self._feature_dtype())
        return self._dense_X_cache

    def _is_classifier(self):
        return isinstance(self, ClassifierMixin)


class BinaryClassifierMixin(ClassifierMixin):
    """Labels ↔ y ∈ {-1, +1} (classes_[1] is +1), as the margin losses need."""

    def _encode_targets(self, y, fitting, classes=None):
        if fitting:
            kind = type_of_target(y)
            if kind not in ("binary", "multiclass"):
                raise SolverError(f"Unknown label type: classification needs discrete class labels; "
                                  f"got targets of type {kind!r}")
            self.classes_ = np.unique(y) if classes is None else np.unique(np.asarray(classes))
            if len(self.classes_) != 2:
                found = (f"only 1 class ({self.classes_[0]!r})" if len(self.classes_) == 1 else
                         f"{len(self.classes_)} classes ({self.classes_[:10].tolist()})")
                raise SolverError(
                    f"Only binary classification is supported: {type(self).__name__} needs exactly "
                    f"2 classes; got {found}. For more classes use dsg/udsg/cdsg with loss=softmax, "
                    "or pick two classes.")
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise SolverError(f"labels {unknown[:10].tolist()} were not among the classes {self.classes_.tolist()}")
        return np.where(y == self.classes_[1], 1.0, -1.0).reshape(-1, 1)

    def decision_function(self, X):
        return self._raw_decision(X).ravel()

    def predict(self, X):
        positive = self.decision_function(X) > 0      # first: it raises NotFittedError before fit
        return self.classes_[positive.astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class RegressionMixin(RegressorMixin):
    def _encode_targets(self, y, fitting, classes=None):
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise SolverError("regression targets contain NaN or inf")
        return y.reshape(-1, 1)

    def predict(self, X):
        return self._raw_decision(X).ravel()
