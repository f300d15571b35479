"""The kinds of value only a paper file takes (the shared ones, and the refusal, are
kernelbench/schema/values.py): a measure's name, the params a row must carry, a tolerance, the time
point a claim is tested at, a margin."""
from __future__ import annotations

import math
from dataclasses import dataclass

from kernelbench.measures import MEASURES, measure
from kernelbench.schema import Number, Text, fail, show

TEXT = Text(None, "non-empty text")
ANY_TEXT = Text(None, "text", empty=True)
NUMBER = Number(None, None)


@dataclass(frozen=True)
class Metric:
    """A measure's name (kernelbench.measures) among `allowed`, e.g. test_error or counter:merge_frequency."""
    allowed: tuple = tuple(MEASURES)

    def read(self, value, path: str) -> str:
        metric = TEXT.read(value, path)
        try:
            measure(metric, self.allowed)
        except ValueError as why:
            fail(path, str(why))
        return metric

    def describe(self) -> str:
        return "a measure (kernelbench/measures.py), e.g. test_error, counter:<name>"


@dataclass(frozen=True)
class Params:
    """{name: value}: the params the compared rows carry, each a number, text or true/false."""

    def read(self, value, path: str) -> dict:
        if not isinstance(value, dict):
            fail(path, f"expected a mapping of names to a number, text or true/false, got {show(value)}")
        for key, item in value.items():
            if not isinstance(key, str) or not isinstance(item, (str, int, float, bool)):
                fail(path, f"expected names with a number, text or true/false each, got {key!r}: {show(item)}")
        return dict(value)

    def describe(self) -> str:
        return "{param: a number, text or true/false}"


@dataclass(frozen=True)
class Tolerance:
    """A number >= 0, `default` (the report's default for the metric) or null (not judged)."""
    reads_null = True

    def read(self, value, path: str):
        if value is None or value == "default":
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            fail(path, f"expected a number ≥ 0, null (not judged) or default, got {show(value)}")
        return float(value)

    def describe(self) -> str:
        return "a number >= 0 | default | null"


@dataclass(frozen=True)
class TimePoint:
    """final | seconds:<s> (s > 0) | seconds:<algorithm> | horizon:<s> | horizon:<algorithm>."""

    def read(self, value, path: str) -> str:
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

    def describe(self) -> str:
        return "final | seconds:<s> | seconds:<algorithm> | horizon:<s> | horizon:<algorithm>"


@dataclass(frozen=True)
class Margin:
    """A number >= 0, or `sd`: one standard deviation of the trials (a no_worse test's)."""

    def read(self, value, path: str):
        if value == "sd":
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            fail(path, f"expected a number ≥ 0 (or sd, in a no_worse test), got {show(value)}")
        return float(value)

    def describe(self) -> str:
        return "a number >= 0 | sd"
