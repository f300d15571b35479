"""Preparing an experiment: the algorithm resolved and the dataset loaded and prepared, every user
error surfacing here, before any training."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from kernelbench._vocab import SEMI_SUPERVISED
from kernelbench.config import ExperimentConfig, StopConfig, expand_grid
from kernelbench.data import Dataset, dataset_info, load_dataset, prepare
from kernelbench.data.load import UserArrays, classes_task
from kernelbench.data.user import FileOptions
from kernelbench.errors import ConfigError, DataError, require_extra
from kernelbench.estimators import algorithms
from kernelbench.algorithms import AlgorithmSpec

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
    labeled: int | None = None        # dataset.labeled: the semi-supervised protocol (semisupervised.py)


def prepare_experiment(cfg: ExperimentConfig, *, smoke: bool = False, progress: bool = True,
                       arrays: UserArrays | None = None) -> Prepared:
    """Resolve the algorithm and load + prepare the dataset (`arrays`: the data handed over in Python,
    for a config with dataset.arrays); every user error surfaces here, before any training."""
    spec = algorithms()[cfg.algorithm.name]
    for module in spec.requires:            # before any data is read
        require_extra(module, f"algorithm {spec.name!r}")
    dc = cfg.dataset
    if dc.labeled is not None and SEMI_SUPERVISED not in spec.tasks and not dc.labeled_only:
        raise ConfigError(f"dataset.labeled is for semi-supervised algorithms; {spec.name!r} is "
                          "supervised: add `dataset.labeled_only: true` to train it on the labeled "
                          "rows alone (the protocol's supervised baseline), or remove dataset.labeled")
    if dc.name is not None and dc.synthetic() is None:   # registry: refuse before any download
        _check_task(dc.name, dc.task or classes_task(dc.classes) or dataset_info(dc.name)["task"], spec)
    if (arrays is None) != (dc.arrays is None):
        raise ConfigError("the config says the data are arrays handed over in Python, but none came (or arrays "
                          "came for a config that names its data): pass the arrays to kernelbench.api.run")
    data = load_dataset(dc.name, path=dc.path, test=dc.test, seed=cfg.seed, task=dc.task,
                        progress=progress, dtype=dc.dtype, strict=dc.strict, synthetic=dc.synthetic(),
                        classes=dc.classes, test_path=dc.test_path, arrays=arrays,
                        file_options=FileOptions(format=dc.format, delimiter=dc.delimiter, header=dc.header,
                                                 label=dc.label, npz_features=dc.npz_features,
                                                 npz_labels=dc.npz_labels))
    inferred = dc.name is None and dc.task is None and dc.classes is None
    _check_task(data.name, data.task, spec, inferred_from=data.y_train if inferred else None)
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
    return Prepared(spec, data, evaluation_rows(data.X_train.shape[0], cfg.seed), labeled)


def _check_task(name, task, spec: AlgorithmSpec, inferred_from=None):
    """`inferred_from`: the labels a user's data set's task was inferred from (the message says how)."""
    if task not in spec.tasks:
        how = ""
        if inferred_from is not None:
            labels = np.unique(inferred_from)
            how = (f" (inferred from its labels: {labels.size} distinct values"
                   f"{', not all integers' if not np.all(labels == np.round(labels)) else ''}; set dataset.task "
                   "if they are class labels, or map them to two classes for a binary algorithm)")
        raise DataError(
            f"dataset {name!r} is a {task} task{how}, but algorithm {spec.name!r} handles "
            f"{', '.join(spec.tasks)}; choose another dataset or algorithm (kernelbench algorithms)")


def smoke_config(cfg: ExperimentConfig, spec: AlgorithmSpec) -> ExperimentConfig:
    """A few iterations with the algorithm's small settings, one trial, the first grid cell."""
    params = {**cfg.algorithm.params, **spec.smoke_params}
    first_cell = expand_grid(cfg.grid)[0] if cfg.grid else {}
    params.update(first_cell)
    return replace(cfg, algorithm=replace(cfg.algorithm, params=params), grid={}, then={}, trials=1,
                   stop=StopConfig(passes=None, iterations=SMOKE_ITERATIONS, seconds=None),
                   evaluate=replace(cfg.evaluate, every=max(1, SMOKE_ITERATIONS // 2)))


def evaluation_rows(n: int, seed: int) -> np.ndarray:
    if n <= EVAL_TRAIN_ROWS:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, EVAL_TRAIN_ROWS, replace=False))


def determinism(prepared: Prepared) -> str:
    return prepared.spec.build({}, seed=0, task=prepared.data.task).determinism


def describe(data: Dataset) -> dict:
    return {"name": data.name, "task": data.task, "description": data.description,
            "n_train": int(data.X_train.shape[0]), "n_features": int(data.X_train.shape[1]),
            "n_test": int(data.X_test.shape[0]) if data.X_test is not None else 0,
            "dtype": str(data.X_train.dtype), **data.provenance}
