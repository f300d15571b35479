"""Semi-supervised kernel SVMs by stochastic functional gradients (Geng et al., IJCAI 2019).

TSGS3VM (Alg. 1–2) minimises the S3VM objective

    R(f) = ½‖f‖² + C · mean_{(x,y)∈L} ℓ(f(x), y) + C* · mean_{x∈U} u(f(x)),   C* = C · n_l / n_u

(ℓ the hinge loss, u an unlabeled loss of Table 2: shg, sshg, ramp, da) with *triply* stochastic
gradients: each iteration samples a labeled mini-batch, an unlabeled mini-batch and a block of
random Fourier features regenerated from the iteration's seed, and applies update (7)
f ← (1 − γ) f − γ ζ with a constant step γ = 1/η. The model is the list of coefficients, O(T)
memory. The compiled loop is _tsgs3vm.pyx.

FRS3VM (the paper's baseline "standard SGD with fixed random features") minimises the same R(f)
over a fixed set of D = ⌈√n⌉ random features (§6.1), with the same two mini-batches and steps; the
paper runs it for 10 passes. Its per-iteration work is one (rows × D × d) matrix product and one
cos of a (rows × D) array, so it is written as vectorised NumPy per mini-batch: the Python
overhead per iteration is small next to that BLAS/ufunc work, and a compiled loop would
only duplicate what NumPy already does at the same speed.

Class balance (`offset: balanced`, the default; not in the paper, whose configs set `offset: none`).
Without a constraint an S3VM can put every unlabeled point on one side: a one-class model (cod-rna
with C = 1, eta = 10: 33 % error, no positive prediction; the labeled class prior alone does it).
TSVMs keep the unlabeled predictions at the labeled class ratio: Joachims (1999) fixes the number
of positive predictions on U (an SVMlight TSVM parameter, the labeled ratio by default), Chapelle
& Zien (2005, ∇TSVM) the mean output, mean_U f = mean_L y. Here f = h + b and each iteration sets
b on its unlabeled batch U_t by Joachims' rule, relaxed by the sampling error of the ratio:

    share of x ∈ U_t with f(x) > 0  ∈  p ± 2·sqrt(p(1 − p)(1/n_l + 1/|U_t|)),   p = share of positive labels,

b = 0 when h alone satisfies it (the model is then the paper's), else the threshold that puts the
count of positives at the nearer end, halfway between two consecutive outputs. Not pinning the
ratio exactly matters: p comes from 200 labels (±3 points), and forcing it exactly cost TSGS3VM 7
points of validation error on cod-rna at the paper's settings (15.0 % against 7.9 % without b, six
draws); the band costs 0.1-0.4 there and on ijcnn1. The mean-output constraint, a proxy for the
ratio, lost 4 points on ijcnn1 (FRS3VM, paper's settings, even with its gradient taken through b):
an unconverged f puts the majority class far past −1. The step treats b as given (its derivative
lives on the two outputs that set the threshold). After each run() b is solved again, for the
updated model, on batch_size unlabeled rows ending at the last one stepped on: the b prediction
uses (the next iteration solves b afresh, so training does not depend on where run() calls end;
a pass's last batch may hold a few rows only, whose band would admit anything). One
implementation of the rule: kernelbench.solvers._tsgs3vm.balanced_offset (FRS3VM calls it per
batch; BGS3VM for its prediction offset only, bgs3vm.py says why).

Defaults (C = 10⁴, eta = 10³, γ by the median trick, offset balanced; FRS3VM C = 3000): chosen on
validation splits of the training parts (70/30, 200 labeled rows drawn from the 70 %, three or
four draws; never a test part) of cod-rna, ijcnn1 and skin_nonskin, standardised, checked on a9a,
phishing, covtype_subset20k and svmguide1. Only C/eta, the step on the mean hinge, matters much
while eta exceeds the iterations (the shrink (1 − 1/eta)^T stays near 1): 3 to 10 was best, 30
unstable; the old C = 1, eta = 10 left f ≈ C·mean y (33 % on cod-rna, one class). Validation
error, TSGS3VM one pass: cod-rna 8.5 %, ijcnn1 8.5 %, skin 1.3 %; FRS3VM 10 passes: 8.1, 8.0,
1.7 %; SVC on the 200 labeled rows, C and γ by 5-fold CV on them: 6.7, 7.3, 1.4 %.

Semi-supervised input convention (shared with every algorithm registered for the task
"semi-supervised"): fit(X, y) / begin(X, y) with y float64 where NaN marks an unlabeled row and
labeled rows carry the raw two class labels. Without any NaN the problem is a plain (supervised)
SVM trained by the same updates, with a UserWarning that says so.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.utils.validation import validate_data

from kernelbench.errors import SolverError
from kernelbench.params import (BOOLEAN, C, DTYPE, GAMMA, KERNEL, NONE, PASSES, RANDOM_STATE,
                                THREADS, Choice, Integer, Real, declare, param)
from kernelbench.algorithms import register_algorithm
from kernelbench.spaces import LogUniform
from kernelbench.semisupervised import encode_semi_supervised, warn_no_unlabeled_rows
from kernelbench.solvers import _tsgs3vm
from kernelbench.solvers._random_features import feature_block
from kernelbench.solvers._tsgs3vm import balance_tolerance, balanced_offset
from kernelbench.solvers.base import (BinaryClassifierMixin, DivergenceError, Solver, as_dense,
                                      blas_threads, resolve_threads)
from kernelbench.solvers.defaults import default_passes
from kernelbench.solvers.kernels import resolve_gamma
from kernelbench.solvers.losses import (UNLABELED_LOSSES, code, loss_derivatives, unlabeled_code,
                                        unlabeled_loss_derivatives)
from kernelbench.solvers.objectives import divergence_bound


# ---- the class balance (module doc) --------------------------------------------------------------
def balance_offset(h_unlabeled, positive_rate: float, n_labeled: int) -> float:
    """b that keeps the share of h + b > 0 on these unlabeled outputs within two standard errors of
    the labeled rows' positive rate (n_labeled rows); 0 when h already does."""
    return balanced_offset(h_unlabeled, positive_rate,
                           balance_tolerance(positive_rate, n_labeled, len(h_unlabeled)))


