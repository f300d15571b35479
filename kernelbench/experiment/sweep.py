"""`kernelbench sweep`: a config run at every point of a grid of config values, each point a normal
run folder (results.csv + run.json), so that figures read sweeps as they read any run.

A sweep varies what a config holds fixed -- the training size (`dataset.subsample`, or `dataset.n`
of a synthetic replica), the threads (`algorithm.params.threads`), the centres of Falkon -- where a
grid (`grid:`) varies hyper-parameters to choose among. The points are the Cartesian product of the
swept values, the last key varying fastest; every point is validated by load_config with the point's
values as overrides, named `<config name>-<key><value>...` after the keys with more than one value,
and recorded in run.json as `sweep: {key: value}`.

One key is evaluation-side: `predict.n_test` (Gu et al. Fig. 1g-h, testing time vs test size) trains
the config once a trial and times `predict` on that many test rows (drawn with replacement from the test
part), one row per size with `predict_seconds` and `counters.n_test`, all in one run folder.

With `processes`, every point is its own `python -m kernelbench.experiment.point` process (point.py:
the point run as `kernelbench run` runs it, the point's values as overrides, glibc's mmap threshold
fixed so that resident memory follows what is allocated), so that run.json's `peak_memory_mb` and the
rows' `train_memory_mb` are that point's own and a point can be held to an address-space limit and a
wall-clock limit; a point past them gets a final row saying so (status failed, `counters.stopped`). A
line of points (the last key's values, e.g. growing training sizes) ends at its first point that
reaches a limit (`stop_reason`): the rest are not run.

With `resume` (`kernelbench reproduce` runs the papers' sweeps so, `sweep --resume`), a point whose
run folder of the same config and swept values is finished is kept, not run again, and an
unfinished one is resumed; `deadline` (a time.monotonic() value) leaves the points not started by
then for the next call. A paper's sweep is data (kernelbench/papers/*.yaml `sweeps:`: its configs,
`over` and `processes`), run through experiment.plan as every other entry point's runs are.
"""
from __future__ import annotations

import itertools
import json
import math
import os
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml
from threadpoolctl import threadpool_limits

from kernelbench._io import safe_name
from kernelbench.config import ExperimentConfig, config_to_dict, load_config
from kernelbench.errors import ConfigError, KernelbenchError
from kernelbench.figures.scaling import stop_reason
from kernelbench.results import Run, final_rows, read_results

from .cells import params_json
from .metrics import score
from .prepare import describe, prepare_experiment
from .run import run_experiment
from .timing import trace

PREDICT_SIZES = "predict.n_test"          # the evaluation-side key: test rows per `predict` call
PREDICT_REPEAT = 3                        # best of this many timings per size (one when over 2 s)
_MEMORY_WORDS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc")
# A point's process environment. A point is a process so that its memory is its own, but with glibc's
# default the mmap threshold rises after a large free (up to 32 MiB) and later allocations reuse heap
# pages an earlier free left resident, unseen by resident-memory readings (train_memory_mb); fixed at
# 64 KiB, every allocation that size or larger is a mapping of its own, counted when touched.
EXACT_MEMORY = {"MALLOC_MMAP_THRESHOLD_": str(64 * 1024)}


@dataclass(frozen=True)
class Limits:
    """What a point may use. `seconds`: the training budget (stop.seconds, the smaller of it and
    the config's); with processes also the wall-clock limit `seconds + grace` and an address-space
    limit `memory_mb` of the point's process."""
    seconds: float | None = None
    grace: float = 180.0
    memory_mb: float | None = None


@dataclass
class Point:
    config: Path
    values: dict
    name: str
    folder: Path | None = None
    stopped: str = ""                     # "" or a reason of figures.scaling.stop_reason
    message: str = ""
    wall_seconds: float | None = None     # a point run as its own process: its wall time
    kept: bool = False                    # resume: a finished run of this point was there already


