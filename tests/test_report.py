"""`kernelbench report`: which rows count as ours, and the table against the papers' values."""
import json
import subprocess
import sys

import pytest

from kernelbench.report import PUBLISHED, build_report, markdown_to_html
from kernelbench.results import Run

PARAMS = json.dumps({"loss": "logistic"}, sort_keys=True)


DAI = {"paper": "dai2014", "role": "ours"}


def make_run(out, rows, smoke=False, tags=DAI):
    run = Run.create(out, "a9a_dsg", {"name": "a9a_dsg"}, tags=tags)
    run.update_meta(smoke=smoke)
    for row in rows:
        run.append({"dataset": "a9a", "algorithm": "dsg", "params": PARAMS, **row})
    run.finish()
    return run


def test_ours_is_mean_and_std_of_finished_test_cells_only(tmp_path):
    make_run(tmp_path, [
        {"trial": 0, "iteration": 10, "test_error": 0.30},                  # a curve point: not final
        {"trial": 0, "iteration": 20, "test_error": 0.15, "final": 1},
        {"trial": 1, "iteration": 20, "test_error": 0.16, "final": 1},
        {"trial": 2, "iteration": 20, "status": "diverged", "final": 1},   # failed cells don't count
        {"trial": 0, "fold": 0, "iteration": 20, "test_error": 0.50, "final": 1},   # a CV fold
    ])
    make_run(tmp_path, [{"trial": 0, "iteration": 5, "test_error": 0.45, "final": 1}], smoke=True)
    # the same dataset and algorithm run for another paper is not Dai et al.'s, nor is an untagged run
    make_run(tmp_path, [{"trial": 0, "iteration": 5, "test_error": 0.40, "final": 1}],
             tags={"paper": "li2016", "figure": "fig1"})
    make_run(tmp_path, [{"trial": 0, "iteration": 5, "test_error": 0.40, "final": 1}], tags={})
    markdown, table = build_report([tmp_path])
    dai, = [r for r in table if r["algorithm"] == "dsg" and r["dataset"] == "a9a"]
    assert dai["published"] == 15.3                                      # Dai et al., Fig. 1(1)
    mean, std, n = dai["ours"]
    assert n == 2 and mean == pytest.approx(15.5) and std == pytest.approx(0.5)
    assert dai["difference"] == pytest.approx(0.2)
    assert "15.500 ± 0.500 (2)" in markdown
    assert all(r["ours"] is None for r in table if r["algorithm"] != "dsg")  # nothing else was run


def test_two_configs_with_different_parameters_never_share_a_row(tmp_path):
    """The issue's case: a 3-trial run and a 2-trial run of another setting, both tagged for Dai et
    al. Fig. 1(1) DSG, were shown as one '15.946 ± 0.289 (5)'."""
    def run_of(experiment, params, stop, errors):
        run = Run.create(tmp_path, experiment, {"name": experiment, "stop": stop}, tags=DAI)
        for trial, error in enumerate(errors):
            run.append({"dataset": "a9a", "algorithm": "dsg", "params": json.dumps(params), "trial": trial,
                        "iteration": 9, "test_error": error, "final": 1})
        run.finish()
        return run
    first = run_of("a9a_dsg_dai2014", {"loss": "hinge", "C": 1.0}, {"passes": 1}, [0.159, 0.161, 0.164])
    run_of("a9a_dsg_other", {"loss": "logistic", "C": 1.0}, {"passes": 1}, [0.157, 0.156])
    markdown, table = build_report([tmp_path])
    dai, = [r for r in table if r["algorithm"] == "dsg" and r["dataset"] == "a9a"]
    assert dai["ours"] is None and "params.loss" in dai["conflict"]
    assert "a9a_dsg_dai2014 | a9a_dsg_other" in dai["conflict"] and "15.946" not in markdown
    # same parameters but another stop rule: still two experiments
    (tmp_path / "other").mkdir()
    for stop in ({"passes": 1}, {"passes": 5}):
        run = Run.create(tmp_path / "other", "a9a_dsg", {"name": "a9a_dsg", "stop": stop}, tags=DAI)
        run.append({"dataset": "a9a", "algorithm": "dsg", "params": PARAMS, "trial": 0, "iteration": 9,
                    "test_error": 0.15, "final": 1})
        run.finish()
    _, table = build_report([tmp_path / "other"])
    dai, = [r for r in table if r["algorithm"] == "dsg" and r["dataset"] == "a9a"]
    assert dai["ours"] is None and "stop.passes" in dai["conflict"]
    # one setting over several runs (more trials later, another seed) is pooled, and its folders named
    again = run_of("a9a_dsg_dai2014", {"loss": "hinge", "C": 1.0}, {"passes": 1}, [0.170])
    (tmp_path / "one").mkdir()
    for run in (first, again):
        run.path.rename(tmp_path / "one" / run.path.name)
    markdown, table = build_report([tmp_path / "one"])
    dai, = [r for r in table if r["algorithm"] == "dsg" and r["dataset"] == "a9a"]
    assert dai["conflict"] is None and dai["ours"][2] == 4
    assert dai["runs"] == sorted([first.path.name, again.path.name]) and first.path.name in markdown


