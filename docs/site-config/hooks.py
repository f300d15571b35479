"""MkDocs hook: the generated parts of the site, rendered at build time from the declarations and
the committed results, never committed as copies. A page asks for one with a marker line,
`<!-- generated: NAME -->` (NAME below); an unknown name fails the build."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]          # the repository: this is docs/site-config/hooks.py
PUBLISHED = ROOT / "results" / "published"
SITE_FIGURES = "results/figures"                    # where the site serves the published figures
MARKER = re.compile(r"^<!-- generated: ([\w./-]+) -->$", re.M)


def _algorithms() -> str:
    from kernelbench.algorithms import parameters_markdown
    from kernelbench.estimators import algorithms
    return parameters_markdown(algorithms())


def _config() -> str:
    from kernelbench.config import fields_markdown
    return fields_markdown()


def _paper_files() -> str:
    from kernelbench.papers import reference_markdown
    return reference_markdown()


def _registry() -> str:
    from kernelbench.data.registry import reference_markdown
    return reference_markdown()


def _cli() -> str:
    from kernelbench.cli.reference import cli_markdown
    return cli_markdown()


@lru_cache(maxsize=1)
def _report_pages() -> dict:
    # the claims are judged once per build: every report page reads the same verdicts
    from kernelbench.report.reproduction import site_pages
    return site_pages(PUBLISHED)


def _report_page(name: str):
    return lambda: _report_pages()[name]


def _published(paper: str):
    def render() -> str:
        from kernelbench.report.tables import final_numbers_markdown
        table = final_numbers_markdown(PUBLISHED / paper)
        return table or f"No published run of {paper} yet (`kernelbench publish {paper}`)."
    return render


def _bench(name: str):
    def render() -> str:
        from kernelbench.benchmarks import published_markdown
        return published_markdown(PUBLISHED, name)
    return render


def _generators() -> dict:
    from kernelbench.benchmarks import published_names
    from kernelbench.papers import paper_ids
    return {"algorithms": _algorithms, "config": _config, "paper-files": _paper_files, "registry": _registry,
            "cli": _cli, "reproduction": _report_page("reproduction"),
            **{f"{kind}/{paper}": _report_page(f"{kind}/{paper}") for paper in paper_ids() for kind in ("paper", "details")},
            **{f"published/{paper}": _published(paper) for paper in paper_ids()},
            **{f"bench/{name}": _bench(name) for name in published_names(PUBLISHED)}}


def render(markdown: str) -> str:
    """`markdown` with every marker line replaced by what it names."""
    def replace(match: re.Match) -> str:
        name, generators = match.group(1), _generators()
        if name not in generators:
            raise ValueError(f"unknown generated section {name!r}: use one of {', '.join(generators)}")
        return escape_placeholders(generators[name]().strip())
    return MARKER.sub(replace, markdown)


# the only tags a generated section writes: the report's verdict marks and claims boxes
# (kernelbench/report/paper_pages.py), kept as HTML for the stylesheet to colour and lay out
REPORT_TAG = r'<(?:span class="verdict verdict-\w+"|div class="claims" markdown|/span|/div)>'


def escape_placeholders(text: str) -> str:
    """Help texts and docs write placeholders as <name>, meant literally; outside code Markdown would
    take them for HTML tags and drop them."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            line = re.sub(rf"(`[^`]*`|{REPORT_TAG})|<", lambda m: m.group(1) or "&lt;", line)
        out.append(line)
    return "\n".join(out)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return render(markdown)


def on_files(files, config):
    """The figures drawn from the published runs, served beside the paper pages that show them."""
    from mkdocs.structure.files import File

    for png in sorted((PUBLISHED / "figures").glob("*.png")):
        files.append(File.generated(config, f"{SITE_FIGURES}/{png.name}", abs_src_path=str(png)))
    return files
