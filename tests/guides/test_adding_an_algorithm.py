"""The documentation's "Adding an algorithm" page, followed word for word: its code block saved as a
module and imported is enough for the algorithm to be registered, checked, listed, configurable,
runnable and drawn by its tags."""
from __future__ import annotations

import importlib.util
import re
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.utils.estimator_checks import check_estimator

from kernelbench.estimators import algorithms
from kernelbench.algorithms import ALGORITHMS

from guide_pages import code_blocks


def _example_code() -> str:
    blocks = code_blocks("adding-an-algorithm.md", "python")
    assert len(blocks) == 1, "the page holds one python block: the whole module"
    return blocks[0]


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The page's module, imported as kernelbench.solvers.linear_pegasos would be."""
    path = tmp_path_factory.mktemp("module") / "linear_pegasos.py"
    path.write_text(_example_code(), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("linear_pegasos", path)
    module = importlib.util.module_from_spec(spec)
    algorithms()                        # the shipped ones first, as on a real import
    sys.modules["linear_pegasos"] = module
    spec.loader.exec_module(module)
    try:
        yield module
    finally:
        ALGORITHMS.pop("linear-pegasos", None)
        sys.modules.pop("linear_pegasos", None)


def test_registered_and_passes_scikit_learns_checks(example):
    spec = algorithms()["linear-pegasos"]
    assert spec.classifier is example.LinearPegasosClassifier
    report = check_estimator(spec.classifier(), on_fail=None, on_skip=None)
    assert not [r["check_name"] for r in report if r["status"] == "failed"]


def test_it_approaches_liblinears_optimum_and_its_objective_is_the_hinge_objective(example):
    from sklearn.svm import LinearSVC

    X, y = make_classification(400, 5, n_informative=3, n_redundant=0, random_state=0)
    model = example.LinearPegasosClassifier(C=0.05, passes=30, random_state=0).fit(X, y)
    Y = np.where(y == model.classes_[1], 1.0, -1.0)

    def objective(w):      # λ/2‖w‖² + mean hinge, λ = 1/(n C): LIBLINEAR's objective / (n C)
        return 0.5 * model.lambda_ * w @ w + np.mean(np.maximum(0, 1 - Y * (X @ w)))
    assert model.objective(X, y) == pytest.approx(objective(model.coef_), rel=1e-12)
    exact = LinearSVC(C=0.05, loss="hinge", fit_intercept=False, tol=1e-8, max_iter=100_000).fit(X, Y)
    optimum = objective(exact.coef_.ravel())
    assert optimum <= objective(model.coef_) <= optimum * 1.05
    assert model.score(X, y) >= exact.score(X, Y) - 0.03


def test_listed_configurable_runnable_and_drawn_by_its_tags(example, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from kernelbench.cli import app
    from kernelbench.config import config_from_dict
    from kernelbench.errors import ConfigError
    from kernelbench.results import collect_results, final_rows, tagged
    from kernelbench.experiment import run_experiment

    listing = CliRunner().invoke(app, ["algorithms"])
    assert listing.exit_code == 0 and re.search(r"^linear-pegasos\b", listing.output, re.M)
    assert "batch_size = 16" in listing.output
    with pytest.raises(ConfigError, match="algorithm.params.batch_size"):
        config_from_dict({"dataset": {"name": "digits86"},
                          "algorithm": {"name": "linear-pegasos", "params": {"batch_size": 0}}})
    cfg = config_from_dict({
        "name": "digits86_linear_pegasos", "dataset": {"name": "digits86", "test": 0.25},
        "algorithm": {"name": "linear-pegasos", "params": {"C": 10.0}},
        "tags": {"paper": "dai2014", "figure": "fig1", "panel": "(2)", "role": "baseline"},
        "trials": 2, "stop": {"passes": 2}, "evaluate": {"every": 5, "on": ["objective", "test_error"]}})
    run_experiment(cfg, out_dir=tmp_path, quiet=True)
    rows = final_rows(tagged(collect_results(tmp_path), paper="dai2014", figure="fig1", role="baseline"))
    assert len(rows) == 2 and set(rows["algorithm"]) == {"linear-pegasos"}
    assert (rows["status"] == "ok").all() and (rows["test_error"] < 0.1).all()
