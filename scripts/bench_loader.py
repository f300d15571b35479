"""`make bench`: the loader against `xz -dc` alone, on a SUSY-format file.

A first load of a SUSY-format .xz file (LIBSVM's `%.18e` text, the published defect included) is
timed side by side with `xz -dc FILE > /dev/null` alone, in turns (xz, loader, xz, loader, ...), each
in its own process (the point: a fresh parsed-array cache and its own peak memory): the ratio of
medians, the loader's MB/s of text, its peak resident memory against the size of the arrays it
caches, and the repairs it made. scikit-learn's `load_svmlight_file` on the same stream is timed once
for reference (it stops at the defect, as on the published file; its time to that point is scaled to
the whole file).

    .venv/bin/python scripts/bench_loader.py                       # a 1 M-row replica (written once)
    .venv/bin/python scripts/bench_loader.py --file /data/SUSY.xz  # the published file, or the full replica
    .venv/bin/python scripts/bench_loader.py --rows 5000000        # the full-size replica

Timings depend on the machine's load (the load average is printed). Not a pass/fail test.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kernelbench.data.synthetic import SyntheticSpec, write_files

PEAK_MB = "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024"
LOAD = f"""
import json, resource, sys, time
from pathlib import Path
from kernelbench.data.svmlight import SvmlightOptions, parse_svmlight
started = time.perf_counter()
report = parse_svmlight(Path(sys.argv[1]), Path(sys.argv[2]), SvmlightOptions(n_features=18, base=1, dtype=sys.argv[3]))
print(json.dumps({{"seconds": time.perf_counter() - started, "rows": report.rows, "text_bytes": report.text_bytes,
                  "repairs": report.repairs, "first_line": report.first_line, "peak_mb": {PEAK_MB}}}))
"""
# the stream counts the bytes scikit-learn's loader read before it stopped
SKLEARN = f"""
import json, lzma, resource, sys, time
from sklearn.datasets import load_svmlight_file
class Counting:
    def __init__(self, fh): self.fh, self.n = fh, 0
    def read(self, k=-1):
        b = self.fh.read(k); self.n += len(b); return b
    def readline(self, k=-1):
        b = self.fh.readline(k); self.n += len(b); return b
    def __iter__(self):
        for line in self.fh:
            self.n += len(line); yield line
stream, failed = Counting(lzma.open(sys.argv[1])), ""
started = time.perf_counter()
try:
    load_svmlight_file(stream, n_features=18)
except ValueError as exc:
    failed = str(exc)[:120]
print(json.dumps({{"seconds": time.perf_counter() - started, "text_bytes_read": stream.n, "failed": failed,
                  "peak_mb": {PEAK_MB}}}))
"""


def _run_json(code, *args) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _xz_seconds(path: Path) -> float:
    started = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run(["xz", "-dc", "-T1", str(path)], stdout=sink, check=True)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, help="a SUSY-format .xz file (default: write a replica)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of the replica written when --file is absent")
    parser.add_argument("--repeats", type=int, default=3, help="xz / loader pairs")
    parser.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    parser.add_argument("--work", type=Path, default=Path("results/bench/loader"), help="replica and scratch folder")
    args = parser.parse_args()
    if shutil.which("xz") is None:
        sys.exit("bench_loader: the `xz` program is needed for the side-by-side timing")
    args.work.mkdir(parents=True, exist_ok=True)
    path = args.file or args.work / f"susy-{args.rows}" / "SUSY.xz"
    if not path.is_file():
        print(f"writing a {args.rows:,}-row SUSY replica into {path.parent} (once)", flush=True)
        n_test = min(500_000, args.rows // 10)
        write_files(SyntheticSpec("susy", n=args.rows - n_test, n_test=n_test), path.parent, progress=False)
    print(f"{path} ({path.stat().st_size / 2**20:,.0f} MiB); load average {os.getloadavg()[0]:.2f}", flush=True)
    xz, ours = [], []
    for r in range(args.repeats):
        xz.append(_xz_seconds(path))
        with tempfile.TemporaryDirectory(dir=args.work) as tmp:
            last = _run_json(LOAD, path, tmp, args.dtype)
        ours.append(last["seconds"])
        print(f"  pair {r + 1}: xz -dc {xz[-1]:.1f} s, loader {ours[-1]:.1f} s (ratio {ours[-1] / xz[-1]:.2f})",
              flush=True)
    text_mb, xz_s, ours_s = last["text_bytes"] / 1e6, statistics.median(xz), statistics.median(ours)
    arrays_mb = last["rows"] * 18 * (4 if args.dtype == "float32" else 8) / 2**20 + last["rows"] * 8 / 2**20
    ratios = [o / x for o, x in zip(ours, xz)]
    print(f"xz -dc alone: median {xz_s:.1f} s; loader (decompress + parse + cache, {args.dtype}): median "
          f"{ours_s:.1f} s, {text_mb / ours_s:.0f} MB/s of text ({text_mb:,.0f} MB, {last['rows']:,} rows); ratio "
          f"loader / xz: median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})")
    print(f"peak resident memory of the loader: {last['peak_mb']:,.0f} MiB for {arrays_mb:,.0f} MiB of cached "
          f"arrays ({last['peak_mb'] / arrays_mb:.2f}x, the interpreter and libraries included)")
    print(f"repairs: {last['repairs'] or 'none'}" + (f" (first lines {last['first_line']})" if last['repairs'] else ""))
    sk = _run_json(SKLEARN, path)
    seconds = sk["seconds"] * (last["text_bytes"] / max(sk["text_bytes_read"], 1) if sk["failed"] else 1)
    stopped = (f"stopped after {sk['seconds']:.1f} s at {sk['text_bytes_read'] / 1e6:,.0f} MB of text "
               f"({sk['failed']!r}); the whole file at that rate: ~" if sk["failed"] else "")
    print(f"scikit-learn's loader: {stopped}{seconds:.1f} s ({seconds / xz_s:.2f}x xz), peak {sk['peak_mb']:,.0f} MiB")


if __name__ == "__main__":
    main()
