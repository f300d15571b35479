"""`make bench`: the papers' solvers against what a user would pick at full SUSY / HIGGS size, same wall time.

One run, on the SUSY replica (--shape higgs: the HIGGS replica) at its published size (SUSY 4.5 M
training rows, HIGGS 10.5 M, 500 k test rows each; `--n` / `--n-test` shrink it), printed side by side
and written to <out>/fullscale.csv (default results/bench/fullscale.csv) for the README table:

1. RFF + SGD, the usual large-scale pipeline: scikit-learn's RBFSampler(n_components=2048) and
   SGDClassifier(loss="hinge", alpha=--rff-alpha, scikit-learn's default 1e-4), partial_fit over
   chunks of --chunk-rows rows (the 4.5 M × 2048 feature matrix, 74 GB, never exists), on
   standardised features, gamma by the median trick (kernelbench.solvers.kernels.median_gamma on the
   training part, the rule our solvers use for gamma: median). Without --seconds it runs one epoch
   and its wall time T_rff = transform + fit is the shared budget; with --seconds T it runs epochs
   (or part of one) while within T. The test part is transformed and scored after, untimed.
2. Ours: dsg, udsg, cdsg, asydsskl and bsgd with the params and stop rule of their full-size SUSY
   config (configs/susy_dsg_gu2018.yaml, susy_udsg.yaml, susy_cdsg.yaml, susy_asydsskl_gu2018.yaml
   with its subsample, susy_bsgd.yaml's first grid cell; the lookup of scripts/bench_scaling.py, read
   at run time) and `stop.seconds: T_rff` added, through `kernelbench run` (the runner times
   set-up and training, reads the clock every 1% of a pass, and scores the test part once, at the
   end, outside the timer). The verdict line says whether each reached a lower test error than
   RFF + SGD.
   The peer, what users pick at this size though no paper ran it (--peers): Falkon with its SUSY
   config (configs/susy_falkon_gu2018.yaml: the Falkon paper's settings, M = 1,024), the same way.
3. Exact SVMs on the largest training prefix (the replica's rows are i.i.d.) whose fit finishes
   within T_rff: LIBSVM through scikit-learn's SVC (our `libsvm` algorithm) and oneDAL's SVC from
   scikit-learn-intelex (our `libsvm-p`; x86-64 wheels only: the script says so when it is
   absent). Sizes grow ×2 from --svm-start; each fit runs in its own
   process, killed once it passes T_rff; the largest finished size is scored on the whole test
   part. Both get the same C (--svm-C, default 1, LIBSVM's default) and the same gamma: the median
   trick of item 1 on the standardised features. Chosen without the test part.
4. With --references: our TSGS3VM SUSY config (200 labels: not comparable at equal time; its own
   params and stop rule, one trial) through `kernelbench run`, for reference: its own time, not T_rff.

--shape higgs keeps every solver's SUSY config settings: none was chosen on HIGGS.

--variant 2 (or 3) generates a held-out replica (kernelbench.data.synthetic: another decision function
and noise level) that no config was chosen on: a schedule that holds only on variant 1 shows here.

Threads: --threads for our solvers, the BLAS of the RFF pipeline and oneDAL; LIBSVM has one.
Timings depend on the machine's load: the load average is printed. Not a pass/fail test.

    .venv/bin/python scripts/bench_fullscale.py                  # full size (the long run)
    .venv/bin/python scripts/bench_fullscale.py --n 200000 --n-test 50000
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import pickle
import queue
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_scaling import REPO, _loadavg, run_point, solver_settings  # noqa: E402  (scripts/ is on sys.path)

OURS = ("dsg", "udsg", "cdsg", "asydsskl", "bsgd")
PEERS = ("falkon",)          # no paper ran it: what users pick at this size (configs/susy_falkon_gu2018.yaml)
REFERENCES = ("tsgs3vm",)
PREDICT_ROWS = 50_000
CSV_COLUMNS = ["method", "kind", "n_train", "train_seconds", "budget_seconds", "test_error", "status",
               "note", "params", "source_config", "threads", "dataset", "bayes_error", "n_test"]


# ------------------------------------------------------------------ data

def load(shape: str, n: int, n_test: int, seed: int, data_seed: int, variant: int):
    from kernelbench.data import load_dataset

    return load_dataset("synthetic", test="official", progress=False,
                        synthetic={"shape": shape, "n": n, "n_test": n_test, "seed": data_seed,
                                   "variant": variant})


def error_of(predict, X, y) -> float:
    """Test error, predicting PREDICT_ROWS rows at a time (bounded memory)."""
    wrong = 0
    for r0 in range(0, X.shape[0], PREDICT_ROWS):
        wrong += int(np.sum(np.asarray(predict(X[r0:r0 + PREDICT_ROWS])) != y[r0:r0 + PREDICT_ROWS]))
    return wrong / X.shape[0]


# ------------------------------------------------------------------ 1. RFF + SGD

def rff_sgd(data, gamma: float, *, components: int, seconds: float | None = None, alpha: float = 1e-4,
            chunk_rows: int = 10_000, threads: int = 1, seed: int = 0, cache_mb: float = 2048) -> dict:
    """scikit-learn's RBFSampler + SGDClassifier (hinge) by partial_fit over chunks of rows: one epoch
    (`seconds` None: its time is T_rff), or epochs while within `seconds` (the clock read after every
    chunk). The transformed chunks are kept for later epochs when they fit in `cache_mb` (small sets);
    at millions of rows the n x components matrix never exists (4.5 M x 2048: 74 GB)."""
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.linear_model import SGDClassifier
    from threadpoolctl import threadpool_limits

    X, y = data.X_train, data.y_train
    classes = np.unique(y)
    rff = RBFSampler(gamma=gamma, n_components=components, random_state=seed)
    clf = SGDClassifier(loss="hinge", alpha=alpha, random_state=seed)
    keep = X.shape[0] * components * 8 <= cache_mb * 2**20
    chunks = range(0, X.shape[0], chunk_rows)
    cached, steps, rows_seen = {}, 0, 0
    with threadpool_limits(limits=threads, user_api="blas"):
        started = time.perf_counter()
        rff.fit(X[:1])                                     # draws ω; needs only the dimension
        while True:
            r0 = chunks[steps % len(chunks)]
            Z = cached.get(r0)
            if Z is None:
                Z = rff.transform(X[r0:r0 + chunk_rows])
                if keep:
                    cached[r0] = Z
            clf.partial_fit(Z, y[r0:r0 + chunk_rows], classes=classes)
            rows_seen += Z.shape[0]
            steps += 1
            if (time.perf_counter() - started >= seconds) if seconds is not None else steps == len(chunks):
                break
        took = time.perf_counter() - started
        error = error_of(lambda A: clf.predict(rff.transform(A)), data.X_test, data.y_test)
    budget = "one epoch" if seconds is None else f"{rows_seen / X.shape[0]:.3g} epochs within {seconds:g} s"
    return {"method": f"RFF({components}) + SGD (hinge)", "kind": "user pipeline", "n_train": X.shape[0],
            "train_seconds": took, "test_error": error, "status": "ok",
            "note": f"scikit-learn RBFSampler + SGDClassifier.partial_fit, chunks of {chunk_rows:,}; {budget}",
            "params": json.dumps({"gamma": gamma, "n_components": components, "alpha": alpha, "loss": "hinge"})}


# ------------------------------------------------------------------ 2. ours, same wall time

def ours(name: str, budget: float, args, out: Path, kind: str = "ours") -> dict:
    """One of our solvers (or a peer) through `kernelbench run`, its full-size config's params and
    stop rule with `stop.seconds: T_rff` added: the runner reads the clock every 1% of a pass (every
    iteration of Falkon, which is one pass) and counts set-up (begin) as training, so `train_seconds`
    is at most about T_rff plus 1% of a pass -- for Falkon plus one pass, and its set-up (a pass
    and two M×M Cholesky factorisations) cannot be cut."""
    row = run_config(name, kind, {"seconds": budget}, args, out, wall_limit=budget * 3 + 600)
    row["note"] = f"stopped at T_rff or the config's stop rule; {row.get('note', '')}"
    return row


# ------------------------------------------------------------------ 3. exact SVMs within T_rff

def _svm_child(kind, path, m, C, gamma, threads, seed, out):
    """In its own process: fit on the first m rows, report the fit time, send the model back."""
    try:
        X = np.ascontiguousarray(np.load(path + ".X.npy", mmap_mode="r")[:m])
        y = np.ascontiguousarray(np.load(path + ".y.npy", mmap_mode="r")[:m])
        from kernelbench.estimators import algorithms

        if kind == "libsvm":
            model = algorithms()["libsvm"].build({"C": C, "gamma": gamma}, seed=seed, task="binary")
        else:                               # oneDAL: our `libsvm-p` on `threads` cores
            model = algorithms()["libsvm-p"].build({"C": C, "gamma": gamma, "threads": threads}, seed=seed,
                                                   task="binary")
        out.put(("ready",))
        started = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - started
        out.put(("fit", seconds, pickle.dumps(model)))
    except BaseException as e:              # noqa: BLE001  (reported to the parent, which goes on)
        out.put(("error", f"{type(e).__name__}: {e}"))


def exact_svm(kind: str, data, gamma: float, budget: float, workdir: str, args) -> dict:
    label = {"libsvm": "LIBSVM (scikit-learn SVC)", "sklearnex": "oneDAL SVC (scikit-learn-intelex)"}[kind]
    row = {"method": label, "kind": "exact SVM", "params": json.dumps({"C": args.svm_C, "gamma": gamma})}
    if kind == "sklearnex":
        try:
            from importlib.metadata import version

            import sklearnex  # noqa: F401
            row["note"] = f"scikit-learn-intelex {version('scikit-learn-intelex')}"
        except ImportError:
            print(f"{label}: scikit-learn-intelex is not installed (pip install scikit-learn-intelex; "
                  "x86-64 wheels only): skipped", flush=True)
            return {**row, "status": "absent", "note": "scikit-learn-intelex not installed"}
    ctx = multiprocessing.get_context("spawn")
    n_max = data.X_train.shape[0]
    sizes = []
    m = args.svm_start
    while m < n_max:
        sizes.append(m)
        m *= 2
    sizes.append(n_max)
    best, attempts = None, []
    for m in sizes:
        channel = ctx.Queue()
        proc = ctx.Process(target=_svm_child, args=(kind, os.path.join(workdir, "train"), m, args.svm_C,
                                                   gamma, args.threads, args.seed, channel))
        proc.start()
        outcome = None
        try:
            message = channel.get(timeout=600)                     # imports + data, untimed
            if message[0] == "ready":
                message = channel.get(timeout=budget + 5)          # the fit: killed past T_rff
            outcome = message
        except queue.Empty:
            outcome = ("timeout",)
        finally:
            if proc.is_alive():
                proc.kill()
            proc.join()
        if outcome[0] == "fit" and outcome[1] <= budget:
            best = (m, outcome[1], pickle.loads(outcome[2]))
            attempts.append(f"{m:,}: {outcome[1]:.1f} s")
            print(f"  {label}: n = {m:,} fitted in {outcome[1]:.1f} s", flush=True)
            continue
        why = {"fit": lambda o: f"{o[1]:.1f} s > T", "timeout": lambda o: "killed at T",
               "error": lambda o: o[1]}[outcome[0]](outcome)
        attempts.append(f"{m:,}: {why}")
        print(f"  {label}: n = {m:,} did not finish within {budget:.1f} s ({why})", flush=True)
        break
    note = (row.get("note", "") + "; " if row.get("note") else "") + "sizes tried: " + ", ".join(attempts)
    if best is None:
        return {**row, "status": "none finished", "note": note}
    m, seconds, model = best
    error = error_of(model.predict, data.X_test, data.y_test)
    return {**row, "n_train": m, "train_seconds": seconds, "test_error": error, "status": "ok", "note": note}


# ------------------------------------------------------------------ 4. references (optional)

def reference(name: str, args, out: Path) -> dict:
    return run_config(name, "reference", {}, args, out, wall_limit=args.reference_seconds)


def run_config(name: str, kind: str, stop_extra: dict, args, out: Path, *, wall_limit: float) -> dict:
    """`kernelbench run` of `name`'s SUSY config (params, stop rule, scale, dtype, subsample) on the
    replica at --n / --n-test, one trial, evaluated once at the end; the final row's numbers."""
    import yaml

    from bench_scaling import find_config
    from kernelbench.config import load_config
    from kernelbench.results import final_rows, read_results

    settings = solver_settings(name, args.configs, args.threads)
    source = find_config(name, args.configs)
    dataset = {"name": "synthetic", "shape": args.shape, "n": args.n, "n_test": args.n_test,
               "scale": settings["scale"], "dtype": settings["dtype"], "data_seed": args.data_seed,
               "variant": args.variant}
    if source is not None:
        cfg = load_config(source)
        if cfg.dataset.subsample and cfg.dataset.subsample < args.n:
            dataset["subsample"] = int(cfg.dataset.subsample)
    if settings["labeled"]:
        dataset["labeled"] = int(settings["labeled"])
    config = {"name": f"bench_fullscale-{name}", "dataset": dataset,
              "algorithm": {"name": name, "params": settings["params"]}, "trials": 1, "seed": args.seed,
              "stop": {**settings["stop"], **stop_extra}, "evaluate": {"every": 10**12, "on": ["test_error"]}}
    folder = out / "fullscale"
    (folder / "runs").mkdir(parents=True, exist_ok=True)
    path = folder / f"{config['name']}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    outcome = run_point(path, folder / "runs", folder / f"{config['name']}.log", wall_limit=wall_limit,
                        memory_mb=0, threads=args.threads)
    row = {"method": name, "kind": kind, "params": json.dumps(settings["params"], sort_keys=True),
           "source_config": settings["source"], "n_train": dataset.get("subsample", args.n),
           "status": "failed", "note": f"stop {json.dumps(config['stop'])}; run {outcome['run_folder']}"}
    if outcome["run_folder"] and (Path(outcome["run_folder"]) / "results.csv").exists():
        final = read_results(outcome["run_folder"])
        final = final_rows(final)
        if len(final):
            last = final.iloc[-1]
            row.update(train_seconds=float(last["train_seconds"]), test_error=float(last["test_error"]),
                       status=str(last["status"]))
            passes = float(last["samples_seen"]) / max(1, dataset.get("subsample", args.n))
            row["note"] = f"{int(last['iteration']):,} iterations, {passes:.3g} passes; " + row["note"]
    if outcome["killed"]:
        row["status"], row["note"] = "killed", f"killed after {wall_limit:g} s; " + row["note"]
    elif outcome["returncode"] and row["status"] == "failed":
        row["note"] = f"{outcome['log_tail']}; " + row["note"]
    return row


