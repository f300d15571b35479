"""UDSG and CDSG: doubly stochastic gradients that re-use old coordinates (Li & Póczos, UAI 2016).

DSG (Dai et al. 2014) adds a new block of random features in every iteration, so iteration t costs
O(t) feature evaluations per point. Viewing DSG as random coordinate descent, an iteration may
instead update an OLD block of features (its coefficients take the same stochastic block gradient):

- UDSG (Alg. 3): G iterations with new blocks, then U iterations each on an old block drawn
  uniformly at random; repeat.
- CDSG (Alg. 4): in every iteration, rule (9) — an expected line search that keeps the variance
  bound of DSG — gives each old block k its largest admissible step |η_k|; the block with the
  largest one is updated with step min(|η_k|, θ'/(t0 + t)) if |η_k| > γ_t, else a new block is
  added as in DSG. The closed form of (9) is in _dsg.pyx (`cdsg_step`).

Both share DSG's compiled core (_dsg.pyx), losses (incl. softmax) and schedule γ_t = θ/(t0 + t).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kernelbench.errors import SolverError
from kernelbench.registry import param_field as doc
from kernelbench.registry import register_algorithm
from kernelbench.solvers.dsg import DSGClassifier, DSGParams, DSGRegressor, estimator_kwargs
from kernelbench.solvers.kernels import kernel_matrix


@dataclass
class UDSGParams(DSGParams):
    """DSG's parameters plus the period of Alg. 3."""
    new_iterations: int = doc("G of Alg. 3: iterations sampling new features per period", 1)
    old_iterations: int = doc("U of Alg. 3: iterations re-using a uniformly drawn old block per period", 1)

    def __post_init__(self):
        super().__post_init__()
        if not 1 <= self.new_iterations <= 10**6:
            raise ValueError(f"new_iterations (G) must be between 1 and 1,000,000, got {self.new_iterations!r}")
        if not 0 <= self.old_iterations <= 10**6:
            raise ValueError(f"old_iterations (U) must be between 0 and 1,000,000, got {self.old_iterations!r}")


@dataclass
class CDSGParams(DSGParams):
    """DSG's parameters plus rule (9)'s variance and the step bound θ'."""
    max_step: float = doc("θ'/θ: a re-used block's step is at most θ'/(t0 + t) (Li & Póczos Thm. 14; "
                          "the paper recommends bounding it)", 2.0)
    feature_variance: float | str = field(default="auto", metadata={
        "doc": "σ² of rule (9), E_ω Var_x'[φ_ω(x')φ_ω(x) − k(x', x)]; 'auto' estimates it on the "
               "training data", "choices": ("auto",)})

    def __post_init__(self):
        super().__post_init__()
        if not (np.isfinite(self.max_step) and self.max_step >= 1.0):
            raise ValueError(f"max_step (θ'/θ) must be a number >= 1, got {self.max_step!r}")
        if isinstance(self.feature_variance, str):
            if self.feature_variance != "auto":
                raise ValueError(f"feature_variance must be a number >= 0 or 'auto', got {self.feature_variance!r}")
        elif not self.feature_variance >= 0:
            raise ValueError(f"feature_variance must be a number >= 0 or 'auto', got {self.feature_variance!r}")


