"""`kernelbench reproduce PAPER`: every experiment of one paper, then its figures and report section.

The experiments of a paper are the configs tagged with it (configs/*.yaml, `tags.paper`). For each:

    data       present when every file it needs is in the cache or a mirror (or it is synthetic);
               otherwise it is listed with the command that fetches it, and not run;
    done       a finished run folder of the same experiment with the same resolved config under
               --out is kept (never re-run); an unfinished one (killed, interrupted) is resumed;
    estimate   the duration of the newest earlier run of the experiment under --out, else that of
               its published run (results/published, `kernelbench publish`; publish.published_seconds),
               else the config's time limit (stop.seconds × cells × trials); "?" when none is known;
    time limit with --budget, experiments are started while that much time has not been spent
               (a started one is finished; the rest are listed as left for the next call).
    selection  a model-selection config (`cv:` set, or `then:`; e.g. configs/*_grid.yaml) runs as
               `kernelbench grid` does: its grid cross-validated on the training part, the best
               refitted and scored on the test part (experiment.grid_search), not every cell on the test part.

Some panels are produced by a sweep, not by one config (training sizes, test sizes, threads): the
paper file's `sweeps:` (`SWEEPS`), each its configs, points (`over`) and `processes`. `reproduce` runs
them after the configs, in this process (an experiment.plan run as `kernelbench sweep`), every run tagged with the sweep's figure (so
that it is never pooled with the fixed-size runs of its config) and resumable like the configs: a
point finished under --out is kept, an unfinished one resumed. `figure` (`--figure fig2`) runs only
the configs and sweeps of one figure or table.
`reproduce --list` prints the whole paper × figure/table × dataset × algorithm matrix.
`protocol` ("held-out" | "paper", `--protocol`) overrides the config's `protocol:` in every config
with dataset.labeled (the semi-supervised ones); the others run as they are.
"""
from __future__ import annotations

import json
import re
import shlex
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml
from tqdm.auto import tqdm

from kernelbench._io import atomic_write_text
from kernelbench._vocab import NO_CELL_FINISHED, SCORING_PROTOCOLS
from kernelbench.config import ExperimentConfig, config_to_dict, duration_text, expand_grid, load_config
from kernelbench.data.fetch import fetch_command, resolve_local
from kernelbench.data.registry import get_spec
from kernelbench.errors import ConfigError, KernelbenchError, OutputError
from kernelbench.experiment import Execution
from kernelbench.experiment.plan import Plan, execute
from kernelbench.experiment.sweep import PREDICT_SIZES, sweep_points
from kernelbench.figures import render_all
from kernelbench.papers import PAPERS, Sweep, get_paper
from kernelbench.publish import finished_cells, published_seconds
from kernelbench.report import build_report, markdown_to_html
from kernelbench.results import Run, RunRecord, final_rows, read_results

# Panels made by a sweep (it varies what a config holds fixed): (paper, sweep), from each paper's `sweeps`
SWEEPS = tuple((paper.id, sweep) for paper in PAPERS.values() for sweep in paper.sweeps)
FIGURE_KEY = "tags.figure"                # the override that tags a sweep's runs with its panel
TIME_SPENT = "left (budget spent)"        # an experiment or sweep not started within --budget


@dataclass
class Experiment:
    """One config of a paper, and where it stands under an output folder."""
    path: Path
    cfg: ExperimentConfig
    missing: str | None            # why it cannot run here (its data), with the fix; None: runnable
    previous: Run | None           # the newest run folder of this exact config
    estimate: float | None         # seconds, or None if unknown
    selection: bool = False        # a model-selection config: run by grid_search (selects_model)
    overrides: dict = field(default_factory=dict)     # those `cfg` was loaded with (--protocol)

    @property
    def done(self) -> bool:
        return self.previous is not None and self.previous.status == "finished"

    @property
    def state(self) -> str:
        if self.missing:
            return "no data"
        if self.done:
            return "done"
        return "resume" if self.previous is not None else "to run"


