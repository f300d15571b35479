"""A paper's claims in words: the claim's quote and where it is, its test as a sentence, and the
markdown table of claims with their verdicts (kernelbench.report.verdicts computes them) that
`kernelbench report` prints for local runs."""
from __future__ import annotations

from kernelbench.papers import Claim

from .numbers import build_numbers, report_papers, results_frame
from .samples import HORIZON
from .outcomes import ClaimVerdict
from .verdicts import judge_paper


def table_cell(text: str) -> str:
    """Text fit for a markdown table cell: one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def quoted(claim: Claim) -> str:
    """The claim's quote as a reader reads it, whole (a quote is one sentence or part of one, so a cut
    could drop its point), with where it is: "“…” (§6.2, sentence 3)"."""
    return f"“{claim.readable}” ({claim.locator})"


def described_test(claim: Claim) -> str:
    """A claim's test as a sentence, e.g. "test_error of cdsg lower than dsg, udsg; on all sets"."""
    test = claim.test
    if test is None:
        return ""
    others = ", ".join(map(str, test.b))
    limit = test.at.partition(":")[2]
    try:
        at = "" if test.at == "final" else f", within {float(limit):g} s"
    except ValueError:
        at = f", within {limit}'s mean training time"
    if test.at.startswith("horizon:"):
        points = ", ".join(f"{f:g}" for f in HORIZON)
        at = f", at {'every one' if test.when == 'all' else 'most'} of {points} × {at.removeprefix(', within ')}"
    per = ", at every training size" if test.per else ""
    if test.kind == "order":
        words = f"{test.metric} of {test.a} {test.direction} than {others}{at}{per}"
    elif test.kind == "similar":
        words = f"{test.metric} of {test.a} within {test.margin:g} of {others}{at}{per} (margin: {test.margin_why})"
    elif test.kind == "ratio":
        words = f"{test.metric} of {others} at least {test.at_least:g}× that of {test.a}{per}"
    elif test.kind == "speedup":
        words = (f"{test.metric} of {test.a}: speed-up from {test.threads[0]} to k threads ≥ {test.at_least:g}·k "
                 f"for k = {', '.join(map(str, test.threads[1:]))}")
    elif test.kind == "extreme":                # across the sets: no quantifier
        return (f"{test.metric} of {test.a} {'largest' if test.direction == 'higher' else 'smallest'} on "
                f"{test.on_set} among the sets")
    elif test.kind == "correlation":
        return (f"Spearman's rank correlation over the sets of {test.metric} of {test.a} with {test.against} ≥ "
                f"{test.value:g} ({test.value_why})")
    elif test.kind == "no_worse":
        margin = "one standard deviation of the trials" if test.margin == "sd" else f"{test.margin:g}"
        better = "higher" if test.direction == "higher" else "lower"
        words = (f"{test.metric} of {test.a} ({better} is better) no worse than {others} by more than {margin}"
                 f"{at}{per} (margin: {test.margin_why})")
    elif test.kind == "time_to":
        within = f" within {test.margin:g} (margin: {test.margin_why})" if test.margin else ""
        bound = (f"at least {test.at_least:g}× shorter than theirs" if test.value is None
                 else f"shorter than {test.value:g} s ({test.value_why})")
        words = f"seconds {test.a} needs to reach the final {test.metric} of {others}{within} {bound}"
    elif test.kind == "bound":
        than = (f"{test.value:g} ({test.value_why})" if test.than is None
                else f"{test.than} of the same runs")
        words = f"{test.metric} of {test.a} {test.direction} than {than}{at}{per}"
    else:
        words = f"{test.metric} of {test.a} grows with n_train at a log-log slope ≤ {test.at_most:g}"
    if test.at_least_why:
        words += f" (factor: {test.at_least_why})"
    if claim.scale_rows:
        words += f", on runs of ≥ {claim.scale_rows:,} training rows"
    return f"{words}; on {claim.quantifier} sets"


def claims_table(verdicts: list[ClaimVerdict]) -> list[str]:
    """The markdown table of a paper's claims: where, quote, test, sets tested, verdict,
    measurement, runs."""
    lines = ["| where | claim | test | sets tested | verdict | measurement | runs |", "|---|---|---|---|---|---|---|"]
    for v in verdicts:
        lines.append(f"| {table_cell(v.claim.where)} | {table_cell(quoted(v.claim))} | "
                     f"{table_cell(described_test(v.claim))} | {v.tested} | {v.verdict} | {table_cell(v.measurement)} | "
                     f"{', '.join(v.runs)} |")
    return lines


def build_report(results_dirs, *, paper: str | None = None) -> tuple[str, list[dict]]:
    """(markdown, numbers' table rows): every published number (of one paper: its id) next to
    ours (build_numbers), then each paper's claims with their verdicts on the same runs."""
    df = results_frame(results_dirs)
    markdown, table = build_numbers(results_dirs, paper=paper, df=df)
    lines = []
    for p in report_papers(paper):
        if p.claims:
            lines += [f"## {p.name}: claims", "", *claims_table(judge_paper(p, df, runs_are="local")), ""]
    return markdown + ("\n" + "\n".join(lines) if lines else ""), table
