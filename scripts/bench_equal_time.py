"""Every method on one real data set at the same wall time (README, "Full scale"): the papers'
solvers and the Falkon peer through `kernelbench run` of their configs for that set, with
`stop: {seconds: T}` in place of the config's (a solver that converges first ends there); scikit-learn's
RBFSampler + SGDClassifier (epochs while within T, bench_fullscale.py's) and exact SVMs on the largest
doubling subsample that fits within T (bench_fullscale.py's). One trial each, evaluated once at the
end on the data set's test part; one process at a time.

    python scripts/bench_equal_time.py --dataset ijcnn1 --seconds 30 --threads 2
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import yaml
from bench_fullscale import exact_svm, rff_sgd  # scripts/ is on sys.path
from bench_scaling import REPO, kernelbench_command

from kernelbench.data import load_dataset, prepare
from kernelbench.results import final_rows, read_results
from kernelbench.solvers.kernels import median_gamma

# data set -> the configs run at T (the papers' solvers, then the peer); absent ones are skipped
CONFIGS = ("{d}_dsg_gu2018", "{d}_udsg_li2016", "{d}_cdsg_li2016", "{d}_asydsskl_gu2018", "{d}_bsgd",
           "{d}_falkon_gu2018", "{d}_falkon_dai2014")


def run_config(path: Path, seconds: float, threads: int, out: Path) -> dict:
    cfg = yaml.safe_load(path.read_text())
    for key in ("grid", "search", "tune"):
        cfg.pop(key, None)
    params = cfg["algorithm"].setdefault("params", {}) if isinstance(cfg["algorithm"], dict) else {}
    if "threads" in params:
        params["threads"] = threads
    # T alone: a config's passes or iterations would end it early (Falkon's max_iter still does)
    stop = {"seconds": seconds}
    cfg.update(trials=1, stop=stop, evaluate={"every": 10**12, "on": ["test_error"]})
    written = out / path.name
    written.write_text(yaml.safe_dump(cfg, sort_keys=False))
    runs = out / "runs" / path.stem
    done = subprocess.run([*kernelbench_command(), "run", str(written), "--out", str(runs), "--quiet"],
                          check=False, capture_output=True, text=True)
    if done.returncode != 0:
        return {"method": path.stem, "status": "failed", "note": done.stderr.strip().splitlines()[-1:]}
    last = final_rows(read_results(next(runs.iterdir()))).iloc[-1]
    return {"method": f"{cfg['algorithm']['name']} ({path.stem})", "train_seconds": float(last["train_seconds"]),
            "test_error": float(last["test_error"]), "status": str(last["status"]),
            "note": f"stop {json.dumps(stop)}"}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--seconds", type=float, required=True, help="T, the shared wall time")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rff-components", type=int, default=2048)
    ap.add_argument("--svm", nargs="*", default=["sklearnex"], choices=["libsvm", "sklearnex"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=REPO / "results" / "bench" / "equal_time")
    args = ap.parse_args(argv)
    out = args.out.resolve() / args.dataset
    out.mkdir(parents=True, exist_ok=True)

    paths = [p for p in (REPO / "configs" / f"{c.format(d=args.dataset)}.yaml" for c in CONFIGS) if p.exists()]
    if not paths:
        sys.exit(f"no config of {CONFIGS} for {args.dataset} in configs/")
    rows = []
    for path in paths:
        rows.append(run_config(path, args.seconds, args.threads, out))
        print(rows[-1], flush=True)

    # the scikit-learn pipelines get the data of the first config (its set, test part and subsample),
    # standardised
    spec = yaml.safe_load(paths[0].read_text())["dataset"]
    raw = load_dataset(spec["name"], test=spec.get("test", "official"), progress=False)
    data = prepare(raw, subsample=spec.get("subsample"), scale="standard", seed=args.seed)
    if hasattr(data.X_train, "toarray"):
        data.X_train, data.X_test = data.X_train.toarray(), data.X_test.toarray()
    gamma = median_gamma(data.X_train, seed=args.seed)
    rows.append(rff_sgd(data, gamma, components=args.rff_components, seconds=args.seconds,
                        threads=args.threads, seed=args.seed))
    print(rows[-1], flush=True)
    svm_args = SimpleNamespace(svm_C=1.0, svm_start=2000, threads=args.threads, seed=args.seed)
    with tempfile.TemporaryDirectory() as workdir:
        np.save(os.path.join(workdir, "train.X.npy"), np.asarray(data.X_train))
        np.save(os.path.join(workdir, "train.y.npy"), np.asarray(data.y_train))
        for kind in args.svm:
            rows.append(exact_svm(kind, data, gamma, args.seconds, workdir, svm_args))
            print(rows[-1], flush=True)

    print(f"\n{args.dataset}, T = {args.seconds:g} s, {args.threads} threads\n")
    print("| method | seconds | test error | note |\n|---|---:|---:|---|")
    for r in rows:
        err = f"{100 * r['test_error']:.2f} %" if r.get("test_error") is not None else r.get("status")
        secs = f"{r['train_seconds']:.1f}" if r.get("train_seconds") is not None else "—"
        n = f"n = {r['n_train']:,}; " if r.get("n_train") else ""
        print(f"| {r['method']} | {secs} | {err} | {n}{r.get('note', '')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
