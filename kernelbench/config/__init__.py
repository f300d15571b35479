"""YAML experiment config -> validated, typed, frozen `ExperimentConfig`.

Everything a user can get wrong is refused here, before any work starts, as a `ConfigError` whose
message starts with the field's dotted path (`algorithm.params.gamma: ...`), says what was given
and what is allowed (the known keys, algorithms, datasets or the expected type) and, for a
misspelt key or name, suggests the closest match.

Each field is declared once, in its section's class (sections.py: type, default, the kind of value it
accepts, its meaning); the dataclass, the keys each section accepts, the check of each value, the
reference `kernelbench config` prints (`FIELDS`) and the documentation site's config reference
(`fields_markdown`, rendered when the site is built) all derive from that declaration.

    values.py     the kinds of value only configs take (labels, durations, columns, ...); the
                  shared kinds, the refusal, field(...), @section and the reference are
                  kernelbench/schema/, which paper files and the dataset registry use too
    sections.py   the sections and their fields
    dataset.py    `dataset:` and the rules that tie its fields together
    algorithm.py  `algorithm:`, `grid:`, `then:` against the algorithm's parameter declarations
    resolve.py    a whole config: files, overrides, cross-section rules, and back to plain data
"""
from kernelbench.config.algorithm import VALUE_RULES, expand_grid
from kernelbench.config.resolve import config_from_dict, config_to_dict, load_config
from kernelbench.config.sections import (AlgorithmConfig, DatasetConfig, EvaluateConfig, ExperimentConfig, StopConfig,
                                         TagsConfig, TuneConfig)
from kernelbench.config.values import duration_text, parse_duration
from kernelbench.schema import Documented, documented, markdown

__all__ = [
    "DatasetConfig", "AlgorithmConfig", "StopConfig", "EvaluateConfig", "ExperimentConfig", "TagsConfig",
    "TuneConfig", "FIELDS", "VALUE_RULES", "Documented", "load_config", "config_from_dict", "config_to_dict",
    "expand_grid", "parse_duration", "duration_text", "fields_markdown",
]

# Every config key with its default and meaning, in the order of the declarations.
FIELDS: tuple = documented(ExperimentConfig)


def fields_markdown() -> str:
    """The documentation site's config reference: every field, its default and meaning, and the value rules."""
    return markdown(FIELDS, VALUE_RULES)
