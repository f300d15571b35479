"""The one exception family users see.

Every problem a user can fix (bad config, bad data, missing dataset, bad CLI usage) is raised as a
`KernelbenchError` subclass; the CLI turns it into a one-paragraph message and exit code 2. Anything
else is a bug and exits 1 with a traceback.
"""
import importlib
from pathlib import Path


class KernelbenchError(Exception):
    """A problem the user can fix; the message names the problem and the fix."""

    exit_code = 2


class ConfigError(KernelbenchError):
    """An experiment config (YAML) is invalid: wrong key, type, value or name."""


class DataError(KernelbenchError):
    """A dataset is missing, malformed, unverifiable or unsuitable for the algorithm."""


class SolverError(KernelbenchError, ValueError):
    """A solver was given parameters or data it cannot work with (a ValueError too, as
    scikit-learn estimators raise)."""


class OutputError(KernelbenchError):
    """A results, metadata or cache file could not be written (disk full, permissions, ...)."""


class MissingExtraError(KernelbenchError):
    """An optional dependency a command or algorithm needs is not installed."""


# The optional dependencies, each behind an extra of the package: the module a feature imports,
# and the extra that installs it (pyproject.toml's optional-dependencies).
EXTRAS = {"optuna": "tune", "sklearnex": "onedal", "distributed": "dask", "pyarrow": "parquet"}


def require_extra(module: str, needed_for: str) -> None:
    """Import `module` (an optional dependency), or raise MissingExtraError naming the extra that
    installs it. Imported rather than looked up: a package that fails to import is missing too."""
    try:
        importlib.import_module(module)
    except ImportError:
        extra = EXTRAS[module]
        raise MissingExtraError(f"{needed_for} needs {module}, which is not installed: install the "
                                f"'{extra}' extra, {install_command(extra)}") from None


def install_command(extra: str, package_dir: Path = Path(__file__).resolve().parent) -> str:
    """The command that adds an extra to kernelbench as it was installed: in a source checkout (the
    package folder beside pyproject.toml: `make`, an editable install) pip install -e of that
    checkout, so the compiled solvers stay the checkout's; else from the package index."""
    checkout = package_dir.parent
    if (checkout / "pyproject.toml").is_file() and (checkout / "setup.py").is_file():
        where = "." if Path.cwd().resolve() == checkout else str(checkout)
        return f"pip install -e '{where}[{extra}]'"
    return f"pip install 'kernelbench[{extra}]'"
