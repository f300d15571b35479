"""The results writer: run folders, crash-safe rows, atomic run.json."""
from __future__ import annotations

import csv
import errno
import json
import math
import os
import pickle
from datetime import datetime

import numpy as np
import pandas as pd
import pytest

from kernelbench._io import atomic_write_text, safe_name
from kernelbench.results import writing as results_module
from kernelbench.errors import KernelbenchError
from kernelbench.errors import OutputError
from kernelbench.results import (COLUMNS, TAG_COLUMNS, Run, collect_results, config_values, final_rows, read_results,
                                 tagged)

CONFIG = {"name": "demo", "algorithm": {"name": "dsg", "params": {"C": 1.0}}, "seed": 0}


def row(i: int, **extra) -> dict:
    return {"dataset": "a9a", "algorithm": "dsg", "params": {"gamma": 0.1, "C": 1.0},
            "trial": 0, "seed": 0, "fold": None, "iteration": i, "samples_seen": 100 * i,
            "n_features": 64 * i, "train_seconds": 0.1 * i, "objective": 1.0 / (i + 1),
            "train_error": 0.25, "test_error": float("nan"), "threads": 2, **extra}


def test_create_makes_folder_with_header_and_running_meta(tmp_path):
    run = Run.create(tmp_path / "results", "demo", CONFIG, command=["kernelbench", "run", "x.yaml"])
    assert run.path.parent == tmp_path / "results" and run.path.name == run.run_id
    name, date, clock, digest = run.run_id.rsplit("-", 3)
    assert name == "demo" and len(date) == 8 and len(clock) == 6 and len(digest) == 6
    int(digest, 16)
    with open(run.path / "results.csv", newline="") as f:
        assert next(csv.reader(f)) == COLUMNS
    meta = json.loads((run.path / "run.json").read_text())
    assert meta["status"] == "running" and meta["run_id"] == run.run_id
    assert meta["command"] == ["kernelbench", "run", "x.yaml"] and meta["config"] == CONFIG
    assert datetime.fromisoformat(meta["started"]).utcoffset().total_seconds() == 0
    assert meta["versions"]["python"] and meta["versions"]["numpy"] == np.__version__
    assert meta["machine"]["cpu_count"] == os.cpu_count()
    assert "git_commit" in meta and "hostname" in meta
    assert meta["git_commit"] is None or len(meta["git_commit"]) == 40


def test_rows_parse_back_with_pandas(tmp_path):
    run = Run.create(tmp_path, "demo", CONFIG)
    run.append(row(1))
    run.append(row(2, message="line one\nline two, with a comma and \"quotes\""))
    run.append({"iteration": 3, "status": "diverged", "objective": float("inf"),
                "params": '{"b": 1, "a": 2}', "trial": np.int64(4), "train_error": np.float32(0.5)})
    lines = (run.path / "results.csv").read_text().splitlines()
    assert len(lines) == 4                      # header + one physical line per row
    frame = read_results(run.path)
    assert list(frame.columns) == COLUMNS and len(frame) == 3
    assert (frame["run_id"] == run.run_id).all() and (frame["experiment"] == "demo").all()
    assert frame["iteration"].tolist() == [1, 2, 3]
    assert frame["samples_seen"].dtype == "Int64" and frame["fold"].isna().all()
    assert frame["train_seconds"][0] == 0.1     # floats written with repr round-trip exactly
    assert math.isnan(frame["test_error"][0])  # NaN -> empty cell -> NaN
    assert frame["objective"][2] == float("inf")
    assert frame["train_error"][2] == 0.5 and frame["trial"][2] == 4
    assert json.loads(frame["params"][0]) == {"C": 1.0, "gamma": 0.1}
    assert frame["params"][0] == json.dumps({"C": 1.0, "gamma": 0.1}, sort_keys=True)
    assert frame["params"][2] == '{"a": 2, "b": 1}'          # sorted keys
    assert frame["status"].tolist() == ["ok", "ok", "diverged"]
    assert frame["message"][1] == 'line one line two, with a comma and "quotes"'
    assert frame["message"][0] == ""
    # plain pandas sees the same table
    assert pd.read_csv(run.path / "results.csv").shape == (3, len(COLUMNS))


def test_unknown_column_or_status_is_a_bug(tmp_path):
    run = Run.create(tmp_path, "demo", CONFIG)
    with pytest.raises(ValueError, match="accuracy"):
        run.append({"accuracy": 0.9})
    with pytest.raises(ValueError, match="status"):
        run.append({"status": "great"})
    assert len(read_results(run.path)) == 0


