"""One run's folder, written so that nothing is lost (the layout: kernelbench/results/schema.py).

  * A run folder is made with an exclusive `mkdir`: an existing folder is never reused.
  * Each row is ONE line (newlines inside text are replaced by spaces), written with a single
    `os.write` on an `O_APPEND` descriptor and then `fsync`ed. A short or failed write is cut
    back to the previous end of file, so a crash or a full disk never leaves a torn or
    duplicated row, and the rows before it stay intact.
  * `run.json` is written atomically (kernelbench._io): a reader sees the old or the new version.
  * A failed write (disk full, permissions) is an `OutputError` (a KernelbenchError) naming the path.
"""
from __future__ import annotations

import csv
import datetime as _dt
import errno
import hashlib
import io
import json
import math
import numbers
import os
import platform
import re
import socket
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import kernelbench
from kernelbench._io import atomic_write_bytes, atomic_write_text, output_error, safe_name
from kernelbench.errors import KernelbenchError, OutputError

from .read import cell_key, final_rows, read_results
from .schema import (COLUMNS, JSON_COLUMNS, META_FILE, RESULTS_FILE, ROW_STATUSES, RUN_STATUSES, TAG_COLUMNS,
                     RunRecord)


def _cell(column: str, value) -> str:
    """One CSV cell as text; missing / NaN / None -> empty."""
    if column == "status" and value not in ROW_STATUSES:
        raise ValueError(f"row status must be one of {', '.join(ROW_STATUSES)}, got {value!r}")
    if value is None:
        return ""
    if column in JSON_COLUMNS:
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError(f"{column} must be a dict or a JSON string, got {value!r}") from None
        return json.dumps(value, sort_keys=True, default=_json_default, allow_nan=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        value = float(value)
        if math.isnan(value):
            return ""
        return repr(value)          # shortest text that reads back as the same float
    return " ".join(str(value).splitlines())    # one physical line per row


def _json_default(value):
    if hasattr(value, "item"):           # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):         # numpy arrays
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def _csv_line(cells: list[str]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return out.getvalue().encode("utf-8")


class Run:
    """One experiment run's folder. Picklable (it holds paths and metadata, no open file)."""

    def __init__(self, path, record: RunRecord, *, _started_monotonic: float | None = None):
        self.path = Path(path)
        self.record = record
        self.run_id: str = record.run_id
        self.experiment: str = record.experiment
        self.tags: dict = _checked_tags(record.tags)      # {} for a run from before tags
        self._started_monotonic = _started_monotonic

    # --- creation -----------------------------------------------------------------------------

    @classmethod
    def create(cls, out_dir, experiment: str, config: dict, *, command: list[str] | None = None,
               tags: dict | None = None) -> "Run":
        """Make a new, never-before-used run folder under `out_dir` with run.json (status
        "running") and results.csv (the header). `tags` ({paper, figure, panel, role}, the set
        ones) label the run and every row it appends."""
        out_dir = Path(out_dir)
        safe = safe_name(experiment)
        tags = _checked_tags(tags)
        config_text = json.dumps(config, sort_keys=True, default=_json_default)
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise output_error("create the results folder", out_dir, e) from e
        for attempt in range(1000):
            now = time.time()
            stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(now))
            digest = hashlib.sha256(
                f"{config_text}|{time.time_ns()}|{os.getpid()}|{attempt}".encode()).hexdigest()[:6]
            path = out_dir / f"{safe}-{stamp}-{digest}"
            try:
                os.mkdir(path)          # exclusive: fails if it exists, never reuses a folder
                break
            except FileExistsError:
                continue
            except OSError as e:
                raise output_error("create the run folder", path, e) from e
        else:  # pragma: no cover - 1000 collisions of a 24-bit hash within one second
            raise OutputError(f"could not find a free run folder name under {out_dir}")
        started = _dt.datetime.fromtimestamp(now, _dt.timezone.utc)
        record = RunRecord(run_id=path.name, experiment=str(experiment), tags=tags, status="running",
                           started=started.isoformat(),
                           command=list(sys.argv if command is None else command),
                           config=json.loads(config_text), versions=_versions(), machine=_machine(),
                           hostname=socket.gethostname(), **_git_state())
        run = cls(path, record, _started_monotonic=time.monotonic())
        header = _csv_line(COLUMNS)
        csv_path = path / RESULTS_FILE
        try:
            fd = os.open(csv_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o666)
            try:
                if os.write(fd, header) != len(header):
                    raise OSError(errno.EIO, "short write")
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise output_error("write", csv_path, e) from e
        run._write_meta()
        return run

    @classmethod
    def open(cls, path) -> "Run":
        """An existing run folder (e.g. to resume it or to finish it from another process)."""
        return cls(path, RunRecord.load(path))

    # --- rows ---------------------------------------------------------------------------------

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS_FILE

    def append(self, row: dict) -> None:
        """Append one evaluation point. Unknown columns are a bug (ValueError); missing ones are
        left empty, except run_id / experiment (this run's) and status (default "ok")."""
        unknown = [k for k in row if k not in COLUMNS]
        if unknown:
            raise ValueError(f"unknown result column(s) {unknown}; the columns are {COLUMNS}")
        row = {"run_id": self.run_id, "experiment": self.experiment, **self.tags, "status": "ok", **row}
        line = _csv_line([_cell(c, row.get(c)) for c in COLUMNS])
        path = self.results_path
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except OSError as e:
            raise output_error("append to", path, e) from e
        try:
            size_before = os.fstat(fd).st_size
            try:
                written = os.write(fd, line)      # ONE write: the row lands whole or not at all
                if written != len(line):
                    raise OSError(errno.ENOSPC, f"short write ({written} of {len(line)} bytes)")
                os.fsync(fd)
            except OSError as e:
                self._cut_back(fd, size_before, len(line))
                raise output_error("append a row to", path, e) from e
        finally:
            os.close(fd)

    @staticmethod
    def _cut_back(fd: int, size_before: int, line_length: int) -> None:
        """Remove a partly written row; only when nobody else appended meanwhile."""
        try:
            size_now = os.fstat(fd).st_size
            if size_before < size_now <= size_before + line_length:
                os.ftruncate(fd, size_before)
                os.fsync(fd)
        except OSError:
            pass

    # --- resuming -----------------------------------------------------------------------------

    @classmethod
    def latest(cls, out_dir, experiment: str, config: dict) -> "Run | None":
        """The newest run folder under out_dir of this experiment with this exact resolved config.
        Tags are not compared: they label a run and change nothing it computes (a run from before
        tags existed, or before its config was tagged, is found too)."""
        wanted = comparable_config(config)
        for path in sorted(Path(out_dir).glob(f"{safe_name(experiment)}-*"), reverse=True):
            try:
                run = cls.open(path)
            except OutputError:
                continue
            if comparable_config(run.record.config) == wanted:
                return run
        return None

    def finished_cells(self, df=None) -> set:
        """Keys (params, trial, fold, budget) of cells whose last row (final = 1) is written."""
        df = read_results(self.path) if df is None else df
        return {cell_key(r.params, r.trial, r.fold, r.budget) for r in final_rows(df, folds=True).itertuples()}

    def resume(self, tags: dict | None = None) -> set:
        """Reopen for more rows: drop the rows of cells that never finished (a killed run's
        partial curves), atomically, and return the finished cells' keys. `tags` (the config's
        current ones) relabel the run; the kept rows get the run's tags and, when results.csv was
        written with older columns, the current header (the columns it lacked left empty)."""
        if tags is not None:
            self.tags = _checked_tags(tags)
        path = self.results_path
        try:
            lines = path.read_bytes().splitlines(keepends=True)
        except OSError as e:
            raise output_error("read", path, e) from e
        df = read_results(self.path)
        done = self.finished_cells(df)
        header = next(csv.reader([lines[0].decode("utf-8")])) if lines else COLUMNS
        relabel = header != COLUMNS or any((df[c] != self.tags.get(c, "")).any() for c in TAG_COLUMNS)
        keep = [_csv_line(COLUMNS)]
        for line, r in zip(lines[1:], df.itertuples()):
            if cell_key(r.params, r.trial, r.fold, r.budget) not in done:
                continue
            if relabel:      # the row's cells as written (no float re-formatting), by column name
                cells = dict(zip(header, next(csv.reader([line.decode("utf-8")]))))
                cells.update({c: self.tags.get(c, "") for c in TAG_COLUMNS})
                line = _csv_line([cells.get(c, "") for c in COLUMNS])
            keep.append(line)
        atomic_write_bytes(path, b"".join(keep))
        self.record.update(tags=self.tags, status="running", ended=None,
                           resumed=[*(self.record.resumed or []), _dt.datetime.now(_dt.timezone.utc).isoformat()])
        self._started_monotonic = None
        self._write_meta()
        return done

    # --- metadata -----------------------------------------------------------------------------

    def update(self, **fields) -> None:
        """Set fields of run.json (RunRecord's, e.g. the dataset description) and write it."""
        reserved = [k for k in fields if k in RunRecord.MANAGED]
        if reserved:
            raise ValueError(f"run.json fields {reserved} are managed by Run (use finish())")
        self.record.update(**fields)
        self._write_meta()

    def finish(self, status: str = "finished", **extra) -> None:
        """Mark the run finished | failed | interrupted, with end time, duration and extra fields
        (e.g. error=..., summary=...)."""
        if status not in RUN_STATUSES[1:]:
            raise ValueError(f"run status must be one of {', '.join(RUN_STATUSES[1:])}, "
                             f"got {status!r}")
        reserved = [k for k in extra if k in RunRecord.MANAGED]
        if reserved:
            raise ValueError(f"run.json fields {reserved} are managed by Run")
        ended = _dt.datetime.now(_dt.timezone.utc)
        if self._started_monotonic is not None:
            duration = time.monotonic() - self._started_monotonic
        else:
            try:
                duration = (ended - _dt.datetime.fromisoformat(self.record.started)).total_seconds()
            except (KeyError, TypeError, ValueError):
                duration = None
        self.record.update(**extra)
        self.record.update(status=status, ended=ended.isoformat(), duration_seconds=duration)
        self._write_meta()

    @property
    def status(self) -> str:
        return self.record.status

    def _write_meta(self) -> None:
        text = json.dumps(self.record.to_dict(), indent=2, default=_json_default, allow_nan=False) + "\n"
        atomic_write_text(self.path / META_FILE, text)

    # --- context manager ----------------------------------------------------------------------

    def __enter__(self) -> "Run":
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            if self.status == "running":
                self.finish("finished")
            return False
        status = "interrupted" if issubclass(exc_type, KeyboardInterrupt) else "failed"
        message = f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__
        try:
            self.finish(status, error=message)
        except (OSError, KernelbenchError, ValueError) as e:   # never hide the original error
            print(f"kernelbench: could not record the {status} status of {self.path}: {e}",
                  file=sys.stderr)
        return False

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r}, status={self.status!r})"


