"""Plain-NumPy references for the library's kernels.

Every Numba kernel and every map with a closed form is held to one of these in
the tests: slow, obvious transcriptions of the papers' formulas, in float64.
Nothing here imports the library.
"""

import numpy as np
from scipy.linalg import circulant, hadamard
from scipy.spatial.distance import cdist


# -- kernels ----------------------------------------------------------------------
def kernel_matrix(X, V, kernel, gamma, coef0=1.0, degree=2):
    """The kernel block ``k(X[i], V[j])`` of the library's vocabulary, in float64."""
    X, V = np.asarray(X, dtype=np.float64), np.asarray(V, dtype=np.float64)
    if kernel in ("gaussian", "rbf"):
        return np.exp(-gamma * cdist(X, V, "sqeuclidean"))
    if kernel == "laplacian":
        return np.exp(-gamma * cdist(X, V, "cityblock"))
    if kernel == "cauchy":
        return np.prod(1.0 / (1.0 + gamma * (X[:, None, :] - V[None, :, :]) ** 2), axis=2)
    if kernel == "polynomial":
        return (gamma * X @ V.T + coef0) ** degree
    if kernel == "exponential":
        return np.exp(gamma * X @ V.T)
    if kernel == "sech":  # the skewed chi2 kernel on log(x + c)
        return np.prod(1.0 / np.cosh(gamma * (X[:, None, :] - V[None, :, :])), axis=2)
    x, v = X[:, None, :], V[None, :, :]
    if kernel == "chi2":
        return np.exp(-gamma * np.sum(np.divide((x - v) ** 2, x + v, out=np.zeros(np.broadcast_shapes(x.shape, v.shape)),
                                                where=x + v > 0), axis=2))
    if kernel == "additive_chi2":
        return np.sum(np.divide(2 * x * v, x + v, out=np.zeros(np.broadcast_shapes(x.shape, v.shape)),
                                where=x + v > 0), axis=2)
    raise ValueError(kernel)


def kernel_loss(K, Z):
    """The kernel-approximation objective of CNM (Yu et al. 2015, eq. 10): the mean of ``(K - Z Z^T)^2``."""
    return np.mean((K - Z @ Z.T) ** 2)


# -- random features --------------------------------------------------------------
def fourier_features(P, offset=0.0, output="cos"):
    """Rahimi & Recht's features of the projections ``P = X W`` (``k`` columns):
    ``sqrt(2/k) cos(P + offset)``, or for ``output='cossin'`` ``[cos P, sin P] / sqrt(k)`` (no offset)."""
    k = P.shape[1]
    if output == "cos":
        return np.sqrt(2.0 / k) * np.cos(P + offset)
    return np.hstack([np.cos(P), np.sin(P)]) / np.sqrt(k)


def maclaurin_products(P, degrees, counts, col_starts, scales, width, offset):
    """Random Maclaurin features from the projections ``P``: for each degree ``n``
    (``counts[g]`` features from column ``col_starts[g]``), the scaled product of
    ``n`` consecutive column groups, written from column ``offset``."""
    out = np.zeros((P.shape[0], width))
    f = offset
    for n, c, s, sc in zip(degrees, counts, col_starts, scales):
        block = np.full((P.shape[0], c), sc, dtype=np.float64)
        for j in range(n):
            block *= P[:, s + j * c:s + (j + 1) * c]
        out[:, f:f + c] = block
        f += c
    return out


def count_sketches(X, hashes, signs, D):
    """The ``degree`` count sketches of each row (Pham & Pagh), constant columns
    of ones appended for the hashed offset."""
    m, d = X.shape
    Xa = np.hstack([X, np.ones((m, hashes.shape[1] - d))])
    C = np.zeros((m, hashes.shape[0], D))
    for j in range(hashes.shape[0]):
        for k in range(hashes.shape[1]):
            C[:, j, hashes[j, k]] += signs[j, k] * Xa[:, k]
    return C



