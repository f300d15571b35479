"""A benchmark's table committed: `kernelbench bench NAME --publish` writes the rows of its
side-by-side table (comparison_rows) as results/published/bench/<name>.csv and the runs' provenance
(commands, commit, machine, dates) beside it as <name>.json; the documentation site renders the table
from those two files alone (published_markdown). A benchmark belongs to no paper, so these are not
`kernelbench publish` run folders: a few KB each, and no reader of run folders counts them."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from kernelbench._io import atomic_write_text, output_error, safe_name
from kernelbench.errors import ConfigError, OutputError
from kernelbench.results import RunRecord, run_folders

from .table import ROW_FIELDS, comparison_markdown, comparison_rows

BENCH_DIR = "bench"          # results/published/bench/


def published_paths(published_dir: Path, name: str) -> tuple[Path, Path]:
    """The table's CSV and its provenance JSON for benchmark copy `name`."""
    folder = Path(published_dir) / BENCH_DIR
    return folder / f"{safe_name(name)}.csv", folder / f"{safe_name(name)}.json"


def _command_text(command: list) -> str:
    # argv[0] is this machine's path to the entry point; the command is the same under any install
    return " ".join(["kernelbench", *map(str, command[1:])]) if command else ""


def provenance(runs_folder: Path, rows: list[dict], bench_name: str) -> dict:
    """What made the rows: the distinct commands, commits and machines of the newest run of each
    method, and when those runs started and ended."""
    methods = {f"{bench_name}-{row['method']}" for row in rows}
    newest: dict[str, RunRecord] = {}
    for path in run_folders(runs_folder):
        record = RunRecord.load(path)
        if record.experiment in methods and (record.experiment not in newest
                                             or (record.started or "") > (newest[record.experiment].started or "")):
            newest[record.experiment] = record
    records = sorted(newest.values(), key=lambda r: r.started or "")
    return {
        "benchmark": bench_name,
        "commands": list(dict.fromkeys(_command_text(r.command) for r in records)),
        "git_commits": list(dict.fromkeys(r.git_commit for r in records if r.git_commit)),
        "git_dirty": any(bool(r.git_dirty) for r in records),
        "machines": list({json.dumps(r.machine, sort_keys=True): r.machine for r in records}.values()),
        "versions": records[-1].versions if records else {},
        "started": records[0].started if records else None,
        "ended": max((r.ended or "" for r in records), default=None) or None,
        "runs": [r.run_id for r in records],
    }


def publish_bench(bench_name: str, runs_folder: Path, published_dir: Path, name: str) -> Path:
    """The table of the runs in `runs_folder` written as <published_dir>/bench/<name>.csv, with its
    provenance as <name>.json; returns the CSV's path."""
    rows = comparison_rows(bench_name, runs_folder)
    if not rows:
        raise ConfigError(f"no finished run of {bench_name} in {runs_folder} to publish: run the benchmark "
                          f"first, or give --out the folder it wrote its runs into")
    table, meta = published_paths(published_dir, name)
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=ROW_FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({key: row[key] for key in ROW_FIELDS} for row in rows)
    try:
        table.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise output_error("create the folder", table.parent, e) from e
    atomic_write_text(table, text.getvalue())
    atomic_write_text(meta, json.dumps(provenance(runs_folder, rows, bench_name), indent=1) + "\n")
    return table


def published_names(published_dir: Path) -> list[str]:
    """The names of the published benchmark tables, sorted."""
    return sorted(p.stem for p in (Path(published_dir) / BENCH_DIR).glob("*.csv"))


def published_markdown(published_dir: Path, name: str) -> str:
    """A published benchmark table as the documentation site shows it: what made it (command,
    commit, machine, date), then the table, rendered from its CSV and JSON alone."""
    table, meta = published_paths(published_dir, name)
    try:
        with table.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        about = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise OutputError(f"cannot read the published benchmark {name} ({table}, {meta}): {e}; publish it "
                          f"again with `kernelbench bench ... --publish`") from e
    machines = "; ".join(f"{m.get('processor') or m.get('architecture', '?')}, {m.get('cpu_count', '?')} CPUs, "
                         f"{m.get('memory_total_bytes', 0) / 2**30:.0f} GiB" for m in about["machines"])
    commits = ", ".join(c[:10] for c in about["git_commits"]) + (" (uncommitted changes)" if about["git_dirty"] else "")
    header = ["Measured by " + " and ".join(f"`{c}`" for c in about["commands"]) + f" on {machines}, "
              f"commit {commits or 'unknown'}, {(about['started'] or '')[:16].replace('T', ' ')} UTC.", ""]
    lines = comparison_markdown(rows)
    table_end = max(i for i, line in enumerate(lines) if line.startswith("|")) + 1
    # the verdicts below the table as a list: one line each on the page, as in the terminal
    return "\n".join(header + lines[:table_end] + [f"- {line}" if line else line for line in lines[table_end:]])
