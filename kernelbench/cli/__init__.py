"""The `kernelbench` command: the only place that imports Typer. app.py holds the app and most
commands; datasets.py the `datasets` group; bench.py, demo.py and sweep.py one command each;
options.py the options several commands share."""
from .app import app, main

__all__ = ["app", "main"]
