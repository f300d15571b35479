"""Slow, obvious NumPy references for the semi-supervised solvers (Geng et al., IJCAI 2019).

Written from the paper only (Alg. 1–2, update (7), Table 2); shares no code with the compiled
core except the documented seeded feature generator, re-implemented in tests/reference.py.
"""
import math

import numpy as np

import reference

RAMP_S = -0.3


def unlabeled_loss(name, r):
    """u(r) of Table 2 (ramp: the symmetric ramp R_s(r) + R_s(-r), R_s = H_1 - H_s)."""
    r = np.asarray(r, dtype=float)
    if name == "shg":
        return np.maximum(0.0, 1.0 - np.abs(r))
    if name == "sshg":
        return 0.5 * np.maximum(0.0, 1.0 - np.abs(r)) ** 2
    if name == "ramp":
        def ramp(z):
            return np.maximum(0.0, 1.0 - z) - np.maximum(0.0, RAMP_S - z)
        return ramp(r) + ramp(-r)
    if name == "da":
        return np.exp(-5.0 * r ** 2)
    raise ValueError(name)


def unlabeled_derivative(name, r):
    """u'(r) of Table 2, away from the kinks (0 at r = 0 by symmetry)."""
    r = np.asarray(r, dtype=float)
    inside = np.abs(r) < 1.0
    if name == "shg":
        return np.where(inside, -np.sign(r), 0.0)
    if name == "sshg":
        return np.where(inside, -np.sign(r) * (1.0 - np.abs(r)), 0.0)
    if name == "ramp":
        def d_ramp(z):
            return np.where((z > RAMP_S) & (z < 1.0), -1.0, 0.0)
        return d_ramp(r) - d_ramp(-r)
    if name == "da":
        return -10.0 * r * np.exp(-5.0 * r ** 2)
    raise ValueError(name)


def hinge_derivative(f, y):
    return np.where(y * f < 1.0, -y, 0.0)


def tsgs3vm(X, y, lab_idx, unl_idx, unl_batch, *, block_size, kernel, gamma, C, C_unlabeled, step,
            seed, unlabeled_loss_name, offset="none", offsets=None):
    """Alg. 1 with mini-batches: iteration t uses labeled rows lab_idx[t] and unlabeled rows
    unl_idx[t·B:(t+1)·B]. φ_ω(x) = √2 cos(ω·x + b), F features per iteration, and
    ζ = Σ_i g_i · (1/F) Σ_j φ_j(x_i) φ_j(·) with g = C/|L_t| ℓ' (labeled), C*/|U_t| u' (unlabeled);
    f ← (1 − γ) f − γ ζ. offset (ours, not the paper's): "learned" adds b updated by b ← b − γ Σ g;
    "balanced" sets b each iteration by balanced_offset on U_t (the share of positive outputs
    within two standard errors of the labeled rows' share).
    Returns the coefficients α of every φ_j (in order), a predictor and the final b; `offsets`, a
    list, receives the b of every iteration."""
    blocks = []          # (W, b, alpha)
    state = {"b": 0.0}
    labeled = np.unique(lab_idx)
    positive_rate, n_labeled = float(np.mean(y[labeled] > 0)), len(labeled)

    def predict(Z, with_offset=True):
        out = np.full(Z.shape[0], state["b"] if with_offset else 0.0)
        for W, b, alpha in blocks:
            out += (np.sqrt(2.0) * np.cos(Z @ W.T + b)) @ alpha
        return out

    d = X.shape[1]
    for t in range(lab_idx.shape[0]):
        rows_l = lab_idx[t]
        rows_u = unl_idx[t * unl_batch:(t + 1) * unl_batch]
        fl, fu = predict(X[rows_l], False), predict(X[rows_u], False)   # lines 5–6
        if offset == "balanced" and len(rows_u):
            state["b"] = balanced_offset(fu, positive_rate, balance_tolerance(positive_rate, n_labeled, len(fu)))
        if offsets is not None:
            offsets.append(state["b"])
        fl, fu = fl + state["b"], fu + state["b"]
        g = np.concatenate([C / len(rows_l) * hinge_derivative(fl, y[rows_l]),
                            (C_unlabeled / len(rows_u) if len(rows_u) else 0.0)
                            * unlabeled_derivative(unlabeled_loss_name, fu)])
        if offset == "learned":
            state["b"] -= step * np.sum(g)
        W, b = reference.feature_block(seed, t, block_size, d, kernel=kernel, gamma=gamma)  # line 4
        phi = np.sqrt(2.0) * np.cos(X[np.concatenate([rows_l, rows_u])] @ W.T + b)
        blocks = [(Wo, bo, (1.0 - step) * ao) for Wo, bo, ao in blocks]                      # line 8
        blocks.append((W, b, -step * (phi.T @ g) / block_size))                              # line 7
    coef = np.concatenate([a for _, _, a in blocks]) if blocks else np.zeros(0)
    return coef, predict, state["b"]


def balance_tolerance(p, n_labeled, n_unlabeled):
    """Two standard errors of the difference of two independent positive rates, both p, measured
    on n_labeled and n_unlabeled rows."""
    return 2.0 * np.sqrt(p * (1.0 - p) * (1.0 / n_labeled + 1.0 / n_unlabeled))


def balanced_offset(h, p, tol):
    """The class-balance offset, written from its definition: b = 0 if the share of h > 0 is in
    [p − tol, p + tol]; else, with k the nearer admissible count of positives, every threshold b
    giving exactly k positives (h + b > 0) is in (−h_(k), −h_(k+1)], h_(j) the j-th largest
    (h_(0) = h_(1) + 2, h_(n+1) = h_(n) − 2), and b is its midpoint; when no count fits in the
    band, k is the first count past its end on the side the share must move to. The order
    statistics are found by counting, not by sorting."""
    h = np.asarray(h, dtype=float)
    n = len(h)
    positives = np.sum(h > 0)
    admissible = [k for k in range(n + 1) if (p - tol) * n - 1e-9 <= k <= (p + tol) * n + 1e-9]
    if positives in admissible:
        return 0.0
    if admissible:
        k = min(admissible, key=lambda k: abs(k - positives))
    else:                          # no count fits (a narrow band between two integers): the one
        k = math.ceil((p - tol) * n - 1e-9) if positives < (p - tol) * n else math.floor((p + tol) * n + 1e-9)
        k = min(max(k, 0), n)      # on the side the share must move to
    # the k-th and (k+1)-th largest by counting: h_i is the j-th largest when j-1 values exceed it
    def jth_largest(j):
        if j == 0:
            return h.max() + 2.0
        if j == n + 1:
            return h.min() - 2.0
        return next(v for v in h if np.sum(h > v) <= j - 1 < np.sum(h >= v))
    return -0.5 * (jth_largest(k) + jth_largest(k + 1))
