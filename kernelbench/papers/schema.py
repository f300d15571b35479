"""A paper file's sections, declared as the file writes them (kernelbench/schema): the paper, its
citation, its sweeps and its published numbers (its claims: claims.py). The objects the report,
the figures and the CLI use are these declarations' dataclasses; the reference page of paper files
is generated from them (`reference_markdown`)."""
from __future__ import annotations

from kernelbench.measures import MEASURES
from kernelbench.papers.claims import TEST_KINDS, Claim, SentenceWithoutRow
from kernelbench.papers.kinds import ANY_TEXT, NUMBER, PARAMS, TEXT, TOLERANCE, metric_among
from kernelbench.schema import Anything, Count, Flag, Items, Named, Words, documented, field, markdown, section

# a swept config key takes any YAML value, as `--set KEY=VALUE` reads one: the config's validation of
# each point judges it
SWEPT_VALUE = Anything("config values (any YAML value)")
BOUNDS = ("max", "min")

FILE_RULES = """\
A paper file is `kernelbench/papers/<id>.yaml`; its `id` is its name and its `figure_prefix` the id and `_`.
A published entry's `needs` and `known_difference` name one of the file's `needs` and `differences` (a
short name, replaced by its text). Every label of `sections` is some claim's or sentence without a row's
`section`; every repair of `extraction_defects` is used by some `reads`; claim ids are unique within the
file, and a sentence without a row is no claim's sentence. A claim with
a test names at least one set in `on`; without a test it says what testing it `needs`."""


@section
class Citation:
    authors: tuple[str, ...] = field(None, "in the paper's order", Items(TEXT, least=1), required=True,
                                     mandatory=True)
    title: str = field(None, "as printed", TEXT, required=True, mandatory=True)
    venue: str = field(None, "the conference or journal", TEXT, required=True, mandatory=True)
    year: int = field(None, "of publication", Count(1, "a year (an integer)"), required=True, mandatory=True)


@section
class Sweep:
    """A panel made by a sweep: the paper's figure (or table), and what `kernelbench sweep` runs for it
    (its configs, `--over` and `--processes`)."""
    figure: str = field(None, "the paper's figure or table", TEXT, required=True, mandatory=True)
    configs: tuple[str, ...] = field(None, "the swept config files, from the repository root (configs/...)",
                                     Items(TEXT, least=1), required=True, mandatory=True)
    over: dict = field(None, "the points, as `--over KEY=V1,V2,...`: in the file's order, the last key varying "
                             "fastest; a key of one value is a plain override, recorded with the point",
                       Named(Items(SWEPT_VALUE, least=1), "dotted config key"), required=True, mandatory=True)
    processes: bool = field(False, "each point its own process, as `--processes` (a panel that reads each "
                                   "point's own peak memory)", Flag())


@section
class Published:
    """One published value and which of our runs it is compared with."""
    paper: str = field(None, "the paper's id", key=False, required=True)
    where: str = field(None, "the table, figure or section it comes from", TEXT, required=True, mandatory=True)
    dataset: str = field(None, "our registry name", TEXT, required=True, mandatory=True)
    algorithm: str = field(None, "our algorithm name", TEXT, required=True, mandatory=True)
    metric: str = field(None, "the measure the value is of (also improvement_vs_gss:<merge>, "
                              "at_seconds:<error>:<s>)", metric_among(tuple(MEASURES)), required=True, mandatory=True)
    value: float = field(None, "the published number", NUMBER, required=True, mandatory=True)
    std: float | None = field(None, "its published standard deviation", NUMBER)
    params: dict = field({}, "the entry applies to rows with these params", PARAMS)
    note: str = field("", "shown beside the row", ANY_TEXT)
    figure: str | None = field(None, "the runs' tags.figure, when the entry is about one figure's runs", TEXT)
    panel: str | None = field(None, "the runs' tags.panel, when one figure has two panels on one dataset", TEXT)
    needs: str = field("", "a short name of the file's `needs`: not reproducible here, and what it needs")
    known_difference: str = field("", "a short name of the file's `differences`: a known explanation, shown beside "
                                      "the row only when it differs, never the verdict itself")
    stand_in: str = field("", "our dataset stands in for the paper's: why (the verdict says so)", TEXT)
    tolerance: float | str | None = field("default", "reproduced when |ours − value| ≤ this (default: the report's "
                                                     "default for the metric; null: not judged, e.g. timings)",
                                          TOLERANCE)
    bound: str | None = field(None, "max: the claim is ours ≤ value (+ tolerance); min: ours ≥ value", Words(BOUNDS))


@section
class Paper:
    id: str = field(None, "the file's name, e.g. dai2014 (configs name it in `tags.paper`)", TEXT, required=True,
                    mandatory=True)
    name: str = field(None, "how the report heads its section, e.g. \"Dai et al. 2014 (DSG)\"", TEXT,
                      required=True, mandatory=True)
    citation: Citation = field(None, "the paper's authors, title, venue and year", Citation, required=True,
                               mandatory=True)
    text: str = field(None, "the file of the paper's plain text under ../shared/papers", TEXT, required=True,
                      mandatory=True)
    figure_prefix: str = field(None, "the id and \"_\": the figures drawn for the paper are registered under it "
                                     "(kernelbench.figures)", TEXT, required=True, mandatory=True)
    sweeps: tuple[Sweep, ...] = field((), "the panels made by a sweep (`kernelbench sweep`), not by one config "
                                          "(they vary what a config holds fixed)", Items(Sweep), mandatory=True)
    not_tabulated: str | None = field(None, "what the paper shows without a number to compare against", TEXT,
                                      mandatory=True)
    needs = field({}, "short names for what entries that are not reproducible here would take",
                  Named(TEXT, "short name"))
    differences = field({}, "short names for a known explanation of why ours may differ from published numbers "
                            "(text, with the measurement)", Named(TEXT, "short name"))
    published: tuple[Published, ...] = field((), "every published number, one mapping per entry", Items(Published),
                                              mandatory=True)
    claims: tuple[Claim, ...] = field((), "the paper's conclusions drawn from its experiments (the report computes "
                                          "each claim's verdict from the runs: kernelbench.report.verdicts)",
                                      Items(Claim))
    without_row: tuple[SentenceWithoutRow, ...] = field((), "every sentence of the experiments and the conclusion "
                                                            "that states a finding and has no claim, with why",
                                                        Items(SentenceWithoutRow))
    sections: dict = field({}, "where the claims sit: their heading, or their paragraph's first words, verbatim "
                               "from the text and found there once, e.g. {\"§6.2\": \"6.2 Experimental Results\"}",
                           Named(TEXT, "label"))
    extraction_defects: dict = field({}, "what the text extraction garbled in the claims' quotes (lost ligatures, "
                                         "\"15:3%\" for \"15.3%\"): the text as read", Named(ANY_TEXT, "verbatim"))


def reference_markdown() -> str:
    """The documentation site's reference of paper files: every key, its default and meaning, and the
    rules that tie keys together."""
    return markdown(documented(Paper), f"{FILE_RULES}\n\n{TEST_KINDS}")
