"""What `run`, `grid` and `tune` print when they finish: each trial's final metric and the values it
resolved at fit time, a grid's cells and its best, a tune's search and its decision, and the
command that draws a run's page. Read from the run folder, as any reader would (pandas and the
results layer load when a command ends, not at start)."""
from __future__ import annotations

import shlex
from pathlib import Path

import typer

from kernelbench._vocab import HEADLINE_METRICS


VALIDATION_WORDS = {"test_error": "validation error", "test_mse": "validation MSE", "test_mae": "validation MAE"}
CONFIG_SETTING = "the config's setting"         # a best with no searched parameter


def print_grid_summary(run_dir: Path):
    """A header naming the folds and where the grid came from, a table of the cells (parameter
    values to 4 significant digits, the validation score as the folds' mean ± std), the best cell,
    a warning when it lies on the edge of the grid, then the refit trials."""
    from kernelbench.report.compare import decimals_for, mean_std_text, value_text
    from kernelbench.results import RunRecord      # pandas: see the module docstring

    record = RunRecord.load(run_dir)
    if record.skipped:
        typer.echo(f"no search: the algorithm refuses the refit's training set ({record.skipped})")
        _print_refit(record)
        return
    cells = record.cells or []
    mean_key = next((k for row in cells for k in row if k.startswith("mean_")), "mean_test_error")
    words = VALIDATION_WORDS.get(mean_key[5:], mean_key[5:])
    axes = record.grid or {}
    if record.grid_from and record.grid_from != "config":
        sizes = " × ".join(f"{len(v)} {k}" for k, v in axes.items())
        typer.echo(f"note: no grid: in the config; the grid ({sizes}) is built from {record.grid_from}")
    typer.echo(f"{len(cells)} cells, each scored by {record.cv}-fold cross-validation on the training part")
    names = list(axes) or sorted({k for row in cells for k in row["params"]})
    std_key = mean_key.replace("mean_", "std_")
    decimals = decimals_for([row[key] for row in cells for key in (mean_key, std_key) if row[key] is not None])

    def score(row) -> str:
        if row.get(mean_key) is None:
            return "diverged or failed"
        return mean_std_text(row[mean_key], row[std_key], record.cv or 0, decimals=decimals)

    header = ["stage", *names, f"{words}: mean ± std (folds)"]
    rows = [["then:" if row.get("stage") == 2 else "grid", *(value_text(row["params"].get(k)) for k in names),
             score(row)] for row in cells]
    if all(row[0] == "grid" for row in rows):       # one stage: no stage column
        header, rows = header[1:], [row[1:] for row in rows]
    widths = [max(len(line[i]) for line in [header, *rows]) for i in range(len(header))]
    for line in [header, *rows]:
        typer.echo("  ".join(text.ljust(width) for text, width in zip(line, widths)).rstrip())
    best = record.best or {}
    params = best.get("params", {})
    chosen = ", ".join(f"{k}={value_text(v)}" for k, v in params.items()) or CONFIG_SETTING
    typer.echo(f"best: {chosen}" + (f": {words} {score(best)}" if best else ""))
    for warning in edge_warnings(axes, params):
        typer.echo(f"warning: {warning}")
    _print_refit(record)


def edge_warnings(axes: dict, params: dict) -> list[str]:
    """Per numeric axis of three values or more: a warning when the best value is its smallest or
    largest, with the direction to extend it (the optimum may lie beyond the values tried)."""
    from kernelbench.report.compare import value_text

    warnings = []
    for name, values in axes.items():
        numbers = sorted(v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))
        if len(numbers) < 3 or params.get(name) not in (numbers[0], numbers[-1]):
            continue
        end, direction = ("largest", "above") if params[name] == numbers[-1] else ("smallest", "below")
        warnings.append(f"the best cell lies on the edge of the grid: {name}={value_text(params[name])} is the "
                        f"{end} value tried; extend the values of {name} {direction} it and search again")
    return warnings


def _print_refit(record):
    """The refit trials of a grid or tune run, each with what it resolved (e.g. gamma: scale's number)."""
    from kernelbench.results import resolved_text
    for row in record.refit or []:
        metric = "test_mse" if row.get("test_mse") is not None else "test_error"
        resolved = resolved_text([row.get("resolved")])
        typer.echo(f"refit trial {row['trial']} on the whole training part: {row['status']}, "
                   f"{metric}={_metric_text(metric, row.get(metric))}{', ' + resolved if resolved else ''}")


def _metric_text(metric: str, value) -> str:
    """An error rate to 4 decimals (0.0000, not 0), an MSE to 4 significant digits."""
    from kernelbench.report.compare import value_text

    if value is None:
        return "none"
    return f"{value:.4f}" if metric.endswith("error") else value_text(float(value))


def print_tune_summary(run_dir: Path):
    from kernelbench.report.compare import value_text
    from kernelbench.results import RunRecord

    record = RunRecord.load(run_dir)
    best = record.best or {}
    score = next((f"{k.replace('_', ' ')} {v:.4f}" for k, v in best.items() if k.startswith("validation_")
                  and k != "validation_standard_error" and v is not None), "")
    if best.get("validation_standard_error") is not None:
        score += (f" ± {best['validation_standard_error']:.4f} (standard error: settings closer than that "
                  "are not told apart by this validation)")
    typer.echo(f"{len(record.settings or [])} settings tried in {record.search_seconds or 0:.0f} s "
               f"({record.validation} validation on the training part, budgets {record.rungs})")
    chosen = ", ".join(f"{k}={value_text(v)}" for k, v in sorted(best.get("params", {}).items()))
    typer.echo(f"best: {chosen or CONFIG_SETTING}: {score}")
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
