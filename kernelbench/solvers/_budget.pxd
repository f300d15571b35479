# cython: language_level=3
"""Budget maintenance by merging, shared by the budgeted kernel SGD cores (_bsgd.pyx: BSGD;
_bgs3vm.pyx: BGS3VM). Glasmachers & Qaadan, Alg. 1 and §2–§3; the derivations are in _bsgd.pyx.

Everything here is inline and nogil: golden section search for h (Alg. 1 line 8), the merged
coefficient and weight degradation with the kernel power shortcuts k(x_i, z) = κ^{(1−h)²},
k(x_j, z) = κ^{h²} (lines 9–10), bilinear lookup in the (m, κ) tables of merging.py, the choice of
the merge partner (section A), the SV of minimal |α|, and the kernel expansion f(x) (_budget.h).
"""
from libc.math cimport exp, fabs, INFINITY
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

cdef extern from "_simd.h" nogil:
    double kb_dot_f64(const double* z, const double* a, Py_ssize_t n)

cdef extern from "_budget.h" nogil:
    const double KB_GSS_EPS_STANDARD
    const double KB_GSS_EPS_PRECISE
    const double KB_INVPHI
    void kb_bsgd_exp_scaled(double* k, const double* d2, double c, Py_ssize_t n)
    double kb_bsgd_f(const double* x, Py_ssize_t d, const double* SVT, Py_ssize_t cap, Py_ssize_t n,
                     const double* norms, const double* a, double neg_gamma, double* dist,
                     double* kval)

cdef enum:
    MERGE_GSS = 0
    MERGE_GSS_PRECISE = 1
    MERGE_LOOKUP_H = 2
    MERGE_LOOKUP_WD = 3
    MERGE_REMOVAL = 4


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline double _s(double m, double lnk, double h) noexcept nogil:
    """s_{m,κ}(h) = m κ^{(1−h)²} + (1 − m) κ^{h²} (Alg. 1 line 8), κ^p = exp(p ln κ)."""
    return m * exp(lnk * (1.0 - h) * (1.0 - h)) + (1.0 - m) * exp(lnk * h * h)


cdef inline double _gss_low(double m, double lnk, double eps) noexcept nogil:
    """argmax of s over [0, 1/2] by golden section search to bracket width eps. Ties move the
    bracket towards 0, where the maximum lies when κ is so small that s underflows inside."""
    cdef double a = 0.0, b = 0.5
    cdef double c = b - KB_INVPHI * (b - a), d = a + KB_INVPHI * (b - a)
    cdef double fc = _s(m, lnk, c), fd = _s(m, lnk, d)
    while b - a > eps:
        if fc >= fd:
            b = d
            d = c
            fd = fc
            c = b - KB_INVPHI * (b - a)
            fc = _s(m, lnk, c)
        else:
            a = c
            c = d
            fc = fd
            d = a + KB_INVPHI * (b - a)
            fd = _s(m, lnk, d)
    return 0.5 * (a + b)


cdef inline double _gss_h(double m, double lnk, double eps) noexcept nogil:
    """h(m, κ): the global maximiser of s (lower branch at m = 1/2)."""
    if m <= 0.5:
        return _gss_low(m, lnk, eps)
    return 1.0 - _gss_low(1.0 - m, lnk, eps)


cdef inline double _bilinear(const double* T, Py_ssize_t G, double m, double k) noexcept nogil:
    """Bilinear interpolation of the G × G table T[i, j] ≈ f(i/(G−1), j/(G−1))."""
    cdef double x = m * (G - 1), y = k * (G - 1), fx, fy
    cdef Py_ssize_t i = <Py_ssize_t>x, j = <Py_ssize_t>y
    if i > G - 2:
        i = G - 2
    if i < 0:
        i = 0
    if j > G - 2:
        j = G - 2
    if j < 0:
        j = 0
    fx = x - i
    fy = y - j
    T = T + i * G + j
    return ((1.0 - fx) * ((1.0 - fy) * T[0] + fy * T[1])
            + fx * ((1.0 - fy) * T[G] + fy * T[G + 1]))


