"""The documentation's "Adding a paper" page, followed word for word: its paper file is a valid one
whose quote is in the page's text where the file says, and in a copy of the package its paper file,
figure module and configs, then `kernelbench reproduce`, give the paper's runs, its figure and its
report section with the claim tested."""
from __future__ import annotations

import re
import shutil

import pytest

from kernelbench.data import dataset_names
from kernelbench.estimators import algorithms
from kernelbench.papers import load_paper, normalised, sentence_number

from guide_pages import PACKAGE_ROOT, REPO, code_blocks, describe, named_file, run_shell

PAGE = "adding-a-paper.md"


@pytest.fixture(scope="module")
def page():
    text, = code_blocks(PAGE, "text")
    paper, *configs = code_blocks(PAGE, "yaml")
    figure, = code_blocks(PAGE, "python")
    command, = code_blocks(PAGE, "bash")
    return {"text": text, "paper": paper, "configs": configs, "figure": figure, "command": command}


@pytest.fixture
def paper(page, tmp_path):
    path = tmp_path / named_file(page["paper"]).rsplit("/", 1)[-1]
    path.write_text(page["paper"], encoding="utf-8")
    return load_paper(path)


def test_each_quote_starts_at_its_line_in_its_sentence_of_its_section(page, paper):
    lines = page["text"].splitlines()
    assert paper.claims
    for claim in paper.claims:
        quote = normalised(claim.quote)
        assert quote in normalised("\n".join(lines[claim.line - 1:]))
        assert quote not in normalised("\n".join(lines[claim.line:]))
        assert sentence_number(page["text"], paper.sections[claim.section], claim.quote) == claim.sentence


def test_its_numbers_and_claims_name_registered_datasets_and_algorithms(paper):
    sets, methods = set(dataset_names()), set(algorithms())
    assert paper.published and all(e.dataset in sets and e.algorithm in methods for e in paper.published)
    for claim in paper.claims:
        assert set(claim.on) <= sets
        assert {s.algorithm for s in (claim.test.a, *claim.test.b)} <= methods


def test_reproduce_runs_draws_and_reports_the_paper(page, paper, tmp_path):
    """In a copy of the package (beside the repository's datasets/, as in a checkout): the page's files
    written where it says, then its command."""
    checkout = tmp_path / "checkout"
    shutil.copytree(PACKAGE_ROOT / "kernelbench", checkout / "kernelbench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (checkout / "datasets").symlink_to(REPO / "datasets")
    for block in (page["paper"], *page["configs"]):
        path = checkout / named_file(block)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block, encoding="utf-8")
    figures = checkout / "kernelbench" / "figures"
    (figures / "doe2024.py").write_text(page["figure"], encoding="utf-8")
    init = (figures / "__init__.py").read_text(encoding="utf-8")
    added = re.sub(r"^from \. import ", "from . import doe2024, ", init, count=1, flags=re.M)
    assert added != init, "kernelbench/figures/__init__.py has no `from . import ...` line of figure modules"
    (figures / "__init__.py").write_text(added, encoding="utf-8")

    env = {"KERNELBENCH_DATA": str(tmp_path / "cache"), "KERNELBENCH_OFFLINE": "1", "KERNELBENCH_REGISTRY": ""}
    ran = run_shell(page["command"], checkout, env, package_root=checkout)
    assert ran.returncode == 0, describe(ran)
    results = checkout / "results"
    runs = {path.parent.name.split("-")[0]: path.parent.name
            for path in results.glob("heart_scale_*_doe2024-*/results.csv")}
    assert sorted(runs) == ["heart_scale_dsg_doe2024", "heart_scale_libsvm_doe2024"]
    assert (results / "figures" / "doe2024_fig1_test_error_vs_samples.png").stat().st_size > 0
    report = (results / "report_doe2024.md").read_text(encoding="utf-8").splitlines()
    assert f"## {paper.name}" in report
    entry, = paper.published
    printed = [row for row in report if row.startswith(f"| {entry.where} | {entry.dataset} | {entry.algorithm} |")]
    assert len(printed) == 1 and runs["heart_scale_libsvm_doe2024"] in printed[0]
    claim, = paper.claims
    row, = [row for row in report if claim.readable in row]
    assert "not testable" not in row and all(run in row for run in runs.values())
