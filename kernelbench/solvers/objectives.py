"""The regularised objective of any model on any data, and the divergence rules: one place each.

One normalisation for every estimator — the labeled loss enters as its mean, with weight 1:

    R(f) = mean_{(x,y)∈L} ℓ(f(x), y)  +  w_U · mean_{x∈U} u(f(x))  +  Ω(f)

L: the rows with a label; U: the rows whose label is NaN (semi-supervised models only; the NaN
contract of kernelbench/semisupervised.py). Each model supplies only what is its own:

* its loss ℓ: `loss_` (the loss it trains with, 'auto' resolved) and, where it has one, `sigma`
  (correntropy width); the table is kernelbench/solvers/losses.py;
* its penalty Ω(f) = `penalty()`, in its own coordinates: λ/2‖f‖² (λ = 1/(n·C)) for the kernel and
  random-feature models, λ‖w‖₁ for AsyDSSKL (Gu et al. 2018, problem (4));
* semi-supervised models: `unlabeled_term()` = (u's name in UNLABELED_LOSSES, w_U).

The supervised objectives were already in this form (mean loss + λ/2‖f‖², DSG's). The S3VMs state
theirs as ½‖f‖² + C·(labeled part) + C*·(unlabeled part), in mean form (TSGS3VM, FRS3VM) or in
LIBSVM's sum form (BGS3VM, the TSVMs); each is divided here by its labeled weight — C for the mean
form (w_U = C*/C, Ω = ‖f‖²/(2C)), C·n_l for the sum form (w_U = C*·n_u/(C·n_l), Ω = λ/2‖f‖² with
λ = 1/(n_l·C)), n_l and n_u of the training set. A positive rescaling: the minimiser is unchanged,
and every objective column reads "mean labeled loss + …".
"""
from __future__ import annotations

import numpy as np

from kernelbench.semisupervised import unlabeled_mask
from kernelbench.solvers.losses import loss_values, unlabeled_loss_values

# |f(x)| > DIVERGENCE_FACTOR · max(1, max|y|) counts as an exploding iterate: the compiled loops
# stop with a "diverged" status (their `f_bound`, from divergence_bound). Scaled by the targets so
# that regression on large y is not flagged; far above any f a converging run produces.
DIVERGENCE_FACTOR = 1e8

# A second, different rule, for solvers that see the objective but not f at their checkpoints
# (AsyDSSKL: its snapshot's full gradient returns P(w), Alg. 2 line 4): P(w) > OBJECTIVE_GROWTH_FACTOR
# · max(1, P(0)) counts as divergence. A converging run never raises P above its start P(0) by much;
# 1e4 leaves room for the noisy first outer loops of a large step, yet stops a blow-up within a few
# snapshots (tests/solvers/test_asydsskl.py).
OBJECTIVE_GROWTH_FACTOR = 1e4


def divergence_bound(Y) -> float:
    """The `f_bound` of a compiled loop: DIVERGENCE_FACTOR · max(1, max|y|) over the known targets
    (NaN = unlabeled rows are ignored; one-hot rows give max|y| = 1)."""
    Y = np.asarray(Y, dtype=np.float64)
    return DIVERGENCE_FACTOR * max(1.0, float(np.max(np.abs(Y[np.isfinite(Y)]), initial=0.0)))


def objective_exploded(value: float, initial: float) -> bool:
    """OBJECTIVE_GROWTH_FACTOR's rule: True if `value` is NaN or beyond the factor times max(1, `initial`)."""
    return not value <= OBJECTIVE_GROWTH_FACTOR * max(1.0, initial)


def regularised_objective(model, X, y) -> float:
    """R(f) of a fitted `model` on (X, y) in the normalisation of this module's docstring."""
    F = model._raw_decision(X)                           # (n, K): K = 1, or softmax's scores
    y = np.asarray(y)
    unlabeled_term = model.unlabeled_term()
    if unlabeled_term is None:
        unknown = np.zeros(len(y), dtype=bool)
    else:
        y = y.ravel() if y.dtype.kind in "OUS" else y.astype(np.float64).ravel()
        unknown = unlabeled_mask(y)
    value = 0.0
    if (~unknown).any():
        known = slice(None) if not unknown.any() else ~unknown
        Y = model._encode_targets(y[known], fitting=False)
        value = np.mean(loss_values(model.loss_, F[known], Y, float(getattr(model, "sigma", 1.0))))
    if unknown.any():
        name, weight = unlabeled_term
        value = value + weight * np.mean(unlabeled_loss_values(name, F[unknown]))
    return float(value + model.penalty())
