"""Falkon's time and test error against its number of centres M on the SUSY replica (README, "Full
scale"): one `kernelbench run` per M, evaluated after every CG iteration, then a table of set-up
time, time per iteration, the final error and the error reached within given training times.

    python scripts/bench_falkon_centres.py --variant 2 --gamma 0.05 --C 0.2222 \\
        --centres 1024:20 2048:20 4096:12 8192:8 --at 130 180

γ and C are inputs: choose them on the training part (never the test part) before running this.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml
from bench_scaling import kernelbench_command

from kernelbench.data.synthetic import VARIANTS
from kernelbench.results import read_results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", type=int, default=2, choices=VARIANTS, help="the replica's generator")
    ap.add_argument("--n", type=int, default=None, help="training rows (default: the published 4.5 M)")
    ap.add_argument("--gamma", type=float, required=True)
    ap.add_argument("--C", type=float, required=True, help="λ = 1/(n C)")
    ap.add_argument("--centres", nargs="+", default=["1024:20", "2048:20", "4096:12", "8192:8"],
                    help="M:iterations pairs")
    ap.add_argument("--at", nargs="*", type=float, default=[130.0, 180.0],
                    help="also print the error reached within these training seconds")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("results/bench/falkon_centres"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    lines = []
    for pair in args.centres:
        M, iterations = (int(v) for v in pair.split(":"))
        dataset = {"name": "synthetic", "shape": "susy", "variant": args.variant, "test": "official",
                   "scale": "standard", "dtype": "float32"}
        if args.n:
            dataset["n"] = args.n
        config = {"name": f"falkon_susy_v{args.variant}_M{M}", "dataset": dataset,
                  "algorithm": {"name": "falkon", "params": {"C": args.C, "gamma": args.gamma, "n_centers": M,
                                                             "max_iter": iterations, "threads": args.threads}},
                  "trials": 1, "seed": 0, "stop": {"iterations": iterations},
                  "evaluate": {"every": 1, "on": ["test_error"]}}
        path = args.out / f"{config['name']}.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        runs = args.out / "runs" / config["name"]
        done = subprocess.run([*kernelbench_command(), "run", str(path), "--out", str(runs), "--quiet"], check=False)
        if done.returncode != 0:
            sys.exit(f"kernelbench run {path} failed ({done.returncode})")
        rows = read_results(max(runs.iterdir(), key=lambda p: p.stat().st_mtime))
        rows = rows[rows["fold"].isna()] if "fold" in rows else rows
        rows = rows.sort_values("iteration")
        setup = float(rows["train_seconds"].iloc[0])
        last = rows.iloc[-1]
        per = (float(last["train_seconds"]) - setup) / max(1, int(last["iteration"]))
        cells = [f"{M:,}", f"{setup:.1f}", f"{per:.1f}", f"{int(last['iteration'])}",
                 f"{float(last['train_seconds']):.0f}", f"{100 * float(last['test_error']):.2f} %"]
        for seconds in args.at:
            within = rows[rows["train_seconds"] <= seconds]
            cells.append(f"{100 * float(within['test_error'].iloc[-1]):.2f} % ({int(within['iteration'].iloc[-1])} it.)"
                         if len(within) else "—")
        lines.append("| " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    head = ["M", "set-up s", "s / iteration", "iterations", "train s", "test error"] + [f"error at {s:g} s" for s in args.at]
    print("\n| " + " | ".join(head) + " |\n|" + "---:|" * len(head))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
