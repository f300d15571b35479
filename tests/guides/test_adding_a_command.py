"""The documentation's "Adding a command" page, followed word for word: its module saved and imported
as kernelbench.cli.best, registered on the app by the page's two lines, and the page's commands run
in an empty folder. The command is listed, documented in the generated reference, prints what the
runs' results.csv files say, and a user's mistake exits 2 with the fix."""
from __future__ import annotations

import csv
import importlib.util
import shlex
import sys
from collections import defaultdict

import pytest

from kernelbench.cli import app, main
from kernelbench.cli.reference import cli_markdown

from guide_pages import REPO, code_blocks

PAGE = "adding-a-command.md"
MODULE = "kernelbench.cli.best"


@pytest.fixture(scope="module")
def command(tmp_path_factory):
    """The page's module, imported under the name the page gives it, and registered as the page says;
    both undone afterwards."""
    module_code, registration = code_blocks(PAGE, "python")
    path = tmp_path_factory.mktemp("module") / "best.py"
    path.write_text(module_code, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(MODULE, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[MODULE] = module
    commands = list(app.registered_commands)
    try:
        spec.loader.exec_module(module)
        exec(registration, {"app": app})
        yield module
    finally:
        app.registered_commands[:] = commands
        sys.modules.pop(MODULE, None)


def kernelbench(line: str, capsys) -> tuple[int, str, str]:
    """One `kernelbench ...` line of the page, run in this process (where the command is registered):
    its exit code, stdout and stderr."""
    args = shlex.split(line, comments=True)
    assert args[0] == "kernelbench", line
    with pytest.raises(SystemExit) as exited:
        main(args[1:])
    out, err = capsys.readouterr()
    return exited.value.code or 0, out, err


def final_means(folder, metric: str) -> dict[str, float]:
    """Each algorithm's mean of `metric` over the final rows of the results.csv files under `folder`."""
    values = defaultdict(list)
    for results in folder.rglob("results.csv"):
        with results.open(newline="") as f:
            for row in csv.DictReader(f):
                if row["final"] == "1" and row["status"] == "ok":
                    values[row["algorithm"]].append(float(row[metric]))
    return {algorithm: sum(v) / len(v) for algorithm, v in values.items()}


def test_listed_by_help_and_in_the_generated_reference(command, capsys):
    code, out, _ = kernelbench("kernelbench --help", capsys)
    assert code == 0 and "best" in out
    reference = cli_markdown()
    assert "kernelbench best" in reference and "--metric" in reference


def test_the_pages_commands_print_each_algorithms_mean_lowest_first(command, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").symlink_to(REPO / "configs")
    printed = {}
    for line in code_blocks(PAGE, "bash")[0].splitlines():
        code, out, err = kernelbench(line, capsys)
        assert code == 0, f"{line}\n{out}\n{err}"
        if " best " in line:
            metric = shlex.split(line)[-1] if "--metric" in line else "test_error"
            printed[metric] = [row.split(": ") for row in out.splitlines()]
    for metric, rows in printed.items():
        means = final_means(tmp_path / "results" / "digits", metric)
        assert sorted(name for name, _ in rows) == sorted(means) == ["dsg", "norma"]
        values = [float(value) for _, value in rows]
        assert values == sorted(values), f"not lowest first: {rows}"
        assert all(float(value) == pytest.approx(means[name], abs=5e-5) for name, value in rows)


def test_a_folder_without_runs_exits_2_saying_how_to_make_some(command, capsys, tmp_path):
    code, _, err = kernelbench(f"kernelbench best {tmp_path}", capsys)
    assert code == 2 and "kernelbench run CONFIG --out" in err and "Traceback" not in err
