"""Baselines: thin adapters over well-kept libraries (LIBSVM through scikit-learn, oneDAL, RBFSampler,
Nystroem), and Falkon written on NumPy/SciPy's BLAS and LAPACK, registered like our solvers. The
public classes are gathered in kernelbench.estimators."""
