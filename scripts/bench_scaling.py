"""`make bench`: cost growth of every binary solver on the SUSY replica, 50 k to 5 M rows.

For every registered algorithm that handles binary (or semi-supervised binary) data, read from the
registry, the script trains at log-spaced training sizes n of the SUSY replica (`dataset: {name:
synthetic, shape: susy}`; its first n rows are the n rows of any larger one) and records training
time, the process's peak memory and the test error. Each point is its own `kernelbench run`
process (so the peak memory is that process's own), with its own run folder under <out>/runs/.

Settings of each solver, read at run time (nothing copied here):
  * the SUSY config of that algorithm in configs/ (dataset.name: susy; configs named susy_* first,
    then gu_susy_*, then the others; the shortest name among equals): its algorithm.params (the grid
    is not expanded), its stop rule, its dataset.scale; udsg and cdsg without a config of their own
    take dsg's with the algorithm name swapped;
  * otherwise the algorithm's defaults, one pass, standardised features;
  * semi-supervised algorithms get `labeled: 200` (the config's own count when it has one);
  * `threads: --threads` for the algorithms that have the parameter (BLAS/OpenMP pinned to the same
    count in the environment).
Evaluation is kept to the end (evaluate.every huge, only test_error, n_test = --n-test) so the time
measured is training; `train_seconds` is the runner's: set-up (begin(): input checks, the median
trick, and for r-/n-Pegasos, r-/n-SDCA and SVRG-RF the feature map of the whole training set) plus
the timed run() chunks, evaluation excluded. `wall_seconds` is the whole process (start-up, data
generation, scaling, training, the final evaluation).

A solver stops growing n at the first point that
  * trains longer than --max-seconds (the config's stop gets `seconds: --max-seconds`; the runner
    reads the clock every 1% of a pass, so iterative solvers stop within 1% of a pass of it; one that
    cannot stop part-way, e.g. one LIBSVM solve, is killed at the wall-clock limit --max-seconds +
    --grace, its time then unknown but over the budget),           stopped = time
  * is refused by the solver's own budget (a `skipped` row: O(n²) baselines past max_samples /
    max_points, feature matrices past their memory budget),       stopped = budget
  * runs out of --max-memory-mb (address-space limit of the process), stopped = memory
  * fails otherwise,                                               stopped = error
and that row says why; the figure (kernelbench/figures/scaling.py) draws where each line stops.

Output (under --out, default results/bench/scaling):
  results.csv  one row per (solver, n): solver, n, train_seconds, peak_memory_mb, test_error,
               status, stopped, message, run_folder, ... (bench = "scaling"); rows of solvers not
               re-run in this invocation are kept, so solvers can be run in separate invocations
               (named results.csv so that `kernelbench figures` finds it; the figure reads it alone)
  bench.json   the options, machine, load average and the fitted slopes
  runs/        the run folders; configs/ the generated configs (`kernelbench run` any of them);
  logs/        each process's stdout + stderr
Printed: a table, and per solver the least-squares slope of log(train_seconds) on log(n) over its
finished points (and the range it was fitted on). Timings depend on the machine's load: the load
average is recorded. Not a pass/fail test.

    .venv/bin/python scripts/bench_scaling.py                            # everything: hours
    .venv/bin/python scripts/bench_scaling.py --max-seconds 300          # each training cut at 300 s
    .venv/bin/python scripts/bench_scaling.py --solvers dsg bsgd --sizes 20000 40000 80000
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SIZES = sorted({int(float(f"{n:.3g}")) for n in np.geomspace(5e4, 5e6, 6)})
DEFAULT_OUT = REPO / "results" / "bench" / "scaling"
SHAPE = "susy"
LABELED = 200
SHARES_CONFIG = {"udsg": "dsg", "cdsg": "dsg"}     # DSG's config, the algorithm name swapped
EVERY = 10**12                                      # "never" between the first and the last point
CSV_COLUMNS = ["bench", "experiment", "dataset", "solver", "n", "n_train", "train_seconds",
               "peak_memory_mb", "data_mb", "test_error", "status", "stopped", "message", "iteration",
               "samples_seen", "wall_seconds", "max_seconds", "max_memory_mb", "threads", "params",
               "stop_rule", "source_config", "run_folder"]


# ------------------------------------------------------------------ what to run

def binary_solvers() -> list[str]:
    from kernelbench.estimators import algorithms

    return sorted(name for name, spec in algorithms().items()
                  if "binary" in spec.tasks or "semi-supervised" in spec.tasks)


def find_config(solver: str, configs: Path) -> Path | None:
    """The SUSY config of `solver` in `configs` (see the module doc for the order), or None."""
    found = []
    for path in sorted(configs.glob("*.yaml")):
        try:
            raw = yaml.safe_load(path.read_text())
        except (OSError, yaml.YAMLError):
            continue
        if not isinstance(raw, dict):
            continue
        dataset, algorithm = raw.get("dataset"), raw.get("algorithm")
        name = algorithm.get("name") if isinstance(algorithm, dict) else algorithm
        if isinstance(dataset, dict) and dataset.get("name") == SHAPE and name == solver:
            rank = 0 if path.stem.startswith(f"{SHAPE}_") else 1 if path.stem.startswith(f"gu_{SHAPE}_") else 2
            found.append((rank, len(path.stem), path.stem, path))
    return min(found)[3] if found else None


def solver_settings(solver: str, configs: Path, threads: int) -> dict:
    """{params, stop, scale, labeled, source} for `solver`, from its SUSY config or its defaults."""
    from kernelbench.config import load_config
    from kernelbench.estimators import algorithms

    spec = algorithms()[solver]
    source = find_config(solver, configs)
    if source is None and solver in SHARES_CONFIG:
        source = find_config(SHARES_CONFIG[solver], configs)
    params, stop, scale, labeled, dtype = {}, {"passes": 1}, "standard", None, "float64"
    if source is not None:
        cfg = load_config(source)                   # validated; params with defaults filled in
        raw = yaml.safe_load(source.read_text())
        raw_params = (raw["algorithm"].get("params") or {}) if isinstance(raw["algorithm"], dict) else {}
        known = spec.defaults()
        params = {k: cfg.algorithm.params[k] for k in raw_params if k in known}   # what the config sets
        stop = {k: v for k, v in (("passes", cfg.stop.passes), ("iterations", cfg.stop.iterations),
                                  ("seconds", cfg.stop.seconds)) if v is not None}
        scale = cfg.dataset.scale
        labeled = cfg.dataset.labeled
        dtype = cfg.dataset.dtype
    if "semi-supervised" in spec.tasks:
        labeled = labeled or LABELED
    else:
        labeled = None
    if "threads" in spec.defaults():
        params["threads"] = threads
    return {"params": params, "stop": stop, "scale": scale, "labeled": labeled, "dtype": dtype,
            "source": str(source.relative_to(REPO)) if source and source.is_relative_to(REPO) else
            (str(source) if source else "")}


def point_config(solver: str, n: int, settings: dict, args) -> dict:
    stop = dict(settings["stop"])
    stop["seconds"] = min(stop.get("seconds", math.inf), float(args.max_seconds))
    dataset = {"name": "synthetic", "shape": SHAPE, "n": int(n), "n_test": int(args.n_test),
               "scale": settings["scale"], "dtype": settings["dtype"]}
    if settings["labeled"]:
        dataset["labeled"] = int(settings["labeled"])
    return {"name": f"bench_scaling-{solver}-n{n}", "dataset": dataset,
            "algorithm": {"name": solver, "params": settings["params"]},
            "trials": 1, "seed": args.seed, "stop": stop,
            "evaluate": {"every": EVERY, "on": ["test_error"]}}


# ------------------------------------------------------------------ one point = one process

def kernelbench_command() -> list[str]:
    script = Path(sys.executable).with_name("kernelbench")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from kernelbench.cli import main; sys.argv[0] = 'kernelbench'; main()"]


def run_point(config_path: Path, runs: Path, log_path: Path, *, wall_limit: float, memory_mb: float,
              threads: int) -> dict:
    """Run `kernelbench run` as a child process: {returncode, wall_seconds, peak_memory_mb,
    killed, run_folder, log_tail}. The child's peak RSS comes from wait4 (the kernel's rusage of
    that child alone), so it is known for a killed child too."""
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    env.setdefault("OMP_WAIT_POLICY", "passive")

    def limits():
        if memory_mb and memory_mb > 0:
            size = int(memory_mb * 2**20)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    command = kernelbench_command() + ["run", str(config_path), "--out", str(runs), "--quiet"]
    started = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, preexec_fn=limits, start_new_session=True)
        killed = False
        try:
            while True:
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    break
                if time.perf_counter() - started > wall_limit:
                    os.killpg(proc.pid, signal.SIGKILL)      # the child's own session: only what we started
                    killed = True
                    pid, status, usage = os.wait4(proc.pid, 0)
                    break
                time.sleep(0.2)
        except BaseException:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            raise
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    text = log_path.read_text(errors="replace")
    folder = ""
    for line in text.splitlines():
        if line.startswith("results: ") and line.endswith("results.csv"):
            folder = str(Path(line[len("results: "):]).parent)
    if not folder:                       # killed or failed: the newest folder of this experiment
        name = yaml.safe_load(config_path.read_text())["name"]
        candidates = sorted(runs.glob(f"{name}-*"), key=lambda p: p.stat().st_mtime)
        folder = str(candidates[-1]) if candidates else ""
    return {"returncode": proc.returncode, "wall_seconds": wall, "killed": killed,
            "peak_memory_mb": usage.ru_maxrss / 1024.0, "run_folder": folder,
            "log": text, "log_tail": (text.strip().splitlines() or [""])[-1][-400:]}


def point_row(solver: str, n: int, cfg: dict, settings: dict, outcome: dict, args) -> dict:
    """The summary row of one point: what the run's results.csv / run.json say, and why it stops."""
    import pandas as pd

    from kernelbench.data.synthetic import SHAPES
    from kernelbench.results import final_rows, read_results

    row = {"bench": "scaling", "experiment": cfg["name"], "dataset": f"synthetic {SHAPE} replica",
           "solver": solver, "n": n, "n_train": math.nan, "train_seconds": math.nan,
           "peak_memory_mb": outcome["peak_memory_mb"], "data_mb": n * SHAPES[SHAPE].d * 8 / 2**20,
           "test_error": math.nan, "status": "failed", "stopped": "", "message": "",
           "iteration": math.nan, "samples_seen": math.nan, "wall_seconds": outcome["wall_seconds"],
           "max_seconds": args.max_seconds, "max_memory_mb": args.max_memory_mb,
           "threads": args.threads, "params": json.dumps(settings["params"], sort_keys=True),
           "stop_rule": json.dumps(cfg["stop"], sort_keys=True), "source_config": settings["source"],
           "run_folder": outcome["run_folder"]}
    folder = Path(outcome["run_folder"]) if outcome["run_folder"] else None
    final = None
    if folder is not None and (folder / "results.csv").exists():
        frame = read_results(folder)
        last = final_rows(frame)
        final = last.iloc[-1] if len(last) else None
    if folder is not None and (folder / "run.json").exists():
        meta = json.loads((folder / "run.json").read_text())
        row["n_train"] = (meta.get("dataset") or {}).get("n_train", math.nan)
    if final is not None:
        for key in ("train_seconds", "test_error", "iteration", "samples_seen"):
            value = final.get(key)
            row[key] = math.nan if value is None or pd.isna(value) else float(value)
        row["status"] = str(final["status"])
        row["message"] = str(final.get("message", "") or "")
    if outcome["killed"]:
        row["status"], row["stopped"] = "skipped", "time"
        row["message"] = (f"killed at the wall-clock limit after {outcome['wall_seconds']:.0f} s "
                          f"(training budget {args.max_seconds:g} s)")
    elif final is None or outcome["returncode"] != 0:
        memory = any(word in outcome["log"][-5000:] for word in ("MemoryError", "Cannot allocate memory",
                                                                   "std::bad_alloc"))
        row["status"], row["stopped"] = "failed", "memory" if memory else "error"
        row["message"] = (f"exit code {outcome['returncode']}: {outcome['log_tail']}" if not memory else
                          f"out of memory under the {args.max_memory_mb:.0f} MB limit: {outcome['log_tail']}")
    elif row["status"] == "skipped":
        row["stopped"] = "budget"
    elif row["status"] == "ok" and row["train_seconds"] >= args.max_seconds:
        row["stopped"] = "time"
        row["message"] = (f"stopped at the {args.max_seconds:g} s training budget "
                          f"(iteration {row['iteration']:.0f})")
    return row