def experiments(paper: str | None, configs_dir, out_dir, *, protocol: str | None = None,
                published_dir=None, figure: str | None = None) -> list[Experiment]:
    """The configs tagged with `paper` (every tagged config for None), in file-name order; with
    `protocol`, the semi-supervised ones (dataset.labeled) under that protocol. `published_dir`: the
    published folder whose runs estimate the experiments not run under out_dir (None: none).
    `figure`: only the configs tagged with that figure."""
    if paper is not None:
        get_paper(paper)                    # an unknown id: a ConfigError naming the papers
    if protocol is not None and protocol not in SCORING_PROTOCOLS:
        raise ConfigError(f"--protocol: expected one of {', '.join(SCORING_PROTOCOLS)}, got {protocol!r}")
    configs_dir = Path(configs_dir)
    if not configs_dir.is_dir():
        raise KernelbenchError(f"configs folder {configs_dir} does not exist; run from the repository "
                               "root or pass --configs DIR")
    found = []
    for path in sorted(configs_dir.glob("*.yaml")):
        # only the wanted paper's configs are validated (load_config); an unreadable file is no
        # named paper's, but with paper None it may be a tagged one: load_config says what is wrong
        tag = _paper_tag(path)
        if tag is None or (paper is not None and tag != paper):
            continue
        cfg = load_config(path)
        if cfg.tags.paper is None or (paper is not None and cfg.tags.paper != paper):
            continue
        if figure is not None and cfg.tags.figure != figure:
            continue
        selection, overrides = selects_model(path, cfg), {}
        if protocol is not None and cfg.dataset.labeled is not None and not selection:
            overrides = {"protocol": protocol}
            cfg = load_config(path, overrides=overrides)
        previous = Run.latest(out_dir, cfg.name, config_to_dict(cfg))     # None under a missing folder
        found.append(Experiment(path, cfg, missing_data(cfg), previous,
                                estimate_seconds(cfg, out_dir, selection=selection, published_dir=published_dir),
                                selection, overrides))
    return found


_UNREADABLE = object()


def _paper_tag(path: Path):
    """The `tags.paper` written in a config file, read without validating the config: None when it
    names none, _UNREADABLE when the file is no YAML mapping (or its tags are no mapping)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return _UNREADABLE
    if not isinstance(data, dict) or not isinstance(data.get("tags", {}), (dict, type(None))):
        return _UNREADABLE
    return (data.get("tags") or {}).get("paper")


def selects_model(path, cfg: ExperimentConfig) -> bool:
    """A model-selection config: `cv:` written in the file (the resolved config always has a cv,
    5 by default, so the file says it) or a `then:` stage."""
    return bool(cfg.then) or "cv" in (yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {})


def missing_data(cfg: ExperimentConfig) -> str | None:
    """Why the config's data is not here, and the command that gets it; None when it is."""
    dc = cfg.dataset
    if dc.synthetic() is not None:
        return None
    if dc.path is not None:
        gone = [p for p in (dc.path, dc.test_path) if p is not None and not Path(p).exists()]
        return f"{' and '.join(gone)} does not exist" if gone else None
    spec = get_spec(dc.name)
    roles = ("train", "test") if dc.test == "official" else ("train",)
    absent = [role for role in roles if role in spec.files and resolve_local(spec.files[role]) is None]
    if not absent:
        return None
    return f"{dc.name} ({', '.join(absent)}) not in the cache or a mirror: {fetch_command(dc.name)}"


def absent_data(paper: str, configs_dir, out_dir) -> dict:
    """{dataset: the command that gets it} of the data the paper's configs need and this machine
    has no copy of (what `kernelbench publish` records, so that the report tells "no data here"
    from "not run")."""
    return {e.cfg.dataset.name: fetch_command(e.cfg.dataset.name)
            for e in experiments(paper, configs_dir, out_dir) if e.missing and e.cfg.dataset.name}


