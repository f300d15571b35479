"""The compacted copy of one run: the rows a report or figure reads, thinned curves, and a run.json
without this machine's folders and hosts (the package docstring says what each file keeps)."""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench._io import output_error
from kernelbench._vocab import METRICS, PUBLISHED_POINTS
from kernelbench.errors import ConfigError, OutputError
from kernelbench.results import (
    COLUMNS,
    META_FILE,
    RESULTS_FILE,
    RunRecord,
    cell_key,
    comparable_config,
    config_hash,
    final_rows,
    raw_rows,
    run_folders,
    run_frame,
)

MAX_POINTS = PUBLISHED_POINTS
DIGITS = 6                          # significant digits of a point that is drawn, never read by the report
ROUNDED = METRICS                   # the columns rounded to DIGITS: measurements, never what rows are selected by
LEFT_OUT = ("hostname", "columns")  # run.json fields a published copy does without

# a Dask scheduler's address (--scheduler tcp://host:8786): its scheme is kept, the host never
_ADDRESS = re.compile(r"\b(tcp|tls|ucx|inproc|ws|wss)://[^\s'\"]+")
# an absolute path (/…, ~/…, C:\…) inside a text; not the // of a URL, not the / of "1/3"
_ABSOLUTE = re.compile(r"(?<![\w.~:/\\-])(?:~|[A-Za-z]:)?[\\/][^\s\\/'\"`,;()\[\]{}<>|]+(?:[\\/][^\s\\/'\"`,;()\[\]{}<>|]*)*")


@dataclass
class Source:
    """One run to publish: its folder, record, rows as written (cell texts by column) and typed."""
    path: Path
    record: RunRecord
    header: list
    row_texts: list
    frame: pd.DataFrame


def checked_points(max_points: int) -> int:
    if max_points != 0 and max_points < 2:
        raise ConfigError(f"--points must be 0 (every row) or at least 2 (a curve's first and last), got {max_points}")
    return max_points


def file_name(path: str) -> str:
    """The last part of a path ("/data/a9a/a9a.t" -> "a9a.t"); a text without one as it is."""
    parts = [part for part in re.split(r"[\\/]", path) if part]
    return parts[-1] if parts else path


def published_text(text: str) -> str:
    """A text (an error, a message) without this machine's folders and hosts: each absolute path
    shortened to its file name, a scheduler address to its scheme."""
    text = _ADDRESS.sub(lambda m: f"{m.group(1)}://<address>", text)
    return _ABSOLUTE.sub(lambda m: file_name(m.group()), text)


def _published_argument(arg: str) -> str:
    """One word of the command line: a path (or OPTION=path) shortened to its file name, a scheduler
    address to its scheme."""
    shown = _ADDRESS.sub(lambda m: f"{m.group(1)}://<address>", str(arg))
    if shown != arg:
        return shown
    key, equals, value = shown.partition("=")
    if not equals or "/" in key or "\\" in key:
        key, equals, value = "", "", shown
    return key + equals + (file_name(value) if "/" in value or "\\" in value else value)


