# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled cores of the two exact-kernel baselines of Dai et al. 2014 (§6, §7): NORMA and k-SDCA.

Both keep their support vectors as rows copied into one contiguous matrix S (capacity doubling)
with their squared norms, and evaluate f(x_i) = Σ_j c_j k(x_i, s_j) for a whole mini-batch by one
BLAS GEMM per chunk of support vectors (‖x − s‖² = ‖x‖² + ‖s‖² − 2 x·s), then exp. The kernel is
the Gaussian RBF exp(−γ‖x − x'‖²). Cost per pass: O(n · #SV · d) — these are the O(n²) methods.

NORMA (Kivinen, Smola & Williamson 2004), mini-batch version with DSG's step schedule:
    f_{t+1} = (1 − γ_t λ) f_t − γ_t/b Σ_{i∈batch} ℓ'(f_t(x_i), y_i) k(x_i, ·),   γ_t = θ/(t0 + t)
truncated to the last τ terms (`budget`; 0 = keep all). The shrink is kept as one `scale`.

k-SDCA (Shalev-Shwartz & Zhang 2013, Procedure SDCA with the kernel trick): dual variables α,
    f(x) = 1/(λn) Σ_i α_i k(x_i, x),
one closed-form coordinate step per visited sample (hinge, smooth hinge, squared). A mini-batch is
visited sequentially, exactly as plain SDCA: f on the batch is computed once by GEMM from the
support vectors, then corrected after each coordinate step with the batch's own kernel block.

No Python objects inside the loops; everything runs without the GIL.
"""
import numpy as np

from libc.math cimport exp, isfinite, fabs
from scipy.linalg.cython_blas cimport dgemm

from kernelbench.solvers._losses cimport loss_derivative, LOSS_HINGE, LOSS_SMOOTH_HINGE, LOSS_SQUARED

cdef enum:
    STATUS_OK = 0
    STATUS_DIVERGED = 1          # f or a coefficient became NaN/inf, or |f| exceeded f_bound
    STATUS_STEP_TOO_LARGE = 2    # γ_t λ ≥ 1 (NORMA's shrink factor would flip signs)

OK, DIVERGED, STEP_TOO_LARGE = STATUS_OK, STATUS_DIVERGED, STATUS_STEP_TOO_LARGE

cdef extern from "_kernel_sgd.h" nogil:
    void kb_rbf_from_dots(double* g, const double* snorm, double xnorm, double gamma, Py_ssize_t n)
    double kb_dot_f64(const double* z, const double* a, Py_ssize_t n)

cdef Py_ssize_t SV_CHUNK = 512        # support vectors per GEMM chunk (the B × chunk block stays in cache)


cdef void _gram(const double* A, Py_ssize_t na, const double* B, Py_ssize_t nb, Py_ssize_t d,
                double* G) noexcept nogil:
    """G (na × nb, row-major) = A (na × d) · B (nb × d)ᵀ, both row-major: in column-major terms
    Gᵀ (nb × na) = B · Aᵀ, i.e. gemm('T', 'N') on the buffers as they are."""
    cdef int m_ = <int>nb, n_ = <int>na, k_ = <int>d, lda = <int>d, ldb = <int>d, ldc = <int>nb
    cdef char transa = b'T'
    cdef char transb = b'N'
    cdef double one = 1.0, zero = 0.0
    if na == 0 or nb == 0:
        return
    dgemm(&transa, &transb, &m_, &n_, &k_, &one, <double*>B, &lda, <double*>A, &ldb, &zero, G, &ldc)


cdef void _accumulate(const double* X, const double* xnorm, Py_ssize_t n, Py_ssize_t d,
                      const double* S, const double* snorm, const double* coef, Py_ssize_t m,
                      double gamma, double scale, double* G, double* F) noexcept nogil:
    """F[i] += scale · Σ_{j<m} coef_j exp(−γ‖x_i − s_j‖²) for the n rows of X; G: n × SV_CHUNK."""
    cdef Py_ssize_t c0 = 0, mc, i
    while c0 < m:
        mc = min(SV_CHUNK, m - c0)
        _gram(X, n, S + c0 * d, mc, d, G)
        for i in range(n):                        # SIMD exp (libmvec), then a SIMD dot product
            kb_rbf_from_dots(G + i * mc, snorm + c0, xnorm[i], gamma, mc)
            F[i] += scale * kb_dot_f64(G + i * mc, coef + c0, mc)
        c0 += mc

cdef void _batch_decisions(const double[:, ::1] X, const double[::1] xnorm, const long long[::1] rows,
                           Py_ssize_t start, Py_ssize_t nb, double[:, ::1] Xb, double[::1] xb_norm,
                           const double* S, const double* snorm, const double* coef, Py_ssize_t count,
                           double gamma, double scale, double* G, double[::1] Fb) noexcept nogil:
    """Copy the batch rows[start:start+nb] into Xb / xb_norm and set Fb = f on them
    (scale · Σ_s coef_s k(s, x)), the first half of every NORMA and k-SDCA step."""
    cdef Py_ssize_t i, k, row
    for i in range(nb):
        row = rows[start + i]
        for k in range(X.shape[1]):
            Xb[i, k] = X[row, k]
        xb_norm[i] = xnorm[row]
        Fb[i] = 0.0
    _accumulate(&Xb[0, 0], &xb_norm[0], nb, X.shape[1], S, snorm, coef, count, gamma, scale, G, &Fb[0])


cdef class SupportVectors:
    """Rows s_j (copies), ‖s_j‖² and coefficients c_j of f = scale · Σ_j c_j k(s_j, ·)."""
    cdef public object S, snorm, coef
    cdef public Py_ssize_t count, n_dims
    cdef public double gamma, scale

    def __init__(self, Py_ssize_t n_dims, double gamma, Py_ssize_t capacity=64):
        self.n_dims, self.gamma, self.scale, self.count = n_dims, gamma, 1.0, 0
        self.S = np.zeros((max(capacity, 1), n_dims))
        self.snorm = np.zeros(max(capacity, 1))
        self.coef = np.zeros(max(capacity, 1))

    def reserve(self, Py_ssize_t need):
        """Room for `need` rows, in writable arrays (an unpickled model may hold read-only ones)."""
        cap = self.S.shape[0]
        if need <= cap and all(a.flags.writeable for a in (self.S, self.snorm, self.coef)):
            return
        cap = max(need, 2 * cap)
        S = np.zeros((cap, self.n_dims)); S[:self.count] = self.S[:self.count]
        snorm = np.zeros(cap); snorm[:self.count] = self.snorm[:self.count]
        coef = np.zeros(cap); coef[:self.count] = self.coef[:self.count]
        self.S, self.snorm, self.coef = S, snorm, coef

    def predict(self, X):
        """f(X) for a C-contiguous float64 (n, d) array."""
        cdef const double[:, ::1] Xv = X
        cdef Py_ssize_t n = Xv.shape[0]
        F = np.zeros(n)
        if n == 0 or self.count == 0:
            return F
        cdef double[::1] Fv = F
        cdef const double[::1] xnorm = np.einsum("ij,ij->i", X, X)
        cdef const double[:, ::1] S = self.S          # const: a model unpickled read-only predicts too
        cdef const double[::1] snorm = self.snorm, coef = self.coef
        cdef Py_ssize_t row_chunk = 256, r0, nr
        cdef double[::1] G = np.empty(row_chunk * SV_CHUNK)
        cdef Py_ssize_t m = self.count, d = self.n_dims
        cdef double gamma = self.gamma, scale = self.scale
        with nogil:
            r0 = 0
            while r0 < n:
                nr = min(row_chunk, n - r0)
                _accumulate(&Xv[r0, 0], &xnorm[r0], nr, d, &S[0, 0], &snorm[0], &coef[0], m,
                            gamma, scale, &G[0], &Fv[r0])
                r0 += nr
        return F


cdef class NormaCore:
    """NORMA state: the (possibly truncated) kernel expansion and the step counter."""
    cdef public SupportVectors sv
    cdef public int loss
    cdef public Py_ssize_t budget, n_iter, n_added
    cdef public double lam, step, t0, f_bound, norm_sq   # norm_sq = ‖f‖²_H, exact while nothing is truncated

    def __init__(self, *, n_dims, gamma, loss, lam, step, t0, budget=0, f_bound=1e300):
        self.sv = SupportVectors(n_dims, gamma, capacity=budget if budget > 0 else 64)
        self.loss, self.lam, self.step, self.t0 = loss, lam, step, t0
        self.budget, self.f_bound = budget, f_bound
        self.n_iter = 0
        self.n_added = 0           # terms ever added; with a budget τ, slot = n_added mod τ
        self.norm_sq = 0.0

    def coef(self):
        """(support vectors, coefficients) in insertion order (oldest first)."""
        sv = self.sv
        m = sv.count
        if self.budget > 0 and self.n_added > self.budget:
            order = (np.arange(m) + self.n_added) % self.budget
        else:
            order = np.arange(m)
        return sv.S[order], sv.scale * sv.coef[order]

    def train(self, const double[:, ::1] X, const double[::1] xnorm, const double[::1] Y,
              const long long[::1] rows, Py_ssize_t batch_size):
        """Iterations over consecutive batches of `rows`. Returns (status, iterations done)."""
        cdef SupportVectors sv = self.sv
        cdef Py_ssize_t n_rows = rows.shape[0], d = sv.n_dims
        cdef Py_ssize_t n_steps = (n_rows + batch_size - 1) // batch_size
        if self.budget == 0:
            sv.reserve(sv.count + n_rows)
        else:
            sv.reserve(self.budget)
        cdef double[:, ::1] S = sv.S
        cdef double[::1] snorm = sv.snorm, coef = sv.coef
        cdef double[:, ::1] Xb = np.empty((batch_size, d))
        cdef double[::1] xb_norm = np.empty(batch_size), Fb = np.empty(batch_size), g = np.empty(batch_size)
        cdef double[::1] G = np.empty(batch_size * max(SV_CHUNK, batch_size))
        cdef double[::1] a = np.empty(batch_size)
        cdef Py_ssize_t start = 0, nb, i, j, k, row, slot, steps = 0
        cdef Py_ssize_t it = self.n_iter, added = self.n_added, count = sv.count, budget = self.budget
        cdef double gamma_t, shrink, scale = sv.scale, gamma = sv.gamma, c, cross, quad, sq
        cdef double norm_sq = self.norm_sq
        cdef int status = STATUS_OK, loss = self.loss
        with nogil:
            while start < n_rows:
                nb = min(batch_size, n_rows - start)
                _batch_decisions(X, xnorm, rows, start, nb, Xb, xb_norm, &S[0, 0], &snorm[0], &coef[0],
                                 count, gamma, scale, &G[0], Fb)     # f_t on the batch
                for i in range(nb):
                    if not (fabs(Fb[i]) <= self.f_bound):
                        status = STATUS_DIVERGED
                    g[i] = loss_derivative(loss, Fb[i], Y[rows[start + i]])
                if status != STATUS_OK:
                    break
                gamma_t = self.step / (self.t0 + it + 1)
                shrink = 1.0 - gamma_t * self.lam                     # (1 − γ_t λ) f_t
                if shrink <= 0.0:
                    status = STATUS_STEP_TOO_LARGE
                    break
                scale *= shrink
                # ‖f_{t+1}‖² = s²‖f_t‖² + 2s Σ a_i f_t(x_i) + Σ a_i a_j k(x_i, x_j), a_i = −γ_t g_i / b
                _gram(&Xb[0, 0], nb, &Xb[0, 0], nb, d, &G[0])
                cross = 0.0
                quad = 0.0
                for i in range(nb):
                    a[i] = -gamma_t * g[i] / nb
                    cross = cross + a[i] * Fb[i]
                for i in range(nb):
                    for j in range(nb):
                        sq = xb_norm[i] + xb_norm[j] - 2.0 * G[i * nb + j]
                        quad = quad + a[i] * a[j] * exp(-gamma * (sq if sq > 0.0 else 0.0))
                norm_sq = shrink * shrink * norm_sq + 2.0 * shrink * cross + quad
                for i in range(nb):
                    if g[i] == 0.0:                                    # no new term (hinge: margin ≥ 1)
                        continue
                    c = -gamma_t * g[i] / nb / scale
                    if not isfinite(c):
                        status = STATUS_DIVERGED
                    slot = added % budget if budget > 0 else added
                    for k in range(d):
                        S[slot, k] = Xb[i, k]
                    snorm[slot] = xb_norm[i]
                    coef[slot] = c                                     # overwrites the oldest term
                    added += 1
                    if budget == 0 or count < budget:
                        count += 1
                it += 1
                steps += 1
                start += nb
                if status != STATUS_OK:
                    break
                if scale < 1e-100:                                    # keep coef·scale representable
                    for k in range(count):
                        coef[k] *= scale
                    scale = 1.0
        sv.scale = scale
        sv.count = count
        self.n_iter = it
        self.n_added = added
        self.norm_sq = norm_sq
        return status, steps


cdef class SDCACore:
    """k-SDCA state: dual variables α (n), and the support vectors {x_i : α_i ≠ 0 ever} with
    coefficients α_i / (λn). pos[i] is the row of x_i in the support-vector matrix, or −1."""
    cdef public SupportVectors sv
    cdef public object alpha, pos
    cdef public int loss
    cdef public Py_ssize_t n
    cdef public double lam, norm_sq      # ‖f‖²_H, updated exactly at every coordinate step

    def __init__(self, *, n_samples, n_dims, gamma, loss, lam):
        self.n, self.loss, self.lam = n_samples, loss, lam
        self.norm_sq = 0.0
        self.sv = SupportVectors(n_dims, gamma, capacity=64)
        self.alpha = np.zeros(n_samples)
        self.pos = np.full(n_samples, -1, dtype=np.int64)

    def train(self, const double[:, ::1] X, const double[::1] xnorm, const double[::1] Y,
              const long long[::1] rows, Py_ssize_t batch_size):
        """Coordinate steps for `rows`, in order, batch by batch. Returns (status, iterations)."""
        cdef SupportVectors sv = self.sv
        cdef Py_ssize_t n_rows = rows.shape[0], d = sv.n_dims
        sv.reserve(sv.count + n_rows)
        for name in ("alpha", "pos"):                 # an unpickled model may hold read-only arrays
            if not getattr(self, name).flags.writeable:
                setattr(self, name, getattr(self, name).copy())
        cdef double[:, ::1] S = sv.S
        cdef double[::1] snorm = sv.snorm, coef = sv.coef
        cdef double[::1] alpha = self.alpha
        cdef long long[::1] pos = self.pos
        cdef double[:, ::1] Xb = np.empty((batch_size, d))
        cdef double[::1] xb_norm = np.empty(batch_size), Fb = np.empty(batch_size)
        cdef double[::1] delta = np.empty(batch_size)
        cdef double[::1] G = np.empty(batch_size * max(SV_CHUNK, batch_size))
        cdef double[:, ::1] Kbb = np.empty((batch_size, batch_size))
        cdef Py_ssize_t start = 0, nb, i, j, k, row, steps = 0, count = sv.count
        cdef double gamma = sv.gamma, lam_n = self.lam * self.n, q, f, y, a, a_new, sq, dlt
        cdef double norm_sq = self.norm_sq
        cdef int status = STATUS_OK, loss = self.loss
        with nogil:
            while start < n_rows:
                nb = min(batch_size, n_rows - start)
                _batch_decisions(X, xnorm, rows, start, nb, Xb, xb_norm, &S[0, 0], &snorm[0], &coef[0],
                                 count, gamma, 1.0, &G[0], Fb)       # f(x_i) before the batch
                _gram(&Xb[0, 0], nb, &Xb[0, 0], nb, d, &G[0])         # the batch's kernel block
                for i in range(nb):
                    for j in range(nb):
                        sq = xb_norm[i] + xb_norm[j] - 2.0 * G[i * nb + j]
                        Kbb[i, j] = exp(-gamma * (sq if sq > 0.0 else 0.0))
                for i in range(nb):
                    row = rows[start + i]
                    f = Fb[i]
                    for j in range(i):                                 # steps taken earlier in this batch
                        f = f + delta[j] * Kbb[i, j] / lam_n
                    y = Y[row]
                    q = Kbb[i, i] / lam_n                              # ‖x_i‖²_H / (λn)
                    # closed-form dual coordinate maximisation (Shalev-Shwartz & Zhang 2013, §5)
                    if loss == LOSS_HINGE:
                        a = alpha[row] * y
                        a_new = min(1.0, max(0.0, a + (1.0 - y * f) / q))
                        dlt = y * (a_new - a)
                    elif loss == LOSS_SMOOTH_HINGE:                    # smoothing parameter 1
                        a = alpha[row] * y
                        a_new = min(1.0, max(0.0, a + (1.0 - y * f - a) / (q + 1.0)))
                        dlt = y * (a_new - a)
                    else:                                              # squared ½(f − y)²
                        dlt = (y - f - alpha[row]) / (1.0 + q)
                    if not isfinite(dlt):
                        status = STATUS_DIVERGED
                        break
                    delta[i] = dlt
                    # ‖f + Δ k(x_i,·)/(λn)‖² = ‖f‖² + 2Δ f(x_i)/(λn) + Δ² k_ii/(λn)²
                    norm_sq = norm_sq + 2.0 * dlt * f / lam_n + dlt * dlt * Kbb[i, i] / (lam_n * lam_n)
                    if dlt != 0.0:
                        alpha[row] += dlt
                        if pos[row] < 0:                               # x_i joins the support vectors
                            pos[row] = count
                            for k in range(d):
                                S[count, k] = Xb[i, k]
                            snorm[count] = xb_norm[i]
                            coef[count] = 0.0
                            count += 1
                        coef[pos[row]] = alpha[row] / lam_n
                if status != STATUS_OK:
                    break
                steps += 1
                start += nb
        sv.count = count
        self.norm_sq = norm_sq
        return status, steps


cdef inline double _sdca_delta(int loss, double f, double y, double alpha, double q) noexcept nogil:
    """The closed-form dual coordinate step Δα_i (Shalev-Shwartz & Zhang 2013, §5), q = ‖z_i‖²/(λn)."""
    cdef double a
    if loss == LOSS_HINGE:
        a = alpha * y
        return y * (min(1.0, max(0.0, a + (1.0 - y * f) / q)) - a)
    if loss == LOSS_SMOOTH_HINGE:                              # smoothing parameter 1
        a = alpha * y
        return y * (min(1.0, max(0.0, a + (1.0 - y * f - a) / (q + 1.0))) - a)
    return (y - f - alpha) / (1.0 + q)                         # squared ½(f − y)²


cdef class LinearSDCACore:
    """SDCA on fixed features z_i (r-SDCA / n-SDCA of Dai et al. §6): primal w = 1/(λn) Σ α_i z_i,
    kept up to date after every coordinate step, so each step is O(D)."""
    cdef public object alpha, w
    cdef public int loss
    cdef public double lam

    def __init__(self, *, n_samples, n_features, loss, lam):
        self.alpha = np.zeros(n_samples)
        self.w = np.zeros(n_features)
        self.loss, self.lam = loss, lam

    def train(self, const double[:, ::1] Z, const double[::1] Y, const long long[::1] rows):
        """One coordinate step per entry of `rows`, in order. Returns the status."""
        for name in ("alpha", "w"):                   # an unpickled model may hold read-only arrays
            if not getattr(self, name).flags.writeable:
                setattr(self, name, getattr(self, name).copy())
        cdef double[::1] alpha = self.alpha, w = self.w
        cdef Py_ssize_t n = Z.shape[0], D = Z.shape[1], r, i, j
        cdef double lam_n = self.lam * n, f, sq, dlt
        cdef int loss = self.loss, status = STATUS_OK
        with nogil:
            for r in range(rows.shape[0]):
                i = rows[r]
                f = 0.0
                sq = 0.0
                for j in range(D):
                    f = f + Z[i, j] * w[j]
                    sq = sq + Z[i, j] * Z[i, j]
                if sq == 0.0:                                  # z_i = 0: α_i does not enter f
                    continue
                dlt = _sdca_delta(loss, f, Y[i], alpha[i], sq / lam_n)
                if not isfinite(dlt):
                    status = STATUS_DIVERGED
                    break
                alpha[i] += dlt
                for j in range(D):
                    w[j] += dlt * Z[i, j] / lam_n
        return status
