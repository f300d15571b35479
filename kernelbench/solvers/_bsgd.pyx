# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of BSGD with budget maintenance by merging (Glasmachers & Qaadan; Wang et al. 2012).

Model: f(x) = scale · Σ_j a_j k(sv_j, x) + b with the Gaussian kernel k(x, x') = exp(-γ‖x − x'‖²);
α_j = scale · a_j, so the Pegasos shrink of every coefficient by (1 − λη_t) is one multiplication
of `scale` (O(1), not O(B)).

One SGD step t on the primal objective (1), hinge loss, η_t = 1/(λt):
    μ      = f(x_t)                                   (B kernel values, one vector exp)
    scale *= 1 − λη_t                                 (shrink; t = 1 empties the model)
    if y_t μ < 1:  add (x_t, α = η_t y_t);  b += η_t y_t when the bias is on
    if #SV = B + 1: budget maintenance (Alg. 1)

Budget maintenance, Alg. 1: x_i = the SV of minimal |α|; for every SV x_j of the same label (same
sign of α), m = α_i/(α_i + α_j) and κ = k(x_i, x_j) (§3); h maximises
s(h) = m κ^{(1−h)²} + (1 − m) κ^{h²} (line 8); α_z = α_i κ^{(1−h)²} + α_j κ^{h²} (lines 9, 15),
WD = α_i² + α_j² − α_z² + 2 α_i α_j κ (line 10); the pair with minimal WD is replaced by
z = h x_i + (1 − h) x_j (line 14). The powers of κ are the §2 shortcuts
k(x_i, z) = κ^{(1−h)²}, k(x_j, z) = κ^{h²}: no kernel evaluation on z is needed.

κ is never recomputed from the data: the core keeps the matrix D of squared distances between its
SVs. A new SV's row is the distances its prediction step computed anyway; a merged point's row
follows from the identity ‖h a + (1 − h) b‖² = h‖a‖² + (1 − h)‖b‖² − h(1 − h)‖a − b‖² with
a = x_i − x_k, b = x_j − x_k, so budget maintenance costs O(B) plus the h/WD computation.

h is computed by golden section search over the half interval that holds the global maximum:
s(h) − s(1 − h) = (2m − 1)(κ^{(1−h)²} − κ^{h²}), so for m ≤ 1/2 it lies in [0, 1/2] (and at
m = 1/2, in the two-mode set Z of Lemma 1, we take that lower branch); m > 1/2 uses h(m) = 1 − h(1 − m).
Lookup tables (grid_size² points over (m, κ) ∈ [0, 1]², bilinear): H and W hold h and the
normalised WD(m, κ)/(α_i + α_j)² of that lower branch, which continues smoothly across m = 1/2,
so interpolation never straddles Lemma 1's jump of h on Z (nor WD's kink there); lookups with
m > 1/2 use the symmetries h(m) = 1 − h(1 − m), WD(m) = WD(1 − m).

