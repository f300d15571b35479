"""Figures: one module per paper figure, each reading only results CSVs (never re-running).

A figure registers a function `(results: DataFrame) -> matplotlib Figure | None` (None when its
data is absent); `render_all` reads every results.csv under a folder and writes PNG + PDF.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd

FIGURES: dict[str, Callable] = {}


def register_figure(name: str):
    def decorate(fn):
        FIGURES[name] = fn
        return fn
    return decorate


def collect_results(folder, *, include_smoke: bool = False) -> pd.DataFrame:
    """All rows of all results.csv files below `folder` (empty frame if none); smoke runs (a few
    iterations on a subsample, run.json "smoke": true) are left out unless asked for."""
    import json

    from kernelbench.results import read_results

    frames = []
    for path in sorted(Path(folder).rglob("results.csv")):
        try:
            smoke = json.loads((path.parent / "run.json").read_text()).get("smoke", False)
        except (OSError, ValueError):
            smoke = False
        if smoke and not include_smoke:
            continue
        frame = read_results(path.parent)
        if not frame.empty:
            frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def render_all(results_dir, out_dir) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import kernelbench.figures
    from kernelbench.registry import import_submodules

    import_submodules(kernelbench.figures)   # each figure module registers its figures

    df = collect_results(results_dir)
    written = []
    if df.empty:
        return written
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, make in sorted(FIGURES.items()):
        fig = make(df)
        if fig is None:
            continue
        for ext in ("png", "pdf"):
            path = out / f"{name}.{ext}"
            fig.savefig(path, dpi=120, bbox_inches="tight")
            written.append(path)
        plt.close(fig)
    return written
