"""The kinds of value only a paper file takes (the shared ones, the refusal and `Rule` are
kernelbench/schema): a measure's name, the params a row must carry, a tolerance, the time
point a claim is tested at, a margin."""
from __future__ import annotations

import math

from kernelbench.measures import MEASURES, measure
from kernelbench.schema import Number, Rule, Text, fail, rule, show

TEXT = Text(None, "non-empty text")
ANY_TEXT = Text(None, "text", empty=True)
NUMBER = Number(None, None)


def metric_among(allowed: tuple = tuple(MEASURES)) -> Rule:
    """A measure's name (kernelbench.measures) among `allowed`, e.g. test_error or counter:merge_frequency."""
    def read(value, path: str) -> str:
        name = TEXT.read(value, path)
        try:
            measure(name, allowed)
        except ValueError as why:
            fail(path, str(why))
        return name
    return Rule(read, "a measure (kernelbench/measures.py), e.g. test_error, counter:<name>")


@rule("{param: a number, text or true/false}")
def PARAMS(value, path: str) -> dict:
    """{name: value}: the params the compared rows carry, each a number, text or true/false."""
    if not isinstance(value, dict):
        fail(path, f"expected a mapping of names to a number, text or true/false, got {show(value)}")
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, (str, int, float, bool)):
            fail(path, f"expected names with a number, text or true/false each, got {key!r}: {show(item)}")
    return dict(value)


@rule("a number >= 0 | default | null", reads_null=True)
def TOLERANCE(value, path: str):
    """A number >= 0, `default` (the report's default for the metric) or null (not judged)."""
    if value is None or value == "default":
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        fail(path, f"expected a number ≥ 0, null (not judged) or default, got {show(value)}")
    return float(value)


@rule("final | seconds:<s> | seconds:<algorithm> | horizon:<s> | horizon:<algorithm>")
def TIME_POINT(value, path: str) -> str:
    """final | seconds:<s> (s > 0) | seconds:<algorithm> | horizon:<s> | horizon:<algorithm>."""
    text = TEXT.read(value, path)
    kind, _, limit = text.partition(":")
    if text != "final" and not (kind in ("seconds", "horizon") and limit.strip()):
        fail(path, f"expected final, seconds:<s>, seconds:<algorithm>, horizon:<s> or horizon:<algorithm>, "
                   f"got {show(value)}")
    try:
        if not float(limit) > 0:
            fail(path, f"expected seconds above 0, got {limit!r}")
    except ValueError:          # final, or an algorithm's name: within its mean training time
        pass
    return text


@rule("a number >= 0 | sd")
def MARGIN(value, path: str):
    """A number >= 0, or `sd`: one standard deviation of the trials (a no_worse test's)."""
    if value == "sd":
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        fail(path, f"expected a number ≥ 0 (or sd, in a no_worse test), got {show(value)}")
    return float(value)
