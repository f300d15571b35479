"""`kernelbench publish`: the runs a paper's report and figures read, in a compact form that is
committed (results/published/<paper>/<run id>/), and REPRODUCTION.md regenerated from it alone.

A published run is a run folder (results.csv and run.json, read by the same readers), compacted:

    results.csv   the rows a number of the report is read from, cell for cell as written: every
                  final row, and each evaluation an at_seconds claim picks (report.rows_read); each
                  curve of the test part thinned to at most `max_points` evaluations -- its first and
                  last among them, the others spaced evenly on linear and on log axes, the same
                  positions in every trial, so that the figures' means over trials stay means --
                  the measurements (ROUNDED: errors, objective) of those drawn-only points with
                  `DIGITS` significant digits (never the seconds or counts an at_seconds claim
                  selects by); the curves of cross-validation folds and tune budgets (never drawn)
                  down to their last rows; columns empty in every kept row left out (read_results
                  restores them empty); a failed cell's `message` without folders (published_text).
    run.json      the run's record (resolved config, tags, commit, versions, machine, dataset, times,
                  status, what it measured) with `config_hash` (results.config_hash of the published
                  config) and `published` (how it was thinned) added, the host name and the column
                  list left out, keys sorted; nothing that names this machine's folders or hosts:
                  the data files, the dataset.path of a config, the tuned config and the command's
                  arguments keep their file names (the files' sha256 stay), a scheduler address its
                  scheme, and every other text (an error) its absolute paths' file names.

The same runs give the same bytes, wherever they lie (rows keep the order they were written in).
Before anything is written, the paper's report is built from the compacted copies and from the
runs: they must be the same text, so the published form never changes a verdict. A paper's
published runs that are not under --results any more are kept (they may come from another machine)
unless `prune` -- except those of the same experiment and config hash as a run published now, which
it replaces (kept, both would be counted in the same numbers).
"""
from __future__ import annotations

import csv
import io
import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench._io import atomic_write_text, output_error, safe_name
from kernelbench._vocab import METRICS, PUBLISHED_POINTS
from kernelbench.errors import ConfigError, KernelbenchError, OutputError
from kernelbench.figures import render_all
from kernelbench.papers import get_paper, paper_ids
from kernelbench.report import build_report, reproduction_markdown, rows_read
from kernelbench.results import (
    ABSENT_FILE,
    COLUMNS,
    META_FILE,
    PUBLISHED_DIR,
    RESULTS_FILE,
    RunRecord,
    cell_key,
    comparable_config,
    config_hash,
    final_rows,
    in_published_folder,
    raw_rows,
    read_results,
    run_folders,
    run_frame,
)

MAX_POINTS = PUBLISHED_POINTS
SIZE_BUDGET = 8_000_000             # bytes under results/published plus REPRODUCTION.md (tests/test_publish.py):
#   every paper's runs, their figures and Geng et al.'s 30 model-selection grids (a row per validated
#   cell, 0.1-0.25 MB a grid): 6.7 MB with 23 of the grids, about 7.7 MB once all have run
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


def _checked_points(max_points: int) -> int:
    if max_points != 0 and max_points < 2:
        raise ConfigError(f"--points must be 0 (every row) or at least 2 (a curve's first and last), got {max_points}")
    return max_points


def _file_name(path: str) -> str:
    """The last part of a path ("/data/a9a/a9a.t" -> "a9a.t"); a text without one as it is."""
    parts = [part for part in re.split(r"[\\/]", path) if part]
    return parts[-1] if parts else path


def published_text(text: str) -> str:
    """A text (an error, a message) without this machine's folders and hosts: each absolute path
    shortened to its file name, a scheduler address to its scheme."""
    text = _ADDRESS.sub(lambda m: f"{m.group(1)}://<address>", text)
    return _ABSOLUTE.sub(lambda m: _file_name(m.group()), text)


