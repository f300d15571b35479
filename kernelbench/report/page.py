"""The report's markdown as a standalone HTML page."""
from __future__ import annotations

import html
import re

# a table cell's separator: a pipe not escaped as \| (a cell's text may carry one, e.g. |α|)
_SEPARATOR = re.compile(r"(?<!\\)\|")


def markdown_to_html(markdown: str) -> str:
    """The report's markdown (headings, paragraphs, pipe tables) as a standalone HTML page."""
    out, in_table = ["<!doctype html><meta charset='utf-8'><title>kernelbench report</title>",
                     "<style>table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}</style>"], False
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [html.escape(c.strip().replace("\\|", "|")) for c in _SEPARATOR.split(line.strip().strip("|"))]
            if set("".join(cells)) <= {"-"}:
                continue
            if not in_table:
                out.append("<table>")
                in_table = True
                out.append("<tr>" + "".join(f"<th>{c}</th>" for c in cells) + "</tr>")
            else:
                out.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
            continue
        if in_table:
            out.append("</table>")
            in_table = False
        if line.startswith("### "):
            out.append(f"<h3>{html.escape(line[4:])}</h3>")
        elif line.startswith("## "):
            out.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line.startswith("# "):
            out.append(f"<h1>{html.escape(line[2:])}</h1>")
        elif line.strip():
            out.append(f"<p>{html.escape(line)}</p>")
    if in_table:
        out.append("</table>")
    return "\n".join(out) + "\n"
