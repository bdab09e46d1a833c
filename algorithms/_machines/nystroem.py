"""What the Nyström kernel machines share: centres, kernel, memory plan, early stopping, predict.

:class:`kernelmaps.NystroemKernelRidge`, its classifier and
:class:`kernelmaps.NystroemLogisticRegression` model ``f(x) = sum_j a_j k(x, c_j)``
on ``m`` centres and reach the rows only through
:class:`kernelmaps._solvers.kernel_operator.KernelOperator` passes. This base
chooses the centres (the landmark rules of :class:`kernelmaps.Nystroem`), resolves
the kernel, refuses a plan that cannot fit in memory, splits off the rows of
early stopping, runs the progress bar, and predicts in row blocks (lazily, per
chunk, for a Dask array). The ridge machines hand a Dask ``fit`` to
:mod:`kernelmaps._machines.dask_nystroem`.
"""

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._core.base import KernelParameter, RegisteredEstimator, classes_from_scores
from .._core.parallel import n_worker_threads
from .._core.validation import (MEMORY_FRACTION, available_memory_bytes, check_bool, check_fits_in_memory,
                                check_fraction, check_input, check_integer, check_positive, dask_support,
                                is_dask_array, user_stacklevel, validation_rows)
from .._kernels.exact import exact_kernel
from .._kernels.landmarks import check_landmarks, landmark_count, set_up_landmarks
from .._kernels.matern import check_nu
from .._kernels.names import check_kernel_params
from .._kernels.params import FittedKernelMixin
from .._solvers.kernel_operator import KernelOperator

#: The centres ``n_components='auto'`` asks for: ``min(AUTO_CENTRES, rows)``.
AUTO_CENTRES = 1000
#: ``kernel_cache='auto'`` keeps ``K(X, C)`` when it takes at most this share of the
#: memory one estimator may plan to use (``MEMORY_FRACTION`` of the memory available at
#: fit time): 40 % of the available memory.
AUTO_CACHE_FRACTION = 0.5
#: The ``kernel_cache`` parameter's text, shared by the Nyström kernel machines' docstrings.
KERNEL_CACHE_DOC = """    kernel_cache : 'auto', None or float, default='auto'
        Keep ``K(X, C)`` (``n m`` entries of ``X``'s dtype: 16 GB for 10^6 float32
        rows and 4096 centres) after the first pass, so that every later pass
        reads it instead of evaluating the kernel: a pass then costs the two
        products only. ``'auto'`` keeps it when it takes at most 40 % of the
        memory available at fit time (``AUTO_CACHE_FRACTION`` of
        :mod:`kernelmaps._machines.nystroem` times ``MEMORY_FRACTION``); a
        number is a budget in bytes (refused up front when that much memory is
        not available); ``None`` evaluates the kernel in every pass. The coefficients are the same either
        way, bit for bit. On Dask input each worker keeps its own chunks' blocks, when
        they fit: ``'auto'`` as above of each worker's room (its memory limit less what
        it holds), a number as a budget per worker; ``kernel_cache_`` is then the bytes
        kept on all workers together.
"""


def check_kernel_cache(kernel_cache):
    """Refuse a ``kernel_cache`` that is not ``'auto'``, ``None`` or a budget in bytes that fits."""
    if kernel_cache is None or (isinstance(kernel_cache, str) and kernel_cache == "auto"):
        return
    if isinstance(kernel_cache, (bool, np.bool_)) or not isinstance(kernel_cache, numbers.Real) \
            or not (np.isfinite(kernel_cache) and kernel_cache >= 0):
        raise ValueError("kernel_cache must be 'auto', None (never keep the kernel blocks) or a memory "
                         f"budget in bytes (a finite number >= 0), got {kernel_cache!r}")
    check_fits_in_memory(kernel_cache, f"kernel_cache={float(kernel_cache):.4g}", "the kept kernel blocks",
                         "give a smaller budget, 'auto' or None")


def kernel_cache_budget(kernel_cache):
    """Bytes the fit may spend on keeping ``K(X, C)`` (see :func:`check_kernel_cache`)."""
    if kernel_cache is None:
        return 0
    if isinstance(kernel_cache, str):
        return AUTO_CACHE_FRACTION * MEMORY_FRACTION * available_memory_bytes()
    return float(kernel_cache)