# ------------------------------------------------------------------ main

def main(argv=None):
    from kernelbench.data.synthetic import SHAPES, VARIANTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shape", default="susy", choices=("susy", "higgs"),
                        help="the replica: SUSY's shape or HIGGS's (both in kernelbench.data.synthetic)")
    parser.add_argument("--n", type=int, default=None, help="training rows of the replica (default: the published size)")
    parser.add_argument("--n-test", type=int, default=None, help="test rows of the replica (default: 500,000)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="the shared time budget (default: T_rff, the RFF + SGD pipeline's time)")
    parser.add_argument("--rff-components", type=int, default=2048)
    parser.add_argument("--rff-alpha", type=float, default=1e-4, help="SGDClassifier's alpha (its default)")
    parser.add_argument("--chunk-rows", type=int, default=10_000, help="rows per partial_fit call")
    parser.add_argument("--ours", nargs="*", default=list(OURS), help="our solvers at the same wall time")
    parser.add_argument("--peers", nargs="*", default=list(PEERS),
                        help="methods no paper ran (Falkon), at the same wall time")
    parser.add_argument("--variant", type=int, default=1, choices=VARIANTS,
                        help="the replica's generator: 1 (the configs were chosen on it), 2 or 3 (held out)")
    parser.add_argument("--svm", nargs="*", default=["libsvm", "sklearnex"], choices=["libsvm", "sklearnex"],
                        help="exact SVMs grown within the budget (none: --svm)")
    parser.add_argument("--svm-start", type=int, default=2000, help="first subsample size (doubled)")
    parser.add_argument("--svm-C", type=float, default=1.0)
    parser.add_argument("--references", action="store_true",
                        help=f"also run our {', '.join(REFERENCES)} SUSY configs (their own time)")
    parser.add_argument("--reference-seconds", type=float, default=3600.0,
                        help="wall-clock limit of each reference run")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-seed", type=int, default=0)
    parser.add_argument("--configs", type=Path, default=REPO / "configs")
    parser.add_argument("--out", type=Path, default=REPO / "results" / "bench")
    args = parser.parse_args(argv)
    args.n = args.n or SHAPES[args.shape].n_train
    args.n_test = args.n_test or SHAPES[args.shape].n_test

    import pandas as pd

    from kernelbench.results import atomic_write_text
    from kernelbench.solvers.kernels import median_gamma

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    print(f"load average: {_loadavg()}  threads={args.threads}", flush=True)
    started = time.perf_counter()
    from kernelbench.data import prepare

    raw = load(args.shape, args.n, args.n_test, args.seed, args.data_seed, args.variant)
    standard = prepare(raw, scale="standard", seed=args.seed)
    bayes = raw.provenance.get("synthetic", {}).get("bayes_error", math.nan)
    print(f"{args.shape.upper()} replica (variant {args.variant}): {standard.X_train.shape[0]:,} training, {standard.X_test.shape[0]:,} test rows, "
          f"d = {standard.X_train.shape[1]}, Bayes error {bayes:.3f}; generated and scaled in "
          f"{time.perf_counter() - started:.1f} s", flush=True)
    gamma = median_gamma(standard.X_train, seed=args.seed)
    rows = []

    def emit(row):
        row = {"threads": args.threads, "dataset": f"synthetic {args.shape} replica (variant {args.variant})", "bayes_error": bayes,
               "n_test": standard.X_test.shape[0], **row}
        rows.append(row)
        seconds = row.get("train_seconds", math.nan)
        error = row.get("test_error", math.nan)
        print(f"{row['method']:<42} {row.get('n_train', 0) or 0:>10,} "
              f"{'' if seconds != seconds else f'{seconds:9.1f}':>9} "
              f"{'' if error != error else f'{100 * error:8.2f}%':>9}  {row['status']}"
              f"{'  ' + row['note'] if row.get('note') else ''}", flush=True)
        table = pd.DataFrame(rows, columns=CSV_COLUMNS)
        atomic_write_text(out / "fullscale.csv", table.to_csv(index=False))

    print(f"{'method':<42} {'n_train':>10} {'seconds':>9} {'test err':>9}  status", flush=True)
    rff = rff_sgd(standard, gamma, components=args.rff_components, seconds=args.seconds, alpha=args.rff_alpha,
                  chunk_rows=args.chunk_rows, threads=args.threads, seed=args.seed)
    t_rff = rff["train_seconds"]
    budget = args.seconds or t_rff
    emit({**rff, "budget_seconds": budget})
    for name in args.ours:
        emit({**ours(name, budget, args, out), "budget_seconds": budget})
    for name in args.peers:
        emit({**ours(name, budget, args, out, kind="peer"), "budget_seconds": budget})
    if args.svm:
        with tempfile.TemporaryDirectory(prefix="kernelbench-fullscale-") as workdir:
            np.save(os.path.join(workdir, "train.X.npy"), standard.X_train)
            np.save(os.path.join(workdir, "train.y.npy"), standard.y_train)
            for kind in args.svm:
                emit({**exact_svm(kind, standard, gamma, budget, workdir, args), "budget_seconds": budget})
    if args.references:
        for name in REFERENCES:
            emit(reference(name, args, out))

    print(f"\nbudget: {budget:.1f} s (T_rff = {t_rff:.1f} s); RFF + SGD test error {100 * rff['test_error']:.2f}%; "
          f"Bayes error {100 * bayes:.2f}%")
    for row in rows:
        if row["kind"] in ("ours", "peer"):
            error = row.get("test_error", math.nan)
            verdict = "yes" if error < rff["test_error"] else "NO"
            print(f"  {row['method']}: {100 * error:.2f}% in {row.get('train_seconds', math.nan):.1f} s ({row['status']}): "
                  f"lower than RFF + SGD? {verdict}")
    print(f"load average: {_loadavg()}; total {time.perf_counter() - started:.0f} s")
    print(f"side by side: {out / 'fullscale.csv'}")


if __name__ == "__main__":
    main()
