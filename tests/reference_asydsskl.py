"""Slow, obvious NumPy reference of AsyDSSKL (Gu et al. 2018, Algorithms 1 and 2) with one thread.

Written from the paper and the documented random streams only (kernelbench/solvers/_asydsskl.pyx
docstrings): no code shared with the compiled core. The random features come from
tests/reference.py (its own splitmix64 re-implementation of the seeded generator).
"""
import numpy as np

from reference import feature_block, splitmix64

DRAW_MULT = np.uint64(0xD1B54A32D192ED03)
STREAM_STRIDE = 2**32
STEP_CHUNK = 512          # inner steps per random stream (chunk c of outer loop s: its own stream)


def draw(key, counter):
    """The counter-th 64-bit number of the stream `key`: splitmix64(key ^ counter·MULT)."""
    with np.errstate(over="ignore"):
        return int(splitmix64(np.uint64(key) ^ (np.uint64(counter) * DRAW_MULT)))


def stream_key(rng_seed, outer_index, chunk=0):
    """block_key(rng_seed, outer_index·2³² + chunk) of _random_features.pxd."""
    with np.errstate(over="ignore"):
        return int(splitmix64(splitmix64(np.uint64(rng_seed)) + np.uint64(outer_index * STREAM_STRIDE + chunk)))


def soft_threshold(u, t):
    """prox of t|·|: argmin_x ½(x − u)² + t|x|."""
    return np.sign(u) * max(abs(u) - t, 0.0)


# Table 1 losses (square as ½(f − y)², our convention) and their derivatives in f.
def loss_value(name, f, y, sigma=1.0):
    f, y = np.asarray(f, float), np.asarray(y, float)
    if name == "squared":
        return 0.5 * (f - y) ** 2
    if name == "logistic":
        return np.logaddexp(0.0, -y * f)
    if name == "smooth_hinge":
        m = y * f
        return np.where(m >= 1, 0.0, np.where(m <= 0, 0.5 - m, 0.5 * (1 - m) ** 2))
    if name == "correntropy":
        return sigma ** 2 * (1.0 - np.exp(-(y - f) ** 2 / sigma ** 2))
    if name == "sigmoid":
        return 1.0 / (1.0 + np.exp(y * f))
    raise ValueError(name)


def loss_derivative(name, f, y, sigma=1.0):
    f, y = np.asarray(f, float), np.asarray(y, float)
    m = y * f
    if name == "squared":
        return f - y
    if name == "logistic":
        return -y / (1.0 + np.exp(m))
    if name == "smooth_hinge":
        return np.where(m >= 1, 0.0, np.where(m <= 0, -y, -y * (1 - m)))
    if name == "correntropy":
        return 2.0 * (f - y) * np.exp(-(f - y) ** 2 / sigma ** 2)
    if name == "sigmoid":
        s = 1.0 / (1.0 + np.exp(m))
        return -y * s * (1.0 - s)
    raise ValueError(name)


def objective(Phi, y, w, lam, loss, sigma=1.0):
    """Problem (4): mean loss + λ‖w‖₁."""
    return float(np.mean(loss_value(loss, Phi @ w, y, sigma)) + lam * np.abs(w).sum())


def outer_loop(Phi, y, w, *, loss, sigma, lam, eta, batch, steps, rng_seed, outer_index):
    """Alg. 2, one s, one thread: snapshot full gradient, then `steps` inner steps (each: j and a
    batch drawn from the documented stream, variance-reduced coordinate gradient, prox step)."""
    n, a = Phi.shape
    w = np.array(w, dtype=float)
    d_snap = loss_derivative(loss, Phi @ w, y, sigma)             # line 4
    g_snap = Phi.T @ d_snap / n
    for step in range(steps):
        key = stream_key(rng_seed, outer_index, step // STEP_CHUNK)
        t = step % STEP_CHUNK                                       # counter within the chunk
        c = t * (batch + 1)
        j = draw(key, c) % a                                        # line 8
        rows = np.array([draw(key, c + 1 + b) % n for b in range(batch)])   # line 7
        d_now = loss_derivative(loss, Phi[rows] @ w, y[rows], sigma)
        v = np.mean((d_now - d_snap[rows]) * Phi[rows, j]) + g_snap[j]      # line 9
        w[j] = soft_threshold(w[j] - eta * v, eta * lam)            # line 10
    return w


def features(X, seed, block, count, kernel, gamma):
    """ω, b of `count` features of `block`, and Φ = √2 cos(X ωᵀ + b) (float64)."""
    W, b = feature_block(seed, block, count, X.shape[1], kernel=kernel, gamma=gamma)
    return W, b, np.sqrt(2.0) * np.cos(X @ W.T + b)
