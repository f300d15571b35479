"""AsyGCD: asynchronous parallel greedy coordinate descent on the kernel SVM dual
(You, Lian, Liu, Yu, Dhillon, Demmel, Hsieh, NIPS 2016) — the AsyGCD baseline of Gu et al. (AAAI 2018,
Table 2 and Fig. 1).

    min_α ½ αᵀQα − eᵀα,  0 ≤ α_i ≤ C,  Q_ij = y_i y_j exp(−γ‖x_i − x_j‖²)      (no bias term)

The coordinates are split into one block per thread (by k-means, as the authors' code does, so the
blocks interact weakly; or at random). Each thread greedily picks the coordinate of its block with
the largest clipped Newton step, updates it exactly, and adds δ·Q[i, :] to the shared gradient
without locks. The compiled loop, its races and the kernel-row cache are described in _asygcd.pyx.

Runner protocol: one iteration = one coordinate update per thread, so a pass (steps_per_pass) is
n coordinate updates in all; samples_seen counts coordinate updates. The run ends (converged_)
when the largest KKT violation (projected gradient) is at most `tol`, checked on a gradient
recomputed exactly from α (so a gradient that drifted under races cannot fake convergence).
"""
from __future__ import annotations

import math
import time

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans

from kernelbench.params import (C, CACHE_MB, GAMMA, PASSES, POSITIVE, RANDOM_STATE, RBF_ONLY, THREADS, TOL,
                                Choice, Integer, Real, declare, param)
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers import _asygcd
from kernelbench.solvers.base import (BinaryClassifierMixin, BudgetExceededError, Solver,
                                      blas_threads, not_offered, resolve_threads)
from kernelbench.solvers.kernels import resolve_gamma

MB = 2**20
SPARSE_DENSITY = 0.3          # storage="auto": CSR when fewer than 30% of the entries are nonzero
PREDICT_CHUNK_BYTES = 16 * MB  # the (rows × support vectors) dot-product block of one predict chunk


PARAMETERS = declare(
    C=C.but(doc="box constraint 0 ≤ α_i ≤ C of the SVM dual (LIBSVM's C)"),
    gamma=GAMMA,
    kernel=RBF_ONLY.but(doc="kernel (RBF: Q_ii = 1, so a coordinate step is exact)"),
    # tol = 0 is allowed (not by LIBSVM): the run then ends by its stop rule, not by convergence
    tol=TOL.but(doc="stop when every KKT violation |projected gradient| ≤ tol (LIBSVM's ε)",
                allowed=(Real(0),)),
    cache_mb=CACHE_MB.but(doc="kernel-row cache (float32 rows of Q) in MB, split evenly between threads; "
                              "at least one row per thread is always kept"),
    threads=THREADS.but(doc="OpenMP threads, one block of coordinates each (0 = all cores)"),
    partition=param("kmeans", "how coordinates are split between threads: k-means clusters (the authors' "
                              "code; blocks interact weakly) or a random balanced split; irrelevant with "
                              "1 thread", Choice("kmeans", "random")),
    gradient_update=param(
        "per_thread",
        "how threads add δ·Q[i,:] to the gradient without locks: per_thread = each thread adds to "
        "its own part, g = −e + Σ parts (no atomics, no lost update; a scan reads all parts); "
        "atomic = lock-free atomic adds to one vector (the authors' code; no update lost, but a "
        "locked op per entry, more CPU per update than per_thread); racy = plain adds to one vector (a "
        "concurrent add can be lost; the gradient is recomputed from α after every pass, and once a "
        "pass loses as much as the KKT violation left, the adds become atomic). 1 thread: plain adds",
        Choice("per_thread", "atomic", "racy")),
    storage=param("auto", "training data layout for kernel rows: dense feature-major, CSR, or auto (CSR "
                          "below 30% nonzeros)", Choice("auto", "dense", "sparse")),
    max_samples=param(1_000_000, "training sets larger than this are skipped (a pass costs O(n²·d): one "
                                 "n-long kernel row per update)", Integer(1)),
    max_memory_mb=param(8192.0, "memory budget (cache + data copy + O(n) vectors) in MB; beyond it the "
                                "run is skipped", POSITIVE),
    passes=PASSES, random_state=RANDOM_STATE)


