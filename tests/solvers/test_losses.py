"""The losses table (kernelbench/solvers/losses.py, compiled in _losses.pxd) against closed forms
written here, derivatives against central finite differences, curvatures against second differences."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from scipy.special import logsumexp

import reference_asydsskl as ref
from kernelbench.solvers.losses import (LOSSES, UNLABELED_LOSSES, loss_derivatives, loss_values, losses_for,
                                        unlabeled_loss_values)

LOSS_NAMES = ("hinge", "logistic", "squared", "smooth_hinge")


def closed_form(name, f, y):
    f, y = np.asarray(f, float), np.asarray(y, float)
    m = y * f
    if name == "hinge":
        return np.maximum(0.0, 1.0 - m)
    if name == "logistic":
        return np.logaddexp(0.0, -m)                 # log(1 + e^{-m}), stable
    if name == "squared":
        return 0.5 * (f - y) ** 2
    if name == "smooth_hinge":
        return np.where(m >= 1, 0.0, np.where(m <= 0, 0.5 - m, 0.5 * (1 - m) ** 2))
    raise AssertionError(name)


KINKS = {"hinge": (1.0,), "smooth_hinge": (0.0, 1.0), "logistic": (), "squared": ()}


def test_table_names_and_codes():
    assert set(LOSSES) == set(LOSS_NAMES) | {"softmax", "correntropy", "sigmoid"}
    assert set(UNLABELED_LOSSES) == {"shg", "sshg", "ramp", "da"}
    codes = [e.code for e in LOSSES.values()]
    assert len(set(codes)) == len(codes)          # one code per loss (softmax included)


def test_losses_for_tasks():
    assert losses_for("regression") == ("squared", "correntropy")
    assert "softmax" in losses_for("multiclass") and "hinge" not in losses_for("binary", smooth=True)
    assert "sigmoid" not in losses_for("binary", convex=True)
    assert "softmax" not in losses_for("binary", one_score=True)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_values_match_closed_form_on_grid(name):
    f = np.linspace(-4, 4, 801)
    for y in (-1.0, 1.0):
        yy = np.full_like(f, y)
        np.testing.assert_allclose(loss_values(name, f, yy), closed_form(name, f, yy), rtol=1e-14, atol=1e-15)


def test_specific_values():
    # a few hand-computed numbers, one per regime
    np.testing.assert_allclose(loss_values("hinge", [0.3, 2.0, -1.5], [1, 1, 1]), [0.7, 0.0, 2.5])
    np.testing.assert_allclose(loss_values("logistic", [0.0], [1.0]), [np.log(2.0)])
    np.testing.assert_allclose(loss_values("squared", [3.0], [-0.5]), [6.125])
    np.testing.assert_allclose(loss_values("smooth_hinge", [-1.0, 0.5, 1.0, 3.0], [1, 1, 1, 1]),
                               [1.5, 0.125, 0.0, 0.0])
    np.testing.assert_allclose(loss_values("smooth_hinge", [0.5], [-1]), [1.0])


@pytest.mark.parametrize("f", [800.0, -800.0, 40.0, -40.0, 1e300, -1e300])
@pytest.mark.parametrize("y", [-1.0, 1.0])
def test_logistic_extreme_margins(f, y):
    v = loss_values("logistic", [f], [y])[0]
    g = loss_derivatives("logistic", [f], [y])[0]
    assert np.isfinite(v) and np.isfinite(g)
    m = y * f
    expected_v = np.logaddexp(0.0, -m)
    np.testing.assert_allclose(v, expected_v, rtol=1e-14)
    # ℓ' = -y σ(-m): -y when the margin is very negative, ~0 when very positive
    expected_g = -y * (np.exp(-np.logaddexp(0.0, m)))
    np.testing.assert_allclose(g, expected_g, rtol=1e-12, atol=0)


def _fd(name, f, y, h=1e-5):
    return (loss_values(name, [f + h], [y])[0] - loss_values(name, [f - h], [y])[0]) / (2 * h)


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(LOSS_NAMES),
       f=st.floats(-30, 30, allow_nan=False),
       y=st.sampled_from([-1.0, 1.0]))
def test_derivative_matches_finite_difference(name, f, y):
    for kink in KINKS[name]:
        assume(abs(y * f - kink) > 1e-3)
    g = loss_derivatives(name, [f], [y])[0]
    np.testing.assert_allclose(g, _fd(name, f, y), rtol=1e-6, atol=1e-7)


@settings(max_examples=200, deadline=None)
@given(f=st.floats(-1e3, 1e3, allow_nan=False), y=st.floats(-1e3, 1e3, allow_nan=False))
def test_squared_loss_with_real_targets(f, y):
    np.testing.assert_allclose(loss_values("squared", [f], [y])[0], 0.5 * (f - y) ** 2, rtol=1e-14, atol=1e-300)  # subnormals round differently
    g = loss_derivatives("squared", [f], [y])[0]
    assert g == f - y
    h = 1e-3 * max(1.0, abs(f))
    np.testing.assert_allclose(g, _fd("squared", f, y, h), rtol=1e-6, atol=1e-6 * max(1.0, abs(f), abs(y)))


@pytest.mark.parametrize("name", LOSS_NAMES)
@pytest.mark.parametrize("y", [-1.0, 1.0])
def test_derivative_is_a_subgradient_at_kinks(name, y):
    """Convexity: ℓ(f') >= ℓ(f) + g (f' − f) for all f' (a valid subgradient), at each kink."""
    f_probe = np.linspace(-5, 5, 1001)
    for kink in KINKS[name] or (0.0,):
        f = kink * y                      # y f = kink
        g = loss_derivatives(name, [f], [y])[0]
        lhs = loss_values(name, f_probe, np.full_like(f_probe, y))
        rhs = loss_values(name, [f], [y])[0] + g * (f_probe - f)
        assert np.all(lhs >= rhs - 1e-12), (name, y, kink, g)
    if name == "hinge":
        g = loss_derivatives("hinge", [y], [y])[0]
        assert -1.0 <= y * g <= 0.0       # in the subdifferential [−y, 0] · (sign)


