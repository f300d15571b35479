"""The algorithm registry: name -> estimator classes. An algorithm registers its classes where they
are defined:

    register_algorithm("dsg", classifier=DSGClassifier, regressor=DSGRegressor,
                       tasks=("binary", "multiclass", "regression"), description="...")

Its parameters are the classes' own declarations (`parameters`, kernelbench/params.py): the config
layer checks `algorithm.params` against them, the experiment loop builds the estimator with
`spec.build(params)`, `kernelbench algorithms` lists them, and the tests loop over every entry.
kernelbench/estimators.py imports every solver and baseline module: `kernelbench.estimators.
algorithms()` is the complete registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kernelbench.params import config_parameters, union


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    classifier: type | None           # the estimator for binary / multiclass / semi-supervised tasks
    regressor: type | None            # the estimator for regression
    description: str
    tasks: tuple[str, ...]            # which dataset tasks it accepts: binary, multiclass, regression, semi-supervised
    fixed: dict = field(default_factory=dict)          # parameters the name fixes (r-pegasos: feature_map)
    smoke_params: dict = field(default_factory=dict)   # small, fast settings for tests and --smoke
    requires: tuple[str, ...] = ()    # optional modules it imports (kernelbench.errors.EXTRAS names their extras)

    def estimator_class(self, task: str = "binary") -> type:
        cls = self.regressor if task == "regression" else self.classifier
        if cls is None:
            raise ValueError(f"algorithm {self.name!r} has no estimator for task {task!r}")
        return cls

    @property
    def classes(self) -> tuple[type, ...]:
        return tuple(c for c in (self.classifier, self.regressor) if c is not None)

    @property
    def parameters(self) -> dict:
        """What a config may set: the classes' declarations pooled, less the fixed ones."""
        pooled = union(*(config_parameters(c.parameters) for c in self.classes))
        return {n: p for n, p in pooled.items() if n not in self.fixed}

    def build(self, params: dict | None = None, *, seed: int = 0, task: str = "binary") -> Any:
        """An unfitted estimator for `task` (unknown parameter names refused by its __init__)."""
        return self.estimator_class(task)(**{**(params or {}), **self.fixed}, random_state=seed)

    def defaults(self) -> dict:
        return {n: p.default for n, p in self.parameters.items()}

    def docs(self) -> dict:
        return {n: p.doc for n, p in self.parameters.items()}


def parameters_markdown(specs: dict[str, AlgorithmSpec]) -> str:
    """The parameter tables of the documentation site's algorithm reference, derived from the
    declarations when the site is built (also `kernelbench algorithms --markdown`)."""
    lines = []
    for name, spec in sorted(specs.items()):
        lines += [f"#### `{name}` — {spec.description}", "",
                  f"Tasks: {', '.join(spec.tasks)}." + (
                      f" Fixed by the name: {', '.join(f'`{k}: {v}`' for k, v in spec.fixed.items())}."
                      if spec.fixed else ""), "",
                  "| parameter | default | allowed | meaning |", "|---|---|---|---|"]
        for pname, declared in spec.parameters.items():
            doc = declared.doc.replace("|", "\\|")
            lines.append(f"| `{pname}` | `{_yaml(declared.default)}` | {declared.describe()} | {doc} |")
        searched = [f"`{p}` {d.search.describe()}" for p, d in spec.parameters.items()
                    if d.search is not None and d.config]
        lines += ["", f"Searched by `kernelbench tune` by default: {'; '.join(searched)}."] if searched else []
        lines.append("")
    return "\n".join(lines)


def _yaml(value) -> str:
    return {None: "null", True: "true", False: "false"}.get(value, value) if not isinstance(
        value, (int, float)) or isinstance(value, bool) else repr(value)


ALGORITHMS: dict[str, AlgorithmSpec] = {}


def register_algorithm(name, *, description, tasks, classifier=None, regressor=None, fixed=None,
                       smoke_params=None, requires=()) -> AlgorithmSpec:
    """Register estimator classes under `name` (a module registers what it defines on import)."""
    if name in ALGORITHMS:
        raise RuntimeError(f"algorithm {name!r} registered twice")
    spec = AlgorithmSpec(name, classifier, regressor, description, tuple(tasks), dict(fixed or {}),
                         dict(smoke_params or {}), tuple(requires))
    spec.parameters          # classes whose declarations disagree fail here, at import
    ALGORITHMS[name] = spec
    return spec
