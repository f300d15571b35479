"""A paper file's claims: the conclusions the paper draws from its experiments, each with the runs it
compares (`Selector`) and its operational test (`ClaimTest`), declared as the file writes them
(kernelbench/schema) and read with the rules that tie their fields together."""
from __future__ import annotations

from dataclasses import dataclass

from kernelbench.measures import CLAIM_MEASURES, measure
from kernelbench.papers.kinds import MARGIN, NUMBER, PARAMS, TEXT, TIME_POINT, metric_among
from kernelbench.papers.quotes import reads_as_quote
from kernelbench.schema import (Count, Items, Named, Number, Text, Words, fail, field, read_object, read_section,
                                section, show)

TEST_KINDS = """\
The kinds of a claim's test (`test.kind`) and what each compares:
`order`: a's mean lies below (direction lower) or above (higher) every b's mean;
`similar`: |mean a − mean b| ≤ margin for every b (margin_why says where the margin comes from);
`ratio`: mean b / mean a ≥ at_least for every b (a is faster, or smaller, by that factor);
`speedup`: time at threads[0] / time at k ≥ at_least · k for every other k of `threads`;
`growth`: the log-log slope of the metric against the training size is ≤ at_most;
`bound`: a's mean lies below (direction lower) or above (higher) a stated `value` (value_why says where
the number comes from), or the mean of another metric (`than`) of the same runs;
`no_worse`: a is no worse than every b by more than `margin` (direction: which way is better), a one-sided
claim such as "no cost in accuracy"; margin `sd` is one standard deviation of the trials, the yardstick of
a paper that calls differences below it no difference;
`time_to`: the time a needs to reach every b's final value (per trial, from its curve; less a `margin` on
the worse side, say to a "satisfactory" value) is at least `at_least` times shorter than b's whole training
time: a speed ratio at equal accuracy; or, with `value` instead, shorter than `value` seconds (value_why
says where the number comes from), as in "satisfactory in less than 5 minutes".
Two compare the claim's sets, each set's mean of a's runs one point:
`extreme`: the set `on_set` has the largest (direction higher) or smallest (lower) mean;
`correlation`: Spearman's rank correlation of the metric with `against` over the sets ≥ `value`."""
CLAIM_TESTS = ("order", "similar", "ratio", "speedup", "growth", "bound", "no_worse", "time_to", "extreme",
               "correlation")
ACROSS_SETS = ("extreme", "correlation")
QUANTIFIERS = ("all", "most")
DIRECTIONS = ("lower", "higher")
# Per test kind: its required keys, then the optional ones (besides `kind`)
TEST_KEYS = {
    "order": (("metric", "a", "b", "direction"), ("at", "when", "per")),
    "similar": (("metric", "a", "b", "margin", "margin_why"), ("at", "when", "per")),
    "ratio": (("metric", "a", "b", "at_least"), ("at_least_why", "per")),
    "speedup": (("metric", "a", "threads", "at_least"), ()),
    "growth": (("metric", "a", "at_most"), ()),
    "bound": (("metric", "a", "direction"), ("value", "value_why", "than", "at", "per")),
    "no_worse": (("metric", "a", "b", "margin", "margin_why"), ("direction", "at", "when", "per")),
    "time_to": (("metric", "a", "b"), ("at_least", "value", "value_why", "direction", "at_least_why", "margin",
                                       "margin_why")),
    "extreme": (("metric", "a", "direction", "on_set"), ()),
    "correlation": (("metric", "a", "against", "value", "value_why"), ()),
}
_ABOVE_ZERO = Number(0, None, "expected a number above 0, got {}", open_low=True)
_CLAIM_METRIC = metric_among(CLAIM_MEASURES)


@section
class Selector:
    """The runs of one compared method: an algorithm, and the params its rows must carry."""
    algorithm: str = field(None, "our algorithm name", TEXT, required=True, mandatory=True)
    params: dict = field({}, "the params its rows must carry", PARAMS)

    def __hash__(self):                 # a key of the report's means per compared method
        return hash((self.algorithm, tuple(sorted((k, repr(v)) for k, v in self.params.items()))))

    def __str__(self) -> str:
        if not self.params:
            return self.algorithm
        return f"{self.algorithm} ({', '.join(f'{k}={v}' for k, v in self.params.items())})"


