"""One sweep point in a process of its own: `python -m kernelbench.experiment.point CONFIG --out OUT
--overrides JSON [--yes]`, what sweep.run_as_process starts (with its memory environment and limits)
so that the point's peak memory is its own.

It runs the point as `kernelbench run CONFIG --out OUT --quiet --set KEY=VALUE...` would: the
config's data fetched first (a large download only with --yes: the process has no terminal to ask
on), one run (experiment.plan) with the point's overrides, its run folder named on stdout as
`results: <folder>/results.csv` (the line the sweep reads), and the command's exit codes: 0 done, 2 a
problem the message names (`kernelbench: error: ...` on stderr), 130 interrupted, 1 a bug (traceback).
The overrides come as JSON, the values the sweep validated, not re-read as YAML text.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kernelbench.data.fetch import config_files_first
from kernelbench.errors import KernelbenchError

from .plan import Plan, execute


def run_words(config, out_dir, overrides: dict, confirm_downloads: bool) -> list[str]:
    """The `kernelbench run` command line a point's process stands for (its run.json's command)."""
    sets = [word for key, value in overrides.items() for word in ("--set", f"{key}={json.dumps(value)}")]
    return ["kernelbench", "run", str(config), "--out", str(out_dir), "--quiet", *sets,
            *(["--yes"] if confirm_downloads else [])]


def run_point(config: Path, out_dir: Path, overrides: dict, confirm_downloads: bool = False) -> Path:
    """The point's run folder, once its one run is done."""
    config_files_first(config, overrides, confirm=lambda offer: confirm_downloads)
    plan = Plan(configs=(config,), overrides=overrides, out_dir=out_dir)
    return execute(plan, quiet=True, command=run_words(config, out_dir, overrides, confirm_downloads))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kernelbench.experiment.point",
                                     description="one sweep point, run as `kernelbench run` runs it")
    parser.add_argument("config", type=Path)
    parser.add_argument("--out", type=Path, default=Path("results"))
    parser.add_argument("--overrides", default="{}", help="the point's overrides: a JSON object")
    parser.add_argument("--yes", action="store_true", help="download the data without asking")
    args = parser.parse_args(argv)
    try:
        folder = run_point(args.config, args.out, json.loads(args.overrides), args.yes)
    except KernelbenchError as e:
        print(f"kernelbench: error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt as e:      # experiment.Interrupted: what was kept, how to resume
        for line in (str(e) or "interrupted").splitlines():
            print(f"kernelbench: {line}", file=sys.stderr)
        sys.exit(130)
    print(f"results: {folder / 'results.csv'}")


if __name__ == "__main__":
    main()
