# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of TSGS3VM — triply stochastic gradients for the semi-supervised SVM
(Geng et al., IJCAI 2019, Algorithms 1–2, update rule (7)).

The model is f(x) = Σ_j β_j cos(ω_j·x + b_j) over random features generated block by block
from (seed, iteration) (_random_features.pxd), so only the coefficients β are stored: O(T)
memory in the number of iterations T (times the block size F). ω may be cached for speed.
Coefficients are kept as β = scale · R so that the shrink of all old ones by (1 − γ) (Alg. 1
line 8) is one multiplication.

Iteration t (mini-batch version of Alg. 1; labeled batch L_t, unlabeled batch U_t, block of F
new features, constant step γ = 1/η):
    f(x)       = Σ_j β_j cos(ω_j·x + b_j)     for x in L_t ∪ U_t               Alg. 1 lines 5–6
    g_i        = C/|L_t| · ℓ'(f(x_i), y_i)    (hinge) for x_i in L_t
    g_i        = C*/|U_t| · u'(f(x_i))        (Table 2 loss) for x_i in U_t
    β_j       *= (1 − γ)                      for every old j                  Alg. 1 line 8
    β_new,j    = −γ · 2/F · Σ_i g_i cos(ω_j·x_i + b_j)                         Alg. 1 line 7, with
                                              φ_ω(x) = √2 cos(ω·x + b) averaged over the block
