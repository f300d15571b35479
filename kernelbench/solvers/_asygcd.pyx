# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Compiled core of AsyGCD — asynchronous parallel greedy coordinate descent on the kernel SVM dual
(You, Lian, Liu, Yu, Dhillon, Demmel, Hsieh, NIPS 2016, Alg. 1 applied to the SVM dual, their §4).

Problem (no bias term, so no equality constraint and single-coordinate steps are exact):

    min_α  D(α) = ½ αᵀQα − eᵀα   s.t. 0 ≤ α_i ≤ C,     Q_ij = y_i y_j k(x_i, x_j),  k = RBF.

State shared by all threads: α (n), the gradient g = Qα − e (n). Coordinates are partitioned into
one block per thread (the Python side orders the data so that a block is a contiguous range). Each
thread repeats, on its own block and with no lock:

    i  = argmax_{j ∈ block} |∇^P_j D(α)|     greedy rule: largest projected gradient (KKT violation)
    q  = Q[i, :]                      from the thread's own LRU kernel-row cache, else computed: O(n·d)
    δ  = clip(α_i − g_i/Q_ii, 0, C) − α_i;  α_i += δ     exact minimisation along i (Q_ii = 1, RBF)
    g += δ · q                        the O(n) gradient update, all n entries, without locks

