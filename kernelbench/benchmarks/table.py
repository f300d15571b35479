"""A benchmark's side-by-side table, read back from its run folders (the newest run of each method;
the results readers, never a private file), or from its published copy (published.py)."""
from __future__ import annotations

import json
import math
from pathlib import Path

from kernelbench.results import RunRecord, final_rows, read_results, run_folders

# The comparison table's rows as data: what comparison_rows reads from run folders, what a published
# benchmark's CSV holds, and all comparison_markdown needs.
ROW_FIELDS = ("method", "role", "algorithm", "dataset", "synthetic_shape", "synthetic_variant", "bayes_error",
              "n_train", "n_test", "threads", "trials", "params", "stop", "train_seconds", "fit_seconds",
              "sizes_tried", "samples_seen", "test_error", "status", "message")


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
        row["trials"] = len(final)
        out[record.experiment] = (record, row)
    return out


def _number(value, fmt: str, empty: str = "") -> str:
    try:
        return empty if value is None or value == "" or math.isnan(float(value)) else format(float(value), fmt)
    except (TypeError, ValueError):
        return empty


def _float(value) -> float:
    """A number of a row, read from a run or from the published CSV's text; NaN where there is none."""
    try:
        return math.nan if value is None or value == "" else float(value)
    except (TypeError, ValueError):
        return math.nan


def comparison_rows(bench_name: str, folder: Path) -> list[dict]:
    """One row (ROW_FIELDS) per method of the runs in `folder`, the newest run of each, in the order
    they started."""
    runs = sorted(latest_runs(folder).items(), key=lambda kv: kv[1][0].started or "")
    rows = []
    for experiment, (record, row) in runs:
        counters = json.loads(row["counters"]) if row.get("counters") else {}
        dataset = record.dataset or {}
        synthetic = dataset.get("synthetic") or {}
        rows.append({
            "method": experiment.removeprefix(f"{bench_name}-"), "role": record.tags.get("role", ""),
            "algorithm": row["algorithm"], "dataset": dataset.get("name", ""),
            "synthetic_shape": synthetic.get("shape", ""), "synthetic_variant": synthetic.get("variant", ""),
            "bayes_error": synthetic.get("bayes_error", ""),
            # the exact SVM trains on its largest subsample that fits T: that is its training size
            "n_train": counters.get("subsample") or dataset.get("n_train") or 0, "n_test": dataset.get("n_test") or 0,
            "threads": "" if math.isnan(_float(row.get("threads"))) else int(row["threads"]),
            "trials": row["trials"], "params": row["params"],
            "stop": json.dumps((record.config or {}).get("stop", {})),
            "train_seconds": row["train_seconds"], "fit_seconds": counters.get("fit_seconds", ""),
            "sizes_tried": json.dumps(counters["sizes_tried"]) if counters.get("sizes_tried") else "",
            "samples_seen": row["samples_seen"], "test_error": row["test_error"], "status": row["status"],
            "message": "" if not row.get("message") or row["message"] != row["message"] else str(row["message"]),
        })
    return rows


def comparison_markdown(rows: list[dict]) -> list[str]:
    """The data set; method, role, training rows, train seconds, passes reached, test error, status,
    note; then whether each of ours and each peer beat RFF + SGD. `rows` as comparison_rows gives
    them, or as the published CSV holds them (text)."""
    lines = ["| method | role | n train | train seconds | passes | test error | status | note |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    rff_error, verdicts = None, []
    for row in rows:
        n_train = int(_float(row["n_train"]) or 0)
        train_seconds, fit_seconds = _float(row["train_seconds"]), _float(row["fit_seconds"])
        # the exact SVM's time is its chosen fit's, as its budget counts it (the smaller fits and the
        # one killed at T are in the run's train_seconds)
        seconds = train_seconds if math.isnan(fit_seconds) else fit_seconds
        passes = _float(row["samples_seen"]) / n_train if n_train else math.nan
        error = _float(row["test_error"])
        note = [f"stop {row['stop']}"]
        if row["sizes_tried"]:
            note.append(f"all sizes {train_seconds:.1f} s; sizes tried: {json.loads(row['sizes_tried'])}")
        if row["message"]:
            note.append(str(row["message"])[:200])
        lines.append(f"| {row['method']} | {row['role']} | {n_train:,} | {_number(seconds, '.1f')} "
                     f"| {_number(passes, '.3g')} | {_number(100 * error, '.2f')} % | {row['status']} "
                     f"| {'; '.join(note)} |")
        if row["algorithm"] == "rff-sgd":
            rff_error = error
        else:
            verdicts.append((row["method"], error))
    if rows:
        first = rows[0]
        name = (f"synthetic {first['synthetic_shape']} replica (variant {first['synthetic_variant']}), Bayes error "
                f"{100 * _float(first['bayes_error']):.2f} %" if first["synthetic_shape"] else first["dataset"])
        n_train = max(int(_float(r["n_train"]) or 0) for r in rows)
        lines.insert(0, f"{name}: {n_train:,} training, {int(_float(first['n_test']) or 0):,} test rows\n")
    if rff_error is not None and not math.isnan(rff_error):
        lines.append("")
        lines += [f"{label}: {_number(100 * error, '.2f', 'no result')} %: lower than RFF + SGD "
                  f"({100 * rff_error:.2f} %)? {'yes' if error < rff_error else 'NO'}" for label, error in verdicts]
    return lines


def comparison_lines(bench_name: str, folder: Path) -> list[str]:
    """The side-by-side table of the runs in `folder`."""
    return comparison_markdown(comparison_rows(bench_name, folder))


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
