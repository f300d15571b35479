# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of DSG — doubly stochastic functional gradients (Dai et al. 2014, Alg. 1–2).

The model is f(x) = Σ_j β_j cos(ω_j·x + b_j) over random features generated block by block from
(seed, block) (see _random_features.pxd), so it needs only the coefficients β; ω may be cached
for speed (`cache_features`). Coefficients are stored as β = scale · R: the shrink of every old
coefficient by (1 − γ_t λ) (Alg. 1 line 6) is one multiplication of `scale`, O(1) not O(t).

One iteration t (mini-batch version of Alg. 1, batch x_1..x_b, block of F new features):
    f(x_i)   = Σ_j β_j cos(ω_j·x_i + b_j)                         Alg. 2 over all previous blocks
    g_i      = ℓ'(f(x_i), y_i)
    β_j     *= (1 − γ_t λ)            for every old j             Alg. 1 line 6
    β_new,j  = −γ_t · 2/(b F) · Σ_i g_i cos(ω_j·x_i + b_j)        Alg. 1 line 5 with φ = √2 cos(·),
                                                                   averaged over batch and block
with γ_t = step / (t0 + t). Cost of iteration t: O(b · t F · d) for the phases (one BLAS GEMM per
chunk of features) and O(b · t F) cos (SIMD, OpenMP threads over the batch rows).

