"""`kernelbench grid`: k-fold cross-validation of a grid on the training part, then the best cell
refitted on the whole training part and scored on the test part (kernelbench/experiment/selection.py
is the path it shares with `tune`)."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from kernelbench.config import ExperimentConfig, expand_grid
from kernelbench.errors import DataError
from kernelbench.spaces import grid_from_space
from kernelbench.solvers.base import BudgetExceededError

from .cells import Cell, Execution, execute, ssl_training
from .folder import open_run
from .prepare import Prepared, describe, determinism, prepare_experiment
from .selection import (mean_or_none, refit, refuse_without_test, resolve_space, selection_metric,
                        validation_cells, validation_values)
from .splits import selection_splits


def grid_search(cfg: ExperimentConfig, *, out_dir="results", quiet=False, command=None,
                resume=False, execution: Execution | None = None) -> Path:
    """k-fold cross-validation over the grid on the training part (stratified for classification;
    with dataset.labeled the papers' fold scheme), then a refit of the best cell on the whole
    training part, evaluated on the test part. Without `grid:`, the grid is the search space
    (`search:` or the algorithm's declared one) at search.GRID_POINTS values per range. With
    `then:`, a second stage: its cells, each with the best grid values fixed, are cross-validated
    on the same folds and the best of them is refitted (Geng et al. §6.1: η searched after C and
    σ). An algorithm that refuses the refit's training set (`refit_refusal`: an O(n²) baseline
    above its max_points) gets its clean "skipped" refit rows and no search: a best it could never
    be refitted with is not searched for.
    Every (cell, fold) is a row (fold = 0..k-1, validation metric in the test_* column); the refit
    rows have an empty fold. run.json: `cells` (both stages, each row with its `stage`), `best`."""
    refuse_without_test(cfg, "grid")
    execution = execution or Execution()
    execution.show = not quiet and sys.stderr.isatty()
    prepared = prepare_experiment(cfg, progress=execution.show)
    data = prepared.data
    run_cfg = cfg           # the run's identity (resume, reproduce's done check): the config as given
    grid_from = "config"
    if not cfg.grid:        # the config's `search:` or the algorithm's declared space, as a grid
        grid_from = "the config's search:" if cfg.search else "the algorithm's declared search space"
        space, scales = resolve_space(cfg.search, prepared.spec.parameters, data.X_train,
                                      cfg.algorithm.params, cfg.seed)
        cfg = replace(cfg, grid=grid_from_space(space, scales))
    metric = selection_metric(data.task)
    folds = selection_splits(prepared, cfg, "paper" if prepared.labeled is not None else "cv")
    defaults = prepared.spec.defaults()
    n_train = len(data.y_train)

    def cv_cells(grid_cells):
        return validation_cells(cfg, [(0, g) for g in grid_cells], folds, metric, cfg.stop, n_train)

    def fold_table(grid_cells, stage):
        """Per cell: its stage, the searched values, the folds' metric, their mean and std."""
        table = []
        for g, values in zip(grid_cells, validation_values(run, cv_cells(grid_cells), len(folds), defaults,
                                                           metric)):
            mean = mean_or_none(values)
            std = None if mean is None else float(np.std(values))
            table.append({"stage": stage, "params": g, f"mean_{metric}": mean, f"std_{metric}": std,
                          "folds": values})
        return table

    def lowest(table):
        finite = [row for row in table if row[f"mean_{metric}"] is not None]      # None: diverged, failed, skipped
        return min(finite, key=lambda row: row[f"mean_{metric}"]) if finite else None

    grid_cells = expand_grid(cfg.grid) if cfg.grid else [{}]
    then_size = len(expand_grid(cfg.then)) if cfg.then else 0
    label_cfg = replace(cfg, grid={**cfg.grid, **cfg.then})     # progress labels name the then: axes too
    total = (len(grid_cells) + then_size) * cfg.cv + cfg.trials
    refused = refit_refusal(prepared, cfg.algorithm.params, cfg.seed)
    with open_run(run_cfg, out_dir, command, resume, total_cells=total) as (run, done):
        run.update(dataset=describe(data), cv=cfg.cv, determinism=determinism(prepared), labeled=prepared.labeled,
                   grid={**cfg.grid, **cfg.then}, grid_from=grid_from)
        if refused:
            refitted = refit(prepared, cfg, {}, run, done, execution, label_cfg)
            run.finish("finished", cells=[], best=None, refit=refitted, skipped=refused)
            return run.path
        execute(prepared, cv_cells(grid_cells), label_cfg, run, done, execution, desc="grid")
        table = fold_table(grid_cells, stage=1)
        best = lowest(table)
        if best is not None and cfg.then:     # stage 2: the then: cells with the best grid values
            then_cells = [{**best["params"], **t} for t in expand_grid(cfg.then)]
            execute(prepared, cv_cells(then_cells), label_cfg, run, done, execution, desc="then")
            stage2 = fold_table(then_cells, stage=2)
            table += stage2
            best = lowest(stage2)
        if best is None:
            stage = "then:" if any(row["stage"] == 2 for row in table) else "grid"
            run.finish("failed", cells=table, error=f"every {stage} cell diverged, failed or was skipped")
            raise DataError(f"every {stage} cell diverged, failed or was skipped (see results.csv); "
                            "try smaller steps")
        refitted = refit(prepared, cfg, best["params"], run, done, execution, label_cfg)
        run.finish("finished", cells=table, best=best, refit=refitted)
    return run.path


def refit_refusal(prepared: Prepared, params: dict, seed: int) -> str | None:
    """Why the algorithm refuses the refit's training set -- its BudgetExceededError in begin(),
    e.g. an O(n²) baseline above max_points -- or None. Only begin() runs (set-up, no training)."""
    X, y = prepared.data.X_train, prepared.data.y_train
    if prepared.labeled is not None:
        X, y, _ = ssl_training(prepared, Cell(params, 0, seed), X, y, prepared.eval_rows)
    estimator = prepared.spec.build(params, seed=seed, task=prepared.data.task)
    try:
        estimator.begin(X, y)
    except BudgetExceededError as e:
        return str(e)
    finally:
        estimator.finish()
    return None
