"""Validation-split tuning of the DSG family on ijcnn1 (issue 3): never looks at the test file.

Holds out 10,000 random rows of the ijcnn1 training file (seed 12345) as validation, trains on the
other 39,990 and prints the validation accuracy and the cumulative training time (evaluation
excluded) at a few checkpoints, with the 1-minute load average (timings are only comparable on
an idle machine). Each argument is one JSON setting, e.g.

    .venv/bin/python scripts/ijcnn1_tune.py \\
        '{"algo": "udsg", "loss": "hinge", "gamma": 1.0, "C": 2500, "batch_size": 512, "block_size": 1024,
          "step": 1e6, "t0": 2000, "new_iterations": 1, "old_iterations": 150, "average": true,
          "average_from": 5, "threads": 2, "passes": 14, "seeds": [0, 1, 2]}'
"""
import json
import sys

import numpy as np

from kernelbench.data import load_dataset
from kernelbench.runner import trace
from kernelbench.solvers.cdsg import CDSGClassifier, UDSGClassifier
from kernelbench.solvers.dsg import DSGClassifier

ALGORITHMS = {"dsg": DSGClassifier, "udsg": UDSGClassifier, "cdsg": CDSGClassifier}
VALIDATION_ROWS, SPLIT_SEED = 10_000, 12345


def main(specs):
    ds = load_dataset("ijcnn1")
    X = ds.X_train.toarray() if hasattr(ds.X_train, "toarray") else np.asarray(ds.X_train)
    X, y = X.astype(np.float32), np.asarray(ds.y_train)
    perm = np.random.default_rng(SPLIT_SEED).permutation(len(y))
    val, train = perm[:VALIDATION_ROWS], perm[VALIDATION_ROWS:]
    for spec in specs:
        params = json.loads(spec)
        algo, passes = params.pop("algo"), params.pop("passes")
        checkpoints, seeds = params.pop("checkpoints", 4), params.pop("seeds", [0])
        for seed in seeds:
            est = ALGORITHMS[algo](**params, random_state=seed)
            timed = trace(est, X[train], y[train], passes=passes, initial=False).begin()
            timed.every = max(1, int(np.ceil(timed.total / checkpoints)))
            points = []
            for point in timed:             # the runner's timing (set-up included)
                accuracy = np.mean(est.predict(X[val]) == y[val])
                points.append(f"{point.iteration / est.steps_per_pass:.1f} passes {point.train_seconds:.2f} s "
                              f"{100 * accuracy:.2f}%")
            load = open("/proc/loadavg").read().split()[0]
            print(f"{algo} {json.dumps(params)} seed={seed}: " + " | ".join(points)
                  + f" | features={est.n_random_features_} load={load}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
