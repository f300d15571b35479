"""`kernelbench compare`: the final table (mean ± std (n) over trials and runs, per method), the
page's files, the errors a user can fix (exit 2), and the HTML page as a browser renders it.

Truths: hand-made results whose means and standard deviations the `statistics` module computes
here, PNG signatures, and what headless Chromium reports of the page's images and tables."""
from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess

import pytest

from kernelbench.cli import main
from kernelbench.report.compare import build_comparison, final_table, find_runs, mean_std_text, write_comparison
from kernelbench.results import Run, final_rows, run_frame

DSG = json.dumps({"C": 1.0, "loss": "hinge"}, sort_keys=True)
DSG_C10 = json.dumps({"C": 10.0, "loss": "hinge"}, sort_keys=True)
NORMA = json.dumps({"step": 1.0}, sort_keys=True)


def make_run(out, experiment, algorithm, params, finals, *, dataset="digits86", task="binary", metric="test_error",
             curve=True, status="finished", config=None):
    """A finished run: per trial a curve (two evaluations) ending in its final row; `finals` holds
    (trial, final value, train seconds, row status) per trial."""
    run = Run.create(out, experiment, {"name": experiment, **(config or {})})
    run.update(dataset={"name": dataset, "task": task, "n_train": 100, "n_test": 50})
    for trial, value, seconds, row_status in finals:
        common = {"dataset": dataset, "algorithm": algorithm, "params": params, "trial": trial, "seed": trial}
        if curve:
            run.append({**common, "iteration": 0, "samples_seen": 0, "train_seconds": 0.001, metric: 0.5,
                        "objective": 1.0})
        run.append({**common, "iteration": 10, "samples_seen": 160, "train_seconds": seconds, metric: value,
                    "objective": 0.5, "status": row_status, "final": 1})
    run.finish(status)
    return run.path


def final_of(*runs):
    import pandas as pd
    return final_rows(pd.concat([run_frame(r) for r in runs], ignore_index=True))


# ------------------------------------------------------------------------------------ the table

def test_table_is_mean_std_and_count_over_the_ok_final_rows_of_each_method(tmp_path):
    # dsg C=1 over two runs (trials pool across runs of the same method), one trial diverged
    a = make_run(tmp_path, "a", "dsg", DSG, [(0, 0.10, 1.0, "ok"), (1, 0.20, 2.0, "ok")])
    b = make_run(tmp_path, "b", "dsg", DSG, [(0, 0.30, 3.0, "ok"), (1, 0.90, 9.0, "diverged")])
    c = make_run(tmp_path, "c", "dsg", DSG_C10, [(0, 0.05, 0.5, "ok")])
    d = make_run(tmp_path, "d", "norma", NORMA, [(0, 0.40, 4.0, "ok"), (1, 0.44, 6.0, "ok")])
    table = final_table(final_of(a, b, c, d), "test_error").set_index(["algorithm", "params"])
    truth = {("dsg", DSG): ([0.10, 0.20, 0.30], [1.0, 2.0, 3.0]), ("dsg", DSG_C10): ([0.05], [0.5]),
             ("norma", NORMA): ([0.40, 0.44], [4.0, 6.0])}
    assert set(table.index) == set(truth)
    for key, (errors, seconds) in truth.items():
        row = table.loc[key]
        assert row["n"] == len(errors)
        assert row["mean"] == pytest.approx(statistics.mean(errors))
        assert row["seconds_mean"] == pytest.approx(statistics.mean(seconds))
        if len(errors) > 1:
            assert row["std"] == pytest.approx(statistics.stdev(errors))
            assert row["seconds_std"] == pytest.approx(statistics.stdev(seconds))
        else:
            assert row["std"] != row["std"]                    # NaN: no spread from one value


def test_mean_std_text_gives_both_to_the_same_decimals():
    assert mean_std_text(0.2, 0.1, 3) == "0.2000 ± 0.1000 (3)"
    assert mean_std_text(0.00749, 0.01297, 3) == "0.00749 ± 0.01297 (3)"
    assert mean_std_text(1234.4, 10.0, 2) == "1234 ± 10 (2)"
    assert mean_std_text(0.05, float("nan"), 1) == "0.05000 (1)"
    assert mean_std_text(float("nan"), float("nan"), 0) == "—"


def test_page_tells_methods_apart_by_the_parameters_that_differ_and_counts_statuses(tmp_path):
    make_run(tmp_path, "a", "dsg", DSG, [(0, 0.10, 1.0, "ok"), (1, 0.20, 2.0, "ok"), (2, 0.9, 1.0, "diverged")])
    make_run(tmp_path, "c", "dsg", DSG_C10, [(0, 0.05, 0.5, "ok")])
    make_run(tmp_path, "d", "norma", NORMA, [(0, 0.40, 4.0, "ok")])
    markdown = build_comparison(find_runs([tmp_path])).markdown
    rows = {line.split(" | ")[0]: line for line in markdown.splitlines() if line.startswith("| dsg") or
            line.startswith("| norma")}
    assert set(rows) == {"| dsg C=1", "| dsg C=10", "| norma"}
    assert "0.1500 ± 0.0707 (2)" in rows["| dsg C=1"] and "2 ok, 1 diverged" in rows["| dsg C=1"]