def _published_argument(arg: str) -> str:
    """One word of the command line: a path (or OPTION=path) shortened to its file name, a scheduler
    address to its scheme."""
    shown = _ADDRESS.sub(lambda m: f"{m.group(1)}://<address>", str(arg))
    if shown != arg:
        return shown
    key, equals, value = shown.partition("=")
    if not equals or "/" in key or "\\" in key:
        key, equals, value = "", "", shown
    return key + equals + (_file_name(value) if "/" in value or "\\" in value else value)


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
    tags kept, dataset.path its file name, no absolute path in any text. Its config_hash is the
    same on every machine."""
    if not isinstance(config, dict):
        return config
    tags = config.get("tags")
    config = comparable_config(config)
    if tags is not None:
        config["tags"] = json.loads(json.dumps(tags, default=str))
    dataset = config.get("dataset")
    if isinstance(dataset, dict) and isinstance(dataset.get("path"), str):
        config["dataset"] = {**dataset, "path": _file_name(dataset["path"])}
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
        out["dataset"] = {**dataset, "files": [{**f, "path": _file_name(f["path"])}
                                               if isinstance(f, dict) and isinstance(f.get("path"), str) else f
                                               for f in dataset["files"]]}
    if isinstance(out.get("tuned_config"), str):
        out["tuned_config"] = _file_name(out["tuned_config"])
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
    if _checked_points(max_points) == 0 or n == 0:
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


def _same_text(path: Path, text: str) -> bool:
    try:
        return path.is_file() and path.read_text(encoding="utf-8") == text
    except UnicodeDecodeError:
        return False
    except OSError as e:
        raise output_error("read", path, e) from e


def _write(folder: Path, files: dict[str, str]) -> bool:
    """Write the files into folder (atomically each); False when they were there already."""
    if all(_same_text(folder / name, text) for name, text in files.items()):
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise output_error("create the folder", folder, e) from e
    for name, text in files.items():
        atomic_write_text(folder / name, text)
    return True


def _paper_files(paper: str, runs: list[Source], max_points: int) -> dict[str, dict[str, str]]:
    """{run id: files} of a paper's runs, each with the rows its report reads."""
    frame = pd.concat([s.frame.assign(_run=i, _row=np.arange(len(s.frame))) for i, s in enumerate(runs)],
                      ignore_index=True)
    anchors = frame.loc[rows_read(frame.drop(columns=["_run", "_row"]), paper), ["_run", "_row"]]
    out = {}
    for i, s in enumerate(runs):
        keep = anchors.loc[anchors["_run"] == i, "_row"].tolist()
        out[s.path.name] = published_files(s, max_points, keep)
    return out


def _check_same_report(paper: str, results_dir, files: dict[str, dict[str, str]]) -> None:
    """The paper's report from the compacted copies must be its report from the runs."""
    with tempfile.TemporaryDirectory(prefix="kernelbench-publish-") as staging:
        for run_id, texts in files.items():
            folder = Path(staging) / run_id
            try:
                folder.mkdir()
                for name, text in texts.items():
                    (folder / name).write_text(text, encoding="utf-8")
            except OSError as e:
                raise output_error("write the copies to compare into", folder, e) from e
        got, _ = build_report([staging], paper=paper)
    expected, _ = build_report([results_dir], paper=paper)
    if got != expected:
        lines = [(a, b) for a, b in zip(expected.splitlines(), got.splitlines()) if a != b]
        first = f": the runs give\n  {lines[0][0]}\nthe copies\n  {lines[0][1]}" if lines else ""
        raise KernelbenchError(f"publishing {paper} would change its report{first}\nthis is a kernelbench bug (please "
                               f"report it); `kernelbench publish {paper} --points 0` publishes every row meanwhile")


def absent_data_text(absent: dict | None, not_run: dict | None = None) -> str | None:
    """The ABSENT_FILE text of {dataset: the command that gets it} and {config file: its state} of
    the runnable experiments not run: "" when nothing is absent (the file is removed), None when
    unknown (kept as it is)."""
    if absent is None and not_run is None:
        return None
    record = {key: dict(sorted(found.items())) for key, found in (("datasets", absent), ("experiments", not_run))
              if found}
    return json.dumps(record, indent=1) + "\n" if record else ""


