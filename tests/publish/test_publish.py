"""`kernelbench publish` and REPRODUCTION.md: the runs a report reads, compacted into
results/published/, give the report the runs give; REPRODUCTION.md is a pure function of them; the
committed copies stay what they say and stay small."""
import csv
import json
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernelbench.config import duration_text, load_config
from kernelbench.errors import ConfigError, KernelbenchError
from kernelbench.experiment import run_experiment
from kernelbench.papers import get_paper, paper_ids
from kernelbench.publish import DIGITS, PUBLISHED_MAX_BYTES, over_size_limit, publish, thin
from kernelbench.report import (
    build_report,
    number_status,
    reproduction_command,
    reproduction_files,
    reproduction_markdown,
    verdict_and_reason,
)
from kernelbench.reproduce import absent_data, experiments, matrix, not_run
from kernelbench.results import ABSENT_FILE, Run, collect_results, read_results, run_folders

REPO = Path(__file__).resolve().parents[2]
PUBLISHED = REPO / "results" / "published"
REPRODUCTION = REPO / "REPRODUCTION.md"

# the smallest real runs of the suite (tests/reproduce/test_reproduce.py): DSG, 6 iterations on 400 synthetic rows
TINY = """name: {name}
tags: {{paper: dai2014, figure: fig1, panel: "p", role: ours}}
dataset: {{name: synthetic, shape: susy, n: 400, n_test: 100}}
algorithm: {{name: dsg, params: {{batch_size: 16, block_size: 8, gamma: 0.5, step: 1.0, t0: 10.0}}}}
trials: {trials}
stop: {{iterations: 6}}
evaluate: {{every: 3, on: [test_error]}}
"""


def tiny_runs(tmp_path):
    configs, out = tmp_path / "configs", tmp_path / "results"
    configs.mkdir()
    for name, trials in (("synthetic_dsg_a", 2), ("synthetic_dsg_b", 1)):
        path = configs / f"{name}.yaml"
        path.write_text(TINY.format(name=name, trials=trials))
        run_experiment(load_config(path), out_dir=out, quiet=True)
    return configs, out


def details_of(published: Path, paper: str = "dai2014") -> str:
    """A paper's detail page, which publish writes beside its runs: its numbers, runs and claims in full."""
    return (published / paper / "DETAILS.md").read_text(encoding="utf-8")


