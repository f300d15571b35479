"""The config layer: valid configs resolve, every invalid one is a ConfigError that
names the field by its dotted path."""
from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelbench._vocab import TAGS
from kernelbench.config import (FIELDS, AlgorithmConfig, DatasetConfig, EvaluateConfig, ExperimentConfig, StopConfig,
                                TagsConfig, TuneConfig, config_from_dict, config_to_dict, expand_grid, fields_markdown,
                                load_config)
from kernelbench.config import dataset as dataset_rules
from kernelbench.schema import Count, section
from kernelbench.errors import ConfigError, KernelbenchError
from kernelbench import params as kb_params
from kernelbench.params import BOOLEAN, NONE, POSITIVE, TEXT, Choice, Declared, Integer, declare, param
from kernelbench.algorithms import ALGORITHMS, register_algorithm

DATASETS = ["a9a", "digits86", "susy"]


class DummyEstimator(Declared):
    """A test double declaring parameters of every kind the config layer handles."""
    parameters = declare(
        C=kb_params.C, gamma=kb_params.GAMMA,
        loss=param("hinge", "loss", Choice("hinge", "logistic")),
        batch_size=param(256, "mini-batch size", Integer(1)),
        block_size=param(None, "features per block (None: all)", Integer(1), NONE),
        eta=param(10.0, "step scale", POSITIVE),
        threads=kb_params.THREADS,
        shuffle=param(True, "shuffle the rows", BOOLEAN),
        note=param("x", "any text", TEXT),
        budget=param(0, "0 = unlimited", Integer(0)),
        random_state=kb_params.RANDOM_STATE)


class SingleThreadEstimator(Declared):
    parameters = declare(C=kb_params.C, random_state=kb_params.RANDOM_STATE)