def sweep_points(over: dict) -> list[dict]:
    """The Cartesian product of the swept values, in the order given, the last key fastest."""
    return [dict(zip(over, combo)) for combo in itertools.product(*over.values())]


def point_name(name: str, values: dict, swept) -> str:
    """`<name>-<key><value>` for each swept key (the key's last part; `algorithm.name`: the value)."""
    parts = [name]
    for key in swept:
        last, value = key.rsplit(".", 1)[-1], values[key]
        text = f"{value:g}" if isinstance(value, float) else str(value)
        parts.append(text if last == "name" else f"{last}{text}")
    return safe_name("-".join(parts), default=name)


def parse_over(items) -> dict:
    """--over KEY=V1,V2,... -> {key: [values]}, each value read as YAML (1e-3, true, [a, b] in quotes)."""
    over: dict = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key or not text.strip():
            raise ConfigError(f"--over {item!r}: expected KEY=V1,V2,... with a dotted config key, e.g. "
                              "--over dataset.subsample=5000,10000")
        try:
            values = yaml.safe_load(f"[{text}]")
        except yaml.YAMLError as e:
            raise ConfigError(f"--over {item!r}: the values are not valid YAML ({e})") from None
        if key in over:
            raise ConfigError(f"--over {key} is given twice; give its values once, comma-separated")
        over[key] = values
    return over


def run_sweep(configs, over: dict, *, out_dir="results", processes=False, limits=Limits(),
              quiet=True, command=None, echo=print, resume=False, deadline: float | None = None,
              confirm_downloads: bool = False) -> list[Point]:
    """Every config at every point of `over` ({dotted key: [values]}); returns the points run (or,
    with `resume`, kept). Points not started by `deadline` (time.monotonic()) are left out.
    `confirm_downloads`: a point's own process is a `run --yes` (the sweep's command line confirmed
    a large download; the child, with no terminal, could not ask)."""
    over = {key: list(values) for key, values in over.items()}
    sizes = over.pop(PREDICT_SIZES, None)
    if sizes is not None and (processes or limits.memory_mb):
        raise KernelbenchError(f"{PREDICT_SIZES} times predict in this process: leave out --processes "
                               "and --max-memory-mb")
    swept = [key for key, values in over.items() if len(values) > 1]
    points = []
    for config in map(Path, configs):
        limited: set = set()              # values of the outer keys whose line reached a limit
        for values in sweep_points(over):
            outer = tuple(json.dumps(values[k], default=str) for k in list(over)[:-1])
            if outer in limited:
                continue
            if deadline is not None and time.monotonic() >= deadline:
                return points
            # a predict-time run is named apart: `reproduce` must not take it for the config's own run
            cfg, overrides = point_config(config, values, swept, limits,
                                          suffix="-predict_time" if sizes is not None else "")
            recorded = {**values, **({PREDICT_SIZES: sizes} if sizes else {})}
            point = Point(config, values, cfg.name)
            previous = _previous_run(cfg, recorded, out_dir) if resume else None
            if previous is not None and previous.status == "finished":
                point.folder, point.kept = previous.path, True
            elif sizes is not None:
                point.folder = time_predictions(cfg, sizes, out_dir=out_dir, command=command)
            elif processes:
                run_as_process(point, overrides, out_dir, limits, confirm_downloads)
                if point.stopped and point.folder is None:     # stopped before it made its folder
                    point.folder = Run.create(out_dir, cfg.name, config_to_dict(cfg), command=command,
                                              tags=cfg.tags.as_dict()).path
            else:
                run_in_process(point, cfg, out_dir, quiet, command, resume=previous is not None)
            finish_point(point, cfg, recorded, limits.seconds)
            echo(_point_line(point))
            points.append(point)
            if point.stopped and swept and over[list(over)[-1]][-1] != values[list(over)[-1]]:
                limited.add(outer)
                echo(f"  {cfg.name}: stopped ({point.stopped}); the larger {list(over)[-1]} are not run")
    return points


