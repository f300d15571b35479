"""Every estimator kernelbench offers, importable from one place, and the algorithm registry
they fill:

    from kernelbench.estimators import DSGClassifier, algorithms
    DSGClassifier(batch_size=256).fit(X, y).score(X_test, y_test)
    algorithms()["dsg"].build({"C": 10.0}, seed=0)

Each solver and baseline module registers its classes under an algorithm name when imported
(kernelbench/algorithms.py); importing them all here is what makes the registry complete.
"""
from __future__ import annotations

from kernelbench.baselines.libsvm import (
    LibSVMClassifier,
    LibSVMRegressor,
    ParallelSVMClassifier,
    ParallelSVMRegressor,
)
from kernelbench.baselines.random_features import (
    PegasosClassifier,
    SDCAFeaturesClassifier,
)
from kernelbench.baselines.rff_sgd import RFFSGDClassifier
from kernelbench.baselines.svm_subsample import SubsampleSVMClassifier
from kernelbench.baselines.tsvm import TSVMCCCP, TSVMLabelSwitching
from kernelbench.algorithms import ALGORITHMS, AlgorithmSpec
from kernelbench.solvers.asydsskl import AsyDSSKLClassifier, AsyDSSKLRegressor
from kernelbench.solvers.asygcd import AsyGCDClassifier
from kernelbench.solvers.bgs3vm import BGS3VMClassifier
from kernelbench.solvers.bsgd import BSGDClassifier
from kernelbench.solvers.cdsg import (
    CDSGClassifier,
    CDSGRegressor,
    UDSGClassifier,
    UDSGRegressor,
)
from kernelbench.solvers.dsg import DSGClassifier, DSGRegressor
from kernelbench.solvers.falkon import FalkonClassifier, FalkonRegressor
from kernelbench.solvers.ksdca import KSDCAClassifier, KSDCARegressor
from kernelbench.solvers.norma import NormaClassifier, NormaRegressor
from kernelbench.solvers.svrg_rf import SVRGRFClassifier, SVRGRFRegressor
from kernelbench.solvers.tsgs3vm import FRS3VMClassifier, TSGS3VMClassifier

__all__ = [
    "TSVMCCCP",
    "AlgorithmSpec",
    "AsyDSSKLClassifier",
    "AsyDSSKLRegressor",
    "AsyGCDClassifier",
    "BGS3VMClassifier",
    "BSGDClassifier",
    "CDSGClassifier",
    "CDSGRegressor",
    "DSGClassifier",
    "DSGRegressor",
    "FRS3VMClassifier",
    "FalkonClassifier",
    "FalkonRegressor",
    "KSDCAClassifier",
    "KSDCARegressor",
    "LibSVMClassifier",
    "LibSVMRegressor",
    "NormaClassifier",
    "NormaRegressor",
    "ParallelSVMClassifier",
    "ParallelSVMRegressor",
    "PegasosClassifier",
    "RFFSGDClassifier",
    "SDCAFeaturesClassifier",
    "SVRGRFClassifier",
    "SVRGRFRegressor",
    "SubsampleSVMClassifier",
    "TSGS3VMClassifier",
    "TSVMLabelSwitching",
    "UDSGClassifier",
    "UDSGRegressor",
    "algorithms",
]


def algorithms() -> dict[str, AlgorithmSpec]:
    """Every registered algorithm by name (the config's `algorithm.name`)."""
    return ALGORITHMS
