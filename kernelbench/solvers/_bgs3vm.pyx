# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of BGS3VM: budgeted kernel SGD for the semi-supervised SVM (Le et al., UAI 2016,
"Budgeted semi-supervised support vector machine"; the baseline of Geng et al., IJCAI 2019).

Objective (Geng et al. eq. (1), divided by C·n_l; λ = 1/(n_l·C), μ = the unlabeled weight, μ = 1
is the paper's C* = C·n_l/n_u):
    P(f) = λ/2 ‖f‖² + (1/n_l) Σ_L max(0, 1 − y f(x)) + μ E_U max(0, 1 − |f(x)|)
Model: f(x) = scale · (Σ_{j∈L} a_j k(sv_j, x) + Σ_{j∈U} a_j k(sv_j, x)), k(x, x') = exp(-γ‖x − x'‖²);
two pools of support vectors, labeled (L, budget B_l) and unlabeled (U, budget B_u), share one
Pegasos `scale` (the shrink of every α by 1 − λη_t is O(1)).

One step t samples a labeled (x_l, y_l) and an unlabeled x_u (as TSGS3VM's Alg. 1 lines 2–3),
evaluates both predictions first (lines 5–6), then with η_t = 1/(λt) (without unlabeled rows a step
has x_l alone and its unlabeled update never fires: Pegasos on the labeled hinge, the objective with
the μ term absent):
    scale *= 1 − λη_t                                        (t = 1 empties the model)
    if y_l f(x_l) < 1:          add (x_l, α = η_t y_l) to L  (hinge subgradient −y_l)
    if 0 < |f(x_u)| < 1:        add (x_u, α = η_t μ sign f(x_u)) to U
                                (symmetric hinge, Table 2 "SHG": u'(r) = −sign r; at r = 0 the
                                 generalised gradient [−1, 1] holds 0 and we take 0: no push)
    a pool above its budget:    budget maintenance by merging (Glasmachers & Qaadan Alg. 1), within
                                the pool, with the partner choice / h / WD of _budget.pxd.
Unlike BSGD the core keeps no SV distance matrix (B_u = 0.2·n_u SVs would make it O(B_u²)
memory): a merge computes the distances from x_min to its pool in one kernel expansion, O(B·d),
the cost of a prediction.
"""
import numpy as np

from libc.math cimport fabs

from kernelbench.solvers._budget cimport (
    MERGE_GSS, MERGE_GSS_PRECISE, MERGE_LOOKUP_H, MERGE_LOOKUP_WD, MERGE_REMOVAL, _argmin_abs,
    _merged_coef, _now, _select_partner, kb_bsgd_f, kb_dot_f64)

METHODS = {"gss": MERGE_GSS, "gss-precise": MERGE_GSS_PRECISE, "lookup-h": MERGE_LOOKUP_H,
           "lookup-wd": MERGE_LOOKUP_WD, "removal": MERGE_REMOVAL}


cdef class SVPool:
    """One budgeted set of support vectors: SVT (d × capacity, SV j is column j), stored
    coefficients a (α = scale · a, the scale is the core's), squared norms, and scratch."""
    cdef public Py_ssize_t n_dims, budget, capacity, n_sv
    cdef public long long n_merges, n_removals, n_fallback_removals
    cdef public object SVT, a, norms
    cdef object _scratch, _cidx, _xbuf
    cdef double* svp
    cdef double* ap
    cdef double* normp
    cdef double* dist
    cdef double* kval
    cdef double* cm
    cdef double* clnk
    cdef double* ck
    cdef double* cwd
    cdef double* xi
    cdef Py_ssize_t* cidx

    def __init__(self, Py_ssize_t n_dims, Py_ssize_t budget):
        self.n_dims, self.budget, self.capacity = n_dims, budget, budget + 1
        cap = self.capacity
        self.SVT = np.zeros((n_dims, cap))
        self.a = np.zeros(cap)
        self.norms = np.zeros(cap)
        self._scratch = np.zeros((6, cap))
        self._cidx = np.zeros(cap, dtype=np.intp)
        self._xbuf = np.zeros(max(n_dims, 1))
        self.n_sv = 0
        self.n_merges = self.n_removals = self.n_fallback_removals = 0
        cdef double[:, ::1] sv = self.SVT
        cdef double[::1] a = self.a
        cdef double[::1] nr = self.norms
        cdef double[:, ::1] s = self._scratch
        cdef Py_ssize_t[::1] ci = self._cidx
        cdef double[::1] xb = self._xbuf
        self.svp, self.ap, self.normp = &sv[0, 0], &a[0], &nr[0]
        self.dist, self.kval, self.cm, self.clnk = &s[0, 0], &s[1, 0], &s[2, 0], &s[3, 0]
        self.ck, self.cwd = &s[4, 0], &s[5, 0]
        self.cidx = &ci[0]
        self.xi = &xb[0]


    def support_vectors(self):
        return self.SVT[:, :self.n_sv].T.copy()

    cdef inline double expansion(self, const double* x, double neg_gamma) noexcept nogil:
        """Σ_j a_j k(sv_j, x) over the pool (leaves the squared distances in dist)."""
        return kb_bsgd_f(x, self.n_dims, self.svp, self.capacity, self.n_sv, self.normp, self.ap,
                         neg_gamma, self.dist, self.kval)

    cdef void add(self, const double* x, double a) noexcept nogil:
        cdef Py_ssize_t k, slot = self.n_sv, cap = self.capacity
        for k in range(self.n_dims):
            self.svp[k * cap + slot] = x[k]
        self.normp[slot] = kb_dot_f64(x, x, self.n_dims)
        self.ap[slot] = a
        self.n_sv = slot + 1

    cdef void rescale(self, double factor) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(self.n_sv):
            self.ap[j] *= factor

    cdef void remove(self, Py_ssize_t i) noexcept nogil:
        """Drop SV i: the last SV moves into its slot (the slot convention of BSGD)."""
        cdef Py_ssize_t k, last = self.n_sv - 1, cap = self.capacity
        if i != last:
            for k in range(self.n_dims):
                self.svp[k * cap + i] = self.svp[k * cap + last]
            self.ap[i] = self.ap[last]
            self.normp[i] = self.normp[last]
        self.n_sv = last

    cdef double maintain(self, int method, double gamma, const double* Hp, const double* Wp,
                         Py_ssize_t G) noexcept nogil:
        """Alg. 1 on B + 1 SVs: merge the SV of minimal |α| into its best same-sign partner
        (z into the partner's slot); removal when asked or when no partner exists. Returns the
        weight degradation in stored units a."""
        cdef Py_ssize_t n = self.n_sv, d = self.n_dims, cap = self.capacity
        cdef Py_ssize_t i = _argmin_abs(self.ap, n), j, k, nc = 0, best
        cdef double ai = self.ap[i], aj, h, wd, lnk, zk, nz
        if method != MERGE_REMOVAL:
            for k in range(d):                                 # x_i, contiguous
                self.xi[k] = self.svp[k * cap + i]
            self.expansion(self.xi, -gamma)                    # dist, kval = ‖x_i − sv_j‖², κ_ij
            for j in range(n):
                aj = self.ap[j]
                if j != i and aj * ai > 0.0:
                    self.cidx[nc] = j
                    # |α_i| minimal: m ≤ 1/2 (the clamp as in _bsgd.pyx: one branch on Z)
                    self.cm[nc] = min(ai / (ai + aj), 0.5)
                    self.clnk[nc] = -gamma * self.dist[j]
                    self.ck[nc] = self.kval[j]
                    nc += 1
        if nc == 0:
            self.remove(i)
            if method == MERGE_REMOVAL:
                self.n_removals += 1
            else:
                self.n_fallback_removals += 1
            return ai * ai
        best = _select_partner(method, nc, ai, self.ap, self.cidx, self.cm, self.clnk, self.ck,
                               self.cwd, Hp, Wp, G, &h, &wd)
        j = self.cidx[best]
        lnk = self.clnk[best]
        self.ap[j] = _merged_coef(ai, self.ap[j], lnk, h)     # Alg. 1 lines 9, 15
        nz = 0.0
        for k in range(d):                                     # z = h x_i + (1 − h) x_j (line 14)
            zk = h * self.svp[k * cap + i] + (1.0 - h) * self.svp[k * cap + j]
            self.svp[k * cap + j] = zk
            nz += zk * zk
        self.normp[j] = nz
        self.remove(i)
        self.n_merges += 1
        return wd


cdef class BGS3VMCore:
    """Model state: the labeled and unlabeled pools, the shared scale, step counter, counters."""
    cdef public Py_ssize_t n_dims, grid_size
    cdef public long long n_iter, n_labeled_updates, n_unlabeled_updates
    cdef public double gamma, lam, unlabeled_weight, scale, wd_sum, maintenance_seconds
    cdef public int method
    cdef public SVPool labeled, unlabeled
    cdef public object H, W
    cdef const double* Hp
    cdef const double* Wp

    def __init__(self, *, n_dims, budget_labeled, budget_unlabeled, gamma, lam, unlabeled_weight=1.0,
                 method="lookup-wd", H=None, W=None):
        if method not in METHODS:
            raise ValueError(f"merge must be one of {sorted(METHODS)}, got {method!r}")
        self.method = METHODS[method]
        if self.method in (MERGE_LOOKUP_H, MERGE_LOOKUP_WD) and (H is None or W is None):
            raise ValueError("lookup merging needs the H and W tables")
        self.n_dims, self.gamma, self.lam = n_dims, gamma, lam
        self.unlabeled_weight = unlabeled_weight
        self.labeled = SVPool(n_dims, budget_labeled)
        self.unlabeled = SVPool(n_dims, budget_unlabeled)
        self.H = self.W = None
        self.Hp = self.Wp = NULL
        self.grid_size = 0
        cdef const double[:, ::1] T
        if H is not None:
            self.H = np.ascontiguousarray(H, dtype=np.float64)
            self.W = np.ascontiguousarray(W, dtype=np.float64)
            if self.H.shape != self.W.shape or self.H.ndim != 2 or self.H.shape[0] != self.H.shape[1]:
                raise ValueError("H and W must be square tables of one size")
            self.grid_size = self.H.shape[0]
            T = self.H
            self.Hp = &T[0, 0]
            T = self.W
            self.Wp = &T[0, 0]
        self.n_iter = self.n_labeled_updates = self.n_unlabeled_updates = 0
        self.scale = 1.0
        self.wd_sum = self.maintenance_seconds = 0.0

    def coef(self, pool):
        """α of a pool's SVs ("labeled" or "unlabeled")."""
        p = self.labeled if pool == "labeled" else self.unlabeled
        return self.scale * p.a[:p.n_sv]

    def train(self, const double[:, ::1] X, const double[::1] y, const long long[::1] labeled_rows,
              const long long[::1] unlabeled_rows):
        """One step per pair (labeled_rows[k], unlabeled_rows[k]) of row indices into X; y in
        {−1, +1} at the labeled rows (other entries are not read). An empty unlabeled_rows (no
        unlabeled rows to train on) makes one step per labeled row, the labeled update alone.
        Returns the steps done."""
        if X.shape[1] != self.n_dims:
            raise ValueError("X has the wrong number of columns")
        cdef bint supervised = unlabeled_rows.shape[0] == 0
        if not supervised and labeled_rows.shape[0] != unlabeled_rows.shape[0]:
            raise ValueError("labeled_rows and unlabeled_rows must have one entry per step")
        cdef Py_ssize_t r, n_rows = labeled_rows.shape[0], d = self.n_dims
        cdef long long il, iu
        with nogil:
            for r in range(n_rows):
                il = labeled_rows[r]
                if supervised:
                    self._step(&X[0, 0] + il * d, y[il], NULL)
                else:
                    iu = unlabeled_rows[r]
                    self._step(&X[0, 0] + il * d, y[il], &X[0, 0] + iu * d)
        return n_rows

    def decision(self, const double[:, ::1] X):
        """f(X) = scale · (Σ_L a_j k(sv_j, x) + Σ_U a_j k(sv_j, x))."""
        cdef Py_ssize_t i, n = X.shape[0]
        out = np.empty(n)
        cdef double[::1] F = out
        with nogil:
            for i in range(n):
                F[i] = self._f(&X[i, 0])
        return out

    cdef inline double _f(self, const double* x) noexcept nogil:
        return self.scale * (self.labeled.expansion(x, -self.gamma)
                             + self.unlabeled.expansion(x, -self.gamma))

    cdef void _step(self, const double* xl, double yl, const double* xu) noexcept nogil:
        # xu NULL: no unlabeled sample; fu = 0 keeps the symmetric hinge's update off
        cdef double fl = self._f(xl), fu = self._f(xu) if xu != NULL else 0.0   # both before the update (l. 5–6)
        cdef double t = <double>(self.n_iter + 1)
        cdef double eta = 1.0 / (self.lam * t)                 # Pegasos step η_t = 1/(λt)
        cdef double shrink = 1.0 - self.lam * eta              # = 1 − 1/t
        cdef double t0
        self.n_iter += 1
        if shrink <= 0.0:                                      # t = 1: f ← 0
            self.labeled.n_sv = 0
            self.unlabeled.n_sv = 0
            self.scale = 1.0
        else:
            self.scale *= shrink
        if yl * fl < 1.0:                                      # labeled hinge active
            self.labeled.add(xl, eta * yl / self.scale)
            self.n_labeled_updates += 1
            if self.labeled.n_sv > self.labeled.budget:
                t0 = _now()
                self.wd_sum += self.scale * self.scale * self.labeled.maintain(
                    self.method, self.gamma, self.Hp, self.Wp, self.grid_size)
                self.maintenance_seconds += _now() - t0
        if fu != 0.0 and fabs(fu) < 1.0:                       # symmetric hinge active
            self.unlabeled.add(xu, eta * self.unlabeled_weight * (1.0 if fu > 0.0 else -1.0) / self.scale)
            self.n_unlabeled_updates += 1
            if self.unlabeled.n_sv > self.unlabeled.budget:
                t0 = _now()
                self.wd_sum += self.scale * self.scale * self.unlabeled.maintain(
                    self.method, self.gamma, self.Hp, self.Wp, self.grid_size)
                self.maintenance_seconds += _now() - t0
        if self.scale < 1e-150:                                # keep a = α/scale representable
            self.labeled.rescale(self.scale)
            self.unlabeled.rescale(self.scale)
            self.scale = 1.0

    # ---- pickling: rebuild, then copy the state into the freshly bound arrays ----------------
    def __reduce__(self):
        method = {code: name for name, code in METHODS.items()}[self.method]
        init = dict(n_dims=self.n_dims, budget_labeled=self.labeled.budget,
                    budget_unlabeled=self.unlabeled.budget, gamma=self.gamma, lam=self.lam,
                    unlabeled_weight=self.unlabeled_weight, method=method, H=self.H, W=self.W)
        state = {name: getattr(self, name) for name in _CORE_STATE}
        pools = {name: {k: getattr(getattr(self, name), k) for k in _POOL_STATE}
                 for name in ("labeled", "unlabeled")}
        return (_rebuild_core, (init, state, pools))


_CORE_STATE = ("n_iter", "n_labeled_updates", "n_unlabeled_updates", "scale", "wd_sum",
               "maintenance_seconds")
_POOL_ARRAYS = ("SVT", "a", "norms")
_POOL_STATE = _POOL_ARRAYS + ("n_sv", "n_merges", "n_removals", "n_fallback_removals")


def _rebuild_core(init, state, pools):
    core = BGS3VMCore(**init)
    for name, value in state.items():
        setattr(core, name, value)
    for pool_name, values in pools.items():
        pool = getattr(core, pool_name)
        for name, value in values.items():
            if name in _POOL_ARRAYS:
                np.copyto(getattr(pool, name), value)     # keep the arrays the raw pointers view
            else:
                setattr(pool, name, value)
    return core
