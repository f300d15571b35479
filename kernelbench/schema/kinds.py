"""The kinds of value a declared field accepts (kernelbench/schema/declare.py), and an estimator's
parameter too (kernelbench/params.py). Each kind has

    read(value, path)   the value as a file gives it -> the typed value, or a refusal naming `path`
                        (a number written "1e-3", an integral 1000.0 where an integer is expected)
    holds(value)        whether a value built in code is of the kind as it is, without conversion
                        (an estimator's parameter: 1000.0 is not an integer, a string not a number)
    describe()          what it accepts, for the reference and for a refusal

`Either` pools kinds (a value of any one of them); `Rule` is a kind given by one reading function,
for the kinds only one file takes (a duration, a URL, a paper's margin).
"""
from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import Callable

from kernelbench.schema.values import as_float, as_int, fail, join_path, number_text, show, suggest


@dataclass(frozen=True)
class Count:
    """An integer >= `minimum` (None: unbounded; an integral float or `1e4` too, when read); `most`
    and `among` bound it further, refused with `refusal` ({} = the value; empty: what it accepts)."""
    minimum: int | None
    what: str
    most: int | None = None
    among: tuple | None = None
    refusal: str = ""

    def read(self, value, path: str) -> int:
        result = as_int(value, path, minimum=self.minimum, what=self.what)
        if not self._bounded(result):
            fail(path, self.refusal.format(result) if self.refusal else f"must be {self.describe()}, got {result}")
        return result

    def holds(self, value) -> bool:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and (self.minimum is None or value >= self.minimum) and self._bounded(value)

    def _bounded(self, value) -> bool:
        return (self.most is None or value <= self.most) and (self.among is None or value in self.among)

    def describe(self) -> str:
        if self.among is not None:
            return "one of " + ", ".join(map(str, self.among))
        bounds = [f"{op} {number_text(x)}" for op, x in ((">=", self.minimum), ("<=", self.most)) if x is not None]
        return " ".join(["an integer", " and ".join(bounds)]) if bounds else "an integer"


@dataclass(frozen=True)
class Number:
    """A finite float in [low, high] (open ends with `open_low` / `open_high`; None: unbounded), refused
    outside with `refusal` ({} = the value; empty: what it accepts)."""
    low: float | None
    high: float | None
    refusal: str = ""
    open_low: bool = False
    open_high: bool = False

    def read(self, value, path: str) -> float:
        result = as_float(value, path)
        if not self._inside(result):
            fail(path, self.refusal.format(result) if self.refusal else f"must be {self.describe()}, got {result}")
        return result

    def holds(self, value) -> bool:
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) \
            and self._inside(value)

    def _inside(self, x) -> bool:
        return not ((self.low is not None and (x < self.low or (self.open_low and x == self.low)))
                    or (self.high is not None and (x > self.high or (self.open_high and x == self.high))))

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return (f"a number in {'(' if self.open_low else '['}{number_text(self.low)}, "
                    f"{number_text(self.high)}{')' if self.open_high else ']'}")
        if self.low is not None:
            return f"a number {'>' if self.open_low else '>='} {number_text(self.low)}"
        if self.high is not None:
            return f"a number {'<' if self.open_high else '<='} {number_text(self.high)}"
        return "a number"


@dataclass(frozen=True)
class Words:
    """One of a fixed set of words."""
    words: tuple

    def read(self, value, path: str) -> str:
        if not isinstance(value, str) or value not in self.words:
            hint = suggest(value, self.words) if isinstance(value, str) else ""
            fail(path, f"expected one of {', '.join(map(str, self.words))}, got {show(value)}{hint}")
        return value

    def holds(self, value) -> bool:
        return any(type(value) is type(w) and value == w for w in self.words)

    def describe(self) -> str:
        if len(self.words) == 1:
            return repr(self.words[0])
        return "one of " + ", ".join(repr(w) for w in self.words)


@dataclass(frozen=True)
class Flag:
    """true or false; with `auto`, also the word auto (decided from the data)."""
    auto: bool = False

    def read(self, value, path: str):
        if not isinstance(value, bool) and not (self.auto and value == "auto"):
            fail(path, f"expected {self.describe()}, got {show(value)}")
        return value

    def holds(self, value) -> bool:
        # numpy's bool_ too: a value computed in code (a mask's entry) is a flag
        return isinstance(value, bool) or type(value).__name__ == "bool_" or (self.auto and value == "auto")

    def describe(self) -> str:
        return "true, false or auto" if self.auto else "true or false"


@dataclass(frozen=True)
class Null:
    """null (None): a field whose null says something (not given, derived from the data)."""
    reads_null = True

    def read(self, value, path: str):
        if value is not None:
            fail(path, f"expected null, got {show(value)}")
        return value

    def holds(self, value) -> bool:
        return value is None

    def describe(self) -> str:
        return "null"


@dataclass(frozen=True)
class Anything:
    """Any value at all (a seed, a random generator); `what` says what is meant."""
    what: str

    def read(self, value, path: str):
        return value

    def holds(self, value) -> bool:
        return True

    def describe(self) -> str:
        return self.what


