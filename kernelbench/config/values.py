"""Reading one value a user wrote: the refusal (a ConfigError naming the field's dotted path, what was
given and what is allowed, with the closest match for a misspelt word), numbers as YAML 1.1 leaves
them, and the kinds of value a config field declares (kernelbench/config/declare.py)."""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

from kernelbench.errors import ConfigError

# YAML 1.1 (PyYAML) reads numbers with an exponent but no dot, or no sign in the exponent
# ("1e-3", "1.0e3"), as strings.
_EXPONENT_RE = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$")
_DURATION_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(s|m|min|h)?\s*$")


# ---- refusals ------------------------------------------------------------------------------------
def _fail(field: str, message: str):
    err = ConfigError(f"{field}: {message}" if field else message)
    err.field = field
    raise err


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)


def _show(value) -> str:
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


def _suggest(word, choices) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_keys(mapping: dict, allowed, path: str):
    for key in mapping:
        if key not in allowed:
            where = f"in {path}" if path else "at the top level"
            _fail(_join(path, key), f"unknown key; allowed {where}: {', '.join(allowed)}"
                                    f"{_suggest(key, allowed)}")


def _mapping(value, path: str, allowed) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        _fail(path, f"expected a mapping with keys {', '.join(allowed)}, got {_show(value)}")
    _check_keys(value, allowed, path)
    return value


# ---- numbers -------------------------------------------------------------------------------------
def _number_from_string(value: str):
    if _EXPONENT_RE.match(value.strip()):
        return float(value)
    return None


def _as_int(value, path: str, *, minimum: int | None = None, what: str = "an integer") -> int:
    result = None
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        result = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        result = int(value)
    elif isinstance(value, str):
        number = _number_from_string(value)
        if number is not None and math.isfinite(number) and number.is_integer():
            result = int(number)
    if result is None:
        _fail(path, f"expected {what}, got {_show(value)}")
    if minimum is not None and result < minimum:
        _fail(path, f"must be >= {minimum}, got {result}")
    return result


def _as_float(value, path: str) -> float:
    result = None
    if isinstance(value, bool):
        pass
    elif isinstance(value, (int, float)):
        try:
            result = float(value)
        except OverflowError:
            _fail(path, f"number too large: {value}")
    elif isinstance(value, str):
        result = _number_from_string(value)
    if result is None:
        _fail(path, f"expected a number, got {_show(value)}")
    if not math.isfinite(result):
        _fail(path, f"must be a finite number, got {value!r}")
    return result


