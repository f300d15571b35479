"""The compiled solver modules were built with OpenMP, and OpenMP really runs the threads asked for
(without OpenMP, `prange` silently runs on one thread)."""
import importlib
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

import kernelbench.solvers

SOLVERS_DIR = pathlib.Path(kernelbench.solvers.__file__).parent
ALLOW_NO_OPENMP = os.environ.get("KERNELBENCH_ALLOW_NO_OPENMP") == "1"


def _compiled_modules():
    names = sorted({p.name.split(".")[0] for p in SOLVERS_DIR.iterdir()
                    if p.suffix in (".so", ".pyd") and p.name.startswith("_")})
    return names


def test_the_compiled_modules_are_found():
    assert {"_dsg", "_losses", "_random_features"} <= set(_compiled_modules())


@pytest.mark.parametrize("name", _compiled_modules())
def test_openmp_build_flag(name):
    module = importlib.import_module(f"kernelbench.solvers.{name}")
    if not hasattr(module, "OPENMP_BUILD"):
        assert "prange" not in (SOLVERS_DIR / f"{name}.pyx").read_text(), \
            f"{name} uses prange but records no OPENMP_BUILD"
        return
    if ALLOW_NO_OPENMP and not module.OPENMP_BUILD:
        pytest.skip("built without OpenMP (KERNELBENCH_ALLOW_NO_OPENMP=1)")
    assert module.OPENMP_BUILD is True, f"{name} was built without OpenMP: prange runs on one thread"


def _run(code):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="4")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


@pytest.mark.skipif(ALLOW_NO_OPENMP, reason="KERNELBENCH_ALLOW_NO_OPENMP=1")
def test_dsg_module_loads_an_openmp_runtime():
    """Load _dsg alone (not through the package, which imports scikit-learn and its own libgomp)
    and ask threadpoolctl which OpenMP runtimes the process has."""
    path = next(SOLVERS_DIR.glob("_dsg.*.so"), None) or next(SOLVERS_DIR.glob("_dsg.*.pyd"))
    line = _run(f"""
        import importlib.util, numpy, scipy.linalg.cython_blas
        from threadpoolctl import threadpool_info
        before = [i for i in threadpool_info() if i["user_api"] == "openmp"]
        spec = importlib.util.spec_from_file_location("kernelbench.solvers._dsg", {str(path)!r})
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        after = [i for i in threadpool_info() if i["user_api"] == "openmp"]
        print(len(before), len(after))
    """)
    before, after = map(int, line.split())
    assert after > before, "importing _dsg brought no OpenMP runtime into the process"


THREADS_PROBE = """
    import os, numpy as np
    from threadpoolctl import threadpool_limits
    from kernelbench.solvers._dsg import DSGCore
    from kernelbench.solvers.losses import code
    count = lambda: len(os.listdir("/proc/self/task"))   # OS threads of this process
    before = count()
    core = DSGCore(n_dims=3, n_outputs=1, block_size=16, kernel="rbf", gamma=1.0,
                   loss=code("squared"), lam=0.01, step=1.0, t0=1.0, seed=0, dtype="float64",
                   cache_features=False, threads={threads})
    X = np.random.default_rng(0).normal(size=(64, 3))
    with threadpool_limits(limits=1, user_api="blas"):
        status, _ = core.train(X, X[:, :1].copy(), np.arange(64, dtype=np.int64), 16)
        core.predict(X)
    assert status == 0
    print(before, count())
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
@pytest.mark.skipif(ALLOW_NO_OPENMP, reason="KERNELBENCH_ALLOW_NO_OPENMP=1")
def test_threads_2_really_starts_a_second_thread():
    """Not a timing test: libgomp keeps its worker threads alive after a parallel region, so the
    process's OS thread count shows how many threads OpenMP ran (BLAS pinned to 1 thread)."""
    b1, a1 = map(int, _run(THREADS_PROBE.format(threads=1)).split())
    b2, a2 = map(int, _run(THREADS_PROBE.format(threads=2)).split())
    assert a1 == b1, "threads=1 started extra threads"
    assert a2 == b2 + 1, f"threads=2 ran on {a2 - b2 + 1} thread(s)"
