"""The command-line reference as Markdown, read off the Typer app itself by Typer's own doc
generator (what `typer kernelbench.cli.app utils docs` prints): every command and group, its usage,
arguments and options as `--help` gives them. The documentation site renders it at build time, so
it cannot fall behind the code."""
from __future__ import annotations

import typer
from typer.cli import get_docs_for_click

from kernelbench.cli.app import app

TITLE = "Command-line reference"


def cli_markdown() -> str:
    """Every command of `kernelbench`: a section each, `kernelbench` first, then its commands depth
    first as `--help` lists them."""
    command = typer.main.get_command(app)
    context = typer.Context(command, info_name="kernelbench")
    return get_docs_for_click(obj=command, ctx=context, name="kernelbench", title=TITLE).strip() + "\n"