def not_run(paper: str, configs_dir, out_dir, published_dir=None) -> dict:
    """{config file: "not run", "unfinished" (with its time estimate) or "no cell finished" (with
    why)} of the paper's experiments that could run here (their data is here) but have no result:
    no finished run with a finished cell under out_dir, nor a published one under published_dir/<paper>
    (what `kernelbench publish` records, so that the report names every experiment a publication left
    out, never silently; a run whose every cell was skipped is no result: publish leaves it out)."""
    def published(e: Experiment):
        return Run.latest(Path(published_dir) / paper, e.cfg.name, config_to_dict(e.cfg)) if published_dir else None

    words = {"to run": "not run", "resume": "unfinished"}
    found = {}
    for e in experiments(paper, configs_dir, out_dir):
        if e.missing:
            continue
        run = e.previous if e.done else published(e)
        if run is not None and run.status == "finished":
            why = no_result(run)
            if why is not None:
                found[e.path.name] = f"{NO_CELL_FINISHED} ({why})" if why else NO_CELL_FINISHED
            continue
        found[e.path.name] = words[e.state] + (f" (estimate {duration_text(e.estimate)})" if e.estimate else "")
    return found


def no_result(run: Run) -> str | None:
    """None when the run finished a cell; else why not: the first sentence of its first final row's
    message ("" when it has none; the rest of the message is the fix, which the run folder keeps)."""
    try:
        frame = read_results(run.path)
    except OutputError:
        return ""
    if finished_cells(frame):
        return None
    last = final_rows(frame, folds=True)
    messages = [m for m in last["message"] if isinstance(m, str) and m] if len(last) and "message" in last else []
    return re.split(r"(?<=[.;])\s", messages[0], maxsplit=1)[0].rstrip(".;") if messages else ""


def estimate_seconds(cfg: ExperimentConfig, out_dir, *, selection=False, published_dir=None) -> float | None:
    """Wall seconds: the newest earlier run of this experiment under out_dir (any config), else its
    newest run in the `published_dir` folder (publish.published_seconds), else the time limit of every
    cell (selection: the cv folds of both stages' cells, then the refit trials); None when none is
    known."""
    for path in sorted(Path(out_dir).glob(f"{cfg.name}-*"), reverse=True):
        try:
            record = RunRecord.load(path)
        except OutputError:
            continue
        if record.status == "finished" and record.duration_seconds:
            return float(record.duration_seconds)
    if published_dir is not None:
        seconds = published_seconds(published_dir, cfg.name, config_to_dict(cfg))
        if seconds is not None:
            return seconds
    if cfg.stop.seconds:
        if selection:
            searched = len(expand_grid(cfg.grid)) + (len(expand_grid(cfg.then)) if cfg.then else 0)
            return cfg.stop.seconds * (searched * cfg.cv + cfg.trials)
        return cfg.stop.seconds * len(expand_grid(cfg.grid)) * cfg.trials
    return None


def matrix(paper: str | None, configs_dir, out_dir, *, protocol: str | None = None, published_dir=None) -> str:
    """The `reproduce --list` table: paper, figure/table, panel, dataset, algorithm, state, estimate
    (estimate_seconds, with runs of the `published_dir` folder)."""
    rows = [(e.cfg.tags.paper, e.cfg.tags.figure or "", e.cfg.tags.panel or "", e.cfg.dataset.name or "",
             e.cfg.algorithm.name, e.cfg.tags.role or "", e.state, duration_text(e.estimate), e.path.name,
             e.missing or "")
            for e in experiments(paper, configs_dir, out_dir, protocol=protocol, published_dir=published_dir)]
    rows += [(p, sweep.figure, "", "", "(sweep)", "", "sweep", "?", sweep_command(sweep), "")
             for p, sweep in SWEEPS if paper in (None, p)]
    rows.sort(key=lambda r: (r[0], r[1], r[3], r[4]))
    head = ("paper", "where", "panel", "dataset", "algorithm", "role", "state", "estimate", "config", "why not")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    runnable = sum(r[6] in ("to run", "resume", "done") for r in rows)
    lines += ["", f"{len(rows)} entries: {runnable} runnable here "
                  f"({sum(r[6] == 'done' for r in rows)} done), {sum(r[6] == 'no data' for r in rows)} "
                  f"without their data, {sum(r[6] == 'sweep' for r in rows)} made by sweeps",
              ("estimate: the wall time of the experiment's newest run under --out, "
               + (f"else of its newest published run ({published_dir}), " if published_dir is not None else "")
               + "else the config's time limit; ? where none is known")]
    return "\n".join(lines)


