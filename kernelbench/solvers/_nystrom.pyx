# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Products with the Gaussian kernel matrix K_nM of n rows against M fixed centres, streamed: K_nM
is never stored, each row's M kernel values are computed, used and dropped while in cache.

Why compiled: with the kernel blocks formed by NumPy, one pass over 4.5 M rows at M = 1024 spent
more time in NumPy's single-threaded clip and exp, each one more trip through memory over a block
of block_size·M values, than in the BLAS products; here every OpenMP thread computes the exponents, the exp
and the products of its own chunk of rows while the chunk is in cache.

Rows and centres come augmented so that one GEMM gives the exponent (Falkon's passes, Rudi et al.
2017, Alg. 1's KnM_times_vector):

    [x, ‖x‖², 1] · [2γc, −γ, −γ‖c‖²]ᵀ = −γ‖x − c‖²,     k(x, c) = exp(min(that, 0))

(the expansion can round above 0; the kernel is at most 1). One call computes, over rows i:

    F[i, k]  = Σ_j k(x_i, c_j) A[k, j]                       forward:  K_nM Aᵀ
    acc[k]  += k(x_i, ·) · w_ik,  w_i = F[i] or Y[i]           backward: K_nMᵀ (K_nM Aᵀ), or K_nMᵀ Y

in float64 sums over float32 (or float64) kernel values. Threads split the rows statically, each
with its own accumulator, summed at the end in thread order: the same thread count gives the same
bits.
"""
import numpy as np

from cython cimport floating
from cython.parallel cimport prange, threadid


cdef extern from "_simd.h" nogil:
    int KB_OPENMP
    void kb_exp_nonpositive_f32(float* z, Py_ssize_t n)
    void kb_exp_nonpositive_f64(double* z, Py_ssize_t n)
    double kb_dot_f32(const float* z, const double* a, Py_ssize_t n)
    double kb_dot_f64(const double* z, const double* a, Py_ssize_t n)
    void kb_axpy_f32(double* acc, double s, const float* z, Py_ssize_t n)
    void kb_axpy_f64(double* acc, double s, const double* z, Py_ssize_t n)
    void kb_phases_f32(float* Z, Py_ssize_t ldz, const float* X, Py_ssize_t R, Py_ssize_t p,
                       const float* Ct, Py_ssize_t M)
    void kb_phases_f64(double* Z, Py_ssize_t ldz, const double* X, Py_ssize_t R, Py_ssize_t p,
                       const double* Ct, Py_ssize_t M)

OPENMP_BUILD = bool(KB_OPENMP)   # tests fail if a prange module was built without OpenMP

cdef Py_ssize_t CHUNK_VALUES = 32768   # kernel values per thread's chunk (128 KiB in float32): in L2
cdef Py_ssize_t MAX_CHUNK_ROWS = 256


cdef void _chunk(const floating* rows, Py_ssize_t r0, Py_ssize_t nr, Py_ssize_t p,
                 const floating* centers_t, Py_ssize_t M, const floating* stored,
                 const double* A, const double* Y, Py_ssize_t K, double* F, double* acc,
                 floating* Z) noexcept nogil:
    """Rows r0 .. r0+nr−1: their kernel values (read from `stored` when given, else computed into
    Z, nr × M), then their rows of F and their terms of the accumulator."""
    cdef Py_ssize_t i, k
    cdef floating* z
    cdef double w
    if stored != NULL:
        Z = <floating*>stored + r0 * M
    else:
        _values(rows + r0 * p, nr, p, centers_t, M, Z)
    for i in range(nr):
        z = Z + i * M
        for k in range(K):
            if A != NULL:
                if floating is float:
                    w = kb_dot_f32(z, A + k * M, M)
                else:
                    w = kb_dot_f64(z, A + k * M, M)
                if F != NULL:
                    F[(r0 + i) * K + k] = w
            else:
                w = Y[(r0 + i) * K + k]
            if acc != NULL:
                if floating is float:
                    kb_axpy_f32(acc + k * M, w, z, M)
                else:
                    kb_axpy_f64(acc + k * M, w, z, M)


cdef void _values(const floating* rows, Py_ssize_t nr, Py_ssize_t p, const floating* centers_t,
                  Py_ssize_t M, floating* Z) noexcept nogil:
    """Z (nr × M) = exp(min(rows · centers_t, 0)): the kernel values of nr augmented rows."""
    cdef Py_ssize_t i
    for i in range(0, nr, 4):
        if floating is float:
            kb_phases_f32(Z + i * M, M, rows + i * p, min(4, nr - i), p, centers_t, M)
        else:
            kb_phases_f64(Z + i * M, M, rows + i * p, min(4, nr - i), p, centers_t, M)
    for i in range(nr):
        if floating is float:
            kb_exp_nonpositive_f32(Z + i * M, M)
        else:
            kb_exp_nonpositive_f64(Z + i * M, M)


cdef Py_ssize_t _chunk_rows(Py_ssize_t M) noexcept nogil:
    """Rows per thread's chunk (the same for streamed and stored values: same chunks, same sums)."""
    return max(1, min(MAX_CHUNK_ROWS, CHUNK_VALUES // max(M, 1)))


cdef tuple _products(const floating* rows_p, Py_ssize_t p, const floating* centers_p,
                     const floating* stored_p, Py_ssize_t n, Py_ssize_t M, A, Y, bint forward,
                     bint backward, int threads):
    """streamed (rows and centres given) or stored (values given) products; see streamed_products."""
    if (A is None) == (Y is None):
        raise ValueError("give exactly one of A (K × M) and Y (n × K)")
    cdef const double[:, ::1] A_ = None if A is None else np.ascontiguousarray(A, dtype=np.float64)
    cdef const double[:, ::1] Y_ = None if Y is None else np.ascontiguousarray(Y, dtype=np.float64)
    cdef Py_ssize_t K = A_.shape[0] if A is not None else Y_.shape[1]
    if A is not None and A_.shape[1] != M:
        raise ValueError(f"A has {A_.shape[1]} columns for {M} centres")
    if Y is not None and (Y_.shape[0] != n or forward or not backward):
        raise ValueError("Y (one row per row) goes with backward=True and forward=False")
    threads = max(1, threads)
    cdef Py_ssize_t chunk_rows = _chunk_rows(M)
    cdef Py_ssize_t n_chunks = (n + chunk_rows - 1) // chunk_rows
    cdef double[:, ::1] F = np.zeros((n, K)) if forward else None
    cdef double[:, :, ::1] acc = np.zeros((threads, K, M)) if backward else None
    if n == 0 or M == 0 or K == 0:
        return (np.asarray(F) if forward else None, np.zeros((K, M)) if backward else None)
    dtype = np.float32 if floating is float else np.float64
    cdef floating[:, ::1] Z = np.empty((threads, chunk_rows * M if stored_p == NULL else 1), dtype=dtype)
    cdef const double* A_p = NULL if A is None else &A_[0, 0]
    cdef const double* Y_p = NULL if Y is None else &Y_[0, 0]
    cdef double* F_p = &F[0, 0] if forward else NULL
    cdef double* acc_p = &acc[0, 0, 0] if backward else NULL
    cdef Py_ssize_t chunk, r0, t
    with nogil:
        for chunk in prange(n_chunks, num_threads=threads, schedule="static"):
            t = threadid()
            r0 = chunk * chunk_rows
            _chunk(rows_p, r0, min(chunk_rows, n - r0), p, centers_p, M, stored_p, A_p, Y_p, K, F_p,
                   NULL if acc_p == NULL else acc_p + t * K * M, &Z[t, 0])
    return (np.asarray(F) if forward else None,
            np.asarray(acc).sum(axis=0) if backward else None)


def streamed_products(const floating[:, ::1] rows, const floating[:, ::1] centers_t, A=None, Y=None,
                      bint forward=False, bint backward=False, int threads=1):
    """(F, acc): F = K_nM Aᵀ (n × K) if `forward`; acc = K_nMᵀ W (K × M) if `backward`, W = F when A
    is given, else Y (n × K). rows: n × p augmented rows; centers_t: p × M, the augmented centres
    transposed (same dtype); A: K × M. The kernel values are computed and dropped chunk by chunk."""
    cdef Py_ssize_t n = rows.shape[0], p = rows.shape[1], M = centers_t.shape[1]
    if centers_t.shape[0] != p or p == 0:
        raise ValueError(f"rows have {p} columns, centres {centers_t.shape[0]}")
    return _products(&rows[0, 0] if n > 0 else <floating*>NULL, p,
                     &centers_t[0, 0] if M > 0 else <floating*>NULL, <floating*>NULL, n, M, A, Y,
                     forward, backward, threads)


def stored_products(const floating[:, ::1] values, A=None, Y=None, bint forward=False,
                    bint backward=False, int threads=1):
    """streamed_products over kernel values kept from kernel_values (n × M): the same sums in the
    same order, so the same bits on the same thread count."""
    cdef Py_ssize_t n = values.shape[0], M = values.shape[1]
    return _products(<floating*>NULL, 0, <floating*>NULL,
                     &values[0, 0] if n > 0 and M > 0 else <floating*>NULL, n, M, A, Y, forward,
                     backward, threads)


def kernel_values(const floating[:, ::1] rows, const floating[:, ::1] centers_t, floating[:, ::1] out,
                  int threads=1):
    """out (n × M) = the kernel values streamed_products computes, row for row."""
    cdef Py_ssize_t n = rows.shape[0], p = rows.shape[1], M = centers_t.shape[1]
    if centers_t.shape[0] != p or out.shape[0] != n or out.shape[1] != M:
        raise ValueError("rows (n × p), centers_t (p × M) and out (n × M) do not match")
    cdef Py_ssize_t chunk_rows = _chunk_rows(M), n_chunks = (n + chunk_rows - 1) // chunk_rows, chunk, r0
    if n == 0 or M == 0:
        return
    with nogil:
        for chunk in prange(n_chunks, num_threads=max(1, threads), schedule="static"):
            r0 = chunk * chunk_rows
            _values(&rows[r0, 0], min(chunk_rows, n - r0), p, &centers_t[0, 0], M, &out[r0, 0])


def exp_nonpositive(floating[:, ::1] G, int threads=1):
    """G = exp(min(G, 0)) in place, rows split over `threads`."""
    cdef Py_ssize_t i, n = G.shape[0], m = G.shape[1]
    if n == 0 or m == 0:
        return
    with nogil:
        for i in prange(n, num_threads=max(1, threads), schedule="static"):
            if floating is float:
                kb_exp_nonpositive_f32(&G[i, 0], m)
            else:
                kb_exp_nonpositive_f64(&G[i, 0], m)
