"""Slow, obvious NumPy references the compiled solvers must agree with.

Written from the papers and the documented conventions only — they share no code with the
compiled cores (the seeded generator is re-implemented here from its spec in
kernelbench/solvers/_random_features.pxd).
"""
import numpy as np

MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x):
    x = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def uniform01(key, counters):
    with np.errstate(over="ignore"):
        h = splitmix64(np.uint64(key) ^ (np.asarray(counters, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)))
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53


def feature_block(seed, block, n_features, d, kernel="rbf", gamma=1.0, scalar_libm=False):
    """ω (n_features × d) and phases b of block `block`, from the documented counter scheme.

    scalar_libm=True evaluates log/cos/tan with Python's `math` (the C library's scalar libm, as
    the compiled generator does) instead of NumPy's SIMD ufuncs, which may differ by an ulp: with
    it the result is bit-for-bit what a correct compiled generator must produce."""
    if scalar_libm:
        return _feature_block_scalar(seed, block, n_features, d, kernel, gamma)
    with np.errstate(over="ignore"):
        key = splitmix64(splitmix64(np.uint64(seed)) + np.uint64(block))
    j = np.arange(n_features, dtype=np.uint64)[:, None]
    k = np.arange(d, dtype=np.uint64)[None, :]
    base = j * np.uint64(2 * d + 1)
    u1 = uniform01(key, base + np.uint64(2) * k)
    if kernel == "laplacian":
        W = gamma * np.tan(np.pi * (u1 - 0.5))
    else:
        u2 = uniform01(key, base + np.uint64(2) * k + np.uint64(1))
        W = np.sqrt(2 * gamma) * np.sqrt(-2 * np.log(u1)) * np.cos(2 * np.pi * u2)
    b = 2 * np.pi * uniform01(key, base[:, 0] + np.uint64(2 * d))
    return W, b


def _counters(seed, block, n_features, d):
    with np.errstate(over="ignore"):
        key = splitmix64(splitmix64(np.uint64(seed)) + np.uint64(block))
    j = np.arange(n_features, dtype=np.uint64)[:, None]
    k = np.arange(d, dtype=np.uint64)[None, :]
    return key, j * np.uint64(2 * d + 1), k


def _feature_block_scalar(seed, block, n_features, d, kernel, gamma):
    import math
    key, base, k = _counters(seed, block, n_features, d)
    u1 = uniform01(key, base + np.uint64(2) * k)
    if kernel == "laplacian":
        W = np.array([[gamma * math.tan(math.pi * (u - 0.5)) for u in row] for row in u1])
    else:
        u2 = uniform01(key, base + np.uint64(2) * k + np.uint64(1))
        W = np.array([[math.sqrt(2 * gamma) * math.sqrt(-2 * math.log(a)) * math.cos(2 * math.pi * c)
                       for a, c in zip(r1, r2)] for r1, r2 in zip(u1, u2)])
    W = W.reshape(n_features, d)
    b = 2 * math.pi * uniform01(key, base[:, 0] + np.uint64(2 * d))
    return W, b


def loss_derivative(loss, f, y):
    m = y * f
    if loss == "hinge":
        return np.where(m < 1, -y, 0.0)
    if loss == "logistic":
        return -y / (1 + np.exp(m))
    if loss == "squared":
        return f - y
    if loss == "smooth_hinge":
        return np.where(m >= 1, 0.0, np.where(m <= 0, -y, -y * (1 - m)))
    raise ValueError(loss)


def dsg(X, y, rows, *, batch_size, block_size, kernel, gamma, loss, lam, step, t0, seed):
    """Dai et al. Alg. 1 with mini-batches, literally: one list of (ω, b, α) per block, every old
    α multiplied by (1 − γ_t λ) each iteration, f evaluated by Alg. 2 (sum over all blocks)."""
    blocks = []                        # [W, b, alpha] per block, f(x) = Σ alpha·√2 cos(Wx + b)

    def predict(Xq):
        f = np.zeros(len(Xq))
        for W, b, alpha in blocks:
            f += (np.sqrt(2) * np.cos(Xq @ W.T + b)) @ alpha
        return f

    for t, start in enumerate(range(0, len(rows), batch_size), start=1):
        idx = rows[start:start + batch_size]
        xb, yb = X[idx], y[idx]
        g = loss_derivative(loss, predict(xb), yb)          # ℓ'(f(x_i), y_i)
        gamma_t = step / (t0 + t)
        for blk in blocks:                                  # Alg. 1 line 6
            blk[2] = (1 - gamma_t * lam) * blk[2]
        W, b = feature_block(seed, t - 1, block_size, X.shape[1], kernel, gamma)
        phi = np.sqrt(2) * np.cos(xb @ W.T + b)             # φ_ω(x_i), b × F
        alpha = -gamma_t * (g @ phi) / (len(idx) * block_size)   # Alg. 1 line 5, averaged
        blocks.append([W, b, alpha])
    return blocks, predict


