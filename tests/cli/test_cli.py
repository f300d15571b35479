"""End-to-end tests of the `kernelbench` command line: usage, configs, results folders.

The real console program runs as a subprocess (`python -m kernelbench.cli`, plus one check of the
installed `kernelbench` script) with its environment set per test:

  * KERNELBENCH_DATA   -> a fresh tmp dir (never the user's cache)
  * KERNELBENCH_MIRROR -> the shared LIBSVM mirror (only needed for `datasets info a9a`)
  * KERNELBENCH_OFFLINE=1, except in the one test that exercises "no network".

Truths asserted against are independent of kernelbench's own output: scikit-learn's SVC on the
same digits 8-vs-6 split (made here with scikit-learn), the config file's numbers, the schema
constant `results.COLUMNS`, `git rev-parse HEAD`, the registry's parameter dataclass.
"""
from __future__ import annotations

import concurrent.futures
import json
import math
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from kernelbench.results import COLUMNS

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "configs" / "quickstart.yaml"
from conftest import MIRROR as _MIRROR  # noqa: E402
from helpers import cli_in_process  # noqa: E402
MIRROR = str(_MIRROR)
RUN_NAME_RE = re.compile(r"^quickstart-\d{8}-\d{6}-[0-9a-f]{6}$")
TIMING_COLUMNS = ["train_seconds", "predict_seconds", "train_memory_mb"]


# ------------------------------------------------------------------------------------ helpers

def _env(data_dir, *, offline=True, **extra) -> dict:
    env = dict(os.environ)
    for key in ("KERNELBENCH_OFFLINE", "KERNELBENCH_ALLOW_HTTP_LOOPBACK"):
        env.pop(key, None)
    env.update(KERNELBENCH_DATA=str(data_dir), KERNELBENCH_MIRROR=MIRROR,
               # wide, plain terminal output: usage errors and help are not wrapped mid-word
               COLUMNS="250", TERM="dumb", NO_COLOR="1", PYTHONIOENCODING="utf-8")
    if offline:
        env["KERNELBENCH_OFFLINE"] = "1"
    env.update({k: str(v) for k, v in extra.items()})
    return env


def kb(*args, data_dir, cwd=None, offline=True, timeout=180, env_extra=None):
    """Run `python -m kernelbench.cli ARGS`; returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "kernelbench.cli", *map(str, args)],
                          cwd=cwd or REPO, env=_env(data_dir, offline=offline, **(env_extra or {})),
                          capture_output=True, text=True, timeout=timeout)


def describe(proc) -> str:
    return f"exit {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}\n--- stderr\n{proc.stderr[-3000:]}"


def run_folders(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.is_dir()) if out.is_dir() else []


def results_path_from_stdout(proc, cwd: Path) -> Path:
    """The `results:` line of a run's summary names the results file; the line after it, the last,
    is the command that makes the run's page."""
    lines = proc.stdout.strip().splitlines()
    assert len(lines) >= 2 and lines[-1].startswith("compare: "), f"no compare line last: {lines[-2:]!r}"
    match = re.search(r"^results: (\S*results\.csv)$", lines[-2])
    assert match, f"the line before the last does not name results.csv: {lines[-2]!r}"
    path = Path(match.group(1))
    return path if path.is_absolute() else cwd / path


