"""The data a command needs, fetched before the command loads anything heavy, and how the command
line confirms a large download: `--yes` (-y), else a question on a terminal, else no. Every command
that may download (run, grid, tune, sweep, bench) declares --yes as `AssumeYes` and fetches through
`dataset_files_first`, so the option and its meaning are the same everywhere."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
import yaml

from kernelbench.data.download import DEFAULT_CONFIRM_ABOVE, DownloadOffer
from kernelbench.data.fetch import fetch_file, resolve_local
from kernelbench.data.registry import get_spec

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
    """A registry dataset the config needs but nobody has (no cache or mirror copy, no network)
    fails here, in well under a second — before the algorithm modules (scikit-learn, the compiled
    cores) are imported to validate the rest of the config. The command line's dataset overrides
    (--set dataset.name=...) say which data that is. Anything unusual is left to load_config."""
    try:
        dataset = dict(yaml.safe_load(Path(config).read_text())["dataset"])
        for key, value in (overrides or {}).items():
            if key == "dataset" and isinstance(value, dict):
                dataset = dict(value)
            elif key.startswith("dataset."):
                dataset[key.removeprefix("dataset.")] = value
        spec = get_spec(dataset["name"])
    except Exception:       # unreadable, invalid or unknown: load_config says what is wrong
        return
    test = dataset.get("test", "official")
    roles = ("train", "test") if test == "official" else ("train",)
    for role in roles:
        if role in spec.files and resolve_local(spec.files[role]) is None:
            # downloads (a large file once confirmed), or raises the datasets message
            fetch_file(spec, spec.files[role], confirm=confirm_download(assume_yes))
