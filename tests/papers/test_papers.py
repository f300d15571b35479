"""kernelbench.papers: one YAML file per paper (name, citation, text, figures, sweeps, published
values), read and checked by the package; the report and `reproduce` take their papers from it."""
import ast
import importlib
import pkgutil
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from kernelbench import papers
from kernelbench.data.registry import dataset_names
from kernelbench.errors import ConfigError
from kernelbench.estimators import algorithms
from kernelbench.measures import CLAIM_MEASURES, MEASURES, READS, measure
from kernelbench.papers import (PAPERS, SENTENCE_END, Claim, ClaimTest, Published, Selector, get_paper, load_paper,
                                paper_ids, reads_as_quote, sentence_number)

ROOT = Path(__file__).resolve().parents[2]
FOLDER = Path(papers.__file__).parent
SHARED_PAPERS = ROOT.parent / "shared" / "papers"
QUOTE_LINES = 3         # how far from its `line` a claim's quote may start
CANONICAL = ("geng2019", "dai2014", "gu2018", "li2016", "glasmachers2019")
ENTRIES = [e for paper in PAPERS.values() for e in paper.published]


def entry_id(e: Published) -> str:
    return f"{e.paper}:{e.where}:{e.dataset}:{e.algorithm}:{e.metric}"


@pytest.mark.parametrize("path", sorted(FOLDER.glob("*.yaml")), ids=lambda p: p.name)
def test_every_paper_file_loads_and_its_id_is_its_name(path):
    paper = load_paper(path)
    assert paper.id == path.stem and paper.figure_prefix == f"{path.stem}_"
    assert paper.name and paper.citation.title and paper.citation.authors and 1990 < paper.citation.year < 2100
    assert all(e.paper == paper.id for e in paper.published)
    assert paper.published or paper.not_tabulated, "a paper with no value to compare says why"


def test_the_papers_in_their_canonical_order():
    assert paper_ids() == CANONICAL
    assert tuple(PAPERS) == CANONICAL == tuple(p.id for p in PAPERS.values())
    assert sorted(p.stem for p in FOLDER.glob("*.yaml")) == sorted(CANONICAL)
    assert get_paper("li2016") is PAPERS["li2016"]
    with pytest.raises(ConfigError, match="unknown paper 'dai2015'; the papers are geng2019, dai2014, gu2018"):
        get_paper("dai2015")


def test_every_published_metric_is_a_measure_and_an_unknown_one_names_the_nearest():
    for e in ENTRIES:
        assert measure(e.metric)[0].name == e.metric.partition(":")[0], entry_id(e)
    for bad in ("test_eror", "counter:", "at_seconds:train_error", "at_seconds:objective:10",
                "at_seconds:test_error:soon", "improvement_vs_gss:", "test_error:x"):
        with pytest.raises(ValueError, match="unknown metric"):
            measure(bad)
    with pytest.raises(ValueError, match=r"unknown metric 'test_eror' \(did you mean test_error\?\); the metrics are"):
        measure("test_eror")
    assert measure("improvement_vs_gss:lookup-wd") == (MEASURES["improvement_vs_gss"], "lookup-wd")


def test_an_entry_without_needs_names_a_registered_algorithm_and_dataset():
    known_algorithms, known_datasets = algorithms(), set(dataset_names())
    for e in ENTRIES:
        if not e.needs:
            assert e.algorithm in known_algorithms, entry_id(e)
            assert e.dataset in known_datasets, entry_id(e)
            # every parameter the entry filters on is one the algorithm takes (merge, budget, ...)
            assert set(e.params) <= set(known_algorithms[e.algorithm].parameters), entry_id(e)
    assert any(e.needs and e.algorithm not in known_algorithms for e in ENTRIES)   # the neural nets


def test_entries_are_unique_and_bounds_and_tolerances_are_sane():
    seen = set()
    for e in ENTRIES:
        key = (e.paper, e.where, e.dataset, e.algorithm, e.metric, tuple(sorted(e.params.items())), e.figure, e.panel)
        assert key not in seen, entry_id(e)
        seen.add(key)
        assert e.bound in (None, "max", "min")
        assert e.tolerance in (None, "default") or e.tolerance >= 0
        assert e.std is None or e.std >= 0


