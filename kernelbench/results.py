"""The results contract (DESIGN.md §4): one run = one folder holding `results.csv` and `run.json`.

    <out_dir>/<experiment>-<YYYYmmdd-HHMMSS>-<6 hex>/
        results.csv     tidy: one row per evaluation point, columns `COLUMNS`
        run.json        resolved config, tags, versions, machine, git commit, start/end, status

A run's tags (config `tags:` -- paper, figure, panel, role) are written into run.json and into every
row, so that figures and the report select rows by what they are for, never by experiment names.

Crash safety:
  * A run folder is made with an exclusive `mkdir`: an existing folder is never reused.
  * Each row is ONE line (newlines inside text are replaced by spaces), written with a single
    `os.write` on an `O_APPEND` descriptor and then `fsync`ed. A short or failed write is cut
    back to the previous end of file, so a crash or a full disk never leaves a torn or
    duplicated row, and the rows before it stay intact.
  * `run.json` (and anything else written with `atomic_write_text`) goes to a temporary file in the
    same folder which is flushed, fsynced and renamed over the target: it is never truncated in
    place, a reader sees the old or the new version.
  * A failed write (disk full, permissions) is an `OutputError` (a KernelbenchError) naming the path.

The folder's timestamp is UTC, as are `started` / `ended` in run.json (ISO 8601).
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
import tempfile
import time
from pathlib import Path

from kernelbench.config import TAGS_KEYS
from kernelbench.errors import KernelbenchError, OutputError

__all__ = ["COLUMNS", "TAG_COLUMNS", "ROW_STATUSES", "RUN_STATUSES", "Run", "read_results", "final_rows",
           "collect_results", "config_values", "tagged", "cell_key", "atomic_write_text",
           "atomic_write_bytes", "safe_name", "OutputError"]

TAG_COLUMNS = list(TAGS_KEYS)        # paper, figure, panel, role: the run's tags, empty when untagged
COLUMNS = ["run_id", "experiment", "dataset", "algorithm", "params", "trial", "seed", "fold",
           "budget", "iteration", "samples_seen", "n_features", "n_support_vectors", "train_seconds",
           "objective", "train_error", "train_mse", "train_mae", "test_error", "test_mse", "test_mae",
           "predict_seconds",
           "threads", "counters", "status", "message", "final", *TAG_COLUMNS]
ROW_STATUSES = ("ok", "diverged", "skipped", "failed")
RUN_STATUSES = ("running", "finished", "failed", "interrupted")
RESULTS_FILE = "results.csv"
META_FILE = "run.json"

_STRING_COLUMNS = ("run_id", "experiment", "dataset", "algorithm", "params", "counters", "status",
                   "message", *TAG_COLUMNS)
_INT_COLUMNS = ("trial", "seed", "fold", "iteration", "samples_seen", "n_features",
                "n_support_vectors", "threads", "final")
_FLOAT_COLUMNS = ("budget", "train_seconds", "objective", "train_error", "train_mse", "train_mae", "test_error",
                  "test_mse", "test_mae", "predict_seconds")
_RESERVED_META = ("run_id", "experiment", "status", "started", "ended", "duration_seconds", "tags")


def safe_name(text, default: str = "run", max_length: int = 100) -> str:
    """`text` as a file-name part: runs of characters other than letters, digits, '.', '_', '-'
    become one '_', leading and trailing '._-' go, at most `max_length` characters; `default`
    when nothing is left."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(text)).strip("._-")[:max_length] or default


def _output_error(action: str, path, e: OSError) -> OutputError:
    reason = e.strerror or str(e)
    hint = ""
    if e.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "; the disk is full: free some space or write elsewhere (--out DIR)"
    elif e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = "; no permission to write there: choose another folder (--out DIR)"
    return OutputError(f"cannot {action} {path}: {reason}{hint}")


# --------------------------------------------------------------------------------------------
# Atomic file replacement
# --------------------------------------------------------------------------------------------

def atomic_write_text(path, text: str) -> None:
    """Replace `path` with `text` (UTF-8) atomically (see atomic_write_bytes)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path, data: bytes) -> None:
    """Replace `path` with `data` atomically: a temporary file in the same folder is written,
    flushed, fsynced and renamed over `path` (os.replace); then the folder is fsynced. Readers see
    the old or the new content, never a mix; on error the old file is untouched (OutputError)."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise _output_error("write", path, e) from e
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
            os.fchmod(fd, _file_mode(path))
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        _remove_quietly(tmp)
        raise _output_error("write", path, e) from e
    except BaseException:
        _remove_quietly(tmp)
        raise
    _fsync_dir(path.parent)