def test_a_regression_dataset_shows_its_test_mse_and_a_classification_one_its_error(tmp_path):
    make_run(tmp_path, "cls", "dsg", DSG, [(0, 0.25, 1.0, "ok")])
    make_run(tmp_path, "reg", "dsg", DSG, [(0, 3.5, 1.0, "ok"), (1, 4.5, 1.0, "ok")], dataset="abalone",
             task="regression", metric="test_mse")
    comparison = build_comparison(find_runs([tmp_path]))
    sections = dict(re.findall(r"## (\S+) \(\w+\)\n\n\| method \| (\w+) \|", comparison.markdown))
    assert sections == {"digits86": "test_error", "abalone": "test_mse"}
    assert "| dsg | 4.000 ± 0.707 (2) |" in comparison.markdown


def test_the_page_embeds_every_figure_the_markdown_references(tmp_path):
    make_run(tmp_path / "runs", "a", "dsg", DSG, [(0, 0.10, 1.0, "ok"), (1, 0.20, 2.0, "ok")])
    comparison = build_comparison(find_runs([tmp_path / "runs"]))
    md, page = write_comparison(comparison, tmp_path / "page")
    referenced = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md.read_text())
    assert referenced and all((md.parent / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in referenced)
    html = page.read_text()
    assert html.count("<img src=\"data:image/png;base64,") == len(referenced) and "figures/" not in html


def test_a_row_that_pools_runs_of_other_stop_rules_says_so(tmp_path):
    make_run(tmp_path, "one_pass", "dsg", DSG, [(0, 0.10, 1.0, "ok")], config={"stop": {"passes": 1}})
    make_run(tmp_path, "ten_passes", "dsg", DSG, [(0, 0.05, 9.0, "ok")], config={"stop": {"passes": 10}})
    make_run(tmp_path, "ten_again", "norma", NORMA, [(0, 0.05, 9.0, "ok")], config={"stop": {"passes": 10}})
    notes = [line for line in build_comparison(find_runs([tmp_path])).markdown.splitlines()
             if line.startswith("Note:")]
    assert notes == ["Note: the row of dsg pools runs whose stop.passes differ (one_pass | ten_passes); "
                     "compare them one by one to tell them apart."]


# ------------------------------------------------------------------------------------ the command

def kb(capsys, *args):
    """`kernelbench ARGS` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    try:
        main([str(a) for a in args])
        code = 0
    except SystemExit as e:
        code = 0 if e.code is None else e.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_compare_finds_runs_below_a_folder_and_writes_the_page(tmp_path, capsys):
    make_run(tmp_path / "runs" / "deep", "a", "dsg", DSG, [(0, 0.10, 1.0, "ok")])
    make_run(tmp_path / "runs", "b", "norma", NORMA, [(0, 0.40, 4.0, "ok")])
    code, out, err = kb(capsys, "compare", tmp_path / "runs", "--out", tmp_path / "page")
    assert code == 0, err
    assert "digits86 (binary): 2 method(s)" in out and f"compare: {tmp_path / 'page' / 'compare.html'}" in out


@pytest.mark.parametrize("case", ["missing", "empty folder", "a file", "no run.json", "other schema", "no rows"])
def test_what_is_not_a_comparable_run_exits_2_naming_the_path_and_the_fix(tmp_path, capsys, case):
    target = tmp_path / "target"
    if case == "empty folder":
        target.mkdir()
    elif case == "a file":
        target.write_text("x")
    elif case == "no run.json":
        target = make_run(tmp_path, "a", "dsg", DSG, [(0, 0.1, 1.0, "ok")])
        (target / "run.json").unlink()
    elif case == "other schema":
        target = make_run(tmp_path, "a", "dsg", DSG, [(0, 0.1, 1.0, "ok")])
        (target / "results.csv").write_text("run_id,algorithm,error\nx,dsg,0.1\n")
    elif case == "no rows":
        target = Run.create(tmp_path, "empty", {"name": "empty"}).path
    code, _, err = kb(capsys, "compare", target, "--out", tmp_path / "page")
    assert code == 2 and "Traceback" not in err, err
    assert str(target) in err
    fixes = {"missing": "name a run folder", "empty folder": "name the folder `kernelbench run` printed",
             "a file": "name the folder `kernelbench run` printed", "no run.json": "leave it out",
             "other schema": "no column(s) dataset, params, trial, iteration, train_seconds, status",
             "no rows": "once they have evaluated"}
    assert fixes[case] in err, err
    assert not (tmp_path / "page").exists()


def test_an_unknown_or_unmeasured_metric_exits_2_naming_the_choices(tmp_path, capsys):
    run = make_run(tmp_path, "a", "dsg", DSG, [(0, 0.1, 1.0, "ok")])
    code, _, err = kb(capsys, "compare", run, "--metric", "accuracy", "--out", tmp_path / "page")
    assert code == 2 and "accuracy" in err and "test_error" in err and "test_mse" in err, err
    code, _, err = kb(capsys, "compare", run, "--metric", "test_mse", "--out", tmp_path / "page")
    assert code == 2 and "no run compared measured test_mse" in err and "objective, test_error" in err, err
    code, _, err = kb(capsys, "compare", run, "--metric", "objective", "--out", tmp_path / "page")
    assert code == 0, err
    assert "| method | objective |" in (tmp_path / "page" / "compare.md").read_text()


# ------------------------------------------------------------------------------------ in a browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")

# appended to a copy of the page: after load, what the browser made of each image and table
PROBE = """<script>
window.addEventListener("load", () => {
  const report = {
    images: [...document.images].map(i => ({complete: i.complete, width: i.naturalWidth, height: i.naturalHeight,
                                             shown: i.getBoundingClientRect().width})),
    tables: [...document.querySelectorAll("table")].map(t => ({rows: t.rows.length,
                                                             height: t.getBoundingClientRect().height})),
  };
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(report);
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install -y chromium); CI installs it")
def test_headless_chromium_renders_every_figure_and_table_of_the_page(tmp_path):
    make_run(tmp_path / "runs", "a", "dsg", DSG, [(0, 0.10, 1.0, "ok"), (1, 0.20, 2.0, "ok")])
    make_run(tmp_path / "runs", "b", "norma", NORMA, [(0, 0.40, 4.0, "ok")], dataset="abalone", task="regression",
             metric="test_mse")
    _, page = write_comparison(build_comparison(find_runs([tmp_path / "runs"])), tmp_path / "page")
    html = page.read_text()
    probe = tmp_path / "alone" / "probe.html"           # alone: no file beside it to load images from
    probe.parent.mkdir()
    probe.write_text(html.replace("</body>", PROBE + "\n</body>"))
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                           "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=90)
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"chromium exit {proc.returncode}, no probe in its DOM:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    report = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert len(report["images"]) == html.count("<img ") == 2          # one figure per dataset
    assert all(i["complete"] and i["width"] > 100 and i["height"] > 100 and i["shown"] > 100
               for i in report["images"]), report
    assert len(report["tables"]) == 3 and all(t["rows"] >= 2 and t["height"] > 0 for t in report["tables"]), report


def test_a_parameter_value_with_a_pipe_stays_in_its_table_cell(tmp_path):
    odd = json.dumps({"C": 1.0, "note": "a|b"}, sort_keys=True)
    make_run(tmp_path / "runs", "a", "dsg", odd, [(0, 0.10, 1.0, "ok")])
    make_run(tmp_path / "runs", "b", "dsg", DSG, [(0, 0.20, 1.0, "ok")])
    _, page = write_comparison(build_comparison(find_runs([tmp_path / "runs"])), tmp_path / "page")
    html = page.read_text()
    assert "<td>dsg loss=None, note=a|b</td>" in html and "<td>dsg loss=hinge, note=None</td>" in html


def test_labels_round_parameter_values_and_a_column_keeps_one_precision(tmp_path):
    """C = 10^-0.5 as a grid writes it labels its method as C=0.3162; a column's values share their
    decimals (0.0050 beside 0.4000; 1.5 beside 12.3, not 1.50), so they line up and compare by eye."""
    root_tenth = json.dumps({"C": 10 ** -0.5, "loss": "hinge"}, sort_keys=True)
    make_run(tmp_path, "a", "dsg", root_tenth, [(0, 0.005, 1.5, "ok")])
    make_run(tmp_path, "b", "dsg", DSG_C10, [(0, 0.40, 12.3, "ok")])
    markdown = build_comparison(find_runs([tmp_path])).markdown
    rows = {line.split(" | ")[0]: line.split(" | ") for line in markdown.splitlines() if line.startswith("| dsg")}
    assert set(rows) == {"| dsg C=0.3162", "| dsg C=10"}, markdown
    assert rows["| dsg C=0.3162"][1:3] == ["0.0050 (1)", "1.5 (1)"]
    assert rows["| dsg C=10"][1:3] == ["0.4000 (1)", "12.3 (1)"]
    assert "0.31622776" not in markdown.split("## Parameters")[0]