@dataclass(frozen=True)
class Compared:
    """The runs of a compared method: an algorithm's name alone, or {algorithm, params}."""

    def read(self, value, path: str) -> Selector:
        if isinstance(value, str):
            return Selector(TEXT.read(value, path))
        if not isinstance(value, dict):
            fail(path, f"expected an algorithm name or {{algorithm: name, params: {{k: v}}}}, got {show(value)}")
        return read_object(Selector, value, path)

    def describe(self) -> str:
        return "an algorithm name, or {algorithm: name, params: {param: value}}"


@section
class ClaimTest:
    """A claim's operational test, stated before any run (TEST_KINDS says what each kind compares)."""
    kind: str = field(None, "what the test compares (below)", Words(CLAIM_TESTS), shown="required", required=True)
    metric: str = field(None, "the measure compared", _CLAIM_METRIC, shown="required", required=True)
    a: Selector = field(None, "the method the claim is about", Compared(), shown="required", required=True)
    b: tuple = field((), "the methods it is compared with (order, similar, ratio, no_worse, time_to)",
                     Items(Compared(), least=1, lone=True))
    direction: str | None = field(None, "order, bound, no_worse, time_to (which way is better; no_worse and "
                                        "time_to: the measure's own when not given), extreme", Words(DIRECTIONS))
    at: str = field("final", "order, similar, no_worse, bound: the time point (horizon: several time points up "
                             "to it)", TIME_POINT)
    when: str = field("all", "with at horizon: the share of its time points the test must hold at",
                      Words(QUANTIFIERS))
    per: str | None = field(None, "order, similar, ratio: n_train (at every training size)", Words(("n_train",)))
    margin: float | str | None = field(None, "similar, no_worse, time_to", MARGIN)
    margin_why: str = field("", "similar, no_worse, time_to: where the margin comes from", TEXT)
    at_least: float | None = field(None, "ratio, speedup, time_to: the factor", _ABOVE_ZERO)
    at_least_why: str = field("", "ratio, time_to: why that factor (the word \"much\" and its reading)", TEXT)
    threads: tuple = field((), "speedup: the thread counts, the first the base",
                           Items(Count(1, "a thread count"), least=2, distinct=True))
    at_most: float | None = field(None, "growth: the largest slope", _ABOVE_ZERO)
    value: float | None = field(None, "bound: the stated number a's mean is compared with; correlation: the "
                                      "least rank correlation", NUMBER)
    value_why: str = field("", "bound, correlation: where that number comes from", TEXT)
    than: str | None = field(None, "bound: instead of a value, another metric of the same runs", _CLAIM_METRIC)
    on_set: str | None = field(None, "extreme: the set the extreme must be on", TEXT)
    against: str | None = field(None, "correlation: the metric the test's metric is ranked against", _CLAIM_METRIC)


@section
class ClaimScale:
    """The size of data a claim speaks of: smaller runs do not test it."""
    rows: int = field(None, "training rows", Count(1, "a positive integer"), required=True, mandatory=True)
    why: str = field(None, "the words that say so", TEXT, required=True, mandatory=True)


class Quoted:
    """A sentence quoted from the paper (`quote`, `reads`, `section`, `sentence`): how a reader reads it
    and finds it."""

    @property
    def readable(self) -> str:
        """The quote as a reader reads it."""
        return self.reads if self.reads is not None else " ".join(self.quote.split())

    @property
    def locator(self) -> str:
        """Where the quote is, as a reader finds it: "§6.2, sentence 3"."""
        return f"{self.section}, sentence {self.sentence}"


