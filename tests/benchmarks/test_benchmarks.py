"""`kernelbench bench NAME` and its peers.

Truths: scikit-learn's RBFSampler + SGDClassifier run directly (the rff-sgd peer must be exactly
that pipeline), scikit-learn's SVC fitted on the same prefix (the svm-subsample peer), the configs'
own files (what a benchmark keeps and replaces), and the run folders the command writes."""
from __future__ import annotations

import csv
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
from test_fullscale import registry_with

from kernelbench.baselines.svm_subsample import doubling_sizes
from kernelbench.benchmarks import BENCHMARKS, BenchOptions, Method
from kernelbench.benchmarks.measure import bench_config
from kernelbench.cli import main
from kernelbench.config import load_config
from kernelbench.data.synthetic import SyntheticSpec, write_files
from kernelbench.estimators import algorithms
from kernelbench.results import RunRecord, final_rows, read_results, run_folders
from kernelbench.solvers.kernels import median_gamma

REPO = Path(__file__).resolve().parents[2]


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


def kb(*args, tmp_path, env=None):
    env = {**os.environ, "KERNELBENCH_DATA": str(tmp_path / "cache"), "KERNELBENCH_OFFLINE": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "kernelbench.cli", *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300)


def bench(*args) -> int:
    """`kernelbench bench ARGS` in this process: its exit code."""
    with pytest.raises(SystemExit) as exit_:
        main(["bench", *args])
    return exit_.value.code


def test_bench_fullscale_tiny_writes_run_folders_and_the_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    out = tmp_path / "bench"
    assert bench("fullscale", "--n", "2000", "--n-test", "500", "--seconds", "1", "--only", "rff-sgd",
          "--only", "susy_dsg_gu2018", "--out", str(out)) == 0
    stdout = capsys.readouterr().out
    runs = {RunRecord.load(p).experiment: p for p in run_folders(out / "runs")}
    assert set(runs) == {"fullscale-rff-sgd", "fullscale-susy_dsg_gu2018"}
    for name, folder in runs.items():
        meta = json.loads((folder / "run.json").read_text())
        assert meta["dataset"]["n_train"] == 2000 and meta["config"]["stop"]["seconds"] == 1
        (last,) = final_rows(read_results(folder)).to_dict("records")
        assert last["status"] == "ok" and 0 <= last["test_error"] <= 1
    rff = final_rows(read_results(runs["fullscale-rff-sgd"])).iloc[-1]
    assert 1 <= rff["train_seconds"] < 3 and rff["samples_seen"] > 2000     # epochs while within T
    assert "| rff-sgd | peer | 2,000 |" in stdout and "lower than RFF + SGD" in stdout
    assert bench("fullscale", "--table", "--out", str(out)) == 0
    assert "| susy_dsg_gu2018 | ours | 2,000 |" in capsys.readouterr().out
    # --publish: the table's rows as a CSV named after --out's folder, each method's final row as its run has it
    assert bench("fullscale", "--table", "--out", str(out), "--publish", "--published", str(tmp_path / "pub")) == 0
    with (tmp_path / "pub" / "bench" / "bench.csv").open(newline="") as f:
        published = {row["method"]: row for row in csv.DictReader(f)}
    assert set(published) == {"rff-sgd", "susy_dsg_gu2018"}
    for method, row in published.items():
        last = final_rows(read_results(runs[f"fullscale-{method}"])).iloc[-1]
        assert float(row["test_error"]) == last["test_error"] and int(row["samples_seen"]) == last["samples_seen"]
        assert int(row["n_train"]) == 2000 and row["synthetic_shape"] == "susy"
    about = json.loads((tmp_path / "pub" / "bench" / "bench.json").read_text())
    assert set(about["runs"]) == {p.name for p in runs.values()}
    records = [RunRecord.load(p) for p in runs.values()]
    assert len(about["commands"]) == 1 and about["commands"][0].startswith("kernelbench ")   # one invocation ran both
    assert set(about["git_commits"]) == {r.git_commit for r in records if r.git_commit}
    assert about["machines"] == [records[0].machine]


