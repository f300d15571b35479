# cython: language_level=3, boundscheck=False, wraparound=False
"""Vectorised access to the compiled losses of _losses.pxd, by code. The Python API — names,
curvatures, tasks, softmax — is kernelbench/solvers/losses.py; this module only exports the codes
and runs the compiled inline functions over arrays."""
import numpy as np

# the codes of _losses.pxd's enums (losses.py builds its tables from these)
CODES = {"hinge": LOSS_HINGE, "logistic": LOSS_LOGISTIC, "squared": LOSS_SQUARED,
         "smooth_hinge": LOSS_SMOOTH_HINGE, "softmax": LOSS_SOFTMAX,
         "correntropy": LOSS_CORRENTROPY, "sigmoid": LOSS_SIGMOID}
UNLABELED_CODES = {"shg": UNLABELED_SHG, "sshg": UNLABELED_SSHG, "ramp": UNLABELED_RAMP,
                   "da": UNLABELED_DA}


def elementwise(int code, f, y, double sigma, bint derivative):
    """ℓ(f_i, y_i) (or ∂ℓ/∂f) for one scalar-score loss code; f, y 1-d of equal length."""
    cdef double[::1] fv = np.ascontiguousarray(f, dtype=np.float64).ravel()
    cdef double[::1] yv = np.ascontiguousarray(y, dtype=np.float64).ravel()
    if fv.shape[0] != yv.shape[0]:
        raise ValueError(f"f and y must have the same length, got {fv.shape[0]} and {yv.shape[0]}")
    out = np.empty(fv.shape[0])
    cdef double[::1] ov = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(fv.shape[0]):
            # gu_loss_* dispatch every scalar code (the convex ones fall through to loss_*)
            ov[i] = (gu_loss_derivative(code, fv[i], yv[i], sigma) if derivative
                     else gu_loss_value(code, fv[i], yv[i], sigma))
    return out


def unlabeled_elementwise(int code, r, bint derivative):
    """u(r_i) (or a subgradient u'(r_i)) for one unlabeled-loss code."""
    cdef double[::1] rv = np.ascontiguousarray(r, dtype=np.float64).ravel()
    out = np.empty(rv.shape[0])
    cdef double[::1] ov = out
    cdef Py_ssize_t i
    with nogil:
        for i in range(rv.shape[0]):
            ov[i] = unlabeled_loss_derivative(code, rv[i]) if derivative else unlabeled_loss_value(code, rv[i])
    return out
