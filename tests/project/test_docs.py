"""The documentation site and the README. The site's references are generated when it is built
(docs/site-config/hooks.py), so they cannot go stale; what is checked here is that the generators cover
everything they document (every algorithm and parameter, every command and option; every config
field is tests/config/test_config.py's), that every generated section a page asks for exists, and
that the README keeps to its size budget. `make docs` builds the site with warnings as errors (CI runs it)."""
from __future__ import annotations

import html
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = ROOT / "docs"
README_BUDGET = 12 * 1024          # bytes: the README says what this is and points to the site


@pytest.fixture(scope="module")
def hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "site-config" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_keeps_to_its_size_budget():
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_BUDGET, (f"README.md is {size} bytes, over its {README_BUDGET}: move the detail "
                                   "into a page under docs/")


def test_readmes_links_point_to_files_of_the_repository():
    links = re.findall(r"\]\(([^)#]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert links
    assert [link for link in links if "://" not in link and not (ROOT / link).exists()] == []


def test_every_page_of_the_nav_exists_and_every_page_is_in_the_nav():
    import yaml

    config = yaml.safe_load((ROOT / "docs" / "site-config" / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(entry):
        if isinstance(entry, str):
            yield entry
        elif isinstance(entry, list):
            for item in entry:
                yield from pages(item)
        else:
            for value in entry.values():
                yield from pages(value)
    in_nav = list(pages(config["nav"]))
    on_disk = {p.relative_to(PAGES).as_posix() for p in PAGES.rglob("*.md")}
    assert len(in_nav) == len(set(in_nav)) and set(in_nav) == on_disk
    assert config["strict"] is True and config["docs_dir"] == ".."


def test_every_generated_section_a_page_asks_for_is_rendered(hooks):
    asked = {name for page in PAGES.rglob("*.md")
             for name in hooks.MARKER.findall(page.read_text(encoding="utf-8"))}
    from kernelbench.papers import paper_ids
    assert {"algorithms", "config", "cli", "reproduction"} <= asked
    assert {f"{kind}/{paper}" for paper in paper_ids() for kind in ("paper", "details")} <= asked
    for page in PAGES.rglob("*.md"):
        rendered = hooks.render(page.read_text(encoding="utf-8"))
        assert "<!-- generated:" not in rendered, page


def test_an_unknown_generated_section_fails_the_build(hooks):
    with pytest.raises(ValueError, match="unknown generated section 'nonsense'"):
        hooks.render("# page\n<!-- generated: nonsense -->\n")


def _as_read(markdown: str) -> list[str]:
    """A page's lines as a reader reads them: links' targets, the site's verdict spans and escapes left out."""
    text = re.sub(r"\]\([^)]*\)", "]()", markdown)
    return html.unescape(re.sub(r"</?span[^>]*>", "", text)).splitlines()


def test_the_site_says_what_reproduction_md_says(hooks):
    """The site's report pages are REPRODUCTION.md with the site's links: the same summary rows and
    findings on its report page, the same claims rows on the papers' pages."""
    reproduction = _as_read((ROOT / "REPRODUCTION.md").read_text(encoding="utf-8"))
    summary = [x for x in reproduction if x.startswith("- **") or re.match(r"\| \[.*\]\(\) \| (\d+ claims|no claims)", x)]
    rows = [x for x in reproduction if x.startswith("| [") and x not in summary]
    assert len(summary) > 10 and len(rows) > 100
    overview = _as_read(hooks.render("<!-- generated: reproduction -->"))
    assert [x for x in summary if x not in overview] == []
    on_pages = [x for page in sorted(PAGES.glob("results/*.md")) if "<!-- generated: paper/" in page.read_text()
                for x in _as_read(hooks.render(page.read_text(encoding="utf-8"))) if x.startswith("| [")]
    assert sorted(on_pages) == sorted(rows)


def test_placeholders_outside_code_are_shown_not_taken_for_html(hooks):
    text = "writes <name>.yaml, `<name>.yaml`\n```text\nrun <config>\n```\nfig<N>"
    assert hooks.escape_placeholders(text) == ("writes &lt;name>.yaml, `<name>.yaml`\n```text\nrun <config>\n```\n"
                                               "fig&lt;N>")


def test_the_algorithm_reference_has_every_algorithm_and_parameter():
    from kernelbench.algorithms import parameters_markdown
    from kernelbench.estimators import algorithms

    specs = algorithms()
    text = parameters_markdown(specs)
    sections = re.split(r"^#### ", text, flags=re.M)[1:]
    assert [re.match(r"`([^`]+)`", s).group(1) for s in sections] == sorted(specs)
    for section, (name, spec) in zip(sections, sorted(specs.items())):
        rows = re.findall(r"^\| `([^`]+)` \|", section, re.M)
        assert rows == list(spec.parameters), name


def test_the_cli_reference_has_every_command_and_option():
    """Walked independently of the generator: the commands Typer builds, and each one's options."""
    import typer

    from kernelbench.cli import app
    from kernelbench.cli.reference import cli_markdown

    text = cli_markdown()
    headings = re.findall(r"^#+ `(kernelbench[^`]*)`", text, re.M)

    def walk(name, command):
        yield name, command
        for child, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk(f"{name} {child}", sub)
    expected = dict(walk("kernelbench", typer.main.get_command(app)))
    assert {"kernelbench run", "kernelbench tune", "kernelbench datasets fetch"} <= set(expected)
    assert set(headings) == set(expected) - {"kernelbench"}
    sections = dict(zip(headings, re.split(r"^#+ `kernelbench[^`]*`", text, flags=re.M)[1:]))
    for name, command in expected.items():
        if name == "kernelbench":
            continue
        for param in command.params:
            for option in param.opts:
                if option.startswith("-"):
                    assert option in sections[name], (name, option)


def _key_paths(value, prefix=""):
    """Every key of a YAML document, dotted; the keys of a list's items under `name[]`."""
    if isinstance(value, dict):
        for key, item in value.items():
            name = prefix + ("on" if key is True else str(key))     # YAML 1.1 reads the key `on` as true
            yield name
            yield from _key_paths(item, name + ".")
    elif isinstance(value, list):
        for item in value:
            yield from _key_paths(item, prefix[:-1] + "[].")


@pytest.mark.parametrize("reference, files", [
    ("paper-files", sorted((ROOT / "kernelbench" / "papers").glob("*.yaml"))),
    ("registry", [ROOT / "datasets" / "registry.yaml"]),
], ids=["paper-files", "registry"])
def test_a_files_reference_has_every_key_the_files_use(hooks, reference, files):
    """Walked independently of the generator: every key of the real files is a row (`<name>` standing for
    a name the file chooses), but for the names of a mapping of free names (`{name: ...}`)."""
    import yaml

    rows = dict(re.findall(r"^\| `([^`]+)` \| .*? \| (.*) \|$", hooks.render(f"<!-- generated: {reference} -->"),
                           re.M))
    def pattern(key):
        return re.sub(r"<\w+>", "[^.]+", re.escape(key))
    free = [pattern(key) for key, meaning in rows.items() if "{" in meaning and "(keys below)" not in meaning]
    # a row's key and, for each name it stands for, the key up to that name (an entry's own name)
    known = {pattern(key[:m.end()]) for key in rows for m in re.finditer(r"<\w+>", key)} | set(map(pattern, rows))
    for path in files:
        for key in _key_paths(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if not any(re.match(f"{name}(\\.|\\[\\]\\.)", key) for name in free):
                assert any(re.fullmatch(p, key) for p in known), (path.name, key)


def test_every_config_and_script_the_readme_and_pages_name_exists():
    """Except the example files a guide has its reader write (the adding-* pages, which tests/guides/
    follow in an empty folder): a code block that names its file on its first line."""
    texts = [(ROOT / "README.md").read_text(encoding="utf-8")]
    texts += [page.read_text(encoding="utf-8") for page in PAGES.rglob("*.md")]
    path = r"((?:configs|scripts)/[\w.-]+\.(?:yaml|py))"
    named = {name for text in texts for name in re.findall(rf"\b{path}\b", text)}
    written = {name for page in PAGES.glob("guide/adding-*.md")
               for name in re.findall(rf"^```\w*\n# {path}\n", page.read_text(encoding="utf-8"), re.M)}
    assert len(named) > 10
    assert sorted(name for name in named - written if not (ROOT / name).is_file()) == []


# What makes each of the README's offline examples quick in CI, added after its own arguments: the
# same command on fewer trials, passes, rows or candidates.
README_QUICKER = {"run": ["--trials", "1", "--set", "stop.passes=1", "-q"],
                  "grid": ["--set", "stop.passes=1", "--set", "trials=1", "-q"],
                  "tune": ["--candidates", "2", "--set", "tune.rungs=1", "--set", "dataset.subsample=2000", "-q"]}


def readme_offline_examples() -> list[list[str]]:
    """The commands of the README's first code block under "Using it" (those it says need no network)."""
    import shlex

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    using = text[text.index("## Using it"):]
    block = using[using.index("```bash\n") + 8:]
    block = block[:block.index("```")]
    return [shlex.split(line.split("#")[0]) for line in block.splitlines() if line.strip()]


def test_the_readmes_offline_examples_run_with_no_network_and_no_mirror(tmp_path, monkeypatch, capsys):
    from kernelbench.cli import main

    examples = readme_offline_examples()
    assert {args[1] for args in examples} >= {"run", "grid", "tune", "compare", "report"}
    (tmp_path / "configs").symlink_to(ROOT / "configs")         # the README's paths, from a fresh folder
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KERNELBENCH_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELBENCH_MIRROR", "")
    monkeypatch.setenv("KERNELBENCH_OFFLINE", "1")
    for program, *args in examples:
        assert program == ".venv/bin/kernelbench", program
        try:
            main([*args, *README_QUICKER.get(args[0], [])])
        except SystemExit as e:
            assert e.code in (0, None), (args, capsys.readouterr().err[-2000:])
    out = capsys.readouterr().out
    assert (tmp_path / "results" / "compare" / "compare.html").is_file() and (tmp_path / "results" / "report.md").is_file()
    assert re.search(r"^Glasmachers & Qaadan \(BSGD\): \d+ published numbers: .*\(local runs\)$", out, re.M), out


def test_a_page_that_cites_a_section_of_the_readme_cites_one_it_has():
    headings = {h.strip().lower() for h in re.findall(r"^#+ (.+)$", (ROOT / "README.md").read_text(), re.M)}
    for page in PAGES.rglob("*.md"):
        for cited in re.findall(r"README's\s+([\w -]+?)(?: section)?[,.;:)\n]", page.read_text(encoding="utf-8")):
            assert cited.strip().lower() in headings, f"{page.name} cites the README's {cited!r}, which it lacks"
