"""`kernelbench reproduce`: a paper's configs run once (done ones kept, unfinished ones resumed), the
ones without data listed with the fix, then its figures and report section; `--list` the matrix."""
import json
import shlex
import subprocess
import sys

import pandas as pd
import pytest

from kernelbench.config import load_config
from kernelbench.errors import ConfigError
from kernelbench.experiment.sweep import parse_over
from kernelbench.papers import Sweep
from kernelbench.reproduce import SWEEPS, experiments, matrix, reproduce, sweep_command, sweep_plan
from kernelbench.results import Run

TINY = """name: {name}
tags: {{paper: {paper}, figure: fig1, panel: "{panel}", role: ours}}
dataset: {dataset}
algorithm: {{name: dsg, params: {{batch_size: 16, block_size: 8, gamma: 0.5, step: 1.0, t0: 10.0}}}}
trials: {trials}
stop: {{iterations: 6}}
evaluate: {{every: 3, on: [test_error]}}
"""
SYNTHETIC = "{name: synthetic, shape: susy, n: 400, n_test: 100}"


def write(folder, name, paper="dai2014", dataset=SYNTHETIC, trials=2, panel="p"):
    path = folder / f"{name}.yaml"
    path.write_text(TINY.format(name=name, paper=paper, dataset=dataset, trials=trials, panel=panel))
    return path


