"""Figures: one module per paper figure, each reading only results CSVs (never re-running).

Importing this package registers every figure (kernelbench/figures/base.py); `render_all` reads
every results.csv under a folder (kernelbench.results.collect_results) and writes PNG + PDF. A
paper's figure selects its runs by their tags (the config's `tags:`, a column of every row:
kernelbench.results.tagged), never by experiment names; its name starts with the paper's id
(kernelbench.papers: `figure_prefix`). A data-free figure is drawn whenever the prefix selects it,
even when the results folder holds no rows.
"""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")       # figures are written to files, never shown: set before pyplot is imported

from kernelbench.results import collect_results

from . import dai2014, geng2019, glasmachers2019, gu2018, li2016, scaling  # noqa: F401
from .base import DATA_FREE, FIGURES, register_figure, save_figure

# (the figure modules are imported for what they register)
__all__ = ["FIGURES", "register_figure", "render_all", "save_figure"]


def render_all(results_dir, out_dir, *, prefix: str = "", formats=("png", "pdf"), palette: bool = False) -> list[Path]:
    """Render every registered figure (those whose name starts with `prefix`, e.g. "geng2019_")
    that has data under results_dir, and the selected data-free ones, in `formats` (`palette`: see
    save_figure); returns the files written."""
    df = collect_results(results_dir)
    written = []
    selected = [(name, make) for name, make in sorted(FIGURES.items())
                if name.startswith(prefix) and (name in DATA_FREE or not df.empty)]
    if not selected:
        return written
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, make in selected:
        written += save_figure(make(df), out / name, formats=formats, palette=palette)
    return written
