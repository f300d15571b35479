# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of AsyDSSKL — asynchronous doubly stochastic sparse kernel learning
(Gu, Miao, Huo & Huang, AAAI 2018, Algorithm 2), lock-free on OpenMP threads.

Problem (4) over the working set A of random features (|A| = a):
    P(w) = (1/l) Σ_i ℓ(Φ_i·w, y_i) + λ ‖w‖₁,      Φ_ih = √2 cos(ω_h·x_i + b_h)
The solver keeps Φ of the working set as a float32 or half matrix (l × capacity, row-major, capacity
(M + 1)·R preallocated once — one pass of Algorithm 1 and one round of headroom: row i holds φ_A(x_i)
contiguously in its first |A| entries; every loop reads only those). Each round of Algorithm 1
fills the R new columns in place (`fill_features`: phases x_i·ω, SIMD cos, all rows in parallel)
and the drop of zero weights compacts the kept columns in place row by row in parallel
(`compact_columns`): no serial O(l·|A|) copy between rounds (Amdahl). It also keeps the
shared coefficient vector w (float64), and from the SVRG snapshot w̃ the derivatives
d̃_i = ℓ'(Φ_i·w̃, y_i) and the full gradient g̃ = (1/l) Φᵀ d̃.

`full_gradient` (Alg. 2 line 4): one parallel pass over row chunks, z̃_i = Φ_i·w̃, d̃_i, and each
thread accumulates Φᵀd̃ of its rows in its own padded buffer (no shared writes), summed after.
Cost O(l·a).