def digits86_split(seed: int = 0):
    """The digits86 protocol rebuilt with scikit-learn alone: classes 8 (+1) vs 6 (-1) of
    load_digits, seeded stratified 25% test split, min-max scaling fitted on the training part."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import MinMaxScaler

    X, y = load_digits(return_X_y=True)
    keep = (y == 8) | (y == 6)
    X, y = X[keep], np.where(y[keep] == 8, 1.0, -1.0)
    train, test = train_test_split(np.arange(len(y)), test_size=0.25, random_state=seed, stratify=y)
    scaler = MinMaxScaler().fit(X[train])
    return scaler.transform(X[train]), y[train], scaler.transform(X[test]), y[test]


def _host_resolves(host: str, timeout: float = 3.0) -> bool:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        pool.submit(socket.getaddrinfo, host, 443).result(timeout=timeout)
        return True
    except Exception:
        return False
    finally:
        pool.shutdown(wait=False)


# ------------------------------------------------------------------------------------ fixtures

@pytest.fixture
def data_dir(tmp_path):
    return tmp_path / "kb-cache"


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    """The quickstart config run twice, identically, into the same --out folder."""
    base = tmp_path_factory.mktemp("quickstart")
    out, data = base / "results", base / "kb-cache"
    first = kb("run", QUICKSTART, "--out", out, data_dir=data)
    assert first.returncode == 0, describe(first)
    after_first = run_folders(out)
    entries_after_first = sorted(p.name for p in out.iterdir())
    first_csv = (after_first[0] / "results.csv").read_bytes() if after_first else b""
    second = kb("run", QUICKSTART, "--out", out, data_dir=data)
    assert second.returncode == 0, describe(second)
    after_second = run_folders(out)
    return dict(base=base, out=out, data=data, first=first, second=second,
                after_first=after_first, entries_after_first=entries_after_first,
                after_second=after_second, first_csv=first_csv)


@pytest.fixture(scope="module")
def quickstart_run(quickstart):
    """(run folder, results DataFrame, run.json) of the first quickstart run."""
    assert len(quickstart["after_first"]) == 1, quickstart["after_first"]
    folder = quickstart["after_first"][0]
    frame = pd.read_csv(folder / "results.csv")
    meta = json.loads((folder / "run.json").read_text())
    return folder, frame, meta


# ------------------------------------------------------------------------------------ --help

# (command, options its --help must document)
HELP_COMMANDS = [
    ([], []), (["run"], ["--out", "--seed", "--threads", "--smoke", "--quiet"]),
    (["grid"], ["--cv", "--out"]), (["datasets"], []), (["datasets", "list"], []),
    (["datasets", "info"], []), (["datasets", "fetch"], []), (["datasets", "path"], []),
    (["algorithms"], []), (["figures"], ["--out"]), (["compare"], ["--out", "--metric"]),
    (["sweep"], ["--over", "--processes", "--max-seconds"]),
]


@pytest.mark.parametrize("command, options", HELP_COMMANDS, ids=[" ".join(c) or "app" for c, _ in HELP_COMMANDS])
def test_help_exits_zero(command, options, data_dir):
    proc = kb(*command, "--help", data_dir=data_dir)
    assert proc.returncode == 0, describe(proc)
    assert "Usage" in proc.stdout and "Traceback" not in proc.stderr
    for option in options:
        assert option in proc.stdout, f"{option} missing from `{' '.join(command)} --help`:\n{proc.stdout}"
    if not command:                                         # the app lists every subcommand
        for sub in ("run", "grid", "datasets", "algorithms", "figures"):
            assert re.search(rf"\b{sub}\b", proc.stdout), f"{sub} missing from --help"


def test_help_prose_is_wrapped_by_the_terminal_not_by_the_source(data_dir):
    """A docstring paragraph past the first is one line that the terminal wraps at its width (250
    columns here): no sentence breaks where the source file happened to wrap it."""
    proc = kb("sweep", "--help", data_dir=data_dir)
    assert proc.returncode == 0, describe(proc)
    assert "sweeps a dotted config key; one value is a plain override (--over tags.figure=fig2). The points" \
        in proc.stdout
    assert "   --over algorithm.params.threads=1,2            speed-up vs threads" in proc.stdout   # kept as written


def test_installed_console_script_runs(data_dir):
    script = Path(sys.executable).with_name("kernelbench")
    if not script.exists():
        script = shutil.which("kernelbench")
    if not script:
        pytest.skip("no `kernelbench` console script next to this interpreter or on PATH")
    proc = subprocess.run([str(script), "--help"], env=_env(data_dir), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, describe(proc)
    assert "Usage" in proc.stdout and "kernelbench" in proc.stdout


# ------------------------------------------------------------------------------------ run: quickstart

def test_quickstart_run_succeeds_and_names_its_results(quickstart, quickstart_run):
    folder, _, _ = quickstart_run
    proc = quickstart["first"]
    assert "Traceback" not in proc.stderr
    # stderr is not a terminal here: no progress bar
    assert "\r" not in proc.stderr and "it/s" not in proc.stderr, proc.stderr
    assert results_path_from_stdout(proc, REPO).resolve() == (folder / "results.csv").resolve()


def test_the_compare_command_a_run_prints_makes_its_page(quickstart, quickstart_run, tmp_path):
    folder, _, _ = quickstart_run
    command = shlex.split(quickstart["first"].stdout.strip().splitlines()[-1].removeprefix("compare: "))
    assert command[-2:] == ["compare", str(folder)]
    out = tmp_path / "page"
    proc = subprocess.run([*command, "--out", str(out)], cwd=REPO, env=_env(quickstart["data"]),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, describe(proc)
    page = (out / "compare.md").read_text()
    assert "| dsg |" in page and str(folder) in page                  # the run's one method, and the run
    assert (out / "compare.html").stat().st_size > 0


def test_quickstart_run_makes_exactly_one_run_folder(quickstart):
    folders = quickstart["after_first"]
    assert len(folders) == 1, folders
    assert quickstart["entries_after_first"] == [folders[0].name]          # nothing else
    assert RUN_NAME_RE.match(folders[0].name), folders[0].name
    assert (folders[0] / "results.csv").is_file() and (folders[0] / "run.json").is_file()


def test_results_csv_has_the_schema_and_parses(quickstart_run):
    folder, frame, _ = quickstart_run
    header = (folder / "results.csv").read_text().splitlines()[0].split(",")
    assert set(COLUMNS) <= set(header), set(COLUMNS) - set(header)
    assert list(frame.columns[:len(COLUMNS)]) == COLUMNS
    assert (frame["status"] == "ok").all()
    assert (frame["run_id"] == folder.name).all()
    assert (frame["experiment"] == "quickstart").all()
    assert (frame["dataset"] == "digits86").all() and (frame["algorithm"] == "dsg").all()
    assert frame["fold"].isna().all()                       # `run` has no CV folds
    assert (frame["threads"] == 1).all()                   # dsg's default
    for column in ("iteration", "samples_seen", "n_features", "trial", "seed"):
        assert pd.api.types.is_integer_dtype(frame[column]), column
    for column in ("train_seconds", "objective", "train_error", "test_error", "predict_seconds"):
        assert pd.api.types.is_float_dtype(frame[column]) and frame[column].notna().all(), column
    config = yaml.safe_load(QUICKSTART.read_text())
    for text in frame["params"]:
        params = json.loads(text)
        for key, value in config["algorithm"]["params"].items():
            assert params[key] == value, (key, params[key], value)


def test_one_row_per_evaluation_point_per_trial(quickstart_run):
    """Rows at iteration 0, every `evaluate.every` iterations, and at the end of `stop.passes`."""
    _, frame, _ = quickstart_run
    config = yaml.safe_load(QUICKSTART.read_text())
    every, passes = config["evaluate"]["every"], config["stop"]["passes"]
    batch = config["algorithm"]["params"]["batch_size"]
    n_train = len(digits86_split(config["seed"])[1])                    # 266 of 355
    total = math.ceil(passes * math.ceil(n_train / batch))              # iterations for 5 passes
    expected = sorted(set(range(0, total, every)) | {total})
    assert sorted(frame["trial"].unique()) == list(range(config["trials"]))
    for trial, rows in frame.groupby("trial"):
        assert rows["iteration"].tolist() == expected, (trial, rows["iteration"].tolist())
        assert (rows["seed"] == config["seed"] + trial).all()
        assert rows["samples_seen"].iloc[0] == 0 and rows["samples_seen"].is_monotonic_increasing
        assert rows["samples_seen"].iloc[-1] == passes * n_train        # exactly `passes` passes
        # iteration 0: the set-up (begin) only; training time adds up from there
        assert rows["train_seconds"].iloc[0] >= 0 and rows["train_seconds"].is_monotonic_increasing
        # DSG adds block_size random features per iteration
        block = config["algorithm"]["params"]["block_size"]
        assert (rows["n_features"] == block * rows["iteration"]).all()
        assert (rows["predict_seconds"] > 0).all()


def test_quickstart_test_error_matches_libsvm(quickstart_run):
    """Digits 8 vs 6: scikit-learn's SVC (LIBSVM) on the same split is the reference."""
    from sklearn.svm import SVC

    _, frame, meta = quickstart_run
    X_tr, y_tr, X_te, y_te = digits86_split(seed=0)
    svc_error = float(np.mean(SVC(C=1.0, gamma="scale").fit(X_tr, y_tr).predict(X_te) != y_te))
    last = frame.groupby("trial").tail(1)
    # the test part is the same 89 points: every error is a multiple of 1/89
    assert np.allclose(last["test_error"] * len(y_te), np.round(last["test_error"] * len(y_te)))
    assert (last["test_error"] <= 0.05).all(), last[["trial", "test_error"]]
    assert (last["test_error"] <= svc_error + 0.05).all(), (svc_error, last["test_error"].tolist())
    first = frame.groupby("trial").head(1)
    assert (first["test_error"] > 0.2).all()              # iteration 0 is the untrained model


