"""The registry file itself, dataset_info, data_dirs, and the `datasets` Typer sub-app."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from kernelbench.data import data_dirs, dataset_info, dataset_names
from kernelbench.cli.datasets import datasets_app
from kernelbench.data.registry import load_registry
from kernelbench.errors import DataError

from conftest import MIRROR  # noqa: E402


pytestmark = pytest.mark.usefixtures("isolated_data")


PAPER_SETS = ["cod-rna", "w6a", "w8a", "ijcnn1", "skin_nonskin", "susy", "higgs", "dota2", "hepmass", "a9a",
              "phishing", "covtype_binary", "covtype", "mnist", "mnist8m", "rcv1", "aloi", "epsilon",
              "yearpredictionmsd", "cifar10", "abalone", "svmguide1", "australian_scale", "fourclass_scale",
              "heart_scale", "covtype_subset20k", "digits86", "qm7", "imagenet_dai2014", "molecularspace"]


def test_every_dataset_of_the_papers_is_registered_and_valid():
    names = dataset_names()
    assert names == sorted(names)
    assert set(PAPER_SETS) <= set(names)
    for name, spec in load_registry().items():
        assert spec.task in ("binary", "multiclass", "regression")
        for f in spec.files.values():
            assert f.url is None or f.url.startswith(("https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/",
                                                      "https://archive.ics.uci.edu/",
                                                      "https://quantum-machine.org/data/"))
            assert f.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", f.sha256)
            assert f.n is None or f.n > 0
    assert "SUBSET" in load_registry()["covtype_subset20k"].description


# Independent truths: "raw sha256" and shapes from ../shared/datasets/SOURCES.md.
SOURCES_MD = {
    "a9a": ("train", "f5d5ffd8d865ff41328e7ee043e4b020816914ff6843ff15b98905ddbedce906", 32561, 123),
    "ijcnn1": ("test", "e7b0bbd518641980dc322746c6bc59d019d3153934e6258e48f9d8cfae2c4bb8", 91701, 22),
    "heart_scale": ("train", "5defa0a4c4c5bdaf3f55ae3828310252e8565c13ee37ce279e0b86d82e7f4ce9", 270, 13),
    "dota2": ("train", "16823bf0ad99b4931e94809268807ef398edb7b1288b12b384aeddbee3d9ebda", 92650, 116),
}


@pytest.mark.parametrize("name", sorted(SOURCES_MD))
def test_registry_values_agree_with_sources_md(name):
    role, sha, n, d = SOURCES_MD[name]
    spec = load_registry()[name]
    assert (spec.files[role].sha256, spec.files[role].n, spec.d) == (sha, n, d)


def test_unpinned_sets_have_null_sha_and_info_says_the_hash_is_recorded_not_verified(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))        # no record yet
    info = dataset_info("cod-rna")
    assert info["files"]["train"]["sha256"] is None and info["files"]["train"]["hash"] == "not yet"
    assert any("no sha256 pinned" in n and "first use is recorded" in n for n in info["notes"])
    assert not any("verified" in n and "not verified" not in n for n in info["notes"])


@pytest.mark.skipif(not (MIRROR / "a9a.xz").is_file(), reason=f"staged benchmark mirror {MIRROR} is absent")
def test_dataset_info_resolves_mirror_files():
    info = dataset_info("ijcnn1")          # a big set: never shipped, so read from the mirror
    assert info["files"]["train"]["local"] == str(MIRROR / "ijcnn1.xz")
    assert info["files"]["test"]["local"] == str(MIRROR / "ijcnn1.t.xz")
    assert info["available"] and info["task"] == "binary" and info["d"] == 22
    assert info["cache_dir"] == str(data_dirs()["cache"])
    assert dataset_info("susy")["files"]["train"]["local"] is None


def test_data_dirs_from_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELBENCH_MIRROR", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    dirs = data_dirs()
    assert dirs == {"cache": tmp_path / "cache", "mirrors": [tmp_path / "a", tmp_path / "b"]}
    monkeypatch.delenv("KERNELBENCH_DATA")
    monkeypatch.delenv("KERNELBENCH_MIRROR")
    dirs = data_dirs()
    assert "kernelbench" in str(dirs["cache"]) and dirs["mirrors"] == []


@pytest.mark.parametrize("entry, field", [
    ("{task: binary, format: svmlight, d: 3, description: x, files: {}}", "files.train"),
    ("{task: binary, format: arff, d: 3, description: x}", "format"),
    ("{task: binary, format: svmlight, d: -1, description: x}", "'d'"),
    ("{task: binary, format: svmlight, d: 3, description: x, files: {train: {name: t, url: ftp://x/t, n: 3}}}",
     "files.train.url"),
    ("{task: binary, format: svmlight, d: 3, description: x, files: {train: {name: t, url: null, sha256: abc}}}",
     "files.train.sha256"),
    ("{task: binary, format: svmlight, d: 3, description: x, files: {train: {name: t, url: null}},"
     " split: {protocol: stratified, test_fraction: 2}}", "split.test_fraction"),
])
def test_bad_registry_entries_are_data_errors_naming_the_field(tmp_path, monkeypatch, entry, field):
    reg = tmp_path / "reg.yaml"
    reg.write_text(f"datasets:\n  toy: {entry}\n")
    monkeypatch.setenv("KERNELBENCH_REGISTRY", str(reg))
    with pytest.raises(DataError, match=re.escape(field)) as err:
        dataset_names()
    assert str(reg) in str(err.value) and "'toy'" in str(err.value)


def test_unknown_name_suggests_close_matches():
    with pytest.raises(DataError, match="Did you mean.*skin_nonskin"):
        dataset_info("skin_non_skin")


# ------------------------------------------------------------------ CLI sub-app

def _runner_app():
    app = typer.Typer()
    app.add_typer(datasets_app, name="datasets")
    return app


def _invoke(*args):
    result = CliRunner().invoke(_runner_app(), ["datasets", *args])
    return result


def test_cli_list_info_path_fetch(tmp_path):
    out = _invoke("list")
    assert out.exit_code == 0, out.output
    table = out.output.split("\n\n")[0]                         # the legend follows a blank line
    lines = {line.split()[0]: line for line in table.splitlines()[2:]}
    assert set(lines) == set(dataset_names()) | {"synthetic"}     # + the generated replicas (synthetic.py)
    assert "generated" in lines["synthetic"] and "datasets synth" in lines["synthetic"]
    if (MIRROR / "a9a.xz").is_file():
        assert "32,561+16,281 x 123" in lines["a9a"] and " yes " in lines["a9a"]
    assert " no " in lines["susy"] and "builtin" in lines["digits86"]
    assert " pinned " in lines["a9a"] and " not yet " in lines["susy"]           # a9a's hashes are in the registry
    assert "recorded = " in out.output and "not verified" in out.output

    out = _invoke("info", "ijcnn1")
    assert out.exit_code == 0 and "ijcnn1.bz2" in out.output and str(tmp_path / "cache") in out.output

    out = _invoke("path")
    assert out.exit_code == 0 and f"cache: {tmp_path / 'cache'}" in out.output and str(MIRROR) in out.output

    out = _invoke("fetch", "digits86")
    assert out.exit_code == 0 and "builtin" in out.output
    if (MIRROR / "ijcnn1.xz").is_file():
        out = _invoke("fetch", "ijcnn1")          # a big set: never shipped, so read from the mirror
        assert out.exit_code == 0, out.output
        assert [line.split()[0] for line in out.output.splitlines()] == [str(MIRROR / "ijcnn1.xz"),
                                                                           str(MIRROR / "ijcnn1.t.xz")]
        assert all("verified: sha256 matches the one pinned" in line for line in out.output.splitlines())


def test_cli_fetch_missing_raises_data_error():
    out = _invoke("fetch", "susy")
    assert isinstance(out.exception, DataError) and "SUSY" in str(out.exception)


# ------------------------------------------------------------------ sets that cannot be downloaded

@pytest.mark.parametrize("name, why", [
    ("imagenet_dai2014", "convolutional features Dai et al. trained on ImageNet 2012 were never published"),
    ("molecularspace", "Harvard Clean Energy Project"),
])
def test_sets_without_a_download_are_listed_and_fail_saying_why(name, why, tmp_path):
    """url null: registry validation and `datasets list` accept them (not local); fetching and a config
    that uses them fail with exit code 2 and a message saying the data cannot be fetched, and why."""
    import subprocess
    import sys

    spec = load_registry()[name]
    assert spec.files and all(f.url is None for f in spec.files.values()) and why in spec.note
    out = _invoke("list")
    assert out.exit_code == 0
    line = next(line for line in out.output.splitlines() if line.startswith(name + " "))
    assert " no " in line
    out = _invoke("info", name)
    assert out.exit_code == 0 and "no public download" in out.output and why in out.output
    out = _invoke("fetch", name)
    assert isinstance(out.exception, DataError)
    assert "cannot be fetched" in str(out.exception) and why in str(out.exception)
    config = Path(__file__).resolve().parents[2] / "configs" / f"{name}_dsg_dai2014.yaml"
    proc = subprocess.run([sys.executable, "-m", "kernelbench.cli", "run", str(config), "--out",
                           str(tmp_path / "out"), "--quiet"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "cannot be fetched" in proc.stderr and why in proc.stderr and "Traceback" not in proc.stderr
