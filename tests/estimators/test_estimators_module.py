"""kernelbench.estimators: every estimator class from one public module, each documenting its
parameters (generated from the declarations, so help() can never drift from what __init__ takes)."""
from __future__ import annotations

import inspect
import pydoc

import pytest

import kernelbench.estimators as estimators
from kernelbench.estimators import algorithms

CLASSES = sorted({cls for spec in algorithms().values() for cls in spec.classes}, key=lambda c: c.__name__)


def test_every_registered_class_is_exported_from_the_one_module():
    exported = {name for name in estimators.__all__ if inspect.isclass(getattr(estimators, name))}
    assert {cls.__name__ for cls in CLASSES} <= exported
    assert all(getattr(estimators, cls.__name__) is cls for cls in CLASSES)


@pytest.mark.parametrize("cls", CLASSES, ids=[c.__name__ for c in CLASSES])
def test_help_lists_every_parameter_with_its_default_and_constraint(cls):
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    assert "Parameters\n" in cls.__doc__ and "----------" in cls.__doc__
    for name, declared in cls.parameters.items():
        line = f"{name} : {declared.describe()}, default={declared.default!r}"
        assert line in cls.__doc__, f"{cls.__name__}: no line {line!r}"
        assert name in text
    documented = [line.split(" : ")[0] for line in cls.__doc__.split("----------", 1)[1].splitlines()
                  if " : " in line and not line.startswith(" ")]
    assert documented == list(inspect.signature(cls).parameters), "the docstring follows __init__'s order"