def test_bsgd_entries_select_by_params_and_table(tmp_path):
    run = Run.create(tmp_path, "ijcnn1_bsgd", {}, tags={"paper": "glasmachers2019", "figure": "table2"})
    for merge, err in (("lookup-wd", 0.026), ("gss", 0.030)):
        run.append({"dataset": "ijcnn1", "algorithm": "bsgd", "trial": 0, "iteration": 1, "final": 1,
                    "params": json.dumps({"merge": merge, "budget": 100}), "test_error": err})
    run.finish()
    # the Table 3 diagnostics run (same merge and budget, timings not comparable) is not a Table 2 row
    diag = Run.create(tmp_path, "ijcnn1_bsgd_diag", {}, tags={"paper": "glasmachers2019", "figure": "table3"})
    diag.append({"dataset": "ijcnn1", "algorithm": "bsgd", "trial": 0, "iteration": 1, "final": 1,
                 "params": json.dumps({"merge": "lookup-wd", "budget": 100, "diagnose": True}),
                 "test_error": 0.5, "counters": json.dumps({"diag_equal_decisions": 0.9})})
    diag.finish()
    _, table = build_report([tmp_path])
    lookup, = [r for r in table if r["dataset"] == "ijcnn1" and r["params"] == {"merge": "lookup-wd", "budget": 100}]
    assert lookup["published"] == 97.130 and lookup["ours"][0] == pytest.approx(97.4) and lookup["ours"][2] == 1
    equal, = [r for r in table if r["dataset"] == "ijcnn1" and r["metric"] == "counter%:diag_equal_decisions"]
    assert equal["ours"][0] == pytest.approx(90.0)


def test_every_paper_appears_and_html_has_tables(tmp_path):
    markdown, _ = build_report([tmp_path])
    for paper in {e.paper for e in PUBLISHED}:
        assert f"## {paper}" in markdown
    page = markdown_to_html(markdown)
    assert page.count("<table>") == page.count("</table>") >= 3 and "<th>published</th>" in page


def test_cli_writes_both_files_and_refuses_missing_folders(tmp_path):
    make_run(tmp_path / "results", [{"trial": 0, "iteration": 1, "test_error": 0.155, "final": 1}])
    cmd = [sys.executable, "-m", "kernelbench.cli", "report", str(tmp_path / "results"), "--out", str(tmp_path / "rep")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rep" / "report.md").read_text().count("15.500") == 1
    assert (tmp_path / "rep" / "report.html").exists()
    proc = subprocess.run(cmd[:4] + [str(tmp_path / "nope")], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def test_merging_time_gain_is_computed_from_the_maintenance_seconds_of_each_merge(tmp_path):
    """Glasmachers & Qaadan §1/§5: merging time −65 % on SUSY (Lookup-h vs GSS, B = 100); Table 3's
    larger-budget rows: training time, B = 500 on ijcnn1."""
    run = Run.create(tmp_path, "susy_bsgd", {}, tags={"paper": "glasmachers2019", "figure": "table2"})
    for budget in (100, 500):
        for merge, total, merging in (("gss", 10.0, 6.0), ("lookup-h", 6.0, 2.1)):
            for trial in range(2):
                run.append({"dataset": "susy" if budget == 100 else "ijcnn1", "algorithm": "bsgd", "trial": trial,
                            "iteration": 1, "final": 1, "train_seconds": total,
                            "params": json.dumps({"merge": merge, "budget": budget, "diagnose": False}),
                            "counters": json.dumps({"maintenance_seconds": merging}), "test_error": 0.2})
    run.finish()
    _, table = build_report([tmp_path])
    merging, = [r for r in table if r["metric"] == "merge_time_improvement_vs_gss:lookup-h"]
    assert merging["published"] == 65.0 and merging["ours"][0] == pytest.approx(65.0)     # 1 − 2.1/6
    larger, = [r for r in table if r["dataset"] == "ijcnn1" and r["where"] == "Table 3 (B = 500)"
               and r["metric"] == "improvement_vs_gss:lookup-h"]
    assert larger["published"] == 30.569 and larger["ours"][0] == pytest.approx(40.0)     # 1 − 6/10
