"""`kernelbench bench NAME`: declared comparisons run through the one runner.

    declared.py   the benchmarks as data: which configs, which data, which stop rule, which peers
    measure.py    each method's config validated and run (run_experiment) into <out>/runs
    table.py      the side-by-side table, read back from those run folders
    published.py  that table committed (results/published/bench/<name>.csv + .json) and rendered for the site
"""
from .declared import BENCHMARKS, Benchmark, Method
from .measure import BenchOptions, data_configs, run_benchmark
from .published import published_markdown, published_names, publish_bench
from .table import comparison_lines, comparison_rows, fullsize_lines, latest_runs

__all__ = ["BENCHMARKS", "BenchOptions", "Benchmark", "Method", "comparison_lines", "comparison_rows", "data_configs",
           "fullsize_lines", "latest_runs", "publish_bench", "published_markdown", "published_names", "run_benchmark"]
