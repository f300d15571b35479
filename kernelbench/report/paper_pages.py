"""A paper as a reader meets it: its findings, then each of its figures drawn from the published runs
with the claims it answers beside it (a compact table: the claim, its verdict, the number that
decides it, a link to the detail), and one detail page with every claim's full measurement, the
published numbers next to ours and the runs. The same text serves the repository (REPRODUCTION.md
and results/published/<paper>/DETAILS.md, read on GitHub) and the documentation site; `Links` says
where the figures, the detail pages and the runs are for each."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from kernelbench.papers import ACROSS_SETS, Paper

from .findings import deciding_number, findings_paragraph
from .marks import marked
from .claims_text import described_test, table_cell
from .outcomes import ClaimVerdict

DETAILS_FILE = "DETAILS.md"         # a paper's detail page, in its published folder
FIGURES_DIR = "figures"             # the published figures, in the published folder (kernelbench publish)


@dataclass(frozen=True)
class Links:
    """Where a page finds the figures, the detail pages and the runs: `figures` and `details` are
    path prefixes (a detail page is f"{details}{paper}{details_suffix}"), `runs` the prefix of a run's
    folder from the detail page (None: the runs are not beside the page, they are named only);
    `report` the way back from a detail page (its "{paper}" replaced by the paper's id); `html`:
    verdicts as coloured spans (the site)."""
    figures: str
    details: str
    details_suffix: str
    report: str
    runs: str | None
    html: bool = False

    def details_page(self, paper: str, anchor: str = "") -> str:
        return f"{self.details}{paper}{self.details_suffix}" + (f"#{anchor}" if anchor else "")


def repository_links(published_dir, target) -> Links:
    """Links for files read in the repository (GitHub): relative to `target` (REPRODUCTION.md)."""
    base = Path(target).resolve().parent
    published = Path(published_dir).resolve()
    rel = Path(os.path.relpath(published, base)).as_posix()
    # every paper's folder lies one level below the published folder: any name gives the way back
    back = Path(os.path.relpath(Path(target).resolve(), published / "paper")).as_posix()
    return Links(figures=f"{rel}/{FIGURES_DIR}/", details=f"{rel}/", details_suffix=f"/{DETAILS_FILE}",
                 report=back, runs="")


# the site: docs/results/<paper>.md and <paper>-details.md, the figures copied to results/figures/
SITE_LINKS = Links(figures="figures/", details="", details_suffix="-details.md", report="{paper}.md", runs=None,
                   html=True)


def anchor(verdict: ClaimVerdict) -> str:
    """The claim's heading id on its detail page: its id, which GitHub and MkDocs both slug to itself."""
    return verdict.claim.id


def figure_key(paper: Paper, name: str) -> str:
    """"fig1abc" of "li2016_fig1abc_accuracy_vs_time.png": which of the paper's figures it redraws."""
    return name[len(paper.figure_prefix):].split("_", 1)[0]


def figure_caption(paper: Paper, name: str) -> str:
    rest = Path(name).stem[len(paper.figure_prefix):].split("_", 1)
    return (rest[1].replace("_", " ") if len(rest) > 1 else rest[0])


def figure_label(tag: str | None) -> str:
    """"Fig. 1", "Table 2", "Fig. 3 (grid)" of a claim's figure tag."""
    if tag is None:
        return "Claims without a figure of their own"
    found = re.fullmatch(r"(fig|table)(\d+)(\w*)", tag)
    if not found:
        return tag
    kind, number, rest = found.groups()
    return f"{'Fig.' if kind == 'fig' else 'Table'} {number}" + (f" ({rest})" if rest else "")


def claim_groups(paper: Paper, verdicts: list[ClaimVerdict], figures: list[str]) -> list[tuple]:
    """[(heading, figure files, verdicts)]: the claims by the figure they read (their `figure` tag),
    each with the drawn figures that redraw it (the longest tag a figure's key starts with), the
    claims without a tag after them, then the figures no claim reads."""
    tags = list(dict.fromkeys(v.claim.figure for v in verdicts if v.claim.figure))
    drawn: dict[str | None, list[str]] = {}
    for name in figures:
        key = figure_key(paper, name)
        matching = [t for t in tags if key.startswith(t) and not key[len(t):][:1].isdigit()]
        drawn.setdefault(max(matching, key=len) if matching else "", []).append(name)
    groups = [(figure_label(t), drawn.get(t, []), [v for v in verdicts if v.claim.figure == t]) for t in tags]
    untagged = [v for v in verdicts if not v.claim.figure]
    if untagged:
        groups.append((figure_label(None), [], untagged))
    if drawn.get(""):
        groups.append(("Further figures", drawn[""], []))
    return groups


def compact_claims_table(paper: Paper, verdicts: list[ClaimVerdict], links: Links) -> list[str]:
    """Claim (where and words, linked to its detail), verdict (marked), the number that decides it."""
    lines = ["| claim | verdict | deciding number |", "|---|---|---|"]
    for v in verdicts:
        claim = f"[{table_cell(v.claim.where)}]({links.details_page(paper.id, anchor(v))}) " \
                f"{table_cell(_quote(v.claim.readable))}"
        lines.append(f"| {claim} | {marked(v.verdict, html_class=links.html)} | {table_cell(deciding_number(v))} |")
    return lines


def _quote(quote: str) -> str:
    # whole: a quote is one sentence or part of one, and a cut could drop its point
    return f"“{' '.join(quote.split())}”"


def paper_section(paper: Paper, verdicts: list[ClaimVerdict], figures: list[str], links: Links, *,
                  level: int = 2) -> list[str]:
    """A paper's findings, then per figure the figure and the claims it answers. On the site the
    claims tables sit in a box its stylesheet lays out (a table on a wide screen, a card per claim on
    a phone: docs/stylesheets/report.css)."""
    head = "#" * level
    n = len(paper.without_row)
    unrowed = (f", the {n} other sentence{'' if n == 1 else 's'} that state{'s' if n == 1 else ''} a finding "
               f"and why {'it has' if n == 1 else 'each has'} no row") if n else ""
    lines = [f"{head} {paper.name}", "", findings_paragraph(verdicts), "",
             f"Every claim's measurement per set, the paper's printed numbers next to ours{unrowed} and the runs: "
             f"[the detail page]({links.details_page(paper.id)}).", ""]
    for heading, names, group in claim_groups(paper, verdicts, figures):
        lines += [f"{head}# {heading}", ""]
        for name in names:
            lines += [f"![{figure_caption(paper, name)} ({paper.name})]({links.figures}{name})", ""]
        if group:
            table = compact_claims_table(paper, group, links)
            lines += [*(['<div class="claims" markdown>', "", *table, "", "</div>"] if links.html else table), ""]
    return lines


def claim_detail(verdict: ClaimVerdict, links: Links) -> list[str]:
    """One claim on the detail page: its full words, test, verdict, and each set's measurement with
    the runs it was read from."""
    claim = verdict.claim
    lines = [f"### {anchor(verdict)}", "",
             f"{table_cell(claim.where)} ({claim.locator}): “{claim.readable}”", "",
             f"- verdict: **{marked(verdict.verdict, html_class=links.html)}** ({verdict.tested} sets tested)"]
    if claim.test is not None:
        lines.append(f"- test: {described_test(claim)}")
    if not verdict.sets or claim.test.kind in ACROSS_SETS:
        lines.append(f"- measurement: {' '.join(verdict.measurement.split())}")
    else:
        lines += [f"- {s.dataset} ({s.outcome}): {' '.join(s.text.split())}" for s in verdict.sets]
        if verdict.decision:                    # after the sets' measurements: how they add up
            lines.append(f"- in all: {' '.join(verdict.decision.split())}")
    runs = verdict.runs or tuple(sorted({r for s in verdict.sets for r in s.runs}))
    if runs:
        lines.append("- runs: " + ", ".join(_run(r, links) for r in runs))
    return [*lines, ""]


def _run(run_id: str, links: Links) -> str:
    return f"[{run_id}]({links.runs}{run_id}/)" if links.runs is not None else f"`{run_id}`"