S3VM_OFFSET = param("balanced", "offset b in f = b + Σβ cos(·) (the paper has none: `none`). balanced: b "
                                "keeps the share of positive predictions on each unlabeled batch within "
                                "two standard errors of the labeled rows' (Joachims' TSVM constraint), so "
                                "the model never predicts one class; learned: unregularised, same step",
                    Choice(*_tsgs3vm.OFFSETS))


# ---- parameters (declared once: __init__, checks, configs and docs derive from them) ---------------
# passes: None (defaults.default_passes). A pass is n_u / batch_size iterations, so a small set gets
# few: svmguide1 (2,000 unlabeled rows) has 8, and TSGS3VM's validation error there was 9.3 % after
# one pass, 3.9 % after 20 (160 iterations); FRS3VM's 6.6 % after 10 passes (80 iterations), 4.3 %
# after 100. On cod-rna and ijcnn1 (113-136 iterations a pass on the validation splits) TSGS3VM had
# 8.5 / 8.5 % after one pass, 8.3 / 8.0 % after two, 8.4 / 8.0 % after four. TSGS3VM's cost grows
# with the square of the iterations (Remark 1), FRS3VM's linearly.
TSGS3VM_AUTO_ITERATIONS = 200
FRS3VM_AUTO_ITERATIONS = 1000

S3VM_PARAMETERS = declare(
    unlabeled_loss=param("shg", "unlabeled loss u of Table 2: shg (symmetric hinge, the paper's), sshg, "
                                "ramp (symmetric, s = -0.3), da (exp(-5r²))", Choice(*UNLABELED_LOSSES)),
    kernel=KERNEL.but(doc="rbf exp(-γ‖x−x'‖²) (the paper's σ is γ) or laplacian exp(-γ‖x−x'‖₁)"),
    # pinned: the S3VM defaults below were chosen with the median trick (module doc, "Defaults")
    gamma=GAMMA.but(default="median"),
    C=C.but(default=10000.0, doc="weight of the labeled hinge loss (mean over L)",
            search=LogUniform(100, 1e6)),
    C_unlabeled=param(None, "weight C* of the unlabeled loss (mean over U); null = C·n_l/n_u as the paper",
                      Real(0), NONE),
    # update (7) scales f by (1 − 1/eta): a step 1/eta above 1 would flip the sign of f
    eta=param(1000.0, "constant step γ = 1/eta, eta >= 1 (a larger step flips the sign of f; the paper "
                      "searches 0 ≤ log10 eta ≤ 3)", Real(1), search=LogUniform(1, 1e4)),
    batch_size=param(256, "unlabeled points per iteration; the labeled batch is min(batch_size, n_l)",
                     Integer(1, 10**7)),
    offset=S3VM_OFFSET)

