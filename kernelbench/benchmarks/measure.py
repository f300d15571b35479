"""Running a declared benchmark: each method's config built and validated (load_config with the
benchmark's overrides, or config_from_dict for a peer), run once as a plan (experiment.plan) into
<out>/runs, named `<benchmark>-<method>` and tagged with its role."""
from __future__ import annotations

import importlib.util
import multiprocessing
import os
from dataclasses import dataclass, replace
from pathlib import Path

from kernelbench.config import ExperimentConfig, TuneConfig, config_from_dict, load_config
from kernelbench.config.sections import FILE_KEYS
from kernelbench.data.synthetic import SHAPES, SyntheticSpec, write_files
from kernelbench.errors import ConfigError, KernelbenchError
from kernelbench.estimators import algorithms
from kernelbench.experiment.plan import Plan, execute
from kernelbench.results import final_rows, read_results

from .declared import BENCHMARKS, Benchmark, Method

AT_THE_END = {"every": 10**12, "on": ["test_error"]}   # one evaluation, after training (outside the timer)
RUNS = "runs"


@dataclass(frozen=True)
class BenchOptions:
    """What the command line chooses; None: the benchmark's default."""
    out: Path
    configs: Path = Path("configs")
    seconds: float | None = None       # T; None: one epoch of RFF + SGD sets it (fullscale)
    threads: int = 1
    seed: int = 0
    shape: str = "susy"                # fullscale: the replica's shape, size and generator
    n: int | None = None
    n_test: int | None = None
    data_seed: int = 0
    variant: int = 1
    dataset: str | None = None         # equal-time: the data set (configs/<dataset>_*.yaml)
    only: tuple[str, ...] = ()         # method labels to run (empty: all)
    references: bool = False
    replicas: Path | None = None       # fullsize: the replica files' folder
    quiet: bool = True
    command: tuple[str, ...] = ()


def benchmark(name: str) -> Benchmark:
    if name not in BENCHMARKS:
        raise ConfigError(f"unknown benchmark {name!r}; the benchmarks are {', '.join(BENCHMARKS)} "
                          "(kernelbench bench --help)")
    return BENCHMARKS[name]


def config_path(method: Method, options: BenchOptions) -> Path:
    return options.configs / method.config.format(d=options.dataset)


def selected(bench: Benchmark, options: BenchOptions) -> list[Method]:
    """The methods to run: those named by --only (all by default), configs absent for this data set
    left out (equal-time), the references with --references."""
    methods = list(bench.methods) + (list(bench.references) if options.references else [])
    labels = {m.label for m in methods}
    unknown = [label for label in options.only if label not in labels]
    if unknown:
        raise ConfigError(f"--only {', '.join(unknown)}: not a method of {bench.name}; its methods: "
                          f"{', '.join(sorted(labels))}")
    chosen = [m for m in methods if not options.only or m.label in options.only]
    return [m for m in chosen if m.config is None or config_path(m, options).is_file()]


def data_configs(name: str, options: BenchOptions) -> list[Path]:
    """The config files whose own data set the benchmark's runs read: equal-time's selected configs
    (its peers train on the first one's data); none for a replica benchmark, whose data are generated."""
    bench = benchmark(name)
    if bench.data != "config":
        return []
    return [config_path(m, options) for m in selected(bench, options) if m.config is not None]


def replica(options: BenchOptions) -> dict:
    """The fullscale data: the synthetic replica at --n / --n-test (default: the published size)."""
    if options.shape not in ("susy", "higgs"):
        raise ConfigError(f"--shape {options.shape!r}: the fullscale replica is susy or higgs")
    shape = SHAPES[options.shape]
    return {"name": "synthetic", "shape": options.shape, "n": options.n or shape.n_train,
            "n_test": options.n_test or shape.n_test, "data_seed": options.data_seed, "variant": options.variant}