def sweep_command(sweep: Sweep) -> str:
    """The `kernelbench sweep` command that runs a paper's sweep (for the --list matrix and the log):
    each value written as `--over` reads it back (YAML flow), text that YAML would read otherwise quoted."""
    def flow(value) -> str:
        if isinstance(value, str):
            return value if yaml.safe_load(f"[{value}]") == [value] else json.dumps(value, ensure_ascii=False)
        return yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1 << 16).strip() \
            .removesuffix("\n...")

    words = ["kernelbench", "sweep", *sweep.configs, *(["--processes"] if sweep.processes else [])]
    for key, values in sweep.over.items():
        words += ["--over", f"{key}={','.join(map(flow, values))}"]
    return shlex.join(words)


def paper_sweeps(paper: str, figure: str | None = None, sweeps=None) -> list[Sweep]:
    """The paper's sweeps (`sweeps`: those instead of the paper file's), of `figure` only when given."""
    found = [sweep for p, sweep in SWEEPS if p == paper] if sweeps is None else list(sweeps)
    return [sweep for sweep in found if figure in (None, sweep.figure)]


def sweep_plan(sweep: Sweep, configs_dir) -> Plan:
    """The plan of a paper's sweep: its configs (in configs_dir), points and processes, its runs
    tagged with the sweep's figure: a sweep varies what its configs hold fixed, so its runs must
    never be pooled with theirs (which carry the configs' own figure)."""
    given = sweep.over.get(FIGURE_KEY)
    if given is not None and list(given) != [sweep.figure]:
        raise ConfigError(f"sweep of {sweep.figure}: over {FIGURE_KEY}: {list(given)} but the sweep makes "
                          f"{sweep.figure}; write `{FIGURE_KEY}: [{sweep.figure}]` under the sweep's `over` "
                          "in the paper file")
    return Plan(configs=tuple(Path(configs_dir) / Path(c).name for c in sweep.configs),
                points={FIGURE_KEY: [sweep.figure], **{key: list(values) for key, values in sweep.over.items()}},
                processes=sweep.processes)


