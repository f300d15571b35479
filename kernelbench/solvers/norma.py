"""NORMA: kernel SGD with shrinkage and truncation (Kivinen, Smola & Williamson 2004) — a baseline
of Dai et al. 2014 (§6 (i), Fig. 1 (1)–(3)).

    f_{t+1} = (1 − γ_t λ) f_t − γ_t/b Σ_{i∈batch} ℓ'(f_t(x_i), y_i) k(x_i, ·),   γ_t = θ/(t0 + t)

on R(f) = (1/n) Σ ℓ(f(x_i), y_i) + (λ/2)‖f‖²_H, λ = 1/(n·C) — DSG's objective and step schedule
with the exact kernel in place of DSG's random features (the paper's comparison). `budget` = τ
keeps only the last τ terms (NORMA's truncation); 0 keeps all, and then one pass costs
O(n · #SV · d): refused beyond `max_samples` (BudgetExceededError: the experiment loop writes a "skipped"
row). `fit` makes DSG's number of passes (`passes: None`, defaults.AUTO_PASSES: at least 2000 iterations,
at most 50 passes), so that both see the same samples; at the defaults that is 3 passes at
max_samples, 50 on a few hundred rows. The compiled loop is in _kernel_sgd.pyx.
"""
from __future__ import annotations

import numpy as np

from kernelbench.params import (C, GAMMA, NONE, POSITIVE, RANDOM_STATE, RBF_ONLY, Choice, Integer, Real,
                                declare, param)
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers import _kernel_sgd
from kernelbench.solvers.base import (BinaryClassifierMixin, BudgetExceededError, DivergenceError,
                                      IterativeEstimator, RegressionMixin, as_dense, blas_threads)
from kernelbench.solvers.defaults import AUTO_PASSES, auto_passes
from kernelbench.solvers.kernels import kernel_matrix, resolve_gamma
from kernelbench.solvers.losses import BINARY, code, losses_for
from kernelbench.solvers.objectives import divergence_bound

# O(n²) methods: one pass over 60k points with ~half of them support vectors is ~1e9 kernel values
# × d, about the most one benchmark run can afford. Beyond this the experiment loop writes a clean "skipped" row.
MAX_SAMPLES = 60_000
# shared by NORMA and k-SDCA (KernelExpansionBase checks it in _check_common)
SAMPLE_LIMIT = param(MAX_SAMPLES, "refuse (skip) training sets larger than this: O(n²) time", Integer(1))


class KernelExpansionBase(IterativeEstimator):
    """What NORMA and k-SDCA share: exact RBF kernel, float64 dense data with row norms, the
    O(n²) size limit, prediction from the support-vector expansion."""
    _training_only = ("_xnorm",)
    determinism = "identical results for the same seed (single-threaded; BLAS pinned to one thread)"
    predict_parallelism = "rows"       # GIL released, no shared scratch (base.py)

    def _feature_dtype(self):
        return np.float64

    def _check_common(self, X):
        limit = int(self.max_samples)
        if X.shape[0] > limit:
            raise BudgetExceededError(
                f"{type(self).__name__} is O(n²) in time and keeps up to n support vectors: "
                f"n = {X.shape[0]:,} > max_samples = {limit:,}. Subsample the data "
                f"(dataset.subsample) or raise max_samples if you can wait.")
        seed = int(np.random.default_rng(self.random_state).integers(2**63))
        self.gamma_ = resolve_gamma(self.gamma, X, kernel="rbf", seed=seed)
        self.lambda_ = 1.0 / (X.shape[0] * self.C)

    def _xnorms(self):
        if getattr(self, "_xnorm", None) is None:
            X = self._dense_train_X()
            self._xnorm = np.einsum("ij,ij->i", X, X)
        return self._xnorm

    def _decision(self, X):
        with blas_threads(1):
            return self.core_.sv.predict(as_dense(X, np.float64)).reshape(-1, 1)

    def working_set(self) -> list:
        """The training data, then the expansion every step evaluates: support vectors, norms, α."""
        sv = self.core_.sv
        return super().working_set() + [a for a in (sv.S, sv.snorm, sv.coef) if isinstance(a, np.ndarray)]

    def record(self) -> dict:
        return {**super().record(), "n_support_vectors": self.n_support_vectors_}

    @property
    def n_support_vectors_(self) -> int:
        return int(self.core_.sv.count)

    def penalty(self) -> float:
        """Ω(f) = λ/2 ‖f‖²_H (the exact RKHS norm) of R(f) = mean loss + Ω."""
        return 0.5 * self.lambda_ * self.norm_sq_()