@pytest.mark.parametrize("args, says", [(["nosuch"], "unknown benchmark 'nosuch'"),
                                        (["equal-time", "--seconds", "1"], "needs --dataset"),
                                        (["fullscale", "--only", "dgs"], "--only dgs: not a method"),
                                        (["fullscale", "--only", "susy_dsg_gu2018"], "needs --seconds T"),
                                        (["fullscale", "--shape", "hepmass", "--seconds", "1"], "susy or higgs"),
                                        (["fullsize", "--publish"], "drop --publish"),
                                        (["fullscale", "--table", "--publish"], "no finished run of fullscale")])
def test_bad_bench_arguments_exit_2_naming_the_fix(tmp_path, capsys, args, says):
    assert bench(*args, "--out", str(tmp_path / "o")) == 2 and says in capsys.readouterr().err


@pytest.mark.slow          # two runs, each in a fresh process
def test_bench_fullsize_runs_a_config_at_two_thread_counts_in_fresh_processes(tmp_path):
    """A small SUSY replica in --replicas (a registry that expects its size): the config runs as
    published, one trial, at 2 threads then 1, each in its own process; the table reads both."""
    mirror = tmp_path / "replicas"
    write_files(SyntheticSpec("susy", n=2000, n_test=500, seed=4), mirror, progress=False)
    registry = registry_with(tmp_path, "susy", train=2500, n_test=500)
    env = {"KERNELBENCH_REGISTRY": str(registry)}
    proc = kb("bench", "fullsize", "--replicas", str(mirror), "--only", "susy_dsg_gu2018",
              "--out", str(tmp_path / "out"), tmp_path=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    runs = {RunRecord.load(p).experiment: RunRecord.load(p) for p in run_folders(tmp_path / "out" / "runs")}
    assert set(runs) == {"fullsize-susy_dsg_gu2018", "fullsize-susy_dsg_gu2018-1t"}
    own = load_config(REPO / "configs" / "susy_dsg_gu2018.yaml")
    for name, threads in (("fullsize-susy_dsg_gu2018", 2), ("fullsize-susy_dsg_gu2018-1t", 1)):
        record = runs[name]
        assert record.config["algorithm"]["params"] == {**own.algorithm.params, "threads": threads}
        assert record.config["trials"] == 1 and record.dataset["n_train"] == 2000 and record.peak_memory_mb > 0
    assert "| susy_dsg_gu2018 | 2,000 |" in proc.stdout and "| 20 % |" in proc.stdout     # the Bayes error


def test_every_declared_method_is_a_config_of_the_repository_or_a_registered_peer():
    known = algorithms()
    for bench in BENCHMARKS.values():
        for method in bench.methods + bench.references:
            if method.config is not None:       # {d}: a config of some data set
                assert list((REPO / "configs").glob(method.config.replace("{d}", "*"))), (bench.name, method.config)
            else:
                assert method.algorithm in known and set(dict(method.params)) <= set(known[method.algorithm].parameters)


@pytest.mark.parametrize("change, says", [
    ({"stop": "adds"}, r"fullscale\.stop: expected one of add, replace, own, got the string 'adds' \(did you mean 'add'\?\)"),
    ({"threads": (2, 2)}, r"fullscale\.threads: lists 2 twice"),
    ({"methods": (Method("x", "ours"),)}, r"fullscale\.methods\[0\]: give exactly one of config .* and algorithm"),
    ({"methods": (Method("x", "theirs", config="x.yaml"),)}, r"fullscale\.methods\[0\]\.role: expected one of ours, peer"),
])
def test_a_wrong_benchmark_declaration_is_refused_naming_the_field(change, says):
    from dataclasses import replace

    from kernelbench.benchmarks.declared import checked
    from kernelbench.errors import ConfigError

    with pytest.raises(ConfigError, match=says):
        checked(replace(BENCHMARKS["fullscale"], **change))