# ------------------------------------------------------------------ output

def write_summary(out: Path, rows: list[dict], solvers: list[str]):
    import pandas as pd

    from kernelbench.results import atomic_write_text

    path = out / "results.csv"
    frames = []
    if path.exists():       # keep the rows of solvers this invocation does not re-run
        old = pd.read_csv(path, dtype=str, keep_default_na=False)
        if "solver" in old.columns:
            frames.append(old[~old["solver"].isin(solvers)])
    new = pd.DataFrame(rows, columns=CSV_COLUMNS)
    for column in ("n", "n_train", "iteration", "samples_seen", "threads"):   # counts: no ".0"
        new[column] = pd.to_numeric(new[column], errors="coerce").round().astype("Int64")
    frames.append(new)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CSV_COLUMNS)
    atomic_write_text(path, table.to_csv(index=False))
    return path


def print_table(rows: list[dict], header=True):
    if header:
        print(f"{'solver':<10} {'n':>9} {'train s':>9} {'peak MB':>9} {'test err':>9}  status")
    for r in rows:
        seconds = "" if r["train_seconds"] != r["train_seconds"] else f"{r['train_seconds']:9.2f}"
        error = "" if r["test_error"] != r["test_error"] else f"{r['test_error']:9.4f}"
        status = r["status"] + (f", stopped: {r['stopped']}" if r["stopped"] else "")
        note = f"  ({r['message'][:150]})" if r["stopped"] else ""
        print(f"{r['solver']:<10} {r['n']:>9,} {seconds:>9} {r['peak_memory_mb']:9.0f} {error:>9}  {status}{note}",
              flush=True)


