"""REPRODUCTION.md, computed from the published runs alone (a published folder, by default
results/published: kernelbench.publish): per paper the verdict of each claim (a conclusion the paper
draws from an experiment) with its measurement, every published number next to ours with its
verdict and reason, and the runs' provenance."""
from __future__ import annotations

import json
from pathlib import Path

import kernelbench
from kernelbench._vocab import NO_CELL_FINISHED
from kernelbench.config import duration_text
from kernelbench.errors import OutputError
from kernelbench.results import ABSENT_FILE, RunRecord, config_hash, final_rows, read_results, run_folders

from .numbers import INTRO, VERDICTS, build_numbers, machine_text, report_papers, results_frame, verdict_and_reason
from .noise import RULE as NOISE_RULE
from .verdicts import FLOOR_POINTS, LATE_FACTOR, STAND_IN, TESTED, claims_table, judge_paper, table_cell

REPO = Path(kernelbench.__file__).resolve().parent.parent


def _shown(path) -> str:
    """A path as REPRODUCTION.md names it: relative to the repository when inside it (the same text
    from any working folder), else as given."""
    try:
        return Path(path).resolve().relative_to(REPO).as_posix()
    except ValueError:
        return Path(path).as_posix()


def reproduction_command(published_dir="results/published", target="REPRODUCTION.md") -> str:
    """The command that regenerates `target` from the published runs in `published_dir`."""
    return f"kernelbench report --from {_shown(published_dir)} --out {_shown(target)}"


def _absent_record(published_dir, paper_id: str) -> dict:
    path = Path(published_dir) / paper_id / ABSENT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise OutputError(f"cannot read {path}: {e}; `kernelbench publish {paper_id}` writes it again") from e
    return data if isinstance(data, dict) else {}


def absent_data(published_dir, paper_id: str) -> dict:
    """{dataset: the command that gets it} of the data the machine that published the paper's runs
    had no copy of (kernelbench publish writes it); {} when none is recorded."""
    return dict(_absent_record(published_dir, paper_id).get("datasets") or {})


def not_run_experiments(published_dir, paper_id: str) -> dict:
    """{config file: its state} of the paper's experiments the publishing machine could run but
    published no finished run of (kernelbench publish writes it); {} when none is recorded."""
    return dict(_absent_record(published_dir, paper_id).get("experiments") or {})


def shortened(record: RunRecord) -> str | None:
    """How the run's config departs from its paper's protocol to fit a budget (config `shortened`)."""
    return (record.config or {}).get("shortened")


def _run_line(folder: Path, record: RunRecord) -> str:
    """One published run as a row of REPRODUCTION.md's run table: what it measured and where."""
    rows = read_results(folder)
    final = final_rows(rows, old_runs=True)
    ok = final[final["status"] == "ok"]
    measured = ""
    for metric in ("test_error", "test_mae", "test_mse", "train_error", "objective"):
        values = ok[metric].astype(float).dropna()
        if len(values):
            low, high = values.min(), values.max()
            measured = f"{metric} {low:.4g}" + (f" – {high:.4g}" if high != low else "")
            break
    versions = record.versions or {}
    commit = (record.git_commit or "?")[:10] + (" (dirty)" if record.git_dirty else "")
    digest = record.extra.get("config_hash") or (config_hash(record.config) if record.config else "?")
    cells = [", ".join(sorted(set(rows[c]) - {""})) for c in ("dataset", "algorithm")]
    # a registry set read from a synthetic replica is named as the replica (which names the set), so
    # that a run on it is never read as one on the published data
    cells[0] = record.replica or cells[0]
    status = record.status + (" (shortened: below)" if shortened(record) else "")
    return (f"| {record.run_id} | {status} | {cells[0]} | {cells[1]} | {len(ok)} of {len(final)} | "
            f"{measured} | {duration_text(record.duration_seconds, '')} | {commit} | {digest[:12]} | "
            f"{machine_text(record.machine)} | python {versions.get('python', '?')}, "
            f"kernelbench {versions.get('kernelbench', '?')}, numpy {versions.get('numpy', '?')}, "
            f"scikit-learn {versions.get('scikit-learn', '?')} |")


