"""A paper's result in words, written from its claims' verdicts alone: which conclusions stand,
which fall and on what number, and why the others cannot be tested here; and, per claim, the one
number that decides its verdict. Nothing here judges a claim (verdicts.py does): the verdicts are
read as they come, grouped by their outcome (marks.MARKS), so that a new outcome needs no code here."""
from __future__ import annotations

import re
from collections import Counter

from kernelbench.papers import ACROSS_SETS

from .marks import MARKS, mark_of, outcome_of
from .outcomes import ClaimVerdict

DECIDING_CHARS = 110     # the deciding number of a claim is clipped to about this many characters
UNTESTABLE = "not testable here"   # the outcome of a claim with no set tested: its findings say why
NAMED_CHARS = 70         # a named claim's deciding number, in the findings
LISTED = 3               # claims named per outcome in a paper's findings; the others are counted


def clipped(text: str, limit: int) -> str:
    """`text` on one line, cut at a word boundary before `limit` characters, with " …" when cut."""
    text = " ".join(str(text).split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " …"


def deciding_number(verdict: ClaimVerdict, limit: int = DECIDING_CHARS, *, counted: bool = True) -> str:
    """The measurement that decides the verdict: a failing claim's first failing set, a holding one's
    first holding set (with how many sets were tested, when `counted`), or why nothing was tested."""
    claim = verdict.claim
    if claim.test is None or not verdict.sets or claim.test.kind in ACROSS_SETS:
        return clipped(verdict.measurement, limit)
    # the paper's own sets decide; a stand-in only where the verdict is on stand-in data alone
    ordered = sorted(verdict.sets, key=lambda s: bool(s.stand_in))
    decisive = next((s for s in ordered if s.outcome == outcome_of(verdict.verdict)), verdict.sets[0])
    return clipped(f"{decisive.dataset}: {decisive.text}", limit) + (f" ({verdict.tested} sets tested)" if counted
                                                                     else "")


def short_claim(verdict: ClaimVerdict, limit: int = 60) -> str:
    """The claim as a reader recognises it: where the paper says it, and the start of its words."""
    return f"{verdict.claim.where} “{clipped(verdict.claim.readable, limit)}”"


def why_untested(verdict: ClaimVerdict) -> str:
    """The kind of reason a claim is not tested here: what the claim needs, or why its sets were not
    (no data here, no published run, not comparable, ...), in a few words."""
    if verdict.claim.needs:
        return "needs " + _first_clause(verdict.claim.needs)
    reasons = [s.outcome if s.outcome not in ("untested",) else _first_clause(s.text) for s in verdict.sets]
    return Counter(reasons).most_common(1)[0][0] if reasons else _first_clause(verdict.measurement)


def _first_clause(text: str) -> str:
    return re.split(r":| of | on | within |;|\(", " ".join(text.split()), maxsplit=1)[0].strip()


def _where_most(verdicts: list[ClaimVerdict], outcome: str) -> str:
    """", most often on susy (9 of 15)": the set where most of several claims meet their outcome (where
    a group of claims falls, the main reason is often one set)."""
    found = Counter(s.dataset for v in verdicts for s in v.sets if s.outcome == outcome)
    if outcome == "holds" or len(verdicts) < 2 or not found:
        return ""
    dataset, n = found.most_common(1)[0]
    return f", most often on {dataset} ({n} of {len(verdicts)})"


def _qualifiers(verdicts: list[ClaimVerdict]) -> str:
    """", 2 of them on stand-in data": the words verdicts add to their outcome, counted."""
    extra = Counter(v.verdict[len(outcome_of(v.verdict)):].strip() for v in verdicts)
    extra.pop("", None)
    return "".join(f", {n} of them {words}" for words, n in sorted(extra.items()))


def findings_paragraph(verdicts: list[ClaimVerdict]) -> str:
    """What the paper's result is here: how many claims could be tested, then one line per outcome
    with how many claims have it, the first few named (a failing one with the number that fails it),
    and the main reasons of those not testable here."""
    if not verdicts:
        return "The paper's file records no claim yet."
    by_outcome: dict[str, list[ClaimVerdict]] = {}
    for v in verdicts:
        by_outcome.setdefault(outcome_of(v.verdict), []).append(v)
    tested = len(verdicts) - len(by_outcome.get(UNTESTABLE, []))
    lines = [f"{tested} of the paper's {len(verdicts)} claims could be tested on the published runs.", ""]
    for outcome in [*MARKS, *(o for o in by_outcome if o not in MARKS)]:
        group = by_outcome.get(outcome, [])
        if not group:
            continue
        head = f"- **{mark_of(outcome).symbol} {mark_of(outcome).heading}** ({len(group)}{_qualifiers(group)})"
        if outcome == UNTESTABLE:
            reasons = Counter(why_untested(v) for v in group).most_common(3)
            lines.append(f"{head}, mainly: " + "; ".join(f"{why} ({n})" for why, n in reasons) + ".")
            continue
        # claims that share their words (one sentence tested against several methods) named once
        unique: dict[str, ClaimVerdict] = {}
        for v in group:
            unique.setdefault(short_claim(v), v)
        first = list(unique.items())[:LISTED]
        named = [text + (f" — {deciding_number(v, NAMED_CHARS, counted=False)}" if outcome != "holds" else "")
                 for text, v in first]
        rest = sum(short_claim(v) not in dict(first) for v in group)
        more = f"; and {rest} more" if rest else ""
        lines.append(f"{head}{_where_most(group, outcome)}: " + "; ".join(named) + more + ".")
    return "\n".join(lines)