def test_run_json_records_provenance(quickstart_run):
    folder, _, meta = quickstart_run
    assert meta["status"] == "finished"
    assert meta["run_id"] == folder.name
    assert meta["started"] and meta["ended"]
    config = yaml.safe_load(QUICKSTART.read_text())
    resolved = meta["config"]
    assert resolved["name"] == "quickstart" and resolved["seed"] == 0 and resolved["trials"] == 3
    assert resolved["dataset"]["name"] == "digits86"
    assert resolved["algorithm"]["name"] == "dsg"
    from kernelbench.estimators import algorithms

    defaults = algorithms()["dsg"].defaults()
    assert set(resolved["algorithm"]["params"]) == set(defaults)   # defaults filled in
    for key, value in config["algorithm"]["params"].items():
        assert resolved["algorithm"]["params"][key] == value
    versions = meta["versions"]
    assert versions["numpy"] == np.__version__ and versions["pandas"] == pd.__version__
    assert versions["python"] and versions["scikit-learn"]
    assert meta["machine"]["cpu_count"] == os.cpu_count()
    assert "git_commit" in meta
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    if head.returncode == 0:
        assert meta["git_commit"] == head.stdout.strip()


def test_second_identical_run_makes_a_new_folder(quickstart):
    first, second = quickstart["after_first"], quickstart["after_second"]
    assert len(first) == 1 and len(second) == 2, (first, second)
    assert first[0] in second
    new = [p for p in second if p != first[0]][0]
    assert RUN_NAME_RE.match(new.name)
    assert (first[0] / "results.csv").read_bytes() == quickstart["first_csv"]   # not touched
    assert results_path_from_stdout(quickstart["second"], REPO).resolve() == (new / "results.csv").resolve()


def test_same_config_and_seed_give_identical_results(quickstart):
    a, b = (pd.read_csv(p / "results.csv") for p in quickstart["after_second"])
    a, b = (f.drop(columns=TIMING_COLUMNS + ["run_id"]) for f in (a, b))
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_seed_option_and_default_out_folder(tmp_path, data_dir):
    """--seed 5 reaches every row (trial t gets seed 5 + t); without --out the run goes to
    ./results/ of the working directory."""
    proc = kb("run", QUICKSTART, "--seed", "5", "--quiet", data_dir=data_dir, cwd=tmp_path)
    assert proc.returncode == 0, describe(proc)
    folders = run_folders(tmp_path / "results")
    assert len(folders) == 1, folders
    assert results_path_from_stdout(proc, tmp_path).resolve() == (folders[0] / "results.csv").resolve()
    frame = pd.read_csv(folders[0] / "results.csv")
    assert (frame["seed"] == 5 + frame["trial"]).all()
    assert set(frame.loc[frame["trial"] == 0, "seed"]) == {5}
    assert json.loads((folders[0] / "run.json").read_text())["config"]["seed"] == 5


