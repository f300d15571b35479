"""Values resolved when training begins (gamma: scale, passes: None, a pilot's step) are recorded
with the run: in results.csv's `resolved` column, in run.json's summary, and in what `run` prints.

Truth: scikit-learn's definition of gamma='scale', 1/(d·Var X), computed here from the data file."""
from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from kernelbench.cli.app import main
from kernelbench.results import RunRecord, final_rows, read_results


def _data_file(path, n=120, d=5):
    rng = np.random.default_rng(0)
    X = rng.normal(2.0, 3.0, size=(n, d))
    y = np.where(X[:, 0] > 2.0, 1, -1)
    lines = [f"{label} " + " ".join(f"{j + 1}:{float(x)!r}" for j, x in enumerate(row)) for label, row in zip(y, X)]
    path.write_text("\n".join(lines) + "\n")
    return X


def _run(tmp_path, gamma, capsys):
    X = _data_file(tmp_path / "data.svm")
    config = {"name": "resolved", "dataset": {"path": "data.svm", "test": "none"},
              "algorithm": {"name": "dsg", "params": {"gamma": gamma, "batch_size": 16, "block_size": 8,
                                                      "step": 1.0, "t0": 10.0}},
              "trials": 2, "stop": {"iterations": 3}, "evaluate": {"on": ["train_error"]}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out"), "--quiet"])
    assert exit_.value.code in (0, None)
    folder = next((tmp_path / "out").iterdir())
    return X, folder, capsys.readouterr().out


def test_gamma_scale_is_recorded_as_the_number_it_became(tmp_path, capsys):
    X, folder, printed = _run(tmp_path, "scale", capsys)
    expected = 1.0 / (X.shape[1] * X.var())                 # scikit-learn SVC's gamma='scale'
    rows = read_results(folder)
    assert len(rows) > 2 and rows["params"].map(lambda p: json.loads(p)["gamma"] == "scale").all()
    for text in rows["resolved"]:                           # every row of every trial
        assert json.loads(text)["gamma"] == pytest.approx(expected, rel=1e-12)
    summary = RunRecord.load(folder).summary
    assert [s["resolved"]["gamma"] for s in summary] == pytest.approx([expected] * 2, rel=1e-12)
    assert f"gamma={expected:.4g}" in printed


def test_a_given_number_is_not_resolved_and_a_rule_word_is(tmp_path, capsys):
    _, folder, printed = _run(tmp_path, 0.5, capsys)
    final = final_rows(read_results(folder))
    # gamma was given; loss was left at 'auto', which a binary classifier resolves to the hinge loss
    assert final["resolved"].map(json.loads).tolist() == [{"loss": "hinge"}] * 2
    assert [s["resolved"] for s in RunRecord.load(folder).summary] == [{"loss": "hinge"}] * 2
    assert "gamma=" not in printed and "loss=hinge" in printed
