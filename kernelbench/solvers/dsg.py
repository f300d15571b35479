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

import numpy as np


from kernelbench.params import (BOOLEAN, C, DTYPE, GAMMA, KERNEL, POSITIVE, RANDOM_STATE,
                                THREADS, Choice, Integer, Real, declare, param)
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers import _dsg
from kernelbench.solvers.base import (DivergenceError, IterativeEstimator, RegressionMixin,
                                      SoftmaxClassifierMixin, as_dense, blas_threads, resolve_threads)
from kernelbench.solvers.defaults import AUTO_PASSES, auto_passes, first_step, sgd_schedule
from kernelbench.solvers.kernels import resolve_gamma
from kernelbench.solvers.losses import BINARY, MULTICLASS, REGRESSION, code, losses_for
from kernelbench.solvers.objectives import divergence_bound

# the compiled SGD step takes the convex losses (_losses.pxd's loss_derivative, softmax in _dsg.pyx)
CLASSIFICATION_LOSSES = losses_for(BINARY, MULTICLASS, convex=True)
REGRESSION_LOSSES = losses_for(REGRESSION, convex=True)
PARAMETERS = declare(
    loss=param("auto", "loss ℓ: hinge (SVM), logistic, smooth_hinge, squared (ridge; the only one for "
                       "regression), softmax (multi-class logistic, any number of classes); auto = hinge "
                       "for two classes, softmax for more, squared for regression",
               Choice("auto", *CLASSIFICATION_LOSSES)),
    kernel=KERNEL, gamma=GAMMA.but(default="scale"), C=C,
    batch_size=param(64, "mini-batch size B (points per iteration)", Integer(1, 10**7)),
    block_size=param(32, "random features F added per iteration", Integer(1, 10**6)),
    step=param("auto", "step-size scale θ in γ_t = θ/(t0 + t); auto = 1/λ = n·C (Bottou's γ_1/(1 + γ_1λt), "
                       "the O(1/t) schedule of a λ-strongly convex objective)", POSITIVE, Choice("auto")),
    t0=param("auto", "step-size offset t0 in γ_t = θ/(t0 + t); auto = θ/γ_1 with the first step γ_1 chosen "
                     "by a pilot: 50 iterations on ≤ 1000 training rows per γ_1 ∈ 4^-1..4^4, least "
                     "objective wins (Bottou 2012 §5.2)", Real(0), Choice("auto")),
    dtype=DTYPE,
    cache_features=param(True, "keep ω in memory (fast); False regenerates ω from seeds (O(#coef) memory)",
                         BOOLEAN),
    threads=THREADS,
    average=param(False, "Polyak–Ruppert averaging: predict with the mean of the iterates f_t after "
                         "`average_from` passes (pairs with large, slowly decaying steps)", BOOLEAN),
    average_from=param(1.0, "passes before the iterates start being averaged (with average: true)", Real(0)),
    passes=AUTO_PASSES,
    random_state=RANDOM_STATE)

REGRESSION_PARAMETERS = declare(PARAMETERS, loss=PARAMETERS["loss"].but(
    allowed=(Choice("auto", *REGRESSION_LOSSES),)))


