"""`kernelbench publish`: a paper's runs written as compacted copies into its published folder, the
superseded copies replaced, REPRODUCTION.md and the figures regenerated from that folder alone."""
from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from kernelbench._io import atomic_write_text, output_error, safe_name
from kernelbench._vocab import NO_CELL_FINISHED
from kernelbench.errors import ConfigError, KernelbenchError, OutputError
from kernelbench.figures import render_all
from kernelbench.papers import get_paper, paper_ids
from kernelbench.report import build_report, reproduction_files, rows_read
from kernelbench.results import (
    ABSENT_FILE,
    META_FILE,
    PUBLISHED_DIR,
    RESULTS_FILE,
    RunRecord,
    config_hash,
    final_rows,
    in_published_folder,
    read_results,
)

from .compact import MAX_POINTS, Source, checked_points, finished_cells, published_config, published_files, sources

PUBLISHED_MAX_BYTES = 16_000_000    # bytes under results/published plus REPRODUCTION.md (tests/publish/test_publish.py):
#   every paper's runs, their figures and Geng et al.'s 30 model-selection grids (a row per validated
#   cell, 0.1-0.25 MB a grid): 7.7 MB; the sweep panels' runs (Geng et al. Fig. 2: 90 points, Gu et al.
#   Fig. 1(g-h); about 7 KB a point, most of it run.json's provenance) and REPRODUCTION.md's claim
#   tables bring it to about 9.4 MB; Gu et al.'s Fig. 2 threads sweep adds a few dozen points more;
#   Geng et al.'s memory panel (45 points, one process each) and Glasmachers & Qaadan's runs on the
#   SUSY replica pass 10 MB; Li & Poczos' Table 3 runs at 3 trials (15 runs, up to 50 evaluations a
#   trial's curve) take 1.0 MB, 0.7 MB more than at one trial: 11.7 MB; 15 of Li & Poczos' runs at 10
#   trials (orderings 3 trials left within noise) and Geng et al.'s SUSY/HEPMASS sweeps at 3: 12.8 MB;
#   14 of Dai et al.'s runs at 10 trials: 13.5 MB; Geng et al.'s Fig. 2 sweeps on four sets at 10 trials
#   and their memory points at 10 seeds on two (1.5 MB), Glasmachers & Qaadan's BSGD runs at 10 trials
#   (0.4 MB): 15.4 MB


def _same_text(path: Path, text: str) -> bool:
    try:
        return path.is_file() and path.read_text(encoding="utf-8") == text
    except UnicodeDecodeError:
        return False
    except OSError as e:
        raise output_error("read", path, e) from e


def _write(folder: Path, files: dict[str, str]) -> bool:
    """Write the files into folder (atomically each); False when they were there already."""
    if all(_same_text(folder / name, text) for name, text in files.items()):
        return False
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise output_error("create the folder", folder, e) from e
    for name, text in files.items():
        atomic_write_text(folder / name, text)
    return True


def _paper_files(paper: str, runs: list[Source], max_points: int) -> dict[str, dict[str, str]]:
    """{run id: files} of a paper's runs, each with the rows its report reads."""
    frame = pd.concat([s.frame.assign(_run=i, _row=np.arange(len(s.frame))) for i, s in enumerate(runs)],
                      ignore_index=True)
    anchors = frame.loc[rows_read(frame.drop(columns=["_run", "_row"]), paper), ["_run", "_row"]]
    out = {}
    for i, s in enumerate(runs):
        keep = anchors.loc[anchors["_run"] == i, "_row"].tolist()
        out[s.path.name] = published_files(s, max_points, keep)
    return out