def test_threads_option(tmp_path, data_dir):
    # --smoke keeps it short: two OpenMP threads on a busy 2-core machine are slow
    proc = kb("run", QUICKSTART, "--out", tmp_path, "--threads", "2", "--smoke", "--quiet",
              data_dir=data_dir)
    assert proc.returncode == 0, describe(proc)
    folder, = run_folders(tmp_path)
    frame = pd.read_csv(folder / "results.csv")
    assert (frame["threads"] == 2).all()
    assert all(json.loads(p)["threads"] == 2 for p in frame["params"])
    assert (frame["status"] == "ok").all()
    meta = json.loads((folder / "run.json").read_text())
    assert meta["config"]["algorithm"]["params"]["threads"] == 2


def test_run_on_a_user_data_file(tmp_path, data_dir):
    """`dataset: {path: ...}` relative to the config's folder, run from another directory."""
    rng = np.random.default_rng(0)
    lines = []
    for i in range(80):
        label = 1 if i % 2 else -1
        lines.append(f"{label} 1:{label + rng.random():.4f} 2:{rng.random():.4f}")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "mine.svm").write_text("\n".join(lines) + "\n")
    config = tmp_path / "conf" / "mine.yaml"
    config.write_text("dataset: {path: mine.svm}\nalgorithm: dsg\nstop: {passes: 2}\n")
    out = tmp_path / "out"
    proc = kb("run", config, "--out", out, "-q", data_dir=data_dir, cwd=tmp_path)
    assert proc.returncode == 0, describe(proc)
    folder, = run_folders(out)
    assert folder.name.startswith("mine-")                 # name defaults to the file stem
    frame = pd.read_csv(folder / "results.csv")
    assert len(frame) >= 2 and (frame["status"] == "ok").all()
    assert Path(frame["dataset"].iloc[0]).resolve() == (tmp_path / "conf" / "mine.svm").resolve()
    assert frame["test_error"].notna().all()               # default test: a 0.2 split


def test_set_dataset_runs_a_config_whose_own_data_is_missing(tmp_path, data_dir):
    """A full-size config pointed at other data from the command line (here SUSY, absent, replaced by a
    small synthetic replica) runs: the missing-data check reads the data the overrides name."""
    config = tmp_path / "full.yaml"
    config.write_text("dataset: {name: susy, test: official, scale: standard}\nalgorithm: dsg\nstop: {passes: 1}\n")
    out = tmp_path / "out"
    proc = kb("run", config, "--out", out, "-q", "--set", "dataset.name=synthetic", "--set", "dataset.n=2000",
              "--set", "dataset.n_test=500", data_dir=data_dir, cwd=tmp_path)
    assert proc.returncode == 0, describe(proc)
    folder, = run_folders(out)
    frame = pd.read_csv(folder / "results.csv")
    assert (frame["status"] == "ok").all() and frame["test_error"].notna().all()
    assert json.loads((folder / "run.json").read_text())["config"]["dataset"]["name"] == "synthetic"
    proc = kb("run", config, "--out", out, "-q", "--set", "dataset={name: susy}", data_dir=data_dir, cwd=tmp_path)
    assert proc.returncode == 2 and "susy" in proc.stderr.lower(), describe(proc)   # still checked


# ------------------------------------------------------------------------------------ bad input -> exit 2

QUICK = "dataset: {name: digits86}\nalgorithm: dsg\n"


def _three_label_file() -> str:
    rng = np.random.default_rng(1)
    return "".join(f"{i % 3} 1:{rng.random():.4f} 2:{rng.random():.4f}\n" for i in range(60))