TSGS3VM_PARAMETERS = declare(
    S3VM_PARAMETERS,
    block_size=param(32, "random features added per iteration", Integer(1, 10**6)),
    dtype=DTYPE,
    cache_features=param(True, "keep ω in memory (fast); False regenerates ω from seeds: O(T) memory",
                         BOOLEAN),
    threads=THREADS,
    passes=PASSES.derived(f"passes made by fit() (the experiment loop uses `stop`); None = the paper's one pass, "
                          f"more where a pass has fewer than {TSGS3VM_AUTO_ITERATIONS} iterations"),
    random_state=RANDOM_STATE)

FRS3VM_PARAMETERS = declare(
    S3VM_PARAMETERS,
    n_components=param(None, "number D of fixed random features; null = ⌈√n⌉ (§6.1)",
                       Integer(1, 10**6), NONE),
    dtype=DTYPE.but(default="float64", doc="precision of features and phases (coefficients are "
                                           "float64); float32 makes cos several times faster (scripts/bench_dsg.py "
                                           "measures it)"),
    C=S3VM_PARAMETERS["C"].but(default=3000.0),
    threads=THREADS.but(doc="BLAS threads for the per-batch products (0 = all cores)"),
    passes=PASSES.derived(f"passes made by fit() (the experiment loop uses `stop`); None = the paper's 10, more "
                          f"where 10 passes make fewer than {FRS3VM_AUTO_ITERATIONS} iterations"),
    random_state=RANDOM_STATE)


