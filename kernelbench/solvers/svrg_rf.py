"""SVRG-RF: SVRG (Johnson & Zhang 2013) on a fixed set of n_blocks·F random Fourier features — the
competitor of DSG/UDSG/CDSG in Li & Póczos 2016, §5.1 ("for non-DSG-based algorithms, which
pre-generate random features for the data points, we set the number of random features as 4F",
F = the DSG feature block of Table 2).

The features are DSG's first `n_blocks` blocks (same seed derivation from random_state, same
generator), and the objective is DSG's, in the same normalisation:

    R(f) = (1/n) Σ ℓ(f(x_i), y_i) + (λ/2)‖f‖²,   ‖f‖² = (F/2)‖β‖²,   λ = 1/(n·C),

with f(x) = Σ_j β_j cos(ω_j·x + b_j) — so DSG's and SVRG-RF's objectives share one axis (Li &
Póczos Fig. 1). SVRG needs a smooth loss: logistic, smooth_hinge (in place of hinge), squared, or
softmax (multi-class logistic, one score per class, ‖f‖² summed over the scores — as DSG's).
Step η = step / L, L = max ℓ'' · max_i ‖z_i‖² + λF/2 (the largest per-sample smoothness).

One iteration = one mini-batch step; a snapshot (full gradient over the n training points) is
taken every `epoch_length` iterations (default: one pass, ⌈n/B⌉). samples_seen counts every
sample whose gradient was evaluated: the batches plus n per snapshot.
The compiled loop is in _svrg_rf.pyx.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from kernelbench.errors import SolverError
from kernelbench.registry import param_field as doc
from kernelbench.registry import register_algorithm
from kernelbench.solvers import _svrg_rf
from kernelbench.solvers._losses import LOSSES, loss_values
from kernelbench.solvers.base import (MAX_DENSE_BYTES, BudgetExceededError, DivergenceError,
                                      IterativeEstimator, RegressionMixin, as_dense)
from kernelbench.solvers.dsg import _ClassifierMixin, softmax_loss_values
from kernelbench.solvers.kernels import KERNELS, resolve_gamma

SMOOTH_LOSSES = ("logistic", "smooth_hinge", "squared", "softmax")
CURVATURE = {"logistic": 0.25, "smooth_hinge": 1.0, "squared": 1.0, "softmax": 0.5}   # max ℓ'' (softmax: ‖∇²‖ ≤ 1/2)''
DIVERGENCE_FACTOR = 1e8
CHUNK = 4096                                                            # rows mapped at a time


@dataclass
class SVRGRFParams:
    loss: Literal["auto", "logistic", "smooth_hinge", "squared", "softmax"] = doc(
        "smooth loss ℓ; softmax = multi-class logistic; auto = smooth_hinge for binary (SVM), softmax "
        "for multi-class, squared for regression", "auto")
    kernel: Literal["rbf", "laplacian"] = doc("rbf exp(-γ‖x−x'‖²) or laplacian exp(-γ‖x−x'‖₁)", "rbf")
    gamma: float | str = doc("kernel width γ, or 'median' for the median trick", "median")
    C: float = doc("regularisation: λ = 1/(n·C)", 1.0)
    batch_size: int = doc("mini-batch size B", 64)
    block_size: int = doc("F: the DSG feature block this is compared with (sets the ‖f‖² normalisation)", 32)
    n_blocks: int = doc("number of fixed feature blocks: n_blocks·F features (Li & Póczos: 4)", 4)
    step: float = doc("η = step / L (L: the largest per-sample smoothness)", 1.0)
    epoch_length: int = doc("iterations between snapshots (full gradients); 0 = one pass ⌈n/B⌉", 0)
    dtype: Literal["float32", "float64"] = doc("precision of the stored feature matrix Z (n × D)", "float32")

    def __post_init__(self):
        for name, limit in (("batch_size", 10**7), ("block_size", 10**6), ("n_blocks", 10**4)):
            value = getattr(self, name)
            if not 1 <= value <= limit:
                raise ValueError(f"{name} must be between 1 and {limit:,}, got {value!r}")
        if not self.step > 0:
            raise ValueError(f"step must be > 0, got {self.step!r}")
        if self.epoch_length < 0:
            raise ValueError(f"epoch_length must be >= 0 (0 = one pass), got {self.epoch_length!r}")


def _make_svrg(params: SVRGRFParams, *, seed: int, task: str):
    kwargs = asdict(params)
    if kwargs["loss"] == "auto":
        del kwargs["loss"]
        if task == "multiclass":
            kwargs["loss"] = "softmax"
    cls = SVRGRFRegressor if task == "regression" else SVRGRFClassifier
    return cls(**kwargs, random_state=seed)


register_algorithm(
    "svrg-rf", factory=_make_svrg, tasks=("binary", "multiclass", "regression"),
    description="SVRG on a fixed set of n_blocks·F random Fourier features (DSG's), the competitor "
                "of Li & Póczos 2016 §5.1 (Johnson & Zhang 2013)",
    smoke_params={"batch_size": 16, "block_size": 8},
)(SVRGRFParams)


class _SVRGRFBase(IterativeEstimator):
    _losses: tuple[str, ...] = ()
    _training_only = ("_Z",)
    determinism = "identical results for the same seed (single-threaded)"
    predict_parallelism = "rows"       # GIL released, no shared scratch (base.py)

    def __init__(self, *, loss="smooth_hinge", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 block_size=32, n_blocks=4, step=1.0, epoch_length=0, dtype="float32", passes=1.0,
                 random_state=None):
        self.loss = loss
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.batch_size = batch_size
        self.block_size = block_size
        self.n_blocks = n_blocks
        self.step = step
        self.epoch_length = epoch_length
        self.dtype = dtype
        self.passes = passes
        self.random_state = random_state

    def _feature_dtype(self):
        return np.float32 if self.dtype == "float32" else np.float64

    def _init_model(self, X):
        if self.loss not in self._losses:
            hint = " (SVRG needs a smooth loss: use smooth_hinge for an SVM)" if self.loss == "hinge" else ""
            raise SolverError(f"{type(self).__name__}: loss must be one of {self._losses}, got {self.loss!r}{hint}")
        if self.kernel not in KERNELS:
            raise SolverError(f"kernel must be one of {KERNELS}, got {self.kernel!r}")
        if self.dtype not in ("float32", "float64"):
            raise SolverError(f"dtype must be 'float32' or 'float64', got {self.dtype!r}")
        for name in ("block_size", "n_blocks"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and value >= 1):
                raise SolverError(f"{name} must be a positive integer, got {value!r}")
        if not (isinstance(self.epoch_length, (int, np.integer)) and self.epoch_length >= 0):
            raise SolverError(f"epoch_length must be an integer >= 0 (0 = one pass), got {self.epoch_length!r}")
        if not (np.isfinite(self.step) and self.step > 0):
            raise SolverError(f"step must be a positive number, got {self.step!r}")
        n, d = X.shape
        D = int(self.block_size) * int(self.n_blocks)
        nbytes = n * D * np.dtype(self._feature_dtype()).itemsize
        if nbytes > MAX_DENSE_BYTES:
            raise BudgetExceededError(
                f"SVRG-RF stores the n × D feature matrix: {n:,} × {D:,} would need "
                f"{nbytes / 2**30:.1f} GiB; use fewer features (block_size, n_blocks), dtype float32, "
                "or subsample the data")
        # DSG's seed and bandwidth convention (dsg.py _init_model): same random_state → same features
        self.seed_ = int(np.random.default_rng(self.random_state).integers(2**63))
        try:
            self.gamma_ = resolve_gamma(self.gamma, X, kernel=self.kernel, seed=self.seed_)
        except ValueError as e:
            raise SolverError(str(e)) from None
        self.lambda_ = 1.0 / (n * self.C)
        self.W_, self.b_ = _svrg_rf.features(self.seed_, int(self.block_size), int(self.n_blocks), d,
                                             self.kernel, self.gamma_)
        self._Z = self._map(self._dense_train_X())
        self.reg_ = self.lambda_ * 0.5 * self.block_size           # ∇ of (λ/2)(F/2)‖β‖²
        smoothness = CURVATURE[self.loss] * float(np.max(np.einsum("ij,ij->i", self._Z, self._Z,
                                                                     dtype=np.float64))) + self.reg_
        self.eta_ = float(self.step) / smoothness
        self.core_ = _svrg_rf.SVRGCore(
            n_samples=n, n_features=D, n_outputs=self._train_Y.shape[1],
            loss=_svrg_rf.SOFTMAX if self.loss == "softmax" else LOSSES[self.loss], reg=self.reg_, eta=self.eta_,
            f_bound=DIVERGENCE_FACTOR * max(1.0, float(np.max(np.abs(self._train_Y)))))

    def _map(self, X):
        """Z = cos(X Ωᵀ + b) in the feature dtype, in row chunks (the one-off pre-generation)."""
        dtype = self._feature_dtype()
        W, b = self.W_.astype(dtype), self.b_.astype(dtype)
        Z = np.empty((X.shape[0], W.shape[0]), dtype=dtype)
        with threadpool_limits(limits=1, user_api="blas"):
            for r0 in range(0, X.shape[0], CHUNK):
                block = Z[r0:r0 + CHUNK]
                np.matmul(X[r0:r0 + CHUNK], W.T, out=block)
                block += b
                np.cos(block, out=block)
        return Z

    @available_if(lambda est: False)
    def partial_fit(self, X, y, classes=None):
        """Not offered: SVRG's snapshots are full gradients over one fixed training set (use fit)."""

    def _epoch_length(self):
        return int(self.epoch_length) or self.steps_per_pass

    def _train_rows(self, X, Y, rows):
        status, steps, snaps = self.core_.train(self._Z, np.ascontiguousarray(Y, dtype=np.float64),
                                                np.ascontiguousarray(rows, dtype=np.int64),
                                                int(self.batch_size), self._epoch_length())
        self.samples_seen_ += snaps * self._Z.shape[0]      # a snapshot evaluates every sample
        if status == _svrg_rf.DIVERGED:
            raise DivergenceError(f"SVRG-RF diverged at iteration {self.core_.n_iter}: use a smaller step "
                                  f"(step={self.step:g}, η = {self.eta_:.3g})")
        return steps

    def _decision(self, X):
        return self._map(as_dense(X, self._feature_dtype())) @ self.core_.beta.T

    @property
    def coef_(self):
        """β: f(x) = Σ_j β_j cos(ω_j·x + b_j) (ω, b = W_, b_ — DSG's first n_blocks blocks);
        shape (D,) for one output, (K, D) for softmax's K scores."""
        beta = self.core_.beta
        return beta[0] if beta.shape[0] == 1 else beta

    @property
    def n_random_features_(self) -> int:
        return int(self.block_size) * int(self.n_blocks)

    def coef_norm_sq(self) -> float:
        """‖f‖² in DSG's block normalisation (F/2)‖β‖² (dsg.py coef_norm_sq)."""
        return 0.5 * self.block_size * float(np.sum(self.core_.beta ** 2))

    def objective(self, X, y):
        """R(f) = mean loss + λ/2 ‖f‖² on (X, y): DSG's objective (dsg.py), the same axis."""
        Y = self._encode_targets(np.asarray(y), fitting=False)
        F = self._decision(X)
        if self.loss == "softmax":
            losses = softmax_loss_values(F, Y)
        else:
            losses = loss_values(self.loss, F.ravel(), Y.ravel())
        return float(np.mean(losses) + 0.5 * self.lambda_ * self.coef_norm_sq())


class SVRGRFClassifier(_ClassifierMixin, _SVRGRFBase):
    """Classifier by SVRG on fixed random features: binary (smooth_hinge, logistic, squared) or
    multi-class (softmax)."""

    def predict(self, X):
        check_is_fitted(self, "n_iter_")      # NotFittedError before classes_ is touched
        return super().predict(X)
    _losses = SMOOTH_LOSSES


class SVRGRFRegressor(RegressionMixin, _SVRGRFBase):
    """Ridge regression on fixed random features, by SVRG."""
    _losses = ("squared",)

    def __init__(self, *, loss="squared", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 block_size=32, n_blocks=4, step=1.0, epoch_length=0, dtype="float32", passes=1.0,
                 random_state=None):
        super().__init__(loss=loss, kernel=kernel, gamma=gamma, C=C, batch_size=batch_size,
                         block_size=block_size, n_blocks=n_blocks, step=step,
                         epoch_length=epoch_length, dtype=dtype, passes=passes,
                         random_state=random_state)