def _check_same_report(paper: str, runs: list[Source], files: dict[str, dict[str, str]]) -> None:
    """The paper's report from the compacted copies must be its report from the runs."""
    with tempfile.TemporaryDirectory(prefix="kernelbench-publish-") as staging:
        for run_id, texts in files.items():
            folder = Path(staging) / run_id
            try:
                folder.mkdir()
                for name, text in texts.items():
                    (folder / name).write_text(text, encoding="utf-8")
            except OSError as e:
                raise output_error("write the copies to compare into", folder, e) from e
        got, _ = build_report([staging], paper=paper)
    expected, _ = build_report([s.path for s in runs], paper=paper)
    if got != expected:
        lines = [(a, b) for a, b in zip(expected.splitlines(), got.splitlines()) if a != b]
        first = f": the runs give\n  {lines[0][0]}\nthe copies\n  {lines[0][1]}" if lines else ""
        raise KernelbenchError(f"publishing {paper} would change its report{first}\nthis is a kernelbench bug (please "
                               f"report it); `kernelbench publish {paper} --points 0` publishes every row meanwhile")


def absent_data_text(absent: dict | None, not_run: dict | None = None) -> str | None:
    """The ABSENT_FILE text of {dataset: the command that gets it} and {config file: its state} of
    the runnable experiments not run: "" when nothing is absent (the file is removed), None when
    unknown (kept as it is)."""
    if absent is None and not_run is None:
        return None
    record = {key: dict(sorted(found.items())) for key, found in (("datasets", absent), ("experiments", not_run))
              if found}
    return json.dumps(record, indent=1) + "\n" if record else ""


def _keep_attempts(path: Path, not_run: dict) -> dict:
    """not_run, where an experiment this machine has no run of ("not run") keeps the earlier record
    that its run finished no cell: that record is a measurement (e.g. a solver's size limit), which a
    publication of other runs must not erase; --prune starts the record afresh."""
    try:
        earlier = json.loads(path.read_text(encoding="utf-8")).get("experiments", {}) if path.is_file() else {}
    except (OSError, ValueError, AttributeError):
        earlier = {}
    return {name: (earlier[name] if state.startswith("not run") and str(earlier.get(name, "")).startswith(NO_CELL_FINISHED)
                   else state) for name, state in not_run.items()}


def _write_absent(path: Path, text: str | None) -> None:
    """ABSENT_FILE as absent_data_text gives it: removed when nothing is absent, kept when unknown."""
    try:
        if text == "":
            path.unlink(missing_ok=True)
        elif text is not None and not _same_text(path, text):
            atomic_write_text(path, text)
    except OSError as e:
        raise output_error("write", path, e) from e


def publish(paper: str | None = None, *, results_dir="results", out_dir=f"results/{PUBLISHED_DIR}",
            max_points: int = MAX_POINTS, prune: bool = False, reproduction="REPRODUCTION.md",
            absent_data=None, not_run=None, figures_dir=None, echo=print) -> dict:
    """Publish the runs of `paper` (every paper with runs, for None) found under results_dir into
    out_dir/<paper>/, with the data its configs need and this machine lacks (`absent_data(paper)`:
    {dataset: the command that gets it}, reproduce.absent_data; None: not recorded) and its runnable
    experiments without a finished run (`not_run(paper)`: {config file: state}, reproduce.not_run),
    then regenerate `reproduction` (None: not) and the papers'
    figures (PNG, into figures_dir; None: not) from out_dir alone. A published
    copy of the same experiment and config hash as a run published now is replaced (removed); the
    others not under results_dir are kept unless `prune`. Returns {paper: {"written": [...],
    "unchanged": [...], "replaced": [...], "kept": [...], "pruned": [...], "left out": [...]}} by run id
    ("left out": the runs, and published copies, that finished no cell)."""
    checked_points(max_points)
    if paper is not None:
        get_paper(paper)                       # an unknown id: a ConfigError naming the papers
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    _check_folders(results_dir, out_dir)
    found = sources(results_dir)
    papers = [paper] if paper is not None else [p for p in paper_ids() if p in found]
    if not any(found.get(p) for p in papers):
        what = paper or "any paper"
        raise KernelbenchError(f"no run of {what} under {results_dir} (runs of configs tagged with the paper, "
                               f"not smoke runs); run `kernelbench reproduce {paper or 'PAPER'}` first, or pass "
                               "the folder that holds them with --results")
    outcome = {}
    for p in papers:
        runs = found.get(p, [])
        if not runs:
            continue
        outcome[p] = _publish_paper(p, runs, results_dir, out_dir, max_points=max_points, prune=prune,
                                    absent_data=absent_data, not_run=not_run, echo=echo)
    # the figures first: the report shows those beside the published runs
    if figures_dir is not None:
        drawn = [path for p in outcome for path in render_all(out_dir, figures_dir, prefix=f"{p}_", formats=("png",), palette=True)]
        echo(f"figures: {len(drawn)} drawn from {out_dir} into {figures_dir}")
    if reproduction is not None:
        pages = reproduction_files(out_dir, reproduction)
        for path, text in pages.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, text)
        echo(f"{reproduction} and {len(pages) - 1} detail page(s): regenerated from {out_dir}")
    files = [f for f in out_dir.rglob("*") if f.is_file()] + ([Path(reproduction)] if reproduction is not None else [])
    too_large = over_size_limit(files)
    if too_large:
        echo(f"warning: {too_large}")
    return outcome


