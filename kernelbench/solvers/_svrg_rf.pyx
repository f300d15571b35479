# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of SVRG on a fixed set of random Fourier features (Li & Póczos 2016, §5.1: the
non-DSG competitor "pre-generates" 4F random features; SVRG of Johnson & Zhang 2013).

The features are DSG's: feature j of block t is regenerated from (seed, t, j) by
_random_features.pxd, so SVRG-RF with n_blocks blocks uses exactly the features DSG draws in its
first n_blocks iterations. The data are mapped once, Z_ij = cos(ω_j·x_i + b_j) (n × D), and the
model is f(x) = Σ_j β_j cos(ω_j·x + b_j), as DSG's. The objective is

    R(β) = (1/n) Σ ℓ(z_i·β, y_i) + (reg/2) ‖β‖²,      reg = λ · F/2

(DSG's ‖f‖² = (F/2)‖β‖² for blocks of F features: see dsg.py coef_norm_sq).

SVRG (Johnson & Zhang 2013, Alg. "Procedure SVRG", option I), mini-batch version:
    every `epoch_length` iterations: β̃ = β, g̃_i = ℓ'(z_i·β̃, y_i) for all i, μ = (1/n) Σ g̃_i z_i
    each iteration, batch B:  β ← β − η ( 1/|B| Σ_{i∈B} (ℓ'(z_i·β, y_i) − g̃_i) z_i + μ + reg·β )
With K outputs (softmax: one score per class) β, μ are K × D and ℓ' is the K-vector p − y.
"""
import numpy as np

from cython cimport floating
from libc.math cimport isfinite, fabs, exp
from libc.stdint cimport uint64_t

from kernelbench.solvers._random_features cimport generate_features, KERNEL_RBF, KERNEL_LAPLACIAN
from kernelbench.solvers._losses cimport loss_derivative, LOSS_SOFTMAX

cdef enum:
    STATUS_OK = 0
    STATUS_DIVERGED = 1

OK, DIVERGED = STATUS_OK, STATUS_DIVERGED


def features(uint64_t seed, Py_ssize_t block_size, Py_ssize_t n_blocks, Py_ssize_t d, kernel,
             double gamma):
    """(W, b): ω (D × d) and phases (D,) of DSG's first n_blocks blocks, float64."""
    cdef int code = {"rbf": KERNEL_RBF, "laplacian": KERNEL_LAPLACIAN}[kernel]
    cdef Py_ssize_t D = block_size * n_blocks, t
    W = np.empty((D, d))
    b = np.empty(D)
    cdef double[:, ::1] Wv = W
    cdef double[::1] bv = b
    with nogil:
        for t in range(n_blocks):
            generate_features(seed, <uint64_t>t, 0, block_size, d, code, gamma,
                              &Wv[t * block_size, 0], &bv[t * block_size])
    return W, b


cdef extern from "_simd.h" nogil:
    double kb_dot_f32(const float* z, const double* a, Py_ssize_t n)
    double kb_dot_f64(const double* z, const double* a, Py_ssize_t n)


cdef inline double _dot(const floating* z, const double* beta, Py_ssize_t D) noexcept nogil:
    """z·β with float64 accumulation, SIMD (_simd.h; a plain loop would not vectorise the sum)."""
    if floating is float:
        return kb_dot_f32(z, beta, D)
    else:
        return kb_dot_f64(z, beta, D)


cdef inline bint _derivative(int loss, const floating* z, const double* beta, Py_ssize_t D,
                             Py_ssize_t K, const double* y, double f_bound, double* f, double* g) noexcept nogil:
    """f = β z (K scores) and g = ∂ℓ/∂f at (f, y). Returns False if f is NaN/inf or beyond f_bound."""
    cdef Py_ssize_t k
    cdef double top, total
    cdef bint ok = True
    for k in range(K):
        f[k] = _dot(z, beta + k * D, D)
        if not (fabs(f[k]) <= f_bound):
            ok = False
    if loss != LOSS_SOFTMAX:
        g[0] = loss_derivative(loss, f[0], y[0])
        return ok
    top = f[0]
    for k in range(1, K):
        top = max(top, f[k])
    total = 0.0
    for k in range(K):
        g[k] = exp(f[k] - top)
        total = total + g[k]
    for k in range(K):
        g[k] = g[k] / total - y[k]                             # softmax p_k − y_k
    return ok


cdef class SVRGCore:
    """SVRG state: β (K × D), the snapshot's per-sample derivatives g̃ (n × K) and mean gradient μ."""
    cdef public object beta, mu, gsnap
    cdef public int loss
    cdef public Py_ssize_t n_iter, in_epoch, n_snapshots, n_outputs
    cdef public double reg, eta, f_bound

    def __init__(self, *, n_samples, n_features, loss, reg, eta, n_outputs=1, f_bound=1e300):
        self.n_outputs = n_outputs
        self.beta = np.zeros((n_outputs, n_features))
        self.mu = np.zeros((n_outputs, n_features))
        self.gsnap = np.zeros((n_samples, n_outputs))
        self.loss, self.reg, self.eta, self.f_bound = loss, reg, eta, f_bound
        self.n_iter = 0
        self.in_epoch = 0          # iterations done in the current epoch (0: take a snapshot next)
        self.n_snapshots = 0

    def train(self, const floating[:, ::1] Z, const double[:, ::1] Y, const long long[::1] rows,
              Py_ssize_t batch_size, Py_ssize_t epoch_length):
        """Iterations over consecutive batches of `rows` (Y: n × K targets, one-hot for softmax).
        Returns (status, iterations, snapshots)."""
        for name in ("beta", "mu", "gsnap"):          # an unpickled model may hold read-only arrays
            if not getattr(self, name).flags.writeable:
                setattr(self, name, getattr(self, name).copy())
        cdef Py_ssize_t n = Z.shape[0], D = Z.shape[1], K = self.n_outputs, n_rows = rows.shape[0]
        cdef double[:, ::1] beta = self.beta, mu = self.mu, gsnap = self.gsnap
        cdef double[:, ::1] step = np.empty((K, D)), coef = np.empty((batch_size, K))
        cdef double[::1] f = np.empty(K), g = np.empty(K)
        cdef Py_ssize_t start = 0, nb, i, j, k, row, steps = 0, snaps = 0
        cdef Py_ssize_t in_epoch = self.in_epoch
        cdef double c, eta = self.eta, reg = self.reg, f_bound = self.f_bound
        cdef int status = STATUS_OK, loss = self.loss
        with nogil:
            while start < n_rows:
                if in_epoch == 0:                                 # snapshot β̃ = β: g̃_i and μ
                    for k in range(K):
                        for j in range(D):
                            mu[k, j] = 0.0
                    for i in range(n):
                        if not _derivative(loss, &Z[i, 0], &beta[0, 0], D, K, &Y[i, 0], f_bound,
                                           &f[0], &gsnap[i, 0]):
                            status = STATUS_DIVERGED
                        for k in range(K):
                            c = gsnap[i, k] / n
                            if c != 0.0:
                                for j in range(D):
                                    mu[k, j] += c * Z[i, j]
                    snaps += 1
                    if status != STATUS_OK:
                        break
                nb = min(batch_size, n_rows - start)
                for i in range(nb):                               # all at the same β (mini-batch)
                    row = rows[start + i]
                    if not _derivative(loss, &Z[row, 0], &beta[0, 0], D, K, &Y[row, 0], f_bound,
                                       &f[0], &g[0]):
                        status = STATUS_DIVERGED
                    for k in range(K):
                        coef[i, k] = (g[k] - gsnap[row, k]) / nb
                if status != STATUS_OK:
                    break
                for k in range(K):
                    for j in range(D):
                        step[k, j] = mu[k, j] + reg * beta[k, j]
                    for i in range(nb):
                        c = coef[i, k]
                        if c != 0.0:
                            row = rows[start + i]
                            for j in range(D):
                                step[k, j] += c * Z[row, j]
                for k in range(K):
                    for j in range(D):
                        beta[k, j] -= eta * step[k, j]
                        if not isfinite(beta[k, j]):
                            status = STATUS_DIVERGED
                steps += 1
                start += nb
                in_epoch += 1
                if in_epoch >= epoch_length:
                    in_epoch = 0
                if status != STATUS_OK:
                    break
        self.in_epoch = in_epoch
        self.n_iter += steps
        self.n_snapshots += snaps
        return status, steps, snaps
