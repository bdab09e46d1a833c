"""The estimator contract and what every estimator leans on: the base classes and the
registry, input validation, targets and sample weights, the row-block pool and its
threads, and the metrics. Nothing here knows a kernel or an algorithm."""