class AsyGCDClassifier(BinaryClassifierMixin, Solver):
    """Kernel SVM (hinge loss, RBF kernel, no bias) trained by AsyGCD. Labels may be any two values.

    After fit: `support_` (training indices with α > 0), `support_vectors_`, `dual_coef_`
    (α_i y_i of the support vectors), `alpha_` (all α, training order); predictions use the
    support vectors only."""
    parameters = PARAMETERS
    loss_ = "hinge"    # the SVM's loss, fixed (objectives.py reads it)
    determinism = ("threads=1: identical results for the same data (the method has no randomness); "
                   "threads>1: asynchronous, results differ from run to run")
    _training_only = ("_X_int", "_y_int", "_perm")
    predict_parallelism = "internal"   # OpenMP + BLAS on `threads`, chunked inside (base.py)

    def _feature_dtype(self):
        return np.float64

    # ---- set-up ------------------------------------------------------------------------------
    def _init_model(self, X):
        n, d = X.shape
        if n > self.max_samples:
            raise BudgetExceededError(
                f"AsyGCD: {n:,} training samples exceed max_samples={self.max_samples:,}: every "
                f"coordinate update computes an {n:,}-long kernel row, so one pass costs O(n²·d). "
                "Subsample the data (dataset.subsample) or raise max_samples.")
        self.gamma_ = resolve_gamma(self.gamma, X, kernel="rbf", seed=0)
        threads = min(resolve_threads(self.threads), n)
        sparse = self._use_sparse(X)
        perm, blocks = self._partition(X, threads)
        Xs = X if sp.issparse(X) else None
        if sparse:
            X_int = sp.csr_matrix(X, dtype=np.float64)[perm]
            X_int.sum_duplicates()
            X_int.sort_indices()
            data_bytes = X_int.data.nbytes * 2 + X_int.indptr.size * 8
        else:
            X_int = (Xs.toarray() if Xs is not None else np.asarray(X, dtype=np.float64))[perm]
            X_int = np.ascontiguousarray(X_int, dtype=np.float64)
            data_bytes = 2 * X_int.nbytes             # our copy + its feature-major copy in the core
        row_bytes = 4 * n
        per_thread = int(self.cache_mb * MB / threads // row_bytes)
        largest_block = int(np.max(np.diff(blocks)))
        slots = max(1, min(per_thread, largest_block))
        need = slots * threads * row_bytes + data_bytes + 8 * n * 8
        if need > self.max_memory_mb * MB:
            raise BudgetExceededError(
                f"AsyGCD needs about {need / MB:,.0f} MB (kernel-row cache {slots * threads} rows × "
                f"{row_bytes / MB:.2f} MB + data {data_bytes / MB:,.0f} MB + vectors), over "
                f"max_memory_mb={self.max_memory_mb:g}. Lower cache_mb, subsample the data, or "
                "raise max_memory_mb.")
        y_int = self._train_Y.ravel()[perm]
        self._X_int, self._y_int, self._perm = X_int, y_int, perm
        core_data = (dict(csr=(X_int.indptr, X_int.indices, X_int.data, d)) if sparse
                     else dict(X=X_int))
        self.core_ = _asygcd.AsyGCDCore(
            **core_data, y=y_int, gamma=self.gamma_, C=float(self.C), tol=float(self.tol),
            blocks=blocks, slots_per_thread=slots,
            atomic=self.gradient_update == "atomic",
            per_thread=self.gradient_update == "per_thread")
        self.threads_ = threads
        self.storage_ = "sparse" if sparse else "dense"
        self.converged_ = False
        self.gradient_drift_ = float("nan")
        self.gradient_refreshes_ = 0
        self.atomic_from_update_ = None     # racy: the update from which the adds became atomic
        self.cpu_seconds_ = 0.0
        self._model_at = None
        self._sync_model()

    def _use_sparse(self, X):
        if self.storage != "auto":
            return self.storage == "sparse"
        nnz = X.nnz if sp.issparse(X) else np.count_nonzero(X)
        return nnz < SPARSE_DENSITY * X.shape[0] * X.shape[1]

    def _partition(self, X, threads):
        """Internal order (a permutation of the rows) and block boundaries: thread t owns
        internal coordinates blocks[t] .. blocks[t+1]-1. One thread: the data order as given."""
        n = X.shape[0]
        if threads == 1:
            return np.arange(n), np.array([0, n], dtype=np.int64)
        seed = int(np.random.default_rng(self.random_state).integers(2**31 - 1))
        if self.partition == "kmeans":
            # The authors' code: 10 Lloyd iterations, one cluster per thread (their §4: blocks
            # that interact weakly make the asynchronous updates less conflicting).
            labels = KMeans(n_clusters=threads, n_init=1, max_iter=10,
                            random_state=seed).fit_predict(X)
            perm = np.argsort(labels, kind="stable")
            counts = np.bincount(labels, minlength=threads)
        else:
            perm = np.random.default_rng(seed).permutation(n)
            counts = np.full(threads, n // threads)
            counts[: n % threads] += 1
        return perm, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    # ---- the stepping protocol ---------------------------------------------------------------
    @property
    def steps_per_pass(self) -> int:
        """One iteration = one coordinate update per thread: a pass is n updates in all."""
        return math.ceil(self._train_X.shape[0] / self.threads_)

    def run(self, n_steps: int) -> int:
        """Up to n_steps updates per thread (all threads concurrently); then, if the maintained
        gradient says KKT holds to tol, recompute it exactly from α and re-check."""
        if n_steps < 1 or self.converged_:
            return 0
        cpu_started = time.process_time()
        core, left = self.core_, int(n_steps)
        # Lock-free plain adds at 2+ threads lose some of the gradient's updates. Left alone, the drift
        # steers the greedy choice to coordinates that only look violated, and the run may never reach
        # tol (measured: 200-row moons, 2 threads, 150 of 150 fits unconverged after 2,000 passes).
        # Recomputing g from α after every pass bounds the drift to one pass's lost adds.
        racy = self.gradient_update == "racy" and self.threads_ > 1
        while left > 0:
            with blas_threads(1):
                updates = core.run(min(left, self.steps_per_pass) if racy else left)
            self.samples_seen_ += updates
            left -= max(1, updates // self.threads_)
            if not racy and _max_violation(core.alpha, core.gradient(), self.C) > self.tol:
                continue           # some thread still had work: it did all its steps
            self._refresh_gradient()
            violation = _max_violation(core.alpha, core.gradient(), self.C)
            if violation <= self.tol:
                self.converged_ = True
                break
            # A lost add of size d makes a later step on that coordinate wrong by d, which moves α
            # and the gradient by d again: once one pass loses as much as the KKT violation left,
            # plain adds feed themselves and the run circles at a worse objective (measured: 200-row
            # moons, 2 threads in parallel, 13 of 50 fits ended at 0.65-0.98 of the optimal dual
            # after 2,000 passes). From there on the adds are atomic, which lose nothing.
            if racy and not core.atomic and self.gradient_drift_ >= violation:
                core.atomic = True
                self.atomic_from_update_ = int(self.samples_seen_)
        self.n_iter_ += n_steps
        self.cpu_seconds_ += time.process_time() - cpu_started
        return n_steps

    def finish(self):
        if hasattr(self, "core_"):
            self._sync_model()
            self.alpha_ = self._training_order(self.core_.alpha)
            self.grad_ = self._training_order(self.core_.gradient())   # g = Qα − e
            self.cache_hits_ = self.core_.cache_hits
            self.cache_misses_ = self.core_.cache_misses
            del self.core_
        return super().finish()

    partial_fit = not_offered("the dual variables belong to one fixed training set (use fit).")

    # ---- the model: support vectors only ----------------------------------------------------
    def _sync_model(self):
        """Support vectors and coefficients from the current α (called before predicting, so
        outside the experiment loop's timer)."""
        if getattr(self, "_model_at", None) == self.core_.updates:
            return
        alpha, y_int = self.core_.alpha, self._y_int
        sv = np.flatnonzero(alpha > 0)
        self.support_ = self._perm[sv]
        self.support_vectors_ = self._X_int[sv]
        self.dual_coef_ = alpha[sv] * y_int[sv]
        self._model_at = self.core_.updates
        sv_X = self.support_vectors_
        self._sv_sq = (np.asarray(sv_X.multiply(sv_X).sum(axis=1)).ravel() if sp.issparse(sv_X)
                       else np.einsum("ij,ij->i", sv_X, sv_X))

    def _training_order(self, v):
        out = np.empty_like(v)
        out[self._perm] = v
        return out

    def _decision(self, X):
        """f(x) = Σ_{α_s > 0} α_s y_s k(x_s, x), chunked: dot products by BLAS (or sparse
        products), exp and sum compiled."""
        if hasattr(self, "core_"):
            self._sync_model()
        S, coef, sq_s = self.support_vectors_, self.dual_coef_, self._sv_sq
        m = X.shape[0]
        out = np.zeros(m)
        if len(coef) == 0 or m == 0:
            return out.reshape(-1, 1)
        threads = getattr(self, "threads_", None) or resolve_threads(self.threads)
        if sp.issparse(X) and not sp.issparse(S) and X.shape[1] <= 1000:
            X = X.toarray()
        X = X.astype(np.float64, copy=False)          # float32 input: the model is float64
        sq_x = (np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X)
                else np.einsum("ij,ij->i", X, X))
        chunk = max(1, PREDICT_CHUNK_BYTES // (8 * len(coef)))
        with blas_threads(threads):
            for r0 in range(0, m, chunk):
                dots = X[r0:r0 + chunk] @ S.T
                dots = np.ascontiguousarray(dots.toarray() if sp.issparse(dots) else dots,
                                            dtype=np.float64)
                _asygcd.rbf_expand(dots, np.ascontiguousarray(sq_x[r0:r0 + chunk]), sq_s,
                                   self.gamma_, coef, out[r0:r0 + chunk], threads)
        return out.reshape(-1, 1)

    def _refresh_gradient(self):
        """g = Qα − e recomputed from α: g_j = y_j f(x_j) − 1 (the predictor on the training
        rows). Records the largest drift of the maintained gradient."""
        self._sync_model()
        exact = self._y_int * self._decision(self._X_int).ravel() - 1.0
        g = self.core_.gradient()
        self.gradient_drift_ = float(np.max(np.abs(g - exact))) if len(g) else 0.0
        self.core_.set_gradient(exact)
        self.gradient_refreshes_ += 1

    # ---- what the experiment loop records ------------------------------------------------------------
    def record(self) -> dict:
        return {**super().record(), "n_support_vectors": self.n_support_vectors_}

    @property
    def n_support_vectors_(self) -> int:
        if hasattr(self, "core_"):
            return int(np.count_nonzero(self.core_.alpha > 0))
        return int(len(self.dual_coef_)) if hasattr(self, "dual_coef_") else 0

    def _state(self):
        if hasattr(self, "core_"):
            return self.core_.alpha, self.core_.gradient()
        return self.alpha_, self.grad_

    def dual_objective(self) -> float:
        """D(α) = ½ αᵀQα − eᵀα = ½ αᵀ(g − e) on the training set (g = Qα − e as maintained)."""
        alpha, g = self._state()
        return float(0.5 * np.dot(alpha, g - 1.0))

    def penalty(self) -> float:
        """Ω(f) = λ/2 ‖f‖², λ = 1/(n C), ‖f‖² = αᵀQα = αᵀ(g + e): with the mean hinge loss, the primal
        objective in DSG's normalisation (the column compares with DSG's hinge runs). At the optimum
        (on the whole training set) it equals −D(α*)/(n C)."""
        alpha, g = self._state()
        norm_sq = float(np.dot(alpha, g + 1.0))
        n = len(alpha)
        return norm_sq / (2.0 * n * self.C)

    def counters(self) -> dict:
        alpha, g = self._state()
        hits = self.core_.cache_hits if hasattr(self, "core_") else self.cache_hits_
        misses = self.core_.cache_misses if hasattr(self, "core_") else self.cache_misses_
        return {
            "n_support_vectors": self.n_support_vectors_,
            "n_bounded_support_vectors": int(np.count_nonzero(alpha >= self.C)),
            "cache_hit_rate": hits / (hits + misses) if hits + misses else 0.0,
            "kernel_rows_computed": misses,
            "coordinate_updates": int(self.samples_seen_),
            "dual_objective": self.dual_objective(),
            "max_violation": _max_violation(alpha, g, self.C),
            # largest |maintained − exact| gradient entry at the last exact recomputation
            "gradient_drift": None if math.isnan(self.gradient_drift_) else self.gradient_drift_,
            # CPU time of all threads inside run(): next to the wall-clock train_seconds it shows
            # how much of a core the run got on a shared machine (threads=1: ≈ train_seconds idle)
            "cpu_seconds": self.cpu_seconds_,
            "converged": bool(self.converged_),           # KKT holds to tol: the run ended there
        }


def _max_violation(alpha, g, C) -> float:
    """max_i |projected gradient_i|: the KKT violation of the box-constrained dual."""
    pg = np.where(alpha <= 0, np.minimum(g, 0.0), np.where(alpha >= C, np.maximum(g, 0.0), g))
    return float(np.max(np.abs(pg))) if len(pg) else 0.0


register_algorithm(
    "asygcd", classifier=AsyGCDClassifier, tasks=("binary",),
    description="AsyGCD: asynchronous greedy coordinate descent on the kernel SVM dual, no bias "
                "(You et al. NIPS 2016; baseline of Gu et al. AAAI 2018)",
    smoke_params={"cache_mb": 20.0},
)
