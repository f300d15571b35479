"""Every loss of kernelbench, once: the table every solver, baseline, test and script uses.

Two concepts, two tables:

* `LOSSES` — the loss ℓ(f, y) of a labeled point: its code in the compiled solvers (_losses.pxd),
  its curvature sup|ℓ''| (σ-free; step rules use it, e.g. AsyDSSKL's L_max = curvature · max φ²,
  Gu et al. 2018 eq. (8), and SVRG-RF's L), the tasks it serves and its formula. Classification
  labels are y ∈ {−1, +1}; softmax takes K scores per row and one-hot Y.
* `UNLABELED_LOSSES` — the loss u(r) of an unlabeled point of an S3VM (Geng et al. 2019, Table 2),
  r = f(x): small when |f(x)| is large, which pushes the boundary away from dense unlabeled regions.

`loss_values(name, F, Y, sigma)` / `loss_derivatives(...)` and `unlabeled_loss_values(name, R)` /
`unlabeled_loss_derivatives(...)` evaluate any entry over arrays (compiled loops; softmax in NumPy).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kernelbench.solvers import _losses

BINARY, MULTICLASS, REGRESSION = "binary", "multiclass", "regression"


@dataclass(frozen=True)
class Loss:
    name: str
    code: int            # the _losses.pxd enum value the compiled solvers take
    curvature: float     # sup |ℓ''(f)| over f (σ-free); softmax: the largest eigenvalue of ∇²ℓ
    tasks: tuple         # the tasks whose targets it is defined for
    formula: str
    convex: bool = True


def _table(*entries: Loss) -> dict:
    return {e.name: e for e in entries}


LOSSES = _table(
    Loss("hinge", _losses.CODES["hinge"], float("inf"), (BINARY,), "max(0, 1 − y f)  (SVM; not smooth)"),
    Loss("logistic", _losses.CODES["logistic"], 0.25, (BINARY,), "log(1 + exp(−y f))"),
    Loss("smooth_hinge", _losses.CODES["smooth_hinge"], 1.0, (BINARY,),
         "0 if yf ≥ 1; ½ − yf if yf ≤ 0; (1 − yf)²/2 else  (Shalev-Shwartz & Zhang 2013, smoothing 1)"),
    # squared serves ±1 labels too (least-squares classification) and is ridge regression's loss
    Loss("squared", _losses.CODES["squared"], 1.0, (BINARY, REGRESSION), "(f − y)²/2"),
    # ∇²(logsumexp) = diag(p) − ppᵀ has eigenvalues ≤ ½ (Böhning's bound)
    Loss("softmax", _losses.CODES["softmax"], 0.5, (BINARY, MULTICLASS),
         "log Σ_k exp(f_k) − y·f  (K scores, y one-hot; multi-class logistic)"),
    # Gu et al. 2018, Table 1: the non-convex ones (σ is the correntropy width)
    Loss("correntropy", _losses.CODES["correntropy"], 2.0, (REGRESSION,),
         "σ² (1 − exp(−(f − y)²/σ²))  (Feng et al. 2015)", convex=False),
    # ℓ'' = s(1 − s)(1 − 2s) with s = σ(−yf): its largest |value| is 1/(6√3) ≈ 0.0962 ≤ 0.1
    Loss("sigmoid", _losses.CODES["sigmoid"], 0.1, (BINARY,), "1 / (1 + exp(y f))  (Lin 2004)", convex=False),
)

# all non-convex in r (small when |r| is large); curvature inf = kinked (no sup |u''|)
_SEMI = ("semi-supervised",)
UNLABELED_LOSSES = _table(
    Loss("shg", _losses.UNLABELED_CODES["shg"], float("inf"), _SEMI,
         "max(0, 1 − |r|)  (symmetric hinge; the paper's default)", convex=False),
    Loss("sshg", _losses.UNLABELED_CODES["sshg"], float("inf"), _SEMI, "max(0, 1 − |r|)² / 2  (square of shg)",
         convex=False),
    Loss("ramp", _losses.UNLABELED_CODES["ramp"], float("inf"), _SEMI,
         "R_s(r) + R_s(−r), R_s(z) = max(0, 1 − z) − max(0, s − z), s = −0.3  (Collobert et al. 2006)",
         convex=False),
    # u'' = (100 r² − 10) e^{−5r²}: largest |value| 10, at r = 0
    Loss("da", _losses.UNLABELED_CODES["da"], 10.0, _SEMI, "exp(−5 r²)  (differentiable approximation of sshg)",
         convex=False),
)


def losses_for(*tasks: str, convex: bool = False, smooth: bool = False, one_score: bool = False) -> tuple:
    """Names of the losses serving any of `tasks`, in table order. convex: convex ones only (what
    the SGD/dual solvers' guarantees assume); smooth: finite curvature only (what SVRG's and
    AsyDSSKL's step rules need); one_score: one score f per row (not softmax's K)."""
    return tuple(name for name, e in LOSSES.items()
                 if set(tasks) & set(e.tasks) and (e.convex or not convex)
                 and (np.isfinite(e.curvature) or not smooth) and (name != "softmax" or not one_score))


def code(name: str) -> int:
    """The compiled code of a loss."""
    return _entry(name, LOSSES, "loss").code


def curvature(name: str) -> float:
    return _entry(name, LOSSES, "loss").curvature


def _entry(name, table, what):
    try:
        return table[name]
    except KeyError:
        raise ValueError(f"{what} must be one of {sorted(table)}, got {name!r}") from None


def _check_sigma(sigma):
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma!r}")
    return float(sigma)


def loss_values(name, F, Y, sigma=1.0):
    """ℓ(f_i, y_i) per row. Scalar losses: F, Y of n values (any shape with n entries); softmax:
    F the (n, K) scores, Y the (n, K) one-hot rows. σ: the correntropy width (others ignore it)."""
    entry = _entry(name, LOSSES, "loss")
    if name == "softmax":
        F = np.asarray(F, dtype=np.float64)
        top = F.max(axis=1, keepdims=True)          # log Σ e^{f_k} computed stably
        return (top[:, 0] + np.log(np.exp(F - top).sum(axis=1))) - np.sum(np.asarray(Y) * F, axis=1)
    return _losses.elementwise(entry.code, F, Y, _check_sigma(sigma), False)


def loss_derivatives(name, F, Y, sigma=1.0):
    """∂ℓ/∂f per row (a subgradient at kinks); softmax: the (n, K) rows softmax(f) − y."""
    entry = _entry(name, LOSSES, "loss")
    if name == "softmax":
        F = np.asarray(F, dtype=np.float64)
        P = np.exp(F - F.max(axis=1, keepdims=True))
        return P / P.sum(axis=1, keepdims=True) - np.asarray(Y)
    return _losses.elementwise(entry.code, F, Y, _check_sigma(sigma), True)


def unlabeled_code(name: str) -> int:
    return _entry(name, UNLABELED_LOSSES, "unlabeled loss").code


def unlabeled_loss_values(name, R):
    """u(r_i) for an array r."""
    return _losses.unlabeled_elementwise(unlabeled_code(name), R, False)


def unlabeled_loss_derivatives(name, R):
    """A subgradient u'(r_i) (0 at the kinks' r = 0)."""
    return _losses.unlabeled_elementwise(unlabeled_code(name), R, True)