@pytest.fixture(scope="module", autouse=True)
def _registry_and_datasets():
    """A dummy algorithm (the real solvers are written elsewhere) and a fake dataset registry."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dataset_rules, "dataset_names", lambda: list(DATASETS))
        register_algorithm("dummy", classifier=DummyEstimator, description="test double",
                           tasks=("binary",), smoke_params={"batch_size": 8})
        register_algorithm("single", classifier=SingleThreadEstimator, description="no threads",
                           tasks=("binary",))
        try:
            yield
        finally:
            ALGORITHMS.pop("dummy", None)
            ALGORITHMS.pop("single", None)


def full_config() -> dict:
    return {
        "name": "a9a_dummy",
        "dataset": {"name": "a9a", "subsample": 1000, "test": "official", "labeled": 200,
                    "scale": "standard"},
        "algorithm": {"name": "dummy", "params": {"C": 1.0, "gamma": 0.1, "loss": "logistic",
                                                  "batch_size": 64, "eta": 10}},
        "grid": {"C": {"log10": [-3, 3, 7]}, "gamma": [0.01, 0.1]},
        "cv": 3,
        "trials": 4,
        "seed": 7,
        "stop": {"passes": 2, "seconds": 60},
        "evaluate": {"every": 100, "on": ["objective", "test_error"]},
    }


def raises_at(field_path: str, data=None, *, match: str | None = None, **kwargs):
    """Assert config_from_dict(data) raises a ConfigError whose message names `field_path`."""
    with pytest.raises(ConfigError) as info:
        config_from_dict(full_config() if data is None else data, **kwargs)
    message = str(info.value)
    assert field_path in message, message
    if match is not None:
        assert match in message, message
    return message


def with_(path: str, value, base=None) -> dict:
    data = copy.deepcopy(full_config() if base is None else base)
    *parents, last = path.split(".")
    target = data
    for p in parents:
        target = target[p]
    target[last] = value
    return data


def without(path: str) -> dict:
    data = full_config()
    *parents, last = path.split(".")
    target = data
    for p in parents:
        target = target[p]
    del target[last]
    return data


# ---------------------------------------------------------------------------------------------
# Valid configs
# ---------------------------------------------------------------------------------------------

def test_full_config_resolves_and_round_trips(tmp_path):
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(full_config()))
    cfg = load_config(path)
    assert isinstance(cfg, ExperimentConfig)
    assert cfg.source == str(path)
    assert cfg.dataset.name == "a9a" and cfg.dataset.subsample == 1000
    assert cfg.algorithm.params["gamma"] == 0.1
    assert cfg.algorithm.params["eta"] == 10.0 and isinstance(cfg.algorithm.params["eta"], float)
    assert cfg.algorithm.params["shuffle"] is True           # default filled in
    assert cfg.algorithm.params["budget"] == 0               # default, not range-checked
    assert cfg.grid["C"] == [0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0]
    assert cfg.stop.passes == 2.0 and cfg.stop.seconds == 60.0 and cfg.stop.iterations is None
    assert cfg.evaluate.on == ("objective", "test_error")

    resolved = config_to_dict(cfg)
    # YAML- and JSON-serialisable, and reading it back gives the same config.
    import json
    again = config_from_dict(yaml.safe_load(yaml.safe_dump(resolved)))
    assert again == config_from_dict(json.loads(json.dumps(resolved)))
    assert again == ExperimentConfig(**{**cfg.__dict__, "source": None})


def test_minimal_config_takes_documented_defaults(tmp_path):
    path = tmp_path / "my run.yaml"
    path.write_text("dataset: {name: digits86}\nalgorithm: {name: dummy}\n")
    cfg = load_config(path)
    assert cfg.name == "my_run"                 # the file stem, made folder-safe
    assert (cfg.cv, cfg.trials, cfg.seed, cfg.grid) == (5, 1, 0, {})
    assert (cfg.stop.passes, cfg.stop.iterations, cfg.stop.seconds) == (None, None, None)   # as the estimator's fit: its `passes`
    assert cfg.evaluate.every is None                   # auto: about 10 points per pass
    assert cfg.evaluate.on == ("objective", "train_error", "test_error")
    assert cfg.dataset.test == "official" and cfg.dataset.scale == "none"
    assert cfg.algorithm.params == {"C": 1.0, "gamma": "median", "loss": "hinge",
                                    "batch_size": 256, "block_size": None, "eta": 10.0,
                                    "threads": 1, "shuffle": True, "note": "x", "budget": 0}


def test_yaml_exponent_strings_are_numbers(tmp_path):
    # PyYAML reads 1e-3 (no dot) as the string "1e-3".
    path = tmp_path / "e.yaml"
    path.write_text("dataset: {name: a9a, subsample: 1e4, test: 2e-1}\n"
                    "algorithm: {name: dummy, params: {C: 1e-3, gamma: 1e-2, batch_size: 1e2}}\n")
    cfg = load_config(path)
    assert cfg.algorithm.params["C"] == 0.001
    assert cfg.algorithm.params["gamma"] == 0.01
    assert cfg.algorithm.params["batch_size"] == 100
    assert cfg.dataset.subsample == 10_000 and cfg.dataset.test == 0.2


def test_user_data_path_is_resolved_against_the_config_folder(tmp_path):
    (tmp_path / "data").mkdir()
    data_file = tmp_path / "data" / "mine.svm"
    data_file.write_text("1 1:0.5\n")
    path = tmp_path / "mine.yaml"
    path.write_text("dataset: {path: data/mine.svm}\nalgorithm: dummy\n")
    cfg = load_config(path)
    assert cfg.dataset.path == str(data_file.resolve()) and cfg.dataset.name is None
    assert cfg.dataset.test == 0.2              # no official split for a user file

    path.write_text("dataset: {path: data/missing.svm}\nalgorithm: dummy\n")
    with pytest.raises(ConfigError, match=r"dataset\.path.*missing\.svm"):
        load_config(path)


def test_train_objective_is_an_alias_and_test_metrics_need_a_test_set():
    cfg = config_from_dict(with_("evaluate.on", ["train_objective", "test_mse"]))
    assert cfg.evaluate.on == ("objective", "test_mse")
    no_test = with_("dataset.test", "none")
    assert config_from_dict(with_("evaluate", {}, no_test)).evaluate.on == ("objective",
                                                                            "train_error")
    raises_at("evaluate.on[1]", no_test, match="test set")


# ---------------------------------------------------------------------------------------------
# Invalid configs: the message names the field
# ---------------------------------------------------------------------------------------------

def test_unknown_top_level_key_is_refused_with_a_suggestion():
    message = raises_at("trails", with_("trails", 3))
    assert "did you mean 'trials'" in message and "dataset" in message


@pytest.mark.parametrize("path", ["dataset.nmae", "algorithm.parms", "stop.pases",
                                  "evaluate.evry", "algorithm.params.gama", "grid.gama"])
def test_unknown_nested_key_is_refused(path):
    base = full_config()
    if path == "grid.gama":
        data = with_(path, [1.0])
    else:
        data = with_(path, 1)
    assert base != data
    message = raises_at(path, data)
    assert "did you mean" in message


def test_unknown_algorithm_lists_known_ones():
    message = raises_at("algorithm.name", with_("algorithm.name", "dumy"))
    assert "dummy" in message and "single" in message and "did you mean 'dummy'" in message


def test_unknown_dataset_lists_known_ones():
    message = raises_at("dataset.name", with_("dataset.name", "a9"))
    assert "digits86" in message and "path:" in message


@pytest.mark.parametrize("path, value", [
    ("cv", "five"), ("trials", "3"), ("seed", True), ("cv", 2.5),
    ("dataset.subsample", [1]), ("algorithm.params.batch_size", "many"),
    ("algorithm.params.batch_size", True), ("algorithm.params.C", [1.0]),
    ("algorithm.params.C", "0.5"), ("algorithm.params.shuffle", 1),
    ("algorithm.params.loss", "hinj"), ("algorithm.params.gamma", "medain"),
    ("algorithm.params.note", 3), ("algorithm.params", [1]), ("dataset.scale", "std"),
    ("dataset.test", "offical"), ("evaluate.on", ["accuracy"]), ("stop", 5),
])
def test_wrong_types_and_choices(path, value):
    field_path = "evaluate.on[0]" if path == "evaluate.on" else path
    raises_at(field_path, with_(path, value))


@pytest.mark.parametrize("path, value", [
    ("cv", 1), ("trials", 0), ("seed", -1), ("dataset.subsample", 0), ("dataset.labeled", -5),
    ("evaluate.every", 0), ("stop.passes", 0), ("stop.seconds", -1), ("stop.iterations", 0),
    ("dataset.test", 1.0), ("dataset.test", 0), ("algorithm.params.C", 0),
    ("algorithm.params.gamma", -1), ("algorithm.params.batch_size", 0),
    ("algorithm.params.block_size", -3), ("algorithm.params.threads", -1),
    ("algorithm.params.C", float("nan")), ("algorithm.params.gamma", float("inf")),
    ("algorithm.params.eta", float("-inf")), ("stop.passes", float("nan")),
])
def test_absurd_values(path, value):
    raises_at(path, with_(path, value))


def test_threads_zero_means_all_cores():
    assert config_from_dict(with_("algorithm.params.threads", 0)).algorithm.params["threads"] == 0


def test_grid_values_are_checked_like_params():
    raises_at("grid.C[0]", with_("grid.C", [0, 1]))
    raises_at("grid.gamma[1]", with_("grid.gamma", [0.1, "x"]))
    raises_at("grid.C", with_("grid.C", []))
    raises_at("grid.C.log10", with_("grid.C", {"log10": [1, 2]}))
    raises_at("grid.C.lin", with_("grid.C", {"lin": [1, 2, 3]}))
    raises_at("grid", with_("grid", {"C": {"log10": [0, 1, 1000]},
                                     "gamma": {"log10": [0, 1, 1000]}}))


def test_then_is_a_second_stage_resolved_and_checked_like_grid():
    cfg = config_from_dict(with_("then", {"eta": {"log10": [0, 3, 4]}, "batch_size": [32, 64]}))
    assert cfg.then == {"eta": [1.0, 10.0, 100.0, 1000.0], "batch_size": [32, 64]}
    assert config_from_dict(config_to_dict(cfg)) == cfg
    assert "then" not in config_to_dict(config_from_dict(full_config()))   # older runs' configs unchanged
    raises_at("then.eta[0]", with_("then", {"eta": [0]}))
    raises_at("then.eta.log10", with_("then", {"eta": {"log10": [0, 3]}}))
    raises_at("then", with_("then", {"etta": [1.0]}), match="eta")          # unknown, with the suggestion
    raises_at("then", with_("then", [1.0, 10.0]), match="mapping")


def test_then_must_not_repeat_a_grid_axis_and_needs_a_grid():
    raises_at("then", with_("then", {"gamma": [1.0], "eta": [1.0]}), match="gamma already in `grid:`")
    raises_at("then", with_("grid", None, with_("then", {"eta": [1.0, 10.0]})), match="add `grid:`")


def test_dataset_needs_exactly_one_of_name_and_path(tmp_path):
    f = tmp_path / "d.svm"
    f.write_text("")
    raises_at("dataset", with_("dataset", {"name": "a9a", "path": str(f)}), match="not both")
    raises_at("dataset", with_("dataset", {"subsample": 10}), match="exactly one")
    raises_at("dataset", without("dataset"), match="required")
    raises_at("dataset.test", with_("dataset", {"path": str(f), "test": "official"}))


def test_missing_algorithm_and_name_rules():
    raises_at("algorithm", without("algorithm"))
    raises_at("algorithm.name", with_("algorithm", {"params": {}}))
    raises_at("name", with_("name", "a/b"))


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------

def test_invalid_yaml_reports_line_and_column(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("dataset: {name: a9a}\nalgorithm: [dummy\nseed: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value) and "line 3" in str(info.value)


@pytest.mark.parametrize("text, match", [("", "empty"), ("# only a comment\n", "empty"),
                                         ("- a\n- b\n", "mapping"), ("42\n", "mapping")])
def test_empty_or_non_mapping_file(tmp_path, text, match):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_missing_or_unreadable_file(tmp_path):
    with pytest.raises(ConfigError, match="not found") as info:
        load_config(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(info.value)
    with pytest.raises(ConfigError, match="folder"):
        load_config(tmp_path)
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="UTF-8"):
        load_config(tmp_path / "bin.yaml")


def test_python_specific_yaml_tags_are_refused(tmp_path):
    path = tmp_path / "evil.yaml"
    path.write_text("name: !!python/object/apply:os.system ['echo hi']\n")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_config(path)


def test_field_errors_from_a_file_name_the_file_and_the_field(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(with_("algorithm.params.gamma", -1)))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value) and "algorithm.params.gamma" in str(info.value)
    assert info.value.field == "algorithm.params.gamma"


# ---------------------------------------------------------------------------------------------
# Grid expansion
# ---------------------------------------------------------------------------------------------

def test_expand_grid_cartesian_product_in_a_fixed_order():
    cells = expand_grid({"gamma": [1, 2], "C": {"log10": [-1, 1, 3]}})
    assert cells == [{"C": c, "gamma": g} for c in (0.1, 1.0, 10.0) for g in (1, 2)]
    assert expand_grid({}) == [{}] and expand_grid(None) == [{}]
    spaced = expand_grid({"C": {"log10": [-3, 3, 13]}})
    np.testing.assert_allclose([c["C"] for c in spaced], np.logspace(-3, 3, 13), rtol=1e-11)


def test_resolved_grid_expands_and_int_params_get_ints():
    cfg = config_from_dict(with_("grid", {"batch_size": {"log10": [1, 3, 3]}, "loss": ["hinge"]}))
    assert cfg.grid == {"batch_size": [10, 100, 1000], "loss": ["hinge"]}
    assert len(expand_grid(cfg.grid)) == 3


# ---------------------------------------------------------------------------------------------
# Overrides
# ---------------------------------------------------------------------------------------------

def test_overrides_seed_threads_and_dotted_paths(tmp_path):
    path = tmp_path / "o.yaml"
    path.write_text(yaml.safe_dump(full_config()))
    cfg = load_config(path, overrides={"seed": 3, "threads": 2, "cv": None,
                                       "stop.seconds": 5, "algorithm.params.C": 2})
    assert cfg.seed == 3 and cfg.algorithm.params["threads"] == 2 and cfg.cv == 3
    assert cfg.stop.seconds == 5.0 and cfg.algorithm.params["C"] == 2.0
    with pytest.raises(ConfigError, match=r"algorithm\.params\.threads"):
        load_config(path, overrides={"threads": -2})
    with pytest.raises(ConfigError, match="seed"):
        load_config(path, overrides={"seed": "x"})
    with pytest.raises(ConfigError, match="unknown override"):
        load_config(path, overrides={"sed": 1})


def test_an_override_of_evaluate_on_replaces_the_files_bare_on(tmp_path):
    """YAML 1.1 reads a file's bare `on:` as the key true; `--set evaluate.on=...` still replaces it."""
    path = tmp_path / "on.yaml"
    path.write_text("dataset: {name: a9a}\nalgorithm: dummy\nevaluate: {on: [objective]}\n")
    assert load_config(path).evaluate.on == ("objective",)
    cfg = load_config(path, overrides={"evaluate.on": ["train_error"]})
    assert cfg.evaluate.on == ("train_error",)


