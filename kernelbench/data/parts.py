"""Labels and train/test parts: the label checks of a task, the selection of classes, rows taken
from X (CSR with int32 indices, or C-contiguous dense) and seeded splits."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from kernelbench.errors import DataError

from .blocks import to_csr32


def _fmt_labels(labels) -> str:
    shown = ", ".join(f"{v:g}" for v in labels[:8])
    return shown + (", ..." if len(labels) > 8 else "")


def check_labels(task: str, y_train, y_test, where: str) -> None:
    """Binary: exactly 2 labels; classification: at least 2; test labels must occur in training."""
    if task not in ("binary", "multiclass", "regression"):
        raise DataError(f"Unknown task {task!r}; use binary, multiclass or regression.")
    if task == "regression":
        return
    labels = np.unique(y_train)
    if labels.size < 2:
        raise DataError(f"{where}: the training labels hold a single class ({_fmt_labels(labels)}); "
                        f"{task} classification needs at least two. Use a file with both classes "
                        "(or a larger subsample).")
    if task == "binary" and labels.size != 2:
        raise DataError(f"{where}: declared binary, but the training labels hold {labels.size} distinct values "
                        f"({_fmt_labels(labels)}). Use task='multiclass' or 'regression', or relabel the file "
                        "to two classes.")
    if y_test is not None:
        extra = np.setdiff1d(np.unique(y_test), labels)
        if extra.size:
            raise DataError(f"{where}: the test labels include {_fmt_labels(extra)}, which never occur in the "
                            f"training labels ({_fmt_labels(labels)}). Check that train and test files match.")


def classes_task(classes) -> str | None:
    """The task a `classes` selection makes of a dataset: two classes a binary task, more a
    multi-class one; None without a selection."""
    if classes is None:
        return None
    return "binary" if len(classes) == 2 else "multiclass"


def _check_classes(classes) -> tuple:
    if isinstance(classes, (str, bytes)) or not isinstance(classes, (list, tuple, np.ndarray)):
        raise DataError(f"classes={classes!r} must be a list of at least two labels, e.g. [8, 6].")
    values = list(classes)
    if len(values) < 2 or any(isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating))
                              or not np.isfinite(v) for v in values):
        raise DataError(f"classes={classes!r} must be a list of at least two labels (numbers), e.g. [8, 6].")
    if len(set(float(v) for v in values)) != len(values):
        raise DataError(f"classes={classes!r} names a label twice; list each class once.")
    return tuple(float(v) for v in values)


def _show_labels(labels, limit: int = 30) -> str:
    shown = ", ".join(f"{v:g}" for v in labels[:limit])
    return shown + (f", ... ({len(labels)} labels in all)" if len(labels) > limit else "")


def keep_classes(X_train, y_train, X_test, y_test, classes, where: str):
    """(X_train, y_train, X_test, y_test, note) with only the rows whose label is one of `classes`
    (both parts; labels keep their raw values). A class absent from the training labels is a
    DataError naming the labels present."""
    wanted = np.asarray(_check_classes(classes))
    present = np.unique(y_train)
    absent = wanted[~np.isin(wanted, present)]
    if absent.size:
        raise DataError(f"{where}: dataset.classes asks for {_show_labels(absent)}, but the training labels "
                        f"present are {_show_labels(present)}. Choose the classes from those labels.")
    keep = np.flatnonzero(np.isin(y_train, wanted))
    n = y_train.shape[0]
    X_train, y_train = take_rows(X_train, keep), np.ascontiguousarray(y_train[keep])
    if y_test is not None:
        keep_test = np.flatnonzero(np.isin(y_test, wanted))
        X_test, y_test = take_rows(X_test, keep_test), np.ascontiguousarray(y_test[keep_test])
    note = (f"only classes {_show_labels(wanted)} kept ({classes_task(wanted)} task): {keep.size:,} of {n:,} "
            "training rows" + ("" if y_test is None else f", {y_test.shape[0]:,} test rows"))
    return X_train, y_train, X_test, y_test, note


def take_rows(X, idx):
    """Rows `idx` of X (CSR with int32 indices, or C-contiguous dense)."""
    if sp.issparse(X):
        return to_csr32(X[idx])
    return np.ascontiguousarray(X[idx])


def split_fraction(X, y, task: str, fraction: float, seed: int, where: str = ""):
    """Seeded split of (X, y): stratified for classification. Rows keep their file order."""
    from sklearn.model_selection import train_test_split     # heavy: `datasets` commands answer without it

    n = y.shape[0]
    idx = np.arange(n)
    stratify = None if task == "regression" else np.asarray(y)
    try:
        tr, te = train_test_split(idx, test_size=fraction, random_state=seed, stratify=stratify)
    except ValueError as exc:
        raise DataError(f"{where + ': ' if where else ''}"
                        f"Cannot make a {'stratified ' if stratify is not None else ''}{fraction:g} test split "
                        f"of {n} rows ({exc}). Use a larger file, a different fraction, or test='none'.") from None
    tr.sort()
    te.sort()
    return take_rows(X, tr), np.ascontiguousarray(y[tr]), take_rows(X, te), np.ascontiguousarray(y[te])


def concat_features(X_a, X_b):
    """Give train and test the same number of columns (the larger)."""
    d = max(X_a.shape[1], X_b.shape[1])

    def pad(X):
        if X.shape[1] == d:
            return X
        if sp.issparse(X):
            X = X.copy()
            X.resize((X.shape[0], d))
            return to_csr32(X)
        return np.hstack([X, np.zeros((X.shape[0], d - X.shape[1]))])

    return pad(X_a), pad(X_b)
