"""A benchmark's side-by-side table, read back from its run folders (the newest run of each method;
the results readers, never a private file)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from kernelbench.results import RunRecord, final_rows, read_results, run_folders


def latest_runs(folder: Path) -> dict[str, tuple[RunRecord, dict]]:
    """{experiment name: (run.json, mean of its final rows)} of the newest run of each experiment."""
    out: dict = {}
    for path in run_folders(folder):
        record = RunRecord.load(path)
        final = final_rows(read_results(path))
        if not len(final) or (record.experiment in out and out[record.experiment][0].started >= record.started):
            continue
        row = final.iloc[-1].to_dict()
        row["train_seconds"] = float(final["train_seconds"].mean())      # a grid config: its cells' mean
        row["test_error"] = float(final["test_error"].mean())
        row["predict_seconds"] = float(final["predict_seconds"].mean())
        row["cells"] = final
        out[record.experiment] = (record, row)
    return out


def _number(value, fmt: str, empty: str = "") -> str:
    try:
        return empty if value is None or math.isnan(float(value)) else format(float(value), fmt)
    except (TypeError, ValueError):
        return empty


def comparison_lines(bench_name: str, folder: Path) -> list[str]:
    """Method, role, training rows, train seconds, passes reached, test error, status, note; then
    whether each of ours and each peer beat RFF + SGD."""
    runs = sorted(latest_runs(folder).items(), key=lambda kv: kv[1][0].started or "")
    lines = ["| method | role | n train | train seconds | passes | test error | status | note |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    rff_error, verdicts = None, []
    for experiment, (record, row) in runs:
        label = experiment.removeprefix(f"{bench_name}-")
        counters = json.loads(row["counters"]) if row.get("counters") else {}
        n_train = counters.get("subsample") or (record.dataset or {}).get("n_train") or 0
        # the exact SVM's time is its chosen fit's, as its budget counts it (the smaller fits and the
        # one killed at T are in the run's train_seconds)
        seconds = counters.get("fit_seconds", row["train_seconds"])
        passes = row["samples_seen"] / n_train if n_train else math.nan
        note = [f"stop {json.dumps((record.config or {}).get('stop', {}))}"]
        if counters.get("sizes_tried"):
            note.append(f"all sizes {row['train_seconds']:.1f} s; sizes tried: {counters['sizes_tried']}")
        if row.get("message"):
            note.append(str(row["message"])[:200])
        lines.append(f"| {label} | {record.tags.get('role', '')} | {n_train:,} | {_number(seconds, '.1f')} "
                     f"| {_number(passes, '.3g')} | {_number(100 * row['test_error'], '.2f')} % | {row['status']} "
                     f"| {'; '.join(note)} |")
        if row["algorithm"] == "rff-sgd":
            rff_error = row["test_error"]
        else:
            verdicts.append((label, row["test_error"]))
    if runs:
        dataset = runs[0][1][0].dataset or {}
        synthetic = dataset.get("synthetic") or {}
        name = (f"synthetic {synthetic['shape']} replica (variant {synthetic['variant']}), Bayes error "
                f"{100 * synthetic['bayes_error']:.2f} %" if synthetic else dataset.get("name", ""))
        lines.insert(0, f"{name}: {dataset.get('n_train', 0):,} training, {dataset.get('n_test', 0):,} test rows\n")
    if rff_error is not None and not math.isnan(rff_error):
        lines.append("")
        lines += [f"{label}: {_number(100 * error, '.2f', 'no result')} %: lower than RFF + SGD "
                  f"({100 * rff_error:.2f} %)? {'yes' if error < rff_error else 'NO'}" for label, error in verdicts]
    return lines


def fullsize_lines(bench_name: str, folder: Path) -> list[str]:
    """Per config: training rows, seconds per pass at 1 and 2 threads, peak memory, evaluation time of
    the test part, test error, the replica's Bayes error."""
    runs = latest_runs(folder)
    lines = ["| config | n train | s / pass, 1 thread | s / pass, 2 threads | peak memory | evaluation "
             "(test rows) | test error | Bayes error |", "|---|---|---|---|---|---|---|---|"]
    for experiment, (record, row) in runs.items():
        if experiment.endswith("-1t"):
            continue
        one = runs.get(f"{experiment}-1t")
        dataset = record.dataset or {}
        passes = ((record.config or {}).get("stop") or {}).get("passes") or 1
        per_pass = _number(row["train_seconds"] / passes, ",.0f")
        one_thread = _number(one[1]["train_seconds"] / (((one[0].config or {}).get("stop") or {}).get("passes") or 1),
                             ",.0f") if one else ""
        two = per_pass if one else "(no threads)"
        lines.append(f"| {experiment.removeprefix(f'{bench_name}-')} | {dataset.get('n_train', 0):,} | "
                     f"{one_thread or per_pass} | {two} | {_number(record.peak_memory_mb, ',.0f')} MB | "
                     f"{_number(row['predict_seconds'], '.1f')} s ({dataset.get('n_test', 0):,}) | "
                     f"{_number(100 * row['test_error'], '.2f')} % | "
                     f"{_number(100 * (dataset.get('synthetic') or {}).get('bayes_error', math.nan), '.0f')} % |")
        lines += cell_lines(row["cells"], passes)
    return lines


def cell_lines(final, passes: float) -> list[str]:
    """A grid config's cells under its mean: the parameters that differ between them, each cell's
    seconds per pass, evaluation time and test error."""
    if len(final) < 2:
        return []
    params = [json.loads(p) for p in final["params"]]
    varying = [k for k in params[0] if len({json.dumps(p.get(k)) for p in params}) > 1]
    return [f"| &nbsp;&nbsp;{', '.join(f'{k} {p[k]}' for k in varying)} | | {r.train_seconds / passes:,.0f} | | | "
            f"{r.predict_seconds:.1f} s | {100 * r.test_error:.2f} % | |" for p, r in zip(params, final.itertuples())]