# (id, files to write {name: text}, CLI args (with {tmp}), substrings the stderr message must hold)
BAD_INPUTS = [
    ("missing-config", {}, ["run", "{tmp}/nosuch.yaml"], ["nosuch.yaml", "not found"]),
    ("config-is-folder", {}, ["run", "{tmp}"], ["folder"]),
    ("invalid-yaml", {"c.yaml": "name: [unclosed\ndataset: {\n"}, ["run", "{tmp}/c.yaml"],
     ["c.yaml", "yaml", "line"]),
    ("empty-config", {"c.yaml": ""}, ["run", "{tmp}/c.yaml"], ["empty", "dataset"]),
    ("unknown-top-level-key", {"c.yaml": QUICK + "colour: red\n"}, ["run", "{tmp}/c.yaml"],
     ["colour", "unknown", "dataset", "algorithm", "evaluate"]),
    ("unknown-dataset-key", {"c.yaml": "dataset: {name: digits86, colour: red}\nalgorithm: dsg\n"},
     ["run", "{tmp}/c.yaml"], ["dataset.colour", "unknown", "subsample", "scale"]),
    ("unknown-param", {"c.yaml": "dataset: {name: digits86}\nalgorithm: {name: dsg, params: {foo: 1}}\n"},
     ["run", "{tmp}/c.yaml"], ["algorithm.params.foo", "unknown", "batch_size", "gamma"]),
    ("unknown-stop-key", {"c.yaml": QUICK + "stop: {epochs: 3}\n"}, ["run", "{tmp}/c.yaml"],
     ["stop.epochs", "passes", "iterations", "seconds"]),
    ("unknown-algorithm", {"c.yaml": "dataset: {name: digits86}\nalgorithm: nosuch\n"},
     ["run", "{tmp}/c.yaml"], ["algorithm.name", "nosuch", "<known algorithms>"]),
    ("unknown-dataset", {"c.yaml": "dataset: {name: nosuch}\nalgorithm: dsg\n"},
     ["run", "{tmp}/c.yaml"], ["dataset.name", "nosuch", "a9a", "digits86"]),
    ("wrong-param-type", {"c.yaml": "dataset: {name: digits86}\nalgorithm: {name: dsg, params: {C: abc}}\n"},
     ["run", "{tmp}/c.yaml"], ["algorithm.params.C", "number", "abc"]),
    ("bool-param", {"c.yaml": "dataset: {name: digits86}\nalgorithm: {name: dsg, params: {C: true}}\n"},
     ["run", "{tmp}/c.yaml"], ["algorithm.params.C", "number"]),
    ("wrong-top-level-type", {"c.yaml": QUICK + "trials: two\n"}, ["run", "{tmp}/c.yaml"],
     ["trials", "two"]),
    ("negative-batch-size", {"c.yaml": "dataset: {name: digits86}\nalgorithm: {name: dsg, params: {batch_size: -4}}\n"},
     ["run", "{tmp}/c.yaml"], ["algorithm.params.batch_size", "-4"]),
    ("bad-literal", {"c.yaml": "dataset: {name: digits86}\nalgorithm: {name: dsg, params: {loss: foo}}\n"},
     ["run", "{tmp}/c.yaml"], ["algorithm.params.loss", "foo", "hinge"]),
    ("missing-config-near-name", {"quickstart.yaml": QUICK}, ["run", "{tmp}/quickstrat.yaml"],
     ["quickstrat.yaml", "not found", "did you mean", "quickstart.yaml"]),
    ("missing-user-file", {"c.yaml": "dataset: {path: gone.svm}\nalgorithm: dsg\n"},
     ["run", "{tmp}/c.yaml"], ["dataset.path", "gone.svm", "not found"]),
    ("malformed-svmlight", {"bad.svm": "1 1:0.5 2:0.1\n-1 1:0.3 2:x\n1 2:0.4\n",
                            "c.yaml": "dataset: {path: bad.svm}\nalgorithm: dsg\n"},
     ["run", "{tmp}/c.yaml"], ["bad.svm", "line 2", "svmlight"]),
    ("nan-in-data", {"nan.svm": "1 1:0.5 2:0.1\n-1 1:0.3\n1 1:nan 2:0.2\n-1 2:0.7\n",
                     "c.yaml": "dataset: {path: nan.svm}\nalgorithm: dsg\n"},
     ["run", "{tmp}/c.yaml"], ["nan.svm", "nan", "row 3"]),
    ("empty-data-file", {"empty.svm": "", "c.yaml": "dataset: {path: empty.svm}\nalgorithm: dsg\n"},
     ["run", "{tmp}/c.yaml"], ["empty.svm", "empty"]),
    ("three-labels-for-binary-bsgd", {"three.svm": _three_label_file(),
                                      "c.yaml": "dataset: {path: three.svm}\nalgorithm: bsgd\n"},
     ["run", "{tmp}/c.yaml"], ["three.svm", "multiclass", "bsgd", "binary"]),
    ("registry-data-not-local", {"c.yaml": "dataset: {name: susy}\nalgorithm: dsg\n"},
     ["run", "{tmp}/c.yaml"], ["susy", "KERNELBENCH_OFFLINE", "KERNELBENCH_MIRROR", "<cache>"]),
    # the dataset is checked before the algorithm modules are imported (a missing set fails fast)
    ("missing-data-checked-first", {"c.yaml": "dataset: {name: susy}\nalgorithm: {name: dsg, params: {nosuch: 1}}\n"},
     ["run", "{tmp}/c.yaml"], ["susy", "KERNELBENCH_MIRROR"]),
    ("seed-negative", {}, ["run", str(QUICKSTART), "--seed", "-1"], ["seed", "-1"]),
    ("threads-negative", {}, ["run", str(QUICKSTART), "--threads", "-1"], ["threads", "-1"]),
    ("out-is-a-file", {"afile": "x"}, ["run", str(QUICKSTART), "--out", "{tmp}/afile"], ["afile"]),
    ("grid-cv-1", {}, ["grid", str(QUICKSTART), "--cv", "1"], ["--cv", "1"]),
    ("grid-cv-0", {}, ["grid", str(QUICKSTART), "--cv", "0"], ["--cv", "0"]),
    ("grid-bad-config", {"c.yaml": QUICK + "colour: red\n"}, ["grid", "{tmp}/c.yaml", "--cv", "3"],
     ["colour", "unknown"]),
    ("unknown-cli-option", {}, ["run", str(QUICKSTART), "--bogus"], ["--bogus"]),
    ("non-integer-seed", {}, ["run", str(QUICKSTART), "--seed", "abc"], ["--seed"]),
    ("datasets-info-unknown", {}, ["datasets", "info", "nosuch"], ["nosuch", "a9a", "digits86"]),
    ("datasets-fetch-unknown", {}, ["datasets", "fetch", "nosuch"], ["nosuch", "a9a"]),
]


