"""A diverging solver never writes NaN results silently: the row says `diverged`, with a message
that suggests a smaller step, and the run still finishes (exit 0) so the other cells survive."""
import json
import os
import subprocess
import sys

import pandas as pd


def test_divergence_is_a_row_status_with_advice(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("dataset: {name: digits86}\n"
                      "algorithm: {name: dsg, params: {loss: squared, step: 1.0e+12, t0: 1.0, C: 1000.0}}\n"
                      "grid: {batch_size: [16, 32]}\nstop: {passes: 3}\n"
                      "evaluate: {every: 2, on: [objective, test_error]}\n")
    env = {**os.environ, "KERNELBENCH_DATA": str(tmp_path / "cache"), "KERNELBENCH_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "kernelbench.cli", "run", str(config), "--out",
                           str(tmp_path / "out"), "-q"], capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    folder, = (tmp_path / "out").iterdir()
    df = pd.read_csv(folder / "results.csv")
    final = df[df["final"] == 1]
    assert len(final) == 2 and (final["status"] == "diverged").all()          # both cells
    assert final["message"].str.contains("smaller step").all()
    ok = df[df["status"] == "ok"]
    assert ok[["objective", "test_error"]].notna().all().all()               # no NaN written as ok
    meta = json.loads((folder / "run.json").read_text())
    assert meta["status"] == "finished" and "thread count" in meta["determinism"]


def test_a_non_finite_objective_is_divergence_for_any_algorithm(tmp_path, monkeypatch):
    """The experiment loop's own guard: an estimator whose iterates stay finite but whose objective is
    NaN still ends its cell as `diverged`, never as an ok row holding NaN."""
    from kernelbench.config import config_from_dict
    from kernelbench.experiment import run_experiment
    from kernelbench.solvers.dsg import DSGClassifier

    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    monkeypatch.setattr(DSGClassifier, "objective", lambda self, X, y: float("nan"))
    # step and t0 given: the auto schedule's pilot compares objectives, which are all NaN here
    cfg = config_from_dict({"dataset": {"name": "digits86"},
                            "algorithm": {"name": "dsg", "params": {"step": 1000.0, "t0": 100.0}},
                            "stop": {"passes": 1}, "evaluate": {"every": 1, "on": ["objective"]}})
    folder = run_experiment(cfg, out_dir=tmp_path / "out", quiet=True)
    df = pd.read_csv(folder / "results.csv")
    assert (df["status"] == "diverged").sum() == 1 and df["final"].iloc[-1] == 1
    assert "objective became NaN/inf" in df["message"].iloc[-1]
    assert df.loc[df["status"] == "ok", "objective"].notna().all()