Races (documented, as in the paper's analysis): α_i is written only by the thread owning i, so α has
no write conflicts. The gradient is kept as g = −e + Σ_w G_w over P parts, never under a lock:
  gradient_update="per_thread" (default): P = threads, thread t adds δ·q to its own part G_t with
    plain stores, so no add is ever lost and no write is contended; a thread's scan reads all parts
    (O(n) reads per update instead of O(n/p)), and may see another thread's sweep half-done.
  "atomic": P = 1, each G_j += δ q_j a lock-free atomic read-modify-write (`omp atomic`, as the
    authors' code does): nothing lost, but a locked op per entry, costlier than per_thread's plain stores.
  "racy": P = 1, plain adds: two threads adding to the same entry at the same instant can lose one
    add (with C = 32 a lost add can be ~10), so g may drift from Qα − e until it is recomputed;
    the Python side switches `atomic` on when the drift of a pass reaches the KKT violation left.
In every mode readers may see stale values (the bounded-delay setting of the analysis); on x86-64
aligned 8-byte loads and stores are atomic, so a reader never sees a torn double. Thread t sweeps
starting at its own block (t·n/p), so concurrent sweeps run at different offsets. The Python side
recomputes g exactly before declaring convergence (see asygcd.py). threads = 1 runs plain adds,
deterministically.

Stopping: a thread whose block is within tol keeps re-scanning it (other threads' updates move its
gradient) and leaves only when every other thread has finished its steps or is within tol as well,
like the authors' threads, which run until all block violations are below the tolerance. When the
threads interleave coarsely (an oversubscribed machine deschedules one of them for milliseconds),
the method behaves like block coordinate descent, which on strongly coupled blocks needs many more
updates than the greedy rule over all coordinates; k-means blocks couple more weakly.

Kernel rows are stored in float32 (as LIBSVM's Qfloat) in per-thread LRU caches: a thread only
ever needs rows of its own block, so the caches need no synchronisation. The gradient is float64.
"""
import numpy as np

from cython.parallel cimport prange
from libc.stdint cimport int32_t, int64_t


cdef extern from "<sched.h>" nogil:
    int sched_yield()


cdef extern from *:
    """
    #include <math.h>
    #include <stddef.h>
    #include <stdint.h>
    #ifdef _OPENMP
    #define KBA_OPENMP 1
    #else
    #define KBA_OPENMP 0
    #endif
    /* glibc's libmvec provides vector exp (_ZGV*_exp): declaring exp `simd` lets GCC vectorise the
       loops below; target_clones picks AVX-512 / AVX2 / SSE at load time (as _simd.h does for cos). */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
    __attribute__((simd("notinbranch"))) double exp(double);
    #define KBA_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
    #else
    #define KBA_CLONES
    #endif
    #define KBA_CHUNK 512   /* columns per chunk: the dot-product buffer stays in L1 */

    /* q[j] = y_i y_j exp(-gamma max(0, |x_i|^2 + |x_j|^2 - 2 x_i.x_j)), j < m */
    static inline void kba_rbf_q(const double *restrict dots, const double *restrict sq,
                                 const double *restrict y, double sqi, double yi, double gamma,
                                 float *restrict q, ptrdiff_t m) {
        for (ptrdiff_t j = 0; j < m; j++) {
            double dist = sqi + sq[j] - 2.0 * dots[j];
            dist = dist > 0.0 ? dist : 0.0;        /* rounding can make it slightly negative */
            q[j] = (float)(yi * y[j] * exp(-gamma * dist));
        }
    }

    /* Row i of Q from feature-major data XT (d x n): dots accumulate one feature at a time over a
       chunk of columns (unit stride, SIMD); features where x_i is zero contribute nothing. */
    KBA_CLONES static void kba_dense_row(const double *restrict XT, ptrdiff_t n, ptrdiff_t d,
                                         const double *restrict xi, const double *restrict sq,
                                         const double *restrict y, double sqi, double yi,
                                         double gamma, float *restrict q) {
        double dots[KBA_CHUNK];
        for (ptrdiff_t j0 = 0; j0 < n; j0 += KBA_CHUNK) {
            ptrdiff_t m = n - j0 < KBA_CHUNK ? n - j0 : KBA_CHUNK;
            for (ptrdiff_t j = 0; j < m; j++) dots[j] = 0.0;
            for (ptrdiff_t k = 0; k < d; k++) {
                double xk = xi[k];
                if (xk == 0.0) continue;
                const double *restrict col = XT + k * n + j0;
                for (ptrdiff_t j = 0; j < m; j++) dots[j] += xk * col[j];
            }
            kba_rbf_q(dots, sq + j0, y + j0, sqi, yi, gamma, q + j0, m);
        }
    }

    /* Row i of Q from CSR data: each x_j . x_i is a gather from the dense copy xi of x_i. */
    KBA_CLONES static void kba_sparse_row(const int64_t *restrict indptr,
                                          const int32_t *restrict indices,
                                          const double *restrict data, ptrdiff_t n,
                                          const double *restrict xi, const double *restrict sq,
                                          const double *restrict y, double sqi, double yi,
                                          double gamma, float *restrict q) {
        double dots[KBA_CHUNK];
        for (ptrdiff_t j0 = 0; j0 < n; j0 += KBA_CHUNK) {
            ptrdiff_t m = n - j0 < KBA_CHUNK ? n - j0 : KBA_CHUNK;
            for (ptrdiff_t j = 0; j < m; j++) {
                double s = 0.0;
                for (int64_t p = indptr[j0 + j]; p < indptr[j0 + j + 1]; p++)
                    s += data[p] * xi[indices[p]];
                dots[j] = s;
            }
            kba_rbf_q(dots, sq + j0, y + j0, sqi, yi, gamma, q + j0, m);
        }
    }

    /* The greedy rule over [b0, b1), as the authors' kernel-SVM code: the coordinate with the
       largest KKT violation |projected gradient| (for Q_jj = 1 also the unclipped Newton step).
       Returns that maximum (the block's violation, LIBSVM's stopping measure) and its first index
       in *best (-1 if it is 0). Ranking by the clipped step |T_j - a_j| instead would leave a free
       a_j = 1e-9 with a large gradient for last, although one step fixes it. Pass 1 is a SIMD
       max-reduction, pass 2 finds the first index reaching it; g may change under our feet
       (other threads), so if pass 2 does not meet the maximum again it keeps its own argmax. */
    static inline double kba_pg(double a, double gj, double C) {
        double pg = a > 0.0 ? (a < C ? gj : (gj > 0.0 ? gj : 0.0)) : (gj < 0.0 ? gj : 0.0);
        return fabs(pg);
    }
    /* g_j = -1 + sum_w G[w n + j]: the gradient kept as P parts (P = 1: one shared vector) */
    static inline double kba_g(const double *G, ptrdiff_t P, ptrdiff_t n, ptrdiff_t j) {
        double s = -1.0;
        for (ptrdiff_t w = 0; w < P; w++) s += G[w * n + j];
        return s;
    }
    KBA_CLONES static double kba_select(const double *restrict alpha, const double *G,
                                        ptrdiff_t P, ptrdiff_t n, ptrdiff_t b0, ptrdiff_t b1,
                                        double C, ptrdiff_t *best) {
        double vmax = 0.0;
        #pragma omp simd reduction(max:vmax)
        for (ptrdiff_t j = b0; j < b1; j++) {
            double v = kba_pg(alpha[j], kba_g(G, P, n, j), C);
            vmax = v > vmax ? v : vmax;
        }
        *best = -1;
        if (!(vmax > 0.0)) return 0.0;
        double found = 0.0;
        for (ptrdiff_t j = b0; j < b1; j++) {
            double v = kba_pg(alpha[j], kba_g(G, P, n, j), C);
            if (v == vmax) { *best = j; return v; }
            if (v > found) { found = v; *best = j; }
        }
        return found;
    }

    /* g[j] += delta q[j] over [j0, j1): plain stores (one thread, or the "racy" mode) */
    KBA_CLONES static void kba_axpy(double *g, const float *restrict q, double delta,
                                    ptrdiff_t j0, ptrdiff_t j1) {
        for (ptrdiff_t j = j0; j < j1; j++) g[j] += delta * (double)q[j];
    }
    /* the same with a lock-free atomic read-modify-write per entry ("atomic" mode) */
    static void kba_axpy_atomic(double *g, const float *q, double delta, ptrdiff_t j0, ptrdiff_t j1) {
        for (ptrdiff_t j = j0; j < j1; j++) {
            double v = delta * (double)q[j];
            #pragma omp atomic
            g[j] += v;
        }
    }

    /* flags and violations one thread writes and the others poll (relaxed atomics: the compiler
       must re-read them, no ordering is needed) */
    static inline void kba_store_d(double *p, double v) { __atomic_store(p, &v, __ATOMIC_RELAXED); }
    static inline double kba_load_d(const double *p) { double v; __atomic_load(p, &v, __ATOMIC_RELAXED); return v; }
    static inline void kba_store_i(int64_t *p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    static inline int64_t kba_load_i(const int64_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }

    /* sum_s coef[s] exp(-gamma max(0, sqx + sq[s] - 2 dots[s])): one decision value */
    KBA_CLONES static double kba_rbf_expand(const double *restrict dots, const double *restrict sq,
                                            double sqx, double gamma,
                                            const double *restrict coef, ptrdiff_t m) {
        double f = 0.0;
        #pragma omp simd reduction(+:f)
        for (ptrdiff_t s = 0; s < m; s++) {
            double dist = sqx + sq[s] - 2.0 * dots[s];
            dist = dist > 0.0 ? dist : 0.0;
            f += coef[s] * exp(-gamma * dist);
        }
        return f;
    }
    """
    int KBA_OPENMP
    void kba_dense_row(const double* XT, Py_ssize_t n, Py_ssize_t d, const double* xi,
                       const double* sq, const double* y, double sqi, double yi, double gamma,
                       float* q) noexcept nogil
    void kba_sparse_row(const int64_t* indptr, const int32_t* indices, const double* data,
                        Py_ssize_t n, const double* xi, const double* sq, const double* y,
                        double sqi, double yi, double gamma, float* q) noexcept nogil
    double kba_select(const double* alpha, const double* G, Py_ssize_t P, Py_ssize_t n,
                      Py_ssize_t b0, Py_ssize_t b1, double C, Py_ssize_t* best) noexcept nogil
    double kba_g(const double* G, Py_ssize_t P, Py_ssize_t n, Py_ssize_t j) noexcept nogil
    void kba_axpy(double* g, const float* q, double delta, Py_ssize_t j0, Py_ssize_t j1) noexcept nogil
    void kba_axpy_atomic(double* g, const float* q, double delta, Py_ssize_t j0, Py_ssize_t j1) noexcept nogil
    double kba_rbf_expand(const double* dots, const double* sq, double sqx, double gamma,
                          const double* coef, Py_ssize_t m) noexcept nogil
    void kba_store_d(double* p, double v) noexcept nogil
    double kba_load_d(const double* p) noexcept nogil
    void kba_store_i(int64_t* p, int64_t v) noexcept nogil
    int64_t kba_load_i(const int64_t* p) noexcept nogil


OPENMP_BUILD = bool(KBA_OPENMP)   # tests fail if this prange module was built without OpenMP

cdef enum:
    PAD = 8      # per-thread counters sit 8 int64 (one cache line) apart: no false sharing


cdef class AsyGCDCore:
    """Solver state: data in the internal (block-contiguous) order, α, g, the kernel-row caches.

    `X` is a dense C-contiguous float64 (n, d) array, or `csr` = (indptr int64, indices int32,
    data float64, d) for sparse storage. `blocks` (threads + 1 int64 boundaries) gives thread t the
    coordinates blocks[t] .. blocks[t+1]-1. `slots_per_thread` kernel rows (float32, n each) are
    cached per thread (at least 1)."""
    cdef public Py_ssize_t n, d, threads, slots_per_thread, total_slots
    cdef public double gamma, C, tol
    cdef public bint sparse, atomic, per_thread
    cdef public Py_ssize_t parts
    cdef public object alpha, grad_parts, y, sq, blocks, cache   # numpy views of the buffers below
    cdef double[:, ::1] XT
    cdef int64_t[::1] indptr
    cdef int32_t[::1] indices
    cdef double[::1] data
    cdef double[::1] sq_v, y_v, alpha_v
    cdef double[:, ::1] parts_v         # g = −e + Σ_w parts[w]: 1 shared part, or 1 per thread
    cdef int64_t[::1] blocks_v
    cdef float[:, ::1] cache_v
    cdef int32_t[::1] row_slot, slot_row, lru_prev, lru_next
    cdef int64_t[:, ::1] stats          # per thread: [hits, misses, slots used, updates, state, idle scans]
    cdef double[:, ::1] viol            # per thread: last measured block violation (polled)
    cdef double[:, ::1] xi_buf          # per thread: dense copy of the row being computed

    def __init__(self, *, X=None, csr=None, y, gamma, C, tol, blocks, slots_per_thread, atomic,
                 per_thread=False):
        blocks = np.ascontiguousarray(blocks, dtype=np.int64)
        self.threads = len(blocks) - 1
        self.blocks, self.blocks_v = blocks, blocks
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.y_v = self.y
        self.n = self.y.shape[0]
        if (X is None) == (csr is None):
            raise ValueError("give exactly one of X (dense) and csr")
        if X is not None:
            X = np.ascontiguousarray(X, dtype=np.float64)
            self.sparse = False
            self.d = X.shape[1]
            self.XT = np.ascontiguousarray(X.T)
            self.sq = np.einsum("ij,ij->i", X, X)
        else:
            indptr, indices, data, d = csr
            self.sparse = True
            self.d = d
            self.indptr = np.ascontiguousarray(indptr, dtype=np.int64)
            self.indices = np.ascontiguousarray(indices, dtype=np.int32)
            self.data = np.ascontiguousarray(data, dtype=np.float64)
            rows = np.repeat(np.arange(self.n), np.diff(np.asarray(indptr, dtype=np.int64)))
            self.sq = np.bincount(rows, weights=np.asarray(data, dtype=np.float64) ** 2, minlength=self.n)
        self.sq = np.ascontiguousarray(self.sq, dtype=np.float64)
        self.sq_v = self.sq
        self.gamma, self.C, self.tol, self.atomic = gamma, C, tol, atomic
        self.per_thread = per_thread and self.threads > 1
        self.parts = self.threads if self.per_thread else 1
        self.alpha = np.zeros(self.n)
        self.grad_parts = np.zeros((self.parts, self.n))  # g = Qα − e = −e at α = 0
        self.alpha_v, self.parts_v = self.alpha, self.grad_parts
        self.slots_per_thread = max(1, slots_per_thread)
        self.total_slots = self.slots_per_thread * self.threads
        self.cache = np.empty((self.total_slots, self.n), dtype=np.float32)  # pages touched lazily
        self.cache_v = self.cache
        self.row_slot = np.full(self.n, -1, dtype=np.int32)
        self.slot_row = np.full(self.total_slots, -1, dtype=np.int32)
        # circular doubly linked LRU list per thread; node total_slots + t is thread t's sentinel
        sentinels = np.arange(self.total_slots, self.total_slots + self.threads, dtype=np.int32)
        self.lru_prev = np.concatenate([np.full(self.total_slots, -1, dtype=np.int32), sentinels])
        self.lru_next = np.concatenate([np.full(self.total_slots, -1, dtype=np.int32), sentinels])
        self.stats = np.zeros((self.threads, PAD), dtype=np.int64)
        self.viol = np.full((self.threads, PAD), np.inf)
        self.xi_buf = np.zeros((self.threads, max(self.d, 1) + PAD))

    # ---- kernel rows ------------------------------------------------------------------------
    cdef void _compute_row(self, Py_ssize_t t, Py_ssize_t i, float* q) noexcept nogil:
        cdef double* xi = &self.xi_buf[t, 0]
        cdef Py_ssize_t k
        cdef int64_t p
        if not self.sparse:
            for k in range(self.d):
                xi[k] = self.XT[k, i]
            kba_dense_row(&self.XT[0, 0], self.n, self.d, xi, &self.sq_v[0], &self.y_v[0],
                          self.sq_v[i], self.y_v[i], self.gamma, q)
        else:
            for p in range(self.indptr[i], self.indptr[i + 1]):
                xi[self.indices[p]] = self.data[p]
            kba_sparse_row(&self.indptr[0], &self.indices[0], &self.data[0], self.n, xi,
                           &self.sq_v[0], &self.y_v[0], self.sq_v[i], self.y_v[i], self.gamma, q)
            for p in range(self.indptr[i], self.indptr[i + 1]):
                xi[self.indices[p]] = 0.0

    cdef inline void _unlink(self, int32_t s) noexcept nogil:
        self.lru_next[self.lru_prev[s]] = self.lru_next[s]
        self.lru_prev[self.lru_next[s]] = self.lru_prev[s]

    cdef inline void _push_recent(self, Py_ssize_t t, int32_t s) noexcept nogil:
        """Insert slot s just before thread t's sentinel: the most recently used end."""
        cdef int32_t head = <int32_t>(self.total_slots + t)
        self.lru_prev[s] = self.lru_prev[head]
        self.lru_next[s] = head
        self.lru_next[self.lru_prev[head]] = s
        self.lru_prev[head] = s

    cdef float* _row(self, Py_ssize_t t, Py_ssize_t i) noexcept nogil:
        """Row i of Q from thread t's cache (LRU), computed on a miss. Only thread t touches rows
        of its block, its slots and its list, so no synchronisation is needed."""
        cdef int32_t s = self.row_slot[i]
        if s >= 0:
            self.stats[t, 0] += 1
            self._unlink(s)
            self._push_recent(t, s)
            return &self.cache_v[s, 0]
        self.stats[t, 1] += 1
        if self.stats[t, 2] < self.slots_per_thread:          # a free slot
            s = <int32_t>(t * self.slots_per_thread + self.stats[t, 2])
            self.stats[t, 2] += 1
        else:                                                  # evict the least recently used
            s = self.lru_next[self.total_slots + t]
            self._unlink(s)
            self.row_slot[self.slot_row[s]] = -1
        self._compute_row(t, i, &self.cache_v[s, 0])
        self.slot_row[s] = <int32_t>i
        self.row_slot[i] = s
        self._push_recent(t, s)
        return &self.cache_v[s, 0]

    def kernel_row(self, Py_ssize_t i):
        """Row i of Q (float32 copy), through thread 0's cache path when i is in block 0, else
        computed directly: for tests."""
        q = np.empty(self.n, dtype=np.float32)
        cdef float[::1] qv = q
        cdef Py_ssize_t t = 0
        for t in range(self.threads):
            if self.blocks_v[t] <= i < self.blocks_v[t + 1]:
                break
        cdef float* row = self._row(t, i)
        cdef Py_ssize_t j
        for j in range(self.n):
            qv[j] = row[j]
        return q

    # ---- the solver --------------------------------------------------------------------------
    cdef bint _others_quiet(self, Py_ssize_t t) noexcept nogil:
        """Every other thread has finished its steps or reports its block within tol, or has not
        started (OpenMP may run the blocks one after another, e.g. under OMP_THREAD_LIMIT)."""
        cdef Py_ssize_t u
        cdef int64_t state
        for u in range(self.threads):
            if u == t:
                continue
            state = kba_load_i(&self.stats[u, 4])       # 0 not started, 1 running, 2 finished
            if state == 1 and kba_load_d(&self.viol[u, 0]) > self.tol:
                return False
        return True

    cdef Py_ssize_t _work(self, Py_ssize_t t, Py_ssize_t k) noexcept nogil:
        """k greedy coordinate updates of thread t on its block. When its block satisfies KKT to
        tol the thread stops if every other thread is done or quiet too; otherwise it keeps
        re-scanning its block (other threads' updates move its gradient) without counting steps,
        as the authors' threads keep going until all blocks are within tolerance."""
        cdef Py_ssize_t b0 = self.blocks_v[t], b1 = self.blocks_v[t + 1], n = self.n
        cdef Py_ssize_t i = -1, done = 0
        cdef double violation, a_old, a_new, delta, C = self.C
        cdef double* alpha = &self.alpha_v[0]
        cdef Py_ssize_t P = self.parts
        cdef double* G = &self.parts_v[0, 0]
        cdef double* mine = &self.parts_v[t if self.per_thread else 0, 0]   # the part t adds to
        cdef float* q
        kba_store_i(&self.stats[t, 4], 1)
        while done < k and b1 > b0:
            violation = kba_select(alpha, G, P, n, b0, b1, C, &i)
            kba_store_d(&self.viol[t, 0], violation)
            if violation <= self.tol or i < 0:
                if self._others_quiet(t):
                    break                              # all blocks satisfy KKT to tol
                self.stats[t, 5] += 1
                sched_yield()       # wait for the others; on a busy machine, give them the core
                continue
            q = self._row(t, i)
            a_old = alpha[i]
            a_new = a_old - kba_g(G, P, n, i)          # Newton step on coordinate i (Q_ii = 1)
            a_new = 0.0 if a_new < 0.0 else (C if a_new > C else a_new)
            delta = a_new - a_old
            if delta != 0.0:
                alpha[i] = a_new
                # g += δ Q[i, :], sweeping from this block's start (staggers concurrent sweeps)
                if self.atomic and self.threads > 1 and not self.per_thread:
                    kba_axpy_atomic(mine, q, delta, b0, n)
                    kba_axpy_atomic(mine, q, delta, 0, b0)
                else:                                  # one thread, "racy", or its own part
                    kba_axpy(mine, q, delta, b0, n)
                    kba_axpy(mine, q, delta, 0, b0)
            done += 1
        self.stats[t, 3] += done
        kba_store_i(&self.stats[t, 4], 2)
        return done

    def run(self, Py_ssize_t updates_per_thread):
        """Every thread performs up to `updates_per_thread` updates on its block, concurrently and
        without locks. Returns the number of updates done (all threads)."""
        done = np.zeros((self.threads, PAD), dtype=np.int64)
        cdef int64_t[:, ::1] dv = done
        cdef Py_ssize_t t
        cdef int nt = <int>self.threads
        np.asarray(self.stats)[:, 4] = 0               # nobody has started
        np.asarray(self.viol)[:, 0] = np.inf           # nobody is known to be quiet
        with nogil:
            for t in prange(nt, num_threads=nt, schedule="static"):
                dv[t, 0] = self._work(t, updates_per_thread)
        return int(done[:, 0].sum())

    # ---- read-outs -------------------------------------------------------------------------
    def gradient(self):
        """g = Qα − e as maintained (a new array)."""
        return np.asarray(self.grad_parts).sum(axis=0) - 1.0

    def set_gradient(self, g):
        """Replace the maintained gradient (an exact recomputation) — not while running."""
        parts = np.asarray(self.grad_parts)
        parts[0] = np.asarray(g, dtype=np.float64) + 1.0
        parts[1:] = 0.0

    @property
    def cache_hits(self):
        return int(np.asarray(self.stats)[:, 0].sum())

    @property
    def cache_misses(self):
        return int(np.asarray(self.stats)[:, 1].sum())

    @property
    def idle_scans(self):
        """Scans of a thread whose block was within tol while another thread still worked."""
        return int(np.asarray(self.stats)[:, 5].sum())

    @property
    def updates(self):
        return int(np.asarray(self.stats)[:, 3].sum())

    def block_violations(self):
        return np.asarray(self.viol)[:, 0].copy()


def rbf_expand(const double[:, ::1] dots, const double[::1] sq_x, const double[::1] sq_s,
               double gamma, const double[::1] coef, double[::1] out, int threads):
    """out[r] = Σ_s coef[s] exp(−γ(‖x_r‖² + ‖s‖² − 2 dots[r, s])): decision values from the dot
    products of a chunk of points with the support vectors (SIMD exp, OpenMP over rows)."""
    cdef Py_ssize_t r, m = dots.shape[0], ns = dots.shape[1]
    if ns == 0:
        out[:] = 0.0
        return
    for r in prange(m, nogil=True, num_threads=threads, schedule="static"):
        out[r] = kba_rbf_expand(&dots[r, 0], &sq_s[0], sq_x[r], gamma, &coef[0], ns)