def test_every_paper_has_figures_under_its_prefix_and_the_configs_its_sweeps_name_exist():
    import kernelbench.figures
    from kernelbench.figures import FIGURES

    for module in pkgutil.iter_modules(kernelbench.figures.__path__):      # each registers its figures
        importlib.import_module(f"kernelbench.figures.{module.name}")
    for paper in PAPERS.values():
        assert any(name.startswith(paper.figure_prefix) for name in FIGURES), paper.id
        for sweep in paper.sweeps:          # the configs a sweep names are there
            assert sweep.configs and all((ROOT / f).is_file() for f in sweep.configs), sweep
            # its runs carry its own figure, never pooled with the fixed-size runs of the configs
            assert sweep.over.get("tags.figure") == (sweep.figure,), sweep


@pytest.mark.skipif(not SHARED_PAPERS.is_dir(), reason="no ../shared/papers next to the repository")
def test_every_paper_text_exists():
    for paper in PAPERS.values():
        assert (SHARED_PAPERS / paper.text).is_file(), paper.text


GOOD = """id: some2020
name: Someone et al. 2020 (X)
citation: {authors: [A. Someone], title: A title, venue: A venue, year: 2020}
text: 999_x.txt
figure_prefix: some2020_
sweeps: [{figure: fig1, configs: [configs/x.yaml], over: {trials: [2], dataset.subsample: [1000, 2000]}}]
not_tabulated: null
needs:
  nn: a neural net
differences:
  split: "another split, measured"
published:
  - {where: Table 1, dataset: a9a, algorithm: dsg, known_difference: split, metric: test_error, value: 15.3}
  - {where: Table 1, dataset: a9a, algorithm: dsg, params: {loss: hinge}, metric: test_error, value: 15,
     std: 0.2, figure: table1, panel: "(1)", tolerance: null, bound: max, needs: nn, note: a note,
     stand_in: a stand-in}
claims:
  - id: cdsg-beats-dsg
    where: §5.1, Fig. 1
    line: 412
    section: "§5.1"
    sentence: 3
    quote: "CDSGoutperformsDSGby15:3%"
    reads: "CDSG outperforms DSG by 15.3 %"
    on: [a9a, covtype_subset20k, ijcnn1]
    quantifier: most
    figure: fig1
    stand_in: {covtype_subset20k: "a 20k-row subset"}
    floor: {ijcnn1: 9.5}
    test: {kind: order, metric: objective, a: cdsg, b: [dsg, {algorithm: udsg, params: {loss: hinge}}],
           direction: lower, at: "seconds:libsvm", per: n_train}
  - id: as-accurate
    where: §5.2
    line: 420
    section: "§5.2"
    sentence: 1
    quote: "as accurate as"
    on: [a9a]
    test: {kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: "Table 2 stds"}
  - id: needs-a-net
    where: §5.3
    line: 430
    section: "§5.2"
    sentence: 2
    quote: "comparable with neural nets"
    on: []
    needs: a neural-net comparator
extraction_defects: {"15:3%": "15.3%"}
sections: {"§5.1": "5.1 MEDIUM-SCALE DATA", "§5.2": "5.2 LARGE-SCALE DATA"}
"""


def write(tmp_path, text):
    path = tmp_path / "some2020.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_well_formed_file_gives_typed_entries(tmp_path):
    paper = load_paper(write(tmp_path, GOOD))
    first, second = paper.published
    assert first == Published("some2020", "Table 1", "a9a", "dsg", "test_error", 15.3,
                              known_difference="another split, measured")
    assert asdict(second) == {"paper": "some2020", "where": "Table 1", "dataset": "a9a", "algorithm": "dsg",
                              "metric": "test_error", "value": 15.0, "std": 0.2, "params": {"loss": "hinge"},
                              "note": "a note", "figure": "table1", "panel": "(1)", "needs": "a neural net",
                              "tolerance": None, "bound": "max", "known_difference": "",
                              "stand_in": "a stand-in"}
    assert isinstance(second.value, float)
    (sweep,) = paper.sweeps
    assert (sweep.configs, sweep.processes) == (("configs/x.yaml",), False)
    assert list(sweep.over.items()) == [("trials", (2,)), ("dataset.subsample", (1000, 2000))]   # the file's order
    with pytest.raises(AttributeError):
        paper.name = "other"                                                  # frozen


