"""Training subsets and feature scaling, fitted on the training part only."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from kernelbench.errors import DataError

from .load import Dataset, _take, _to_csr32, check_labels

SCALINGS = ("none", "standard", "minmax")


def prepare(ds: Dataset, *, subsample=None, scale="none", seed=0) -> Dataset:
    """A random training subset and/or scaled features; the test part is transformed, never fitted on.

    subsample: None, or the number of training rows to keep (a seeded uniform random subset, kept in
               file order); a value >= the training size keeps everything (noted in the description).
    scale:     "none" | "standard" (zero mean, unit variance per feature) | "minmax" (each feature to
               [0, 1] on the training part). For sparse (CSR) data centering would destroy sparsity, so
               "standard" only divides by the standard deviation (StandardScaler(with_mean=False)) and
               "minmax" divides by the largest absolute value (MaxAbsScaler, to [-1, 1]).
    Constant features are left unscaled (their scale is taken as 1).
    """
    if scale not in SCALINGS:
        raise DataError(f"scale={scale!r} is not allowed: use one of {', '.join(SCALINGS)}.")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        raise DataError(f"seed={seed!r} must be an integer.")
    notes = []
    X_tr, y_tr = ds.X_train, ds.y_train
    n = y_tr.shape[0]
    if subsample is not None:
        if isinstance(subsample, bool) or not isinstance(subsample, (int, np.integer)) or subsample < 1:
            raise DataError(f"subsample={subsample!r} must be a positive integer (number of training rows) or null.")
        if subsample < n:
            rng = np.random.default_rng(seed)
            idx = np.sort(rng.choice(n, size=int(subsample), replace=False))
            X_tr, y_tr = _take(X_tr, idx), np.ascontiguousarray(y_tr[idx])
            check_labels(ds.task, y_tr, None, f"dataset '{ds.name}' subsample of {subsample} rows (seed {seed})")
            notes.append(f"training SUBSAMPLE of {subsample} of {n} rows (seed {seed})")
        else:
            notes.append(f"subsample {subsample} >= {n} training rows: all rows kept")
    X_te = ds.X_test
    if scale != "none":
        scaler = _scaler(scale, sp.issparse(X_tr))
        X_tr = _fix(scaler.fit_transform(X_tr))
        if X_te is not None:
            X_te = _fix(scaler.transform(X_te))
        kind = scale if not sp.issparse(ds.X_train) else {"standard": "standard (no centering, sparse)",
                                                           "minmax": "max-abs (sparse)"}[scale]
        notes.append(f"features scaled: {kind}, fitted on the training part only")
    if not notes:
        return ds
    desc = "; ".join([ds.description, *notes]) if ds.description else "; ".join(notes)
    return replace(ds, X_train=X_tr, y_train=y_tr, X_test=X_te, description=desc)


def _scaler(scale: str, sparse: bool):
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    if scale == "standard":
        return StandardScaler(with_mean=not sparse)
    return MaxAbsScaler() if sparse else MinMaxScaler()


def _fix(X):
    if sp.issparse(X):
        return _to_csr32(X.astype(np.float64))
    return np.ascontiguousarray(X, dtype=np.float64)