def print_slopes(rows: list[dict]) -> dict:
    import pandas as pd

    from kernelbench.figures.scaling import finished, fit_slope

    frame = pd.DataFrame(rows, columns=CSV_COLUMNS)
    frame["stopped"] = frame["stopped"].fillna("")
    good = finished(frame)
    result = {}
    print("\nlog-log slope of training time vs n (least squares over each solver's finished points):")
    for solver in sorted(frame["solver"].unique()):
        part = good[good["solver"] == solver]
        fit = fit_slope(part["n"], part["train_seconds"])
        stops = frame[(frame["solver"] == solver) & (frame["stopped"] != "")]
        stop = (f"; stopped at n = {int(stops['n'].iloc[0]):,} ({stops['stopped'].iloc[0]})"
                if len(stops) else "")
        result[solver] = {**fit, "stopped_at": int(stops["n"].iloc[0]) if len(stops) else None,
                          "stopped": stops["stopped"].iloc[0] if len(stops) else ""}
        if math.isfinite(fit["slope"]):
            print(f"  {solver:<10} slope {fit['slope']:5.2f} over n = {fit['n_min']:,}–{fit['n_max']:,} "
                  f"({fit['points']} points){stop}")
        else:
            print(f"  {solver:<10} no slope ({fit['points']} finished point{'s' if fit['points'] != 1 else ''}){stop}")
    return result