def test_threads_override_refused_for_single_threaded_algorithm():
    data = with_("algorithm", {"name": "single"})
    data["grid"] = {}
    message = raises_at("threads", data, overrides={"threads": 4})
    assert "'single' has no `threads` parameter" in message


def test_smoke_is_one_thing_the_runs_small_settings_not_a_config_override():
    """`run --smoke` (experiment.prepare.smoke_config): the algorithm's small settings, the first grid
    cell, one trial, a few iterations; the config layer has no smoke mode of its own."""
    from kernelbench.experiment.prepare import SMOKE_ITERATIONS, smoke_config

    cfg = config_from_dict(full_config())
    smoke = smoke_config(cfg, ALGORITHMS["dummy"])
    assert smoke.algorithm.params["batch_size"] == 8 and smoke.trials == 1 and smoke.grid == {}
    assert smoke.algorithm.params["C"] == 0.001 and smoke.algorithm.params["gamma"] == 0.01   # first cell
    assert smoke.stop.iterations == SMOKE_ITERATIONS
    raises_at("smoke", full_config(), overrides={"smoke": True})


# ---------------------------------------------------------------------------------------------
# One declaration per field: the dataclass, the check, the reference
# ---------------------------------------------------------------------------------------------

SECTIONS = {"": ExperimentConfig, "dataset": DatasetConfig, "algorithm": AlgorithmConfig, "stop": StopConfig,
            "evaluate": EvaluateConfig, "tags": TagsConfig, "tune": TuneConfig}


