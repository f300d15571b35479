"""How a paper's verdicts read: the marks of each outcome, the findings written from the verdicts
(whatever outcomes verdicts.py gives, a new one included), the deciding number of a claim, and which
figure a claim sits beside."""
from __future__ import annotations

from kernelbench.papers import Claim, ClaimTest, Selector, get_paper
from kernelbench.report.findings import deciding_number, findings_paragraph
from kernelbench.report.marks import marked, outcome_of
from kernelbench.report.paper_pages import claim_groups
from kernelbench.report.outcomes import ClaimVerdict, SetOutcome

ORDER = ClaimTest("order", "test_error", Selector("dsg"), (Selector("norma"),), direction="lower")


def verdict(claim_id, outcome, sets, *, figure="fig1", quote="DSG beats NORMA"):
    claim = Claim("dai2014", claim_id, "§7", 3, quote, tuple(s.dataset for s in sets), figure=figure, test=ORDER)
    return ClaimVerdict(claim, outcome, "; ".join(f"{s.dataset}: {s.text}" for s in sets) + ". summary", sets)


def test_every_outcome_has_a_symbol_and_keeps_its_words():
    assert marked("holds") == "✔ holds" and marked("does not hold on stand-in data") == "✘ does not hold on stand-in data"
    assert marked("within noise on stand-in data") == "≈ within noise on stand-in data"
    assert outcome_of("not testable here") == "not testable here" and marked("not testable here").startswith("○ ")
    assert marked("a verdict no table knows") == "• a verdict no table knows"
    assert marked("within noise", html_class=True) == '<span class="verdict verdict-noise">≈ within noise</span>'


def test_the_findings_name_what_stands_what_falls_and_where_and_why_the_rest_is_untested():
    fails = [verdict(f"f{i}", "does not hold" + (" on stand-in data" if i else ""),
                     (SetOutcome("susy", "does not hold", f"dsg 3{i} > norma 20"), SetOutcome("a9a", "holds", "dsg 1 < norma 2")))
             for i in range(2)]
    noise = verdict("n", "within noise", (SetOutcome("a9a", "within noise", "dsg 15.1 ≈ norma 15.0"),))
    holds = verdict("h", "holds", (SetOutcome("a9a", "holds", "dsg 1 < norma 2"),), quote="DSG wins on Adult")
    needs = ClaimVerdict(Claim("dai2014", "u", "§7", 4, "beats nets", (), needs="data: MNIST8M (not here)"),
                         "not testable here", "needs data: MNIST8M (not here)")
    lines = findings_paragraph([*fails, noise, holds, needs]).splitlines()
    assert lines[0] == "4 of the paper's 5 claims could be tested on the published runs."
    assert lines[2] == "- **✔ Stand** (1): §7 “DSG wins on Adult”."
    assert lines[3] == ("- **✘ Fall** (2, 1 of them on stand-in data), most often on susy (2 of 2): §7 “DSG beats NORMA” — "
                        "susy: dsg 30 > norma 20.")               # two claims in the same words named once
    assert lines[4] == "- **≈ Within noise** (1): §7 “DSG beats NORMA” — a9a: dsg 15.1 ≈ norma 15.0."
    assert lines[5] == "- **○ Not testable here** (1), mainly: needs data (1)."
    assert deciding_number(fails[0]) == "susy: dsg 30 > norma 20 (2 of 2 sets tested)"


def test_each_claim_sits_beside_the_figure_it_reads_and_a_figure_no_claim_reads_comes_last():
    paper = get_paper("gu2018")
    claims = [verdict("a", "holds", (), figure="fig1"), verdict("b", "holds", (), figure="fig1gh"),
              verdict("c", "holds", (), figure=None)]
    figures = ["gu2018_fig1abc_accuracy_vs_time.png", "gu2018_fig1gh_test_time.png", "gu2018_fig2_speedup.png"]
    groups = [(heading, names, [v.claim.id for v in group]) for heading, names, group in
              claim_groups(paper, claims, figures)]
    assert groups == [("Fig. 1", ["gu2018_fig1abc_accuracy_vs_time.png"], ["a"]),
                      ("Fig. 1 (gh)", ["gu2018_fig1gh_test_time.png"], ["b"]),
                      ("Claims without a figure of their own", [], ["c"]),
                      ("Further figures", ["gu2018_fig2_speedup.png"], [])]
