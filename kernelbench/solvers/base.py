"""What every iterative solver shares: the stepping protocol the experiment loop drives (`Solver`), input
checks, label encoding, and the pass-by-pass mini-batch schedule (`IterativeEstimator`).

Protocol: `begin(X, y)` validates and allocates, `run(n_steps)` advances by that
many iterations and can be timed on its own, `finish()` drops the training data; `record()` says
what a result row holds besides the metrics. `fit` is begin + run for `passes` passes + finish;
a mini-batch solver's `partial_fit` runs one pass over the given chunk. The experiment loop evaluates
between `run` calls, outside its timer (kernelbench.experiment.trace).
"""
from __future__ import annotations

import functools
import math
import numbers
import os

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import ThreadpoolController

from kernelbench.errors import SolverError
from kernelbench.params import Declared
from kernelbench.solvers.objectives import regularised_objective

MAX_DENSE_BYTES = 8 * 2**30   # densifying sparse input beyond this is refused with a clear message


class DivergenceError(SolverError):
    """The iterates became NaN/inf (or a step made no sense); the message suggests a smaller step."""


class BudgetExceededError(SolverError):
    """A solver would exceed its memory or time budget on this input (e.g. an O(n²) baseline at
    large n): the experiment loop writes a clean row with status "skipped" and this message, not a crash."""


def resolve_threads(threads: int) -> int:
    """threads <= 0 means every core this process may use."""
    if threads and threads > 0:
        return int(threads)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def blas_threads(threads: int):
    """A `with` block in which BLAS uses `threads` threads. One controller for the process:
    threadpoolctl.threadpool_limits inspects every loaded library on each call,
    which inside a solver's `run` (about 100 calls a pass) was part of every timed chunk."""
    return _threadpools().limit(limits=threads, user_api="blas")


@functools.cache
def _threadpools():
    return ThreadpoolController()


class not_offered:
    """A scikit-learn method a solver does not offer, e.g. `partial_fit = not_offered("why")`:
    reading it raises AttributeError naming the reason, so hasattr is False and scikit-learn's
    tools and checks skip it (as with `available_if`)."""

    def __init__(self, reason: str):
        self.reason = reason

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        raise AttributeError(f"{(owner or type(instance)).__name__} does not offer {self.name}: "
                             f"{self.reason}")


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


