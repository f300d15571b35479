"""DSG: doubly stochastic functional gradients (Dai et al., NIPS 2014, Algorithms 1–2).

Each iteration draws a mini-batch of `batch_size` points and a block of `block_size` new random
Fourier features (regenerated from (seed, block), so the model stores only coefficients), takes
the step γ_t = step / (t0 + t) on the regularised risk

    R(f) = (1/n) Σ ℓ(f(x_i), y_i) + (λ/2) ‖f‖²,    λ = 1 / (n · C),

and shrinks every older coefficient by (1 − γ_t λ). The compiled loop is in _dsg.pyx.

Losses: hinge / logistic / smooth_hinge / squared for binary labels, squared for regression
(kernel ridge regression), and softmax — multi-class kernel logistic regression over K scores
f_1..f_K, ℓ(f, y) = log Σ_k e^{f_k} − f_y (Li & Póczos §5) — for any number of classes.
UDSG and CDSG (Li & Póczos Alg. 3–4) are subclasses in cdsg.py; they share this core.

`average: true` predicts with the Polyak–Ruppert mean of the iterates f_t after `average_from`
passes (Polyak & Juditsky 1992; with large constant-like steps, Bach & Moulines 2013): the iterate
itself is unchanged, the core keeps Σ_t β^(t) alongside (O(#coefficients) per iteration).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from threadpoolctl import threadpool_limits

from sklearn.utils.multiclass import type_of_target

from kernelbench.errors import SolverError
from kernelbench.registry import param_field as doc
from kernelbench.registry import register_algorithm
from kernelbench.solvers import _dsg
from kernelbench.solvers._losses import LOSSES, loss_values
from kernelbench.solvers.base import (BinaryClassifierMixin, DivergenceError, IterativeEstimator,
                                      RegressionMixin, as_dense, resolve_threads)
from kernelbench.solvers.kernels import KERNELS, resolve_gamma

CLASSIFICATION_LOSSES = ("hinge", "logistic", "smooth_hinge", "squared", "softmax")
BINARY_LOSSES = ("hinge", "logistic", "smooth_hinge", "squared")
REGRESSION_LOSSES = ("squared",)
DIVERGENCE_FACTOR = 1e8   # |f(x)| > 1e8 · max(1, max|y|) counts as divergence (an exploding iterate)


@dataclass
class DSGParams:
    """Parameters of DSG as configs name them (DESIGN.md §3)."""
    loss: Literal["auto", "hinge", "logistic", "smooth_hinge", "squared", "softmax"] = doc(
        "loss ℓ: hinge (SVM), logistic, smooth_hinge, squared (ridge; the only one for regression), "
        "softmax (multi-class logistic, any number of classes); auto = hinge for binary, softmax "
        "for multi-class, squared for regression", "auto")
    kernel: Literal["rbf", "laplacian"] = doc("rbf exp(-γ‖x−x'‖²) or laplacian exp(-γ‖x−x'‖₁)", "rbf")
    gamma: float | str = doc("kernel width γ, or 'median' for the median trick", "median")
    C: float = doc("regularisation: λ = 1/(n·C)", 1.0)
    batch_size: int = doc("mini-batch size B (points per iteration)", 64)
    block_size: int = doc("random features F added per iteration", 32)
    step: float | None = doc("step-size scale θ in γ_t = θ/(t0 + t); None = auto: 10·t0 for margin "
                             "losses (γ_1 ≈ 10), 1·t0 for squared (its curvature 1 needs γ ≲ 1)", None)
    t0: float = doc("step-size offset t0 in γ_t = θ/(t0 + t)", 100.0)
    dtype: Literal["float32", "float64"] = doc("precision of features and phases (coefficients are float64)", "float32")
    cache_features: bool = doc("keep ω in memory (fast); False regenerates ω from seeds (O(#coef) memory)", True)
    threads: int = doc("OpenMP threads (set it to the number of idle cores; 0 = all cores)", 1)
    average: bool = doc("Polyak–Ruppert averaging: predict with the mean of the iterates f_t after "
                        "`average_from` passes (pairs with large, slowly decaying steps)", False)
    average_from: float = doc("passes before the iterates start being averaged (with average: true)", 1.0)

    def __post_init__(self):
        """Range checks the config layer reports as errors of algorithm.params (before any work)."""
        if not (np.isfinite(self.average_from) and self.average_from >= 0):
            raise ValueError(f"average_from must be a number of passes >= 0, got {self.average_from!r}")
        if self.t0 < 0:
            raise ValueError(f"t0 must be >= 0, got {self.t0!r}")
        if self.step is not None and not self.step > 0:
            raise ValueError(f"step must be > 0 (or null for auto), got {self.step!r}")
        for name, limit in (("batch_size", 10**7), ("block_size", 10**6)):
            value = getattr(self, name)
            if not 1 <= value <= limit:
                raise ValueError(f"{name} must be between 1 and {limit:,}, got {value!r}")


def estimator_kwargs(params, task: str) -> dict:
    """Estimator keyword arguments from a params dataclass (shared with cdsg.py): loss 'auto'
    becomes each estimator's default, softmax for a multi-class task."""
    kwargs = asdict(params)
    if kwargs["loss"] == "auto":
        del kwargs["loss"]      # each estimator's own default
        if task == "multiclass":
            kwargs["loss"] = "softmax"
    return kwargs