def _synthetic_or_full(path: str) -> dict:
    """A valid config in which every key of `path` is allowed (the generator's keys need a synthetic set)."""
    return with_("dataset", {"name": "synthetic"}) if path == "dataset" else full_config()


def _declared_keys() -> list[str]:
    return [f"{path}.{name}" if path else name for path, cls in SECTIONS.items()
            for name, declared in cls.declared.items() if declared.key]


def test_every_dataclass_field_is_declared_and_an_undeclared_one_is_refused():
    for cls in SECTIONS.values():
        assert [f.name for f in dataclasses.fields(cls)] == list(cls.declared), cls.__name__

    with pytest.raises(TypeError, match="declared with field"):
        @section
        class Undeclared:
            count: int = 3


def test_every_declared_key_is_in_the_reference_and_the_config_command():
    from typer.testing import CliRunner

    from kernelbench.cli.app import app

    printed = CliRunner().invoke(app, ["config"])
    assert printed.exit_code == 0, printed.output
    listed = {line.split()[0] for line in printed.output.splitlines() if line and not line[0].isspace()}
    markdown = fields_markdown()
    for key in _declared_keys():
        assert key in listed, key
        assert f"| `{key}` |" in markdown, key
    assert "source" not in listed and "stop.fraction" not in listed        # set by the code, not by a user


