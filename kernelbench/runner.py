"""config → dataset → estimator → evaluation schedule → rows → results.csv (DESIGN.md §2).

The runner knows the stepping protocol of kernelbench.solvers.base (begin / run / finish) and
nothing of solver internals. It times `run` chunks only; every evaluation happens outside the
timer, so `train_seconds` is pure training time.
"""
from __future__ import annotations

import json
import math
import resource
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from kernelbench.config import ExperimentConfig, StopConfig, config_to_dict, expand_grid
from kernelbench.data import Dataset, load_dataset, prepare
from kernelbench.errors import ConfigError, DataError
from kernelbench.registry import AlgorithmSpec, algorithms
from kernelbench.results import Run
from kernelbench.solvers.base import DivergenceError

EVAL_TRAIN_ROWS = 5000   # objective / train error are measured on a fixed random subset this large
SMOKE_TRAIN_ROWS = 500
SMOKE_TEST_ROWS = 500
SMOKE_ITERATIONS = 5


@dataclass
class Prepared:
    """What one run trains on: the algorithm, the (prepared) dataset and the evaluation subset."""
    spec: AlgorithmSpec
    data: Dataset
    eval_rows: np.ndarray


def prepare_experiment(cfg: ExperimentConfig, *, smoke: bool = False, progress: bool = True) -> Prepared:
    """Resolve the algorithm and load + prepare the dataset; every user error surfaces here,
    before any training."""
    spec = algorithms()[cfg.algorithm.name]
    dc = cfg.dataset
    if dc.labeled is not None and "semi-supervised" not in spec.tasks:
        raise ConfigError(f"dataset.labeled is for semi-supervised algorithms; {spec.name!r} is "
                          "supervised and trains on every label: remove dataset.labeled")
    data = load_dataset(dc.name, path=dc.path, test=dc.test, seed=cfg.seed, progress=progress)
    if data.task not in spec.tasks:
        raise DataError(
            f"dataset {data.name!r} is a {data.task} task, but algorithm {spec.name!r} handles "
            f"{', '.join(spec.tasks)}; choose another dataset or algorithm (kernelbench algorithms)")
    subsample = dc.subsample
    if smoke:
        subsample = min(subsample or SMOKE_TRAIN_ROWS, SMOKE_TRAIN_ROWS)
    data = prepare(data, subsample=subsample, scale=dc.scale, seed=cfg.seed)
    if smoke and data.X_test is not None and data.X_test.shape[0] > SMOKE_TEST_ROWS:
        keep = np.random.default_rng(cfg.seed).choice(data.X_test.shape[0], SMOKE_TEST_ROWS, replace=False)
        data = replace(data, X_test=data.X_test[keep], y_test=data.y_test[keep])
    return Prepared(spec, data, _eval_rows(data.X_train.shape[0], cfg.seed))


