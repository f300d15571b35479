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

import numpy as np

from kernelbench.errors import SolverError
from kernelbench.params import C, GAMMA, PASSES, RANDOM_STATE, RBF_ONLY, Choice, Integer, declare, param
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers import _kernel_sgd
from kernelbench.solvers.base import (BinaryClassifierMixin, DivergenceError, RegressionMixin, blas_threads,
                                      not_offered)
from kernelbench.solvers.losses import code, loss_values
from kernelbench.solvers.norma import SAMPLE_LIMIT, KernelExpansionBase

PARAMETERS = declare(
    loss=param("auto", "loss ℓ (closed-form dual steps); auto = hinge for classification, squared for "
                       "regression (logistic has no closed-form step and is not offered)",
               Choice("auto", "hinge", "smooth_hinge", "squared")),
    kernel=RBF_ONLY, gamma=GAMMA, C=C,
    batch_size=param(64, "coordinates per iteration (visited one after another, as plain SDCA)",
                     Integer(1, 10**5)),
    max_samples=SAMPLE_LIMIT,
    passes=PASSES, random_state=RANDOM_STATE)

REGRESSION_PARAMETERS = declare(PARAMETERS, loss=PARAMETERS["loss"].but(allowed=(Choice("auto", "squared"),)))


class _KSDCABase(KernelExpansionBase):
    def _init_model(self, X):
        self._check_common(X)
        self.core_ = _kernel_sgd.SDCACore(n_samples=X.shape[0], n_dims=X.shape[1], gamma=self.gamma_,
                                          loss=code(self.loss_), lam=self.lambda_)

    partial_fit = not_offered("the dual variables belong to one fixed training set (use fit)")

    def _train_rows(self, X, Y, rows):
        with blas_threads(1):
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
        primal = np.mean(loss_values(self.loss_, F, Y)) + 0.5 * self.lambda_ * norm_sq
        ay = alpha * Y
        if self.loss_ == "hinge":           # −ℓ*(−α) = αy for αy ∈ [0, 1]
            conj = ay
        elif self.loss_ == "smooth_hinge":   # −ℓ*(−α) = αy − (αy)²/2 (smoothing 1)
            conj = ay - 0.5 * ay ** 2
        else:                               # squared: −ℓ*(−α) = αy − α²/2
            conj = ay - 0.5 * alpha ** 2
        dual = np.mean(conj) - 0.5 * self.lambda_ * norm_sq
        return float(primal - dual)


class KSDCAClassifier(BinaryClassifierMixin, _KSDCABase):
    """Binary kernel SVM (no bias) trained by k-SDCA. Labels may be any two values."""
    parameters = PARAMETERS
    auto_loss = "hinge"


class KSDCARegressor(RegressionMixin, _KSDCABase):
    """Kernel ridge regression (no bias) trained by k-SDCA."""
    parameters = REGRESSION_PARAMETERS
    auto_loss = "squared"


register_algorithm(
    "k-sdca", classifier=KSDCAClassifier, regressor=KSDCARegressor, tasks=("binary", "regression"),
    description="k-SDCA: dual coordinate ascent with the exact kernel (Shalev-Shwartz & Zhang 2013); "
                "Dai et al. 2014 baseline; O(n²), skipped beyond max_samples",
    smoke_params={"batch_size": 16},
)
