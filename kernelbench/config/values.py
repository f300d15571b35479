"""The kinds of value only a config's fields take (the shared ones, and the refusal, are
kernelbench/schema): class labels, durations, a data file's columns and delimiter, each a `Rule`."""
from __future__ import annotations

import math
import re

from kernelbench.schema import Rule, fail, rule, show

_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(s|m|min|h)?\s*$")


def parse_duration(value, field: str = "budget") -> float:
    """Seconds from a number or "90s", "10m", "1.5h"; a ConfigError naming `field` otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        match = _DURATION_RE.match(value) if isinstance(value, str) else None
        if not match:
            fail(field, f"expected seconds or a duration like 90s, 10m, 1h, got {show(value)}")
        seconds = float(match.group(1)) * {"s": 1, None: 1, "m": 60, "min": 60, "h": 3600}[match.group(2)]
    if not math.isfinite(seconds) or seconds <= 0:
        fail(field, f"expected a positive duration, got {show(value)}")
    return seconds


def duration_text(seconds, unknown: str = "?") -> str:
    """Seconds as a table shows them (parse_duration reads them back): "45 s", "12 min", "2.5 h";
    `unknown` for None or a non-finite number."""
    if seconds is None or not math.isfinite(seconds):
        return unknown
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@rule("a list of >= 2 labels (numbers)")
def LABELS(value, path: str) -> tuple:
    """A list of at least two distinct labels (numbers, as in the data file), kept as written."""
    if not isinstance(value, (list, tuple)) or len(value) < 2:
        fail(path, f"expected a list of at least two labels, e.g. [8, 6], got {show(value)}")
    for i, label in enumerate(value):
        if isinstance(label, bool) or not isinstance(label, (int, float)) or not math.isfinite(label):
            fail(f"{path}[{i}]", f"expected a label (a number, as in the data file), got {show(label)}")
    if len({float(v) for v in value}) != len(value):
        fail(path, f"a label is listed twice in {show(value)}; list each class once")
    return tuple(value)


# seconds, or a duration such as 90s, 10m, 1h
DURATION = Rule(parse_duration, "seconds, or 90s, 10m, 1h")


@rule("a column name (needs a header) or an index (0 the first, -1 the last)")
def COLUMN(value, path: str):
    """A column of a table: its name in the header (a string) or its index (an integer, negative
    counting from the end)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, str) and not value.strip()):
        fail(path, f"expected a column name (a string, as in the header) or an index (an integer, -1 the "
                   f"last column), got {show(value)}")
    return value


@rule("one character, or tab")
def DELIMITER(value, path: str) -> str:
    """One character that separates the fields of a line, or `tab`."""
    if value == "tab":
        return "\t"
    if not isinstance(value, str) or len(value) != 1 or value in "\r\n\"":
        fail(path, f"expected one character such as ',' or ';' (or the word tab), got {show(value)}")
    return value
