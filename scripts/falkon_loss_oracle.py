"""Would a logistic loss pay for Falkon? Logistic Falkon (Meanti et al. 2020) converges to regularised
logistic regression on the Nyström space of its M centres, Falkon to ridge regression on the same
space. Both optima are computed directly here, on the same features, so the difference in test error
is the loss's alone, with no optimiser in between (ΦΦᵀ is the Nyström kernel; both penalties are
rotation-invariant, so Φ's basis is immaterial):

    Φ = K(X, centres) U W^(-1/2)      (K_MM = U W Uᵀ; M uniform centres, the Falkon config's γ)
    squared:   min (1/n)‖Φβ − y‖² + λ‖β‖²                 (Falkon's J, λ = 1/(n·C))
    logistic:  min (1/n)Σ log(1 + exp(−y·Φβ)) + λ‖β‖²     (scikit-learn's C = 1/(2λn))

Each loss's λ is chosen on the training part's last 20 % (at most 200,000 rows), which the rest
trains; the test part is scored once, with the chosen λ. Falkon itself (the config's C, 20 CG
iterations) is fitted on the same rows beside them, as a check that it reaches the squared optimum.

    python scripts/falkon_loss_oracle.py configs/a9a_falkon_dai2014.yaml
    python scripts/falkon_loss_oracle.py configs/susy_falkon_gu2018.yaml --variant 3 --n 500000
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from threadpoolctl import threadpool_limits

from kernelbench.config import load_config
from kernelbench.experiment import prepare_experiment
from kernelbench.solvers.falkon import FalkonClassifier
from kernelbench.solvers.kernels import kernel_matrix, resolve_gamma

LAMBDAS = [10.0 ** e for e in range(-8, -2)]
MAX_VALIDATION_ROWS = 200_000


# the SUSY-shaped replica (kernelbench.data.synthetic) in place of the config's data file
REPLICA = {"dataset.name": "synthetic", "dataset.shape": "susy", "dataset.test": "official",
           "dataset.dtype": "float32"}


def nystrom_features(X, centres, gamma, whitening, block=50_000):
    """Φ = K(X, centres) U W^(-1/2), in row blocks, float32."""
    out = np.empty((X.shape[0], whitening.shape[1]), dtype=np.float32)
    for start in range(0, X.shape[0], block):
        out[start:start + block] = kernel_matrix(X[start:start + block], centres, gamma=gamma) @ whitening
    return out


def one_vs_all(y, classes):
    return np.where(y[:, None] == classes[None, :], 1.0, -1.0) if len(classes) > 2 else \
        np.where(y == classes[1], 1.0, -1.0)[:, None]


def decide(scores, classes):
    return classes[np.argmax(scores, axis=1)] if len(classes) > 2 else \
        np.where(scores[:, 0] > 0, classes[1], classes[0])


def error(pred, y) -> float:
    return 100.0 * float(np.mean(pred != y))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", type=Path, help="a falkon config (its data, scaling, γ, M, C)")
    ap.add_argument("--variant", type=int, default=None, help="train on the SUSY replica's variant instead")
    ap.add_argument("--n", type=int, default=None, help="training rows used (a prefix of the training part)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    # seed 0: the subsample (if any) drawn as every earlier run of this study drew it
    overrides = {"seed": 0, **(dict(REPLICA, **{"dataset.variant": args.variant}) if args.variant is not None else {})}
    config = load_config(args.config, overrides=overrides)
    params = config.algorithm.params

    with threadpool_limits(args.threads):
        data = prepare_experiment(config, progress=False).data
        X, X_test = (Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z) for Z in (data.X_train, data.X_test))
        y, y_test = np.asarray(data.y_train), np.asarray(data.y_test)
        if args.n:
            X, y = X[:args.n], y[:args.n]
        n_val = min(MAX_VALIDATION_ROWS, X.shape[0] // 5)
        X_fit, y_fit, X_val, y_val = X[:-n_val], y[:-n_val], X[-n_val:], y[-n_val:]
        n, classes = X_fit.shape[0], np.unique(y)
        gamma = resolve_gamma(params["gamma"], X_fit)
        M = min(int(params["n_centers"]), n)
        centres = X_fit[np.random.default_rng(0).choice(n, size=M, replace=False)]
        w, U = np.linalg.eigh(kernel_matrix(centres, centres, gamma=gamma))
        keep = w > w.max() * 1e-7                 # K_MM's numerically null directions carry nothing
        whitening = U[:, keep] / np.sqrt(w[keep])
        started = time.perf_counter()
        Phi, Phi_val, Phi_test = (nystrom_features(Z, centres, gamma, whitening) for Z in (X_fit, X_val, X_test))
        print(f"{args.config.stem}{f' on replica variant {args.variant}' if args.variant else ''}: fit {n:,}, "
              f"validate {n_val:,}, test {X_test.shape[0]:,} rows; γ {gamma:.4g}, M {M:,} "
              f"(rank {int(keep.sum())}); features {time.perf_counter() - started:.1f} s", flush=True)

        Y = one_vs_all(y_fit, classes)
        Phi_T = Phi.T.astype(np.float64)         # the normal equations in float64, Φᵀ converted once
        G, b = (Phi_T @ Phi) / n, (Phi_T @ Y) / n
        del Phi_T
        rows = []
        for lam in LAMBDAS:
            beta = np.linalg.solve(G + lam * np.eye(G.shape[0]), b)
            rows.append(("squared", lam, error(decide(Phi_val @ beta, classes), y_val),
                         error(decide(Phi_test @ beta, classes), y_test)))
        model = LogisticRegression(fit_intercept=False, tol=1e-8, max_iter=5000, warm_start=True)
        for lam in reversed(LAMBDAS):            # strong to weak regularisation, each warm-started
            started = time.perf_counter()
            model.set_params(C=1.0 / (2.0 * lam * n)).fit(Phi, y_fit)
            rows.append(("logistic", lam, error(model.predict(Phi_val), y_val),
                         error(model.predict(Phi_test), y_test), time.perf_counter() - started))
        for loss, lam, val, test, *seconds in rows:
            print(f"  {loss:8s} λ {lam:.0e}: validation {val:6.2f} %, test {test:6.2f} %"
                  + (f"  ({seconds[0]:.1f} s)" if seconds else ""), flush=True)

        falkon = FalkonClassifier(C=params["C"], gamma=gamma, n_centers=M, max_iter=20,
                                  threads=args.threads, random_state=0).fit(X_fit, y_fit)
        print(f"  falkon (C {params['C']}, λ {1 / (n * params['C']):.1e}, 20 iterations): "
              f"validation {error(falkon.predict(X_val), y_val):.2f} %, "
              f"test {error(falkon.predict(X_test), y_test):.2f} %")
        print("\n| loss | λ chosen on validation | validation error | test error |\n|---|---:|---:|---:|")
        for loss in ("squared", "logistic"):
            best = min((r for r in rows if r[0] == loss), key=lambda r: (r[2], -r[1]))
            print(f"| {loss} | {best[1]:.0e} | {best[2]:.2f} % | {best[3]:.2f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
