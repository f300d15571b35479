"""The `kernelbench` command (Typer). Exit codes: 0 success, 2 a problem the user can fix (the
message names it and the fix), 1 an unexpected failure (a bug: traceback).

Each command imports the layers it needs when it runs: the solvers (compiled cores, scikit-learn),
the experiment layer and the results readers (pandas) take seconds to import, and `kernelbench
--help`, `datasets list` or a missing dataset must answer at once.
"""
from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Optional

import typer

import kernelbench

from kernelbench._io import atomic_write_text
from kernelbench._vocab import METRICS, PUBLISHED_POINTS, SCORING_PROTOCOLS, VALIDATIONS
from kernelbench.cli.bench import bench
from kernelbench.cli.datasets import datasets_app
from kernelbench.cli.demo import demo
from kernelbench.cli.downloads import AssumeYes, dataset_files_first
from kernelbench.cli.helptext import unwrap_help
from kernelbench.cli.options import (ConfigSets, ConfigsFolder, Jobs, Quiet, Resume, RunsOut, Scheduler,
                                     SeedOverride, ThreadsOverride, checked_folds)
from kernelbench.cli.overrides import parse_sets
from kernelbench.cli.summaries import print_compare_command, print_grid_summary, print_run_summary, print_tune_summary
from kernelbench.cli.sweep import sweep
from kernelbench.errors import ConfigError, KernelbenchError
from kernelbench.papers import paper_ids

app = typer.Typer(
    help="Reproduce and extend large-scale kernel learning papers (DSG, UDSG/CDSG, TSGS3VM, "
         "AsyDSSKL, BSGD).",
    no_args_is_help=True, pretty_exceptions_enable=False)

DEFAULT_CONFIG = Path("configs/quickstart.yaml")


def _choices(name: str, values) -> type[enum.Enum]:
    """The allowed values of a choice option: --help lists them, and anything else is a usage error
    (exit 2) that names them."""
    return enum.Enum(name, {v: v for v in values}, type=str)


ScoringProtocol = _choices("ScoringProtocol", SCORING_PROTOCOLS)
Validation = _choices("Validation", VALIDATIONS)
Paper = _choices("Paper", paper_ids())
Metric = _choices("Metric", METRICS)


def _value(choice):
    return None if choice is None else choice.value


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"kernelbench {kernelbench.__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                          help="print the version and exit")) -> None:
    """Reproduce and extend large-scale kernel learning papers (DSG, UDSG/CDSG, TSGS3VM, AsyDSSKL, BSGD)."""
_ARGV: list[str] | None = None      # main(argv)'s arguments, when given (else sys.argv's)


def _command() -> list[str]:
    """The command line as the user typed it, for run.json and the resume hint after Ctrl-C."""
    return list(sys.argv) if _ARGV is None else ["kernelbench", *_ARGV]


def _overrides(seed, threads, trials=None, sets=None):
    out = parse_sets(sets)
    if seed is not None:
        out["seed"] = seed
    if threads is not None:
        out["threads"] = threads
    if trials is not None:
        out["trials"] = trials
    return out


def _execution(jobs, scheduler):
    from kernelbench.experiment import Execution  # heavy: see the module docstring

    if jobs < 0:
        raise ConfigError(f"--jobs must be >= 0 (0 = one per core), got {jobs}")
    if scheduler is not None and not scheduler.startswith(("tcp://", "tls://", "inproc://", "ws://", "wss://")):
        raise ConfigError(f"--scheduler must be a Dask scheduler address like tcp://host:8786, got {scheduler!r}")
    return Execution(jobs=jobs, scheduler=scheduler)


def _run_and_summarise(mode: str, config: Path, overrides: dict, summary, *, out, resume, jobs, scheduler,
                       quiet, smoke=False) -> None:
    """Run one experiment of `mode` (run, grid or tune: experiment.plan) with this command line, then
    print its `summary`, its results file and the command that draws its page."""
    from kernelbench.experiment.plan import Plan, execute  # heavy: see the module docstring

    plan = Plan(configs=(config,), overrides=overrides, mode=mode, out_dir=out, resume=resume, smoke=smoke,
                execution=_execution(jobs, scheduler))
    try:
        path = execute(plan, command=_command(), quiet=quiet)
    except KeyboardInterrupt as e:      # experiment.Interrupted: what was kept, how to resume
        _exit_interrupted(e)
    summary(path)
    typer.echo(f"results: {path / 'results.csv'}")
    print_compare_command(path, _command())