def _factory(classifier, regressor, renames):
    def make(params, *, seed: int, task: str):
        kwargs = estimator_kwargs(params, task)
        for old, new in renames.items():
            kwargs[new] = kwargs.pop(old)
        cls = regressor if task == "regression" else classifier
        return cls(**kwargs, random_state=seed)
    return make


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
        for name in ("new_iterations", "old_iterations"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < (1 if name == "new_iterations" else 0):
                raise SolverError(f"{name} must be an integer >= {1 if name == 'new_iterations' else 0}, got {value!r}")
        return {**super()._mode_kwargs(X, seed), "udsg_new": int(self.new_iterations),
                "udsg_old": int(self.old_iterations)}


class _CDSGMixin:
    _mode = "cdsg"

    def _mode_kwargs(self, X, seed):
        if not (np.isfinite(self.max_step) and self.max_step >= 1.0):
            raise SolverError(f"max_step (θ'/θ) must be a number >= 1, got {self.max_step!r}")
        if isinstance(self.feature_variance, str):
            if self.feature_variance != "auto":
                raise SolverError(f"feature_variance must be a number >= 0 or 'auto', got {self.feature_variance!r}")
            variance = estimate_feature_variance(X, kernel=self.kernel, gamma=self.gamma_, seed=seed % 2**32)
        else:
            variance = float(self.feature_variance)
            if not variance >= 0:
                raise SolverError(f"feature_variance must be a number >= 0 or 'auto', got {self.feature_variance!r}")
        self.feature_variance_ = variance
        return {**super()._mode_kwargs(X, seed), "max_step": float(self.max_step), "variance": variance}


class UDSGClassifier(_UDSGMixin, DSGClassifier):
    """Kernel classifier trained by UDSG (Li & Póczos Alg. 3)."""

    def __init__(self, *, loss="hinge", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 block_size=32, step=None, t0=100.0, dtype="float32", cache_features=True,
                 threads=1, passes=1.0, random_state=None, new_iterations=1, old_iterations=1,
                 average=False, average_from=1.0):
        super().__init__(loss=loss, kernel=kernel, gamma=gamma, C=C, batch_size=batch_size,
                         block_size=block_size, step=step, t0=t0, dtype=dtype,
                         cache_features=cache_features, threads=threads, passes=passes,
                         random_state=random_state, average=average, average_from=average_from)
        self.new_iterations = new_iterations
        self.old_iterations = old_iterations


class UDSGRegressor(_UDSGMixin, DSGRegressor):
    """Kernel ridge regression trained by UDSG (Li & Póczos Alg. 3)."""

    def __init__(self, *, loss="squared", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 block_size=32, step=None, t0=100.0, dtype="float32", cache_features=True,
                 threads=1, passes=1.0, random_state=None, new_iterations=1, old_iterations=1,
                 average=False, average_from=1.0):
        super().__init__(loss=loss, kernel=kernel, gamma=gamma, C=C, batch_size=batch_size,
                         block_size=block_size, step=step, t0=t0, dtype=dtype,
                         cache_features=cache_features, threads=threads, passes=passes,
                         random_state=random_state, average=average, average_from=average_from)
        self.new_iterations = new_iterations
        self.old_iterations = old_iterations


class CDSGClassifier(_CDSGMixin, DSGClassifier):
    """Kernel classifier trained by CDSG (Li & Póczos Alg. 4, rule (9))."""

    def __init__(self, *, loss="hinge", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 block_size=32, step=None, t0=100.0, dtype="float32", cache_features=True,
                 threads=1, passes=1.0, random_state=None, max_step=2.0, feature_variance="auto",
                 average=False, average_from=1.0):
        super().__init__(loss=loss, kernel=kernel, gamma=gamma, C=C, batch_size=batch_size,
                         block_size=block_size, step=step, t0=t0, dtype=dtype,
                         cache_features=cache_features, threads=threads, passes=passes,
                         random_state=random_state, average=average, average_from=average_from)
        self.max_step = max_step
        self.feature_variance = feature_variance


class CDSGRegressor(_CDSGMixin, DSGRegressor):
    """Kernel ridge regression trained by CDSG (Li & Póczos Alg. 4, rule (9))."""

    def __init__(self, *, loss="squared", kernel="rbf", gamma="median", C=1.0, batch_size=64,
                 block_size=32, step=None, t0=100.0, dtype="float32", cache_features=True,
                 threads=1, passes=1.0, random_state=None, max_step=2.0, feature_variance="auto",
                 average=False, average_from=1.0):
        super().__init__(loss=loss, kernel=kernel, gamma=gamma, C=C, batch_size=batch_size,
                         block_size=block_size, step=step, t0=t0, dtype=dtype,
                         cache_features=cache_features, threads=threads, passes=passes,
                         random_state=random_state, average=average, average_from=average_from)
        self.max_step = max_step
        self.feature_variance = feature_variance


register_algorithm(
    "udsg", factory=_factory(UDSGClassifier, UDSGRegressor, {}),
    tasks=("binary", "multiclass", "regression"),
    description="DSG re-using old random features uniformly: G new, then U old iterations (Li & Póczos 2016, Alg. 3)",
    smoke_params={"batch_size": 32, "block_size": 16},
)(UDSGParams)

register_algorithm(
    "cdsg", factory=_factory(CDSGClassifier, CDSGRegressor, {}),
    tasks=("binary", "multiclass", "regression"),
    description="DSG with checking: rule (9) + expected line search picks a new or the best old block "
                "(Li & Póczos 2016, Alg. 4)",
    smoke_params={"batch_size": 32, "block_size": 16},
)(CDSGParams)
