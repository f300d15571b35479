"""`make bench`: the headline configs' training time and test error, this tree against a git revision
built in the same run -- so that a slow-down is told from a slow machine.

Absolute times move 2-3x between machines of the same kind, and from hour to hour on a shared one;
a ratio measured side by side in one run does not. The revision (--against, default HEAD: what the
uncommitted changes do) is exported with `git archive` into build/bench-revisions/<commit>, this
checkout's sources (tracked and untracked, as they are now) are copied beside it, and both are
built the same way, with this interpreter (`setup.py build_ext --inplace`; kept for the next run):
the same compiler and Cython on both sides. Both sides run the same command a user types, `kernelbench run CONFIG`,
each in its own process and tree, on its own copy of the config (the revision's own file: what it
shipped), reduced on the command line to one grid cell (`--set grid={}`: the config's
algorithm.params) and --trials trials (the revision must know `--set`: 31e0efa or later).
The runs alternate (revision, tree, tree, revision, ...), --repeat rounds, so that a burst of load
lands on both sides alike.

Printed per config: the median and fastest `train_seconds` of the final rows (the experiment loop's
training time, evaluation excluded: what results.csv and every time-axis figure show) of each
side, their ratio (tree / revision; > 1 is slower), the ratio of the fastest runs, and the mean
final test error of each side (same seed: equal unless the algorithm or the config file changed,
or the solver is asynchronous, as AsyDSSKL).
The load average is printed before and after. Not a pass/fail test: read the ratios.

    .venv/bin/python scripts/bench_against.py --against 9012f5a [--repeat 3] [--configs a9a_dsg]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from kernelbench.config import load_config
from kernelbench.errors import ConfigError
from kernelbench.results import final_rows, read_results

REPO = Path(__file__).resolve().parents[1]
BUILDS = REPO / "build" / "bench-revisions"     # `make clean` removes it

# config (configs/<name>.yaml) -> stop rule (YAML, for --set) replacing the config's, where its own is
# a time limit (a ratio of times is only read when both sides do the same work)
HEADLINES = {
    "a9a_dsg": None,
    "ijcnn1_udsg_avg": None,
    "cod_rna_tsgs3vm_5pass": None,
    "ijcnn1_bsgd": None,                             # the B = 100, lookup-wd cell
    "ijcnn1_asydsskl_gu2018": "{passes: 1}",         # Algorithm 1 once (its config: 20 s)
    "a9a_cdsg": None,
}


def _git(*args, cwd=REPO, **kw):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, **kw).stdout


def _build(tree: Path, what: str) -> Path:
    """Build the compiled cores of the source tree `tree` in place (once: a marker remembers)."""
    if (tree / ".built").exists():
        return tree
    print(f"building {what} in {tree} ...", flush=True)
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"building {what} failed:\n{done.stderr[-3000:]}")
    (tree / ".built").touch()
    return tree


def build_revision(rev: str) -> Path:
    """The source tree of `rev` with its compiled cores built, under build/ (`make clean` removes
    it); its path."""
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}", text=True).strip()
    tree = BUILDS / sha
    if not (tree / ".built").exists():
        tree.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=_git("archive", "--format=tar", sha), check=True)
    return _build(tree, f"{rev} ({sha[:10]})")


def build_working_tree() -> Path:
    """A copy of this checkout's sources as they are now (tracked and untracked files, not the
    ignored ones), built the same way as the revision: the installed build of the checkout may
    come from another compiler or Cython (pip builds in an isolated environment), and a difference
    in the build is not a difference in the code. Keyed by a hash of the sources."""
    files = sorted(_git("ls-files", "-z", "--cached", "--others", "--exclude-standard").decode().split("\0"))
    files = [f for f in files if f and (REPO / f).is_file()]
    digest = hashlib.sha256()
    for f in files:
        digest.update(f.encode() + b"\0" + (REPO / f).read_bytes() + b"\0")
    tree = BUILDS / f"tree-{digest.hexdigest()[:16]}"
    if not (tree / ".built").exists():
        for f in files:
            (tree / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, tree / f)
    return _build(tree, "the working tree")


def side_env(tree: Path) -> dict:
    """The environment that makes `import kernelbench` load the package of `tree` (PYTHONPATH comes
    before the editable install of this checkout; `python -c` also puts the working folder first,
    so every side runs in its own tree); checked, since a wrong import would compare a tree with
    itself."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    where = subprocess.run([sys.executable, "-c", "import kernelbench; print(kernelbench.__file__)"],
                           env=env, cwd=tree, check=True, capture_output=True, text=True).stdout.strip()
    if not Path(where).resolve().is_relative_to(tree.resolve()):
        sys.exit(f"PYTHONPATH={tree} imports kernelbench from {where}, not from that tree")
    return env