@app.command()
def run(
    config: Path = typer.Argument(..., help="experiment YAML (see configs/)"),
    out: RunsOut = Path("results"),
    seed: SeedOverride = None,
    threads: ThreadsOverride = None,
    trials: Optional[int] = typer.Option(None, help="override the config's number of trials"),
    sets: ConfigSets = None,
    smoke: bool = typer.Option(False, "--smoke", help="a few iterations on a small subsample (CI smoke run)"),
    protocol: Optional[ScoringProtocol] = typer.Option(None, "--protocol", help="score the test part, or "
                                           "Geng et al.'s fold scheme (needs dataset.labeled; overrides `protocol:`)"),
    resume: Resume = False,
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
    yes: AssumeYes = False,
):
    """Run one experiment: every grid cell and trial, evaluated on the test part."""
    overrides = _overrides(seed, threads, trials, sets)
    dataset_files_first(config, overrides, assume_yes=yes)
    if protocol is not None:
        overrides["protocol"] = protocol.value
    _run_and_summarise("run", config, overrides, print_run_summary, out=out, resume=resume, jobs=jobs,
                       scheduler=scheduler, quiet=quiet, smoke=smoke)


@app.command()
def grid(
    config: Optional[Path] = typer.Argument(None, help=f"experiment YAML (default {DEFAULT_CONFIG})"),
    out: RunsOut = Path("results"),
    seed: SeedOverride = None,
    threads: ThreadsOverride = None,
    sets: ConfigSets = None,
    cv: Optional[int] = typer.Option(None, "--cv", help="folds (overrides the config's cv)"),
    resume: Resume = False,
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
    yes: AssumeYes = False,
):
    """Hyper-parameter grid with k-fold cross-validation on the training part, then the best
    cell refitted and evaluated on the test part."""
    overrides = _overrides(seed, threads, sets=sets)
    dataset_files_first(config or DEFAULT_CONFIG, overrides, assume_yes=yes)
    if checked_folds(cv) is not None:
        overrides["cv"] = cv
    _run_and_summarise("grid", config or DEFAULT_CONFIG, overrides, print_grid_summary, out=out, resume=resume,
                       jobs=jobs, scheduler=scheduler, quiet=quiet)


@app.command()
def tune(
    config: Path = typer.Argument(..., help="experiment YAML; its `search:` (or the algorithm's declared space) is searched"),
    search_time: Optional[str] = typer.Option(None, "--budget", help="time for the search, e.g. 90s, 10m, 1h (overrides tune.budget)"),
    candidates: Optional[int] = typer.Option(None, "--candidates", help="settings to try (overrides tune.candidates)"),
    cv: Optional[int] = typer.Option(None, "--cv", help="validate by this many folds of the training part (sets tune.validation: cv)"),
    validation: Optional[Validation] = typer.Option(None, "--validation",
                                                    help="how the search validates (overrides tune.validation)"),
    out: RunsOut = Path("results"),
    seed: SeedOverride = None,
    threads: ThreadsOverride = None,
    sets: ConfigSets = None,
    resume: Resume = False,
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    quiet: Quiet = False,
    yes: AssumeYes = False,
):
    """Model selection on the training part only: settings sampled from the search space, bad ones
    stopped early (successive halving on the training budget), the best written as a runnable
    config (<run folder>/<name>.tuned.yaml), refitted and scored on the test part."""
    overrides = _overrides(seed, threads, sets=sets)
    dataset_files_first(config, overrides, assume_yes=yes)
    if search_time is not None:
        overrides["tune.budget"] = search_time
    if candidates is not None:
        overrides["tune.candidates"] = candidates
    if checked_folds(cv) is not None:
        overrides["cv"] = cv
        overrides["tune.validation"] = "cv"
    if validation is not None:
        overrides["tune.validation"] = validation.value
    _run_and_summarise("tune", config, overrides, print_tune_summary, out=out, resume=resume, jobs=jobs,
                       scheduler=scheduler, quiet=quiet)


