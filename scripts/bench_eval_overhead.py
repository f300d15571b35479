"""`make bench`: training time must not depend on how often the runner evaluates, for every solver.

For every registered algorithm (a workload on ijcnn1 below: single-threaded, seeded), the same
run is timed by kernelbench.experiment.trace -- the runner's own timed loop -- two ways, in turn,
--repeat times:

  default  a point every ~1/10 pass (the runner's default `evaluate.every`), and at each what
           the runner evaluates by default: record(), the objective and the training error on
           5,000 training rows, the error on the whole test part (BLAS on one thread);
  single   points at the start and at the end only.

Printed per algorithm: the points of the default schedule, the median train_seconds of each and
their ratio -- the target's measure, exact on a quiet machine -- and a paired estimate of the same
ratio: each chunk of training after an evaluation in the default runs against the same
iterations of the single runs (the same work, same seed; their time read off the single runs'
timed pieces), per chunk the fastest repetition of each, the median difference over chunks -- the
cost of one evaluation to training -- times the evaluations, over the single run's time. On a
shared machine a whole run's time swings when something else runs beside it;
the fastest repetition drops a burst during one run, the median over chunks one over a few
chunks, so the paired ratio is the measurement when the two disagree. Target: within
3% either way. Default and single runs must end with the same test error (same seed:
evaluating does not change the model); a mismatch is printed. The process runs on one CPU
(--cpu); the load average is printed before and after. Nothing here is a pass/fail test.

    .venv/bin/python scripts/bench_eval_overhead.py [--algorithms bsgd dsg] [--repeat 5]
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

IJCNN1 = {"name": "ijcnn1", "test": "official", "scale": "none"}
# name: (dataset settings, algorithm params, passes). Sizes chosen so one run trains long enough
# to time yet short enough to repeat, evaluations included; BSGD is the
# case the target was set on (B = 100, 20 passes, lookup-wd, C = 2^5, gamma = 2^1).
WORKLOADS = {
    "bsgd": ({}, {"C": 32.0, "gamma": 2.0, "budget": 100, "merge": "lookup-wd"}, 20),
    "dsg": ({}, {"batch_size": 256, "block_size": 64}, 1),
    "udsg": ({}, {"batch_size": 256, "block_size": 64}, 1),
    "cdsg": ({}, {"batch_size": 256, "block_size": 64}, 1),
    "svrg-rf": ({}, {}, 6),
    "norma": ({"subsample": 10000}, {"budget": 500}, 3),
    "k-sdca": ({"subsample": 10000}, {}, 1),
    "r-pegasos": ({}, {}, 1),
    "n-pegasos": ({}, {}, 1),
    "r-sdca": ({}, {}, 1),
    "n-sdca": ({}, {}, 1),
    "asydsskl": ({"subsample": 20000}, {"rounds": 2, "outer_loops": 10}, 1),
    "asygcd": ({"subsample": 7000}, {}, 1),
    "libsvm": ({"subsample": 2000}, {}, 1),
    "tsgs3vm": ({"subsample": 20000, "labeled": 200}, {}, 3),
    "frs3vm": ({"labeled": 200}, {}, 2),
    "bgs3vm": ({"subsample": 20000, "labeled": 200}, {}, 1),
    "tsvm-ls": ({"subsample": 1000, "labeled": 200}, {}, 1),
    "tsvm-cccp": ({"subsample": 1000, "labeled": 200}, {}, 1),
}
PREDICT_ROWS = 32768        # the test part is predicted in row chunks, as the runner does
SEED = 0


def workload(name):
    """(spec, params, passes, X_fit, y_fit, X_sub, y_sub, X_test, y_test) through the package's
    own config -> dataset path (the evaluation subset is the runner's)."""
    from kernelbench.config import config_from_dict
    from kernelbench.experiment import prepare_experiment
    from kernelbench.semisupervised import draw_labeled, training_view

    dataset, params, passes = WORKLOADS[name]
    cfg = config_from_dict({"name": f"bench_eval_overhead_{name}", "dataset": {**IJCNN1, **dataset},
                            "algorithm": {"name": name, "params": params}, "seed": SEED,
                            "stop": {"passes": passes}})
    prepared = prepare_experiment(cfg, progress=False)
    data, spec = prepared.data, prepared.spec
    X, y = data.X_train, data.y_train
    sub = prepared.eval_rows
    if prepared.labeled is not None:                 # the semi-supervised protocol's view
        labeled = draw_labeled(y, prepared.labeled, SEED)
        semi = "semi-supervised" in spec.tasks
        X, y, _ = training_view(X, y, labeled, semi_supervised=semi)
        sub = np.union1d(sub, labeled) if semi else np.arange(len(y))
    return spec, dict(cfg.algorithm.params), passes, X, y, X[sub], y[sub], data.X_test, data.y_test


def evaluate(est, X_sub, y_sub, X_test, y_test) -> float:
    """What the runner evaluates at a point by default; returns the test error."""
    from kernelbench.solvers.base import blas_threads

    with blas_threads(1):
        est.record()
        est.objective(X_sub, y_sub)
        known = ~np.isnan(y_sub)
        np.mean(est.predict(X_sub)[known] != y_sub[known])
        wrong = sum(int(np.sum(est.predict(X_test[r0:r0 + PREDICT_ROWS]) != y_test[r0:r0 + PREDICT_ROWS]))
                    for r0 in range(0, X_test.shape[0], PREDICT_ROWS))
    return wrong / X_test.shape[0]


def timed_run(spec, params, passes, X, y, X_sub, y_sub, X_test, y_test, every):
    """One seeded run timed by trace, evaluating at every point: (train_seconds, the timed
    calls' (iterations, seconds), begin first, the timed calls before each point, final test
    error)."""
    from kernelbench.experiment import trace

    est = spec.build({**params, **({"threads": 1} if "threads" in spec.defaults() else {})},
                     seed=SEED, task="binary")
    timed = trace(est, X, y, passes=passes, every=every)
    marks, error = [], math.nan
    for _ in timed:
        marks.append(len(timed.pieces))
        error = evaluate(est, X_sub, y_sub, X_test, y_test)
    return timed.train_seconds, list(timed.pieces), marks, error


def clock(pieces):
    """Training seconds as a function of the iteration: (iterations, seconds) at every timed
    call's end, linear within a call."""
    steps = np.cumsum([0] + [k for k, _ in pieces[1:]])
    seconds = np.cumsum([0.0] + [s for _, s in pieces[1:]])
    return steps, seconds


def chunk_seconds(run, bounds) -> np.ndarray:
    """Training seconds of each iteration range [lo, hi) in `bounds`, read off a run's timed
    calls (a call partly inside counts in proportion); nan past the run's end."""
    steps, seconds = clock(run[1])
    lo, hi = bounds[:, 0], bounds[:, 1]
    out = np.interp(hi, steps, seconds) - np.interp(lo, steps, seconds)
    return np.where(hi <= steps[-1], out, np.nan)


def evaluation_cost(defaults, singles) -> tuple[float, int]:
    """(median over chunks of the cost of the evaluation before it, chunks): every chunk of
    training after an evaluation in the default runs (not the first: both schedules evaluate at
    iteration 0) against the same iterations -- the same work, same seed -- in the single runs;
    per chunk the fastest repetition of each (robust to a burst of other work during one run),
    then the median difference over chunks (robust to bursts over a few chunks)."""
    steps, _ = clock(defaults[0][1])
    marks = defaults[0][2]
    bounds = np.array([(steps[a - 1], steps[b - 1]) for a, b in zip(marks[1:-1], marks[2:])])
    if not len(bounds):
        return math.nan, 0
    after = np.min([chunk_seconds(r, bounds) for r in defaults], axis=0)
    without = np.min([chunk_seconds(r, bounds) for r in singles], axis=0)
    differences = (after - without)[np.isfinite(after - without)]
    return (float(np.median(differences)) if len(differences) else math.nan), len(differences)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", nargs="+", default=None,
                        help="registered algorithms to measure (default: every one)")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions of each run (default 3)")
    parser.add_argument("--cpu", type=int, default=None,
                        help="run on this CPU only (default: the last one this process may use; -1: "
                             "no pinning). One CPU: no migration between runs' pieces")
    args = parser.parse_args(argv)
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    cpu = allowed[-1] if args.cpu is None and allowed else args.cpu
    if cpu is not None and cpu >= 0:
        os.sched_setaffinity(0, {cpu})
    os.environ.setdefault("KERNELBENCH_MIRROR", os.path.abspath(os.path.join(
        os.path.dirname(__file__), "..", "..", "shared", "datasets")))
    from kernelbench.estimators import algorithms

    names = args.algorithms or sorted(algorithms())
    missing = sorted(set(names) - set(WORKLOADS))
    if missing:
        parser.error(f"no workload for {missing}: add one to WORKLOADS")
    print(f"load average before: {os.getloadavg()[:3]}; {args.repeat} repetitions of each run, in turn; "
          f"CPU {cpu if cpu is not None and cpu >= 0 else 'any'}")
    print(f"{'algorithm':<10} {'points':>6} {'default s':>9} {'single s':>9} {'ratio':>6}   "
          f"{'ms/eval':>8} {'paired ratio':>12}  note")
    worst = 0.0
    for name in names:
        started = time.perf_counter()
        try:
            case = workload(name)
        except Exception as e:            # noqa: BLE001  (no local copy of the data: say so, go on)
            print(f"{name:<10} skipped: {e}")
            continue
        runs = {"default": [], "single": []}
        for _ in range(args.repeat):
            for kind, every in (("default", None), ("single", math.inf)):
                runs[kind].append(timed_run(*case, every=every))
        median = {kind: float(np.median([r[0] for r in rs])) for kind, rs in runs.items()}
        ratio = median["default"] / median["single"]
        cost, chunks = evaluation_cost(runs["default"], runs["single"])
        points = len(runs["default"][0][2])
        if chunks:
            paired = 1 + chunks * cost / median["single"]
            worst = max(worst, abs(paired - 1))
            paired_text = f"{1e3 * cost:>8.3f} {paired:>12.3f}"
        else:
            paired_text = f"{'-':>8} {'-':>12}"
        errors = {r[3] for rs in runs.values() for r in rs}
        note = (f"({time.perf_counter() - started:.0f} s)" if len(errors) == 1
                else f"test errors differ: {sorted(errors)}")
        if not chunks:
            note += " no training after an evaluation but the first"
        print(f"{name:<10} {points:>6} {median['default']:>9.3f} {median['single']:>9.3f} {ratio:>6.3f}   "
              f"{paired_text}  {note}", flush=True)
    print(f"largest paired difference: {100 * worst:.1f}% (target <= 3%); load average after: "
          f"{os.getloadavg()[:3]}")


if __name__ == "__main__":
    main()