def _previous_run(cfg: ExperimentConfig, recorded: dict, out_dir) -> Run | None:
    """The newest run folder of this point under out_dir: the same config and swept values (none
    recorded: a point killed before its end, when they are written)."""
    previous = Run.latest(out_dir, cfg.name, config_to_dict(cfg))
    if previous is None or previous.record.sweep not in (None, json.loads(json.dumps(recorded, default=str))):
        return None
    return previous


def point_config(config: Path, values: dict, swept, limits: Limits,
                 suffix: str = "") -> tuple[ExperimentConfig, dict]:
    """The validated config of one point, and the overrides that give it (for a child process)."""
    overrides = dict(values)
    cfg = load_config(config, overrides=overrides)
    overrides["name"] = point_name(cfg.name, values, swept) + suffix
    if limits.seconds is not None:
        overrides["stop.seconds"] = min(cfg.stop.seconds or math.inf, float(limits.seconds))
    return load_config(config, overrides=overrides), overrides


def run_in_process(point: Point, cfg: ExperimentConfig, out_dir, quiet, command, resume=False) -> None:
    try:
        point.folder = run_experiment(cfg, out_dir=out_dir, quiet=quiet, command=command, resume=resume)
    except KernelbenchError as e:          # e.g. a subsample larger than the data: this point only
        point.stopped, point.message = "error", str(e)


def run_as_process(point: Point, overrides: dict, out_dir, limits: Limits, confirm_downloads: bool = False) -> None:
    """`python -m kernelbench.experiment.point CONFIG --out OUT --overrides JSON [--yes]` (point.py) in a
    process of its own session, held to the limits; the run folder is the one it names, else the newest
    of this point's."""
    args = [sys.executable, "-m", "kernelbench.experiment.point", str(point.config), "--out", str(out_dir),
            "--overrides", json.dumps(overrides), *(["--yes"] if confirm_downloads else [])]
    wall = (limits.seconds + limits.grace) if limits.seconds is not None else None

    def limit_memory():
        if limits.memory_mb:
            size = int(limits.memory_mb * 2**20)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    env = {**EXACT_MEMORY, **os.environ}
    started = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            preexec_fn=limit_memory, start_new_session=True, text=True, env=env)
    try:
        output, _ = proc.communicate(timeout=wall)
        killed = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)    # the child's own session: only what this started
        output, _ = proc.communicate()
        killed = True
    point.wall_seconds = time.perf_counter() - started
    point.folder = _named_folder(output) or _newest_folder(Path(out_dir), point.name)
    tail = (output.strip().splitlines() or [""])[-1][-400:]
    if killed:
        point.stopped = "time"
        point.message = (f"killed at the wall-clock limit after {point.wall_seconds:.0f} s "
                         f"(training budget {limits.seconds:g} s)")
    elif proc.returncode != 0:
        memory = any(word in output[-5000:] for word in _MEMORY_WORDS)
        point.stopped = "memory" if memory else "error"
        point.message = (f"out of memory under the {limits.memory_mb:.0f} MB limit: {tail}" if memory
                         else f"exit code {proc.returncode}: {tail}")


def _named_folder(output: str) -> Path | None:
    for line in output.splitlines():
        if line.startswith("results: ") and line.endswith("results.csv"):
            return Path(line[len("results: "):]).parent
    return None


