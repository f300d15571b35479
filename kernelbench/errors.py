"""The one exception family users see.

Every problem a user can fix (bad config, bad data, missing dataset, bad CLI usage) is raised as a
`KernelbenchError` subclass; the CLI turns it into a one-paragraph message and exit code 2. Anything
else is a bug and exits 1 with a traceback.
"""


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
