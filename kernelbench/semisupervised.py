"""The semi-supervised protocol of Geng et al. (IJCAI 2019, §6.1): which training rows keep their
labels, and the paper's 5-fold scheme for model selection.

Contract (every algorithm registered with tasks=("binary", "semi-supervised") relies on it):

* A semi-supervised estimator gets fit(X, y) / begin(X, y) with y float64 where NaN marks an
  unlabeled row and labeled rows carry the raw two class labels (as in the dataset, e.g. -1/+1 or
  1/2). O(n²) baselines raise kernelbench.solvers.base.BudgetExceededError in begin(); the experiment loop
  writes a clean "skipped" row for it.
* `dataset.labeled: L` in a config: L rows of the *training part* are drawn at random (both
  classes guaranteed; seeded by the trial seed), every other training row becomes unlabeled
  (label NaN). The test part (the official test file, or the `dataset.test` fraction split off
  before anything else, e.g. 0.3 for the paper's 70/30) is never seen in training, labeled or not;
  test_error is measured on it with its true labels.
* y without unlabeled rows (no NaN): the estimator trains as a supervised classifier on them, its
  objective with the unlabeled term absent (C* = 0), and warns that it does (`warn_no_unlabeled_rows`),
  as scikit-learn's semi-supervised SelfTrainingClassifier does with "y contains no unlabeled samples".
* A *supervised* algorithm with `dataset.labeled: L` trains on the same L labeled rows only (the
  "supervised learner on the 200 labeled points" comparison); it never sees the unlabeled rows.
* `kernelbench grid --cv k` with `dataset.labeled`: the paper's scheme — L labeled rows are drawn
  (seed = the config seed), the unlabeled rest is split evenly into k folds; fold i trains on the
  labeled rows plus unlabeled fold i and is evaluated (with the true labels) on the other k − 1
  folds. A supervised algorithm trains on the labeled rows alone in every fold.
* `kernelbench tune` with `dataset.labeled` validates on the labeled rows only (`labeled_splits`:
  k stratified folds of them, or a held-out fraction; every unlabeled row always trains), as a
  user who has only those labels can; `tune.validation: paper` is the scheme above.
* Evaluation rows in the training part: the objective is the semi-supervised one (unlabeled rows
  enter with NaN labels), and train_error is the error on the labeled rows (NaN labels are
  ignored by the score).
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit
from sklearn.utils.multiclass import type_of_target

from kernelbench.errors import DataError, SolverError


def draw_labeled(y, n_labeled: int, seed: int, rows=None) -> np.ndarray:
    """Sorted indices (into y) of `n_labeled` rows drawn uniformly at random among `rows` (default
    all), with at least one row of every class: if a class is missing from the draw, a drawn row
    of the most frequent drawn class is swapped for a random row of the missing class."""
    y = np.asarray(y)
    rows = np.arange(y.shape[0]) if rows is None else np.asarray(rows)
    classes = np.unique(y[rows])
    if n_labeled >= rows.shape[0]:
        raise DataError(f"dataset.labeled = {n_labeled} must be smaller than the {rows.shape[0]} "
                        "training rows (the rest are the unlabeled rows); lower dataset.labeled")
    if n_labeled < classes.size:
        raise DataError(f"dataset.labeled = {n_labeled} cannot hold a row of each of the "
                        f"{classes.size} classes; use at least {classes.size}")
    rng = np.random.default_rng(seed)
    chosen = rng.choice(rows, size=n_labeled, replace=False)
    for c in classes:
        if np.any(y[chosen] == c):
            continue
        labels, counts = np.unique(y[chosen], return_counts=True)
        donor = labels[np.argmax(counts)]
        slot = rng.choice(np.flatnonzero(y[chosen] == donor))
        chosen[slot] = rng.choice(rows[y[rows] == c])
    return np.sort(chosen)


def mask_unlabeled(y, labeled_rows, rows=None) -> np.ndarray:
    """y[rows] as float64 with NaN on every row not in `labeled_rows` (indices into y)."""
    y = np.asarray(y, dtype=np.float64)
    rows = np.arange(y.shape[0]) if rows is None else np.asarray(rows)
    out = np.full(rows.shape[0], np.nan)
    keep = np.isin(rows, labeled_rows)
    out[keep] = y[rows[keep]]
    return out


def paper_folds(y, n_labeled: int, k: int, seed: int):
    """The 5-fold scheme of §6.1 with k folds: a list of (train_rows, valid_rows, labeled_rows),
    indices into the training part; train = labeled ∪ unlabeled fold i, valid = the other folds."""
    if k < 2:
        raise DataError(f"cross-validation needs at least 2 folds, got {k}")
    labeled = draw_labeled(y, n_labeled, seed)
    unlabeled = np.setdiff1d(np.arange(np.asarray(y).shape[0]), labeled)
    if unlabeled.size < k:
        raise DataError(f"only {unlabeled.size} unlabeled rows for {k} folds; use fewer folds or "
                        "fewer labeled rows")
    folds = np.array_split(np.random.default_rng(seed).permutation(unlabeled), k)
    out = []
    for i in range(k):
        train = np.sort(np.concatenate([labeled, folds[i]]))
        valid = np.sort(np.concatenate([folds[j] for j in range(k) if j != i]))
        out.append((train, valid, labeled))
    return out


def labeled_splits(y, n_labeled: int, seed: int, *, folds: int | None = None, holdout: float = 0.2,
                   split_seed: int | None = None):
    """Validation a user can do (`kernelbench tune`): the `n_labeled` rows drawn as the protocol
    draws them (seed = the config seed), split into `folds` stratified folds (None: one held-out
    `holdout` fraction); each split trains on every row but its held-out labeled ones -- the
    unlabeled rows always train -- and scores the held-out labeled rows. A list of (train_rows,
    valid_rows, labeled_rows), indices into y; never an unlabeled row's hidden label. `split_seed`
    (default: seed) draws the folds anew over the same labeled rows."""
    labeled = draw_labeled(y, n_labeled, seed)
    y_labeled = np.asarray(y)[labeled]
    smallest = int(np.min(np.unique(y_labeled, return_counts=True)[1]))
    needed = folds or 2
    if smallest < needed:
        raise DataError(f"validation on the labeled rows: a class has only {smallest} of the "
                        f"{n_labeled} labeled rows, fewer than the {needed} {'folds' if folds else 'parts'} "
                        "it must be split into; raise dataset.labeled or lower cv")
    split_seed = seed if split_seed is None else split_seed
    if folds:
        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=split_seed)
    else:
        splitter = StratifiedShuffleSplit(n_splits=1, test_size=holdout, random_state=split_seed)
    everything = np.arange(np.asarray(y).shape[0])
    out = []
    for keep, held in splitter.split(labeled, y_labeled):
        valid = labeled[held]
        out.append((np.setdiff1d(everything, valid), np.sort(valid), np.sort(labeled[keep])))
    return out


def training_view(X, y, labeled_rows, *, semi_supervised: bool, rows=None):
    """What an algorithm is fitted on, from the training part (or its CV `rows`):
    semi-supervised -> (X[rows], y[rows] with NaN on unlabeled rows, local indices of the rows);
    supervised     -> (X[labeled rows], y[labeled rows], local indices), the labeled rows alone."""
    rows = np.arange(np.asarray(y).shape[0]) if rows is None else np.asarray(rows)
    if semi_supervised:
        return X[rows], mask_unlabeled(y, labeled_rows, rows), rows
    keep = rows[np.isin(rows, labeled_rows)]
    return X[keep], np.asarray(y)[keep], keep


def encode_semi_supervised(estimator, X, y, *, fitting, classes=None):
    """(Y, labeled rows, unlabeled rows) of a semi-supervised target y (the contract above: NaN —
    or None in an object array — marks an unlabeled row). The labeled rows are encoded to ±1 by the
    estimator's BinaryClassifierMixin; unlabeled rows get 0. Shared by every S3VM solver.
    The errors use scikit-learn's wording (its estimator checks match it): "requires y", "Unknown
    label type", "Only binary classification is supported"."""
    if y is None:
        raise SolverError(f"{type(estimator).__name__} requires y to be passed, but the target y is None: "
                          "give one label per row, NaN marking the unlabeled rows")
    y = np.asarray(y)
    if y.dtype.kind not in "OUS":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise SolverError("semi-supervised targets must be numbers, NaN marking the unlabeled rows") from None
    if y.ndim == 2 and 1 in y.shape:
        warnings.warn("A column-vector y was passed when a 1d array was expected; it is used as "
                      "y.ravel(). Pass y of shape (n_samples,).", DataConversionWarning, stacklevel=3)
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise SolverError(f"X has {X.shape[0]} rows but y has shape {y.shape}: y must be a vector of "
                          "one label per row (NaN = unlabeled)")
    if y.dtype.kind == "f" and np.isinf(y).any():
        raise SolverError("y contains inf; use NaN for unlabeled rows")
    known = ~unlabeled_mask(y)
    if not known.any():
        raise SolverError("no labeled rows: y is NaN everywhere; a semi-supervised solver needs "
                          "labeled rows of both classes (NaN marks the unlabeled ones)")
    if fitting and classes is None:
        kind = type_of_target(y[known])
        if kind not in ("binary", "multiclass"):
            raise SolverError(f"Unknown label type: the labeled rows must carry class labels, got "
                              f"targets of type {kind!r}; NaN marks an unlabeled row")
        found = np.unique(y[known])
        if found.size != 2:
            got = "only one class" if found.size == 1 else f"{found.size} classes"
            raise SolverError(f"Only binary classification is supported: the labeled rows must hold "
                              f"exactly 2 classes, got {got} ({found[:10].tolist()}); NaN marks an "
                              "unlabeled row — label a few rows of each class")
    Y = np.zeros(y.shape[0])
    Y[known] = estimator._encode_targets(y[known], fitting=fitting, classes=classes).ravel()
    return Y, np.flatnonzero(known), np.flatnonzero(~known)


def unlabeled_mask(y):
    """True for the rows whose label is NaN (or None in an object array)."""
    if y.dtype.kind == "f":
        return np.isnan(y)
    if y.dtype.kind == "O":
        return np.array([v is None or (isinstance(v, float) and v != v) for v in y], dtype=bool)
    return np.zeros(y.shape[0], dtype=bool)


def warn_no_unlabeled_rows(estimator):
    """Warn that a y without unlabeled rows makes `estimator` train as a supervised classifier.

    The contract above: a semi-supervised estimator given y with no NaN trains on the labeled rows
    alone, its objective without the unlabeled term. It says so with a UserWarning, as
    scikit-learn's SelfTrainingClassifier does ("y contains no unlabeled samples").

    Parameters
    ----------
    estimator : object
        The estimator being fitted; the message names its class.
    """
    warnings.warn(f"y contains no unlabeled rows (NaN marks an unlabeled row): {type(estimator).__name__} "
                  "trains as a supervised classifier on the labeled rows, its objective without the "
                  "unlabeled term", UserWarning, stacklevel=3)
