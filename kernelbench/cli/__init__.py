"""The `kernelbench` command: the only place that imports Typer (app.py: run, grid, tune, reproduce,
report, figures, algorithms, config; datasets.py: the `datasets` group; bench.py: `bench`)."""
from .app import app, main

__all__ = ["app", "main"]