PARAMETERS = declare(
    loss=param("auto", "loss ℓ; auto = hinge for classification (Dai et al.'s K-SVM), squared for regression",
               Choice("auto", *losses_for(BINARY, convex=True, one_score=True))),
    kernel=RBF_ONLY, gamma=GAMMA, C=C,
    batch_size=param(64, "mini-batch size b (Dai et al. use the same batch for every method)",
                     Integer(1, 10**6)),
    step=param(None, "step scale θ in γ_t = θ/(t0 + t); None = DSG's auto (10·t0 margin losses, t0 squared)",
               POSITIVE, NONE),
    t0=param(100.0, "step-size offset t0", Real(0)),
    budget=param(0, "truncation τ: keep only the last τ kernel terms (0 = keep all)", Integer(0)),
    max_samples=SAMPLE_LIMIT,
    passes=AUTO_PASSES, random_state=RANDOM_STATE)

REGRESSION_PARAMETERS = declare(PARAMETERS, loss=PARAMETERS["loss"].but(allowed=(Choice("auto", "squared"),)))


class _NormaBase(KernelExpansionBase):
    def _init_model(self, X):
        self._check_common(X)
        self.passes_ = auto_passes(self.passes, X.shape[0], self.steps_per_pass)
        auto = float(self.t0 or 1.0) * (1.0 if self.loss_ == "squared" else 10.0)   # as DSG's auto step
        self.step_ = auto if self.step is None else float(self.step)
        self.core_ = _kernel_sgd.NormaCore(
            n_dims=X.shape[1], gamma=self.gamma_, loss=code(self.loss_), lam=self.lambda_,
            step=self.step_, t0=float(self.t0), budget=int(self.budget),
            f_bound=divergence_bound(self._train_Y))

    def _train_rows(self, X, Y, rows):
        with blas_threads(1):
            status, steps = self.core_.train(X, self._xnorms(), np.ascontiguousarray(Y[:, 0]),
                                              np.ascontiguousarray(rows, dtype=np.int64),
                                              int(self.batch_size))
        if status == _kernel_sgd.DIVERGED:
            raise DivergenceError(f"NORMA diverged at iteration {self.core_.n_iter}: use a smaller step "
                                  f"(step={self.step_:g}) or a larger t0 (t0={self.t0:g}).")
        if status == _kernel_sgd.STEP_TOO_LARGE:
            raise DivergenceError(f"NORMA step too large at iteration {self.core_.n_iter + 1}: γ_t·λ ≥ 1. "
                                  "Use a smaller step, a larger t0, or a larger C.")
        return steps

    def norm_sq_(self) -> float:
        """‖f‖²_H: tracked exactly by the core while nothing was truncated, else from the τ × τ Gram."""
        core = self.core_
        if core.budget == 0 or core.n_added <= core.budget:
            return float(core.norm_sq)
        S, c = core.coef()
        return float(c @ kernel_matrix(S, kernel="rbf", gamma=self.gamma_) @ c)

    def expansion(self):
        """(support vectors, coefficients), oldest first: f(x) = Σ_j c_j k(s_j, x)."""
        return self.core_.coef()


class NormaClassifier(BinaryClassifierMixin, _NormaBase):
    """Binary kernel classifier trained by NORMA. Labels may be any two values."""
    parameters = PARAMETERS
    auto_loss = "hinge"


class NormaRegressor(RegressionMixin, _NormaBase):
    """Kernel ridge regression trained by NORMA (squared loss)."""
    parameters = REGRESSION_PARAMETERS
    auto_loss = "squared"


register_algorithm(
    "norma", classifier=NormaClassifier, regressor=NormaRegressor, tasks=("binary", "regression"),
    description="NORMA: exact-kernel SGD with shrinkage and truncation (Kivinen et al. 2004); "
                "Dai et al. 2014 baseline; O(n²), skipped beyond max_samples",
    smoke_params={"batch_size": 16},
)
