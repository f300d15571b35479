"""RFF + SGD: the large-scale pipeline a user picks when no paper is followed -- scikit-learn's
RBFSampler (random Fourier features, Rahimi & Recht: z(x) = √(2/D) cos(Ωx + b), so z(x)·z(x') ≈
exp(−γ‖x − x'‖²)) feeding SGDClassifier (hinge loss, scikit-learn's default α = 1e-4) by
`partial_fit` over chunks of rows. A peer for equal-time comparisons (`kernelbench bench`), not a
paper's baseline.

One iteration transforms one chunk of `chunk_rows` consecutive training rows and makes one
`partial_fit` call on it; a pass visits the chunks in order. The n × D feature matrix never exists
at full size (4.5 M × 2048 floats: 74 GB): transformed chunks are kept for later passes only while
they fit in `cache_mb`. RBFSampler draws Ω and b from the dimension alone, and γ from the
training data ('median': the median trick, as our solvers resolve it).
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import SGDClassifier

from kernelbench.params import C, GAMMA, NONE, PASSES, POSITIVE, RANDOM_STATE, THREADS, Integer, declare, param
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers.base import BinaryClassifierMixin, Solver, as_dense, blas_threads, not_offered, resolve_threads
from kernelbench.solvers.kernels import resolve_gamma

PREDICT_ROWS = 50_000             # rows transformed at a time when predicting (bounded memory)
DEFAULT_ALPHA = 1e-4              # SGDClassifier's default L2 penalty: what a user who picks the pipeline gets


def seed_of(random_state) -> int:
    """The integer seed a peer hands to its own generators and to the median trick (None: 0)."""
    return 0 if random_state is None else int(random_state)


class RFFSGDClassifier(BinaryClassifierMixin, Solver):
    """scikit-learn's RBFSampler + SGDClassifier(loss="hinge") by partial_fit over row chunks."""
    parameters = declare(
        gamma=GAMMA,
        n_components=param(2048, "random Fourier features D (RBFSampler's n_components)", Integer(1, 10**6)),
        C=C.but(default=None, allowed=(POSITIVE, NONE),
                doc="regularisation, λ = 1/(n·C) as for every solver here (SGDClassifier's alpha = λ); "
                    "null: scikit-learn's default alpha, 1e-4"),
        chunk_rows=param(10_000, "training rows per partial_fit call (one iteration)", Integer(1, 10**8)),
        cache_mb=param(2048.0, "keep the transformed chunks for later passes while n·D floats fit in this "
                               "many MB", POSITIVE),
        threads=THREADS.but(doc="BLAS threads of the transform and of predictions"),
        passes=PASSES, random_state=RANDOM_STATE)
    predicts_before_training = False       # SGDClassifier has no coefficients before its first call
    partial_fit = not_offered("one iteration is already a partial_fit call on a chunk (use fit).")
    determinism = "identical results for the same seed"
    _training_only = ("_chunks",)

    def _feature_dtype(self):
        return np.float64

    @property
    def steps_per_pass(self) -> int:
        return math.ceil(self._train_X.shape[0] / self.chunk_rows)

    def _init_model(self, X):
        seed = seed_of(self.random_state)
        X = self._dense_train_X()              # γ from the features the model trains on
        self.gamma_ = resolve_gamma(self.gamma, X, seed=seed)
        self.map_ = RBFSampler(gamma=self.gamma_, n_components=int(self.n_components), random_state=seed)
        self.map_.fit(X[:1])                              # Ω and b need only the dimension
        alpha = DEFAULT_ALPHA if self.C is None else 1.0 / (X.shape[0] * self.C)
        self.sgd_ = SGDClassifier(loss="hinge", alpha=alpha, random_state=seed)
        self.n_random_features_ = int(self.n_components)
        self._chunks = {}
        self._keep = X.shape[0] * int(self.n_components) * 8 <= self.cache_mb * 2**20

    def run(self, n_steps: int) -> int:
        X, y = self._dense_train_X(), self._train_Y.ravel()
        rows, per_pass = int(self.chunk_rows), self.steps_per_pass
        with blas_threads(resolve_threads(self.threads)):
            for _ in range(n_steps):
                r0 = (self.n_iter_ % per_pass) * rows
                Z = self._chunks.get(r0)
                if Z is None:
                    Z = self.map_.transform(X[r0:r0 + rows])
                    if self._keep:
                        self._chunks[r0] = Z
                self.sgd_.partial_fit(Z, y[r0:r0 + rows], classes=np.array([-1.0, 1.0]))
                self.n_iter_ += 1
                self.samples_seen_ += Z.shape[0]
        return n_steps

    def _decision(self, X):
        out = np.empty(X.shape[0])
        with blas_threads(resolve_threads(self.threads)):
            for r0 in range(0, X.shape[0], PREDICT_ROWS):
                Z = self.map_.transform(as_dense(X[r0:r0 + PREDICT_ROWS], np.float64))
                out[r0:r0 + PREDICT_ROWS] = self.sgd_.decision_function(Z)
        return out.reshape(-1, 1)

    def record(self) -> dict:
        return {**super().record(), "n_features": self.n_random_features_}


register_algorithm(
    "rff-sgd", classifier=RFFSGDClassifier, tasks=("binary",),
    description="RFF + SGD: scikit-learn RBFSampler (2048 random Fourier features) + SGDClassifier "
                "(hinge) by partial_fit over row chunks; the user's large-scale pipeline, a peer",
    smoke_params={"n_components": 64, "chunk_rows": 64},
)
