"""The training rows of the exact SVM as its solver reads them: a Gram matrix, or rows and a kernel.

A precomputed kernel and a user's callable give the solver the rows' ``n x n``
Gram matrix (:class:`TrainingGram`); a built-in kernel gives it the ``n x d``
rows, its column cache evaluating the kernel on them (:class:`TrainingRows`).
Both answer the same questions, so that the fit and its cross-validation never
ask which one they hold.
"""

from typing import NamedTuple

import numpy as np

from .._kernels.exact import exact_kernel


class TrainingGram(NamedTuple):
    """The ``n x n`` Gram matrix of the training rows (a precomputed or a user's kernel)."""

    gram: np.ndarray

    @property
    def solver_rows(self):
        """What the solver's kernel columns are read from: the Gram matrix."""
        return self.gram

    def subset(self, rows):
        """The training rows ``rows`` alone: their block of the Gram matrix."""
        return TrainingGram(self.gram[np.ix_(rows, rows)])

    def kernel_between(self, test, train):
        """``K(x_test, x_train)`` of the training rows ``test`` and ``train``: a block of the Gram matrix."""
        return self.gram[np.ix_(test, train)]


class TrainingRows(NamedTuple):
    """The ``n x d`` training rows and the parameters of the built-in kernel evaluated on them."""

    rows: np.ndarray
    kernel_params: dict

    @property
    def solver_rows(self):
        """What the solver's kernel columns are computed from: the rows."""
        return self.rows

    def subset(self, rows):
        """The training rows ``rows`` alone."""
        return TrainingRows(self.rows[rows], self.kernel_params)

    def kernel_between(self, test, train):
        """``K(x_test, x_train)`` of the training rows ``test`` and ``train``: :func:`kernelmaps.exact_kernel`."""
        return exact_kernel(self.rows[test], self.rows[train], **self.kernel_params)
