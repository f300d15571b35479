"""The options several commands take, each declared once with its flags and help: a command names
the type (`quiet: Quiet = False`) and gives the default. An option whose meaning differs from one
command to another (`--out` of `figures` or `publish`, say) stays with its command. Light on
purpose: `kernelbench --help` and `datasets list` import it."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from kernelbench.errors import ConfigError

# where the commands that run configs write their run folders (and --resume looks for them)
RunsOut = Annotated[Path, typer.Option("--out", help="parent folder of the run folders")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")]
ConfigsFolder = Annotated[Path, typer.Option("--configs", help="folder of the papers' configs")]

# a config overridden from the command line
SeedOverride = Annotated[Optional[int], typer.Option(help="override the config's seed")]
ThreadsOverride = Annotated[Optional[int], typer.Option(help="override algorithm.params.threads (0 = all cores)")]
ConfigSets = Annotated[Optional[list[str]], typer.Option(
    "--set", help="override any config field, KEY=VALUE with a dotted key, e.g. --set stop.passes=1 or "
                  "--set dataset.subsample=100000 (repeatable)")]
Resume = Annotated[bool, typer.Option("--resume", help="finish the newest unfinished run of this config "
                                                       "under --out")]

# where an experiment's cells run
Jobs = Annotated[int, typer.Option("--jobs", "-j", help="cells in parallel processes (a cell: one setting "
                                                        "trained on one split); 0 = one per core")]
Scheduler = Annotated[Optional[str], typer.Option("--scheduler", help="run cells on a Dask cluster, "
                                                                      "e.g. tcp://host:8786")]


def checked_folds(cv: int | None) -> int | None:
    """--cv as given, once it names at least two folds."""
    if cv is not None and cv < 2:
        raise ConfigError(f"--cv must be at least 2 folds, got {cv}")
    return cv