def reproduce(paper: str, *, configs_dir="configs", out_dir="results", time_limit: float | None = None,
              execution=None, quiet=False, echo=print, protocol: str | None = None, published_dir=None,
              figure: str | None = None, sweeps=None) -> dict:
    """Run the paper's runnable experiments not done yet (resuming unfinished ones) and its sweeps
    (their finished points kept), then render its figures and write its report section. Returns
    what happened to each config (and to each sweep's config: "<figure> sweep: <file>"). `protocol`:
    see the module docstring; `published_dir`: the published folder that estimates durations
    (matrix); `figure`: that figure's configs and sweeps only; `sweeps`: papers.Sweep objects run
    instead of the paper file's."""

    found = experiments(paper, configs_dir, out_dir, protocol=protocol, published_dir=published_dir, figure=figure)
    planned = paper_sweeps(paper, figure, sweeps)
    todo = [e for e in found if e.state in ("to run", "resume")]
    known = [e.estimate for e in todo if e.estimate is not None]
    estimate = (f"estimated {duration_text(sum(known))} for {len(known)} of them"
                + (f", {len(todo) - len(known)} without an estimate" if len(known) < len(todo) else "")
                if known else "no estimate yet: no earlier run under --out, none published, no time limit")
    echo(f"{paper}: {len(found)} configs; {sum(e.done for e in found)} done, {len(todo)} to run "
         f"({estimate}), {sum(e.missing is not None for e in found)} without their data; "
         f"{len(planned)} sweeps (their finished points kept)")
    for e in found:
        if e.missing:
            echo(f"  not run: {e.path.name}: {e.missing}")
    outcome = {e.path.name: e.state for e in found}
    deadline = time.monotonic() + time_limit if time_limit is not None else None
    command = ["kernelbench", "reproduce", paper, *(["--protocol", protocol] if protocol else [])]
    bar = tqdm(todo, desc=f"reproduce {paper}", unit="experiment", disable=quiet)
    for e in bar:
        if deadline is not None and time.monotonic() >= deadline:
            outcome[e.path.name] = TIME_SPENT
            continue
        bar.set_postfix_str(e.cfg.name)
        try:
            # a model-selection config: cross-validated search on the training part, the refit on the test part
            execute(Plan(configs=(e.path,), overrides=e.overrides, mode="grid" if e.selection else "run",
                         out_dir=out_dir, resume=e.previous is not None, execution=execution or Execution()),
                    quiet=True, command=command)
            outcome[e.path.name] = "ran"
        except KeyboardInterrupt:
            raise
        except KernelbenchError as error:          # one experiment's problem does not stop the rest
            outcome[e.path.name] = f"failed: {error}"
            echo(f"  {e.path.name}: {error}")
    bar.close()
    for sweep in planned:
        outcome.update(_run_paper_sweep(sweep, configs_dir, out_dir, deadline, command, echo))
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    figures = render_all(out_dir, Path(out_dir) / "figures", prefix=f"{paper}_")
    markdown, _ = build_report([out_dir], paper=paper)
    report = Path(out_dir) / f"report_{paper}.md"
    atomic_write_text(report, markdown)
    atomic_write_text(report.with_suffix(".html"), markdown_to_html(markdown))
    left = [name for name, state in outcome.items() if state.startswith(("left", "failed"))]
    echo(f"figures: {', '.join(str(p) for p in figures if p.suffix == '.png') or 'none with data yet'}")
    echo(f"report: {report}")
    if left:
        echo(f"not finished: {', '.join(left)} (run the same command again to continue)")
    return outcome


def _run_paper_sweep(sweep: Sweep, configs_dir, out_dir, deadline, run_command, echo) -> dict:
    """One sweep of a paper, config by config: {"<figure> sweep: <file>": what happened}."""
    figure = sweep.figure
    echo(f"  sweep ({figure}): {sweep_command(sweep)}")
    try:
        plan = replace(sweep_plan(sweep, configs_dir), out_dir=out_dir, resume=True, deadline=deadline)
    except KernelbenchError as error:
        echo(f"  sweep ({figure}): {error}")
        return {f"{figure} sweep": f"failed: {error}"}
    outcome = {}
    for config in plan.configs:
        key = f"{figure} sweep: {config.name}"
        if deadline is not None and time.monotonic() >= deadline:
            outcome[key] = TIME_SPENT
            continue
        try:
            missing = missing_data(load_config(config))
            if missing:
                outcome[key] = "no data"
                echo(f"  not run: {config.name} ({figure} sweep): {missing}")
                continue
            points = execute(replace(plan, configs=(config,)), quiet=True, command=run_command,
                             echo=lambda line: echo(f"    {line}"))
        except KeyboardInterrupt:
            raise
        except KernelbenchError as error:          # one config's problem does not stop the rest
            outcome[key] = f"failed: {error}"
            echo(f"  {key}: {error}")
            continue
        if deadline is not None and time.monotonic() >= deadline and not _line_complete(points, plan.points):
            outcome[key] = TIME_SPENT
        else:
            outcome[key] = "done" if points and all(p.kept for p in points) else "ran"
    return outcome


def _line_complete(points, over: dict) -> bool:
    """Whether a config's sweep reached its last point (or a point that ends its line)."""
    every = sweep_points({k: v for k, v in over.items() if k != PREDICT_SIZES})
    return bool(points) and (len(points) == len(every) or bool(points[-1].stopped))
