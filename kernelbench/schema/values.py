"""Reading one value a user wrote: the refusal (a ConfigError naming the value's dotted path, what was
given and what is allowed, with the closest match for a misspelt word), numbers as YAML 1.1 leaves
them, and the kinds of value a declared field accepts (kernelbench/schema/declare.py)."""
from __future__ import annotations

import contextlib
import difflib
import math
import re
from dataclasses import dataclass

from kernelbench.errors import ConfigError

# YAML 1.1 (PyYAML) reads numbers with an exponent but no dot, or no sign in the exponent
# ("1e-3", "1.0e3"), as strings.
_EXPONENT_RE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")


# ---- refusals ------------------------------------------------------------------------------------
def fail(field: str, message: str):
    """Refuse the value at `field` (a dotted path, "" for the top level): `field` and `problem` stay
    readable on the error for a file's reader to say where the value is (`refusals_as`)."""
    err = ConfigError(f"{field}: {message}" if field else message)
    err.field = field
    err.problem = message
    raise err


@contextlib.contextmanager
def refusals_as(error):
    """Every refusal raised inside re-raised as `error(field, problem)`: a file's own exception and
    wording around the shared refusal (the file's name, the entry it is in)."""
    try:
        yield
    except ConfigError as err:
        if not hasattr(err, "problem"):
            raise
        raise error(err.field, err.problem) from None


def join_path(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def show(value) -> str:
    """A short description of a value as the user wrote it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return f"the string {text!r}"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (dict, list, tuple)):
        text = repr(value)
        text = text if len(text) <= 60 else text[:57] + "..."
        return f"a {'mapping' if isinstance(value, dict) else 'list'} {text}"
    return f"a {type(value).__name__} ({str(value)[:40]})"


def suggest(word, choices) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_keys(mapping: dict, allowed, path: str):
    for key in mapping:
        if key not in allowed:
            where = f"in {path}" if path else "at the top level"
            fail(join_path(path, key), f"unknown key; allowed {where}: {', '.join(allowed)}"
                                       f"{suggest(key, allowed)}")


def read_mapping(value, path: str, allowed) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        fail(path, f"expected a mapping with keys {', '.join(allowed)}, got {show(value)}")
    check_keys(value, allowed, path)
    return value


def read_list(value, path: str, what: str) -> list:
    """A list (null: none); `what` says what its items are."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        fail(path, f"expected a list of {what}, got {show(value)}")
    return list(value)


# ---- numbers -------------------------------------------------------------------------------------
def number_from_string(value: str):
    if _EXPONENT_RE.match(value.strip()):
        return float(value)
    return None


def as_int(value, path: str, *, minimum: int | None = None, what: str = "an integer") -> int:
    result = None
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        result = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        result = int(value)
    elif isinstance(value, str):
        number = number_from_string(value)
        if number is not None and math.isfinite(number) and number.is_integer():
            result = int(number)
    if result is None:
        fail(path, f"expected {what}, got {show(value)}")
    if minimum is not None and result < minimum:
        fail(path, f"must be >= {minimum}, got {result}")
    return result


def as_float(value, path: str) -> float:
    result = None
    if isinstance(value, bool):
        pass
    elif isinstance(value, (int, float)):
        try:
            result = float(value)
        except OverflowError:
            fail(path, f"number too large: {value}")
    elif isinstance(value, str):
        result = number_from_string(value)
    if result is None:
        fail(path, f"expected a number, got {show(value)}")
    if not math.isfinite(result):
        fail(path, f"must be a finite number, got {value!r}")
    return result


# ---- the kinds of value a field declares: read(value, path) -> the typed value, or a refusal; ---------
# describe() -> what it accepts, for the reference
@dataclass(frozen=True)
class Count:
    """An integer >= `minimum` (an integral float or `1e4` too); `most` and `among` bound it further,
    refused with `refusal` ({} = the value)."""
    minimum: int
    what: str
    most: int | None = None
    among: tuple | None = None
    refusal: str = ""

    def read(self, value, path: str) -> int:
        result = as_int(value, path, minimum=self.minimum, what=self.what)
        if (self.most is not None and result > self.most) or (self.among is not None and result not in self.among):
            fail(path, self.refusal.format(result))
        return result

    def describe(self) -> str:
        if self.among is not None:
            return "one of " + ", ".join(map(str, self.among))
        return f"an integer >= {self.minimum}" + (f" and <= {self.most:,}" if self.most is not None else "")


@dataclass(frozen=True)
class Number:
    """A finite float in [low, high] (open ends with `open_low` / `open_high`; None: unbounded), refused
    outside with `refusal` ({} = the value)."""
    low: float | None
    high: float | None
    refusal: str = ""
    open_low: bool = False
    open_high: bool = False

    def read(self, value, path: str) -> float:
        result = as_float(value, path)
        if ((self.low is not None and (result < self.low or (self.open_low and result == self.low)))
                or (self.high is not None and (result > self.high or (self.open_high and result == self.high)))):
            fail(path, self.refusal.format(result))
        return result

    def describe(self) -> str:
        if self.low is None and self.high is None:
            return "a number"
        if self.high is None:
            return f"a number {'>' if self.open_low else '>='} {self.low:g}"
        return f"a number in {'(' if self.open_low else '['}{self.low:g}, {self.high:g}{')' if self.open_high else ']'}"


@dataclass(frozen=True)
class Words:
    """One of a fixed set of words."""
    words: tuple

    def read(self, value, path: str) -> str:
        if not isinstance(value, str) or value not in self.words:
            hint = suggest(value, self.words) if isinstance(value, str) else ""
            fail(path, f"expected one of {', '.join(self.words)}, got {show(value)}{hint}")
        return value

    def describe(self) -> str:
        return " | ".join(self.words)


@dataclass(frozen=True)
class Flag:
    """true or false; with `auto`, also the word auto (decided from the data)."""
    auto: bool = False

    def read(self, value, path: str):
        if not isinstance(value, bool) and not (self.auto and value == "auto"):
            fail(path, f"expected {'true, false or auto' if self.auto else 'true or false'}, got {show(value)}")
        return value

    def describe(self) -> str:
        return "true | false | auto" if self.auto else "true | false"


@dataclass(frozen=True)
class Text:
    """A non-empty string (`empty`: or an empty one) of at most `most` characters (None: as `pattern`
    allows) matching `pattern` (when given); `what` says what is expected."""
    most: int | None
    what: str
    pattern: str | None = None
    empty: bool = False

    def read(self, value, path: str) -> str:
        if (not isinstance(value, str) or (not self.empty and not value.strip())
                or (self.most is not None and len(value) > self.most)
                or (self.pattern is not None and not re.match(self.pattern, value))):
            fail(path, f"expected {self.what}, got {show(value)}")
        return value

    def describe(self) -> str:
        return self.what


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
