"""Transductive SVMs built on LIBSVM (scikit-learn's SVC): the O(n²) semi-supervised baselines of
Geng et al. (IJCAI 2019) — "S3VMlight" (Joachims 1999, label switching) and "BLS3VM" (the CCCP
TSVM of Collobert, Sinz, Weston & Bottou, JMLR 2006).

Both minimise the S3VM objective with C in LIBSVM's sum form,

    ½‖w‖² + C Σ_L H1(y f(x)) + C* Σ_U u(f(x)),   C* = C·n_l/n_u by default (Geng et al. §6.1),

through a sequence of weighted SVC problems on labeled + (self-)labeled unlabeled points; each
outer iteration is one `run` step, and the estimator reports `converged_` when its procedure ends.

tsvm-ls  Joachims 1999, Fig. 2: SVC on L; label the n_+ = round(n_u · p_L) unlabeled points of
         largest f positive (p_L: the positive share of L — the balancing constraint, which holds
         exactly throughout); then for C*_− = 1e-5, C*_+ = 1e-5 · n_+/n_−, doubling up to C*: solve
         the weighted SVC, and while a pair (m, l) of opposite assigned labels has ξ_m > 0, ξ_l > 0,
         ξ_m + ξ_l > 2, switch both labels and re-solve. We switch all such pairs at once (greedily
         pairing the largest slacks of each side), as SVMlight does in practice, rather than one per
         re-solve; `max_switch_rounds` bounds the re-solves per C* level. Joachims' loop exits
         once the doubling reaches C* (its output is the labeling of U); we also run that last level
         at C* itself, so the inductive model is the SVM at the target C*.
tsvm-cccp Collobert et al. 2006, Alg. 2: each unlabeled x is present twice, (x, +1) and (x, −1),
         under the ramp loss R_s = H1 − H_s (s = −0.3); CCCP linearises −H_s: β = C* for a copy with
         y f(x) < s, and solves the convex problem. For |f(x)| ≤ |s| no copy has β: both copies
         enter as ordinary hinge points (their sum is flat on |f| ≤ 1). For f(x) > |s| the (x, −1)
         copy has β: its hinge plus the linear term is C*·max(0, −1 − f) + const, active only if f
         crosses below −1 — we drop that part (an SVC has no margin −1), so the copy (x, +1) alone
         remains, and symmetrically for f < −|s|. `dropped_active` counts the points where the
         dropped part would be non-zero at the new solution (0 means the step was exact). The
         balancing constraint (1/U) Σ_U f(x) = (1/L) Σ_L y (their eq. (6)) is enforced by shifting
         b after each solve (`balance: mean`); the default `balance: sign` shifts b instead so that
         the share of U with f > 0 is the labeled positive share (see TSVMCCCP._balance for why).
         Iterations stop when β (the partition of U) no longer changes.

No unlabeled rows (y without NaN): both procedures start from the SVM on L, and with U empty there
is nothing to label, switch or balance, so that SVM is the model: SVC with C on the labeled rows,
the objective's unlabeled sum empty (C* = 0), one run step, with a UserWarning.

Scale: every step is a LIBSVM solve on up to n_l + 2·n_u points; they are O(n²) in time, and
begin() refuses problems above `max_points` (n_l + n_u) with BudgetExceededError, which the experiment loop
turns into a clean "skipped" row.
"""
from __future__ import annotations

import numpy as np
from sklearn.svm import SVC
from sklearn.utils.validation import validate_data

from kernelbench.params import (CACHE_MB, GAMMA, NONE, POSITIVE, RANDOM_STATE, TOL, C, Choice, Integer,
                                declare, param)
from kernelbench.algorithms import register_algorithm
from kernelbench.solvers.base import (BinaryClassifierMixin, BudgetExceededError, Solver, as_dense,
                                      not_offered)
from kernelbench.semisupervised import encode_semi_supervised, warn_no_unlabeled_rows
from kernelbench.solvers.kernels import rkhs_norm_sq
from kernelbench.solvers.kernels import resolve_gamma

C_UNLABELED_START = 1e-5        # Joachims 1999, Fig. 2: C*_− starts at 10⁻⁵
RAMP_S = -0.3                   # Collobert et al. 2006 §5: s = −0.3