def _file_mode(path: Path) -> int:
    """Keep an existing file's mode; a new one gets 0o666 minus the umask (mkstemp makes 0o600)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def _umask() -> int:
    try:   # read it without os.umask(), which would change it for every thread for a moment
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def _remove_quietly(path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fsync_dir(folder: Path) -> None:
    """Make a rename / file creation durable (best effort: not every platform can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------

def _cell(column: str, value) -> str:
    """One CSV cell as text; missing / NaN / None -> empty."""
    if column == "status" and value not in ROW_STATUSES:
        raise ValueError(f"row status must be one of {', '.join(ROW_STATUSES)}, got {value!r}")
    if value is None:
        return ""
    if column == "params":
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                raise ValueError(f"params must be a dict or a JSON string, got {value!r}") from None
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


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------

class Run:
    """One experiment run's folder. Picklable (it holds paths and metadata, no open file)."""

    def __init__(self, path, meta: dict, *, _started_monotonic: float | None = None):
        self.path = Path(path)
        self.run_id: str = meta["run_id"]
        self.experiment: str = meta.get("experiment", "")
        self.tags: dict = _checked_tags(meta.get("tags"))      # {} for a run from before tags
        self._meta = meta
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
            raise _output_error("create the results folder", out_dir, e) from e
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
                raise _output_error("create the run folder", path, e) from e
        else:  # pragma: no cover - 1000 collisions of a 24-bit hash within one second
            raise OutputError(f"could not find a free run folder name under {out_dir}")
        started = _dt.datetime.fromtimestamp(now, _dt.timezone.utc)
        meta = {
            "run_id": path.name,
            "experiment": str(experiment),
            "tags": tags,
            "status": "running",
            "started": started.isoformat(),
            "ended": None,
            "duration_seconds": None,
            "command": list(sys.argv if command is None else command),
            "config": json.loads(config_text),
            "versions": _versions(),
            "machine": _machine(),
            "hostname": socket.gethostname(),
            **_git_state(),
            "results_file": RESULTS_FILE,
            "columns": list(COLUMNS),
        }
        run = cls(path, meta, _started_monotonic=time.monotonic())
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
            raise _output_error("write", csv_path, e) from e
        run._write_meta()
        return run

    @classmethod
    def open(cls, path) -> "Run":
        """An existing run folder (e.g. to resume it or to finish it from another process)."""
        path = Path(path)
        try:
            meta = json.loads((path / META_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise OutputError(f"cannot read {path / META_FILE}: {e}") from e
        return cls(path, meta)

    # --- rows ---------------------------------------------------------------------------------

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS_FILE

    @property
    def meta(self) -> dict:
        return dict(self._meta)

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
            raise _output_error("append to", path, e) from e
        try:
            size_before = os.fstat(fd).st_size
            try:
                written = os.write(fd, line)      # ONE write: the row lands whole or not at all
                if written != len(line):
                    raise OSError(errno.ENOSPC, f"short write ({written} of {len(line)} bytes)")
                os.fsync(fd)
            except OSError as e:
                self._cut_back(fd, size_before, len(line))
                raise _output_error("append a row to", path, e) from e
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
        wanted = _without_tags(json.loads(json.dumps(config, sort_keys=True, default=_json_default)))
        for path in sorted(Path(out_dir).glob(f"{safe_name(experiment)}-*"), reverse=True):
            try:
                run = cls.open(path)
            except OutputError:
                continue
            if _without_tags(run._meta.get("config")) == wanted:
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
            raise _output_error("read", path, e) from e
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
        self._meta.update(tags=self.tags, status="running", ended=None,
                          resumed=[*self._meta.get("resumed", []),
                                   _dt.datetime.now(_dt.timezone.utc).isoformat()])
        self._started_monotonic = None
        self._write_meta()
        return done

    # --- metadata -----------------------------------------------------------------------------

    def update_meta(self, **extra) -> None:
        """Add or replace fields of run.json (e.g. dataset description, peak memory)."""
        reserved = [k for k in extra if k in _RESERVED_META]
        if reserved:
            raise ValueError(f"run.json fields {reserved} are managed by Run (use finish())")
        self._meta.update(extra)
        self._write_meta()

    def finish(self, status: str = "finished", **extra) -> None:
        """Mark the run finished | failed | interrupted, with end time, duration and extra fields
        (e.g. error=..., summary=...)."""
        if status not in RUN_STATUSES[1:]:
            raise ValueError(f"run status must be one of {', '.join(RUN_STATUSES[1:])}, "
                             f"got {status!r}")
        reserved = [k for k in extra if k in _RESERVED_META]
        if reserved:
            raise ValueError(f"run.json fields {reserved} are managed by Run")
        ended = _dt.datetime.now(_dt.timezone.utc)
        if self._started_monotonic is not None:
            duration = time.monotonic() - self._started_monotonic
        else:
            try:
                duration = (ended - _dt.datetime.fromisoformat(self._meta["started"])).total_seconds()
            except (KeyError, TypeError, ValueError):
                duration = None
        self._meta.update(extra)
        self._meta.update(status=status, ended=ended.isoformat(), duration_seconds=duration)
        self._write_meta()

    @property
    def status(self) -> str:
        return self._meta.get("status", "running")

    def _write_meta(self) -> None:
        text = json.dumps(self._meta, indent=2, default=_json_default, allow_nan=False) + "\n"
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


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

def cell_key(params, trial, fold, budget=None) -> tuple:
    """Identity of one training job in a run: (params JSON, trial, fold or "", budget or "") --
    budget: the training a `tune` cell was given (passes or seconds, see tune.py)."""
    def text(v, kind=int):
        try:
            if v is None or v != v or v == "":          # None, NaN, pandas NA, empty
                return ""
        except (TypeError, ValueError):
            return ""
        return repr(kind(v))
    return (str(params), text(trial), text(fold), text(budget, float))


def read_results(run_dir):
    """results.csv of a run folder (or the CSV itself) as a DataFrame with typed columns:
    text columns as str ("" when empty), counts as nullable Int64, measurements as float64."""
    import pandas as pd

    path = Path(run_dir)
    if path.is_dir():
        path = path / RESULTS_FILE
    try:
        data = path.read_bytes()
    except OSError as e:
        raise OutputError(f"cannot read results {path}: {e.strerror or e}") from e
    if data and not data.endswith(b"\n"):
        # Only possible after a power loss between write and fsync: drop the incomplete tail.
        data = data[: data.rfind(b"\n") + 1]
    dtypes = {c: str for c in _STRING_COLUMNS}
    dtypes.update({c: "Int64" for c in _INT_COLUMNS})
    dtypes.update({c: "float64" for c in _FLOAT_COLUMNS})
    frame = pd.read_csv(io.BytesIO(data), dtype=dtypes, keep_default_na=False, na_values=[""])
    for column in COLUMNS:
        if column not in frame.columns:      # a file written by an older schema
            frame[column] = pd.Series(dtype=dtypes[column] if dtypes[column] is not str else object)
    for column in _STRING_COLUMNS:
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


def collect_results(folder, *, include_smoke: bool = False):
    """All rows of all results.csv files below `folder` (an empty frame if none), with two
    columns from each run's run.json: `config` (the resolved config as JSON text, "" when there is
    no run.json) and `n_train` (the training rows the run used). Smoke runs (a few iterations on a
    subsample, run.json "smoke": true) are left out unless asked for."""
    import pandas as pd

    frames = []
    for path in sorted(Path(folder).rglob(RESULTS_FILE)):
        try:
            meta = json.loads((path.parent / META_FILE).read_text())
        except (OSError, ValueError):
            meta = {}
        meta = meta if isinstance(meta, dict) else {}
        if meta.get("smoke", False) and not include_smoke:
            continue
        frame = read_results(path.parent)
        if frame.empty:
            continue
        dataset = meta.get("dataset") if isinstance(meta.get("dataset"), dict) else {}
        config = meta.get("config")
        frame["config"] = json.dumps(config, sort_keys=True) if isinstance(config, dict) else ""
        frame["n_train"] = pd.array([dataset.get("n_train")] * len(frame), dtype="Int64")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def config_values(df, dotted: str):
    """The value at a dotted path (e.g. "stop.passes", "dataset.labeled_only") of each row's run
    config (collect_results' `config` column), as a Series; None where it is absent."""
    import pandas as pd

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


def _checked_tags(tags) -> dict:
    """A run's tags as {key: text} in TAG_COLUMNS order, the unset (None) ones left out."""
    if not tags:
        return {}
    unknown = [k for k in tags if k not in TAG_COLUMNS]
    if unknown:
        raise ValueError(f"unknown tag(s) {unknown}; the tags are {TAG_COLUMNS}")
    return {k: str(tags[k]) for k in TAG_COLUMNS if tags.get(k) is not None}


def _without_tags(config):
    """A stored config without its `tags` (labels: they do not decide whether runs match)."""
    return {k: v for k, v in config.items() if k != "tags"} if isinstance(config, dict) else config


# --------------------------------------------------------------------------------------------
# Provenance
# --------------------------------------------------------------------------------------------

def _versions() -> dict:
    from importlib import metadata

    import kernelbench

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
    import kernelbench

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
