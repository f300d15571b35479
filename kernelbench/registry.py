"""Name -> thing registries: algorithms (and, through the same class, figures).

An algorithm registers itself where it is defined:

    @register_algorithm("dsg", tasks=("binary", "regression"), description="...")
    @dataclass
    class DSGParams: ...          # typed parameters with documented defaults

The config layer validates `algorithm.params` against the dataclass fields (names and types),
the runner builds the estimator with `spec.build(params)`, and the tests loop over every entry.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    params: type                      # a dataclass: field names, types, defaults, docs (metadata["doc"])
    factory: Callable[..., Any]       # (params-dataclass instance, *, seed, task) -> unfitted estimator
    description: str
    tasks: tuple[str, ...]            # which dataset tasks it accepts: binary, multiclass, regression
    smoke_params: dict = field(default_factory=dict)   # small, fast settings for tests and --smoke

    def build(self, params: dict | None = None, *, seed: int = 0, task: str = "binary"):
        """An unfitted estimator for `task` from a params dict (unknown names refused by the dataclass)."""
        return self.factory(self.params(**(params or {})), seed=seed, task=task)

    def defaults(self) -> dict:
        return {f.name: _default(f) for f in dataclasses.fields(self.params)}

    def docs(self) -> dict:
        return {f.name: f.metadata.get("doc", "") for f in dataclasses.fields(self.params)}


def _default(f):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return None


def param_field(doc: str, default):
    """A params-dataclass field with its one-line documentation (shown by `kernelbench algorithms`)."""
    return field(default=default, metadata={"doc": doc})


ALGORITHMS: dict[str, AlgorithmSpec] = {}


def register_algorithm(name, *, factory, description, tasks, smoke_params=None):
    """Class decorator for a params dataclass: registers the algorithm under `name`."""

    def decorate(params_cls):
        if name in ALGORITHMS:
            raise RuntimeError(f"algorithm {name!r} registered twice")
        ALGORITHMS[name] = AlgorithmSpec(name, params_cls, factory, description, tuple(tasks),
                                         dict(smoke_params or {}))
        return params_cls

    return decorate


def algorithms() -> dict[str, AlgorithmSpec]:
    """All registered algorithms (importing every solver and baseline module registers them)."""
    import kernelbench.baselines
    import kernelbench.solvers

    for package in (kernelbench.solvers, kernelbench.baselines):
        import_submodules(package)
    return ALGORITHMS


def import_submodules(package):
    """Import every public module of `package` (a module registers what it defines on import)."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(package.__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{module.name}")