# ---- the shared semi-supervised stepping --------------------------------------------------------
class _S3VMBase(BinaryClassifierMixin, Solver):
    """Data handling and batch schedule of both S3VM solvers: each iteration a labeled batch of
    min(batch_size, n_l) rows (cycling through fresh permutations of L) and an unlabeled batch
    of batch_size rows; one pass = max(n_u, n_l) rows, i.e. the unlabeled set once (§6.1)."""

    _training_only = ("_labeled", "_unlabeled", "_lab_order", "_lab_position")

    def _set_training(self, X, y, *, fitting, classes=None):
        Y, labeled, unlabeled = encode_semi_supervised(self, X, y, fitting=fitting, classes=classes)
        self._train_X = X
        self._train_Y = Y
        self._labeled, self._unlabeled = labeled, unlabeled
        self._lab_order = self._rng.permutation(self._labeled)
        self._lab_position = 0
        self._order = self._rng.permutation(self._unlabeled)
        self._position = 0

    def begin(self, X, y, *, classes=None):
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True)
        if X.shape[0] < 1:
            raise SolverError("no training samples")
        self._check_params()
        self._rng = np.random.default_rng(self.random_state)
        self._set_training(X, y, fitting=True, classes=classes)
        self.n_labeled_, self.n_unlabeled_ = len(self._labeled), len(self._unlabeled)
        if not self.n_unlabeled_:          # supervised: C* = 0 below, the unlabeled batches empty
            warn_no_unlabeled_rows(self)
        self.positive_rate_ = float(np.mean(self._train_Y[self._labeled] > 0))   # the balance target
        if self.C_unlabeled is None:       # §6.1: C* = C · n_l / n_u
            self.C_unlabeled_ = self.C * self.n_labeled_ / self.n_unlabeled_ if self.n_unlabeled_ else 0.0
        else:                              # no unlabeled rows: no unlabeled term, whatever C* says
            self.C_unlabeled_ = float(self.C_unlabeled) if self.n_unlabeled_ else 0.0
        self.n_iter_ = 0
        self.samples_seen_ = 0
        seed = int(self._rng.integers(2**63))
        self.feature_seed_ = seed          # the random features' seed (Alg. 1 line 4: block t uses (seed, t))
        self.gamma_ = resolve_gamma(self.gamma, X, kernel=self.kernel, seed=seed)
        self._init_model(X, seed)
        self.passes_ = (default_passes(X.shape[0], self.steps_per_pass, min_iterations=self._auto_iterations,
                                       min_passes=self._auto_min_passes)
                        if self.passes is None else float(self.passes))
        return self

    @property
    def steps_per_pass(self) -> int:
        return math.ceil(max(len(self._unlabeled), len(self._labeled)) / self.batch_size)

    @property
    def labeled_batch_size(self) -> int:
        return min(int(self.batch_size), len(self._labeled))

    def _next_labeled(self, n_steps):
        """(n_steps, labeled batch) rows: consecutive slices of fresh permutations of L."""
        bl = self.labeled_batch_size
        out = np.empty(n_steps * bl, dtype=np.int64)
        filled = 0
        while filled < out.size:
            if self._lab_position >= len(self._lab_order):
                self._lab_order = self._rng.permutation(self._labeled)
                self._lab_position = 0
            take = min(out.size - filled, len(self._lab_order) - self._lab_position)
            out[filled: filled + take] = self._lab_order[self._lab_position: self._lab_position + take]
            filled += take
            self._lab_position += take
        return out.reshape(n_steps, bl)

    def run(self, n_steps: int) -> int:
        """Up to n_steps iterations; the unlabeled rows are visited in a fresh random order each
        pass (Alg. 1 lines 2–3 with mini-batches)."""
        done = 0
        n_u = len(self._unlabeled)
        X = self._dense_train_X()
        while done < n_steps:
            if n_u:
                if self._position >= n_u:
                    self._order = self._rng.permutation(self._unlabeled)
                    self._position = 0
                left = math.ceil((n_u - self._position) / self.batch_size)
                k = min(n_steps - done, left)
                unl = self._order[self._position: self._position + k * self.batch_size]
            else:
                k = n_steps - done
                unl = np.empty(0, dtype=np.int64)
            lab = self._next_labeled(k)
            steps = self._train_steps(X, lab, np.ascontiguousarray(unl, dtype=np.int64))
            self._position += len(unl)
            done += steps
            self.n_iter_ += steps
            self.samples_seen_ += len(unl) + lab.size
            if steps < k:
                break
        if self.offset == "balanced" and done and n_u:     # b for prediction (module doc)
            # batch_size rows of this pass's unlabeled order, ending at the last one stepped on
            # where there are that many: a pass's last batch may hold a few rows only, and the
            # band of the balance step widens as 1/sqrt(rows)
            start = min(max(self._position - self.batch_size, 0), max(n_u - self.batch_size, 0))
            rows = self._order[start: start + self.batch_size]
            self._set_offset(self._balance(self._offset_free_decision(X[rows])))
        return done

    def _balance(self, h_unlabeled):
        """b of the class balance on offset-free outputs h of unlabeled rows (module doc)."""
        return balance_offset(h_unlabeled, self.positive_rate_, self.n_labeled_)

    def partial_fit(self, X, y, classes=None):
        """One pass over (X, y) (NaN = unlabeled), continuing the model."""
        if not hasattr(self, "n_iter_"):
            self.begin(X, y, classes=classes)
        else:
            X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
            self._set_training(X, y, fitting=False)
            self.__dict__.pop("_dense_X_cache", None)
        self.run(self.steps_per_pass)
        return self.finish()

    # ---- what the experiment loop records ----
    # R(f) = ½‖f‖² + C · mean hinge on L + C* · mean u on U, divided by C (objectives.py): mean hinge
    # + (C*/C) · mean u + ‖f‖²/(2C)
    loss_ = "hinge"          # the labeled loss of the S3VM objective, fixed

    def penalty(self) -> float:
        return 0.5 * self.coef_norm_sq() / self.C

    def unlabeled_term(self):
        return self.unlabeled_loss, self.C_unlabeled_ / self.C

    def record(self) -> dict:
        return {**super().record(), "n_features": self.n_random_features_}

    def counters(self) -> dict:
        return {"model_bytes": int(self.model_bytes()), "n_labeled": int(self.n_labeled_),
                "n_unlabeled": int(self.n_unlabeled_), "C_unlabeled": float(self.C_unlabeled_)}

    def _check_status(self, diverged):
        if diverged:
            raise DivergenceError(
                f"{type(self).__name__} diverged at iteration {self.n_iter_}: f became NaN/inf or "
                f"exploded. Use a smaller step (a larger eta than {self.eta:g}) or a smaller C.")