With an offset (not in the paper) f gains + b. `balanced` sets b before line 7 so that the share
of positive predictions on U_t stays within two standard errors of the labeled rows' positive
rate (the class-balance constraint, tsgs3vm.py).
Costs per iteration: one GEMM (rows × features × d) and the cos of the phases, O((|L_t| + |U_t|)
· t F d); the total is O(m T²) as Remark 1 of the paper says.
Inside `train`/`predict` nothing touches Python objects; errors are status codes.
"""
import numpy as np

from cython cimport floating
from cython.parallel cimport prange, threadid
from libc.math cimport isfinite, fabs, sqrt, ceil, floor
from libc.stdlib cimport qsort
from libc.string cimport memcpy
from libc.stdint cimport uint64_t

from kernelbench.solvers._random_features cimport feature_phases, feature_values, generate_features, KERNEL_RBF, KERNEL_LAPLACIAN
from kernelbench.solvers._losses cimport loss_derivative, unlabeled_loss_derivative


cdef extern from "_simd.h" nogil:
    int KB_OPENMP
    void kb_cos_shift_f32(float* z, const float* shift, Py_ssize_t n)
    void kb_cos_shift_f64(double* z, const double* shift, Py_ssize_t n)
    double kb_dot_f32(const float* z, const double* a, Py_ssize_t n)
    double kb_dot_f64(const double* z, const double* a, Py_ssize_t n)

OPENMP_BUILD = bool(KB_OPENMP)

cdef enum:
    STATUS_OK = 0
    STATUS_DIVERGED = 1

OK, DIVERGED = STATUS_OK, STATUS_DIVERGED

cdef enum:
    OFFSET_NONE = 0        # f = Σ β_j cos(·), as the paper
    OFFSET_LEARNED = 1     # + b, an unregularised offset learned with the same step
    OFFSET_BALANCED = 2    # + b chosen each iteration by the class-balance constraint (below)

OFFSETS = {"none": OFFSET_NONE, "learned": OFFSET_LEARNED, "balanced": OFFSET_BALANCED}


cdef int _descending(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0], y = (<const double*>b)[0]
    return (x < y) - (x > y)


cdef double _balance_tolerance(double positive_rate, Py_ssize_t n_labeled, Py_ssize_t n_unlabeled) noexcept nogil:
    """Two standard errors of (positive rate of n_unlabeled predictions − positive rate of
    n_labeled labels) when both are drawn with rate `positive_rate`: how far the unlabeled rate
    may stray before it contradicts the labeled one (a two-sample z-test at about 95 %)."""
    return 2.0 * sqrt(positive_rate * (1.0 - positive_rate) * (1.0 / n_labeled + 1.0 / n_unlabeled))


cdef double _balanced_offset(const double* h, Py_ssize_t n, double positive_rate, double tol,
                             double* scratch) noexcept nogil:
    """The offset b that keeps the class balance on n ≥ 1 unlabeled outputs h: 0 when the share
    of h_i > 0 lies within positive_rate ± tol, else the threshold that brings the count of
    positives h_i + b > 0 to the nearer end of that band, k, placed halfway between the k-th and
    (k+1)-th largest h (a point at ±1 beyond the ends). `scratch` holds n doubles."""
    cdef Py_ssize_t i, k, positives = 0
    cdef double low = ceil((positive_rate - tol) * n - 1e-9), high = floor((positive_rate + tol) * n + 1e-9)
    cdef double above, below
    for i in range(n):
        if h[i] > 0.0:
            positives += 1
    if low <= positives <= high:
        return 0.0
    k = <Py_ssize_t>(low if positives < low else high)
    k = min(max(k, 0), n)
    memcpy(scratch, h, n * sizeof(double))
    qsort(scratch, n, sizeof(double), _descending)
    above = scratch[k - 1] if k > 0 else scratch[0] + 2.0      # the k-th largest
    below = scratch[k] if k < n else scratch[n - 1] - 2.0       # the (k+1)-th largest
    return -0.5 * (above + below)


def balance_tolerance(double positive_rate, Py_ssize_t n_labeled, Py_ssize_t n_unlabeled):
    """The half-width of the class-balance band (see _balance_tolerance)."""
    return _balance_tolerance(positive_rate, n_labeled, n_unlabeled)


def balanced_offset(h, double positive_rate, double tol):
    """b keeping the share of h + b > 0 within positive_rate ± tol over the 1-D array h (see
    _balanced_offset): the one implementation of the class-balance constraint, also used by
    FRS3VM and BGS3VM (tsgs3vm.py, bgs3vm.py)."""
    cdef const double[::1] v = np.ascontiguousarray(h, dtype=np.float64)
    if v.shape[0] == 0:
        raise ValueError("the class-balance constraint needs at least one unlabeled value")
    cdef double[::1] scratch = np.empty(v.shape[0])
    return _balanced_offset(&v[0], v.shape[0], positive_rate, tol, &scratch[0])


cdef Py_ssize_t FEATURE_CHUNK = 1024   # features per GEMM/cos chunk (the Z buffer stays in cache)
cdef Py_ssize_t ROW_CHUNK = 128        # rows per OpenMP work item


cdef void _rows_chunk(const floating* X, Py_ssize_t r0, Py_ssize_t nr, Py_ssize_t d,
                      const floating* W, const floating* bb, Py_ssize_t mc, const double* R,
                      double scale, floating* Zt, double* F) noexcept nogil:
    """F[r0:r0+nr] += scale · cos(X[r0:r0+nr] Wᵀ + b) · R[:mc] (one thread's share)."""
    cdef Py_ssize_t i
    feature_phases(X + r0 * d, nr, d, W, mc, Zt)
    for i in range(nr):
        if floating is float:
            kb_cos_shift_f32(Zt + i * mc, bb, mc)
            F[r0 + i] += scale * kb_dot_f32(Zt + i * mc, R, mc)
        else:
            kb_cos_shift_f64(Zt + i * mc, bb, mc)
            F[r0 + i] += scale * kb_dot_f64(Zt + i * mc, R, mc)


cdef void _accumulate(const floating* X, Py_ssize_t n, Py_ssize_t d, const floating* Wcache,
                      const floating* bcache, uint64_t seed, Py_ssize_t block_size, int kernel,
                      double gamma, const double* R, Py_ssize_t m, double scale,
                      floating* Wbuf, floating* bbuf, floating* Z, double* F,
                      int threads) noexcept nogil:
    """F[:n] += f(X) = scale · Σ_{j<m} R_j cos(ω_j·x + b_j)  (Alg. 2). Feature chunks in order;
    without the ω cache each chunk is regenerated from its seeds first (O(T) memory)."""
    cdef Py_ssize_t c0 = 0, mc, j, g, chunk, r0
    cdef Py_ssize_t n_chunks = (n + ROW_CHUNK - 1) // ROW_CHUNK
    cdef const floating* W
    cdef const floating* bb
    while c0 < m:
        mc = min(FEATURE_CHUNK, m - c0)
        if Wcache != NULL:
            W = Wcache + c0 * d
            bb = bcache + c0
        else:
            for j in prange(mc, num_threads=threads, schedule="static"):
                g = c0 + j
                generate_features(seed, <uint64_t>(g // block_size), g % block_size, 1, d, kernel,
                                  gamma, Wbuf + j * d, bbuf + j)
            W = Wbuf
            bb = bbuf
        for chunk in prange(n_chunks, num_threads=threads, schedule="static"):
            r0 = chunk * ROW_CHUNK
            _rows_chunk(X, r0, min(ROW_CHUNK, n - r0), d, W, bb, mc, R + c0, scale,
                        Z + threadid() * ROW_CHUNK * FEATURE_CHUNK, F)
        c0 += mc


cdef class TSGCore:
    """Model state of TSGS3VM: seed, coefficients, optional ω cache. Holds no data."""
    cdef public object dtype
    cdef public int kernel, labeled_loss, unlabeled_loss, threads
    cdef public bint cache_features
    cdef public int offset
    cdef public Py_ssize_t n_dims, block_size, n_blocks, n_iter, n_labeled
    cdef public double gamma, step, C, C_unlabeled, scale, f_bound, bias, positive_rate
    cdef public uint64_t seed
    cdef public object R, W, b

    def __init__(self, *, n_dims, block_size, kernel, gamma, labeled_loss, unlabeled_loss, C,
                 C_unlabeled, step, seed, dtype, cache_features, threads, f_bound=1e300,
                 offset=OFFSET_NONE, positive_rate=0.5, n_labeled=0):
        self.n_dims, self.block_size = n_dims, block_size
        self.kernel = {"rbf": KERNEL_RBF, "laplacian": KERNEL_LAPLACIAN}[kernel]
        self.gamma, self.step, self.C, self.C_unlabeled = gamma, step, C, C_unlabeled
        self.labeled_loss, self.unlabeled_loss = labeled_loss, unlabeled_loss
        self.seed = <uint64_t>seed
        self.dtype = np.dtype(dtype)
        self.cache_features, self.threads, self.f_bound = cache_features, threads, f_bound
        # f(x) = b + Σ β_j cos(·); b is not in the paper (see tsgs3vm.py, `offset`)
        if offset == OFFSET_BALANCED and not (n_labeled >= 1 and 0.0 < positive_rate < 1.0):
            raise ValueError("the balanced offset needs labeled rows of both classes: n_labeled >= 1 "
                             f"and 0 < positive_rate < 1, got {n_labeled} and {positive_rate}")
        self.offset, self.positive_rate, self.n_labeled = offset, positive_rate, n_labeled
        self.bias = 0.0
        self.n_blocks = 0
        self.n_iter = 0
        self.scale = 1.0
        self._allocate(4 * block_size)

    def _allocate(self, Py_ssize_t capacity):
        m = self.n_blocks * self.block_size
        R = np.zeros(capacity)
        if self.R is not None:
            R[:m] = self.R[:m]
        self.R = R
        if self.cache_features:
            W = np.empty((capacity, self.n_dims), dtype=self.dtype)
            b = np.empty(capacity, dtype=self.dtype)
            if self.W is not None:
                W[:m] = self.W[:m]
                b[:m] = self.b[:m]
            self.W, self.b = W, b

    def reserve(self, Py_ssize_t n_more_blocks):
        need = (self.n_blocks + n_more_blocks) * self.block_size
        if need > self.R.shape[0]:
            self._allocate(max(need, 2 * self.R.shape[0]))
        for name in ("R", "W", "b"):
            array = getattr(self, name)
            if array is not None and not array.flags.writeable:
                setattr(self, name, array.copy())

    @property
    def n_random_features(self):
        return self.n_blocks * self.block_size

    def coef(self):
        """β: f(x) = Σ_j β_j cos(ω_j·x + b_j)."""
        return self.scale * self.R[:self.n_random_features]

    def model_bytes(self):
        """Bytes the model needs: the coefficients, plus ω and b when cached."""
        m = self.n_random_features
        extra = m * (self.n_dims + 1) * self.dtype.itemsize if self.cache_features else 0
        return 8 * m + extra

    def predict(self, X):
        """f(X) as a 1-D float64 array; X C-contiguous (n, d) of the core's dtype."""
        n = X.shape[0]
        F = np.full(n, self.bias)
        if n == 0 or self.n_blocks == 0:
            return F
        if self.dtype == np.float32:
            self._predict_f32(X, F)
        else:
            self._predict_f64(X, F)
        return F

    def train(self, X, Y, lab_idx, unl_idx, Py_ssize_t unl_batch):
        """len(lab_idx) iterations. lab_idx: (steps, labeled batch) int64 rows of X; unl_idx: int64
        rows of X taken `unl_batch` per iteration (the last batch may be smaller, or empty when
        there is no unlabeled data). Y: (n,) float64, ±1 on the labeled rows.
        Returns (status, iterations done)."""
        steps = lab_idx.shape[0]
        self.reserve(steps)
        if self.dtype == np.float32:
            return self._train_f32(X, Y, lab_idx, unl_idx, unl_batch)
        return self._train_f64(X, Y, lab_idx, unl_idx, unl_batch)

    def _predict_f32(self, const float[:, ::1] X, double[::1] F):
        _predict_impl(self, &X[0, 0], X.shape[0], &F[0])

    def _predict_f64(self, const double[:, ::1] X, double[::1] F):
        _predict_impl(self, &X[0, 0], X.shape[0], &F[0])

    def _train_f32(self, const float[:, ::1] X, const double[::1] Y, const long long[:, ::1] lab_idx,
                   const long long[::1] unl_idx, Py_ssize_t unl_batch):
        return _train_impl(self, &X[0, 0], Y, lab_idx, unl_idx, unl_batch)

    def _train_f64(self, const double[:, ::1] X, const double[::1] Y, const long long[:, ::1] lab_idx,
                   const long long[::1] unl_idx, Py_ssize_t unl_batch):
        return _train_impl(self, &X[0, 0], Y, lab_idx, unl_idx, unl_batch)


cdef void _predict_impl(TSGCore core, const floating* X, Py_ssize_t n, double* F):
    cdef Py_ssize_t d = core.n_dims, m = core.n_blocks * core.block_size
    cdef Py_ssize_t chunk = min(FEATURE_CHUNK, m)
    cdef floating[::1] Z = np.empty(core.threads * ROW_CHUNK * FEATURE_CHUNK, dtype=core.dtype)
    cdef floating[:, ::1] Wbuf = np.empty((chunk, d), dtype=core.dtype)
    cdef floating[::1] bbuf = np.empty(chunk, dtype=core.dtype)
    cdef const floating[:, ::1] Wc
    cdef const floating[::1] bc
    cdef const floating* Wp = NULL
    cdef const floating* bp = NULL
    cdef const double[::1] R = core.R
    if core.cache_features:
        Wc, bc = core.W, core.b
        Wp, bp = &Wc[0, 0], &bc[0]
    with nogil:
        _accumulate(X, n, d, Wp, bp, core.seed, core.block_size, core.kernel, core.gamma,
                    &R[0], m, core.scale, &Wbuf[0, 0], &bbuf[0], &Z[0], F, core.threads)


cdef tuple _train_impl(TSGCore core, const floating* X, const double[::1] Y,
                       const long long[:, ::1] lab_idx, const long long[::1] unl_idx,
                       Py_ssize_t unl_batch):
    cdef Py_ssize_t d = core.n_dims, Fb = core.block_size
    cdef Py_ssize_t steps_total = lab_idx.shape[0], nl = lab_idx.shape[1], n_unl = unl_idx.shape[0]
    cdef Py_ssize_t max_rows = nl + unl_batch
    cdef floating[:, ::1] Xb = np.empty((max(max_rows, 1), d), dtype=core.dtype)
    cdef double[::1] Fx = np.empty(max(max_rows, 1))
    cdef double[::1] G = np.empty(max(max_rows, 1))
    cdef double[::1] Hs = np.empty(max(unl_batch, 1))              # the balance step's sort buffer
    cdef floating[::1] Z = np.empty(max(core.threads * ROW_CHUNK * FEATURE_CHUNK, max_rows * Fb),
                                    dtype=core.dtype)
    cdef floating[:, ::1] Wbuf = np.empty((max(FEATURE_CHUNK, Fb), d), dtype=core.dtype)
    cdef floating[::1] bbuf = np.empty(max(FEATURE_CHUNK, Fb), dtype=core.dtype)
    cdef double[::1] R = core.R
    cdef floating[:, ::1] Wc
    cdef floating[::1] bc
    cdef const floating* Wp = NULL
    cdef const floating* bp = NULL
    cdef floating* Wnew
    cdef floating* bnew
    if core.cache_features:
        Wc, bc = core.W, core.b
        Wp, bp = &Wc[0, 0], &bc[0]
    cdef Py_ssize_t t, i, j, m, row, nu = 0, nb = nl, u0
    cdef bint balancing = False
    cdef double step = core.step, shrink = 1.0 - core.step, acc, coef_scale
    cdef double wl = core.C / nl if nl > 0 else 0.0, wu
    cdef double scale = core.scale, bias = core.bias
    cdef Py_ssize_t blocks = core.n_blocks, it = core.n_iter, done = 0
    cdef int status = STATUS_OK, threads = core.threads
    with nogil:
        for t in range(steps_total):
            u0 = t * unl_batch
            nu = max(0, min(unl_batch, n_unl - u0))
            nb = nl + nu
            wu = core.C_unlabeled / nu if nu > 0 else 0.0
            for i in range(nb):                                       # gather L_t then U_t
                row = lab_idx[t, i] if i < nl else unl_idx[u0 + i - nl]
                for j in range(d):
                    Xb[i, j] = X[row * d + j]
                Fx[i] = 0.0
            m = blocks * Fb
            _accumulate(&Xb[0, 0], nb, d, Wp, bp, core.seed, Fb, core.kernel, core.gamma,
                        &R[0], m, scale, &Wbuf[0, 0], &bbuf[0], &Z[0], &Fx[0], threads)  # lines 5-6
            balancing = core.offset == OFFSET_BALANCED and nu > 0
            if balancing:                                             # class balance on U_t
                bias = _balanced_offset(&Fx[nl], nu, core.positive_rate,
                                        _balance_tolerance(core.positive_rate, core.n_labeled, nu), &Hs[0])
            for i in range(nb):
                Fx[i] = Fx[i] + bias
            for i in range(nb):
                if not (fabs(Fx[i]) <= core.f_bound):                 # also catches NaN
                    status = STATUS_DIVERGED
                if i < nl:                                            # C ℓ'(f(x_l), y_l), line 7
                    G[i] = wl * loss_derivative(core.labeled_loss, Fx[i], Y[lab_idx[t, i]])
                else:                                                 # C* u'(f(x_u)), line 7
                    G[i] = wu * unlabeled_loss_derivative(core.unlabeled_loss, Fx[i])
            if status != STATUS_OK:
                break
            if core.offset == OFFSET_LEARNED:                         # ∂R/∂b = Σ_i g_i, b unregularised
                acc = 0.0
                for i in range(nb):
                    acc = acc + G[i]
                bias = bias - step * acc
            if shrink > 0.0:                                          # line 8, as one scale
                scale *= shrink
            else:                                                     # γ = 1: the past is forgotten
                for j in range(m):
                    R[j] = 0.0
                scale = 1.0
            if Wp != NULL:                                            # ω of block `blocks`, seed = block
                Wnew = &Wc[0, 0] + m * d
                bnew = &bc[0] + m
            else:
                Wnew = &Wbuf[0, 0]
                bnew = &bbuf[0]
            generate_features(core.seed, <uint64_t>blocks, 0, Fb, d, core.kernel, core.gamma, Wnew, bnew)
            feature_values(&Xb[0, 0], nb, d, Wnew, bnew, Fb, &Z[0])
            coef_scale = -step * 2.0 / Fb / scale                    # line 7; stored as R = β / scale
            for j in range(Fb):
                acc = 0.0
                for i in range(nb):
                    acc = acc + G[i] * (&Z[0])[i * Fb + j]
                R[m + j] = coef_scale * acc
                if not isfinite(R[m + j]):
                    status = STATUS_DIVERGED
            blocks += 1
            it += 1
            done += 1
            if status != STATUS_OK:
                break
            if scale < 1e-100:                                        # keep R · scale representable
                for j in range(blocks * Fb):
                    R[j] *= scale
                scale = 1.0
    core.scale = scale
    core.bias = bias
    core.n_iter = it
    core.n_blocks = blocks
    return status, done
