"""The full-size comparison (scripts/bench_fullscale.py) end to end at tiny sizes (as a subprocess;
no timing is asserted). The cost-growth sweep and its figure are tests/test_sweep.py's."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(args, tmp_path, env=None):
    result = subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=300,
                            env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow          # a benchmark run end to end (scripts/bench_fullscale.py)
@pytest.mark.parametrize("shape,d", [("susy", 18), ("higgs", 28)])
def test_bench_fullscale_end_to_end_tiny(tmp_path, shape, d):
    # scikit-learn-intelex hidden (a package that fails to import shadows it): the script must say
    # so and go on, whether or not it is installed here
    shadow = tmp_path / "shadow" / "sklearnex"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('hidden by the test')\n")
    out = tmp_path / "bench"
    # a fixed shared budget (--seconds) in place of T_rff keeps the LIBSVM sizes independent of load
    stdout = _run(["scripts/bench_fullscale.py", "--shape", shape, "--n", "3000", "--n-test", "500", "--seconds", "1",
                   "--ours", "dsg", "--svm", "libsvm", "sklearnex", "--svm-start", "3000",
                   "--out", str(out)], tmp_path,
                  env={"PYTHONPATH": os.pathsep.join([str(tmp_path / "shadow"), os.environ.get("PYTHONPATH", "")])})
    table = pd.read_csv(out / "fullscale.csv", keep_default_na=False, na_values=[""]).set_index("method")
    rff = table[table["kind"] == "user pipeline"].iloc[0]
    assert rff["n_train"] == 3000 and 0 <= rff["test_error"] <= 1 and rff["train_seconds"] > 0
    # with a shared budget the pipeline trains for it (epochs while within T), not one epoch
    assert 1 <= rff["train_seconds"] < 3 and "epochs within 1 s" in rff["note"]
    assert table["dataset"].eq(f"synthetic {shape} replica (variant 1)").all()
    assert f"{shape.upper()} replica (variant 1): 3,000 training, 500 test rows, d = {d}" in stdout
    for name in ("dsg",):
        row = table.loc[name]
        assert row["status"] == "ok" and 0 <= row["test_error"] <= 1
        # the budget is added to the config's own stop rule (one pass: 3,000 rows end far sooner);
        # the runner reads the clock every 1% of a pass, so it can never run long past the budget
        assert row["budget_seconds"] == 1 and 0 < row["train_seconds"] <= 1.5
        assert '"seconds": 1' in row["note"]
    libsvm = table.loc["LIBSVM (scikit-learn SVC)"]          # 3,000 rows: well under a second
    assert libsvm["status"] == "ok" and libsvm["n_train"] == 3000 and 0 <= libsvm["test_error"] <= 1
    assert table.loc["oneDAL SVC (scikit-learn-intelex)"]["status"] == "absent"
    assert "scikit-learn-intelex is not installed" in stdout
    assert "lower than RFF + SGD?" in stdout