CLAIMS_INTRO = ("Claims: each conclusion a paper draws from an experiment, tested as stated in its paper file "
                "before any run, on the finished trials of the paper's published runs of each set (at a training "
                "time: each trial's last evaluation by then). "
                f"The noise rule: {NOISE_RULE}. A set where a compared difference is within noise is within noise; "
                "a method with no model yet at the time is behind only while its first model comes later than "
                f"{LATE_FACTOR:g}× that time (sooner, the two tie in time). "
                "A set without a finished run of every compared method, or run below the size the claim speaks "
                "of, is untested; one whose test misses only between methods that both sit at the constant "
                f"classifier's test error (within {FLOOR_POINTS:g} points) or both make no test error is not "
                "comparable (an ordering between classifiers that learned nothing means nothing). "
                "The verdict is decided on the paper's own sets; stand-ins are reported beside them, and only a "
                "claim tested on stand-ins alone reads \"on stand-in data\". \"all\" holds when every tested set "
                "holds and does not hold when one does not; \"most\" holds on more than half and does not hold "
                "when even the sets within noise could not make a majority; otherwise the claim is within noise. "
                "A claim with no tested set is not testable here.")


def _claim_counts(verdicts) -> str:
    """"N claims — X hold, Y do not hold, Z within noise, S on stand-in data only (…), W not testable here"."""
    kinds = [v.verdict for v in verdicts]
    if not kinds:
        return "no claims recorded yet"
    on_stand_in = [k for k in kinds if k.endswith(STAND_IN)]
    own = ", ".join(f"{kinds.count(o)} {w}" for o, w in zip(TESTED, ("hold", "do not hold", "within noise")))
    text = f"{len(kinds)} claim{'' if len(kinds) == 1 else 's'} — {own}, {len(on_stand_in)} on stand-in data only"
    if on_stand_in:
        text += " (" + ", ".join(f"{on_stand_in.count(o + STAND_IN)} {w}" for o, w in
                                 zip(TESTED, ("hold", "do not", "within noise"))) + ")"
    return text + f", {kinds.count('not testable here')} not testable here"


def _number_counts(counts: dict) -> str:
    total = sum(counts.values())
    return (f"{total} published number{'' if total == 1 else 's'}"
            + (" — " + ", ".join(f"{n} {v}" for v, n in counts.items() if n) if total else ""))