def _write_absent(path: Path, text: str | None) -> None:
    """ABSENT_FILE as absent_data_text gives it: removed when nothing is absent, kept when unknown."""
    try:
        if text == "":
            path.unlink(missing_ok=True)
        elif text is not None and not _same_text(path, text):
            atomic_write_text(path, text)
    except OSError as e:
        raise output_error("write", path, e) from e


def publish(paper: str | None = None, *, results_dir="results", out_dir=f"results/{PUBLISHED_DIR}",
            max_points: int = MAX_POINTS, prune: bool = False, reproduction="REPRODUCTION.md",
            absent_data=None, not_run=None, figures_dir=None, echo=print) -> dict:
    """Publish the runs of `paper` (every paper with runs, for None) found under results_dir into
    out_dir/<paper>/, with the data its configs need and this machine lacks (`absent_data(paper)`:
    {dataset: the command that gets it}, reproduce.absent_data; None: not recorded) and its runnable
    experiments without a finished run (`not_run(paper)`: {config file: state}, reproduce.not_run),
    then regenerate `reproduction` (None: not) and the papers'
    figures (PNG, into figures_dir; None: not) from out_dir alone. A published
    copy of the same experiment and config hash as a run published now is replaced (removed); the
    others not under results_dir are kept unless `prune`. Returns {paper: {"written": [...],
    "unchanged": [...], "replaced": [...], "kept": [...], "pruned": [...]}} by run id."""
    _checked_points(max_points)
    if paper is not None:
        get_paper(paper)                       # an unknown id: a ConfigError naming the papers
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    if not results_dir.is_dir():
        raise KernelbenchError(f"results folder {results_dir} does not exist; pass the folder that holds your "
                               "run folders with --results (default: results/)")
    if out_dir.resolve() == results_dir.resolve() or out_dir.resolve() in results_dir.resolve().parents:
        raise ConfigError(f"--results {results_dir} is inside the published folder --out {out_dir}: the runs to "
                          f"publish are the run folders (default --results results, --out results/{PUBLISHED_DIR})")
    if results_dir.resolve() in out_dir.resolve().parents and not in_published_folder(out_dir, results_dir):
        raise ConfigError(f"--out {out_dir} is inside --results {results_dir} but not in a folder named "
                          f"`{PUBLISHED_DIR}`: the readers of {results_dir} (report, figures, publish) would count "
                          f"its copies as runs, each twice; use --out {results_dir / PUBLISHED_DIR} or a folder "
                          f"outside {results_dir}")
    found = sources(results_dir)
    papers = [paper] if paper is not None else [p for p in paper_ids() if p in found]
    if not any(found.get(p) for p in papers):
        what = paper or "any paper"
        raise KernelbenchError(f"no run of {what} under {results_dir} (runs of configs tagged with the paper, "
                               f"not smoke runs); run `kernelbench reproduce {paper or 'PAPER'}` first, or pass "
                               "the folder that holds them with --results")
    outcome = {}
    for p in papers:
        runs = found.get(p, [])
        if not runs:
            continue
        files = _paper_files(p, runs, max_points)
        _check_same_report(p, results_dir, files)
        done = {"written": [], "unchanged": [], "replaced": [], "kept": [], "pruned": []}
        for run_id, texts in sorted(files.items()):
            done["written" if _write(out_dir / p / run_id, texts) else "unchanged"].append(run_id)
        _write_absent(out_dir / p / ABSENT_FILE, absent_data_text(absent_data(p) if absent_data else None,
                                                                   not_run(p) if not_run else None))
        published_now = {_setting_of(json.loads(texts[META_FILE])) for texts in files.values()} - {None}
        for folder in _published_folders(out_dir / p, leave_out=files):
            superseded = _setting_of(folder) in published_now
            if superseded or prune:
                try:
                    shutil.rmtree(folder)
                except OSError as e:
                    raise output_error("remove", folder, e) from e
            done["replaced" if superseded else "pruned" if prune else "kept"].append(folder.name)
        unfinished = sorted(s.path.name for s in runs if s.record.status != "finished")
        echo(f"{p}: {len(files)} runs published to {out_dir / p} ({len(done['written'])} written, "
             f"{len(done['unchanged'])} unchanged)")
        if unfinished:
            echo(f"  not finished (their finished cells are published): {', '.join(unfinished)}; "
                 f"`kernelbench reproduce {p}` finishes them")
        if done["replaced"]:
            echo(f"  replaced {len(done['replaced'])} published runs of the same experiment and config: "
                 f"{', '.join(done['replaced'])}")
        if done["kept"]:
            echo(f"  kept {len(done['kept'])} published runs not under {results_dir} (--prune removes them): "
                 f"{', '.join(done['kept'])}")
        if done["pruned"]:
            echo(f"  removed {len(done['pruned'])} published runs not under {results_dir}")
        outcome[p] = done
    if reproduction is not None:
        atomic_write_text(reproduction, reproduction_markdown(out_dir, reproduction))
        echo(f"{reproduction}: regenerated from {out_dir}")
    if figures_dir is not None:
        drawn = [path for p in outcome for path in render_all(out_dir, figures_dir, prefix=f"{p}_", formats=("png",), palette=True)]
        echo(f"figures: {len(drawn)} drawn from {out_dir} into {figures_dir}")
    files = [f for f in out_dir.rglob("*") if f.is_file()] + ([Path(reproduction)] if reproduction is not None else [])
    too_large = over_budget(files)
    if too_large:
        echo(f"warning: {too_large}")
    return outcome


