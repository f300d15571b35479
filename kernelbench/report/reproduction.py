"""REPRODUCTION.md and the papers' detail pages, computed from the published runs alone (a published
folder, by default results/published: kernelbench.publish). REPRODUCTION.md is the short report: how
verdicts are reached, then per paper its findings, figures and claims' verdicts (paper_pages.py);
each paper's detail page (results/published/<paper>/DETAILS.md) holds every claim's measurement,
every published number next to ours with its verdict and reason, and the runs' provenance."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import kernelbench
from kernelbench._vocab import NO_CELL_FINISHED
from kernelbench.config import duration_text
from kernelbench.errors import OutputError
from kernelbench.papers import Paper
from kernelbench.results import ABSENT_FILE, RunRecord, config_hash, final_rows, read_results, run_folders

from .numbers import INTRO, VERDICTS, build_numbers, machine_text, report_papers, results_frame, verdict_and_reason
from .marks import MARKS, marked, outcome_of
from .findings import findings_paragraph
from .paper_pages import (
    DETAILS_FILE,
    FIGURES_DIR,
    SITE_LINKS,
    Links,
    claim_detail,
    paper_section,
    repository_links,
)
from .noise import RULE as NOISE_RULE
from .claims_text import table_cell
from .verdicts import FLOOR_POINTS, LATE_FACTOR, judge_paper

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


HOW_VERDICTS_ARE_REACHED = (
    "How a verdict is reached: each claim is a conclusion the paper draws from an experiment, with a test "
    "shaped by its words and written into the paper's file before any run, read on the finished trials of the "
    f"published runs of each set. The noise rule: {NOISE_RULE}; a set with a difference inside the noise is "
    "within noise, an outcome of its own. A method with no model yet at a claim's time (its only evaluation by "
    "then its untrained starting point) is behind only while its "
    f"first model comes later than {LATE_FACTOR:g}× that time (sooner, the two tie in time); a time at which no "
    "compared method has a model yet compares nothing, and a horizon is read on its other time points. A set where a "
    "compared method has no finished run, or runs smaller than the data the claim speaks of, is untested; one "
    "where the methods compared both sit at the constant classifier's error (within "
    f"{FLOOR_POINTS:g} points) or both make no error is not comparable. The verdict is decided on the paper's "
    "own sets, stand-ins reported beside them; only a claim tested on stand-ins alone reads \"on stand-in "
    "data\". A claim about all sets holds when every tested set holds and does not hold when one does not; one "
    "about most sets holds on more than half and does not hold when even the sets within noise could not make "
    "a majority; otherwise it is within noise. With no tested set it is not testable here.")


@dataclass
class ReportData:
    """Everything the report and its pages say, computed once from the published folder."""
    published_dir: Path
    papers: list
    verdicts: dict                  # {paper id: [ClaimVerdict]}
    numbers: dict                   # {paper id: [the numbers' table rows (build_numbers)]}
    absent: dict                    # {paper id: {dataset: how to get it}}
    runs: dict = field(default_factory=dict)        # {paper id: [run table lines]}
    cut: dict = field(default_factory=dict)         # {paper id: ["- run id: how it was shortened"]}
    cut_ids: set = field(default_factory=set)
    figures: dict = field(default_factory=dict)     # {paper id: [figure file names]}

    def number_counts(self, paper_id: str) -> dict:
        mine = [verdict_and_reason(r, self.absent[paper_id])[0] for r in self.numbers[paper_id]]
        return {v: mine.count(v) for v in VERDICTS}


def gather(published_dir) -> ReportData:
    """Read the published runs once: the claims' verdicts, the numbers next to ours, the runs' rows
    and the figures drawn from them (published_dir/figures)."""
    published_dir = Path(published_dir)
    every = results_frame([published_dir])
    _, table = build_numbers([published_dir], df=every)
    papers = report_papers()
    absent = {p.id: absent_data(published_dir, p.id) for p in papers}
    data = ReportData(published_dir, papers, {p.id: judge_paper(p, every, absent[p.id]) for p in papers},
                      {p.id: [r for r in table if r["paper"] == p.name] for p in papers}, absent)
    for folder in run_folders(published_dir):
        try:
            record = RunRecord.load(folder)
        except OutputError:
            continue
        if not record.smoke:
            paper_id = (record.tags or {}).get("paper", "")
            data.runs.setdefault(paper_id, []).append(_run_line(folder, record))
            if shortened(record):
                data.cut.setdefault(paper_id, []).append(f"- {record.run_id}: {shortened(record)}")
                data.cut_ids.add(record.run_id)
    drawn = sorted(f.name for f in (published_dir / FIGURES_DIR).glob("*.png"))
    data.figures = {p.id: [name for name in drawn if name.startswith(p.figure_prefix)] for p in papers}
    return data


def _claim_counts(verdicts) -> str:
    """"N claims: 8 ✔ holds, 3 ✘ does not hold, ..." by verdict, in the order verdicts first appear."""
    if not verdicts:
        return "no claims recorded yet"
    kinds = [v.verdict for v in verdicts]
    return (f"{len(kinds)} claim{'' if len(kinds) == 1 else 's'}: "
            + ", ".join(f"{kinds.count(k)} {marked(k)}" for k in dict.fromkeys(sorted(kinds, key=_verdict_order))))


def _verdict_order(verdict: str) -> tuple:
    outcome = outcome_of(verdict)
    order = list(MARKS)
    return (order.index(outcome) if outcome in order else len(order), verdict)


def _number_counts(counts: dict) -> str:
    total = sum(counts.values())
    return (f"{total} published number{'' if total == 1 else 's'}"
            + (" — " + ", ".join(f"{n} {v}" for v, n in counts.items() if n) if total else ""))


def report_header(data: ReportData, command: str, *, paper_link) -> list[str]:
    """The report's title, how it is made and how verdicts are reached, and one summary row per
    paper (`paper_link(paper)`: where its section or page is)."""
    lines = ["# Reproduction: do the papers' conclusions hold on our runs?", "",
             (f"Generated from the published runs ({_shown(data.published_dir)}/, written by `kernelbench publish`) "
              f"by `{command}`; do not edit by hand: tests/publish/test_publish.py fails when this file and the published "
              "runs disagree."), "",
             HOW_VERDICTS_ARE_REACHED, "",
             "Marks: " + ", ".join(marked(name) for name in MARKS) + ". Each claim links to its detail: its full "
             "measurement per set and the runs it was read from.", "",
             "| paper | claims | published numbers | runs | figures |", "|---|---|---|---|---|"]
    for p in data.papers:
        lines.append(f"| [{p.name}]({paper_link(p)}) | {_claim_counts(data.verdicts[p.id])} | "
                     f"{_number_counts(data.number_counts(p.id))} | {len(data.runs.get(p.id, []))} | "
                     f"{len(data.figures[p.id])} |")
    return [*lines, ""]


def _github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation but hyphens dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def reproduction_markdown(published_dir, target="REPRODUCTION.md", data: ReportData | None = None) -> str:
    """REPRODUCTION.md (written to `target`, which its header names), the short report: how verdicts
    are reached, a summary row per paper, then per paper its findings in words and each figure drawn
    from the runs beside the claims it answers (verdict and deciding number); the rest of each
    paper's measurements is on its detail page (details_markdown). Read from the published runs in
    `published_dir` alone (kernelbench publish): the same files give the same bytes."""
    data = data or gather(published_dir)
    links = repository_links(published_dir, target)
    lines = report_header(data, reproduction_command(published_dir, target),
                          paper_link=lambda p: "#" + _github_anchor(p.name))
    for p in data.papers:
        lines += paper_section(p, data.verdicts[p.id], data.figures[p.id], links)
    return _joined(lines)


def details_markdown(data: ReportData, paper: Paper, links: Links) -> str:
    """A paper's detail page: every claim's full measurement, every published number next to ours
    with its verdict and why, and the runs (commit, config hash, machine, versions)."""
    pid, n_runs = paper.id, len(data.runs.get(paper.id, []))
    lines = [f"# {paper.name}: the detail", "",
             f"Back to [the paper's findings and figures]({links.report.format(paper=pid)}). "
             f"{_claim_counts(data.verdicts[pid])}; {_number_counts(data.number_counts(pid))}; "
             f"{n_runs} published run{'' if n_runs == 1 else 's'}.", ""]
    if data.verdicts[pid]:
        lines += ["## Claims", "", HOW_VERDICTS_ARE_REACHED, ""]
        for v in data.verdicts[pid]:
            lines += claim_detail(v, links)
    lines += sentences_without_row(paper)
    lines += numbers_table(data, paper)
    if paper.not_tabulated:
        lines += [f"Not tabulated: {paper.not_tabulated}", ""]
    lines += runs_sections(data, paper)
    return _joined(lines)


def sentences_without_row(paper: Paper) -> list[str]:
    """The paper's findings that have no claim row, each where it is and why: with the claims, every
    sentence of the experiments and the conclusion that draws a finding."""
    if not paper.without_row:
        return []
    lines = ["## Sentences without a row", "",
             "Every other sentence of the experiments and the conclusion that states a finding, and why it has "
             "no row of its own:", ""]
    lines += [f"- {s.locator}: “{s.readable}” — {s.why}" for s in paper.without_row]
    return [*lines, ""]


def numbers_table(data: ReportData, paper: Paper) -> list[str]:
    """Every number the paper prints next to ours (mean ± std, n), with its verdict and why."""
    mine = data.numbers[paper.id]
    if not mine:
        return []
    lines = ["## Published numbers", "", "Numbers: " + INTRO, "",
             "| where | dataset | algorithm | params | metric | paper | ours (mean ± std, n) | verdict | reason | runs |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in mine:
        verdict, reason = verdict_and_reason(r, data.absent[paper.id])
        published = f"{r['published']:.3f}" + (f" ± {r['published_std']:.3f}" if r["published_std"] is not None
                                                 else "")
        ours = f"{r['ours'][0]:.3f} ± {r['ours'][1]:.3f} (n={r['ours'][2]})" if r["ours"] else ""
        params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        runs = ", ".join(x + (" (shortened)" if x in data.cut_ids else "") for x in r["runs"])
        lines.append(f"| {r['where']} | {r['dataset']}{' (' + r['note'] + ')' if r['note'] else ''} | "
                     f"{r['algorithm']} | {params} | {r['metric']} | {published} | {ours} | {verdict} | "
                     f"{table_cell(reason)} | {runs} |")
    return [*lines, ""]


def runs_sections(data: ReportData, paper: Paper) -> list[str]:
    """The published runs' provenance, the shortened ones with how, and the experiments not run."""
    pid, lines = paper.id, []
    if data.runs.get(pid):
        lines += ["## Runs", "",
                  ("| published run | status | dataset | algorithm | finished cells (ok of all) | measured "
                   "(range over cells) | wall time | commit | config sha256 | machine | versions |"),
                  "|---|" + "---|" * 10, *data.runs[pid], ""]
    if data.cut.get(pid):
        lines += ["Shortened to fit the publishing machine's budget (each config says how it departs from the "
                  "paper's protocol):", "", *data.cut[pid], ""]
    left = not_run_experiments(data.published_dir, pid)
    # a run that finished no cell is no result (publish leaves it out): said apart from the
    # experiments that simply have not run yet, which `reproduce` would run
    unfinished = {name: state for name, state in left.items() if state.startswith(NO_CELL_FINISHED)}
    waiting = {name: state for name, state in left.items() if name not in unfinished}
    if waiting:
        lines += ["Runnable here but not run for this publication (`kernelbench reproduce "
                  f"{pid}` runs them):", "", *(f"- {name}: {state}" for name, state in sorted(waiting.items())), ""]
    if unfinished:
        lines += ["Run here, but no cell finished (no result: left out of the published runs, read by no "
                  "claim):", "", *(f"- {name}: {state}" for name, state in sorted(unfinished.items())), ""]
    return lines