@section
class Claim(Quoted):
    """A conclusion the paper draws from an experiment, where it says so, and how it is tested."""
    paper: str = field(None, "the paper's id", key=False, required=True)
    id: str = field(None, "unique within the paper", Text(None, "kebab-case (lower-case letters, digits and -)",
                                                          r"[a-z0-9-]+\Z"), required=True, mandatory=True)
    where: str = field(None, "the table, figure or section it comes from", TEXT, required=True, mandatory=True)
    line: int = field(None, "1-based line of the paper's text file where the quote starts",
                      Count(1, "a positive integer"), required=True, mandatory=True)
    quote: str = field(None, "verbatim (whitespace-normalised) from the paper's text", TEXT, required=True,
                       mandatory=True)
    on: tuple = field(None, "our registry datasets the test runs on", Items(TEXT, distinct=True), required=True,
                      mandatory=True)
    quantifier: str = field("all", "most: more than half of the sets tested", Words(QUANTIFIERS))
    figure: str | None = field(None, "only runs tagged with this figure", TEXT)
    stand_in: dict = field({}, "why a set of `on` stands in for the paper's data", Named(TEXT, "set"))
    floor: dict = field({}, "the constant classifier's test error on a set of `on`, %", Named(NUMBER, "set"))
    needs: str | None = field(None, "not testable here: what is missing (then `test` may be left out)", TEXT)
    test: ClaimTest | None = field(None, "how the claim is tested", ClaimTest)
    scale_rows: int | None = field(None, "the training rows of `scale`", key=False)
    scale_why: str = field("", "the words of `scale`", key=False)
    scale = field(None, "the claim speaks of data this large: smaller runs do not test it", ClaimScale)
    reads: str | None = field(None, "the quote as a reader reads it (spaces, symbols repaired), when the verbatim "
                                    "one is not readable: it must say what the quote says once the file's "
                                    "extraction_defects are repaired", TEXT)
    section: str | None = field(None, "the label of the paper's `sections` the quote is in, e.g. \"§6.2\"", TEXT,
                                mandatory=True)
    sentence: int | None = field(None, "the quote's sentence in that section, counted from its heading "
                                       "(sentence_number)", Count(1, "a positive integer"), mandatory=True)


def read_claim_test(raw, path: str) -> ClaimTest:
    """A claim's test: the keys of its kind, and the rules that tie them together."""
    if not isinstance(raw, dict):
        fail(path, f"expected a mapping with kind ({', '.join(CLAIM_TESTS)}) and that kind's keys, got {show(raw)}")
    kind = ClaimTest.declared["kind"].kind.read(raw.get("kind"), f"{path}.kind")
    required, optional = TEST_KEYS[kind]
    values = read_section(ClaimTest, raw, path, ("kind", *required, *optional))
    given = {key for key, value in raw.items() if value is not None}
    missing = [key for key in required if key not in given]
    if missing:
        fail(path, f"a {kind} test needs {', '.join(missing)}")
    if values["direction"] is None and kind in ("no_worse", "time_to"):   # which way is better: the measure's own
        values["direction"] = measure(values["metric"])[0].better
        if values["direction"] is None:
            fail(path, f"a {kind} test on {values['metric']} needs direction: which way is better")
    if "when" in given and not values["at"].startswith("horizon:"):
        fail(f"{path}.when", f"expected all or most, with at: horizon:…; got {show(raw['when'])} "
                             f"with at: {values['at']}")
    if values["margin"] == "sd" and kind != "no_worse":
        fail(f"{path}.margin", f"expected a number (sd is a no_worse test's margin), got {show(raw['margin'])}")
    if "margin" in given and "margin_why" not in given:
        fail(path, f"a {kind} test with a margin needs margin_why: where the margin comes from")
    if kind == "correlation" and not -1 <= values["value"] <= 1:
        fail(f"{path}.value", f"expected a rank correlation in [-1, 1], got {show(raw['value'])}")
    if kind == "bound":
        _bound_rules(given, values, path)
    if kind == "time_to":
        _time_to_rules(given, path)
    return ClaimTest(**values)


def _time_to_rules(given: set, path: str):
    """A time_to test bounds the time to the target by b's training time (at_least) or by stated seconds."""
    if ("at_least" in given) == ("value" in given):
        fail(path, "a time_to test needs exactly one of at_least (a factor on b's training time) and value "
                   "(stated seconds, with value_why)")
    if "value" in given and "value_why" not in given:
        fail(path, "a time_to test with a value needs value_why: where the number comes from")


def _bound_rules(given: set, values: dict, path: str):
    """A bound test compares with a stated value (and says where it comes from) or with another metric."""
    if ("value" in given) == ("than" in given):
        fail(path, "a bound test needs exactly one of value (a stated number, with value_why) "
                   "and than (another metric of the same runs)")
    if "value" in given and "value_why" not in given:
        fail(path, "a bound test with a value needs value_why: where the number comes from")
    if "than" in given and "value_why" in given:
        fail(f"{path}.value_why", "value_why goes with value, not with than")
    if values["than"] is not None and values["than"] == values["metric"]:
        fail(f"{path}.than", f"compares {values['metric']} with itself; name another metric")


