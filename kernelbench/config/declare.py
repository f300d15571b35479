"""Config fields declared once, as solver parameters are (kernelbench/params.py).

A config section is a class whose every field is one declaration,

    @section
    class StopConfig:
        iterations: int | None = field(None, "iterations of training", Count(1, "a positive integer"))

and everything else derives from it: the frozen dataclass (the annotation and the default), the keys
the section accepts, the check of each value and its refusal (`read_section`: the kind's `read`), and
the reference -- what the kind accepts (its `describe`), the default, the doc -- that `kernelbench
config` prints and the documentation site's config reference is generated from (`FIELDS`, `fields_markdown`).
Rules that tie fields together (dataset `name` xor `path`, ...) are small
functions beside the section's reader, not declarations.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

from kernelbench.config.values import _mapping

_NO_DEFAULT = object()

VALUE_RULES = """\
Values of algorithm parameters (and grid values): bool is not an int; an int is fine where a float is
expected, an integral float (1000.0) where an int is; `1e-3` (which YAML 1.1 reads as a string) is a
number, other quoted numbers ("0.5") are refused; NaN and infinities are refused everywhere. Overrides
from the command line (`--set KEY=VALUE` with a dotted key, `--seed`, `--threads`, `--trials`, ...) are
applied before validation."""


@dataclass(frozen=True)
class Field:
    """One config field: the value it takes when not given, what it means, the kind of value it accepts
    (an object with `read(value, path)`; a section class for a nested section; None: read by the
    section's own rule), and the default as the reference shows it when that is not the value itself
    (a sentence: "the config file's stem"). `key=False`: not a config key, set by the code (run
    metadata, a budget fraction). `required`: the dataclass field has no default (the reader always
    passes it)."""
    default: Any
    doc: str
    kind: Any = None
    shown: str | None = None
    key: bool = True
    required: bool = False

    def shown_default(self) -> str:
        if self.shown is not None:
            return self.shown
        if self.default is None:
            return "null"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        if isinstance(self.default, (dict, list, tuple)) and not self.default:
            return "none"
        return str(self.default)

    def dataclass_field(self):
        if self.required:
            return dataclasses.field()
        if isinstance(self.default, (dict, list)):          # mutable: each config gets its own
            return dataclasses.field(default_factory=lambda: copy.deepcopy(self.default))
        return dataclasses.field(default=self.default)


def field(default, doc: str, kind=None, *, shown: str | None = None, key: bool = True,
          required: bool = False) -> Field:
    declared = Field(default, doc, kind, shown, key, required)
    if default is not None and kind is not None and not is_section(kind):
        kind.read(default, "default")       # a declaration that refuses its own default is a bug
    return declared


def section(cls):
    """The frozen dataclass of a class whose every annotated field is declared with `field(...)`; the
    declarations stay readable as `cls.declared` (name -> Field, in order)."""
    annotations = cls.__dict__.get("__annotations__", {})
    declared = {}
    for name in annotations:
        value = cls.__dict__.get(name, _NO_DEFAULT)
        if not isinstance(value, Field):
            raise TypeError(f"{cls.__name__}.{name}: every field of a config section is declared with field(...)")
        declared[name] = value
        setattr(cls, name, value.dataclass_field())
    cls = dataclass(frozen=True)(cls)
    cls.declared = declared
    return cls


def keys(cls, *, leave_out=()) -> tuple:
    """The config keys a section accepts, in declaration order."""
    return tuple(name for name, f in cls.declared.items() if f.key and name not in leave_out)


def is_section(kind) -> bool:
    return isinstance(kind, type) and hasattr(kind, "declared")


def read_section(cls, raw, path: str, allowed=None) -> dict:
    """A section's mapping checked against its keys (`allowed`: fewer, for a section whose keys depend
    on another field) and every field with a kind read: {name: value}, a field not given (or null)
    taking its default. Fields without a kind, and nested sections, are left to the section's rule."""
    raw = _mapping(raw, path, keys(cls) if allowed is None else allowed)
    out = {}
    for name, declared in cls.declared.items():
        if not declared.key or declared.kind is None or is_section(declared.kind):
            continue
        value = raw.get(name)
        out[name] = declared.default if value is None else declared.kind.read(value, f"{path}.{name}" if path else name)
    return out


# ---- the reference -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Documented:
    """One line of the reference: the dotted key, its default as a user would write it (or a
    sentence; empty: none) and its meaning, led by what its kind accepts."""
    key: str
    default: str
    doc: str


def documented(cls, prefix: str = "") -> tuple:
    """Every config key of a section and of the sections nested in it, in declaration order."""
    out = []
    for name, declared in cls.declared.items():
        if not declared.key:
            continue
        accepts = "" if declared.kind is None or is_section(declared.kind) else declared.kind.describe()
        out.append(Documented(prefix + name, declared.shown_default(), f"{accepts}: {declared.doc}" if accepts
                              else declared.doc))
        if is_section(declared.kind):
            out.extend(documented(declared.kind, f"{prefix}{name}."))
    return tuple(out)


def markdown(fields: tuple) -> str:
    """The documentation site's config reference: every field, its default and meaning, and the value rules."""
    lines = ["| field | default | meaning |", "|---|---|---|"]
    for f in fields:
        doc = f.doc.replace("|", "\\|")
        default = f.default.replace("|", "\\|")
        lines.append(f"| `{f.key}` | {default} | {doc} |")
    return "\n".join(lines + ["", VALUE_RULES])