def _joined(lines: list[str]) -> str:
    return "\n".join(line.rstrip() for line in lines).rstrip("\n") + "\n"


def details_path(published_dir, paper_id: str) -> Path:
    """Where a paper's detail page is written: in its published folder."""
    return Path(published_dir) / paper_id / DETAILS_FILE


def reproduction_files(published_dir, target="REPRODUCTION.md") -> dict[Path, str]:
    """{path: text} of the report: `target` (REPRODUCTION.md) and each paper's detail page in its
    published folder; `kernelbench report --from` writes them, `--check` compares them byte for byte."""
    data = gather(published_dir)
    links = repository_links(published_dir, target)
    files = {Path(target): reproduction_markdown(published_dir, target, data)}
    for p in data.papers:
        files[details_path(published_dir, p.id)] = details_markdown(data, p, links)
    return files


def links_back_elsewhere(published_dir, target, page_text: str) -> bool:
    """Whether a detail page's way back to the report names another file than `target`: its links are
    relative to the report it was written with, so a check against another --out differs on it too."""
    return f"]({repository_links(published_dir, target).report})" not in page_text


def site_pages(published_dir) -> dict[str, str]:
    """The documentation site's report pages by name: "reproduction" (how verdicts are reached, the
    summary and each paper's findings), "paper/<id>" (findings, figures beside their claims) and
    "details/<id>" (the detail page), with the site's links (paper_pages.SITE_LINKS)."""
    data = gather(published_dir)
    links = SITE_LINKS
    overview = report_header(data, reproduction_command(published_dir), paper_link=lambda p: f"{p.id}.md")
    pages = {}
    for p in data.papers:
        overview += [f"## {p.name}", "", findings_paragraph(data.verdicts[p.id]), "",
                     f"[Its figures beside its claims]({p.id}.md) · [the detail]({links.details_page(p.id)})", ""]
        pages[f"paper/{p.id}"] = _joined(paper_section(p, data.verdicts[p.id], data.figures[p.id], links, level=1))
        pages[f"details/{p.id}"] = details_markdown(data, p, links)
    return {"reproduction": _joined(overview), **pages}
