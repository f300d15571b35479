"""Reading runs back: a run's rows, all runs under a folder, the finished cells, selection by tags."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd

from kernelbench.errors import OutputError

from .schema import (COLUMNS, FLOAT_COLUMNS, INT_COLUMNS, PUBLISHED_DIR, RESULTS_FILE, STRING_COLUMNS, TAG_COLUMNS,
                     RunRecord)


def cell_key(params, trial, fold, budget=None) -> tuple:
    """Identity of one training job in a run: (params JSON, trial, fold or "", budget or "") --
    budget: the training a `tune` cell was given (passes or seconds, see experiment/tuning.py)."""
    def text(v, kind=int):
        try:
            if v is None or v != v or v == "":          # None, NaN, pandas NA, empty
                return ""
        except (TypeError, ValueError):
            return ""
        return repr(kind(v))
    return (str(params), text(trial), text(fold), text(budget, float))


def _complete_lines(run_dir) -> bytes:
    """The bytes of a run's results.csv (of a run folder, or the CSV itself) up to its last complete
    line: a torn last line -- only possible after a power loss between write and fsync -- is no row.
    An OutputError naming the file when it cannot be read."""
    path = Path(run_dir)
    if path.is_dir():
        path = path / RESULTS_FILE
    try:
        data = path.read_bytes()
    except OSError as e:
        raise OutputError(f"cannot read results {path}: {e.strerror or e}") from e
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
    return data


def raw_rows(run_dir) -> list[list[str]]:
    """A run's results.csv as written: its lines (the header first) as lists of cell texts, the
    rows read_results reads (a torn last line left out, as there), blank lines skipped."""
    try:
        text = _complete_lines(run_dir).decode("utf-8")
    except UnicodeDecodeError as e:
        raise OutputError(f"cannot read results in {run_dir}: not UTF-8 text ({e.reason} at byte {e.start})") from e
    return [row for row in csv.reader(io.StringIO(text, newline="")) if row]


def read_results(run_dir):
    """results.csv of a run folder (or the CSV itself) as a DataFrame with typed columns:
    text columns as str ("" when empty), counts as nullable Int64, measurements as float64."""
    data = _complete_lines(run_dir)
    dtypes = {c: str for c in STRING_COLUMNS}
    dtypes.update({c: "Int64" for c in INT_COLUMNS})
    dtypes.update({c: "float64" for c in FLOAT_COLUMNS})
    frame = pd.read_csv(io.BytesIO(data), dtype=dtypes, keep_default_na=False, na_values=[""])
    for column in COLUMNS:
        if column not in frame.columns:      # a file written by an older schema
            frame[column] = pd.Series(dtype=dtypes[column] if dtypes[column] is not str else object)
    for column in STRING_COLUMNS:
        frame[column] = frame[column].fillna("").astype(str)
    extra = [c for c in frame.columns if c not in COLUMNS]
    return frame[COLUMNS + extra]


def final_rows(df, *, folds: bool = False, statuses=None, old_runs: bool = False):
    """The last row of every finished cell: its row with final = 1. Cross-validation rows (a fold
    set: model selection) are left out unless `folds` -- except on a collect_results frame the rows
    of `protocol: paper` runs, whose folds are the measurement (the paper's test error, runner.
    run_experiment); with `statuses` (e.g. ("ok",)) only rows of
    those statuses are kept. With `old_runs`, a run written before the `final` column existed (no
    row of it marked) counts the last row of each (params, trial, fold) as final -- never for a run
    of today, whose unmarked cells are unfinished. Works on read_results / collect_results frames."""
    if df.empty:
        return df
    rows = df
    if not folds and "fold" in rows:
        measured = rows["fold"].isna() | (rows["fold"].astype(str) == "")
        if "config" in rows:
            measured |= (config_values(rows, "protocol") == "paper").astype(bool)
        rows = rows[measured]
    keep = (rows["final"] == 1).fillna(False).astype(bool)
    if old_runs:
        unmarked = rows["final"].isna().groupby(rows["run_id"]).transform("all").astype(bool)
        last = ~rows.duplicated(["run_id", "params", "trial", "fold", "budget"], keep="last")
        keep = keep | (unmarked & last)
    if statuses is not None:
        keep &= rows["status"].isin(list(statuses))
    return rows[keep]


def in_published_folder(path, root) -> bool:
    """Whether `path` lies in a `published` folder (PUBLISHED_DIR) below `root` -- or is one: the
    folders run_folders(root) leaves out."""
    try:
        parts = Path(path).resolve().relative_to(Path(root).resolve()).parts
    except ValueError:                  # not below root
        return False
    return PUBLISHED_DIR in parts


def run_folders(folder) -> list[Path]:
    """The run folders below `folder` (each holds a results.csv), in path order. The published
    copies in a `published` folder below it (kernelbench publish; in_published_folder) are left out:
    they copy runs that may be here too, and are read by naming that folder (e.g. results/published)."""
    root = Path(folder)
    return [path.parent for path in sorted(root.rglob(RESULTS_FILE))
            if PUBLISHED_DIR not in path.parent.relative_to(root).parts]


def run_frame(run_dir, record: RunRecord | None = None):
    """One run's rows as collect_results gives them: read_results plus `config` (the resolved
    config as JSON text, "" when there is no run.json), `n_train` (the training rows it used),
    `sweep` (a sweep point's swept values as JSON text, "" otherwise), `peak_memory_mb` (the
    run's process; a point's own when the sweep ran it as a process), `replica` (the synthetic
    replica read in place of the data set, RunRecord.replica; "" for the data set itself),
    `determinism` (what re-running with the same seed gives, "" when unrecorded), `started`
    (when the run began, UTC ISO 8601) and `processor` (run.json's machine; "" when unrecorded)."""
    if record is None:
        try:
            record = RunRecord.load(run_dir)
        except OutputError:
            record = RunRecord(run_id="")
    frame = read_results(run_dir)
    dataset = record.dataset if isinstance(record.dataset, dict) else {}
    config = record.config
    frame["config"] = json.dumps(config, sort_keys=True) if isinstance(config, dict) else ""
    frame["n_train"] = pd.array([dataset.get("n_train")] * len(frame), dtype="Int64")
    frame["sweep"] = json.dumps(record.sweep, sort_keys=True) if isinstance(record.sweep, dict) else ""
    frame["peak_memory_mb"] = float(record.peak_memory_mb) if record.peak_memory_mb is not None else float("nan")
    frame["replica"] = record.replica
    frame["determinism"] = record.determinism or ""
    frame["started"] = record.started or ""
    machine = record.machine if isinstance(record.machine, dict) else {}
    frame["processor"] = machine.get("processor") or ""
    return frame


def collect_results(folder, *, include_smoke: bool = False):
    """All rows of all run folders below `folder` (run_folders; an empty frame if none), each with
    the columns run_frame adds. Smoke runs (a few iterations on a subsample, run.json "smoke":
    true) are left out unless asked for."""
    frames = []
    for path in run_folders(folder):
        try:
            record = RunRecord.load(path)
        except OutputError:
            record = RunRecord(run_id="")
        if record.smoke and not include_smoke:
            continue
        frame = run_frame(path, record)
        if frame.empty:
            continue
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def config_values(df, dotted: str):
    """The value at a dotted path (e.g. "stop.passes", "dataset.labeled_only") of each row's run
    config (collect_results' `config` column), as a Series; None where it is absent."""
    def lookup(text):
        value = json.loads(text) if text else None
        for key in dotted.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        return value
    if "config" not in df:
        return pd.Series([None] * len(df), index=df.index, dtype=object)
    values = {text: lookup(text) for text in df["config"].unique()}
    return pd.Series([values[text] for text in df["config"]], index=df.index, dtype=object)


def tagged(df, **tags):
    """The rows whose tags match, e.g. tagged(df, paper="li2016", figure=("fig1", "table3")): each
    keyword a tag (paper, figure, panel, role) with one value or a tuple of values."""
    unknown = [k for k in tags if k not in TAG_COLUMNS]
    if unknown:
        raise ValueError(f"unknown tag(s) {unknown}; the tags are {TAG_COLUMNS}")
    if df.empty:
        return df
    keep = True
    for key, wanted in tags.items():
        if key not in df:
            return df.iloc[0:0]
        keep = keep & df[key].isin([wanted] if isinstance(wanted, str) else list(wanted))
    return df[keep] if tags else df




def resolved_text(values) -> str:
    """The values estimators chose at the start of training for parameters given as a rule (the
    `resolved` column: JSON text, or mappings from run.json), e.g. "gamma=0.0123, passes=50";
    a range where trials or runs chose differently; "" when none was resolved."""
    chosen: dict = {}
    for value in values:
        mapping = json.loads(value) if isinstance(value, str) and value else value
        for name, v in (mapping or {}).items():
            chosen.setdefault(name, []).append(v)
    parts = []
    for name, vs in sorted(chosen.items()):
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vs):
            low, high = min(vs), max(vs)
            parts.append(f"{name}={low:.4g}" if low == high else f"{name}={low:.4g}..{high:.4g}")
        else:
            parts.append(f"{name}={'/'.join(dict.fromkeys(str(v) for v in vs))}")
    return ", ".join(parts)