def parse_duration(value, field: str = "budget") -> float:
    """Seconds from a number or "90s", "10m", "1.5h"; a ConfigError naming `field` otherwise."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        match = _DURATION_RE.match(value) if isinstance(value, str) else None
        if not match:
            _fail(field, f"expected seconds or a duration like 90s, 10m, 1h, got {_show(value)}")
        seconds = float(match.group(1)) * {"s": 1, None: 1, "m": 60, "min": 60, "h": 3600}[match.group(2)]
    if not math.isfinite(seconds) or seconds <= 0:
        _fail(field, f"expected a positive duration, got {_show(value)}")
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


# ---- the kinds of value a field declares: read(value, path) -> the typed value, or a ConfigError -----
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
        result = _as_int(value, path, minimum=self.minimum, what=self.what)
        if (self.most is not None and result > self.most) or (self.among is not None and result not in self.among):
            _fail(path, self.refusal.format(result))
        return result

    def describe(self) -> str:
        if self.among is not None:
            return "one of " + ", ".join(map(str, self.among))
        return f"an integer >= {self.minimum}" + (f" and <= {self.most:,}" if self.most is not None else "")


@dataclass(frozen=True)
class Number:
    """A finite float in [low, high] (open ends with `open_low` / `open_high`), refused outside with
    `refusal` ({} = the value)."""
    low: float
    high: float | None
    refusal: str
    open_low: bool = False
    open_high: bool = False

    def read(self, value, path: str) -> float:
        result = _as_float(value, path)
        if (result < self.low or (self.open_low and result == self.low)
                or (self.high is not None and (result > self.high or (self.open_high and result == self.high)))):
            _fail(path, self.refusal.format(result))
        return result

    def describe(self) -> str:
        if self.high is None:
            return f"a number {'>' if self.open_low else '>='} {self.low:g}"
        return f"a number in {'(' if self.open_low else '['}{self.low:g}, {self.high:g}{')' if self.open_high else ']'}"


@dataclass(frozen=True)
class Words:
    """One of a fixed set of words."""
    words: tuple

    def read(self, value, path: str) -> str:
        if not isinstance(value, str) or value not in self.words:
            hint = _suggest(value, self.words) if isinstance(value, str) else ""
            _fail(path, f"expected one of {', '.join(self.words)}, got {_show(value)}{hint}")
        return value

    def describe(self) -> str:
        return " | ".join(self.words)


@dataclass(frozen=True)
class Flag:
    """true or false; with `auto`, also the word auto (decided from the data)."""
    auto: bool = False

    def read(self, value, path: str):
        if not isinstance(value, bool) and not (self.auto and value == "auto"):
            _fail(path, f"expected {'true, false or auto' if self.auto else 'true or false'}, got {_show(value)}")
        return value

    def describe(self) -> str:
        return "true | false | auto" if self.auto else "true | false"


@dataclass(frozen=True)
class Text:
    """A non-empty string of at most `most` characters (None: as `pattern` allows) matching `pattern`
    (when given); `what` says what is expected."""
    most: int | None
    what: str
    pattern: str | None = None

    def read(self, value, path: str) -> str:
        if (not isinstance(value, str) or not value.strip() or (self.most is not None and len(value) > self.most)
                or (self.pattern is not None and not re.match(self.pattern, value))):
            _fail(path, f"expected {self.what}, got {_show(value)}")
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
            _fail(path, f"expected a non-empty list of {', '.join(self.words)}, got {_show(value)}")
        aliases = dict(self.aliases)
        out = []
        for i, word in enumerate(value):
            word = aliases.get(word, word) if isinstance(word, str) else word
            if not isinstance(word, str) or word not in self.words:
                hint = _suggest(word, self.words) if isinstance(word, str) else ""
                _fail(f"{path}[{i}]", f"expected one of {', '.join(self.words)}, got {_show(word)}{hint}")
            if word not in out:
                out.append(word)
        return tuple(out)

    def describe(self) -> str:
        return "a list of " + ", ".join(self.words)


@dataclass(frozen=True)
class Labels:
    """A list of at least two distinct labels (numbers, as in the data file), kept as written."""

    def read(self, value, path: str) -> tuple:
        if not isinstance(value, (list, tuple)) or len(value) < 2:
            _fail(path, f"expected a list of at least two labels, e.g. [8, 6], got {_show(value)}")
        for i, label in enumerate(value):
            if isinstance(label, bool) or not isinstance(label, (int, float)) or not math.isfinite(label):
                _fail(f"{path}[{i}]", f"expected a label (a number, as in the data file), got {_show(label)}")
        if len({float(v) for v in value}) != len(value):
            _fail(path, f"a label is listed twice in {_show(value)}; list each class once")
        return tuple(value)

    def describe(self) -> str:
        return "a list of >= 2 labels (numbers)"


@dataclass(frozen=True)
class Duration:
    """Seconds, or a duration such as 90s, 10m, 1h (parse_duration)."""

    def read(self, value, path: str) -> float:
        return parse_duration(value, path)

    def describe(self) -> str:
        return "seconds, or 90s, 10m, 1h"


@dataclass(frozen=True)
class Column:
    """A column of a table: its name in the header (a string) or its index (an integer, negative counting
    from the end)."""

    def read(self, value, path: str):
        if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, str) and not value.strip()):
            _fail(path, f"expected a column name (a string, as in the header) or an index (an integer, -1 the "
                        f"last column), got {_show(value)}")
        return value

    def describe(self) -> str:
        return "a column name (needs a header) or an index (0 the first, -1 the last)"


@dataclass(frozen=True)
class Delimiter:
    """One character that separates the fields of a line, or `tab`."""

    def read(self, value, path: str) -> str:
        if value == "tab":
            return "\t"
        if not isinstance(value, str) or len(value) != 1 or value in "\r\n\"":
            _fail(path, f"expected one character such as ',' or ';' (or the word tab), got {_show(value)}")
        return value

    def describe(self) -> str:
        return "one character, or tab"