# ---- TSGS3VM ------------------------------------------------------------------------------------
class TSGS3VMClassifier(_S3VMBase):
    """Semi-supervised kernel SVM trained by triply stochastic gradients (Geng et al. 2019).
    y: the two class labels on labeled rows, NaN on unlabeled rows."""

    determinism = ("identical results for the same seed and thread count; a different thread count "
                   "changes GEMM blocking, so coefficients may differ in the last bits")
    predict_parallelism = "internal"   # OpenMP on `threads`, chunked inside (base.py)
    parameters = TSGS3VM_PARAMETERS
    _auto_iterations, _auto_min_passes = TSGS3VM_AUTO_ITERATIONS, 1.0      # passes: None

    def _feature_dtype(self):
        return np.float32 if self.dtype == "float32" else np.float64

    def _init_model(self, X, seed):
        self.core_ = _tsgs3vm.TSGCore(
            n_dims=X.shape[1], block_size=int(self.block_size), kernel=self.kernel, gamma=self.gamma_,
            labeled_loss=code(self.loss_), unlabeled_loss=unlabeled_code(self.unlabeled_loss),
            C=float(self.C), C_unlabeled=self.C_unlabeled_, step=1.0 / float(self.eta), seed=seed,
            dtype=self.dtype, cache_features=bool(self.cache_features),
            threads=resolve_threads(self.threads), f_bound=divergence_bound(self._train_Y),
            offset=_tsgs3vm.OFFSETS[self.offset], positive_rate=self.positive_rate_,
            n_labeled=self.n_labeled_)

    def _train_steps(self, X, lab, unl):
        with blas_threads(1):   # the threads are OpenMP's
            status, steps = self.core_.train(X, self._train_Y, np.ascontiguousarray(lab, dtype=np.int64),
                                             unl, int(self.batch_size))
        if status == _tsgs3vm.DIVERGED:
            self.n_iter_ += steps
            self._check_status(True)
        return steps

    def _decision(self, X):
        with blas_threads(1):
            return self.core_.predict(as_dense(X, self._feature_dtype())).reshape(-1, 1)

    @property
    def offset_(self) -> float:
        """b in f = b + Σβ cos(·) (0 with offset none)."""
        return self.core_.bias

    def _offset_free_decision(self, X):
        b, self.core_.bias = self.core_.bias, 0.0
        try:
            with blas_threads(1):
                return self.core_.predict(as_dense(X, self._feature_dtype()))
        finally:
            self.core_.bias = b

    def _set_offset(self, b):
        self.core_.bias = b          # the next iteration solves its own b: training is unchanged

    @property
    def n_random_features_(self) -> int:
        return self.core_.n_random_features

    def model_bytes(self) -> int:
        return self.core_.model_bytes()

    def coef_norm_sq(self) -> float:
        """‖f‖² ≈ (F/2) Σ β_j² with blocks of F features (f = Σ θ_j √(2/F) cos(·), ‖θ‖² = ‖f‖²)."""
        return 0.5 * self.block_size * float(np.sum(self.core_.coef() ** 2))


