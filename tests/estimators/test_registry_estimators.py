"""Every registered algorithm is tested by being registered:

- each of its estimator classes passes scikit-learn's estimator checks with its defaults, except
  the checks the class names in `expected_failed_checks`, each with the reason: only a check that
  scikit-learn itself expects to fail for its own estimator of the same kind, named in the reason;
- its smoke parameters train on small synthetic data of every task it declares, and predict
  labels / finite values of the right shape;
- its declared parameters are the estimator's __init__ signature, and every default is valid.
"""
from __future__ import annotations

import inspect
import re

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.utils import all_estimators
from sklearn.utils.estimator_checks import check_estimator

from kernelbench.estimators import algorithms

SPECS = algorithms()
CLASSES = sorted({c for spec in SPECS.values() for c in spec.classes}, key=lambda c: c.__name__)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_scikit_learn_estimator_checks(cls):
    expected = dict(getattr(cls, "expected_failed_checks", {}))
    assert all(isinstance(why, str) and why for why in expected.values()), "say why a check fails"
    report = check_estimator(cls(), expected_failed_checks=expected, on_fail=None, on_skip=None)
    failed = {r["check_name"]: f"{type(r['exception']).__name__}: {r['exception']}"[:300]
              for r in report if r["status"] == "failed"}
    assert not failed, f"{cls.__name__} fails scikit-learn checks: {failed}"
    ran = {r["check_name"] for r in report}
    assert set(expected) <= ran, f"expected failures that are not checks: {set(expected) - ran}"


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_expected_failures_are_scikit_learns_own(cls):
    """A check may be expected to fail only where scikit-learn expects the same check to fail for its
    own estimator of the same kind (its per-estimator list of expected failures): the reason names
    that estimator. Today no class expects a failure."""
    expected = getattr(cls, "expected_failed_checks", {})
    if not expected:
        return
    from sklearn.utils._test_common.instance_generator import PER_ESTIMATOR_XFAIL_CHECKS

    own = {est.__name__: set(checks) for est, checks in PER_ESTIMATOR_XFAIL_CHECKS.items()}
    scikit_learn = {name for name, _ in all_estimators()}
    for check, why in expected.items():
        named = [name for name in scikit_learn if re.search(rf"\b{name}\b", why)]
        assert any(check in own.get(name, ()) for name in named), (
            f"{cls.__name__}: {check} is expected to fail, but the reason names no scikit-learn estimator "
            f"that scikit-learn expects to fail it: {why!r}")


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_init_signature_is_the_declaration(cls):
    signature = inspect.signature(cls.__init__)
    names = [p for p in signature.parameters if p != "self"]
    assert names == list(cls.parameters)
    for name, declared in cls.parameters.items():
        assert signature.parameters[name].default is declared.default or \
            signature.parameters[name].default == declared.default
        assert declared.accepts(declared.default), name
        assert declared.doc, f"{cls.__name__}.{name} has no doc"


def _data(task, seed=0):
    if task == "regression":
        X, y = make_regression(n_samples=120, n_features=4, noise=0.1, random_state=seed)
        return X, y / np.std(y)
    n_classes = 3 if task == "multiclass" else 2
    X, y = make_classification(n_samples=120, n_features=4, n_informative=3, n_redundant=0,
                               n_classes=n_classes, random_state=seed)
    if task == "semi-supervised":
        y = y.astype(float)
        y[np.random.default_rng(seed).permutation(len(y))[:80]] = np.nan   # the NaN contract
    return X, y


@pytest.mark.parametrize("name,task", [(n, t) for n, s in sorted(SPECS.items()) for t in s.tasks])
def test_smoke_parameters_train_on_every_declared_task(name, task):
    spec = SPECS[name]
    X, y = _data(task)
    model = spec.build(dict(spec.smoke_params), seed=0, task=task).fit(X, y)
    predictions = model.predict(X)
    assert predictions.shape == (len(X),)
    if task == "regression":
        assert np.all(np.isfinite(predictions))
    else:
        assert set(np.unique(predictions)) <= set(np.unique(y[~np.isnan(y)] if task == "semi-supervised" else y))