def _newest_folder(out_dir: Path, name: str) -> Path | None:
    found = sorted(out_dir.glob(f"{safe_name(name)}-*"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def finish_point(point: Point, cfg: ExperimentConfig, values: dict, seconds_limit=None) -> None:
    """A point the sweep stopped gets a final row saying why (status failed, counters.stopped);
    every point's run.json gets `sweep: {key: value}`; the stop reason of a finished point is read
    from its final row (`time` only against the sweep's own `seconds_limit`: a config whose stop rule is
    seconds reaches it at every point)."""
    if point.folder is None:
        return
    if point.stopped:
        run = Run.open(point.folder)
        run.append({"dataset": cfg.dataset.name, "algorithm": cfg.algorithm.name, "trial": 0,
                    "seed": cfg.seed, "iteration": 0, "status": "failed", "message": point.message,
                    "counters": json.dumps({"stopped": point.stopped}), "final": 1})
        run.finish("failed", error=point.message)
    Run.open(point.folder).update(sweep=dict(values))
    if not point.stopped:
        last = final_rows(read_results(point.folder))
        if len(last):
            row = last.iloc[-1]
            point.stopped = stop_reason(row["status"], row["train_seconds"], seconds_limit, row["counters"])
            point.message = str(row["message"]) if isinstance(row["message"], str) else ""


def _point_line(point: Point) -> str:
    where = point.folder if point.folder is not None else "no run folder"
    why = f"  stopped: {point.stopped} ({point.message[:200]})" if point.stopped else ""
    return f"{point.name}: {where}{' (done before: kept)' if point.kept else ''}{why}"


def time_predictions(cfg: ExperimentConfig, sizes, *, out_dir="results", command=None,
                     repeat: int = PREDICT_REPEAT) -> Path:
    """Train `cfg` once a trial (its stop rule, one thread, seed seed + trial) and time `predict` on
    `size` test rows drawn with replacement (by the trial's seed), for each size: best of `repeat` on
    one BLAS thread. One run folder; one row per trial and size, `counters.n_test` the size, the test
    score of the whole test part on every row; a timing is a measurement, so trials give its spread."""
    prepared = prepare_experiment(cfg, progress=False)
    data, spec = prepared.data, prepared.spec
    if data.X_test is None or not data.X_test.shape[0]:
        raise KernelbenchError(f"{cfg.name}: {PREDICT_SIZES} needs a test part (dataset.test)")
    params = {**cfg.algorithm.params, **({"threads": 1} if "threads" in cfg.algorithm.params else {})}
    regression = data.task == "regression"
    with Run.create(out_dir, cfg.name, config_to_dict(cfg), command=command, tags=cfg.tags.as_dict()) as run:
        run.update(dataset=describe(data))
        for trial in range(cfg.trials):
            seed = cfg.seed + trial
            est = spec.build(params, seed=seed, task=data.task)
            *_, last = trace(est, data.X_train, data.y_train, cfg.stop, every=math.inf, initial=False)
            fields = est.record()
            counters = fields.pop("counters", {})
            if "n_nonzero" in counters:           # AsyDSSKL evaluates its non-zero weights only
                fields["n_features"] = counters["n_nonzero"]
            test_score = score(est.predict(data.X_test), data.y_test, regression)
            measure = {("test_mse" if regression else "test_error"): test_score}
            base = {"experiment": cfg.name, "dataset": data.name, "algorithm": spec.name, "trial": trial,
                    "seed": seed, "params": params_json(spec.defaults(), params), "iteration": est.n_iter_,
                    "samples_seen": est.samples_seen_, "train_seconds": last.train_seconds, "threads": 1,
                    **measure, **fields}
            rng = np.random.default_rng(seed)
            for i, size in enumerate(sizes):
                X = data.X_test[rng.integers(0, data.X_test.shape[0], int(size))]
                run.append({**base, "predict_seconds": _best_predict_seconds(est, X, repeat),
                            "counters": json.dumps({**counters, "n_test": int(size)}, sort_keys=True),
                            "final": int(i == len(sizes) - 1)})
    return run.path


def _best_predict_seconds(est, X, repeat: int) -> float:
    best = math.inf
    with threadpool_limits(limits=1):
        for _ in range(repeat):
            started = time.perf_counter()
            est.predict(X)
            best = min(best, time.perf_counter() - started)
            if best > 2.0:                # a slow model (LIBSVM): one timing says enough
                break
    return best
