"""Baselines: thin adapters over well-kept libraries, registered like our solvers. Importing
registers them."""
from kernelbench.baselines.libsvm import LibSVMClassifier

__all__ = ["LibSVMClassifier"]
