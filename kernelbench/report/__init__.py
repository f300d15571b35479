"""`kernelbench report`: our measured numbers next to the papers' published ones.

The published values are data: each paper's file in kernelbench/papers (typed in from the papers'
texts under ../shared/papers). claims.py builds the table of every published value next to ours,
with its status; reproduction.py writes REPRODUCTION.md, the same table computed from the published
runs alone, each verdict with its reason, and the runs' provenance; page.py renders markdown as a
standalone HTML page (markdown-it-py); compare.py is `kernelbench compare`, one page for any runs.
"""
from .claims import (
    VERDICTS,
    build_report,
    claim_status,
    metric_known,
    pooling_conflict,
    report_papers,
    rows_read,
    tolerance,
    verdict_and_reason,
)
from .page import markdown_to_html
from .reproduction import absent_data, not_run_experiments, reproduction_command, reproduction_markdown, shortened

__all__ = ["VERDICTS", "absent_data", "build_report", "claim_status", "markdown_to_html", "metric_known",
           "not_run_experiments", "pooling_conflict", "report_papers", "reproduction_command",
           "reproduction_markdown", "rows_read", "shortened", "tolerance", "verdict_and_reason"]