class Solver(Declared, BaseEstimator):
    """What the experiment loop drives. `begin(X, y)` validates and sets up the model;
    `run(n_steps)` advances by up to n_steps iterations and returns how many it did, timed on its
    own; `steps_per_pass` is the iterations of one pass; `converged_` turns True when the solver's
    own stopping rule ends the run; `finish()` drops the training data. Between `run` calls the
    runner evaluates, outside its timer: predictions, `objective(X, y)` and `record()` (model size,
    counters); then it reads `working_set()` back into the caches (kernelbench.experiment.trace).

    Subclasses define `_init_model`, `steps_per_pass`, `run` and `_decision`; the mini-batch
    solvers derive from IterativeEstimator, which schedules `run` from `batch_size` and
    `_train_rows`. Parameters are declared once in `parameters` (kernelbench/params.py): __init__
    and the checks run when training begins (`_check_params`) are derived from it."""

    predicts_before_training = True    # a model exists at iteration 0 (f = 0): curves start there
    converged_ = False                 # set by a solver with its own stopping rule (tolerance, procedure's end)
    _training_only: tuple = ()         # a subclass's own per-fit data, dropped by finish()
    _model_arrays: tuple = ()          # the attributes of core_ that every step reads (see working_set)
    # What a user can expect when re-running with the same seed (recorded in run.json).
    determinism = "identical results for the same seed and thread count"
    # How the experiment loop may predict a large test part (experiment.metrics.predict; results identical either way):
    #   "internal": predict already runs on the estimator's own OpenMP `threads` and bounds its own
    #               memory: one call (a thread pool on top would oversubscribe the cores);
    #   "rows":     predict on disjoint row chunks may run in several threads at once (it releases
    #               the GIL and shares no scratch buffer): chunks on the cell's cores;
    #   "serial":   chunks one after another (bounded memory). The safe default.
    predict_parallelism = "serial"
    # scikit-learn estimator checks this class is expected to fail with its defaults: {check: why},
    # only a check scikit-learn expects to fail for its own estimator of the same kind, named in `why`
    # (tests/estimators/test_registry_estimators.py runs every registered class through check_estimator).
    expected_failed_checks: dict = {}
    # loss 'auto' (a class with a `loss` parameter): what it trains with for two classes or for
    # regression, and for more than two classes (softmax, where the solver offers it)
    auto_loss: str = ""
    auto_multiclass_loss: str = ""

    def _resolve_loss(self, y, classes=None):
        """`loss_`: the loss the model trains with (the `loss` parameter, 'auto' resolved)."""
        if "loss" not in self.parameters:
            return
        if self.loss != "auto":
            self.loss_ = self.loss
            return
        many = (self._is_classifier() and self.auto_multiclass_loss
                and len(np.unique(y if classes is None else np.asarray(classes))) > 2)
        self.loss_ = self.auto_multiclass_loss if many else self.auto_loss

    # ---- the stepping protocol -----------------------------------------------------------
    def begin(self, X, y, *, classes=None):
        """Validate (X, y), set up the model; no iteration is run. `classes` (classifiers): all
        labels the model will ever see (partial_fit's first call), default the labels in y."""
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=[np.float64, np.float32],
                             y_numeric=not self._is_classifier(), reset=True)
        if X.shape[0] < 1:
            raise SolverError("no training samples")
        self._check_params()
        self._resolve_loss(y, classes)
        self._train_X = X
        self._train_Y = self._encode_targets(y, fitting=True, classes=classes)
        self.n_iter_ = 0
        self.samples_seen_ = 0
        self._init_model(X)
        return self

    @property
    def steps_per_pass(self) -> int:
        """Iterations in one pass over the training data (what `passes` counts)."""
        raise NotImplementedError(f"{type(self).__name__} does not define steps_per_pass")

    def run(self, n_steps: int) -> int:
        """Advance by up to n_steps iterations; returns the iterations done (fewer only when the
        solver has ended: converged_, or its procedure is over)."""
        raise NotImplementedError(f"{type(self).__name__} does not define run")

    def finish(self):
        """Forget the training data (the model stays)."""
        for name in ("_train_X", "_train_Y", "_dense_X_cache", "_order") + self._training_only:
            self.__dict__.pop(name, None)
        return self

    def record(self) -> dict:
        """What the experiment loop writes into an evaluation row besides its metrics: the model size
        (`n_features` for random-feature models, `n_support_vectors` for kernel expansions, set
        by the subclass) and `counters`, the algorithm's own numbers (merges, sparsity, ...)."""
        counters = self.counters()
        return {"counters": counters} if counters else {}

    def counters(self) -> dict:
        """The algorithm's own numbers for the counters column of a row (none by default)."""
        return {}

    def resolved_params(self) -> dict:
        """{name: value} of every declared parameter given as a rule -- a word such as 'auto',
        'median' or 'scale', or null -- that `begin` turned into a value, read from the `<name>_`
        attribute it set (gamma_, passes_, step_, t0_, loss_, ...): what a run records, so that it
        can say which kernel width or schedule it trained with. Empty before `begin`."""
        resolved = {}
        for name in self.parameters:
            given, chosen = getattr(self, name, None), getattr(self, name + "_", None)
            chosen = chosen.item() if isinstance(chosen, np.generic) else chosen
            if (given is None or isinstance(given, str)) and isinstance(chosen, (numbers.Real, str)) \
                    and chosen != given:
                resolved[name] = chosen
        return resolved

    def working_set(self) -> list:
        """The arrays the training loop reads over and over: the training data as the loop reads
        it, the targets, the pass order and the subclass's own per-fit data (`_training_only`),
        then the model its compiled core reads at every step (`_model_arrays`, those allocated).
        kernelbench.experiment.trace reads them back into the CPU caches after each evaluation,
        outside its timer: predicting a test part streams it through the caches, and the next
        timed chunk would otherwise pay for reloading what an uninterrupted run keeps there."""
        state = self.__dict__
        data = state.get("_dense_X_cache")
        names = ("_train_Y", "_order") + self._training_only
        values = [data if data is not None else state.get("_train_X")] + [state.get(n) for n in names]
        if self._model_arrays:
            values += [getattr(self.core_, n) for n in self._model_arrays]
        arrays = []
        for value in values:
            parts = (value.data, value.indices, value.indptr) if sp.issparse(value) else \
                value if isinstance(value, tuple) else (value,)
            arrays += [a for a in parts if isinstance(a, np.ndarray)]
        return arrays

    # ---- scikit-learn API ----------------------------------------------------------------
    def fit(self, X, y):
        """begin, `planned_steps()` iterations, finish."""
        self.begin(X, y)
        self.run(self.planned_steps())
        return self.finish()

    def planned_steps(self, fraction: float = 1.0) -> int:
        """Iterations `fit` makes, once begun (a `fraction` of them: at least one): `passes` passes,
        one where the solver has no `passes` parameter, `passes_` where begin resolved `auto`."""
        passes = getattr(self, "passes_", self.passes if "passes" in self.parameters else 1)
        return max(1, math.ceil(fraction * passes * self.steps_per_pass))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True      # CSR accepted (densified within MAX_DENSE_BYTES)
        return tags

    # ---- the objective (one function for every model: kernelbench/solvers/objectives.py) ----
    def objective(self, X, y) -> float | None:
        """R(f) on (X, y): mean labeled loss (+ w_U · mean unlabeled loss) + Ω(f); None where the
        model defines no penalty Ω (an adapter such as LIBSVM's): the experiment loop then records none."""
        if type(self).penalty is Solver.penalty:
            return None
        return regularised_objective(self, X, y)

    def penalty(self) -> float:
        """Ω(f), the model's regulariser in the objective's normalisation (objectives.py)."""
        raise NotImplementedError(f"{type(self).__name__} does not define its penalty Ω(f)")

    def unlabeled_term(self):
        """(unlabeled loss name, weight w_U) of a semi-supervised model; None for a supervised one."""
        return None

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


