"""How a claim's verdict is shown: one symbol and one colour per outcome, with the verdict's words
beside them, so that the eye finds each row's verdict and no reader has to rely on colour alone.

A verdict is an outcome ("holds", "does not hold", ...) possibly followed by a qualifier (" on
stand-in data"); a new outcome is one entry of MARKS. A verdict no entry matches keeps its words,
with a neutral mark, so that the page never hides what verdicts.py says."""
from __future__ import annotations

import html
from dataclasses import dataclass


@dataclass(frozen=True)
class Mark:
    symbol: str         # a text glyph (not an emoji: it renders in the plain fonts of any machine)
    css: str            # the site's class for its colour (docs/stylesheets/report.css)
    heading: str        # what a paper's findings call the claims of this outcome


MARKS = {
    "holds": Mark("✔", "holds", "Stand"),
    "does not hold": Mark("✘", "fails", "Fall"),
    "within noise": Mark("≈", "noise", "Within noise"),
    "not testable here": Mark("○", "untestable", "Not testable here"),
}
UNKNOWN = Mark("•", "other", "Other verdicts")


def outcome_of(verdict: str) -> str:
    """The outcome a verdict begins with (the longest of MARKS' names that matches), or the verdict."""
    found = [name for name in MARKS if verdict == name or verdict.startswith(name + " ")]
    return max(found, key=len) if found else verdict


def mark_of(verdict: str) -> Mark:
    return MARKS.get(outcome_of(verdict), UNKNOWN)


def marked(verdict: str, *, html_class: bool = False) -> str:
    """The verdict with its symbol in front; `html_class`: wrapped in a span that the site colours
    (inline HTML, which MkDocs' Markdown passes through and GitHub would show as text)."""
    text = f"{mark_of(verdict).symbol} {verdict}"
    if not html_class:
        return text
    return f'<span class="verdict verdict-{mark_of(verdict).css}">{html.escape(text, quote=False)}</span>'