@dataclass(frozen=True)
class Text:
    """A non-empty string (`empty`: or an empty one) of at most `most` characters (None: as `pattern`
    allows) matching `pattern` (when given); `what` says what is expected."""
    most: int | None
    what: str
    pattern: str | None = None
    empty: bool = False

    def read(self, value, path: str) -> str:
        if not self.holds(value):
            fail(path, f"expected {self.what}, got {show(value)}")
        return value

    def holds(self, value) -> bool:
        return (isinstance(value, str) and (self.empty or bool(value.strip()))
                and (self.most is None or len(value) <= self.most)
                and (self.pattern is None or bool(re.match(self.pattern, value))))

    def describe(self) -> str:
        return self.what


@dataclass(frozen=True)
class Either:
    """A value of any one of `kinds`, taken as it is (`holds`): an estimator's parameter, set in code,
    is checked so; refused naming what each kind accepts."""
    kinds: tuple

    def read(self, value, path: str):
        if not self.holds(value):
            fail(path, f"must be {self.describe()}, got {value!r}")
        return value

    def holds(self, value) -> bool:
        return any(kind.holds(value) for kind in self.kinds)

    def describe(self) -> str:
        return " or ".join(kind.describe() for kind in self.kinds)


@dataclass(frozen=True)
class Rule:
    """A kind given by one function, read(value, path) -> the value kept (or a refusal), and what it
    accepts: the kinds of value only one file takes (a duration, a URL, a paper's margin), each a
    function of a few lines rather than a class of its own. `reads_null`: null is read by it too."""
    read: Callable
    accepts: str
    reads_null: bool = False

    def describe(self) -> str:
        return self.accepts


def rule(accepts: str, *, reads_null: bool = False):
    """`@rule("what it accepts")` over a function read(value, path): the function as a kind (Rule)."""
    return lambda read: Rule(read, accepts, reads_null)


@dataclass(frozen=True)
class Subset:
    """A non-empty list of `words` (one word alone too), each kept once in the given order; an alias
    is read as the word it stands for."""
    words: tuple
    aliases: tuple = ()             # (alias, word) pairs

    def read(self, value, path: str) -> tuple:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not value:
            fail(path, f"expected a non-empty list of {', '.join(self.words)}, got {show(value)}")
        aliases = dict(self.aliases)
        out = []
        for i, word in enumerate(value):
            word = aliases.get(word, word) if isinstance(word, str) else word
            if not isinstance(word, str) or word not in self.words:
                hint = suggest(word, self.words) if isinstance(word, str) else ""
                fail(f"{path}[{i}]", f"expected one of {', '.join(self.words)}, got {show(word)}{hint}")
            if word not in out:
                out.append(word)
        return tuple(out)

    def describe(self) -> str:
        return "a list of " + ", ".join(self.words)


def _what(kind, many: bool = False) -> str:
    """What one value of `kind` is (`many`: what several are), a mapping for a declared section."""
    if hasattr(kind, "describe"):
        return kind.describe()
    return "mappings (keys below)" if many else "a mapping (keys below)"


@dataclass(frozen=True)
class Items:
    """A list of values of `inner` (a kind, or a declared section: its entries then are read by the
    section's rule) with at least `least` of them; `lone`: one value alone stands for a list of it;
    `distinct`: none listed twice."""
    inner: object
    least: int = 0
    lone: bool = False
    distinct: bool = False
    step = "[]"                     # how an item's keys extend the path in the reference

    def read(self, value, path: str) -> tuple:
        if self.lone and value is not None and not isinstance(value, (list, tuple)):
            value = [value]
        if not isinstance(value, (list, tuple)):
            fail(path, f"expected a list of {_what(self.inner, True)}, got {show(value)}")
        if len(value) < self.least:
            fail(path, f"expected at least {self.least} of {_what(self.inner, True)}, got {len(value)}")
        out = tuple(self.inner.read(item, f"{path}[{i}]") for i, item in enumerate(value))
        if self.distinct and len(set(out)) != len(out):
            twice = next(item for i, item in enumerate(out) if item in out[:i])
            fail(path, f"lists {twice!r} twice: {list(out)}")
        return out

    def describe(self) -> str:
        least = f" (at least {self.least})" if self.least else ""
        return f"a list{least} of {_what(self.inner, True)}" + (" (one alone too)" if self.lone else "")


@dataclass(frozen=True)
class Named:
    """A mapping of names (non-empty text; `names` says what they are) to values of `inner` (a kind,
    or a declared section, read by the section's rule)."""
    inner: object
    names: str = "name"

    @property
    def step(self) -> str:
        return f".<{self.names}>"

    def read(self, value, path: str) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            fail(path, f"expected a mapping of {self.names} to {_what(self.inner)}, got {show(value)}")
        for name in value:
            if not isinstance(name, str) or not name.strip():
                fail(path, f"expected a {self.names} (non-empty text) as each key, got {show(name)}")
        return {name: self.inner.read(item, join_path(path, name)) for name, item in value.items()}

    def describe(self) -> str:
        return f"{{{self.names}: {_what(self.inner)}}}"
