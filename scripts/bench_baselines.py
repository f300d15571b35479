"""`make bench`: the Dai et al. / Li & Póczos baselines, timed on this machine in one run.

On a9a (from the mirror/cache; the 20k covtype subset with --dataset covtype_subset20k):
  - NORMA and k-SDCA: one pass (hinge, median γ, C = 1, B = 64): training seconds, support vectors,
    and the throughput of their compiled kernel expansion (kernel values per second when
    predicting the test set) next to scikit-learn's rbf_kernel(X, S) @ c on the same data;
  - SVRG-RF (256 features, smooth hinge): seconds per epoch (snapshot + ⌈n/B⌉ steps) next to the
    same epoch written with NumPy mini-batch operations;
  - r-/n-Pegasos, r-/n-SDCA: one pass (feature map excluded, as Dai et al. exclude it).
Timings are best of --repeat, single-threaded BLAS. Nothing here is a pass/fail test.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_limits

from kernelbench.baselines.random_features import PegasosClassifier, SDCAFeaturesClassifier
from kernelbench.config import StopConfig, config_from_dict
from kernelbench.experiment import prepare_experiment, trace
from kernelbench.solvers.base import as_dense
from kernelbench.solvers.ksdca import KSDCAClassifier
from kernelbench.solvers.norma import NormaClassifier
from kernelbench.solvers.svrg_rf import SVRGRFClassifier


def best_of(repeat, fn):
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - started)
    return min(times), out


def one_pass(est, X, y):
    """(seconds of one pass, set-up excluded, est): the experiment loop's timing less begin (for the
    feature-map baselines begin computes the map, which Dai et al. exclude)."""
    timed = trace(est, X, y, StopConfig(passes=1), every=math.inf, initial=False).begin()
    setup = timed.train_seconds
    *_, last = timed
    return last.train_seconds - setup, est


def numpy_svrg_epoch(Z, y, beta, eta, reg, batch_size, order):
    """The SVRG epoch of _svrg_rf.pyx with NumPy mini-batch operations (smooth hinge)."""
    def dloss(f, yy):
        m = yy * f
        return np.where(m >= 1, 0.0, np.where(m <= 0, -yy, -yy * (1 - m)))
    beta = beta.copy()
    g_snap = dloss(Z @ beta, y)
    mu = Z.T @ g_snap / len(y)
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        Zb = Z[rows]
        coef = (dloss(Zb @ beta, y[rows]) - g_snap[rows]) / len(rows)
        beta -= eta * (mu + reg * beta + Zb.T @ coef)
    return beta


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="a9a")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    cfg = config_from_dict({"dataset": {"name": args.dataset}, "algorithm": {"name": "norma"}})
    data = prepare_experiment(cfg, progress=False).data
    X, y = as_dense(data.X_train, np.float64), data.y_train
    Xt = as_dense(data.X_test, np.float64) if data.X_test is not None else X[:5000]
    yt = data.y_test if data.X_test is not None else y[:5000]
    print(f"dataset {args.dataset}: n = {X.shape[0]:,}, d = {X.shape[1]}, test {Xt.shape[0]:,}; "
          f"load average {open('/proc/loadavg').read().split()[:3]}")
    with threadpool_limits(limits=1, user_api="blas"):
        for name, cls in (("k-sdca", KSDCAClassifier), ("norma", NormaClassifier)):
            extra = {"step": 1000.0, "t0": 100.0} if name == "norma" else {}
            seconds, est = one_pass(cls(C=1.0, batch_size=64, random_state=0, **extra), X, y)
            err = np.mean(est.predict(Xt) != yt)
            S, c = est.core_.sv.S[:est.core_.sv.count], est.core_.sv.coef[:est.core_.sv.count] * est.core_.sv.scale
            values = Xt.shape[0] * len(c)
            ours, f1 = best_of(args.repeat, lambda: est.decision_function(Xt))
            sk, f2 = best_of(args.repeat, lambda: rbf_kernel(Xt, S, gamma=est.gamma_) @ c)
            print(f"{name:8s} one pass {seconds:7.2f} s, {len(c):,} SVs, test error {err:.4f}; predict "
                  f"{values / ours / 1e6:6.1f} M kernel values/s (sklearn rbf_kernel @ c: "
                  f"{values / sk / 1e6:6.1f} M/s, ratio {sk / ours:.2f}x, max |Δf| {np.max(np.abs(f1 - f2)):.1e})")

        for dtype in ("float64", "float32"):
            est = SVRGRFClassifier(C=1.0, batch_size=64, block_size=32, n_blocks=8, dtype=dtype, random_state=0)
            est.begin(X, y)
            # the model's feature map (svrg_rf.py: f(x) = Σ β_j cos(ω_j·x + b_j), ω, b = W_, b_)
            Z = np.cos(X @ est.W_.T + est.b_).astype(dtype)
            Y = np.where(y == est.classes_[1], 1.0, -1.0).reshape(-1, 1)
            order = np.random.default_rng(0).permutation(len(Y)).astype(np.int64)
            ours, _ = best_of(args.repeat, lambda: est.core_.train(Z, Y, order, 64, est.steps_per_pass))
            ref, _ = best_of(args.repeat, lambda: numpy_svrg_epoch(Z, Y.ravel(), est.coef_, est.eta_, est.reg_,
                                                                    64, order))
            print(f"svrg-rf  one epoch (D = 256, Z {dtype}): compiled {ours:.3f} s, NumPy mini-batch "
                  f"{ref:.3f} s, ratio {ref / ours:.2f}x")
        for label, est in (("r-pegasos", PegasosClassifier(random_state=0)),
                           ("n-pegasos", PegasosClassifier(feature_map="nystroem", random_state=0)),
                           ("r-sdca", SDCAFeaturesClassifier(random_state=0)),
                           ("n-sdca", SDCAFeaturesClassifier(feature_map="nystroem", random_state=0))):
            seconds, est = one_pass(est, X, y)
            print(f"{label:9s} one pass {seconds:.3f} s (feature map excluded), test error "
                  f"{np.mean(est.predict(Xt) != yt):.4f}")
    print(f"load average at the end {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