def test_claims_are_typed_with_their_test_and_a_paper_without_claims_has_none(tmp_path):
    paper = load_paper(write(tmp_path, GOOD))
    first, similar, needs = paper.claims
    assert first == Claim(
        paper="some2020", id="cdsg-beats-dsg", where="§5.1, Fig. 1", line=412, quote="CDSGoutperformsDSGby15:3%",
        on=("a9a", "covtype_subset20k", "ijcnn1"), quantifier="most", figure="fig1",
        stand_in={"covtype_subset20k": "a 20k-row subset"}, floor={"ijcnn1": 9.5},
        test=ClaimTest("order", "objective", Selector("cdsg"), (Selector("dsg"), Selector("udsg", {"loss": "hinge"})),
                       direction="lower", at="seconds:libsvm", per="n_train"),
        reads="CDSG outperforms DSG by 15.3 %", section="§5.1", sentence=3)
    assert first.locator == "§5.1, sentence 3" and similar.readable == "as accurate as"
    assert paper.sections["§5.2"] == "5.2 LARGE-SCALE DATA" and paper.extraction_defects == {"15:3%": "15.3%"}
    assert similar.quantifier == "all" and similar.test.at == "final" and similar.test.b == (Selector("dsg"),)
    assert similar.test.margin == 1.0 and similar.test.margin_why == "Table 2 stds"
    assert needs.test is None and needs.needs == "a neural-net comparator"
    assert load_paper(write(tmp_path, GOOD[:GOOD.index("claims:")])).claims == ()
    # a one-sided no_worse test whose margin is the trials' standard deviation; a claim's scale
    text = GOOD.replace("    on: [a9a]\n    test: {kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0,",
                        "    on: [a9a]\n    scale: {rows: 1000000, why: huge data}\n"
                        "    test: {kind: no_worse, metric: test_accuracy, a: cdsg, b: dsg, margin: sd,")
    no_worse = load_paper(write(tmp_path, text)).claims[1]
    # which way is better comes from the measure: accuracy, higher
    assert no_worse.test.kind == "no_worse" and no_worse.test.margin == "sd" and no_worse.test.direction == "higher"
    assert (no_worse.scale_rows, no_worse.scale_why) == (1_000_000, "huge data")


def test_every_measure_reads_a_results_column_or_a_counter():
    from kernelbench.results.schema import COLUMNS
    # peak_memory_mb comes from run.json, a column the results frame adds to every run's rows
    for m in MEASURES.values():
        if m.read in ("column", "percent", "accuracy"):
            assert m.source in set(COLUMNS) | {"peak_memory_mb"}, m.name
        assert m.read in READS and m.better in ("lower", "higher", None), m.name
    assert "at_seconds" not in CLAIM_MEASURES and "test_accuracy" in CLAIM_MEASURES


def test_a_claim_names_registered_sets_and_algorithms():
    known_algorithms, known_sets = set(algorithms()), set(dataset_names())
    for paper in PAPERS.values():
        for c in paper.claims:
            assert set(c.on) <= known_sets, (paper.id, c.id, set(c.on) - known_sets)
            if c.test is not None and c.needs is None:
                named = {s.algorithm for s in (c.test.a, *c.test.b)} | (
                    {c.test.at.partition(":")[2]} - {""} if c.test.at.startswith("seconds:") else set())
                named = {n for n in named if not n.replace(".", "", 1).isdigit()}
                assert named <= known_algorithms, (paper.id, c.id, named - known_algorithms)


def _normalised(text: str) -> str:
    return " ".join(text.split())


