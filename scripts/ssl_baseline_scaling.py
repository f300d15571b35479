"""Time and test error of a semi-supervised config at growing numbers of unlabeled points (the
points of Geng et al.'s Fig. 2, "running time vs training size").

    python scripts/ssl_baseline_scaling.py configs/cod_rna_tsvm_cccp.yaml --unlabeled 1000 2000 5000 full \
        --out results/ssl_baselines

For each size the config runs unchanged except dataset.subsample = labeled + size (a seeded random
subset of the training part; "full" keeps it all) and the run name gets the suffix `_nu<size>`.
Each run is an ordinary run folder (results.csv + run.json, the resolved config included); an O(n²)
baseline above its max_points writes its clean "skipped" row there.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from kernelbench.config import load_config
from kernelbench.experiment import run_experiment


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--unlabeled", nargs="+", required=True, help="unlabeled counts, or 'full'")
    parser.add_argument("--out", default="results/ssl_baselines")
    parser.add_argument("--trials", type=int, default=None, help="override the config's trials")
    args = parser.parse_args(argv)
    base = load_config(args.config)
    if base.dataset.labeled is None:
        parser.error(f"{args.config} has no dataset.labeled: not a semi-supervised config")
    for size in args.unlabeled:
        subsample = None if size == "full" else base.dataset.labeled + int(size)
        cfg = replace(base, name=f"{base.name}_nu{size}", tags=replace(base.tags, figure="fig2"), dataset=replace(base.dataset, subsample=subsample),
                      trials=args.trials or base.trials)
        path = run_experiment(cfg, out_dir=args.out, quiet=True, command=sys.argv)
        print(f"{cfg.name}: {path}", flush=True)


if __name__ == "__main__":
    main()
