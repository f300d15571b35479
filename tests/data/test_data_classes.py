"""dataset.classes: keep the rows of some labels (Dai et al.'s MNIST8M 8 vs 6 is mnist8m with
classes [8, 6]); two classes make a binary task. Checked on a small 5-class registry set (a temp
registry and mirror), against scikit-learn's svmlight reader and a numpy mask."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from kernelbench.config import config_from_dict, config_to_dict
from kernelbench.data import load_dataset
from kernelbench.errors import ConfigError, DataError
from kernelbench.results import read_results
from kernelbench.experiment import run_experiment

D = 4


def _svm_file(path, rng, n):
    y = rng.integers(0, 5, size=n)
    X = rng.normal(size=(n, D)) + y[:, None]          # classes apart, so a classifier can learn them
    path.write_text("".join(f"{label} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row)) + "\n"
                            for label, row in zip(y, X)))
    return path


@pytest.fixture
def five_classes(tmp_path, monkeypatch):
    """A registry set `five` (labels 0..4, train + official test file) in a temp mirror."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    rng = np.random.default_rng(7)
    train, test = _svm_file(mirror / "five", rng, 300), _svm_file(mirror / "five.t", rng, 100)
    reg = tmp_path / "reg.yaml"
    reg.write_text(f"""
datasets:
  five: {{task: multiclass, format: svmlight, d: {D}, description: "five classes",
         files: {{train: {{name: five, url: null, compression: none, sha256: null, n: 300}},
                 test: {{name: five.t, url: null, compression: none, sha256: null, n: 100}}}},
         split: {{protocol: official}}}}
  target: {{task: regression, format: svmlight, d: {D}, description: "the same file as targets",
           files: {{train: {{name: five, url: null, compression: none, sha256: null, n: 300}}}},
           split: {{protocol: random, test_fraction: 0.25}}}}
""")
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(reg))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(mirror))
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    return train, test


def _expected(path, classes):
    X, y = load_svmlight_file(str(path), n_features=D)
    keep = np.isin(y, classes)
    return X.toarray()[keep], y[keep]


def test_two_classes_make_a_binary_task_with_raw_labels(five_classes):
    train, test = five_classes
    ds = load_dataset("five", classes=[3, 1], progress=False)
    assert ds.task == "binary"
    for X, y, path in ((ds.X_train, ds.y_train, train), (ds.X_test, ds.y_test, test)):
        X_want, y_want = _expected(path, [3, 1])
        np.testing.assert_allclose(np.asarray(X), X_want)
        np.testing.assert_array_equal(y, y_want)            # raw labels, file order
        assert set(np.unique(y)) == {1.0, 3.0}
    assert "only classes 3, 1 kept (binary task)" in ds.description


def test_more_classes_stay_multiclass_and_split_after_the_selection(five_classes):
    train, _ = five_classes
    ds = load_dataset("five", classes=[0, 2, 4], test=0.25, progress=False)
    assert ds.task == "multiclass"
    _, y_want = _expected(train, [0, 2, 4])
    assert ds.n_train + ds.n_test == y_want.shape[0]
    assert set(np.unique(ds.y_train)) == set(np.unique(ds.y_test)) == {0.0, 2.0, 4.0}


def test_a_class_absent_from_the_data_names_the_labels_present(five_classes):
    with pytest.raises(DataError, match=r"asks for 7, but the training labels present are 0, 1, 2, 3, 4"):
        load_dataset("five", classes=[3, 7], progress=False)
    with pytest.raises(DataError, match="regression task"):
        load_dataset("target", classes=[3, 1], progress=False)
    with pytest.raises(DataError, match="at least two labels"):
        load_dataset("five", classes=[3], progress=False)


BASE = {"dataset": {"name": "five", "classes": [3, 1]},
        "algorithm": {"name": "r-pegasos", "params": {"n_components": 16, "batch_size": 8}},
        "stop": {"passes": 1}, "evaluate": {"on": ["test_error"]}}


def test_config_classes_make_a_binary_only_algorithm_run(five_classes, tmp_path):
    cfg = config_from_dict(BASE)                      # r-pegasos is binary only: accepted with 2 classes
    assert cfg.dataset.classes == (3, 1)
    assert config_to_dict(cfg)["dataset"]["classes"] == [3, 1]
    assert config_from_dict(config_to_dict(cfg)).dataset == cfg.dataset
    assert "classes" not in config_to_dict(config_from_dict({**BASE, "dataset": {"name": "five"}}))["dataset"]
    rows = read_results(run_experiment(cfg, out_dir=tmp_path / "out", quiet=True))
    final = rows[rows["final"] == 1].iloc[-1]
    assert final["status"] == "ok" and 0 <= final["test_error"] < 0.5
    with pytest.raises(DataError, match="multiclass task"):   # all five classes: r-pegasos refuses
        run_experiment(config_from_dict({**BASE, "dataset": {"name": "five"}}), out_dir=tmp_path / "o2",
                       quiet=True)


@pytest.mark.parametrize("classes, field, words", [
    (8, "dataset.classes", "at least two labels"),
    ([8], "dataset.classes", "at least two labels"),
    ([8, 8], "dataset.classes", "listed twice"),
    (["eight", 6], "dataset.classes[0]", "a label"),
    ([True, 6], "dataset.classes[0]", "a label"),
])
def test_bad_classes_are_config_errors_naming_the_field(five_classes, classes, field, words):
    with pytest.raises(ConfigError) as info:
        config_from_dict({**BASE, "dataset": {"name": "five", "classes": classes}})
    assert info.value.field == field and words in str(info.value)


def test_classes_of_a_regression_set_are_refused_by_the_config(five_classes):
    with pytest.raises(ConfigError, match="dataset.classes: .*regression") as info:
        config_from_dict({**BASE, "dataset": {"name": "target", "classes": [3, 1]}})
    assert info.value.field == "dataset.classes"
    with pytest.raises(ConfigError, match="dataset.classes: .*regression"):
        config_from_dict({**BASE, "dataset": {"name": "five", "classes": [3, 1], "task": "regression"}})
    # an explicit classification task reads the targets as class labels
    cfg = config_from_dict({**BASE, "dataset": {"name": "target", "classes": [3, 1], "task": "binary"}})
    assert load_dataset("target", classes=cfg.dataset.classes, task="binary", progress=False).task == "binary"
