"""Settings checked on the held-out SUSY replica (docs/guide/full-scale.md). Every choice here is made on
the training part: its last 200,000 rows validate, the rest (or a prefix of it) trains; the test
part is printed beside the validation error, never chosen on.

    python scripts/heldout_replica.py falkon-grid --variant 2 --n 500000 --centres 1024
    python scripts/heldout_replica.py dsg-gamma --variant 2 --gamma median scale 0.05
    python scripts/heldout_replica.py dsg-passes --variant 2 --n 1000000 --gamma 0.05 --passes 1 2 4
    python scripts/heldout_replica.py linear --variant 3 [--shape higgs]

falkon-grid: Falkon's validation error over γ × λ (10 CG iterations) on the first n training rows.
dsg-gamma:   DSG with susy_dsg_gu2018's settings but γ, on all training rows but the validating ones.
dsg-passes:  the same DSG (one γ) on the first n rows for 1, 2, ... passes, and Falkon (M = 2,048,
             20 iterations, λ = 10⁻⁶) on those rows: optimisation error against approximation error.
linear:      a linear classifier (scikit-learn's LogisticRegression, its defaults) on the standardised
             features: how much of a replica's problem needs no kernel at all.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from kernelbench.config import config_from_dict, load_config
from kernelbench.data.synthetic import VARIANTS
from kernelbench.experiment import prepare_experiment
from kernelbench.solvers.dsg import DSGClassifier
from kernelbench.solvers.falkon import FalkonClassifier

REPO = Path(__file__).resolve().parents[1]
VALIDATION_ROWS = 200_000
DSG_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "susy_dsg_gu2018.yaml"


def dsg(gamma, passes: int, threads: int):
    params = {**load_config(DSG_CONFIG).algorithm.params, "passes": passes, "threads": threads, "random_state": 0,
              "gamma": gamma if gamma in ("median", "scale") else float(gamma)}
    return DSGClassifier(**params)


def falkon(gamma, lam: float, centres: int, iterations: int, n: int, threads: int):
    return FalkonClassifier(C=1 / (lam * n), gamma=float(gamma), n_centers=centres, max_iter=iterations,
                            threads=threads, random_state=0)


def timed_fit(model, X, y):
    started = time.perf_counter()
    return model.fit(X, y), time.perf_counter() - started


def error(model, X, y) -> str:
    return f"{100 * np.mean(model.predict(X) != y):.2f} %"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("falkon-grid", "dsg-gamma", "dsg-passes", "linear"))
    ap.add_argument("--shape", default="susy", choices=("susy", "higgs"))
    ap.add_argument("--variant", type=int, default=2, choices=VARIANTS)
    ap.add_argument("--n", type=int, default=None, help="training rows used (a prefix; default: all but the validating)")
    ap.add_argument("--centres", type=int, default=1024)
    ap.add_argument("--gamma", nargs="+", default=["0.0125", "0.025", "0.05", "0.1", "0.2"])
    ap.add_argument("--lambdas", nargs="+", type=float, default=[1e-7, 1e-6, 1e-5])
    ap.add_argument("--passes", nargs="+", type=int, default=[1, 2, 4])
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)

    replica = {"name": "synthetic", "shape": args.shape, "variant": args.variant, "dtype": "float32",
               "scale": "standard"}
    data = prepare_experiment(config_from_dict({"dataset": replica, "algorithm": {"name": "dsg"}}),
                              progress=False).data
    X, y = data.X_train, data.y_train
    Xv, yv = X[-VALIDATION_ROWS:], y[-VALIDATION_ROWS:]
    n = min(args.n or X.shape[0] - VALIDATION_ROWS, X.shape[0] - VALIDATION_ROWS)
    Xf, yf = X[:n], y[:n]
    print(f"{args.shape} variant {args.variant}: training on {n:,} rows, validating on the last {VALIDATION_ROWS:,} "
          f"training rows", flush=True)
    if args.what == "linear":
        model, seconds = timed_fit(LogisticRegression(), Xf, yf)
        print(f"linear logistic regression: {seconds:.1f} s, validation {error(model, Xv, yv)}, "
              f"test {error(model, data.X_test, data.y_test)}", flush=True)
    elif args.what == "falkon-grid":
        for gamma in args.gamma:
            for lam in args.lambdas:
                model, seconds = timed_fit(falkon(gamma, lam, args.centres, 10, n, args.threads), Xf, yf)
                print(f"falkon M {args.centres} γ {gamma} λ {lam:g}: validation {error(model, Xv, yv)} "
                      f"({seconds:.1f} s)", flush=True)
    elif args.what == "dsg-gamma":
        for gamma in args.gamma:
            model, seconds = timed_fit(dsg(gamma, 1, args.threads), Xf, yf)
            print(f"dsg γ {gamma}: {seconds:.0f} s, validation {error(model, Xv, yv)}, "
                  f"test {error(model, data.X_test, data.y_test)}", flush=True)
    else:
        for gamma in args.gamma:
            for passes in args.passes:
                model, seconds = timed_fit(dsg(gamma, passes, args.threads), Xf, yf)
                print(f"dsg γ {gamma}, {passes} pass(es): {seconds:.1f} s, validation {error(model, Xv, yv)}",
                      flush=True)
            model, seconds = timed_fit(falkon(gamma, 1e-6, 2048, 20, n, args.threads), Xf, yf)
            print(f"falkon γ {gamma}, M 2048, 20 iterations: {seconds:.1f} s, validation {error(model, Xv, yv)}",
                  flush=True)


if __name__ == "__main__":
    main()
