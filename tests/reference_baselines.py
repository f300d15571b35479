"""Slow, obvious NumPy references of the Dai et al. / Li & Póczos baselines: NORMA, k-SDCA,
mini-batch Pegasos and SVRG, written from the papers (Kivinen et al. 2004; Shalev-Shwartz &
Zhang 2013; Shalev-Shwartz et al. 2007; Johnson & Zhang 2013). They share no code with the
compiled cores: per-sample Python loops, explicit lists, the exact kernel by its definition."""
import numpy as np

from reference import loss_derivative


def rbf(a, b, gamma):
    return float(np.exp(-gamma * np.sum((np.asarray(a) - np.asarray(b)) ** 2)))


def norma(X, y, rows, *, batch_size, gamma, loss, lam, step, t0, budget=0):
    """f_{t+1} = (1 − γ_t λ) f_t − γ_t/b Σ ℓ'(f_t(x_i), y_i) k(x_i, ·), keeping the last `budget`
    terms (0 = all). Returns the expansion as a list of (x, coefficient), oldest first."""
    terms = []                                     # [x, c]: f(x') = Σ c k(x, x')

    def f(x):
        return sum(c * rbf(s, x, gamma) for s, c in terms)

    for t, start in enumerate(range(0, len(rows), batch_size), start=1):
        idx = rows[start:start + batch_size]
        g = [float(loss_derivative(loss, np.array(f(X[i])), np.array(y[i]))) for i in idx]
        gamma_t = step / (t0 + t)
        for term in terms:
            term[1] *= 1.0 - gamma_t * lam
        for i, gi in zip(idx, g):
            if gi != 0.0:
                terms.append([X[i].copy(), -gamma_t * gi / len(idx)])
        if budget:
            terms = terms[-budget:]
    return terms


def sdca(X, y, rows, *, gamma, loss, lam):
    """Plain SDCA with the kernel: visit the coordinates in `rows` order, each maximising the dual
    in closed form. Returns α (f = 1/(λn) Σ α_i k(x_i, ·))."""
    n = len(X)
    K = np.array([[rbf(a, b, gamma) for b in X] for a in X])
    alpha = np.zeros(n)
    for i in rows:
        f = K[i] @ alpha / (lam * n)
        q = K[i, i] / (lam * n)
        if loss == "hinge":
            a = alpha[i] * y[i]
            alpha[i] = y[i] * min(1.0, max(0.0, a + (1 - y[i] * f) / q))
        elif loss == "smooth_hinge":
            a = alpha[i] * y[i]
            alpha[i] = y[i] * min(1.0, max(0.0, a + (1 - y[i] * f - a) / (q + 1)))
        else:
            alpha[i] += (y[i] - f - alpha[i]) / (1 + q)
    return alpha


def pegasos(Z, y, rows, *, batch_size, lam, loss, projection):
    """Mini-batch Pegasos on fixed features, one sample at a time inside each batch."""
    w = np.zeros(Z.shape[1])
    for t, start in enumerate(range(0, len(rows), batch_size), start=1):
        idx = rows[start:start + batch_size]
        eta = 1.0 / (lam * t)
        grad = np.zeros_like(w)
        for i in idx:
            grad += float(loss_derivative(loss, np.array(Z[i] @ w), np.array(y[i]))) * Z[i]
        w = (1 - eta * lam) * w - eta / len(idx) * grad
        if projection and loss == "hinge":
            w = w * min(1.0, (1 / np.sqrt(lam)) / max(np.linalg.norm(w), 1e-300))
    return w


def svrg(Z, y, batches, *, epoch_length, eta, reg, loss):
    """SVRG (option I) on R(β) = mean ℓ(z_i·β, y_i) + reg/2 ‖β‖², one step per batch (a list of
    index arrays), a snapshot every `epoch_length` steps."""
    n, D = Z.shape
    beta = np.zeros(D)
    snap_g = mu = None
    for t, idx in enumerate(batches):
        if t % epoch_length == 0:
            snap_g = np.array([float(loss_derivative(loss, np.array(Z[i] @ beta), np.array(y[i])))
                               for i in range(n)])
            mu = sum(snap_g[i] * Z[i] for i in range(n)) / n
        step = mu + reg * beta
        for i in idx:
            gi = float(loss_derivative(loss, np.array(Z[i] @ beta), np.array(y[i])))
            step = step + (gi - snap_g[i]) * Z[i] / len(idx)
        beta = beta - eta * step
    return beta


def sdca_linear(Z, y, rows, *, loss, lam):
    """Plain SDCA on fixed features: w = 1/(λn) Σ α_i z_i, coordinates visited in `rows` order."""
    n = len(Z)
    alpha = np.zeros(n)
    for i in rows:
        w = Z.T @ alpha / (lam * n)
        f = Z[i] @ w
        q = Z[i] @ Z[i] / (lam * n)
        a = alpha[i] * y[i]
        if loss == "hinge":
            alpha[i] = y[i] * min(1.0, max(0.0, a + (1 - y[i] * f) / q))
        else:
            alpha[i] = y[i] * min(1.0, max(0.0, a + (1 - y[i] * f - a) / (q + 1)))
    return alpha
