"""The README's full-scale table: every SUSY, HIGGS and HEPMASS config on its
synthetic replica, as published files, measured on this machine.

For each dataset: the replica's files are written once (`kernelbench datasets synth`), then loaded
once with a fresh parsed-array cache (the first-load time and MB/s: decompression + parse + cache).
For each config, one trial (`--trials 1`) at each thread count (2, then 1; a solver without threads
runs once): training time per pass (train_seconds / passes, set-up included; at 1 thread a
multi-pass config runs one pass, `--set stop.passes=1`, as every pass costs the same), and from the
2-thread run: peak resident memory, the evaluation time of the test part (predict_seconds, outside
the training timer) and the test error, beside the generator's Bayes error. Every run goes through `kernelbench run`; rows
are appended to <out>/fullsize.csv as they finish (a re-run skips the measured ones).

    .venv/bin/python scripts/fullsize_table.py --replicas /data/replicas      # hours: every config
    .venv/bin/python scripts/fullsize_table.py --replicas R --configs configs/susy_tsgs3vm.yaml
    .venv/bin/python scripts/fullsize_table.py --replicas R --table            # print the table only

Timings depend on the machine's load: the load average is recorded per row. Not a pass/fail test.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ["configs/susy_tsgs3vm.yaml", "configs/susy_frs3vm.yaml", "configs/susy_dsg_gu2018.yaml",
           "configs/susy_bsgd.yaml", "configs/susy_asydsskl_gu2018.yaml",
           "configs/higgs_tsgs3vm.yaml", "configs/higgs_frs3vm.yaml",
           "configs/hepmass_tsgs3vm.yaml", "configs/hepmass_frs3vm.yaml"]
COLUMNS = ["config", "dataset", "algorithm", "threads", "n_train", "passes", "train_seconds", "seconds_per_pass",
           "peak_memory_mb", "predict_seconds", "n_test", "test_error", "bayes_error", "status", "cells",
           "load_average", "run_folder"]
LOAD_COLUMNS = ["dataset", "file_mb", "text_mb", "seconds", "mb_per_s", "rows", "repairs", "peak_memory_mb"]


def kernelbench(*args, env):
    return subprocess.run([sys.executable, "-m", "kernelbench.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True)


def ensure_replica(name: str, replicas: Path, env) -> Path:
    from kernelbench.data.synthetic import SHAPES

    folder = replicas
    if not all((folder / f).is_file() for f in SHAPES[name].files):
        print(f"writing the {name} replica into {folder} ...", flush=True)
        proc = kernelbench("datasets", "synth", name, "--out", str(folder), "-q", env=env)
        if proc.returncode:
            sys.exit(proc.stderr)
    return folder


FIRST_LOAD = """
import json, resource, sys, time
from kernelbench.data import load_dataset
started = time.perf_counter()
ds = load_dataset(sys.argv[1], progress=False, dtype="float32")
seconds = time.perf_counter() - started
files = ds.provenance["files"]
print(json.dumps({"seconds": seconds, "rows": sum(f["rows"] for f in files),
                  "repairs": [f["repairs"] for f in files],
                  "peak_memory_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def first_load(name: str, replicas: Path, env) -> dict:
    """Load the dataset once with its cache emptied: the first-load time (every file)."""
    import shutil

    from kernelbench.data.synthetic import SHAPES

    cache = Path(env["KERNELBENCH_DATA"]) / "parsed"
    if cache.is_dir():
        shutil.rmtree(cache)
    proc = subprocess.run([sys.executable, "-c", FIRST_LOAD, name], cwd=REPO, env=env, capture_output=True,
                          text=True)
    if proc.returncode:
        sys.exit(proc.stderr)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    files = [replicas / f for f in SHAPES[name].files]
    text_mb = sum(json.loads(Path(str(f) + ".kernelbench-replica.json").read_text()).get("text_bytes", {})
                  .get(f.name, 0) for f in files) / 1e6
    return {"dataset": name, "file_mb": round(sum(f.stat().st_size for f in files) / 1e6),
            "text_mb": round(text_mb) or "", "seconds": round(out["seconds"], 1),
            "mb_per_s": round(text_mb / out["seconds"], 1) if text_mb else "", "rows": out["rows"],
            "repairs": json.dumps(out["repairs"]), "peak_memory_mb": round(out["peak_memory_mb"])}


def measure(config: str, threads: int | None, out: Path, env, one_pass: bool = False) -> dict:
    import yaml

    raw = yaml.safe_load((REPO / config).read_text())
    args = ["run", config, "--trials", "1", "--out", str(out / "runs"), "-q"]
    if threads is not None:
        args += ["--threads", str(threads)]
    passes = float(raw.get("stop", {}).get("passes", 1))
    if one_pass and passes > 1:          # a pass costs the same every time: time one of them
        args += ["--set", "stop.passes=1"]
        passes = 1.0
    load = os.getloadavg()[0]
    proc = kernelbench(*args, env=env)
    row = {"config": config, "dataset": raw["dataset"]["name"], "algorithm": raw["algorithm"]["name"],
           "threads": threads or "", "load_average": round(load, 2)}
    if proc.returncode:
        return {**row, "status": f"failed: {proc.stderr.strip().splitlines()[-1][:200]}"}
    folder = Path(proc.stdout.strip().splitlines()[-1].split("results: ", 1)[1]).parent
    meta = json.loads((folder / "run.json").read_text())
    from kernelbench.results import final_rows, read_results

    df = read_results(folder)
    final = final_rows(df)
    seconds = float(final["train_seconds"].mean())
    return {**row, "n_train": meta["dataset"]["n_train"], "passes": passes, "train_seconds": round(seconds, 1),
            "seconds_per_pass": round(seconds / passes, 1), "peak_memory_mb": round(meta.get("peak_memory_mb", 0)),
            "predict_seconds": round(float(final["predict_seconds"].mean()), 1), "n_test": meta["dataset"]["n_test"],
            "test_error": round(float(final["test_error"].mean()), 4),
            "bayes_error": meta["dataset"].get("synthetic", {}).get("bayes_error", ""),
            "status": ",".join(sorted(set(final["status"]))), "cells": len(final), "run_folder": str(folder)}


def append(path: Path, columns, row):
    new = not path.is_file()
    with open(path, "a", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        if new:
            writer.writeheader()
        writer.writerow({k: row.get(k, "") for k in columns})


def table(out: Path):
    import pandas as pd

    if (out / "loads.csv").is_file():
        loads = pd.read_csv(out / "loads.csv").drop_duplicates("dataset", keep="last")
        print("| replica | file | text | first load | MB/s | rows | repairs | peak memory |")
        print("|---|---|---|---|---|---|---|---|")
        for r in loads.itertuples():
            print(f"| {r.dataset} | {r.file_mb:,} MB | {r.text_mb:,} MB | {r.seconds:.0f} s | {r.mb_per_s} | "
                  f"{r.rows:,} | {r.repairs} | {r.peak_memory_mb:,} MB |")
    if not (out / "fullsize.csv").is_file():
        return
    df = pd.read_csv(out / "fullsize.csv").drop_duplicates(["config", "threads"], keep="last")
    print("\n| config | n train | s / pass, 1 thread | s / pass, 2 threads | peak memory | evaluation "
          "(test rows) | test error | Bayes error |")
    print("|---|---|---|---|---|---|---|---|")
    for config, group in df.groupby("config", sort=False):
        by = {str(t): r for t, r in zip(group["threads"].astype(object).fillna("").astype(str),
                                          group.itertuples())}
        one, two = by.get("1.0") or by.get("1"), by.get("2.0") or by.get("2")
        any_row = two or one or next(iter(by.values()))
        cell = lambda r: "" if r is None else f"{r.seconds_per_pass:,.0f}"     # noqa: E731
        if not (one or two):
            one_txt, two_txt = cell(any_row), "(no threads)"
        else:
            one_txt, two_txt = cell(one), cell(two)
        print(f"| {Path(config).stem} | {int(any_row.n_train):,} | {one_txt} | {two_txt} | "
              f"{any_row.peak_memory_mb:,.0f} MB | {any_row.predict_seconds:.1f} s ({int(any_row.n_test):,}) | "
              f"{any_row.test_error:.2%} | {any_row.bayes_error:.0%} |")
        if any_row.cells > 1:            # a grid config: the mean above, each cell below
            for label, cell_row in grid_cells(any_row.run_folder, any_row.passes):
                print(f"| &nbsp;&nbsp;{label} | | {cell_row['seconds_per_pass']:,.0f} | | | "
                      f"{cell_row['predict_seconds']:.1f} s | {cell_row['test_error']:.2%} | |")


def grid_cells(run_folder: str, passes: float):
    """(label, numbers) of every final row of a grid run: the parameters that differ between cells."""
    from kernelbench.results import final_rows, read_results

    final = read_results(run_folder)
    final = final_rows(final)
    params = [json.loads(p) for p in final["params"]]
    varying = [k for k in params[0] if len({json.dumps(p.get(k)) for p in params}) > 1]
    for p, r in zip(params, final.itertuples()):
        yield (", ".join(f"{k} {p[k]}" for k in varying),
               {"seconds_per_pass": r.train_seconds / passes, "predict_seconds": r.predict_seconds,
                "test_error": r.test_error})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=Path, required=True, help="folder of the replica files (written if absent)")
    parser.add_argument("--configs", nargs="+", default=CONFIGS)
    parser.add_argument("--threads", nargs="+", type=int, default=[2, 1])
    parser.add_argument("--out", type=Path, default=REPO / "results" / "bench" / "fullsize")
    parser.add_argument("--cache", type=Path, help="parsed-array cache (default <out>/cache)")
    parser.add_argument("--table", action="store_true", help="print the table from the CSVs and stop")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.table:
        return table(args.out)
    env = dict(os.environ, KERNELBENCH_MIRROR=str(args.replicas.resolve()),
               KERNELBENCH_DATA=str((args.cache or args.out / "cache").resolve()), KERNELBENCH_OFFLINE="1")
    import yaml

    from kernelbench.estimators import algorithms

    done = set()
    if (args.out / "fullsize.csv").is_file():
        with open(args.out / "fullsize.csv") as fh:
            done = {(r["config"], r["threads"]) for r in csv.DictReader(fh) if not r["status"].startswith("failed")}
    loaded = set()
    if (args.out / "loads.csv").is_file():
        with open(args.out / "loads.csv") as fh:
            loaded = {r["dataset"] for r in csv.DictReader(fh)}
    for config in args.configs:
        raw = yaml.safe_load((REPO / config).read_text())
        name = raw["dataset"]["name"]
        ensure_replica(name, args.replicas, env)
        if name not in loaded:
            row = first_load(name, args.replicas, env)
            append(args.out / "loads.csv", LOAD_COLUMNS, row)
            loaded.add(name)
            print(f"{name}: first load {row['seconds']} s ({row['mb_per_s']} MB/s)", flush=True)
        has_threads = "threads" in algorithms()[raw["algorithm"]["name"]].defaults()
        for threads in (args.threads if has_threads else [None]):
            key = (config, "" if threads is None else str(threads))
            if key in done:
                continue
            started = time.time()
            # the error, memory and evaluation columns come from the first thread count's full run;
            # the others time one pass of a multi-pass config
            row = measure(config, threads, args.out, env, one_pass=threads != args.threads[0])
            append(args.out / "fullsize.csv", COLUMNS, row)
            print(f"{config} threads={threads}: {row.get('status')}, {row.get('seconds_per_pass')} s/pass, "
                  f"error {row.get('test_error')} ({time.time() - started:.0f} s wall)", flush=True)
    table(args.out)


if __name__ == "__main__":
    main()
