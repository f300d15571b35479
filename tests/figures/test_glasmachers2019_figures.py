"""Glasmachers & Qaadan Fig. 2 (kernelbench/figures/glasmachers2019.py): the drawn h(m, κ) and
WD(m, κ) against a brute-force maximisation of the paper's merge objective (§3), written here from
the formula, and render_all drawing this data-free figure only when its prefix is selected."""
from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
from scipy.optimize import minimize_scalar

matplotlib.use("Agg")

from kernelbench.figures import DATA_FREE, FIGURES, render_all
from kernelbench.figures.glasmachers2019 import merge_surfaces

NAME = "glasmachers2019_fig2_merge_surfaces"
KAPPA_TWO_MODES = math.exp(-2)       # Lemma 1: s_{1/2, κ} has two modes iff κ < e^{-2}


def s(h, m, kappa):
    """The merge objective of §3 / Alg. 1 line 8: s_{m,κ}(h) = m κ^{(1−h)²} + (1 − m) κ^{h²}."""
    return m * kappa ** ((1 - h) ** 2) + (1 - m) * kappa ** (h ** 2)


def wd_unit_weight(m, kappa, h):
    """WD at α_i + α_j = 1 (§3, proof of Lemma 1): m² + (1 − m)² + 2m(1 − m)κ − s(h)²."""
    return m ** 2 + (1 - m) ** 2 + 2 * m * (1 - m) * kappa - s(h, m, kappa) ** 2


def brute_force_argmax(m, kappa, lo=0.0, hi=1.0):
    """Global maximiser of s over [lo, hi]: a dense grid finds the mode, a bounded scalar search
    refines it."""
    grid = np.linspace(lo, hi, 20001)
    best = grid[np.argmax(s(grid, m, kappa))]
    step = (hi - lo) / 20000
    found = minimize_scalar(lambda h: -s(h, m, kappa), method="bounded",
                            bounds=(max(lo, best - step), min(hi, best + step)), options={"xatol": 1e-12})
    return found.x if s(found.x, m, kappa) >= s(best, m, kappa) else best


@pytest.fixture(scope="module")
def surfaces():
    return merge_surfaces()            # what the figure draws: the 400-grid, every 8th node


@pytest.fixture(scope="module")
def odd_surfaces():
    return merge_surfaces(grid_size=401, step=8)      # a grid with m = 1/2 among its nodes


def test_drawn_h_is_the_maximiser_of_the_merge_objective_and_wd_its_degradation(surfaces):
    m, kappa, h, wd = surfaces
    assert m.size == kappa.size == 50 and m[0] == 0.0 and m[-1] == 1.0
    # both halves in m, κ from the two-mode regime (κ < e^{-2}) to near 1, m next to 1/2 and on the edges
    for a in (0, 3, 12, 23, 24, 26, 37, 49):
        for b in (1, 3, 6, 10, 20, 35, 48):
            truth = brute_force_argmax(m[a], kappa[b])
            assert h[a, b] == pytest.approx(truth, abs=1e-6), (m[a], kappa[b])
            assert wd[a, b] == pytest.approx(wd_unit_weight(m[a], kappa[b], truth), rel=1e-8, abs=1e-12)
    assert kappa[3] < KAPPA_TWO_MODES < kappa[10]     # the points above include both regimes


def test_kappa_one_edge_is_the_limit_of_the_maximiser(surfaces):
    # at κ = 1 every h maximises s ≡ 1; the drawn edge is lim_{κ→1} h(m, κ)
    m, _, h, wd = surfaces
    for a in (0, 5, 20, 30, 49):
        assert h[a, -1] == pytest.approx(brute_force_argmax(m[a], 1 - 1e-6), abs=1e-4)
    assert np.allclose(wd[:, -1], 0.0, atol=1e-12)


def test_known_values_and_symmetries(odd_surfaces):
    m, kappa, h, wd = odd_surfaces
    half = np.flatnonzero(m == 0.5)
    assert half.size == 1
    half = half[0]
    # m = 1/2, κ > e^{-2}: one mode, at 1/2 by the symmetry s_{1/2}(h) = s_{1/2}(1 − h)
    # (flat near κ = e^{-2}, where s''(1/2) = 0: compare well above it)
    unique = kappa >= 0.2
    assert np.allclose(h[half, unique], 0.5, atol=1e-6)
    # m = 1/2, 0 < κ < e^{-2}: two maximisers h* < 1/2 < 1 − h*; the tables keep the lower one
    for b in np.flatnonzero((kappa > 0) & (kappa < KAPPA_TWO_MODES)):
        lower = brute_force_argmax(0.5, kappa[b], 0.0, 0.5)
        assert lower < 0.5 - 1e-3
        assert s(1 - lower, 0.5, kappa[b]) == pytest.approx(s(lower, 0.5, kappa[b]), rel=1e-12)
        assert h[half, b] == pytest.approx(lower, abs=1e-6)
    # s_{1−m}(1 − h) = s_m(h): h(1 − m, κ) = 1 − h(m, κ) and WD(1 − m, κ) = WD(m, κ) off m = 1/2
    assert np.allclose(m[::-1], 1 - m)
    off = m != 0.5
    assert np.allclose(h[::-1][off], 1 - h[off], atol=1e-9)
    assert np.allclose(wd[::-1], wd, atol=1e-12)
    # no loss when one coefficient is zero (m ∈ {0, 1}) or the points coincide (κ = 1)
    assert np.allclose(wd[0, :], 0.0, atol=1e-12) and np.allclose(wd[-1, :], 0.0, atol=1e-12)
    assert np.allclose(wd[:, -1], 0.0, atol=1e-12)
    assert np.all(wd[1:-1, :-1] > 0)
    # κ = 0 (limit): removal of the smaller coefficient, WD = min(m, 1 − m)²
    assert np.allclose(wd[:, 0], np.minimum(m, 1 - m) ** 2, atol=1e-12)


def test_data_free_figure_is_drawn_on_empty_results_only_when_selected(tmp_path):
    (tmp_path / "empty").mkdir()
    written = render_all(tmp_path / "empty", tmp_path / "figs", prefix="glasmachers2019_fig2")
    assert sorted(p.name for p in written) == [f"{NAME}.pdf", f"{NAME}.png"]
    assert (tmp_path / "figs" / f"{NAME}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "figs" / f"{NAME}.pdf").read_bytes()[:5] == b"%PDF-"
    # Fig. 3 shares the paper prefix but needs results: only Fig. 2 is drawn
    written = render_all(tmp_path / "empty", tmp_path / "figs_paper", prefix="glasmachers2019_")
    assert sorted(p.name for p in written) == [f"{NAME}.pdf", f"{NAME}.png"]
    assert render_all(tmp_path / "empty", tmp_path / "figs_other", prefix="geng2019_") == []
    assert not (tmp_path / "figs_other").exists()
    assert DATA_FREE == {NAME} and NAME in FIGURES


def test_figure_has_two_3d_panels_with_a_power_of_ten_value_axis():
    import matplotlib.pyplot as plt

    fig = FIGURES[NAME](None)
    try:
        assert [ax.name for ax in fig.axes] == ["3d", "3d"]
        wd_axis = fig.axes[1].zaxis
        labels = [wd_axis.get_major_formatter()(z, 0) for z in (-6, -2)]
        assert labels == ["$10^{-6}$", "$10^{-2}$"]
    finally:
        plt.close(fig)