def reproduction_markdown(published_dir, target="REPRODUCTION.md") -> str:
    """REPRODUCTION.md (written to `target`, which its header names): per paper a summary line (its
    claims' and numbers' verdicts), the claims' table (where, quote, test, sets tested, verdict,
    measurement, runs), every published number next to ours (mean ± std, n) with its verdict and
    why, and the runs it comes from (commit, config hash, machine, versions). Read from the
    published runs in `published_dir` alone (kernelbench publish): the same files give the same
    bytes, with no date but the runs' own."""
    every = results_frame([published_dir])
    _, table = build_numbers([published_dir], df=every)
    runs: dict[str, list[str]] = {}
    cut: dict[str, list[str]] = {}          # per paper: the shortened runs, with how
    cut_ids: set[str] = set()
    for folder in run_folders(published_dir):
        try:
            record = RunRecord.load(folder)
        except OutputError:
            continue
        if not record.smoke:
            paper_id = (record.tags or {}).get("paper", "")
            runs.setdefault(paper_id, []).append(_run_line(folder, record))
            if shortened(record):
                cut.setdefault(paper_id, []).append(f"- {record.run_id}: {shortened(record)}")
                cut_ids.add(record.run_id)
    papers = report_papers()
    absent = {p.id: absent_data(published_dir, p.id) for p in papers}
    verdicts = {p.id: judge_paper(p, every, absent[p.id]) for p in papers}
    counts = {}
    for p in papers:
        mine = [verdict_and_reason(r, absent[p.id])[0] for r in table if r["paper"] == p.name]
        counts[p.id] = {v: mine.count(v) for v in VERDICTS}
    lines = ["# Reproduction: the papers' claims and numbers next to ours", "",
             (f"Generated from the published runs ({_shown(published_dir)}/, written by `kernelbench publish`) by "
              f"`{reproduction_command(published_dir, target)}`; do not edit by hand: tests/test_publish.py "
              "fails when this file and the published runs disagree."), "",
             *(f"- {p.name}: {_claim_counts(verdicts[p.id])}; {_number_counts(counts[p.id])}; "
               f"{len(runs.get(p.id, []))} published runs." for p in papers), "",
             CLAIMS_INTRO, "", "Numbers: " + INTRO, "",
             "| paper | published numbers | " + " | ".join(VERDICTS) + " | published runs |",
             "|---|" + "---|" * (len(VERDICTS) + 2)]
    for p in papers:
        lines.append(f"| {p.name} | {sum(counts[p.id].values())} | "
                     + " | ".join(str(counts[p.id][v]) for v in VERDICTS) + f" | {len(runs.get(p.id, []))} |")
    lines.append("")
    for p in papers:
        mine = [r for r in table if r["paper"] == p.name]
        n_runs = len(runs.get(p.id, []))
        lines += [f"## {p.name}", "",
                  f"{_claim_counts(verdicts[p.id])}; {_number_counts(counts[p.id])}; "
                  f"{n_runs} published run{'' if n_runs == 1 else 's'}.", ""]
        if verdicts[p.id]:
            lines += ["### Claims", "", *claims_table(verdicts[p.id]), ""]
        if mine:
            lines += ["### Published numbers", "",
                      ("| where | dataset | algorithm | params | metric | paper | ours (mean ± std, n) | verdict "
                       "| reason | runs |"), "|---|---|---|---|---|---|---|---|---|---|"]
        for r in mine:
            verdict, reason = verdict_and_reason(r, absent[p.id])
            published = f"{r['published']:.3f}" + (f" ± {r['published_std']:.3f}" if r["published_std"] is not None
                                                     else "")
            ours = f"{r['ours'][0]:.3f} ± {r['ours'][1]:.3f} (n={r['ours'][2]})" if r["ours"] else ""
            params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
            lines.append(f"| {r['where']} | {r['dataset']}{' (' + r['note'] + ')' if r['note'] else ''} | "
                         f"{r['algorithm']} | {params} | {r['metric']} | {published} | {ours} | {verdict} | "
                         f"{table_cell(reason)} | {', '.join(x + (' (shortened)' if x in cut_ids else '') for x in r['runs'])} |")
        if mine:
            lines.append("")
        if p.not_tabulated:
            lines += [f"Not tabulated: {p.not_tabulated}", ""]
        if runs.get(p.id):
            lines += [("| published run | status | dataset | algorithm | finished cells (ok of all) | measured "
                       "(range over cells) | wall time | commit | config sha256 | machine | versions |"),
                      "|---|" + "---|" * 10, *runs[p.id], ""]
        if cut.get(p.id):
            lines += ["Shortened to fit the publishing machine's budget (each config says how it departs from the "
                      "paper's protocol):", "", *cut[p.id], ""]
        left = not_run_experiments(published_dir, p.id)
        # a run that finished no cell is no result (publish leaves it out): said apart from the
        # experiments that simply have not run yet, which `reproduce` would run
        unfinished = {name: state for name, state in left.items() if state.startswith(NO_CELL_FINISHED)}
        waiting = {name: state for name, state in left.items() if name not in unfinished}
        if waiting:
            lines += ["Runnable here but not run for this publication (`kernelbench reproduce "
                      f"{p.id}` runs them):", "", *(f"- {name}: {state}" for name, state in sorted(waiting.items())), ""]
        if unfinished:
            lines += ["Run here, but no cell finished (no result: left out of the published runs, read by no "
                      "claim):", "", *(f"- {name}: {state}" for name, state in sorted(unfinished.items())), ""]
    return "\n".join(line.rstrip() for line in lines).rstrip("\n") + "\n"