Everything inside `train`/`predict` runs without the GIL and without Python objects; errors are
status codes (DIVERGED, STEP_TOO_LARGE) that the Python side turns into exceptions.
"""
import numpy as np

from cython cimport floating
from cython.parallel cimport prange, threadid
from libc.math cimport isfinite, fabs
from libc.stdint cimport uint64_t
from scipy.linalg.cython_blas cimport sgemm, dgemm

from kernelbench.solvers._random_features cimport generate_features, KERNEL_RBF, KERNEL_LAPLACIAN
from kernelbench.solvers._losses cimport loss_derivative


cdef extern from "_simd.h" nogil:
    int KB_OPENMP
    void kb_cos_shift_f32(float* z, const float* shift, Py_ssize_t n)
    void kb_cos_shift_f64(double* z, const double* shift, Py_ssize_t n)
    double kb_dot_f32(const float* z, const double* a, Py_ssize_t n)
    double kb_dot_f64(const double* z, const double* a, Py_ssize_t n)

OPENMP_BUILD = bool(KB_OPENMP)   # tests fail if a prange module was built without OpenMP

cdef enum:
    STATUS_OK = 0
    STATUS_DIVERGED = 1          # f or a coefficient became NaN/inf, or |f| exceeded f_bound
    STATUS_STEP_TOO_LARGE = 2    # γ_t λ ≥ 1: the shrink factor (1 − γ_t λ) would flip signs

OK, DIVERGED, STEP_TOO_LARGE = STATUS_OK, STATUS_DIVERGED, STATUS_STEP_TOO_LARGE

cdef Py_ssize_t FEATURE_CHUNK = 1024   # features per GEMM/cos chunk: the Z buffer stays in L2
cdef Py_ssize_t ROW_CHUNK = 256        # rows per chunk when predicting many points


cdef void _phases(const floating* X, Py_ssize_t nrows, Py_ssize_t d, const floating* W,
                  Py_ssize_t mc, floating* Z) noexcept nogil:
    """Z (nrows × mc, row-major) = X (nrows × d) · W(mc × d)ᵀ, by BLAS in column-major terms:
    Zᵀ (mc × nrows) = Wᵀᵀ · Xᵀ, i.e. gemm('T', 'N') on the row-major buffers as they are."""
    cdef int m_ = <int>mc, n_ = <int>nrows, k_ = <int>d, lda = <int>d, ldb = <int>d, ldc = <int>mc
    cdef char transa = b'T'
    cdef char transb = b'N'
    cdef float one_s = 1.0, zero_s = 0.0
    cdef double one_d = 1.0, zero_d = 0.0
    if floating is float:
        sgemm(&transa, &transb, &m_, &n_, &k_, &one_s, <float*>W, &lda, <float*>X, &ldb,
              &zero_s, <float*>Z, &ldc)
    else:
        dgemm(&transa, &transb, &m_, &n_, &k_, &one_d, <double*>W, &lda, <double*>X, &ldb,
              &zero_d, <double*>Z, &ldc)


cdef void _regenerate(uint64_t seed, Py_ssize_t block_size, Py_ssize_t first_feature,
                      Py_ssize_t count, Py_ssize_t d, int kernel, double gamma,
                      floating* W, floating* b, int threads) noexcept nogil:
    """ω and phases of global features first_feature .. first_feature+count-1, from their seeds."""
    cdef Py_ssize_t j, g
    for j in prange(count, num_threads=threads, schedule="static"):
        g = first_feature + j
        generate_features(seed, <uint64_t>(g // block_size), g % block_size, 1, d, kernel, gamma,
                          W + j * d, b + j)


cdef void _rows_times_features(const floating* X, Py_ssize_t r0, Py_ssize_t nr, Py_ssize_t d,
                               const floating* W, const floating* bb, Py_ssize_t c0, Py_ssize_t mc,
                               const double* R, Py_ssize_t capacity, Py_ssize_t n_outputs,
                               double scale, floating* Zt, double* F) noexcept nogil:
    """F[r0:r0+nr] += scale · cos(X[r0:r0+nr] W[c0:c0+mc]ᵀ + b) R[:, c0:c0+mc]ᵀ, one thread."""
    cdef Py_ssize_t i, k
    cdef floating* z
    _phases(X + r0 * d, nr, d, W, mc, Zt)
    for i in range(nr):
        z = Zt + i * mc
        if floating is float:
            kb_cos_shift_f32(z, bb, mc)
            for k in range(n_outputs):
                F[(r0 + i) * n_outputs + k] += scale * kb_dot_f32(z, R + k * capacity + c0, mc)
        else:
            kb_cos_shift_f64(z, bb, mc)
            for k in range(n_outputs):
                F[(r0 + i) * n_outputs + k] += scale * kb_dot_f64(z, R + k * capacity + c0, mc)


cdef void _accumulate(const floating* X, Py_ssize_t n, Py_ssize_t d,
                      const floating* Wcache, const floating* bcache,
                      uint64_t seed, Py_ssize_t block_size, int kernel, double gamma,
                      const double* R, Py_ssize_t capacity, Py_ssize_t n_outputs,
                      Py_ssize_t m, double scale,
                      floating* Wbuf, floating* bbuf, floating* Z, Py_ssize_t row_chunk,
                      double* F, int threads) noexcept nogil:
    """F (n × K) += f(X) = scale · Σ_{j<m} R[:, j] cos(ω_j·x + b_j)   (Alg. 2).

    Rows are split in chunks of `row_chunk`; each OpenMP thread runs the GEMM, cos and dot
    products of its own chunks in its own slice of Z (threads × row_chunk × FEATURE_CHUNK), with
    BLAS itself single-threaded (the caller pins it), so no two thread pools spin on the cores.
    With cached ω there is ONE parallel region per call (a thread walks every feature chunk for
    its rows): few barriers, so a busy core delays the others little. Without the cache, each
    chunk of ω is regenerated once, in parallel, and then used by all rows."""
    cdef Py_ssize_t c0, mc, chunk, n_chunks, r0, nr
    cdef floating* Zt
    n_chunks = (n + row_chunk - 1) // row_chunk
    if m == 0:
        return
    if Wcache != NULL:
        for chunk in prange(n_chunks, num_threads=threads, schedule="static"):
            Zt = Z + threadid() * row_chunk * FEATURE_CHUNK
            r0 = chunk * row_chunk
            nr = min(row_chunk, n - r0)
            c0 = 0
            while c0 < m:
                mc = min(FEATURE_CHUNK, m - c0)
                _rows_times_features(X, r0, nr, d, Wcache + c0 * d, bcache + c0, c0, mc, R,
                                     capacity, n_outputs, scale, Zt, F)
                c0 = c0 + mc
        return
    c0 = 0
    while c0 < m:
        mc = min(FEATURE_CHUNK, m - c0)
        _regenerate(seed, block_size, c0, mc, d, kernel, gamma, Wbuf, bbuf, threads)
        for chunk in prange(n_chunks, num_threads=threads, schedule="static"):
            r0 = chunk * row_chunk
            _rows_times_features(X, r0, min(row_chunk, n - r0), d, Wbuf, bbuf, c0, mc, R, capacity,
                                 n_outputs, scale, Z + threadid() * row_chunk * FEATURE_CHUNK, F)
        c0 += mc


cdef Py_ssize_t _row_chunk(Py_ssize_t n, int threads) noexcept nogil:
    """Rows per chunk: every thread gets work, and a chunk's Z slice stays cache-sized."""
    return max(1, min(ROW_CHUNK, (n + threads - 1) // threads))


cdef class DSGCore:
    """Model state of DSG: seeds, coefficients and (optionally) the cached ω. Holds no data."""
    cdef public object dtype
    cdef public int kernel, loss, threads
    cdef public bint cache_features
    cdef public Py_ssize_t n_dims, n_outputs, block_size, n_blocks, n_iter
    cdef public double gamma, lam, step, t0, scale, f_bound
    cdef public uint64_t seed
    cdef public object R, W, b          # R: (n_outputs, capacity) float64; W: (capacity, d); b: (capacity,)

    def __init__(self, *, n_dims, n_outputs, block_size, kernel, gamma, loss, lam, step, t0,
                 seed, dtype, cache_features, threads, f_bound=1e300):
        self.n_dims, self.n_outputs, self.block_size = n_dims, n_outputs, block_size
        self.kernel = {"rbf": KERNEL_RBF, "laplacian": KERNEL_LAPLACIAN}[kernel]
        self.gamma, self.loss, self.lam, self.step, self.t0 = gamma, loss, lam, step, t0
        self.seed = <uint64_t>seed
        self.dtype = np.dtype(dtype)
        self.cache_features, self.threads = cache_features, threads
        self.f_bound = f_bound      # |f(x)| beyond this is an explosion, i.e. divergence
        self.n_blocks = 0
        self.n_iter = 0
        self.scale = 1.0
        self._allocate(4 * block_size)

    def _allocate(self, Py_ssize_t capacity):
        m = self.n_blocks * self.block_size
        R = np.zeros((self.n_outputs, capacity))
        if self.R is not None:
            R[:, :m] = self.R[:, :m]
        self.R = R
        if self.cache_features:
            W = np.empty((capacity, self.n_dims), dtype=self.dtype)
            b = np.empty(capacity, dtype=self.dtype)
            if self.W is not None:
                W[:m] = self.W[:m]
                b[:m] = self.b[:m]
            self.W, self.b = W, b

    def reserve(self, Py_ssize_t n_more_blocks):
        """Room for n_more_blocks new blocks (amortised doubling); writable arrays (a model
        unpickled from read-only memory gets its own copies before it trains further)."""
        need = (self.n_blocks + n_more_blocks) * self.block_size
        if need > self.R.shape[1]:
            self._allocate(max(need, 2 * self.R.shape[1]))
        for name in ("R", "W", "b"):
            array = getattr(self, name)
            if array is not None and not array.flags.writeable:
                setattr(self, name, array.copy())

    @property
    def n_random_features(self):
        return self.n_blocks * self.block_size

    def coef(self):
        """β (n_outputs × n_random_features): f(x) = Σ_j β_j cos(ω_j·x + b_j)."""
        return self.scale * self.R[:, :self.n_random_features]

    def predict(self, X):
        """f(X), shape (n, n_outputs). X: C-contiguous (n, d) array of the core's dtype."""
        n = X.shape[0]
        F = np.zeros((n, self.n_outputs))
        if n == 0 or self.n_blocks == 0:
            return F
        if self.dtype == np.float32:
            self._predict_f32(X, F)
        else:
            self._predict_f64(X, F)
        return F

    def train(self, X, Y, rows, Py_ssize_t batch_size):
        """Iterations over consecutive batches of `rows` (indices into X; the last batch may be
        smaller). Y: (n, n_outputs) float64 targets. Returns (status, iterations done)."""
        n_steps = (len(rows) + batch_size - 1) // batch_size
        self.reserve(n_steps)
        if self.dtype == np.float32:
            return self._train_f32(X, Y, rows, batch_size)
        return self._train_f64(X, Y, rows, batch_size)

    # ---- typed entry points (one per dtype; the bodies are the fused functions below) ----
    def _predict_f32(self, const float[:, ::1] X, double[:, ::1] F):
        _predict_impl(self, &X[0, 0], X.shape[0], &F[0, 0])

    def _predict_f64(self, const double[:, ::1] X, double[:, ::1] F):
        _predict_impl(self, &X[0, 0], X.shape[0], &F[0, 0])

    def _train_f32(self, const float[:, ::1] X, const double[:, ::1] Y, const long long[::1] rows, Py_ssize_t batch_size):
        return _train_impl(self, &X[0, 0], X.shape[0], Y, rows, batch_size)

    def _train_f64(self, const double[:, ::1] X, const double[:, ::1] Y, const long long[::1] rows, Py_ssize_t batch_size):
        return _train_impl(self, &X[0, 0], X.shape[0], Y, rows, batch_size)


cdef void _predict_impl(DSGCore core, const floating* X, Py_ssize_t n, double* F):
    cdef Py_ssize_t d = core.n_dims, m = core.n_blocks * core.block_size
    cdef Py_ssize_t chunk = min(FEATURE_CHUNK, m), rows = _row_chunk(n, core.threads)
    cdef floating[::1] Z = np.empty(core.threads * rows * FEATURE_CHUNK, dtype=core.dtype)
    cdef floating[:, ::1] Wbuf = np.empty((chunk if not core.cache_features else 1, d), dtype=core.dtype)
    cdef floating[::1] bbuf = np.empty(chunk if not core.cache_features else 1, dtype=core.dtype)
    cdef const floating[:, ::1] Wc      # const: a model loaded from a read-only memmap predicts too
    cdef const floating[::1] bc
    cdef const floating* Wp = NULL
    cdef const floating* bp = NULL
    cdef const double[:, ::1] R = core.R
    if core.cache_features:
        Wc, bc = core.W, core.b
        Wp, bp = &Wc[0, 0], &bc[0]
    with nogil:
        _accumulate(X, n, d, Wp, bp, core.seed, core.block_size, core.kernel, core.gamma,
                    &R[0, 0], R.shape[1], core.n_outputs, m, core.scale,
                    &Wbuf[0, 0], &bbuf[0], &Z[0], rows, F, core.threads)


cdef tuple _train_impl(DSGCore core, const floating* X, Py_ssize_t n, const double[:, ::1] Y,
                       const long long[::1] rows, Py_ssize_t batch_size):
    cdef Py_ssize_t d = core.n_dims, K = core.n_outputs, Fb = core.block_size
    cdef Py_ssize_t n_rows = rows.shape[0], cap = core.R.shape[1]
    cdef Py_ssize_t chunk = min(FEATURE_CHUNK, cap)
    cdef floating[:, ::1] Xb = np.empty((batch_size, d), dtype=core.dtype)
    cdef double[:, ::1] Fx = np.empty((batch_size, K))
    cdef double[:, ::1] G = np.empty((batch_size, K))
    cdef Py_ssize_t rows_per_chunk = _row_chunk(batch_size, core.threads)
    cdef floating[::1] Z = np.empty(max(core.threads * rows_per_chunk * FEATURE_CHUNK, batch_size * Fb),
                                    dtype=core.dtype)
    cdef floating[:, ::1] Wbuf = np.empty((max(chunk, Fb), d), dtype=core.dtype)
    cdef floating[::1] bbuf = np.empty(max(chunk, Fb), dtype=core.dtype)
    cdef double[:, ::1] R = core.R
    cdef floating[:, ::1] Wc
    cdef floating[::1] bc
    cdef const floating* Wp = NULL
    cdef const floating* bp = NULL
    cdef floating* Wnew
    cdef floating* bnew
    if core.cache_features:
        Wc, bc = core.W, core.b
        Wp, bp = &Wc[0, 0], &bc[0]
    cdef Py_ssize_t start = 0, nb, i, j, k, m, row
    cdef double gamma_t, shrink, acc, coef_scale
    cdef double scale = core.scale
    cdef Py_ssize_t it = core.n_iter, blocks = core.n_blocks
    cdef int status = STATUS_OK, threads = core.threads, loss = core.loss
    cdef Py_ssize_t steps = 0
    with nogil:
        while start < n_rows:
            nb = min(batch_size, n_rows - start)
            for i in range(nb):                                   # gather the batch
                row = rows[start + i]
                for j in range(d):
                    Xb[i, j] = X[row * d + j]
                for k in range(K):
                    Fx[i, k] = 0.0
            m = blocks * Fb
            _accumulate(&Xb[0, 0], nb, d, Wp, bp, core.seed, Fb, core.kernel, core.gamma,
                        &R[0, 0], cap, K, m, scale, &Wbuf[0, 0], &bbuf[0], &Z[0],
                        _row_chunk(nb, threads), &Fx[0, 0], threads)                        # f(x_i), Alg. 2
            for i in range(nb):                                   # g_i = ℓ'(f(x_i), y_i)
                row = rows[start + i]
                for k in range(K):
                    if not (fabs(Fx[i, k]) <= core.f_bound):      # also catches NaN
                        status = STATUS_DIVERGED
                    G[i, k] = loss_derivative(loss, Fx[i, k], Y[row, k])
            if status != STATUS_OK:
                break
            gamma_t = core.step / (core.t0 + it + 1)              # γ_t, t = it + 1
            shrink = 1.0 - gamma_t * core.lam                     # Alg. 1 line 6, as one scale
            if shrink <= 0.0:
                status = STATUS_STEP_TOO_LARGE
                break
            it += 1
            scale *= shrink
            if Wp != NULL:                                        # ω of the new block, seed = block
                Wnew = &Wc[0, 0] + m * d
                bnew = &bc[0] + m
            else:
                Wnew = &Wbuf[0, 0]
                bnew = &bbuf[0]
            generate_features(core.seed, <uint64_t>blocks, 0, Fb, d, core.kernel, core.gamma, Wnew, bnew)
            _phases(&Xb[0, 0], nb, d, Wnew, Fb, &Z[0])
            for i in range(nb):
                if floating is float:
                    kb_cos_shift_f32(&Z[0] + i * Fb, bnew, Fb)
                else:
                    kb_cos_shift_f64(&Z[0] + i * Fb, bnew, Fb)
            coef_scale = -gamma_t * 2.0 / (nb * Fb) / scale         # Alg. 1 line 5, stored as R = β/scale
            for k in range(K):
                for j in range(Fb):
                    acc = 0.0
                    for i in range(nb):
                        acc = acc + G[i, k] * (&Z[0])[i * Fb + j]
                    R[k, m + j] = coef_scale * acc
                    if not isfinite(R[k, m + j]):
                        status = STATUS_DIVERGED
            blocks += 1
            steps += 1
            start += nb
            if status != STATUS_OK:
                break
            if scale < 1e-100:                                    # keep R·scale representable
                for k in range(K):
                    for j in range(blocks * Fb):
                        R[k, j] *= scale
                scale = 1.0
    core.scale = scale
    core.n_iter = it
    core.n_blocks = blocks
    return status, steps