def _published_folders(folder: Path, leave_out=()) -> list[Path]:
    """The published run folders in a paper's folder, but those named in leave_out."""
    try:
        return sorted(f for f in folder.iterdir() if f.is_dir() and f.name not in leave_out
                      and ((f / RESULTS_FILE).exists() or (f / META_FILE).exists()))
    except OSError as e:
        raise output_error("list", folder, e) from e


def _setting_of(run) -> tuple | None:
    """(experiment, config hash) of a published run (its folder, or its run.json as a dict): runs
    with the same one are runs of the same settings. None when its run.json has no config."""
    if isinstance(run, Path):
        try:
            run = RunRecord.load(run).to_dict()
        except OutputError:
            return None
    config = run.get("config")
    if not isinstance(config, dict):
        return None
    return run.get("experiment") or "", run.get("config_hash") or config_hash(published_config(config))


def over_budget(files, budget: int = SIZE_BUDGET) -> str | None:
    """Why these files are too large to commit (their total over `budget` bytes, naming the largest),
    or None when they are not."""
    sizes = []
    for f in map(Path, files):
        try:
            if f.is_file():
                sizes.append((f.stat().st_size, str(f)))
        except OSError as e:
            raise output_error("read", f, e) from e
    sizes.sort(reverse=True)
    total = sum(size for size, _ in sizes)
    if total <= budget:
        return None
    largest = ", ".join(f"{name} ({size / 1e6:.2f} MB)" for size, name in sizes[:5])
    return (f"the published results take {total / 1e6:.2f} MB, over the budget of {budget / 1e6:.2f} MB; the "
            f"largest: {largest}; publish them with fewer --points, or remove superseded runs (--prune)")


def published_seconds(published_dir, experiment: str, config: dict | None = None) -> float | None:
    """How long the newest published run of `experiment` took (of this resolved config when one is
    published, else of any): its wall time when it ran in one go, else the sum of its cells' final
    training seconds (a resumed run's wall time counts the time it lay stopped). None: none published."""
    wanted = config_hash(published_config(config)) if isinstance(config, dict) else None
    runs = []
    for path in sorted(Path(published_dir).glob(f"*/{safe_name(experiment)}-*"), key=lambda p: p.name, reverse=True):
        try:
            record = RunRecord.load(path)
        except OutputError:
            continue
        if record.experiment == experiment:
            runs.append((path, record))
    same = [(p, r) for p, r in runs if wanted is not None and isinstance(r.config, dict)
            and config_hash(published_config(r.config)) == wanted]
    for path, record in same or runs:
        if record.status == "finished" and not record.resumed and record.duration_seconds:
            return float(record.duration_seconds)
        try:
            trained = final_rows(read_results(path), folds=True)["train_seconds"].astype(float).sum()
        except OutputError:
            continue
        if trained > 0:
            return float(trained)
    return None
