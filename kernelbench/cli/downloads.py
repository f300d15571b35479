"""The data a command needs, fetched before the command loads anything heavy, and how the command
line confirms a large download: `--yes` (-y), else a question on a terminal, else no. Every command
that may download (run, grid, tune, sweep, bench) declares --yes as `AssumeYes` and fetches through
`dataset_files_first`, so the option and its meaning are the same everywhere."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from kernelbench.data.download import DEFAULT_CONFIRM_ABOVE, DownloadOffer
from kernelbench.data.fetch import config_files_first

YES_HELP = (f"download the data without asking, whatever its size (else a download above {DEFAULT_CONFIRM_ABOVE}, "
            "$KERNELBENCH_CONFIRM_ABOVE, is asked for on a terminal and refused without one)")
AssumeYes = Annotated[bool, typer.Option("--yes", "-y", help=YES_HELP)]


def confirm_download(assume_yes: bool):
    """The CLI's answer to a large download: --yes, else a question on a terminal, else no (the data
    layer then says how to confirm: --yes, or `kernelbench datasets fetch NAME`)."""
    def confirm(offer: DownloadOffer) -> bool:
        if assume_yes:
            return True
        if not (sys.stdin.isatty() and sys.stderr.isatty()):
            return False
        return typer.confirm(f"kernelbench: download {offer.describe()} into the cache dir?", default=False,
                             err=True)
    return confirm


def dataset_files_first(config: Path, overrides: dict | None = None, *, assume_yes: bool = False) -> None:
    """The config's registry files before the command loads anything heavy (data.fetch's
    config_files_first), a large download confirmed as the command line says."""
    config_files_first(config, overrides, confirm=confirm_download(assume_yes))