@app.command()
def reproduce(
    paper: Optional[Paper] = typer.Argument(None, help="the paper's id"),
    list_: bool = typer.Option(False, "--list", help="print the paper × figure/table × dataset × algorithm "
                                                     "matrix and what is runnable here, run nothing"),
    configs: ConfigsFolder = Path("configs"),
    out: Path = typer.Option(Path("results"), "--out", help="parent folder of the run folders, figures and report"),
    time_limit: Optional[str] = typer.Option(None, "--budget", help="start experiments only within this time, e.g. 2h "
                                                                "(the rest: the same command again)"),
    jobs: Jobs = 1,
    scheduler: Scheduler = None,
    protocol: Optional[ScoringProtocol] = typer.Option(None, "--protocol", help="for every config with "
                                           "dataset.labeled (the others run unchanged)"),
    published_dir: Path = typer.Option(Path("results/published"), "--published", help="published runs (kernelbench "
                                       "publish) that estimate the time of experiments not run under --out"),
    figure: Optional[str] = typer.Option(None, "--figure", help="only the configs and sweeps of this figure or "
                                                                "table (tags.figure), e.g. fig2"),
    quiet: Quiet = False,
):
    """Every experiment of one paper whose data is here (done ones kept, unfinished ones resumed)
    and its sweep panels (finished points kept), then its figures and report section; --list
    shows the whole matrix."""
    from kernelbench.config import parse_duration
    from kernelbench.reproduce import matrix
    from kernelbench.reproduce import reproduce as reproduce_paper

    paper, protocol = _value(paper), _value(protocol)
    if list_:
        typer.echo(matrix(paper, configs, out, protocol=protocol, published_dir=published_dir))
        return
    if paper is None:
        raise ConfigError(f"name a paper ({', '.join(paper_ids())}), or use --list")
    try:
        reproduce_paper(paper, configs_dir=configs, out_dir=out,
                        time_limit=parse_duration(time_limit, "--budget") if time_limit else None,
                        execution=_execution(jobs, scheduler), quiet=quiet, echo=typer.echo,
                        protocol=protocol, published_dir=published_dir, figure=figure)
    except KeyboardInterrupt as e:
        _exit_interrupted(e)


@app.command("algorithms")
def list_algorithms(
    markdown: bool = typer.Option(False, "--markdown", help="the parameter tables as Markdown (the documentation site's)"),
):
    """Registered algorithms: tasks, parameters with defaults, what they accept, what they mean."""
    from kernelbench.estimators import algorithms
    from kernelbench.algorithms import parameters_markdown

    if markdown:
        typer.echo(parameters_markdown(algorithms()))
        return
    for name, spec in sorted(algorithms().items()):
        typer.echo(f"{name}  [{', '.join(spec.tasks)}]  {spec.description}")
        for param, declared in spec.parameters.items():
            searched = f"  [tune: {declared.search.describe()}]" if declared.search is not None else ""
            typer.echo(f"    {param} = {declared.default!r}  ({declared.describe()})  {declared.doc}{searched}")


@app.command("config")
def config_fields(
    markdown: bool = typer.Option(False, "--markdown", help="the fields as a Markdown table (the documentation site's)"),
):
    """Every config field: its default and what it means."""
    from kernelbench.config import FIELDS, VALUE_RULES, fields_markdown

    if markdown:
        typer.echo(fields_markdown())
        return
    width = max(len(f.key) for f in FIELDS)
    for f in FIELDS:
        default = f"  [default: {f.default}]" if f.default else ""
        typer.echo(f"{f.key:<{width}}  {f.doc}{default}")
    typer.echo("\n" + VALUE_RULES)


@app.command()
def figures(
    results: Path = typer.Argument(Path("results"), help="folder searched for results.csv files"),
    out: Path = typer.Option(Path("results/figures"), "--out", help="where PNG and PDF files go"),
):
    """Render every registered figure whose data is present, from results CSVs only."""
    from kernelbench.figures import render_all

    if not results.is_dir():
        raise KernelbenchError(f"results folder {results} does not exist; pass the folder that holds "
                               "your run folders (default: results/)")
    written = render_all(results, out)
    if not written:
        typer.echo(f"no figure has data under {results} yet (run an experiment first)")
    for path in written:
        typer.echo(str(path))


