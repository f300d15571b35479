"""What an evaluation point measures: the row of results.csv at a pause of the timed run."""
from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

PREDICT_SPLIT_ROWS = 50_000      # evaluation parts larger than this are predicted in row chunks
# Rows per chunk (bounded memory: some models map a chunk to rows × features). A multiple of the
# solvers' own prediction blocks (4096, 8192 rows): their GEMMs see the same row blocks as in one
# call, so the predictions are bit-identical (a GEMM's last bits depend on the rows it is given).
PREDICT_CHUNK_ROWS = 32_768


def evaluate(est, base, train_seconds, on, X_sub, y_sub, X_test, y_test, task, threads=1) -> dict:
    row = {**base, "iteration": est.n_iter_, "samples_seen": est.samples_seen_,
           "train_seconds": train_seconds, "status": "ok", **est.record()}
    if "counters" in row:              # algorithm-specific counters (merge frequency, sparsity, ...)
        row["counters"] = json.dumps(row["counters"], sort_keys=True)
    regression = task == "regression"
    if "objective" in on:
        objective = est.objective(X_sub, y_sub)     # None: the model defines no objective
        if objective is not None:
            row["objective"] = objective
    # train_error / train_mse: the task's own measure; *_mae: mean absolute error, regression only
    # (config/resolve.py refuses it for a classification set)
    for part, X, y in (("train", X_sub, y_sub), ("test", X_test, y_test)):
        wanted = {f"{part}_error", f"{part}_mse", f"{part}_mae"} & set(on)
        if X is None or not X.shape[0] or not wanted or (wanted == {f"{part}_mae"} and not regression):
            continue
        started = time.perf_counter()
        pred = predict(est, X, threads)
        if part == "test":
            row["predict_seconds"] = time.perf_counter() - started      # wall time of the whole part
        if wanted - {f"{part}_mae"}:
            row[f"{part}_mse" if regression else f"{part}_error"] = score(pred, y, regression)
        if f"{part}_mae" in wanted and regression:
            row[f"{part}_mae"] = mean_absolute_error(pred, y)
    return row


def predict(est, X, threads: int):
    """est.predict(X); a part over PREDICT_SPLIT_ROWS rows goes in row chunks, concatenated in
    order (predictions are per row: identical to one call), by the estimator's
    `predict_parallelism` (solvers/base.py): "internal" = one call, it threads and chunks itself;
    "rows" = chunks on `threads` threads at once; "serial" = chunks one after another. The caller
    pins BLAS to one thread, so k threads use k cores. Ctrl-C cancels the chunks not started."""
    n = X.shape[0]
    mode = est.predict_parallelism
    if n <= PREDICT_SPLIT_ROWS or mode == "internal":
        return est.predict(X)
    starts = range(0, n, PREDICT_CHUNK_ROWS)

    def chunk(r0):
        return est.predict(X[r0:r0 + PREDICT_CHUNK_ROWS])

    workers = min(threads, len(starts)) if mode == "rows" else 1
    if workers <= 1:
        return np.concatenate([chunk(r0) for r0 in starts])
    pool = ThreadPoolExecutor(workers, thread_name_prefix="kernelbench-predict")
    try:
        return np.concatenate(list(pool.map(chunk, starts)))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def mean_absolute_error(pred, y):
    """(1/n) Σ |ŷ_i − y_i|: Dai et al.'s measure for QuantumMachine / MolecularSpace (Fig. 1 (7)-(8))."""
    return float(np.mean(np.abs(np.asarray(pred, dtype=float) - y)))


def score(pred, y, regression):
    if regression:
        return float(np.mean((np.asarray(pred, dtype=float) - y) ** 2))
    known = ~np.isnan(y) if np.asarray(y).dtype.kind == "f" else slice(None)   # NaN: unlabeled row
    return float(np.mean(np.asarray(pred)[known] != np.asarray(y)[known]))
