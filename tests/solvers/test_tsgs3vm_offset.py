"""TSGS3VM's offset b (f = b + Σβ cos(·); the paper has none): learned, it reaches the minimiser
of the objective with an unregularised constant, which the ijcnn1 TSGS3VM config relies on."""
import numpy as np
import pytest

from kernelbench.solvers.tsgs3vm import TSGS3VMClassifier


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
                                  offset="none", passes=400, random_state=0).fit(X, y).decision_function(X)
    # without b, k ≈ 1 makes f = c with ‖f‖² = c²: the minimiser of ½c² + C(1 - mean(y)·c) is
    # c = C·mean(y) (here -0.6 > -1), the fixed point of update (7): f = -ζ = C·mean(y)
    assert np.ptp(no_offset) < 1e-6
    assert no_offset[0] == pytest.approx(1.0 * y.mean(), abs=0.05)
