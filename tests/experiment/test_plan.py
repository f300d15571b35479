"""kernelbench.experiment.plan and .point: what to run as one value (a run, a grid, a tune or a sweep)
and the one function that runs it; a sweep point in its own process runs as `kernelbench run` runs it.
Tiny synthetic replicas: seconds each, and no timing is asserted."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from kernelbench.errors import ConfigError
from kernelbench.experiment.plan import Plan, execute
from kernelbench.experiment.point import main as point_main
from kernelbench.results import RunRecord

# what a run measures (time, memory) or names after its start: the rest of a row follows from the seed
MEASURED = ["run_id", "train_seconds", "predict_seconds", "train_memory_mb"]


def _config(tmp_path, name="tiny", **sections):
    config = {"name": name,
              "dataset": {"name": "synthetic", "shape": "susy", "n": 1000, "n_test": 200, "scale": "standard"},
              "algorithm": {"name": "dsg", "params": {"batch_size": 16, "block_size": 16}},
              "stop": {"passes": 1}, "evaluate": {"every": 20, "on": ["test_error", "objective"]}}
    config.update(sections)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _rows(folder) -> pd.DataFrame:
    return pd.read_csv(folder / "results.csv").drop(columns=MEASURED)


def test_one_run_is_the_config_with_the_plans_overrides(tmp_path):
    config = _config(tmp_path)
    folder = execute(Plan(configs=(config,), overrides={"trials": 2, "seed": 7}, out_dir=tmp_path / "out"),
                     quiet=True, command=["test"])
    rows = _rows(folder)
    assert sorted(set(rows["trial"])) == [0, 1] and sorted(set(rows["seed"])) == [7, 8]   # seed + trial
    record = RunRecord.load(folder)
    assert record.command == ["test"] and record.status == "finished" and record.sweep is None


def test_a_sweep_plan_runs_each_point_its_overrides_recorded_as_points_of_one_value(tmp_path):
    config = _config(tmp_path)
    plan = Plan(configs=(config,), overrides={"trials": 1}, points={"dataset.n": [600, 800]}, out_dir=tmp_path / "out")
    points = execute(plan, quiet=True, echo=lambda line: None)
    assert [p.name for p in points] == ["tiny-n600", "tiny-n800"]         # named after the swept key only
    for point, n in zip(points, (600, 800)):
        record = RunRecord.load(point.folder)
        assert record.sweep == {"trials": 1, "dataset.n": n} and record.dataset["n_train"] == n


def test_a_validated_config_edited_after_validation_runs_as_it_is(tmp_path):
    from dataclasses import replace

    from kernelbench.config import load_config
    config = _config(tmp_path, grid={"step": [0.5, 1.0]})
    cfg = replace(load_config(config, overrides={"trials": 1}), grid={})    # as a benchmark drops its grid
    folder = execute(Plan(configs=(cfg,), out_dir=tmp_path / "out"), quiet=True)
    rows = _rows(folder)
    assert rows["params"].nunique() == 1 and set(rows["trial"]) == {0}   # one setting: the edit was kept
    with pytest.raises(ValueError, match="runs as it is"):               # re-validating would undo the edit
        execute(Plan(configs=(cfg,), overrides={"seed": 1}, out_dir=tmp_path / "out"), quiet=True)


def test_a_plan_refuses_what_it_cannot_run(tmp_path):
    config = _config(tmp_path, grid={"step": [0.5, 1.0]}, then={"batch_size": [8, 16]}, cv=2)
    with pytest.raises(ValueError, match="plan mode"):
        execute(Plan(configs=(config,), mode="search"))
    with pytest.raises(ValueError, match="one run takes one config"):
        execute(Plan(configs=(config, config)))
    # run scores every cell on the test part: a second selection stage is grid's
    with pytest.raises(ConfigError, match=f"kernelbench grid {config}"):
        execute(Plan(configs=(config,), out_dir=tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_a_point_entry_names_its_run_folder_and_records_the_run_command_it_stands_for(tmp_path, capsys):
    config = _config(tmp_path)
    overrides = {"trials": 1, "name": "tiny-n600", "dataset.n": 600}
    point_main([str(config), "--out", str(tmp_path / "out"), "--overrides", json.dumps(overrides)])
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("results: ")]
    folder = Path(line.removeprefix("results: ")).parent
    (only,) = (tmp_path / "out").iterdir()
    record = RunRecord.load(folder)
    assert folder == only and folder.name.startswith("tiny-n600-") and record.dataset["n_train"] == 600
    assert record.command[:2] == ["kernelbench", "run"] and "dataset.n=600" in record.command


def test_a_point_entry_exits_2_with_the_message_on_a_problem_the_user_can_fix(tmp_path, capsys):
    config = _config(tmp_path)
    with pytest.raises(SystemExit) as error:
        point_main([str(config), "--out", str(tmp_path / "out"), "--overrides", json.dumps({"stop.pases": 1})])
    assert error.value.code == 2
    assert capsys.readouterr().err.startswith("kernelbench: error: ")


@pytest.mark.slow          # a child process per point (imports: seconds)
def test_a_point_in_its_own_process_gives_the_rows_it_gives_in_this_process(tmp_path):
    config = _config(tmp_path, trials=2)
    over = {"tags.figure": ["fig2"], "dataset.n": [600, 900]}
    here = execute(Plan(configs=(config,), points=over, out_dir=tmp_path / "here"), quiet=True, echo=lambda _: None)
    apart = execute(Plan(configs=(config,), points=over, out_dir=tmp_path / "apart", processes=True),
                    quiet=True, echo=lambda _: None)
    assert [p.name for p in apart] == [p.name for p in here] and all(p.wall_seconds for p in apart)
    for mine, theirs in zip(here, apart):
        assert not theirs.stopped, theirs.message
        assert len(_rows(mine.folder)) > 2 and _rows(theirs.folder).equals(_rows(mine.folder))
        assert RunRecord.load(theirs.folder).sweep == RunRecord.load(mine.folder).sweep
