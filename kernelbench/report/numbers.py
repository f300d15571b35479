"""The numbers table: each published number of the papers' files (kernelbench/papers) next to
ours, with its status. (The papers' conclusions, their claims, are kernelbench.report.verdicts'.)

"Ours" is the mean ± std over the finished cells (last row of each trial, test split, status ok)
of every results.csv found, of the runs tagged with the entry's paper (and figure or table, where
the entry names one), matching the entry's dataset, algorithm and parameters; the row names those
runs' folders. Runs whose resolved settings differ (parameters, data, stop rule) are never pooled
into one number: the row says which experiments collide and on what (`pooling_conflict`).

Every number gets a status by measurement alone: reproduced (ours within the entry's tolerance of
the published value, or on the stated side of a bound), differs, not run, or not reproducible here
(the entry's `needs`: what it would take, e.g. a neural-net comparator). A known explanation of a
difference (the entry's `known_difference`) is shown beside a row that differs, never as its
verdict; a row on stand-in data (the entry's `stand_in`) says so in its verdict. A run on a
synthetic replica of its data set (`kernelbench datasets synth`) is never read here: a printed number
is about the paper's data; an entry run only on a replica says "no data here", naming the replica.

The metrics an entry may name are the measures of kernelbench.measures (read by .reading).
"""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd

from kernelbench.data.fetch import fetch_command
from kernelbench.errors import OutputError
from kernelbench.measures import measure
from kernelbench.papers import Paper, Published, load_papers
from kernelbench.results import RunRecord, collect_results, final_rows, resolved_text, run_folders, tagged

from .reading import time_saved, trial_values

INTRO = ("Values in percent (WD factors as ratios, test_mae in the target's unit, train_seconds in "
         "seconds). Ours: mean ± std over finished trials (n) of the runs tagged for the entry (their "
         "folders listed), never of runs whose parameters, data or stop rule differ; time "
         "improvements compare mean training times of the same data and budget. Status: reproduced "
         "when ours lies within the tolerance of the published value (1 point of error, or twice the "
         "published std; 10 % of an MAE; 0.01 of a WD factor; 10 points of a share or time gain, or half "
         "the published value when that is smaller), or on the stated side of a bound; timings of the "
         "authors' machines are shown, not judged. A row on stand-in data says so in its verdict.")
def report_papers(paper: str | None = None) -> list[Paper]:
    """The papers a report covers (all, or the one with this id; none for an unknown id), in the
    report's order: by id, alphabetically."""
    return [p for paper_id, p in sorted(load_papers().items()) if paper is None or paper_id == paper]


def tolerance(entry: Published) -> float | None:
    """How far ours may lie from the published value and still count as reproduced: 1 point of
    error / accuracy (or twice the published std, when larger: Glasmachers & Qaadan's Table 2 has
    stds up to 3.9), 10 % of an MAE, 0.01 of a WD factor, 10 points of a share or time gain or half
    the published value, whichever is smaller; an entry may set its own."""
    if entry.tolerance != "default":
        return entry.tolerance
    read = measure(entry.metric)[0].read
    if read in ("percent", "accuracy", "at_time"):
        return max(1.0, 2 * entry.std) if entry.std else 1.0
    if entry.metric == "test_mae":
        return 0.1 * abs(entry.value)
    if read == "counter":
        return 0.01
    if read in ("counter%", "share", "gain"):
        # Shares and gains depend on the machine, so their size is what is compared, loosely: 10
        # points. A fixed 10 points would accept 13 % for a published 3 % (four times as large), so a
        # small value may lie at most half its own size away: the same order of magnitude.
        return min(10.0, 0.5 * abs(entry.value))
    return None


