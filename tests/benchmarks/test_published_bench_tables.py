"""The benchmark tables on the full-scale page say what the committed CSVs say: each row of
published_markdown (the function the docs hook calls) is recomputed here from
results/published/bench/<name>.csv with the csv module alone, and the two must agree; the page
asks for every published table and the hook renders each there."""
from __future__ import annotations

import csv
import importlib.util
import json
import re
from pathlib import Path

import pytest

from kernelbench.benchmarks import published_markdown

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "results" / "published"
BENCH = PUBLISHED / "bench"
NAMES = sorted(p.stem for p in BENCH.glob("*.csv"))
PAGE = ROOT / "docs" / "guide" / "full-scale.md"


def _from_csv(name: str) -> dict:
    """method -> (role, training rows, seconds the budget counts, passes, test error in %, status)."""
    with (BENCH / f"{name}.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    out = {}
    for row in rows:
        n_train = int(row["n_train"])
        seconds = float(row["fit_seconds"] or row["train_seconds"])   # an exact SVM: its chosen fit
        out[row["method"]] = (row["role"], n_train, seconds, int(float(row["samples_seen"])) / n_train,
                              100 * float(row["test_error"]), row["status"])
    return out


def _from_table(markdown: str) -> dict:
    out = {}
    for line in markdown.splitlines():
        if not line.startswith("| ") or line.startswith("| method |"):
            continue
        method, role, n_train, seconds, passes, error, status, _note = [c.strip() for c in line.strip("|").split(" | ")]
        out[method] = (role, int(n_train.replace(",", "")), float(seconds), float(passes),
                       float(error.removesuffix(" %")), status)
    return out


def test_some_benchmark_tables_are_published():
    assert {"equal-time-ijcnn1"} <= set(NAMES) and any(n.startswith("fullscale") for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_each_rendered_row_is_its_csv_row(name):
    table, truth = _from_table(published_markdown(PUBLISHED, name)), _from_csv(name)
    assert set(table) == set(truth)
    for method, (role, n_train, seconds, passes, error, status) in truth.items():
        t_role, t_n, t_seconds, t_passes, t_error, t_status = table[method]
        assert (t_role, t_n, t_status) == (role, n_train, status), method
        assert abs(t_seconds - seconds) <= 0.05 + 1e-9, method                   # 1 decimal
        assert abs(t_error - error) <= 0.005 + 1e-9, method                      # 2 decimals
        assert t_passes == pytest.approx(passes, rel=5e-3, abs=1e-3), method     # 3 significant digits


@pytest.mark.parametrize("name", NAMES)
def test_the_verdicts_against_rff_sgd_follow_the_csv(name):
    truth = _from_csv(name)
    verdicts = dict(re.findall(r"^- (\S+): (?:[\d.]+|no result) %: lower than RFF \+ SGD \([\d.]+ %\)\? (yes|NO)$",
                               published_markdown(PUBLISHED, name), re.M))
    if "rff-sgd" not in truth:
        assert verdicts == {}
        return
    expected = {m: "yes" if row[4] < truth["rff-sgd"][4] else "NO" for m, row in truth.items() if m != "rff-sgd"}
    assert verdicts == expected


@pytest.mark.parametrize("name", NAMES)
def test_the_provenance_line_names_the_command_and_commit_of_the_json(name):
    about = json.loads((BENCH / f"{name}.json").read_text(encoding="utf-8"))
    head = published_markdown(PUBLISHED, name).splitlines()[0]
    assert about["commands"] and all(f"`{c}`" in head for c in about["commands"])
    assert all(c[:10] in head for c in about["git_commits"])


def test_the_full_scale_page_renders_every_published_table():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "site-config" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    source = PAGE.read_text(encoding="utf-8")
    assert {f"<!-- generated: bench/{name} -->" for name in NAMES} <= set(source.splitlines())
    page = hooks.render(source)
    for name in NAMES:
        assert hooks.escape_placeholders(published_markdown(PUBLISHED, name)) in page, name
