"""Solvers: scikit-learn compatible estimators over compiled cores. Importing registers them."""
from kernelbench.solvers.bsgd import BSGDClassifier
from kernelbench.solvers.dsg import DSGClassifier, DSGRegressor

__all__ = ["BSGDClassifier", "DSGClassifier", "DSGRegressor"]
