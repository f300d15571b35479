"""The papers kernelbench reproduces: one object per paper, its published values as data.

Each paper is one YAML file in this folder, named by the paper's id (first author and year):

    id              the file's name, e.g. dai2014 (configs name it in `tags.paper`)
    name            how the report heads its section, e.g. "Dai et al. 2014 (DSG)"
    citation        authors (a list), title, venue, year
    text            the file of the paper's plain text under ../shared/papers
    figure_prefix   the id and "_": the figures drawn for the paper are registered under it
                    (kernelbench.figures, e.g. dai2014_fig1_test_error_vs_samples)
    sweeps          the panels made by a `kernelbench sweep` command, not by one config (they vary
                    what a config holds fixed): a list of {figure, command}
    not_tabulated   what the paper shows without a number to compare against, or null
    needs           (optional) short names for what entries that are not reproducible here would
                    take; an entry's `needs` names one of them
    differences     (optional) short names for why ours differs from published values where that is
                    no defect of ours: {kind (DIFFERENCE_KINDS), why (with the measurement)}; an
                    entry's `differs` names one of them
    published       every published value, one mapping per entry: the fields of `Published`
                    (without `paper`, which is the file's id) that differ from their defaults

The files are read on first use (`PAPERS`, `get_paper`), not at import; `paper_ids()` only lists
them. This module imports nothing from kernelbench but kernelbench.errors: the config layer imports
it to check `tags.paper`.
"""
from __future__ import annotations

import functools
import math
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

import yaml

from kernelbench.errors import ConfigError

__all__ = ["DIFFERENCE_KINDS", "ORDER", "PAPERS", "Citation", "Difference", "Paper", "Published", "Sweep",
           "get_paper", "load_paper",
           "load_papers", "paper_ids"]

FOLDER = Path(__file__).parent
# The order papers are listed in (that of the index of ../shared/papers); a paper file whose id is
# not named here comes after these, alphabetically.
ORDER = ("geng2019", "dai2014", "gu2018", "li2016", "glasmachers2019")
# The C build of PyYAML's safe loader when present (the same safe subset of YAML, about ten times
# faster on these files); the pure-Python one otherwise.


@dataclass(frozen=True)
class Citation:
    authors: tuple[str, ...]
    title: str
    venue: str
    year: int


# What a known difference between ours and a published value is, when it is not our defect (those
# are fixed, not explained): the paper's protocol could not be followed, our data stands in for the
# paper's, or the claim was checked (same objective, same data, settings searched on the training
# part) and does not hold here.
DIFFERENCE_KINDS = ("protocol", "stand-in data", "claim does not hold here")


@dataclass(frozen=True)
class Difference:
    """Why ours may differ from a published value, with the measurement that shows it."""
    kind: str                   # one of DIFFERENCE_KINDS
    why: str


@dataclass(frozen=True)
class Sweep:
    """A panel made by a sweep: the paper's figure (or table) and the command that makes it."""
    figure: str
    command: str


@dataclass(frozen=True)
class Published:
    """One published value and which of our runs it is compared with."""
    paper: str                  # the paper's id
    where: str                  # table / figure / section it comes from
    dataset: str                # our registry name
    algorithm: str              # our algorithm name
    metric: str                 # test_error | test_accuracy | train_error (percent), test_mae, train_seconds,
                                # counter:<name>, counter%:<name> (percent), merge_time_share (percent of the
                                # training time spent merging), improvement_vs_gss:<merge> (training time,
                                # percent), merge_time_improvement_vs_gss:<merge> (merging time, percent),
                                # at_seconds:<error>:<s> (percent, the error of the last evaluation within s
                                # training seconds, per trial; s = libsvm: the mean training seconds of the
                                # LIBSVM run with the same tags and dataset)
    value: float
    std: float | None = None
    params: dict = field(default_factory=dict)     # the entry applies to rows with these params
    note: str = ""
    figure: str | None = None   # the runs' tags.figure, when the entry is about one figure's runs
    panel: str | None = None    # the runs' tags.panel, when one figure has two panels on one dataset
    needs: str = ""             # set: not reproducible here; what it needs
    differs: Difference | None = None   # set: why ours differs, when it does (the file's `differences`)
    tolerance: float | str | None = "default"   # reproduced when |ours − value| ≤ this ("default": the
                                                # report's default for the metric); None: not judged (timings)
    bound: str | None = None    # "max": the claim is ours ≤ value (+ tolerance); "min": ours ≥ value


