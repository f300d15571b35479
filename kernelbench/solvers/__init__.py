"""Solvers: scikit-learn compatible estimators over compiled cores, one module per algorithm family
(`x.py` + `_x.pyx`). The public classes are gathered in kernelbench.estimators."""