def test_vectorised_matches_elementwise():
    rng = np.random.default_rng(1)
    f = rng.normal(scale=3, size=50)
    y = rng.choice([-1.0, 1.0], size=50)
    for name in LOSS_NAMES:
        v = loss_values(name, f, y)
        g = loss_derivatives(name, f, y)
        assert v.shape == (50,) and g.shape == (50,)
        for i in range(0, 50, 7):
            assert v[i] == loss_values(name, [f[i]], [y[i]])[0]
            assert g[i] == loss_derivatives(name, [f[i]], [y[i]])[0]


@pytest.mark.parametrize("func", [loss_values, loss_derivatives])
def test_unknown_loss_name(func):
    with pytest.raises(ValueError, match="loss must be one of"):
        func("huber", [0.0], [1.0])


@pytest.mark.parametrize("func", [loss_values, loss_derivatives])
@pytest.mark.parametrize("n_f, n_y", [(5, 2), (2, 5)])
def test_mismatched_lengths_raise(func, n_f, n_y):
    with pytest.raises(ValueError):
        func("hinge", np.zeros(n_f), np.ones(n_y))


# ---- Gu et al. 2018 Table 1 (σ-aware), against tests/reference_asydsskl.py -----------------------
TABLE1 = ("squared", "logistic", "smooth_hinge", "correntropy", "sigmoid")


@pytest.mark.parametrize("name", TABLE1)
def test_table1_closed_form_and_finite_differences(name):
    rng = np.random.default_rng(1)
    f = rng.uniform(-3, 3, 400)
    y = rng.choice([-1.0, 1.0], 400) if name != "correntropy" else rng.normal(size=400)
    sigma = 0.7
    np.testing.assert_allclose(loss_values(name, f, y, sigma), ref.loss_value(name, f, y, sigma),
                               rtol=1e-12, atol=1e-14)
    if name == "smooth_hinge":                    # kinks at m = 0, 1
        m = y * f
        keep = (np.abs(m) > 1e-3) & (np.abs(m - 1) > 1e-3)
        f, y = f[keep], y[keep]
    h = 1e-6
    fd = (loss_values(name, f + h, y, sigma) - loss_values(name, f - h, y, sigma)) / (2 * h)
    np.testing.assert_allclose(loss_derivatives(name, f, y, sigma), fd, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", [n for n, e in LOSSES.items() if np.isfinite(e.curvature) and n != "softmax"])
def test_curvature_bounds_second_derivative(name):
    """`curvature` (AsyDSSKL's L_max, SVRG-RF's L) bounds |ℓ''| (second differences, σ = 1)."""
    f = np.linspace(-6, 6, 20001)
    for yv in (-1.0, 1.0, 0.3):
        y = np.full_like(f, yv)
        d = loss_derivatives(name, f, y, 1.0)
        second = np.diff(d) / np.diff(f)
        assert np.max(np.abs(second)) <= LOSSES[name].curvature * (1 + 1e-3)


def test_hinge_has_no_curvature():
    assert LOSSES["hinge"].curvature == np.inf


# ---- softmax (K scores, one-hot rows) -------------------------------------------------------------
def test_softmax_values_and_gradient():
    rng = np.random.default_rng(3)
    F = rng.normal(scale=4, size=(30, 4))
    Y = np.eye(4)[rng.integers(4, size=30)]
    np.testing.assert_allclose(loss_values("softmax", F, Y), logsumexp(F, axis=1) - np.sum(Y * F, axis=1),
                               rtol=1e-12, atol=1e-13)
    h = 1e-6
    for k in range(4):
        E = np.zeros_like(F)
        E[:, k] = h
        fd = (loss_values("softmax", F + E, Y) - loss_values("softmax", F - E, Y)) / (2 * h)
        np.testing.assert_allclose(loss_derivatives("softmax", F, Y)[:, k], fd, rtol=1e-5, atol=1e-8)


def test_softmax_curvature_bounds_hessian():
    """‖∇²ℓ‖ = largest eigenvalue of diag(p) − ppᵀ ≤ curvature, for any scores."""
    rng = np.random.default_rng(4)
    for _ in range(200):
        f = rng.normal(scale=rng.uniform(0.01, 5), size=rng.integers(2, 8))
        p = np.exp(f - logsumexp(f))
        assert np.linalg.eigvalsh(np.diag(p) - np.outer(p, p)).max() <= LOSSES["softmax"].curvature + 1e-12


# ---- unlabeled losses (Geng et al. 2019, Table 2) -------------------------------------------------
# (their values and derivatives against Table 2: tests/solvers/test_tsgs3vm.py)
def test_unknown_unlabeled_loss():
    with pytest.raises(ValueError, match="unlabeled loss must be one of"):
        unlabeled_loss_values("hinge", [0.0])
