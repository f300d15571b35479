# cython: language_level=3, boundscheck=False, wraparound=False
"""Python access to the seeded random-feature generator (see _random_features.pxd)."""
import numpy as np

KERNELS = {"rbf": KERNEL_RBF, "laplacian": KERNEL_LAPLACIAN}


def feature_block(unsigned long long seed, unsigned long long block, Py_ssize_t n_features,
                  Py_ssize_t n_dims, kernel="rbf", double gamma=1.0, dtype=np.float64):
    """(W, b) of one block: W[j] and b[j] are ω and the phase of feature j, regenerated from (seed, block)."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")
    dtype = np.dtype(dtype)
    W = np.empty((n_features, n_dims), dtype=dtype)
    b = np.empty(n_features, dtype=dtype)
    cdef float[:, ::1] W32
    cdef float[::1] b32
    cdef double[:, ::1] W64
    cdef double[::1] b64
    if n_dims < 1:
        raise ValueError(f"n_dims must be >= 1, got {n_dims}")
    if n_features == 0:
        return W, b
    cdef int code = KERNELS[kernel]
    if dtype == np.float32:
        W32, b32 = W, b
        generate_features(<uint64_t>seed, <uint64_t>block, 0, n_features, n_dims, code, gamma, &W32[0, 0], &b32[0])
    else:
        W64, b64 = W, b
        generate_features(<uint64_t>seed, <uint64_t>block, 0, n_features, n_dims, code, gamma, &W64[0, 0], &b64[0])
    return W, b
