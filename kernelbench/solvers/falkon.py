"""Falkon: Nyström kernel ridge regression by preconditioned conjugate gradient (Rudi, Carratino &
Rosasco, "FALKON: An optimal large scale kernel method", NIPS 2017, Alg. 1; Meanti et al.,
"Kernel methods through the roof", NeurIPS 2020).

The problem. M Nyström centres c_1..c_M, drawn uniformly without replacement from the training
rows (seeded by `random_state`; all rows when n ≤ M), restrict f to f(x) = Σ_j α_j k(x, c_j), with
the Gaussian kernel k(x, c) = exp(−γ‖x − c‖²). Nyström KRR:

    min_α  J(α) = (1/n)‖K_nM α − y‖² + λ αᵀ K_MM α,    λ = 1/(n·C)
    ⇔      H α = K_nMᵀ y,      H = K_nMᵀ K_nM + λ n K_MM.

With M = n this is exact kernel ridge regression, (K + λnI) α = y: scikit-learn's
KernelRidge(alpha=λn = 1/C) (tests/solvers/test_falkon.py checks it).

The preconditioner (the paper's §3, B = (1/√n) T⁻¹ A⁻¹), as Alg. 1 computes it:

    T = chol(K_MM + ε M I)                    upper triangular, TᵀT = K_MM + εM I
    A = chol(T Tᵀ / M + λ I)                  upper triangular

BBᵀ approximates H⁻¹ by the Nyström approximation of K_nMᵀK_nM by (n/M) K_MM² (the centres are a
uniform sample of the rows), so the preconditioned system is well conditioned and a few CG
iterations suffice (the paper's analysis: t of order log n) once M is large enough for λ. CG
runs on the variables β with α = Bβ; as in Alg. 1 the factors 1/√n are folded into H/n:

    W β = r,   W u = A⁻ᵀ( T⁻ᵀ K_nMᵀ K_nM T⁻¹ A⁻¹ u / n + λ A⁻¹ u ),   r = A⁻ᵀ T⁻ᵀ K_nMᵀ y / n,
    α = T⁻¹ A⁻¹ β                             (Alg. 1: BHB, r, `alpha = T\\(A\\conjgrad(BHB, r, t))`)

(λ A⁻ᵀA⁻¹ u is Bᵀ λ TᵀT B u: W is BᵀHB with K_MM + εMI for K_MM). ε is the machine epsilon of the
kernel blocks' precision (Alg. 1's MATLAB `eps` in double precision); where K_MM is singular to
that precision (duplicated centres) the jitter εM is raised tenfold until the factorisation
succeeds, and `jitter_` records the value used.

Computation. One CG iteration applies W once, i.e. one pass over the data: K_nMᵀ(K_nM v) (Alg. 1's
KnM_times_vector). Dense rows stream through the compiled pass of solvers/_nystrom.pyx: each OpenMP
thread (`threads`) takes chunks of rows, computes their M kernel values from the expansion
‖x − c‖² = ‖x‖² + ‖c‖² − 2 x·c, clipped at 0, as one product of rows augmented with their squared
norms ([x, ‖x‖², 1]·[2γc, −γ, −γ‖c‖²]ᵀ = −γ‖x − c‖²), exponentiates them and uses them at once in
both products, in float64 sums. Nothing of size n·M exists. Sparse (CSR) rows, and a cached K_nM,
go block by block through NumPy (`block_size` rows per block, with the compiled exp). Memory while
training: the two M×M factors (float64; K_MM and T T^T/M + λI are factorised in place), the
centres, the CG vectors and, on the block path, one block (block_size·M in `dtype`): 16 M² +
block_size·M·itemsize + O(M·d) bytes besides the data (M ≤ about 22,600 in 8 GiB with float32
blocks of 4096 rows); finish() drops the factors, leaving the centres and α. K_nM is kept only if it
fits `kernel_cache_bytes`: then it is computed once during set-up and each iteration is two
matrix-vector products over it. It pays where it fits: on ijcnn1 (n = 49,990, two cores, float32)
an iteration took 0.10 s cached against 0.56 s recomputed by NumPy blocks at M = 4096 (K_nM:
0.8 GB), 0.022 s against 0.13 s at M = 1024 (0.2 GB). The kernel values are in `dtype` (float32
by default); the M×M algebra, α, β and the CG vectors in float64. BLAS (the block path's
products, scipy's triangular solves) runs on the threads it is given; nothing here changes them.
Where λ is far below εM (float32: εM ≈ 1.2e-4 at M = 1024) the jitter also regularises the
preconditioner, and runs in float32 and float64 differ by it more than by rounding: on ijcnn1 with
λ = 1e-6, float32 reached a lower J in 10 and 20 iterations, and float64 given float32's jitter
follows float32 to four digits.

Multi-class: one-vs-all targets (±1) solved jointly (Y is n×K; each pass multiplies all K
columns, each column has its own CG step sizes); binary: one column of ±1 labels, predict its
sign; regression: y itself.

The stepping protocol: begin() is the set-up (centres, γ, K_MM, the two Choleskys, r = one pass
for K_nMᵀy); one run step is one CG iteration (= one pass: `steps_per_pass` is 1, so "passes"
count CG iterations). The run ends (converged_) after `max_iter` iterations, or earlier when every
column's residual ‖r_k‖ ≤ tol·‖r_0‖ (the preconditioned residual; CG starts at β = 0; the counter
cg_residual says which); fit makes max_iter iterations. The objective column (objectives.py) is
R(f) = mean (f − y)²/2 + λ/2 αᵀK_MMα on the rows the experiment loop evaluates it on, i.e. J/2 there
(averaged over the K columns); the counters add J(α) on the whole training set, read off CG's own
vectors at no cost
(J = ‖y‖²/n − βᵀ(r_0 + r), since Wβ = r_0 − r), and the relative residual.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError, cholesky, solve_triangular

from kernelbench._vocab import TASKS
from kernelbench.errors import SolverError
from kernelbench.params import (
    DTYPE,
    GAMMA,
    RANDOM_STATE,
    THREADS,
    TOL,
    C,
    Integer,
    declare,
    param,
)
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers._nystrom import (
    exp_nonpositive,
    kernel_values,
    stored_products,
    streamed_products,
)
from kernelbench.solvers.base import (
    DivergenceError,
    PerClassDecisionMixin,
    RegressionMixin,
    Solver,
    not_offered,
    resolve_threads,
)
from kernelbench.solvers.kernels import resolve_gamma

MAX_JITTER_RAISES = 12      # εM·10^12 at most: beyond that K_MM is not a kernel matrix (NaN, inf)

PARAMETERS = declare(
    C=C.but(doc="regularisation: λ = 1/(n·C) in (1/n)‖K_nM α − y‖² + λ αᵀK_MM α (KernelRidge's alpha = 1/C)"),
    gamma=GAMMA,
    n_centers=param(1024, "M, the number of Nyström centres, drawn uniformly from the training rows "
                          "(every row when n ≤ M)", Integer(1, 10**6)),
    max_iter=param(20, "conjugate-gradient iterations t (Falkon's; each is one pass over the data)",
                   Integer(1, 10**6)),
    tol=TOL.but(default=1e-7, doc="CG ends early when every column's preconditioned residual is below tol "
                                  "times its initial value"),
    block_size=param(4096, "rows per kernel block K(X_b, C) of sparse rows or a cached K_nM (block_size·M "
                           "values in memory at a time), and rows per predict call",
                     Integer(1, 10**7)),
    dtype=DTYPE.but(doc="precision of the kernel blocks (features, centres); the M×M factors, α and the "
                        "CG vectors are float64"),
    kernel_cache_bytes=param(0, "keep K_nM (computed once in the set-up) when its n·M values fit in this many "
                                "bytes; 0: recompute it in every pass", Integer(0, None)),
    threads=THREADS.but(default=0, doc="OpenMP threads of the passes over the data (0 = all cores); the M×M "
                                       "algebra runs on BLAS's own threads"),
    random_state=RANDOM_STATE)


class _Falkon(Solver):
    """Falkon: Nyström kernel ridge regression solved by Falkon-preconditioned CG."""
    parameters = PARAMETERS
    loss_ = "squared"                  # the loss of its objective (losses.py): (f − y)²/2
    predict_parallelism = "internal"   # OpenMP on `threads`, one block at a time
    determinism = ("identical results for the same seed, thread count and BLAS thread count (the passes "
                   "sum each thread's rows apart, BLAS its own way)")
    partial_fit = not_offered("Falkon solves the Nyström system of one fixed training set (use fit).")
    _training_only = ("_rows", "_row_terms", "_kernel_cache")

    @property
    def steps_per_pass(self) -> int:
        return 1                       # one CG iteration is one pass over the data

    def planned_steps(self, fraction: float = 1.0) -> int:
        return max(1, math.ceil(fraction * self.max_iter))

    # ---- set-up: centres, preconditioner, right-hand side ------------------------------------
    def _init_model(self, X):
        dtype = np.dtype(self.dtype)
        n = X.shape[0]
        self.converged_ = False
        self._threads = resolve_threads(self.threads)
        rng = np.random.default_rng(self.random_state)
        self.gamma_ = resolve_gamma(self.gamma, X, kernel="rbf", seed=int(rng.integers(2**31 - 1)))
        self.lambda_ = 1.0 / (n * self.C)
        M = min(int(self.n_centers), n)
        chosen = np.sort(rng.choice(n, size=M, replace=False))   # sorted: rows read in memory order
        centers = X[chosen]
        self.centers_ = np.asarray(centers.toarray() if sp.issparse(centers) else centers, dtype=np.float64)
        self.center_indices_ = chosen
        # the centres' side of −γ‖x − c‖² = [x, ‖x‖², 1]·[2γc, −γ, −γ‖c‖²]ᵀ, in both precisions
        self._centers64 = _center_terms(self.centers_, self.gamma_, np.float64)
        self._centers_w = _center_terms(self.centers_, self.gamma_, dtype)
        self._centers_wt = np.ascontiguousarray(self._centers_w.T)    # p × M: the compiled passes' layout

        # the training rows as the passes read them: dense rows with ‖x‖² and 1 appended (one
        # GEMM per block), or CSR rows with −γ‖x‖² kept apart
        if sp.issparse(X):
            self._rows = sp.csr_matrix(X, dtype=dtype)
            self._row_terms = -self.gamma_ * np.asarray(self._rows.multiply(self._rows).sum(axis=1),
                                                        dtype=dtype).ravel()
        else:
            self._rows = _augment(X, dtype)
            self._row_terms = None

        # Alg. 1: T = chol(K_MM + εM I), A = chol(T Tᵀ/M + λ I), both upper triangular
        eps_M = float(np.finfo(dtype).eps) * M
        self._T, self.jitter_ = _upper_cholesky(
            lambda: _kernel(_augment(self.centers_, np.float64), self._centers64, None), eps_M, "K_MM + εM·I")
        self._A, _ = _upper_cholesky(lambda: self._gram_of_T(self.lambda_), 0.0, "T Tᵀ/M + λI")

        cache_bytes = n * M * dtype.itemsize
        self._kernel_cache = (np.empty((n, M), dtype=dtype)
                              if 0 < cache_bytes <= self.kernel_cache_bytes else None)
        Y = self._train_Y
        # r = A⁻ᵀ T⁻ᵀ K_nMᵀ y / n: the set-up's pass over the data (it fills the cache, if any)
        self._r0 = self._solve_Bt(self._knm_t(Y, fill_cache=self._kernel_cache is not None) / n)
        K = Y.shape[1]
        self._beta = np.zeros((M, K))
        self._res = self._r0.copy()
        self._dir = self._r0.copy()
        self._res_sq = np.einsum("ij,ij->j", self._res, self._res)
        self._r0_norm = np.sqrt(self._res_sq)
        self._y_sq = np.einsum("ij,ij->j", Y, Y) / n
        self._set_coef()

    def _gram_of_T(self, lam):
        """T Tᵀ/M + λI, built in place (one M×M array besides T)."""
        S = self._T @ self._T.T
        S /= S.shape[0]
        S[np.diag_indices_from(S)] += lam
        return S

    # ---- one pass: K_nMᵀ (K_nM V) in row blocks ----------------------------------------------
    def _blocks(self, fill_cache=False):
        """(rows, K(X_rows, C)) over sparse training rows, one block at a time; a block is a view of
        the cache when K_nM is cached, else one scratch buffer computed anew."""
        n, cache = self._train_Y.shape[0], self._kernel_cache
        step = int(self.block_size)
        scratch = None
        for r0 in range(0, n, step):
            rows = slice(r0, min(n, r0 + step))
            if cache is not None and not fill_cache:
                yield rows, cache[rows]
                continue
            out = cache[rows] if cache is not None else None
            if out is None:
                if scratch is None:
                    scratch = np.empty((min(step, n), self._centers_w.shape[0]), dtype=self._centers_w.dtype)
                out = scratch[:rows.stop - rows.start]
            row_terms = None if self._row_terms is None else self._row_terms[rows]
            yield rows, _kernel(self._rows[rows], self._centers_w, row_terms, out=out, threads=self._threads)

    def _dense_products(self, **products):
        """Dense rows: the compiled pass, over the cached K_nM or streaming (K_nM never formed)."""
        if self._kernel_cache is not None:
            return stored_products(self._kernel_cache, threads=self._threads, **products)
        return streamed_products(self._rows, self._centers_wt, threads=self._threads, **products)

    def _knm_t(self, Y, fill_cache=False):
        """K_nMᵀ Y (float64)."""
        if not sp.issparse(self._rows):
            if fill_cache:
                kernel_values(self._rows, self._centers_wt, self._kernel_cache, self._threads)
            return self._dense_products(Y=Y, backward=True)[1].T
        total = np.zeros((self._centers_w.shape[0], Y.shape[1]))
        for rows, Kb in self._blocks(fill_cache):
            # in float64: r_0 and ‖y‖²/n meet in J = ‖y‖²/n − βᵀ(r_0 + r), where digits cancel
            total += Kb.T.astype(np.float64) @ Y[rows]
        return total

    def _knm_t_knm(self, V):
        """K_nMᵀ (K_nM V) (float64): Alg. 1's KnM_times_vector(V, 0)."""
        if not sp.issparse(self._rows):
            return self._dense_products(A=V.T, backward=True)[1].T
        V = V.astype(self._centers_w.dtype)
        total = np.zeros(V.shape)
        for _, Kb in self._blocks():
            total += Kb.T @ (Kb @ V)
        return total

    # ---- the preconditioned operator ----------------------------------------------------------
    def _solve_B(self, U):
        """T⁻¹ A⁻¹ U."""
        return solve_triangular(self._T, solve_triangular(self._A, U, check_finite=False), check_finite=False)

    def _solve_Bt(self, U):
        """A⁻ᵀ T⁻ᵀ U."""
        return solve_triangular(self._A, solve_triangular(self._T, U, trans="T", check_finite=False),
                                trans="T", check_finite=False)

    def _apply_W(self, U):
        """W U = A⁻ᵀ( T⁻ᵀ K_nMᵀ K_nM T⁻¹ A⁻¹ U / n + λ A⁻¹ U ): Alg. 1's BHB, one pass over the data."""
        n = self._train_Y.shape[0]
        inner = solve_triangular(self._A, U, check_finite=False)
        V = solve_triangular(self._T, inner, check_finite=False)
        Q = solve_triangular(self._T, self._knm_t_knm(V) / n, trans="T", check_finite=False)
        return solve_triangular(self._A, Q + self.lambda_ * inner, trans="T", check_finite=False)

    # ---- the stepping protocol ------------------------------------------------------------------
    def run(self, n_steps: int) -> int:
        """Up to n_steps CG iterations (each column its own step sizes); fewer once converged_
        (the tolerance is reached, or max_iter iterations are done)."""
        done = 0
        n = self._train_Y.shape[0]
        while done < n_steps and not self.converged_ and self.n_iter_ < self.max_iter:
            P = self._dir
            WP = self._apply_W(P)
            curvature = np.einsum("ij,ij->j", P, WP)
            # a column whose residual is exactly 0 is solved: its direction is 0, its step too
            step = np.divide(self._res_sq, curvature, out=np.zeros_like(curvature), where=curvature > 0)
            self._beta += step * P
            self._res -= step * WP
            res_sq = np.einsum("ij,ij->j", self._res, self._res)
            if not (np.all(np.isfinite(res_sq)) and np.all(np.isfinite(self._beta))):
                raise DivergenceError(f"Falkon's conjugate gradient became NaN/inf at iteration "
                                      f"{self.n_iter_ + 1}: check the data for inf values, or use a smaller C")
            ratio = np.divide(res_sq, self._res_sq, out=np.zeros_like(res_sq), where=self._res_sq > 0)
            self._dir = self._res + ratio * P
            self._res_sq = res_sq
            done += 1
            self.n_iter_ += 1
            self.samples_seen_ += n
            # the run ends (converged_) at the tolerance or at Falkon's t = max_iter iterations: the
            # runner then records its final point at once
            if np.all(np.sqrt(res_sq) <= self.tol * self._r0_norm) or self.n_iter_ >= self.max_iter:
                self.converged_ = True
        if done:
            self._set_coef()
        return done

    def _set_coef(self):
        """α = T⁻¹ A⁻¹ β, J(α) and the relative residual from CG's vectors (nothing over the data)."""
        self.coef_ = self._solve_B(self._beta)
        # αᵀK_MMα per column for the penalty, K_MM = TᵀT − jitter·I (the factors go with finish())
        T_alpha = self._T @ self.coef_
        self._quadratic = float(np.mean(np.einsum("ij,ij->j", T_alpha, T_alpha)
                                        - self.jitter_ * np.einsum("ij,ij->j", self.coef_, self.coef_)))
        # Wβ = r_0 − r, so J = ‖y‖²/n − 2βᵀr_0 + βᵀWβ = ‖y‖²/n − βᵀ(r_0 + r), per column
        objective = self._y_sq - np.einsum("ij,ij->j", self._beta, self._r0 + self._res)
        self.krr_objective_ = float(np.mean(objective))
        relative = np.divide(np.sqrt(self._res_sq), self._r0_norm, out=np.zeros_like(self._r0_norm),
                             where=self._r0_norm > 0)
        self.cg_residual_ = float(np.max(relative))

    def finish(self):
        # CG's state and the two M×M factors (16 M² bytes): predictions need only the centres and α
        for name in ("_res", "_dir", "_r0", "_beta", "_T", "_A", "_centers64"):
            self.__dict__.pop(name, None)
        return super().finish()

    def working_set(self) -> list:
        # the passes read the prepared rows (or K_nM), not the validated input
        return [a for a in (self._train_Y, self._rows if not sp.issparse(self._rows) else self._rows.data,
                            self._kernel_cache) if isinstance(a, np.ndarray)]

    def _decision(self, X):
        dtype = self._centers_w.dtype
        threads = resolve_threads(self.threads)
        # power-of-two blocks: the experiment loop's prediction chunks (multiples of 4096) then see the same
        # blocks as one call
        step = 1 << (int(self.block_size).bit_length() - 1)
        out = np.empty((X.shape[0], self.coef_.shape[1]))
        row_terms = None
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=dtype)
            row_terms = -self.gamma_ * np.asarray(X.multiply(X).sum(axis=1), dtype=dtype).ravel()
        for r0 in range(0, X.shape[0], step):
            rows = slice(r0, r0 + step)
            if not sp.issparse(X):
                # Σ_j α_j k(x, c_j) per row in float64 over the float32 kernel values: a row's value
                # does not depend on which rows are predicted with it
                out[rows] = streamed_products(_augment(X[rows], dtype), self._centers_wt, A=self.coef_.T,
                                              forward=True, threads=threads)[0]
                continue
            Kb = _kernel(X[rows], self._centers_w, row_terms[rows], threads=threads)
            # summed row by row in float64 (einsum's own loop, not BLAS), as above
            for k in range(out.shape[1]):
                out[rows, k] = np.einsum("ij,j->i", Kb, self.coef_[:, k], dtype=np.float64)
        return out

    # ---- what the experiment loop records ------------------------------------------------------------------
    def penalty(self) -> float:
        """λ/2 αᵀK_MM α (averaged over the K columns)."""
        return 0.5 * self.lambda_ * self._quadratic

    def record(self) -> dict:
        return {**super().record(), "n_support_vectors": self.n_support_vectors_}

    def counters(self) -> dict:
        return {"cg_residual": self.cg_residual_, "krr_objective": self.krr_objective_}

    @property
    def n_support_vectors_(self) -> int:
        """M: the centres f(x) = Σ_j α_j k(x, c_j) expands over."""
        return int(self.centers_.shape[0])


