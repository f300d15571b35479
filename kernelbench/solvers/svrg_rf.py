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
sample whose gradient was evaluated: the batches plus n per snapshot. `fit` makes DSG's number of
passes (`passes: None`, defaults.AUTO_PASSES: at least 2000 iterations, at most 50 passes): DSG's iterations at its defaults
(its snapshots add n samples each). The compiled loop is in _svrg_rf.pyx.
"""
from __future__ import annotations

import numpy as np

from kernelbench.errors import SolverError
from kernelbench.params import C, DTYPE, GAMMA, KERNEL, POSITIVE, RANDOM_STATE, Choice, Integer, declare, param
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers import _svrg_rf
from kernelbench.solvers.base import (MAX_DENSE_BYTES, BudgetExceededError, DivergenceError,
                                      IterativeEstimator, RegressionMixin, SoftmaxClassifierMixin,
                                      as_dense, blas_threads, not_offered)
from kernelbench.solvers.defaults import AUTO_PASSES, auto_passes
from kernelbench.solvers.kernels import resolve_gamma
from kernelbench.solvers.losses import BINARY, MULTICLASS, code, curvature, losses_for
from kernelbench.solvers.objectives import divergence_bound

# SVRG's step η = step/L needs a finite curvature: the smooth convex losses (losses.py)
SMOOTH_LOSSES = losses_for(BINARY, MULTICLASS, convex=True, smooth=True)
CHUNK = 4096                                                            # rows mapped at a time


PARAMETERS = declare(
    loss=param("auto", "smooth loss ℓ; softmax = multi-class logistic; auto = smooth_hinge for binary "
                       "(SVM), softmax for multi-class, squared for regression",
               Choice("auto", *SMOOTH_LOSSES)),
    kernel=KERNEL, gamma=GAMMA, C=C,
    batch_size=param(64, "mini-batch size B", Integer(1, 10**7)),
    block_size=param(32, "F: the DSG feature block this is compared with (sets the ‖f‖² normalisation)",
                     Integer(1, 10**6)),
    n_blocks=param(4, "number of fixed feature blocks: n_blocks·F features (Li & Póczos: 4)", Integer(1, 10**4)),
    step=param(1.0, "η = step / L (L: the largest per-sample smoothness)", POSITIVE),
    epoch_length=param(0, "iterations between snapshots (full gradients); 0 = one pass ⌈n/B⌉", Integer(0)),
    dtype=DTYPE.but(doc="precision of the stored feature matrix Z (n × D)"),
    passes=AUTO_PASSES, random_state=RANDOM_STATE)

REGRESSION_PARAMETERS = declare(PARAMETERS, loss=PARAMETERS["loss"].but(allowed=(Choice("auto", "squared"),)))


class _SVRGRFBase(IterativeEstimator):
    _training_only = ("_Z",)
    determinism = "identical results for the same seed (single-threaded)"
    predict_parallelism = "rows"       # GIL released, no shared scratch (base.py)

    def _check_params(self):
        try:
            super()._check_params()
        except SolverError as e:
            if self.loss == "hinge":
                raise SolverError(f"{e} (SVRG needs a smooth loss: use smooth_hinge for an SVM)") from None
            raise

    def _feature_dtype(self):
        return np.float32 if self.dtype == "float32" else np.float64

    def _init_model(self, X):
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
        self.gamma_ = resolve_gamma(self.gamma, X, kernel=self.kernel, seed=self.seed_)
        self.lambda_ = 1.0 / (n * self.C)
        self.passes_ = auto_passes(self.passes, n, self.steps_per_pass)
        self.W_, self.b_ = _svrg_rf.features(self.seed_, int(self.block_size), int(self.n_blocks), d,
                                             self.kernel, self.gamma_)
        self._Z = self._map(self._dense_train_X())
        self.reg_ = self.lambda_ * 0.5 * self.block_size           # ∇ of (λ/2)(F/2)‖β‖²
        smoothness = curvature(self.loss_) * float(np.max(np.einsum("ij,ij->i", self._Z, self._Z,
                                                                     dtype=np.float64))) + self.reg_
        self.eta_ = float(self.step) / smoothness
        self.core_ = _svrg_rf.SVRGCore(
            n_samples=n, n_features=D, n_outputs=self._train_Y.shape[1],
            loss=code(self.loss_), reg=self.reg_, eta=self.eta_, f_bound=divergence_bound(self._train_Y))

    def _map(self, X):
        """Z = cos(X Ωᵀ + b) in the feature dtype, in row chunks (the one-off pre-generation)."""
        dtype = self._feature_dtype()
        W, b = self.W_.astype(dtype), self.b_.astype(dtype)
        Z = np.empty((X.shape[0], W.shape[0]), dtype=dtype)
        with blas_threads(1):
            for r0 in range(0, X.shape[0], CHUNK):
                block = Z[r0:r0 + CHUNK]
                np.matmul(X[r0:r0 + CHUNK], W.T, out=block)
                block += b
                np.cos(block, out=block)
        return Z

    partial_fit = not_offered("SVRG's snapshots are full gradients over one fixed training set (use fit)")

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

    def working_set(self) -> list:
        """What every step reads: the feature matrix Z (not X: it is read once, to build Z), the
        targets and pass order, β, the snapshot's mean gradient μ and per-sample gradients."""
        core = self.core_
        state = (self._Z, self._train_Y, self._order, core.beta, core.mu, core.gsnap)
        return [a for a in state if isinstance(a, np.ndarray)]

    def record(self) -> dict:
        return {**super().record(), "n_features": self.n_random_features_}

    @property
    def n_random_features_(self) -> int:
        return int(self.block_size) * int(self.n_blocks)

    def coef_norm_sq(self) -> float:
        """‖f‖² in DSG's block normalisation (F/2)‖β‖² (dsg.py coef_norm_sq)."""
        return 0.5 * self.block_size * float(np.sum(self.core_.beta ** 2))

    def penalty(self) -> float:
        """Ω(f) = λ/2 ‖f‖²: with the mean loss, DSG's objective (dsg.py), the same axis."""
        return 0.5 * self.lambda_ * self.coef_norm_sq()


class SVRGRFClassifier(SoftmaxClassifierMixin, _SVRGRFBase):
    """Classifier by SVRG on fixed random features: binary (smooth_hinge, logistic, squared) or
    multi-class (softmax)."""
    parameters = PARAMETERS
    auto_loss, auto_multiclass_loss = "smooth_hinge", "softmax"    # SVRG needs a smooth loss: the smoothed SVM


class SVRGRFRegressor(RegressionMixin, _SVRGRFBase):
    """Ridge regression on fixed random features, by SVRG."""
    parameters = REGRESSION_PARAMETERS
    auto_loss = "squared"


register_algorithm(
    "svrg-rf", classifier=SVRGRFClassifier, regressor=SVRGRFRegressor,
    tasks=("binary", "multiclass", "regression"),
    description="SVRG on a fixed set of n_blocks·F random Fourier features (DSG's), the competitor "
                "of Li & Póczos 2016 §5.1 (Johnson & Zhang 2013)",
    smoke_params={"batch_size": 16, "block_size": 8},
)
