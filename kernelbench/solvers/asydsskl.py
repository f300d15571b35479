"""AsyDSSKL: asynchronous doubly stochastic sparse kernel learning (Gu, Miao, Huo & Huang, AAAI 2018).

Sparse kernel learning on random features, problem (4):

    min_w  P(w) = (1/l) Σ_i ℓ(Σ_{h∈A} w_h φ_h(x_i), y_i) + λ ‖w‖₁,   λ = 1/(l·C),
    φ_h(x) = √2 cos(ω_h·x + b_h)   (E[φ_h(x) φ_h(x')] = k(x, x'), features seeded as DSG's),

solved by Algorithm 1 (M rounds: add R new random features to the working set A, solve (4) by
Algorithm 2, drop the features whose weight is exactly zero) with Algorithm 2 (S SVRG outer loops:
parallel full gradient at the snapshot, then m lock-free inner steps on all threads, each a
mini-batch (B) variance-reduced coordinate gradient and an L1 proximal step of length γ/L_max).
The compiled loops and the cost per inner step (O(B·|A|)) are documented in _asydsskl.pyx.

Runner unit: one `run` step is ONE SVRG outer loop (Alg. 2 lines 3–12); a "pass" is the whole
Algorithm 1 (M·S outer loops, 50 by default), so `stop: {passes: 1}` runs the paper's schedule and
`evaluate: {every: 1}` gives a curve point per outer loop. Steps past the first pass keep running
rounds of Algorithm 1.

Tasks: binary classification (logistic loss, as the paper's experiments) and regression
(correntropy-induced loss, as the paper's experiments). The paper treats multi-class sets (covtype,
MNIST, Aloi) as regression on the class index: the experiment loop's registry task of those sets is
"multiclass", so an experiment on them needs the dataset loaded with task='regression'
(`load_dataset(name, task="regression")`); see configs/gu_*_asydsskl.yaml.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from kernelbench.params import (C, GAMMA, KERNEL, NONE, POSITIVE, RANDOM_STATE, THREADS, Choice, Integer,
                                declare, param)
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers import _asydsskl
from kernelbench.solvers.base import (BinaryClassifierMixin, BudgetExceededError, DivergenceError,
                                      RegressionMixin, Solver, as_dense, blas_threads, not_offered,
                                      resolve_threads)
from kernelbench.solvers.kernels import resolve_gamma
from kernelbench.solvers.losses import BINARY, REGRESSION, code, curvature, losses_for
from kernelbench.solvers.objectives import objective_exploded

# Table 1's losses: the proximal step γ/L_max needs a finite curvature (eq. (8)), one score per row
CLASSIFICATION_LOSSES = losses_for(BINARY, smooth=True, one_score=True)
REGRESSION_LOSSES = losses_for(REGRESSION, smooth=True)
PHI_MAX_SQ = 2.0            # max φ_h(x)² = (√2 cos)² ≤ 2: L_max = curvature(ℓ) · 2 (Gu et al. (8))
PREDICT_ROWS = 512          # rows per chunk when predicting
# Φ's element type per `feature_dtype`: half precision is held as its uint16 bits (the compiled
# loops' `kb_half`); `feature_matrix_` shows it as float16
FEATURE_STORAGE = {"float32": np.dtype(np.float32), "float16": np.dtype(np.uint16)}


PARAMETERS = declare(
    loss=param("auto", "loss ℓ of Table 1: logistic, smooth_hinge, squared, sigmoid (classification); "
                       "correntropy, squared (regression); auto = logistic for classification, correntropy "
                       "for regression (the paper's experiments)", Choice("auto", *CLASSIFICATION_LOSSES)),
    sigma=param(1.0, "correntropy width σ in σ²(1 − exp(−(f−y)²/σ²))", POSITIVE),
    kernel=KERNEL, gamma=GAMMA.but(default="scale"),
    # C = 0.3, not LIBSVM's 1: λ‖w‖₁ over M·R random features (1,280 at the defaults, more than the rows
    # of a small set) needs a stronger weight than the RKHS norm of an SVM. On validation splits of the
    # standardised sets of scripts/bench_defaults.py C = 0.3 had the smallest worst case over the sets
    # (at most 1.1 points above the best of C ∈ {0.03, 0.1, 0.3, 1} except heart's 51 rows) and a lower
    # mean error than C = 1 (9.6 % vs 10.2 %); C = 1 was 4 points worse on heart and australian.
    C=C.but(default=0.3, doc="L1 regularisation: λ = 1/(n·C) in problem (4)"),
    rounds=param(5, "M: rounds of Algorithm 1 (each adds `features_per_round` features)", Integer(1)),
    features_per_round=param(256, "R: random features sampled into the working set per round", Integer(1)),
    outer_loops=param(10, "S: SVRG outer loops of Algorithm 2 per round", Integer(1)),
    inner_steps=param(None, "m: inner steps per outer loop, shared by all threads; None = n (the paper's "
                            "m = l)", Integer(1), NONE),
    batch_size=param(10, "B: mini-batch size of each inner step", Integer(1)),
    step=param(0.3, "γ: the proximal step is γ/L_max (the paper grids γ; 1 stalls at a noise floor or "
                    "diverges on ijcnn1/a9a, 0.2–0.3 works there)", POSITIVE),
    threads=THREADS.but(doc="OpenMP threads of the lock-free loops (0 = all cores)"),
    feature_dtype=param("float32", "storage of the working-set features Φ: float32, or float16 (IEEE half, "
                                   "rounded to nearest: relative error ≤ 2⁻¹¹ per feature, half the memory "
                                   "and half the memory traffic of the memory-bound inner loop; the model "
                                   "predicts with unrounded features)", Choice(*FEATURE_STORAGE)),
    max_feature_mb=param(4096.0, "memory budget of the feature matrix n × |A| (MB); above it the run is "
                                 "skipped with a message", POSITIVE),
    random_state=RANDOM_STATE)

REGRESSION_PARAMETERS = declare(PARAMETERS, loss=PARAMETERS["loss"].but(
    allowed=(Choice("auto", *REGRESSION_LOSSES),)))


class _AsyDSSKLBase(Solver):
    _training_only = ("_phi", "_y", "_dz", "_grad", "_sparse_X32")
    predict_parallelism = "internal"   # OpenMP on `threads`, chunked inside (base.py)
    determinism = ("threads=1: identical results for the same seed (the compiled solver follows a "
                   "fixed random stream); threads>1: lock-free asynchronous updates make every run "
                   "differ (statistically equivalent, not bit-identical)")

    # ---- set-up ----------------------------------------------------------------------------
    def _feature_dtype(self):
        return np.float32

    def _init_model(self, X):
        n = X.shape[0]
        capacity = self.rounds * self.features_per_round     # |A| can reach M·R in one pass
        self._storage = FEATURE_STORAGE[self.feature_dtype]
        need_mb = n * capacity * self._storage.itemsize / 2**20
        if need_mb > self.max_feature_mb:
            raise BudgetExceededError(
                f"AsyDSSKL keeps the {self.feature_dtype} features of its working set (n × "
                f"rounds·features_per_round = {n} × {capacity}): {need_mb:.0f} MB > max_feature_mb="
                f"{self.max_feature_mb:g}; subsample the data, use fewer features_per_round, use "
                "feature_dtype=float16, or raise max_feature_mb")
        rng = np.random.default_rng(self.random_state)
        self._feature_seed, self._rng_seed = (int(s) for s in rng.integers(2**63, size=2))
        self.gamma_ = resolve_gamma(self.gamma, X, kernel=self.kernel, seed=self._feature_seed)
        self.lambda_ = 1.0 / (n * self.C)
        self.lipschitz_ = curvature(self.loss_) * PHI_MAX_SQ     # L_max, eq. (8)
        self.eta_ = self.step / self.lipschitz_                          # γ / L_max
        self.threads_ = resolve_threads(self.threads)
        self.inner_steps_ = int(self.inner_steps) if self.inner_steps is not None else n
        # One round of headroom when the budget allows: a run that goes on past its pass (a time
        # budget, or a speed-up measured to a target objective) starts round M + 1 without
        # reallocating and copying Φ (all n × capacity entries, a sizeable part of a pass).
        if n * (capacity + self.features_per_round) * self._storage.itemsize / 2**20 <= self.max_feature_mb:
            capacity += self.features_per_round
        # Φ of A: n × capacity, row i's first |A| entries are φ_A(x_i) (the compiled loops read
        # only those); allocated once, filled and compacted in place (see _asydsskl.pyx)
        self._phi = np.empty((n, capacity), dtype=self._storage)
        _asydsskl.zero_rows(self._phi, self.threads_)    # set-up: page faults here, not in round 1
        self._y = np.ascontiguousarray(self._train_Y.ravel(), dtype=np.float64)
        self._dz = np.zeros(n)
        self._grad = np.zeros(0)
        self.feature_ids_ = np.zeros(0, dtype=np.int64)                  # global ids of A: round·R + k
        self.omega_ = np.zeros((0, X.shape[1]), dtype=np.float32)        # ω_h, h ∈ A
        self.phase_ = np.zeros(0, dtype=np.float32)                      # b_h
        self.coef_ = np.zeros(0)                                         # w_h
        self.round_ = 0
        self.outer_in_round_ = 0
        self.outer_index_ = 0
        self.inner_steps_done_ = 0
        self.features_sampled_ = 0
        self.train_objective_ = np.nan      # P(w̃) on the whole training set at the last snapshot

    partial_fit = not_offered("problem (4) is solved on one fixed training set (Φ is built from it; use fit)")

    @property
    def steps_per_pass(self) -> int:
        """One pass = Algorithm 1 once: M rounds × S outer loops."""
        return self.rounds * self.outer_loops

    # ---- Algorithm 1 -------------------------------------------------------------------------
    def _add_features(self):
        """Alg. 1 line 3: R new features (block = round, seeded) join A with weight 0."""
        X = self._train_features_input()
        R, a = self.features_per_round, len(self.coef_)
        need_mb = X.shape[0] * (a + R) * self._storage.itemsize / 2**20
        if need_mb > self.max_feature_mb:       # only reachable past the first pass (more rounds)
            raise BudgetExceededError(
                f"AsyDSSKL working set would need {need_mb:.0f} MB > max_feature_mb="
                f"{self.max_feature_mb:g}; run fewer rounds or raise max_feature_mb")
        W, b = _asydsskl.random_features(self._feature_seed, self.round_, 0, R, X.shape[1],
                                         self.kernel, self.gamma_)
        W, b = W.astype(np.float32), b.astype(np.float32)
        if a + R > self._phi.shape[1]:
            # past the first pass only: grow the capacity by M·R columns (a rare serial copy)
            grown = np.empty((X.shape[0], a + self.rounds * R), dtype=self._storage)
            _asydsskl.copy_columns(grown, self._phi, a, self.threads_)   # rows in parallel
            self._phi = grown
        # The R new columns are computed in place in Φ (preallocated n × capacity), all rows in
        # parallel: no n × (a + R) reallocation or copy per round (the serial part that capped the
        # thread speedup, Fig. 2).
        _asydsskl.fill_features(self._phi, a, X, np.ascontiguousarray(W.T), b, self.threads_)
        self._grad = np.zeros(a + R)
        self.feature_ids_ = np.concatenate([self.feature_ids_, self.round_ * R + np.arange(R)])
        self.omega_ = np.vstack([self.omega_, W])
        self.phase_ = np.concatenate([self.phase_, b])
        self.coef_ = np.concatenate([self.coef_, np.zeros(R)])
        self.features_sampled_ += R

    def _train_features_input(self):
        """X as float32: dense, or CSR kept sparse (rcv1-like data: Φ = X ωᵀ needs no densifying)."""
        if not sp.issparse(self._train_X):
            return np.ascontiguousarray(self._dense_train_X())
        if getattr(self, "_sparse_X32", None) is None:
            self._sparse_X32 = _fill_input(self._train_X)
        return self._sparse_X32

    def _drop_zero_features(self):
        """Alg. 1 line 5: A ← A − {h : w(h) = 0}."""
        keep = np.flatnonzero(self.coef_ != 0.0)
        a = len(keep)
        if a < len(self.coef_):
            _asydsskl.compact_columns(self._phi, keep.astype(np.intp), self.threads_)   # in place
            self.feature_ids_ = self.feature_ids_[keep]
            self.omega_ = self.omega_[keep]
            self.phase_ = self.phase_[keep]
            self.coef_ = self.coef_[keep]

    def _outer_loop(self):
        """Alg. 2 lines 3–12, one s: snapshot, parallel full gradient, m lock-free inner steps."""
        a = len(self.coef_)
        loss = code(self.loss_)
        w = self.coef_
        mean_loss, status = _asydsskl.full_gradient(self._phi, a, self._y, w, loss, float(self.sigma),
                                                    self._dz, self._grad, self.threads_)
        self.train_objective_ = mean_loss + self.lambda_ * float(np.abs(w).sum())
        if self.outer_index_ == 0:
            self.initial_objective_ = self.train_objective_          # P(0): w = 0 at the start
        elif objective_exploded(self.train_objective_, self.initial_objective_):
            status = _asydsskl.DIVERGED                               # an exploding iterate (or NaN)
        if status == _asydsskl.OK:
            status = _asydsskl.inner_loops(self._phi, a, self._y, w, self._dz, self._grad, loss,
                                           float(self.sigma), self.eta_, self.eta_ * self.lambda_,
                                           int(self.batch_size), self.inner_steps_, self._rng_seed,
                                           self.outer_index_, self.threads_)
        if status != _asydsskl.OK:
            raise DivergenceError(
                f"AsyDSSKL diverged in outer loop {self.outer_index_ + 1}: a coefficient became "
                f"NaN/inf or the objective exploded (P(w) = {self.train_objective_:.3g}). Use a "
                f"smaller step (step={self.step:g}; the step is step/L_max with L_max="
                f"{self.lipschitz_:g}).")
        self.outer_index_ += 1
        self.inner_steps_done_ += self.inner_steps_

    def run(self, n_steps: int) -> int:
        """n_steps SVRG outer loops, with the round boundaries of Algorithm 1 in between."""
        done = 0
        n = self._train_X.shape[0]
        for _ in range(int(n_steps)):
            if self.outer_in_round_ == 0:
                self._add_features()
            self._outer_loop()
            self.outer_in_round_ += 1
            if self.outer_in_round_ == self.outer_loops:
                self._drop_zero_features()
                self.outer_in_round_ = 0
                self.round_ += 1
            done += 1
            self.n_iter_ += 1
            self.samples_seen_ += n + self.inner_steps_ * int(self.batch_size)
        return done

    # ---- the model -----------------------------------------------------------------------------
    def _decision(self, X):
        """f(x) = Σ_{h: w_h ≠ 0} w_h √2 cos(ω_h·x + b_h): only the non-zero weights are evaluated."""
        nz = np.flatnonzero(self.coef_)
        out = np.zeros((X.shape[0], 1))
        if nz.size == 0 or X.shape[0] == 0:
            return out
        W, b = self.omega_[nz], self.phase_[nz]
        w = np.sqrt(2.0) * self.coef_[nz]
        result = out[:, 0].copy()
        threads = resolve_threads(self.threads)
        # The phase GEMM of a 512-row chunk is small: BLAS stays on one thread and the threads are
        # OpenMP's (decision_rows). Multi-threaded BLAS here would also leave its workers spinning
        # after each call, stealing the cores from the next training loop (visibly slower training on
        # ijcnn1 when predicting between outer loops, as the accuracy-vs-time curves do).
        with blas_threads(1):
            for r0 in range(0, X.shape[0], PREDICT_ROWS):
                Xc = X[r0:r0 + PREDICT_ROWS]
                Xc = sp.csr_matrix(Xc, dtype=np.float32) if sp.issparse(Xc) else as_dense(Xc, np.float32)
                Z = np.ascontiguousarray(Xc @ W.T, dtype=np.float32)      # phases: one sgemm
                _asydsskl.decision_rows(Z, b, w, result, r0, threads)     # SIMD cos + dot, compiled
        out[:, 0] = result
        return out

    def penalty(self) -> float:
        """Ω(w) = λ‖w‖₁ of problem (4), P(w) = mean loss (σ: `sigma`) + Ω."""
        return float(self.lambda_ * np.abs(self.coef_).sum())

    def record(self) -> dict:
        return {**super().record(), "n_features": self.n_random_features_}

    @property
    def n_random_features_(self) -> int:
        """|A|, the working set."""
        return int(len(self.coef_))

    @property
    def n_nonzero_(self) -> int:
        return int(np.count_nonzero(self.coef_))

    @property
    def feature_matrix_(self) -> np.ndarray:
        """Φ of the working set as the solver holds it (n × |A|, float32 or float16; training only)."""
        phi = self._phi[:, :len(self.coef_)]
        return phi.view(np.float16) if self._storage == np.uint16 else phi

    def counters(self) -> dict:
        return {"n_nonzero": self.n_nonzero_, "working_set": self.n_random_features_,
                "round": int(self.round_), "outer_loops": int(self.outer_index_),
                "inner_steps": int(self.inner_steps_done_), "threads": int(self.threads_),
                "features_sampled": int(self.features_sampled_),
                # P(w̃) on the whole training set at the last snapshot (None before the first)
                "train_objective_snapshot": (float(self.train_objective_)
                                             if np.isfinite(self.train_objective_) else None)}


def _fill_input(X):
    """X as `fill_features` reads it: C-contiguous float32, or float32 CSR with int32 indices."""
    if not sp.issparse(X):
        return np.ascontiguousarray(X, dtype=np.float32)
    X32 = sp.csr_matrix(X, dtype=np.float32)
    X32.sum_duplicates()
    X32.indices = X32.indices.astype(np.intc, copy=False)
    X32.indptr = X32.indptr.astype(np.intc, copy=False)
    return X32


def _features(X, W, b, threads=1):
    """Φ = √2 cos(X Wᵀ + b) in float32 by the solver's compiled feature map (new working-set
    columns are filled by the same code in place)."""
    W = np.asarray(W, dtype=np.float32)
    X = _fill_input(X)
    Z = np.empty((X.shape[0], W.shape[0]), dtype=np.float32)
    _asydsskl.fill_features(Z, 0, X, np.ascontiguousarray(W.T), np.asarray(b, dtype=np.float32),
                            resolve_threads(threads))
    return Z


class AsyDSSKLClassifier(BinaryClassifierMixin, _AsyDSSKLBase):
    """Binary sparse kernel classifier trained by AsyDSSKL (logistic loss by default)."""
    parameters = PARAMETERS
    auto_loss = "logistic"


class AsyDSSKLRegressor(RegressionMixin, _AsyDSSKLBase):
    """Sparse kernel regression trained by AsyDSSKL (correntropy-induced loss by default)."""
    parameters = REGRESSION_PARAMETERS
    auto_loss = "correntropy"


register_algorithm(
    "asydsskl", classifier=AsyDSSKLClassifier, regressor=AsyDSSKLRegressor, tasks=("binary", "regression"),
    description="AsyDSSKL: lock-free asynchronous doubly stochastic sparse kernel learning "
                "(Gu et al. 2018, Alg. 1-2; OpenMP)",
    smoke_params={"features_per_round": 32, "inner_steps": 200, "outer_loops": 2, "rounds": 2},
)
