"""Numba loops that know no estimator: the SIMD math (branchless transcendental
functions and their array forms), the fast Walsh-Hadamard transform, and the hashing
loops of random binning and min-hash. No scikit-learn import here."""