def claim_path(index: int, raw) -> str:
    """How messages name a claim: its index in the file, and its id when it has one."""
    if isinstance(raw, dict) and isinstance(raw.get("id"), str):
        return f"claims[{index}] ({raw['id']})"
    return f"claims[{index}]"


@section
class SentenceWithoutRow(Quoted):
    """A sentence of the paper's experiments or conclusion that states a finding but has no claim row,
    and why: a referee sees every conclusion either tested or set aside for a stated reason."""
    section: str = field(None, "the label of the paper's `sections` the quote is in", TEXT, required=True,
                         mandatory=True)
    sentence: int = field(None, "the quote's sentence in that section, counted from its heading (sentence_number)",
                          Count(1, "a positive integer"), required=True, mandatory=True)
    quote: str = field(None, "verbatim (whitespace-normalised) from the paper's text", TEXT, required=True,
                       mandatory=True)
    why: str = field(None, "why it has no row: the row whose sentence it restates, or what makes it no finding "
                           "of an experiment", TEXT, required=True, mandatory=True)
    reads: str | None = field(None, "the quote as a reader reads it, when the verbatim one is not readable (as a "
                                    "claim's `reads`)", TEXT)


def read_without_row(raw, path: str, sections: dict, defects: dict) -> SentenceWithoutRow:
    """One sentence without a row, its quote read as a claim's is."""
    values = read_section(SentenceWithoutRow, raw, path)
    _quote_rules(values, path, sections, defects)
    return SentenceWithoutRow(**values)


def _quote_rules(values: dict, path: str, sections: dict, defects: dict):
    """A quote's `reads` says what it says, and its section is one of the file's."""
    if values["reads"] is not None and not reads_as_quote(values["quote"], values["reads"], defects):
        fail(f"{path}.reads", "does not say what the quote says (equal but for spaces, once the file's "
                              "extraction_defects are repaired in the quote)")
    if values["section"] not in sections:
        fail(f"{path}.section", f"{values['section']!r} is not one of the file's sections "
                                f"({', '.join(sections) or 'none'})")


def read_claim(raw, path: str, paper_id: str, sections: dict, defects: dict) -> Claim:
    """One claim of the file with `sections` ({label: heading}) and extraction `defects`."""
    if isinstance(raw, dict) and True in raw and "on" not in raw:
        # YAML 1.1 (PyYAML's safe loader) reads the plain key `on` as the boolean true
        raw = {("on" if k is True else k): v for k, v in raw.items()}
    values = read_section(Claim, raw, path)
    _quote_rules(values, path, sections, defects)
    on = values["on"]
    for key in ("stand_in", "floor"):
        for name in values[key]:
            if name not in on:
                fail(f"{path}.{key}", f"{name!r} is not one of the claim's sets (on: {', '.join(on) or 'none'})")
    if raw.get("scale") is not None:
        scale = read_section(ClaimScale, raw["scale"], f"{path}.scale")
        values.update(scale_rows=scale["rows"], scale_why=scale["why"])
    if raw.get("test") is not None:
        values["test"] = read_claim_test(raw["test"], f"{path}.test")
    elif values["needs"] is None:
        fail(path, "missing test; a claim without a test must say what testing it needs (needs: ...)")
    _sets_rules(values, path)
    return Claim(paper=paper_id, **values)


def _sets_rules(values: dict, path: str):
    """A test needs sets to run on: two or more for a test across them, and its extreme among them."""
    test, on = values.get("test"), values["on"]
    if test is not None and values["needs"] is None and not on:
        fail(f"{path}.on", "expected at least one set to test the claim on")
    if test is not None and test.kind in ACROSS_SETS and len(on) < (2 if test.kind == "extreme" else 3):
        fail(f"{path}.on", f"{'an' if test.kind == 'extreme' else 'a'} {test.kind} test compares sets: "
                           f"name {2 if test.kind == 'extreme' else 3} or more")
    if test is not None and test.on_set is not None and test.on_set not in on:
        fail(f"{path}.test.on_set", f"{test.on_set!r} is not one of the claim's sets (on: {', '.join(on)})")