def test_every_declared_key_is_accepted_as_a_key():
    """Whatever the value, a declared key is never refused as unknown (the reverse -- an undeclared
    key is refused -- is test_every_key_the_config_accepts_is_documented's)."""
    for key in _declared_keys():
        section_name, _, name = key.rpartition(".")
        data = _synthetic_or_full(section_name)
        (data.setdefault(section_name, {}) if section_name else data)[name] = [["not a valid value"]]
        try:
            config_from_dict(data)
        except ConfigError as e:
            assert "unknown key" not in str(e), (key, str(e))


@pytest.mark.parametrize("path, misspelt, meant", [
    ("tune", "rung", "rungs"), ("dataset", "labelled", "labeled"), ("stop", "second", "seconds"),
    ("tags", "papers", "paper"), ("evaluate", "every_n", "every"), ("", "sead", "seed"),
])
def test_an_unknown_key_names_the_nearest_declared_one(path, misspelt, meant):
    data = full_config()
    (data.setdefault(path, {}) if path else data)[misspelt] = 1
    message = raises_at(f"{path}.{misspelt}" if path else misspelt, data)
    assert f"did you mean {meant!r}" in message


def test_a_wrong_value_of_any_declared_field_names_the_field():
    """Each field with a declared kind refuses a value of no kind at all, naming its dotted path."""
    for path, cls in SECTIONS.items():
        for name, declared in cls.declared.items():
            if declared.kind is None or not declared.key or isinstance(declared.kind, type):
                continue
            data = _synthetic_or_full(path)
            (data.setdefault(path, {}) if path else data)[name] = [["x"]]
            raises_at(f"{path}.{name}" if path else name, data)


