"""What to run, as one value, and the one function that runs it.

Every way of starting experiments -- `kernelbench run`, `grid`, `tune`, `sweep`, `reproduce`, `bench`,
a sweep point's own process (point.py) and kernelbench.api.run -- states what it wants as a `Plan` and hands
it to `execute`, which validates the configs with the plan's overrides and starts the matching loop:
run_experiment, grid_search or tune for one run, run_sweep for a sweep. How the result is shown (a
summary, a progress bar, the command line recorded in run.json) stays with the caller.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kernelbench.config import ExperimentConfig, config_from_dict, load_config
from kernelbench.data import UserArrays
from kernelbench.errors import ConfigError

from .cells import Execution
from .grid import grid_search
from .run import run_experiment
from .sweep import Limits, run_sweep
from .tuning import tune

MODES = ("run", "grid", "tune")


@dataclass(frozen=True)
class Plan:
    """configs: config files, one config as a dict (kernelbench.api.run), or one validated config
    (a benchmark's, edited after validation); overrides: dotted keys
    applied to every config; points: a sweep's {dotted key: [values]} (the last key fastest), empty
    for one run; mode: the kind of one run (a sweep runs every point as `run`); deadline: a
    time.monotonic() value past which a sweep starts no point; processes: each sweep point its own
    process (held to `limits`); resume: finish the unfinished run (a sweep: keep the finished points);
    smoke: a few iterations on a small subsample (run only); arrays: the data handed over in Python."""
    configs: tuple
    overrides: dict = field(default_factory=dict)
    points: dict = field(default_factory=dict)
    mode: str = "run"
    out_dir: Path = Path("results")
    execution: Execution = field(default_factory=Execution)
    limits: Limits = Limits()
    deadline: float | None = None
    processes: bool = False
    resume: bool = False
    smoke: bool = False
    arrays: UserArrays | None = None


def execute(plan: Plan, *, command=None, quiet: bool = False, echo=print, confirm_downloads: bool = False):
    """Run the plan: a sweep returns its points (sweep.Point), one run its run folder. `command`:
    the command line recorded in run.json; `echo`: where a sweep writes a line a point;
    `confirm_downloads`: a sweep point's own process may download large data (the command line said
    yes; the child, with no terminal, cannot ask)."""
    if plan.mode not in MODES:
        raise ValueError(f"plan mode {plan.mode!r}: expected one of {', '.join(MODES)}")
    if plan.points:
        # a sweep's fixed values are points of one value: recorded with the swept ones in run.json
        over = {**{key: [value] for key, value in plan.overrides.items()}, **plan.points}
        return run_sweep(plan.configs, over, out_dir=plan.out_dir, processes=plan.processes, limits=plan.limits,
                         quiet=quiet, command=command, echo=echo, resume=plan.resume, deadline=plan.deadline,
                         confirm_downloads=confirm_downloads)
    if len(plan.configs) != 1:
        raise ValueError(f"one run takes one config, got {len(plan.configs)}: give points for a sweep")
    cfg = plan_config(plan)
    if plan.mode == "run":
        if cfg.then and not plan.smoke:     # run scores every grid cell on the test part: it has no
                                            # stages (a smoke run checks the first cell only)
            raise ConfigError(f"{plan.configs[0]}: then: is a second model-selection stage (cross-validated "
                              f"after grid:) for `kernelbench grid`, which `run` does not do; use "
                              f"`kernelbench grid {plan.configs[0]}`, or remove then:")
        return run_experiment(cfg, out_dir=plan.out_dir, smoke=plan.smoke, quiet=quiet, command=command,
                              resume=plan.resume, execution=plan.execution, arrays=plan.arrays)
    start = grid_search if plan.mode == "grid" else tune
    return start(cfg, out_dir=plan.out_dir, quiet=quiet, command=command, resume=plan.resume,
                 execution=plan.execution)


def plan_config(plan: Plan) -> ExperimentConfig:
    """The plan's one config, validated with its overrides (and, with arrays, as their config)."""
    config = plan.configs[0]
    if isinstance(config, ExperimentConfig):
        # a config validated and then edited by its caller (a benchmark drops its grid and stages):
        # run as it is, since overrides would re-validate it from its file and undo the edit
        if plan.overrides or plan.arrays is not None:
            raise ValueError("a validated config runs as it is: give its file or dict for overrides or arrays")
        return config
    arrays = None if plan.arrays is None else "train" if plan.arrays.X_test is None else "train+test"
    if isinstance(config, (str, Path)):
        return load_config(config, overrides=plan.overrides, arrays=arrays)
    if isinstance(config, dict):
        return config_from_dict(config, overrides=plan.overrides, arrays=arrays)
    raise ConfigError(f"config: expected a YAML file's path or a dict, got a {type(config).__name__}")
