"""Exact kernel SVMs: the papers' "LIBSVM" baseline, and a parallel one for Gu et al.'s "LIBSVM(P)".

`libsvm`: LIBSVM through scikit-learn's SVC / SVR, one thread (the reference exact solver).
`libsvm-p`: the same SMO problem solved by oneDAL (Intel's data-analytics library, through
scikit-learn-intelex) on `threads` cores, standing in for the OpenMP build of LIBSVM that Gu et al.
(AAAI 2018) time against: the same dual (C, RBF γ, tolerance ε, ε-insensitive SVR), the same
one-vs-one multi-class scheme; its decision values agree with LIBSVM's to the solver tolerance
(tests/baselines/test_exact_svm.py), and scripts/bench_exact_svm.py measures both side by side.

Classification takes two or more classes (LIBSVM's one-vs-one), regression is ε-SVR. One `run`
step is the whole solve (to the solver's own tolerance `tol`), so the experiment loop records a single point
after training; later steps report no progress (converged).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC, SVR

from kernelbench._vocab import TASKS
from kernelbench.params import CACHE_MB, GAMMA, RANDOM_STATE, RBF_ONLY, THREADS, TOL, C, Real, declare, param
from kernelbench.algorithms import register_algorithm
from kernelbench.errors import require_extra
from kernelbench.solvers.base import PerClassDecisionMixin, RegressionMixin, Solver, not_offered, resolve_threads
from kernelbench.solvers.kernels import resolve_gamma

PARAMETERS = declare(
    C=C.but(doc="LIBSVM's C"),
    gamma=GAMMA,
    kernel=RBF_ONLY.but(doc="kernel (LIBSVM's RBF)"),
    tol=TOL.but(doc="LIBSVM's stopping tolerance ε"),
    cache_mb=CACHE_MB.but(doc="LIBSVM's kernel cache in MB"),
    # the same names for both task classes (registry.union); a classifier ignores it
    epsilon=param(0.1, "regression (SVR): ε of the ε-insensitive loss, the tube's half-width", Real(0)),
    random_state=RANDOM_STATE)
PARALLEL = declare(threads=THREADS.but(doc="cores oneDAL's solver and predictions use (0 = all cores)"))


class ExactSVM(Solver):
    """SVC/SVR behind the stepping protocol: step 1 solves the dual."""
    predicts_before_training = False       # no model until the dual is solved
    predict_parallelism = "rows"       # LIBSVM's predict releases the GIL, no shared scratch (base.py)
    partial_fit = not_offered("an exact SVM solves the dual of one fixed training set (use fit).")
    engine = "libsvm"
    # the solver draws nothing (gamma's data-derived value uses a fixed seed): every trial of a run,
    # which shares its split, gives the same model
    determinism = "identical results for the same data (an exact solver: no randomness)"

    @property
    def steps_per_pass(self) -> int:
        return 1

    def _feature_dtype(self):
        return np.float64

    def _estimator_class(self):
        if self.engine == "onedal":
            # optional (x86-64 wheels only): oneDAL's SVC / SVR through scikit-learn-intelex
            require_extra("sklearnex", "the oneDAL engine (libsvm-p, engine: onedal)")
            from sklearnex.svm import SVC as OneDALSVC
            from sklearnex.svm import SVR as OneDALSVR
            return OneDALSVC if self._is_classifier() else OneDALSVR
        return SVC if self._is_classifier() else SVR

    def _init_model(self, X):
        self.gamma_ = resolve_gamma(self.gamma, X, seed=0)
        options = dict(C=self.C, kernel=self.kernel, gamma=self.gamma_, tol=self.tol, cache_size=self.cache_mb)
        if not self._is_classifier():
            options["epsilon"] = self.epsilon
        if self.engine == "onedal":
            options["n_jobs"] = resolve_threads(self.threads)
        self.svm_ = self._estimator_class()(**options)

    def run(self, n_steps: int) -> int:
        if n_steps < 1 or self.n_iter_ >= 1:
            return 0                                   # solved already: nothing more to do
        X = self._train_X
        if sp.issparse(X):                             # LIBSVM wants int32 sparse indices
            X = sp.csr_matrix(X)
            X.indices = X.indices.astype(np.int32)
            X.indptr = X.indptr.astype(np.int32)
        self.svm_.fit(X, self._train_Y.ravel())
        self.converged_ = True                         # the experiment loop stops here
        self.n_iter_ = 1
        self.samples_seen_ = X.shape[0]
        return 1

    def _decision(self, X):
        if not self._is_classifier():
            return self.svm_.predict(X).reshape(-1, 1)
        F = self.svm_.decision_function(X)
        return F.reshape(-1, 1) if F.ndim == 1 else F

    def record(self) -> dict:
        return {**super().record(), "n_support_vectors": self.n_support_vectors_}

    @property
    def n_support_vectors_(self) -> int:
        return int(len(self.svm_.support_)) if hasattr(self.svm_, "support_") else 0


class ExactClassifierMixin(PerClassDecisionMixin):
    """Any number (≥ 2) of class labels, trained as their indices 0..k-1 (LIBSVM's one-vs-one for
    k > 2); decision_function is LIBSVM's: one column for two classes, one per class otherwise."""

    def _encode_targets(self, y, fitting, classes=None):
        if fitting:
            self._set_two_or_more_classes(y, classes, "an SVM")
        self._check_known_labels(y)
        return np.searchsorted(self.classes_, y).astype(np.float64).reshape(-1, 1)

    def _predict_multiclass(self, X, F):
        return self.classes_[self.svm_.predict(X).astype(int)]      # LIBSVM's one-vs-one vote


class LibSVMClassifier(ExactClassifierMixin, ExactSVM):
    parameters = PARAMETERS


class LibSVMRegressor(RegressionMixin, ExactSVM):
    parameters = PARAMETERS


class ParallelSVMClassifier(ExactClassifierMixin, ExactSVM):
    parameters = declare(PARAMETERS, PARALLEL)
    engine = "onedal"
    predict_parallelism = "internal"   # oneDAL threads its own predictions on `threads` cores
    determinism = ("identical results for the same thread count; across thread counts equal to the "
                   "solver's tolerance (parallel sums in another order)")


class ParallelSVMRegressor(RegressionMixin, ExactSVM):
    parameters = declare(PARAMETERS, PARALLEL)
    engine = "onedal"
    predict_parallelism = "internal"
    determinism = ParallelSVMClassifier.determinism


register_algorithm("libsvm", classifier=LibSVMClassifier, regressor=LibSVMRegressor, tasks=TASKS,
                   description="Exact kernel SVM: LIBSVM via scikit-learn's SVC / SVR (one-vs-one for "
                               "several classes; O(n²) memory and time)")
register_algorithm("libsvm-p", classifier=ParallelSVMClassifier, regressor=ParallelSVMRegressor, tasks=TASKS,
                   description="Parallel exact kernel SVM standing in for LIBSVM(P) (Gu et al.): oneDAL's "
                               "SVC / SVR through scikit-learn-intelex on `threads` cores",
                   requires=("sklearnex",))
