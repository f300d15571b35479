"""What a run writes: the columns of results.csv and the record in run.json, declared once.

    <out_dir>/<experiment>-<YYYYmmdd-HHMMSS>-<6 hex>/
        results.csv     tidy: one row per evaluation point, columns `COLUMNS`
        run.json        a `RunRecord`: resolved config, tags, versions, machine, git commit,
                        start/end, status, and what the run measured (summary, best cell, ...)

A run's tags (config `tags:` -- paper, figure, panel, role) are written into run.json and into every
row, so that figures and the report select rows by what they are for, never by experiment names.
The folder's timestamp is UTC, as are `started` / `ended` (ISO 8601).

A published run (`kernelbench publish`, kernelbench/publish) is the same two files, compacted, in
`results/published/<paper>/<run id>/`; a reader of a folder leaves out a `published` folder below it
(read.run_folders), so that a run and its copy are never counted twice.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from kernelbench._vocab import SYNTHETIC, TAGS
from kernelbench.errors import OutputError

TAG_COLUMNS = list(TAGS)        # paper, figure, panel, role: the run's tags, empty when untagged
# train_seconds: the timed training calls' wall time (evaluation is not timed); train_memory_mb: the
# process's peak resident memory in those calls above its resident memory before training (what
# training itself holds: a model, a kernel matrix; not the interpreter or the data; empty off Linux)
COLUMNS = ["run_id", "experiment", "dataset", "algorithm", "params", "resolved", "trial", "seed", "fold",
           "budget", "iteration", "samples_seen", "n_features", "n_support_vectors", "train_seconds",
           "objective", "train_error", "train_mse", "train_mae", "test_error", "test_mse", "test_mae",
           "predict_seconds", "train_memory_mb",
           "threads", "counters", "status", "message", "final", *TAG_COLUMNS]
ROW_STATUSES = ("ok", "diverged", "skipped", "failed")
RUN_STATUSES = ("running", "finished", "failed", "interrupted")
RESULTS_FILE = "results.csv"
META_FILE = "run.json"
PUBLISHED_DIR = "published"     # results/published/<paper>/<run id>/: the committed copies (kernelbench publish)
ABSENT_FILE = "absent_data.json"  # results/published/<paper>/: the data the publishing machine had no copy of

STRING_COLUMNS = ("run_id", "experiment", "dataset", "algorithm", "params", "resolved", "counters", "status",
                  "message", *TAG_COLUMNS)
# JSON objects: `params` as given (defaults filled in), `resolved` the values the estimator chose at
# the start of training for parameters given as a rule (gamma: scale, passes: null, a pilot's step)
JSON_COLUMNS = ("params", "resolved")
INT_COLUMNS = ("trial", "seed", "fold", "iteration", "samples_seen", "n_features",
               "n_support_vectors", "threads", "final")
FLOAT_COLUMNS = ("budget", "train_seconds", "objective", "train_error", "train_mse", "train_mae", "test_error",
                 "test_mse", "test_mae", "predict_seconds", "train_memory_mb")


@dataclass
class RunRecord:
    """run.json. The first block is written by every run (Run manages it: identity, status, times,
    provenance); the second is what the experiment layer records as it goes, each field present in
    the file once it has been set. Fields a newer or older kernelbench wrote are kept in `extra`."""
    run_id: str
    experiment: str = ""
    tags: dict = field(default_factory=dict)
    status: str = "running"                   # one of RUN_STATUSES
    started: str | None = None                # UTC, ISO 8601
    ended: str | None = None
    duration_seconds: float | None = None
    command: list = field(default_factory=list)
    config: dict | None = None                # the resolved config (config_to_dict)
    versions: dict = field(default_factory=dict)
    machine: dict = field(default_factory=dict)
    hostname: str | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None
    results_file: str = RESULTS_FILE
    columns: list = field(default_factory=lambda: list(COLUMNS))
    # -- set as the run goes ----------------------------------------------------------------
    resumed: list | None = None               # UTC times of each resume
    error: str | None = None                  # why a failed or interrupted run stopped
    dataset: dict | None = None               # name, task, sizes, dtype and the files' provenance
    smoke: bool | None = None                 # a smoke run (left out of figures and reports)
    determinism: str | None = None            # what re-running with the same seed gives
    labeled: int | None = None                # dataset.labeled (semi-supervised protocol)
    protocol: str | None = None               # held-out | paper
    cv: int | None = None                     # folds of a model selection or the paper protocol
    summary: list | None = None               # run: each finished cell's outcome (paper: fold means)
    peak_memory_mb: float | None = None
    cells: list | None = None                 # grid: every searched cell's fold scores
    grid: dict | None = None                  # grid: the values searched per parameter (both stages)
    grid_from: str | None = None              # grid: "config" (grid:), else the search space it was built from
    best: dict | None = None                  # grid / tune: the chosen setting
    refit: list | None = None                 # grid / tune: the refit trials' outcome
    skipped: str | None = None                # grid: why the algorithm refuses the refit (no search)
    search_seconds: float | None = None       # tune: time spent searching, over resumes
    settings: list | None = None              # tune: every setting with its scores by budget
    search_space: dict | None = None          # tune: the space searched (YAML form)
    search_scales: dict | None = None         # tune: data scales it refers to (median γ)
    validation: str | None = None             # tune: holdout | cv | paper
    folds: int | None = None                  # tune: validation splits
    rungs: list | None = None                 # tune: budgets of successive halving
    eta: int | None = None                    # tune: halving factor
    tuned_config: str | None = None           # tune: the written config
    sweep: dict | None = None                 # sweep: this point's swept config values {dotted key: value}
    extra: dict = field(default_factory=dict)
    given: set = field(default_factory=set, repr=False)   # fields of the second block that are set

    MANAGED = ("run_id", "experiment", "status", "started", "ended", "duration_seconds", "tags")

    @property
    def replica(self) -> str:
        """Which synthetic replica (`kernelbench datasets synth`) the run read in place of its data
        set, e.g. "synthetic replica of susy, 1,000,000 + 100,000 rows, Bayes error 0.2"; "" when it
        read the data set itself. Data named `synthetic` say what they are, so they get "" too: only
        a run whose data set's name stands for a paper's set can be mistaken for a run on it."""
        dataset = self.dataset if isinstance(self.dataset, dict) else {}
        made = dataset.get("synthetic")
        if not isinstance(made, dict) or dataset.get("name") == SYNTHETIC:
            return ""
        parts = [f"synthetic replica of {dataset.get('name') or made.get('shape', '?')}"]
        n, n_test = made.get("n"), made.get("n_test")
        if isinstance(n, int):
            parts.append(f"{n:,} + {n_test:,} rows" if isinstance(n_test, int) else f"{n:,} rows")
        bayes = made.get("bayes_error", made.get("noise"))
        if isinstance(bayes, (int, float)):
            parts.append(f"Bayes error {bayes:g}")
        return ", ".join(parts)

    @classmethod
    def fields_set_later(cls) -> tuple:
        names = [f.name for f in dataclasses.fields(cls)]
        return tuple(names[names.index("resumed"):names.index("extra")])

    def update(self, **values) -> None:
        """Set fields (unknown names are a bug: ValueError naming the fields there are)."""
        known = {f.name for f in dataclasses.fields(self)} - {"extra", "given"}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"run.json has no field(s) {unknown}; its fields: {sorted(known)}")
        later = set(self.fields_set_later())
        for name, value in values.items():
            setattr(self, name, value)
            if name in later:
                self.given.add(name)

    def to_dict(self) -> dict:
        later = self.fields_set_later()
        out = {}
        for f in dataclasses.fields(self):
            if f.name in ("extra", "given") or (f.name in later and f.name not in self.given):
                continue
            out[f.name] = getattr(self, f.name)
        out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "RunRecord":
        names = {f.name for f in dataclasses.fields(cls)} - {"extra", "given"}
        known = {k: v for k, v in data.items() if k in names}
        record = cls(**{"run_id": "", **known})
        record.extra = {k: v for k, v in data.items() if k not in names}
        record.given = set(known) & set(cls.fields_set_later())
        return record

    @classmethod
    def load(cls, folder) -> "RunRecord":
        """The run.json of a run folder (an OutputError naming it when unreadable)."""
        path = Path(folder) / META_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise OutputError(f"cannot read {path}: {e}") from e
        if not isinstance(data, dict):
            raise OutputError(f"cannot read {path}: not a JSON object")
        return cls.from_dict(data)
