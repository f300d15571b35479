"""What every figure module shares: the figure registry, one style per algorithm, and saving.

A figure registers a function `(results: DataFrame) -> matplotlib Figure | None` (None when its
data is absent). A figure computed from no results at all (e.g. glasmachers2019.merge_surfaces: Glasmachers &
Qaadan Fig. 2, from the merging tables) registers with `needs_results=False`.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Callable

import json
import math
import re

import matplotlib.pyplot as plt  # heavy: only where a figure is drawn
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

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


def log_scale(ax, which: str) -> None:
    """A log axis labelled in plain numbers (0.05, 0.1, 0.2, 0.5; 2k, 50k, 1M): on a span of a decade
    or two the default labels crowd the minor ticks into each other or label none. Beyond two
    decades the decades only; within one, a few evenly spaced ticks."""
    ax.set_xscale("log") if which == "x" else ax.set_yscale("log")
    axis = ax.xaxis if which == "x" else ax.yaxis
    low, high = sorted(ax.get_xlim() if which == "x" else ax.get_ylim())
    decades = math.log10(high / low) if low > 0 else 0.0
    axis.set_major_locator(MaxNLocator(4) if decades < 0.6 else
                           LogLocator(base=10, subs=(1.0,) if decades > 2 else (1.0, 2.0, 5.0), numticks=10))
    axis.set_major_formatter(FuncFormatter(lambda value, _: _plain(value)))
    axis.set_minor_formatter(NullFormatter())


def _plain(value: float) -> str:
    """A tick's number, short: 0.05, 2, 5k, 20k, 1M."""
    for size, suffix in ((1e6, "M"), (1e3, "k")):
        if abs(value) >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


def panel_grid(count: int, width: float, height: float, *, columns: int = 4):
    """(figure, its `count` panels in reading order): rows of at most `columns` panels of `width` ×
    `height` inches, so that many panels stay legible at a page's width; spare cells hidden."""
    cols = min(count, columns)
    rows = -(-count // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[count:]:
        ax.set_visible(False)
    return fig, flat[:count]


_COUNTED = re.compile(r"(.*) \((\d+) trials?\)")


def with_trials(name: str, *counts: int) -> str:
    """A legend label with the trials its line averages, "dsg (3 trials)"; several counts (panels that
    counted differently) as their range, "dsg (3–10 trials)"; no count: the name alone."""
    if not counts:
        return name
    low, high = min(counts), max(counts)
    if low == high:
        return f"{name} ({low} trial{'s' if low > 1 else ''})"
    return f"{name} ({low}–{high} trials)"


def legend_below(fig, axes, *, columns: int = 4) -> None:
    """One legend for all the panels, below them, where it covers no data; the panels laid out above
    it. Each label once (a method absent from the first panel still gets its entry); a method whose
    panels counted different trials gets one entry with their range, "dsg (3–10 trials)"."""
    handles, labels, counts = [], [], {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            counted = _COUNTED.fullmatch(label)
            name = counted.group(1) if counted else label
            if counted:
                counts.setdefault(name, set()).add(int(counted.group(2)))
            if name not in labels:
                handles.append(handle)
                labels.append(name)
    labels = [with_trials(name, *counts.get(name, ())) for name in labels]
    if not labels:
        fig.tight_layout()
        return
    rows = -(-len(labels) // columns)
    below = (0.25 + 0.2 * rows) / fig.get_figheight()          # the legend's height, as a fraction
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), columns), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout(rect=(0, below, 1, 1))


def stand_in_sets(paper: str) -> set:
    """The sets the paper's claims run in place of the paper's own data (each claim's `stand_in`)."""
    return {d for c in get_paper(paper).claims for d in c.stand_in}


def panel_title(paper: str, dataset: str, title: str | None = None, rows=None) -> str:
    """A panel's title: `title` (or the set's name), with a stand-in named as one: a set the paper's
    claims run in place of its data, or a synthetic replica that `rows` (the panel's) were read
    from; a title that already says so is kept."""
    said = title is not None and any(word in title.lower() for word in ("stand-in", "subset", "replica", " not "))
    title = title or dataset
    replica = rows is not None and "replica" in rows and (rows["replica"].fillna("").astype(str) != "").any()
    if replica and not said:
        return f"{title}\n(synthetic replica: stand-in data)"
    if dataset in stand_in_sets(paper) and not said:
        return f"{title} (stand-in data)"
    return title


def configurations(rows) -> list:
    """[(label suffix, rows)]: one algorithm's rows by configuration (its parameters), so that runs of
    different settings are never averaged into one line; the suffix names what sets it apart ("" for
    a single configuration)."""
    if "params" not in rows or rows["params"].nunique() <= 1:
        return [("", rows)]
    settings = {text: json.loads(text) if text else {} for text in rows["params"].unique()}
    differing = sorted({k for p in settings.values() for k in p
                        if len({json.dumps(q.get(k)) for q in settings.values()}) > 1})
    return [(", " + ", ".join(f"{k}={settings[text].get(k)}" for k in differing), part)
            for text, part in rows.groupby("params", sort=True)]


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
