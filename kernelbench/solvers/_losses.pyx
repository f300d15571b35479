# cython: language_level=3, boundscheck=False, wraparound=False
"""Vectorised access to the compiled losses (objective evaluation, tests)."""
import numpy as np

LOSSES = {"hinge": LOSS_HINGE, "logistic": LOSS_LOGISTIC, "squared": LOSS_SQUARED,
          "smooth_hinge": LOSS_SMOOTH_HINGE}


def _check_lengths(f, y):
    if f.shape[0] != y.shape[0]:
        raise ValueError(f"f and y must have the same length, got {f.shape[0]} and {y.shape[0]}")


def _code(name):
    if name not in LOSSES:
        raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {name!r}")
    return LOSSES[name]


cdef _elementwise(name, f, y, bint derivative):
    cdef int code = _code(name)
    cdef double[::1] fv = np.ascontiguousarray(f, dtype=np.float64).ravel()
    cdef double[::1] yv = np.ascontiguousarray(y, dtype=np.float64).ravel()
    _check_lengths(fv, yv)
    out = np.empty(fv.shape[0])
    cdef double[::1] ov = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(fv.shape[0]):
            ov[i] = loss_derivative(code, fv[i], yv[i]) if derivative else loss_value(code, fv[i], yv[i])
    return out


def loss_values(name, f, y):
    """ℓ(f_i, y_i) for arrays f, y (float64)."""
    return _elementwise(name, f, y, False)


def loss_derivatives(name, f, y):
    """∂ℓ/∂f at (f_i, y_i)."""
    return _elementwise(name, f, y, True)


# ---- unlabeled losses (Geng et al. 2019, Table 2) ---------------------------------------------
UNLABELED_LOSSES = {"shg": UNLABELED_SHG, "sshg": UNLABELED_SSHG, "ramp": UNLABELED_RAMP,
                    "da": UNLABELED_DA}


cdef _unlabeled_elementwise(name, r, bint derivative):
    if name not in UNLABELED_LOSSES:
        raise ValueError(f"unlabeled loss must be one of {sorted(UNLABELED_LOSSES)}, got {name!r}")
    cdef int code = UNLABELED_LOSSES[name]
    cdef double[::1] rv = np.ascontiguousarray(r, dtype=np.float64).ravel()
    out = np.empty(rv.shape[0])
    cdef double[::1] ov = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(rv.shape[0]):
            ov[i] = unlabeled_loss_derivative(code, rv[i]) if derivative else unlabeled_loss_value(code, rv[i])
    return out


def unlabeled_loss_values(name, r):
    """u(r_i) for an array r (float64)."""
    return _unlabeled_elementwise(name, r, False)


def unlabeled_loss_derivatives(name, r):
    """A subgradient u'(r_i) (0 at the kinks' r = 0)."""
    return _unlabeled_elementwise(name, r, True)


# ---- Gu et al. 2018 (AsyDSSKL), Table 1 losses (σ-aware) ----------------------------------------
GU_LOSSES = {"squared": LOSS_SQUARED, "logistic": LOSS_LOGISTIC, "smooth_hinge": LOSS_SMOOTH_HINGE,
             "correntropy": LOSS_CORRENTROPY, "sigmoid": LOSS_SIGMOID}
# sup |ℓ''(f)| of each loss (σ-free): the coordinate Lipschitz constant L_max of Gu et al. (8) is
# this times max φ² of the features.
GU_LOSS_CURVATURE = {"squared": 1.0, "logistic": 0.25, "smooth_hinge": 1.0, "correntropy": 2.0,
                     "sigmoid": 0.1}


cdef _gu_elementwise(name, f, y, double sigma, bint derivative):
    if name not in GU_LOSSES:
        raise ValueError(f"loss must be one of {sorted(GU_LOSSES)}, got {name!r}")
    if not sigma > 0:
        raise ValueError(f"sigma must be > 0, got {sigma!r}")
    cdef int code = GU_LOSSES[name]
    cdef double[::1] fv = np.ascontiguousarray(f, dtype=np.float64).ravel()
    cdef double[::1] yv = np.ascontiguousarray(y, dtype=np.float64).ravel()
    _check_lengths(fv, yv)
    out = np.empty(fv.shape[0])
    cdef double[::1] ov = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(fv.shape[0]):
            ov[i] = (gu_loss_derivative(code, fv[i], yv[i], sigma) if derivative
                     else gu_loss_value(code, fv[i], yv[i], sigma))
    return out


def gu_loss_values(name, f, y, sigma=1.0):
    """ℓ(f_i, y_i) for the losses of Gu et al. Table 1 (σ: correntropy width)."""
    return _gu_elementwise(name, f, y, sigma, False)


def gu_loss_derivatives(name, f, y, sigma=1.0):
    """∂ℓ/∂f at (f_i, y_i) for the losses of Gu et al. Table 1."""
    return _gu_elementwise(name, f, y, sigma, True)
