"""--help from the commands' docstrings, as a terminal shows it best: Typer joins the lines of a
docstring's first paragraph but keeps the line breaks of the others, which then end wherever the
source wrapped them; here each paragraph becomes one line that the terminal wraps at its width,
and the lines indented below a paragraph (examples) stay as they are."""
from __future__ import annotations

import inspect

import typer


def unwrapped(doc: str) -> str:
    """The docstring with each paragraph's lines joined, except the indented ones (kept as written)."""
    paragraphs = []
    for paragraph in inspect.cleandoc(doc).split("\n\n"):
        lines = paragraph.splitlines()
        indented = any(line.startswith(" ") for line in lines)
        paragraphs.append(paragraph if indented else " ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


def unwrap_help(*apps: typer.Typer) -> None:
    """Give every command of `apps` that takes its help from its docstring the unwrapped text."""
    for app in apps:
        for command in app.registered_commands:
            if command.help is None and command.callback is not None and command.callback.__doc__:
                command.help = unwrapped(command.callback.__doc__)