@dataclass
class EarlyStoppingState:
    """What early stopping has seen of the validation loss, updated by its callback.

    Attributes
    ----------
    best_coef, best_intercept : ndarray or None
        Copies of the coefficients (and intercept, where the solver has one) at the
        lowest validation loss; ``None`` until a loss is computed.
    best_loss : float
        The lowest validation loss.
    checks_since_best : int
        Iterations since the lowest loss; the solver stops at ``n_iter_no_change``.
    losses : list of float
        The validation loss of every iteration.
    """

    best_coef: np.ndarray | None = None
    best_intercept: np.ndarray | None = None
    best_loss: float = np.inf
    checks_since_best: int = 0
    losses: list = field(default_factory=list)


def dask_kernel_machines():
    """:mod:`kernelmaps._machines.dask_nystroem`, which needs the optional ``dask`` extra."""
    from . import dask_nystroem

    return dask_nystroem


def dask_logistic_passes(K, Y):
    """The logistic machine's passes over the Dask operator ``K`` (needs the ``dask`` extra)."""
    from .dask_logistic import DaskLogisticPasses

    return DaskLogisticPasses(K, Y)


class DaskRoutedFit:
    """``fit`` that sends Dask input out of core; before the target mixins' ``fit`` in the MRO."""

    def fit(self, X, y):
        """Fit on in-memory arrays, or out of core on row-chunked Dask arrays.

        Parameters
        ----------
        X : array-like or dask.array of shape (n_samples, n_features)
        y : array-like or dask.array of shape (n_samples,) or (n_samples, n_targets)

        Returns
        -------
        self
        """
        if is_dask_array(X) or is_dask_array(y):
            self._check_dask_fit()
            return dask_kernel_machines().fit(self, X, y)
        return super().fit(X, y)

    def _check_dask_fit(self):
        """Refuse, before any work, what a fit on Dask arrays cannot give."""


