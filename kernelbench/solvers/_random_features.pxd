# Random Fourier features regenerated from seeds (Dai et al. 2014, §4: "sample ω_i with seed i").
#
# One place for the feature generator of every random-feature solver. It is counter-based: the
# value of feature j of block t depends only on (seed, t, j), computed by the splitmix64 hash, so a
# block, or a single old feature, can be regenerated at any time in any order, on any thread, with
# no generator state. tests/reference.py re-implements exactly this hash in NumPy.
#
#   key(seed, t)      = splitmix64(splitmix64(seed) + t)
#   u(key, c)         = ((splitmix64(key ^ (c * ODD)) >> 11) + 0.5) / 2^53        uniform in (0, 1)
#   feature j uses counters c = j(2d+1) + ...:
#     w_jk  (rbf)     = sqrt(2γ) · sqrt(-2 ln u(2k)) · cos(2π u(2k+1))   ω ~ N(0, 2γ I) for exp(-γ‖x-x'‖²)
#     w_jk  (laplace) = γ · tan(π (u(2k) - 1/2))                          ω ~ Cauchy(0, γ) for exp(-γ‖x-x'‖₁)
#     b_j             = 2π u(2d)
# and φ_j(x) = sqrt(2) cos(w_j·x + b_j) has E[φ_j(x) φ_j(x')] = k(x, x') (Bochner; Dai et al. Thm. 2).
from cython cimport floating
from libc.stdint cimport uint64_t
from libc.math cimport sqrt, log, cos, tan, M_PI
from scipy.linalg.cython_blas cimport sgemm, dgemm

cdef extern from "_simd.h" nogil:
    void kb_cos_shift_f32(float* z, const float* shift, Py_ssize_t n)
    void kb_cos_shift_f64(double* z, const double* shift, Py_ssize_t n)

cdef enum:
    KERNEL_RBF = 0
    KERNEL_LAPLACIAN = 1

cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x = x + <uint64_t>0x9E3779B97F4A7C15
    x = (x ^ (x >> 30)) * <uint64_t>0xBF58476D1CE4E5B9
    x = (x ^ (x >> 27)) * <uint64_t>0x94D049BB133111EB
    return x ^ (x >> 31)

cdef inline uint64_t block_key(uint64_t seed, uint64_t block) noexcept nogil:
    return splitmix64(splitmix64(seed) + block)

cdef inline double uniform01(uint64_t key, uint64_t counter) noexcept nogil:
    return (<double>(splitmix64(key ^ (counter * <uint64_t>0xD1B54A32D192ED03)) >> 11) + 0.5) * (1.0 / 9007199254740992.0)

cdef inline double omega_entry(uint64_t key, uint64_t base, Py_ssize_t k, int kernel, double gamma) noexcept nogil:
    cdef double u1 = uniform01(key, base + 2 * k)
    if kernel == KERNEL_LAPLACIAN:
        return gamma * tan(M_PI * (u1 - 0.5))
    cdef double u2 = uniform01(key, base + 2 * k + 1)
    return sqrt(2.0 * gamma) * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2)

ctypedef fused real_t:
    float
    double

cdef inline void generate_features(uint64_t seed, uint64_t block, Py_ssize_t first, Py_ssize_t count,
                                   Py_ssize_t d, int kernel, double gamma,
                                   real_t* W, real_t* b) noexcept nogil:
    """Features first..first+count-1 of `block` into W (count × d, row-major) and b (count)."""
    cdef uint64_t key = block_key(seed, block)
    cdef Py_ssize_t j, k
    cdef uint64_t base
    for j in range(count):
        base = <uint64_t>(first + j) * <uint64_t>(2 * d + 1)
        for k in range(d):
            W[j * d + k] = <real_t>omega_entry(key, base, k, kernel, gamma)
        b[j] = <real_t>(2.0 * M_PI * uniform01(key, base + 2 * d))


cdef inline void feature_phases(const floating* X, Py_ssize_t nrows, Py_ssize_t d,
                                const floating* W, Py_ssize_t mc, floating* Z) noexcept nogil:
    """The phases ω_j·x of a feature chunk: Z (nrows × mc, row-major) = X (nrows × d) · W (mc × d)ᵀ,
    by BLAS in column-major terms: Zᵀ (mc × nrows) = Wᵀᵀ · Xᵀ, i.e. gemm('T', 'N') on the row-major
    buffers as they are."""
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


cdef inline void feature_values(const floating* X, Py_ssize_t nrows, Py_ssize_t d,
                                const floating* W, const floating* b, Py_ssize_t mc,
                                floating* Z) noexcept nogil:
    """The features of a chunk without the √2: Z[i, j] = cos(ω_j·x_i + b_j) (nrows × mc, row-major),
    phases by one GEMM, then the SIMD cos of _simd.h row by row."""
    cdef Py_ssize_t i
    feature_phases(X, nrows, d, W, mc, Z)
    for i in range(nrows):
        if floating is float:
            kb_cos_shift_f32(Z + i * mc, b, mc)
        else:
            kb_cos_shift_f64(Z + i * mc, b, mc)