def select_rows(rows: pd.DataFrame, paper: str, dataset: str, algorithm: str, params: dict | None = None,
                figure: str | None = None, panel: str | None = None) -> pd.DataFrame:
    """The rows of one method's runs: its paper's (and figure's, panel's) tags, the dataset, the
    algorithm, and rows whose params carry every one of `params`."""
    tags = {k: v for k, v in (("figure", figure), ("panel", panel)) if v}
    rows = tagged(rows, paper=paper, **tags)
    if not len(rows):
        return rows
    rows = rows[(rows["dataset"] == dataset) & (rows["algorithm"] == algorithm)]
    if params and len(rows):
        keep = rows["params"].map(lambda p: all(json.loads(p).get(k) == v for k, v in params.items()))
        rows = rows[keep]
    return rows


def _matches(rows: pd.DataFrame, entry: Published) -> pd.DataFrame:
    """The rows of `entry`'s runs: its paper's (and figure's) tags, dataset, algorithm, params."""
    return select_rows(rows, entry.paper, entry.dataset, entry.algorithm, entry.params, entry.figure, entry.panel)


def _values(rows: pd.DataFrame, metric: str, final: pd.DataFrame | None = None,
            entry: Published | None = None, curves: pd.DataFrame | None = None) -> np.ndarray:
    """The numbers `metric` gives on an entry's final rows (`rows`): per trial (reading.trial_values;
    a gain: reading.time_saved against GSS-standard's rows of the same data and budget). `final`
    (every final row) and `curves` (every ok row) are read by the gains and at_seconds."""
    found, _ = measure(metric)
    if found.read == "gain":
        return time_saved(found, rows, _matches(final, replace(entry, params={**entry.params, "merge": "gss"})))
    if found.read == "at_time":     # per trial: the last evaluation within s training seconds
        name = metric.split(":")[1]
        return np.asarray([100.0 * float(curves.loc[i, name]) for i in _at_seconds_picks(final, curves, entry, rows)],
                          dtype=float)
    return trial_values(rows, metric)


def _at_seconds_limit(final: pd.DataFrame, entry: Published, seconds: str) -> float | None:
    """The s of at_seconds:<error>:<s>: a number, or for "libsvm" the mean training seconds of the
    LIBSVM run with the entry's tags and dataset (None when there is none)."""
    if seconds != "libsvm":
        return float(seconds)
    exact = _matches(final, replace(entry, algorithm="libsvm", params={}))
    return float(exact["train_seconds"].astype(float).mean()) if len(exact) else None


def at_seconds_rows(curves: pd.DataFrame, name: str, seconds: float, *, stopped_early_counts: bool = False) -> list:
    """Per trial (run, trial), the index of its last evaluation of `name` within `seconds` training
    seconds; a trial stopped before `seconds` says nothing (a published "after s seconds" number is
    about training that long), unless `stopped_early_counts` (a claim's "within s seconds": a trial
    that finished sooner stands at its last evaluation)."""
    chosen = []
    for _, trial in curves.groupby(["run_id", "trial"]):
        trained = trial["train_seconds"].astype(float)
        within = trial[(trained <= seconds) & trial[name].notna()]
        if len(within) and (stopped_early_counts or trained.max() >= seconds):
            chosen.append(within.sort_values("train_seconds").index[-1])
    return chosen


def _at_seconds_picks(final: pd.DataFrame, curves: pd.DataFrame, entry: Published, rows: pd.DataFrame) -> list:
    """The curve rows (index labels of `curves`) an at_seconds:<error>:<s> entry reads: per trial of
    the runs of `rows` (the entry's final rows), its last evaluation within s seconds
    (at_seconds_rows); none when s is unknown (no LIBSVM run to take it from)."""
    _, name, seconds = entry.metric.split(":")
    limit = _at_seconds_limit(final, entry, seconds)
    if limit is None or not len(rows):
        return []
    trial_curves = _matches(curves, entry)
    return at_seconds_rows(trial_curves[trial_curves["run_id"].isin(set(rows["run_id"]))], name, limit)


def replicas(rows: pd.DataFrame) -> list[str]:
    """The synthetic replicas (run_frame's `replica`) that these rows' runs read in place of their
    data set, in words; [] when every row is of a data set itself."""
    return sorted(set(rows.loc[on_replica(rows), "replica"].astype(str)))