def test_sentence_number_counts_sentence_ends_from_the_heading():
    text = "1 Intro Fig. B shows e.g. SVM this. Then 2 Results Ours wins.Wesee 15.3 % gains. See Figs. 1a and vs. B. It holds."
    assert sentence_number(text, "2 Results", "Ours wins") == 1
    assert sentence_number(text, "2 Results", "Wesee") == 2                 # a text that lost its spaces
    assert sentence_number(text, "2 Results", "It holds") == 4              # not after Figs. or vs.
    assert sentence_number(text, "1 Intro", "Then") == 2                    # not after Fig. or e.g.
    assert sentence_number(text, "2 Results", "this.") is None              # before the heading
    assert sentence_number(text, "Ours wins", "Ours wins.Wesee") == 1        # a paragraph's first words
    assert sentence_number(text, "3 Conclusion", "It holds") is None


def test_a_readable_quote_differs_from_the_verbatim_one_only_by_spaces_and_declared_repairs():
    defects = {"15:3%": "15.3%", "byxedand": "by fixed and"}
    assert reads_as_quote("Ourrateis15:3%,byxedandjoint", "Our rate is 15.3 %, by fixed and joint", defects)
    assert not reads_as_quote("Ourrateis15:3%", "Our rate is 15.3 %", {})            # an undeclared repair
    assert not reads_as_quote("Ourrateis15:3%", "Our rate is 16.3 %", defects)      # a changed number
    assert not reads_as_quote("Ourrateis15:3%", "Our rate is 15.3 %.", defects)     # an added character


@pytest.mark.skipif(not SHARED_PAPERS.is_dir(), reason="no ../shared/papers next to the repository")
def test_every_claims_sentence_is_counted_from_its_sections_heading_found_once():
    for paper in PAPERS.values():
        text = _normalised((SHARED_PAPERS / paper.text).read_text(encoding="utf-8"))
        for label, heading in paper.sections.items():
            assert text.count(_normalised(heading)) == 1, f"{paper.id}: section {label}: heading {heading!r}"
        for c in paper.claims:
            assert sentence_number(text, paper.sections[c.section], c.quote) == c.sentence, (
                f"{paper.id}: claim {c.id}: not sentence {c.sentence} of {c.section}")
        for s in paper.without_row:
            assert sentence_number(text, paper.sections[s.section], s.quote) == s.sentence, (
                f"{paper.id}: sentence without a row {s.quote[:40]!r}: not sentence {s.sentence} of {s.section}")


# A quote whose words ran together (a word this long) cannot be read as it is
UNREADABLE_WORD = 25


@pytest.mark.skipif(not SHARED_PAPERS.is_dir(), reason="no ../shared/papers next to the repository")
def test_a_quote_is_read_whole_and_readable():
    """No quote stops inside a word or number ("savings of about 44" of "44 %"); one that lost its spaces
    or carries an extraction defect has `reads`."""
    for paper in PAPERS.values():
        text = _normalised((SHARED_PAPERS / paper.text).read_text(encoding="utf-8"))
        for c in paper.claims:
            quote = _normalised(c.quote)
            after = text[text.find(quote) + len(quote):][:1]
            cut = quote[-1].isalnum() and (after.isalnum() or after == "%")
            assert not cut, f"{paper.id}: claim {c.id}: the quote stops before {after!r}"
            garbled = any(d in c.quote for d in paper.extraction_defects) or any(
                len(word) > UNREADABLE_WORD for word in re.findall(r"[A-Za-z]+", c.quote))
            assert c.reads or not garbled, f"{paper.id}: claim {c.id}: an unreadable quote without reads"
            # one sentence or part of one: the report shows it whole
            assert not SENTENCE_END.search(c.readable[:-1]), f"{paper.id}: claim {c.id}: more than one sentence"


@pytest.mark.skipif(not SHARED_PAPERS.is_dir(), reason="no ../shared/papers next to the repository")
def test_every_claims_quote_is_in_the_papers_text_at_its_line():
    """Verbatim (whitespace-normalised, case-sensitive), starting within QUOTE_LINES lines of `line`."""
    for paper in PAPERS.values():
        lines = (SHARED_PAPERS / paper.text).read_text(encoding="utf-8").splitlines()
        for c in paper.claims:
            start = max(0, c.line - 1 - QUOTE_LINES)
            # the quote may run on past the window; it must start inside it
            head = _normalised(" ".join(lines[start:c.line + QUOTE_LINES]))
            text = _normalised(" ".join(lines[start:]))
            at = text.find(_normalised(c.quote))
            assert 0 <= at <= len(head), (
                f"{paper.id}: claim {c.id}: quote not found within {QUOTE_LINES} lines of line {c.line} of "
                f"{paper.text}: {c.quote[:80]!r}")