# ---------------------------------------------------------------------------------------------
# BSGD with budget maintenance by merging (Glasmachers & Qaadan, Alg. 1; Wang et al. 2012)
# ---------------------------------------------------------------------------------------------

GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


def merge_profile(m, kappa, h):
    """s_{m,κ}(h) = m κ^{(1−h)²} + (1 − m) κ^{h²} (Alg. 1 line 8)."""
    return m * kappa ** ((1.0 - h) ** 2) + (1.0 - m) * kappa ** (h ** 2)


def golden_section_max(f, lo, hi, eps):
    """argmax of a unimodal f on [lo, hi] by golden section search, bracket width eps; ties
    keep the lower part."""
    c, d = hi - GOLDEN * (hi - lo), lo + GOLDEN * (hi - lo)
    fc, fd = f(c), f(d)
    while hi - lo > eps:
        if fc >= fd:
            hi, d, fd = d, c, fc
            c = hi - GOLDEN * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + GOLDEN * (hi - lo)
            fd = f(d)
    return 0.5 * (lo + hi)


def merge_h(m, kappa, eps):
    """h(m, κ): the global maximiser of s lies in [0, 1/2] for m ≤ 1/2 (s(h) − s(1−h) =
    (2m−1)(κ^{(1−h)²} − κ^{h²})); m > 1/2 by the symmetry h(m) = 1 − h(1 − m)."""
    if m <= 0.5:
        return golden_section_max(lambda h: merge_profile(m, kappa, h), 0.0, 0.5, eps)
    return 1.0 - merge_h(1.0 - m, kappa, eps)


def rbf(x, z, gamma):
    return float(np.exp(-gamma * np.sum((np.asarray(x) - np.asarray(z)) ** 2)))


def bsgd(X, y, rows, *, budget, gamma, lam, merge, bias=False, H=None, W=None):
    """BSGD literally: a list of [α, x] support vectors, every α multiplied by (1 − λη_t) each
    step, f by explicit kernel sums, κ = k(x_min, x_j) evaluated directly.
    Slot convention (shared with the compiled core, part of the algorithm's determinism): a new SV
    is appended; a merge puts z in the partner's place and moves the last SV into x_min's place.
    Ties in |α| (equal to relative 1e-12) go to the lowest slot. Returns (svs, bias, wds)."""
    from scipy.interpolate import RegularGridInterpolator

    if H is not None:
        grid = np.linspace(0.0, 1.0, H.shape[0])
        h_table = RegularGridInterpolator((grid, grid), H)
        wd_table = RegularGridInterpolator((grid, grid), W)

        def lookup_h(m, k):
            return float(h_table([[m, k]])[0]) if m <= 0.5 else 1.0 - float(h_table([[1 - m, k]])[0])

    svs, b, wds = [], 0.0, []
    for t, i in enumerate(rows, start=1):
        x, yi = X[i], y[i]
        f = sum(alpha * rbf(sv, x, gamma) for alpha, sv in svs) + b
        eta = 1.0 / (lam * t)
        for sv in svs:
            sv[0] *= 1.0 - lam * eta
        if yi * f < 1:
            svs.append([eta * yi, np.array(x, dtype=float)])
            if bias:
                b += eta * yi
        if len(svs) <= budget:
            continue
        absa = np.abs([alpha for alpha, _ in svs])
        imin = int(np.flatnonzero(absa <= absa.min() * (1 + 1e-12))[0])
        ai, xi = svs[imin]
        best = None
        for j, (aj, xj) in enumerate(svs):
            if j == imin or aj * ai <= 0 or merge == "removal":
                continue
            m, k = min(ai / (ai + aj), 0.5), rbf(xi, xj, gamma)      # |α_i| minimal: m ≤ 1/2
            if merge == "lookup-wd":
                wd_sel = (ai + aj) ** 2 * float(wd_table([[min(m, 1 - m), k]])[0])   # WD(m) = WD(1−m)
                h = lookup_h(m, k)
            else:
                h = lookup_h(m, k) if merge == "lookup-h" else merge_h(m, k, 0.01 if merge == "gss" else 1e-10)
            az = ai * k ** ((1 - h) ** 2) + aj * k ** (h ** 2)           # Alg. 1 line 9
            wd = ai ** 2 + aj ** 2 - az ** 2 + 2 * ai * aj * k          # line 10
            if merge != "lookup-wd":
                wd_sel = wd
            if best is None or wd_sel < best[0]:
                best = (wd_sel, j, h, az, wd)
        if best is None:                                              # removal
            wds.append(ai ** 2)
        else:
            _, j, h, az, wd = best
            svs[j] = [az, h * xi + (1 - h) * svs[j][1]]                # line 14–16
            wds.append(wd)
        last = svs.pop()
        if imin < len(svs):
            svs[imin] = last
    return svs, b, wds