TSVM_PARAMETERS = declare(
    C=C.but(doc="LIBSVM's C for the labeled points"),
    # > 0: C* is the unlabeled points' SVC sample weight, and LIBSVM drops zero-weight points
    # (C* = 0 would be SVC on the labeled points alone)
    C_unlabeled=param(None, "C* for each unlabeled point; null = C·n_l/n_u (Geng et al. §6.1)",
                      POSITIVE, NONE),
    gamma=GAMMA,
    tol=TOL.but(doc="LIBSVM's stopping tolerance ε"),
    cache_mb=CACHE_MB.but(default=500.0, doc="LIBSVM's kernel cache in MB"),
    max_points=param(10000, "refuse (a 'skipped' row) problems with more than this many labeled + "
                            "unlabeled points: every step is an O(n²) LIBSVM solve", Integer(1)),
    max_iter=param(30, "most outer iterations (C* levels for tsvm-ls, CCCP steps for tsvm-cccp)",
                   Integer(1)))


class _TransductiveSVC(BinaryClassifierMixin, Solver):
    """Shared set-up of the SVC-based TSVMs: input, budget check, weighted solves."""
    predicts_before_training = False          # no model until the first SVC solve
    predict_parallelism = "rows"       # GIL released, no shared scratch (LIBSVM's predict, base.py)
    _training_only = ("_labeled", "_unlabeled", "_X_l", "_X_u", "_Y_l")
    name = "tsvm"

    def _feature_dtype(self):
        return np.float64

    @property
    def steps_per_pass(self) -> int:
        return int(self.max_iter)

    def begin(self, X, y, *, classes=None):
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True)
        self._check_params()
        Y, labeled, unlabeled = encode_semi_supervised(self, X, y, fitting=True)
        n_l, n_u = len(labeled), len(unlabeled)
        if n_u == 0:
            warn_no_unlabeled_rows(self)
        if n_l + n_u > self.max_points:
            raise BudgetExceededError(
                f"{self.name}: {n_l + n_u:,} points ({n_l:,} labeled + {n_u:,} unlabeled) exceed "
                f"max_points = {self.max_points:,}; each of its LIBSVM solves is O(n²) in time (and "
                f"its kernel rows in memory), so it would not finish in the time budget here. Raise "
                "algorithm.params.max_points to try anyway, or subsample the unlabeled data")
        X = as_dense(X, np.float64)
        self._X_l, self._X_u, self._Y_l = X[labeled], X[unlabeled], Y[labeled]
        self._labeled, self._unlabeled = labeled, unlabeled
        self.n_labeled_, self.n_unlabeled_ = n_l, n_u
        if self.C_unlabeled is None:            # Geng et al. §6.1: C* = C·n_l/n_u; no unlabeled term without U
            self.C_unlabeled_ = self.C * n_l / n_u if n_u else 0.0
        else:                                   # no unlabeled rows: no unlabeled term, whatever C* says
            self.C_unlabeled_ = float(self.C_unlabeled) if n_u else 0.0
        self.gamma_ = resolve_gamma(self.gamma, X, kernel="rbf", seed=0)
        self.n_iter_ = 0
        self.samples_seen_ = 0
        self.n_solves_ = 0
        self.converged_ = False
        self.bias_shift_ = 0.0
        return self

    def _solve(self, X, Y, weights):
        """One weighted LIBSVM solve (C_i = weights[i]); the model is kept."""
        self.svc_ = SVC(C=1.0, kernel="rbf", gamma=self.gamma_, tol=self.tol, cache_size=self.cache_mb)
        self.svc_.fit(X, Y, sample_weight=weights)
        self.n_solves_ += 1
        self.samples_seen_ += X.shape[0]

    def _f(self, X):
        return self.svc_.decision_function(X) + self.bias_shift_

    def _decision(self, X):
        return self._f(as_dense(X, np.float64)).reshape(-1, 1)

    def run(self, n_steps: int) -> int:
        done = 0
        while done < n_steps and not self.converged_:
            if self.n_unlabeled_:
                self._outer_step()
            else:                       # no unlabeled rows: the first step's SVM on L is the model
                self._solve(self._X_l, self._Y_l, np.full(self.n_labeled_, self.C))
                self.converged_ = True
            self.n_iter_ += 1
            done += 1
            if self.n_iter_ >= self.max_iter:
                self.converged_ = True
        return done

    partial_fit = not_offered("a transductive SVM labels one fixed unlabeled set; fit on all rows at once")

    def record(self) -> dict:
        return {**super().record(), "n_support_vectors": self.n_support_vectors_}

    @property
    def n_support_vectors_(self) -> int:
        return int(self.svc_.n_support_.sum()) if hasattr(self, "svc_") else 0

    # Geng et al.'s S3VM objective ½‖w‖² + C Σ_L hinge + C* Σ_U symmetric hinge, for comparison across
    # methods (neither procedure minimises exactly this: label switching uses its assigned labels,
    # CCCP the ramp loss on both copies), divided by C·n_l (objectives.py): mean labeled hinge +
    # (C* n_u/(C n_l)) · mean unlabeled symmetric hinge + ‖w‖²/(2 C n_l), training n_l, n_u
    loss_ = "hinge"           # the labeled loss, fixed

    def penalty(self) -> float:
        norm_sq = rkhs_norm_sq(self.svc_.support_vectors_, self.svc_.dual_coef_.ravel(), self.gamma_)
        return 0.5 * norm_sq / (self.C * self.n_labeled_)

    def unlabeled_term(self):
        return "shg", self.C_unlabeled_ * self.n_unlabeled_ / (self.C * self.n_labeled_)

