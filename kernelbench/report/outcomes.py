"""What testing a claim gives: a set's outcome, a claim's verdict, and the two rules that combine
outcomes (the worst of a set's comparisons; a quantifier over sets or time points). verdicts.py
decides them; the report's pages (findings.py, paper_pages.py, claims_text.py) read them."""
from __future__ import annotations

from dataclasses import dataclass

from kernelbench.papers import Claim

from .numbers import STAND_IN

# The outcomes of a set, then of a claim: tested ones (holds, does not hold, within noise), untested
# or not comparable (left out of the count)
HOLDS, FAILS, NOISE, UNTESTED, NOT_COMPARABLE = "holds", "does not hold", "within noise", "untested", "not comparable"
TESTED = (HOLDS, FAILS, NOISE)
CLAIM_VERDICTS = (*TESTED, *(o + STAND_IN for o in TESTED), "not testable here")


@dataclass(frozen=True)
class SetOutcome:
    dataset: str
    outcome: str                # HOLDS, FAILS, NOISE, UNTESTED or NOT_COMPARABLE
    text: str                   # the measurement in words, or what is missing
    runs: tuple[str, ...] = ()
    stand_in: str = ""          # why the set stands in for the paper's ("" for one of the paper's own)


@dataclass(frozen=True)
class ClaimVerdict:
    claim: Claim
    verdict: str                # one of CLAIM_VERDICTS
    measurement: str            # every set's measurement and the decision
    sets: tuple[SetOutcome, ...] = ()
    runs: tuple[str, ...] = ()
    decision: str = ""          # how the verdict was decided, in one sentence

    @property
    def tested(self) -> str:
        """"k of n" sets tested."""
        tested = sum(s.outcome in TESTED for s in self.sets)
        return f"{tested} of {len(self.claim.on)}"


def worst(outcomes) -> str:
    """A set's outcome from its comparisons: one miss fails it, then one inside the noise."""
    for outcome in (FAILS, NOISE, NOT_COMPARABLE):
        if outcome in outcomes:
            return outcome
    return HOLDS


def by_quantifier(outcomes: list, quantifier: str) -> str:
    """HOLDS, FAILS or NOISE of tested outcomes: all holds only when every one holds; most when more
    than half do, and fails only when even every one within noise could not make a majority."""
    held, noise, n = outcomes.count(HOLDS), outcomes.count(NOISE), len(outcomes)
    if quantifier == "all":
        return worst(outcomes)
    if held > n / 2:
        return HOLDS
    return FAILS if held + noise <= n / 2 else NOISE
