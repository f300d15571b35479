"""The run folder of an experiment: a new one, or the unfinished one to resume, and what Ctrl-C
leaves the user (what was kept, the command that resumes it)."""
from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from kernelbench.config import config_to_dict
from kernelbench.errors import KernelbenchError
from kernelbench.results import Run, cell_key, read_results


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a run; the message says what results.csv kept and how to resume."""


class open_run:
    """A new run folder, or with resume the newest one of the same experiment and config
    (its partial cells dropped). Yields (run, keys of finished cells); marks failures, and turns
    Ctrl-C into `Interrupted` (what was kept, how to resume)."""

    def __init__(self, cfg, out_dir, command, resume, total_cells):
        self.cfg, self.out_dir, self.command, self.resume = cfg, out_dir, command, resume
        self.total_cells = total_cells

    def __enter__(self):
        config = config_to_dict(self.cfg)
        previous = Run.latest(self.out_dir, self.cfg.name, config) if self.resume else None
        if previous is not None:
            self.run = previous
            done = previous.resume(tags=self.cfg.tags.as_dict())
            print(f"kernelbench: resuming {previous.path} ({len(done)} finished cells kept)",
                  file=sys.stderr)
        else:
            if self.resume:
                print(f"kernelbench: nothing to resume under {self.out_dir} for {self.cfg.name!r} "
                      "with this config; starting a new run", file=sys.stderr)
            self.run = Run.create(self.out_dir, self.cfg.name, config, command=self.command,
                                  tags=self.cfg.tags.as_dict())
            done = set()
        self.run.__enter__()
        return self.run, done

    def __exit__(self, exc_type, exc, tb):
        self.run.__exit__(exc_type, exc, tb)          # status finished / failed / interrupted
        if exc_type is not None and issubclass(exc_type, KeyboardInterrupt) \
                and not issubclass(exc_type, Interrupted):
            raise Interrupted(_interrupted_message(self.run, self.total_cells, self.command)) from exc
        return False


def _interrupted_message(run: Run, total_cells: int, command) -> str:
    """Lines for the user after Ctrl-C: rows and finished cells in results.csv, and the command
    that finishes the run (--resume drops the rows of unfinished cells and redoes those)."""
    try:
        df = read_results(run.path)
    except KernelbenchError:
        kept = f"{run.results_path} holds the rows written so far"
    else:
        finished = run.finished_cells(df)
        partial = sum(cell_key(r.params, r.trial, r.fold, r.budget) not in finished for r in df.itertuples())
        kept = (f"{run.results_path} keeps {len(df)} rows; {len(finished)} of {total_cells} cells "
                "finished")
        if partial:
            kept += f" (--resume drops the {partial} rows of the unfinished cell and redoes it)"
    return f"interrupted: {kept}\nto resume: {resume_command(command)}"


def resume_command(command) -> str:
    """The user's command line (sys.argv) with --resume (not for `reproduce`, which resumes what
    it finds unfinished), shell-quoted, runnable from the same folder: `python -m kernelbench.cli`
    when it ran as a module, the console script otherwise."""
    _, *args = list(command or ["kernelbench"])
    if "--resume" not in args and "reproduce" not in args[:1]:    # reproduce resumes by itself
        args.append("--resume")
    return shlex.join(program_words(command) + args)


def program_words(command) -> list[str]:
    """How the user started kernelbench (`command`: sys.argv), for a command line to print:
    `python -m kernelbench.cli` when it ran as a module (sys.argv[0] is then the package's
    cli/__main__.py, or "-m" / "-c" while Python sets it up), the console script otherwise."""
    program = list(command or ["kernelbench"])[0]
    if Path(program).parts[-2:] == ("cli", "__main__.py") or program in ("-c", "-m"):
        return [_runnable(sys.executable), "-m", "kernelbench.cli"]
    return [_runnable(program)]


def _runnable(program: str) -> str:
    """A program path as short as it can be written: its name where PATH finds this very file
    (symlinks not followed: a venv's python is not the system's), else relative to this folder."""
    path = os.path.abspath(program)
    found = shutil.which(os.path.basename(program))
    if found and os.path.abspath(found) == path:
        return os.path.basename(program)
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") else path