class TSVMLabelSwitching(_TransductiveSVC):
    """Joachims' TSVM (Fig. 2 of Joachims 1999). One run step = one C* level."""
    name = "tsvm-ls"
    _training_only = _TransductiveSVC._training_only + ("_Y_u",)
    parameters = declare(
        TSVM_PARAMETERS,
        max_switch_rounds=param(20, "most re-solves after label switches per C* level", Integer(0)),
        random_state=RANDOM_STATE)

    def begin(self, X, y, *, classes=None):
        super().begin(X, y, classes=classes)
        # the balancing constraint: n_+ unlabeled points positive, the labeled positive share
        self.n_positive_ = int(round(self.n_unlabeled_ * np.mean(self._Y_l > 0)))
        self.n_switches_ = 0
        self._Cu = None
        return self

    def _weighted(self):
        X = np.vstack([self._X_l, self._X_u])
        Y = np.concatenate([self._Y_l, self._Y_u])
        w = np.concatenate([np.full(self.n_labeled_, self.C),
                            np.where(self._Y_u > 0, self._Cu[1], self._Cu[0])])
        return X, Y, w

    def _outer_step(self):
        if self._Cu is None:                                   # steps 1–2: SVC on L, then label U
            self._solve(self._X_l, self._Y_l, np.full(self.n_labeled_, self.C))
            f = self._f(self._X_u)
            self._Y_u = -np.ones(self.n_unlabeled_)
            self._Y_u[np.argsort(-f, kind="stable")[:self.n_positive_]] = 1.0
            n_neg = self.n_unlabeled_ - self.n_positive_
            self._Cu = [C_UNLABELED_START,
                        C_UNLABELED_START * self.n_positive_ / max(n_neg, 1)]   # [C*_−, C*_+]
            return
        X, Y, w = self._weighted()
        self._solve(X, Y, w)
        for _ in range(self.max_switch_rounds):               # the label-switching loop
            xi = np.maximum(0.0, 1.0 - self._Y_u * self._f(self._X_u))
            pos = np.flatnonzero((self._Y_u > 0) & (xi > 0))
            neg = np.flatnonzero((self._Y_u < 0) & (xi > 0))
            pos = pos[np.argsort(-xi[pos], kind="stable")]
            neg = neg[np.argsort(-xi[neg], kind="stable")]
            k = min(len(pos), len(neg))
            ok = xi[pos[:k]] + xi[neg[:k]] > 2.0               # pairs sorted: a prefix satisfies it
            k = int(np.argmin(ok)) if not ok.all() else k
            if k == 0:
                break
            self._Y_u[pos[:k]] = -1.0
            self._Y_u[neg[:k]] = 1.0
            self.n_switches_ += k
            X, Y, w = self._weighted()
            self._solve(X, Y, w)
        if self._Cu[0] >= self.C_unlabeled_ and self._Cu[1] >= self.C_unlabeled_:
            self.converged_ = True                             # the last level was C* itself
        self._Cu = [min(2 * self._Cu[0], self.C_unlabeled_), min(2 * self._Cu[1], self.C_unlabeled_)]

    def counters(self) -> dict:
        return {"svc_solves": int(self.n_solves_), "label_switches": int(getattr(self, "n_switches_", 0)),
                "unlabeled_positive": int(np.sum(self._Y_u > 0)) if hasattr(self, "_Y_u") else 0}


