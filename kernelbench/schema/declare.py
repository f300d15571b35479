"""Fields of a YAML file declared once, as solver parameters are (kernelbench/params.py): the sections
of an experiment config (kernelbench/config/sections.py), of a paper file (kernelbench/papers/) and of
a dataset registry entry (kernelbench/data/registry.py).

A section is a class whose every field is one declaration,

    @section
    class StopConfig:
        iterations: int | None = field(None, "iterations of training", Count(1, "a positive integer"))

and everything else derives from it: the frozen dataclass (the annotation and the default), the keys
the section accepts, the check of each value and its refusal (`read_section`: the kind's `read`), and
the reference -- what the kind accepts (its `describe`), the default, the doc -- that `kernelbench
config` prints and the documentation site's references are generated from (`documented`, `markdown`).
A declaration without an annotation is a key of the file that the object does not keep (its rule
reads it into other fields, e.g. a paper's `needs` into its entries). Rules that tie fields together
(dataset `name` xor `path`, ...) are small functions beside the section's reader, not declarations.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any

from kernelbench.schema.values import fail, read_mapping

_NO_DEFAULT = object()


@dataclass(frozen=True)
class Field:
    """One field: the value it takes when not given, what it means, the kind of value it accepts
    (an object with `read(value, path)`; a section class for a nested section, or Items / Named of
    one; None: read by the section's own rule), and the default as the reference shows it when that
    is not the value itself (a sentence: "the config file's stem"). `key=False`: not a key of the
    file, set by the code (run metadata, a budget fraction). `required`: the dataclass field has no
    default (the reader always passes it). `mandatory`: the file must give the key."""
    default: Any
    doc: str
    kind: Any = None
    shown: str | None = None
    key: bool = True
    required: bool = False
    mandatory: bool = False

    def shown_default(self) -> str:
        if self.shown is not None:
            return self.shown
        if self.mandatory:
            return "required"
        if self.default is None:
            return "null"
        if isinstance(self.default, bool):
            return str(self.default).lower()
        if isinstance(self.default, (str, dict, list, tuple)) and not self.default:
            return "none"
        return str(self.default)

    def dataclass_field(self):
        if self.required:
            return dataclasses.field()
        if isinstance(self.default, (dict, list)):          # mutable: each object gets its own
            return dataclasses.field(default_factory=lambda: copy.deepcopy(self.default))
        return dataclasses.field(default=self.default)


def field(default, doc: str, kind=None, *, shown: str | None = None, key: bool = True,
          required: bool = False, mandatory: bool = False) -> Field:
    declared = Field(default, doc, kind, shown, key, required, mandatory)
    # a declaration that refuses its own default is a bug; an empty default ("", (), {}) stands for none given
    if default is not None and not (isinstance(default, (str, tuple, list, dict)) and not default) \
            and kind is not None and not holds_section(kind):
        kind.read(default, "default")
    return declared


def section(cls):
    """The frozen dataclass of a class whose every annotated field is declared with `field(...)`; the
    declarations (with the file's keys declared without an annotation) stay readable as
    `cls.declared` (name -> Field, in order)."""
    annotations = cls.__dict__.get("__annotations__", {})
    declared = {name: value for name, value in cls.__dict__.items() if isinstance(value, Field)}
    for name in annotations:
        if name not in declared:
            raise TypeError(f"{cls.__name__}.{name}: every field of a section is declared with field(...)")
    for name, value in declared.items():
        if name in annotations:
            setattr(cls, name, value.dataclass_field())
        else:
            delattr(cls, name)
    cls = dataclass(frozen=True)(cls)
    cls.declared = declared
    return cls


def keys(cls, *, leave_out=()) -> tuple:
    """The keys a section accepts, in declaration order."""
    return tuple(name for name, f in cls.declared.items() if f.key and name not in leave_out)


def is_section(kind) -> bool:
    return isinstance(kind, type) and hasattr(kind, "declared")


def nested(kind) -> tuple:
    """(the section a kind holds -- itself, or that of its items or named values -- or None, and how
    that section's keys extend the path: ".", "[].", ".<name>.")."""
    if is_section(kind):
        return kind, "."
    inner = getattr(kind, "inner", None)
    if inner is None:
        return None, ""
    cls, step = nested(inner)
    return (cls, kind.step + step) if cls is not None else (None, "")


def holds_section(kind) -> bool:
    return nested(kind)[0] is not None


def read_section(cls, raw, path: str, allowed=None) -> dict:
    """A section's mapping checked against its keys (`allowed`: fewer, for a section whose keys depend
    on another field), then each field in declaration order: a mandatory key given, and a value of a
    field with a kind read: {name: value}, a field not given (or null, unless its kind `reads_null`)
    taking its default. Fields without a kind, and those that hold sections, are left to the section's
    rule."""
    raw = read_mapping(raw, path, keys(cls) if allowed is None else allowed)
    out = {}
    for name, declared in cls.declared.items():
        if declared.mandatory and name not in raw:
            fail(path, f"missing {name}")
        if not declared.key or declared.kind is None or holds_section(declared.kind):
            continue
        value = raw.get(name)
        if value is None and not (name in raw and getattr(declared.kind, "reads_null", False)):
            out[name] = declared.default
        else:
            out[name] = declared.kind.read(value, f"{path}.{name}" if path else name)
    return out


def read_object(cls, raw, path: str, **by_code):
    """A section whose every key is read as declared, as its object; `by_code`: its other fields."""
    return cls(**read_section(cls, raw, path), **by_code)


def check(obj, path: str = "") -> None:
    """An object of a section built in code, not read from a file (a declared benchmark), checked as
    the file's values would be: every field with a kind and a value re-read, and the objects of the
    sections it holds checked in turn; a refusal names the field's path."""
    for name, declared in type(obj).declared.items():
        value = getattr(obj, name, None)        # None: not given (or a key the object does not keep)
        if declared.kind is None or value is None:
            continue
        where = f"{path}.{name}" if path else name
        inner, step = nested(declared.kind)
        if inner is None:
            declared.kind.read(value, where)
        elif step == ".":
            check(value, where)
        elif step == "[].":
            for i, item in enumerate(value):
                check(item, f"{where}[{i}]")
        else:
            for key, item in value.items():
                check(item, f"{where}.{key}")


# ---- the reference -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Documented:
    """One line of the reference: the dotted key, its default as a user would write it (or a
    sentence; empty: none) and its meaning, led by what its kind accepts."""
    key: str
    default: str
    doc: str


def documented(cls, prefix: str = "") -> tuple:
    """Every key of a section and of the sections nested in it, in declaration order."""
    out = []
    for name, declared in cls.declared.items():
        if not declared.key:
            continue
        accepts = "" if declared.kind is None or is_section(declared.kind) else declared.kind.describe()
        out.append(Documented(prefix + name, declared.shown_default(), f"{accepts}: {declared.doc}" if accepts
                              else declared.doc))
        inner, step = nested(declared.kind)
        if inner is not None:
            out.extend(documented(inner, f"{prefix}{name}{step}"))
    return tuple(out)


def markdown(fields: tuple, notes: str = "") -> str:
    """A reference page's table: every field, its default and meaning; then `notes`, the rules that are
    not one field's."""
    lines = ["| field | default | meaning |", "|---|---|---|"]
    for f in fields:
        doc = f.doc.replace("|", "\\|")
        default = f.default.replace("|", "\\|")
        lines.append(f"| `{f.key}` | {default} | {doc} |")
    return "\n".join(lines + (["", notes] if notes else []))
