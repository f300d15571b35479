"""`make bench`: CDSG vs DSG (Li & Póczos 2016 vs Dai et al. 2014), measured in one run.

For each dataset: DSG runs `--passes` passes; its final training objective R_DSG and its training
time T_DSG are recorded. CDSG (then UDSG) runs with the SAME settings (loss, λ, B, F, step
schedule, seed) until its training objective reaches R_DSG (or the same number of passes). Printed:
time to reach R_DSG, the ratio to T_DSG, and the number of random features each used.
Objectives are evaluated between timed chunks (outside the timer) on the full training set.
Timings depend on the machine's load: the load average is printed next to them. Not a pass/fail test.
"""
from __future__ import annotations

import argparse

import numpy as np

from kernelbench.config import StopConfig, config_from_dict
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import prepare_experiment, trace
from kernelbench.solvers.base import as_dense
from kernelbench.solvers.cdsg import CDSGClassifier, UDSGClassifier
from kernelbench.solvers.dsg import DSGClassifier

DATASETS = {   # name: (test split, C for λ = 1e-5 as in Li & Póczos Table 2)
    "a9a": ("official", 1.0 / (32561 * 1e-5)),
    "covtype_subset20k": (0.2, 1.0 / (16000 * 1e-5)),
    "w8a": (0.2, 1.0 / (39799 * 1e-5)),
    "ijcnn1": ("official", 1.0 / (49990 * 1e-5)),
}


def run(cls, X, y, params, passes, target=None, points=24):
    """(seconds, objective, n_features) after each timed chunk (the experiment loop's timing: set-up
    included), until `passes` are done or the objective is <= target."""
    est = cls(**params)
    timed = trace(est, X, y, StopConfig(passes=passes), initial=False).begin()
    timed.every = max(1, int(timed.total) // points)
    curve = []
    for point in timed:
        objective = est.objective(X, y)
        curve.append((point.train_seconds, objective, est.n_random_features_))
        if target is not None and objective <= target:
            break
    return curve


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["a9a", "covtype_subset20k"], choices=list(DATASETS))
    parser.add_argument("--passes", type=float, default=2.0)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--block-size", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}  threads={args.threads}")
    print(f"{'dataset':<18} {'algorithm':<6} {'R_DSG':>9} {'seconds':>8} {'ratio':>6} {'features':>9} {'DSG features':>12}")
    for name in args.datasets:
        test, C = DATASETS[name]
        try:
            cfg = config_from_dict({"dataset": {"name": name, "test": test}, "algorithm": {"name": "dsg"}})
            data = prepare_experiment(cfg, progress=False).data
        except KernelbenchError as e:       # no local copy and no network: say so, go on
            print(f"{name:<18} skipped: {e}")
            continue
        X, y = as_dense(data.X_train, np.float32), data.y_train
        params = dict(loss="logistic", gamma="median", C=C, batch_size=args.batch_size,
                      block_size=args.block_size, step=1000.0, t0=100.0, threads=args.threads,
                      random_state=args.seed)
        dsg = run(DSGClassifier, X, y, params, args.passes)
        t_dsg, r_dsg, m_dsg = dsg[-1]
        print(f"{name:<18} {'dsg':<6} {r_dsg:9.5f} {t_dsg:8.2f} {1.0:6.2f} {m_dsg:9d} {m_dsg:12d}")
        for label, cls in (("cdsg", CDSGClassifier), ("udsg", UDSGClassifier)):
            curve = run(cls, X, y, params, args.passes, target=r_dsg)
            t, r, m = curve[-1]
            reached = r <= r_dsg
            ratio = f"{t / t_dsg:6.2f}" if reached else "   n/a"
            note = "" if reached else f"  (did not reach R_DSG: {r:.5f} after {args.passes} passes)"
            print(f"{name:<18} {label:<6} {r_dsg:9.5f} {t:8.2f} {ratio} {m:9d} {m_dsg:12d}{note}")
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
