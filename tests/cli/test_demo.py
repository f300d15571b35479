"""`kernelbench demo` (what `make demo` runs): Dai et al.'s Adult panel on the a9a copy shipped with
kernelbench, on a machine with no network and no mirror, ending with the compare page and one
line that sets each method's test error beside the paper's printed number."""
from __future__ import annotations

import re

import pandas as pd

from conftest import REPO


def test_the_demo_runs_offline_and_ends_with_the_page_and_the_papers_numbers(tmp_path, monkeypatch, capsys):
    from kernelbench.cli import main

    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_MIRROR", "")
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    monkeypatch.chdir(REPO)
    try:
        main(["demo", "--out", str(tmp_path / "demo"), "--set", "dataset.subsample=1500", "--set", "trials=2", "-q"])
    except SystemExit as e:
        assert e.code in (0, None), capsys.readouterr().err
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2] == f"compare: {tmp_path / 'demo' / 'compare' / 'compare.html'}"
    assert (tmp_path / "demo" / "compare" / "compare.html").is_file()
    measured = {}
    for line in lines[1:4]:                 # "<algorithm>: <run folder>"
        algorithm, folder = line.split(": ")
        rows = pd.read_csv(f"{folder}/results.csv")
        measured[algorithm] = 100 * rows.loc[rows["final"] == 1, "test_error"].mean()
    assert set(measured) == {"dsg", "norma", "k-sdca"}
    printed = dict(re.findall(r"([\w-]+) ([\d.]+) % \(paper [\d.]+ %\)", lines[-1]))
    assert {name: float(value) for name, value in printed.items()} == {k: round(v, 1) for k, v in measured.items()}
    assert "(paper 15.3 %)" in lines[-1] and lines[-1].count("(paper 15.0 %)") == 2
    assert "of 3 within the report's tolerance" in lines[-1] and "best exact-kernel method" in lines[-1]


def test_the_demo_outside_the_checkout_names_the_configs_it_needs(tmp_path, monkeypatch, capsys):
    from kernelbench.cli import main

    monkeypatch.chdir(tmp_path)                 # no configs/ here
    try:
        main(["demo", "--out", str(tmp_path / "demo")])
        code = 0
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and "configs/a9a_dsg_dai2014.yaml" in err and "--configs" in err, err
    assert not (tmp_path / "demo").exists()
