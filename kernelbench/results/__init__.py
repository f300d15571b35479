"""The results contract: one run = one folder holding `results.csv` (one row per evaluation point)
and `run.json` (a RunRecord). schema.py declares both, run.py writes a run folder so that nothing is
lost, read.py reads runs back. atomic_write_text writes any other results file (a summary, a table)
so that a reader never sees half of it."""
from kernelbench._io import atomic_write_text

from .read import (cell_key, collect_results, config_values, final_rows, in_published_folder, raw_rows, read_results,
                   resolved_text, run_folders, run_frame, tagged)
from .writing import Run, comparable_config, config_hash
from .schema import (ABSENT_FILE, COLUMNS, META_FILE, PUBLISHED_DIR, RESULTS_FILE, ROW_STATUSES, RUN_STATUSES,
                     TAG_COLUMNS, RunRecord)

__all__ = ["ABSENT_FILE", "COLUMNS", "TAG_COLUMNS", "ROW_STATUSES", "RUN_STATUSES", "RESULTS_FILE", "META_FILE",
           "PUBLISHED_DIR", "Run", "RunRecord", "atomic_write_text", "read_results", "raw_rows", "final_rows",
           "collect_results", "config_values", "resolved_text", "tagged", "cell_key", "run_folders",
           "in_published_folder", "run_frame", "comparable_config", "config_hash"]