@dataclass(frozen=True)
class Paper:
    id: str
    name: str
    citation: Citation
    text: str
    figure_prefix: str
    sweeps: tuple[Sweep, ...] = ()
    not_tabulated: str | None = None
    published: tuple[Published, ...] = ()


def paper_ids() -> tuple[str, ...]:
    """The ids of the papers (their files' names), in ORDER; reads no file."""
    found = {path.stem for path in FOLDER.glob("*.yaml")}
    return tuple(p for p in ORDER if p in found) + tuple(sorted(found - set(ORDER)))


def get_paper(paper_id: str) -> Paper:
    """The paper with this id; a ConfigError naming the known ones for any other."""
    papers = load_papers()
    if paper_id not in papers:
        raise ConfigError(f"unknown paper {paper_id!r}; the papers are {', '.join(papers)}")
    return papers[paper_id]


@functools.cache
def load_papers() -> dict[str, Paper]:
    """Every paper file of this folder, read and checked once, by id in `paper_ids()` order."""
    return {paper_id: load_paper(FOLDER / f"{paper_id}.yaml") for paper_id in paper_ids()}


def __getattr__(name):
    if name == "PAPERS":                # read on first use, not at import
        return load_papers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- reading and checking one file ----

_PAPER_KEYS = {"id": True, "name": True, "citation": True, "text": True, "figure_prefix": True,
               "sweeps": True, "not_tabulated": True, "needs": False, "differences": False,
               "published": True}   # key: required
_CITATION_KEYS = ("authors", "title", "venue", "year")
_SWEEP_KEYS = ("figure", "command")
_ENTRY_KEYS = tuple(f.name for f in fields(Published) if f.name != "paper")
_ENTRY_REQUIRED = tuple(f.name for f in fields(Published)
                        if f.name != "paper" and f.default is MISSING and f.default_factory is MISSING)
BOUNDS = ("max", "min")


class _File:
    """The file (and entry) a problem is in, for the message."""

    def __init__(self, path: Path):
        self.path = path

    def fail(self, where: str, problem: str):
        raise ConfigError(f"{self.path}: {where}: {problem}")


