"""r-Pegasos and n-Pegasos: Pegasos on a fixed kernel approximation — baselines (v) and (vi) of
Dai et al. 2014 (§6, Fig. 1 (1)–(3)); "we set the rank and number of random features to be 2^8".

The feature map is scikit-learn's: RBFSampler (random Fourier features, Rahimi & Recht; z(x) =
√(2/D) cos(Ωx + b), so z(x)·z(x') ≈ exp(−γ‖x − x'‖²)) for r-Pegasos, Nystroem (rank-D Nyström
map from D random training points) for n-Pegasos. begin(X, y) fits the map and transforms the
training set once, in chunks (Dai et al. do not count this preprocessing). Then mini-batch Pegasos
(Shalev-Shwartz, Singer & Srebro 2007, mini-batch variant with |A_t| = B) on the linear model
f(x) = w·z(x):

    η_t = 1/(λ t),   w ← (1 − η_t λ) w − η_t/B Σ_{i∈A_t} ℓ'(w·z_i, y_i) z_i,
    hinge only: w ← min(1, (1/√λ)/‖w‖) w           (the optional projection step of Pegasos)

on R(w) = (1/n) Σ ℓ(w·z_i, y_i) + (λ/2)‖w‖², λ = 1/(n·C) (DSG's objective on the fixed
features; no bias). Each step is two BLAS calls (B × D), so the loop stays in NumPy. `fit` makes
DSG's number of passes (`passes: None`, defaults.AUTO_PASSES: at least 2000 iterations, at most 50
passes), the samples DSG sees at its defaults: a few steps η_t = 1/(λt) leave the last iterate far
from the optimum (one pass over 200 rows is 4 steps, 67 % training accuracy on scikit-learn's
check_classifiers_train blobs; 50 passes: 97.5 %).

r-SDCA and n-SDCA (Dai et al. §6 (iii), (iv)): stochastic dual coordinate ascent (Shalev-Shwartz
& Zhang 2013) on the same fixed features, closed-form steps (hinge, smooth hinge), w = 1/(λn) Σ α_i
z_i; one iteration = `batch_size` coordinates in turn. Compiled loop: LinearSDCACore, _kernel_sgd.pyx.
"""
from __future__ import annotations

import numpy as np
from sklearn.kernel_approximation import Nystroem, RBFSampler

from kernelbench.errors import SolverError
from kernelbench.params import BOOLEAN, C, GAMMA, PASSES, RANDOM_STATE, Choice, Integer, declare, param
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers import _kernel_sgd
from kernelbench.solvers.base import BinaryClassifierMixin, DivergenceError, IterativeEstimator, not_offered
from kernelbench.solvers.defaults import AUTO_PASSES, auto_passes
from kernelbench.solvers.kernels import resolve_gamma
from kernelbench.solvers.losses import code, loss_derivatives, loss_values

CHUNK = 4096                      # rows transformed at a time
MAPS = ("random_fourier", "nystroem")

# what Pegasos and SDCA on fixed features share (r-/n- names fix feature_map in the registry)
FEATURE_MAP = param("random_fourier", "kernel approximation z(x): random_fourier (scikit-learn RBFSampler) "
                                      "or nystroem (Nystroem, rank D)", Choice(*MAPS))
N_COMPONENTS = param(256, "number of random features / Nyström rank D (Dai et al. §7: 2^8)", Integer(1, 10**6))


class _FixedFeatures(BinaryClassifierMixin, IterativeEstimator):
    """A linear model w·z(x) on a fixed feature map (random Fourier or Nyström), fitted in begin()."""
    _training_only = ("_Z",)
    determinism = "identical results for the same seed"
    predict_parallelism = "rows"       # GIL released, no shared scratch (NumPy/BLAS, base.py)

    def _feature_dtype(self):
        return np.float64

    def _init_model(self, X):
        seed = int(np.random.default_rng(self.random_state).integers(2**31 - 1))
        self.gamma_ = resolve_gamma(self.gamma, X, kernel="rbf", seed=seed)
        n = X.shape[0]
        if self.feature_map == "random_fourier":
            self.map_ = RBFSampler(gamma=self.gamma_, n_components=int(self.n_components), random_state=seed)
        else:
            # a rank above n is impossible: use every training point, as scikit-learn's Nystroem does
            self.map_ = Nystroem(kernel="rbf", gamma=self.gamma_, n_components=min(int(self.n_components), n),
                                 random_state=seed)
        self.map_.fit(X)
        self._Z = self._transform(X)
        self.lambda_ = 1.0 / (n * self.C)
        self.passes_ = auto_passes(self.passes, n, self.steps_per_pass)
        self.loss_ = self.loss                 # the loss trained with (objectives.py reads `loss_`)
        self.coef_ = np.zeros(self._Z.shape[1])
        self._t = 0
        self._init_solver()

    def _init_solver(self):
        pass

    def _transform(self, X):
        # RBFSampler/Nystroem accept CSR; chunks keep the dense intermediate small
        out = np.empty((X.shape[0], self.n_random_features_))
        for r0 in range(0, X.shape[0], CHUNK):
            out[r0:r0 + CHUNK] = self.map_.transform(X[r0:r0 + CHUNK])
        return out

    def _features(self):
        """z(x) of the current training chunk (partial_fit brings new chunks; the map stays fixed)."""
        if getattr(self, "_Z", None) is None:
            self._Z = self._transform(self._train_X)
        return self._Z

    def _decision(self, X):
        return (self._transform(X) @ self.coef_).reshape(-1, 1)

    def record(self) -> dict:
        return {**super().record(), "n_features": self.n_random_features_}

    @property
    def n_random_features_(self) -> int:
        """D: the number of features (the Nyström rank is at most the training-set size)."""
        return int(self.map_.n_components)

    def penalty(self) -> float:
        """Ω(w) = λ/2 ‖w‖² of R(w) = mean loss + Ω, on the fixed features."""
        return 0.5 * self.lambda_ * float(self.coef_ @ self.coef_)