@pytest.fixture
def configs(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    write(folder, "synthetic_dsg_a")
    write(folder, "synthetic_dsg_b", trials=1)
    write(folder, "synthetic_dsg_other", paper="li2016")               # another paper's: not run
    write(folder, "nowhere_dsg", dataset="{name: epsilon, test: official}")   # no data here
    (folder / "quickstart.yaml").write_text(TINY.replace("tags: {{paper: {paper}, figure: fig1, panel: \"{panel}\", "
                                                         "role: ours}}\n", "").format(
        name="quickstart", dataset=SYNTHETIC, trials=1))                   # untagged: no paper's
    return folder


def test_a_paper_runs_once_lists_what_has_no_data_and_renders_its_report(configs, tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(tmp_path / "empty_mirror"))
    out, said = tmp_path / "results", []
    outcome = reproduce("dai2014", configs_dir=configs, out_dir=out, quiet=True, echo=said.append)
    assert outcome == {"synthetic_dsg_a.yaml": "ran", "synthetic_dsg_b.yaml": "ran", "nowhere_dsg.yaml": "no data"}
    assert any("nowhere_dsg.yaml: epsilon (train, test) not in the cache or a mirror: kernelbench datasets "
               "fetch epsilon" in line for line in said)
    runs = sorted(p.name.rsplit("-", 3)[0] for p in out.glob("*/run.json") for p in [p.parent])
    assert runs == ["synthetic_dsg_a", "synthetic_dsg_b"]
    assert (out / "report_dai2014.md").read_text().startswith("# kernelbench")
    assert "Glasmachers" not in (out / "report_dai2014.md").read_text()     # this paper's section only
    # a second call keeps every finished run (same config): nothing is trained again
    again = reproduce("dai2014", configs_dir=configs, out_dir=out, quiet=True, echo=said.append)
    assert again["synthetic_dsg_a.yaml"] == "done" and len(list(out.glob("*/run.json"))) == 2
    table = matrix("dai2014", configs, out)
    assert "| dai2014 | fig1 | p | synthetic | dsg | ours | done |" in table
    assert "| dai2014 | fig1 | p | epsilon | dsg | ours | no data |" in table
    assert "3 entries: 2 runnable here (2 done), 1 without their data, 0 made by sweeps" in table


def test_an_unfinished_run_is_resumed_not_restarted(configs, tmp_path):
    out = tmp_path / "results"
    cfg = load_config(configs / "synthetic_dsg_a.yaml")
    from kernelbench.config import config_to_dict

    killed = Run.create(out, cfg.name, config_to_dict(cfg), tags=cfg.tags.as_dict())   # status "running"
    found = {e.path.name: e for e in experiments("dai2014", configs, out)}
    assert found["synthetic_dsg_a.yaml"].state == "resume"
    reproduce("dai2014", configs_dir=configs, out_dir=out, quiet=True, echo=lambda line: None)
    assert Run.open(killed.path).status == "finished"          # the same folder, finished
    assert len(list(out.glob("synthetic_dsg_a-*"))) == 1


def test_a_budget_starts_no_experiment_once_spent(configs, tmp_path):
    outcome = reproduce("dai2014", configs_dir=configs, out_dir=tmp_path / "r", time_limit=1e-9, quiet=True,
                        echo=lambda line: None)
    assert list(outcome.values()).count("left (budget spent)") == 2 and "ran" not in outcome.values()
    outcome = reproduce("dai2014", configs_dir=configs, out_dir=tmp_path / "r", time_limit=3600, quiet=True,
                        echo=lambda line: None)
    assert list(outcome.values()).count("ran") == 2


def test_estimates_come_from_earlier_runs_or_time_limits(configs, tmp_path):
    out = tmp_path / "results"
    reproduce("dai2014", configs_dir=configs, out_dir=out, quiet=True, echo=lambda line: None)
    meta = json.loads(next(out.glob("synthetic_dsg_a-*/run.json")).read_text())
    found = {e.path.name: e for e in experiments("dai2014", configs, out)}
    assert found["synthetic_dsg_a.yaml"].estimate == pytest.approx(meta["duration_seconds"])
    limited = write(configs, "synthetic_dsg_timed", trials=3)
    limited.write_text(limited.read_text().replace("stop: {iterations: 6}", "stop: {seconds: 2}"))
    found = {e.path.name: e for e in experiments("dai2014", configs, tmp_path / "none")}
    assert found["synthetic_dsg_timed.yaml"].estimate == 6.0 and found["synthetic_dsg_b.yaml"].estimate is None


def test_every_shipped_config_is_in_the_matrix_with_a_state():
    table = matrix(None, "configs", "/nonexistent")
    tagged = [p for p in __import__("pathlib").Path("configs").glob("*.yaml") if "tags:" in p.read_text()]
    for path in tagged:
        assert f"| {path.name} |" in table, path.name
    assert all(f"| {sweep_command(sweep)} |" in table for _, sweep in SWEEPS)
    assert "| (sweep) |" in table


def test_cli_list_and_errors(configs, tmp_path):
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "kernelbench.cli", *args], capture_output=True, text=True)
    listed = cli("reproduce", "--list", "dai2014", "--configs", str(configs), "--out", str(tmp_path / "r"))
    assert listed.returncode == 0 and "synthetic_dsg_a.yaml" in listed.stdout
    unknown = cli("reproduce", "dai2015", "--configs", str(configs))
    assert unknown.returncode == 2 and "'dai2015' is not one of" in unknown.stderr and "'dai2014'" in unknown.stderr
    missing = cli("reproduce", "dai2014", "--configs", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "--configs" in missing.stderr


def test_a_model_selection_config_is_cross_validated_then_refitted_not_run_cell_by_cell(tmp_path):
    """`cv:` in the file: reproduce runs it as `kernelbench grid` (CV on the training part, the
    best refitted on the test part); the same grid without `cv:` scores every cell on the test part."""
    import pandas as pd

    folder, out = tmp_path / "configs", tmp_path / "results"
    folder.mkdir()
    for name, extra in (("synthetic_dsg_grid", "grid: {C: [1.0, 100.0]}\ncv: 2\n"),
                        ("synthetic_dsg_cells", "grid: {C: [1.0, 100.0]}\n")):
        path = write(folder, name)
        path.write_text(path.read_text() + extra)
    found = {e.path.name: e for e in experiments("dai2014", folder, out)}
    assert found["synthetic_dsg_grid.yaml"].selection and not found["synthetic_dsg_cells.yaml"].selection
    outcome = reproduce("dai2014", configs_dir=folder, out_dir=out, quiet=True, echo=lambda line: None)
    assert outcome == {"synthetic_dsg_cells.yaml": "ran", "synthetic_dsg_grid.yaml": "ran"}

    run = next(out.glob("synthetic_dsg_grid-*"))
    df = pd.read_csv(run / "results.csv")
    cv, refit = df[df["fold"].notna()], df[df["fold"].isna() & (df["final"] == 1)]
    assert len(cv) == 2 * 2 and sorted(cv["fold"]) == [0, 0, 1, 1]          # 2 cells × 2 folds
    means = cv.groupby("params")["test_error"].mean()
    assert sorted(refit["trial"]) == [0, 1] and refit["params"].nunique() == 1
    assert means[refit["params"].iloc[0]] == means.min()                     # the refit: the CV argmin
    assert refit["test_error"].notna().all()
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "finished" and meta["cv"] == 2 and len(meta["cells"]) == 2
    cells = pd.read_csv(next(out.glob("synthetic_dsg_cells-*")) / "results.csv")
    assert cells["fold"].isna().all() and cells["params"].nunique() == 2   # every cell on the test part

    # done is kept; an unfinished one is resumed in its folder; --list shows it like the others
    again = reproduce("dai2014", configs_dir=folder, out_dir=out, quiet=True, echo=lambda line: None)
    assert again["synthetic_dsg_grid.yaml"] == "done" and len(list(out.glob("synthetic_dsg_grid-*"))) == 1
    assert "| dai2014 | fig1 | p | synthetic | dsg | ours | done |" in matrix("dai2014", folder, out)
    meta["status"] = "running"
    (run / "run.json").write_text(json.dumps(meta))
    assert {e.path.name: e.state for e in experiments("dai2014", folder, out)}["synthetic_dsg_grid.yaml"] == "resume"
    reproduce("dai2014", configs_dir=folder, out_dir=out, quiet=True, echo=lambda line: None)
    assert Run.open(run).status == "finished" and len(list(out.glob("synthetic_dsg_grid-*"))) == 1
    assert pd.read_csv(run / "results.csv").equals(df)                       # nothing trained again


def test_a_model_selection_estimate_counts_folds_and_refits(tmp_path):
    folder = tmp_path / "configs"
    folder.mkdir()
    path = write(folder, "synthetic_dsg_grid", trials=3)
    path.write_text(path.read_text().replace("stop: {iterations: 6}", "stop: {seconds: 2}")
                    + "grid: {C: [1.0, 10.0, 100.0]}\ncv: 2\n")
    (e,) = experiments("dai2014", folder, tmp_path / "none")
    assert e.estimate == 2 * (3 * 2 + 3)          # 3 cells × 2 folds, then 3 refit trials


SWEEP = [Sweep(figure="fig2", configs=("configs/synthetic_dsg_b.yaml",),
               over={"tags.figure": ("fig2",), "dataset.subsample": (100, 200)})]


def test_a_papers_sweep_runs_each_point_once_tagged_with_its_panel_and_resumes_an_unfinished_point(configs, tmp_path):
    out, said = tmp_path / "results", []
    outcome = reproduce("dai2014", configs_dir=configs, out_dir=out, quiet=True, echo=said.append, figure="fig2",
                        sweeps=SWEEP)
    assert outcome == {"fig2 sweep: synthetic_dsg_b.yaml": "ran"}      # --figure fig2: not the fig1 configs
    folders = sorted(p.parent for p in out.glob("synthetic_dsg_b-*/run.json"))
    records = {json.loads((f / "run.json").read_text())["sweep"]["dataset.subsample"]: f for f in folders}
    assert sorted(records) == [100, 200]
    for size, folder in records.items():
        meta = json.loads((folder / "run.json").read_text())
        assert meta["dataset"]["n_train"] == size                   # the rows it trained on: the point
        assert meta["tags"]["figure"] == "fig2"                     # never pooled with the config's fig1 runs
        assert set(pd.read_csv(folder / "results.csv")["figure"]) == {"fig2"}
    # a second call keeps the finished points; a point killed mid-run is resumed in its own folder
    killed = records[200] / "run.json"
    killed.write_text(json.dumps({**json.loads(killed.read_text()), "status": "running"}))
    again = reproduce("dai2014", configs_dir=configs, out_dir=out, quiet=True, echo=said.append, figure="fig2",
                      sweeps=SWEEP)
    assert again == {"fig2 sweep: synthetic_dsg_b.yaml": "ran"}
    assert sorted(p.parent for p in out.glob("synthetic_dsg_b-*/run.json")) == folders
    assert json.loads(killed.read_text())["status"] == "finished"
    done = reproduce("dai2014", configs_dir=configs, out_dir=out, quiet=True, echo=said.append, figure="fig2",
                     sweeps=SWEEP)
    assert done == {"fig2 sweep: synthetic_dsg_b.yaml": "done"}
    assert len(list(out.glob("synthetic_dsg_b-*"))) == 2


def test_a_sweep_waits_for_the_next_call_once_the_budget_is_spent_and_keeps_its_panel(configs, tmp_path):
    outcome = reproduce("dai2014", configs_dir=configs, out_dir=tmp_path / "r", time_limit=1e-9, quiet=True,
                        echo=lambda line: None, figure="fig2", sweeps=SWEEP)
    assert outcome == {"fig2 sweep: synthetic_dsg_b.yaml": "left (budget spent)"}
    assert not list((tmp_path / "r").glob("synthetic_dsg_b-*"))
    other = Sweep(figure="fig2", configs=("configs/a.yaml",), over={"tags.figure": ("fig1",), "trials": (1, 2)})
    with pytest.raises(ConfigError, match=r"`tags.figure: \[fig2\]`"):       # its runs would be another panel's
        sweep_plan(other, configs)


def test_every_papers_sweep_is_what_reproduce_runs():
    for paper, sweep in SWEEPS:
        plan = sweep_plan(sweep, "configs")
        assert plan.configs and all(f.is_file() for f in plan.configs), sweep
        assert plan.points["tags.figure"] == [sweep.figure] and plan.processes == sweep.processes, sweep
        assert list(plan.points) == ["tags.figure", *[k for k in sweep.over if k != "tags.figure"]], sweep


def test_a_sweeps_command_reads_back_as_kernelbench_sweep_reads_it():
    """The command --list prints, split as a shell splits it and its --over read as `sweep` reads them,
    gives the paper file's configs, points (in their order) and processes."""
    for paper, sweep in SWEEPS:
        words = shlex.split(sweep_command(sweep))
        assert words[:2] == ["kernelbench", "sweep"]
        items = [value for flag, value in zip(words, words[1:]) if flag == "--over"]
        configs = [w for i, w in enumerate(words[2:], 2) if not w.startswith("-") and words[i - 1] != "--over"]
        assert configs == list(sweep.configs) and ("--processes" in words) == sweep.processes
        assert list(parse_over(items).items()) == [(k, list(v)) for k, v in sweep.over.items()], sweep
    (gu,) = [sweep for paper, sweep in SWEEPS if paper == "gu2018" and sweep.figure == "fig1gh"]
    assert list(gu.over) == ["tags.figure", "trials", "predict.n_test"]       # trials kept in its place
