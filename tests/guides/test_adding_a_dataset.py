"""The documentation's "Adding a dataset" page, followed word for word: its registry entry added to a
copy of the registry, its example files where the page puts them, its commands run in an empty
folder. The entry's hashes are those of the files, the dataset is listed, fetched as verified and
runs from a config that names it."""
from __future__ import annotations

import csv
import hashlib
import shutil

import pytest
import yaml

from guide_pages import REPO, code_blocks, describe, named_file, run_shell

PAGE = "adding-a-dataset.md"
REGISTRY = REPO / "datasets" / "registry.yaml"
EXAMPLES = REPO / "datasets" / "examples"


@pytest.fixture(scope="module")
def page():
    entry, config = code_blocks(PAGE, "yaml")
    mirror, run = code_blocks(PAGE, "bash")
    return {"entry": entry, "config": config, "mirror": mirror, "run": run}


def with_entry(folder, entry: str):
    """A copy of the registry in `folder` with `entry` added under `datasets:` (its last mapping)."""
    registry = folder / "registry.yaml"
    registry.write_text(REGISTRY.read_text(encoding="utf-8") + "\n" + entry, encoding="utf-8")
    return registry


@pytest.fixture
def folder(page, tmp_path):
    """An empty folder holding what the page's reader has: the example files and the config; the
    registry with the page's entry added, and an empty cache dir, in the environment."""
    shutil.copytree(EXAMPLES, tmp_path / "datasets" / "examples")
    config = tmp_path / named_file(page["config"])
    config.parent.mkdir(parents=True)
    config.write_text(page["config"], encoding="utf-8")
    env = {"KERNELBENCH_REGISTRY": str(with_entry(tmp_path, page["entry"])),
           "KERNELBENCH_DATA": str(tmp_path / "cache"), "KERNELBENCH_OFFLINE": "1"}
    return tmp_path, env


def test_the_entrys_hashes_rows_and_features_are_the_files(page):
    (name, entry), = yaml.safe_load(page["entry"]).items()
    for part in entry["files"].values():
        path = EXAMPLES / part["name"]
        assert part["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest(), part["name"]
        with path.open(newline="") as f:
            rows = list(csv.reader(f))[entry["csv"]["header_rows"]:]
        assert len(rows) == part["n"] and {len(row) - 1 for row in rows} == {entry["d"]}


def test_the_dataset_is_found_verified_and_runs_from_a_config(page, folder):
    cwd, env = folder
    ran = run_shell(page["mirror"] + page["run"], cwd, env)      # one terminal: the export holds for both
    assert ran.returncode == 0, describe(ran)
    assert "Synthetic churn" in ran.stdout
    verified = [line for line in ran.stdout.splitlines()
                if "verified: sha256 matches the one pinned in the registry" in line]
    assert sorted(line.split()[0].rsplit("/", 1)[-1] for line in verified) == ["churn_test.csv", "churn_train.csv"]
    results, = (cwd / "results").glob("churn_libsvm-*/results.csv")
    with results.open(newline="") as f:
        final = [row for row in csv.DictReader(f) if row["final"] == "1"]
    # the labels lie on either side of a circle: an RBF SVM is far better than a coin
    assert final and all(float(row["test_error"]) < 0.3 for row in final)


def test_a_mistake_in_the_entry_names_the_dataset_and_the_field(page, folder):
    cwd, env = folder
    with_entry(cwd, page["entry"].replace("    d: 4\n", "    d: four\n"))
    listed = run_shell("kernelbench datasets list", cwd, env)
    assert listed.returncode == 2, describe(listed)
    assert "'churn'" in listed.stderr and "'d'" in listed.stderr