class PegasosClassifier(_FixedFeatures):
    """Mini-batch Pegasos on a fixed feature map (random Fourier or Nyström)."""
    parameters = declare(
        feature_map=FEATURE_MAP,
        loss=param("hinge", "loss ℓ: hinge (Pegasos' SVM, Dai et al.) or logistic", Choice("hinge", "logistic")),
        gamma=GAMMA, C=C, n_components=N_COMPONENTS,
        batch_size=param(64, "mini-batch size |A_t| (Dai et al.: the same as DSG's)", Integer(1, 10**7)),
        projection=param(True, "Pegasos' projection onto the ball ‖w‖ ≤ 1/√λ (hinge only)", BOOLEAN),
        passes=AUTO_PASSES, random_state=RANDOM_STATE)

    def _train_rows(self, X, Y, rows):
        Z, y, w, lam = self._features(), Y[:, 0], self.coef_, self.lambda_
        radius = 1.0 / np.sqrt(lam)
        steps = 0
        for start in range(0, len(rows), int(self.batch_size)):
            batch = rows[start:start + int(self.batch_size)]
            self._t += 1
            eta = 1.0 / (lam * self._t)                               # Pegasos: η_t = 1/(λt)
            Zb = Z[batch]
            g = loss_derivatives(self.loss, Zb @ w, y[batch])
            w *= 1.0 - eta * lam                                      # = 0 at t = 1, as in Pegasos
            w -= (eta / len(batch)) * (Zb.T @ g)
            if self.loss == "hinge" and self.projection:
                norm = np.linalg.norm(w)
                if norm > radius:
                    w *= radius / norm
            steps += 1
        if not np.all(np.isfinite(w)):
            raise DivergenceError(f"Pegasos iterate became NaN/inf at iteration {self._t}")
        return steps


class SDCAFeaturesClassifier(_FixedFeatures):
    """SDCA on a fixed feature map: r-SDCA (random Fourier) / n-SDCA (Nyström)."""
    parameters = declare(
        feature_map=FEATURE_MAP,
        loss=param("hinge", "loss ℓ: hinge (Dai et al.'s K-SVM) or smooth_hinge", Choice("hinge", "smooth_hinge")),
        gamma=GAMMA, C=C, n_components=N_COMPONENTS,
        batch_size=param(64, "coordinates per iteration (visited one after another)", Integer(1, 10**7)),
        passes=PASSES, random_state=RANDOM_STATE)

    def _init_solver(self):
        self.core_ = _kernel_sgd.LinearSDCACore(n_samples=self._Z.shape[0], n_features=self._Z.shape[1],
                                                loss=code(self.loss), lam=self.lambda_)
        self.coef_ = self.core_.w                      # the core updates w in place

    partial_fit = not_offered("SDCA's dual variables belong to one fixed training set (use fit).")

    def _train_rows(self, X, Y, rows):
        status = self.core_.train(self._Z, np.ascontiguousarray(Y[:, 0]),
                                  np.ascontiguousarray(rows, dtype=np.int64))
        self.coef_ = self.core_.w
        if status != _kernel_sgd.OK:
            raise DivergenceError("SDCA produced a NaN/inf dual step: check the data for inf values")
        return -(-len(rows) // int(self.batch_size))

    @property
    def dual_coef_(self):
        return self.core_.alpha

    def duality_gap(self):
        """P(w(α)) − D(α) on the training set (before finish()); ≥ 0, 0 at the optimum."""
        if getattr(self, "_Z", None) is None:
            raise SolverError("duality_gap needs the training data: call it before finish()")
        Y = self._train_Y.ravel()
        w, alpha = self.coef_, self.core_.alpha
        primal = np.mean(loss_values(self.loss, self._Z @ w, Y)) + 0.5 * self.lambda_ * w @ w
        ay = alpha * Y
        conj = ay if self.loss == "hinge" else ay - 0.5 * ay ** 2
        return float(primal - (np.mean(conj) - 0.5 * self.lambda_ * w @ w))


# Dai et al. 2014's fixed-feature baselines: each solver on random Fourier features (r-) and on a
# Nyström map (n-)
for name, classifier, feature_map, description in (
        ("r-pegasos", PegasosClassifier, "random_fourier",
         "r-Pegasos: Pegasos on 2^8 fixed random Fourier features (scikit-learn RBFSampler)"),
        ("n-pegasos", PegasosClassifier, "nystroem",
         "n-Pegasos: Pegasos on a rank-2^8 Nyström map (scikit-learn Nystroem)"),
        ("r-sdca", SDCAFeaturesClassifier, "random_fourier",
         "r-SDCA: dual coordinate ascent on 2^8 fixed random Fourier features (RBFSampler)"),
        ("n-sdca", SDCAFeaturesClassifier, "nystroem",
         "n-SDCA: dual coordinate ascent on a rank-2^8 Nyström map (Nystroem)")):
    register_algorithm(name, classifier=classifier, tasks=("binary",), fixed={"feature_map": feature_map},
                       description=f"{description}; Dai et al. 2014 baseline",
                       smoke_params={"n_components": 32, "batch_size": 16})
