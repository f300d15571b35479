"""`make bench`: AsyDSSKL speedup with threads (Gu et al. 2018, Fig. 2), measured in one run.

For each dataset (ijcnn1 and the 20k covtype subset by default, parameters read from
configs/<dataset>_asydsskl_gu2018.yaml so the bench runs exactly the experiment's settings) and each
thread count 1, 2, 4, 8, 16 up to the cores this process may use, one seeded fit records after
every SVRG outer loop the training time (clock stopped during evaluation) and the exact objective
P(w) of problem (4) on the whole training set. It prints

  * the time each thread count needs to reach the 1-thread run's FINAL objective, and the speedup
    T_1 / T_k (target: k = 2 at least 1.7× on ijcnn1 and covtype), for each seed (a
    1-thread and a k-thread run with the same seed: the same features and random draws) and the
    median / min / max over the seeds,
  * the plain time ratio for the same work (all outer loops),
  * the CPU seconds (all threads) of one pass and their ratio to 1 thread: ≈ 1 means the threads
    add no work (no contention), which holds even when other processes make wall times noisy,
  * the load average before and after, and the core count (both cores must be idle for the target).

With --out DIR the curves are also written as a results folder (experiment gu_speedup) that the
figure gu2018_fig2_speedup reads. Exact command for the record:
    .venv/bin/python scripts/bench_asydsskl.py --out results/gu_speedup
Nothing here is a pass/fail test.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import yaml

from kernelbench.figures.gu_asydsskl import time_to_reach

REPO = Path(__file__).resolve().parents[1]
DATASETS = {"ijcnn1": "ijcnn1_asydsskl_gu2018.yaml", "covtype_subset20k": "covtype_subset20k_asydsskl_gu2018.yaml"}


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def load(name):
    from kernelbench.data import load_dataset, prepare

    cfg = yaml.safe_load((REPO / "configs" / DATASETS[name]).read_text())
    data = prepare(load_dataset(name, test=cfg["dataset"].get("test", "official"), progress=False),
                   scale=cfg["dataset"].get("scale", "none"), seed=cfg.get("seed", 0))
    return data, dict(cfg["algorithm"]["params"])


def full_objective(est, y_pm):
    """P(w) of problem (4) on the whole training set (labels y_pm = ±1), from the solver's own
    feature matrix Φ (`feature_matrix_`, exact for the features it trains on; outside the timer)."""
    from kernelbench.solvers.losses import loss_values

    phi, w = est.feature_matrix_, est.coef_.astype(np.float32)
    z = np.empty(phi.shape[0])
    for r0 in range(0, phi.shape[0], 8192):              # float32 blocks: Φ may be stored in float16
        z[r0:r0 + 8192] = phi[r0:r0 + 8192].astype(np.float32) @ w
    return float(np.mean(loss_values(est.loss_, z, y_pm, float(est.sigma))) + est.penalty())


def curve(data, params, threads, seed, target=None):
    """[(cumulative training seconds, P(w))] after every outer loop, and the fitted estimator.
    One pass of Algorithm 1; with a `target` objective not reached by then, the run goes on
    (more outer loops, up to a second pass) until it is, as an asynchronous run may end a pass a
    hair above the sequential one."""
    from kernelbench.config import StopConfig
    from kernelbench.experiment import trace
    from kernelbench.solvers.asydsskl import AsyDSSKLClassifier

    est = AsyDSSKLClassifier(**{**params, "threads": threads}, random_state=seed)
    timed = trace(est, data.X_train, data.y_train, StopConfig(passes=2), every=1).begin()
    setup_seconds, setup_cpu = timed.train_seconds, timed.cpu_seconds   # the clock starts after set-up
    y_pm = np.where(data.y_train == est.classes_[1], 1.0, -1.0)
    points, pass_cpu = [], float("nan")
    for point in timed:
        points.append((point.train_seconds - setup_seconds, full_objective(est, y_pm)))
        if point.iteration == est.steps_per_pass:
            pass_cpu = point.cpu_seconds - setup_cpu        # CPU time of all threads for one pass
        if point.iteration >= est.steps_per_pass and (target is None or points[-1][1] <= target):
            break
    return points, est, pass_cpu


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--threads", nargs="+", type=int, default=None,
                        help="thread counts (default 1 2 4 8 16 up to the core count)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2],
                        help="one 1-thread / k-thread pair of runs per seed (default 0 1 2)")
    parser.add_argument("--out", default=None, help="write the curves as a results folder here")
    args = parser.parse_args(argv)
    n_cores = cores()
    counts = args.threads or [k for k in (1, 2, 4, 8, 16) if k <= n_cores]
    counts = sorted(set(counts) | {1})           # the 1-thread run first: it sets each seed's target
    print(f"cores available: {n_cores}; thread counts: {counts}; seeds: {args.seeds}; load average "
          f"before: {load_average()}")
    run = None
    if args.out:
        from kernelbench.results import Run
        run = Run.create(args.out, "gu_speedup", {"datasets": args.datasets, "threads": counts,
                                                  "seeds": args.seeds}, tags={"paper": "gu2018", "figure": "fig2", "role": "ours"})
    for name in args.datasets:
        data, params = load(name)
        print(f"\n{name} (n = {data.X_train.shape[0]}; {params})")
        speedups = {k: [] for k in counts}
        for seed in args.seeds:
            results, cpu, fitted = {}, {}, {}
            for k in counts:
                target = results[1][-1][1] if k != 1 else None
                results[k], fitted[k], cpu[k] = curve(data, params, k, seed, target)
                if run is not None:
                    for it, (seconds, value) in enumerate(results[k]):
                        run.append({"experiment": "gu_speedup", "dataset": name, "algorithm": "asydsskl",
                                    "params": {**params, "threads": k}, "trial": seed, "seed": seed,
                                    "iteration": it, "train_seconds": seconds, "objective": value,
                                    "threads": k, "n_features": fitted[k].n_random_features_,
                                    "status": "ok", "final": int(it == len(results[k]) - 1)})
            final_1, total_1 = results[1][-1][1], results[1][-1][0]
            print(f"  seed {seed}: 1-thread final objective {final_1:.6f} after {total_1:.2f} s")
            for k in counts[1:]:
                reach = time_to_reach(*zip(*results[k]), final_1)
                passes = len(results[1]) - 1
                total = results[k][passes][0]            # time for the same work (one pass)
                speedups[k].append(total_1 / reach)
                print(f"    threads={k:2d}: one pass {total:6.2f} s (work ratio {total_1 / total:4.2f}x), "
                      f"objective after it {results[k][passes][1]:.6f}; reaches the 1-thread final "
                      f"objective at {reach:6.2f} s -> speedup {total_1 / reach:4.2f}x; CPU seconds of "
                      f"the pass {cpu[k]:.2f} (x{cpu[k] / cpu[1]:.2f} of 1 thread's {cpu[1]:.2f})")
        for k in counts[1:]:
            values = np.array(speedups[k])
            print(f"  {name}, {k} threads: speedup median {np.nanmedian(values):.2f}x, min "
                  f"{np.nanmin(values):.2f}x, max {np.nanmax(values):.2f}x over {len(values)} seeds "
                  f"({int(np.isnan(values).sum())} never reached the target)")
    if run is not None:
        run.finish("finished")
        print(f"\ncurves written to {run.path}")
    print(f"load average after: {load_average()}")


def load_average():
    return os.getloadavg()[:3] if hasattr(os, "getloadavg") else "n/a"


if __name__ == "__main__":
    main()
