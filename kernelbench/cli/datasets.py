"""`kernelbench datasets ...`: list, info, fetch, path, synth.

Problems are raised as DataError; the main CLI turns them into a message and exit code 2.
Progress bars go to stderr and are silent when stderr is not a terminal.
"""
from __future__ import annotations

import enum
import json
from pathlib import Path

import typer

from kernelbench.cli.options import Quiet
from kernelbench.data.fetch import data_dirs, dataset_info, fetch_checked
from kernelbench.data.registry import dataset_names
from kernelbench.data.shipped import SHIPPED_DIR, shipped_sha256
from kernelbench.data.synthetic import SHAPES, VARIANTS, SyntheticSpec, write_files

Shape = enum.Enum("Shape", {name: name for name in SHAPES}, type=str)     # a usage error names them

datasets_app = typer.Typer(
    help="Benchmark datasets: list them, show one, download and check one, show the folders searched, "
         "write a synthetic replica.",
    no_args_is_help=True,
)


def _shape(info) -> str:
    n = info["n_train"]
    n_txt = f"{n:,}" if n else "?"
    if info["n_test"]:
        n_txt += f"+{info['n_test']:,}"
    return f"{n_txt} x {info['d']}"


HASH_LEGEND = ("sha256: pinned = the registry's hash, checked on every use (verified); recorded = no hash "
               "is pinned, the one of the first use was recorded in the cache dir and every later use is "
               "checked against it (not verified); not yet = no hash pinned, recorded on first use")


def _hash_state(info) -> str:
    """pinned / recorded / not yet, per file; "train/test" when they differ."""
    states = [f["hash"] for f in info["files"].values()]
    return "-" if not states else states[0] if len(set(states)) == 1 else "/".join(states)


@datasets_app.command("list")
def list_command() -> None:
    """All registry datasets: name, task, size (train+test x features), local availability, how the
    files' sha256 is checked (pinned / recorded / not yet), description."""
    rows = []
    for name in dataset_names():
        info = dataset_info(name)
        if info["format"] == "builtin":
            local = "builtin"
        elif info["available"]:
            local = "yes"
        else:
            local = "train only" if info["files"]["train"]["local"] else "no"
        rows.append((name, info["task"], _shape(info), local, _hash_state(info), info["description"]))
    rows.append(("synthetic", "binary", "any", "generated", "-",
                 "replicas of susy | higgs | hepmass, Bayes error known: dataset: {name: synthetic, "
                 "shape: susy, n: ...}; files: `kernelbench datasets synth`"))
    header = ("name", "task", "n x d", "local", "sha256", "description")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(5)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths) + "  {}"
    typer.echo(fmt.format(*header))
    typer.echo(fmt.format(*("-" * w for w in widths), "-" * 11))
    for r in rows:
        typer.echo(fmt.format(*r))
    typer.echo("")
    typer.echo(HASH_LEGEND)


@datasets_app.command("info")
def info_command(name: str = typer.Argument(..., help="a registry dataset name (see `datasets list`)"),
                 as_json: bool = typer.Option(False, "--json", help="print the info as JSON")) -> None:
    """Registry entry, resolved local files and cache paths of one dataset."""
    info = dataset_info(name)
    if as_json:
        typer.echo(json.dumps(info, indent=2, default=str))
        return
    typer.echo(f"{info['name']}: {info['description']}")
    typer.echo(f"  task: {info['task']}   format: {info['format']}   shape: {_shape(info)}")
    typer.echo(f"  split protocol: {info['split']}")
    if info["papers"]:
        typer.echo(f"  papers: {', '.join(info['papers'])}")
    if info["note"]:
        typer.echo(f"  note: {info['note']}")
    for role, f in info["files"].items():
        typer.echo(f"  {role}: {f['name']}  ({f['n']} rows)" if f["n"] else f"  {role}: {f['name']}")
        typer.echo(f"    url: {f['url'] or '(none: no public download, see the note)'}  compression: {f['compression']}"
                   + (f"  member: {f['member']}" if f["member"] else ""))
        if f["sha256"]:
            typer.echo(f"    sha256 (decompressed): {f['sha256']}  (pinned in the registry)")
        elif f["recorded_sha256"]:
            typer.echo(f"    sha256 (decompressed): {f['recorded_sha256']}  (not pinned: recorded on first use, "
                       f"{f['recorded_at']}, in {f['record']})")
        else:
            typer.echo("    sha256 (decompressed): not pinned, not recorded yet (recorded on first use)")
        typer.echo(f"    local: {f['local'] or 'not found (looked for ' + ', '.join(f['looked_for']) + ')'}")
    for note in info["notes"]:
        typer.echo(f"  trust: {note}")
    typer.echo(f"  cache dir: {info['cache_dir']}  (parsed arrays: {info['parsed_dir']})")
    typer.echo(f"  mirrors: {', '.join(info['mirrors']) or '(none; set $KERNELBENCH_MIRROR)'}")
    typer.echo(f"  registry: {info['registry']}")


