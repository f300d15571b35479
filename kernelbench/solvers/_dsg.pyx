# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of the DSG family — doubly stochastic functional gradients (Dai et al. 2014,
Alg. 1–2) and its variants that re-use old coordinates, UDSG and CDSG (Li & Póczos 2016, Alg. 3–4).

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

UDSG and CDSG differ only in WHICH block an iteration updates: a new one (as above), or an old
block k, whose coefficients then take the same stochastic block gradient −η·2/(bF)·Σ_i g_i cos(·)
added to them, after the shrink of everything by (1 − ηλ). UDSG picks k uniformly in the U of
every G + U iterations (Alg. 3); CDSG picks the k with the largest admissible step of rule (9)
(closed form in `cdsg_step`), and a new block when no old one beats γ_t (Alg. 4).

Everything inside `train`/`predict` runs without the GIL and without Python objects; errors are
status codes (DIVERGED, STEP_TOO_LARGE) that the Python side turns into exceptions.
"""
import numpy as np

from cython cimport floating
from cython.parallel cimport prange, threadid
from libc.math cimport isfinite, fabs, exp, sqrt
from libc.stdint cimport uint64_t

from kernelbench.solvers._random_features cimport feature_phases, feature_values, generate_features, splitmix64, KERNEL_RBF, KERNEL_LAPLACIAN
from kernelbench.solvers._losses cimport loss_derivative, LOSS_SOFTMAX
from kernelbench.solvers._dsg_rules cimport cdsg_step, softmax_gradient, udsg_block


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
    feature_phases(X + r0 * d, nr, d, W, mc, Zt)
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


# ---- the DSG family's update rules (Li & Póczos 2016) -----------------------------------------
cdef enum:
    MODE_DSG = 0        # Dai et al. Alg. 1: a new block of features every iteration
    MODE_UDSG = 1       # Li & Póczos Alg. 3: G iterations with new blocks, then U with uniform old ones
    MODE_CDSG = 2       # Li & Póczos Alg. 4: checking rule (9) + expected line search picks new vs old

MODES = {"dsg": MODE_DSG, "udsg": MODE_UDSG, "cdsg": MODE_CDSG}


def softmax_gradients(const double[:, ::1] F, const double[:, ::1] Y):
    """softmax(F) − Y row by row, by the compiled routine the solver uses (tests check it against
    finite differences of logsumexp(f) − y·f)."""
    out = np.empty((F.shape[0], F.shape[1]))
    cdef double[:, ::1] G = out
    cdef Py_ssize_t i
    for i in range(F.shape[0]):
        softmax_gradient(&F[i, 0], &Y[i, 0], &G[i, 0], F.shape[1])
    return out


def cdsg_steps(const double[:, ::1] beta, const double[::1] g, double s2, double gamma_t):
    """cdsg_step for every column of beta (K × blocks): the compiled rule (9), for the tests."""
    out = np.zeros(beta.shape[1])
    cdef double[::1] o = out
    cdef double[::1] col = np.empty(beta.shape[0])
    cdef Py_ssize_t j, k
    for j in range(beta.shape[1]):
        for k in range(beta.shape[0]):
            col[k] = beta[k, j]
        o[j] = cdsg_step(&col[0], &g[0], beta.shape[0], s2, gamma_t)
    return out


def udsg_blocks(uint64_t seed, Py_ssize_t it, Py_ssize_t blocks):
    return udsg_block(seed, it, blocks)


cdef class DSGCore:
    """Model state of the DSG family: seeds, coefficients and (optionally) the cached ω. Holds no data.

    mode: MODE_DSG (Dai et al. Alg. 1), MODE_UDSG (Alg. 3, `udsg_new` G and `udsg_old` U) or
    MODE_CDSG (Alg. 4: rule (9) with feature variance σ² = `variance`, step bound θ' =
    `max_step` · θ). Every block k also carries Alg. 4's weight β_k (one per output), stored like
    the coefficients as β / scale, so the shrink stays O(1)."""
    cdef public object dtype
    cdef public int kernel, loss, threads, mode
    cdef public bint cache_features
    cdef public Py_ssize_t n_dims, n_outputs, block_size, n_blocks, n_iter, n_reused, udsg_new, udsg_old
    cdef public Py_ssize_t average_from, n_averaged   # Polyak–Ruppert: average iterates t > average_from (-1: off)
    cdef public double gamma, lam, step, t0, scale, f_bound, max_step, variance, grad_bound
    cdef public uint64_t seed
    cdef public object R, W, b          # R: (n_outputs, capacity) float64; W: (capacity, d); b: (capacity,)
    cdef public object block_weight     # (n_outputs, capacity / block_size) float64: β_k / scale
    cdef public object A                # (n_outputs, capacity) float64: Σ of the averaged iterates' β, or None

    def __init__(self, *, n_dims, n_outputs, block_size, kernel, gamma, loss, lam, step, t0,
                 seed, dtype, cache_features, threads, f_bound=1e300, mode=MODE_DSG,
                 udsg_new=1, udsg_old=1, max_step=1.0, variance=2.0, grad_bound=0.0, average_from=-1):
        self.n_dims, self.n_outputs, self.block_size = n_dims, n_outputs, block_size
        self.kernel = {"rbf": KERNEL_RBF, "laplacian": KERNEL_LAPLACIAN}[kernel]
        self.gamma, self.loss, self.lam, self.step, self.t0 = gamma, loss, lam, step, t0
        self.seed = <uint64_t>seed
        self.dtype = np.dtype(dtype)
        self.cache_features, self.threads = cache_features, threads
        self.f_bound = f_bound      # |f(x)| beyond this is an explosion, i.e. divergence
        self.mode = mode
        if mode not in (MODE_DSG, MODE_UDSG, MODE_CDSG):
            raise ValueError(f"mode must be one of {sorted(MODES.values())}, got {mode!r}")
        if udsg_new < 1 or udsg_old < 0:
            raise ValueError("UDSG needs G >= 1 new-feature iterations and U >= 0 old ones per period")
        self.udsg_new, self.udsg_old = udsg_new, udsg_old
        self.max_step = max_step    # θ'/θ: CDSG's steps are at most θ'/(t0 + t) (Li & Póczos Thm. 14)
        self.variance = variance    # σ² of rule (9)
        self.grad_bound = grad_bound  # M of rule (9): a bound on |ℓ'|; grows to the largest seen
        self.n_blocks = 0
        self.n_iter = 0
        self.n_reused = 0
        self.scale = 1.0
        # Polyak–Ruppert averaging (Polyak & Juditsky 1992; constant-step averaging, Bach & Moulines
        # 2013): f̄ = mean of the iterates f_t for t > average_from, kept as A = Σ_t β^(t).
        self.average_from = average_from
        self.n_averaged = 0
        self._allocate(4 * block_size)

    def _allocate(self, Py_ssize_t capacity):
        m = self.n_blocks * self.block_size
        R = np.zeros((self.n_outputs, capacity))
        B = np.zeros((self.n_outputs, capacity // self.block_size))
        if self.R is not None:
            R[:, :m] = self.R[:, :m]
            B[:, :self.n_blocks] = self.block_weight[:, :self.n_blocks]
        self.R, self.block_weight = R, B
        if self.average_from >= 0:
            A = np.zeros((self.n_outputs, capacity))
            if self.A is not None:
                A[:, :m] = self.A[:, :m]
            self.A = A
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
        for name in ("R", "W", "b", "block_weight", "A"):
            array = getattr(self, name)
            if array is not None and not array.flags.writeable:
                setattr(self, name, array.copy())

    @property
    def n_random_features(self):
        return self.n_blocks * self.block_size

    def coef(self, average=False):
        """β (n_outputs × n_random_features): f(x) = Σ_j β_j cos(ω_j·x + b_j); average=True: the
        Polyak–Ruppert mean β̄ of the averaged iterates (the current β while none is averaged yet)."""
        if average and self.n_averaged > 0:
            return self.A[:, :self.n_random_features] / self.n_averaged
        return self.scale * self.R[:, :self.n_random_features]

    def block_weights(self):
        """Alg. 4's β_k of every block (n_outputs × n_blocks)."""
        return self.scale * self.block_weight[:, :self.n_blocks]

    def predict(self, X, average=False):
        """f(X), shape (n, n_outputs). X: C-contiguous (n, d) array of the core's dtype.
        average=True: the averaged function f̄ (the current f while none is averaged yet)."""
        n = X.shape[0]
        F = np.zeros((n, self.n_outputs))
        if n == 0 or self.n_blocks == 0:
            return F
        R, scale = self.R, self.scale
        if average and self.n_averaged > 0:
            # f̄ = Σ_j (A_j / n_averaged) cos(ω_j·x + b_j): the same compiled sum over A
            R, scale = self.A, 1.0 / self.n_averaged
        if self.dtype == np.float32:
            self._predict_f32(X, F, R, scale)
        else:
            self._predict_f64(X, F, R, scale)
        return F

    def train(self, X, Y, rows, Py_ssize_t batch_size):
        """Iterations over consecutive batches of `rows` (indices into X; the last batch may be
        smaller). Y: (n, n_outputs) float64 targets (one-hot for softmax). Returns (status,
        iterations done)."""
        n_steps = (len(rows) + batch_size - 1) // batch_size
        self.reserve(n_steps)
        if self.dtype == np.float32:
            return self._train_f32(X, Y, rows, batch_size)
        return self._train_f64(X, Y, rows, batch_size)

    # ---- typed entry points (one per dtype; the bodies are the fused functions below) ----
    def _predict_f32(self, const float[:, ::1] X, double[:, ::1] F, const double[:, ::1] R, double scale):
        _predict_impl(self, &X[0, 0], X.shape[0], &F[0, 0], R, scale)

    def _predict_f64(self, const double[:, ::1] X, double[:, ::1] F, const double[:, ::1] R, double scale):
        _predict_impl(self, &X[0, 0], X.shape[0], &F[0, 0], R, scale)

    def _train_f32(self, const float[:, ::1] X, const double[:, ::1] Y, const long long[::1] rows, Py_ssize_t batch_size):
        return _train_impl(self, &X[0, 0], X.shape[0], Y, rows, batch_size)

    def _train_f64(self, const double[:, ::1] X, const double[:, ::1] Y, const long long[::1] rows, Py_ssize_t batch_size):
        return _train_impl(self, &X[0, 0], X.shape[0], Y, rows, batch_size)