def test_run_folders_never_collide(tmp_path):
    runs = [Run.create(tmp_path, "same", CONFIG) for _ in range(20)]
    assert len({r.path for r in runs}) == 20
    assert all((r.path / "run.json").exists() for r in runs)


def test_a_colliding_name_is_retried_not_reused(tmp_path, monkeypatch):
    first = Run.create(tmp_path, "demo", CONFIG)
    first.append(row(1))
    real_mkdir, calls = os.mkdir, []

    def mkdir_first_collides(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:
            raise FileExistsError(errno.EEXIST, "exists", str(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", mkdir_first_collides)
    second = Run.create(tmp_path, "demo", CONFIG)
    assert len(calls) == 2 and second.path != first.path
    assert len(read_results(first.path)) == 1          # the existing run was not touched


def test_status_transitions_and_meta_updates(tmp_path):
    run = Run.create(tmp_path, "demo", CONFIG)
    run.update(dataset={"n": 100, "d": 3}, peak_memory_mb=123)
    meta = json.loads((run.path / "run.json").read_text())
    assert meta["status"] == "running" and meta["dataset"] == {"n": 100, "d": 3}
    run.finish(summary={"best_test_error": 0.1})
    meta = json.loads((run.path / "run.json").read_text())
    assert meta["status"] == "finished" and meta["summary"] == {"best_test_error": 0.1}
    assert meta["duration_seconds"] >= 0 and meta["peak_memory_mb"] == 123
    assert datetime.fromisoformat(meta["ended"]) >= datetime.fromisoformat(meta["started"])
    assert Run.open(run.path).status == "finished"
    with pytest.raises(ValueError):
        run.finish("done")
    with pytest.raises(ValueError):
        run.update(status="finished")
    assert not [p for p in run.path.iterdir() if p.name.endswith(".tmp")]


def test_context_manager_marks_failure_and_interrupt(tmp_path):
    with pytest.raises(ZeroDivisionError):
        with Run.create(tmp_path, "boom", CONFIG) as run:
            run.append(row(1))
            1 / 0
    meta = json.loads((run.path / "run.json").read_text())
    assert meta["status"] == "failed" and "ZeroDivisionError" in meta["error"]
    assert len(read_results(run.path)) == 1

    with pytest.raises(KeyboardInterrupt):
        with Run.create(tmp_path, "stop", CONFIG) as run2:
            raise KeyboardInterrupt
    assert json.loads((run2.path / "run.json").read_text())["status"] == "interrupted"

    with Run.create(tmp_path, "fine", CONFIG) as run3:
        run3.append(row(1))
    assert json.loads((run3.path / "run.json").read_text())["status"] == "finished"


def test_disk_full_is_a_user_error_and_earlier_rows_survive(tmp_path, monkeypatch):
    run = Run.create(tmp_path, "demo", CONFIG)
    run.append(row(1))
    run.append(row(2))
    before = (run.path / "results.csv").read_bytes()

    def no_space(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "write", no_space)
        with pytest.raises(KernelbenchError) as info:
            run.append(row(3))
    assert isinstance(info.value, OutputError)
    assert str(run.path / "results.csv") in str(info.value) and "disk is full" in str(info.value)
    assert (run.path / "results.csv").read_bytes() == before
    assert read_results(run.path)["iteration"].tolist() == [1, 2]

    real_write = os.write

    def half_write(fd, data):                   # the disk fills up in the middle of the row
        return real_write(fd, bytes(data)[: len(data) // 2])

    with monkeypatch.context() as m:
        m.setattr(os, "write", half_write)
        with pytest.raises(OutputError):
            run.append(row(3))
    assert (run.path / "results.csv").read_bytes() == before     # the torn half was cut back

    with monkeypatch.context() as m:             # run.json cannot be rewritten either
        m.setattr(os, "write", no_space)
        with pytest.raises(OutputError, match="run.json"):
            run.finish()
    assert json.loads((run.path / "run.json").read_text())["status"] == "running"
    assert not [p for p in run.path.iterdir() if p.name.endswith(".tmp")]
    run.append(row(3))                           # space is back: writing goes on
    assert read_results(run.path)["iteration"].tolist() == [1, 2, 3]


def test_failure_to_record_status_does_not_hide_the_original_error(tmp_path, monkeypatch):
    run = Run.create(tmp_path, "demo", CONFIG)
    with pytest.raises(RuntimeError, match="original"):
        with run:
            monkeypatch.setattr(results_module, "atomic_write_text",
                                lambda *a: (_ for _ in ()).throw(OutputError("disk full")))
            raise RuntimeError("original")


def test_read_results_drops_a_torn_tail(tmp_path):
    run = Run.create(tmp_path, "demo", CONFIG)
    run.append(row(1))
    with open(run.path / "results.csv", "a") as f:      # what a power cut could leave behind
        f.write("x,demo,a9a,dsg")
    assert read_results(run.path)["iteration"].tolist() == [1]


def test_atomic_write_text_replaces_whole_files(tmp_path):
    target = tmp_path / "note.txt"
    atomic_write_text(target, "first")
    os.chmod(target, 0o640)
    atomic_write_text(target, "second ünïcode")
    assert target.read_text(encoding="utf-8") == "second ünïcode"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["note.txt"]
    with pytest.raises(OutputError, match="missing"):
        atomic_write_text(tmp_path / "missing" / "x.txt", "y")


def test_run_is_picklable_for_worker_processes(tmp_path):
    run = Run.create(tmp_path, "demo", CONFIG)
    clone = pickle.loads(pickle.dumps(run))
    clone.append(row(1))
    assert len(read_results(run.path)) == 1


# ---------------------------------------------------------------------------------- tags, final rows

def test_tags_go_into_run_json_and_every_row(tmp_path):
    run = Run.create(tmp_path, "demo", CONFIG, tags={"paper": "li2016", "figure": "fig1", "panel": None})
    run.append(row(1))
    run.append(row(2, final=1))
    assert json.loads((run.path / "run.json").read_text())["tags"] == {"paper": "li2016", "figure": "fig1"}
    frame = read_results(run.path)
    assert frame["paper"].tolist() == ["li2016"] * 2 and frame["figure"].tolist() == ["fig1"] * 2
    assert frame["panel"].tolist() == ["", ""] and frame["role"].tolist() == ["", ""]   # not set: empty
    assert Run.open(run.path).tags == {"paper": "li2016", "figure": "fig1"}

    untagged = Run.create(tmp_path, "plain", CONFIG)
    untagged.append(row(1))
    assert json.loads((untagged.path / "run.json").read_text())["tags"] == {}
    assert (read_results(untagged.path)[TAG_COLUMNS] == "").all().all()
    with pytest.raises(ValueError, match="colour"):
        Run.create(tmp_path, "bad", CONFIG, tags={"colour": "red"})


OLD_COLUMNS = [c for c in COLUMNS if c not in TAG_COLUMNS and c != "budget"]   # results.csv before tags


def _old_run(folder, config):
    """A run folder as an earlier kernelbench wrote it: no tags anywhere; trial 0 finished, trial 1
    killed after its first row."""
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"run_id": folder.name, "experiment": "demo",
                                                 "status": "interrupted", "config": config,
                                                 "started": "2024-01-01T00:00:00+00:00"}))
    lines = [",".join(OLD_COLUMNS)]
    for trial, iteration, final in ((0, 1, ""), (0, 2, "1"), (1, 1, "")):
        cells = {c: "" for c in OLD_COLUMNS}
        cells.update(run_id=folder.name, experiment="demo", dataset="a9a", algorithm="dsg",
                     params='{"C": 1.0}', trial=str(trial), iteration=str(iteration),
                     train_seconds="0.30000000000000004", status="ok", final=final)
        lines.append(",".join(cells[c] for c in OLD_COLUMNS))
    (folder / "results.csv").write_text("\n".join(lines) + "\n")


def test_resume_continues_a_run_written_before_tags(tmp_path):
    old = tmp_path / "demo-20240101-000000-abcdef"
    _old_run(old, CONFIG)
    before = read_results(old)                        # missing columns read as empty
    assert list(before.columns) == COLUMNS and (before[TAG_COLUMNS] == "").all().all()

    tags = {"paper": "dai2014", "figure": "fig1", "panel": "(1)", "role": "ours"}
    run = Run.latest(tmp_path, "demo", {**CONFIG, "tags": tags})   # tags do not decide the match
    assert run is not None and run.path == old
    done = run.resume(tags=tags)
    assert done == {('{"C": 1.0}', "0", "", "")}      # trial 0 finished; trial 1's row dropped
    with open(old / "results.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == COLUMNS and len(rows) == 3
    assert rows[2][COLUMNS.index("train_seconds")] == "0.30000000000000004"   # cells kept as written
    assert [r[COLUMNS.index("paper")] for r in rows[1:]] == ["dai2014", "dai2014"]
    run.append(row(1, trial=1, final=1))
    frame = read_results(old)
    assert frame["trial"].tolist() == [0, 0, 1] and (frame["role"] == "ours").all()
    assert json.loads((old / "run.json").read_text())["tags"] == tags


def test_final_rows_is_the_last_row_of_each_finished_cell(tmp_path):
    run = Run.create(tmp_path, "demo", CONFIG)
    run.append(row(1, trial=0))
    run.append(row(2, trial=0, final=1))                        # finished
    run.append(row(1, trial=1))                                 # never finished
    run.append(row(3, trial=2, status="diverged", final=1))     # finished, diverged
    run.append(row(4, trial=0, fold=0, final=1))                # a cross-validation fold
    frame = read_results(run.path)
    assert final_rows(frame)["iteration"].tolist() == [2, 3]
    assert final_rows(frame, statuses=("ok",))["iteration"].tolist() == [2]
    assert final_rows(frame, folds=True)["iteration"].tolist() == [2, 3, 4]
    assert final_rows(frame.iloc[0:0]).empty

    unmarked = frame.assign(final=pd.NA)           # a live run whose cells have not finished yet
    assert final_rows(unmarked).empty
    old = tmp_path / "old-20240101-000000-abcdef"             # before the `final` column: last rows
    _old_run(old, CONFIG)
    legacy = read_results(old).assign(final=pd.NA)
    assert final_rows(legacy).empty
    assert final_rows(legacy, old_runs=True)[["trial", "iteration"]].values.tolist() == [[0, 2], [1, 1]]
    assert final_rows(pd.concat([frame, legacy]), old_runs=True)["iteration"].tolist() == [2, 3, 2, 1]


def test_collect_results_adds_run_config_and_training_size(tmp_path):
    config = {"name": "demo", "stop": {"passes": 5}, "dataset": {"labeled_only": True}}
    a = Run.create(tmp_path / "r", "demo", config, tags={"paper": "geng2019", "figure": "fig2"})
    a.update(dataset={"n_train": 1200})
    a.append(row(1, final=1))
    b = Run.create(tmp_path / "r", "other", {"name": "other"}, tags={"paper": "gu2018"})
    b.append(row(1, final=1))
    smoke = Run.create(tmp_path / "r", "smoke", config)
    smoke.update(smoke=True)
    smoke.append(row(1, final=1))
    df = collect_results(tmp_path / "r")
    assert sorted(df["experiment"]) == ["demo", "other"]         # the smoke run is left out
    demo = df[df["experiment"] == "demo"]
    assert json.loads(demo["config"].item()) == config and demo["n_train"].item() == 1200
    assert df[df["experiment"] == "other"]["n_train"].isna().all()
    assert config_values(df, "stop.passes").tolist() == [5, None]
    assert config_values(df, "dataset.labeled_only").tolist() == [True, None]
    assert tagged(df, paper="geng2019")["experiment"].tolist() == ["demo"]
    assert tagged(df, paper=("geng2019", "gu2018"), figure="fig2")["experiment"].tolist() == ["demo"]
    assert tagged(df, role="ours").empty and tagged(pd.DataFrame(), paper="x").empty
    with pytest.raises(ValueError, match="colour"):
        tagged(df, colour="red")
    assert collect_results(tmp_path / "nothing-here").empty


def test_collect_results_names_the_synthetic_replica_a_run_read_for_its_data_set(tmp_path):
    made = {"generator": "kernelbench.data.synthetic v1", "shape": "hepmass", "n": 2500, "n_test": 500,
            "noise": 0.12, "bayes_error": 0.12}
    for name, dataset in (("on_replica", {"name": "hepmass", "synthetic": made}),
                          ("on_the_set", {"name": "hepmass"}),
                          # data named `synthetic` say what they are: no set is stood in for
                          ("generated", {"name": "synthetic", "synthetic": made})):
        run = Run.create(tmp_path, name, CONFIG)
        run.update(dataset=dataset)
        run.append(row(1, final=1))
    df = collect_results(tmp_path)
    replica = dict(zip(df["experiment"], df["replica"]))
    assert replica == {"on_replica": "synthetic replica of hepmass, 2,500 + 500 rows, Bayes error 0.12",
                       "on_the_set": "", "generated": ""}


def test_safe_name_makes_a_file_name_part():
    assert safe_name("my run/ä 1") == "my_run_1"
    assert safe_name("..hidden..") == "hidden"
    assert safe_name("///") == "run" and safe_name("", default="entry") == "entry"
    assert safe_name("x" * 300, max_length=150) == "x" * 150