@app.command()
def publish(
    paper: Optional[Paper] = typer.Argument(None, help="the paper's id (default: every paper with runs)"),
    results: Path = typer.Option(Path("results"), "--results", help="folder searched for the run folders"),
    out: Path = typer.Option(Path("results/published"), "--out", help="the published folder (committed)"),
    points: int = typer.Option(PUBLISHED_POINTS, "--points", help="evaluations kept per curve, its first and last "
                                                                  "among them; 0 keeps every row"),
    prune: bool = typer.Option(False, "--prune", help="remove the paper's published runs that are not under --results "
                                                      "(those of the same experiment and config as a run published "
                                                      "now are replaced in any case)"),
    reproduction: Path = typer.Option(Path("REPRODUCTION.md"), "--reproduction", help="regenerated from --out"),
    configs: Path = typer.Option(Path("configs"), "--configs", help="folder of the papers' configs: the data they "
                                                                    "need and this machine lacks is recorded"),
):
    """Copy the runs a paper's report and figures read into the committed published folder (final
    rows, curves thinned to --points, run.json provenance without this machine's paths or host),
    then regenerate REPRODUCTION.md and the papers' figures (--out/figures) from it. A published
    run of the same experiment and config hash as one published now is replaced by it (both would
    count in the same numbers); the other published runs not under --results are kept unless
    --prune. --out inside --results must lie in a folder named `published` (the one the readers of
    --results leave out)."""
    from kernelbench.publish import publish as publish_runs
    from kernelbench.reproduce import absent_data, not_run

    paper = _value(paper)
    known = configs.is_dir()
    publish_runs(paper, results_dir=results, out_dir=out, max_points=points, prune=prune,
                 reproduction=reproduction, figures_dir=out / "figures", echo=typer.echo,
                 absent_data=(lambda p: absent_data(p, configs, results)) if known else None,
                 not_run=(lambda p: not_run(p, configs, results, out)) if known else None)


@app.command()
def compare(
    runs: list[Path] = typer.Argument(..., help="run folders, or folders searched (recursively) for run folders"),
    out: Path = typer.Option(Path("results/compare"), "--out", help="where compare.md, compare.html and "
                                                                   "figures/ go (replaced)"),
    metric: Optional[Metric] = typer.Option(None, "--metric", help="the final value and the curves' y axis "
                                            "(default: test_error, or a regression's test_mae / test_mse)"),
):
    """One page for your runs: each method's final metric and training time as mean ± std (n) over
    trials and runs, and its curves (the metric against training time and samples seen, the
    objective against time), as compare.html (figures inside) and compare.md (beside PNG files)."""
    from kernelbench.report.compare import build_comparison, find_runs, write_comparison

    comparison = build_comparison(find_runs(runs), metric=_value(metric))
    markdown_page, html_page = write_comparison(comparison, out)
    for title, table in comparison.tables:
        typer.echo(f"{title}: {len(table)} method(s)")
    typer.echo(f"compare: {html_page} (and {markdown_page} with {len(comparison.figures)} PNG file(s))")


def _file_text(path: Path) -> str | None:
    """A file's text as report --check compares it: None when missing, "" when not text."""
    from kernelbench._io import output_error

    try:
        return path.read_text(encoding="utf-8") if path.is_file() else None
    except UnicodeDecodeError:
        return ""                # not text: not what the published runs give
    except OSError as e:
        raise output_error("read", path, e) from e