def on_replica(df: pd.DataFrame) -> pd.Series:
    """Which rows come from a run on a synthetic replica of its data set (run_frame's `replica`). Such
    a run answers claims (on stand-in data) but is never compared with a paper's printed numbers,
    which are about its data."""
    if "replica" not in df:
        return pd.Series(False, index=df.index, dtype=bool)
    return df["replica"].fillna("").astype(str) != ""


def final_and_curves(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows the report reads: the finished cells' final rows, and every ok row (curves)."""
    final = final_rows(df, statuses=("ok",), old_runs=True)
    curves = df[df["status"].fillna("ok") == "ok"] if len(df) and "status" in df else df
    return final, curves


def rows_read(df: pd.DataFrame, paper: str | None = None) -> list:
    """The index labels of the curve rows, beyond the final ones, that a number of the report is
    read from: per trial, the evaluation an at_seconds number picks. kernelbench.publish keeps them
    when it thins curves, so that the published runs give the report their originals give."""
    final, curves = final_and_curves(df[~on_replica(df)])
    chosen = []
    for e in (e for p in report_papers(paper) for e in p.published if measure(e.metric)[0].read == "at_time"):
        rows = _entry_rows(final, e)
        if len(rows) and not pooling_conflict(rows):
            chosen += _at_seconds_picks(final, curves, e, rows)
    return sorted(set(chosen))


def _entry_rows(final: pd.DataFrame, entry: Published) -> pd.DataFrame:
    """The final rows an entry's number is read from (a gain: those of its merge method)."""
    if not len(final):
        return final
    found, merge = measure(entry.metric)
    if found.read == "gain":
        return _matches(final, replace(entry, params={**entry.params, "merge": merge}))
    return _matches(final, entry)


def _setting(params: str, config: str) -> str:
    """What a number measures, beyond the entry's own filter: the resolved algorithm parameters and
    the run's data, stop rule and protocol (from its run.json; seeds and trial counts may differ):
    a `protocol: paper` test error (scored on unlabeled folds) is not a held-out one."""
    setting = {"params": json.loads(params) if params else {}}
    if config:
        resolved = json.loads(config)
        protocol = resolved.get("protocol", "held-out")        # absent: held-out (config_to_dict)
        setting.update(dataset=resolved.get("dataset"), stop=resolved.get("stop"),
                       run={"protocol": protocol, "cv": resolved.get("cv") if protocol == "paper" else None})
    return json.dumps(setting, sort_keys=True)


def setting_differences(rows: pd.DataFrame) -> tuple[list, list] | None:
    """What differs between the settings (_setting) of the runs these rows come from: (the dotted
    keys that differ, e.g. "stop.passes", the experiments of each setting); None for one setting."""
    if rows.empty:
        return None
    configs = rows["config"] if "config" in rows else pd.Series([""] * len(rows), index=rows.index)
    settings = pd.Series([_setting(p, c) for p, c in zip(rows["params"], configs)], index=rows.index)
    if settings.nunique() < 2:
        return None
    parsed = [json.loads(s) for s in settings.unique()]
    flat = [{f"{part}.{k}": v for part, values in s.items() for k, v in (values or {}).items()} for s in parsed]
    differ = sorted(k for k in set().union(*flat) if len({json.dumps(f.get(k)) for f in flat}) > 1)
    groups = [", ".join(sorted(set(rows.loc[settings == s, "experiment"]))) for s in settings.unique()]
    return differ, groups


def pooling_conflict(rows: pd.DataFrame) -> str | None:
    """Why these rows must not be pooled into one number (None when they may): they come from runs
    whose resolved settings differ, e.g. two configs tagged for the same panel with other losses.
    The message names each setting's experiments and what differs."""
    found = setting_differences(rows)
    if found is None:
        return None
    differ, groups = found
    return (f"not pooled: {len(groups)} settings differ in {', '.join(differ)} ({' | '.join(groups)}); "
            "report one of them (kernelbench report <run folder>) or tag them apart")


def machine_text(machine: dict | None) -> str:
    machine = machine or {}
    return f"{machine.get('processor') or machine.get('platform', '?')}, {machine.get('cpu_count', '?')} CPUs"


def _machines(folders) -> list[str]:
    seen = []
    for folder in folders:
        try:
            text = machine_text(RunRecord.load(folder).machine)
        except OutputError:
            continue
        if text not in seen:
            seen.append(text)
    return seen


def results_frame(results_dirs) -> pd.DataFrame:
    """Every row of the runs below `results_dirs` (collect_results), one frame."""
    frames = [collect_results(d) for d in results_dirs]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def build_numbers(results_dirs, *, paper: str | None = None,
                  df: pd.DataFrame | None = None) -> tuple[str, list[dict]]:
    """(markdown, table rows) for every published number (of one paper: its id, e.g. "gu2018"),
    ours where results exist; `df`: the rows of `results_dirs` when already read (results_frame)."""
    papers = report_papers(paper)
    entries = [e for p in papers for e in p.published]
    names = {p.id: p.name for p in papers}
    df = results_frame(results_dirs) if df is None else df
    folder_of = {p.name: p for d in results_dirs for p in run_folders(d)}
    # smoke runs are already left out by collect_results
    replica_rows = on_replica(df)
    real, on_replicas = df[~replica_rows], df[replica_rows]
    final, curves = final_and_curves(real)
    table = []
    for e in entries:
        rows = _entry_rows(final, e)
        # run here only on a replica: said, so that "not run" never hides it (and it is never ours)
        replica = ("; ".join(replicas(_entry_rows(on_replicas, e)))
                   if not len(rows) and len(on_replicas) and not len(_entry_rows(real, e)) else "")
        conflict = pooling_conflict(rows) if len(rows) else None
        values = _values(rows, e.metric, final, e, curves) if len(rows) and not conflict else np.array([])
        ours = (float(values.mean()), float(values.std()), len(values)) if len(values) else None
        runs = sorted(set(rows["run_id"])) if len(rows) else []
        machines = _machines(folder_of[r] for r in runs if r in folder_of) if ours else []
        table.append({"paper": names[e.paper], "where": e.where, "dataset": e.dataset, "algorithm": e.algorithm,
                      "params": e.params, "metric": e.metric, "published": e.value, "published_std": e.std,
                      "ours": ours, "difference": (ours[0] - e.value) if ours else None,
                      "runs": runs, "conflict": conflict, "machines": machines, "note": e.note,
                      "resolved": resolved_text(rows["resolved"]) if len(rows) and "resolved" in rows else "",
                      "needs": e.needs, "known_difference": e.known_difference, "stand_in": e.stand_in,
                      "replica": replica,
                      "status": number_status(e, ours, conflict)})
    lines = ["# kernelbench: our numbers next to the papers'", "", INTRO, ""]
    for paper_entry in (p for p in papers if p.published):
        name = paper_entry.name
        mine = [r for r in table if r["paper"] == name]
        lines += [f"## {name}", "", numbers_sentence(mine) + ".", "",
                  "| where | dataset | algorithm | params | resolved | metric | published | ours (n) | difference | status | runs | measured on |",
                  "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in mine:
            published = f"{r['published']:.3f}" + (f" ± {r['published_std']:.3f}" if r["published_std"] is not None else "")
            ours = (f"{r['ours'][0]:.3f} ± {r['ours'][1]:.3f} ({r['ours'][2]})" if r["ours"]
                    else r["conflict"] or "")
            diff = f"{r['difference']:+.3f}" if r["difference"] is not None else ""
            params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
            lines.append(f"| {r['where']} | {r['dataset']}{' (' + r['note'] + ')' if r['note'] else ''} | "
                         f"{r['algorithm']} | {params} | {r['resolved']} | {r['metric']} | {published} | {ours} | "
                         f"{diff} | {verdict_and_reason(r)[0]} | {', '.join(r['runs'])} | {'; '.join(r['machines'])} |")
        lines += ["", *([paper_entry.not_tabulated, ""] if paper_entry.not_tabulated else [])]
    for p in papers:
        if p.not_tabulated and not p.published:     # a paper with a table says it under its own heading
            lines += [f"## {p.name}", "", p.not_tabulated, ""]
    return "\n".join(lines), table


def numbers_sentence(rows: list[dict]) -> str:
    """"13 published numbers: 3 reproduced, 3 not run, ...": a paper's build_numbers rows by verdict."""
    counts: dict[str, int] = {}
    for r in rows:
        key = verdict_and_reason(r)[0]
        counts[key] = counts.get(key, 0) + 1
    return f"{len(rows)} published numbers: " + ", ".join(f"{n} {k}" for k, n in counts.items())


def number_status(entry: Published, ours, conflict) -> str:
    """reproduced / differs (by measurement alone) / not run / not pooled / not reproducible here:
    needs …, or measured (not judged) for an entry without a tolerance."""
    if entry.needs:
        return f"not reproducible here: needs {entry.needs}"
    if conflict:
        return "not pooled"
    if ours is None:
        return "not run"
    allowed = tolerance(entry)
    if allowed is None:
        return "measured (not judged: another machine's time)"
    mean = ours[0]
    if entry.bound == "max":
        ok, stated = mean <= entry.value + allowed, f"≤ {entry.value:g}"
    elif entry.bound == "min":
        ok, stated = mean >= entry.value - allowed, f"≥ {entry.value:g}"
    else:
        ok, stated = abs(mean - entry.value) <= allowed, f"within ±{allowed:g}"
    return f"{'reproduced' if ok else 'differs'} ({stated})"


STAND_IN = " on stand-in data"
# "no data here": the machine that published had no copy of the data (whatever else the row needs)
VERDICTS = ("reproduced", f"reproduced{STAND_IN}", "differs", f"differs{STAND_IN}", "measured", "not pooled",
            "not run", "no data here", "not reproducible here")


def verdict_and_reason(row: dict, absent: dict | None = None) -> tuple[str, str]:
    """A build_numbers row's status split into the verdict and why, in words. `absent`: {dataset:
    how to get it} of the data the publishing machine did not have (publish.absent_data): missing
    data is named before any missing feature, as it is the first thing a reproduction lacks; an
    entry run here only on a synthetic replica of its data (the row's `replica`) says so."""
    status = row["status"]
    also = f"; it would also need {row['needs']}" if row.get("needs") else ""
    if row.get("ours") is None and row.get("replica"):
        get = (absent or {}).get(row["dataset"]) or fetch_command(row["dataset"])
        return "no data here", (f"only a {row['replica']} was run here, which answers claims but never the "
                                f"paper's numbers; the real data: {get}{also}")
    if absent and row.get("ours") is None and row["dataset"] in absent:
        return "no data here", f"the publishing machine had no copy: {absent[row['dataset']]}{also}"
    if status.startswith("not reproducible here"):
        return "not reproducible here", status.partition(": ")[2]
    if status == "not pooled":
        return "not pooled", row["conflict"] or ""
    if status == "not run":
        return "not run", "no published run of this dataset, algorithm and tags"
    if status.startswith("measured"):
        return "measured", "another machine's time: shown, not judged"
    verdict, _, stated = status.partition(" (")
    reason = f"difference {row['difference']:+.3f}; reproduced when {stated.rstrip(')')}"
    if row.get("stand_in"):
        verdict += STAND_IN
        reason += f"; stand-in: {row['stand_in']}"
    if verdict.startswith("differs") and row.get("known_difference"):
        reason += f"; known explanation: {row['known_difference']}"
    return verdict, reason
