# Losses ℓ(f, y) and their derivatives ∂ℓ/∂f: one place for every compiled solver.
# Classification labels are y ∈ {-1, +1}; regression targets are real.
from libc.math cimport exp, log1p, fabs

cdef enum:
    LOSS_HINGE = 0          # max(0, 1 - y f)                                   (SVM)
    LOSS_LOGISTIC = 1       # log(1 + exp(-y f))                                (logistic regression)
    LOSS_SQUARED = 2        # (f - y)² / 2                                      (ridge regression)
    LOSS_SMOOTH_HINGE = 3   # 0 if yf ≥ 1; 1/2 - yf if yf ≤ 0; (1 - yf)²/2 else (Shalev-Shwartz & Zhang 2013)
    LOSS_SOFTMAX = 4        # log Σ_k e^{f_k} − y·f over K scores, y one-hot (multi-class logistic; Li & Póczos §5).
                            # Its derivative is a vector: the solvers that offer it (_dsg, _svrg_rf) compute it
                            # themselves; loss_value/loss_derivative below never see this code.

cdef inline double loss_value(int loss, double f, double y) noexcept nogil:
    cdef double m = y * f
    if loss == LOSS_HINGE:
        return 1.0 - m if m < 1.0 else 0.0
    if loss == LOSS_LOGISTIC:
        # log(1 + e^{-m}) without overflow for large |m|
        return log1p(exp(-m)) if m > 0 else -m + log1p(exp(m))
    if loss == LOSS_SQUARED:
        return 0.5 * (f - y) * (f - y)
    # smooth hinge
    if m >= 1.0:
        return 0.0
    if m <= 0.0:
        return 0.5 - m
    return 0.5 * (1.0 - m) * (1.0 - m)

cdef inline double loss_derivative(int loss, double f, double y) noexcept nogil:
    cdef double m = y * f
    cdef double e
    if loss == LOSS_HINGE:
        return -y if m < 1.0 else 0.0            # a subgradient (0 at the kink)
    if loss == LOSS_LOGISTIC:
        if m > 0:
            e = exp(-m)
            return -y * e / (1.0 + e)
        return -y / (1.0 + exp(m))
    if loss == LOSS_SQUARED:
        return f - y
    if m >= 1.0:
        return 0.0
    if m <= 0.0:
        return -y
    return -y * (1.0 - m)


# ---- unlabeled losses (Geng et al. 2019, Table 2) ---------------------------------------------
# u(r) of the S3VM term C* Σ_U u(f(x)): it is small when |f(x)| is large, so the decision boundary
# is pushed away from dense unlabeled regions. Subgradients: 0 at r = 0 for the kinked ones.
cdef enum:
    UNLABELED_SHG = 0       # max(0, 1 - |r|)                    symmetric hinge (the paper's default)
    UNLABELED_SSHG = 1      # max(0, 1 - |r|)² / 2               square of SHG
    UNLABELED_RAMP = 2      # R_s(r) + R_s(-r), R_s(z) = H_1(z) - H_s(z), H_s(z) = max(0, s - z), s = -0.3
                            # (Collobert et al. 2006: each unlabeled point counted with both labels)
    UNLABELED_DA = 3        # exp(-5 r²)                         differentiable approximation of SSHG

cdef inline double ramp_s() noexcept nogil:
    return -0.3             # Collobert et al. 2006's s for the symmetric ramp

cdef inline double _sign(double r) noexcept nogil:
    return 1.0 if r > 0.0 else (-1.0 if r < 0.0 else 0.0)

cdef inline double _ramp(double z) noexcept nogil:
    # R_s(z) = max(0, 1 - z) - max(0, s - z): 0 for z >= 1, 1 - z on [s, 1), 1 - s below s
    if z >= 1.0:
        return 0.0
    if z >= ramp_s():
        return 1.0 - z
    return 1.0 - ramp_s()

cdef inline double _ramp_derivative(double z) noexcept nogil:
    return -1.0 if ramp_s() < z < 1.0 else 0.0

cdef inline double unlabeled_loss_value(int loss, double r) noexcept nogil:
    cdef double a = fabs(r)
    if loss == UNLABELED_SHG:
        return 1.0 - a if a < 1.0 else 0.0
    if loss == UNLABELED_SSHG:
        return 0.5 * (1.0 - a) * (1.0 - a) if a < 1.0 else 0.0
    if loss == UNLABELED_RAMP:
        return _ramp(r) + _ramp(-r)
    return exp(-5.0 * r * r)

cdef inline double unlabeled_loss_derivative(int loss, double r) noexcept nogil:
    cdef double a = fabs(r)
    if loss == UNLABELED_SHG:
        return -_sign(r) if a < 1.0 else 0.0
    if loss == UNLABELED_SSHG:
        return -_sign(r) * (1.0 - a) if a < 1.0 else 0.0
    if loss == UNLABELED_RAMP:
        return _ramp_derivative(r) - _ramp_derivative(-r)
    return -10.0 * r * exp(-5.0 * r * r)


# ---- Gu et al. 2018 (AsyDSSKL), Table 1: the non-convex losses, and σ-aware dispatch ------------
# The convex losses of Table 1 are the ones above (square is (f − y)²/2 here, the paper's without ½).
# Codes start at 20 so they never collide with the codes of the sections above.
cdef enum:
    LOSS_CORRENTROPY = 20   # σ² (1 − exp(−(f − y)²/σ²))    regression (Feng et al. 2015), non-convex
    LOSS_SIGMOID = 21       # 1 / (1 + exp(y f))             classification (Lin 2004), non-convex

cdef inline double _sigmoid_neg(double m) noexcept nogil:
    # 1/(1 + e^{m}) without overflow
    cdef double e
    if m > 0:
        e = exp(-m)
        return e / (1.0 + e)
    return 1.0 / (1.0 + exp(m))

cdef inline double gu_loss_value(int loss, double f, double y, double sigma) noexcept nogil:
    """ℓ(f, y) of Table 1; σ is the correntropy width (ignored by the other losses)."""
    cdef double r
    if loss == LOSS_CORRENTROPY:
        r = f - y
        return sigma * sigma * (1.0 - exp(-r * r / (sigma * sigma)))
    if loss == LOSS_SIGMOID:
        return _sigmoid_neg(y * f)
    return loss_value(loss, f, y)

cdef inline double gu_loss_derivative(int loss, double f, double y, double sigma) noexcept nogil:
    """∂ℓ/∂f of Table 1's losses."""
    cdef double r, s
    if loss == LOSS_CORRENTROPY:
        r = f - y
        return 2.0 * r * exp(-r * r / (sigma * sigma))
    if loss == LOSS_SIGMOID:
        s = _sigmoid_neg(y * f)            # ℓ = s(−m), ℓ' = −y s(−m) (1 − s(−m))
        return -y * s * (1.0 - s)
    return loss_derivative(loss, f, y)