def _checked_tags(tags) -> dict:
    """A run's tags as {key: text} in TAG_COLUMNS order, the unset (None) ones left out."""
    if not tags:
        return {}
    unknown = [k for k in tags if k not in TAG_COLUMNS]
    if unknown:
        raise ValueError(f"unknown tag(s) {unknown}; the tags are {TAG_COLUMNS}")
    return {k: str(tags[k]) for k in TAG_COLUMNS if tags.get(k) is not None}


def comparable_config(config):
    """A resolved config as run.json stores it (JSON types: tuples as lists, numpy scalars as
    numbers), without its `tags`: labels, which change nothing a run computes, so they do not decide
    whether two runs match (Run.latest) nor enter config_hash."""
    if config is None:
        return None
    config = json.loads(json.dumps(config, sort_keys=True, default=_json_default))
    return {k: v for k, v in config.items() if k != "tags"} if isinstance(config, dict) else config


def config_hash(config) -> str:
    """sha256 (hex) of a resolved config as canonical JSON (comparable_config: no tags, sorted keys):
    the same for every run of the same settings, e.g. the "config sha256" of REPRODUCTION.md."""
    text = json.dumps(comparable_config(config), sort_keys=True, separators=(",", ":"), default=_json_default)
    return hashlib.sha256(text.encode()).hexdigest()


