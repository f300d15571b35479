"""Gu et al. 2018, Fig. 1g–h: testing time vs number of testing samples.

Trains each algorithm once with the settings of its experiment config (configs/<dataset>_<alg>_gu2018.yaml:
asydsskl, asygcd when part B's config exists, dsg, libsvm), then times `predict` (one thread, BLAS
pinned to one thread) on test sets of increasing size (rows drawn with replacement from the test
split), best of --repeat. Writes a results folder (experiment gu_test_time: predict_seconds per
size, the size in counters.n_test, model size in n_features / n_support_vectors) that the figure
gu2018_fig1gh_test_time reads, and prints the time per test sample.

    .venv/bin/python scripts/gu_test_time.py --out results/gu_test_time
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[1]
SETS = {"covtype": ("asydsskl", "asygcd", "dsg", "libsvm"), "abalone": ("asydsskl", "dsg")}
SIZES = (1000, 2000, 5000, 10000, 20000, 50000)


def _train(config_path):
    from kernelbench.config import load_config
    from kernelbench.experiment import prepare_experiment, trace

    cfg = load_config(config_path)
    prepared = prepare_experiment(cfg, progress=False)
    data = prepared.data
    params = dict(cfg.algorithm.params)
    if "threads" in params:
        params["threads"] = 1
    est = prepared.spec.build(params, seed=cfg.seed, task=data.task)
    *_, last = trace(est, data.X_train, data.y_train, cfg.stop, every=math.inf, initial=False)
    return est, data, last.train_seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="results/gu_test_time")
    args = parser.parse_args(argv)
    from kernelbench.results import Run

    run = Run.create(args.out, "gu_test_time", {"sets": args.sets, "sizes": args.sizes}, tags={"paper": "gu2018", "figure": "fig1", "panel": "(g-h)"})
    print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    for name in args.sets:
        for algorithm in SETS[name]:
            config = REPO / "configs" / f"{ {'covtype': 'covtype_subset20k'}.get(name, name)}_{algorithm}_gu2018.yaml"
            if not config.exists():
                print(f"{name}/{algorithm}: no {config.name}; skipped")
                continue
            est, data, seconds = _train(config)
            regression = data.task == "regression"
            rng = np.random.default_rng(0)
            size_fields = est.record()
            counters = size_fields.pop("counters", {})
            if "n_nonzero" in counters:          # AsyDSSKL: only the non-zero weights are evaluated
                size_fields["n_features"] = counters["n_nonzero"]
            pred = est.predict(data.X_test)
            score = (float(np.mean((pred - data.y_test) ** 2)) if regression
                     else float(np.mean(pred != data.y_test)))
            print(f"{name}/{algorithm}: trained in {seconds:.1f} s, "
                  f"{'test MSE' if regression else 'test error'} {score:.4f}, model {size_fields}")
            for size in args.sizes:
                rows = rng.integers(0, data.X_test.shape[0], size)
                Xq = data.X_test[rows]
                best = np.inf
                with threadpool_limits(limits=1):
                    for _ in range(args.repeat):
                        started = time.perf_counter()
                        est.predict(Xq)
                        best = min(best, time.perf_counter() - started)
                        if best > 2.0:              # slow models (LIBSVM): one timing is enough
                            break
                run.append({"experiment": "gu_test_time", "dataset": data.name, "algorithm": algorithm,
                            "params": json.dumps(est.get_params(), default=str, sort_keys=True),
                            "trial": 0, "seed": 0, "iteration": size, "train_seconds": seconds,
                            "predict_seconds": best, "threads": 1,
                            ("test_mse" if regression else "test_error"): score,
                            "counters": json.dumps({"n_test": size}), "status": "ok",
                            "final": int(size == args.sizes[-1]), **size_fields})
                print(f"   {size:7d} test samples: {best:.4f} s ({best / size * 1e6:.2f} µs/sample)")
    run.finish("finished")
    print(f"results in {run.path}")


if __name__ == "__main__":
    main()
