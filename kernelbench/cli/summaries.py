"""What `run`, `grid` and `tune` print when they finish: each trial's final metric and the values it
resolved at fit time, a grid's cells and its best, a tune's search and its decision, and the
command that draws a run's page. Read from the run folder, as any reader would (pandas and the
results layer load when a command ends, not at start)."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import typer

from kernelbench._vocab import HEADLINE_METRICS


def print_grid_summary(run_dir: Path):
    from kernelbench.results import RunRecord      # pandas: see the module docstring

    record = RunRecord.load(run_dir)
    for row in record.cells or []:
        mean_key = next(k for k in row if k.startswith("mean_"))
        std_key = mean_key.replace("mean_", "std_")
        score = ("diverged or failed" if row[mean_key] is None
                 else f"{row[mean_key]:.4f} ± {row[std_key]:.4f}")
        stage = "then: " if row.get("stage") == 2 else ""       # the second stage's cells
        typer.echo(f"{stage}{json.dumps(row['params'], sort_keys=True)}: {mean_key[5:]} {score}")
    if record.skipped:
        typer.echo(f"no search: the algorithm refuses the refit's training set ({record.skipped})")
    else:
        typer.echo(f"best: {json.dumps((record.best or {}).get('params', {}), sort_keys=True)}")
    _print_refit(record)


def _print_refit(record):
    """The refit trials of a grid or tune run, each with what it resolved (e.g. gamma: scale's number)."""
    from kernelbench.results import resolved_text
    for row in record.refit or []:
        metric = "test_mse" if row.get("test_mse") is not None else "test_error"
        resolved = resolved_text([row.get("resolved")])
        typer.echo(f"refit trial {row['trial']}: {row['status']}, {metric}={row.get(metric)}"
                   f"{', ' + resolved if resolved else ''}")


def print_tune_summary(run_dir: Path):
    from kernelbench.results import RunRecord

    record = RunRecord.load(run_dir)
    best = record.best or {}
    score = next((f"{k} {v:.4f}" for k, v in best.items() if k.startswith("validation_")
                  and k != "validation_standard_error" and v is not None), "")
    if best.get("validation_standard_error") is not None:
        score += (f" ± {best['validation_standard_error']:.4f} (standard error: settings closer than that "
                  "are not told apart by this validation)")
    typer.echo(f"{len(record.settings or [])} settings tried in {record.search_seconds or 0:.0f} s "
               f"({record.validation} validation on the training part, budgets {record.rungs})")
    typer.echo(f"best: {json.dumps(best.get('params', {}), sort_keys=True)}: {score}")
    if best.get("decision"):
        verdict = "kept the config's own setting" if best.get("kept_incumbent") else "chose the search's best"
        typer.echo(f"{verdict}: {best['decision']}")
    _print_refit(record)
    typer.echo(f"tuned config: {record.tuned_config}")


def print_run_summary(run_dir: Path):
    import pandas as pd

    from kernelbench.results import RunRecord, final_rows, read_results, resolved_text

    df = read_results(run_dir)
    if df.empty:
        return
    for _, r in final_rows(df, folds=True).iterrows():
        metric = next((m for m in HEADLINE_METRICS if m in r and r[m] == r[m]), None)   # first one not NaN
        value = f"{metric}={r[metric]:.4f}" if metric else ""
        fold = "" if pd.isna(r["fold"]) else f" fold {r['fold']}"      # protocol: paper
        resolved = resolved_text([r["resolved"]])       # e.g. gamma: scale as the number it became
        typer.echo(f"{r['algorithm']} trial {r['trial']}{fold}: {r['status']} at iteration {r['iteration']}, "
                   f"{value}, train {r['train_seconds']:.2f}s{', ' + resolved if resolved else ''}")
    record = RunRecord.load(run_dir)
    if record.protocol == "paper":      # the paper's test error of a trial: its folds' mean
        for s in record.summary or []:
            error = "" if s.get("test_error") is None else f", test_error={s['test_error']:.4f}"
            typer.echo(f"trial {s['trial']} (mean of {s['folds']} folds): {s['status']}{error}")


def print_compare_command(run_dir: Path, command) -> None:
    """The command line that makes the run's page (`kernelbench compare`), started as the user
    started this one (`command`: the command line, for the console script or `python -m`)."""
    from kernelbench.experiment import program_words

    typer.echo(f"compare: {shlex.join([*program_words(command), 'compare', str(run_dir)])}")
