"""The documentation site's paper pages as a reader's browser shows them: the site is built (MkDocs,
as `make docs` does) and each paper's page opened in headless Chromium at a desktop's and a phone's
width. No table may be wider than the text column (a wider one scrolls sideways and hides the
verdicts), every figure must decode, and every claim's verdict must lie inside the window. Building
the site takes about a minute: the slow tier (CI installs MkDocs, `make docs`, before the tests)."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kernelbench.papers import paper_ids

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "docs" / "site-config" / "mkdocs.yml"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
HAS_MKDOCS = all(importlib.util.find_spec(m) is not None for m in ("mkdocs", "material"))
DESKTOP, PHONE = 1280, 500          # window widths, CSS pixels (500: the narrowest headless Chromium opens)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install -y chromium); CI installs it"),
    pytest.mark.skipif(not HAS_MKDOCS, reason="no MkDocs here: pip install -e '.[docs]' (make docs installs it)"),
]

# appended to a copy of a page: once it has loaded and the theme's script has run, where the browser
# put each table, figure and claim's verdict
PROBE = """<script>
window.addEventListener("load", () => setTimeout(() => {
  const column = document.querySelector(".md-content__inner").getBoundingClientRect();
  const box = r => ({left: r.left, right: r.right, width: r.width});
  const report = {
    window: window.innerWidth, column: box(column),
    tables: [...document.querySelectorAll("article table")].map(t => box(t.getBoundingClientRect())),
    images: [...document.querySelectorAll("article img")].map(i => ({src: i.getAttribute("src"), complete: i.complete,
                                                                      width: i.naturalWidth})),
    verdicts: [...document.querySelectorAll("article .claims tbody td:nth-child(2)")].map(
      td => ({text: td.textContent.trim(), ...box(td.getBoundingClientRect())})),
  };
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify(report);
  document.body.appendChild(out);
}, 300));
</script>"""
TOO_WIDE = "<style>.md-typeset table:not([class]) { min-width: 2400px; table-layout: auto !important; }</style>"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--config-file", str(CONFIG),
                           "--site-dir", str(out)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out


def probe(page: Path, width: int, *, extra: str = "") -> dict:
    """What Chromium, `width` pixels wide, made of `page` (a copy beside it carries the probe)."""
    copy = page.with_name("probe.html")
    copy.write_text(page.read_text(encoding="utf-8").replace("</body>", extra + PROBE + "</body>"), encoding="utf-8")
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                           f"--window-size={width},900", "--hide-scrollbars", "--virtual-time-budget=5000",
                           "--dump-dom", copy.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"chromium exit {proc.returncode}, no probe in its DOM:\n{proc.stderr[-2000:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


def problems(report: dict) -> list[str]:
    """What a reader could not see: tables past the text column, figures that did not decode,
    verdicts outside the window."""
    right = report["column"]["right"] + 1
    found = [f"table {i} ends at {t['right']:.0f} px, past the text column's {right:.0f}"
             for i, t in enumerate(report["tables"]) if t["right"] > right]
    found += [f"figure {i['src']} not decoded" for i in report["images"] if not (i["complete"] and i["width"] > 0)]
    found += [f"verdict {v['text']!r} spans {v['left']:.0f}–{v['right']:.0f} px, outside the {report['window']} px window"
              for v in report["verdicts"] if v["left"] < 0 or v["right"] > report["window"]]
    return found


def paper_page(site: Path, paper: str) -> Path:
    return site / "results" / paper / "index.html"


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_every_paper_page_shows_its_tables_figures_and_verdicts_inside_the_window(site, width):
    for paper in paper_ids():
        page = paper_page(site, paper)
        report = probe(page, width)
        assert report["window"] == width
        assert report["tables"] and report["verdicts"], (paper, report)
        assert len(report["images"]) == page.read_text(encoding="utf-8").count("<img "), paper
        assert problems(report) == [], paper


def test_the_check_fails_when_a_table_is_made_too_wide(site):
    report = probe(paper_page(site, "dai2014"), DESKTOP, extra=TOO_WIDE)
    assert report["tables"] and any("past the text column" in p for p in problems(report))