class TSVMCCCP(_TransductiveSVC):
    """Collobert et al.'s CCCP-TSVM (Alg. 2). One run step = one CCCP iteration."""
    name = "tsvm-cccp"
    _training_only = _TransductiveSVC._training_only + ("_state",)
    parameters = declare(
        TSVM_PARAMETERS,
        balance=param("sign", "balancing constraint, enforced by shifting b after each solve: sign (the "
                              "share of U with f > 0 is the labeled positive share, as tsvm-ls) or mean "
                              "(Collobert et al. eq. (6): mean f over U = mean y over L)",
                      Choice("sign", "mean")),
        random_state=RANDOM_STATE)

    def begin(self, X, y, *, classes=None):
        super().begin(X, y, classes=classes)
        self.balance_target_ = float(np.mean(self._Y_l))        # (1/L) Σ_L y, eq. (6)
        self.n_positive_ = int(round(self.n_unlabeled_ * np.mean(self._Y_l > 0)))
        self._state = None
        self.dropped_active_ = 0
        return self

    def _balance(self):
        """Shift b to meet the balancing constraint on U. "mean": eq. (6) exactly. "sign": the
        n_+ = round(n_u p_L) largest outputs positive, b halfway between the n_+-th and the next —
        the post-hoc mean shift alone let CCCP drift on unbalanced sets (ijcnn1: 9.5% positive,
        7.6% → 35% test error in 8 steps), since a few large |f| move the mean, not the signs."""
        self.bias_shift_ = 0.0
        f = self._f(self._X_u)
        if self.balance == "mean":
            self.bias_shift_ = self.balance_target_ - float(np.mean(f))
            return
        order = np.sort(f)[::-1]
        k = self.n_positive_
        upper = order[k - 1] if k > 0 else order[0] + 1.0
        lower = order[k] if k < order.size else order[-1] - 1.0
        self.bias_shift_ = -0.5 * (upper + lower)

    def _outer_step(self):
        if self._state is None:                                 # θ⁰: SVM on L (balanced)
            self._solve(self._X_l, self._Y_l, np.full(self.n_labeled_, self.C))
            self._balance()
        else:
            state = self._state
            pos, neg, both = state == 1, state == -1, state == 0
            X = np.vstack([self._X_l, self._X_u[pos], self._X_u[neg], self._X_u[both], self._X_u[both]])
            n_b = int(both.sum())
            Y = np.concatenate([self._Y_l, np.ones(pos.sum()), -np.ones(neg.sum()), np.ones(n_b), -np.ones(n_b)])
            w = np.concatenate([np.full(self.n_labeled_, self.C), np.full(X.shape[0] - self.n_labeled_,
                                                                           self.C_unlabeled_)])
            self._solve(X, Y, w)
            self._balance()
            f = self._f(self._X_u)
            # the dropped part C*·max(0, −1 − y f) of the β copies, active at the new solution?
            self.dropped_active_ = int(np.sum((pos & (f < -1)) | (neg & (f > 1))))
        f = self._f(self._X_u)
        # β of the copies: (x, −1) has β iff f > −s, (x, +1) iff f < s (Alg. 2)
        state = np.where(f > -RAMP_S, 1, np.where(f < RAMP_S, -1, 0))
        if self._state is not None and np.array_equal(state, self._state):
            self.converged_ = True                              # β^{t+1} = β^t
        self._state = state

    def counters(self) -> dict:
        state = getattr(self, "_state", None)
        return {"svc_solves": int(self.n_solves_),
                "unlabeled_uncertain": int(np.sum(state == 0)) if state is not None else 0,
                "dropped_active": int(self.dropped_active_),
                "unlabeled_positive": int(np.sum(self._f(self._X_u) > 0))
                if hasattr(self, "_X_u") and len(self._X_u) and hasattr(self, "svc_") else 0}


register_algorithm(
    "tsvm-ls", classifier=TSVMLabelSwitching, tasks=("binary", "semi-supervised"),
    description="Transductive SVM by label switching (Joachims 1999, S3VMlight-style) on LIBSVM; O(n²)",
    smoke_params={"max_iter": 3, "max_switch_rounds": 2},
)

register_algorithm(
    "tsvm-cccp", classifier=TSVMCCCP, tasks=("binary", "semi-supervised"),
    description="CCCP transductive SVM, ramp loss + balancing (Collobert et al. 2006, BLS3VM) on LIBSVM; O(n²)",
    smoke_params={"max_iter": 3},
)
