"""Synthetic replicas of the papers' big sets (SUSY, HIGGS, HEPMASS): same shape, same file format,
a known Bayes error -- so every full-scale path runs, and scaling curves reach 10 M rows, anywhere.

The generator (version 1), for one row:

    z ~ N(0, I_k)                                    latent "physics", k = the shape's latent dims
    g(z) = 1.2 z0 z1 + sin(2 z2) + 0.6 (z3^2 - 1) - 0.8 |z4| + 0.8 z5 + 0.5 cos(z6 + z7)
           (+ 0.6 z0 (m - 1000)/500 for hepmass, whose last feature is the mass m)
    y* = 1[g(z) > 0];  y = y* with probability 1 - noise, else 1 - y*     (label noise)
    x  = features: invertible per-coordinate transforms of z ("low-level": exp(z/2) for momenta,
         z itself for angles and the latent nuisance dims) followed by smooth functions of them
         ("high-level": products, squares, |.|, sums), as SUSY's 8 + 10, HIGGS's 21 + 7 and
         HEPMASS's 27 + mass features are built.

Variant 2 (`variant: 2`), a second generator of the same shapes kept for checking settings on data
they were not chosen on (nothing in configs/ is tuned on it): other latent draws, another decision
function and another noise level (0.155 unless `noise` is given):

    g2(z) = 0.9 z0 z3 - 0.7 (z1^2 - 1) + 0.8 sin(1.5 z5 + z2) + 0.6 (|z6| - 0.8) + 0.5 z4 z7 + 0.4 z2

with the same features x(z).

Variant 3 (`variant: 3`), a third generator kept for checking rules that were chosen after variant 2
had been seen (nothing is chosen on it either): other latent draws, noise 0.18 and

    g3(z) = 0.8 z2 z6 + 0.9 tanh(2 z0) - 0.6 (z5^2 - 1) + 0.7 cos(z1 + 0.5 z4) - 0.5 z3 z7 - 0.2

with the same features x(z).

x determines z, hence g, so the Bayes classifier is sign(g) and the Bayes error is exactly `noise`
(P(y != y* | x) = noise everywhere). Values are rounded to float32, as the published files are
float32 values printed with `%.18e`, so a replica file parses back to exactly the arrays generated
in memory.

Rows are generated in blocks of BLOCK_ROWS, each from its own seed (SeedSequence([seed, shape,
stream, block])): the first n rows of a larger set are the n rows of a smaller one, and the test
rows (stream 1) are independent of the training rows (stream 0).

Files (`kernelbench datasets synth SHAPE`): SUSY and HIGGS as LIBSVM writes them (`0 1:9.72...e-01
2:...`, xz-compressed, the training rows followed by the last-500,000 test rows of the registry's
tail protocol), HEPMASS as UCI's CSV files with a `# label,f0,...,f26,mass` header (gz). Beside each
file a JSON sidecar (SIDECAR_SUFFIX) records the generator and its Bayes error; the loader copies it
into run.json. `defects` reproduces the published SUSY.xz defect: a value glued to the next index.
"""
from __future__ import annotations

import gzip
import json
import lzma
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from kernelbench.errors import DataError

from ._svmlight import format_rows

GENERATOR_VERSION = 1
BLOCK_ROWS = 100_000
SIDECAR_SUFFIX = ".kernelbench-replica.json"
MAX_ROWS = 100_000_000


@dataclass(frozen=True)
class Shape:
    name: str
    d: int                 # features
    latent: int            # latent dims: 8 informative + nuisance
    noise: float           # default label noise = Bayes error
    n_train: int           # the published file's training part
    n_test: int            # and test part
    file_format: str       # "libsvm" | "csv"
    files: tuple           # file names written (train[, test])