Everything in train/decision runs without the GIL; no Python objects in the loops.
"""
import numpy as np

from libc.math cimport exp, fabs, log, INFINITY

from kernelbench.solvers._budget cimport (
    KB_GSS_EPS_PRECISE, KB_GSS_EPS_STANDARD, MERGE_GSS, MERGE_GSS_PRECISE, MERGE_LOOKUP_H,
    MERGE_LOOKUP_WD, MERGE_REMOVAL, _argmin_abs, _gss_h, _gss_low, _lookup_h, _lookup_wd,
    _merge_wd, _merged_coef, _now, _s, _select_partner, kb_bsgd_exp_scaled, kb_bsgd_f, kb_dot_f64)

# The merging pieces (golden section search, lookup, WD, partner choice) live in _budget.pxd,
# shared with BGS3VM (_bgs3vm.pyx).
METHODS = {"gss": MERGE_GSS, "gss-precise": MERGE_GSS_PRECISE, "lookup-h": MERGE_LOOKUP_H,
           "lookup-wd": MERGE_LOOKUP_WD, "removal": MERGE_REMOVAL}
EPS_STANDARD, EPS_PRECISE = KB_GSS_EPS_STANDARD, KB_GSS_EPS_PRECISE


def build_tables(Py_ssize_t grid_size, double eps=1e-10):
    """(H, W): G × G tables over m_i = i/(G−1) (rows), κ_j = j/(G−1) (columns) by golden section
    search at precision eps. H[i, j] = the lower-branch argmax h_low of s over [0, 1/2];
    W[i, j] = the normalised weight degradation m² + (1 − m)² + 2m(1 − m)κ − s(h_low)². For
    m ≤ 1/2 these are h(m, κ) and WD(m, κ)/(α_i + α_j)²; for m > 1/2 they continue the lower
    branch smoothly, so that cells straddling m = 1/2 interpolate one branch, never the jump of h
    on Z nor the kink of WD there (lookups with m > 1/2 use the symmetries h(m) = 1 − h(1 − m),
    WD(m) = WD(1 − m)). κ = 0 is the limit s(h) → m·[h = 1] + (1 − m)·[h = 0]."""
    if grid_size < 2:
        raise ValueError(f"grid_size must be >= 2, got {grid_size}")
    H_arr = np.empty((grid_size, grid_size))
    W_arr = np.empty((grid_size, grid_size))
    cdef double[:, ::1] H = H_arr
    cdef double[:, ::1] W = W_arr
    cdef Py_ssize_t i, j, G = grid_size
    cdef double m, k, lnk, h, s
    with nogil:
        for i in range(G):
            m = i / <double>(G - 1)
            for j in range(G):
                k = j / <double>(G - 1)
                if j == 0:                      # κ = 0: the lower branch is h = 0, s = 1 − m
                    H[i, j] = 0.0
                    W[i, j] = m * m + (1.0 - m) * (1.0 - m) - (1.0 - m) * (1.0 - m)
                    continue
                lnk = log(k)
                h = _gss_low(m, lnk, eps)
                s = _s(m, lnk, h)
                H[i, j] = h
                W[i, j] = m * m + (1.0 - m) * (1.0 - m) + 2.0 * m * (1.0 - m) * k - s * s
    return H_arr, W_arr


def golden_section_h(double m, double kappa, double eps=1e-10):
    """h(m, κ) by golden section search (the function the solver and the tables use)."""
    if not (0.0 <= m <= 1.0 and 0.0 < kappa <= 1.0):
        raise ValueError("need 0 <= m <= 1 and 0 < kappa <= 1")
    return _gss_h(m, log(kappa), eps)


def lookup(const double[:, ::1] H, const double[:, ::1] W, double m, double kappa):
    """(h, normalised WD) looked up with bilinear interpolation, as the solver does."""
    cdef Py_ssize_t G = H.shape[0]
    return _lookup_h(&H[0, 0], G, m, kappa), _lookup_wd(&W[0, 0], G, m, kappa)


cdef class BSGDCore:
    """Budgeted model state: SVs (stored column-wise, SVT: d × capacity), coefficients a (α = scale · a), SV norms, the
    squared-distance matrix D between SVs, bias, and the instrumentation counters."""
    cdef public Py_ssize_t n_dims, budget, capacity, n_sv, n_iter, grid_size
    cdef public double gamma, lam, scale, bias
    cdef public bint fit_bias, diagnose
    cdef public int method
    cdef public object SVT, a, norms, D, H, W
    # instrumentation
    cdef public long long n_merges, n_removals, n_fallback_removals
    cdef public long long diag_events, diag_equal
    cdef public double seconds_a, seconds_b, diag_wd_precise_sum, diag_wd_gss_sum, diag_wd_lookup_wd_sum
    cdef public double last_wd, wd_sum
    # raw views (fixed capacity: allocated once)
    cdef double* svp
    cdef double* ap
    cdef double* normp
    cdef double* Dp
    cdef const double* Hp
    cdef const double* Wp
    cdef object _scratch
    cdef double* dist
    cdef double* kval
    cdef double* cm
    cdef double* clnk
    cdef double* ck
    cdef double* cwd
    cdef double* tmp
    cdef double* cwdp
    cdef Py_ssize_t* cidx
    cdef object _cidx

    def __init__(self, *, n_dims, budget, gamma, lam, method, fit_bias=False, H=None, W=None,
                 diagnose=False):
        if method not in METHODS:
            raise ValueError(f"merge must be one of {sorted(METHODS)}, got {method!r}")
        self.method = METHODS[method]
        self.n_dims, self.budget, self.gamma, self.lam = n_dims, budget, gamma, lam
        self.fit_bias, self.diagnose = fit_bias, diagnose
        needs_tables = self.method in (MERGE_LOOKUP_H, MERGE_LOOKUP_WD) or diagnose
        if needs_tables and (H is None or W is None):
            raise ValueError("lookup merging and diagnostics need the H and W tables")
        self.capacity = budget + 1
        cap = self.capacity
        self.SVT = np.zeros((n_dims, cap))
        self.a = np.zeros(cap)
        self.norms = np.zeros(cap)
        self.D = np.zeros((cap, cap))
        self._scratch = np.zeros((8, cap))
        self._cidx = np.zeros(cap, dtype=np.intp)
        self.grid_size = 0
        if H is not None:
            self.H = np.ascontiguousarray(H, dtype=np.float64)
            self.W = np.ascontiguousarray(W, dtype=np.float64)
            if self.H.shape != self.W.shape or self.H.ndim != 2 or self.H.shape[0] != self.H.shape[1]:
                raise ValueError("H and W must be square tables of one size")
            self.grid_size = self.H.shape[0]
        self._bind()
        self.n_sv = self.n_iter = 0
        self.scale = 1.0
        self.bias = 0.0
        self.n_merges = self.n_removals = self.n_fallback_removals = 0
        self.diag_events = self.diag_equal = 0
        self.seconds_a = self.seconds_b = 0.0
        self.diag_wd_precise_sum = self.diag_wd_gss_sum = self.diag_wd_lookup_wd_sum = 0.0
        self.last_wd = self.wd_sum = 0.0

    cdef void _bind(self):
        cdef double[:, ::1] sv = self.SVT
        cdef double[::1] a = self.a
        cdef double[::1] nr = self.norms
        cdef double[:, ::1] D = self.D
        cdef double[:, ::1] s = self._scratch
        cdef Py_ssize_t[::1] ci = self._cidx
        cdef const double[:, ::1] T
        self.svp, self.ap, self.normp, self.Dp = &sv[0, 0], &a[0], &nr[0], &D[0, 0]
        self.dist, self.kval, self.cm, self.clnk = &s[0, 0], &s[1, 0], &s[2, 0], &s[3, 0]
        self.ck, self.cwd, self.tmp, self.cwdp = &s[4, 0], &s[5, 0], &s[6, 0], &s[7, 0]
        self.cidx = &ci[0]
        self.Hp = self.Wp = NULL
        if self.H is not None:
            T = self.H
            self.Hp = &T[0, 0]
            T = self.W
            self.Wp = &T[0, 0]

    # ---- pickling: rebuild, then copy the state into the freshly bound arrays ----------------
    def __reduce__(self):
        method = {code: name for name, code in METHODS.items()}[self.method]
        init = dict(n_dims=self.n_dims, budget=self.budget, gamma=self.gamma, lam=self.lam,
                    method=method, fit_bias=self.fit_bias, H=self.H, W=self.W, diagnose=self.diagnose)
        return (_rebuild_core, (init, {name: getattr(self, name) for name in _PICKLED_STATE}))

    # ---- Python-facing -------------------------------------------------------------------
    def coef(self):
        """α of the current SVs (n_sv,)."""
        return self.scale * self.a[:self.n_sv]

    def support_vectors(self):
        return self.SVT[:, :self.n_sv].T.copy()

    def train(self, const double[:, ::1] X, const double[::1] y, const long long[::1] rows):
        """One SGD step per entry of rows (indices into X; y in {−1, +1}). Returns steps done."""
        if X.shape[1] != self.n_dims:
            raise ValueError("X has the wrong number of columns")
        cdef Py_ssize_t r, n_rows = rows.shape[0], d = self.n_dims
        with nogil:
            for r in range(n_rows):
                self._step(&X[0, 0] + rows[r] * d, y[rows[r]])
        return n_rows

    def decision(self, const double[:, ::1] X):
        """f(X) = scale · Σ_j a_j k(sv_j, x) + b."""
        cdef Py_ssize_t i, n = X.shape[0], d = self.n_dims
        out = np.empty(n)
        cdef double[::1] F = out
        if n == 0:
            return out
        with nogil:
            for i in range(n):
                F[i] = self._f(&X[i, 0])
        return out

    # ---- the loop ---------------------------------------------------------------------------
    cdef double _f(self, const double* x) noexcept nogil:
        """f(x); leaves the squared distances to the SVs in self.dist."""
        return self.scale * kb_bsgd_f(x, self.n_dims, self.svp, self.capacity, self.n_sv, self.normp,
                                      self.ap, -self.gamma, self.dist, self.kval) + self.bias

    cdef void _step(self, const double* x, double y) noexcept nogil:
        cdef Py_ssize_t j, n, slot, d = self.n_dims, cap = self.capacity
        cdef double f = self._f(x)
        cdef double t = <double>(self.n_iter + 1)
        cdef double eta = 1.0 / (self.lam * t)                 # Pegasos step η_t = 1/(λt)
        cdef double shrink = 1.0 - self.lam * eta              # = 1 − 1/t
        self.n_iter += 1
        if shrink <= 0.0:                                      # t = 1: w ← 0·w
            self.n_sv = 0
            self.scale = 1.0
        else:
            self.scale *= shrink
        if y * f < 1.0:                                        # hinge active: add (x, η_t y)
            n = self.n_sv
            slot = n
            for j in range(d):
                self.svp[j * cap + slot] = x[j]
            self.normp[slot] = kb_dot_f64(x, x, d)
            self.ap[slot] = eta * y / self.scale
            for j in range(n):                                 # D row = distances of this step
                self.Dp[slot * cap + j] = self.dist[j]
                self.Dp[j * cap + slot] = self.dist[j]
            self.Dp[slot * cap + slot] = 0.0
            self.n_sv = n + 1
            if self.fit_bias:
                self.bias += eta * y
            if self.n_sv > self.budget:
                self._maintain()
        if self.scale < 1e-150:                                # keep a = α/scale representable
            for j in range(self.n_sv):
                self.ap[j] *= self.scale
            self.scale = 1.0

    cdef void _remove(self, Py_ssize_t i) noexcept nogil:
        """Drop SV i: the last SV moves into its slot (with its row and column of D)."""
        cdef Py_ssize_t k, last = self.n_sv - 1, d = self.n_dims, cap = self.capacity
        if i != last:
            for k in range(d):
                self.svp[k * cap + i] = self.svp[k * cap + last]
            self.ap[i] = self.ap[last]
            self.normp[i] = self.normp[last]
            for k in range(last):
                self.Dp[i * cap + k] = self.Dp[last * cap + k]
                self.Dp[k * cap + i] = self.Dp[last * cap + k]
            self.Dp[i * cap + i] = 0.0
        self.n_sv = last

    cdef Py_ssize_t _select(self, int method, Py_ssize_t nc, double ai, double* h_out,
                            double* wd_out) noexcept nogil:
        """Section A: the best partner among the nc candidates (strict <: first on ties), its h
        and its WD (in stored units a)."""
        return _select_partner(method, nc, ai, self.ap, self.cidx, self.cm, self.clnk, self.ck,
                               self.cwd, self.Hp, self.Wp, self.grid_size, h_out, wd_out)

    cdef void _diagnose(self, Py_ssize_t nc, double ai) noexcept nogil:
        """GSS-standard and Lookup-WD on the same state (Table 3). A decision is equal when both
        pick a partner of the same GSS-precise WD (duplicate SVs tie exactly: choosing either is
        the same merge); the WD factors are Σ WD_method / Σ WD_precise over all merges, robust to
        merges whose best WD is ~0."""
        cdef double h, wd_g, wd_l, wd_p, wd
        cdef Py_ssize_t c, cg, cl
        wd_p = INFINITY
        for c in range(nc):
            h = _gss_h(self.cm[c], self.clnk[c], KB_GSS_EPS_PRECISE)
            wd = _merge_wd(ai, self.ap[self.cidx[c]], self.clnk[c], self.ck[c], h)
            self.cwdp[c] = wd
            if wd < wd_p:
                wd_p = wd
        cg = self._select(MERGE_GSS, nc, ai, &h, &wd_g)
        cl = self._select(MERGE_LOOKUP_WD, nc, ai, &h, &wd_l)
        self.diag_events += 1
        if cg == cl or fabs(self.cwdp[cg] - self.cwdp[cl]) <= 1e-12 * (ai * ai + fabs(self.cwdp[cg])):
            self.diag_equal += 1
        self.diag_wd_precise_sum += wd_p
        self.diag_wd_gss_sum += wd_g
        self.diag_wd_lookup_wd_sum += wd_l

    cdef void _maintain(self) noexcept nogil:
        """Budget maintenance (Alg. 1) on B + 1 SVs; times section A (h or WD) and B (the rest)."""
        cdef double t0 = _now(), ta0, ta1, tb1
        cdef Py_ssize_t n = self.n_sv, d = self.n_dims, cap = self.capacity
        cdef Py_ssize_t i = _argmin_abs(self.ap, self.n_sv), j, k, c, nc = 0, best
        cdef double ai = self.ap[i], aj, h, wd, lnk, kappa, dij, az, nz, zk
        cdef double sc2 = self.scale * self.scale
        if self.method != MERGE_REMOVAL:
            for j in range(n):                                 # same-label partners: m, ln κ
                aj = self.ap[j]
                if j != i and aj * ai > 0.0:
                    self.cidx[nc] = j
                    # x_i has the minimal |α|, so m ≤ 1/2; the clamp removes rounding (and the
                    # 1e-12 tie tolerance) so that equal |α| always take the same branch on Z
                    self.cm[nc] = min(ai / (ai + aj), 0.5)
                    self.clnk[nc] = -self.gamma * self.Dp[i * cap + j]
                    nc += 1
            kb_bsgd_exp_scaled(self.ck, self.clnk, 1.0, nc)    # κ = exp(ln κ)
        if nc == 0:                                            # removal (or no partner of that label)
            self.last_wd = ai * ai * sc2
            self.wd_sum += self.last_wd
            self._remove(i)
            if self.method == MERGE_REMOVAL:
                self.n_removals += 1
            else:
                self.n_fallback_removals += 1
            self.seconds_b += _now() - t0
            return
        ta0 = _now()
        best = self._select(self.method, nc, ai, &h, &wd)     # section A
        ta1 = _now()
        if self.diagnose:
            self._diagnose(nc, ai)
        tb1 = _now()
        j = self.cidx[best]                                    # section B: build z (Alg. 1 l. 14–16)
        aj = self.ap[j]
        lnk = self.clnk[best]
        az = _merged_coef(ai, aj, lnk, h)
        self.last_wd = wd * sc2
        self.wd_sum += self.last_wd
        dij = self.Dp[i * cap + j]
        for k in range(n):                                     # squared distances of z
            if k != i and k != j:
                zk = h * self.Dp[i * cap + k] + (1.0 - h) * self.Dp[j * cap + k] - h * (1.0 - h) * dij
                self.tmp[k] = zk if zk > 0.0 else 0.0
        nz = 0.0
        for k in range(d):                                     # z = h x_i + (1 − h) x_j into slot j
            zk = h * self.svp[k * cap + i] + (1.0 - h) * self.svp[k * cap + j]
            self.svp[k * cap + j] = zk
            nz += zk * zk
        self.normp[j] = nz
        self.ap[j] = az
        for k in range(n):
            if k != i and k != j:
                self.Dp[j * cap + k] = self.tmp[k]
                self.Dp[k * cap + j] = self.tmp[k]
        self.Dp[j * cap + j] = 0.0
        self._remove(i)
        self.n_merges += 1
        self.seconds_a += ta1 - ta0
        self.seconds_b += (ta0 - t0) + (_now() - tb1)


_PICKLED_ARRAYS = ("SVT", "a", "norms", "D")
_PICKLED_STATE = _PICKLED_ARRAYS + (
    "n_sv", "n_iter", "scale", "bias", "n_merges", "n_removals", "n_fallback_removals",
    "diag_events", "diag_equal", "seconds_a", "seconds_b",
    "diag_wd_precise_sum", "diag_wd_gss_sum", "diag_wd_lookup_wd_sum", "last_wd", "wd_sum")


def _rebuild_core(init, state):
    core = BSGDCore(**init)
    for name, value in state.items():
        if name in _PICKLED_ARRAYS:
            np.copyto(getattr(core, name), value)     # keep the arrays the raw pointers view
        else:
            setattr(core, name, value)
    return core
