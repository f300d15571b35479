"""Model selection for the Geng et al. configs (scripts/geng_tune.py, run as a program; its
held-out split is kernelbench.semisupervised.holdout_split) and the learned offset the ijcnn1
TSGS3VM config relies on."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernelbench.semisupervised import holdout_split
from kernelbench.solvers.tsgs3vm import TSGS3VMClassifier

ROOT = Path(__file__).resolve().parents[1]


def geng_tune(*arguments) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "geng_tune.py"), "cod-rna", "0.3",
                           "tsgs3vm", *arguments], capture_output=True, text=True, timeout=120)


def test_arguments_fix_parameters_replace_axes_and_set_options():
    default = json.loads(geng_tune("--dry-run").stdout)
    given = geng_tune("passes=5", "block_size=32", "gamma=0.01,0.1", "C=3000", "offset=none,learned",
                      "scale=none", "draws=10", "--dry-run")
    assert given.returncode == 0, given.stderr
    chosen = json.loads(given.stdout)
    assert chosen["grid"] == {"gamma": [0.01, 0.1], "eta": default["grid"]["eta"],     # eta untouched
                              "offset": ["none", "learned"]}                             # C fixed: no axis
    assert chosen["fixed"] == {"block_size": 32, "C": 3000.0}
    assert isinstance(chosen["fixed"]["block_size"], int)
    assert chosen["options"] == {"scale": "none", "passes": 5.0, "subsample": None, "draws": 10}


def test_malformed_argument_is_refused():
    refused = geng_tune("gamma", "--dry-run")
    assert refused.returncode != 0 and "KEY=VALUE" in refused.stderr


@pytest.mark.parametrize("holdout", [10_000, 300])
def test_validation_rows_are_unlabeled_and_never_train(holdout):
    y = np.where(np.random.default_rng(0).random(5000) < 0.1, 1.0, -1.0)
    for draw in range(3):
        labeled, train, valid = holdout_split(y, 200, draw, holdout)
        assert labeled.size == 200 and set(np.unique(y[labeled])) == {-1.0, 1.0}
        assert np.intersect1d(valid, labeled).size == 0          # validation rows are unlabeled rows
        assert np.intersect1d(valid, train).size == 0            # ... held out of training
        assert np.isin(labeled, train).all()
        assert np.union1d(train, valid).size == y.size
        assert valid.size == min(holdout, (y.size - 200) // 4)


def test_learned_offset_reaches_the_constant_hinge_minimiser():
    # gamma ~ 0: every random feature is the constant cos(b_j), so f = b + c with c regularised and b
    # not. The minimiser of ½c² + C·mean hinge(y (b + c)) on a set with mean label < 0 is c = 0,
    # b = -1 (the hinge of a constant is 1 - mean(y)·f for |f| <= 1, decreasing towards f = -1).
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 3))
    y = np.where(rng.random(400) < 0.2, 1.0, -1.0)
    est = TSGS3VMClassifier(gamma=1e-12, C=1.0, eta=20.0, batch_size=400, block_size=64,
                            offset="learned", passes=400, random_state=0).fit(X, y)
    f = est.decision_function(X)
    assert np.ptp(f) < 1e-6                                       # constant, as the kernel is
    assert est.core_.bias == pytest.approx(-1.0, abs=0.1)
    assert f[0] == pytest.approx(-1.0, abs=0.05)
    no_offset = TSGS3VMClassifier(gamma=1e-12, C=1.0, eta=20.0, batch_size=400, block_size=64,
                                  passes=400, random_state=0).fit(X, y).decision_function(X)
    # without b, k ≈ 1 makes f = c with ‖f‖² = c²: the minimiser of ½c² + C(1 - mean(y)·c) is
    # c = C·mean(y) (here -0.6 > -1), the fixed point of update (7): f = -ζ = C·mean(y)
    assert np.ptp(no_offset) < 1e-6
    assert no_offset[0] == pytest.approx(1.0 * y.mean(), abs=0.05)
