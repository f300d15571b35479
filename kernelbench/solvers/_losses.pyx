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
