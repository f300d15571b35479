"""k-SDCA: stochastic dual coordinate ascent with the exact kernel (Shalev-Shwartz & Zhang 2013) —
a baseline of Dai et al. 2014 (§6 (ii), Fig. 1 (1)–(3)).

Primal   P(f) = (1/n) Σ ℓ(f(x_i), y_i) + (λ/2)‖f‖²_H,   λ = 1/(n·C)   (no bias, as DSG)
Dual     D(α) = (1/n) Σ −ℓ*_i(−α_i) − (λ/2)‖f(α)‖²_H,  f(α) = 1/(λn) Σ α_i k(x_i, ·)
One iteration = one mini-batch of coordinates, each maximised in closed form in turn (hinge,
smooth hinge with smoothing 1, squared). The duality gap P − D ≥ 0 goes to 0 (a certificate).
Each coordinate step costs O(#SV · d): O(n²) per pass, refused beyond `max_samples`.
The compiled loop is in _kernel_sgd.pyx.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
from sklearn.utils.metaestimators import available_if
from threadpoolctl import threadpool_limits

from kernelbench.errors import SolverError
from kernelbench.registry import param_field as doc
from kernelbench.registry import register_algorithm
from kernelbench.solvers import _kernel_sgd
from kernelbench.solvers._losses import LOSSES, loss_values
from kernelbench.solvers.base import BinaryClassifierMixin, DivergenceError, RegressionMixin
from kernelbench.solvers.norma import MAX_SAMPLES, KernelExpansionBase


@dataclass
class KSDCAParams:
    loss: Literal["auto", "hinge", "smooth_hinge", "squared"] = doc(
        "loss ℓ (closed-form dual steps); auto = hinge for classification, squared for regression "
        "(logistic has no closed-form step and is not offered)", "auto")
    kernel: Literal["rbf"] = doc("kernel (Gaussian RBF exp(-γ‖x−x'‖²))", "rbf")
    gamma: float | str = doc("kernel width γ, or 'median' for the median trick", "median")
    C: float = doc("regularisation: λ = 1/(n·C)", 1.0)
    batch_size: int = doc("coordinates per iteration (visited one after another, as plain SDCA)", 64)
    max_samples: int = doc("refuse (skip) training sets larger than this: O(n²) time", MAX_SAMPLES)

    def __post_init__(self):
        if not 1 <= self.batch_size <= 10**5:
            raise ValueError(f"batch_size must be between 1 and 100,000, got {self.batch_size!r}")


def _make_ksdca(params: KSDCAParams, *, seed: int, task: str):
    kwargs = asdict(params)
    if kwargs["loss"] == "auto":
        del kwargs["loss"]
    cls = KSDCARegressor if task == "regression" else KSDCAClassifier
    return cls(**kwargs, random_state=seed)


register_algorithm(
    "k-sdca", factory=_make_ksdca, tasks=("binary", "regression"),
    description="k-SDCA: dual coordinate ascent with the exact kernel (Shalev-Shwartz & Zhang 2013); "
                "Dai et al. 2014 baseline; O(n²), skipped beyond max_samples",
    smoke_params={"batch_size": 16},
)(KSDCAParams)


class _KSDCABase(KernelExpansionBase):
    def __init__(self, *, loss="hinge", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 max_samples=MAX_SAMPLES, passes=1.0, random_state=None):
        self.loss = loss
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.batch_size = batch_size
        self.max_samples = max_samples
        self.passes = passes
        self.random_state = random_state

    def _init_model(self, X):
        self._check_common(X)
        self.core_ = _kernel_sgd.SDCACore(n_samples=X.shape[0], n_dims=X.shape[1], gamma=self.gamma_,
                                          loss=LOSSES[self.loss], lam=self.lambda_)

    @available_if(lambda est: False)
    def partial_fit(self, X, y, classes=None):
        """Not offered: the dual variables belong to one fixed training set (use fit)."""

    def _train_rows(self, X, Y, rows):
        with threadpool_limits(limits=1, user_api="blas"):
            status, steps = self.core_.train(X, self._xnorms(), np.ascontiguousarray(Y[:, 0]),
                                              np.ascontiguousarray(rows, dtype=np.int64),
                                              int(self.batch_size))
        if status != _kernel_sgd.OK:
            raise DivergenceError("k-SDCA produced a NaN/inf dual step: check the data for inf values")
        return steps

    def norm_sq_(self) -> float:
        return float(self.core_.norm_sq)

    @property
    def dual_coef_(self):
        """α (one per training sample): f = 1/(λn) Σ α_i k(x_i, ·)."""
        return self.core_.alpha

    def duality_gap(self):
        """P(f(α)) − D(α) on the training set (needs the training data: call before finish();
        O(n · #SV) time). ≥ 0, and 0 exactly at the optimum."""
        if getattr(self, "_train_X", None) is None:
            raise SolverError("duality_gap needs the training data: call it before finish()")
        Y = self._train_Y.ravel()
        F = self._decision(self._train_X).ravel()
        alpha = self.core_.alpha
        norm_sq = self.norm_sq_()
        primal = np.mean(loss_values(self.loss, F, Y)) + 0.5 * self.lambda_ * norm_sq
        ay = alpha * Y
        if self.loss == "hinge":            # −ℓ*(−α) = αy for αy ∈ [0, 1]
            conj = ay
        elif self.loss == "smooth_hinge":   # −ℓ*(−α) = αy − (αy)²/2 (smoothing 1)
            conj = ay - 0.5 * ay ** 2
        else:                               # squared: −ℓ*(−α) = αy − α²/2
            conj = ay - 0.5 * alpha ** 2
        dual = np.mean(conj) - 0.5 * self.lambda_ * norm_sq
        return float(primal - dual)


class KSDCAClassifier(BinaryClassifierMixin, _KSDCABase):
    """Binary kernel SVM (no bias) trained by k-SDCA. Labels may be any two values."""
    _losses = ("hinge", "smooth_hinge", "squared")


class KSDCARegressor(RegressionMixin, _KSDCABase):
    """Kernel ridge regression (no bias) trained by k-SDCA."""
    _losses = ("squared",)

    def __init__(self, *, loss="squared", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 max_samples=MAX_SAMPLES, passes=1.0, random_state=None):
        super().__init__(loss=loss, kernel=kernel, gamma=gamma, C=C, batch_size=batch_size,
                         max_samples=max_samples, passes=passes, random_state=random_state)