def files_of(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_publishing_twice_gives_the_same_bytes_and_a_changed_result_changes_the_report(tmp_path):
    _, out = tiny_runs(tmp_path)
    published, reproduction = out / "published", tmp_path / "REPRODUCTION.md"
    outcome = publish("dai2014", results_dir=out, out_dir=published, reproduction=reproduction, echo=lambda line: None)
    assert len(outcome["dai2014"]["written"]) == 2
    first, text = files_of(published), reproduction.read_bytes()
    runs = [name for name in first if Path(name).name != "DETAILS.md"]
    assert sorted(Path(name).name for name in runs) == ["results.csv", "results.csv", "run.json", "run.json"]
    assert sorted(name for name in first if name not in runs) == sorted(f"{p}/DETAILS.md" for p in paper_ids())
    assert reproduction_markdown(published, reproduction).encode() == text   # from the published runs alone
    assert reproduction_markdown(published, reproduction).encode() == text
    dai = get_paper("dai2014")
    assert "synthetic_dsg_a-" in details_of(published) and f"| {len(dai.published)} published numbers" in text.decode()

    again = publish("dai2014", results_dir=out, out_dir=published, reproduction=reproduction, echo=lambda line: None)
    assert again["dai2014"]["unchanged"] == outcome["dai2014"]["written"]
    assert files_of(published) == first and reproduction.read_bytes() == text

    # the run folders' readers leave the published copies out: nothing is counted twice
    assert collect_results(out)["run_id"].nunique() == 2 and len(run_folders(out)) == 2
    assert build_report([out])[0] == build_report([published])[0]

    # a changed result: another final test error in one run, published again
    run = next(p for p in out.glob("synthetic_dsg_b-*"))
    rows = list(csv.reader((run / "results.csv").read_text().splitlines()))
    column = rows[0].index("test_error")
    assert rows[-1][column] == "0.49" and rows[-1][rows[0].index("final")] == "1"
    rows[-1][column] = "0.123"
    with open(run / "results.csv", "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)
    publish("dai2014", results_dir=out, out_dir=published, reproduction=reproduction, echo=lambda line: None)
    assert files_of(published) != first and details_of(published).encode() != first["dai2014/DETAILS.md"]
    assert "test_error 0.123" in details_of(published)


def dai_run(out, experiment, errors, config=None, command=None):
    """A run matched by Dai et al.'s Fig. 1(1) DSG entry (published 15.3 % on a9a)."""
    run = Run.create(out, experiment, config or {"name": experiment}, command=command,
                     tags={"paper": "dai2014", "figure": "fig1", "panel": "(1)", "role": "ours"})
    for trial, error in enumerate(errors):
        for step in range(1, 101):
            run.append({"dataset": "a9a", "algorithm": "dsg", "params": json.dumps({"loss": "hinge"}), "trial": trial,
                        "iteration": step, "samples_seen": 16 * step, "train_seconds": 0.013 * step,
                        "test_error": error + 0.3 / step, "final": 1 if step == 100 else None})
    run.finish()
    return run


def test_a_verdict_follows_the_published_numbers(tmp_path):
    out, published, reproduction = tmp_path / "results", tmp_path / "results" / "published", tmp_path / "R.md"
    run = dai_run(out, "a9a_dsg_dai2014", [0.150, 0.157])
    publish("dai2014", results_dir=out, out_dir=published, max_points=10, reproduction=reproduction,
            echo=lambda line: None)
    line = next(x for x in details_of(published).splitlines() if x.startswith("| Fig. 1(1), SC1 (one pass) |"))
    assert "| 15.650 ± 0.350 (n=2) | reproduced | difference +0.350; reproduced when within ±1 |" in line
    copy = read_results(published / "dai2014" / run.path.name)
    assert len(copy) == 2 * 10 and (copy.groupby("trial").size() == 10).all()       # thinned, per trial
    # the copy keeps the final rows as written, and only points of the curves otherwise
    assert sorted(copy.loc[copy["final"] == 1, "test_error"]) == [0.150 + 0.003, 0.157 + 0.003]
    # a drawn-only point's error is rounded, never its seconds (what at_seconds claims select rows by)
    original = read_results(run.path)
    assert set(copy["train_seconds"]) <= set(original["train_seconds"])
    assert any(len(repr(x)) > DIGITS + 2 for x in set(original["train_seconds"]) & set(copy["train_seconds"]))
    assert all(float(f"{x:.{DIGITS}g}") == x for x in copy.loc[copy["final"] != 1, "test_error"])

    new_run = dai_run(tmp_path / "other", "a9a_dsg_dai2014", [0.20, 0.21])
    publish("dai2014", results_dir=tmp_path / "other", out_dir=published, reproduction=reproduction, prune=True,
            echo=lambda line: None)
    assert [p.name for p in (published / "dai2014").iterdir() if p.is_dir()] == [new_run.path.name]   # the old one pruned
    line = next(x for x in details_of(published).splitlines() if x.startswith("| Fig. 1(1), SC1 (one pass) |"))
    assert "| differs |" in line and "20.800 ± 0.500 (n=2)" in line


def test_numbers_without_data_here_and_explained_differences_say_why(tmp_path):
    out, published, reproduction = tmp_path / "results", tmp_path / "results" / "published", tmp_path / "R.md"
    dai_run(out, "a9a_dsg_dai2014", [0.20, 0.21])
    configs = tmp_path / "configs"
    configs.mkdir()
    shutil.copy(REPO / "configs" / "qm7_dsg_dai2014.yaml", configs)        # QM7 is in no cache or mirror here
    publish("dai2014", results_dir=out, out_dir=published, reproduction=reproduction, echo=lambda line: None,
            absent_data=lambda paper: absent_data(paper, configs, out))
    assert json.loads((published / "dai2014" / ABSENT_FILE).read_text()) == {
        "datasets": {"qm7": "kernelbench datasets fetch qm7"}}
    lines = details_of(published).splitlines()

    def line(start):
        return next(x for x in lines if x.startswith(start) and "| dsg |" in x)
    assert "| no data here | the publishing machine had no copy: kernelbench datasets fetch qm7 |" in line(
        "| Fig. 1(7); §7 text | qm7")
    assert "| not run | no published run" in line("| Fig. 1(2); §7 text (best test error) | mnist8m")
    assert "| differs | difference +5.500; reproduced when within ±1 |" in line("| Fig. 1(1), SC1 (one pass) |")
    # a row that needs a comparator we lack on data we lack: the data is missing first
    assert "| no data here | the publishing machine had no copy: kernelbench datasets fetch qm7; it would also " \
        "need a neural-net comparator" in next(x for x in lines if x.startswith("| Fig. 1(7); §7 text | qm7")
                                               and "| neural net |" in x)
    # reproduced, reproduced on stand-in data, differs, differs on stand-in data, measured, not pooled,
    # not run, no data here, not reproducible here: of the 13, a9a's differs, 4 not run (no run published),
    # 2 no data here (qm7's DSG and neural net: only qm7 is recorded absent), the other 6 needing something
    counts = next(x for x in reproduction.read_text().splitlines() if x.startswith("| [Dai et al. 2014"))
    assert "| 13 published numbers — 1 differs, 4 not run, 2 no data here, 6 not reproducible here | 1 |" in counts

    # a known explanation is shown beside a row that differs, never as its verdict, never beside a reproduction
    entry = replace(get_paper("dai2014").published[0], known_difference="another split")
    status = number_status(entry, (20.8, 0.5, 2), None)
    assert status == "differs (within ±1)"
    row = {"status": status, "difference": 5.5, "known_difference": "another split", "dataset": "a9a", "ours": (20.8,)}
    assert verdict_and_reason(row) == ("differs", "difference +5.500; reproduced when within ±1; "
                                                  "known explanation: another split")
    row = {**row, "status": number_status(entry, (15.5, 0.5, 2), None), "difference": 0.5}
    assert verdict_and_reason(row) == ("reproduced", "difference +0.500; reproduced when within ±1")
    # a stand-in is named in the verdict, whichever way it falls
    stand_in = {**row, "stand_in": "w8a for w6a"}
    assert verdict_and_reason(stand_in) == ("reproduced on stand-in data", "difference +0.500; reproduced when "
                                                                           "within ±1; stand-in: w8a for w6a")
    # publishing again without a configs folder keeps what was recorded; with nothing absent, removes it
    publish("dai2014", results_dir=out, out_dir=published, reproduction=None, echo=lambda line: None)
    assert (published / "dai2014" / ABSENT_FILE).exists()
    (configs / "qm7_dsg_dai2014.yaml").unlink()
    publish("dai2014", results_dir=out, out_dir=published, reproduction=None, echo=lambda line: None,
            absent_data=lambda paper: absent_data(paper, configs, out))
    assert not (published / "dai2014" / ABSENT_FILE).exists()


def test_shortened_runs_and_experiments_left_out_are_named_in_the_report(tmp_path):
    """A publication never leaves a departure from the paper's protocol, or an experiment it could
    have run, unsaid: a config's `shortened` sentence follows its run into REPRODUCTION.md, and every
    runnable experiment without a finished run is listed."""
    out, published, reproduction = tmp_path / "results", tmp_path / "results" / "published", tmp_path / "R.md"
    why = "2 trials of the paper's 10, to fit the machine's budget"
    run = dai_run(out, "a9a_dsg_dai2014", [0.150, 0.157], {"name": "a9a_dsg_dai2014", "shortened": why})
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "synthetic_dsg_a.yaml").write_text(TINY.format(name="synthetic_dsg_a", trials=1))
    publish("dai2014", results_dir=out, out_dir=published, reproduction=reproduction, echo=lambda line: None,
            absent_data=lambda paper: absent_data(paper, configs, out),
            not_run=lambda paper: not_run(paper, configs, out, published))
    assert json.loads((published / "dai2014" / ABSENT_FILE).read_text()) == {
        "experiments": {"synthetic_dsg_a.yaml": "not run"}}
    text = details_of(published)
    claim = next(x for x in text.splitlines() if x.startswith("| Fig. 1(1), SC1 (one pass) |"))
    assert claim.endswith(f"| {run.path.name} (shortened) |")
    assert f"| {run.path.name} | finished (shortened: below) |" in text
    assert f"- {run.path.name}: {why}" in text and "- synthetic_dsg_a.yaml: not run" in text

    # once the experiment has run (here, or published from elsewhere), nothing is listed
    run_experiment(load_config(configs / "synthetic_dsg_a.yaml"), out_dir=out, quiet=True)
    publish("dai2014", results_dir=out, out_dir=published, reproduction=reproduction, echo=lambda line: None,
            absent_data=lambda paper: absent_data(paper, configs, out),
            not_run=lambda paper: not_run(paper, configs, out, published))
    assert not (published / "dai2014" / ABSENT_FILE).exists()
    assert "Runnable here but not run" not in details_of(published)
    assert not_run("dai2014", configs, tmp_path / "elsewhere", published) == {}

    # a config says it in a sentence, or it is refused
    for bad in ("", 3, ["fewer trials"]):
        path = tmp_path / "bad.yaml"
        path.write_text(TINY.format(name="bad", trials=1) + f"shortened: {json.dumps(bad)}\n")
        with pytest.raises(ConfigError, match="shortened"):
            load_config(path)


def located_runs(root):
    """Runs under root/results whose run.json names folders of root and a scheduler's host: a user
    file's dataset.path, the data files, the command's arguments, the tuned config, an error."""
    data, out = root / "data", root / "results"
    config = {"name": "a9a_dsg_dai2014", "dataset": {"name": None, "path": str(data / "a9a.csv")}}
    command = [str(root / "venv" / "bin" / "kernelbench"), "run", str(root / "configs" / "a9a.yaml"),
               f"--out={out}", "--scheduler", "tcp://myhost.example:8786"]
    run = dai_run(out, "a9a_dsg_dai2014", [0.150, 0.157], config, command)
    run.update(dataset={"name": "a9a", "files": [{"role": "train", "path": str(data / "a9a.csv"), "sha256": "ab" * 32}]},
               tuned_config=str(root / "configs" / "a9a_tuned.yaml"), error=f"cannot read {data}/a9a.t: gone")
    return run


def test_published_copies_name_no_folder_or_host_of_the_machine(tmp_path):
    run = located_runs(tmp_path / "one")
    shutil.copytree(tmp_path / "one", tmp_path / "two")           # the same run, found elsewhere
    meta = tmp_path / "two" / "results" / run.path.name / "run.json"
    meta.write_text(meta.read_text().replace(str(tmp_path / "one"), str(tmp_path / "two")))
    copies = []
    for where in ("one", "two"):
        out = tmp_path / where / "results"
        publish("dai2014", results_dir=out, out_dir=out / "published", reproduction=None, echo=lambda line: None)
        copies.append(files_of(out / "published"))
    assert copies[0] == copies[1] and len(copies[0]) == 2
    for text in (b.decode() for b in copies[0].values()):
        assert str(tmp_path) not in text and "myhost" not in text
    record = json.loads(next(b for name, b in copies[0].items() if name.endswith("run.json")))
    assert "hostname" not in record and record["config"]["dataset"]["path"] == "a9a.csv"
    assert record["dataset"]["files"] == [{"role": "train", "path": "a9a.csv", "sha256": "ab" * 32}]
    assert record["command"] == ["kernelbench", "run", "a9a.yaml", "--out=results", "--scheduler", "tcp://<address>"]
    assert record["tuned_config"] == "a9a_tuned.yaml" and record["error"] == "cannot read a9a.t: gone"


def test_copies_inside_the_results_lie_in_a_published_folder_and_replace_their_older_selves(tmp_path):
    out = tmp_path / "results"
    first = dai_run(out / "first", "a9a_dsg_dai2014", [0.150, 0.157])
    # copies elsewhere under --results would be read as runs by every reader of it: refused
    with pytest.raises(ConfigError, match="`published`"):
        publish("dai2014", results_dir=out, out_dir=out / "copies", reproduction=None, echo=lambda line: None)
    assert not (out / "copies").exists()
    published = out / "first" / "published"          # any folder named published is left out by the readers
    publish("dai2014", results_dir=out / "first", out_dir=published, reproduction=None, echo=lambda line: None)
    assert run_folders(out / "first") == [first.path]

    # a later run of the same experiment and config replaces the older copy (pooled, both would count)
    second = dai_run(tmp_path / "second", "a9a_dsg_dai2014", [0.20, 0.21])
    done = publish("dai2014", results_dir=tmp_path / "second", out_dir=published, reproduction=None,
                   echo=lambda line: None)["dai2014"]
    assert done["replaced"] == [first.path.name] and done["kept"] == []
    assert [p.name for p in (published / "dai2014").iterdir()] == [second.path.name]
    # a run of another config leaves it be
    other = dai_run(tmp_path / "third", "a9a_dsg_dai2014", [0.20], {"name": "a9a_dsg_dai2014", "trials": 1})
    done = publish("dai2014", results_dir=tmp_path / "third", out_dir=published, reproduction=None,
                   echo=lambda line: None)["dai2014"]
    assert done["kept"] == [second.path.name] and done["replaced"] == []
    assert sorted(p.name for p in (published / "dai2014").iterdir()) == sorted([second.path.name, other.path.name])


def li_table3_runs(out):
    """Li & Póczos Table 3 on epsilon: a LIBSVM run (10.37 s) and a DSG curve of 200 evaluations;
    the DSG number is its training error at LIBSVM's seconds, an evaluation in the middle."""
    tags = {"paper": "li2016", "figure": "table3"}
    libsvm = Run.create(out, "epsilon_libsvm_li2016", {"name": "epsilon_libsvm_li2016"}, tags=tags)
    libsvm.append({"dataset": "epsilon", "algorithm": "libsvm", "params": "{}", "trial": 0, "iteration": 1,
                   "train_seconds": 10.37, "train_error": 0.143, "final": 1})
    libsvm.finish()
    dsg = Run.create(out, "epsilon_dsg_li2016_table3", {"name": "epsilon_dsg_li2016_table3"}, tags=tags)
    for step in range(1, 201):
        dsg.append({"dataset": "epsilon", "algorithm": "dsg", "params": json.dumps({"loss": "hinge"}), "trial": 0,
                    "iteration": step, "train_seconds": 0.1 * step + 0.001, "train_error": 0.2 - 0.0002 * step,
                    "final": 1 if step == 200 else None})
    dsg.finish()


def test_the_evaluation_a_claim_reads_survives_thinning(tmp_path, monkeypatch):
    out, published = tmp_path / "results", tmp_path / "results" / "published"
    li_table3_runs(out)
    publish("li2016", results_dir=out, out_dir=published, max_points=5, reproduction=None, echo=lambda line: None)
    dsg = read_results(next((published / "li2016").glob("epsilon_dsg_*")))
    assert len(dsg) == 5 and 0.2 - 0.0002 * 103 in set(dsg["train_error"])     # the one read among the 5
    assert build_report([published], paper="li2016")[0] == build_report([out], paper="li2016")[0]
    # were it dropped, the copies would tell another number: publish refuses rather than write them
    import kernelbench.publish.writer as publish_writer
    monkeypatch.setattr(publish_writer, "rows_read", lambda df, paper=None: [])
    with pytest.raises(KernelbenchError, match="(?s)would change its report.*--points 0"):
        publish("li2016", results_dir=out, out_dir=tmp_path / "elsewhere", max_points=5, reproduction=None,
                echo=lambda line: None)
    assert not (tmp_path / "elsewhere").exists()


def test_thinning_keeps_first_last_and_final_rows_and_bounds_every_curve():
    rows = []
    for trial, length in ((0, 1000), (1, 1000), (2, 700)):            # the last trial stopped early
        for step in range(length):
            rows.append({"params": "{}", "trial": trial, "fold": pd.NA, "budget": np.nan, "iteration": step,
                         "final": 1 if step == length - 1 and trial < 2 else pd.NA})
    for fold in range(3):                                               # a cross-validation cell: never drawn
        for step in range(40):
            rows.append({"params": "{}", "trial": 0, "fold": fold, "budget": np.nan, "iteration": step,
                         "final": 1 if step == 39 else pd.NA})
    frame = pd.DataFrame(rows).astype({"trial": "Int64", "fold": "Int64", "final": "Int64"})
    kept = frame[thin(frame, 50)]
    curves = kept[kept["fold"].isna()]
    assert (curves.groupby("trial").size() <= 50).all() and curves.groupby("trial").size().min() >= 40
    for trial, last in ((0, 999), (1, 999), (2, 699)):
        steps = set(curves.loc[curves["trial"] == trial, "iteration"])
        assert {0, last} <= steps
    shared = set(curves.loc[curves["trial"] == 0, "iteration"])
    assert shared == set(curves.loc[curves["trial"] == 1, "iteration"])              # the same points in each trial
    assert set(curves.loc[curves["trial"] == 2, "iteration"]) <= shared | {699}
    assert sorted(kept.loc[kept["fold"].notna(), "iteration"]) == [39, 39, 39]         # folds: their last rows
    assert thin(frame, 0).all() and thin(frame.iloc[:3], 50).all()
    with pytest.raises(KernelbenchError, match="--points"):
        thin(frame, 1)


def test_list_estimates_come_from_the_published_runs(tmp_path):
    configs, out = tiny_runs(tmp_path)
    published = tmp_path / "published"
    publish("dai2014", results_dir=out, out_dir=published, reproduction=None, echo=lambda line: None)
    durations = {json.loads(p.read_text())["experiment"]: json.loads(p.read_text())["duration_seconds"]
                 for p in published.rglob("run.json")}
    (configs / "synthetic_dsg_c.yaml").write_text(TINY.format(name="synthetic_dsg_c", trials=1))   # never run
    found = {e.path.name: e.estimate
             for e in experiments("dai2014", configs, tmp_path / "empty", published_dir=published)}
    assert found["synthetic_dsg_a.yaml"] == pytest.approx(durations["synthetic_dsg_a"])
    assert found["synthetic_dsg_b.yaml"] == pytest.approx(durations["synthetic_dsg_b"])
    assert found["synthetic_dsg_c.yaml"] is None
    table = matrix("dai2014", configs, tmp_path / "empty", published_dir=published)
    assert f"| to run | {duration_text(durations['synthetic_dsg_a'])} | synthetic_dsg_a.yaml |" in table
    assert "| to run | ? | synthetic_dsg_c.yaml |" in table
    assert all(e.estimate is None for e in experiments("dai2014", configs, tmp_path / "empty"))


def test_cli_publish_and_report_from_published(tmp_path, monkeypatch):
    _, out = tiny_runs(tmp_path)
    monkeypatch.chdir(tmp_path)             # the header names the folders as the command was given them

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "kernelbench.cli", *map(str, args)], capture_output=True,
                              text=True, cwd=tmp_path, check=False)
    done = cli("publish", "dai2014", "--results", out, "--out", "pub", "--reproduction", "R.md")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "R.md").read_text() == reproduction_markdown(Path("pub"), Path("R.md"))
    assert "`kernelbench report --from pub --out R.md`" in (tmp_path / "R.md").read_text()
    assert cli("report", "--from", "pub", "--out", "R.md", "--check").returncode == 0
    (tmp_path / "R.md").write_text("edited by hand\n")
    stale = cli("report", "--from", "pub", "--out", "R.md", "--check")
    assert stale.returncode == 2 and reproduction_command(Path("pub"), Path("R.md")) in stale.stderr
    assert cli("report", "--from", "pub", "--out", "R.md").returncode == 0
    assert (tmp_path / "R.md").read_text() == reproduction_markdown(Path("pub"), Path("R.md"))
    # a detail page is checked as REPRODUCTION.md is
    details = tmp_path / "pub" / "dai2014" / "DETAILS.md"
    details.write_text(details.read_text() + "a line by hand\n")
    stale = cli("report", "--from", "pub", "--out", "R.md", "--check")
    assert stale.returncode == 2 and str(Path("pub") / "dai2014" / "DETAILS.md") in stale.stderr
    assert "link back to another report" not in stale.stderr      # its way back is right; a line differs
    assert cli("report", "--from", "pub", "--out", "R.md").returncode == 0
    # a check against another report than the pages were written with says why the pages differ
    elsewhere = cli("report", "--from", "pub", "--out", "other.md", "--check")
    assert elsewhere.returncode == 2 and "link back to another report than other.md" in elsewhere.stderr
    nothing = cli("publish", "li2016", "--results", out, "--out", "pub")
    assert nothing.returncode == 2 and "no run of li2016 under" in nothing.stderr and "--results" in nothing.stderr


