"""Build of the compiled solver cores (Cython + OpenMP).

OpenMP is detected by compiling and linking a tiny program with -fopenmp; without it the
extensions still build, but every `prange` runs on one thread, so `OPENMP_BUILD` in each module
records it and tests/project/test_build.py fails on such a build (set KERNELBENCH_ALLOW_NO_OPENMP=1 to
accept it knowingly).
"""
import os
import sys
import tempfile
import textwrap

import numpy  # noqa: F401  (build requirement; not needed for headers)
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py
from setuptools._distutils.ccompiler import new_compiler
from setuptools._distutils.errors import CompileError, LinkError
from setuptools._distutils.sysconfig import customize_compiler

SOLVERS = "kernelbench/solvers"
# Folders whose _*.pyx files are compiled cores: the solvers, and the data layer's text parser.
COMPILED = (SOLVERS, "kernelbench/data")


def openmp_flags():
    """(compile, link) flags that make `#pragma omp` and prange work, or ([], []) if none do."""
    if os.environ.get("KERNELBENCH_NO_OPENMP"):
        return [], []
    compiler = new_compiler()
    customize_compiler(compiler)
    candidates = [(["-fopenmp"], ["-fopenmp"]), (["-Xpreprocessor", "-fopenmp"], ["-lomp"])]
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "omp.c")
        with open(src, "w") as f:
            f.write(textwrap.dedent("""
                #include <omp.h>
                int main(void) { int n = 0;
                #pragma omp parallel reduction(+:n)
                n += 1;
                return n > 0 ? 0 : 1; }"""))
        for cflags, lflags in candidates:
            try:
                objs = compiler.compile([src], output_dir=tmp, extra_postargs=cflags)
                compiler.link_executable(objs, os.path.join(tmp, "omp"), extra_postargs=lflags)
                return cflags, lflags
            except (CompileError, LinkError):
                continue
    print("kernelbench: WARNING: no OpenMP compiler support found; solvers will run on one thread",
          file=sys.stderr)
    return [], []


omp_compile, omp_link = openmp_flags()
# -fno-math-errno lets GCC call the SIMD cos of glibc's libmvec (see _simd.h); no -ffast-math.
compile_args = ["-O3", "-fno-math-errno"] + omp_compile if os.name != "nt" else ["/O2", "/openmp"]
link_args = omp_link if os.name != "nt" else []


def extension(folder, name):
    return Extension(f"{folder.replace('/', '.')}.{name}", [f"{folder}/{name}.pyx"],
                     include_dirs=[SOLVERS], extra_compile_args=compile_args,
                     libraries=["m"] if os.name != "nt" else [],  # libm.so also pulls in libmvec (SIMD cos)
                     extra_link_args=link_args)


class build_py_with_registry(build_py):
    """Ship datasets/registry.yaml inside the wheel (kernelbench/data/registry.yaml)."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "kernelbench", "data", "registry.yaml")
        self.mkpath(os.path.dirname(target))
        self.copy_file(os.path.join("datasets", "registry.yaml"), target)


def extension_names():
    """(folder, name) of every compiled core: each _*.pyx in COMPILED. KERNELBENCH_BUILD_ONLY=_a,_b
    limits a developer's in-place rebuild to those modules (installs always build all)."""
    names = sorted((folder, f[:-4]) for folder in COMPILED for f in os.listdir(folder)
                   if f.startswith("_") and f.endswith(".pyx"))
    only = os.environ.get("KERNELBENCH_BUILD_ONLY")
    return [(d, n) for d, n in names if n in only.split(",")] if only else names


setup(
    cmdclass={"build_py": build_py_with_registry},
    ext_modules=cythonize(
        [extension(d, n) for d, n in extension_names()],
        compiler_directives={"language_level": 3},
        include_path=["."],
    ),
)
