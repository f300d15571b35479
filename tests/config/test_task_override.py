"""dataset.task: a multi-class set treated as regression (as Gu et al. do for covtype-M, MNIST,
Aloi), validated by the config layer and honoured by the loader and the experiment loop's metric."""
from __future__ import annotations

import numpy as np
import pytest

from kernelbench.config import load_config
from kernelbench.errors import ConfigError
from kernelbench.results import read_results
from kernelbench.experiment import run_experiment


def _write(tmp_path, task_line):
    rng = np.random.default_rng(1)
    (tmp_path / "three.svm").write_text(
        "".join(f"{i % 3} 1:{rng.random():.4f} 2:{rng.random():.4f}\n" for i in range(90)))
    (tmp_path / "c.yaml").write_text(
        "dataset: {path: three.svm, test: 0.3%s}\n" % task_line
        + "algorithm: {name: dsg, params: {loss: squared, gamma: 1.0}}\nstop: {passes: 1}\n"
        + "evaluate: {on: [test_mse, test_error]}\n")
    return tmp_path / "c.yaml"


def test_multiclass_labels_as_regression(tmp_path, isolated_data):
    cfg = load_config(_write(tmp_path, ", task: regression"))
    assert cfg.dataset.task == "regression"
    folder = run_experiment(cfg, out_dir=tmp_path / "out", quiet=True)
    rows = read_results(folder)
    final = rows[rows["final"] == 1].iloc[-1]
    # scored as regression: an MSE, no classification error
    assert np.isfinite(final["test_mse"]) and not np.isfinite(final.get("test_error", np.nan))


def test_without_override_the_labels_are_multiclass(tmp_path, isolated_data):
    cfg = load_config(_write(tmp_path, ""))
    with pytest.raises(Exception, match="3 classes"):   # squared loss on 3 classes is refused
        run_experiment(cfg, out_dir=tmp_path / "out", quiet=True)


@pytest.mark.parametrize("bad", ["regresion", 3])
def test_unknown_task_is_refused_with_the_choices(tmp_path, bad):
    path = _write(tmp_path, f", task: {bad}")
    with pytest.raises(ConfigError, match="dataset.task.*binary, multiclass, regression"):
        load_config(path)
