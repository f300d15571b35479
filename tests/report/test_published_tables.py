"""The published runs' tables on the documentation site say what the committed CSVs say: each row
of kernelbench.report.tables' rendering (the function the docs hook calls) is recomputed here from
results/published/<paper>/*/results.csv with the csv module alone, and the two must agree."""
from __future__ import annotations

import csv
import importlib.util
import json
import re
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from kernelbench.papers import paper_ids
from kernelbench.report.tables import final_numbers_markdown

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "results" / "published"
MEASURES = (("test_error", 100.0), ("test_mse", 1.0), ("test_mae", 1.0))   # the first with a value


def _from_csvs(paper_dir: Path) -> dict:
    """experiment -> sorted list of (threads, trials, median, mean, std, mean train seconds) of
    each setting, from the final rows (final = 1, no fold, except a `protocol: paper` run's)."""
    groups = defaultdict(list)
    for results in sorted(paper_dir.glob("*/results.csv")):
        meta = json.loads((results.parent / "run.json").read_text(encoding="utf-8"))
        if meta.get("smoke"):
            continue
        paper_protocol = (meta.get("config") or {}).get("protocol") == "paper"
        with results.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row.get("final") == "1" and (paper_protocol or not row.get("fold")):
                    groups[(row["experiment"], row["params"])].append(row)
    out = defaultdict(list)
    for (experiment, _), rows in groups.items():
        values = []
        for column, scale in MEASURES:
            values = [float(r[column]) * scale for r in rows if r.get(column)]
            if values:
                break
        seconds = statistics.mean(float(r["train_seconds"]) for r in rows) if values else None
        out[experiment].append((rows[0].get("threads", ""), len(rows),
                                statistics.median(values) if values else None,
                                statistics.mean(values) if values else None,
                                statistics.stdev(values) if len(values) > 1 else None, seconds))
    return {k: sorted(v, key=str) for k, v in out.items()}


def _number(cell: str):
    found = re.match(r"^-?[\d.]+", cell.strip())
    return float(found.group()) if found else None


def _from_table(markdown: str) -> dict:
    out = defaultdict(list)
    for line in markdown.splitlines()[2:]:
        name, _role, threads, trials, _measure, median, spread, seconds = \
            [c.strip() for c in line.strip("|").split(" | ")]
        mean, _, std = spread.partition("±")
        out[name.split(" (", 1)[0]].append(
            (threads, int(trials), _number(median), _number(mean), _number(std) if std else None,
             _number(seconds)))
    return {k: sorted(v, key=str) for k, v in out.items()}


def _agree(table_row, csv_row) -> bool:
    threads, trials, *table_numbers = table_row
    csv_threads, csv_trials, *csv_numbers = csv_row
    tolerances = (0.005, 0.005, 0.005, 0.05)          # the table's rounding: 2 decimals, seconds 1
    return threads == csv_threads and trials == csv_trials and all(
        (t is None and c is None) or (t is not None and c is not None and abs(t - c) <= tol + 1e-9)
        for t, c, tol in zip(table_numbers, csv_numbers, tolerances))


PAPERS = [p for p in paper_ids() if any((PUBLISHED / p).glob("*/results.csv"))]


def test_the_published_runs_of_several_papers_are_tabled():
    assert {"gu2018", "geng2019"} <= set(PAPERS)


@pytest.mark.parametrize("paper", PAPERS)
def test_each_tables_rows_are_its_csvs_final_numbers(paper):
    table, truth = _from_table(final_numbers_markdown(PUBLISHED / paper)), _from_csvs(PUBLISHED / paper)
    assert set(table) == set(truth)
    for experiment, rows in truth.items():
        unmatched = list(table[experiment])
        for row in rows:
            match = next((t for t in unmatched if _agree(t, row)), None)
            assert match is not None, (experiment, row, unmatched)
            unmatched.remove(match)


def test_a_regression_is_tabled_by_its_mse_not_as_a_percentage():
    lines = [line for line in final_numbers_markdown(PUBLISHED / "gu2018").splitlines()
             if line.startswith("| abalone_")]
    assert lines and all("| test MSE |" in line and "%" not in line for line in lines)


def test_the_docs_hook_renders_these_tables_on_the_published_runs_page():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "site-config" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    page = hooks.render((ROOT / "docs" / "results" / "published-runs.md").read_text(encoding="utf-8"))
    for paper in PAPERS:
        assert final_numbers_markdown(PUBLISHED / paper) in page, paper
