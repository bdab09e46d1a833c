""":class:`kernelmaps.KernelSVC`'s parameter validation, model record and one-vs-one vote."""

from typing import NamedTuple

import numpy as np

from ._kernels import check_kernel_params, check_nu
from ._matern import MATERN_DISTANCE_CODE, matern_code
from ._sample_weights import check_class_weight
from ._user_kernels import user_kernel_kind
from ._validation import check_bool, check_choice, check_n_components, check_positive


class Params(NamedTuple):
    """:class:`KernelSVC`'s parameters, validated, with ``selection='auto'`` resolved.

    ``kernel`` is a name of the vocabulary, ``'precomputed'`` or ``'callable'``
    (then ``degree``, ``coef0`` and ``nu`` are None).
    """

    C: float
    tol: float
    cache_mb: float
    max_iter: int
    kernel: str
    degree: int
    coef0: float
    nu: float
    selection: str
    shrinking: bool
    probability: bool


class Model(NamedTuple):
    """The binary problems of one training run: ``y_i a_i`` per problem and row, and the rest."""

    dual: np.ndarray
    intercept: np.ndarray
    n_iter: np.ndarray
    pairs: np.ndarray


def label(value):
    """A class label as the user wrote it (``3``, ``'cat'``), not as NumPy prints its scalars."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def check_svc_params(svc):
    """The validated :class:`Params` of a :class:`kernelmaps.KernelSVC`."""
    C = check_positive(svc.C, "C")
    tol = check_positive(svc.tol, "tol")
    cache_mb = check_positive(svc.cache_size, "cache_size")
    max_iter = check_n_components(svc.max_iter, "max_iter")
    check_choice(svc.multi_class, "multi_class", ("ovr", "ovo"))
    check_choice(svc.selection, "selection", ("auto", "greedy", "second_order"))
    if svc.selection == "second_order" and not svc.fit_intercept:
        raise ValueError("selection='second_order' solves LIBSVM's dual, whose bias is free; "
                         "fit_intercept=False needs selection='greedy'")
    shrinking = check_bool(svc.shrinking, "shrinking")
    probability = check_bool(svc.probability, "probability")
    check_class_weight(svc.class_weight)
    selection = svc.selection
    if selection == "auto":
        selection = "second_order" if svc.fit_intercept else "greedy"
    kind = user_kernel_kind(svc.kernel)
    if kind is None:
        kernel, degree, coef0 = check_kernel_params(svc.kernel, svc.degree, svc.coef0)
        nu = check_nu(svc.nu)
    else:
        kernel, degree, coef0, nu = kind, None, None, None
    return Params(C=C, tol=tol, cache_mb=cache_mb, max_iter=max_iter, kernel=kernel, degree=degree,
                  coef0=coef0, nu=nu, selection=selection, shrinking=shrinking, probability=probability)


def solver_gram_bytes(params, n):
    """Bytes of the Gram matrices a fit on ``n`` rows holds when the solver reads kernel columns from one.

    A user's kernel, or a Matérn ``nu`` without a Numba column: the Gram matrix
    (the user's, or computed), the solver's copy with each row's column index,
    and the copy of a problem's rows it permutes.
    """
    gram = params.nu is None or (params.kernel == "matern" and matern_code(params.nu)[0] == MATERN_DISTANCE_CODE)
    return 3 * 8.0 * n * (n + 1) if gram else 0.0


def decision_values(K, dual_coef, intercept):
    """``K(X, SV) dual_coef^T + intercept``, of shape (n_samples, n_problems)."""
    if K.shape[1] == 0:
        return np.zeros((K.shape[0], dual_coef.shape[0]))
    return K @ dual_coef.T + intercept


def one_vs_one_vote(classes, pairs, scores):
    """The class of the most votes of the one-vs-one problems ``pairs`` (ties to the first class)."""
    votes = np.zeros((scores.shape[0], len(classes)), dtype=np.int64)
    winners = np.where(scores > 0, pairs[:, 0], pairs[:, 1])
    for p in range(winners.shape[1]):
        np.add.at(votes, (np.arange(len(votes)), winners[:, p]), 1)
    return classes[np.argmax(votes, axis=1)]
