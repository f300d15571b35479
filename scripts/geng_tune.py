"""Pick TSGS3VM / FRS3VM / supervised-DSG parameters for the Geng et al. configs on held-out
unlabeled rows, as the paper's §6.1 scheme does (its validation rows are unlabeled training rows
scored with their hidden labels). Unlike the paper's 5-fold split (one fifth of U trains), the
held-out set here is 10,000 unlabeled rows and all other training rows train, so that one pass has
about as many iterations as the final run (the step 1/eta and the number of random features depend
on it). Labeled draws 0..draws-1 (default 1; `draws=3` averages three); the test part is never touched.

    .venv/bin/python scripts/geng_tune.py cod-rna 0.3 tsgs3vm [passes=3 block_size=8 ...]

Extra KEY=VALUE arguments fix parameters (and `passes`, `scale`, `draws`) for every cell;
KEY=V1,V2,... replaces (or adds) that grid axis, e.g. `scale=none gamma=0.3,1 offset=none,balanced`.
`--dry-run` prints the resulting grid, fixed parameters and options as JSON and trains nothing.
"""
import itertools
import json
import sys
import time

import numpy as np

from kernelbench.data import load_dataset, prepare
from kernelbench.registry import algorithms
from kernelbench.semisupervised import holdout_split, mask_unlabeled

GRIDS = {
    "tsgs3vm": {"C": [1000.0, 3000.0, 10000.0], "gamma": [0.01, 0.03, 0.1, 0.3, 1.0],
                "eta": [300.0, 1000.0, 3000.0]},
    "frs3vm": {"C": [300.0, 1000.0, 3000.0, 10000.0], "gamma": [0.003, 0.01, 0.03, 0.1, 0.3, 1.0],
               "eta": [300.0, 1000.0, 3000.0]},
    "dsg": {"C": [0.1, 1.0, 10.0, 100.0, 1000.0], "gamma": [0.001, 0.01, 0.1, 1.0, 10.0]},
}
PASSES = {"tsgs3vm": 1, "frs3vm": 10, "dsg": 100}
VALID_ROWS = 10000


def parse_arguments(algorithm, items):
    """(grid, fixed params, options) from KEY=VALUE / KEY=V1,V2,... arguments; options are
    scale, passes, subsample and draws (not estimator parameters)."""
    fixed = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise SystemExit(f"argument {item!r} must be KEY=VALUE or KEY=V1,V2,...")
        fixed[key] = value
    grid = dict(GRIDS[algorithm])
    for key in [k for k, v in fixed.items() if "," in v]:      # KEY=V1,V2: a grid axis
        grid[key] = [_number(key, v) for v in fixed.pop(key).split(",")]
    fixed = {k: _number(k, v) for k, v in fixed.items()}
    for key in fixed:                                          # a fixed value overrides its axis
        grid.pop(key, None)
    options = {"scale": fixed.pop("scale", "standard"), "passes": fixed.pop("passes", PASSES[algorithm]),
               "subsample": fixed.pop("subsample", None), "draws": int(fixed.pop("draws", 1))}
    return grid, fixed, options


def main(name, test, algorithm, *items):
    dry_run = "--dry-run" in items
    grid, fixed, options = parse_arguments(algorithm, [i for i in items if i != "--dry-run"])
    if dry_run:
        print(json.dumps({"grid": grid, "fixed": fixed, "options": options}))
        return
    scale, passes, subsample, draws = (options[k] for k in ("scale", "passes", "subsample", "draws"))
    test = test if test == "official" else float(test)
    ds = prepare(load_dataset(name, test=test, seed=0, progress=False), scale=scale, seed=0,
                 subsample=int(subsample) if subsample else None)
    X, y = ds.X_train, ds.y_train
    X = X.toarray() if hasattr(X, "toarray") else X
    spec = algorithms()[algorithm]
    splits = []
    for draw in range(draws):           # average over labeled draws: one draw overfits the choice
        labeled, train, valid = holdout_split(y, 200, draw, VALID_ROWS)
        if algorithm == "dsg":
            splits.append((X[labeled], y[labeled], valid))
        else:
            splits.append((X[train], mask_unlabeled(y, labeled, train), valid))
    results = []
    for values in itertools.product(*grid.values()):
        params = dict(zip(grid, values))
        if algorithm == "dsg":
            params.update(loss="hinge", batch_size=32, block_size=32)
        params.update(fixed)
        errors = []
        started = time.perf_counter()
        for draw, (X_fit, y_fit, valid) in enumerate(splits):
            est = spec.build(params, seed=draw).set_params(passes=passes)
            try:
                est.fit(X_fit, y_fit)
            except Exception as e:      # a diverged cell is just a bad cell
                print(f"{params} failed: {e}", flush=True)
                errors.append(1.0)
                continue
            errors.append(float(np.mean(est.predict(X[valid]) != y[valid])))
        err = float(np.mean(errors))
        results.append((err, params, (time.perf_counter() - started) / draws))
        spread = float(np.std(errors))
        print(f"{err:.4f} ±{spread:.4f} {params} {results[-1][2]:.2f}s per fit", flush=True)
    best = min(results, key=lambda r: r[0])
    print("BEST", best)


def _number(key, value):
    if key in ("block_size", "batch_size", "draws"):
        return int(value)
    try:
        return float(value)
    except ValueError:
        return value            # e.g. offset=learned, unlabeled_loss=ramp


if __name__ == "__main__":
    main(*sys.argv[1:])