cdef void _predict_impl(DSGCore core, const floating* X, Py_ssize_t n, double* F,
                        const double[:, ::1] R, double scale):
    """F += Σ_j scale·R_kj cos(ω_j·x + b_j) over the core's features (R: the iterate's or the
    averaged coefficients)."""
    cdef Py_ssize_t d = core.n_dims, m = core.n_blocks * core.block_size
    cdef Py_ssize_t chunk = min(FEATURE_CHUNK, m), rows = _row_chunk(n, core.threads)
    cdef floating[::1] Z = np.empty(core.threads * rows * FEATURE_CHUNK, dtype=core.dtype)
    cdef floating[:, ::1] Wbuf = np.empty((chunk if not core.cache_features else 1, d), dtype=core.dtype)
    cdef floating[::1] bbuf = np.empty(chunk if not core.cache_features else 1, dtype=core.dtype)
    cdef const floating[:, ::1] Wc      # const: a model loaded from a read-only memmap predicts too
    cdef const floating[::1] bc
    cdef const floating* Wp = NULL
    cdef const floating* bp = NULL
    if core.cache_features:
        Wc, bc = core.W, core.b
        Wp, bp = &Wc[0, 0], &bc[0]
    with nogil:
        _accumulate(X, n, d, Wp, bp, core.seed, core.block_size, core.kernel, core.gamma,
                    &R[0, 0], R.shape[1], core.n_outputs, m, scale,
                    &Wbuf[0, 0], &bbuf[0], &Z[0], rows, F, core.threads)


