"""Class probabilities from SVM decision values, as LIBSVM computes them.

Platt's sigmoid ``P(y = +1 | f) = 1 / (1 + exp(A f + B))`` per binary problem,
fitted by the Newton method of Lin, Lin & Weng; several classes by pairwise
coupling (Wu, Lin & Weng's method 2) or by normalizing one-vs-rest sigmoids.
Plain NumPy: each step is a few vector operations over the rows.
"""

import numpy as np
from scipy.special import expit

#: LIBSVM's floor (and one minus its ceiling) of a sigmoid's probability, so that
#: every class probability is positive and its logarithm finite.
MIN_PROB = 1e-7

#: Rows coupled per batch of small linear systems (``n_classes + 1`` square each), at
#: most: a batch holds four ``(n_classes + 1)^2`` float64 arrays per row (the pairwise
#: probabilities, their products, the system and LAPACK's copy), kept within
#: :data:`COUPLING_BYTES` (for 1000 classes, 4096 rows would take 131 GB).
COUPLING_BLOCK = 4096
COUPLING_BYTES = 64 * 2**20


def _cross_entropy(decision, target, A, B):
    """Platt's objective: ``sum_i t_i (A f_i + B) + log(1 + exp(-(A f_i + B)))``, the
    cross-entropy of ``p_i = 1 / (1 + exp(A f_i + B))`` against the targets ``t_i``."""
    z = decision * A + B
    return float(np.sum(target * z + np.logaddexp(0.0, -z)))