def bench_config(bench: Benchmark, method: Method, options: BenchOptions, seconds: float | None,
                 peer_data: dict | None) -> ExperimentConfig:
    """The validated config of one method's run: a config file with the benchmark's overrides, or
    a peer on `peer_data` standardised."""
    name = f"{bench.name}-{method.label}"
    common = {"name": name, "trials": 1, "tags": {"role": method.role}}
    if bench.stop != "own":                 # fullsize runs each config as published, its seed too
        common["seed"] = options.seed
    threads = bench.threads[0] if bench.threads else options.threads
    if method.config is None:
        params = dict(method.params)
        if seconds is not None and method.algorithm == "svm-subsample":
            params["fit_seconds"] = seconds
        if "threads" in algorithms()[method.algorithm].parameters:
            params["threads"] = threads
        stop = {"passes": 1} if seconds is None else {"seconds": seconds}
        return config_from_dict({**common, "dataset": {**peer_data, "scale": "standard", "dtype": "float64"},
                                 "algorithm": {"name": method.algorithm, "params": params}, "stop": stop,
                                 "evaluate": AT_THE_END})
    path = config_path(method, options)
    own = load_config(path)
    overrides = dict(common)
    if bench.data == "replica":
        overrides["dataset"] = replica_dataset(own, options)
    if bench.stop != "own":
        overrides["evaluate"] = AT_THE_END
    if bench.stop != "own" and method not in bench.references:     # a reference keeps its own time
        overrides["stop"] = {"seconds": seconds} if bench.stop == "replace" else \
            {**own.stop.as_dict(), "seconds": seconds}
    if "threads" in algorithms()[own.algorithm.name].parameters:
        overrides["threads"] = threads
    cfg = load_config(path, overrides=overrides)
    if bench.stop == "own":
        return cfg
    # one setting, the config's own: its grid, search and tuning are not part of the comparison
    return replace(cfg, grid={}, then={}, search={}, tune=TuneConfig())


def replica_dataset(own: ExperimentConfig, options: BenchOptions) -> dict:
    """The replica in place of the config's data set, with the config's scaling, precision and
    subsample (where below the replica's size); a semi-supervised config keeps its labeled count."""
    data = {**replica(options), "scale": own.dataset.scale, "dtype": own.dataset.dtype}
    if own.dataset.subsample and own.dataset.subsample < data["n"]:
        data["subsample"] = own.dataset.subsample
    if own.dataset.labeled:
        data["labeled"] = own.dataset.labeled
    return data


def run_one(cfg: ExperimentConfig, options: BenchOptions, fresh_process: bool) -> Path | None:
    """`cfg` run once into <out>/runs: here, or in a fresh process (its own peak memory)."""
    out = options.out / RUNS
    if not fresh_process:
        return _run_plan(cfg, out, options)
    context = multiprocessing.get_context("spawn")
    channel = context.Queue()
    child = context.Process(target=_run_child, args=(cfg, out, options, channel))
    child.start()
    child.join()
    return channel.get() if not channel.empty() else None


def _run_child(cfg, out, options, channel):
    channel.put(_run_plan(cfg, out, options))


def _run_plan(cfg: ExperimentConfig, out: Path, options: BenchOptions) -> Path:
    return execute(Plan((cfg,), out_dir=out), quiet=options.quiet, command=list(options.command))


def final_row(folder: Path | None) -> dict:
    """The last final row of a run folder (an empty dict where there is none)."""
    if folder is None or not (folder / "results.csv").is_file():
        return {}
    final = final_rows(read_results(folder))
    return final.iloc[-1].to_dict() if len(final) else {}


def peer_data(bench: Benchmark, methods: list[Method], options: BenchOptions) -> dict | None:
    """The data set the peers train on: the replica, or (equal-time) the first config's data set."""
    if bench.data == "replica":
        return replica(options)
    first = next((m for m in methods if m.config is not None), None)
    if first is None:
        raise ConfigError(f"no config of {bench.name} for data set {options.dataset!r} in {options.configs}")
    dataset = load_config(config_path(first, options)).dataset
    own_file = {key: getattr(dataset, key) for key in ("path",) + FILE_KEYS if getattr(dataset, key) is not None}
    return {"name": dataset.name, "test": dataset.test, "subsample": dataset.subsample, **own_file}