def _show(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _text(check: _File, where: str, value, *, empty=False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        check.fail(where, f"expected {'text' if empty else 'non-empty text'}, got {_show(value)}")
    return value


def _optional_text(check: _File, where: str, value) -> str | None:
    return None if value is None else _text(check, where, value)


def _number(check: _File, where: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        check.fail(where, f"expected a number, got {_show(value)}")
    return float(value)


def _mapping(check: _File, where: str, value, keys=None, required=()) -> dict:
    """`value`, a mapping with only `keys` (any, for None) and every `required` one."""
    if not isinstance(value, dict):
        check.fail(where, f"expected a mapping, got {_show(value)}")
    unknown = [k for k in value if keys is not None and k not in keys]
    if unknown:
        check.fail(where, f"unknown key {unknown[0]!r}; the keys are {', '.join(map(str, keys))}")
    missing = [k for k in required if k not in value]
    if missing:
        check.fail(where, f"missing {', '.join(missing)}")
    return value


def _list(check: _File, where: str, value) -> list:
    if not isinstance(value, list):
        check.fail(where, f"expected a list, got {_show(value)}")
    return value


def load_paper(path) -> Paper:
    """One paper file, checked: unknown keys, missing ones and wrong types are a ConfigError naming
    the file and the entry. Its id must be its file's name."""
    path = Path(path)
    check = _File(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the paper file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{path}: invalid YAML{at}: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(data, dict):
        check.fail("top level", f"expected a mapping of {', '.join(_PAPER_KEYS)}, got {_show(data)}")
    _mapping(check, "top level", data, tuple(_PAPER_KEYS), [k for k, required in _PAPER_KEYS.items() if required])

    paper_id = _text(check, "id", data["id"])
    if paper_id != path.stem:
        check.fail("id", f"{paper_id!r} is not the file's name ({path.stem!r})")
    prefix = _text(check, "figure_prefix", data["figure_prefix"])
    if prefix != f"{paper_id}_":
        check.fail("figure_prefix", f"expected {paper_id + '_'!r} (the id and '_'), got {prefix!r}")

    cited = _mapping(check, "citation", data["citation"], _CITATION_KEYS, _CITATION_KEYS)
    authors = _list(check, "citation.authors", cited["authors"])
    if not authors:
        check.fail("citation.authors", "expected at least one author")
    year = cited["year"]
    if isinstance(year, bool) or not isinstance(year, int):
        check.fail("citation.year", f"expected a year (an integer), got {_show(year)}")
    citation = Citation(tuple(_text(check, f"citation.authors[{i}]", a) for i, a in enumerate(authors)),
                        _text(check, "citation.title", cited["title"]),
                        _text(check, "citation.venue", cited["venue"]), year)

    sweeps = []
    for i, sweep in enumerate(_list(check, "sweeps", data["sweeps"])):
        sweep = _mapping(check, f"sweeps[{i}]", sweep, _SWEEP_KEYS, _SWEEP_KEYS)
        sweeps.append(Sweep(*(_text(check, f"sweeps[{i}].{k}", sweep[k]) for k in _SWEEP_KEYS)))

    needs = _mapping(check, "needs", data.get("needs") or {})
    for key, why in needs.items():
        _text(check, f"needs.{key}", why)

    differences = {}
    for key, known in _mapping(check, "differences", data.get("differences") or {}).items():
        known = _mapping(check, f"differences.{key}", known, ("kind", "why"), ("kind", "why"))
        if known["kind"] not in DIFFERENCE_KINDS:
            check.fail(f"differences.{key}.kind", f"expected one of {', '.join(DIFFERENCE_KINDS)}, "
                                                  f"got {_show(known['kind'])}")
        differences[key] = Difference(known["kind"], _text(check, f"differences.{key}.why", known["why"]))

    published = tuple(_entry(check, paper_id, i, entry, needs, differences)
                      for i, entry in enumerate(_list(check, "published", data["published"])))
    return Paper(id=paper_id, name=_text(check, "name", data["name"]), citation=citation,
                 text=_text(check, "text", data["text"]), figure_prefix=prefix, sweeps=tuple(sweeps),
                 not_tabulated=_optional_text(check, "not_tabulated", data["not_tabulated"]),
                 published=published)


def _entry(check: _File, paper_id: str, index: int, entry, needs: dict, differences: dict) -> Published:
    where = f"published[{index}]"
    named = [entry[k] for k in ("dataset", "algorithm", "metric")
             if isinstance(entry, dict) and isinstance(entry.get(k), str)]
    if named:
        where += f" ({', '.join(named)})"
    entry = _mapping(check, where, entry, _ENTRY_KEYS, _ENTRY_REQUIRED)
    values = {k: _text(check, f"{where}.{k}", entry[k]) for k in ("where", "dataset", "algorithm", "metric")}
    values["value"] = _number(check, f"{where}.value", entry["value"])
    if entry.get("std") is not None:
        values["std"] = _number(check, f"{where}.std", entry["std"])
    if "params" in entry:
        params = _mapping(check, f"{where}.params", entry["params"])
        for key, value in params.items():
            if not isinstance(key, str) or not isinstance(value, (str, int, float, bool)):
                check.fail(f"{where}.params", f"expected names with a number, text or true/false each, "
                                              f"got {key!r}: {_show(value)}")
        values["params"] = dict(params)
    if "note" in entry:
        values["note"] = _text(check, f"{where}.note", entry["note"], empty=True)
    for key in ("figure", "panel"):
        if key in entry:
            values[key] = _optional_text(check, f"{where}.{key}", entry[key])
    for field_name, file_key, named in (("needs", "needs", needs), ("differs", "differences", differences)):
        if field_name in entry:         # a short name of the file's mapping, replaced by what it names
            key = entry[field_name]
            if not isinstance(key, str) or key not in named:
                check.fail(f"{where}.{field_name}", f"expected one of the file's `{file_key}` "
                                                    f"({', '.join(named) or 'none'}), got {_show(key)}")
            values[field_name] = named[key]
    if "tolerance" in entry:
        tolerance = entry["tolerance"]
        if tolerance is not None and tolerance != "default":
            if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not tolerance >= 0:
                check.fail(f"{where}.tolerance", f"expected a number ≥ 0, null (not judged) or default, "
                                                 f"got {_show(tolerance)}")
            tolerance = float(tolerance)
        values["tolerance"] = tolerance
    if "bound" in entry:
        if entry["bound"] is not None and entry["bound"] not in BOUNDS:
            check.fail(f"{where}.bound", f"expected max, min or null, got {_show(entry['bound'])}")
        values["bound"] = entry["bound"]
    return Published(paper=paper_id, **values)