class IterativeEstimator(Solver):
    """Mini-batch scheduling on top of the protocol: one iteration trains on `batch_size` rows
    (`_train_rows`), and each pass visits every row once, in a fresh random order. Subclasses
    define `_init_model`, `_train_rows` and `_decision`; `batch_size` is a parameter, or a class
    attribute where the algorithm fixes it (BSGD: one sample per SGD step)."""

    def begin(self, X, y, *, classes=None):
        super().begin(X, y, classes=classes)
        # The pass order has its own generator; _init_model draws from generators of its own, so
        # drawing the first order after it gives the same orders as drawing it before.
        self._rng = np.random.default_rng(self.random_state)
        self._order = self._rng.permutation(self._train_X.shape[0])
        self._position = 0
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


class BinaryClassifierMixin(ClassifierMixin):
    """Labels ↔ y ∈ {-1, +1} (classes_[1] is +1), as the margin losses need."""
    multiclass_hint = "For more classes use dsg/udsg/cdsg with loss=softmax, or pick two classes."

    def _set_classes(self, y, classes=None):
        kind = type_of_target(y)
        if kind not in ("binary", "multiclass"):
            raise SolverError(f"Unknown label type: classification needs discrete class labels; "
                              f"got targets of type {kind!r}")
        self.classes_ = np.unique(y) if classes is None else np.unique(np.asarray(classes))

    def _check_known_labels(self, y):
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise SolverError(f"labels {unknown[:10].tolist()} were not among the classes {self.classes_.tolist()}")

    def _encode_targets(self, y, fitting, classes=None):
        if fitting:
            self._set_classes(y, classes)
            if len(self.classes_) != 2:
                found = (f"only 1 class ({self.classes_[0]!r})" if len(self.classes_) == 1 else
                         f"{len(self.classes_)} classes ({self.classes_[:10].tolist()})")
                loss = f" with loss={self.loss_!r}" if getattr(self, "loss_", "") else ""
                raise SolverError(
                    f"Only binary classification is supported{loss}: {type(self).__name__} needs "
                    f"exactly 2 classes; got {found}. {self.multiclass_hint}")
        self._check_known_labels(y)
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


class PerClassDecisionMixin(BinaryClassifierMixin):
    """Any number (≥ 2) of classes, scikit-learn's decision_function layout: one column for two
    classes (predict its sign), one per class otherwise (predict by `_predict_multiclass`, the
    arg-max unless the solver decides otherwise). Subclasses encode the targets."""

    def _set_two_or_more_classes(self, y, classes, who: str):
        self._set_classes(y, classes)
        if len(self.classes_) < 2:
            raise SolverError(f"{who} needs at least 2 classes; got only 1 class ({self.classes_[0]!r})")

    def decision_function(self, X):
        F = self._raw_decision(X)
        return F.ravel() if F.shape[1] == 1 else F

    def predict(self, X):
        F = self._raw_decision(X)        # first: it raises NotFittedError before fit
        if F.shape[1] == 1:
            return self.classes_[(F.ravel() > 0).astype(int)]
        return self._predict_multiclass(X, F)

    def _predict_multiclass(self, X, F):
        return self.classes_[np.argmax(F, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True
        return tags


class SoftmaxClassifierMixin(BinaryClassifierMixin):
    """Binary labels ↔ ±1 for the margin losses; any number of classes ↔ one-hot rows for softmax
    (then f has one score per class and predict takes the arg-max). `loss_` (resolved in begin)
    says which."""
    multiclass_hint = "Use loss='softmax' or 'auto' (multi-class kernel logistic regression), or pick two classes."

    def _encode_targets(self, y, fitting, classes=None):
        if self.loss_ != "softmax":
            return super()._encode_targets(y, fitting, classes)
        if fitting:
            self._set_classes(y, classes)
            if len(self.classes_) < 2:
                raise SolverError(f"softmax needs at least 2 classes; got only {self.classes_.tolist()}")
        self._check_known_labels(y)
        return (np.asarray(y).reshape(-1, 1) == self.classes_.reshape(1, -1)).astype(np.float64)

    def decision_function(self, X):
        F = self._raw_decision(X)
        if self.loss_ != "softmax":
            return F.ravel()
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F     # scikit-learn's binary convention

    def predict(self, X):
        F = self._raw_decision(X)        # first: it raises NotFittedError before fit
        if self.loss_ != "softmax":
            return self.classes_[(F.ravel() > 0).astype(int)]
        return self.classes_[np.argmax(F, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.loss in ("softmax", "auto")
        return tags


class RegressionMixin(RegressorMixin):
    def _encode_targets(self, y, fitting, classes=None):
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise SolverError("regression targets contain NaN or inf")
        return y.reshape(-1, 1)

    def predict(self, X):
        return self._raw_decision(X).ravel()