def absent(method: Method) -> str | None:
    """Why a method cannot run here (oneDAL without scikit-learn-intelex), or None."""
    if dict(method.params).get("engine") == "onedal" and importlib.util.find_spec("sklearnex") is None:
        return ("scikit-learn-intelex is not installed (pip install scikit-learn-intelex; x86-64 wheels "
                "only): skipped")
    return None


def run_benchmark(name: str, options: BenchOptions, say=print) -> Path:
    """Every selected method of benchmark `name` once; returns the folder of its run folders."""
    bench = benchmark(name)
    if bench.data == "config" and not options.dataset:
        raise ConfigError(f"{name} needs --dataset NAME: the data set whose configs run (configs/NAME_*.yaml)")
    methods = selected(bench, options)
    if options.seconds is None and bench.stop != "own" and (
            bench.stop == "replace" or not methods or methods[0].algorithm != "rff-sgd"):
        raise ConfigError(f"{name} needs --seconds T, the wall time every method trains for"
                          + ("" if bench.stop == "replace" else " (or rff-sgd among the methods: one epoch of it sets T)"))
    if bench.data == "replica-files":
        write_replicas(methods, options, say)
    data = peer_data(bench, methods, options) if any(m.config is None for m in methods) else None
    seconds = options.seconds
    for method in methods:
        why = absent(method)
        if why:
            say(f"{method.label}: {why}")
            continue
        row = run_method(bench, method, options, seconds, data, say)
        if seconds is None and method.algorithm == "rff-sgd" and row:
            seconds = float(row["train_seconds"])      # T_rff: one epoch of RFF + SGD sets the budget
            say(f"budget T = {seconds:.1f} s (one epoch of RFF + SGD)")
    return options.out / RUNS


def run_method(bench: Benchmark, method: Method, options: BenchOptions, seconds, data, say) -> dict:
    """One method's run (and, for fullsize, its run at each further thread count); its final row.
    A run that fails is said and left behind (its folder says why): the next method runs."""
    try:
        cfg = bench_config(bench, method, options, seconds, data)
        folder = run_one(cfg, options, bench.fresh_process)
        for threads in bench.threads[1:] if "threads" in cfg.algorithm.params else ():
            run_one(one_pass_at(cfg, threads), options, bench.fresh_process)
    except KernelbenchError as e:
        say(f"{method.label}: failed: {e}")
        return {}
    row = final_row(folder)
    error = row.get("test_error")
    say(f"{method.label}: {row.get('status', 'failed')}"
        + ("" if error is None else f", test error {100 * error:.2f} % in {row['train_seconds']:.1f} s"))
    return row


def write_replicas(methods: list[Method], options: BenchOptions, say) -> None:
    """The replica files of every data set the configs read, written into --replicas where absent;
    that folder becomes the data mirror of this process."""
    if options.replicas is None:
        raise ConfigError("fullsize runs the configs on replica files: give --replicas DIR (written there where "
                          "absent, and read from there)")
    folder = options.replicas.resolve()
    os.environ["KERNELBENCH_MIRROR"] = str(folder)          # the runs (and their processes) read them there
    for name in dict.fromkeys(load_config(config_path(m, options)).dataset.name for m in methods):
        spec = SyntheticSpec(name).resolved()
        if not all((folder / f).is_file() for f in SHAPES[name].files):
            say(f"writing the {name} replica into {folder} ...")
            write_files(spec, folder, progress=not options.quiet)


def one_pass_at(cfg: ExperimentConfig, threads: int) -> ExperimentConfig:
    """`cfg` at `threads` threads and, for a multi-pass stop rule, one pass (every pass costs the
    same); named apart from the first thread count's run. Validated again through its source file."""
    overrides = {"name": f"{cfg.name}-{threads}t", "trials": 1, "seed": cfg.seed, "tags": cfg.tags.as_dict()}
    if cfg.stop.passes and cfg.stop.passes > 1:
        overrides["stop"] = {**cfg.stop.as_dict(), "passes": 1}
    if "threads" in cfg.algorithm.params:
        overrides["threads"] = threads
    return load_config(cfg.source, overrides=overrides)

