"""Slow, obvious NumPy references for the DSG family's re-use of old coordinates (Li & Póczos 2016,
Alg. 3–4) and for the softmax loss. Written from the paper; shares no code with _dsg.pyx: rule (9)
is solved here NUMERICALLY (scipy root finding on the inequality itself), not by a closed form.
"""
import numpy as np
from scipy.optimize import brentq, minimize_scalar

import reference

UDSG_STREAM = 0x5DEECE66D


def softmax_loss(F, Y):
    """log Σ_k e^{f_k} − y·f per row, the plain way (small inputs only)."""
    return np.log(np.sum(np.exp(F), axis=1)) - np.sum(Y * F, axis=1)


def softmax_gradient(F, Y):
    E = np.exp(F - F.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True) - Y


def rule9_slack(eta, beta, g, s2, gamma_t):
    """LHS − RHS of Li & Póczos (9): 2‖β + ηg‖² + 2η²s² − (‖β‖² + γ_t²‖g‖²); (9) holds iff ≤ 0."""
    beta, g = np.atleast_1d(beta), np.atleast_1d(g)
    return 2 * np.sum((beta + eta * g) ** 2) + 2 * eta**2 * s2 - (np.sum(beta**2) + gamma_t**2 * np.sum(g**2))


def rule9_step(beta, g, s2, gamma_t):
    """|η| of the most negative η < −γ_t satisfying (9), or 0 if none, by numeric root finding."""
    h = lambda eta: rule9_slack(eta, beta, g, s2, gamma_t)
    if not np.any(np.atleast_1d(g)) and s2 == 0:
        return 0.0
    best = minimize_scalar(h, bracket=(-1.0, 1.0)).x            # h is a convex quadratic in η
    if h(best) > 0:
        return 0.0                                              # (9) holds nowhere
    lo = best - 1.0
    while h(lo) <= 0:
        lo = best - 2 * (best - lo)
    eta = brentq(h, lo, best, xtol=1e-300, rtol=4 * np.finfo(float).eps)   # left end of {h ≤ 0}
    return -eta if eta < -gamma_t else 0.0


def udsg_block(seed, it, blocks):
    with np.errstate(over="ignore"):
        key = reference.splitmix64(reference.splitmix64(np.uint64(seed) ^ np.uint64(UDSG_STREAM)) + np.uint64(it))
    return int(key % np.uint64(blocks))


def dsg_family(X, Y, rows, *, mode, batch_size, block_size, kernel, gamma, loss, lam, step, t0, seed,
               new_iterations=1, old_iterations=1, max_step=1.0, variance=0.0, grad_bound=0.0):
    """DSG (Dai Alg. 1), UDSG (Li & Póczos Alg. 3) or CDSG (Alg. 4) with mini-batches, literally:
    a list of blocks [W, b, c (K × F), β (K)], f(x) = Σ_blocks c · cos(W x + b), every block's c
    and β multiplied by (1 − ηλ) each iteration. Y: (n, K) targets (±1 / real / one-hot)."""
    blocks = []
    K = Y.shape[1]
    M = grad_bound
    reused = 0

    def predict(Xq):
        f = np.zeros((len(Xq), K))
        for W, b, c, _ in blocks:
            f += np.cos(Xq @ W.T + b) @ c.T
        return f

    for t, start in enumerate(range(0, len(rows), batch_size), start=1):
        idx = rows[start:start + batch_size]
        xb, yb = X[idx], Y[idx]
        F = predict(xb)
        if loss == "softmax":
            G = softmax_gradient(F, yb)
        else:
            G = np.column_stack([reference.loss_derivative(loss, F[:, k], yb[:, k]) for k in range(K)])
        gbar = G.mean(axis=0)
        M = max(M, np.max(np.abs(G)))
        gamma_t = step / (t0 + t)
        choice, eta = None, gamma_t
        if mode == "udsg" and blocks and (t - 1) % (new_iterations + old_iterations) >= new_iterations:
            choice = udsg_block(seed, t - 1, len(blocks))
        elif mode == "cdsg" and blocks:
            s2 = K * M**2 * variance / len(idx) ** 2
            steps = [rule9_step(beta, gbar, s2, gamma_t) for _, _, _, beta in blocks]
            k = int(np.argmax(steps))
            if steps[k] > gamma_t:
                choice, eta = k, min(steps[k], max_step * gamma_t)
        for blk in blocks:
            blk[2] = (1 - eta * lam) * blk[2]
            blk[3] = (1 - eta * lam) * blk[3]
        kb = len(blocks) if choice is None else choice
        W, b = reference.feature_block(seed, kb, block_size, X.shape[1], kernel, gamma)
        Z = np.cos(xb @ W.T + b)
        delta = -eta * 2.0 / (len(idx) * block_size) * (G.T @ Z)
        if choice is None:
            blocks.append([W, b, delta, -eta * gbar])
        else:
            blocks[kb][2] = blocks[kb][2] + delta
            blocks[kb][3] = blocks[kb][3] - eta * gbar
            reused += 1
    return blocks, predict, reused


def polyak_average(X, Y, rows, *, average_from, batch_size, **kwargs):
    """Polyak–Ruppert average of the DSG-family iterates f_t for t > average_from, by definition:
    every iterate f_t is re-computed from scratch by `dsg_family` on the first t batches, and the
    coefficient vectors (zero-padded to the last iterate's features) are averaged. Returns the
    averaged coefficients (K × features) and f̄ as a function."""
    T = (len(rows) + batch_size - 1) // batch_size
    iterates = []
    for t in range(average_from + 1, T + 1):
        blocks, _, _ = dsg_family(X, Y, rows[:t * batch_size], batch_size=batch_size, **kwargs)
        iterates.append(np.concatenate([c for _, _, c, _ in blocks], axis=1))
    width = iterates[-1].shape[1]
    mean = np.mean([np.pad(c, ((0, 0), (0, width - c.shape[1]))) for c in iterates], axis=0)
    last_blocks, _, _ = dsg_family(X, Y, rows, batch_size=batch_size, **kwargs)

    def predict(Xq):
        Z = np.concatenate([np.cos(Xq @ W.T + b) for W, b, _, _ in last_blocks], axis=1)
        return Z @ mean.T

    return mean, predict
