"""Reading one paper file: its sections as declared (schema.py, claims.py), then the rules that tie
them to the file (the id is the file's name, an entry's `needs` is one of the file's, every section
label is some claim's ...). Every problem is a ConfigError naming the file, the entry and the key."""
from __future__ import annotations

from pathlib import Path

import yaml

from kernelbench.errors import ConfigError
from kernelbench.papers.claims import claim_path, read_claim, read_without_row
from kernelbench.papers.schema import Citation, Paper, Published, Sweep
from kernelbench.schema import fail, read_list, read_object, read_section, refusals_as, show


def load_paper(path) -> Paper:
    """One paper file, checked: unknown keys, missing ones and wrong values are a ConfigError naming
    the file and the entry. Its id must be its file's name."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the paper file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{path}: invalid YAML{at}: {getattr(e, 'problem', None) or e}") from None
    with refusals_as(lambda where, problem: ConfigError(f"{path}: {where or 'top level'}: {problem}")):
        return read_paper(data, path.stem)


def read_paper(data, name: str) -> Paper:
    """A paper file's data, read from the file called `name`."""
    values = read_section(Paper, data, "")
    paper_id = values["id"]
    if paper_id != name:
        fail("id", f"{paper_id!r} is not the file's name ({name!r})")
    if values["figure_prefix"] != f"{paper_id}_":
        fail("figure_prefix", f"expected {paper_id + '_'!r} (the id and '_'), got {values['figure_prefix']!r}")
    citation = read_object(Citation, data["citation"], "citation")
    sweeps = tuple(read_sweep(sweep, f"sweeps[{i}]")
                   for i, sweep in enumerate(read_list(data["sweeps"], "sweeps", "mappings")))
    needs, differences = values.pop("needs"), values.pop("differences")
    published = tuple(read_entry(entry, entry_path(i, entry), paper_id, needs, differences)
                      for i, entry in enumerate(read_list(data["published"], "published", "mappings")))
    sections, defects = values["sections"], values["extraction_defects"]
    claims = tuple(read_claim(claim, claim_path(i, claim), paper_id, sections, defects)
                   for i, claim in enumerate(read_list(data.get("claims"), "claims", "mappings")))
    without_row = tuple(read_without_row(raw, f"without_row[{i}]", sections, defects)
                        for i, raw in enumerate(read_list(data.get("without_row"), "without_row", "mappings")))
    _claims_rules(claims, without_row, sections, defects)
    return Paper(citation=citation, sweeps=sweeps, published=published, claims=claims, without_row=without_row,
                 **values)


def read_sweep(raw, path: str) -> Sweep:
    """A sweep; its `over` names at least one key (a sweep of no point runs nothing)."""
    sweep = read_object(Sweep, raw, path)
    if not sweep.over:
        fail(f"{path}.over", "expected at least one dotted config key and its values, e.g. "
                             "{dataset.subsample: [1000, 2000]}")
    return sweep


def _claims_rules(claims: tuple, without_row: tuple, sections: dict, defects: dict):
    """Every repair and every section label is used by some claim or sentence without a row; claim ids
    are unique; a sentence without a row is no claim's sentence, and listed once."""
    quoted = (*claims, *without_row)
    unused = [verbatim for verbatim in defects if not any(verbatim in q.quote for q in quoted if q.reads)]
    if unused:                          # a repair no quote needs is a typo or a leftover
        fail("extraction_defects", f"{unused[0]!r} is in no quote that has `reads`")
    unused = [label for label in sections if not any(q.section == label for q in quoted)]
    if unused:
        fail("sections", f"{unused[0]!r} is no claim's or sentence without a row's section")
    claimed = {(c.section, c.sentence): c.id for c in claims}
    listed = set()
    for i, s in enumerate(without_row):
        if (s.section, s.sentence) in claimed:
            fail(f"without_row[{i}]", f"{s.locator} has a row (claim {claimed[s.section, s.sentence]}): "
                                      "remove it from without_row")
        if (s.section, s.sentence) in listed:
            fail(f"without_row[{i}]", f"{s.locator} is listed twice")
        listed.add((s.section, s.sentence))
    seen = set()
    for i, claim in enumerate(claims):
        if claim.id in seen:
            fail(f"claims[{i}] ({claim.id})", "the id is already taken by an earlier claim; ids are unique "
                                              "within the paper")
        seen.add(claim.id)


def entry_path(index: int, raw) -> str:
    """How messages name a published entry: its index, and its dataset, algorithm and metric."""
    named = [raw[k] for k in ("dataset", "algorithm", "metric")
             if isinstance(raw, dict) and isinstance(raw.get(k), str)]
    return f"published[{index}] ({', '.join(named)})" if named else f"published[{index}]"


def read_entry(raw, path: str, paper_id: str, needs: dict, differences: dict) -> Published:
    """A published entry; its `needs` and `known_difference` short names replaced by what the file's
    `needs` and `differences` say."""
    values = read_section(Published, raw, path)
    for field_name, file_key, named in (("needs", "needs", needs), ("known_difference", "differences", differences)):
        if field_name in raw:
            key = raw[field_name]
            if not isinstance(key, str) or key not in named:
                fail(f"{path}.{field_name}", f"expected one of the file's `{file_key}` "
                                             f"({', '.join(named) or 'none'}), got {show(key)}")
            values[field_name] = named[key]
    return Published(paper=paper_id, **values)