def test_the_bound_a_reference_line_states_is_the_bound_enforced():
    """Each integer field's reference line states its minimum ("an integer >= m"): m - 1 is refused,
    naming the field, and the line comes from the same declaration."""
    checked = 0
    reference = {f.key: f.doc for f in FIELDS}
    for path, cls in SECTIONS.items():
        for name, declared in cls.declared.items():
            if not isinstance(declared.kind, Count) or declared.kind.among is not None:
                continue
            key = f"{path}.{name}" if path else name
            minimum = declared.kind.minimum
            assert reference[key].startswith(f"an integer >= {minimum}"), reference[key]
            data = _synthetic_or_full(path)
            (data.setdefault(path, {}) if path else data)[name] = minimum - 1
            raises_at(key, data, match=f"must be >= {minimum}")
            checked += 1
    assert checked >= 10


def test_a_section_left_out_takes_the_declared_defaults():
    cfg = config_from_dict({"dataset": {"name": "a9a"}, "algorithm": "dummy"})
    for section_config in (cfg.tune, cfg.tags):
        for name, declared in type(section_config).declared.items():
            assert getattr(section_config, name) == declared.default, name
    assert cfg.tune == TuneConfig() and cfg.tags == TagsConfig() and cfg.stop == StopConfig()


def test_the_tags_section_declares_the_tags_results_carry():
    assert tuple(n for n, d in TagsConfig.declared.items() if d.key) == TAGS


# ---------------------------------------------------------------------------------------------
# Property: any mutation of a valid config validates or is a ConfigError, never anything else
# ---------------------------------------------------------------------------------------------

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                         st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                         st.sampled_from(["1e-3", "1e400", "median", "official", "a9a", "dummy",
                                          "none", "0.5", "-1", "\x00"]))


def _containers(data, path=()):
    """Every mapping in the config with its path (the levels a key can be added to)."""
    yield path, data
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _containers(value, path + (key,))


def _leaves(data, path=()):
    for key, value in data.items():
        yield path + (key,)
        if isinstance(value, dict):
            yield from _leaves(value, path + (key,))


@st.composite
def mutated_configs(draw):
    data = full_config()
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        kind = draw(st.sampled_from(["drop", "add", "replace"]))
        if kind == "add":
            containers = list(_containers(data))
            path, target = draw(st.sampled_from(containers))
            key = draw(st.one_of(st.text(max_size=8), st.sampled_from(["C", "gama", "names"])))
            target[key] = draw(json_scalars)
            continue
        leaves = list(_leaves(data))
        if not leaves:
            break
        path = draw(st.sampled_from(leaves))
        parent = data
        for p in path[:-1]:
            parent = parent[p]
        if kind == "drop":
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(json_scalars)
    return data


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_configs())
def test_mutated_configs_validate_or_raise_config_error(data):
    try:
        cfg = config_from_dict(data)
    except ConfigError as e:
        assert str(e)
        assert isinstance(e, KernelbenchError)
    else:
        assert isinstance(cfg, ExperimentConfig)
        for value in cfg.algorithm.params.values():
            assert not (isinstance(value, float) and not math.isfinite(value))
        assert config_from_dict(config_to_dict(cfg)) == cfg


def test_every_key_the_config_accepts_is_documented():
    """The validation accepts exactly the documented keys: each section's keys come from FIELDS, and
    an undocumented key is refused as unknown."""
    documented = {f.key for f in FIELDS}
    for name in ("", "dataset", "stop", "evaluate", "tune", "tags"):
        bogus = {"undocumented_key": 1}
        data = {"dataset": {"name": "digits86"}, "algorithm": "dsg"}
        if name:
            data.setdefault(name, {}).update(bogus)
        else:
            data.update(bogus)
        with pytest.raises(ConfigError, match="undocumented_key: unknown key"):
            config_from_dict(data)
    assert {"dataset.labeled", "stop.passes", "tune.budget", "tags.paper", "then"} <= documented