SHAPES = {
    "susy": Shape("susy", 18, 8, 0.20, 4_500_000, 500_000, "libsvm", ("SUSY.xz",)),
    "higgs": Shape("higgs", 28, 21, 0.25, 10_500_000, 500_000, "libsvm", ("HIGGS.xz",)),
    "hepmass": Shape("hepmass", 28, 22, 0.12, 7_000_000, 3_500_000, "csv", ("all_train.csv.gz", "all_test.csv.gz")),
}
_SHAPE_IDS = {"susy": 1, "higgs": 2, "hepmass": 3}
VARIANTS = (1, 2, 3)
VARIANT_NOISE = {2: 0.155, 3: 0.18}   # the held-out variants' default label noise (all shapes)
MASSES = np.array([500.0, 750.0, 1000.0, 1250.0, 1500.0])


@dataclass(frozen=True)
class SyntheticSpec:
    """One synthetic dataset: `n` training and `n_test` test rows of `shape`."""
    shape: str = "susy"
    n: int | None = None          # None: the published training size
    n_test: int | None = None     # None: the published test size (capped at n // 4 for small n)
    noise: float | None = None    # None: the shape's default; the Bayes error
    seed: int = 0
    variant: int = 1              # 1: the generator settings were chosen on; 2, 3: held-out ones

    def resolved(self) -> "SyntheticSpec":
        if self.shape not in SHAPES:
            raise DataError(f"synthetic shape {self.shape!r} is unknown; use one of {', '.join(SHAPES)}.")
        s = SHAPES[self.shape]
        n = s.n_train if self.n is None else int(self.n)
        n_test = (min(s.n_test, max(1, n // 4)) if self.n is not None else s.n_test) \
            if self.n_test is None else int(self.n_test)
        if self.variant not in VARIANTS:
            raise DataError(f"synthetic variant={self.variant!r}: use one of {', '.join(map(str, VARIANTS))}.")
        noise = VARIANT_NOISE.get(self.variant, s.noise) if self.noise is None else float(self.noise)
        if not 1 <= n <= MAX_ROWS or not 0 <= n_test <= MAX_ROWS:
            raise DataError(f"synthetic n={n}, n_test={n_test}: use 1 <= n <= {MAX_ROWS:,} and 0 <= n_test.")
        if not 0 <= noise < 0.5:
            raise DataError(f"synthetic noise={noise}: the label-noise rate (= Bayes error) must lie in [0, 0.5).")
        if not isinstance(self.seed, (int, np.integer)) or isinstance(self.seed, bool) or self.seed < 0:
            raise DataError(f"synthetic seed={self.seed!r} must be a non-negative integer.")
        return SyntheticSpec(self.shape, n, n_test, noise, int(self.seed), int(self.variant))

    def describe(self) -> dict:
        s = self.resolved()
        return {"generator": f"kernelbench.data.synthetic v{GENERATOR_VERSION}", **asdict(s),
                "d": SHAPES[s.shape].d, "bayes_error": s.noise}


# ------------------------------------------------------------------ the generator

def decision(z: np.ndarray, mass: np.ndarray | None = None, variant: int = 1) -> np.ndarray:
    """g(z) of the variant: the Bayes classifier is g > 0."""
    if variant == 1:
        g = (1.2 * z[:, 0] * z[:, 1] + np.sin(2.0 * z[:, 2]) + 0.6 * (z[:, 3] ** 2 - 1.0)
             - 0.8 * np.abs(z[:, 4]) + 0.8 * z[:, 5] + 0.5 * np.cos(z[:, 6] + z[:, 7]))
    elif variant == 3:
        g = (0.8 * z[:, 2] * z[:, 6] + 0.9 * np.tanh(2.0 * z[:, 0]) - 0.6 * (z[:, 5] ** 2 - 1.0)
             + 0.7 * np.cos(z[:, 1] + 0.5 * z[:, 4]) - 0.5 * z[:, 3] * z[:, 7] - 0.2)
    else:
        g = (0.9 * z[:, 0] * z[:, 3] - 0.7 * (z[:, 1] ** 2 - 1.0) + 0.8 * np.sin(1.5 * z[:, 5] + z[:, 2])
             + 0.6 * (np.abs(z[:, 6]) - 0.8) + 0.5 * z[:, 4] * z[:, 7] + 0.4 * z[:, 2])
    if mass is not None:
        g = g + 0.6 * z[:, 0] * (mass - 1000.0) / 500.0
    return g


def _features(shape: Shape, z: np.ndarray, mass: np.ndarray | None) -> np.ndarray:
    """Low-level (invertible in z) then high-level features, float32-rounded."""
    n = z.shape[0]
    low = z.copy()
    momenta = [i for i in range(shape.latent) if i % 3 == 0]          # positive, skewed: exp(z/2)
    low[:, momenta] = np.exp(0.5 * z[:, momenta])
    high_all = np.column_stack([
        z[:, 0] * z[:, 1], np.sin(2.0 * z[:, 2]), z[:, 3] ** 2, np.abs(z[:, 4]), np.cos(z[:, 6] + z[:, 7]),
        np.hypot(low[:, 0], low[:, 3]), z[:, 5] * z[:, 2], z[:, 1] - z[:, 7], low[:, 6] * low[:, 0],
        z[:, 0] + z[:, 3],
    ])
    n_high = shape.d - shape.latent - (mass is not None)
    parts = [low, high_all[:, :n_high]]
    if mass is not None:
        parts.append(mass.reshape(n, 1))
    return np.hstack(parts).astype(np.float32).astype(np.float64)


def _block(spec: SyntheticSpec, stream: int, block: int, rows: int):
    shape = SHAPES[spec.shape]
    # variant 1 keeps the seed sequence it was published with; another variant draws other rows
    key = [spec.seed, _SHAPE_IDS[spec.shape], stream, block] + ([spec.variant] if spec.variant != 1 else [])
    rng = np.random.default_rng(np.random.SeedSequence(key))
    z = rng.standard_normal((rows, shape.latent))
    mass = rng.choice(MASSES, size=rows) if spec.shape == "hepmass" else None
    clean = decision(z, mass, spec.variant) > 0
    flip = rng.random(rows) < spec.noise
    y = (clean ^ flip).astype(np.float64)
    return _features(shape, z, mass), y


def generate(spec: SyntheticSpec, stream: int, rows: int, start: int = 0):
    """Rows [start, start + rows) of one stream (0 train, 1 test) as (X float64, y in {0, 1})."""
    spec = spec.resolved()
    d = SHAPES[spec.shape].d
    X = np.empty((rows, d))
    y = np.empty(rows)
    first, last = start // BLOCK_ROWS, (start + rows - 1) // BLOCK_ROWS if rows else -1
    for b in range(first, last + 1):
        Xb, yb = _block(spec, stream, b, BLOCK_ROWS)
        lo, hi = max(start, b * BLOCK_ROWS), min(start + rows, (b + 1) * BLOCK_ROWS)
        X[lo - start: hi - start] = Xb[lo - b * BLOCK_ROWS: hi - b * BLOCK_ROWS]
        y[lo - start: hi - start] = yb[lo - b * BLOCK_ROWS: hi - b * BLOCK_ROWS]
    return X, y


def make(spec: SyntheticSpec):
    """(X_train, y_train, X_test, y_test, description dict)."""
    spec = spec.resolved()
    X_tr, y_tr = generate(spec, 0, spec.n)
    X_te, y_te = generate(spec, 1, spec.n_test)
    return X_tr, y_tr, X_te, y_te, spec.describe()


# ------------------------------------------------------------------ files in the published formats

def write_files(spec: SyntheticSpec, out_dir, *, defects: int | None = None, progress: bool = True,
                compress_level: int = 1) -> list[Path]:
    """Write the replica in its set's published format into out_dir; returns the paths.

    defects: lines (seeded) where a value is glued to the next `index:`, as in the published
    SUSY.xz; default 1 for susy, 0 otherwise (HIGGS's published defect is not known here)."""
    spec = spec.resolved()
    shape = SHAPES[spec.shape]
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    defects = (1 if spec.shape == "susy" else 0) if defects is None else int(defects)
    if defects and shape.file_format != "libsvm":
        raise DataError("--defects applies to the LIBSVM-format replicas (susy, higgs).")
    total = spec.n + spec.n_test
    rng = np.random.default_rng(np.random.SeedSequence([spec.seed, _SHAPE_IDS[spec.shape], 99]))
    defect_rows = set(rng.choice(total, size=min(defects, total), replace=False).tolist()) if defects else set()
    if shape.file_format == "libsvm":
        parts = [(out_dir / shape.files[0], [(0, spec.n), (1, spec.n_test)])]
        header = b""
        formats = (b"%.0f", b"%.18e", True, b" ")
    else:
        parts = [(out_dir / shape.files[0], [(0, spec.n)]), (out_dir / shape.files[1], [(1, spec.n_test)])]
        header = ("# label," + ",".join(f"f{i}" for i in range(shape.d - 1)) + ",mass\n").encode()
        formats = (b"%.0f", b"%f", False, b",")
    written, text_bytes = [], {}
    bar = tqdm(total=total, desc=f"synth {spec.shape}", unit="row", unit_scale=True, disable=not progress)
    row_offset = 0
    for path, streams in parts:
        tmp = path.with_name(path.name + ".part")
        text_bytes[path.name] = len(header)
        with _compressor(tmp, compress_level) as sink:
            sink.write(header)
            for stream, rows in streams:
                for start in range(0, rows, BLOCK_ROWS):
                    count = min(BLOCK_ROWS, rows - start)
                    X, y = generate(spec, stream, count, start)
                    text = format_rows(X, y, *formats)
                    hit = [r - row_offset for r in defect_rows if row_offset <= r < row_offset + count]
                    if hit:
                        text = _glue(text, hit, spec.seed)
                    sink.write(text)
                    text_bytes[path.name] += len(text)
                    row_offset += count
                    bar.update(count)
        tmp.replace(path)
        written.append(path)
    bar.close()
    sidecar = {**spec.describe(), "files": [p.name for p in written], "text_bytes": text_bytes,
               "defects": {"missing_separator": sorted(r + 1 for r in defect_rows)},
               "layout": ("train rows then the test rows (the registry's tail protocol)"
                          if shape.file_format == "libsvm" else "train file and test file")}
    for path in written:
        Path(str(path) + SIDECAR_SUFFIX).write_text(json.dumps(sidecar, indent=1))
    return written


def _glue(text: bytes, rows: list[int], seed: int) -> bytes:
    """Remove the space before one `index:` on each of the given lines (0-based within text)."""
    lines = text.split(b"\n")
    rng = np.random.default_rng(seed)
    for r in rows:
        tokens = lines[r].split(b" ")
        k = int(rng.integers(2, len(tokens)))               # glue token k-1 (a value) to token k
        tokens[k - 1: k + 1] = [tokens[k - 1] + tokens[k]]
        lines[r] = b" ".join(tokens)
    return b"\n".join(lines)


class _compressor:
    """A writable sink compressing by file suffix: .xz with the `xz` program on one thread (as the
    published files, one block) when present, else Python's lzma; .gz with gzip."""

    def __init__(self, path: Path, level: int):
        self.path, self.level, self.proc, self.fh = path, level, None, None

    def __enter__(self):
        name = self.path.name.removesuffix(".part")
        if name.endswith(".xz"):
            exe = shutil.which("xz")
            if exe:
                self.fh = open(self.path, "wb")
                self.proc = subprocess.Popen([exe, f"-{self.level}", "-T1", "-c"], stdin=subprocess.PIPE,
                                             stdout=self.fh)
                return self.proc.stdin
            self.fh = lzma.open(self.path, "wb", preset=self.level)
            return self.fh
        if name.endswith(".gz"):
            self.fh = gzip.open(self.path, "wb", compresslevel=self.level)
            return self.fh
        self.fh = open(self.path, "wb")
        return self.fh

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.stdin.close()
            if self.proc.wait() != 0 and exc[0] is None:
                raise DataError(f"xz failed writing {self.path}")
        if self.fh is not None:
            self.fh.close()
        if exc[0] is not None:
            self.path.unlink(missing_ok=True)
        return False
