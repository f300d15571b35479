"""Config fuzzing beyond tests/config/test_config.py's property: the real algorithms and the
real dataset registry, every shipped config as a starting point, containers (lists, mappings) in
place of scalars and scalars in place of whole sections, zero / negative sizes, absurd values,
and the YAML path (`load_config`). Every mutation validates or is a ConfigError; via the CLI,
exit 2 without a traceback (or, for absurd-but-valid values, a finished run)."""
from __future__ import annotations

import copy
import dataclasses
import math

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO, assert_user_error, describe, env_for, figure, kb
from kernelbench.config import ExperimentConfig, config_from_dict, config_to_dict, load_config
from kernelbench.errors import ConfigError

SHIPPED = sorted((REPO / "configs").glob("*.yaml"))
BASES = [yaml.safe_load(p.read_text()) for p in SHIPPED]
SETTINGS = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow,
                                                                      HealthCheck.function_scoped_fixture])

ABSURD = st.sampled_from([0, -1, -0.0, 1e9, -1e9, 1e-12, 1e300, 1e-300, 2**63, -2**63, 2**31, float("inf"),
                          float("-inf"), float("nan"), "1e9", "1e-12", "-5", "0", "1e999", True, False, None,
                          "", " ", "median", "auto", "hinge", "a9a", "../../etc/passwd", "/etc/passwd"])
SCALAR = st.one_of(ABSURD, st.integers(-10**6, 10**6), st.floats(), st.text(max_size=10))
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                     max_leaves=6)
KEYS = st.one_of(st.sampled_from(["C", "gamma", "passes", "every", "seed", "name", "path", "params", "grid",
                                  "log10", "threads", "budget", "on", "test", "bogus", "Gamma", "", "0"]),
                 st.text(max_size=6), st.integers(-2, 2), st.none(), st.booleans())


def _mappings(data, path=()):
    yield path, data
    for key, value in list(data.items()):
        if isinstance(value, dict):
            yield from _mappings(value, path + (key,))


@st.composite
def mutated(draw):
    data = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 4))):
        path, target = draw(st.sampled_from(list(_mappings(data))))
        kind = draw(st.sampled_from(["add", "drop", "replace", "replace", "absurd", "section"]))
        keys = list(target)
        if kind == "add" or not keys:
            target[draw(KEYS)] = draw(VALUE)
        elif kind == "drop":
            del target[draw(st.sampled_from(keys))]
        elif kind == "replace":
            target[draw(st.sampled_from(keys))] = draw(VALUE)
        elif kind == "absurd":
            target[draw(st.sampled_from(keys))] = draw(ABSURD)
        else:   # a whole section (or the top level's) replaced by a scalar / list
            data[draw(st.sampled_from(list(data) or ["dataset"]))] = draw(st.one_of(SCALAR, st.lists(SCALAR, max_size=2)))
    return data


def _check(thunk, tally):
    try:
        cfg = thunk()
    except ConfigError as exc:
        assert str(exc).strip()
        tally["ConfigError"] += 1
        return
    assert isinstance(cfg, ExperimentConfig)
    assert cfg.trials >= 1 and (cfg.evaluate.every is None or cfg.evaluate.every >= 1)   # None: auto
    for value in cfg.algorithm.params.values():
        assert not (isinstance(value, float) and not math.isfinite(value)), cfg.algorithm.params
    assert config_from_dict(config_to_dict(cfg)) == dataclasses.replace(cfg, source=None)
    tally["valid"] += 1


@settings(max_examples=300, **SETTINGS)
@given(data=mutated())
def test_mutated_real_configs_validate_or_raise_config_error(data):
    _check(lambda: config_from_dict(data, base_dir=REPO), figure("config fuzz (dict)"))


@settings(max_examples=150, **SETTINGS)
@given(data=mutated())
def test_mutated_real_configs_as_yaml_files(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("cfg")
    path = folder / "c.yaml"
    try:
        path.write_text(yaml.safe_dump(data, allow_unicode=True))
    except (yaml.YAMLError, UnicodeEncodeError):
        return
    _check(lambda: load_config(path), figure("config fuzz (yaml file)"))


@settings(max_examples=200, **SETTINGS)
@given(text=st.one_of(st.text(max_size=80), st.binary(max_size=80).map(lambda b: b.decode("latin-1")),
                      st.sampled_from(["{", "[1, 2", "name: [", "a: b: c", "--- !!binary x", "*alias", "&a [*a]",
                                       "name: x\nname: y\n", "\t- x", "!!python/name:os.system x"])))
def test_arbitrary_yaml_text_is_a_config_error(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("cfg") / "c.yaml"
    path.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    _check(lambda: load_config(path), figure("config fuzz (yaml text)"))


# ------------------------------------------------------------------------------ through the CLI

BASE = {"name": "cfgfuzz", "dataset": {"name": "digits86", "scale": "minmax"},
        "algorithm": {"name": "dsg", "params": {"batch_size": 8, "block_size": 8}},
        "stop": {"iterations": 4}, "evaluate": {"every": 2, "on": ["objective", "test_error"]}}
BAD = {
    "missing_dataset": lambda d: d.pop("dataset"),
    "unknown_nested_key": lambda d: d["algorithm"]["params"].update(gama=1.0),
    "negative_batch": lambda d: d["algorithm"]["params"].update(batch_size=-3),
    "zero_trials": lambda d: d.update(trials=0),
    "list_as_section": lambda d: d.update(stop=[1, 2]),
    "string_every": lambda d: d["evaluate"].update(every="often"),
}


DEFAULT_BAD = ("missing_dataset", "unknown_nested_key", "negative_batch")


@pytest.mark.parametrize("case", [c if c in DEFAULT_BAD else pytest.param(c, marks=pytest.mark.slow) for c in sorted(BAD)])
def test_bad_configs_through_the_cli_exit_2(tmp_path, case):
    data = copy.deepcopy(BASE)
    BAD[case](data)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(data))
    proc = kb("run", config, "--out", tmp_path / "out", "-q", env=env_for(tmp_path / "cache"))
    assert_user_error(proc, "c.yaml")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


@pytest.mark.parametrize("params", [{"gamma": 1e9, "C": 1e-12},
                                    pytest.param({"gamma": 1e9}, marks=pytest.mark.slow),
                                    pytest.param({"gamma": 1e9, "C": 1e12, "step": 1e6}, marks=pytest.mark.slow)])
def test_absurd_but_valid_values_run_or_fail_cleanly(tmp_path, params):
    """Absurd yet valid numbers: the run finishes (rows may say `diverged`) or is a user error;
    never a traceback, never a NaN written as a value with status ok."""
    data = copy.deepcopy(BASE)
    data["algorithm"]["params"].update(params)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(data))
    proc = kb("run", config, "--out", tmp_path / "out", "-q", env=env_for(tmp_path / "cache"))
    assert proc.returncode in (0, 2) and "Traceback" not in proc.stderr, describe(proc)
    if proc.returncode == 0:
        import pandas as pd
        (folder,) = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
        df = pd.read_csv(folder / "results.csv")
        ok = df[df["status"] == "ok"]
        assert ok["objective"].map(lambda v: v == v and math.isfinite(v)).all(), df[["status", "objective"]]
