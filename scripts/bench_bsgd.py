"""`make bench`: BSGD total training time, Lookup-WD vs GSS-standard (Glasmachers & Qaadan, Table 3),
measured in one run on this machine.

For ijcnn1 (C = 2^5, γ = 2^1) and a9a (C = 2^5, γ = 2^-7), B = 100, 20 passes, raw LIBSVM features
(from the mirror/cache): training time of each merge method (best of --repeat runs with the same
seed, evaluation excluded), the ratio Lookup-WD / GSS-standard, test accuracy, merge frequency and
the merge time split (section A: h or WD; section B: the rest). The exact SVM at the same C and γ
(Table 1) is scripts/bench_exact_svm.py's `libsvm` line. Nothing here is a pass/fail test.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from kernelbench.config import StopConfig, config_from_dict
from kernelbench.experiment import prepare_experiment, trace
from kernelbench.solvers.bsgd import BSGDClassifier
from kernelbench.solvers.merging import lookup_tables

SETTINGS = {"ijcnn1": dict(C=2.0**5, gamma=2.0**1), "a9a": dict(C=2.0**5, gamma=2.0**-7)}
METHODS = ("gss", "lookup-wd", "lookup-h", "gss-precise")


def train_once(data, params, merge, budget, passes, seed):
    """The estimator and its training seconds, timed as the experiment loop times a cell (set-up included)."""
    est = BSGDClassifier(**params, budget=budget, merge=merge, random_state=seed)
    *_, last = trace(est, data.X_train, data.y_train, StopConfig(passes=passes), every=math.inf,
                     initial=False)
    return est, last.train_seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--methods", nargs="+", default=list(METHODS[:3]), choices=METHODS)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    started = time.perf_counter()
    lookup_tables.cache_clear()
    lookup_tables(400)
    print(f"lookup tables 400x400 (disk cache or GSS at eps=1e-10): {time.perf_counter() - started:.3f} s")
    for name in args.datasets:
        cfg = config_from_dict({"dataset": {"name": name}, "algorithm": {"name": "bsgd"}})
        data = prepare_experiment(cfg, progress=False).data
        params = SETTINGS[name]
        print(f"\n{name}: n = {data.X_train.shape[0]}, d = {data.X_train.shape[1]}, C = {params['C']:g}, "
              f"gamma = {params['gamma']:g}, B = {args.budget}, {args.passes} passes, best of {args.repeat}")
        times = {}
        for merge in args.methods:
            runs = [train_once(data, params, merge, args.budget, args.passes, args.seed)
                    for _ in range(args.repeat)]
            est, seconds = min(runs, key=lambda r: r[1])
            c = est.counters()
            times[merge] = seconds
            acc = est.score(data.X_test, data.y_test)
            print(f"  {merge:12s} train {seconds:7.3f} s  (all: {', '.join(f'{s:.3f}' for _, s in runs)})  "
                  f"test acc {100 * acc:6.2f}%  merge freq {100 * c['merge_frequency']:5.2f}%  "
                  f"merging {c['maintenance_seconds']:.3f} s = A {c['merge_seconds_a']:.3f} + "
                  f"B {c['merge_seconds_b']:.3f} ({100 * c['maintenance_seconds'] / seconds:.1f}% of training)")
        for merge, label in (("lookup-wd", "Lookup-WD"), ("lookup-h", "Lookup-h ")):
            if "gss" in times and merge in times:
                print(f"  ratio {label} / GSS-standard total training time: {times[merge] / times['gss']:.3f}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
