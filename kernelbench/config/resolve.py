"""A config's data (a YAML file or a mapping) -> the validated, typed, frozen ExperimentConfig, and back.

Each section is read as its declaration says (kernelbench/config/sections.py); what ties fields of
different sections together (a test metric needs a test part, protocol paper needs labeled rows, the
seeds stay below 2**32) is checked here, after the fields themselves."""
from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import numpy as np
import yaml

from kernelbench._io import safe_name
from kernelbench._vocab import REGRESSION_ONLY_METRICS, SYNTHETIC
from kernelbench.config.algorithm import read_algorithm, read_grid, read_then
from kernelbench.config.dataset import dataset_task, read_dataset
from kernelbench.config.sections import (FILE_KEYS, SYNTHETIC_KEYS, TOP_LEVEL_KEYS, DatasetConfig, EvaluateConfig,
                                         ExperimentConfig, StopConfig, TagsConfig, TuneConfig)
from kernelbench.data.user import near_file_name
from kernelbench.errors import ConfigError
from kernelbench.papers import paper_ids
from kernelbench.schema import fail, keys, read_section, show, suggest
from kernelbench.spaces import parse_space, space_to_dict

def load_config(path, *, overrides: dict | None = None, arrays: str | None = None) -> ExperimentConfig:
    """Read a YAML config (yaml.safe_load only), apply CLI overrides, validate, resolve. `arrays`: the
    data come as arrays (`train` or `train+test`, kernelbench.api.run), not from a file the config names."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        near = near_file_name(path)
        raise ConfigError(f"{path}: config file not found" + (f"; did you mean {near}?" if near else "")) from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder, not a config file") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a UTF-8 text file ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the config file: {e.strerror or e}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e)
        raise ConfigError(f"{path}: invalid YAML{where}: {problem}") from None
    if data is None:
        raise ConfigError(f"{path}: the config file is empty; it needs at least `dataset:` and "
                          f"`algorithm:` (see configs/quickstart.yaml)")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys "
                          f"({', '.join(TOP_LEVEL_KEYS)}), got {show(data)}")
    try:
        return _build(data, default_name=safe_name(path.stem, default="experiment"), overrides=overrides,
                      base_dir=path.resolve().parent, source=str(path), arrays=arrays)
    except ConfigError as e:
        err = ConfigError(f"{path}: {e}")
        err.field = getattr(e, "field", None)
        raise err from None


def config_from_dict(data: dict, *, default_name: str = "experiment", overrides: dict | None = None,
                     base_dir=None, arrays: str | None = None) -> ExperimentConfig:
    """Validate an already-parsed config. `base_dir` resolves a relative dataset.path (default: cwd);
    `arrays` as load_config."""
    if not isinstance(data, dict):
        raise ConfigError(f"the config must be a mapping of keys ({', '.join(TOP_LEVEL_KEYS)}), "
                          f"got {show(data)}")
    return _build(data, default_name=default_name, overrides=overrides,
                  base_dir=Path(base_dir) if base_dir is not None else Path.cwd(), source=None, arrays=arrays)


def config_to_dict(cfg: ExperimentConfig) -> dict:
    """The resolved config as plain YAML/JSON data; `config_from_dict` of it gives `cfg` back
    (except `source`, which is run metadata, not config)."""
    return {
        "name": cfg.name,
        "dataset": {f.name: _plain(getattr(cfg.dataset, f.name)) for f in dataclasses.fields(cfg.dataset)
                    if (f.name not in SYNTHETIC_KEYS or cfg.dataset.name == SYNTHETIC)
                    # classes and variant only when set: the configs (and resume) of earlier runs stay
                    # as they were
                    and not (f.name in ("classes", "variant") + FILE_KEYS + ("arrays",)
                             and getattr(cfg.dataset, f.name) is None)},
        "algorithm": {"name": cfg.algorithm.name, "params": _plain(cfg.algorithm.params)},
        "grid": _plain(cfg.grid),
        "cv": cfg.cv,
        "trials": cfg.trials,
        "seed": cfg.seed,
        **({"stop": cfg.stop.as_dict()} if not cfg.stop.as_fit else {}),
        "evaluate": {"every": cfg.evaluate.every, "on": list(cfg.evaluate.on)},
        "tags": cfg.tags.as_dict(),
        **({"search": space_to_dict(cfg.search)} if cfg.search else {}),
        **({"tune": dataclasses.asdict(cfg.tune)} if cfg.tune != TuneConfig() else {}),
        # only when not the default: held-out runs keep the config (and resume) they had before
        **({"protocol": cfg.protocol} if cfg.protocol != "held-out" else {}),
        **({"then": _plain(cfg.then)} if cfg.then else {}),     # only when set, as protocol
        **({"shortened": cfg.shortened} if cfg.shortened else {}),
    }



def _apply_overrides(data: dict, overrides: dict | None):
    """-> (data with overrides written in, threads)."""
    threads = None
    if not overrides:
        return data, threads
    if not isinstance(overrides, dict):
        raise TypeError(f"overrides must be a dict, got {type(overrides).__name__}")
    for key, value in overrides.items():
        if value is None:
            continue                      # an option not given on the command line
        if key == "threads":
            threads = value
        elif isinstance(key, str) and key.split(".")[0] in TOP_LEVEL_KEYS:
            parts = key.split(".")
            target = data
            for i, part in enumerate(parts[:-1]):
                if not isinstance(target.get(part), dict):
                    if target.get(part) is not None:
                        fail(".".join(parts[:i + 1]), f"cannot set {key} (from the command "
                                                       f"line): {show(target.get(part))} is "
                                                       f"not a mapping")
                    target[part] = {}
                target = target[part]
            target[parts[-1]] = value
        else:
            allowed = TOP_LEVEL_KEYS + ("threads",)
            fail(str(key), f"unknown override (from the command line); allowed: "
                            f"{', '.join(allowed)} or a dotted path such as stop.seconds"
                            f"{suggest(key, allowed)}")
    return data, threads


def _build(data: dict, *, default_name: str, overrides, base_dir: Path, source, arrays=None) -> ExperimentConfig:
    data = copy.deepcopy(data)
    data, threads = _apply_overrides(data, overrides)
    if data.get("name") is None:
        data["name"] = default_name
    values = read_section(ExperimentConfig, data, "")       # name, cv, trials, seed, protocol, shortened
    if values["seed"] + values["trials"] - 1 > 2**32 - 1:
        fail("seed", f"seeds seed .. seed + trials - 1 must stay below 2**32, got seed={values['seed']}, "
                      f"trials={values['trials']}")
    dataset = read_dataset(data.get("dataset"), base_dir, arrays)
    task = dataset_task(dataset)
    algorithm, spec, fields = read_algorithm(data.get("algorithm"), threads=threads, task=task)
    grid = read_grid(data.get("grid"), spec, fields, algorithm.params, task=task)
    then = read_then(data.get("then"), grid, spec, fields, algorithm.params, task=task)
    stop = _read_stop(data.get("stop"))
    _check_protocol(values["protocol"], dataset)
    evaluate = _read_evaluate(data.get("evaluate"), dataset, values["protocol"])
    for metric in evaluate.on:
        if metric in REGRESSION_ONLY_METRICS and task not in (None, "regression"):
            fail("evaluate.on", f"{metric} (mean absolute error) is for regression, but the "
                                 f"dataset is a {task} task; use train_error / test_error")
    tags = _read_tags(data.get("tags"))
    search = {} if data.get("search") is None else parse_space(data["search"], fields)
    tune = TuneConfig(**read_section(TuneConfig, data.get("tune"), "tune"))
    if values["shortened"] is not None:
        values["shortened"] = " ".join(values["shortened"].split())
    return ExperimentConfig(**values, dataset=dataset, algorithm=algorithm, grid=grid, then=then, stop=stop,
                            evaluate=evaluate, tags=tags, source=source, search=search, tune=tune)


def _check_protocol(protocol: str, dataset: DatasetConfig) -> None:
    if protocol == "paper" and dataset.labeled is None:
        fail("protocol", "paper is the semi-supervised fold scheme of Geng et al. (§6.1): L labeled "
                          "rows + one unlabeled fold train, the other folds are scored; it needs "
                          "dataset.labeled (e.g. 200); set it, or use protocol: held-out")


def _read_stop(raw) -> StopConfig:
    if raw is None:
        return StopConfig()
    stop = StopConfig(**read_section(StopConfig, raw, "stop"))
    if stop.as_fit:
        fail("stop", f"set at least one of {', '.join(keys(StopConfig))} (or leave `stop` out to train as "
                      f"the algorithm's fit does: its `passes`)")
    return stop


def _read_evaluate(raw, dataset: DatasetConfig, protocol: str) -> EvaluateConfig:
    if isinstance(raw, dict) and True in raw:
        # YAML 1.1 (PyYAML) reads the bare key `on` as the boolean true: `evaluate: {on: [...]}`; an
        # override (`--set evaluate.on=...`) comes later in the mapping and wins
        raw = {("on" if k is True else k): v for k, v in raw.items()}
    evaluate = EvaluateConfig(**read_section(EvaluateConfig, raw, "evaluate"))
    # protocol paper scores the unlabeled folds in the test_* columns, with or without a test part
    has_test = dataset.test != "none" or protocol == "paper"
    if (raw or {}).get("on") is None:
        return dataclasses.replace(evaluate, on=("objective", "train_error") + (("test_error",) if has_test else ()))
    for i, metric in enumerate(evaluate.on):
        if metric.startswith("test_") and not has_test:
            fail(f"evaluate.on[{i}]", f"{metric} needs a test set, but dataset.test is 'none'")
    return evaluate


def _read_tags(raw) -> TagsConfig:
    tags = TagsConfig(**read_section(TagsConfig, raw, "tags"))
    if tags.paper is not None and tags.paper not in paper_ids():
        fail("tags.paper", f"unknown paper {tags.paper!r}{suggest(tags.paper, paper_ids())}; known papers: "
                            f"{', '.join(paper_ids())} (first author and year)")
    return tags


def _plain(value):
    """Tuples -> lists, numpy scalars -> Python numbers: YAML/JSON-serialisable data."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
