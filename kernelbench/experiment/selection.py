"""The one model-selection path that `grid`, `tune` and the papers' protocol share: validation cells
on splits of the training part (kernelbench/experiment/splits.py), their scores, and the refit of
the chosen setting on the whole training part, scored on the test part."""
from __future__ import annotations

import numpy as np

from kernelbench.config import EvaluateConfig, ExperimentConfig, StopConfig
from kernelbench.errors import ConfigError
from kernelbench.results import Run, cell_key
from kernelbench.spaces import default_space
from kernelbench.solvers.kernels import median_gamma

from .cells import Cell, Execution, execute, finished_rows, outcome
from .prepare import Prepared
from .stopping import split_stop

REFIT_COLUMNS = ("trial", "status", "test_error", "test_mse", "train_seconds", "resolved")


def refuse_without_test(cfg: ExperimentConfig, command: str) -> None:
    """Model selection refits the chosen setting and scores it on the test part: it needs one."""
    if cfg.dataset.test == "none":
        what = "the best cell" if command == "grid" else "the best setting"
        raise ConfigError(f"dataset.test: {command} refits {what} and scores it on the test part; "
                          "set dataset.test to 'official' or a fraction")


def selection_metric(task: str) -> str:
    """The validation error of a task, in the results column it is written to."""
    return "test_mse" if task == "regression" else "test_error"


def data_scales(space: dict, X, params: dict, seed: int) -> dict:
    """The data scales a space refers to (`times: median`), computed on the training part."""
    scales = {}
    if any(getattr(d, "times", None) == "median" for d in space.values()):
        kernel = params.get("kernel", "rbf")
        scales["median"] = median_gamma(X, kernel=kernel if kernel in ("rbf", "laplacian") else "rbf",
                                        seed=seed)
    return scales


def resolve_space(search: dict, parameters: dict, X, params: dict, seed: int) -> tuple[dict, dict]:
    """(space, scales): a config's `search:` or else the declared space, and the data scales it
    refers to, computed on the training part X."""
    space = search or default_space(parameters)
    return space, data_scales(space, X, params, seed)




def validation_cells(cfg: ExperimentConfig, settings: list[tuple[int, dict]], splits: list[tuple], metric: str,
                     stop: StopConfig, n_train: int, budget: float | None = None) -> list[Cell]:
    """A cell per (setting, split), setting-major: `settings` are (trial number, searched values)
    over the config's parameters; each split's validation rows are scored in the `metric` column
    at the end only. A split trains as many steps as the refit on the whole training part
    (split_stop), so that settings are compared at the training they will get."""
    return [Cell(params={**cfg.algorithm.params, **values}, trial=trial, seed=cfg.seed, fold=i,
                 train_rows=train_rows, valid_rows=valid_rows, labeled_rows=labeled_rows,
                 evaluate=EvaluateConfig(on=(metric,)), curve=False,
                 stop=split_stop(cfg, stop, n_train, train_rows, labeled_rows), budget=budget)
            for trial, values in settings for i, (train_rows, valid_rows, labeled_rows) in enumerate(splits)]


def validation_values(run: Run, cells: list[Cell], n_splits: int, defaults: dict, metric: str) -> list[list]:
    """Per setting (in the cells' order), the metric of each split; None where a split diverged,
    failed, was skipped or is not finished."""
    finals = {cell_key(r["params"], r["trial"], r["fold"], r.get("budget")): r for r in finished_rows(run)}
    values = []
    for start in range(0, len(cells), n_splits):
        rows = [finals.get(c.key(defaults)) for c in cells[start:start + n_splits]]
        values.append([r.get(metric) if r and r.get("status") == "ok" and r.get(metric) is not None else None
                       for r in rows])
    return values


def mean_or_none(values: list) -> float | None:
    """The splits' mean score, None when any split has none."""
    return None if None in values else float(np.mean(values))


def refit(prepared: Prepared, cfg: ExperimentConfig, chosen: dict, run: Run, done: set, execution: Execution,
          label_cfg: ExperimentConfig | None = None) -> list[dict]:
    """Train the chosen setting on the whole training part, `cfg.trials` times (seeds seed + trial),
    with the config's evaluation schedule on the test part; returns each trial's outcome."""
    cells = [Cell(params={**cfg.algorithm.params, **chosen}, trial=trial, seed=cfg.seed + trial,
                  evaluate=cfg.evaluate, stop=cfg.stop) for trial in range(cfg.trials)]
    execute(prepared, cells, label_cfg or cfg, run, done, execution, desc="refit")
    return [outcome(r, REFIT_COLUMNS) for r in finished_rows(run)
            if r.get("fold") is None and r.get("budget") is None]
