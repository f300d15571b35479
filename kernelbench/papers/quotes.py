"""How a claim's quote is matched with the paper's text: whitespace-normalised, read through the
file's extraction repairs, and placed by its sentence from a section's heading."""
from __future__ import annotations

import re


def normalised(text: str) -> str:
    """Text with every run of whitespace one space (how quotes and headings are matched)."""
    return " ".join(text.split())


def reads_as_quote(quote: str, reads: str, defects: dict) -> bool:
    """Whether `reads` says what `quote` says: equal, spaces aside, once each of the paper's extraction
    `defects` ({verbatim: as read}) is repaired in the quote; a changed word or number is not."""
    for verbatim, repaired in defects.items():
        quote = quote.replace(verbatim, repaired)
    return "".join(quote.split()) == "".join(reads.split())


# A sentence ends at . or ? before a capital letter (spaces optional: some texts lost theirs), but not
# after these abbreviations; not at ! (garbled formulas carry LaTeX's \! before capitals)
SENTENCE_END = re.compile(r"(?<!\bFig)(?<!\bFigs)(?<!\bal)(?<!e\.g)(?<!i\.e)(?<!\bvs)(?<!\bEq)(?<!\bcf)(?<!\bSec)"
                           r"[.?](?=\s*[A-Z])")


def sentence_number(text: str, heading: str, quote: str) -> int | None:
    """The sentence the first `quote` from `heading` on starts in, counted from the heading (1: the
    first sentence after it, or the one the heading opens where it is a paragraph's first words);
    None when the heading, or the quote from it on, is not in `text`. All three are matched
    whitespace-normalised."""
    text, heading, quote = normalised(text), normalised(heading), normalised(quote)
    start = text.find(heading)
    at = text.find(quote, start) if start >= 0 else -1
    if at < 0:
        return None
    # up to the quote's first character: an end just before it looks ahead at that character
    return 1 + len(SENTENCE_END.findall(text, start + len(heading), at + 1))
