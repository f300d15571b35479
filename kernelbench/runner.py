"""config → dataset → estimator → evaluation schedule → rows → results.csv (DESIGN.md §2).

The runner knows the stepping protocol of kernelbench.solvers.base (`Solver`: begin / run /
finish / record / objective / working_set) and nothing of solver internals. Its one timed loop is
`trace` (public: benchmarks and scripts time their runs with it too): set-up and `run` calls are
timed, every evaluation happens outside the timer, and afterwards the solver's working set is read
back into the caches, so `train_seconds` is training time whatever the evaluation schedule
(scripts/bench_eval_overhead.py measures it).

Work is a list of *cells* — one estimator trained on one split, keyed (params, trial, fold) —
run one after another, on local processes (joblib, `jobs`) or on a Dask cluster (`scheduler`),
through the same code path. A cell's last row has final = 1, so `resume` skips finished cells
and drops the partial rows of a killed one. Ctrl-C ends a run as `Interrupted`, whose message says
what was kept and the command that resumes it.
"""
from __future__ import annotations

import functools
import gc
import json
import math
import os
import resource
import shlex
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from kernelbench import semisupervised
from kernelbench.config import ExperimentConfig, StopConfig, config_to_dict, expand_grid, same_training
from kernelbench.data import Dataset, dataset_info, load_dataset, prepare
from kernelbench.data.load import classes_task
from kernelbench.errors import ConfigError, DataError, KernelbenchError
from kernelbench.registry import AlgorithmSpec, algorithms
from kernelbench.results import Run, cell_key, final_rows, read_results
from kernelbench.search import grid_from_space, resolve_space
from kernelbench.solvers.base import BudgetExceededError, DivergenceError, blas_threads, resolve_threads