def test_reproduction_md_is_what_the_published_runs_give():
    """REPRODUCTION.md and the papers' detail pages must be what results/published gives -- with no
    run published too -- so they are regenerated with every published run and with any change to the
    papers' values or the report."""
    command = reproduction_command(PUBLISHED, REPRODUCTION)
    if not REPRODUCTION.is_file():
        assert not (PUBLISHED.is_dir() and run_folders(PUBLISHED)), f"REPRODUCTION.md is missing; regenerate it: {command}"
        pytest.skip("neither REPRODUCTION.md nor a published run")
    for path, expected in reproduction_files(PUBLISHED, REPRODUCTION).items():
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current != expected:
            diff = next(((a, b) for a, b in zip(current.splitlines(), expected.splitlines()) if a != b),
                        (f"{len(current.splitlines())} lines", f"{len(expected.splitlines())} lines"))
            pytest.fail(f"{path.relative_to(REPO)} is not what results/published gives; regenerate it: {command}\n"
                        f"  committed: {diff[0]}\n  published: {diff[1]}")


def test_reproduction_md_is_read_in_minutes_and_shows_every_published_figure():
    """The short report stays short (the detail pages hold the rest) and shows the figures drawn
    from the published runs, each once."""
    if not REPRODUCTION.is_file():
        pytest.skip("no REPRODUCTION.md")
    text = REPRODUCTION.read_text(encoding="utf-8")
    assert len(text.encode()) <= 100_000, "REPRODUCTION.md over 100 KB: move the detail to the detail pages"
    drawn = sorted(p.name for p in (PUBLISHED / "figures").glob("*.png"))
    shown = re.findall(r"^!\[[^\]]*\]\(results/published/figures/([^)]+)\)$", text, re.M)
    assert sorted(shown) == drawn


