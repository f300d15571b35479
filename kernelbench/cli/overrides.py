"""--set KEY=VALUE, the override every command that runs configs takes."""
from __future__ import annotations

import yaml

from kernelbench.errors import ConfigError


def parse_sets(sets) -> dict:
    """--set KEY=VALUE (repeatable): a dotted config key and a YAML value, e.g. stop.passes=1."""
    out = {}
    for item in sets or []:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE with a dotted config key, e.g. "
                              "--set stop.passes=1 or --set dataset.subsample=100000")
        try:
            out[key.strip()] = yaml.safe_load(text)
        except yaml.YAMLError as e:
            raise ConfigError(f"--set {item!r}: the value is not valid YAML ({e})") from None
    return out
