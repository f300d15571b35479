"""Exact kernel SVM by LIBSVM, through scikit-learn's SVC: the papers' "LIBSVM" baseline.

One `run` step is the whole LIBSVM solve (it runs to its own convergence, tolerance `tol`), so
the runner records a single point after training; later steps report no progress (converged).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC

from kernelbench.params import C, CACHE_MB, GAMMA, RANDOM_STATE, RBF_ONLY, TOL, declare
from kernelbench.registry import register_algorithm
from kernelbench.solvers.base import BinaryClassifierMixin, Solver, not_offered
from kernelbench.solvers.kernels import resolve_gamma


PARAMETERS = declare(
    C=C.but(doc="LIBSVM's C"),
    gamma=GAMMA,
    kernel=RBF_ONLY.but(doc="kernel (LIBSVM's RBF)"),
    tol=TOL.but(doc="LIBSVM's stopping tolerance ε"),
    cache_mb=CACHE_MB.but(doc="LIBSVM's kernel cache in MB"),
    random_state=RANDOM_STATE)


class LibSVMClassifier(BinaryClassifierMixin, Solver):
    """SVC behind the stepping protocol: step 1 solves the dual with LIBSVM."""
    parameters = PARAMETERS
    predicts_before_training = False       # no model until LIBSVM has solved the dual
    predict_parallelism = "rows"       # GIL released, no shared scratch (LIBSVM's predict, base.py)

    @property
    def steps_per_pass(self) -> int:
        return 1

    def _feature_dtype(self):
        return np.float64

    def _init_model(self, X):
        self.gamma_ = resolve_gamma(self.gamma, X, seed=0)
        self.svc_ = SVC(C=self.C, kernel=self.kernel, gamma=self.gamma_, tol=self.tol,
                        cache_size=self.cache_mb)

    partial_fit = not_offered("LIBSVM solves the dual of one fixed training set (use fit).")

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

    def record(self) -> dict:
        return {**super().record(), "n_support_vectors": self.n_support_vectors_}

    @property
    def n_support_vectors_(self) -> int:
        return int(self.svc_.n_support_.sum()) if hasattr(self.svc_, "n_support_") else 0


register_algorithm("libsvm", classifier=LibSVMClassifier, tasks=("binary",),
                   description="Exact kernel SVM: LIBSVM via scikit-learn's SVC (O(n²) memory and time)")
