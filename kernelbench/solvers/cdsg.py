"""UDSG and CDSG: doubly stochastic gradients that re-use old coordinates (Li & Póczos, UAI 2016).

DSG (Dai et al. 2014) adds a new block of random features in every iteration, so iteration t costs
O(t) feature evaluations per point. Viewing DSG as random coordinate descent, an iteration may
instead update an OLD block of features (its coefficients take the same stochastic block gradient):

- UDSG (Alg. 3): G iterations with new blocks, then U iterations each on an old block drawn
  uniformly at random; repeat.
- CDSG (Alg. 4): in every iteration, rule (9) — an expected line search that keeps the variance
  bound of DSG — gives each old block k its largest admissible step |η_k|; the block with the
  largest one is updated with step min(|η_k|, θ'/(t0 + t)) if |η_k| > γ_t, else a new block is
  added as in DSG. The closed form of (9) is in _dsg_rules.pxd (`cdsg_step`).

Both share DSG's compiled core (_dsg.pyx), losses (incl. softmax) and schedule γ_t = θ/(t0 + t).
"""
from __future__ import annotations

import numpy as np

from kernelbench.params import Choice, Integer, Real, declare, param
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers.dsg import DSGClassifier, DSGRegressor
from kernelbench.solvers.kernels import kernel_matrix


UDSG_PARAMETERS = {
    "new_iterations": param(1, "G of Alg. 3: iterations sampling new features per period", Integer(1, 10**6)),
    "old_iterations": param(1, "U of Alg. 3: iterations re-using a uniformly drawn old block per period",
                            Integer(0, 10**6)),
}
CDSG_PARAMETERS = {
    "max_step": param(2.0, "θ'/θ: a re-used block's step is at most θ'/(t0 + t) (Li & Póczos Thm. 14; "
                           "the paper recommends bounding it)", Real(1.0)),
    "feature_variance": param("auto", "σ² of rule (9), E_ω Var_x'[φ_ω(x')φ_ω(x) − k(x', x)]; 'auto' "
                                      "estimates it on the training data", Real(0), Choice("auto")),
}


def estimate_feature_variance(X, *, kernel, gamma, seed, n_omega=64, n_anchor=16, n_points=256):
    """σ² = E_ω[Var_x'(Φ_x(ω, x'))] of Li & Póczos §4.2, Φ_x(ω, x') = φ_ω(x')φ_ω(x) − k(x', x) with
    φ_ω(x) = √2 cos(ω·x + b), averaged over a few anchors x; Monte Carlo on a training subsample."""
    rng = np.random.default_rng(seed)
    X = X.toarray() if hasattr(X, "toarray") else np.asarray(X)
    n, d = X.shape
    anchors = X[rng.choice(n, size=min(n, n_anchor), replace=False)].astype(np.float64)
    points = X[rng.choice(n, size=min(n, n_points), replace=False)].astype(np.float64)
    if kernel == "rbf":
        W = rng.normal(scale=np.sqrt(2.0 * gamma), size=(n_omega, d))
    else:
        W = gamma * rng.standard_cauchy(size=(n_omega, d))
    b = rng.uniform(0.0, 2.0 * np.pi, size=n_omega)
    phi_a = np.sqrt(2.0) * np.cos(anchors @ W.T + b)           # anchors × ω
    phi_p = np.sqrt(2.0) * np.cos(points @ W.T + b)            # points × ω
    K = kernel_matrix(points, anchors, kernel=kernel, gamma=gamma)      # points × anchors
    Phi = phi_p[:, None, :] * phi_a[None, :, :] - K[:, :, None]        # points × anchors × ω
    return float(np.mean(np.var(Phi, axis=0)))


class _UDSGMixin:
    _mode = "udsg"

    def _mode_kwargs(self, X, seed):
        return {**super()._mode_kwargs(X, seed), "udsg_new": int(self.new_iterations),
                "udsg_old": int(self.old_iterations)}


class _CDSGMixin:
    _mode = "cdsg"

    def _mode_kwargs(self, X, seed):
        if self.feature_variance == "auto":
            variance = estimate_feature_variance(X, kernel=self.kernel, gamma=self.gamma_, seed=seed % 2**32)
        else:
            variance = float(self.feature_variance)
        self.feature_variance_ = variance
        return {**super()._mode_kwargs(X, seed), "max_step": float(self.max_step), "variance": variance}


class UDSGClassifier(_UDSGMixin, DSGClassifier):
    """Kernel classifier trained by UDSG (Li & Póczos Alg. 3)."""
    parameters = declare(DSGClassifier.parameters, UDSG_PARAMETERS)


class UDSGRegressor(_UDSGMixin, DSGRegressor):
    """Kernel ridge regression trained by UDSG (Li & Póczos Alg. 3)."""
    parameters = declare(DSGRegressor.parameters, UDSG_PARAMETERS)


class CDSGClassifier(_CDSGMixin, DSGClassifier):
    """Kernel classifier trained by CDSG (Li & Póczos Alg. 4, rule (9))."""
    parameters = declare(DSGClassifier.parameters, CDSG_PARAMETERS)


class CDSGRegressor(_CDSGMixin, DSGRegressor):
    """Kernel ridge regression trained by CDSG (Li & Póczos Alg. 4, rule (9))."""
    parameters = declare(DSGRegressor.parameters, CDSG_PARAMETERS)


register_algorithm(
    "udsg", classifier=UDSGClassifier, regressor=UDSGRegressor, tasks=("binary", "multiclass", "regression"),
    description="DSG re-using old random features uniformly: G new, then U old iterations (Li & Póczos 2016, Alg. 3)",
    smoke_params={"batch_size": 32, "block_size": 16},
)

register_algorithm(
    "cdsg", classifier=CDSGClassifier, regressor=CDSGRegressor, tasks=("binary", "multiclass", "regression"),
    description="DSG with checking: rule (9) + expected line search picks a new or the best old block "
                "(Li & Póczos 2016, Alg. 4)",
    smoke_params={"batch_size": 32, "block_size": 16},
)