class _OneVsAllMixin(PerClassDecisionMixin):
    """Any number (≥ 2) of classes: two as one column of ±1 targets (predict the sign), more as
    one-vs-all ±1 columns solved jointly (predict the arg-max)."""

    def _encode_targets(self, y, fitting, classes=None):
        if fitting:
            self._set_two_or_more_classes(y, classes, "a classifier")
        self._check_known_labels(y)
        y = np.asarray(y)
        if len(self.classes_) == 2:
            return np.where(y == self.classes_[1], 1.0, -1.0).reshape(-1, 1)
        return np.where(y.reshape(-1, 1) == self.classes_.reshape(1, -1), 1.0, -1.0)


class FalkonClassifier(_OneVsAllMixin, _Falkon):
    """Falkon on ±1 (one-vs-all) targets: Nyström kernel ridge classification."""
    parameters = PARAMETERS


class FalkonRegressor(RegressionMixin, _Falkon):
    """Falkon: Nyström kernel ridge regression."""
    parameters = PARAMETERS


def _augment(X, dtype):
    """[x, ‖x‖², 1] per row, in `dtype` (‖x‖² summed in float64)."""
    X = np.asarray(X)
    out = np.empty((X.shape[0], X.shape[1] + 2), dtype=dtype)
    out[:, :-2] = X
    out[:, -2] = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    out[:, -1] = 1.0
    return out