def _versions() -> dict:
    versions = {"python": platform.python_version(),
                "kernelbench": getattr(kernelbench, "__version__", None)}
    for dist in ("numpy", "scipy", "scikit-learn", "pandas", "cython"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return versions


def _machine() -> dict:
    machine = {"platform": platform.platform(), "architecture": platform.machine(),
               "processor": platform.processor() or None, "cpu_count": os.cpu_count(),
               "cpu_affinity": None, "memory_total_bytes": None}
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                machine["processor"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    if hasattr(os, "sched_getaffinity"):
        try:
            machine["cpu_affinity"] = len(os.sched_getaffinity(0))
        except OSError:
            pass
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                machine["memory_total_bytes"] = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError, IndexError):
        pass
    if machine["memory_total_bytes"] is None:
        try:
            machine["memory_total_bytes"] = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            pass
    return machine


def _git_state() -> dict:
    """Commit of the kernelbench source tree, or None when the package is not a git checkout
    (e.g. installed into site-packages: then the enclosing repository is someone else's)."""
    root = Path(kernelbench.__file__).resolve().parent.parent
    state = {"git_commit": None, "git_dirty": None}
    try:
        out = subprocess.run(["git", "rev-parse", "--show-toplevel", "HEAD"], cwd=root,
                             capture_output=True, text=True, timeout=5, check=False)
        lines = out.stdout.split()
        if out.returncode != 0 or len(lines) != 2 or Path(lines[0]).resolve() != root:
            return state
        if re.fullmatch(r"[0-9a-f]{40,64}", lines[1]):
            state["git_commit"] = lines[1]
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=normal", "--",
                                "kernelbench"], cwd=root, capture_output=True, text=True,
                               timeout=5, check=False)
        if dirty.returncode == 0:
            state["git_dirty"] = bool(dirty.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return state
