"""What every figure module shares: the figure registry, one style per algorithm, and saving.

A figure registers a function `(results: DataFrame) -> matplotlib Figure | None` (None when its
data is absent). A figure computed from no results at all (e.g. glasmachers2019.merge_surfaces: Glasmachers &
Qaadan Fig. 2, from the merging tables) registers with `needs_results=False`.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Callable

import matplotlib.pyplot as plt  # heavy: only where a figure is drawn

from kernelbench.papers import get_paper

FIGURES: dict[str, Callable] = {}
DATA_FREE: set[str] = set()     # figures drawn without results (register_figure(needs_results=False))

# (colour, marker) of each algorithm, the same in every figure
ALGORITHM_STYLE = {"dsg": ("C3", "o"), "udsg": ("C1", "v"), "cdsg": ("C6", "^"), "norma": ("C0", "s"),
                   "k-sdca": ("C9", "D"), "r-pegasos": ("C2", "<"), "n-pegasos": ("C8", ">"),
                   "r-sdca": ("C5", "p"), "n-sdca": ("C7", "h"), "svrg-rf": ("C4", "x"),
                   "libsvm": ("k", "D"), "libsvm-p": ("0.45", "P"), "asydsskl": ("C1", "o"),
                   "asygcd": ("C0", "s"), "falkon": ("0.25", "*")}
# Methods no paper ran, drawn beside the papers' methods: the algorithms a figure admits for them;
# a run is drawn as a peer (dotted, labelled as not in the paper) by its tag, tags.role: peer
PEERS = ("falkon",)


def is_peer(rows) -> bool:
    """Whether rows (one algorithm's) come from runs tagged role: peer."""
    return "role" in rows and bool((rows["role"] == "peer").any())


def peer_label(algorithm: str) -> str:
    return f"{algorithm}: NOT in the paper (peer)"


def published_values(paper: str, dataset: str, metric: str, *, figure: str | None = None) -> list:
    """The paper's published entries for one panel: its values of `metric` on `dataset` (of that
    figure or table when given) that a run here could be compared with (not those that need what
    kernelbench lacks), in the paper file's order."""
    return [e for e in get_paper(paper).published
            if e.dataset == dataset and e.metric == metric and not e.needs and figure in (None, e.figure)]


def draw_published(ax, entries, *, scale: float = 0.01, label: str = "paper") -> None:
    """Each published value as a thin dashed level on `ax` (percent × scale: our errors are
    fractions), in its algorithm's colour and labelled as the paper's, so that a reader sees ours
    against it without the report."""
    for e in entries:
        color, _ = ALGORITHM_STYLE.get(e.algorithm, ("0.5", "o"))
        ax.axhline(e.value * scale, color=color, ls=(0, (6, 3)), lw=0.9, alpha=0.8,
                   label=f"{label}: {e.algorithm} {e.value:g} %")


def register_figure(name: str, *, needs_results: bool = True):
    def decorate(fn):
        FIGURES[name] = fn
        if not needs_results:
            DATA_FREE.add(name)
        return fn
    return decorate


def save_figure(fig, stem: Path, formats=("png",), *, palette: bool = False) -> list[Path]:
    """Write `fig` as stem.png (and the other formats), close it; [] for no figure. `palette`: PNGs
    with 256 colours (a third of the bytes; line plots use few colours) for files that are committed."""
    if fig is None:
        return []
    written = []
    for ext in formats:
        path = Path(stem).with_name(f"{Path(stem).name}.{ext}")
        if ext == "png" and palette:
            from PIL import Image

            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=120, bbox_inches="tight")
            image = Image.open(buffer).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
            image.save(path, optimize=True)
        else:
            fig.savefig(path, dpi=120, bbox_inches="tight")
        written.append(path)
    plt.close(fig)
    return written


def png_bytes(fig, *, dpi: int = 110) -> bytes:
    """`fig` as PNG bytes (for a page that embeds it), closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    plt.close(fig)
    return buffer.getvalue()