def _center_terms(centers, gamma, dtype):
    """[2γc, −γ, −γ‖c‖²] per centre, in `dtype`."""
    out = np.empty((centers.shape[0], centers.shape[1] + 2), dtype=dtype)
    out[:, :-2] = 2.0 * gamma * centers
    out[:, -2] = -gamma
    out[:, -1] = -gamma * np.einsum("ij,ij->i", centers, centers)
    return out


def _kernel(rows, centers, row_terms, out=None, threads=1):
    """exp(−γ‖x − c‖²) of each row against each centre, ‖x − c‖² clipped at 0 (its expansion can
    round below 0). Dense `rows` are augmented ([x, ‖x‖², 1]: one GEMM gives −γ‖x − c‖²); CSR rows
    are plain, with −γ‖x‖² in `row_terms`."""
    if sp.issparse(rows):
        G = rows @ centers[:, :-2].T           # 2γ x·c (a new dense array)
        G += row_terms[:, None]
        G += centers[:, -1]
        if out is not None:
            out[...] = G
            G = out
    else:
        G = np.matmul(rows, centers.T, out=out)
    exp_nonpositive(G, threads)
    return G


def _upper_cholesky(build, jitter, what):
    """(U, jitter used) with UᵀU = S + jitter·I, upper triangular, S = build() (a symmetric M×M
    float64 array). The factorisation overwrites S (no second M×M array); where S is not positive
    definite to the working precision (a singular K_MM: duplicated centres) it is built again with
    the jitter raised tenfold (from εM, or from 1e-12·mean diagonal where none is asked)."""
    for _ in range(MAX_JITTER_RAISES + 1):
        S = build()
        floor = 1e-12 * max(float(np.mean(np.abs(S.diagonal()))), np.finfo(np.float64).tiny)
        S[np.diag_indices_from(S)] += jitter
        try:
            # S is symmetric: its transpose is the same matrix in Fortran order, which LAPACK
            # factorises in place
            return cholesky(S.T, lower=False, overwrite_a=True, check_finite=False), jitter
        except LinAlgError:
            tried, jitter = jitter, max(10.0 * jitter, floor)
    raise SolverError(f"Falkon's preconditioner: {what} is not positive definite even with a jitter of "
                      f"{tried:g}; check the data for NaN/inf values or use a smaller gamma")


register_algorithm(
    "falkon", classifier=FalkonClassifier, regressor=FalkonRegressor, tasks=TASKS,
    description="Falkon: Nyström kernel ridge regression (M uniform centres) by conjugate gradient with "
                "Falkon's preconditioner (Rudi et al. 2017, Alg. 1); one-vs-all for several classes",
    smoke_params={"n_centers": 32, "max_iter": 5},
)
