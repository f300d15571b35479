"""Every config in configs/ follows one file-name pattern and says what it is for (its tags).

    <dataset>_<algorithm>[_<variant>].yaml

dataset = the config's dataset.name (a registry key, or `synthetic`) and algorithm = its
algorithm.name, both with '-' written as '_'. A variant tells apart several configs of one pair:
the paper id where papers share the pair (a9a_dsg_dai2014, a9a_dsg_li2016; the figure sets of Dai
et al., Li & Poczos and Gu et al. carry theirs throughout), or what differs within one paper
(_grid, _5pass, _diag, _avg). The run name (`name:`, written into results) is the file's
stem. Every config but the demos (quickstart.yaml, own_data_csv.yaml: your own CSV files) carries tags.paper (figures and the report select runs by
tags, never by names). The list is collected at import time: a new config is checked by being added.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kernelbench._vocab import ROLES
from kernelbench.config import load_config
from kernelbench.papers import paper_ids

REPO = Path(__file__).resolve().parents[2]
CONFIGS = sorted((REPO / "configs").glob("*.y*ml"))
UNTAGGED = {"quickstart", "own_data_csv"}   # the offline demos: no paper's experiment
VARIANT = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)*$")


def test_there_are_configs_and_all_end_in_yaml():
    assert len(CONFIGS) > 100
    assert all(path.suffix == ".yaml" for path in CONFIGS), [p.name for p in CONFIGS if p.suffix != ".yaml"]


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_config_name_follows_the_pattern_and_tags_are_set(path):
    cfg = load_config(path)
    stem = path.stem
    if stem in UNTAGGED:
        assert cfg.tags.as_dict() == {}
        return
    pair = f"{cfg.dataset.name}_{cfg.algorithm.name}".replace("-", "_")
    assert stem == pair or stem.startswith(pair + "_"), \
        f"{path.name}: expected {pair}.yaml or {pair}_<variant>.yaml (dataset.name _ algorithm.name)"
    variant = stem[len(pair) + 1:]
    assert stem == pair or VARIANT.match(variant), f"{path.name}: variant {variant!r}"
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert raw.get("name") in (None, stem), f"{path.name}: name: {raw.get('name')} is not the file's stem"
    assert cfg.name == stem
    assert cfg.tags.paper in paper_ids(), f"{path.name}: tags.paper missing or unknown"
    assert cfg.tags.role in ROLES, f"{path.name}: tags.role missing"
    if variant in paper_ids():
        assert variant == cfg.tags.paper, f"{path.name}: named for {variant}, tagged {cfg.tags.paper}"



# ------------------------------------------------------------------------------ the `tags:` key

BASE = {"dataset": {"name": "digits86"}, "algorithm": "dsg"}


@pytest.mark.parametrize("tags, field, words", [
    ({"colour": "red"}, "tags.colour", ["unknown key", "paper", "figure", "panel", "role"]),
    ({"paper": "dai2015"}, "tags.paper", ["dai2015", "did you mean 'dai2014'", "geng2019", "glasmachers2019"]),
    ({"role": "mine"}, "tags.role", ["ours", "baseline"]),
    ({"figure": "Fig. 1"}, "tags.figure", ["fig<N>", "table<N>", "Fig. 1"]),
    ({"panel": 3}, "tags.panel", ["string", "3"]),
    ({"panel": ""}, "tags.panel", ["non-empty"]),
    ("dai2014", "tags", ["mapping", "paper"]),
])
def test_bad_tags_are_refused_naming_the_field(tags, field, words):
    from kernelbench.config import config_from_dict
    from kernelbench.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        config_from_dict({**BASE, "tags": tags})
    message = str(info.value)
    assert message.startswith(f"{field}:") and info.value.field == field, message
    for word in words:
        assert word in message, message


def test_tags_resolve_round_trip_and_take_overrides():
    from kernelbench.config import config_from_dict, config_to_dict

    cfg = config_from_dict({**BASE, "tags": {"paper": "li2016", "figure": "table3", "panel": "(a)"}},
                           overrides={"tags.role": "baseline"})
    assert cfg.tags.as_dict() == {"paper": "li2016", "figure": "table3", "panel": "(a)", "role": "baseline"}
    assert config_to_dict(cfg)["tags"] == cfg.tags.as_dict()
    assert config_from_dict(config_to_dict(cfg)).tags == cfg.tags
    plain = config_from_dict(BASE)
    assert plain.tags.as_dict() == {} and config_to_dict(plain)["tags"] == {}


def test_a_config_comment_that_names_another_config_names_one_that_exists_and_runs_the_set_it_says():
    """The digits86 miniatures of Dai et al.'s MNIST8M 8 vs 6 name the full-size config in their comment;
    that config exists and selects the classes the comment gives (classes: [8, 6] on mnist8m)."""
    named = {}
    for path in CONFIGS:
        comment = "".join(line for line in path.read_text().splitlines(keepends=True) if line.startswith("#"))
        for other in re.findall(r"configs/([\w.]+\.yaml)", comment):
            named.setdefault(other, []).append(path.stem)
    assert "mnist8m_dsg_8vs6_dai2014.yaml" in named, named
    assert {p.stem for p in CONFIGS if p.stem.startswith("digits86_")} <= set(named["mnist8m_dsg_8vs6_dai2014.yaml"])
    for other in named:
        assert (REPO / "configs" / other).is_file(), (other, named[other])
    full = load_config(REPO / "configs" / "mnist8m_dsg_8vs6_dai2014.yaml")
    assert full.dataset.name == "mnist8m" and list(full.dataset.classes) == [8, 6]
