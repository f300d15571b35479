"""Cells: one estimator trained on one split, keyed (params, trial, fold, budget), and where they run.

Work is a list of cells run one after another, on local processes (joblib, `jobs`) or on a Dask
cluster (`scheduler`), through the same code path. A cell's rows are appended as they are
produced; its last row has final = 1, so a resumed run skips finished cells and drops the partial
rows of a killed one.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
from joblib import Parallel, delayed, parallel_config
from threadpoolctl import threadpool_limits
from tqdm.auto import tqdm

from kernelbench import semisupervised
from kernelbench._vocab import SEMI_SUPERVISED
from kernelbench.config import EvaluateConfig, ExperimentConfig, StopConfig
from kernelbench.errors import KernelbenchError, require_extra
from kernelbench.results import Run, cell_key, final_rows, read_results
from kernelbench.solvers.base import BudgetExceededError, DivergenceError, blas_threads, resolve_threads

from .metrics import evaluate
from .prepare import Prepared, evaluation_rows
from .timing import Point, trace


@dataclass
class Cell:
    """One training job: params on a split (fold = "" for the train/test split), trained as its
    stop rule says and evaluated on its schedule."""
    params: dict
    trial: int
    seed: int
    fold: object = ""
    train_rows: np.ndarray | None = None      # CV: rows of the training part used for training
    valid_rows: np.ndarray | None = None      # CV: rows evaluated in place of the test part
    labeled_rows: np.ndarray | None = None    # SSL CV: the labeled rows (else drawn per trial seed)
    curve: bool = True                        # rows along the way (False: only at the end, e.g. CV folds)
    evaluate: EvaluateConfig = EvaluateConfig()   # when rows are written (curve) and what they measure
    stop: StopConfig = StopConfig()           # the training budget (unset: the estimator's own fit)
    budget: float | None = None               # tune: that budget in the config's unit, for results

    def key(self, defaults: dict) -> tuple:
        return cell_key(params_json(defaults, self.params), self.trial, self.fold, self.budget)


@dataclass
class Execution:
    """Where cells run: jobs = local processes (1 = in this process), scheduler = a Dask address."""
    jobs: int = 1
    scheduler: str | None = None
    show: bool = False


def train_cell(prepared: Prepared, cell: Cell, experiment: str, *, sink, show=False, max_threads=None) -> dict:
    """Train one estimator for `cell.stop`, appending rows to `sink` at iteration 0, every
    `cell.evaluate.every` iterations (None: ~10 per pass) and at the end; with curve=False only at
    the end. The last row has final = 1. The timing is `trace`'s. Returns the last row."""
    data, spec = prepared.data, prepared.spec
    X_train, y_train, X_eval, y_eval = data.X_train, data.y_train, data.X_test, data.y_test
    eval_rows = prepared.eval_rows
    if cell.train_rows is not None:                       # a cross-validation fold
        X_eval, y_eval = X_train[cell.valid_rows], y_train[cell.valid_rows]
        X_train, y_train = X_train[cell.train_rows], y_train[cell.train_rows]
        eval_rows = evaluation_rows(len(cell.train_rows), cell.seed)
    if prepared.labeled is not None:                      # semi-supervised protocol (semisupervised.py)
        X_train, y_train, eval_rows = ssl_training(prepared, cell, X_train, y_train, eval_rows)
    estimator = spec.build(cell.params, seed=cell.seed, task=data.task)
    defaults = spec.defaults()
    threads = cell.params.get("threads", defaults.get("threads"))
    if threads is not None and max_threads is not None:  # workers × threads ≤ cores
        threads = min(resolve_threads(threads), max_threads)
        estimator.set_params(threads=threads)
    # evaluation runs on the cores the cell was given: its threads, else its share of the machine
    eval_threads = resolve_threads(threads) if threads is not None else (max_threads or resolve_threads(0))
    base = {"experiment": experiment, "dataset": data.name, "algorithm": spec.name,
            "params": params_json(defaults, cell.params), "trial": cell.trial, "seed": cell.seed,
            "fold": cell.fold, "budget": cell.budget,
            "threads": "" if threads is None else resolve_threads(threads)}
    X_sub, y_sub = X_train[eval_rows], y_train[eval_rows]

    bar = tqdm(total=None, desc=f"{spec.name} trial {cell.trial}", unit="it", disable=not show,
               leave=False)
    timed = trace(estimator, X_train, y_train, cell.stop, every=cell.evaluate.every if cell.curve else math.inf,
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
    base["resolved"] = resolved_params(estimator, cell.stop)

    def measured(point: Point):
        # BLAS on one thread while evaluating: OpenBLAS workers spin for a while after a parallel
        # call, and would take the cores from the next timed chunk of an OpenMP solver.
        with blas_threads(1):
            row = evaluate(estimator, base, point.train_seconds, cell.evaluate.on, X_sub, y_sub, X_eval,
                           y_eval, data.task, eval_threads)
        row["train_memory_mb"] = point.train_memory_mb
        bad = [k for k in ("objective", "train_mse", "test_mse", "train_mae", "test_mae")
               if k in row and not math.isfinite(row[k])]
        if bad:                                           # any algorithm: never write NaN/inf as ok
            raise DivergenceError(f"{' and '.join(bad)} became NaN/inf at iteration {estimator.n_iter_}; "
                                  "use a smaller step (or a larger t0)")
        return row

    row = {}
    try:
        for point in timed:
            row = measured(point)
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


def resolved_params(estimator, stop: StopConfig) -> dict | None:
    """The values the begun estimator chose for parameters given as a rule (Solver.resolved_params),
    None if none; its `passes` only when `stop` is its own fit's -- otherwise the stop rule, not
    the estimator's passes, decides how long it trains."""
    resolved = estimator.resolved_params()
    if not stop.as_fit:
        resolved.pop("passes", None)
    return resolved or None


def ssl_training(prepared: Prepared, cell: Cell, X_train, y_train, eval_rows):
    """(X, y, evaluation rows) an algorithm trains on under `dataset.labeled`: the labeled rows
    (the CV's, or drawn with the trial seed) keep their labels, the others get NaN; a supervised
    algorithm gets the labeled rows alone. The evaluation subset always holds every labeled row."""
    if cell.labeled_rows is not None:                     # indices into the training part
        labeled = np.flatnonzero(np.isin(cell.train_rows, cell.labeled_rows))
    else:
        labeled = semisupervised.draw_labeled(y_train, prepared.labeled, cell.seed)
    semi = SEMI_SUPERVISED in prepared.spec.tasks
    X_fit, y_fit, _ = semisupervised.training_view(X_train, y_train, labeled, semi_supervised=semi)
    if semi:
        return X_fit, y_fit, np.union1d(eval_rows, labeled)
    return X_fit, y_fit, np.arange(len(y_fit))


def params_json(defaults: dict, params: dict) -> str:
    return json.dumps({**defaults, **params}, sort_keys=True, default=str)


def finished_rows(run: Run) -> list[dict]:
    """The last row of every finished cell, from results.csv (also the cells of earlier sessions)."""
    df = read_results(run.path)
    if not len(df):
        return []
    return [{k: (None if _missing(v) else v) for k, v in r.items()}
            for r in final_rows(df, folds=True).to_dict("records")]


def outcome(row: dict, columns) -> dict:
    """A finished cell's `columns` for run.json; its resolved values (results' JSON text) as a
    mapping, None where nothing was resolved."""
    out = {k: row.get(k) for k in columns}
    if "resolved" in out:
        out["resolved"] = json.loads(out["resolved"]) if out["resolved"] else None
    return out


def _missing(value) -> bool:
    try:
        return bool(value != value) or value is None
    except (TypeError, ValueError):   # pandas NA
        return True


def execute(prepared: Prepared, cells: list[Cell], cfg: ExperimentConfig, run: Run, done: set,
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
                train_cell(prepared, cell, cfg.name, sink=run, show=execution.show)
                done.add(cell.key(defaults))
                bar.update(1)
            return
        per_worker = max(1, resolve_threads(0) // workers) if execution.scheduler is None else None
        with _backend(execution, per_worker) as backend, parallel_config(**backend):
            jobs = Parallel(n_jobs=workers, return_as="generator_unordered")(
                delayed(_cell_rows)(prepared, cell, cfg.name, per_worker) for cell in todo)
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
        require_extra("distributed", "--scheduler (cells on a Dask cluster)")
        from distributed import Client     # optional: the dask extra
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


def _cell_rows(prepared: Prepared, cell: Cell, experiment: str, max_threads):
    """A cell on a worker: its rows, returned when it finishes."""
    rows: list[dict] = []
    with threadpool_limits(limits=max_threads):
        train_cell(prepared, cell, experiment, sink=rows, max_threads=max_threads)
    return rows
