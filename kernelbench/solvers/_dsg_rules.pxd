# The per-iteration rules that tell DSG's variants apart (Li & Póczos 2016) and the multi-class
# gradient, inlined into _dsg.pyx's training loop; _dsg.pyx wraps each for the tests.
from libc.math cimport exp, sqrt
from libc.stdint cimport uint64_t

from kernelbench.solvers._random_features cimport splitmix64

# Multi-class logistic regression (softmax over the n_outputs = K scores): its code LOSS_SOFTMAX is
# _losses.pxd's; its vector gradient is computed here.
cdef inline void softmax_gradient(const double* f, const double* y, double* g,
                                  Py_ssize_t K) noexcept nogil:
    """g = softmax(f) − y: the gradient of ℓ(f, y) = logsumexp(f) − y·f (y one-hot) in f."""
    cdef Py_ssize_t k
    cdef double mx = f[0], total = 0.0
    for k in range(1, K):
        if f[k] > mx:
            mx = f[k]
    for k in range(K):
        g[k] = exp(f[k] - mx)
        total = total + g[k]
    for k in range(K):
        g[k] = g[k] / total - y[k]


cdef inline double cdsg_step(const double* beta, const double* g, Py_ssize_t K, double s2,
                             double gamma_t) noexcept nogil:
    """|η_k| of Li & Póczos rule (9) for one old block, or 0 where no admissible η exists.

    Rule (9) (mini-batch form, vector over the K outputs): find the most negative η < −γ_t with
        2‖β_k + η ḡ‖² + 2η² s² ≤ ‖β_k‖² + γ_t² ‖ḡ‖²,         s² = K · M² σ² / B²,
    β_k the block's Alg. 4 weight, ḡ the batch mean of ℓ' (B = 1 in Alg. 4: ḡ = ℓ'(f(x_t), y_t)),
    M a bound on |ℓ'| and σ² the feature variance of §4.2. (9) as printed divides the variance term
    by B²; §4.2.1's argument (variance of a mean of B terms) would give B: we follow (9). Closed form: with
        A = 2(‖ḡ‖² + s²),  b = 4 β_k·ḡ,  c = ‖β_k‖² − γ_t² ‖ḡ‖²,
    (9) is A η² + b η + c ≤ 0, i.e. η ∈ [η₋, η₊], η± = (−b ± √(b² − 4Ac)) / (2A), empty when
    b² < 4Ac. The largest step is η₋; it is admissible when η₋ < −γ_t, which needs β_k·ḡ > 0
    (at η = −γ_t the slack is ‖β_k‖² − 4γ_t β_k·ḡ + γ_t²‖ḡ‖² + 2γ_t² s², positive otherwise)."""
    cdef Py_ssize_t k
    cdef double gg = 0.0, bg = 0.0, bb = 0.0, A, b, c, disc, eta
    for k in range(K):
        gg = gg + g[k] * g[k]
        bg = bg + beta[k] * g[k]
        bb = bb + beta[k] * beta[k]
    A = 2.0 * (gg + s2)
    if A <= 0.0:
        return 0.0
    b = 4.0 * bg
    c = bb - gamma_t * gamma_t * gg
    disc = b * b - 4.0 * A * c
    if disc < 0.0:
        return 0.0
    eta = (-b - sqrt(disc)) / (2.0 * A)
    if eta < -gamma_t:
        return -eta
    return 0.0


cdef inline Py_ssize_t udsg_block(uint64_t seed, Py_ssize_t it, Py_ssize_t blocks) noexcept nogil:
    """Alg. 3's uniform draw of an old block at iteration `it` (0-based), counter-based; the seed
    is offset by a constant of its own (0x5DEECE66D), so these draws are not the features' stream."""
    return <Py_ssize_t>(splitmix64(splitmix64(seed ^ <uint64_t>0x5DEECE66D) + <uint64_t>it) % <uint64_t>blocks)
