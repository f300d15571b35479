"""The exact-kernel baselines side by side: `libsvm` (LIBSVM through scikit-learn's SVC / SVR, one
thread) vs `libsvm-p` (oneDAL through scikit-learn-intelex, standing in for Gu et al.'s LIBSVM(P)),
the same C, γ and tolerance on the same training part, in one run: training seconds (best of
--repeats fits, each algorithm's fits interleaved with the other's so that load drifts hit both),
the ratio, and test accuracy (or MSE) of each.

Defaults: a9a with C = 32, γ = 2⁻⁷ (LIBSVM's guide values for Adult), ijcnn1
(C = 32, γ = 2), and abalone as ε-SVR (configs/abalone_libsvm_gu2018.yaml: C = 100, ε = 1, γ median).
The data as the configs read it (no scaling). `libsvm-p`
runs on --threads cores (default: every core this process may use) and on one.

    python scripts/bench_exact_svm.py
    python scripts/bench_exact_svm.py --datasets ijcnn1 --repeats 3 --threads 2

Timings depend on the machine's load. Not a pass/fail test.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from kernelbench.config import config_from_dict
from kernelbench.estimators import algorithms
from kernelbench.experiment import prepare_experiment

SETTINGS = {  # dataset: (task, test part, params)
    "a9a": ("binary", "official", {"C": 32.0, "gamma": 2.0 ** -7}),
    "ijcnn1": ("binary", "official", {"C": 32.0, "gamma": 2.0}),
    "abalone": ("regression", "official", {"C": 100.0, "gamma": "median", "epsilon": 1.0}),
}


def fit_seconds(name, params, task, ds):
    model = algorithms()[name].build(params, task=task)
    started = time.perf_counter()
    model.fit(ds.X_train, ds.y_train)
    return time.perf_counter() - started, model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(SETTINGS), choices=list(SETTINGS))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    try:
        import sklearnex  # noqa: F401
    except ImportError:
        print("scikit-learn-intelex is not installed (x86-64 wheels only): nothing to compare")
        return
    contenders = [("libsvm", {}), ("libsvm-p", {"threads": args.threads})]
    if args.threads != 1:
        contenders.append(("libsvm-p", {"threads": 1}))
    print(f"{'dataset':10s} {'n_train':>8s} {'solver':22s} {'fit s (best)':>12s} {'vs libsvm':>9s} {'test':>10s}")
    for dataset in args.datasets:
        task, test, params = SETTINGS[dataset]
        cfg = config_from_dict({"dataset": {"name": dataset, "test": test}, "algorithm": {"name": "libsvm"}})
        ds = prepare_experiment(cfg, progress=False).data
        best = {}
        for _ in range(args.repeats):
            for name, extra in contenders:
                key = name + (f", {extra['threads']} thread(s)" if extra else "")
                seconds, model = fit_seconds(name, {**params, **extra}, task, ds)
                if key not in best or seconds < best[key][0]:
                    best[key] = (seconds, model)
        reference = best["libsvm"][0]
        for key, (seconds, model) in best.items():
            pred = model.predict(ds.X_test)
            score = (f"MSE {np.mean((pred - ds.y_test) ** 2):.4f}" if task == "regression"
                     else f"{100 * np.mean(pred == ds.y_test):.2f} %")
            print(f"{dataset:10s} {ds.X_train.shape[0]:8d} {key:22s} {seconds:12.2f} "
                  f"{reference / seconds:8.2f}x {score:>10s}", flush=True)


if __name__ == "__main__":
    main()