class NystroemMachineBase(FittedKernelMixin, RegisteredEstimator, BaseEstimator):
    """Parameters, centres and prediction of the Nyström kernel machines."""

    kind = "learner"
    kernel_family = "any"

    kernel = KernelParameter()

    def __init__(self, n_components="auto", *, alpha=1.0, kernel="gaussian", gamma="scale", degree=2,
                 coef0=1.0, nu=1.5, landmarks="uniform", max_iter=100, tol=1e-4, early_stopping=False,
                 validation_fraction=0.1, n_iter_no_change=5, kernel_cache="auto", verbose=False,
                 random_state=None):
        self.n_components = n_components
        self.alpha = alpha
        self._keep_kernel_parameters(kernel, gamma, degree, coef0, nu)
        self.landmarks = landmarks
        self.max_iter = max_iter
        self.tol = tol
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.kernel_cache = kernel_cache
        self.verbose = verbose
        self.random_state = random_state

    # ------------------------------------------------------------ set-up
    def _check_solver_params(self):
        check_positive(self.alpha, "alpha")
        check_integer(self.max_iter, "max_iter")
        check_positive(self.tol, "tol")
        check_fraction(self.validation_fraction, "validation_fraction", allow_zero=False)
        check_integer(self.n_iter_no_change, "n_iter_no_change")
        check_bool(self.early_stopping, "early_stopping")
        check_kernel_cache(self.kernel_cache)

    def _check_params(self, n_features):
        """Validate every parameter, before any work; set ``kernel_``, ``degree_``, ``coef0_``, ``nu_``."""
        self._check_solver_params()
        self.kernel_, self.degree_, self.coef0_ = check_kernel_params(self.kernel, self.degree, self.coef0)
        self.nu_ = check_nu(self.nu)
        check_landmarks(self.landmarks, self._requested_centres(), n_features)

    def _requested_centres(self):
        """The centres asked for before the rows are known: ``n_components``, ``AUTO_CENTRES``
        for ``'auto'``, or the number of given centres."""
        return landmark_count(self.n_components, np.inf, self.landmarks, auto=AUTO_CENTRES)

    def _set_kernel_and_centres(self, X, rng, n_rows=None):
        """Set ``n_components_``, ``gamma_``, ``components_`` and the plan (after :meth:`_check_params`).

        ``X`` is the training rows, or for Dask input a sample of them, of
        ``n_rows`` rows in all; a rule draws at most one centre per row
        (:func:`kernelmaps._kernels.landmarks.landmark_count`).
        """
        # drawn from the rows at hand (for Dask input, the sample)
        set_up_landmarks(X, self.n_components, self.landmarks, rng, gamma=self.gamma, kernel=self.kernel_,
                         kernel_params=self._kernel_params_for, n_rows=n_rows, auto=AUTO_CENTRES,
                         before_draw=lambda m: self.check_memory_plan(m, X.shape[1], X.dtype)).set_on(self)

    #: ``m x m`` float64 matrices the solver holds at once (the centres' Gram matrix,
    #: the preconditioner's two Cholesky factors and a temporary); the logistic
    #: machine adds one factor per one-vs-rest problem.
    _square_matrices = 4

    def _n_square_matrices(self):
        return self._square_matrices

    def check_memory_plan(self, m, d, dtype):
        """Refuse ``m`` centres whose ``m x m`` work cannot fit in memory, before any is done.

        The solver's ``m x m`` float64 matrices, plus each thread's kernel block.
        """
        itemsize = np.dtype(dtype).itemsize
        block_rows = KernelOperator.rows_per_block(m, d, itemsize)
        n_bytes = 8 * (self._n_square_matrices() * m * m + m * d) \
            + n_worker_threads() * block_rows * itemsize * (m + d)
        check_fits_in_memory(n_bytes, f"n_components={m}",
                             "the centres' Gram matrix, the preconditioner's Cholesky factors "
                             "and the per-thread kernel blocks")

    def _operator(self, X, keep_blocks=False):
        return KernelOperator(X, self.components_, keep_blocks=keep_blocks, **self._kernel_params())

    def _plan_kernel_cache(self, n_rows, dtype):
        """Whether the fit keeps ``K(X, C)`` of its ``n_rows`` rows (training and held-out):
        sets ``kernel_cache_`` to the bytes kept (0: every pass evaluates the kernel)."""
        n_bytes = KernelOperator.kept_bytes(n_rows, self.n_components_, dtype)
        self.kernel_cache_ = n_bytes if n_bytes <= kernel_cache_budget(self.kernel_cache) else 0
        return self.kernel_cache_ > 0

    def _centre_gram(self):
        return exact_kernel(self.components_, None, **self._kernel_params())

    def _split_for_early_stopping(self, n, labels):
        """Training and validation rows (all rows and ``None`` without early stopping)."""
        if not self.early_stopping:
            return np.arange(n), None
        seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
        return validation_rows(n, self.validation_fraction, labels, seed,
                               "set early_stopping=False or give more rows")

    # ------------------------------------------------------------ iterations
    def _progress(self, total, desc):
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=f"{type(self).__name__}: {desc}", disable=not self.verbose,
                    leave=False)

    def _early_stopper(self, X_val, target_val, score, bar, keep_blocks=None):
        """A conjugate-gradient callback: progress, and (with validation rows) early stopping.

        ``score(predictions, target_val)`` is a loss (lower is better); ``keep_blocks``
        keeps the validation rows' blocks (default: when the fit keeps any). Returns the
        callback and the :class:`EarlyStoppingState` it updates.
        """
        state = EarlyStoppingState()
        keep_blocks = self.kernel_cache_ > 0 if keep_blocks is None else keep_blocks
        K_val = None if X_val is None else self._operator(X_val, keep_blocks=keep_blocks)

        def callback(n_iter, residual, coef, intercept=None):
            bar.update(1)
            bar.set_postfix(residual=f"{residual:.2e}")
            if K_val is None:
                return False
            scores = K_val @ coef
            loss = float(score(scores if intercept is None else scores + intercept, target_val))
            state.losses.append(loss)
            if loss < state.best_loss:
                state.best_coef, state.best_loss, state.checks_since_best = coef.copy(), loss, 0
                state.best_intercept = None if intercept is None else intercept.copy()
                return False
            state.checks_since_best += 1
            return state.checks_since_best >= self.n_iter_no_change

        return callback, state

    def _error_rate(self, scores, labels):
        """Early stopping's loss for a classifier: the held-out rows' error rate."""
        scores = scores[:, 0] if scores.ndim == 2 and scores.shape[1] == 1 else scores
        return np.mean(classes_from_scores(np.arange(len(self.classes_)), scores) != labels)

    def _warn_not_converged(self, what, reached, max_iter=None):
        warnings.warn(f"{type(self).__name__} stopped at max_iter={max_iter or self.max_iter}: {what} "
                      f"reached {reached:.3g} against tol={self.tol}; raise max_iter, or tol",
                      ConvergenceWarning, stacklevel=user_stacklevel())

    # ------------------------------------------------------------ predict
    def _lazily(self, X, method):
        """``method`` of a Dask ``X``, lazily (one in-memory task per row chunk), or None."""
        if not is_dask_array(X):
            return None
        check_is_fitted(self, "coef_")
        return dask_support().predict_lazily(self, X, method)

    def _scores(self, X):
        check_is_fitted(self, "coef_")
        X = check_input(self, X, reset=False)
        scores = self._operator(X) @ self.coef_.reshape(self.components_.shape[0], -1)
        return scores[:, 0] if self.coef_.ndim == 1 else scores