def run_side(env: dict, tree: Path, name: str, trials: int, out: Path) -> list[tuple[float, float]]:
    """(train_seconds, test_error) of each trial's final row of one `kernelbench run` of the tree's
    configs/<name>.yaml as one cell (stop replaced where HEADLINES says)."""
    main = "import sys; from kernelbench.cli import main; sys.argv[0] = 'kernelbench'; main()"
    config = tree / "configs" / f"{name}.yaml"
    stop = ["--set", f"stop={HEADLINES[name]}"] if HEADLINES.get(name) else []
    done = subprocess.run([sys.executable, "-c", main, "run", str(config), "--out", str(out), "--trials",
                           str(trials), "--quiet", "--set", "grid={}", *stop], env=env, cwd=tree,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"kernelbench run {config} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    (folder,) = out.iterdir()                          # `out` is this run's own folder
    final = final_rows(read_results(folder))
    bad = final[final["status"] != "ok"]
    if len(bad):
        sys.exit(f"kernelbench run {config}: not a time to compare: "
                 f"{bad[['trial', 'status', 'message']].to_dict('records')}")
    return list(zip(final["train_seconds"].astype(float), final["test_error"].astype(float)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default="HEAD", help="git revision to compare with (default HEAD)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of alternating runs")
    ap.add_argument("--trials", type=int, default=1, help="trials per run (the config's seeds)")
    ap.add_argument("--configs", nargs="*", default=list(HEADLINES),
                    help="configs/<name>.yaml names (default: the headline configs)")
    args = ap.parse_args(argv)
    for c in args.configs:
        try:
            timed = load_config(REPO / "configs" / f"{c}.yaml").stop.seconds is not None
        except ConfigError as e:
            sys.exit(str(e))
        if timed and c not in HEADLINES:
            sys.exit(f"configs/{c}.yaml stops on a time limit: both sides would do different work")

    sides = {"revision": build_revision(args.against), "tree": build_working_tree()}
    envs = {side: side_env(tree) for side, tree in sides.items()}
    print(f"tree {REPO} (built in {sides['tree'].name}) against {args.against} ({sides['revision'].name[:10]}); "
          f"{args.repeat} rounds x {args.trials} trial(s); load average {os.getloadavg()[:3]}", flush=True)
    measured = {c: {side: [] for side in sides} for c in args.configs}
    with tempfile.TemporaryDirectory(prefix="bench-against-") as tmp:
        tmp = Path(tmp)
        for r in range(args.repeat):
            order = ["revision", "tree"] if r % 2 == 0 else ["tree", "revision"]
            for c in args.configs:
                for side in order:
                    got = run_side(envs[side], sides[side], c, args.trials, tmp / side / f"runs-{r}-{c}")
                    measured[c][side] += got
                    print(f"  round {r + 1} {c:24s} {side:8s} "
                          + " ".join(f"{s:.2f}s/{e:.4f}" for s, e in got), flush=True)

    print(f"\nload average after: {os.getloadavg()[:3]}")
    print(f"{'config':24s} {'revision s (min)':>17s} {'tree s (min)':>17s} {'ratio':>6s} {'min':>6s}"
          f" {'rev error':>10s} {'tree error':>10s}")
    for c in args.configs:
        t = {side: [s for s, _ in measured[c][side]] for side in sides}
        e = {side: statistics.fmean(err for _, err in measured[c][side]) for side in sides}
        med = {side: statistics.median(t[side]) for side in sides}
        print(f"{c:24s} {med['revision']:9.2f} ({min(t['revision']):5.2f}) {med['tree']:9.2f} "
              f"({min(t['tree']):5.2f}) {med['tree'] / med['revision']:6.3f} "
              f"{min(t['tree']) / min(t['revision']):6.3f} {e['revision']:10.4f} {e['tree']:10.4f}")


if __name__ == "__main__":
    main()
