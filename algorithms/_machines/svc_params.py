""":class:`kernelmaps.KernelSVC`'s parameter validation, model record and one-vs-one vote."""

from typing import NamedTuple

import numpy as np

from .._core.sample_weights import check_class_weight
from .._core.validation import check_bool, check_choice, check_fits_in_memory, check_n_components, check_positive, \
    format_bytes
from .._kernels.matern import check_nu
from .._kernels.matern import has_closed_form
from .._kernels.names import check_kernel_params
from .._kernels.user import user_kernel_kind
from .._solvers.svm_dual import SOLVER_VECTORS

#: Folds of the cross-validation that gives ``probability=True`` its held-out decision values (LIBSVM's 5).
N_FOLDS = 5


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
    gram = params.nu is None or (params.kernel == "matern" and not has_closed_form(params.nu))
    return 3 * 8.0 * n * (n + 1) if gram else 0.0


def check_fit_memory(params, multi_class, n, n_features, n_classes):
    """Refuse, before any training, a fit on ``n`` rows whose arrays cannot be held at once.

    The peak is the solver's state (the kernel-column cache, its length-``n``
    vectors, its copy of the rows or the Gram matrices of
    :func:`solver_gram_bytes`) plus, for ``P`` binary problems: their ``P x n``
    float64 dual coefficients, the boolean mask of the support vectors and the
    ``P x n_SV`` copy kept as ``dual_coef_`` (``n_SV`` up to ``n``); with
    ``probability=True``, ``dual_coef_``, the ``n x P`` cross-validated decision
    values and one fold's duals, mask, copy, kernel block and decision values
    (the full fit's duals are released first). One-vs-one has
    ``P = n_classes (n_classes - 1) / 2`` problems: 499500 for 1000 classes,
    whose duals on 2000 rows take 7.4 GiB each time they are held.
    """
    if n_classes == 2:
        P, kind = 1, "binary"
    elif multi_class == "ovr":
        P, kind = n_classes, "one-vs-rest"
    else:
        P, kind = n_classes * (n_classes - 1) // 2, "one-vs-one"
    solver = min(params.cache_mb * 2**20, 8.0 * n * n) + 8.0 * SOLVER_VECTORS * n \
        + (solver_gram_bytes(params, n) or 8.0 * n * n_features)
    peak = 17.0 * P * n
    what = (f"the solver's kernel-column cache, vectors and rows ({format_bytes(solver)}) and the dual "
            f"coefficients of {P} {kind} problem{'s' * (P > 1)} ({P} x {n} float64 with the support vectors' "
            f"copy: {format_bytes(peak)})")
    if params.probability:
        n_test, n_train = -(-n // N_FOLDS), n - n // N_FOLDS
        peak = 16.0 * P * n + 17.0 * P * n_train + 16.0 * P * n_test + 8.0 * n_test * n_train
        what += (f", then, for probability=True, dual_coef_ beside the {n} x {P} cross-validated decision "
                 f"values and one fold's duals ({format_bytes(peak)}),")
    remedies = ([f"multi_class='ovr' ({n_classes} problems)"] if kind == "one-vs-one" else []) \
        + (["probability=False"] if params.probability else []) \
        + [f"a smaller cache_size (now {params.cache_mb:g} MB)", "fewer classes or rows"]
    check_fits_in_memory(solver + peak, f"KernelSVC(multi_class={multi_class!r}, probability={params.probability}) "
                                        f"on {n} rows of {n_classes} classes", what,
                         "use " + ", ".join(remedies[:-1]) + " or " + remedies[-1])


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