def _check_folders(results_dir: Path, out_dir: Path) -> None:
    """The runs to publish are a folder of run folders, and the published folder is not read as runs."""
    if not results_dir.is_dir():
        raise KernelbenchError(f"results folder {results_dir} does not exist; pass the folder that holds your "
                               "run folders with --results (default: results/)")
    if out_dir.resolve() == results_dir.resolve() or out_dir.resolve() in results_dir.resolve().parents:
        raise ConfigError(f"--results {results_dir} is inside the published folder --out {out_dir}: the runs to "
                          f"publish are the run folders (default --results results, --out results/{PUBLISHED_DIR})")
    if results_dir.resolve() in out_dir.resolve().parents and not in_published_folder(out_dir, results_dir):
        raise ConfigError(f"--out {out_dir} is inside --results {results_dir} but not in a folder named "
                          f"`{PUBLISHED_DIR}`: the readers of {results_dir} (report, figures, publish) would count "
                          f"its copies as runs, each twice; use --out {results_dir / PUBLISHED_DIR} or a folder "
                          f"outside {results_dir}")


def _publish_paper(paper: str, runs: list[Source], results_dir: Path, out_dir: Path, *, max_points: int,
                   prune: bool, absent_data, not_run, echo) -> dict:
    """Write one paper's copies (its report unchanged by them), replace or prune the older ones, and
    say what was done (the lists publish returns for the paper). A run that finished no cell
    (finished_cells) is left out, and so is a published copy of one."""
    done = {"written": [], "unchanged": [], "replaced": [], "kept": [], "pruned": [],
            "left out": sorted(s.path.name for s in runs if not finished_cells(s.frame))}
    runs = [s for s in runs if finished_cells(s.frame)]
    files = _paper_files(paper, runs, max_points) if runs else {}
    _check_same_report(paper, runs, files)
    for run_id, texts in sorted(files.items()):
        done["written" if _write(out_dir / paper / run_id, texts) else "unchanged"].append(run_id)
    unrun = not_run(paper) if not_run else None
    if unrun and not prune:
        unrun = _keep_attempts(out_dir / paper / ABSENT_FILE, unrun)
    _write_absent(out_dir / paper / ABSENT_FILE, absent_data_text(absent_data(paper) if absent_data else None, unrun))
    published_now = {_setting_of(json.loads(texts[META_FILE])) for texts in files.values()} - {None}
    for folder in _published_folders(out_dir / paper, leave_out=files):
        superseded = _setting_of(folder) in published_now
        no_result = (folder / RESULTS_FILE).is_file() and not finished_cells(read_results(folder))
        if superseded or prune or no_result:
            try:
                shutil.rmtree(folder)
            except OSError as e:
                raise output_error("remove", folder, e) from e
        done["replaced" if superseded else "left out" if no_result else "pruned" if prune else "kept"].append(
            folder.name)
    unfinished = sorted(s.path.name for s in runs if s.record.status != "finished")
    echo(f"{paper}: {len(files)} runs published to {out_dir / paper} ({len(done['written'])} written, "
         f"{len(done['unchanged'])} unchanged)")
    if unfinished:
        echo(f"  not finished (their finished cells are published): {', '.join(unfinished)}; "
             f"`kernelbench reproduce {paper}` finishes them")
    if done["replaced"]:
        echo(f"  replaced {len(done['replaced'])} published runs of the same experiment and config: "
             f"{', '.join(done['replaced'])}")
    if done["kept"]:
        echo(f"  kept {len(done['kept'])} published runs not under {results_dir} (--prune removes them): "
             f"{', '.join(done['kept'])}")
    if done["pruned"]:
        echo(f"  removed {len(done['pruned'])} published runs not under {results_dir}")
    if done["left out"]:
        echo(f"  left out {len(done['left out'])} runs that finished no cell (every cell skipped or failed; "
             f"published copies of such runs removed): {', '.join(done['left out'])}")
    return done