cdef inline double _lookup_h(const double* H, Py_ssize_t G, double m, double k) noexcept nogil:
    if m <= 0.5:
        return _bilinear(H, G, m, k)
    return 1.0 - _bilinear(H, G, 1.0 - m, k)


cdef inline double _lookup_wd(const double* W, Py_ssize_t G, double m, double k) noexcept nogil:
    return _bilinear(W, G, m if m <= 0.5 else 1.0 - m, k)


cdef inline double _merge_wd(double ai, double aj, double lnk, double kappa, double h) noexcept nogil:
    """WD = α_i² + α_j² − α_z² + 2 α_i α_j κ with the closed-form α_z (Alg. 1 lines 9–10)."""
    cdef double az = ai * exp(lnk * (1.0 - h) * (1.0 - h)) + aj * exp(lnk * h * h)
    return ai * ai + aj * aj - az * az + 2.0 * ai * aj * kappa


cdef inline double _merged_coef(double ai, double aj, double lnk, double h) noexcept nogil:
    """α_z = α_i κ^{(1−h)²} + α_j κ^{h²} (Alg. 1 lines 9, 15)."""
    return ai * exp(lnk * (1.0 - h) * (1.0 - h)) + aj * exp(lnk * h * h)


cdef inline Py_ssize_t _argmin_abs(const double* a, Py_ssize_t n) noexcept nogil:
    """The SV of minimal |α|; ties (equal to relative 1e-12, e.g. the SVs Pegasos added at
    different steps, whose |α| = 1/(λt) agree up to rounding) go to the lowest slot."""
    cdef Py_ssize_t j
    cdef double v = fabs(a[0])
    for j in range(1, n):
        if fabs(a[j]) < v:
            v = fabs(a[j])
    v *= 1.0 + 1e-12
    for j in range(n):
        if fabs(a[j]) <= v:
            return j
    return 0


cdef inline Py_ssize_t _select_partner(int method, Py_ssize_t nc, double ai, const double* a,
                                       const Py_ssize_t* cidx, const double* cm, const double* clnk,
                                       const double* ck, double* cwd, const double* Hp,
                                       const double* Wp, Py_ssize_t G, double* h_out,
                                       double* wd_out) noexcept nogil:
    """Section A: the best merge partner among the nc candidates cidx[c] (coefficients a, merge
    parameters m = cm, ln κ = clnk, κ = ck; strict <: first on ties), its h and its WD (in the
    units of a); every candidate's WD is left in cwd."""
    cdef Py_ssize_t c, best = -1
    cdef double h, wd, aj, best_wd = INFINITY, best_h = 0.0, eps
    if method == MERGE_LOOKUP_WD:
        for c in range(nc):
            aj = a[cidx[c]]
            wd = (ai + aj) * (ai + aj) * _lookup_wd(Wp, G, cm[c], ck[c])
            cwd[c] = wd
            if wd < best_wd:
                best_wd = wd
                best = c
        best_h = _lookup_h(Hp, G, cm[best], ck[best])
        # the merge actually performed has this WD (exact for the h used)
        best_wd = _merge_wd(ai, a[cidx[best]], clnk[best], ck[best], best_h)
    else:
        eps = KB_GSS_EPS_PRECISE if method == MERGE_GSS_PRECISE else KB_GSS_EPS_STANDARD
        for c in range(nc):
            if method == MERGE_LOOKUP_H:
                h = _lookup_h(Hp, G, cm[c], ck[c])
            else:
                h = _gss_h(cm[c], clnk[c], eps)
            wd = _merge_wd(ai, a[cidx[c]], clnk[c], ck[c], h)
            cwd[c] = wd
            if wd < best_wd:
                best_wd = wd
                best_h = h
                best = c
    h_out[0] = best_h
    wd_out[0] = best_wd
    return best