EVAL_TRAIN_ROWS = 5000   # objective / train error are measured on a fixed random subset this large
SMOKE_TRAIN_ROWS = 500
SMOKE_TEST_ROWS = 500
SMOKE_ITERATIONS = 5
RUN_PIECES_PER_PASS = 100       # a timed chunk is run in pieces of at most 1/100 pass (see train_cell)
PREDICT_SPLIT_ROWS = 50_000      # evaluation parts larger than this are predicted in row chunks
# Rows per chunk (bounded memory: some models map a chunk to rows × features). A multiple of the
# solvers' own prediction blocks (4096, 8192 rows): their GEMMs see the same row blocks as in one
# call, so the predictions are bit-identical (a GEMM's last bits depend on the rows it is given).
PREDICT_CHUNK_ROWS = 32_768


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; the message says what results.csv kept and how to resume."""


@dataclass
class Prepared:
    """What one run trains on: the algorithm, the (prepared) dataset and the evaluation subset."""
    spec: AlgorithmSpec
    data: Dataset
    eval_rows: np.ndarray
    labeled: int | None = None        # dataset.labeled: the semi-supervised protocol (semisupervised.py)


@dataclass
class Cell:
    """One training job: params on a split (fold = "" for the train/test split)."""
    params: dict
    trial: int
    seed: int
    fold: object = ""
    train_rows: np.ndarray | None = None      # CV: rows of the training part used for training
    valid_rows: np.ndarray | None = None      # CV: rows evaluated in place of the test part
    labeled_rows: np.ndarray | None = None    # SSL CV: the labeled rows (else drawn per trial seed)
    curve: bool = True                        # rows along the way (False: only at the end, e.g. CV folds)
    every: int | None = None                  # iterations between rows (None: ~10 per pass)
    on: tuple = field(default_factory=tuple)
    stop: StopConfig | None = None            # tune: this cell's training budget (else the config's stop)
    budget: float | None = None               # tune: that budget in the config's unit, for results

    def key(self, defaults: dict) -> tuple:
        return cell_key(_params_json(defaults, self.params), self.trial, self.fold, self.budget)


@dataclass
class Execution:
    """Where cells run: jobs = local processes (1 = in this process), scheduler = a Dask address."""
    jobs: int = 1
    scheduler: str | None = None
    show: bool = False


def prepare_experiment(cfg: ExperimentConfig, *, smoke: bool = False, progress: bool = True) -> Prepared:
    """Resolve the algorithm and load + prepare the dataset; every user error surfaces here,
    before any training."""
    spec = algorithms()[cfg.algorithm.name]
    dc = cfg.dataset
    if dc.labeled is not None and "semi-supervised" not in spec.tasks and not dc.labeled_only:
        raise ConfigError(f"dataset.labeled is for semi-supervised algorithms; {spec.name!r} is "
                          "supervised: add `dataset.labeled_only: true` to train it on the labeled "
                          "rows alone (the protocol's supervised baseline), or remove dataset.labeled")
    if dc.name is not None and dc.synthetic() is None:   # registry: refuse before any download
        _check_task(dc.name, dc.task or classes_task(dc.classes) or dataset_info(dc.name)["task"], spec)
    data = load_dataset(dc.name, path=dc.path, test=dc.test, seed=cfg.seed, task=dc.task,
                        progress=progress, dtype=dc.dtype, strict=dc.strict, synthetic=dc.synthetic(),
                        classes=dc.classes)
    _check_task(data.name, data.task, spec)
    subsample = dc.subsample
    if smoke:
        subsample = min(subsample or SMOKE_TRAIN_ROWS, SMOKE_TRAIN_ROWS)
    data = prepare(data, subsample=subsample, scale=dc.scale, seed=cfg.seed, pca=dc.pca)
    if smoke and data.X_test is not None and data.X_test.shape[0] > SMOKE_TEST_ROWS:
        keep = np.random.default_rng(cfg.seed).choice(data.X_test.shape[0], SMOKE_TEST_ROWS, replace=False)
        data = replace(data, X_test=data.X_test[keep], y_test=data.y_test[keep])
    labeled = dc.labeled
    if labeled is not None:         # semi-supervised protocol: see kernelbench/semisupervised.py
        if data.task != "binary":
            raise ConfigError(f"dataset.labeled: the semi-supervised protocol is for binary "
                              f"classification; dataset {data.name!r} is a {data.task} task")
        if smoke:
            labeled = max(2, min(labeled, data.X_train.shape[0] // 2))
        if labeled >= data.X_train.shape[0]:
            raise ConfigError(f"dataset.labeled: {labeled} labeled rows need a training part with "
                              f"more rows; {data.name!r} has {data.X_train.shape[0]}")
    return Prepared(spec, data, _eval_rows(data.X_train.shape[0], cfg.seed), labeled)


def _check_task(name, task, spec: AlgorithmSpec):
    if task not in spec.tasks:
        raise DataError(
            f"dataset {name!r} is a {task} task, but algorithm {spec.name!r} handles "
            f"{', '.join(spec.tasks)}; choose another dataset or algorithm (kernelbench algorithms)")


def smoke_config(cfg: ExperimentConfig, spec: AlgorithmSpec) -> ExperimentConfig:
    """A few iterations with the algorithm's small settings, one trial, the first grid cell."""
    params = {**cfg.algorithm.params, **spec.smoke_params}
    first_cell = expand_grid(cfg.grid)[0] if cfg.grid else {}
    params.update(first_cell)
    return replace(cfg, algorithm=replace(cfg.algorithm, params=params), grid={}, then={}, trials=1,
                   stop=StopConfig(passes=None, iterations=SMOKE_ITERATIONS, seconds=None),
                   evaluate=replace(cfg.evaluate, every=max(1, SMOKE_ITERATIONS // 2)))


def run_experiment(cfg: ExperimentConfig, *, out_dir="results", smoke=False, quiet=False,
                   command=None, resume=False, execution: Execution | None = None) -> Path:
    """Run every (grid cell, trial) of `cfg`, evaluating on the test part; returns the run folder.

    With `protocol: paper` (Geng et al. §6.1) the test part is not used: the data file is the
    training part -- for `dataset.test: <fraction>` what remains after that fraction is split
    off, for `test: official` the training file (the sizes of Geng's Table 3). Per trial t, L
    labeled rows of it are drawn and the unlabeled rest is split into `cv` folds
    (semisupervised.paper_folds, seed = seed + t: a new draw per trial, as "the average of 10
    trials" implies); every (grid cell, trial, fold i) is a cell that trains on the labeled rows +
    unlabeled fold i and scores the other folds with their true labels (test_* columns, fold = i)."""
    execution = execution or Execution()
    execution.show = not quiet and sys.stderr.isatty()
    spec = algorithms()[cfg.algorithm.name]
    if smoke:
        cfg = smoke_config(cfg, spec)
    prepared = prepare_experiment(cfg, smoke=smoke, progress=execution.show)
    paper = cfg.protocol == "paper"
    if paper:                   # the paper scores its unlabeled folds; the test part stays unread
        prepared = replace(prepared, data=replace(prepared.data, X_test=None, y_test=None))
        # too few rows for the folds: refused now, before a run folder exists
        semisupervised.paper_folds(prepared.data.y_train, prepared.labeled, cfg.cv, cfg.seed)
    grid_cells = expand_grid(cfg.grid) if cfg.grid else [{}]
    if paper:   # one stage per trial: its folds' index arrays (~k × the rows) are made when it starts
        stages = [(f"trial {t}", _paper_protocol_cells(cfg, prepared, grid_cells, t))
                  for t in range(cfg.trials)]
    else:
        stages = [("cells", [Cell(params={**cfg.algorithm.params, **grid_cell}, trial=trial,
                                  seed=cfg.seed + trial, every=cfg.evaluate.every, on=cfg.evaluate.on)
                             for grid_cell in grid_cells for trial in range(cfg.trials)])]
    total = len(grid_cells) * cfg.trials * (cfg.cv if paper else 1)
    with _open_run(cfg, out_dir, command, resume, total_cells=total) as (run, done):
        run.update_meta(dataset=_describe(prepared.data), smoke=smoke,
                        determinism=_determinism(prepared), labeled=prepared.labeled,
                        protocol=cfg.protocol, **({"cv": cfg.cv} if paper else {}))
        for desc, cells in stages:
            _execute(prepared, list(cells), cfg, run, done, execution, desc=desc)
        last = _final_rows(run)
        summary = _fold_means(last) if paper else [
            {k: r.get(k) for k in ("params", "trial", "status", "test_error", "test_mse", "train_seconds")}
            for r in last]
        run.finish("finished", summary=summary,
                   peak_memory_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return run.path


def _paper_protocol_cells(cfg: ExperimentConfig, prepared: Prepared, grid_cells, trial: int):
    """The cells of one trial under `protocol: paper` (see run_experiment), built as grid_search
    builds its cross-validation cells, with the config's evaluation schedule. A generator: the
    folds are drawn when the trial's stage starts."""
    seed = cfg.seed + trial
    n_file = len(prepared.data.y_train)
    folds = semisupervised.paper_folds(prepared.data.y_train, prepared.labeled, cfg.cv, seed)
    for g in grid_cells:
        for i, (train_rows, valid_rows, labeled_rows) in enumerate(folds):
            # §6.1 "one pass over the entire dataset": a pass counts the data file's rows, not the
            # fold's (about a fifth of them): a fold trains as many steps as the held-out run
            yield Cell(params={**cfg.algorithm.params, **g}, trial=trial, seed=seed, fold=i,
                       train_rows=train_rows, valid_rows=valid_rows, labeled_rows=labeled_rows,
                       every=cfg.evaluate.every, on=cfg.evaluate.on,
                       stop=same_training(cfg.stop, n_file, len(train_rows)))


def _fold_means(rows: list[dict]) -> list[dict]:
    """Per (params, trial): the mean test error over its folds -- the paper's test error of one
    trial -- with each fold's value; status: ok, else the first fold's that is not (mean None)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["params"], r["trial"]), []).append(r)
    out = []
    for (params, trial), folds in groups.items():
        folds = sorted(folds, key=lambda r: r["fold"])
        values = [r.get("test_error") for r in folds]
        status = next((r.get("status") for r in folds if r.get("status") != "ok"), "ok")
        ok = status == "ok" and None not in values
        out.append({"params": params, "trial": trial, "status": status, "folds": len(folds),
                    "test_error": float(np.mean(values)) if ok else None, "fold_test_error": values,
                    "train_seconds": float(sum(r.get("train_seconds") or 0.0 for r in folds))})
    return out


def grid_search(cfg: ExperimentConfig, *, out_dir="results", quiet=False, command=None,
                resume=False, execution: Execution | None = None) -> Path:
    """k-fold cross-validation over the grid on the training part (stratified for classification),
    then a refit of the best cell on the whole training part, evaluated on the test part. Without
    `grid:`, the grid is the search space (`search:` or the algorithm's declared one) at
    search.GRID_POINTS values per range. With `then:`, a second stage: its cells, each with the
    best grid values fixed, are cross-validated on the same folds and the best of them is refitted
    (Geng et al. §6.1: η searched after C and σ). An algorithm that refuses the refit's training
    set (`_refit_refusal`: an O(n²) baseline above its max_points) gets its clean "skipped" refit
    rows and no search: a best it could never be refitted with is not searched for.
    Every (cell, fold) is a row (fold = 0..k-1, validation metric in the test_* column); the refit
    rows have an empty fold. run.json: `cells` (both stages, each row with its `stage`), `best`."""
    from sklearn.model_selection import KFold, StratifiedKFold

    if cfg.dataset.test == "none":
        raise ConfigError("dataset.test: grid refits the best cell and evaluates it on the test part; "
                          "set dataset.test to 'official' or a fraction")
    execution = execution or Execution()
    execution.show = not quiet and sys.stderr.isatty()
    prepared = prepare_experiment(cfg, progress=execution.show)
    data = prepared.data
    run_cfg = cfg           # the run's identity (resume, reproduce's done check): the config as given
    if not cfg.grid:        # the config's `search:` or the algorithm's declared space, as a grid
        space, scales = resolve_space(cfg.search, prepared.spec.parameters, data.X_train,
                                      cfg.algorithm.params, cfg.seed)
        cfg = replace(cfg, grid=grid_from_space(space, scales))
    regression = data.task == "regression"
    metric = "test_mse" if regression else "test_error"
    splitter = (KFold if regression else StratifiedKFold)(n_splits=cfg.cv, shuffle=True,
                                                        random_state=cfg.seed)
    y = data.y_train
    if not regression and np.min(np.unique(y, return_counts=True)[1]) < cfg.cv:
        raise DataError(f"dataset {data.name!r}: a class has fewer samples than the {cfg.cv} folds; "
                        "use fewer folds (--cv) or more data")
    if prepared.labeled is not None:      # the paper's scheme: unlabeled rows split in k folds
        folds = semisupervised.paper_folds(y, prepared.labeled, cfg.cv, cfg.seed)
    else:
        folds = [(train_rows, valid_rows, None) for train_rows, valid_rows in splitter.split(np.zeros(len(y)), y)]
    defaults = prepared.spec.defaults()

    def cv_cells(grid_cells):
        # a fold trains as many steps as the refit on the whole training part (same_training)
        return [Cell(params={**cfg.algorithm.params, **g}, trial=0, seed=cfg.seed, fold=i,
                     train_rows=train_rows, valid_rows=valid_rows, labeled_rows=labeled_rows,
                     on=(metric,), curve=False, stop=same_training(cfg.stop, len(y), len(train_rows)))
                for g in grid_cells for i, (train_rows, valid_rows, labeled_rows) in enumerate(folds)]

    def fold_table(grid_cells, stage):
        """Per cell: its stage, the searched values, the folds' metric, their mean and std."""
        scores = {cell_key(r["params"], r["trial"], r["fold"]): r for r in _final_rows(run)}
        table = []
        for g in grid_cells:
            params = {**cfg.algorithm.params, **g}
            values = [scores[Cell(params, 0, cfg.seed, fold=i).key(defaults)] for i in range(cfg.cv)]
            values = [r.get(metric) if r.get("status") == "ok" else None for r in values]
            mean, std = (None, None) if None in values else (float(np.mean(values)), float(np.std(values)))
            table.append({"stage": stage, "params": g, f"mean_{metric}": mean, f"std_{metric}": std,
                          "folds": values})
        return table

    def refit_cells(chosen):
        return [Cell(params={**cfg.algorithm.params, **chosen}, trial=trial, seed=cfg.seed + trial,
                     every=cfg.evaluate.every, on=cfg.evaluate.on) for trial in range(cfg.trials)]

    def refit_rows():
        return [{k: r.get(k) for k in ("trial", "status", "test_error", "test_mse")}
                for r in _final_rows(run) if r.get("fold") is None]

    def lowest(table):
        finite = [row for row in table if row[f"mean_{metric}"] is not None]      # None: diverged, failed, skipped
        return min(finite, key=lambda row: row[f"mean_{metric}"]) if finite else None

    grid_cells = expand_grid(cfg.grid) if cfg.grid else [{}]
    then_size = len(expand_grid(cfg.then)) if cfg.then else 0
    label_cfg = replace(cfg, grid={**cfg.grid, **cfg.then})     # progress labels name the then: axes too
    total = (len(grid_cells) + then_size) * cfg.cv + cfg.trials
    refused = _refit_refusal(prepared, cfg.algorithm.params, cfg.seed)
    with _open_run(run_cfg, out_dir, command, resume, total_cells=total) as (run, done):
        run.update_meta(dataset=_describe(data), cv=cfg.cv, determinism=_determinism(prepared),
                        labeled=prepared.labeled)
        if refused:
            _execute(prepared, refit_cells(cfg.algorithm.params), label_cfg, run, done, execution, desc="refit")
            run.finish("finished", cells=[], best=None, refit=refit_rows(), skipped=refused)
            return run.path
        _execute(prepared, cv_cells(grid_cells), label_cfg, run, done, execution, desc="grid")
        table = fold_table(grid_cells, stage=1)
        best = lowest(table)
        if best is not None and cfg.then:     # stage 2: the then: cells with the best grid values
            then_cells = [{**best["params"], **t} for t in expand_grid(cfg.then)]
            _execute(prepared, cv_cells(then_cells), label_cfg, run, done, execution, desc="then")
            stage2 = fold_table(then_cells, stage=2)
            table += stage2
            best = lowest(stage2)
        if best is None:
            stage = "then:" if any(row["stage"] == 2 for row in table) else "grid"
            run.finish("failed", cells=table, error=f"every {stage} cell diverged, failed or was skipped")
            raise DataError(f"every {stage} cell diverged, failed or was skipped (see results.csv); "
                            "try smaller steps")
        _execute(prepared, refit_cells(best["params"]), label_cfg, run, done, execution, desc="refit")
        run.finish("finished", cells=table, best=best, refit=refit_rows())
    return run.path


def _refit_refusal(prepared: Prepared, params: dict, seed: int) -> str | None:
    """Why the algorithm refuses the refit's training set -- its BudgetExceededError in begin(),
    e.g. an O(n²) baseline above max_points -- or None. Only begin() runs (set-up, no training)."""
    X, y = prepared.data.X_train, prepared.data.y_train
    if prepared.labeled is not None:
        X, y, _ = _ssl_training(prepared, Cell(params, 0, seed), X, y, prepared.eval_rows)
    estimator = prepared.spec.build(params, seed=seed, task=prepared.data.task)
    try:
        estimator.begin(X, y)
    except BudgetExceededError as e:
        return str(e)
    finally:
        estimator.finish()
    return None


class _open_run:
    """A new run folder, or with resume the newest one of the same experiment and config
    (its partial cells dropped). Yields (run, keys of finished cells); marks failures, and turns
    Ctrl-C into `Interrupted` (what was kept, how to resume)."""

    def __init__(self, cfg, out_dir, command, resume, total_cells):
        self.cfg, self.out_dir, self.command, self.resume = cfg, out_dir, command, resume
        self.total_cells = total_cells

    def __enter__(self):
        config = config_to_dict(self.cfg)
        previous = Run.latest(self.out_dir, self.cfg.name, config) if self.resume else None
        if previous is not None:
            self.run = previous
            done = previous.resume(tags=self.cfg.tags.as_dict())
            print(f"kernelbench: resuming {previous.path} ({len(done)} finished cells kept)",
                  file=sys.stderr)
        else:
            if self.resume:
                print(f"kernelbench: nothing to resume under {self.out_dir} for {self.cfg.name!r} "
                      "with this config; starting a new run", file=sys.stderr)
            self.run = Run.create(self.out_dir, self.cfg.name, config, command=self.command,
                                  tags=self.cfg.tags.as_dict())
            done = set()
        self.run.__enter__()
        return self.run, done

    def __exit__(self, exc_type, exc, tb):
        self.run.__exit__(exc_type, exc, tb)          # status finished / failed / interrupted
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt) \
                and not issubclass(exc_type, Interrupted):
            raise Interrupted(_interrupted_message(self.run, self.total_cells, self.command)) from exc
        return False


def _interrupted_message(run: Run, total_cells: int, command) -> str:
    """Lines for the user after Ctrl-C: rows and finished cells in results.csv, and the command
    that finishes the run (--resume drops the rows of unfinished cells and redoes those)."""
    try:
        df = read_results(run.path)
    except KernelbenchError:
        kept = f"{run.results_path} holds the rows written so far"
    else:
        finished = run.finished_cells(df)
        partial = sum(cell_key(r.params, r.trial, r.fold, r.budget) not in finished for r in df.itertuples())
        kept = (f"{run.results_path} keeps {len(df)} rows; {len(finished)} of {total_cells} cells "
                "finished")
        if partial:
            kept += f" (--resume drops the {partial} rows of the unfinished cell and redoes it)"
    return f"interrupted: {kept}\nto resume: {resume_command(command)}"


def resume_command(command) -> str:
    """The user's command line (sys.argv) with --resume (not for `reproduce`, which resumes what
    it finds unfinished), shell-quoted, runnable from the same folder: `python -m kernelbench.cli`
    when it ran as a module, the console script otherwise."""
    program, *args = list(command or ["kernelbench"])
    if Path(program).name in ("cli.py", "__main__.py") or program in ("-c", "-m"):
        prefix = [_runnable(sys.executable), "-m", "kernelbench.cli"]
    else:
        prefix = [_runnable(program)]
    if "--resume" not in args and "reproduce" not in args[:1]:    # reproduce resumes by itself
        args.append("--resume")
    return shlex.join(prefix + args)


def _runnable(program: str) -> str:
    """A program path as short as it can be written: its name where PATH finds this very file
    (symlinks not followed: a venv's python is not the system's), else relative to this folder."""
    path = os.path.abspath(program)
    found = shutil.which(os.path.basename(program))
    if found and os.path.abspath(found) == path:
        return os.path.basename(program)
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path


def _execute(prepared: Prepared, cells: list[Cell], cfg: ExperimentConfig, run: Run, done: set,
             execution: Execution, desc="cells"):
    """Train every cell not in `done`, appending its rows as it finishes (sequentially: as each
    evaluation point is produced). Local processes and Dask workers share this one path."""
    defaults = prepared.spec.defaults()
    todo = [c for c in cells if c.key(defaults) not in done]
    if not todo:
        return
    labels = {c.key(defaults): _cell_label(c, cfg.grid) for c in todo}
    workers = _worker_count(execution, len(todo))
    # One bar over all cells of this stage ("grid 3/40", ETA from the mean time per finished cell:
    # smoothing=0), the cell in progress (sequential) or the last finished (parallel) as postfix;
    # the sequential path nests each cell's iteration bar below it.
    with tqdm(total=len(cells), initial=len(cells) - len(todo), desc=desc, unit="cell",
              smoothing=0, disable=not execution.show) as bar:
        if workers == 1 and execution.scheduler is None:
            for cell in todo:
                bar.set_postfix_str(labels[cell.key(defaults)])
                train_cell(prepared, cell, cfg.stop, cfg.name, sink=run, show=execution.show)
                done.add(cell.key(defaults))
                bar.update(1)
            return
        from joblib import Parallel, delayed, parallel_config

        per_worker = max(1, resolve_threads(0) // workers) if execution.scheduler is None else None
        with _backend(execution, per_worker) as backend, parallel_config(**backend):
            jobs = Parallel(n_jobs=workers, return_as="generator_unordered")(
                delayed(_cell_rows)(prepared, cell, cfg.stop, cfg.name, per_worker) for cell in todo)
            for rows in jobs:
                for row in rows:
                    run.append(row)
                key = cell_key(rows[-1]["params"], rows[-1]["trial"], rows[-1]["fold"], rows[-1].get("budget"))
                done.add(key)
                bar.set_postfix_str(f"last: {labels[key]}", refresh=False)
                bar.update(1)


def _cell_label(cell: Cell, grid: dict) -> str:
    """The grid values, trial and fold of a cell, e.g. "C=100 gamma=0.03 trial 1 fold 2"."""
    def text(value):
        return f"{value:g}" if isinstance(value, float) else str(value)
    parts = [f"{name}={text(cell.params.get(name))}" for name in sorted(grid or {}, key=str)]
    parts.append(f"trial {cell.trial}")
    if cell.fold != "":
        parts.append(f"fold {cell.fold}")
    return " ".join(parts)


def _worker_count(execution: Execution, n_cells: int) -> int:
    if execution.scheduler is not None:
        return -1
    jobs = execution.jobs if execution.jobs and execution.jobs > 0 else resolve_threads(0)
    return max(1, min(jobs, n_cells))


class _backend:
    """joblib backend settings: loky processes (threads per worker capped so workers × threads
    never exceed the cores), or the Dask cluster at `scheduler`."""

    def __init__(self, execution: Execution, per_worker):
        self.execution, self.per_worker, self.client = execution, per_worker, None

    def __enter__(self):
        if self.execution.scheduler is None:
            return {"backend": "loky", "inner_max_num_threads": self.per_worker}
        try:
            from distributed import Client
        except ImportError:
            raise KernelbenchError("--scheduler needs Dask: pip install 'kernelbench[dask]'") from None
        try:
            self.client = Client(self.execution.scheduler, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise KernelbenchError(f"cannot reach the Dask scheduler at {self.execution.scheduler}: "
                                   f"{e}; start one (dask scheduler) or fix --scheduler") from None
        return {"backend": "dask"}

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
        return False


def _cell_rows(prepared: Prepared, cell: Cell, stop: StopConfig, experiment: str, max_threads):
    """A cell on a worker: its rows, returned when it finishes."""
    from threadpoolctl import threadpool_limits

    rows: list[dict] = []
    with threadpool_limits(limits=max_threads):
        train_cell(prepared, cell, stop, experiment, sink=rows, max_threads=max_threads)
    return rows


@dataclass(frozen=True)
class Point:
    """Where a timed run stands when `trace` hands over: training is paused, and whatever the
    caller does now (evaluate, print, ...) is outside the timer."""
    iteration: int            # the estimator's n_iter_
    samples_seen: int
    train_seconds: float      # wall time of begin and of every run call so far
    cpu_seconds: float        # CPU time of the process (all threads) in the same calls
    final: bool               # the last point: a stop rule, the solver's own end (converged_), or a time limit


class Trace:
    """A timed run of a Solver (begin, then `run` in timed pieces), pausing at evaluation
    points; see `trace`. `train_seconds` / `cpu_seconds` hold the totals so far, also after an
    exception (e.g. DivergenceError from run); `pieces` lists (iterations, wall seconds) of every
    timed call, begin first (iterations 0), for benchmarks. `every` may be set after `begin()`,
    when `total` is known."""

    def __init__(self, estimator, X, y, *, passes=None, iterations=None, seconds=None, every=None,
                 initial=True, progress=None):
        self.estimator, self.X, self.y = estimator, X, y
        self.stop = StopConfig(passes=passes, iterations=iterations, seconds=seconds)
        self.every, self.initial, self.progress = every, initial, progress
        self.train_seconds = self.cpu_seconds = 0.0
        self.pieces: list[tuple[int, float]] = []
        self.total = math.nan           # iterations the stop rule allows (inf: a time limit only)
        self.began = False

    def begin(self) -> Trace:
        """`estimator.begin(X, y)`, timed: set-up is training work too (e.g. a feature matrix).
        A BudgetExceededError propagates with `began` still False."""
        self._timed(self.estimator.begin, self.X, self.y)
        self.began = True
        self.total = _total_steps(self.stop, self.estimator)
        return self

    def __iter__(self):
        est, stop = self.estimator, self.stop
        if not self.began:
            self.begin()
        try:
            per_pass = est.steps_per_pass
            at_end_only = self.every is not None and math.isinf(self.every)
            if at_end_only:
                chunk_size = self.total if math.isfinite(self.total) else 10**9
            else:
                chunk_size = self.every or max(1, per_pass // 10)
            if stop.seconds:            # the clock is read between chunks: keep them to one pass
                chunk_size = max(1, min(chunk_size, per_pass))
            piece = max(1, per_pass // RUN_PIECES_PER_PASS)
            if self.initial and est.predicts_before_training:
                yield self._point(final=False)
                _warm(est.working_set())
            while True:
                left, ended = int(min(chunk_size, self.total - est.n_iter_)), False
                # A chunk runs in pieces: Ctrl-C is only handled when a compiled loop returns to
                # Python, and a time limit is read between them (a full-size pass is minutes long).
                while left > 0:
                    asked = min(left, piece)
                    done = self._timed(est.run, asked)
                    if self.progress is not None:
                        self.progress(done)
                    left -= done
                    ended = done < asked            # the solver's procedure is over (protocol)
                    if ended or self._out_of_time() or est.converged_:
                        break
                final = (ended or est.n_iter_ >= self.total or self._out_of_time()
                         or est.converged_)            # e.g. LIBSVM: solved to its tolerance
                if final:
                    yield self._point(final)
                    return
                if not at_end_only:             # a time limit cuts chunks to one pass: no point
                    yield self._point(final)
                    _warm(est.working_set())
        finally:
            est.finish()

    def _timed(self, call, *args):
        """call(*args) under the clocks, with the cyclic garbage collector off (as timeit does):
        collections are triggered by allocation counts that evaluation advances, so one landing
        inside a timed call would depend on how often the caller evaluates."""
        collecting = gc.isenabled()
        gc.disable()
        steps = 0
        try:
            cpu = time.process_time()          # the wall clock brackets the call alone
            wall = time.perf_counter()
            try:
                steps = call(*args)
                return steps
            finally:
                seconds = time.perf_counter() - wall
                self.cpu_seconds += time.process_time() - cpu
                self.train_seconds += seconds
                self.pieces.append((int(steps) if isinstance(steps, (int, np.integer)) else 0, seconds))
        finally:
            if collecting:
                gc.enable()

    def _out_of_time(self) -> bool:
        return bool(self.stop.seconds) and self.train_seconds >= self.stop.seconds

    def _point(self, final: bool) -> Point:
        est = self.estimator
        return Point(est.n_iter_, est.samples_seen_, self.train_seconds, self.cpu_seconds, final)


def trace(estimator, X, y, *, passes=None, iterations=None, seconds=None, every=None,
          initial=True, progress=None) -> Trace:
    """A timed training run of `estimator` (a kernelbench Solver) on (X, y), as the runner times
    its cells: iterate it for `Point`s. Set-up (begin) and `run` calls are timed; the caller's
    work between points is not, and afterwards the solver's working set is read back into the
    CPU caches (outside the timer) so that the next timed chunk does not depend on what the
    caller did (DESIGN.md §7: training time independent of how often one evaluates).

    Stops at `passes` / `iterations` / `seconds` of training (the first reached; none given: the
    iterations the estimator's own fit makes), or when the solver ends itself (converged_). Points: at iteration 0 (`initial`, if the model predicts before
    training), every `every` iterations (None: about 10 a pass; math.inf: at the end only) and at
    the end (final). `progress(done)` is called after every timed piece. The estimator is
    finished (training data dropped) when the iteration ends, however it ends.

        for point in trace(est, X, y, passes=2, every=100):
            print(point.iteration, point.train_seconds, est.score(X_valid, y_valid))
    """
    return Trace(estimator, X, y, passes=passes, iterations=iterations, seconds=seconds, every=every,
                 initial=initial, progress=progress)


def _warm(arrays) -> None:
    """Read one byte of every cache line of `arrays`, from the last one back while they fit in
    half the last-level cache, then in order, so that the
    last listed -- what the loop reads most -- is the most recent. What an uninterrupted run keeps
    cached comes back. Half: the cache is shared with the other cores (and, on a virtual machine,
    other tenants); reading a working set about its whole size back evicts what the loop reads
    most and slowed the next chunk (SVRG-RF's 26 MB feature matrix in a 32 MB cache: +0.3 ms a
    chunk). Of an array that does not fit whole, the part that does is read. Reading, not
    writing: nothing changes."""
    chosen, left = [], _cache_bytes() // 2
    for a in reversed(arrays):
        if not (a.size and a.flags.c_contiguous) or left < 64:
            continue
        data = a.reshape(-1).view(np.uint8)
        # An array larger than what is left: its first part. A loop that reads it at random (the
        # rows of an SVRG or AsyDSSKL feature matrix) keeps part of it cached when uninterrupted.
        chosen.append(data[:left])
        left -= min(left, data.size)
    for data in reversed(chosen):
        data[::64].max()


@functools.cache
def _cache_bytes() -> int:
    """The largest CPU cache (Linux sysfs: the last level, e.g. "32768K"); 32 MiB if unknown."""
    sizes = []
    for entry in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = entry.read_text().strip().upper()
            sizes.append(int(text.rstrip("KMG")) * {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1))
        except (OSError, ValueError):
            continue
    return max(sizes, default=32 * 2**20)


def train_cell(prepared: Prepared, cell: Cell, stop: StopConfig, experiment: str, *, sink,
               show=False, max_threads=None) -> dict:
    """Train one estimator, appending rows to `sink` at iteration 0, every `cell.every`
    iterations (None: ~10 per pass) and at the end; with curve=False only at the end. The last row
    has final = 1. The timing is `trace`'s. Returns the last row."""
    data, spec = prepared.data, prepared.spec
    X_train, y_train, X_eval, y_eval = data.X_train, data.y_train, data.X_test, data.y_test
    eval_rows = prepared.eval_rows
    if cell.train_rows is not None:                       # a cross-validation fold
        X_eval, y_eval = X_train[cell.valid_rows], y_train[cell.valid_rows]
        X_train, y_train = X_train[cell.train_rows], y_train[cell.train_rows]
        eval_rows = _eval_rows(len(cell.train_rows), cell.seed)
    if prepared.labeled is not None:                      # semi-supervised protocol (semisupervised.py)
        X_train, y_train, eval_rows = _ssl_training(prepared, cell, X_train, y_train, eval_rows)
    estimator = spec.build(cell.params, seed=cell.seed, task=data.task)
    defaults = spec.defaults()
    threads = cell.params.get("threads", defaults.get("threads"))
    if threads is not None and max_threads is not None:  # workers × threads ≤ cores
        threads = min(resolve_threads(threads), max_threads)
        estimator.set_params(threads=threads)
    # evaluation runs on the cores the cell was given: its threads, else its share of the machine
    eval_threads = resolve_threads(threads) if threads is not None else (max_threads or resolve_threads(0))
    base = {"experiment": experiment, "dataset": data.name, "algorithm": spec.name,
            "params": _params_json(defaults, cell.params), "trial": cell.trial, "seed": cell.seed,
            "fold": cell.fold, "budget": cell.budget,
            "threads": "" if threads is None else resolve_threads(threads)}
    X_sub, y_sub = X_train[eval_rows], y_train[eval_rows]
    stop = cell.stop or stop

    bar = tqdm(total=None, desc=f"{spec.name} trial {cell.trial}", unit="it", disable=not show,
               leave=False)
    timed = trace(estimator, X_train, y_train, passes=stop.passes, iterations=stop.iterations,
                  seconds=stop.seconds, every=cell.every if cell.curve else math.inf,
                  initial=cell.curve, progress=bar.update)
    try:
        timed.begin()
    except BudgetExceededError as e:                     # e.g. an O(n²) baseline at large n
        bar.close()
        estimator.finish()
        row = {**base, "iteration": 0, "samples_seen": 0, "train_seconds": 0.0,
               "status": "skipped", "message": str(e), "final": 1}
        sink.append(row)
        return row
    if math.isfinite(timed.total):
        bar.reset(total=timed.total)

    def evaluate(point: Point):
        # BLAS on one thread while evaluating: OpenBLAS workers spin for a while after a parallel
        # call, and would take the cores from the next timed chunk of an OpenMP solver.
        with blas_threads(1):
            row = _evaluate(estimator, base, point.train_seconds, cell.on, X_sub, y_sub, X_eval,
                            y_eval, data.task, eval_threads)
        bad = [k for k in ("objective", "train_mse", "test_mse", "train_mae", "test_mae")
               if k in row and not math.isfinite(row[k])]
        if bad:                                           # any algorithm: never write NaN/inf as ok
            raise DivergenceError(f"{' and '.join(bad)} became NaN/inf at iteration {estimator.n_iter_}; "
                                  "use a smaller step (or a larger t0)")
        return row

    row = {}
    try:
        for point in timed:
            row = evaluate(point)
            if point.final:
                break
            sink.append(row)
    except (DivergenceError, BudgetExceededError) as e:
        status = "diverged" if isinstance(e, DivergenceError) else "skipped"
        row = {**base, "iteration": estimator.n_iter_, "samples_seen": estimator.samples_seen_,
               "train_seconds": timed.train_seconds, "status": status, "message": str(e)}
    finally:
        bar.close()
        estimator.finish()
    row["final"] = 1
    sink.append(row)
    return row


def _ssl_training(prepared: Prepared, cell: Cell, X_train, y_train, eval_rows):
    """(X, y, evaluation rows) an algorithm trains on under `dataset.labeled`: the labeled rows
    (the CV's, or drawn with the trial seed) keep their labels, the others get NaN; a supervised
    algorithm gets the labeled rows alone. The evaluation subset always holds every labeled row."""
    if cell.labeled_rows is not None:                     # indices into the training part
        labeled = np.flatnonzero(np.isin(cell.train_rows, cell.labeled_rows))
    else:
        labeled = semisupervised.draw_labeled(y_train, prepared.labeled, cell.seed)
    semi = "semi-supervised" in prepared.spec.tasks
    X_fit, y_fit, _ = semisupervised.training_view(X_train, y_train, labeled, semi_supervised=semi)
    if semi:
        return X_fit, y_fit, np.union1d(eval_rows, labeled)
    return X_fit, y_fit, np.arange(len(y_fit))


def _determinism(prepared: Prepared) -> str:
    return prepared.spec.build({}, seed=0, task=prepared.data.task).determinism


def _params_json(defaults: dict, params: dict) -> str:
    return json.dumps({**defaults, **params}, sort_keys=True, default=str)


def _final_rows(run: Run) -> list[dict]:
    """The last row of every finished cell, from results.csv (also the cells of earlier sessions)."""
    df = read_results(run.path)
    if not len(df):
        return []
    return [{k: (None if _missing(v) else v) for k, v in r.items()}
            for r in final_rows(df, folds=True).to_dict("records")]


def _missing(value) -> bool:
    try:
        return bool(value != value) or value is None
    except (TypeError, ValueError):   # pandas NA
        return True


def _eval_rows(n: int, seed: int) -> np.ndarray:
    if n <= EVAL_TRAIN_ROWS:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, EVAL_TRAIN_ROWS, replace=False))


def _total_steps(stop: StopConfig, est) -> float:
    """Iterations the stop rule allows a begun estimator; with none of passes / iterations /
    seconds, those of its own fit (its `passes`, resolved at begin where `auto`)."""
    if stop.as_fit:
        return est.planned_steps(stop.fraction or 1.0)
    limits = []
    if stop.passes is not None:
        limits.append(math.ceil(stop.passes * est.steps_per_pass))
    if stop.iterations is not None:
        limits.append(stop.iterations)
    return min(limits) if limits else math.inf


def _evaluate(est, base, train_seconds, on, X_sub, y_sub, X_test, y_test, task, threads=1) -> dict:
    row = {**base, "iteration": est.n_iter_, "samples_seen": est.samples_seen_,
           "train_seconds": train_seconds, "status": "ok", **est.record()}
    if "counters" in row:              # algorithm-specific counters (merge frequency, sparsity, ...)
        row["counters"] = json.dumps(row["counters"], sort_keys=True)
    regression = task == "regression"
    if "objective" in on:
        objective = est.objective(X_sub, y_sub)     # None: the model defines no objective
        if objective is not None:
            row["objective"] = objective
    # train_error / train_mse: the task's own measure; *_mae: mean absolute error, regression only
    # (config.py refuses it for a classification set)
    for part, X, y in (("train", X_sub, y_sub), ("test", X_test, y_test)):
        wanted = {f"{part}_error", f"{part}_mse", f"{part}_mae"} & set(on)
        if X is None or not X.shape[0] or not wanted or (wanted == {f"{part}_mae"} and not regression):
            continue
        started = time.perf_counter()
        pred = _predict(est, X, threads)
        if part == "test":
            row["predict_seconds"] = time.perf_counter() - started      # wall time of the whole part
        if wanted - {f"{part}_mae"}:
            row[f"{part}_mse" if regression else f"{part}_error"] = _score(pred, y, regression)
        if f"{part}_mae" in wanted and regression:
            row[f"{part}_mae"] = _mean_absolute_error(pred, y)
    return row


def _predict(est, X, threads: int):
    """est.predict(X); a part over PREDICT_SPLIT_ROWS rows goes in row chunks, concatenated in
    order (predictions are per row: identical to one call), by the estimator's
    `predict_parallelism` (solvers/base.py): "internal" = one call, it threads and chunks itself;
    "rows" = chunks on `threads` threads at once; "serial" = chunks one after another. The caller
    pins BLAS to one thread, so k threads use k cores. Ctrl-C cancels the chunks not started."""
    n = X.shape[0]
    mode = est.predict_parallelism
    if n <= PREDICT_SPLIT_ROWS or mode == "internal":
        return est.predict(X)
    starts = range(0, n, PREDICT_CHUNK_ROWS)

    def chunk(r0):
        return est.predict(X[r0:r0 + PREDICT_CHUNK_ROWS])

    workers = min(threads, len(starts)) if mode == "rows" else 1
    if workers <= 1:
        return np.concatenate([chunk(r0) for r0 in starts])
    pool = ThreadPoolExecutor(workers, thread_name_prefix="kernelbench-predict")
    try:
        return np.concatenate(list(pool.map(chunk, starts)))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _mean_absolute_error(pred, y):
    """(1/n) Σ |ŷ_i − y_i|: Dai et al.'s measure for QuantumMachine / MolecularSpace (Fig. 1 (7)-(8))."""
    return float(np.mean(np.abs(np.asarray(pred, dtype=float) - y)))


def _score(pred, y, regression):
    if regression:
        return float(np.mean((np.asarray(pred, dtype=float) - y) ** 2))
    known = ~np.isnan(y) if np.asarray(y).dtype.kind == "f" else slice(None)   # NaN: unlabeled row
    return float(np.mean(np.asarray(pred)[known] != np.asarray(y)[known]))


def _describe(data: Dataset) -> dict:
    return {"name": data.name, "task": data.task, "description": data.description,
            "n_train": int(data.X_train.shape[0]), "n_features": int(data.X_train.shape[1]),
            "n_test": int(data.X_test.shape[0]) if data.X_test is not None else 0,
            "dtype": str(data.X_train.dtype), **data.provenance}
