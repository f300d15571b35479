"""Training subsets and feature scaling, fitted on the training part only."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from kernelbench._vocab import SCALINGS
from kernelbench.errors import DataError

from .blocks import to_csr32
from .load import Dataset
from .parts import check_labels, take_rows

MAX_PCA_DENSE_BYTES = 2 * 2**30   # sparse input is densified for PCA up to this; beyond: TruncatedSVD


def prepare(ds: Dataset, *, subsample=None, scale="none", seed=0, pca=None) -> Dataset:
    """A random training subset and/or scaled features; the test part is transformed, never fitted on.

    subsample: None, or the number of training rows to keep (a seeded uniform random subset, kept in
               file order); a value >= the training size keeps everything (noted in the description).
    scale:     "none" | "standard" (zero mean, unit variance per feature) | "minmax" (each feature to
               [0, 1] on the training part). For sparse (CSR) data centering would destroy sparsity, so
               "standard" only divides by the standard deviation (StandardScaler(with_mean=False)) and
               "minmax" divides by the largest absolute value (MaxAbsScaler, to [-1, 1]).
    Constant features are left unscaled (their scale is taken as 1).
    pca:       None, or the number of principal components to keep (Li & Póczos §5.1 reduce every
               medium set to <= 100 dims), fitted on the (subsampled, scaled) training part only and
               applied to the test part. Sparse input is densified when it fits in
               MAX_PCA_DENSE_BYTES; larger sparse input uses TruncatedSVD (no centering), noted in the
               description. A value >= the number of features leaves the features as they are.
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
            X_tr, y_tr = take_rows(X_tr, idx), np.ascontiguousarray(y_tr[idx])
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
    if pca is not None:
        X_tr, X_te, note = _pca(X_tr, X_te, pca, seed)
        notes.append(note)
    if not notes:
        return ds
    desc = "; ".join([ds.description, *notes]) if ds.description else "; ".join(notes)
    return replace(ds, X_train=X_tr, y_train=y_tr, X_test=X_te, description=desc)


def _scaler(scale: str, sparse: bool):
    # scikit-learn is heavy: the data layer answers `datasets` commands without it
    from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

    if scale == "standard":
        return StandardScaler(with_mean=not sparse)
    return MaxAbsScaler() if sparse else MinMaxScaler()


def _fix(X):
    """Scaled features keep float32 (dataset.dtype) or become float64."""
    dtype = X.dtype if X.dtype in (np.float32, np.float64) else np.float64
    if sp.issparse(X):
        return to_csr32(X.astype(dtype))
    return np.ascontiguousarray(X, dtype=dtype)


def _pca(X_tr, X_te, n_components, seed):
    """(X_train, X_test, note) projected on the training part's leading components."""
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
        raise DataError(f"pca={n_components!r} must be a positive integer (number of components) or null.")
    n, d = X_tr.shape
    if n_components >= d:
        return X_tr, X_te, f"pca {n_components} >= {d} features: features kept as they are"
    k = min(int(n_components), n)
    from sklearn.decomposition import PCA, TruncatedSVD     # heavy: only with dataset.pca

    if sp.issparse(X_tr) and n * d * 8 > MAX_PCA_DENSE_BYTES:
        model = TruncatedSVD(n_components=k, random_state=seed)
        kind = "TruncatedSVD (uncentred; the sparse training part is too large to densify)"
    else:
        model = PCA(n_components=k, random_state=seed)
        kind = "PCA"
        X_tr = X_tr.toarray() if sp.issparse(X_tr) else X_tr
        if X_te is not None and sp.issparse(X_te):
            X_te = X_te.toarray()
    Z_tr = np.ascontiguousarray(model.fit_transform(X_tr), dtype=np.float64)
    Z_te = None if X_te is None else np.ascontiguousarray(model.transform(X_te), dtype=np.float64)
    kept = float(np.sum(getattr(model, "explained_variance_ratio_", [np.nan])))
    return Z_tr, Z_te, (f"{kind} to {k} of {d} dims, fitted on the training part only "
                        f"({kept:.1%} of the variance kept)")