cdef tuple _train_impl(DSGCore core, const floating* X, Py_ssize_t n, const double[:, ::1] Y,
                       const long long[::1] rows, Py_ssize_t batch_size):
    cdef Py_ssize_t d = core.n_dims, K = core.n_outputs, Fb = core.block_size
    cdef Py_ssize_t n_rows = rows.shape[0], cap = core.R.shape[1]
    cdef Py_ssize_t chunk = min(FEATURE_CHUNK, cap)
    cdef floating[:, ::1] Xb = np.empty((batch_size, d), dtype=core.dtype)
    cdef double[:, ::1] Fx = np.empty((batch_size, K))
    cdef double[:, ::1] G = np.empty((batch_size, K))
    cdef double[::1] gbar = np.empty(K)
    cdef double[::1] beta = np.empty(K)
    cdef Py_ssize_t rows_per_chunk = _row_chunk(batch_size, core.threads)
    cdef floating[::1] Z = np.empty(max(core.threads * rows_per_chunk * FEATURE_CHUNK, batch_size * Fb),
                                    dtype=core.dtype)
    cdef floating[:, ::1] Wbuf = np.empty((max(chunk, Fb), d), dtype=core.dtype)
    cdef floating[::1] bbuf = np.empty(max(chunk, Fb), dtype=core.dtype)
    cdef double[:, ::1] R = core.R
    cdef double[:, ::1] Bw = core.block_weight
    cdef double[:, ::1] Avg
    cdef bint averaging = core.average_from >= 0
    cdef Py_ssize_t n_averaged = core.n_averaged, average_from = core.average_from
    if averaging:
        Avg = core.A
    cdef floating[:, ::1] Wc
    cdef floating[::1] bc
    cdef const floating* Wp = NULL
    cdef const floating* bp = NULL
    cdef floating* Wblk
    cdef floating* bblk
    if core.cache_features:
        Wc, bc = core.W, core.b
        Wp, bp = &Wc[0, 0], &bc[0]
    cdef Py_ssize_t start = 0, nb, i, j, k, m, row, kb, choice, period
    cdef double gamma_t, eta, eta_k, shrink, acc, coef_scale, s2, M = core.grad_bound
    cdef double scale = core.scale
    cdef Py_ssize_t it = core.n_iter, blocks = core.n_blocks, reused = core.n_reused
    cdef int status = STATUS_OK, threads = core.threads, loss = core.loss, mode = core.mode
    cdef Py_ssize_t steps = 0
    period = core.udsg_new + core.udsg_old
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
            for k in range(K):
                gbar[k] = 0.0
            for i in range(nb):                                   # g_i = ℓ'(f(x_i), y_i)
                row = rows[start + i]
                for k in range(K):
                    if not (fabs(Fx[i, k]) <= core.f_bound):      # also catches NaN
                        status = STATUS_DIVERGED
                if loss == LOSS_SOFTMAX:
                    softmax_gradient(&Fx[i, 0], &Y[row, 0], &G[i, 0], K)
                else:
                    for k in range(K):
                        G[i, k] = loss_derivative(loss, Fx[i, k], Y[row, k])
                for k in range(K):
                    gbar[k] = gbar[k] + G[i, k] / nb
                    if fabs(G[i, k]) > M:
                        M = fabs(G[i, k])                         # M of Assumption 2.3 (largest seen)
            if status != STATUS_OK:
                break
            gamma_t = core.step / (core.t0 + it + 1)              # γ_t, t = it + 1
            # ---- which coordinate block this iteration updates: -1 = a new one ----
            choice = -1
            eta = gamma_t
            if mode == MODE_UDSG and blocks > 0 and (it % period) >= core.udsg_new:
                choice = udsg_block(core.seed, it, blocks)        # Alg. 3: uniform over old blocks
            elif mode == MODE_CDSG and blocks > 0:
                # Alg. 4: rule (9) for every old block; keep the largest |η_k| if it beats γ_t
                s2 = K * M * M * core.variance / (<double>nb * nb)
                for kb in range(blocks):
                    for k in range(K):
                        beta[k] = scale * Bw[k, kb]
                    eta_k = cdsg_step(&beta[0], &gbar[0], K, s2, gamma_t)
                    if eta_k > eta:
                        eta = eta_k
                        choice = kb
                if choice >= 0 and eta > core.max_step * gamma_t:
                    eta = core.max_step * gamma_t                 # the bound θ' of Thm. 14
            shrink = 1.0 - eta * core.lam                         # Alg. 1 line 6 / Alg. 4, as one scale
            if shrink <= 0.0:
                status = STATUS_STEP_TOO_LARGE
                break
            it += 1
            scale *= shrink
            kb = blocks if choice < 0 else choice
            if Wp != NULL:                                        # ω of the block, seed = block index
                Wblk = &Wc[0, 0] + kb * Fb * d
                bblk = &bc[0] + kb * Fb
                if choice < 0:
                    generate_features(core.seed, <uint64_t>kb, 0, Fb, d, core.kernel, core.gamma, Wblk, bblk)
            else:
                Wblk = &Wbuf[0, 0]
                bblk = &bbuf[0]
                generate_features(core.seed, <uint64_t>kb, 0, Fb, d, core.kernel, core.gamma, Wblk, bblk)
            feature_values(&Xb[0, 0], nb, d, Wblk, bblk, Fb, &Z[0])
            # Alg. 1 line 5 / Alg. 4: block kb's coefficients take −η·(2/(bF)) Σ_i g_i cos(ω_j·x_i + b_j),
            # the stochastic gradient of the loss in the block's coordinates; stored as R = β/scale
            coef_scale = -eta * 2.0 / (nb * Fb) / scale
            for k in range(K):
                for j in range(Fb):
                    acc = 0.0
                    for i in range(nb):
                        acc = acc + G[i, k] * (&Z[0])[i * Fb + j]
                    if choice < 0:
                        R[k, kb * Fb + j] = coef_scale * acc
                    else:
                        R[k, kb * Fb + j] += coef_scale * acc
                    if not isfinite(R[k, kb * Fb + j]):
                        status = STATUS_DIVERGED
                if choice < 0:                                    # Alg. 4's β: β_new = −γ_t ḡ, β_k −= η ḡ
                    Bw[k, kb] = -eta * gbar[k] / scale
                else:
                    Bw[k, kb] += -eta * gbar[k] / scale
            if choice < 0:
                blocks += 1
            else:
                reused += 1
            steps += 1
            start += nb
            if status != STATUS_OK:
                break
            if scale < 1e-100:                                    # keep R·scale representable
                for k in range(K):
                    for j in range(blocks * Fb):
                        R[k, j] *= scale
                    for j in range(blocks):
                        Bw[k, j] *= scale
                scale = 1.0
            if averaging and it > average_from:                   # Polyak–Ruppert: A += β^(t), O(#coef),
                for k in range(K):                                # small next to the O(b·#coef·d) f(x_i)
                    for j in range(blocks * Fb):
                        Avg[k, j] += scale * R[k, j]
                n_averaged += 1
    core.scale = scale
    core.n_iter = it
    core.n_blocks = blocks
    core.n_reused = reused
    core.grad_bound = M
    core.n_averaged = n_averaged
    return status, steps
