"""Splits of the training part -- never the test part -- for model selection and for the papers'
semi-supervised protocol: (train_rows, valid_rows, labeled_rows) triples of indices into the
training part; labeled_rows is None for supervised data."""
from __future__ import annotations

import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold, StratifiedShuffleSplit

from kernelbench import semisupervised
from kernelbench.config import ExperimentConfig
from kernelbench.errors import ConfigError, DataError

from .prepare import Prepared


def selection_splits(prepared: Prepared, cfg: ExperimentConfig, validation: str, *, seed: int | None = None,
                     holdout: float = 0.2, shuffle: bool = True, split_seed: int | None = None) -> list[tuple]:
    """The validation splits of the training part.

    validation  "cv": `cfg.cv` folds (stratified for classification); "holdout": one held-out
                fraction `holdout`; "paper": Geng et al.'s scheme (§6.1), for dataset.labeled -- the
                L labeled rows are drawn, the unlabeled rest split into `cfg.cv` folds, fold i trains
                with the labeled rows and the other folds are scored with their true labels.
                With dataset.labeled, "cv" and "holdout" split the *labeled* rows only (a user has
                no other labels) and every unlabeled row always trains.
    seed        the draw (default: the config's seed)
    split_seed  the folds or holdout drawn anew (default: seed); with dataset.labeled the labeled
                rows stay those of `seed` (the papers' scheme draws them anew)
    shuffle     draw the held-out rows at random; False holds out contiguous parts in file order
                (time-ordered data)."""
    seed = cfg.seed if seed is None else seed
    split_seed = seed if split_seed is None else split_seed
    y = prepared.data.y_train
    if prepared.labeled is not None:
        if validation == "paper":
            return semisupervised.paper_folds(y, prepared.labeled, cfg.cv, split_seed)
        return semisupervised.labeled_splits(y, prepared.labeled, seed, folds=cfg.cv if validation == "cv" else None,
                                             holdout=holdout, split_seed=split_seed)
    if validation == "paper":
        raise ConfigError("tune.validation: paper is the semi-supervised papers' protocol; it needs "
                          "dataset.labeled. Use holdout or cv")
    classify = prepared.data.task != "regression"
    folds = cfg.cv if validation == "cv" else 2
    if classify and np.min(np.unique(y, return_counts=True)[1]) < folds:
        raise DataError(f"dataset {prepared.data.name!r}: a class has fewer rows than the {folds} "
                        f"{'folds' if validation == 'cv' else 'parts of a holdout'}; use fewer folds "
                        "(--cv) or more data")
    n = len(y)
    if not shuffle:
        if validation == "cv":
            return [(np.setdiff1d(np.arange(n), va), va, None) for va in np.array_split(np.arange(n), cfg.cv)]
        cut = n - max(1, int(round(holdout * n)))
        return [(np.arange(cut), np.arange(cut, n), None)]
    if validation == "cv":
        splitter = (StratifiedKFold if classify else KFold)(n_splits=cfg.cv, shuffle=True, random_state=split_seed)
    else:
        splitter = (StratifiedShuffleSplit if classify else ShuffleSplit)(
            n_splits=1, test_size=holdout, random_state=split_seed)
    return [(np.sort(tr), np.sort(va), None) for tr, va in splitter.split(np.zeros(n), y)]
