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
    differences     (optional) short names for a known explanation of why ours may differ from
                    published numbers (text, with the measurement); an entry's `known_difference`
                    names one of them. It is shown beside a row that differs, never as its verdict
    published       every published number, one mapping per entry: the fields of `Published`
                    (without `paper`, which is the file's id) that differ from their defaults
    claims          (optional) the paper's conclusions drawn from its experiments, one mapping per
                    claim: the fields of `Claim`, its `test` those of `ClaimTest` (the report
                    computes each claim's verdict from the runs: kernelbench.report.verdicts)
    sections        (with claims) where the claims sit: {label: its heading, or its paragraph's first
                    words, verbatim from the text and found there once}, e.g. {"§6.2": "6.2 Experimental
                    Results"}; a claim's `section` names one, its `sentence` counts the sentences from
                    that heading (sentence_number); every label is some claim's
    extraction_defects  (optional) {verbatim: as read}: what the text extraction garbled in the claims'
                    quotes (lost ligatures, "15:3%" for "15.3%"), each repair used by a claim's `reads`

The files are read on first use (`PAPERS`, `get_paper`), not at import; `paper_ids()` only lists
them. This module imports nothing from kernelbench but kernelbench.errors and kernelbench.measures:
the config layer imports it to check `tags.paper`.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

import yaml

from kernelbench.errors import ConfigError
from kernelbench.measures import CLAIM_MEASURES, MEASURES, measure

__all__ = ["ACROSS_SETS", "CLAIM_TESTS", "ORDER", "PAPERS", "Citation", "Claim", "ClaimTest", "Paper", "Published", "Selector",
           "SENTENCE_END", "Sweep", "get_paper", "load_paper", "load_papers", "normalised", "paper_ids", "reads_as_quote",
           "sentence_number"]

FOLDER = Path(__file__).parent
# The order papers are listed in (that of the index of ../shared/papers); a paper file whose id is
# not named here comes after these, alphabetically.
ORDER = ("geng2019", "dai2014", "gu2018", "li2016", "glasmachers2019")


@dataclass(frozen=True)
class Citation:
    authors: tuple[str, ...]
    title: str
    venue: str
    year: int


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
    metric: str                 # a measure (kernelbench.measures), e.g. test_error, counter:<name>,
                                # improvement_vs_gss:<merge>, at_seconds:<error>:<s>
    value: float
    std: float | None = None
    params: dict = field(default_factory=dict)     # the entry applies to rows with these params
    note: str = ""
    figure: str | None = None   # the runs' tags.figure, when the entry is about one figure's runs
    panel: str | None = None    # the runs' tags.panel, when one figure has two panels on one dataset
    needs: str = ""             # set: not reproducible here; what it needs
    known_difference: str = ""  # set: a known explanation, shown beside the row only when it differs
                                # (the file's `differences`); never the verdict itself
    stand_in: str = ""          # set: our dataset stands in for the paper's; why (the verdict says so)
    tolerance: float | str | None = "default"   # reproduced when |ours − value| ≤ this ("default": the
                                                # report's default for the metric); None: not judged (timings)
    bound: str | None = None    # "max": the claim is ours ≤ value (+ tolerance); "min": ours ≥ value


# The kinds of a claim's test (ClaimTest.kind) and what each compares:
#   order    a's mean lies below (direction lower) or above (higher) every b's mean
#   similar  |mean a − mean b| ≤ margin for every b (margin_why says where the margin comes from)
#   ratio    mean b / mean a ≥ at_least for every b (a is faster, or smaller, by that factor)
#   speedup  time at threads[0] / time at k ≥ at_least · k for every other k of `threads`
#   growth   the log-log slope of the metric against the training size is ≤ at_most
#   bound    a's mean lies below (direction lower) or above (higher) a stated `value` (value_why says
#            where the number comes from), or the mean of another metric (`than`) of the same runs
#   no_worse a is no worse than every b by more than `margin` (direction: which way is better): a
#            one-sided claim such as "no cost in accuracy"; margin `sd` is one standard deviation of the
#            trials, the yardstick of a paper that calls differences below it no difference
#   time_to  the time a needs to reach every b's final value (per trial, from its curve; less a
#            `margin` on the worse side, say to a "satisfactory" value) is at least `at_least` times
#            shorter than b's whole training time: a speed ratio at equal accuracy
# and two across the claim's sets, each set's mean of a's runs one point:
#   extreme      the set `on_set` has the largest (direction higher) or smallest (lower) mean
#   correlation  Spearman's rank correlation of the metric with `against` over the sets ≥ `value`
CLAIM_TESTS = ("order", "similar", "ratio", "speedup", "growth", "bound", "no_worse", "time_to", "extreme",
               "correlation")
ACROSS_SETS = ("extreme", "correlation")
QUANTIFIERS = ("all", "most")
DIRECTIONS = ("lower", "higher")


@dataclass(frozen=True)
class Selector:
    """The runs of one compared method: an algorithm, and the params its rows must carry."""
    algorithm: str
    params: dict = field(default_factory=dict)

    def __hash__(self):                 # a key of the report's means per compared method
        return hash((self.algorithm, tuple(sorted((k, repr(v)) for k, v in self.params.items()))))

    def __str__(self) -> str:
        if not self.params:
            return self.algorithm
        return f"{self.algorithm} ({', '.join(f'{k}={v}' for k, v in self.params.items())})"


@dataclass(frozen=True)
class ClaimTest:
    """A claim's operational test, stated before any run (CLAIM_TESTS says what each kind compares)."""
    kind: str
    metric: str
    a: Selector
    b: tuple[Selector, ...] = ()
    direction: str | None = None        # order, bound, no_worse, time_to (which way is better), extreme
    at: str = "final"                   # order, similar, no_worse, bound: final | seconds:<s> | seconds:<algorithm>
                                        # | horizon:<s or algorithm> (several time points up to it)
    when: str = "all"                   # with at horizon: the share of its time points the test must hold at
    per: str | None = None              # order, similar, ratio: n_train (at every training size)
    margin: float | str | None = None   # similar; no_worse (a number, or "sd": one standard deviation of the trials)
    margin_why: str = ""                # similar, no_worse
    at_least: float | None = None       # ratio, speedup, time_to
    at_least_why: str = ""              # ratio, time_to: why that factor (the word "much" and its reading)
    threads: tuple[int, ...] = ()       # speedup
    at_most: float | None = None        # growth
    value: float | None = None          # bound: the stated number a's mean is compared with
    value_why: str = ""                 # bound: where that number comes from
    than: str | None = None             # bound: instead of a value, another metric of the same runs
    on_set: str | None = None           # extreme: the set the extreme must be on
    against: str | None = None          # correlation: the metric the test's metric is ranked against


@dataclass(frozen=True)
class Claim:
    """A conclusion the paper draws from an experiment, where it says so, and how it is tested."""
    paper: str                          # the paper's id
    id: str
    where: str
    line: int                           # 1-based line of the paper's text file where the quote starts
    quote: str                          # verbatim (whitespace-normalised) from the paper's text
    on: tuple[str, ...]                 # our registry datasets the test runs on
    quantifier: str = "all"             # all | most (more than half of the sets tested)
    figure: str | None = None           # only runs tagged with this figure
    stand_in: dict = field(default_factory=dict)    # {set of `on`: why it stands in for the paper's data}
    floor: dict = field(default_factory=dict)       # {set of `on`: the constant classifier's test error, %}
    needs: str | None = None            # set: not testable here; what is missing
    test: ClaimTest | None = None
    scale_rows: int | None = None       # the claim speaks of data this large (training rows): smaller runs
    scale_why: str = ""                 # do not test it; the words that say so
    reads: str | None = None            # the quote as a reader reads it (spaces, symbols repaired), when
                                        # the verbatim one is not readable (reads_as_quote ties the two)
    section: str | None = None          # the label of the paper's `sections` the quote is in, e.g. "§6.2"
    sentence: int | None = None         # the quote's sentence in that section, counted from its heading

    @property
    def readable(self) -> str:
        """The quote as a reader reads it."""
        return self.reads if self.reads is not None else " ".join(self.quote.split())

    @property
    def locator(self) -> str:
        """Where the quote is, as a reader finds it: "§6.2, sentence 3"."""
        return f"{self.section}, sentence {self.sentence}"


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
    claims: tuple[Claim, ...] = ()
    sections: dict = field(default_factory=dict)            # {label: its heading, verbatim}
    extraction_defects: dict = field(default_factory=dict)  # {verbatim: as read}


def normalised(text: str) -> str:
    """Text with every run of whitespace one space (how quotes and headings are matched)."""
    return " ".join(text.split())


def reads_as_quote(quote: str, reads: str, defects: dict) -> bool:
    """Whether `reads` says what `quote` says: equal, spaces aside, once each of the paper's extraction
    `defects` ({verbatim: as read}) is repaired in the quote; a changed word or number is not."""
    for verbatim, repaired in defects.items():
        quote = quote.replace(verbatim, repaired)
    return "".join(quote.split()) == "".join(reads.split())


# A sentence ends at . or ? before a capital letter (spaces optional: some texts lost theirs), but not
# after these abbreviations; not at ! (garbled formulas carry LaTeX's \! before capitals)
SENTENCE_END = re.compile(r"(?<!\bFig)(?<!\bFigs)(?<!\bal)(?<!e\.g)(?<!i\.e)(?<!\bvs)(?<!\bEq)(?<!\bcf)(?<!\bSec)"
                           r"[.?](?=\s*[A-Z])")


def sentence_number(text: str, heading: str, quote: str) -> int | None:
    """The sentence the first `quote` from `heading` on starts in, counted from the heading (1: the
    first sentence after it, or the one the heading opens where it is a paragraph's first words);
    None when the heading, or the quote from it on, is not in `text`. All three are matched
    whitespace-normalised."""
    text, heading, quote = normalised(text), normalised(heading), normalised(quote)
    start = text.find(heading)
    at = text.find(quote, start) if start >= 0 else -1
    if at < 0:
        return None
    # up to the quote's first character: an end just before it looks ahead at that character
    return 1 + len(SENTENCE_END.findall(text, start + len(heading), at + 1))


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
               "published": True, "claims": False, "sections": False,
               "extraction_defects": False}   # key: required
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

    differences = _mapping(check, "differences", data.get("differences") or {})
    for key, why in differences.items():
        _text(check, f"differences.{key}", why)

    published = tuple(_entry(check, paper_id, i, entry, needs, differences)
                      for i, entry in enumerate(_list(check, "published", data["published"])))
    sections = _text_mapping(check, "sections", data.get("sections"))
    defects = _text_mapping(check, "extraction_defects", data.get("extraction_defects"), empty=True)
    claims = tuple(_claim(check, paper_id, i, claim, sections, defects)
                   for i, claim in enumerate(_list(check, "claims", data.get("claims") or [])))
    unused = [verbatim for verbatim in defects if not any(verbatim in c.quote for c in claims if c.reads)]
    if unused:                          # a repair no quote needs is a typo or a leftover
        check.fail("extraction_defects", f"{unused[0]!r} is in no claim's quote that has `reads`")
    unused = [label for label in sections if not any(c.section == label for c in claims)]
    if unused:
        check.fail("sections", f"{unused[0]!r} is no claim's section")
    seen = set()
    for i, claim in enumerate(claims):
        if claim.id in seen:
            check.fail(f"claims[{i}] ({claim.id})", "the id is already taken by an earlier claim; ids are unique "
                                                    "within the paper")
        seen.add(claim.id)
    return Paper(id=paper_id, name=_text(check, "name", data["name"]), citation=citation,
                 text=_text(check, "text", data["text"]), figure_prefix=prefix, sweeps=tuple(sweeps),
                 not_tabulated=_optional_text(check, "not_tabulated", data["not_tabulated"]),
                 published=published, claims=claims, sections=sections, extraction_defects=defects)


def _text_mapping(check: _File, where: str, value, *, empty=False) -> dict:
    """{text: text}, or {} for none; `empty`: the values may be empty text."""
    named = _mapping(check, where, value or {})
    for key, item in named.items():
        _text(check, where, key)
        _text(check, f"{where}.{key}", item, empty=empty)
    return dict(named)


def _entry(check: _File, paper_id: str, index: int, entry, needs: dict, differences: dict) -> Published:
    where = f"published[{index}]"
    named = [entry[k] for k in ("dataset", "algorithm", "metric")
             if isinstance(entry, dict) and isinstance(entry.get(k), str)]
    if named:
        where += f" ({', '.join(named)})"
    entry = _mapping(check, where, entry, _ENTRY_KEYS, _ENTRY_REQUIRED)
    values = {k: _text(check, f"{where}.{k}", entry[k]) for k in ("where", "dataset", "algorithm")}
    values["metric"] = _metric(check, f"{where}.metric", entry["metric"])
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
    if "stand_in" in entry:
        values["stand_in"] = _text(check, f"{where}.stand_in", entry["stand_in"])
    for field_name, file_key, named in (("needs", "needs", needs), ("known_difference", "differences", differences)):
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


# ---- claims ----

_CLAIM_KEYS = {"id": True, "where": True, "line": True, "quote": True, "reads": False, "section": True,
               "sentence": True, "on": True, "quantifier": False, "figure": False, "stand_in": False,
               "floor": False, "needs": False, "scale": False, "test": False}  # key: required
# Per test kind: its required keys, then the optional ones (besides `kind`)
_TEST_KEYS = {
    "order": (("metric", "a", "b", "direction"), ("at", "when", "per")),
    "similar": (("metric", "a", "b", "margin", "margin_why"), ("at", "when", "per")),
    "ratio": (("metric", "a", "b", "at_least"), ("at_least_why", "per")),
    "speedup": (("metric", "a", "threads", "at_least"), ()),
    "growth": (("metric", "a", "at_most"), ()),
    "bound": (("metric", "a", "direction"), ("value", "value_why", "than", "at", "per")),
    "no_worse": (("metric", "a", "b", "margin", "margin_why"), ("direction", "at", "when", "per")),
    "time_to": (("metric", "a", "b", "at_least"), ("direction", "at_least_why", "margin", "margin_why")),
    "extreme": (("metric", "a", "direction", "on_set"), ()),
    "correlation": (("metric", "a", "against", "value", "value_why"), ()),
}
_ID_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-")


def _integer(check: _File, where: str, value, *, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        check.fail(where, f"expected an integer ≥ {least}, got {_show(value)}")
    return value


def _selector(check: _File, where: str, value) -> Selector:
    """An algorithm name, or {algorithm: name, params: {k: v}}."""
    if isinstance(value, str):
        return Selector(_text(check, where, value))
    if not isinstance(value, dict):
        check.fail(where, f"expected an algorithm name or {{algorithm: name, params: {{k: v}}}}, got {_show(value)}")
    value = _mapping(check, where, value, ("algorithm", "params"), ("algorithm",))
    params = _mapping(check, f"{where}.params", value.get("params") or {})
    for key, item in params.items():
        if not isinstance(key, str) or not isinstance(item, (str, int, float, bool)):
            check.fail(f"{where}.params", f"expected names with a number, text or true/false each, "
                                          f"got {key!r}: {_show(item)}")
    return Selector(_text(check, f"{where}.algorithm", value["algorithm"]), dict(params))


def _metric(check: _File, where: str, value, allowed=tuple(MEASURES)) -> str:
    """A measure's name (kernelbench.measures), e.g. test_error or counter:merge_frequency."""
    metric = _text(check, where, value)
    try:
        measure(metric, allowed)
    except ValueError as why:
        check.fail(where, str(why))
    return metric


def _claim_metric(check: _File, where: str, value) -> str:
    return _metric(check, where, value, CLAIM_MEASURES)


def _claim_at(check: _File, where: str, value) -> str:
    """final | seconds:<s> (s > 0) | seconds:<algorithm> | horizon:<s> | horizon:<algorithm>."""
    text = _text(check, where, value)
    kind, _, limit = text.partition(":")
    if text == "final" or (kind in ("seconds", "horizon") and limit.strip()):
        try:
            if not float(limit) > 0:
                check.fail(where, f"expected seconds above 0, got {limit!r}")
        except ValueError:          # an algorithm's name: within that algorithm's mean training time
            pass
        return text
    check.fail(where, f"expected final, seconds:<s>, seconds:<algorithm>, horizon:<s> or horizon:<algorithm>, "
                      f"got {_show(value)}")


def _claim_test(check: _File, where: str, value) -> ClaimTest:
    value = _mapping(check, where, value)
    kind = value.get("kind")
    if kind not in _TEST_KEYS:
        check.fail(f"{where}.kind", f"expected one of {', '.join(CLAIM_TESTS)}, got {_show(kind)}")
    required, optional = _TEST_KEYS[kind]
    allowed = ("kind", *required, *optional)
    unknown = [k for k in value if k not in allowed]
    if unknown:
        check.fail(where, f"{unknown[0]!r} is not a key of a {kind} test; its keys are {', '.join(allowed)}")
    missing = [k for k in required if k not in value]
    if missing:
        check.fail(where, f"a {kind} test needs {', '.join(missing)}")
    values = {"kind": kind, "metric": _claim_metric(check, f"{where}.metric", value["metric"]),
              "a": _selector(check, f"{where}.a", value["a"])}
    if "b" in value:
        others = value["b"] if isinstance(value["b"], list) else [value["b"]]
        if not others:
            check.fail(f"{where}.b", "expected at least one method to compare with")
        values["b"] = tuple(_selector(check, f"{where}.b[{i}]", x) for i, x in enumerate(others))
    if "direction" in value:
        if value["direction"] not in DIRECTIONS:
            check.fail(f"{where}.direction", f"expected lower or higher, got {_show(value['direction'])}")
        values["direction"] = value["direction"]
    elif kind in ("no_worse", "time_to"):       # which way is better: the measure's own, when it has one
        values["direction"] = measure(values["metric"])[0].better
        if values["direction"] is None:
            check.fail(where, f"a {kind} test on {values['metric']} needs direction: which way is better")
    if value.get("at") is not None:
        values["at"] = _claim_at(check, f"{where}.at", value["at"])
    if "when" in value:
        if value["when"] not in QUANTIFIERS or not values.get("at", "").startswith("horizon:"):
            check.fail(f"{where}.when", f"expected all or most, with at: horizon:…; got {_show(value['when'])}"
                                        f" with at: {values.get('at', 'final')}")
        values["when"] = value["when"]
    if value.get("per") is not None:
        if value["per"] != "n_train":
            check.fail(f"{where}.per", f"expected n_train or null, got {_show(value['per'])}")
        values["per"] = "n_train"
    for key in ("margin", "at_least", "at_most"):
        if key == "margin" and kind == "no_worse" and value.get(key) == "sd":
            values[key] = "sd"
        elif key in value:
            number = _number(check, f"{where}.{key}", value[key])
            if number < 0 or (key != "margin" and number == 0):
                check.fail(f"{where}.{key}", f"expected a number above 0, got {_show(value[key])}")
            values[key] = number
    for key in ("margin_why", "at_least_why"):
        if key in value:
            values[key] = _text(check, f"{where}.{key}", value[key])
    if "margin" in value and "margin_why" not in value:
        check.fail(where, f"a {kind} test with a margin needs margin_why: where the margin comes from")
    if kind == "extreme":
        values["on_set"] = _text(check, f"{where}.on_set", value["on_set"])
    if kind == "correlation":
        values["against"] = _claim_metric(check, f"{where}.against", value["against"])
        values["value"] = _number(check, f"{where}.value", value["value"])
        if not -1 <= values["value"] <= 1:
            check.fail(f"{where}.value", f"expected a rank correlation in [-1, 1], got {_show(value['value'])}")
        values["value_why"] = _text(check, f"{where}.value_why", value["value_why"])
    if kind == "bound":
        if ("value" in value) == ("than" in value):
            check.fail(where, "a bound test needs exactly one of value (a stated number, with value_why) "
                              "and than (another metric of the same runs)")
        if "value" in value:
            values["value"] = _number(check, f"{where}.value", value["value"])
            if "value_why" not in value:
                check.fail(where, "a bound test with a value needs value_why: where the number comes from")
            values["value_why"] = _text(check, f"{where}.value_why", value["value_why"])
        else:
            if "value_why" in value:
                check.fail(f"{where}.value_why", "value_why goes with value, not with than")
            values["than"] = _claim_metric(check, f"{where}.than", value["than"])
            if values["than"] == values["metric"]:
                check.fail(f"{where}.than", f"compares {values['metric']} with itself; name another metric")
    if "threads" in value:
        threads = _list(check, f"{where}.threads", value["threads"])
        threads = tuple(_integer(check, f"{where}.threads[{i}]", t, least=1) for i, t in enumerate(threads))
        if len(threads) < 2 or len(set(threads)) != len(threads):
            check.fail(f"{where}.threads", f"expected two or more different thread counts (the first the base), "
                                           f"got {list(threads)}")
        values["threads"] = threads
    return ClaimTest(**values)


def _claim_place(check: _File, where: str, claim: dict, sections: dict, defects: dict) -> dict:
    """The claim's `reads` (said as its quote says it), `section` (one of the paper's) and `sentence`."""
    values = {}
    if claim.get("reads") is not None:
        values["reads"] = _text(check, f"{where}.reads", claim["reads"])
        if not reads_as_quote(claim["quote"], values["reads"], defects):
            check.fail(f"{where}.reads", "does not say what the quote says (equal but for spaces, once the "
                                         "file's extraction_defects are repaired in the quote)")
    values["section"] = _text(check, f"{where}.section", claim["section"])
    if values["section"] not in sections:
        check.fail(f"{where}.section", f"{values['section']!r} is not one of the file's sections "
                                       f"({', '.join(sections) or 'none'})")
    values["sentence"] = _integer(check, f"{where}.sentence", claim["sentence"], least=1)
    return values


def _claim(check: _File, paper_id: str, index: int, claim, sections: dict, defects: dict) -> Claim:
    where = f"claims[{index}]"
    if isinstance(claim, dict) and isinstance(claim.get("id"), str):
        where += f" ({claim['id']})"
    if isinstance(claim, dict) and True in claim and "on" not in claim:
        # YAML 1.1 (PyYAML's safe loader) reads the plain key `on` as the boolean true
        claim = {("on" if k is True else k): v for k, v in claim.items()}
    claim = _mapping(check, where, claim, tuple(_CLAIM_KEYS), [k for k, required in _CLAIM_KEYS.items() if required])
    claim_id = _text(check, f"{where}.id", claim["id"])
    if not set(claim_id) <= _ID_CHARS:
        check.fail(f"{where}.id", f"expected kebab-case (lower-case letters, digits and -), got {claim_id!r}")
    values = {"id": claim_id, "where": _text(check, f"{where}.where", claim["where"]),
              "line": _integer(check, f"{where}.line", claim["line"], least=1),
              "quote": _text(check, f"{where}.quote", claim["quote"]),
              **_claim_place(check, where, claim, sections, defects)}
    on = _list(check, f"{where}.on", claim["on"])
    values["on"] = tuple(_text(check, f"{where}.on[{i}]", name) for i, name in enumerate(on))
    if len(set(values["on"])) != len(values["on"]):
        check.fail(f"{where}.on", f"names a set twice: {list(values['on'])}")
    if claim.get("quantifier") is not None:
        if claim["quantifier"] not in QUANTIFIERS:
            check.fail(f"{where}.quantifier", f"expected all or most, got {_show(claim['quantifier'])}")
        values["quantifier"] = claim["quantifier"]
    if claim.get("figure") is not None:
        values["figure"] = _text(check, f"{where}.figure", claim["figure"])
    for key, read in (("stand_in", _text), ("floor", _number)):
        named = _mapping(check, f"{where}.{key}", claim.get(key) or {})
        for name, item in named.items():
            if name not in values["on"]:
                check.fail(f"{where}.{key}", f"{name!r} is not one of the claim's sets (on: "
                                             f"{', '.join(values['on']) or 'none'})")
            read(check, f"{where}.{key}.{name}", item)
        values[key] = {name: (float(item) if key == "floor" else item) for name, item in named.items()}
    if claim.get("needs") is not None:
        values["needs"] = _text(check, f"{where}.needs", claim["needs"])
    if claim.get("scale") is not None:
        scale = _mapping(check, f"{where}.scale", claim["scale"], ("rows", "why"), ("rows", "why"))
        values["scale_rows"] = _integer(check, f"{where}.scale.rows", scale["rows"], least=1)
        values["scale_why"] = _text(check, f"{where}.scale.why", scale["why"])
    if claim.get("test") is not None:
        values["test"] = _claim_test(check, f"{where}.test", claim["test"])
    elif values.get("needs") is None:
        check.fail(where, "missing test; a claim without a test must say what testing it needs (needs: ...)")
    if values.get("test") is not None and values.get("needs") is None and not values["on"]:
        check.fail(f"{where}.on", "expected at least one set to test the claim on")
    test = values.get("test")
    if test is not None and test.kind in ACROSS_SETS and len(values["on"]) < (2 if test.kind == "extreme" else 3):
        check.fail(f"{where}.on", f"{'an' if test.kind == 'extreme' else 'a'} {test.kind} test compares sets: "
                                  f"name {2 if test.kind == 'extreme' else 3} or more")
    if test is not None and test.on_set is not None and test.on_set not in values["on"]:
        check.fail(f"{where}.test.on_set", f"{test.on_set!r} is not one of the claim's sets (on: {', '.join(values['on'])})")
    return Claim(paper=paper_id, **values)