def _loadavg():
    try:
        return [float(v) for v in open("/proc/loadavg").read().split()[:3]]
    except OSError:
        return None


def _memory_total_mb() -> float:
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", type=int, default=DEFAULT_SIZES,
                        help=f"training sizes (default {' '.join(map(str, DEFAULT_SIZES))})")
    parser.add_argument("--solvers", nargs="+", default=None,
                        help="registered algorithms (default: every binary / semi-supervised one)")
    parser.add_argument("--max-seconds", type=float, default=900.0,
                        help="training-time budget of one point; a solver stops growing past it")
    parser.add_argument("--grace", type=float, default=180.0,
                        help="wall-clock slack for start-up, data generation, scaling and the final "
                             "evaluation: a point is killed after max_seconds + grace")
    parser.add_argument("--max-memory-mb", type=float, default=round(0.8 * _memory_total_mb()),
                        help="address-space limit of each point's process (0 = none; default 80%% "
                             "of this machine's memory)")
    parser.add_argument("--n-test", type=int, default=20000, help="test rows (evaluated once, at the end)")
    parser.add_argument("--threads", type=int, default=1, help="solver threads (and BLAS/OpenMP threads)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--configs", type=Path, default=REPO / "configs",
                        help="where the solvers' SUSY configs are read from")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)

    available = binary_solvers()
    solvers = args.solvers or available
    unknown = [s for s in solvers if s not in available]
    if unknown:
        parser.error(f"not binary solvers of the registry: {', '.join(unknown)}; choose from {', '.join(available)}")
    sizes = sorted(set(args.sizes))
    out = args.out.resolve()
    for sub in ("runs", "configs", "logs"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now(dt.timezone.utc)
    load_before = _loadavg()
    print(f"SUSY replica, sizes {', '.join(f'{n:,}' for n in sizes)}; budget {args.max_seconds:g} s and "
          f"{args.max_memory_mb:.0f} MB per point; threads={args.threads}; load average {load_before}",
          flush=True)
    rows = []
    for solver in solvers:
        settings = solver_settings(solver, args.configs, args.threads)
        print(f"== {solver}: params {json.dumps(settings['params'], sort_keys=True)}, stop "
              f"{json.dumps(settings['stop'])}, scale {settings['scale']}"
              + (f", labeled {settings['labeled']}" if settings["labeled"] else "")
              + f" (from {settings['source'] or 'the defaults'})", flush=True)
        for n in sizes:
            cfg = point_config(solver, n, settings, args)
            config_path = out / "configs" / f"{cfg['name']}.yaml"
            config_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
            outcome = run_point(config_path, out / "runs", out / "logs" / f"{cfg['name']}.log",
                                wall_limit=args.max_seconds + args.grace,
                                memory_mb=args.max_memory_mb, threads=args.threads)
            row = point_row(solver, n, cfg, settings, outcome, args)
            rows.append(row)
            print_table([row], header=n == sizes[0])
            write_summary(out, rows, solvers)          # after every point: a kill loses nothing
            if row["stopped"]:
                break
    fitted = print_slopes(rows)
    path = write_summary(out, rows, solvers)
    from kernelbench.results import atomic_write_text

    atomic_write_text(out / "bench.json", json.dumps({
        "bench": "scaling", "started": started.isoformat(), "ended": dt.datetime.now(dt.timezone.utc).isoformat(),
        "sizes": sizes, "solvers": solvers, "max_seconds": args.max_seconds, "grace": args.grace,
        "max_memory_mb": args.max_memory_mb, "n_test": args.n_test, "threads": args.threads, "seed": args.seed,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "memory_mb": _memory_total_mb()},
        "load_average": {"before": load_before, "after": _loadavg()}, "slopes": fitted}, indent=1))
    print(f"\nload average: {_loadavg()}")
    print(f"summary: {path}  (figure: kernelbench figures {out} --out {out / 'figures'})")


if __name__ == "__main__":
    main()
