"""Figures: one module per paper figure, each reading only results CSVs (never re-running).

A figure registers a function `(results: DataFrame) -> matplotlib Figure | None` (None when its
data is absent); `render_all` reads every results.csv under a folder (kernelbench.results.
collect_results) and writes PNG + PDF. A paper's figure selects its runs by their tags (the config's
`tags:`, a column of every row: kernelbench.results.tagged), never by experiment names. A figure
computed from no results at all (e.g. bsgd_surfaces: Glasmachers & Qaadan Fig. 2, from the merging
tables) registers with `needs_results=False`: it is drawn whenever the prefix selects it, even when
the results folder holds no rows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from kernelbench.results import collect_results

__all__ = ["FIGURES", "register_figure", "collect_results", "render_all"]

FIGURES: dict[str, Callable] = {}
DATA_FREE: set[str] = set()     # figures drawn without results (register_figure(needs_results=False))


def register_figure(name: str, *, needs_results: bool = True):
    def decorate(fn):
        FIGURES[name] = fn
        if not needs_results:
            DATA_FREE.add(name)
        return fn
    return decorate


def render_all(results_dir, out_dir, *, prefix: str = "") -> list[Path]:
    """Render every registered figure (those whose name starts with `prefix`, e.g. "geng2019_")
    that has data under results_dir, and the selected data-free ones; returns the files written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import kernelbench.figures
    from kernelbench.registry import import_submodules

    import_submodules(kernelbench.figures)   # each figure module registers its figures

    df = collect_results(results_dir)
    written = []
    selected = [(name, make) for name, make in sorted(FIGURES.items())
                if name.startswith(prefix) and (name in DATA_FREE or not df.empty)]
    if not selected:
        return written
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, make in selected:
        fig = make(df)
        if fig is None:
            continue
        for ext in ("png", "pdf"):
            path = out / f"{name}.{ext}"
            fig.savefig(path, dpi=120, bbox_inches="tight")
            written.append(path)
        plt.close(fig)
    return written
