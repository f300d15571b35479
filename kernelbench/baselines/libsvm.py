"""Exact kernel SVM by LIBSVM, through scikit-learn's SVC: the papers' "LIBSVM" baseline.

One `run` step is the whole LIBSVM solve (it runs to its own convergence, tolerance `tol`), so
the runner records a single point after training; later steps report no progress (converged).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC

from kernelbench.registry import param_field as doc
from kernelbench.registry import register_algorithm
from kernelbench.solvers.base import BinaryClassifierMixin, IterativeEstimator
from kernelbench.solvers.kernels import resolve_gamma


@dataclass
class LibSVMParams:
    C: float = doc("LIBSVM's C", 1.0)
    gamma: float | str = doc("RBF width γ in exp(-γ‖x−x'‖²), or 'median' for the median trick", "median")
    kernel: Literal["rbf"] = doc("kernel (LIBSVM's RBF)", "rbf")
    tol: float = doc("LIBSVM's stopping tolerance ε", 1e-3)
    cache_mb: float = doc("LIBSVM's kernel cache in MB", 1000.0)


def _make(params: LibSVMParams, *, seed: int, task: str):
    return LibSVMClassifier(C=params.C, gamma=params.gamma, tol=params.tol, cache_mb=params.cache_mb,
                            random_state=seed)


register_algorithm("libsvm", factory=_make, tasks=("binary",),
                   description="Exact kernel SVM: LIBSVM via scikit-learn's SVC (O(n²) memory and time)",
                   smoke_params={})(LibSVMParams)


class LibSVMClassifier(BinaryClassifierMixin, IterativeEstimator):
    """SVC behind the stepping protocol: step 1 solves the dual with LIBSVM."""
    batch_size = 1
    predicts_before_training = False       # no model until LIBSVM has solved the dual
    predict_parallelism = "rows"       # GIL released, no shared scratch (LIBSVM's predict, base.py)

    def __init__(self, *, C=1.0, gamma="median", tol=1e-3, cache_mb=1000.0, random_state=None):
        self.C = C
        self.gamma = gamma
        self.tol = tol
        self.cache_mb = cache_mb
        self.random_state = random_state

    @property
    def steps_per_pass(self) -> int:
        return 1

    def _feature_dtype(self):
        return np.float64

    def _init_model(self, X):
        self.gamma_ = resolve_gamma(self.gamma, X, seed=0)
        self.svc_ = SVC(C=self.C, kernel="rbf", gamma=self.gamma_, tol=self.tol,
                        cache_size=self.cache_mb)

    def fit(self, X, y):
        self.begin(X, y)
        self.run(1)
        return self.finish()

    def run(self, n_steps: int) -> int:
        if n_steps < 1 or self.n_iter_ >= 1:
            return 0                                   # solved already: nothing more to do
        X = self._train_X
        if sp.issparse(X):                             # LIBSVM wants int32 sparse indices
            X = sp.csr_matrix(X)
            X.indices = X.indices.astype(np.int32)
            X.indptr = X.indptr.astype(np.int32)
        self.svc_.fit(X, self._train_Y.ravel())
        self.converged_ = True                         # the runner stops here
        self.n_iter_ = 1
        self.samples_seen_ = X.shape[0]
        return 1

    def _decision(self, X):
        return self.svc_.decision_function(X).reshape(-1, 1)

    @property
    def n_support_vectors_(self) -> int:
        return int(self.svc_.n_support_.sum()) if hasattr(self.svc_, "n_support_") else 0