# -- sparse maps --------------------------------------------------------------------
def floor_one_hot(X, n_components):
    """The test map of ``test_sparse_feature_map.py``, dense: feature ``j`` puts
    ``j + 1`` in block ``d - 1 - j`` of ``n_components // d`` columns, at
    ``floor(x_j)`` modulo the block's width."""
    n, d = X.shape
    width = n_components // d
    Z = np.zeros((n, n_components))
    for j in range(d):
        column = (d - 1 - j) * width + np.mod(np.floor(X[:, j]), width).astype(np.intp)
        Z[np.arange(n), column] = j + 1
    return Z


# -- structured projections, as dense matrices (rows = output coordinates) ---------
def signed_hadamard_blocks(signs):
    """``[H diag(s_0); H diag(s_1); ...]``: the unnormalized randomized Hadamard
    transforms ``H B_b``, one ``p x p`` block per row of ``signs``."""
    H = hadamard(signs.shape[1]).astype(np.float64)
    return np.vstack([H @ np.diag(s) for s in signs])


def srht(X, signs, index):
    """Tropp's SRHT of the rows of ``X`` (zero-padded to ``p``): the coordinates
    ``index`` of ``[H B_1 x, H B_2 x, ...]``, times ``1 / sqrt(len(index))``."""
    M = signed_hadamard_blocks(signs)[index, :X.shape[1]] / np.sqrt(len(index))
    return np.asarray(X, dtype=np.float64) @ M.T


def fastfood_matrix(B, perm, G, S):
    """Fastfood's stacked ``S H G Pi H B`` blocks (Le et al. 2013), with ``(Pi v)[k] = v[perm[k]]``."""
    p = B.shape[1]
    H = hadamard(p).astype(np.float64)
    return np.vstack([np.diag(S[b]) @ H @ np.diag(G[b]) @ np.eye(p)[perm[b]] @ H @ np.diag(B[b])
                      for b in range(B.shape[0])])


def sorf_matrix(D3, D2, D1):
    """SORF's stacked ``H D1 H D2 H D3`` blocks (Yu et al. 2016), the scale folded into ``D1``."""
    H = hadamard(D3.shape[1]).astype(np.float64)
    return np.vstack([H @ np.diag(D1[b]) @ H @ np.diag(D2[b]) @ H @ np.diag(D3[b]) for b in range(D3.shape[0])])


def stacked_circulants(r):
    """``[circ(r_0); circ(r_1); ...]``, ``circ(r)`` with first column ``r`` (Yu et al. 2015, eq. 12)."""
    return np.vstack([circulant(rb) for rb in np.asarray(r, dtype=np.float64)])


def circulant_projection(X, signs, r, k):
    """The first ``k`` coordinates of ``[circ(r_0); circ(r_1); ...] D x`` for each row ``x``, ``D = diag(signs)``."""
    return (X * signs) @ stacked_circulants(r)[:k].T


# -- learners ---------------------------------------------------------------------
def multiclass_hinge_loss(Z, signs, W, b):
    """The one-vs-rest hinge of CNM's eq. 5: the mean over rows of ``sum_c max(0, 1 - s_c (Z W + b)_c)``."""
    return np.mean(np.sum(np.maximum(0.0, 1.0 - signs * (Z @ W + b)), axis=1))


def cosine_map_hinge_loss(X, signs, W, b, theta, offset):
    """CNM's eq. 5 for the map ``sqrt(2/k) cos(X theta + offset)``: its multi-class hinge loss."""
    return multiclass_hinge_loss(fourier_features(X @ theta, offset), signs, W, b)


def cosine_map_kernel_loss(X, gamma, theta, offset):
    """CNM's eq. 10 for the map ``sqrt(2/k) cos(X theta + offset)``: its kernel loss against the Gaussian on ``X``."""
    return kernel_loss(kernel_matrix(X, X, "gaussian", gamma), fourier_features(X @ theta, offset))


