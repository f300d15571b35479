"""The papers kernelbench reproduces: one object per paper, its published values and claims as data.

Each paper is one YAML file in this folder, named by the paper's id (first author and year); its keys
are declared once (kernelbench/schema) and the documentation site's reference of paper files is
generated from the declarations (`reference_markdown`):

    schema.py   the paper, its citation, sweeps and published numbers (the dataclasses `Paper`,
                `Citation`, `Sweep`, `Published`)
    claims.py   its claims: `Claim`, the compared runs (`Selector`) and the test (`ClaimTest`)
    kinds.py    the kinds of value only paper files take (a measure's name, a tolerance, ...)
    quotes.py   how a claim's quote is matched with the paper's text
    load.py     reading one file: the declarations, then the rules that tie keys together

The files are read on first use (`PAPERS`, `get_paper`), not at import; `paper_ids()` only lists
them. This package imports nothing from kernelbench but kernelbench.errors, kernelbench.measures and
kernelbench.schema: the config layer imports it to check `tags.paper`.
"""
from __future__ import annotations

import functools
from pathlib import Path

from kernelbench.errors import ConfigError
from kernelbench.papers.claims import ACROSS_SETS, CLAIM_TESTS, Claim, ClaimTest, Selector, SentenceWithoutRow
from kernelbench.papers.load import load_paper
from kernelbench.papers.quotes import SENTENCE_END, normalised, reads_as_quote, sentence_number
from kernelbench.papers.schema import Citation, Paper, Published, Sweep, reference_markdown

__all__ = ["ACROSS_SETS", "CLAIM_TESTS", "ORDER", "PAPERS", "Citation", "Claim", "ClaimTest", "Paper", "Published", "Selector",
           "SENTENCE_END", "SentenceWithoutRow", "Sweep", "get_paper", "load_paper", "load_papers", "normalised", "paper_ids", "reads_as_quote",
           "reference_markdown", "sentence_number"]

FOLDER = Path(__file__).parent
# The order papers are listed in (that of the index of ../shared/papers); a paper file whose id is
# not named here comes after these, alphabetically.
ORDER = ("geng2019", "dai2014", "gu2018", "li2016", "glasmachers2019")


def paper_ids() -> tuple[str, ...]:
    """The ids of the papers (their files' names), in ORDER; reads no file."""
    found = {path.stem for path in FOLDER.glob("*.yaml")}
    return tuple(p for p in ORDER if p in found) + tuple(sorted(found - set(ORDER)))


def get_paper(paper_id: str) -> Paper:
    """The paper with this id; a ConfigError naming the known ones for any other."""
    papers = load_papers()
    if paper_id not in papers:
        raise ConfigError(f"unknown paper {paper_id!r}; the papers are {', '.join(papers)}")
    return papers[paper_id]


@functools.cache
def load_papers() -> dict[str, Paper]:
    """Every paper file of this folder, read and checked once, by id in `paper_ids()` order."""
    return {paper_id: load_paper(FOLDER / f"{paper_id}.yaml") for paper_id in paper_ids()}


def __getattr__(name):
    if name == "PAPERS":                # read on first use, not at import
        return load_papers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