def _published_folders(folder: Path, leave_out=()) -> list[Path]:
    """The published run folders in a paper's folder, but those named in leave_out."""
    try:
        return sorted(f for f in folder.iterdir() if f.is_dir() and f.name not in leave_out
                      and ((f / RESULTS_FILE).exists() or (f / META_FILE).exists()))
    except OSError as e:
        raise output_error("list", folder, e) from e


def _setting_of(run) -> tuple | None:
    """(experiment, config hash) of a published run (its folder, or its run.json as a dict): runs
    with the same one are runs of the same settings. None when its run.json has no config."""
    if isinstance(run, Path):
        try:
            run = RunRecord.load(run).to_dict()
        except OutputError:
            return None
    config = run.get("config")
    if not isinstance(config, dict):
        return None
    return run.get("experiment") or "", run.get("config_hash") or config_hash(published_config(config))


def over_size_limit(files, max_bytes: int = PUBLISHED_MAX_BYTES) -> str | None:
    """Why these files are too large to commit (their total over `max_bytes`, naming the largest),
    or None when they are not."""
    sizes = []
    for f in map(Path, files):
        try:
            if f.is_file():
                sizes.append((f.stat().st_size, str(f)))
        except OSError as e:
            raise output_error("read", f, e) from e
    sizes.sort(reverse=True)
    total = sum(size for size, _ in sizes)
    if total <= max_bytes:
        return None
    largest = ", ".join(f"{name} ({size / 1e6:.2f} MB)" for size, name in sizes[:5])
    return (f"the published results take {total / 1e6:.2f} MB, over the budget of {max_bytes / 1e6:.2f} MB; the "
            f"largest: {largest}; publish them with fewer --points, or remove superseded runs (--prune)")


def published_seconds(published_dir, experiment: str, config: dict | None = None) -> float | None:
    """How long the newest published run of `experiment` took (of this resolved config when one is
    published, else of any): its wall time when it ran in one go, else the sum of its cells' final
    training seconds (a resumed run's wall time counts the time it lay stopped). None: none published."""
    wanted = config_hash(published_config(config)) if isinstance(config, dict) else None
    runs = []
    for path in sorted(Path(published_dir).glob(f"*/{safe_name(experiment)}-*"), key=lambda p: p.name, reverse=True):
        try:
            record = RunRecord.load(path)
        except OutputError:
            continue
        if record.experiment == experiment:
            runs.append((path, record))
    same = [(p, r) for p, r in runs if wanted is not None and isinstance(r.config, dict)
            and config_hash(published_config(r.config)) == wanted]
    for path, record in same or runs:
        if record.status == "finished" and not record.resumed and record.duration_seconds:
            return float(record.duration_seconds)
        try:
            trained = final_rows(read_results(path), folds=True)["train_seconds"].astype(float).sum()
        except OutputError:
            continue
        if trained > 0:
            return float(trained)
    return None