class _DSGBase(IterativeEstimator):
    _mode = "dsg"           # which rule picks the block an iteration updates (_dsg.MODES)
    predict_parallelism = "internal"   # OpenMP on `threads`, chunked inside (base.py)
    _model_arrays = ("W", "b", "R", "block_weight", "A")   # what every iteration reads: ω, b (when cached), β
    determinism = ("identical results for the same seed and thread count; a different thread count "
                   "changes GEMM blocking, so coefficients may differ in the last bits (~1e-10)")

    def _feature_dtype(self):
        return np.float32 if self.dtype == "float32" else np.float64

    def _init_model(self, X):
        seed = int(np.random.default_rng(self.random_state).integers(2**63))
        self.gamma_ = resolve_gamma(self.gamma, X, kernel=self.kernel, seed=seed)
        self.lambda_ = 1.0 / (X.shape[0] * self.C)
        self.step_, self.t0_ = self._schedule(X, seed)
        self.passes_ = auto_passes(self.passes, X.shape[0], self.steps_per_pass)
        # iterates t > average_from·(steps per pass) are averaged; -1 switches averaging off
        average_from = math.ceil(self.average_from * self.steps_per_pass) if self.average else -1
        self.core_ = _dsg.DSGCore(
            n_dims=X.shape[1], n_outputs=self._train_Y.shape[1], block_size=int(self.block_size),
            kernel=self.kernel, gamma=self.gamma_, loss=code(self.loss_), lam=self.lambda_,
            step=self.step_, t0=self.t0_, seed=seed, dtype=self.dtype,
            cache_features=bool(self.cache_features), threads=resolve_threads(self.threads),
            f_bound=divergence_bound(self._train_Y),
            mode=_dsg.MODES[self._mode], average_from=average_from, **self._mode_kwargs(X, seed))

    def _mode_kwargs(self, X, seed) -> dict:
        """Extra DSGCore arguments of a variant (UDSG's G and U, CDSG's σ², M and θ'/θ)."""
        return {"grad_bound": 0.0 if self.loss_ == "squared" else 1.0}

    def _schedule(self, X, seed) -> tuple[float, float]:
        """(θ, t0) of γ_t = θ/(t0 + t): the given numbers, 'auto' resolved by defaults.py's rules
        (Bottou's schedule; its first step from a pilot on the training part)."""
        step = None if self.step == "auto" else float(self.step)
        if self.t0 != "auto":
            t0 = float(self.t0)
            if step is not None:
                return step, t0
            # θ = γ_1·t0 keeps the given t0 and starts at the pilot's γ_1
            gamma_1 = self._pilot_first_step(X, step=None, seed=seed)
            return gamma_1 * t0, t0
        return sgd_schedule(self.lambda_, self._pilot_first_step(X, step=step, seed=seed), step)

    def _pilot_first_step(self, X, *, step, seed) -> float:
        params = {**self.get_params(), "gamma": self.gamma_, "average": False, "loss": self.loss_,
                  "random_state": seed % 2**32}
        self.first_step_ = first_step(lambda **p: type(self)(**{**params, **p}), X, self._pilot_targets(),
                                      lam=self.lambda_, step=step, seed=seed % 2**32)
        return self.first_step_

    def _pilot_targets(self):
        """The training targets as fit() takes them (labels for a classifier)."""
        Y = self._train_Y
        if not self._is_classifier():
            return Y.ravel()
        if Y.shape[1] == 1:
            return np.where(Y[:, 0] > 0, self.classes_[1], self.classes_[0])
        return self.classes_[np.argmax(Y, axis=1)]

    def _train_rows(self, X, Y, rows):
        core = self.core_
        # BLAS stays single-threaded: the threads are OpenMP's, one GEMM per row chunk (_dsg.pyx)
        with blas_threads(1):
            status, steps = core.train(X, Y, np.ascontiguousarray(rows, dtype=np.int64), int(self.batch_size))
        if status == _dsg.DIVERGED:
            raise DivergenceError(
                f"DSG diverged at iteration {core.n_iter}: predictions or coefficients became NaN/inf "
                f"or exploded (|f| > {core.f_bound:.3g}). Use a smaller step (step={self.step_:g}) "
                f"or a larger t0 (t0={self.t0_:g}).")
        if status == _dsg.STEP_TOO_LARGE:
            raise DivergenceError(
                f"DSG step too large at iteration {core.n_iter + 1}: γ_t·λ ≥ 1 with γ_t = "
                f"{self.step_:g}/({self.t0_:g} + t) and λ = {self.lambda_:.3g}. Use a smaller step, a "
                "larger t0, or a larger C.")
        return steps

    def _decision(self, X):
        with blas_threads(1):
            return self.core_.predict(as_dense(X, self._feature_dtype()), average=bool(self.average))

    # ---- what the experiment loop records ----
    def record(self) -> dict:
        return {**super().record(), "n_features": self.n_random_features_}

    @property
    def n_random_features_(self) -> int:
        return self.core_.n_random_features

    def coef_norm_sq(self) -> float:
        """‖f‖² in block-normalised random-feature coordinates: with z_j = √(2/F) cos(ω_j·x + b_j)
        and f = Σ θ_j z_j, ‖θ‖² = (F/2) Σ β_j²; the shrink step of Alg. 1 is exactly its gradient."""
        return 0.5 * self.block_size * float(np.sum(self.core_.coef(average=bool(self.average)) ** 2))

    def penalty(self) -> float:
        """Ω(f) = λ/2 ‖f‖² of R(f) = mean loss + Ω (‖f‖² summed over the K scores for softmax)."""
        return 0.5 * self.lambda_ * self.coef_norm_sq()

    def counters(self) -> dict:
        """Iterations that updated an old block (UDSG / CDSG) and that added a new one."""
        core = self.core_
        return {"reused_iterations": int(core.n_reused), "new_blocks": int(core.n_blocks)}


class DSGClassifier(SoftmaxClassifierMixin, _DSGBase):
    """Kernel classifier trained by DSG: binary with a margin loss (labels any two values), or
    multi-class with loss='softmax'."""
    parameters = PARAMETERS
    auto_loss, auto_multiclass_loss = "hinge", "softmax"     # Dai et al.'s SVM; Li & Póczos §5


class DSGRegressor(RegressionMixin, _DSGBase):
    """Kernel ridge regression trained by DSG (squared loss)."""
    parameters = REGRESSION_PARAMETERS
    auto_loss = "squared"                                    # kernel ridge regression


register_algorithm(
    "dsg", classifier=DSGClassifier, regressor=DSGRegressor, tasks=("binary", "multiclass", "regression"),
    description="Doubly stochastic gradients with seeded random Fourier features (Dai et al. 2014, Alg. 1-2)",
    smoke_params={"batch_size": 32, "block_size": 16},
)