def test_the_published_results_stay_within_their_size_budget(tmp_path):
    files = [p for p in PUBLISHED.rglob("*") if p.is_file()] if PUBLISHED.is_dir() else []
    problem = over_size_limit(files + ([REPRODUCTION] if REPRODUCTION.is_file() else []), PUBLISHED_MAX_BYTES)
    assert problem is None, problem
    # the message names the largest files
    (tmp_path / "big.csv").write_bytes(b"x" * 3000)
    (tmp_path / "small.json").write_bytes(b"x" * 10)
    message = over_size_limit([tmp_path / "big.csv", tmp_path / "small.json"], 1000)
    assert "over the budget" in message and message.index("big.csv") < message.index("small.json")


SKIPPED = """name: synthetic_tsvm_ls
tags: {paper: dai2014, figure: fig1, panel: "p", role: baseline}
dataset: {name: synthetic, shape: susy, n: 400, n_test: 100, labeled: 20}
algorithm: {name: tsvm-ls, params: {max_points: 100}}
trials: 2
evaluate: {every: 1, on: [test_error]}
"""


def test_a_run_that_finished_no_cell_is_not_published_and_a_published_copy_of_one_goes(tmp_path):
    """An O(n²) baseline past its max_points writes a `skipped` row per cell: such a run is no
    result (it feeds no number), so publish leaves it out, removes a copy published before, and the
    experiment is recorded as having no finished cell, with the solver's reason."""
    configs, out = tiny_runs(tmp_path)
    (configs / "synthetic_tsvm_ls.yaml").write_text(SKIPPED)
    skipped = run_experiment(load_config(configs / "synthetic_tsvm_ls.yaml"), out_dir=out, quiet=True)
    assert set(read_results(skipped)["status"]) == {"skipped"}
    published = tmp_path / "published"
    done = publish("dai2014", results_dir=out, out_dir=published, reproduction=None,
                   not_run=lambda p: not_run(p, configs, out, published), echo=lambda line: None)["dai2014"]
    assert done["left out"] == [skipped.name] and len(done["written"]) == 2
    assert not (published / "dai2014" / skipped.name).exists()
    recorded = json.loads((published / "dai2014" / ABSENT_FILE).read_text())["experiments"]
    assert recorded["synthetic_tsvm_ls.yaml"].startswith("no cell finished (") and "max_points" in recorded[
        "synthetic_tsvm_ls.yaml"]
    # a copy published before this rule, from another machine: removed, not kept
    shutil.copytree(skipped, published / "dai2014" / skipped.name)
    shutil.rmtree(skipped)
    done = publish("dai2014", results_dir=out, out_dir=published, reproduction=None, echo=lambda line: None)["dai2014"]
    assert done["left out"] == [skipped.name] and not done["kept"]
    assert not (published / "dai2014" / skipped.name).exists()
    # published again from results without that run (another panel's): the record of the attempt stays,
    # while --prune starts the record afresh ("not run")
    for prune in (False, True):
        publish("dai2014", results_dir=out, out_dir=published, reproduction=None, prune=prune,
                not_run=lambda p: not_run(p, configs, out, published), echo=lambda line: None)
        recorded = json.loads((published / "dai2014" / ABSENT_FILE).read_text())["experiments"]
        assert recorded["synthetic_tsvm_ls.yaml"].startswith("not run" if prune else "no cell finished (")


