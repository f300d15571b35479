"""`kernelbench run`: every (grid cell, trial) of a config trained and evaluated on the test part --
or, with `protocol: paper`, on the semi-supervised papers' unlabeled folds."""
from __future__ import annotations

import resource
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from kernelbench.config import ExperimentConfig, expand_grid
from kernelbench.data import UserArrays
from kernelbench.estimators import algorithms

from .cells import Cell, Execution, execute, finished_rows, outcome
from .folder import open_run
from .prepare import Prepared, describe, determinism, prepare_experiment, smoke_config
from .splits import selection_splits
from .stopping import split_stop

SUMMARY_COLUMNS = ("params", "trial", "status", "test_error", "test_mse", "train_seconds", "resolved")


def run_experiment(cfg: ExperimentConfig, *, out_dir="results", smoke=False, quiet=False,
                   command=None, resume=False, execution: Execution | None = None,
                   arrays: UserArrays | None = None) -> Path:
    """Run every (grid cell, trial) of `cfg`, evaluating on the test part; returns the run folder.
    `arrays`: the data handed over in Python (kernelbench.api.run), for a config with dataset.arrays.

    With `protocol: paper` (Geng et al. §6.1) the test part is not used: the data file is the
    training part -- for `dataset.test: <fraction>` what remains after that fraction is split
    off, for `test: official` the training file (the sizes of Geng's Table 3). Per trial t, L
    labeled rows of it are drawn and the unlabeled rest is split into `cv` folds
    (splits.selection_splits, seed = seed + t: a new draw per trial, as "the average of 10
    trials" implies); every (grid cell, trial, fold i) is a cell that trains on the labeled rows +
    unlabeled fold i and scores the other folds with their true labels (test_* columns, fold = i)."""
    execution = execution or Execution()
    execution.show = not quiet and sys.stderr.isatty()
    spec = algorithms()[cfg.algorithm.name]
    if smoke:
        cfg = smoke_config(cfg, spec)
    prepared = prepare_experiment(cfg, smoke=smoke, progress=execution.show, arrays=arrays)
    paper = cfg.protocol == "paper"
    if paper:                   # the paper scores its unlabeled folds; the test part stays unread
        prepared = replace(prepared, data=replace(prepared.data, X_test=None, y_test=None))
        # too few rows for the folds: refused now, before a run folder exists
        selection_splits(prepared, cfg, "paper")
    grid_cells = expand_grid(cfg.grid) if cfg.grid else [{}]
    if paper:   # one stage per trial: its folds' index arrays (~k × the rows) are made when it starts
        stages = [(f"trial {t}", paper_protocol_cells(cfg, prepared, grid_cells, t))
                  for t in range(cfg.trials)]
    else:
        stages = [("cells", [Cell(params={**cfg.algorithm.params, **grid_cell}, trial=trial,
                                  seed=cfg.seed + trial, evaluate=cfg.evaluate, stop=cfg.stop)
                             for grid_cell in grid_cells for trial in range(cfg.trials)])]
    total = len(grid_cells) * cfg.trials * (cfg.cv if paper else 1)
    with open_run(cfg, out_dir, command, resume, total_cells=total) as (run, done):
        run.update(dataset=describe(prepared.data), smoke=smoke, determinism=determinism(prepared),
                   labeled=prepared.labeled, protocol=cfg.protocol, **({"cv": cfg.cv} if paper else {}))
        for desc, cells in stages:
            execute(prepared, list(cells), cfg, run, done, execution, desc=desc)
        last = finished_rows(run)
        summary = fold_means(last) if paper else [outcome(r, SUMMARY_COLUMNS) for r in last]
        run.finish("finished", summary=summary,
                   peak_memory_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return run.path


def paper_protocol_cells(cfg: ExperimentConfig, prepared: Prepared, grid_cells, trial: int):
    """The cells of one trial under `protocol: paper` (see run_experiment), built as grid_search
    builds its cross-validation cells, with the config's evaluation schedule. A generator: the
    folds are drawn when the trial's stage starts."""
    seed = cfg.seed + trial
    n_file = len(prepared.data.y_train)
    folds = selection_splits(prepared, cfg, "paper", seed=seed)
    for g in grid_cells:
        for i, (train_rows, valid_rows, labeled_rows) in enumerate(folds):
            # §6.1 "one pass over the entire dataset": a pass counts the data file's rows, not the
            # fold's (about a fifth of them): a fold trains as many steps as the held-out run
            yield Cell(params={**cfg.algorithm.params, **g}, trial=trial, seed=seed, fold=i,
                       train_rows=train_rows, valid_rows=valid_rows, labeled_rows=labeled_rows,
                       evaluate=cfg.evaluate, stop=split_stop(cfg, cfg.stop, n_file, train_rows, labeled_rows))


def fold_means(rows: list[dict]) -> list[dict]:
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
                    "fold_resolved": [outcome(r, ("resolved",))["resolved"] for r in folds],
                    "train_seconds": float(sum(r.get("train_seconds") or 0.0 for r in folds))})
    return out
