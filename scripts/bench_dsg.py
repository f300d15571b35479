"""`make bench`: DSG throughput, measured in one run on this machine.

Prints
  * the machine's cos throughput (NumPy float32 / float64, one core),
  * DSG feature evaluations per second (batch × active features / s) for one pass on a9a,
  * time ratios against a plain NumPy implementation of the same algorithm (stacked ω, float64
    GEMM + np.cos per iteration), and between our own variants (float64, 2 threads, no ω cache).
Timings are the best of `--repeat` runs. Nothing here is a pass/fail test.
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from kernelbench.config import config_from_dict
from kernelbench.experiment import prepare_experiment
from kernelbench.solvers.base import as_dense
from kernelbench.solvers.dsg import DSGClassifier


def best_time(fn, repeat):
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def cos_throughput(dtype, n=1 << 24, repeat=5):
    x = np.linspace(-50, 50, n).astype(dtype)
    out = np.empty_like(x)
    np.cos(x, out=out)  # warm the pages
    return n / best_time(lambda: np.cos(x, out=out), repeat)


def feature_evaluations(n, batch_size, block_size):
    """Σ_t b_t · (features active at iteration t, incl. the new block) for one pass."""
    total, seen, t = 0, 0, 0
    while seen < n:
        b = min(batch_size, n - seen)
        t += 1
        total += b * t * block_size
        seen += b
    return total


def numpy_dsg(X, y, *, batch_size, block_size, gamma, step, t0, lam, seed):
    """The same algorithm (Alg. 1–2, logistic loss) in plain NumPy float64: ω stacked in one
    array, f(x) = cos(X W^T + b) @ β per batch, old β shrunk by (1 − γ_t λ)."""
    n, d = X.shape
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    T = math.ceil(n / batch_size)
    W = np.empty((T * block_size, d))
    b = np.empty(T * block_size)
    beta = np.zeros(T * block_size)
    m = 0
    for t in range(1, T + 1):
        rows = order[(t - 1) * batch_size: t * batch_size]
        xb, yb = X[rows], y[rows]
        f = np.cos(xb @ W[:m].T + b[:m]) @ beta[:m]
        g = -yb / (1 + np.exp(yb * f))
        gamma_t = step / (t0 + t)
        beta[:m] *= 1 - gamma_t * lam
        W[m:m + block_size] = rng.normal(scale=math.sqrt(2 * gamma), size=(block_size, d))
        b[m:m + block_size] = rng.uniform(0, 2 * math.pi, size=block_size)
        z = np.cos(xb @ W[m:m + block_size].T + b[m:m + block_size])
        beta[m:m + block_size] = -gamma_t * 2.0 / (len(rows) * block_size) * (g @ z)
        m += block_size
    return W[:m], b[:m], beta[:m]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    data = prepare_experiment(config_from_dict({"dataset": {"name": "a9a"}, "algorithm": {"name": "dsg"}}),
                              progress=False).data
    X, y = as_dense(data.X_train, np.float64), data.y_train
    n = X.shape[0]
    params = dict(loss="logistic", gamma="median", C=1.0, batch_size=64, block_size=32,
                  step=1000.0, t0=100.0, random_state=0)
    evals = feature_evaluations(n, params["batch_size"], params["block_size"])

    with threadpool_limits(limits=1):
        cos32 = cos_throughput(np.float32)
        cos64 = cos_throughput(np.float64)
    print(f"machine: {cores} cores; NumPy cos, one core: float32 {cos32 / 1e6:,.0f} M/s, "
          f"float64 {cos64 / 1e6:,.0f} M/s")
    print(f"data: a9a (LIBSVM, {n:,} × {X.shape[1]}); one pass, batch {params['batch_size']}, "
          f"block {params['block_size']}: {evals / 1e6:,.0f} M feature evaluations\n")

    variants = {
        "kernelbench float32, 1 thread": dict(dtype="float32", threads=1),
        "kernelbench float64, 1 thread": dict(dtype="float64", threads=1),
        f"kernelbench float32, {cores} threads": dict(dtype="float32", threads=cores),
        "kernelbench float32, 1 thread, ω regenerated": dict(dtype="float32", threads=1, cache_features=False),
    }
    results = {}
    for label, extra in variants.items():
        model = DSGClassifier(**params, **extra)
        seconds = best_time(lambda: model.fit(X, y), args.repeat)
        results[label] = seconds

    # the same step size, width and λ = 1/(nC) as ours; labels as ±1 (logistic loss on y·f)
    same = dict(batch_size=64, block_size=32, gamma=DSGClassifier(**params).begin(X, y).gamma_, step=1000.0,
                t0=100.0, lam=1.0 / n, seed=0)
    signs = np.where(y > 0, 1.0, -1.0)
    for label, blas in (("plain NumPy float64, 1 thread", 1), (f"plain NumPy float64, BLAS {cores} threads", cores)):
        with threadpool_limits(limits=blas):
            results[label] = best_time(lambda: numpy_dsg(X, signs, **same), args.repeat)
    numpy_seconds = results["plain NumPy float64, 1 thread"]

    base = results["kernelbench float32, 1 thread"]
    print(f"{'variant':48s} {'seconds':>8s} {'M feat/s':>9s} {'vs ours f32/1t':>15s}")
    for label, seconds in results.items():
        print(f"{label:48s} {seconds:8.3f} {evals / seconds / 1e6:9.1f} {seconds / base:14.2f}x")
    print(f"\nours (float32, 1 thread): {evals / base / 1e6:,.0f} M feature evaluations/s = "
          f"{evals / base / cos32:.2f} × NumPy's float32 cos rate, {evals / base / cos64:.2f} × its float64 rate")
    print(f"speed-up over plain NumPy (1 thread each): {numpy_seconds / base:.1f}x; "
          f"{cores} threads vs 1: {base / results[f'kernelbench float32, {cores} threads']:.2f}x")


if __name__ == "__main__":
    main()
