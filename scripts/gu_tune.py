"""Validation-split tuning of AsyDSSKL for the Gu et al. configs (issue 6): never reads a test file.

Holds out the LAST `--valid` fraction (default 0.2) of the dataset's training file as validation
(ijcnn1 is time-ordered, so the held-out tail resembles the later official test file better than a
random subset does), trains on the rest, and after every SVRG outer loop prints the cumulative
training time (evaluation excluded), the objective P(w̃) of problem (4) and the validation accuracy.
A summary line per setting gives the accuracy reached by each `--at` time (default 5.4,9.4 seconds,
where the issue quotes AsyGCD's curve on ijcnn1). Timings are only comparable on an idle machine:
the 1-minute load average is printed with every summary. Each positional argument is one JSON
setting (AsyDSSKLClassifier parameters; "passes" optional, default 1 = Algorithm 1 once):

    .venv/bin/python scripts/gu_tune.py ijcnn1 \\
        '{"gamma": 0.5, "C": 1, "rounds": 5, "features_per_round": 512, "inner_steps": 25000,
          "batch_size": 10, "step": 0.3, "threads": 2, "feature_dtype": "float16"}'
"""
import argparse
import json
import os

import numpy as np

from kernelbench.data import load_dataset
from kernelbench.runner import trace
from kernelbench.solvers.asydsskl import AsyDSSKLClassifier


def load_split(name, valid):
    ds = load_dataset(name, progress=False)
    X = ds.X_train.toarray() if hasattr(ds.X_train, "toarray") else np.asarray(ds.X_train)
    X, y = X.astype(np.float32), np.asarray(ds.y_train)
    cut = int(round(len(y) * (1.0 - valid)))
    return X[:cut], y[:cut], X[cut:], y[cut:]


def accuracy_by(points, t):
    """Validation accuracy of the last point evaluated at or before t seconds (nan if none)."""
    before = [acc for seconds, _, acc in points if seconds <= t]
    return before[-1] if before else float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset")
    parser.add_argument("settings", nargs="+", help="JSON parameter settings")
    parser.add_argument("--valid", type=float, default=0.2)
    parser.add_argument("--at", type=lambda text: [float(t) for t in text.split(",")], default=[5.4, 9.4],
                        help="comma-separated times in seconds (default 5.4,9.4)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="summary lines only")
    args = parser.parse_args(argv)
    X, y, Xv, yv = load_split(args.dataset, args.valid)
    print(f"{args.dataset}: train {len(y)} rows, validation {len(yv)} rows (the last {args.valid:.0%})")
    for spec in args.settings:
        params = json.loads(spec)
        passes = params.pop("passes", 1)
        est = AsyDSSKLClassifier(**params, random_state=args.seed)
        seconds, points = 0.0, []
        # the runner's timing (set-up included); one point after every SVRG outer loop
        for point in trace(est, X, y, passes=passes, every=1, initial=False):
            seconds = point.train_seconds
            points.append((seconds, est.train_objective_, est.score(Xv, yv)))
            if not args.quiet:
                print(f"  loop {point.iteration:3d}  {seconds:6.2f} s  P(w~) {points[-1][1]:.5f}  "
                      f"validation {100 * points[-1][2]:.2f}%  |A| {est.n_random_features_}", flush=True)
        at = "  ".join(f"@{t:g}s {100 * accuracy_by(points, t):.2f}%" for t in args.at)
        print(f"{spec}\n  -> {at}  final {100 * points[-1][2]:.2f}% at {seconds:.2f} s, "
              f"{est.n_nonzero_} non-zero weights; load {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
