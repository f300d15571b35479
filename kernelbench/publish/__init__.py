"""`kernelbench publish`: the runs a paper's report and figures read, in a compact form that is
committed (results/published/<paper>/<run id>/), and REPRODUCTION.md regenerated from it alone.

A published run is a run folder (results.csv and run.json, read by the same readers), compacted:

    results.csv   the rows a number of the report is read from, cell for cell as written: every
                  final row, and each evaluation an at_seconds number or a claim picks (report.rows_read); each
                  curve of the test part thinned to at most `max_points` evaluations -- its first and
                  last among them, the others spaced evenly on linear and on log axes, the same
                  positions in every trial, so that the figures' means over trials stay means --
                  the measurements (ROUNDED: errors, objective) of those drawn-only points with
                  `DIGITS` significant digits (never the seconds or counts an at_seconds number
                  selects by); the curves of cross-validation folds and tune budgets (never drawn)
                  down to their last rows; columns empty in every kept row left out (read_results
                  restores them empty); a failed cell's `message` without folders (published_text).
    run.json      the run's record (resolved config, tags, commit, versions, machine, dataset, times,
                  status, what it measured) with `config_hash` (results.config_hash of the published
                  config) and `published` (how it was thinned) added, the host name and the column
                  list left out, keys sorted; nothing that names this machine's folders or hosts:
                  the data files, the dataset.path of a config, the tuned config and the command's
                  arguments keep their file names (the files' sha256 stay), a scheduler address its
                  scheme, and every other text (an error) its absolute paths' file names.

A run that finished no cell (every cell skipped, as an O(n²) baseline past its max_points, or
failed) is no result: it is not published, and a published copy of one is removed.

The same runs give the same bytes, wherever they lie (rows keep the order they were written in).
Before anything is written, the paper's report is built from the compacted copies and from the
runs: they must be the same text, so the published form never changes a verdict. A paper's
published runs that are not under --results any more are kept (they may come from another machine)
unless `prune` -- except those of the same experiment and config hash as a run published now, which
it replaces (kept, both would be counted in the same numbers).

compact.py makes one run's copy; writer.py writes a paper's copies and regenerates what reads them.
"""
from .compact import DIGITS, MAX_POINTS, finished_cells, published_config, published_record, published_text, thin
from .writer import PUBLISHED_MAX_BYTES, absent_data_text, over_size_limit, publish, published_seconds

__all__ = ["DIGITS", "MAX_POINTS", "PUBLISHED_MAX_BYTES", "absent_data_text", "finished_cells", "over_size_limit",
           "publish", "published_config", "published_record", "published_seconds", "published_text", "thin"]
