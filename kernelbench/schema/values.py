"""Reading one value a user wrote: the refusal (a ConfigError naming the value's dotted path, what was
given and what is allowed, with the closest match for a misspelt word), numbers as YAML 1.1 leaves
them (the kinds of value a declared field accepts are kernelbench/schema/kinds.py)."""
from __future__ import annotations

import contextlib
import difflib
import math
import re

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


def number_text(x) -> str:
    """A bound as a reference states it: 10,000 for a large integer, else the shortest form (0.5, 1e-06)."""
    return f"{x:,}" if isinstance(x, int) and abs(x) >= 10_000 else f"{x:g}"