def _without_paths(value):
    """Every text in a JSON value through published_text."""
    if isinstance(value, str):
        return published_text(value)
    if isinstance(value, dict):
        return {k: _without_paths(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_paths(v) for v in value]
    return value


def published_config(config):
    """A resolved config as a published run.json holds it: comparable_config (no tags) with the
    tags kept, dataset.path (and test_path) its file name, no absolute path in any text. Its config_hash
    is the same on every machine."""
    if not isinstance(config, dict):
        return config
    tags = config.get("tags")
    config = comparable_config(config)
    if tags is not None:
        config["tags"] = json.loads(json.dumps(tags, default=str))
    dataset = config.get("dataset")
    if isinstance(dataset, dict):
        config["dataset"] = {**dataset, **{key: file_name(dataset[key]) for key in ("path", "test_path")
                                           if isinstance(dataset.get(key), str)}}
    return _without_paths(config)


def published_record(record: RunRecord) -> dict:
    """run.json of a published copy, but for `published` (what the module docstring lists)."""
    out = record.to_dict()
    for name in LEFT_OUT:
        out.pop(name, None)
    out["command"] = [_published_argument(str(arg)) for arg in out.get("command") or []]
    if isinstance(out.get("config"), dict):
        out["config"] = published_config(out["config"])
    dataset = out.get("dataset")
    if isinstance(dataset, dict) and isinstance(dataset.get("files"), list):
        out["dataset"] = {**dataset, "files": [{**f, "path": file_name(f["path"])}
                                               if isinstance(f, dict) and isinstance(f.get("path"), str) else f
                                               for f in dataset["files"]]}
    if isinstance(out.get("tuned_config"), str):
        out["tuned_config"] = file_name(out["tuned_config"])
    out = _without_paths(json.loads(json.dumps(out, default=str)))
    out["config_hash"] = config_hash(out["config"]) if isinstance(out.get("config"), dict) else None
    return out


def _spaced(length: int, k: int) -> set[int]:
    """About k positions of range(length), ends included: half evenly spaced, half evenly spaced
    on a log scale (the figures draw curves against samples or seconds on log axes, where evenly
    spaced points would leave the first decade with one)."""
    if k <= 0 or length <= 0:
        return set()
    if k >= length:
        return set(range(length))
    if k == 1:
        return {0}
    linear = np.round(np.linspace(0, length - 1, k - k // 2))
    log = np.round(np.geomspace(1, length, max(k // 2, 2))) - 1
    return set(np.concatenate([linear, log]).astype(int).tolist())


def thin(frame: pd.DataFrame, max_points: int = MAX_POINTS, keep=()) -> np.ndarray:
    """Which rows of one run (read_results) a published copy keeps, as a boolean mask: every final
    row, the last row of every cell and the rows labelled in `keep`; of each curve of the test part
    (the rows of one parameter setting, no fold, no budget, per trial) at most `max_points` rows:
    its first, its last and spaced ones between (_spaced) -- the same positions in every trial. More
    only where the rows that must be kept are more. max_points 0: every row."""
    n = len(frame)
    if checked_points(max_points) == 0 or n == 0:
        return np.ones(n, dtype=bool)
    frame = frame.reset_index(drop=True)
    cells = pd.Series([cell_key(r.params, r.trial, r.fold, r.budget) for r in frame.itertuples()])
    kept = (frame["final"] == 1).fillna(False).to_numpy(dtype=bool)
    kept |= ~cells.duplicated(keep="last").to_numpy()
    kept[list(keep)] = True
    position = cells.groupby(cells).cumcount().to_numpy()
    drawn = (frame["fold"].isna() & frame["budget"].isna()).to_numpy()
    for members in frame[drawn].groupby("params", sort=False).groups.values():
        members = np.asarray(members)
        forced = set(position[members][kept[members] | (position[members] == 0)].tolist())
        length = int(position[members].max()) + 1
        chosen = forced
        for k in range(1, length + 1):              # as many spaced ones as the bound leaves room for
            candidate = forced | _spaced(length, k)
            if len(candidate) > max_points:
                break
            chosen = candidate
        kept[members[np.isin(position[members], sorted(chosen))]] = True
    return kept


def finished_cells(frame: pd.DataFrame) -> int:
    """How many cells of a run ended with a result (a final row of status ok, cross-validation folds
    included). A run with none -- every cell skipped (an O(n²) baseline past max_points) or failed --
    is no result: it feeds no number and is not published."""
    last = final_rows(frame, folds=True)
    return int((last["status"] == "ok").sum()) if len(last) else 0


def _source(path: Path, record: RunRecord) -> Source:
    csv_path = path / RESULTS_FILE
    rows = raw_rows(path)
    frame = run_frame(path, record)
    if not rows or len(rows) - 1 != len(frame):
        raise OutputError(f"cannot publish {csv_path}: {len(frame)} rows read but {max(len(rows) - 1, 0)} "
                          "lines; check the file (a line broken by hand?) or move the run out of --results")
    header = rows[0]
    return Source(path, record, header, [dict(zip(header, row)) for row in rows[1:]], frame)


def sources(results_dir) -> dict[str, list[Source]]:
    """The runs under results_dir that a paper's report or figures read, by paper: not smoke runs,
    with rows tagged with a paper (run_folders: not the published copies below it)."""
    found: dict[str, list[Source]] = {}
    for path in run_folders(results_dir):
        try:
            record = RunRecord.load(path)
        except OutputError:                          # no run.json: its rows are read all the same
            record = RunRecord(run_id=path.name)
        try:
            empty = not (path / RESULTS_FILE).stat().st_size
        except OSError as e:
            raise output_error("read", path / RESULTS_FILE, e) from e
        if record.smoke or empty:
            continue
        source = _source(path, record)
        for paper in sorted(set(source.frame["paper"]) - {""}):
            found.setdefault(paper, []).append(source)
    return found


def _rounded(text: str) -> str:
    try:
        return f"{float(text):.{DIGITS}g}" if text else text
    except ValueError:
        return text


def published_files(source: Source, max_points: int = MAX_POINTS, keep=()) -> dict[str, str]:
    """{file name: text} of the run's published copy (the module docstring says what it keeps)."""
    frame = source.frame
    kept = thin(frame, max_points, keep)
    read = (frame["final"] == 1).fillna(False).to_numpy(dtype=bool)
    read[list(keep)] = True
    if frame["final"].isna().all():        # a run from before the `final` column: its last rows are read
        read |= ~frame.duplicated(["params", "trial", "fold", "budget"], keep="last").to_numpy()
    rows = []
    for i in np.flatnonzero(kept):
        cells = dict(source.row_texts[i])
        if not read[i] and max_points:
            cells = {c: _rounded(v) if c in ROUNDED else v for c, v in cells.items()}
        if cells.get("message"):
            cells["message"] = published_text(cells["message"])
        rows.append(cells)
    order = [c for c in COLUMNS if c in source.header] + [c for c in source.header if c not in COLUMNS]
    columns = [c for c in order if any(row.get(c, "") != "" for row in rows)]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([row.get(c, "") for c in columns] for row in rows)

    record = published_record(source.record)
    record["published"] = {"max_points": max_points, "digits": DIGITS, "rows": len(frame), "rows_kept": int(kept.sum())}
    run_json = json.dumps(record, indent=2, sort_keys=True, default=str, allow_nan=False) + "\n"
    return {RESULTS_FILE: out.getvalue(), META_FILE: run_json}