def pegasos(Z, signs, batches, lam):
    """Pegasos as in CNM's Algorithm 1 (the bias a feature of ones): returns ``W``,
    ``b`` and the fraction of active (row, class) pairs at each step."""
    Za = np.hstack([Z, np.ones((len(Z), 1))])
    W = np.zeros((Za.shape[1], signs.shape[1]))
    active_fractions = []
    for t, A in enumerate(batches, start=1):
        eta = 1.0 / (lam * t)
        active = np.where(signs[A] * (Za[A] @ W) < 1, signs[A], 0.0)
        active_fractions.append(np.mean(active != 0))
        W = (1 - eta * lam) * W + eta / len(A) * Za[A].T @ active
        W *= np.minimum(1.0, (1 / np.sqrt(lam)) / np.maximum(np.linalg.norm(W, axis=0), 1e-300))
    return W[:-1], W[-1], np.array(active_fractions)


def greedy_coordinate_descent(Q, C, tol, max_iter):
    """Greedy coordinate descent on the SVM dual ``min a^T Q a / 2 - sum a`` over
    ``0 <= a <= C``: each step takes the largest clipped Newton step; returns ``a``
    and the number of steps."""
    n = len(Q)
    alpha = np.zeros(n)
    z = np.zeros(n)
    for it in range(max_iter):
        delta = np.clip((1 - z) / np.diag(Q), -alpha, C - alpha)
        i = int(np.argmax(np.abs(delta)))
        if abs(delta[i]) < tol:
            return alpha, it
        alpha[i] += delta[i]
        z += delta[i] * Q[:, i]
    return alpha, max_iter


def flush_subnormals(G):
    """``G`` with its subnormal entries (below the dtype's smallest normal in
    magnitude) set to zero; NaN and infinities unchanged."""
    out = G.copy()
    out[np.abs(G) < np.finfo(G.dtype).tiny] = 0
    return out


def svm_dual_violation(Q, y, alpha, C):
    """LIBSVM's stopping measure ``m(a) - M(a)`` of the dual with a free bias
    (``min a^T Q a / 2 - sum a``, ``y^T a = 0``, ``0 <= a <= C``): the largest
    ``-y_i G_i`` over the variables that can move up minus the smallest over
    those that can move down, ``G = Q a - 1``."""
    score = -y * (Q @ alpha - 1)
    up = ((y > 0) & (alpha < C)) | ((y < 0) & (alpha > 0))
    down = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < C))
    return score[up].max() - score[down].min()


# -- calculus ---------------------------------------------------------------------
def central_differences(f, arrays, eps=1e-6):
    """The gradient of ``f()`` with respect to each of ``arrays`` (which ``f`` reads),
    entry by entry ``(f(a + eps) - f(a - eps)) / (2 eps)``, perturbing in place."""
    grads = []
    for a in arrays:
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            old = a[idx]
            a[idx] = old + eps
            up = f()
            a[idx] = old - eps
            down = f()
            a[idx] = old
            g[idx] = (up - down) / (2 * eps)
        grads.append(g)
    return grads


def exact_resemblance(X, Y, kernel):
    """The Tanimoto (``x.y / (|x|^2 + |y|^2 - x.y)``) or min-max (``sum min / sum max``)
    kernel in exact rational arithmetic, rounded once: right at any finite magnitude
    (0 for a pair of all-zero rows). Slow: for a few rows."""
    from fractions import Fraction

    def value(x, y):
        x, y = [Fraction(float(a)) for a in x], [Fraction(float(b)) for b in y]
        if kernel == "tanimoto":
            p = sum(a * b for a, b in zip(x, y))
            numerator, denominator = p, sum(a * a for a in x) + sum(b * b for b in y) - p
        else:
            numerator = sum(min(a, b) for a, b in zip(x, y))
            denominator = sum(max(a, b) for a, b in zip(x, y))
        return float(numerator / denominator) if denominator else 0.0

    return np.array([[value(x, y) for y in np.asarray(Y)] for x in np.asarray(X)])
