"""Full-scale paths, run small: a SUSY-format replica carrying the published SUSY.xz
defect loads through the registry with the repair reported; the headline command runs on it; a
truncated or wrong-sized file is caught before training; synthetic data keep their promises.

Truths: scikit-learn's loader (it refuses the published defect, as LIBSVM's tools do), the
generator's own arrays (a replica file must parse back to them exactly), its decision function
(the Bayes classifier) and the registry's row counts."""
from __future__ import annotations

import json
import lzma
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from kernelbench.data import load_dataset
from kernelbench.data.synthetic import SHAPES, SyntheticSpec, decision, generate, write_files
from kernelbench.errors import DataError

REPO = Path(__file__).resolve().parents[2]
N, N_TEST = 3000, 500


@pytest.fixture
def replica(tmp_path, monkeypatch):
    """A SUSY replica file (3,000 + 500 rows, one glued line) in a mirror folder, and a registry
    whose susy entry expects that many rows (the real one says 5,000,000)."""
    mirror = tmp_path / "mirror"
    spec = SyntheticSpec("susy", n=N, n_test=N_TEST, seed=4)
    (path,) = write_files(spec, mirror, progress=False)
    env = {"KERNELBENCH_MIRROR": str(mirror), "KERNELBENCH_DATA": str(tmp_path / "cache"),
           "KERNELBENCH_REGISTRY": str(registry_with(tmp_path, "susy", train=N + N_TEST, n_test=N_TEST)),
           "KERNELBENCH_OFFLINE": "1"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return spec, path, env


def registry_with(folder: Path, name: str, *, train: int, test: int | None = None, n_test: int | None = None):
    """A copy of the registry whose `name` entry expects these row counts (a small replica)."""
    registry = yaml.safe_load((REPO / "datasets" / "registry.yaml").read_text())
    entry = registry["datasets"][name]
    entry["files"]["train"]["n"] = train
    if test is not None:
        entry["files"]["test"]["n"] = test
    if n_test is not None:
        entry["split"]["n_test"] = n_test
    path = folder / "registry.yaml"
    path.write_text(yaml.safe_dump(registry))
    return path


def kb(*args, env, cwd=REPO, timeout=300):
    return subprocess.run([sys.executable, "-m", "kernelbench.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, cwd=cwd, timeout=timeout)


def test_the_replica_carries_the_published_defect(replica):
    """scikit-learn's loader fails on the replica exactly as on the published SUSY.xz: a
    value glued to the next index."""
    from sklearn.datasets import load_svmlight_file

    spec, path, _ = replica
    glued = json.loads(Path(str(path) + ".kernelbench-replica.json").read_text())["defects"]["missing_separator"]
    assert len(glued) == 1
    line = lzma.open(path).read().split(b"\n")[glued[0] - 1]
    assert any(t.count(b":") == 2 for t in line.split())
    with pytest.raises(ValueError, match="could not convert string to float"):
        load_svmlight_file(lzma.open(path), n_features=18)


def test_the_replica_loads_repaired_and_equals_the_generator(replica, capsys):
    spec, path, _ = replica
    ds = load_dataset("susy", progress=False)
    X, y = generate(spec, 0, N)
    X_te, y_te = generate(spec, 1, N_TEST)
    np.testing.assert_array_equal(np.asarray(ds.X_train), X)       # float32 values, exactly
    np.testing.assert_array_equal(ds.y_train, y)
    np.testing.assert_array_equal(np.asarray(ds.X_test), X_te)     # the last N_TEST rows: the test part
    np.testing.assert_array_equal(ds.y_test, y_te)
    (record,) = ds.provenance["files"]
    glued = json.loads(Path(str(path) + ".kernelbench-replica.json").read_text())["defects"]["missing_separator"]
    assert record["repairs"] == {"missing_separator": 1}
    assert record["first_repaired_line"] == {"missing_separator": glued[0]}
    assert ds.provenance["synthetic"]["bayes_error"] == spec.resolved().noise
    assert f"missing separator (first: line {glued[0]:,})" in capsys.readouterr().err
    with pytest.raises(DataError, match=rf"line {glued[0]:,} .*strict"):
        load_dataset("susy", progress=False, strict=True)            # the cached repair is refused too


def test_the_headline_command_runs_on_the_replica(replica):
    """`kernelbench run configs/susy_tsgs3vm.yaml` (smoke-sized): exit 0, the repair said on stderr
    and counted in run.json, the Bayes error beside the results."""
    _, path, env = replica
    out = Path(env["KERNELBENCH_DATA"]).parent / "out"
    proc = kb("run", "configs/susy_tsgs3vm.yaml", "--smoke", "--out", str(out), "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "repaired 1 line(s) with missing separator" in proc.stderr
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    meta = json.loads((folder / "run.json").read_text())
    dataset = meta["dataset"]
    assert dataset["files"][0]["repairs"] == {"missing_separator": 1}
    assert dataset["files"][0]["path"] == str(path)
    assert dataset["synthetic"]["bayes_error"] == SHAPES["susy"].noise
    assert "the file is a synthetic replica" in dataset["description"]   # never passed off as the real SUSY
    assert dataset["dtype"] == "float32" and meta["status"] == "finished"


def test_a_truncated_or_wrong_file_is_caught_before_training(replica, tmp_path):
    _, path, env = replica
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])                          # a cut-off download
    proc = kb("run", "configs/susy_tsgs3vm.yaml", "--smoke", "--out", str(tmp_path / "o1"), "-q", env=env)
    assert proc.returncode == 2 and "truncated or corrupt" in proc.stderr, proc.stderr
    assert not list((tmp_path / "o1").glob("*/results.csv"))
    # a complete file with other rows than the registry says: named, nothing cached
    write_files(SyntheticSpec("susy", n=N - 100, n_test=N_TEST, seed=4), path.parent, progress=False)
    with pytest.raises(DataError, match=r"3,400 rows, but the registry says this file has 3,500"):
        load_dataset("susy", progress=False)
    parsed = Path(env["KERNELBENCH_DATA"]) / "parsed"
    assert not parsed.exists() or not list(parsed.iterdir())          # no entry, no temporary leftover


# ------------------------------------------------------------------ the synthetic family

def test_synthetic_rows_are_prefix_stable_and_the_bayes_error_is_the_noise():
    spec = SyntheticSpec("higgs", n=40_000, n_test=1000, noise=0.15, seed=2)
    X, y = generate(spec, 0, 40_000)
    X_part, y_part = generate(spec, 0, 1000, start=25_000)            # any window of the same stream
    np.testing.assert_array_equal(X_part, X[25_000:26_000])
    np.testing.assert_array_equal(y_part, y[25_000:26_000])
    assert X.shape == (40_000, 28) and set(np.unique(y)) == {0.0, 1.0}
    assert np.array_equal(X, X.astype(np.float32).astype(np.float64))  # float32 values, as published
    X_te, _ = generate(spec, 1, 1000)
    assert not np.array_equal(X_te, X[:1000])                         # test rows: another stream
    # the Bayes classifier sign(g) recovered from x alone errs at the noise rate (binomial sd 0.0018)
    z = X[:, :8].copy()
    momenta = [0, 3, 6]
    z[:, momenta] = 2.0 * np.log(X[:, momenta])                      # invert exp(z / 2)
    bayes = (decision(z) > 0).astype(float)
    assert abs(np.mean(bayes != y) - 0.15) < 0.006


@pytest.mark.parametrize("variant, noise", [(2, 0.155), (3, 0.18)])
def test_the_held_out_variants_are_other_problems_with_their_own_bayes_error(variant, noise):
    """Variants 2 and 3: other rows, another decision function, their own noise by default; the
    Bayes classifier (g_v recovered from x alone) errs at that rate, variant 1's g near chance."""
    one = SyntheticSpec("susy", n=40_000, n_test=10)
    other = SyntheticSpec("susy", n=40_000, n_test=10, variant=variant)
    assert other.resolved().noise == noise and one.resolved().noise == 0.20
    X1, _ = generate(one, 0, 1000)
    X, y = generate(other, 0, 40_000)
    assert not np.array_equal(X[:1000], X1)
    z = X[:, :8].copy()
    z[:, [0, 3, 6]] = 2.0 * np.log(X[:, [0, 3, 6]])
    assert abs(np.mean((decision(z, variant=variant) > 0) != y) - noise) < 0.006   # binomial sd <= 0.0019
    assert abs(np.mean((decision(z) > 0) != y) - 0.5) < 0.1                        # not variant 1's problem
    assert 0.4 < y.mean() < 0.6


def _run_synthetic(tmp_path, config_text: str, *options):
    """`kernelbench run` of a config (written to syn.yaml) into tmp_path/out, offline: the config's
    path, the environment, and the run folder's run.json."""
    config = tmp_path / "syn.yaml"
    config.write_text(config_text)
    env = {"KERNELBENCH_DATA": str(tmp_path / "cache"), "KERNELBENCH_OFFLINE": "1"}
    proc = kb("run", str(config), *options, "--out", str(tmp_path / "out"), "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    (folder,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    return config, env, json.loads((folder / "run.json").read_text())


def test_synthetic_config_family_runs_and_records_the_generator(tmp_path):
    _, _, meta = _run_synthetic(tmp_path, "dataset: {name: synthetic, shape: hepmass, n: 2000, n_test: 500, "
                                          "scale: standard}\n"
                                          "algorithm: {name: dsg, params: {batch_size: 64, block_size: 16}}\n"
                                          "evaluate: {every: 1000, on: [test_error]}\n")
    dataset = meta["dataset"]
    assert dataset["synthetic"]["shape"] == "hepmass" and dataset["n_train"] == 2000
    assert dataset["n_test"] == 500 and dataset["n_features"] == 28


@pytest.mark.parametrize("bad, field", [("shape: susi", "dataset.shape"), ("noise: 0.5", "dataset.noise"),
                                        ("n: 0", "dataset.n"), ("n_tset: 5", "dataset.n_tset"),
                                        ("variant: 4", "dataset.variant")])
def test_synthetic_config_errors_name_the_field(tmp_path, bad, field):
    config = tmp_path / "syn.yaml"
    config.write_text(f"dataset: {{name: synthetic, {bad}}}\nalgorithm: dsg\n")
    proc = kb("run", str(config), "--out", str(tmp_path / "out"), env={"KERNELBENCH_OFFLINE": "1"})
    assert proc.returncode == 2 and field in proc.stderr, proc.stderr


def test_hepmass_replica_files_are_the_uci_csv_layout(tmp_path, monkeypatch):
    """Two gzip CSV files with the `# label,f0,...,f26,mass` header, read back through the
    registry's CSV path to the generator's arrays (values printed with 6 decimals)."""
    spec = SyntheticSpec("hepmass", n=1200, n_test=300, seed=1)
    train, test = write_files(spec, tmp_path / "m", progress=False)
    import gzip

    header = gzip.open(train).readline().decode()
    assert header.startswith("# label,f0,f1,") and header.strip().endswith("f26,mass")
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(registry_with(tmp_path, "hepmass", train=1200, test=300)))
    monkeypatch.setenv("KERNELBENCH_MIRROR", str(tmp_path / "m"))
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    ds = load_dataset("hepmass", progress=False)
    X, y = generate(spec, 0, 1200)
    np.testing.assert_allclose(np.asarray(ds.X_train), X, atol=5e-7, rtol=0)
    np.testing.assert_array_equal(ds.y_train, y)
    assert ds.X_test.shape == (300, 28)


def test_set_and_trials_override_any_config_field(tmp_path):
    config, env, meta = _run_synthetic(tmp_path, "dataset: {name: synthetic, shape: susy, n: 1000, n_test: 200}\n"
                                                 "algorithm: {name: dsg, params: {batch_size: 64, block_size: 16}}\n"
                                                 "trials: 3\nevaluate: {every: 1000, on: [test_error]}\n",
                                       "--trials", "1", "--set", "stop.passes=0.5", "--set", "dataset.n=800")
    assert meta["config"]["trials"] == 1 and meta["config"]["stop"]["passes"] == 0.5
    assert meta["dataset"]["n_train"] == 800
    bad = kb("run", str(config), "--set", "stop.passes", "--out", str(tmp_path / "o2"), env=env)
    assert bad.returncode == 2 and "--set 'stop.passes'" in bad.stderr
    bad = kb("run", str(config), "--set", "stop.pases=1", "--out", str(tmp_path / "o2"), env=env)
    assert bad.returncode == 2 and "stop.pases" in bad.stderr
