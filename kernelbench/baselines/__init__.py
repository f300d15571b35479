"""Baselines: thin adapters over well-kept libraries (LIBSVM through scikit-learn, oneDAL, RBFSampler,
Nystroem), registered like our solvers. The public classes are gathered in kernelbench.estimators."""