@datasets_app.command("fetch")
def fetch_command(name: str = typer.Argument(..., help="a registry dataset name (see `datasets list`)"),
                  quiet: Quiet = False) -> None:
    """Make every file of a dataset available locally (cache or mirror), downloading it whatever its
    size, check its sha256 (pinned in the registry, or recorded on first use), print the paths."""
    checked = fetch_checked(name, progress=not quiet)
    if not checked:
        typer.echo(f"{name}: builtin dataset, nothing to fetch")
    for path, trust in checked:
        typer.echo(f"{path}  ({trust.describe()})")


@datasets_app.command("path")
def path_command() -> None:
    """Print the folders searched, in order: the shipped small sets, the cache dir ($KERNELBENCH_DATA)
    and the mirror dirs ($KERNELBENCH_MIRROR)."""
    dirs = data_dirs()
    typer.echo(f"shipped: {SHIPPED_DIR}  ({', '.join(sorted(shipped_sha256()))})")
    typer.echo(f"cache: {dirs['cache']}")
    for m in dirs["mirrors"]:
        typer.echo(f"mirror: {m}{'' if m.is_dir() else '  (missing)'}")
    if not dirs["mirrors"]:
        typer.echo("mirror: (none; set $KERNELBENCH_MIRROR, colon-separated)")


@datasets_app.command("synth")
def synth_command(
    shape: Shape = typer.Argument(..., help="the published set the replica imitates"),
    out: str = typer.Option("replicas", "--out", help="folder the files are written to"),
    n: int = typer.Option(None, "--n", help="training rows (default: the published training size)"),
    n_test: int = typer.Option(None, "--n-test", help="test rows (default: the published test size)"),
    noise: float = typer.Option(None, "--noise", help="label noise = Bayes error (default: per shape)"),
    seed: int = typer.Option(0, "--seed", help="the data's seed"),
    variant: int = typer.Option(1, "--variant", min=min(VARIANTS), max=max(VARIANTS),
                                help="the generator: 1, or 2 or 3 (other decision functions and noise levels, "
                                     "for checking settings on data they were not chosen on)"),
    defects: int = typer.Option(None, "--defects", help="lines with a value glued to the next index, as "
                                "in the published SUSY.xz (default: 1 for susy, 0 otherwise)"),
    level: int = typer.Option(1, "--level", help="compression level (xz/gzip); 1 writes fast"),
    quiet: Quiet = False,
) -> None:
    """Write a synthetic replica of SUSY, HIGGS or HEPMASS in the published file format (Bayes error
    known, recorded beside the file): put the folder in $KERNELBENCH_MIRROR to run the papers' configs."""
    spec = SyntheticSpec(shape=shape.value, n=n, n_test=n_test, noise=noise, seed=seed,
                         variant=variant).resolved()
    paths = write_files(spec, out, defects=defects, progress=not quiet, compress_level=level)
    for p in paths:
        typer.echo(str(p))
    folder = Path(out).resolve()
    typer.echo(f"{spec.shape}: {spec.n:,} training + {spec.n_test:,} test rows, Bayes error {spec.noise:g}. "
               f"Use it with: KERNELBENCH_MIRROR={folder} kernelbench run configs/<a {spec.shape} config>.yaml")
