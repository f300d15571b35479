"""Lookup tables of the merging problem (Glasmachers & Qaadan §3), computed by our own golden
section search (ε = 1e-10, kernelbench.solvers._bsgd.build_tables) once per grid size.

H[i, j] ≈ h(m_i, κ_j) (lower branch, see _bsgd.pyx) and W[i, j] ≈ WD(m_i, κ_j)/(α_i + α_j)² on the
grid m_i = i/(G−1), κ_j = j/(G−1). Building the 400 × 400 pair takes a golden section search per cell,
so the tables are kept in memory per process and also cached on disk (an .npz under
`bsgd_tables` of the cache root, $KERNELBENCH_DATA or the user cache folder, written to a temporary name and renamed),
tagged with a version that changes whenever the search or the table layout does. A cache that
cannot be read or written is simply recomputed.
"""
from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path

import numpy as np

from kernelbench._io import atomic_write_bytes, cache_root
from kernelbench.errors import KernelbenchError
from kernelbench.solvers._bsgd import EPS_PRECISE, build_tables, lookup

TABLE_VERSION = 2     # bump when build_tables changes what it computes


def cache_dir() -> Path:
    return cache_root() / "bsgd_tables"


def _cache_path(grid_size: int) -> Path:
    return cache_dir() / f"merge_tables_v{TABLE_VERSION}_g{grid_size}_eps{EPS_PRECISE:g}.npz"


@lru_cache(maxsize=4)
def lookup_tables(grid_size: int = 400, use_disk: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(H, W), each grid_size × grid_size float64, read-only."""
    grid_size = int(grid_size)
    if grid_size < 2:
        raise ValueError(f"grid_size must be >= 2, got {grid_size}")
    path = _cache_path(grid_size)
    if use_disk:
        try:
            with np.load(path) as z:
                H, W = z["H"], z["W"]
            if H.shape == W.shape == (grid_size, grid_size) and np.all(np.isfinite(H)) and np.all(np.isfinite(W)):
                return _frozen(H), _frozen(W)
        except (OSError, KeyError, ValueError):
            pass
    H, W = build_tables(grid_size, EPS_PRECISE)
    if use_disk:
        _write_atomic(path, H, W)
    return _frozen(H), _frozen(W)


def merge_lookup(H: np.ndarray, W: np.ndarray, m: float, kappa: float) -> tuple[float, float]:
    """(h, WD / (α_i + α_j)²) at (m, κ), interpolated bilinearly in the tables (H, W) of
    `lookup_tables` exactly as BSGD's Lookup-h / Lookup-WD merges read them (m > 1/2 through the
    symmetries h(m) = 1 − h(1 − m), WD(m) = WD(1 − m))."""
    return lookup(H, W, m, kappa)


def _frozen(a):
    a = np.ascontiguousarray(a, dtype=np.float64)
    a.flags.writeable = False
    return a


def _write_atomic(path: Path, H, W):
    buffer = io.BytesIO()
    np.savez(buffer, H=H, W=W)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, buffer.getvalue())
    except (OSError, KernelbenchError):
        pass        # read-only home, full disk: the tables are still in memory
