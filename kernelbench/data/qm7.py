"""The QM7 file (registry format qm7) -> dense upper triangles of its Coulomb matrices."""
from __future__ import annotations

import hashlib
import io
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelbench.errors import DataError

from .blocks import ParseReport, row_count_error
from .local import DECOMPRESSION_ERRORS, compression_of, corrupt_error, open_decompressed


@dataclass
class Qm7Options:
    dtype: str = "float64"
    expected_rows: int | None = None


def parse_qm7(path: Path, folder: Path, options: Qm7Options, *, member=None,
              progress: bool = False) -> ParseReport:
    """The QM7 file (qm7.mat, MATLAB v5: X n×23×23 Coulomb matrices, T 1×n atomization energies in
    kcal/mol; Montavon et al. NIPS 2012, Dai et al.'s QuantumMachine) into X.npy / y.npy under
    `folder`: a row is the upper triangle of one Coulomb matrix, diagonal included, in the order of
    numpy.triu_indices (276 columns for 23 atoms); y = T. The fold indices P are not used."""
    from scipy.io import loadmat     # only QM7's .mat file needs it
    from scipy.io.matlab import MatReadError

    path = Path(path)
    started = time.perf_counter()
    try:
        with open_decompressed(path, None, member) as fh:
            raw = fh.read()
    except DECOMPRESSION_ERRORS as exc:
        raise corrupt_error(path, exc, compression_of(path)) from None
    try:
        mat = loadmat(io.BytesIO(raw))
    except (MatReadError, ValueError, TypeError, IndexError, NotImplementedError, OSError) as exc:
        raise DataError(f"{path}: not a readable MATLAB v5 .mat file ({type(exc).__name__}: {exc}). The QM7 "
                        "file is qm7.mat from quantum-machine.org: replace the file with it.") from None
    keys = sorted(k for k in mat if not k.startswith("__"))
    missing = [k for k in ("X", "T") if k not in mat]
    if missing:
        raise DataError(f"{path}: the .mat file has no variable {' or '.join(missing)} (it holds "
                        f"{', '.join(keys) or 'none'}); QM7 needs X (Coulomb matrices) and T (energies). "
                        "Replace the file with qm7.mat from quantum-machine.org.")
    coulomb, energy = np.asarray(mat["X"]), np.asarray(mat["T"], dtype=np.float64).ravel()
    if coulomb.ndim != 3 or coulomb.shape[1] != coulomb.shape[2]:
        raise DataError(f"{path}: X has shape {coulomb.shape}; QM7 needs n square Coulomb matrices "
                        "(n × 23 × 23). Replace the file with qm7.mat from quantum-machine.org.")
    if energy.shape[0] != coulomb.shape[0]:
        raise DataError(f"{path}: X holds {coulomb.shape[0]} molecules but T holds {energy.shape[0]} energies; "
                        "the file is damaged or not QM7: replace it.")
    if not (np.all(np.isfinite(coulomb)) and np.all(np.isfinite(energy))):
        raise DataError(f"{path}: X or T holds NaN or infinite values; the file is damaged: replace it.")
    if not np.allclose(coulomb, coulomb.transpose(0, 2, 1)):
        raise DataError(f"{path}: the matrices in X are not symmetric, so they are not Coulomb matrices and "
                        "their upper triangle would lose entries. Replace the file with qm7.mat.")
    rows, cols = np.triu_indices(coulomb.shape[1])
    X = np.ascontiguousarray(coulomb[:, rows, cols], dtype=options.dtype)
    report = ParseReport(source=str(path), sha256=hashlib.sha256(raw).hexdigest(), rows=int(X.shape[0]),
                         text_bytes=len(raw))
    if options.expected_rows is not None and report.rows != options.expected_rows:
        raise row_count_error(path, f"{report.rows:,}", options)
    np.save(folder / "X.npy", X)
    np.save(folder / "y.npy", np.ascontiguousarray(energy))
    report.seconds = time.perf_counter() - started
    return report
