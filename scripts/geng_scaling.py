"""Geng et al. (IJCAI 2019) Fig. 2: training time vs training size. For each dataset and method
whose config exists (configs/<dataset>_<method>.yaml: tsgs3vm, frs3vm, and part B's bgs3vm,
tsvm_ls, tsvm_cccp when present), runs the config on training subsamples of growing size
(dataset.subsample; 200 labeled rows, the rest unlabeled, the test part as configured) and names
each run "geng_scaling-<dataset>-<method>-n<size>", tagged figure: fig2 so that kernelbench/figures/geng_s3vm.py can
plot it and print the log-log slope. O(n²) baselines write "skipped" rows past their budget.

    .venv/bin/python scripts/geng_scaling.py --datasets cod_rna ijcnn1 skin_nonskin \
        --sizes 5000 10000 20000 40000 --trials 3 --out results/geng_s3vm/scaling
"""
import argparse
import sys
from dataclasses import replace
from pathlib import Path

from kernelbench.config import load_config
from kernelbench.errors import KernelbenchError
from kernelbench.experiment import run_experiment

REPO = Path(__file__).resolve().parents[1]
METHODS = ("tsgs3vm", "frs3vm", "bgs3vm", "tsvm_ls", "tsvm_cccp")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["cod_rna", "ijcnn1", "skin_nonskin", "dota2", "w8a"])
    parser.add_argument("--methods", nargs="+", default=list(METHODS))
    parser.add_argument("--sizes", nargs="+", type=int, default=[5000, 10000, 20000, 40000])
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--out", default=str(REPO / "results" / "geng_s3vm" / "scaling"))
    args = parser.parse_args(argv)
    for dataset in args.datasets:
        for method in args.methods:
            path = REPO / "configs" / f"{dataset}_{method}.yaml"
            if not path.exists():
                continue
            for size in args.sizes:
                try:
                    cfg = load_config(path, overrides={"dataset.subsample": size, "trials": args.trials})
                    cfg = replace(cfg, name=f"geng_scaling-{dataset}-{method}-n{size}", grid={}, tags=replace(cfg.tags, figure="fig2"))
                    folder = run_experiment(cfg, out_dir=args.out, quiet=True)
                    print(f"{dataset} {method} n={size}: {folder}", flush=True)
                except KernelbenchError as e:      # e.g. a subsample larger than the data
                    print(f"{dataset} {method} n={size}: {e}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