def _make_dsg(params: DSGParams, *, seed: int, task: str):
    kwargs = estimator_kwargs(params, task)
    if task == "regression":
        return DSGRegressor(**kwargs, random_state=seed)
    return DSGClassifier(**kwargs, random_state=seed)


register_algorithm(
    "dsg", factory=_make_dsg, tasks=("binary", "multiclass", "regression"),
    description="Doubly stochastic gradients with seeded random Fourier features (Dai et al. 2014, Alg. 1-2)",
    smoke_params={"batch_size": 32, "block_size": 16},
)(DSGParams)


class _DSGBase(IterativeEstimator):
    _losses: tuple[str, ...] = ()
    _mode = "dsg"           # which rule picks the block an iteration updates (_dsg.MODES)
    predict_parallelism = "internal"   # OpenMP on `threads`, chunked inside (base.py)
    determinism = ("identical results for the same seed and thread count; a different thread count "
                   "changes GEMM blocking, so coefficients may differ in the last bits (~1e-10)")

    def __init__(self, *, loss="hinge", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 block_size=32, step=None, t0=100.0, dtype="float32", cache_features=True,
                 threads=1, passes=1.0, random_state=None, average=False, average_from=1.0):
        self.loss = loss
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.batch_size = batch_size
        self.block_size = block_size
        self.step = step
        self.t0 = t0
        self.dtype = dtype
        self.cache_features = cache_features
        self.threads = threads
        self.passes = passes
        self.random_state = random_state
        self.average = average
        self.average_from = average_from

    def _feature_dtype(self):
        return np.float32 if self.dtype == "float32" else np.float64

    def _init_model(self, X):
        if self.loss not in self._losses:
            raise SolverError(f"{type(self).__name__}: loss must be one of {self._losses}, got {self.loss!r}")
        if self.kernel not in KERNELS:
            raise SolverError(f"kernel must be one of {KERNELS}, got {self.kernel!r}")
        if self.dtype not in ("float32", "float64"):
            raise SolverError(f"dtype must be 'float32' or 'float64', got {self.dtype!r}")
        if not (isinstance(self.block_size, (int, np.integer)) and self.block_size >= 1):
            raise SolverError(f"block_size must be a positive integer, got {self.block_size!r}")
        if not (np.isfinite(self.t0) and self.t0 >= 0):
            raise SolverError(f"t0 must be >= 0, got {self.t0!r}")
        self.step_ = self._auto_step() if self.step is None else float(self.step)
        if not (np.isfinite(self.step_) and self.step_ > 0):
            raise SolverError(f"step must be a positive number or None (auto), got {self.step!r}")
        seed = int(np.random.default_rng(self.random_state).integers(2**63))
        try:
            self.gamma_ = resolve_gamma(self.gamma, X, kernel=self.kernel, seed=seed)
        except ValueError as e:
            raise SolverError(str(e)) from None
        self.lambda_ = 1.0 / (X.shape[0] * self.C)
        if not isinstance(self.average, (bool, np.bool_)):
            raise SolverError(f"average must be true or false, got {self.average!r}")
        if not (isinstance(self.average_from, (int, float, np.integer, np.floating))
                and np.isfinite(self.average_from) and self.average_from >= 0):
            raise SolverError(f"average_from must be a number of passes >= 0, got {self.average_from!r}")
        # iterates t > average_from·(steps per pass) are averaged; -1 switches averaging off
        average_from = math.ceil(self.average_from * self.steps_per_pass) if self.average else -1
        self.core_ = _dsg.DSGCore(
            n_dims=X.shape[1], n_outputs=self._train_Y.shape[1], block_size=int(self.block_size),
            kernel=self.kernel, gamma=self.gamma_, loss=self._loss_code(), lam=self.lambda_,
            step=self.step_, t0=float(self.t0), seed=seed, dtype=self.dtype,
            cache_features=bool(self.cache_features), threads=resolve_threads(self.threads),
            f_bound=DIVERGENCE_FACTOR * max(1.0, float(np.max(np.abs(self._train_Y)))),
            mode=_dsg.MODES[self._mode], average_from=average_from, **self._mode_kwargs(X, seed))

    def _loss_code(self):
        return _dsg.SOFTMAX if self.loss == "softmax" else LOSSES[self.loss]

    def _mode_kwargs(self, X, seed) -> dict:
        """Extra DSGCore arguments of a variant (UDSG's G and U, CDSG's σ², M and θ'/θ)."""
        return {"grad_bound": 0.0 if self.loss == "squared" else 1.0}

    def _auto_step(self):
        return float(self.t0 or 1.0) * (1.0 if self.loss == "squared" else 10.0)

    def _train_rows(self, X, Y, rows):
        core = self.core_
        # BLAS stays single-threaded: the threads are OpenMP's, one GEMM per row chunk (_dsg.pyx)
        with threadpool_limits(limits=1, user_api="blas"):
            status, steps = core.train(X, Y, np.ascontiguousarray(rows, dtype=np.int64), int(self.batch_size))
        if status == _dsg.DIVERGED:
            raise DivergenceError(
                f"DSG diverged at iteration {core.n_iter}: predictions or coefficients became NaN/inf "
                f"or exploded (|f| > {core.f_bound:.3g}). Use a smaller step (step={self.step_:g}) "
                f"or a larger t0 (t0={self.t0:g}).")
        if status == _dsg.STEP_TOO_LARGE:
            raise DivergenceError(
                f"DSG step too large at iteration {core.n_iter + 1}: γ_t·λ ≥ 1 with γ_t = "
                f"{self.step_:g}/({self.t0:g} + t) and λ = {self.lambda_:.3g}. Use a smaller step, a "
                "larger t0, or a larger C.")
        return steps

    def _decision(self, X):
        with threadpool_limits(limits=1, user_api="blas"):
            return self.core_.predict(as_dense(X, self._feature_dtype()), average=bool(self.average))

    # ---- what the runner records ----
    @property
    def n_random_features_(self) -> int:
        return self.core_.n_random_features

    def coef_norm_sq(self) -> float:
        """‖f‖² in block-normalised random-feature coordinates: with z_j = √(2/F) cos(ω_j·x + b_j)
        and f = Σ θ_j z_j, ‖θ‖² = (F/2) Σ β_j²; the shrink step of Alg. 1 is exactly its gradient."""
        return 0.5 * self.block_size * float(np.sum(self.core_.coef(average=bool(self.average)) ** 2))

    def objective(self, X, y):
        """R(f) = mean loss + λ/2 ‖f‖² on (X, y) (‖f‖² summed over the K scores for softmax)."""
        Y = self._encode_targets(np.asarray(y), fitting=False)
        F = self._decision(X)
        if self.loss == "softmax":
            losses = softmax_loss_values(F, Y)
        else:
            losses = loss_values(self.loss, F.ravel(), Y.ravel())
        return float(np.mean(losses) + 0.5 * self.lambda_ * self.coef_norm_sq())

    def counters(self) -> dict:
        """Iterations that updated an old block (UDSG / CDSG) and that added a new one."""
        core = self.core_
        return {"reused_iterations": int(core.n_reused), "new_blocks": int(core.n_blocks)}


