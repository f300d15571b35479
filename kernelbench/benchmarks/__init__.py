"""`kernelbench bench NAME`: declared comparisons run through the one runner.

    declared.py   the benchmarks as data: which configs, which data, which stop rule, which peers
    run.py        each method's config validated and run (run_experiment) into <out>/runs
    table.py      the side-by-side table, read back from those run folders
"""
from .declared import BENCHMARKS, Benchmark, Method
from .measure import BenchOptions, run_benchmark
from .table import comparison_lines, fullsize_lines, latest_runs

__all__ = ["BENCHMARKS", "BenchOptions", "Benchmark", "Method", "comparison_lines", "fullsize_lines", "latest_runs",
           "run_benchmark"]