@pytest.mark.parametrize("old, new, message", [
    ("value: 15.3}", "valu: 15.3}", r"published\[0\] \(a9a, dsg, test_error\)\.valu: unknown key; allowed in .*\(did you mean 'value'\?\)"),
    ("value: 15.3}", "value: high}", r"published\[0\] \(a9a, dsg, test_error\)\.value: expected a number, got the string 'high'"),
    ("value: 15.3}", "value: true}", r"published\[0\] .*\.value: expected a number, got true \(a boolean\)"),
    ("metric: test_error, value: 15.3}", "value: 15.3}", r"published\[0\] \(a9a, dsg\): missing metric"),
    ("std: 0.2", "std: [0.2]", r"published\[1\] \(a9a, dsg, test_error\)\.std: expected a number"),
    ("params: {loss: hinge}", "params: [loss, hinge]", r"published\[1\] .*\.params: expected a mapping"),
    ("params: {loss: hinge}", "params: {loss: [hinge]}", r"published\[1\] .*\.params: expected names with"),
    ("bound: max", "bound: most", r"published\[1\] .*\.bound: expected one of max, min, got the string 'most'"),
    ("tolerance: null", "tolerance: -1", r"published\[1\] .*\.tolerance: expected a number ≥ 0"),
    ("needs: nn", "needs: neural net", r"published\[1\] .*\.needs: expected one of the file's `needs` \(nn\)"),
    ("known_difference: split,", "known_difference: spilt,",
     r"published\[0\] .*\.known_difference: expected one of the file's `differences` \(split\)"),
    ("split: \"another split, measured\"", "split: {kind: protocol}", r"differences\.split: expected non-empty text"),
    ("stand_in: a stand-in", "stand_in: [x]", r"published\[1\] .*\.stand_in: expected non-empty text"),
    # claims: the file, the claim (its index and id) and what is wrong
    ("    quantifier: most\n", "    quantifier: many\n", r"claims\[0\] \(cdsg-beats-dsg\)\.quantifier: expected one of all, most, got the string 'many'"),
    ("    figure: fig1\n    stand", "    figur: fig1\n    stand", r"claims\[0\] \(cdsg-beats-dsg\)\.figur: unknown key; allowed in claims\[0\] \(cdsg-beats-dsg\): .*"
     r"\(did you mean 'figure'\?\)"),
    ("    line: 412\n", "", r"claims\[0\] \(cdsg-beats-dsg\): missing line"),
    ("    line: 412\n", "    line: 0\n", r"claims\[0\] .*\.line: must be >= 1, got 0"),
    # a readable quote says what the verbatim one says: a changed number, or a repair the file does not declare
    ("reads: \"CDSG outperforms DSG by 15.3 %\"", "reads: \"CDSG outperforms DSG by 15.8 %\"",
     r"claims\[0\] .*\.reads: does not say what the quote says"),
    ("reads: \"CDSG outperforms DSG by 15.3 %\"", "reads: \"CDSG outperforms UDSG by 15.3 %\"",
     r"claims\[0\] .*\.reads: does not say what the quote says"),
    ("extraction_defects: {\"15:3%\": \"15.3%\"}", "extraction_defects: {}",
     r"claims\[0\] .*\.reads: does not say what the quote says"),
    ("extraction_defects: {\"15:3%\": \"15.3%\"}", "extraction_defects: {\"15:3%\": \"15.3%\", \"xed\": \"fixed\"}",
     r"extraction_defects: 'xed' is in no quote that has `reads`"),
    ("    section: \"§5.2\"\n    sentence: 1\n", "    section: \"§5.3\"\n    sentence: 1\n",
     r"claims\[1\] \(as-accurate\)\.section: '§5.3' is not one of the file's sections \(§5.1, §5.2\)"),
    ("    sentence: 3\n", "", r"claims\[0\] \(cdsg-beats-dsg\): missing sentence"),
    ("sections: {\"§5.1\": \"5.1 MEDIUM-SCALE DATA\",", "sections: {\"§5\": \"5 EXPERIMENT\", \"§5.1\": \"5.1 MEDIUM-SCALE DATA\",",
     r"sections: '§5' is no claim's or sentence without a row's section"),
    # a sentence without a row: its section declared, its sentence no claim's, listed once, a reason given
    ("extraction_defects:", "without_row: [{section: \"§5.3\", sentence: 4, quote: x, why: y}]\nextraction_defects:",
     r"without_row\[0\]\.section: '§5.3' is not one of the file's sections"),
    ("extraction_defects:", "without_row: [{section: \"§5.1\", sentence: 3, quote: x, why: y}]\nextraction_defects:",
     r"without_row\[0\]: §5.1, sentence 3 has a row \(claim cdsg-beats-dsg\)"),
    ("extraction_defects:", "without_row: [{section: \"§5.1\", sentence: 4, quote: x, why: y}, "
                            "{section: \"§5.1\", sentence: 4, quote: z, why: y}]\nextraction_defects:",
     r"without_row\[1\]: §5.1, sentence 4 is listed twice"),
    ("extraction_defects:", "without_row: [{section: \"§5.1\", sentence: 4, quote: x}]\nextraction_defects:",
     r"without_row\[0\]: missing why"),
    ("extraction_defects:", "without_row: [{section: \"§5.1\", sentence: 4, quote: \"15:3%ofit\", reads: \"16.3 % of it\", "
                            "why: y}]\nextraction_defects:",
     r"without_row\[0\]\.reads: does not say what the quote says"),
    ("id: as-accurate", "id: As_Accurate", r"claims\[1\] \(As_Accurate\)\.id: expected kebab-case"),
    ("id: as-accurate", "id: cdsg-beats-dsg", r"claims\[1\] \(cdsg-beats-dsg\): the id is already taken"),
    ("{covtype_subset20k: \"a 20k-row subset\"}", "{covtype: x}",
     r"claims\[0\] .*\.stand_in: 'covtype' is not one of the claim's sets \(on: a9a, covtype_subset20k, ijcnn1\)"),
    ("{ijcnn1: 9.5}", "{ijcnn1: low}", r"claims\[0\] .*\.floor\.ijcnn1: expected a number, got the string 'low'"),
    ("kind: order", "kind: before", r"claims\[0\] .*\.test\.kind: expected one of order, similar, ratio, speedup, growth"),
    ("direction: lower", "direction: down", r"claims\[0\] .*\.test\.direction: expected one of lower, higher"),
    ("metric: objective", "metric: objectiv", r"claims\[0\] .*\.test\.metric: unknown metric 'objectiv'"),
    ("at: \"seconds:libsvm\"", "at: later", r"claims\[0\] .*\.test\.at: expected final, seconds:<s>, seconds:<algorithm>, horizon:"),
    ("per: n_train}", "per: n_train, when: most}", r"claims\[0\] .*\.test\.when: expected all or most, with at: horizon"),
    ("at: \"seconds:libsvm\"", "at: \"seconds:-3\"", r"claims\[0\] .*\.test\.at: expected seconds above 0"),
    ("per: n_train", "per: n_test", r"claims\[0\] .*\.test\.per: expected one of n_train, got the string 'n_test'"),
    ("{algorithm: udsg, params: {loss: hinge}}", "{algo: udsg}", r"claims\[0\] .*\.test\.b\[1\]\.algo: unknown key; allowed in .*\(did you mean 'algorithm'\?\)"),
    (", margin_why: \"Table 2 stds\"", "", r"claims\[1\] \(as-accurate\)\.test: a similar test needs margin_why"),
    ("margin: 1.0", "margin: 1.0, at_least: 2", r"claims\[1\] .*\.test\.at_least: unknown key; allowed in .*: kind, metric, a, b, margin, margin_why, at, when, per"),
    ("    needs: a neural-net comparator\n", "", r"claims\[2\] \(needs-a-net\): missing test; a claim without a test"),
    ("{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "{kind: bound, metric: test_accuracy, a: cdsg, direction: higher}",
     r"claims\[1\] .*\.test: a bound test needs exactly one of value .* and than"),
    ("{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "{kind: bound, metric: test_accuracy, a: cdsg, direction: higher, value: 80, than: objective}",
     r"claims\[1\] .*\.test: a bound test needs exactly one of value"),
    ("{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "{kind: bound, metric: test_accuracy, a: cdsg, direction: higher, value: 80}",
     r"claims\[1\] .*\.test: a bound test with a value needs value_why"),
    ("{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "{kind: time_to, metric: objective, a: cdsg, b: dsg}",
     r"claims\[1\] .*\.test: a time_to test needs exactly one of at_least .* and value"),
    ("{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "{kind: time_to, metric: objective, a: cdsg, b: dsg, at_least: 2, value: 300, value_why: x}",
     r"claims\[1\] .*\.test: a time_to test needs exactly one of at_least"),
    ("{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "{kind: time_to, metric: objective, a: cdsg, b: dsg, value: 300}",
     r"claims\[1\] .*\.test: a time_to test with a value needs value_why"),
    ("{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "{kind: bound, metric: objective, a: cdsg, direction: lower, than: objective}",
     r"claims\[1\] .*\.test\.than: compares objective with itself"),
    ("    on: [a9a]\n    test: {kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "    on: [a9a]\n    test: {kind: extreme, metric: test_error, a: cdsg, direction: higher, on_set: a9a}",
     r"claims\[1\] .*\.on: an extreme test compares sets: name 2 or more"),
    ("    on: [a9a]\n    test: {kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "    on: [a9a, w8a]\n    test: {kind: extreme, metric: test_error, a: cdsg, direction: higher, on_set: susy}",
     r"claims\[1\] .*\.test\.on_set: 'susy' is not one of the claim's sets \(on: a9a, w8a\)"),
    ("    on: [a9a]\n    test: {kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "    on: [a9a, w8a, susy]\n    test: {kind: correlation, metric: test_error, a: cdsg, against: objective, value: 2, value_why: x}",
     r"claims\[1\] .*\.test\.value: expected a rank correlation in \[-1, 1\], got"),
    ("    on: [a9a]\n    test: {kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "    on: [a9a, w8a]\n    test: {kind: correlation, metric: test_error, a: cdsg, against: objective, value: 0.5, value_why: x}",
     r"claims\[1\] .*\.on: a correlation test compares sets: name 3 or more"),
    ("{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: \"Table 2 stds\"}", "{kind: bound, metric: objective, a: cdsg, direction: lower, than: objectiv}",
     r"claims\[1\] .*\.test\.than: unknown metric 'objectiv'"),
    ("    on: [a9a]\n", "    on: []\n", r"claims\[1\] \(as-accurate\)\.on: expected at least one set"),
    ("margin: 1.0, margin_why", "margin: sdev, margin_why", r"claims\[1\] .*\.test\.margin: expected a number ≥ 0 \(or sd, in a no_worse test\), got the string 'sdev'"),
    ("kind: similar, metric: test_accuracy", "kind: no_worse, metric: 'counter:equal'",
     r"claims\[1\] .*\.test: a no_worse test on counter:equal needs direction: which way is better"),
    ("    on: [a9a]\n", "    on: [a9a]\n    scale: {rows: 1000000}\n", r"claims\[1\] .*\.scale: missing why"),
    ("    on: [a9a]\n", "    on: [a9a]\n    scale: {rows: many, why: huge}\n",
     r"claims\[1\] .*\.scale\.rows: expected a positive integer, got the string 'many'"),
    ("figure: table1", "figure: 1", r"published\[1\] .*\.figure: expected non-empty text, got 1"),
    ("note: a note", "note: [a, note]", r"published\[1\] .*\.note: expected text, got a list"),
    ("  - {where: Table 1, dataset", "  - [where, Table 1]\n  - {where: Table 1, dataset",
     r"published\[0\]: expected a mapping with keys where, .*, got a list"),
    (GOOD[GOOD.index("published:"):], "published: {where: Table 1}\n", r"published: expected a list of mappings, got a mapping"),
    ("year: 2020", "year: '2020'", r"citation\.year: expected a year \(an integer\)"),
    ("title: A title, ", "", r"citation: missing title"),
    ("not_tabulated: null\n", "", r"top level: missing not_tabulated"),
    ("not_tabulated: null\n", "not_tabulated: null\nnot_tabulate: x\n", r"not_tabulate: unknown key; allowed at the top level: .*\(did you mean 'not_tabulated'\?\)"),
    ("figure_prefix: some2020_", "figure_prefix: some2020", r"figure_prefix: expected 'some2020_'"),
    ("id: some2020", "id: other2020", r"id: 'other2020' is not the file's name \('some2020'\)"),
    ("value: 15.3}", "value: 15.3", r"invalid YAML at line \d+"),
])
def test_a_malformed_file_names_itself_the_entry_and_the_problem(tmp_path, old, new, message):
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(ConfigError, match=message) as error:
        load_paper(path)
    assert str(error.value).startswith(f"{path}:")


