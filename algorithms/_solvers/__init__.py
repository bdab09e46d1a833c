"""Numerical solvers shared by the learners: they take arrays and operators, never estimators."""
