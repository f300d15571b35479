"""`kernelbench bench NAME` and its peers.

Truths: scikit-learn's RBFSampler + SGDClassifier run directly (the rff-sgd peer must be exactly
that pipeline), scikit-learn's SVC fitted on the same prefix (the svm-subsample peer), the configs'
own files (what a benchmark keeps and replaces), and the run folders the command writes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.kernel_approximation import RBFSampler
from sklearn.linear_model import SGDClassifier
from sklearn.svm import SVC

from kernelbench.baselines.svm_subsample import doubling_sizes
from kernelbench.benchmarks import BENCHMARKS, BenchOptions
from kernelbench.benchmarks.run import bench_config
from kernelbench.cli import main
from kernelbench.config import load_config
from kernelbench.estimators import algorithms
from kernelbench.results import RunRecord, final_rows, read_results, run_folders
from kernelbench.solvers.kernels import median_gamma

REPO = Path(__file__).resolve().parents[1]


def _data(n=1500, seed=0):
    X, y = make_classification(n_samples=n, n_features=6, n_informative=4, random_state=seed)
    return X, y.astype(float)


def test_rff_sgd_is_rbfsampler_and_sgdclassifier_over_chunks():
    X, y = _data()
    model = algorithms()["rff-sgd"].build({"n_components": 300, "chunk_rows": 400, "passes": 2}, seed=3)
    model.fit(X[:1000], y[:1000])
    gamma = median_gamma(X[:1000], seed=3)
    rff = RBFSampler(gamma=gamma, n_components=300, random_state=3).fit(X[:1])
    sgd = SGDClassifier(loss="hinge", alpha=1e-4, random_state=3)
    X_train, y_train = X[:1000], y[:1000]
    for _ in range(2):                                   # two passes, the chunks in order
        for r0 in range(0, 1000, 400):
            sgd.partial_fit(rff.transform(X_train[r0:r0 + 400]), y_train[r0:r0 + 400], classes=np.unique(y))
    expected = sgd.predict(rff.transform(X[1000:]))
    np.testing.assert_array_equal(model.predict(X[1000:]), expected)
    assert model.gamma_ == gamma and model.n_iter_ == 6


def test_svm_subsample_fits_the_largest_prefix_within_the_budget():
    assert doubling_sizes(2000, 9000) == [2000, 4000, 8000, 9000]
    assert doubling_sizes(2000, 2000) == [2000]
    X, y = _data(1400)
    model = algorithms()["svm-subsample"].build({"fit_seconds": 120.0, "start": 600, "C": 2.0}, seed=0)
    model.fit(X[:1200], y[:1200])                       # 600, then 1,200 rows: both well within 120 s
    assert model.subsample_ == 1200 and len(model.tried_) == 2
    gamma = median_gamma(X[:1200], seed=0)
    direct = SVC(C=2.0, gamma=gamma).fit(X[:1200], y[:1200])
    np.testing.assert_array_equal(model.predict(X[1200:]), direct.predict(X[1200:]))
    assert model.counters()["subsample"] == 1200


def test_a_benchmark_keeps_the_configs_settings_and_replaces_data_and_stop(tmp_path):
    options = BenchOptions(out=tmp_path, configs=REPO / "configs", n=3000, n_test=500, threads=3)
    fullscale = BENCHMARKS["fullscale"]
    method = next(m for m in fullscale.methods if m.config == "susy_bsgd.yaml")
    cfg = bench_config(fullscale, method, options, 7.0, None)
    own = load_config(REPO / "configs" / "susy_bsgd.yaml")
    assert cfg.algorithm.params == own.algorithm.params and cfg.grid == {}      # one setting, the config's
    assert (cfg.stop.passes, cfg.stop.seconds, cfg.trials) == (own.stop.passes, 7.0, 1)
    assert cfg.dataset.name == "synthetic" and cfg.dataset.n == 3000 and cfg.dataset.scale == own.dataset.scale
    assert cfg.tags.role == "ours" and cfg.tags.paper is None
    equal_time = BENCHMARKS["equal-time"]
    options = BenchOptions(out=tmp_path, configs=REPO / "configs", dataset="ijcnn1", threads=3)
    method = next(m for m in equal_time.methods if m.config == "{d}_dsg_gu2018.yaml")
    cfg = bench_config(equal_time, method, options, 30.0, None)
    assert cfg.stop.passes is None and cfg.stop.seconds == 30.0 and cfg.algorithm.params["threads"] == 3
    assert cfg.dataset == load_config(REPO / "configs" / "ijcnn1_dsg_gu2018.yaml").dataset


def kb(*args, tmp_path):
    env = {**os.environ, "KERNELBENCH_DATA": str(tmp_path / "cache"), "KERNELBENCH_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "kernelbench.cli", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300)


def test_bench_fullscale_tiny_writes_run_folders_and_the_table(tmp_path):
    out = tmp_path / "bench"
    proc = kb("bench", "fullscale", "--n", "2000", "--n-test", "500", "--seconds", "1", "--only", "rff-sgd",
              "--only", "susy_dsg_gu2018", "--out", str(out), tmp_path=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = {RunRecord.load(p).experiment: p for p in run_folders(out / "runs")}
    assert set(runs) == {"fullscale-rff-sgd", "fullscale-susy_dsg_gu2018"}
    for name, folder in runs.items():
        meta = json.loads((folder / "run.json").read_text())
        assert meta["dataset"]["n_train"] == 2000 and meta["config"]["stop"]["seconds"] == 1
        (last,) = final_rows(read_results(folder)).to_dict("records")
        assert last["status"] == "ok" and 0 <= last["test_error"] <= 1
    rff = final_rows(read_results(runs["fullscale-rff-sgd"])).iloc[-1]
    assert 1 <= rff["train_seconds"] < 3 and rff["samples_seen"] > 2000     # epochs while within T
    assert "| rff-sgd | peer | 2,000 |" in proc.stdout and "lower than RFF + SGD" in proc.stdout
    again = kb("bench", "fullscale", "--table", "--out", str(out), tmp_path=tmp_path)
    assert again.returncode == 0 and "| susy_dsg_gu2018 | ours | 2,000 |" in again.stdout


@pytest.mark.parametrize("args, says", [(["nosuch"], "unknown benchmark 'nosuch'"),
                                        (["equal-time", "--seconds", "1"], "needs --dataset"),
                                        (["fullscale", "--only", "dgs"], "--only dgs: not a method")])
def test_bad_bench_arguments_exit_2_naming_the_fix(tmp_path, capsys, args, says):
    with pytest.raises(SystemExit) as exit_:
        main(["bench", *args, "--out", str(tmp_path / "o")])
    assert exit_.value.code == 2 and says in capsys.readouterr().err
