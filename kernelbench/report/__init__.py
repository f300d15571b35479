"""`kernelbench report`: our measured numbers and the papers' conclusions next to the papers'.

The published numbers and the claims are data: each paper's file in kernelbench/papers (typed in
from the papers' texts under ../shared/papers). numbers.py builds the table of every published
number next to ours, with its status; verdicts.py tests each claim (a conclusion the paper draws
from an experiment) on the runs (outcomes.py: what a test gives); reproduction.py writes
REPRODUCTION.md from the published runs alone: the short report (per paper its findings, figures
and claims' verdicts: findings.py, paper_pages.py, marks.py) and a detail page per paper (its
numbers' verdicts with their reasons, and the runs' provenance); page.py renders markdown as a
standalone HTML page (markdown-it-py); compare.py is `kernelbench compare`, one page for any runs.
"""
from .numbers import (
    VERDICTS,
    build_numbers,
    number_status,
    numbers_sentence,
    pooling_conflict,
    report_papers,
    select_rows,
    tolerance,
    verdict_and_reason,
)
from .page import markdown_to_html
from .reproduction import (
    absent_data,
    links_back_elsewhere,
    not_run_experiments,
    reproduction_command,
    reproduction_files,
    reproduction_markdown,
    shortened,
)
from .claims_text import build_report
from .outcomes import CLAIM_VERDICTS, ClaimVerdict
from .verdicts import judge_claim, judge_paper, rows_read

__all__ = ["CLAIM_VERDICTS", "VERDICTS", "ClaimVerdict", "absent_data", "build_numbers", "build_report",
           "judge_claim", "judge_paper", "links_back_elsewhere", "markdown_to_html", "not_run_experiments",
           "number_status", "numbers_sentence", "pooling_conflict", "report_papers", "reproduction_command",
           "reproduction_files", "reproduction_markdown", "rows_read", "select_rows", "shortened",
           "tolerance", "verdict_and_reason"]
