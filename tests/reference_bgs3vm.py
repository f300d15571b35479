"""Slow, obvious NumPy references for BGS3VM (kernelbench/solvers/_bgs3vm.pyx).

`bgs3vm` is the algorithm literally: two Python lists of [α, x] support vectors, every α multiplied
by (1 − λη_t) each step, f by explicit kernel sums, κ of a merge evaluated directly. Slot
convention (part of the algorithm's determinism, as BSGD's): a new SV is appended; a merge puts z
in the partner's place and moves the last SV into x_min's place; ties in |α| (relative 1e-12) go
to the lowest slot.

`kernel_sgd_s3vm` is the unbudgeted functional SGD written another way: f_t = Σ_s β_s k(x_s, ·)
over all steps' samples, whole Gram matrices from scikit-learn, β_s shrunk in one vector product.
"""
import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

import reference


def _table_lookup(H, W):
    from scipy.interpolate import RegularGridInterpolator

    grid = np.linspace(0.0, 1.0, H.shape[0])
    h_table, wd_table = RegularGridInterpolator((grid, grid), H), RegularGridInterpolator((grid, grid), W)

    def h_of(m, k):
        return float(h_table([[m, k]])[0]) if m <= 0.5 else 1.0 - float(h_table([[1 - m, k]])[0])

    def wd_of(m, k):                               # normalised WD, symmetric in m ↔ 1 − m
        return float(wd_table([[min(m, 1 - m), k]])[0])

    return h_of, wd_of


def merge_pool(svs, *, gamma, merge, tables=None):
    """Glasmachers & Qaadan Alg. 1 on a list of [α, x]: merge the SV of minimal |α| into the
    same-sign partner of least weight degradation (or remove it). Returns the WD."""
    alphas = np.abs([a for a, _ in svs])
    imin = int(np.flatnonzero(alphas <= alphas.min() * (1 + 1e-12))[0])
    ai, xi = svs[imin]
    candidates = []
    for j, (aj, xj) in enumerate(svs):
        if j != imin and aj * ai > 0 and merge != "removal":
            m, k = min(ai / (ai + aj), 0.5), reference.rbf(xi, xj, gamma)
            if merge in ("lookup-h", "lookup-wd"):
                h = tables[0](m, k)
            else:
                h = reference.merge_h(m, k, 0.01 if merge == "gss" else 1e-10)
            az = ai * k ** ((1 - h) ** 2) + aj * k ** (h ** 2)
            wd = ai ** 2 + aj ** 2 - az ** 2 + 2 * ai * aj * k
            key = (ai + aj) ** 2 * tables[1](m, k) if merge == "lookup-wd" else wd
            candidates.append((key, j, h, az, wd))
    if candidates:
        _, j, h, az, wd = min(candidates, key=lambda c: c[0])        # first on ties
        svs[j] = [az, h * xi + (1 - h) * svs[j][1]]
    else:
        wd = ai ** 2
    last = svs.pop()
    if imin < len(svs):
        svs[imin] = last
    return wd


def bgs3vm(X, y, lab_rows, unl_rows, *, budget_labeled, budget_unlabeled, gamma, lam,
           unlabeled_weight, merge, H=None, W=None):
    """Returns (labeled svs, unlabeled svs, wds) after one step per (lab_rows[t], unl_rows[t])."""
    tables = _table_lookup(H, W) if H is not None else None
    L, U, wds = [], [], []

    def f(x):
        return sum(a * reference.rbf(sv, x, gamma) for a, sv in L + U)

    for t, (il, iu) in enumerate(zip(lab_rows, unl_rows), start=1):
        fl, fu = f(X[il]), f(X[iu])
        eta = 1.0 / (lam * t)
        for sv in L + U:
            sv[0] *= 1.0 - lam * eta
        if y[il] * fl < 1:
            L.append([eta * y[il], np.array(X[il], dtype=float)])
            if len(L) > budget_labeled:
                wds.append(merge_pool(L, gamma=gamma, merge=merge, tables=tables))
        if fu != 0 and abs(fu) < 1:
            U.append([eta * unlabeled_weight * np.sign(fu), np.array(X[iu], dtype=float)])
            if len(U) > budget_unlabeled:
                wds.append(merge_pool(U, gamma=gamma, merge=merge, tables=tables))
    return L, U, wds


def kernel_sgd_s3vm(X, y, lab_rows, unl_rows, *, gamma, lam, unlabeled_weight):
    """Unbudgeted kernel SGD on λ/2‖f‖² + mean hinge(L) + μ mean symmetric hinge(U): returns
    (points, β) with f = Σ β_s k(points_s, ·)."""
    T = len(lab_rows)
    P = np.vstack([X[lab_rows], X[unl_rows]])            # step t's samples: rows t and T + t
    K = rbf_kernel(P, P, gamma=gamma)
    beta = np.zeros(2 * T)
    for t in range(1, T + 1):
        s_l, s_u = t - 1, T + t - 1
        fl, fu = K[s_l] @ beta, K[s_u] @ beta
        eta = 1.0 / (lam * t)
        beta *= 1.0 - 1.0 / t
        yl = y[lab_rows[t - 1]]
        if yl * fl < 1:
            beta[s_l] = eta * yl
        if fu != 0 and abs(fu) < 1:
            beta[s_u] = eta * unlabeled_weight * np.sign(fu)
    return P, beta


def semi_supervised_moons(n, *, labeled_per_class=4, seed=0, n_test=2000):
    """Two moons (the classes are the moons: the independent truth of the S3VM tests), with
    labeled_per_class labels per moon and NaN elsewhere: (X, y with NaN, labeled rows, true y,
    X_test, y_test)."""
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.1, random_state=seed)
    Xt, yt = make_moons(n_test, noise=0.1, random_state=seed + 100)
    rng = np.random.default_rng(seed)
    lab = np.concatenate([rng.choice(np.flatnonzero(y == c), labeled_per_class, replace=False) for c in (0, 1)])
    ys = np.full(n, np.nan)
    ys[lab] = y[lab]
    return X, ys, lab, y, Xt, yt