# One case of each kind runs the real program in a subprocess; the other variants of the same
# code paths run in-process through kernelbench.cli.main (a fresh process imports scikit-learn
# and the compiled cores again).
SUBPROCESS_CASES = {"missing-config", "invalid-yaml", "unknown-top-level-key", "unknown-algorithm",
                    "negative-batch-size", "malformed-svmlight", "three-labels-for-binary-bsgd",
                    "registry-data-not-local", "grid-cv-1", "unknown-cli-option",
                    "datasets-info-unknown"}


def _main_in_process(args, *, data_dir, cwd, monkeypatch, capsys):
    """(exit code, stdout, stderr) of kernelbench.cli.main(args), as the console script would."""
    for key, value in _env(data_dir).items():
        if key.startswith("KERNELBENCH") or key in ("COLUMNS", "TERM", "NO_COLOR"):
            monkeypatch.setenv(key, value)
    monkeypatch.chdir(cwd)
    return cli_in_process(args, capsys)


@pytest.mark.parametrize("case, files, args, needles", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_exits_2_with_a_message_and_no_traceback(case, files, args, needles, tmp_path,
                                                           data_dir, monkeypatch, capsys):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    out = tmp_path / "out"
    if args[0] in ("run", "grid") and "--out" not in args:
        args += ["--out", str(out)]
    if case in SUBPROCESS_CASES:
        proc = kb(*args, data_dir=data_dir, cwd=tmp_path, timeout=60)
        code, stdout, stderr, report = proc.returncode, proc.stdout, proc.stderr, describe(proc)
    else:
        code, stdout, stderr = _main_in_process(args, data_dir=data_dir, cwd=tmp_path,
                                                monkeypatch=monkeypatch, capsys=capsys)
        report = f"exit {code}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    assert code == 2, report
    assert "Traceback" not in stderr and "Traceback" not in stdout, report
    from kernelbench.estimators import algorithms

    message = stderr.lower()
    for needle in needles:
        if needle == "<known algorithms>":
            for name in algorithms():
                assert name.lower() in message, (name, stderr)
        elif needle == "<cache>":
            assert str(data_dir).lower() in message, (str(data_dir), stderr)
        else:
            assert needle.lower() in message, (needle, stderr)
    # validated before any work: no run folder was made
    assert run_folders(out) == []


@pytest.mark.parametrize("params, field", [("{t0: -1}", "t0"), ("{block_size: 2000000000}", "block_size")])
def test_out_of_range_params_are_refused_before_any_work(tmp_path, data_dir, monkeypatch, capsys,
                                                         params, field):
    config = tmp_path / "c.yaml"
    config.write_text(f"dataset: {{name: digits86}}\nalgorithm: {{name: dsg, params: {params}}}\n")
    code, _, stderr = _main_in_process(["run", str(config), "--out", str(tmp_path / "out")],
                                       data_dir=data_dir, cwd=tmp_path, monkeypatch=monkeypatch,
                                       capsys=capsys)
    assert code == 2 and "Traceback" not in stderr
    assert run_folders(tmp_path / "out") == [], "a run folder was made before the config was refused"
    assert "algorithm.params" in stderr and field in stderr, stderr


def test_labeled_is_refused_for_a_supervised_algorithm(tmp_path, data_dir, monkeypatch, capsys):
    config = tmp_path / "c.yaml"
    config.write_text("dataset: {name: digits86, labeled: 10}\nalgorithm: {name: dsg}\n")
    code, _, stderr = _main_in_process(["run", str(config), "--out", str(tmp_path / "out")],
                                       data_dir=data_dir, cwd=tmp_path, monkeypatch=monkeypatch,
                                       capsys=capsys)
    assert code == 2 and "Traceback" not in stderr
    assert "dataset.labeled" in stderr and "supervised" in stderr, stderr


def test_grid_cross_validates_then_refits_on_the_test_split(tmp_path, data_dir):
    """`grid CONFIG --cv 3`: one row per (cell, fold) with folds 0..2, then the refit's rows
    (empty fold, evaluated on the test split); the last line names the results."""
    out = tmp_path / "out"
    proc = kb("grid", QUICKSTART, "--cv", "3", "--out", out, data_dir=data_dir)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, describe(proc)
    folder, = run_folders(out)
    assert results_path_from_stdout(proc, REPO).resolve() == (folder / "results.csv").resolve()
    df = pd.read_csv(folder / "results.csv")
    cv = df[df["fold"].notna()]
    # quickstart has no grid: the algorithm's declared space, 5 values of C × 5 of gamma, 3 folds each
    assert cv.groupby("params")["fold"].apply(lambda f: sorted(f.astype(int))).tolist() == [[0, 1, 2]] * 25
    refit = df[df["fold"].isna()]
    assert len(refit) > 0 and (refit["status"] == "ok").all()
    assert set(json.loads((folder / "run.json").read_text())["best"]["params"]) == {"C", "gamma"}
    # the output says where the grid came from, names the score, and rounds what it prints
    lines = proc.stdout.splitlines()
    assert "note: no grid: in the config; the grid (5 gamma × 5 C) is built from the algorithm's declared " \
           "search space" in lines
    assert "25 cells, each scored by 3-fold cross-validation on the training part" in lines
    assert re.match(r"gamma +C +validation error: mean ± std \(folds\)$", lines[2]), lines[:3]
    assert "0.3162 " in proc.stdout and "0.31622776" not in proc.stdout        # C = 10^-0.5, to 4 digits


def test_tune_ends_with_the_results_and_the_compare_command_of_its_run_folder(tmp_path, data_dir):
    """`tune` writes one run folder (the search, then the refit on the test part): its last two lines
    name its results and the `kernelbench compare` command of that folder, as run and grid do."""
    out = tmp_path / "out"
    proc = kb("tune", QUICKSTART, "--candidates", "2", "--set", "tune.rungs=1", "--validation", "holdout",
              "--set", "trials=1", "--out", out, "-q", data_dir=data_dir)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, describe(proc)
    folder, = run_folders(out)
    assert results_path_from_stdout(proc, REPO).resolve() == (folder / "results.csv").resolve()
    command = shlex.split(proc.stdout.strip().splitlines()[-1].removeprefix("compare: "))
    assert command[-2:] == ["compare", str(folder)]
    # the best setting's values to 4 significant digits, its score named as a validation error
    best = next(line for line in proc.stdout.splitlines() if line.startswith("best: "))
    assert re.match(r"best: (\w+=[^,:]+, )*\w+=[^,:]+: validation error \d\.\d{4}", best), best
    assert all(len(re.sub(r"\D", "", value).lstrip("0")) <= 4
               for value in re.findall(r"=([\d.e+-]+)", best.split(": validation")[0])), best


def test_fetch_without_network_fails_fast_and_leaves_no_partial_file(tmp_path, data_dir):
    """`datasets fetch susy` with downloads allowed (KERNELBENCH_OFFLINE unset) but no network."""
    extra = {}
    if _host_resolves("www.csie.ntu.edu.tw"):
        # a network is there after all: simulate none with a proxy that refuses connections,
        # never start a 2.4 GB download from a test
        extra = {"HTTPS_PROXY": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
                 "NO_PROXY": "", "no_proxy": ""}
    started = time.monotonic()
    proc = kb("datasets", "fetch", "susy", "--quiet", data_dir=data_dir, offline=False,
              timeout=60, env_extra=extra)
    elapsed = time.monotonic() - started
    assert proc.returncode == 2, describe(proc)
    assert elapsed < 20, f"took {elapsed:.1f} s"
    assert "Traceback" not in proc.stderr
    message = proc.stderr
    assert "susy" in message.lower() and "SUSY" in message
    assert str(data_dir) in message                        # says where to put the file
    assert "KERNELBENCH_MIRROR" in message
    assert "https://" in message                           # and where to get it
    # nothing that looks like data (or half of it) in the cache; lock files are not data
    leftovers = [p for p in data_dir.rglob("*") if p.is_file() and ".locks" not in p.parts]
    assert leftovers == [], leftovers
    assert not list(data_dir.rglob("*.part"))


def test_fetch_offline_fails_fast_with_the_fix(tmp_path, data_dir):
    started = time.monotonic()
    proc = kb("datasets", "fetch", "susy", data_dir=data_dir, timeout=60)
    assert proc.returncode == 2, describe(proc)
    assert time.monotonic() - started < 20
    assert "KERNELBENCH_OFFLINE" in proc.stderr and str(data_dir) in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------------------------ unexpected failure -> exit 1

def test_unexpected_failure_exits_1_with_traceback_and_marks_the_run_failed(tmp_path, data_dir):
    code = ("import kernelbench.experiment.cells as r\n"
            "def boom(*a, **k):\n    raise RuntimeError('injected bug')\n"
            "r.train_cell = boom\n"
            "from kernelbench.cli import main\n"
            f"main(['run', {str(QUICKSTART)!r}, '--out', {str(tmp_path / 'out')!r}, '-q'])\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=_env(data_dir),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" in proc.stderr and "injected bug" in proc.stderr
    folder, = run_folders(tmp_path / "out")
    meta = json.loads((folder / "run.json").read_text())
    assert meta["status"] == "failed" and "injected bug" in meta["error"]


# ------------------------------------------------------------------------------------ listing commands

def test_algorithms_lists_parameters_with_defaults(data_dir):
    from kernelbench.estimators import algorithms

    proc = kb("algorithms", data_dir=data_dir)
    assert proc.returncode == 0, describe(proc)
    assert re.search(r"^dsg\b", proc.stdout, re.M), proc.stdout
    spec = algorithms()["dsg"]
    assert {"C", "gamma", "batch_size", "block_size", "threads"} <= set(spec.parameters)
    for name, default in spec.defaults().items():
        assert re.search(rf"^\s+{re.escape(name)} = {re.escape(repr(default))}", proc.stdout, re.M), \
            (name, default, proc.stdout)
    for name in algorithms():
        assert re.search(rf"^{re.escape(name)}\b", proc.stdout, re.M), name


def test_datasets_list(data_dir):
    proc = kb("datasets", "list", data_dir=data_dir)
    assert proc.returncode == 0, describe(proc)
    names = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    assert {"a9a", "digits86", "susy"} <= names, names
    digits = next(line for line in proc.stdout.splitlines() if line.startswith("digits86"))
    assert "builtin" in digits and "binary" in digits


def test_datasets_path_prints_the_cache_dir(tmp_path, data_dir):
    proc = kb("datasets", "path", data_dir=data_dir)
    assert proc.returncode == 0, describe(proc)
    assert f"cache: {data_dir}" in proc.stdout.splitlines()
    assert MIRROR in proc.stdout


def test_datasets_info_of_a_mirrored_set(data_dir):
    mirror = Path(MIRROR)
    if not any(mirror.glob("ijcnn1*")):
        pytest.skip(f"ijcnn1 is not in the mirror {MIRROR}")
    proc = kb("datasets", "info", "ijcnn1", "--json", data_dir=data_dir)       # a big set: never shipped
    assert proc.returncode == 0, describe(proc)
    info = json.loads(proc.stdout)
    assert info["name"] == "ijcnn1" and info["task"] == "binary" and info["available"]
    assert Path(info["files"]["train"]["local"]).parent == mirror
    assert info["cache_dir"] == str(data_dir)


def test_datasets_fetch_builtin_is_a_no_op(data_dir):
    proc = kb("datasets", "fetch", "digits86", data_dir=data_dir)
    assert proc.returncode == 0, describe(proc)
    assert "builtin" in proc.stdout


# ------------------------------------------------------------------------------------ figures

def test_figures_from_the_quickstart_results(quickstart, tmp_path, data_dir):
    out = tmp_path / "figs"
    proc = kb("figures", quickstart["out"], "--out", out, data_dir=data_dir)
    assert proc.returncode == 0, describe(proc)
    pngs, pdfs = sorted(out.rglob("*.png")), sorted(out.rglob("*.pdf"))
    assert pngs and pdfs, list(out.rglob("*"))
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for pdf in pdfs:
        assert pdf.read_bytes()[:5] == b"%PDF-"
    listed = {Path(line.strip()).name for line in proc.stdout.splitlines()}
    assert {p.name for p in pngs + pdfs} <= listed
    # figures never re-run anything: the results are untouched
    assert len(run_folders(quickstart["out"])) == 2


def test_figures_on_a_missing_folder_is_bad_usage(tmp_path, data_dir):
    proc = kb("figures", tmp_path / "no-such-results", "--out", tmp_path / "figs", data_dir=data_dir)
    assert proc.returncode == 2, describe(proc)
    assert "no-such-results" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "figs").exists()


# ------------------------------------------------------------------------------------ in-process

def test_main_in_process_exit_codes(tmp_path, data_dir, monkeypatch, capsys):
    from kernelbench.cli import main

    for key, value in _env(data_dir).items():
        if key.startswith("KERNELBENCH"):
            monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as exc:
        main(["datasets", "path"])
    assert exc.value.code in (0, None)
    assert f"cache: {data_dir}" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["run", str(tmp_path / "missing.yaml")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "missing.yaml" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as exc:                   # a second call still works
        main(["datasets", "info", "nosuch"])
    assert exc.value.code == 2
    assert "nosuch" in capsys.readouterr().err


# ------------------------------------------------------------------------ install: optional extras

def _without(module: str, args, tmp_path):
    """The CLI with `module` unimportable (as in an install without its extra)."""
    code = (f"import sys; sys.modules[{module!r}] = None\n"
            f"from kernelbench.cli import main; main({[str(a) for a in args]!r})")
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=_env(tmp_path / "data"),
                          capture_output=True, text=True, timeout=180)


@pytest.mark.parametrize("module, extra, args", [
    ("optuna", "tune", ["tune", "configs/quickstart.yaml"]),
    ("sklearnex", "onedal", ["run", "configs/quickstart.yaml", "--set", "algorithm={name: libsvm-p}"])])
def test_a_feature_without_its_extra_exits_2_naming_the_extra(tmp_path, module, extra, args):
    proc = _without(module, [*args, "--out", tmp_path / "out"], tmp_path)
    assert proc.returncode == 2, describe(proc)
    # run in the source checkout (cwd=REPO): the hint installs the extra into this checkout
    assert f"pip install -e '.[{extra}]'" in proc.stderr and module in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not run_folders(tmp_path / "out")          # refused before any work


def test_the_extra_hint_fits_how_kernelbench_was_installed(tmp_path, monkeypatch):
    from kernelbench.errors import install_command

    site_packages = tmp_path / "site-packages"
    (site_packages / "kernelbench").mkdir(parents=True)
    assert install_command("tune", site_packages / "kernelbench") == "pip install 'kernelbench[tune]'"
    monkeypatch.chdir(REPO)
    assert install_command("tune", REPO / "kernelbench") == "pip install -e '.[tune]'"
    monkeypatch.chdir(tmp_path)
    assert install_command("tune", REPO / "kernelbench") == f"pip install -e '{REPO}[tune]'"


def test_version_and_choice_options(tmp_path):
    import kernelbench

    proc = kb("--version", data_dir=tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == f"kernelbench {kernelbench.__version__}"
    for args, allowed in ((["run", "configs/quickstart.yaml", "--protocol", "heldout"], "'held-out', 'paper'"),
                          (["reproduce", "dai2015"], "'dai2014'"),
                          (["datasets", "synth", "susi"], "'susy'")):
        proc = kb(*args, data_dir=tmp_path)
        assert proc.returncode == 2 and allowed in proc.stderr, describe(proc)
