"""Slow, obvious NumPy references the compiled solvers must agree with (DESIGN.md §6).

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