@app.command()
def report(
    results: list[Path] = typer.Argument(None, help="folders searched for results.csv (default: results/)"),
    out: Optional[Path] = typer.Option(None, "--out", help="where report.md and report.html go (default: results/); "
                                                           "with --from, the markdown file (default: REPRODUCTION.md)"),
    published_dir: Optional[Path] = typer.Option(None, "--from", help="a published folder (results/published): "
                                                 "write REPRODUCTION.md and each paper's detail page "
                                                 "(<paper>/DETAILS.md in it) from it alone"),
    check: bool = typer.Option(False, "--check", help="with --from: write nothing, exit 2 when --out or a detail "
                                                      "page is not what the published runs give"),
):
    """Our measured numbers next to the papers' published ones (markdown + HTML); with --from, the
    REPRODUCTION.md of the published runs (per paper its findings, figures and claims' verdicts) and
    each paper's detail page (every measurement, number and run)."""
    from kernelbench.report import (
        build_report,
        links_back_elsewhere,
        markdown_to_html,
        numbers_sentence,
        report_papers,
        reproduction_command,
        reproduction_files,
    )

    if published_dir is not None:
        if results:
            raise ConfigError("pass either folders of runs or --from PUBLISHED, not both")
        if not published_dir.is_dir():
            raise KernelbenchError(f"published folder {published_dir} does not exist; pass the folder `kernelbench "
                                   "publish` writes (default results/published)")
        target = out or Path("REPRODUCTION.md")
        if target.is_dir():
            raise ConfigError(f"--out {target} is a folder; with --from it names the markdown file, e.g. "
                              "--out REPRODUCTION.md")
        files = reproduction_files(published_dir, target)
        if check:
            current = {path: _file_text(path) for path in files}
            stale = [path for path, text in files.items() if current[path] != text]
            if stale:
                elsewhere = [p for p in stale if p != target and current[p]
                             and links_back_elsewhere(published_dir, target, current[p])]
                why = (f" ({', '.join(map(str, elsewhere))} link back to another report than {target}: their links "
                       "are relative to the report they were written with, so check with that --out)"
                       if elsewhere else "")
                raise KernelbenchError(f"{', '.join(map(str, stale))}: not what the published runs under "
                                       f"{published_dir} give{why}; regenerate: "
                                       f"{reproduction_command(published_dir, target)}")
            typer.echo(f"{target} and {len(files) - 1} detail page(s): what the published runs give")
            return
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, text)
        typer.echo(f"report: {target} and {len(files) - 1} detail page(s) beside the published runs")
        return
    if check:
        raise ConfigError("--check compares a REPRODUCTION.md with the published runs: add --from results/published")
    out = out or Path("results")
    folders = results or [Path("results")]
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        raise KernelbenchError(f"results folder(s) {', '.join(missing)} do not exist; pass the "
                               "folders that hold your run folders (default: results/)")
    markdown, table = build_report(folders)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "report.md", markdown)
    atomic_write_text(out / "report.html", markdown_to_html(markdown))
    for paper in report_papers():       # one line a paper; the tables are in the file
        mine = [r for r in table if r["paper"] == paper.name]
        said = numbers_sentence(mine) if mine else "no printed number to set ours beside; its claims are in the file"
        typer.echo(f"{paper.name}: {said} (local runs)")
    typer.echo(f"report: {out / 'report.md'} and {out / 'report.html'} (every number and claim, on the local runs "
               f"under {', '.join(map(str, folders))})")


app.add_typer(datasets_app, name="datasets", help="list, inspect, fetch and locate benchmark datasets")
app.command("bench")(bench)
app.command("demo")(demo)
app.command("sweep")(sweep)
unwrap_help(app, datasets_app)


def _exit_interrupted(e: KeyboardInterrupt):
    """Ctrl-C in a run: the experiment loop's lines (rows kept, where, the command to resume; before the
    run folder exists, just "interrupted"), exit 130. Typer would exit 130 in silence."""
    for line in (str(e) or "interrupted").splitlines():
        typer.echo(f"kernelbench: {line}", err=True)
    raise typer.Exit(130)


def main(argv=None):
    """Entry point. Typer's standalone mode exits 0 on success and 2 on usage errors; our own
    user errors (KernelbenchError) become a one-paragraph message and exit 2; anything else is
    a bug and keeps its traceback (exit 1)."""
    global _ARGV
    _ARGV = None if argv is None else [str(a) for a in argv]
    try:
        app(args=argv, prog_name="kernelbench")
    except KernelbenchError as e:
        typer.echo(f"kernelbench: error: {e}", err=True)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        typer.echo("kernelbench: interrupted", err=True)
        sys.exit(130)


