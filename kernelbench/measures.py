"""Every measure a paper's numbers and claims are read as: one entry each, with how it is read from
the rows of results.csv, its unit and which way is better. A paper file names a measure by its name,
or a family's name and its argument (`counter:merge_frequency`, `improvement_vs_gss:lookup-wd`);
kernelbench.report reads the rows by the entry's `read`, so a new paper's measure is one entry here.

This module imports nothing from kernelbench but kernelbench.errors: the paper files are checked
against it below the other layers.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass

# How a measure is read from a method's rows (kernelbench.report.samples):
#   column    the results.csv column `source` as is
#   percent   the column `source` (a rate) in percent
#   accuracy  100 − the rate `source` in percent
#   counter   the solver counter named by the argument (counter% : in percent)
#   share     100 · the counter `source` / the training seconds, per trial
#   gain      100 · (1 − the argument's merge method's `source` / that of GSS-standard), trial by trial
#   at_time   the error `source`, argument <error>:<s>, at each trial's last evaluation within s seconds
READS = ("column", "percent", "accuracy", "counter", "counter%", "share", "gain", "at_time")


@dataclass(frozen=True)
class Measure:
    name: str
    read: str                   # one of READS
    unit: str                   # "%", "s", "MB", or "" (a ratio, a count, the target's unit)
    better: str | None          # "lower", "higher", or None (a counter: either way, by the claim)
    doc: str
    source: str = ""            # the column or counter read; a family's argument names it otherwise
    family: bool = False        # written name:<argument>
    varies: bool = False        # differs between trials even for a method whose results do not depend
                                # on the seed (timings, memory readings): never exact
    first_trial: bool = False   # read on each run's first trial only: a process's later trials reuse the
                                # memory its first left resident, and read less than training allocates


MEASURES = {m.name: m for m in (
    Measure("test_error", "percent", "%", "lower", "error rate on the test part", "test_error"),
    Measure("test_accuracy", "accuracy", "%", "higher", "100 − the test error", "test_error"),
    Measure("train_error", "percent", "%", "lower", "error rate on the training rows evaluated", "train_error"),
    Measure("test_mse", "column", "", "lower", "mean squared error on the test part", "test_mse"),
    Measure("train_mse", "column", "", "lower", "mean squared error on the training rows evaluated", "train_mse"),
    Measure("test_mae", "column", "", "lower", "mean absolute error on the test part, in the target's unit",
            "test_mae"),
    Measure("train_mae", "column", "", "lower", "mean absolute error on the training rows evaluated", "train_mae"),
    Measure("objective", "column", "", "lower", "the training objective", "objective"),
    Measure("n_support_vectors", "column", "", "lower", "support vectors of the model", "n_support_vectors"),
    Measure("train_seconds", "column", "s", "lower", "training time", "train_seconds", varies=True),
    Measure("predict_seconds", "column", "s", "lower", "prediction time", "predict_seconds", varies=True),
    Measure("train_memory_mb", "column", "MB", "lower", "memory training itself holds (results/schema.py); "
            "each run's first trial (in one process, later trials reuse what the first left resident: 18.8 MB, "
            "then 0.02 and 0 for TSVM-CCCP on 1,000 w8a rows)", "train_memory_mb", varies=True, first_trial=True),
    Measure("peak_memory_mb", "column", "MB", "lower",
            "the run's process's peak resident memory (a sweep point's own when it ran as its own process)",
            "peak_memory_mb", varies=True),
    Measure("merge_time_share", "share", "%", "lower", "share of the training time spent merging",
            "maintenance_seconds", varies=True),
    # a counter may count seconds: never taken as exact
    Measure("counter", "counter", "", None, "a solver counter as is: counter:<name>", family=True, varies=True),
    Measure("counter%", "counter%", "%", None, "a solver counter in percent: counter%:<name>", family=True,
            varies=True),
    Measure("improvement_vs_gss", "gain", "%", "higher",
            "training time saved against GSS-standard at the same budget: improvement_vs_gss:<merge>",
            "train_seconds", family=True, varies=True),
    Measure("merge_time_improvement_vs_gss", "gain", "%", "higher",
            "merging time saved against GSS-standard at the same budget: merge_time_improvement_vs_gss:<merge>",
            "maintenance_seconds", family=True, varies=True),
    Measure("at_seconds", "at_time", "%", "lower",
            "an error at a training time, per trial its last evaluation within s seconds (s = libsvm: the "
            "mean training seconds of LIBSVM's run of the same tags and set): at_seconds:<error>:<s>",
            family=True),
)}
# The measures a claim may compare (a claim reads a time by its test's `at`, not by at_seconds)
CLAIM_MEASURES = tuple(name for name, m in MEASURES.items() if m.read != "at_time")
AT_TIME_ERRORS = ("test_error", "train_error")


def reads_time(metric: str) -> bool:
    """Whether the metric is a time, or a number computed from times (a family's argument may name
    the timed column: counter:maintenance_seconds): its value depends on the machine it ran on."""
    found, argument = measure(metric)
    return found.unit == "s" or found.source.endswith("_seconds") or argument.endswith("_seconds")


def measure(metric: str, allowed=tuple(MEASURES)) -> tuple[Measure, str]:
    """(the entry, its argument) of a metric name; ValueError naming the known ones, the nearest
    first, for any other (or a family without its argument, or one not `allowed`)."""
    name, _, argument = str(metric).partition(":")
    found = MEASURES.get(name) if name in allowed else None
    if found is not None and found.family == bool(argument) and _argument_ok(found, argument):
        return found, argument
    written = [f"{n}:<…>" if MEASURES[n].family else n for n in allowed]
    near = difflib.get_close_matches(name, allowed, n=1)
    hint = f" (did you mean {near[0]}{':<…>' if MEASURES[near[0]].family else ''}?)" if near else ""
    raise ValueError(f"unknown metric {metric!r}{hint}; the metrics are {', '.join(written)}")


def _argument_ok(found: Measure, argument: str) -> bool:
    if found.read != "at_time":
        return True
    error, _, seconds = argument.partition(":")
    if error not in AT_TIME_ERRORS or not seconds:
        return False
    try:
        return seconds == "libsvm" or float(seconds) > 0
    except ValueError:
        return False