# ---- FRS3VM -------------------------------------------------------------------------------------
class FRS3VMClassifier(_S3VMBase):
    """S3VM trained by SGD over a fixed set of D random Fourier features: f(x) = Σ_j β_j cos(ω_j·x + b_j),
    the same objective, batches and steps as TSGS3VM (the paper's FRS3VM baseline)."""

    determinism = "identical results for the same seed and thread count"
    predict_parallelism = "rows"       # GIL released, no shared scratch (NumPy, base.py)
    parameters = FRS3VM_PARAMETERS
    _auto_iterations, _auto_min_passes = FRS3VM_AUTO_ITERATIONS, 10.0      # passes: None (§6.1: 10)

    def _feature_dtype(self):
        return np.float32 if self.dtype == "float32" else np.float64

    def _init_model(self, X, seed):
        D = self.n_components if self.n_components is not None else math.ceil(math.sqrt(X.shape[0]))
        self.n_components_ = int(D)
        self.W_, self.b_ = feature_block(seed, 0, self.n_components_, X.shape[1], kernel=self.kernel,
                                         gamma=self.gamma_, dtype=self._feature_dtype())
        self.coef_ = np.zeros(self.n_components_)
        self.offset_ = 0.0

    def _features(self, X):
        return np.cos(X @ self.W_.T + self.b_)

    def _train_steps(self, X, lab, unl):
        """The iterations of TSGS3VM's core (_tsgs3vm.pyx) on the fixed features, offsets included."""
        step = 1.0 / float(self.eta)
        bu = int(self.batch_size)
        n_steps = lab.shape[0]
        f_bound = divergence_bound(self._train_Y)
        balanced = self.offset == "balanced"
        with blas_threads(resolve_threads(self.threads)):
            for t in range(n_steps):
                rows_l = lab[t]
                rows_u = unl[t * bu: (t + 1) * bu]
                Z = self._features(X[np.concatenate([rows_l, rows_u])])
                f = Z @ self.coef_
                nl = len(rows_l)
                if balanced and len(rows_u):                  # class balance on U_t (module doc)
                    self.offset_ = self._balance(f[nl:])
                if self.offset != "none":
                    f += self.offset_
                g = np.empty(len(f))
                g[:nl] = self.C / nl * loss_derivatives(self.loss_, f[:nl], self._train_Y[rows_l])
                if len(rows_u):
                    g[nl:] = (self.C_unlabeled_ / len(rows_u)) * unlabeled_loss_derivatives(self.unlabeled_loss, f[nl:])
                if not np.all(np.isfinite(f)) or np.max(np.abs(f)) > f_bound:
                    self.n_iter_ += t
                    self._check_status(True)
                if self.offset == "learned":                  # ∂R/∂b = Σ_i g_i, b unregularised
                    self.offset_ -= step * float(np.sum(g))
                # θ-coordinates f = θ·√(2/D) cos(·): θ ← (1−γ)θ − γ Σ g_i √(2/D) cos_i, i.e. in β = √(2/D) θ:
                self.coef_ *= 1.0 - step
                self.coef_ -= step * (2.0 / self.n_components_) * (g @ Z)
        return n_steps

    def _offset_free_decision(self, X):
        return self._features(X) @ self.coef_

    def _set_offset(self, b):
        self.offset_ = b


    def _decision(self, X):
        X = as_dense(X, self._feature_dtype())
        out = np.empty(X.shape[0])
        for start in range(0, X.shape[0], 8192):          # bounded memory for large test sets
            out[start: start + 8192] = self._features(X[start: start + 8192]) @ self.coef_
        out += self.offset_
        return out.reshape(-1, 1)

    @property
    def n_random_features_(self) -> int:
        return self.n_components_

    def model_bytes(self) -> int:
        return int(self.coef_.nbytes + self.W_.nbytes + self.b_.nbytes)

    def coef_norm_sq(self) -> float:
        return 0.5 * self.n_components_ * float(np.sum(self.coef_ ** 2))


register_algorithm(
    "tsgs3vm", classifier=TSGS3VMClassifier, tasks=("binary", "semi-supervised"),
    description="Triply stochastic gradient semi-supervised SVM (Geng et al. 2019, Alg. 1-2)",
    smoke_params={"batch_size": 32, "block_size": 8},
)

register_algorithm(
    "frs3vm", classifier=FRS3VMClassifier, tasks=("binary", "semi-supervised"),
    description="S3VM by SGD on a fixed random-feature set (Geng et al. 2019's FRS3VM baseline)",
    smoke_params={"batch_size": 32, "n_components": 32},
)

__all__ = ["TSGS3VMClassifier", "FRS3VMClassifier"]