def softmax_loss_values(F, Y):
    """ℓ(f, y) = log Σ_k e^{f_k} − y·f per row (Y one-hot), computed stably."""
    F = np.asarray(F, dtype=np.float64)
    top = F.max(axis=1, keepdims=True)
    return (top[:, 0] + np.log(np.exp(F - top).sum(axis=1))) - np.sum(Y * F, axis=1)


class _ClassifierMixin(BinaryClassifierMixin):
    """Binary labels ↔ ±1 for the margin losses; any number of classes ↔ one-hot rows for softmax
    (then f has one score per class and predict takes the arg-max)."""

    def _encode_targets(self, y, fitting, classes=None):
        if self.loss != "softmax":
            if fitting:
                labels = np.unique(y) if classes is None else np.unique(np.asarray(classes))
                if len(labels) > 2 and type_of_target(y) in ("binary", "multiclass"):
                    raise SolverError(
                        f"Only binary classification is supported with loss={self.loss!r}: "
                        f"{type(self).__name__} needs exactly 2 classes for it; got {len(labels)} "
                        f"classes ({labels[:10].tolist()}). Use loss='softmax' (multi-class kernel "
                        "logistic regression) or pick two classes.")
            return super()._encode_targets(y, fitting, classes)
        if fitting:
            kind = type_of_target(y)
            if kind not in ("binary", "multiclass"):
                raise SolverError(f"Unknown label type: classification needs discrete class labels; "
                                  f"got targets of type {kind!r}")
            self.classes_ = np.unique(y) if classes is None else np.unique(np.asarray(classes))
            if len(self.classes_) < 2:
                raise SolverError(f"softmax needs at least 2 classes; got only {self.classes_.tolist()}")
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise SolverError(f"labels {unknown[:10].tolist()} were not among the classes {self.classes_.tolist()}")
        return (np.asarray(y).reshape(-1, 1) == self.classes_.reshape(1, -1)).astype(np.float64)

    def decision_function(self, X):
        F = self._raw_decision(X)
        if self.loss != "softmax":
            return F.ravel()
        return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F     # scikit-learn's binary convention

    def predict(self, X):
        if self.loss != "softmax":
            return super().predict(X)
        return self.classes_[np.argmax(self._raw_decision(X), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = self.loss == "softmax"
        return tags


class DSGClassifier(_ClassifierMixin, _DSGBase):
    """Kernel classifier trained by DSG: binary with a margin loss (labels any two values), or
    multi-class with loss='softmax'."""
    _losses = CLASSIFICATION_LOSSES

    def _init_model(self, X):
        if self.loss in BINARY_LOSSES and self._train_Y.shape[1] != 1:   # cannot happen: encoder checks
            raise SolverError("margin losses are binary; use loss='softmax' for multi-class")
        super()._init_model(X)


class DSGRegressor(RegressionMixin, _DSGBase):
    """Kernel ridge regression trained by DSG (squared loss)."""
    _losses = REGRESSION_LOSSES

    def __init__(self, *, loss="squared", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 block_size=32, step=None, t0=100.0, dtype="float32", cache_features=True,
                 threads=1, passes=1.0, random_state=None, average=False, average_from=1.0):
        super().__init__(loss=loss, kernel=kernel, gamma=gamma, C=C, batch_size=batch_size,
                         block_size=block_size, step=step, t0=t0, dtype=dtype,
                         cache_features=cache_features, threads=threads, passes=passes,
                         random_state=random_state, average=average, average_from=average_from)