SWEEP = "{figure: fig1, configs: [configs/x.yaml], over: {trials: [2], dataset.subsample: [1000, 2000]}}"


@pytest.mark.parametrize("sweep, message", [
    (SWEEP.replace("over:", "overs:"), r"\.overs: unknown key; allowed in sweeps\[0\]: figure, configs, over, processes \(did you mean 'over'\?\)"),
    (SWEEP.replace("[configs/x.yaml]", "[]"), r"\.configs: expected at least 1 of"),
    ("{figure: fig1, configs: [configs/x.yaml], over: {}}", r"\.over: expected at least one dotted config key"),
    (SWEEP.replace("[2]", "2"), r"\.over\.trials: expected a list of"),
    (SWEEP.replace("}}", "}, processes: yes please}"), r"\.processes: expected true or false"),
])
def test_a_malformed_sweep_names_its_entry_and_key(tmp_path, sweep, message):
    assert f"sweeps: [{SWEEP}]" in GOOD
    with pytest.raises(ConfigError, match=r"sweeps\[0\]" + message):
        load_paper(write(tmp_path, GOOD.replace(f"sweeps: [{SWEEP}]", f"sweeps: [{sweep}]")))


def test_the_package_sits_below_every_other_layer_and_reads_no_file_at_import():
    """It imports nothing from kernelbench but kernelbench.errors, kernelbench.measures and
    kernelbench.schema (the config layer imports it); the paper files are read on first use of
    PAPERS / get_paper."""
    code = ("import sys, kernelbench.papers as p; "
            "print(sorted(m for m in sys.modules if m.startswith('kernelbench'))); "
            "print(p.load_papers.cache_info().currsize); p.paper_ids(); print(p.load_papers.cache_info().currsize)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    outside = [m for m in ast.literal_eval(out[0]) if m != "kernelbench.papers" and not m.startswith("kernelbench.papers.")]
    assert outside == ["kernelbench", "kernelbench.errors", "kernelbench.measures", "kernelbench.schema",
                       "kernelbench.schema.declare", "kernelbench.schema.kinds", "kernelbench.schema.values"]
    assert out[1] == out[2] == "0"


def test_a_bound_test_reads_its_value_and_why_or_the_other_metric(tmp_path):
    similar = '{kind: similar, metric: test_accuracy, a: cdsg, b: dsg, margin: 1.0, margin_why: "Table 2 stds"}'
    bound = '{kind: bound, metric: "counter%:equal", a: bsgd, direction: higher, value: 50, value_why: "most: above half"}'
    test = load_paper(write(tmp_path, GOOD.replace(similar, bound))).claims[1].test
    assert (test.kind, test.metric, test.direction, test.value, test.value_why, test.than) == (
        "bound", "counter%:equal", "higher", 50.0, "most: above half", None)
    paired = '{kind: bound, metric: "counter:f_wd", a: bsgd, direction: lower, than: "counter:f_gss"}'
    test = load_paper(write(tmp_path, GOOD.replace(similar, paired))).claims[1].test
    assert (test.than, test.value) == ("counter:f_gss", None)