def fit_sigmoid(decision, positive, *, max_iter=100, min_step=1e-10, sigma=1e-12, eps=1e-5):
    """Platt's sigmoid ``P(y = +1 | f) = 1 / (1 + exp(A f + B))`` fitted to decision values.

    Minimizes the cross-entropy against Platt's regularized targets
    ``(N+ + 1) / (N+ + 2)`` for the positive rows and ``1 / (N- + 2)`` for the
    negative ones, by Newton's method on ``(A, B)`` with the Hessian shifted by
    ``sigma`` and a backtracking line search (sufficient decrease ``1e-4``),
    from ``A = 0``, ``B = log((N- + 1) / (N+ + 1))``: the algorithm of Lin, Lin &
    Weng, LIBSVM's ``sigmoid_train``, with its constants. It stops when both
    partial derivatives are below ``eps``, after ``max_iter`` steps, or when the
    line search would step below ``min_step`` (as LIBSVM, silently).

    Parameters
    ----------
    decision : ndarray of shape (n_samples,)
        Decision values, ideally held out (cross-validated).
    positive : ndarray of bool of shape (n_samples,)
        Whether each row is of the positive class.

    Returns
    -------
    A, B : float

    References
    ----------
    Platt, J. Probabilistic outputs for support vector machines and comparisons
    to regularized likelihood methods. Advances in Large Margin Classifiers, 1999.
    Lin, H.-T., Lin, C.-J. and Weng, R. C. A note on Platt's probabilistic outputs
    for support vector machines. Machine Learning 68, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._solvers.platt import fit_sigmoid
    >>> f = np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])
    >>> A, B = fit_sigmoid(f, f > 0)
    >>> bool(A < 0)  # a larger decision value, a larger probability of the positive class
    True
    """
    f = np.asarray(decision, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    target = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    A, B = 0.0, float(np.log((n_neg + 1.0) / (n_pos + 1.0)))
    value = _cross_entropy(f, target, A, B)
    for _ in range(max_iter):
        z = f * A + B
        p = expit(-z)  # P(y = +1 | f)
        d2 = p * expit(z)
        d1 = target - p
        h11, h22, h21 = sigma + f @ (f * d2), sigma + d2.sum(), f @ d2
        g1, g2 = f @ d1, d1.sum()
        if abs(g1) < eps and abs(g2) < eps:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        slope = g1 * dA + g2 * dB
        step = 1.0
        while step >= min_step:
            new_A, new_B = A + step * dA, B + step * dB
            new_value = _cross_entropy(f, target, new_A, new_B)
            if new_value < value + 1e-4 * step * slope:
                A, B, value = new_A, new_B, new_value
                break
            step /= 2.0
        else:
            break  # no decrease along the Newton direction: as good as it gets in float64
    return float(A), float(B)


def sigmoid(decision, A, B):
    """``1 / (1 + exp(A f + B))`` per column of ``decision`` (``A``, ``B`` broadcast)."""
    return expit(-(decision * A + B))


def couple_pairwise(r, pairs, n_classes):
    """Class probabilities from pairwise ones by Wu, Lin & Weng's method 2 (as LIBSVM).

    ``p`` minimizes ``sum_{i<j} (r_ji p_i - r_ij p_j)^2`` subject to
    ``sum_i p_i = 1``, ``r_ij`` the probability that class ``i`` wins against
    ``j``. LIBSVM reaches the minimizer by fixed-point iterations to a tolerance;
    here each row's optimality system ``[[Q, e], [e^T, 0]] [p; b] = [0; 1]``,
    ``Q_ii = sum_{s != i} r_si^2``, ``Q_ij = -r_ji r_ij``, is solved directly.
    With every ``r_ij`` in ``(0, 1)`` the system is nonsingular (``Q`` is positive
    definite on ``e^T p = 0``) and the minimizer non-negative, as Wu, Lin & Weng
    show; a rounding below 0 is clipped.

    Parameters
    ----------
    r : ndarray of shape (n_samples, n_pairs)
        ``r[:, p]``: the probability of class ``pairs[p, 0]`` against ``pairs[p, 1]``.
    pairs : ndarray of int of shape (n_pairs, 2)
        Every pair of ``range(n_classes)`` once.
    n_classes : int

    Returns
    -------
    ndarray of shape (n_samples, n_classes)

    References
    ----------
    Wu, T.-F., Lin, C.-J. and Weng, R. C. Probability estimates for multi-class
    classification by pairwise coupling. JMLR 5, 2004 (method 2).
    """
    n, k = r.shape[0], n_classes
    a, b = pairs[:, 0], pairs[:, 1]
    out = np.empty((n, k))
    step = int(max(1, min(COUPLING_BLOCK, COUPLING_BYTES // (4 * 8 * (k + 1) ** 2))))
    for start in range(0, n, step):
        block = r[start:start + step]
        m = block.shape[0]
        R = np.zeros((m, k, k))  # R[:, i, j] = r_ij
        R[:, a, b] = block
        R[:, b, a] = 1.0 - block
        system = np.zeros((m, k + 1, k + 1))
        system[:, :k, :k] = -R * R.transpose(0, 2, 1)
        diagonal = np.arange(k)
        system[:, diagonal, diagonal] = np.sum(R * R, axis=1)
        system[:, :k, k] = 1.0
        system[:, k, :k] = 1.0
        rhs = np.zeros((m, k + 1, 1))
        rhs[:, k] = 1.0
        out[start:start + m] = np.linalg.solve(system, rhs)[:, :k, 0]
    # the exact solution is non-negative; clear the rounding of a probability near 0
    np.clip(out, 0.0, None, out=out)
    out /= out.sum(axis=1, keepdims=True)
    return out


def fit_sigmoids(scores, labels, pairs, n_classes):
    """``(A, B)`` of Platt's sigmoid per binary problem, from held-out decision values.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_problems)
        Decision values: one column for two classes (positive: class 1), one per
        class (one-vs-rest) or one per pair of ``pairs`` (one-vs-one: positive is
        the pair's first class, and only the pair's rows count).
    labels : ndarray of int of shape (n_samples,)
    pairs : ndarray of shape (n_problems, 2) or None
    n_classes : int

    Returns
    -------
    A, B : ndarray of shape (n_problems,)
    """
    A, B = np.empty(scores.shape[1]), np.empty(scores.shape[1])
    for p in range(scores.shape[1]):
        if n_classes == 2:
            rows, positive = slice(None), labels == 1
        elif pairs is None:
            rows, positive = slice(None), labels == p
        else:
            rows = np.flatnonzero((labels == pairs[p, 0]) | (labels == pairs[p, 1]))
            positive = labels[rows] == pairs[p, 0]
        A[p], B[p] = fit_sigmoid(scores[rows, p], positive)
    return A, B


def class_probabilities(scores, A, B, pairs, n_classes):
    """Class probabilities from decision values and the sigmoids of :func:`fit_sigmoids`.

    Each sigmoid's probability is kept in ``[MIN_PROB, 1 - MIN_PROB]`` (as
    LIBSVM). Two classes: ``[1 - p, p]``. One-vs-one: :func:`couple_pairwise`.
    One-vs-rest: the per-class probabilities divided by their sum, as
    scikit-learn's ``CalibratedClassifierCV`` combines one-vs-rest sigmoids.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    P = np.clip(sigmoid(scores, A, B), MIN_PROB, 1.0 - MIN_PROB)
    if n_classes == 2:
        return np.column_stack([1.0 - P[:, 0], P[:, 0]])
    if pairs is None:
        return P / P.sum(axis=1, keepdims=True)
    return couple_pairwise(P, pairs, n_classes)
