"""The cost-growth benchmark (scripts/bench_scaling.py) and its figure (kernelbench/figures/scaling.py):
the slope fit against a known exponent, the figure from a hand-made summary, and the script end to
end at a tiny size (as a subprocess; no timing is asserted)."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kernelbench.figures import FIGURES
from kernelbench.results import collect_results
from kernelbench.figures.scaling import fit_slope, scaling_rows, slopes, time_and_memory_vs_size

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("exponent", [1.0, 1.5, 2.0])
def test_fit_slope_recovers_a_known_exponent(exponent):
    sizes = np.geomspace(5e4, 5e6, 6)
    seconds = 3e-6 * sizes ** exponent
    fit = fit_slope(sizes, seconds)
    assert fit["slope"] == pytest.approx(exponent, abs=1e-9)
    assert (fit["n_min"], fit["n_max"], fit["points"]) == (50000, 5000000, 6)


def test_fit_slope_skips_missing_points_and_needs_two_sizes():
    sizes = np.array([1e3, 2e3, 4e3, 8e3])
    seconds = np.array([1.0, np.nan, 4.0, 0.0])          # a killed point, a zero time: left out
    fit = fit_slope(sizes, seconds)
    assert fit["slope"] == pytest.approx(1.0)           # 1 s at 1e3, 4 s at 4e3: 4× for 4×
    assert (fit["n_min"], fit["n_max"], fit["points"]) == (1000, 4000, 2)
    assert math.isnan(fit_slope([1e3], [1.0])["slope"])
    assert math.isnan(fit_slope([], [])["slope"])


def _summary(tmp_path: Path) -> Path:
    """A hand-made bench summary: one solver finishing every size (time ∝ n), one stopped by the
    time budget, one refused by its own budget at the first size."""
    rows = []
    for n in (50_000, 126_000, 315_000):
        rows.append(dict(solver="bsgd", n=n, train_seconds=n / 10_000, peak_memory_mb=300 + n / 1e4,
                         status="ok", stopped=""))
    rows.append(dict(solver="libsvm", n=50_000, train_seconds=300.0, peak_memory_mb=900, status="ok", stopped=""))
    rows.append(dict(solver="libsvm", n=126_000, train_seconds=np.nan, peak_memory_mb=2000, status="skipped",
                     stopped="time", message="killed at the wall-clock limit"))
    rows.append(dict(solver="tsvm-ls", n=50_000, train_seconds=0.0, peak_memory_mb=250, status="skipped",
                     stopped="budget", message="more than max_points"))
    frame = pd.DataFrame(rows)
    frame["bench"] = "scaling"
    frame["dataset"] = "synthetic susy replica"
    frame["test_error"] = 0.25
    frame["data_mb"] = frame["n"] * 18 * 8 / 2**20
    frame["max_seconds"] = 900.0
    frame["max_memory_mb"] = 16000.0
    folder = tmp_path / "bench" / "scaling"
    folder.mkdir(parents=True)
    frame.to_csv(folder / "results.csv", index=False)
    return folder


def test_figure_renders_from_a_summary_with_stopped_solvers(tmp_path):
    _summary(tmp_path)
    df = collect_results(tmp_path)
    rows = scaling_rows(df)
    assert set(rows["solver"]) == {"bsgd", "libsvm", "tsvm-ls"}
    fitted = slopes(rows)
    assert fitted["bsgd"]["slope"] == pytest.approx(1.0)
    assert math.isnan(fitted["libsvm"]["slope"]) and "tsvm-ls" not in fitted   # one point; none

    fig = time_and_memory_vs_size(df)
    assert fig is not None and len(fig.axes) == 2
    markers = {line.get_marker() for line in fig.axes[0].get_lines()}
    assert {"^", "x"} <= markers                          # where libsvm and tsvm-ls stopped, and why
    legend = [t.get_text() for t in fig.axes[1].get_legend().get_texts()]
    assert any(t.startswith("bsgd (slope 1.00") for t in legend)
    assert any("tsvm-ls" in t and "stops at 50k: budget" in t for t in legend)
    import matplotlib.pyplot as plt
    plt.close(fig)

    fig = FIGURES["bench_scaling_time_memory"](df)          # registered under this name
    fig.savefig(tmp_path / "scaling.png", dpi=60)
    plt.close(fig)
    assert (tmp_path / "scaling.png").stat().st_size > 0


def test_figure_is_absent_without_bench_rows():
    assert "bench_scaling_time_memory" in FIGURES
    assert time_and_memory_vs_size(pd.DataFrame()) is None
    assert time_and_memory_vs_size(pd.DataFrame({"algorithm": ["dsg"], "status": ["ok"]})) is None


def _run(args, tmp_path, env=None):
    result = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=300,
                            env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow          # a benchmark run end to end (scripts/bench_scaling.py)
def test_bench_scaling_end_to_end_tiny(tmp_path):
    out = tmp_path / "scaling"
    stdout = _run(["scripts/bench_scaling.py", "--sizes", "12000", "24000", "--solvers", "dsg", "tsvm-cccp",
                   "--n-test", "500", "--out", str(out)], tmp_path)
    table = pd.read_csv(out / "results.csv", keep_default_na=False, na_values=[""])
    dsg = table[table["solver"] == "dsg"].sort_values("n")
    assert list(dsg["n"]) == [12000, 24000]
    assert list(dsg["status"]) == ["ok", "ok"] and dsg["stopped"].isna().all()
    assert (dsg["train_seconds"] > 0).all() and (dsg["peak_memory_mb"] > 0).all()
    assert dsg["test_error"].between(0, 1).all()
    assert list(dsg["n_train"]) == [12000, 24000]
    for folder in dsg["run_folder"]:                      # each point is its own run folder
        assert (Path(folder) / "results.csv").exists() and (Path(folder) / "run.json").exists()
    # tsvm-cccp refuses more than max_points (10,000): one clean row, the line stops there
    tsvm = table[table["solver"] == "tsvm-cccp"]
    assert len(tsvm) == 1 and tsvm.iloc[0]["status"] == "skipped" and tsvm.iloc[0]["stopped"] == "budget"
    assert "slope" in stdout and "dsg" in stdout
    assert (out / "bench.json").exists()
    fig = time_and_memory_vs_size(collect_results(out))   # the figure finds the summary among the runs
    assert fig is not None
    import matplotlib.pyplot as plt
    plt.close(fig)
