"""`kernelbench sweep`: configs run at every point of a grid of config values (experiment/sweep.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from kernelbench.cli.downloads import AssumeYes, dataset_files_first
from kernelbench.cli.options import Quiet, RunsOut
from kernelbench.errors import ConfigError


def sweep(
    configs: list[Path] = typer.Argument(..., help="experiment YAMLs, each swept over the same points"),
    over: Optional[list[str]] = typer.Option(None, "--over", help="KEY=V1,V2,... a dotted config key and "
                                             "its values (repeatable)"),
    out: RunsOut = Path("results"),
    processes: bool = typer.Option(False, "--processes", help="each point in its own process, run as "
                                                              "`kernelbench run` would"),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds",
                                                help="training budget of a point (stop.seconds)"),
    grace: float = typer.Option(180.0, "--grace", help="with --processes: wall-clock slack past --max-seconds"),
    max_memory_mb: Optional[float] = typer.Option(None, "--max-memory-mb", help="with --processes: address-space "
                                                  "limit of a point's process"),
    quiet: Quiet = False,
    resume: bool = typer.Option(False, "--resume", help="keep the points finished under --out (same config and "
                                                        "values), resume the unfinished ones, run the rest"),
    yes: AssumeYes = False,
):
    """Run configs at every point of a grid of config values: one ordinary run
    folder per point, each validated like `kernelbench run` with the point's values.

    --over KEY=V1,V2,... (repeatable) sweeps a dotted config key; one value
    is a plain override (--over tags.figure=fig2). The points are the product
    of the values, the last key fastest; each is named <name>-<key><value>
    and its run.json records `sweep: {key: value}`. For example:

      --over dataset.subsample=5000,10000,20000      time vs training size
      --over algorithm.params.threads=1,2            speed-up vs threads
      --over predict.n_test=1000,10000,50000         predict time vs test size
                                 (trains once a trial; one run folder, a row a trial and size)

    --processes: each point is its own process, run as `kernelbench run` runs it, so its
    peak memory (run.json) is its own; --max-memory-mb limits it. --max-seconds
    caps each point's training (stop.seconds) and, with --processes, kills a
    point at max-seconds + --grace. A point past a limit, or refused by the
    solver (an O(n^2) baseline past max_points: a "skipped" row), ends its
    line: the larger values of the last key are not run.
    """
    from kernelbench.experiment.plan import Plan, execute  # heavy: see app.py
    from kernelbench.experiment.sweep import Limits, parse_over, sweep_points

    points = parse_over(over)
    if not points:
        raise ConfigError("kernelbench sweep needs at least one --over KEY=V1,V2,...")
    if max_memory_mb and not processes:
        raise ConfigError("--max-memory-mb limits a point's own process: add --processes")
    # every point's data before the first point runs: a large download is confirmed (or refused,
    # exit 2) once, up front, not found missing by a point hours into the sweep
    for config in configs:
        for values in sweep_points(points):
            dataset_files_first(config, values, assume_yes=yes)
    plan = Plan(configs=tuple(configs), points=points, out_dir=out, processes=processes, resume=resume,
                limits=Limits(seconds=max_seconds, grace=grace, memory_mb=max_memory_mb))
    execute(plan, quiet=quiet, echo=typer.echo, confirm_downloads=yes)