def smoke_config(cfg: ExperimentConfig, spec: AlgorithmSpec) -> ExperimentConfig:
    """A few iterations with the algorithm's small settings, one trial, the first grid cell."""
    params = {**cfg.algorithm.params, **spec.smoke_params}
    first_cell = expand_grid(cfg.grid)[0] if cfg.grid else {}
    params.update(first_cell)
    return replace(cfg, algorithm=replace(cfg.algorithm, params=params), grid={}, trials=1,
                   stop=StopConfig(passes=None, iterations=SMOKE_ITERATIONS, seconds=None),
                   evaluate=replace(cfg.evaluate, every=max(1, SMOKE_ITERATIONS // 2)))


def run_experiment(cfg: ExperimentConfig, *, out_dir="results", smoke=False, quiet=False,
                   command=None) -> Path:
    """Run every (grid cell, trial) of `cfg`, evaluating on the test part; returns the run folder."""
    show = not quiet and sys.stderr.isatty()
    spec = algorithms()[cfg.algorithm.name]
    if smoke:
        cfg = smoke_config(cfg, spec)
    prepared = prepare_experiment(cfg, smoke=smoke, progress=show)
    cells = expand_grid(cfg.grid) if cfg.grid else [{}]
    with Run.create(out_dir, cfg.name, config_to_dict(cfg), command=command) as run:
        run.update_meta(dataset=_describe(prepared.data), smoke=smoke)
        summary = []
        for cell in cells:
            params = {**cfg.algorithm.params, **cell}
            for trial in range(cfg.trials):
                seed = cfg.seed + trial
                last = train_and_evaluate(prepared, params, seed=seed, stop=cfg.stop,
                                          every=cfg.evaluate.every, on=cfg.evaluate.on, run=run,
                                          experiment=cfg.name, trial=trial, show=show)
                summary.append({k: last.get(k) for k in ("params", "trial", "status", "test_error",
                                                         "test_mse", "train_seconds")})
        run.finish("finished", summary=summary,
                   peak_memory_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return run.path


def grid_search(cfg: ExperimentConfig, *, out_dir="results", quiet=False, command=None) -> Path:
    """k-fold cross-validation over the grid on the training part (stratified for classification),
    then a refit of the best cell on the whole training part, evaluated on the test part.
    Every (cell, fold) is a row (fold = 0..k-1, validation metric in the test_* column); the refit
    rows have an empty fold. Cells run one after another (parallel runs arrive with the grid issue)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    show = not quiet and sys.stderr.isatty()
    prepared = prepare_experiment(cfg, progress=show)
    data = prepared.data
    regression = data.task == "regression"
    metric = "test_mse" if regression else "test_error"
    splitter = (KFold if regression else StratifiedKFold)(n_splits=cfg.cv, shuffle=True,
                                                        random_state=cfg.seed)
    y = data.y_train
    if not regression and np.min(np.unique(y, return_counts=True)[1]) < cfg.cv:
        raise DataError(f"dataset {data.name!r}: a class has fewer samples than the {cfg.cv} folds; "
                        "use fewer folds (--cv) or more data")
    folds = list(splitter.split(np.zeros(len(y)), y))
    cells = expand_grid(cfg.grid) if cfg.grid else [{}]
    with Run.create(out_dir, cfg.name, config_to_dict(cfg), command=command) as run:
        run.update_meta(dataset=_describe(data), cv=cfg.cv)
        table = []
        bar = tqdm(total=len(cells) * len(folds), desc="grid", unit="fit", disable=not show)
        for cell in cells:
            params = {**cfg.algorithm.params, **cell}
            scores = []
            for fold, (train_rows, valid_rows) in enumerate(folds):
                part = replace(data, X_train=data.X_train[train_rows], y_train=y[train_rows],
                               X_test=data.X_train[valid_rows], y_test=y[valid_rows])
                last = train_and_evaluate(
                    Prepared(prepared.spec, part, _eval_rows(len(train_rows), cfg.seed)), params,
                    seed=cfg.seed, stop=cfg.stop, every=None, on=(metric,), run=run,
                    experiment=cfg.name, trial=0, fold=fold, show=False)
                scores.append(last.get(metric, np.nan) if last.get("status") == "ok" else np.nan)
                bar.update(1)
            table.append({"params": cell, f"mean_{metric}": float(np.mean(scores)),
                          f"std_{metric}": float(np.std(scores)), "folds": scores})
        bar.close()
        finite = [row for row in table if np.isfinite(row[f"mean_{metric}"])]
        if not finite:
            run.finish("failed", cells=table, error="every grid cell diverged or failed")
            raise DataError("every grid cell diverged or failed (see results.csv); try smaller steps")
        best = min(finite, key=lambda row: row[f"mean_{metric}"])
        refit = []
        for trial in range(cfg.trials):
            last = train_and_evaluate(prepared, {**cfg.algorithm.params, **best["params"]},
                                      seed=cfg.seed + trial, stop=cfg.stop, every=cfg.evaluate.every,
                                      on=cfg.evaluate.on, run=run, experiment=cfg.name, trial=trial,
                                      show=show)
            refit.append({k: last.get(k) for k in ("trial", "status", "test_error", "test_mse")})
        run.finish("finished", cells=table, best=best, refit=refit)
    return run.path


def _eval_rows(n: int, seed: int) -> np.ndarray:
    if n <= EVAL_TRAIN_ROWS:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, EVAL_TRAIN_ROWS, replace=False))


def train_and_evaluate(prepared: Prepared, params: dict, *, seed: int, stop: StopConfig,
                       every: int | None, on, run: Run, experiment: str, trial: int, fold="",
                       show=False) -> dict:
    """Train one estimator, appending a row at iteration 0, every `every` iterations and at the
    end (every=None: one row, at the end). Returns the last row."""
    data, spec = prepared.data, prepared.spec
    X_eval, y_eval = data.X_test, data.y_test
    estimator = spec.build(params, seed=seed, task=data.task)
    resolved = {**spec.defaults(), **params}
    base = {"experiment": experiment, "dataset": data.name, "algorithm": spec.name,
            "params": json.dumps(resolved, sort_keys=True, default=str), "trial": trial,
            "seed": seed, "fold": fold, "threads": resolved.get("threads", "")}
    X_sub, y_sub = data.X_train[prepared.eval_rows], data.y_train[prepared.eval_rows]

    estimator.begin(data.X_train, data.y_train)
    total = _total_steps(stop, estimator.steps_per_pass)
    train_seconds = 0.0
    row = {}
    if every is not None:
        row = _evaluate(estimator, base, 0.0, on, X_sub, y_sub, X_eval, y_eval, data.task)
        run.append(row)
        chunk_size = every
    else:
        chunk_size = total if math.isfinite(total) else 10**9
    bar = tqdm(total=total if math.isfinite(total) else None, desc=f"{spec.name} trial {trial}",
               unit="it", disable=not show, leave=False)
    try:
        while estimator.n_iter_ < total and not (stop.seconds and train_seconds >= stop.seconds):
            chunk = int(min(chunk_size, total - estimator.n_iter_))
            started = time.perf_counter()
            done = estimator.run(chunk)
            train_seconds += time.perf_counter() - started
            bar.update(done)
            row = _evaluate(estimator, base, train_seconds, on, X_sub, y_sub, X_eval, y_eval, data.task)
            run.append(row)
    except DivergenceError as e:
        row = {**base, "iteration": estimator.n_iter_, "samples_seen": estimator.samples_seen_,
               "train_seconds": train_seconds, "status": "diverged", "message": str(e)}
        run.append(row)
    finally:
        bar.close()
        estimator.finish()
    return row


def _total_steps(stop: StopConfig, steps_per_pass: int) -> float:
    limits = []
    if stop.passes is not None:
        limits.append(math.ceil(stop.passes * steps_per_pass))
    if stop.iterations is not None:
        limits.append(stop.iterations)
    if not limits and not stop.seconds:
        raise ConfigError("stop: set at least one of passes, iterations, seconds")
    return min(limits) if limits else math.inf


def _evaluate(est, base, train_seconds, on, X_sub, y_sub, X_test, y_test, task) -> dict:
    row = {**base, "iteration": est.n_iter_, "samples_seen": est.samples_seen_,
           "train_seconds": train_seconds, "status": "ok"}
    if hasattr(est, "n_random_features_"):
        row["n_features"] = est.n_random_features_
    if hasattr(est, "n_support_vectors_"):
        row["n_support_vectors"] = est.n_support_vectors_
    if hasattr(est, "counters"):       # algorithm-specific counters (merge frequency, sparsity, ...)
        row["counters"] = json.dumps(est.counters(), sort_keys=True)
    regression = task == "regression"
    if "objective" in on and hasattr(est, "objective"):
        row["objective"] = est.objective(X_sub, y_sub)
    if ("train_error" in on or "train_mse" in on) and X_sub.shape[0]:
        pred = est.predict(X_sub)
        row["train_mse" if regression else "train_error"] = _score(pred, y_sub, regression)
    if X_test is not None and X_test.shape[0] and ({"test_error", "test_mse"} & set(on)):
        started = time.perf_counter()
        pred = est.predict(X_test)
        row["predict_seconds"] = time.perf_counter() - started
        row["test_mse" if regression else "test_error"] = _score(pred, y_test, regression)
    return row


def _score(pred, y, regression):
    if regression:
        return float(np.mean((np.asarray(pred, dtype=float) - y) ** 2))
    return float(np.mean(pred != y))


def _describe(data: Dataset) -> dict:
    return {"name": data.name, "task": data.task, "description": data.description,
            "n_train": int(data.X_train.shape[0]), "n_features": int(data.X_train.shape[1]),
            "n_test": int(data.X_test.shape[0]) if data.X_test is not None else 0}
