"""Slow, obvious NumPy references for AsyGCD (tests/solvers/test_asygcd.py): sequential greedy coordinate
descent on the no-bias kernel SVM dual, and the dual solved by scipy's L-BFGS-B (exact for the box
constraints of the no-bias problem)."""
import numpy as np
from scipy.optimize import minimize
from sklearn.metrics.pairwise import rbf_kernel


def q_matrix(X, y, gamma, *, float32=False):
    """Q_ij = y_i y_j exp(-γ‖x_i − x_j‖²); float32=True rounds it as the solver's row cache does."""
    Q = y[:, None] * y[None, :] * rbf_kernel(X, gamma=gamma)
    return Q.astype(np.float32).astype(np.float64) if float32 else Q


def projected_gradient(alpha, g, C):
    return np.where(alpha <= 0, np.minimum(g, 0.0), np.where(alpha >= C, np.maximum(g, 0.0), g))


def greedy_cd(Q, C, steps, tol=0.0):
    """One thread of AsyGCD, spelled out: pick i = argmax |projected gradient| (first on ties),
    minimise D exactly along i within [0, C], update g = Qα − e by δ·Q[i]. Returns the trace
    [(i, alpha, g)] after each update (stops early when every |projected gradient| ≤ tol)."""
    n = Q.shape[0]
    alpha, g = np.zeros(n), -np.ones(n)
    trace = []
    for _ in range(steps):
        v = np.abs(projected_gradient(alpha, g, C))
        if v.max() <= tol:
            break
        i = int(np.argmax(v))
        new = min(max(alpha[i] - g[i] / Q[i, i], 0.0), C)
        delta = new - alpha[i]
        alpha[i] = new
        g = g + delta * Q[i]
        trace.append((i, alpha.copy(), g.copy()))
    return trace


def dual_objective(Q, alpha):
    return 0.5 * alpha @ Q @ alpha - alpha.sum()


def box_qp(Q, C):
    """argmin ½αᵀQα − eᵀα over 0 ≤ α ≤ C by L-BFGS-B (bounds handled exactly), tight tolerances."""
    n = Q.shape[0]
    res = minimize(lambda a: (dual_objective(Q, a), Q @ a - 1.0), np.zeros(n), jac=True,
                   method="L-BFGS-B", bounds=[(0.0, C)] * n,
                   options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 100000, "maxfun": 100000})
    return res.x