`inner_loops` (Alg. 2 lines 5–11): the m inner steps come in chunks of 512, each with its own
counter-based random stream; threads take chunks dynamically, with no barrier inside the loop and
no lock. One inner step:
    B rows i_b and one coordinate j drawn uniformly                          lines 7–8
    z_b = Φ_{i_b}·ŵ   (ŵ: w as read now, possibly mid-update by another thread)
    v_j = (1/B) Σ_b (ℓ'(z_b, y_b) − d̃_b) Φ_{i_b j} + g̃_j                       line 9
    w_j ← soft_threshold(ŵ_j − (γ/L_max) v_j, (γ/L_max) λ)                   line 10 (prox of λ|·|)
COST PER INNER STEP: O(B·a) multiply-adds (B dot products of a row of Φ with w, SIMD) plus
O(B) loss derivatives and O(1) for the update; memory traffic B·a·4 bytes (B rows of Φ), or
B·a·2 bytes with half-precision storage (`feature_t = kb_half`, converted by F16C in the dot):
the rows come from DRAM at random, so the bytes per row set the speed.

Races (the paper's point: no mutex, no atomic on w): a thread reads w while others write single
coordinates. Each w_j is one aligned 8-byte double, so a read sees either the old or the new value
of every coordinate, never a torn one — exactly the inconsistent read ŵ of the paper's analysis
(eq. (9), delay bounded by τ ≈ the number of threads' steps in flight). Two threads may update
the same j at once and one write is lost (probability ~threads/a per step): that step is simply
wasted, which the analysis absorbs like a delay. Per-thread scratch lives on each thread's stack
or in its own padded rows, so no other memory is shared for writing.

With threads=1 the sequence of draws and updates is fixed by the seed: results are deterministic
and tests/reference_asydsskl.py reproduces them step for step.
"""
import numpy as np

from cython.parallel cimport prange, threadid
from libc.math cimport isfinite, fabs, sqrt
from libc.stdint cimport uint64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

from kernelbench.solvers._random_features cimport (generate_features, splitmix64, block_key,
                                                   KERNEL_RBF, KERNEL_LAPLACIAN)
from kernelbench.solvers._losses cimport gu_loss_derivative, gu_loss_value


cdef extern from "_simd.h" nogil:
    int KB_OPENMP
    ctypedef unsigned short kb_half
    double kb_dot_f32(const float* z, const double* a, Py_ssize_t n)
    double kb_dot_f16(const kb_half* z, const double* a, Py_ssize_t n)
    void kb_axpy_f32(double* acc, double s, const float* z, Py_ssize_t n)
    void kb_axpy_f16(double* acc, double s, const kb_half* z, Py_ssize_t n)
    void kb_store_f16(kb_half* dst, const float* src, Py_ssize_t n)
    float kb_half_to_float(kb_half h)
    void kb_cos_shift_f32(float* z, const float* shift, Py_ssize_t n)
    void kb_half_init()
    int kb_half_path()
    void kb_set_half_path(int level)

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define KB_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 0)
    #else
    #define KB_PREFETCH(p) ((void)0)
    #endif
    """
    void KB_PREFETCH(const void* p) noexcept nogil

OPENMP_BUILD = bool(KB_OPENMP)   # tests fail if a prange module was built without OpenMP
kb_half_init()                   # pick the half-precision conversion path once (F16C width)
HALF_PATH_DETECTED = kb_half_path()

# Φ is stored as float32 or as IEEE half (uint16 bits; `feature_dtype='float16'`): one fused code
# path, the element type only changes how a row is read (dot, axpy, one value) and written.
ctypedef fused feature_t:
    float
    kb_half


cdef inline double _dot(const feature_t* row, const double* w, Py_ssize_t a) noexcept nogil:
    if feature_t is float:
        return kb_dot_f32(row, w, a)
    else:
        return kb_dot_f16(row, w, a)


cdef inline void _axpy(double* acc, double s, const feature_t* row, Py_ssize_t a) noexcept nogil:
    if feature_t is float:
        kb_axpy_f32(acc, s, row, a)
    else:
        kb_axpy_f16(acc, s, row, a)


cdef inline double _value(feature_t v) noexcept nogil:
    if feature_t is float:
        return v
    else:
        return kb_half_to_float(v)


def half_path():
    """The half-precision conversion path in use: 0 portable, 1 AVX2 + F16C, 2 AVX-512 + F16C."""
    return kb_half_path()


def set_half_path(int level):
    """Force a conversion path (tests compare the bits of every path); returns the previous one."""
    cdef int previous = kb_half_path()
    if level < 0 or level > HALF_PATH_DETECTED:
        raise ValueError(f"half path {level} is not available here (0..{HALF_PATH_DETECTED})")
    kb_set_half_path(level)
    return previous


def to_half(const float[::1] x):
    """float32 -> IEEE half bits (uint16), round to nearest even, by the solver's own conversion."""
    out = np.empty(x.shape[0], dtype=np.uint16)
    cdef kb_half[::1] o = out
    if x.shape[0]:
        kb_store_f16(&o[0], &x[0], x.shape[0])
    return out

cdef enum:
    STATUS_OK = 0
    STATUS_DIVERGED = 1          # a coefficient became NaN/inf

OK, DIVERGED = STATUS_OK, STATUS_DIVERGED

cdef Py_ssize_t ROW_CHUNK = 512     # rows per chunk of the full-gradient pass
cdef Py_ssize_t PAD = 16            # doubles of padding between per-thread buffers (2 cache lines)
cdef uint64_t DRAW_MULT = 0xD1B54A32D192ED03ULL
cdef uint64_t STREAM_STRIDE = 1ULL << 32   # stream key = block_key(rng_seed, outer_index·2³² + chunk)
cdef Py_ssize_t STEP_CHUNK = 512           # inner steps per chunk (a unit of dynamic scheduling)
cdef Py_ssize_t PREFETCH_LINES = 4         # cache lines of each next-step row requested ahead


cdef inline uint64_t draw(uint64_t key, uint64_t counter) noexcept nogil:
    """The counter-th 64-bit random number of stream `key` (stateless, as _random_features)."""
    return splitmix64(key ^ (counter * DRAW_MULT))


cdef inline double soft_threshold(double u, double t) noexcept nogil:
    """prox of t|·| at u (Alg. 2 line 10 with g = λ‖·‖₁)."""
    if u > t:
        return u - t
    if u < -t:
        return u + t
    return 0.0


def prox_l1(double u, double t):
    """Python access to the compiled proximal step (tests)."""
    return soft_threshold(u, t)


def random_features(uint64_t seed, uint64_t block, Py_ssize_t first, Py_ssize_t count, Py_ssize_t d,
                    kernel, double gamma):
    """ω (count × d) and b (count) of features first..first+count-1 of `block`, float64."""
    cdef int code = {"rbf": KERNEL_RBF, "laplacian": KERNEL_LAPLACIAN}[kernel]
    W = np.empty((count, d))
    b = np.empty(count)
    cdef double[:, ::1] Wv = W
    cdef double[::1] bv = b
    if count > 0 and d > 0:
        with nogil:
            generate_features(seed, block, first, count, d, code, gamma, &Wv[0, 0], &bv[0])
    return W, b


cdef float SQRT2_F = 1.4142135623730951


cdef inline void _finish_row(float* row, const float* b, Py_ssize_t R) noexcept nogil:
    """row = √2 cos(row + b): phases -> features (SIMD cos of _simd.h)."""
    cdef Py_ssize_t k
    kb_cos_shift_f32(row, b, R)
    for k in range(R):
        row[k] = row[k] * SQRT2_F


cdef inline float* _phase_row(feature_t* dst, float* scratch, Py_ssize_t R) noexcept nogil:
    """Where a row's R phases are accumulated, zeroed: Φ's row itself (float32), or this thread's
    scratch row (half storage; `scratch` holds threads × (R + PAD) floats)."""
    cdef float* row
    if feature_t is float:
        row = dst
    else:
        row = scratch + threadid() * (R + PAD)
    memset(row, 0, R * sizeof(float))
    return row


cdef inline void _store_row(feature_t* dst, const float* src, Py_ssize_t R) noexcept nogil:
    """The finished float32 features into Φ's row (rounded to nearest-even for half storage)."""
    if feature_t is float:
        if dst != src:
            memcpy(dst, src, R * sizeof(float))
    else:
        kb_store_f16(dst, src, R)


def fill_features(feature_t[:, ::1] Phi, Py_ssize_t col0, X, const float[:, ::1] Wt, const float[::1] b,
                  int threads):
    """Alg. 1 line 3 in place: Φ[i, col0:col0+R] = √2 cos(x_i·ω_k + b_k), k < R, for every row,
    rows in parallel. X: dense C-contiguous float32 (n × d) or CSR float32; Wt = ωᵀ (d × R, so the
    innermost loop runs over k contiguously and vectorises). The features are computed in float32
    (in the row itself, or in a per-thread scratch row for half storage) and then stored."""
    cdef Py_ssize_t n = Phi.shape[0], R = Wt.shape[1], d = Wt.shape[0], i, k, p, dd
    cdef float xv
    cdef float* row
    cdef const float[:, ::1] Xd
    cdef const float[::1] data
    cdef const int[::1] indices, indptr
    if R == 0 or n == 0:
        return
    if col0 < 0 or col0 + R > Phi.shape[1] or b.shape[0] != R:
        raise ValueError(f"fill_features: columns {col0}..{col0 + R} do not fit Φ ({Phi.shape[1]} columns)")
    scratch_array = np.empty(0 if feature_t is float else threads * (R + PAD), dtype=np.float32)
    cdef float[::1] scratch = scratch_array
    if hasattr(X, "indptr"):                  # CSR: only the non-zeros of x_i (rcv1-like data)
        data, indices, indptr = X.data, X.indices, X.indptr
        with nogil:
            for i in prange(n, num_threads=threads, schedule="static"):
                row = _phase_row(&Phi[i, col0], &scratch[0] if feature_t is not float else NULL, R)
                for p in range(indptr[i], indptr[i + 1]):
                    xv = data[p]
                    dd = indices[p]
                    for k in range(R):
                        row[k] += xv * Wt[dd, k]
                _finish_row(row, &b[0], R)
                _store_row(&Phi[i, col0], row, R)
    else:
        Xd = X
        if Xd.shape[0] != n or Xd.shape[1] != d:
            raise ValueError("fill_features: X and Φ / ω shapes disagree")
        with nogil:
            for i in prange(n, num_threads=threads, schedule="static"):
                row = _phase_row(&Phi[i, col0], &scratch[0] if feature_t is not float else NULL, R)
                for dd in range(d):
                    xv = Xd[i, dd]
                    if xv != 0:
                        for k in range(R):
                            row[k] += xv * Wt[dd, k]
                _finish_row(row, &b[0], R)
                _store_row(&Phi[i, col0], row, R)


def zero_rows(feature_t[:, ::1] Phi, int threads):
    """Φ = 0, rows in parallel: the first touch of a freshly allocated Φ (page faults, zeroing)
    happens here, at set-up, on all threads — not row by row inside the first timed round."""
    cdef Py_ssize_t n = Phi.shape[0], ld = Phi.shape[1], i
    if n == 0 or ld == 0:
        return
    with nogil:
        for i in prange(n, num_threads=threads, schedule="static"):
            memset(&Phi[i, 0], 0, ld * sizeof(feature_t))


def copy_columns(feature_t[:, ::1] dst, const feature_t[:, ::1] src, Py_ssize_t a, int threads):
    """dst[i, :a] = src[i, :a] for every row, rows in parallel (Φ grown past its capacity)."""
    cdef Py_ssize_t n = src.shape[0], i
    if dst.shape[0] != n or a > dst.shape[1] or a > src.shape[1]:
        raise ValueError("copy_columns: shapes disagree")
    if n == 0 or a == 0:
        return
    with nogil:
        for i in prange(n, num_threads=threads, schedule="static"):
            memcpy(&dst[i, 0], &src[i, 0], a * sizeof(feature_t))


def compact_columns(feature_t[:, ::1] Phi, const Py_ssize_t[::1] keep, int threads):
    """Alg. 1 line 5 in place: Φ[i, :len(keep)] = Φ[i, keep] for every row, rows in parallel.
    keep is increasing, so keep[k] ≥ k and a forward copy within a row never overwrites a column
    it still has to read."""
    cdef Py_ssize_t n = Phi.shape[0], a = keep.shape[0], i, k
    cdef feature_t* row
    for k in range(a):
        if keep[k] < k or keep[k] >= Phi.shape[1] or (k > 0 and keep[k] <= keep[k - 1]):
            raise ValueError("compact_columns: keep must be increasing column indices of Φ")
    if n == 0 or a == 0:
        return
    with nogil:
        for i in prange(n, num_threads=threads, schedule="static"):
            row = &Phi[i, 0]
            for k in range(a):
                row[k] = row[keep[k]]


def full_gradient(const feature_t[:, ::1] Phi, Py_ssize_t a, const double[::1] y, const double[::1] w,
                  int loss, double sigma, double[::1] dz, double[::1] grad, int threads):
    """Alg. 2 line 4 at the snapshot w: dz_i = ℓ'(Φ_i·w, y_i), grad = (1/l) Φ[:, :a]ᵀ dz.
    Returns (mean loss at w, status)."""
    cdef Py_ssize_t n = Phi.shape[0], ld = Phi.shape[1]
    cdef Py_ssize_t n_chunks = (n + ROW_CHUNK - 1) // ROW_CHUNK
    cdef Py_ssize_t stride = ((a + 7) // 8) * 8 + PAD        # per-thread row, cache-line aligned
    acc_array = np.zeros(threads * stride + PAD)
    loss_array = np.zeros(threads * PAD)
    cdef double[::1] acc = acc_array
    cdef double[::1] loss_sum = loss_array
    cdef Py_ssize_t chunk, i, k, r0, r1, t
    cdef double zi, di, total
    cdef double* mine
    cdef const feature_t* row
    cdef int status = STATUS_OK
    if n == 0:
        return 0.0, status
    with nogil:
        for chunk in prange(n_chunks, num_threads=threads, schedule="dynamic"):   # a busy core holds up no one
            t = threadid()
            mine = &acc[0] + t * stride
            r0 = chunk * ROW_CHUNK
            r1 = min(n, r0 + ROW_CHUNK)
            for i in range(r0, r1):
                row = &Phi[0, 0] + i * ld
                zi = _dot(row, &w[0], a)
                di = gu_loss_derivative(loss, zi, y[i], sigma)
                dz[i] = di
                loss_sum[t * PAD] += gu_loss_value(loss, zi, y[i], sigma)
                _axpy(mine, di, row, a)
        total = 0.0
        for t in range(threads):
            total = total + loss_sum[t * PAD]
        for k in range(a):
            grad[k] = 0.0
            for t in range(threads):
                grad[k] += acc[t * stride + k]
            grad[k] /= n
            if not isfinite(grad[k]):
                status = STATUS_DIVERGED
    return total / n, status


cdef int _thread_steps(const feature_t* Phi, Py_ssize_t ld, Py_ssize_t n, Py_ssize_t a,
                       const double* y, double* w, const double* dz, const double* grad,
                       int loss, double sigma, double eta, double threshold, Py_ssize_t batch,
                       Py_ssize_t steps, uint64_t key) noexcept nogil:
    """`steps` inner iterations of Alg. 2 (lines 7–10) on one thread, lock-free on w."""
    cdef Py_ssize_t t, b, i, j, line
    cdef uint64_t c, c_next
    cdef double acc, zi, v, u
    cdef const feature_t* row
    cdef Py_ssize_t row_lines = (a * sizeof(feature_t) + 63) // 64     # cache lines of a row's |A| entries
    for t in range(steps):
        c = <uint64_t>t * <uint64_t>(batch + 1)
        if t + 1 < steps:
            # The draws are stateless: the next step's rows are known now. Request their first
            # cache lines so the random-row misses overlap this step's work (the hardware
            # prefetcher streams the rest of each row). Changes no result, only the wait.
            c_next = c + <uint64_t>(batch + 1)
            for b in range(batch):
                row = Phi + <Py_ssize_t>(draw(key, c_next + 1 + b) % <uint64_t>n) * ld
                for line in range(min(PREFETCH_LINES, row_lines)):
                    KB_PREFETCH(<const char*>row + 64 * line)
        j = <Py_ssize_t>(draw(key, c) % <uint64_t>a)                      # line 8
        acc = 0.0
        for b in range(batch):                                            # line 7 (with replacement)
            i = <Py_ssize_t>(draw(key, c + 1 + b) % <uint64_t>n)
            row = Phi + i * ld
            zi = _dot(row, w, a)                                          # Φ_i·ŵ, read without lock
            acc += (gu_loss_derivative(loss, zi, y[i], sigma) - dz[i]) * _value(row[j])
        v = acc / batch + grad[j]                                         # line 9
        u = w[j] - eta * v
        if not isfinite(u):
            return STATUS_DIVERGED
        w[j] = soft_threshold(u, threshold)                               # line 10, written without lock
    return STATUS_OK


def inner_loops(const feature_t[:, ::1] Phi, Py_ssize_t a, const double[::1] y, double[::1] w,
                const double[::1] dz, const double[::1] grad, int loss, double sigma, double eta,
                double threshold, Py_ssize_t batch, Py_ssize_t total_steps, uint64_t rng_seed,
                uint64_t outer_index, int threads):
    """Alg. 2 lines 5–11: `total_steps` inner steps in chunks of STEP_CHUNK; chunk c draws from
    its own stream block_key(rng_seed, outer_index·2³² + c). Threads take chunks dynamically (a
    thread that the OS deschedules holds up no one: the other threads take the remaining chunks),
    so the draws do not depend on the thread count and with one thread the chunks run in order.
    Returns the status."""
    cdef Py_ssize_t n = Phi.shape[0], ld = Phi.shape[1], c, steps
    cdef Py_ssize_t n_chunks = (total_steps + STEP_CHUNK - 1) // STEP_CHUNK
    cdef int code
    status_array = np.zeros(threads * PAD, dtype=np.intc)
    cdef int[::1] status = status_array
    if n == 0 or a == 0 or total_steps <= 0:
        return STATUS_OK
    with nogil:
        for c in prange(n_chunks, num_threads=threads, schedule="dynamic", chunksize=1):
            steps = min(STEP_CHUNK, total_steps - c * STEP_CHUNK)
            code = _thread_steps(&Phi[0, 0], ld, n, a, &y[0], &w[0], &dz[0], &grad[0],
                                 loss, sigma, eta, threshold, batch, steps,
                                 block_key(rng_seed, outer_index * STREAM_STRIDE + <uint64_t>c))
            if code != STATUS_OK:
                status[threadid() * PAD] = code
    return int(status_array.max())


def predict_features(const feature_t[:, ::1] Phi, Py_ssize_t a, const double[::1] w, int threads):
    """Φ[:, :a]·w (the shared prediction of every training row), in parallel."""
    cdef Py_ssize_t n = Phi.shape[0], ld = Phi.shape[1], i
    out = np.zeros(n)
    cdef double[::1] z = out
    if n == 0 or a == 0:
        return out
    with nogil:
        for i in prange(n, num_threads=threads, schedule="static"):
            z[i] = _dot(&Phi[0, 0] + i * ld, &w[0], a)
    return out


def decision_rows(float[:, ::1] Z, const float[::1] b, const double[::1] w, double[::1] out,
                  Py_ssize_t offset, int threads):
    """out[offset + i] = Σ_h w_h cos(Z_ih + b_h) for the phases Z = X ωᵀ of a chunk of rows (Z is
    overwritten): the prediction of the sparse model, SIMD cos (as DSG's) and a float64 dot."""
    cdef Py_ssize_t n = Z.shape[0], a = Z.shape[1], i
    if n == 0 or a == 0:
        return
    with nogil:
        for i in prange(n, num_threads=threads, schedule="static"):
            kb_cos_shift_f32(&Z[i, 0], &b[0], a)
            out[offset + i] = kb_dot_f32(&Z[i, 0], &w[0], a)
