"""Plain-NumPy references for the library's kernels.

Every Numba kernel and every map with a closed form is held to one of these in
the tests: slow, obvious transcriptions of the papers' formulas, in float64.
"""

import numpy as np
from scipy.spatial.distance import cdist


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
    raise ValueError(kernel)


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
