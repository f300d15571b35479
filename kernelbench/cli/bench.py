"""`kernelbench bench NAME`: a declared benchmark (kernelbench/benchmarks) run, then its table printed."""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from kernelbench.cli.downloads import AssumeYes, dataset_files_first
from kernelbench.cli.options import ConfigsFolder

DESCRIPTIONS = ("fullscale: the papers' solvers against RFF + SGD and exact SVMs on the SUSY (--shape higgs: "
                "HIGGS) replica, same wall time; equal-time: every config of --dataset at --seconds; "
                "fullsize: every SUSY/HIGGS/HEPMASS config on its replica (--replicas)")


def bench(
    name: str = typer.Argument(..., help=DESCRIPTIONS),
    out: Path = typer.Option(None, "--out", help="folder of the run folders (default results/bench/NAME)"),
    seconds: Optional[float] = typer.Option(None, "--seconds", help="T, the shared wall time (fullscale default: "
                                            "one epoch of RFF + SGD)"),
    threads: int = typer.Option(1, "--threads", help="threads of our solvers, the peers' BLAS and oneDAL"),
    shape: str = typer.Option("susy", "--shape", help="fullscale: the replica, susy or higgs"),
    n: Optional[int] = typer.Option(None, "--n", help="fullscale: training rows (default: the published size)"),
    n_test: Optional[int] = typer.Option(None, "--n-test", help="fullscale: test rows (default: 500,000)"),
    variant: int = typer.Option(1, "--variant", help="fullscale: the generator, 1 (the configs were chosen "
                                "on it), 2 or 3 (held out)"),
    data_seed: int = typer.Option(0, "--data-seed", help="fullscale: the replica's seed"),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="equal-time: the data set (configs/NAME_*.yaml)"),
    only: Optional[list[str]] = typer.Option(None, "--only", help="run only this method (repeatable)"),
    references: bool = typer.Option(False, "--references", help="fullscale: also our TSGS3VM config (its own time)"),
    replicas: Optional[Path] = typer.Option(None, "--replicas", help="fullsize: folder of the replica files "
                                            "(written where absent, then read from there)"),
    configs: ConfigsFolder = Path("configs"),
    seed: int = typer.Option(0, "--seed"),
    table: bool = typer.Option(False, "--table", help="print the table of the runs in --out and stop"),
    publish: bool = typer.Option(False, "--publish", help="fullscale, equal-time: also write the table as "
                                 "PUBLISHED/bench/<--out's folder name>.csv, its provenance as .json beside it "
                                 "(committed; the documentation site renders it)"),
    published: Path = typer.Option(Path("results/published"), "--published", help="the published folder (--publish)"),
    yes: AssumeYes = False,
) -> None:
    """Run a declared benchmark once per method, each through the experiment loop into run folders, and print the
    side-by-side table. Timings depend on the machine's load: not a pass/fail test."""
    from kernelbench.benchmarks import (BenchOptions, comparison_lines, data_configs, fullsize_lines, publish_bench,
                                        run_benchmark)
    from kernelbench.benchmarks.measure import benchmark
    from kernelbench.errors import ConfigError

    bench_spec = benchmark(name)
    out = out or Path("results") / "bench" / name
    if publish and bench_spec.threads:
        raise ConfigError(f"--publish writes the side-by-side table of fullscale or equal-time; {name}'s table "
                          "is not published: drop --publish")
    if not table:
        options = BenchOptions(out=out, configs=configs, seconds=seconds, threads=threads, seed=seed, shape=shape,
                               n=n, n_test=n_test, data_seed=data_seed, variant=variant, dataset=dataset,
                               only=tuple(only or ()), references=references, replicas=replicas,
                               command=tuple(sys.argv))
        for config in data_configs(name, options):     # a large download confirmed (or refused) up front
            dataset_files_first(config, assume_yes=yes)
        run_benchmark(name, options, say=typer.echo)
    lines = (fullsize_lines if bench_spec.threads else comparison_lines)(name, out / "runs")
    typer.echo("\n".join(["", f"{name}: {os.getloadavg()[0]:.2f} load average", *lines]))
    if publish:
        typer.echo(f"published: {publish_bench(name, out / 'runs', published, out.resolve().name)}")
