"""NORMA: kernel SGD with shrinkage and truncation (Kivinen, Smola & Williamson 2004) — a baseline
of Dai et al. 2014 (§6 (i), Fig. 1 (1)–(3)).

    f_{t+1} = (1 − γ_t λ) f_t − γ_t/b Σ_{i∈batch} ℓ'(f_t(x_i), y_i) k(x_i, ·),   γ_t = θ/(t0 + t)

on R(f) = (1/n) Σ ℓ(f(x_i), y_i) + (λ/2)‖f‖²_H, λ = 1/(n·C) — DSG's objective and step schedule
with the exact kernel in place of DSG's random features (the paper's comparison). `budget` = τ
keeps only the last τ terms (NORMA's truncation); 0 keeps all, and then one pass costs
O(n · #SV · d): refused beyond `max_samples` (BudgetExceededError: the runner writes a "skipped"
row). The compiled loop is in _kernel_sgd.pyx.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from threadpoolctl import threadpool_limits

from kernelbench.errors import SolverError
from kernelbench.registry import param_field as doc
from kernelbench.registry import register_algorithm
from kernelbench.solvers import _kernel_sgd
from kernelbench.solvers._losses import LOSSES, loss_values
from kernelbench.solvers.base import (BinaryClassifierMixin, BudgetExceededError, DivergenceError,
                                      IterativeEstimator, RegressionMixin, as_dense)
from kernelbench.solvers.kernels import kernel_matrix, resolve_gamma

# O(n²) methods: one pass over 60k points with ~half of them support vectors is ~1e9 kernel values
# × d — minutes on one core here. Beyond this the runner writes a clean "skipped" row.
MAX_SAMPLES = 60_000
DIVERGENCE_FACTOR = 1e8


class KernelExpansionBase(IterativeEstimator):
    """What NORMA and k-SDCA share: exact RBF kernel, float64 dense data with row norms, the
    O(n²) size limit, prediction from the support-vector expansion."""
    _training_only = ("_xnorm",)
    _losses: tuple[str, ...] = ()
    determinism = "identical results for the same seed (single-threaded; BLAS pinned to one thread)"
    predict_parallelism = "rows"       # GIL released, no shared scratch (base.py)

    def _feature_dtype(self):
        return np.float64

    def _check_common(self, X):
        if self.loss not in self._losses:
            raise SolverError(f"{type(self).__name__}: loss must be one of {self._losses}, got {self.loss!r}")
        if self.kernel != "rbf":
            raise SolverError(f"{type(self).__name__} supports kernel='rbf' only, got {self.kernel!r}")
        limit = int(self.max_samples)
        if X.shape[0] > limit:
            raise BudgetExceededError(
                f"{type(self).__name__} is O(n²) in time and keeps up to n support vectors: "
                f"n = {X.shape[0]:,} > max_samples = {limit:,}. Subsample the data "
                f"(dataset.subsample) or raise max_samples if you can wait.")
        seed = int(np.random.default_rng(self.random_state).integers(2**63))
        try:
            self.gamma_ = resolve_gamma(self.gamma, X, kernel="rbf", seed=seed)
        except ValueError as e:
            raise SolverError(str(e)) from None
        self.lambda_ = 1.0 / (X.shape[0] * self.C)

    def _xnorms(self):
        if getattr(self, "_xnorm", None) is None:
            X = self._dense_train_X()
            self._xnorm = np.einsum("ij,ij->i", X, X)
        return self._xnorm

    def _decision(self, X):
        with threadpool_limits(limits=1, user_api="blas"):
            return self.core_.sv.predict(as_dense(X, np.float64)).reshape(-1, 1)

    @property
    def n_support_vectors_(self) -> int:
        return int(self.core_.sv.count)

    def objective(self, X, y):
        """R(f) = mean loss on (X, y) + λ/2 ‖f‖²_H (the exact RKHS norm)."""
        Y = self._encode_targets(np.asarray(y), fitting=False).ravel()
        F = self._decision(X).ravel()
        return float(np.mean(loss_values(self.loss, F, Y)) + 0.5 * self.lambda_ * self.norm_sq_())


@dataclass
class NormaParams:
    loss: Literal["auto", "hinge", "logistic", "smooth_hinge", "squared"] = doc(
        "loss ℓ; auto = hinge for classification (Dai et al.'s K-SVM), squared for regression", "auto")
    kernel: Literal["rbf"] = doc("kernel (Gaussian RBF exp(-γ‖x−x'‖²))", "rbf")
    gamma: float | str = doc("kernel width γ, or 'median' for the median trick", "median")
    C: float = doc("regularisation: λ = 1/(n·C)", 1.0)
    batch_size: int = doc("mini-batch size b (Dai et al. use the same batch for every method)", 64)
    step: float | None = doc("step scale θ in γ_t = θ/(t0 + t); None = DSG's auto (10·t0 margin losses, t0 squared)", None)
    t0: float = doc("step-size offset t0", 100.0)
    budget: int = doc("truncation τ: keep only the last τ kernel terms (0 = keep all)", 0)
    max_samples: int = doc("refuse (skip) training sets larger than this: O(n²) time", MAX_SAMPLES)

    def __post_init__(self):
        if not 1 <= self.batch_size <= 10**6:
            raise ValueError(f"batch_size must be between 1 and 1,000,000, got {self.batch_size!r}")
        if self.budget < 0:
            raise ValueError(f"budget must be >= 0 (0 = no truncation), got {self.budget!r}")
        if self.step is not None and not self.step > 0:
            raise ValueError(f"step must be > 0 (or null for auto), got {self.step!r}")
        if self.t0 < 0:
            raise ValueError(f"t0 must be >= 0, got {self.t0!r}")


def _make_norma(params: NormaParams, *, seed: int, task: str):
    kwargs = asdict(params)
    if kwargs["loss"] == "auto":
        del kwargs["loss"]
    cls = NormaRegressor if task == "regression" else NormaClassifier
    return cls(**kwargs, random_state=seed)


register_algorithm(
    "norma", factory=_make_norma, tasks=("binary", "regression"),
    description="NORMA: exact-kernel SGD with shrinkage and truncation (Kivinen et al. 2004); "
                "Dai et al. 2014 baseline; O(n²), skipped beyond max_samples",
    smoke_params={"batch_size": 16},
)(NormaParams)


class _NormaBase(KernelExpansionBase):
    def __init__(self, *, loss="hinge", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 step=None, t0=100.0, budget=0, max_samples=MAX_SAMPLES, passes=1.0,
                 random_state=None):
        self.loss = loss
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.batch_size = batch_size
        self.step = step
        self.t0 = t0
        self.budget = budget
        self.max_samples = max_samples
        self.passes = passes
        self.random_state = random_state

    def _init_model(self, X):
        self._check_common(X)
        if not (isinstance(self.budget, (int, np.integer)) and self.budget >= 0):
            raise SolverError(f"budget must be an integer >= 0 (0 = no truncation), got {self.budget!r}")
        if not (np.isfinite(self.t0) and self.t0 >= 0):
            raise SolverError(f"t0 must be >= 0, got {self.t0!r}")
        auto = float(self.t0 or 1.0) * (1.0 if self.loss == "squared" else 10.0)   # as DSG's auto step
        self.step_ = auto if self.step is None else float(self.step)
        if not (np.isfinite(self.step_) and self.step_ > 0):
            raise SolverError(f"step must be a positive number or None (auto), got {self.step!r}")
        self.core_ = _kernel_sgd.NormaCore(
            n_dims=X.shape[1], gamma=self.gamma_, loss=LOSSES[self.loss], lam=self.lambda_,
            step=self.step_, t0=float(self.t0), budget=int(self.budget),
            f_bound=DIVERGENCE_FACTOR * max(1.0, float(np.max(np.abs(self._train_Y)))))

    def _train_rows(self, X, Y, rows):
        with threadpool_limits(limits=1, user_api="blas"):
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
    _losses = ("hinge", "logistic", "smooth_hinge", "squared")


class NormaRegressor(RegressionMixin, _NormaBase):
    """Kernel ridge regression trained by NORMA (squared loss)."""
    _losses = ("squared",)

    def __init__(self, *, loss="squared", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 step=None, t0=100.0, budget=0, max_samples=MAX_SAMPLES, passes=1.0,
                 random_state=None):
        super().__init__(loss=loss, kernel=kernel, gamma=gamma, C=C, batch_size=batch_size,
                         step=step, t0=t0, budget=budget, max_samples=max_samples, passes=passes,
                         random_state=random_state)
