"""Markdown as a standalone HTML page: the one Markdown renderer of the package (markdown-it-py,
CommonMark with pipe tables), for the report and the compare page."""
from __future__ import annotations

import base64
import html

from markdown_it import MarkdownIt

STYLE = ("body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}"
         "table{border-collapse:collapse;margin:0.5rem 0}td,th{border:1px solid #ccc;padding:2px 6px}"
         "th{background:#f3f3f3}img{max-width:100%;height:auto}code{font-size:90%}")


def _renderer() -> MarkdownIt:
    # raw HTML in the markdown is escaped ("html": False): a run's texts (messages, params) are data
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown_to_html(markdown: str, *, title: str = "kernelbench report", images: dict | None = None) -> str:
    """`markdown` as a standalone page. `images` maps an image's path as the markdown writes it to
    the PNG's bytes: the page embeds them (data: URIs), so that it renders alone, with no file
    beside it; an image not in `images` keeps its path."""
    md = _renderer()
    images = images or {}
    render_image = md.renderer.rules["image"]

    def embed(renderer, tokens, idx, options, env):
        src = tokens[idx].attrGet("src")
        if src in images:
            tokens[idx].attrSet("src", "data:image/png;base64," + base64.b64encode(images[src]).decode("ascii"))
        return render_image(tokens, idx, options, env)

    md.add_render_rule("image", embed)
    return (f"<!doctype html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n<title>{html.escape(title)}</title>\n"
            f"<style>{STYLE}</style>\n</head>\n<body>\n{md.render(markdown)}</body>\n</html>\n")
