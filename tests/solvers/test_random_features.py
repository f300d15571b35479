"""The seeded random-feature generator (kernelbench/solvers/_random_features.pxd).

Independent truths: the NumPy re-implementation of the documented hash in tests/reference.py
(bit-for-bit), the exact kernels of scikit-learn (Bochner: E φ(x)φ(x') = k(x, x')), and the
distributions ω must follow (N(0, 2γ I) for rbf, Cauchy(0, γ) per coordinate for laplacian,
b ~ U[0, 2π)).
"""
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from kernelbench.solvers._random_features import feature_block
from kernelbench.solvers.kernels import kernel_matrix

import reference

KERNELS = ("rbf", "laplacian")
CASES = [  # (seed, block, n_features, d, gamma)
    (0, 0, 7, 3, 0.5),
    (1, 1, 64, 2, 1.0),
    (2**64 - 1, 123456789, 50, 17, 3.0),
    (42, 2**40, 1, 1, 1e-3),
    (7, 5, 300, 64, 12.0),
]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("seed, block, n_features, d, gamma", CASES)
def test_feature_block_matches_reference_bit_for_bit(kernel, seed, block, n_features, d, gamma):
    W, b = feature_block(seed, block, n_features, d, kernel, gamma)
    W_ref, b_ref = reference.feature_block(seed, block, n_features, d, kernel, gamma, scalar_libm=True)
    assert W.dtype == np.float64 and b.dtype == np.float64
    assert W.shape == (n_features, d) and b.shape == (n_features,)
    np.testing.assert_array_equal(W, W_ref)
    np.testing.assert_array_equal(b, b_ref)
    # the vectorised NumPy reference (SIMD libm) agrees to an ulp or so
    W_np, b_np = reference.feature_block(seed, block, n_features, d, kernel, gamma)
    np.testing.assert_allclose(W, W_np, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(b, b_np, rtol=1e-14)


@pytest.mark.parametrize("kernel", KERNELS)
def test_regeneration_is_identical_and_blocks_seeds_differ(kernel):
    W1, b1 = feature_block(11, 3, 40, 5, kernel, 0.7)
    W1b, b1b = feature_block(11, 3, 40, 5, kernel, 0.7)
    np.testing.assert_array_equal(W1, W1b)
    np.testing.assert_array_equal(b1, b1b)
    others = [feature_block(11, 4, 40, 5, kernel, 0.7),   # next block
              feature_block(12, 3, 40, 5, kernel, 0.7),   # next seed
              feature_block(11, 2, 40, 5, kernel, 0.7)]   # previous block
    for W2, b2 in others:
        # not a shifted/equal copy: no coordinate agrees
        assert not np.any(W1 == W2)
        assert not np.any(b1 == b2)
    # features within a block differ from each other too
    assert len(np.unique(b1)) == len(b1)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("d", [1, 4])
def test_prefix_stability(kernel, d):
    """Feature j of a block depends only on (seed, block, j): generating fewer or more features
    gives the same first ones."""
    W_big, b_big = feature_block(5, 9, 257, d, kernel, 2.0)
    for n in (1, 2, 31, 256):
        W, b = feature_block(5, 9, n, d, kernel, 2.0)
        np.testing.assert_array_equal(W, W_big[:n])
        np.testing.assert_array_equal(b, b_big[:n])


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("seed, block, n_features, d, gamma", CASES)
def test_float32_is_float64_rounded(kernel, seed, block, n_features, d, gamma):
    W64, b64 = feature_block(seed, block, n_features, d, kernel, gamma, dtype=np.float64)
    W32, b32 = feature_block(seed, block, n_features, d, kernel, gamma, dtype=np.float32)
    assert W32.dtype == np.float32 and b32.dtype == np.float32
    np.testing.assert_array_equal(W32, W64.astype(np.float32))
    np.testing.assert_array_equal(b32, b64.astype(np.float32))


def _kernel_estimate(X, kernel, gamma, m, seed):
    W, b = feature_block(seed, 0, m, X.shape[1], kernel, gamma)
    phi = np.sqrt(2.0) * np.cos(X @ W.T + b)
    return phi @ phi.T / m


@pytest.mark.parametrize("kernel", KERNELS)
def test_random_features_converge_to_exact_kernel(kernel):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    gamma = 0.3
    K = kernel_matrix(X, kernel=kernel, gamma=gamma)
    # kernel_matrix is scikit-learn's kernel (the independent truth), as its docstring says
    exact = rbf_kernel(X, gamma=gamma) if kernel == "rbf" else laplacian_kernel(X, gamma=gamma)
    np.testing.assert_allclose(K, exact, rtol=1e-12)
    errors = {}
    for m in (100, 1000, 10000):
        errors[m] = np.mean(np.abs(_kernel_estimate(X, kernel, gamma, m, seed=3) - K))
    assert errors[100] > errors[1000] > errors[10000]
    # the entries have variance <= 2 (|φφ'| <= 2), so mean |error| ~ 1/√m; ×3 is a generous margin
    for m, e in errors.items():
        assert e < 3.0 / np.sqrt(m), (m, e)
    # and it is not trivially zero: Monte-Carlo error is present at the smallest m
    assert errors[100] > 0.1 / np.sqrt(100)


def test_rbf_omega_is_gaussian_with_variance_2gamma():
    gamma, m, d = 0.8, 20000, 3
    W, b = feature_block(2024, 0, m, d, "rbf", gamma)
    w = W.ravel()
    N = w.size
    assert abs(w.mean()) < 5 * np.sqrt(2 * gamma / N)
    # relative sd of a normal sample variance is √(2/N)
    assert abs(w.var() / (2 * gamma) - 1) < 5 * np.sqrt(2 / N)
    assert stats.kstest(w / np.sqrt(2 * gamma), "norm").pvalue > 1e-3
    # coordinates and features are uncorrelated
    C = np.corrcoef(W.T)
    assert np.max(np.abs(C - np.eye(d))) < 5 / np.sqrt(m)


def test_laplacian_omega_is_cauchy_with_scale_gamma():
    gamma, m, d = 2.5, 20000, 2
    W, _ = feature_block(99, 1, m, d, "laplacian", gamma)
    w = W.ravel()
    q25, q50, q75 = np.quantile(w, [0.25, 0.5, 0.75])
    # Cauchy(0, γ): median 0, quartiles ±γ; sd of a sample quantile here is < 0.02 γ
    assert abs(q50) < 0.05 * gamma
    assert abs(q25 + gamma) < 0.05 * gamma and abs(q75 - gamma) < 0.05 * gamma
    assert stats.kstest(w, stats.cauchy(scale=gamma).cdf).pvalue > 1e-3


@pytest.mark.parametrize("kernel", KERNELS)
def test_phases_are_uniform_on_0_2pi(kernel):
    _, b = feature_block(31337, 7, 20000, 2, kernel, 1.0)
    assert b.min() >= 0.0 and b.max() < 2 * np.pi
    assert stats.kstest(b, stats.uniform(loc=0, scale=2 * np.pi).cdf).pvalue > 1e-3


def test_invalid_arguments():
    with pytest.raises(ValueError, match="kernel"):
        feature_block(0, 0, 3, 2, "polynomial")
    with pytest.raises(ValueError, match="n_dims"):
        feature_block(0, 0, 3, 0, "rbf")
    W, b = feature_block(0, 0, 0, 2, "rbf")
    assert W.shape == (0, 2) and b.shape == (0,)
