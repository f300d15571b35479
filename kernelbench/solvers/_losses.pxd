# Losses ℓ(f, y) and their derivatives ∂ℓ/∂f: one place for every compiled solver.
# Classification labels are y ∈ {-1, +1}; regression targets are real.
from libc.math cimport exp, log1p, fabs

cdef enum:
    LOSS_HINGE = 0          # max(0, 1 - y f)                                   (SVM)
    LOSS_LOGISTIC = 1       # log(1 + exp(-y f))                                (logistic regression)
    LOSS_SQUARED = 2        # (f - y)² / 2                                      (ridge regression)
    LOSS_SMOOTH_HINGE = 3   # 0 if yf ≥ 1; 1/2 - yf if yf ≤ 0; (1 - yf)²/2 else (Shalev-Shwartz & Zhang 2013)

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