def test_a_run_on_a_replica_of_a_registry_set_is_named_a_replica_in_the_report(tmp_path, monkeypatch):
    """A run on a synthetic replica that stands in a registry set's place (same file name, same
    format) is never listed as a run on the published set: its row says the replica and its size."""
    import yaml

    from kernelbench.data.synthetic import SyntheticSpec, write_files

    mirror = tmp_path / "mirror"
    write_files(SyntheticSpec("susy", n=400, n_test=100, seed=1, noise=0.2), mirror, progress=False)
    registry = yaml.safe_load((REPO / "datasets" / "registry.yaml").read_text())
    registry["datasets"]["susy"]["files"]["train"]["n"] = 500          # the replica's rows, not 5,000,000
    registry["datasets"]["susy"]["split"]["n_test"] = 100
    (tmp_path / "registry.yaml").write_text(yaml.safe_dump(registry))
    for key, value in {"KERNELBENCH_MIRROR": mirror, "KERNELBENCH_DATA": tmp_path / "cache",
                       "KERNELBENCH_REGISTRY": tmp_path / "registry.yaml", "KERNELBENCH_OFFLINE": "1"}.items():
        monkeypatch.setenv(key, str(value))
    configs, out = tmp_path / "configs", tmp_path / "results"
    configs.mkdir()
    on_replica = TINY.format(name="susy_dsg_a", trials=1).replace(
        "{name: synthetic, shape: susy, n: 400, n_test: 100}", "{name: susy, test: official}")
    (configs / "susy_dsg_a.yaml").write_text(on_replica)
    (configs / "synthetic_dsg_a.yaml").write_text(TINY.format(name="synthetic_dsg_a", trials=1))
    replica_run = run_experiment(load_config(configs / "susy_dsg_a.yaml"), out_dir=out, quiet=True)
    generated_run = run_experiment(load_config(configs / "synthetic_dsg_a.yaml"), out_dir=out, quiet=True)
    reproduction = tmp_path / "R.md"
    publish("dai2014", results_dir=out, out_dir=out / "published", reproduction=reproduction, echo=lambda line: None)
    text = details_of(out / "published")
    assert (f"| {replica_run.name} | finished | synthetic replica of susy, 400 + 100 rows, Bayes error 0.2 | dsg |"
            in text)
    assert f"| {generated_run.name} | finished | synthetic | dsg |" in text      # its name says it already
