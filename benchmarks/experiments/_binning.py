"""The parts of the ``rff-table1`` experiment: data, model selection, timed fits, kernel error, speed.

Fourier+LS is random Fourier features of the Gaussian kernel with one-vs-rest
ridge least squares (the notes' eq. 4); Binning+LS is random binning features
of the Laplacian kernel with the same least squares, on sparse features. Each
method's bandwidth and ridge are chosen on a held-out fifth of the training
rows (at most ``SELECTION_ROWS`` of them), then the method is refitted on every
training row and timed.
"""

import time

import numpy as np

#: Rows the model selection fits on (the selection is not timed).
SELECTION_ROWS = 40_000


def forest_standin(n_train, n_test, n_features, n_cells, n_classes, seed):
    """A low-dimensional set with a fine, sharp decision boundary, a stand-in for Forest Cover.

    ``n_cells`` random centres in the unit cube each get one of ``n_classes``
    labels; a point's label is its nearest centre's (a Voronoi partition, so the
    boundary is piecewise linear with many small class regions). The classes
    are unbalanced like Forest Cover's (weights falling as ``1/rank``). No label
    noise: the error of a method is its own.

    Returns
    -------
    X, y, X_test, y_test : float64 features in [0, 1]^d standardized on the
    training rows, integer labels
    """
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(seed)
    centres = rng.uniform(size=(n_cells, n_features))
    weights = 1.0 / np.arange(1, n_classes + 1)
    labels = rng.choice(n_classes, size=n_cells, p=weights / weights.sum())
    nearest = KNeighborsClassifier(n_neighbors=1, algorithm="kd_tree").fit(centres, labels)
    X = rng.uniform(size=(n_train + n_test, n_features))
    y = nearest.predict(X)
    mean, std = X[:n_train].mean(axis=0), X[:n_train].std(axis=0)
    X = (X - mean) / std
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def methods(task):
    """``name -> make(width, gamma, alpha, seed)``: an unfitted (map, learner) pair."""
    from kernelmaps import LeastSquaresClassifier, LeastSquaresRegressor, RandomBinning, RandomFourierFeatures

    learner = LeastSquaresClassifier if task == "classification" else LeastSquaresRegressor
    return {
        "Fourier+LS": lambda D, gamma, alpha, seed: (
            RandomFourierFeatures(D, kernel="gaussian", gamma=gamma, random_state=seed), learner(alpha=alpha)),
        "Binning+LS": lambda P, gamma, alpha, seed: (
            RandomBinning(n_grids=P, gamma=gamma, random_state=seed), learner(alpha=alpha)),
    }


def base_gamma(method, X, seed=0):
    """The method's knn50 bandwidth (Euclidean for the Gaussian, L1 for the Laplacian)."""
    from kernelmaps import resolve_gamma

    kernel = "gaussian" if method == "Fourier+LS" else "laplacian"
    return resolve_gamma("knn50", X, kernel, np.random.RandomState(seed))


def test_error(task, learner, Z, y):
    """Classification: the percent of wrong labels; regression: ``100 ||y_hat - y|| / ||y||``
    (the notes' RMS error normalized by the norm of the ground truth)."""
    if task == "classification":
        return 100.0 * float(np.mean(learner.predict(Z) != y))
    return 100.0 * float(np.linalg.norm(learner.predict(Z) - y) / np.linalg.norm(y))


def timed_fit(make, width, gamma, alpha, X, y, X_test, y_test, task, seed=0):
    """Fit map and learner on ``(X, y)``; return ``(test error %, training seconds, fitted map)``.

    The training time covers drawing (and, for binning, learning the
    vocabulary of) the map, transforming the rows and solving the least squares.
    """
    feature_map, learner = make(width, gamma, alpha, seed)
    feature_map.fit(X[:64])  # Numba compilation stays out of the clock
    started = time.perf_counter()
    Z = feature_map.fit(X).transform(X)
    learner.fit(Z, y)
    seconds = time.perf_counter() - started
    return test_error(task, learner, feature_map.transform(X_test), y_test), seconds, feature_map


def select(make, width, gamma0, X, y, task, multipliers, alphas, seed=0):
    """``(gamma, alpha)`` with the lowest error on a held-out fifth of (at most
    :data:`SELECTION_ROWS` of) the training rows."""
    rng = np.random.default_rng(seed)
    rows = rng.permutation(len(X))[:SELECTION_ROWS]
    cut = len(rows) * 4 // 5
    fit_rows, held_out = rows[:cut], rows[cut:]
    best = None
    for multiplier in multipliers:
        gamma = gamma0 * multiplier
        feature_map, _ = make(width, gamma, alphas[0], seed)
        Z = feature_map.fit(X[fit_rows]).transform(X[fit_rows])
        Z_held = feature_map.transform(X[held_out])
        for alpha in alphas:
            _, learner = make(width, gamma, alpha, seed)
            error = test_error(task, learner.fit(Z, y[fit_rows]), Z_held, y[held_out])
            if best is None or error < best[0]:
                best = (error, gamma, alpha)
    return best[1], best[2]


def exact_svm(X, y, X_test, y_test, gamma, C, task):
    """``(test error %, seconds)`` of the exact kernel machine: ``KernelSVC`` (Gaussian,
    one-vs-rest) for classification, exact ``KernelRidge`` for regression."""
    from kernelmaps import KernelRidge, KernelSVC

    model = (KernelSVC(C=C, gamma=gamma) if task == "classification"
             else KernelRidge(alpha=1.0 / C, kernel="gaussian", gamma=gamma))
    started = time.perf_counter()
    model.fit(X, y)
    seconds = time.perf_counter() - started
    return test_error(task, model, X_test, y_test), seconds


def kernel_error_rows(X, gamma, n_grids, widths, X_timing, repeats, seeds):
    """Kernel error of binning (``n_grids``) and RFF of the same Laplacian kernel
    (``widths``) on ``X``, with each map's bytes per output row and its transform
    time on ``X_timing`` (median of ``repeats``)."""
    from kernelmaps import RandomBinning, RandomFourierFeatures, exact_kernel, relative_frobenius_error

    K = exact_kernel(X, kernel="laplacian", gamma=gamma)
    rows = []
    jobs = [("binning", P) for P in n_grids] + [("rff laplacian", D) for D in widths]
    for label, width in jobs:
        errors, seconds, row_bytes = [], [], 0
        for seed in range(seeds):
            if label == "binning":
                est = RandomBinning(n_grids=width, gamma=gamma, random_state=seed).fit(X_timing)
            else:
                est = RandomFourierFeatures(width, kernel="laplacian", gamma=gamma, random_state=seed).fit(X)
            Z = est.transform(X)
            errors.append(relative_frobenius_error(K, Z=Z.toarray() if hasattr(Z, "toarray") else Z))
        for _ in range(repeats):
            started = time.perf_counter()
            Z = est.transform(X_timing)
            seconds.append(time.perf_counter() - started)
        # what a row of the output occupies: a CSR row's values and column indices, or D floats
        row_bytes = ((Z.data.nbytes + Z.indices.nbytes) / Z.shape[0] if hasattr(Z, "indices")
                     else Z.shape[1] * Z.itemsize)
        rows.append({"part": "kernel error", "map": label, "width": width,
                     "relative_error": float(np.mean(errors)), "bytes_per_row": float(row_bytes),
                     "transform_seconds": float(np.median(seconds)), "timing_rows": len(X_timing)})
    return rows


def transform_speed(n_rows, n_features, n_grids, width, dtypes, repeats, seed=0):
    """Rows per second of binning (``n_grids``) and RFF Laplacian (``width``) on
    ``n_rows x n_features`` standard normal rows, per dtype (medians)."""
    from kernelmaps import RandomBinning, RandomFourierFeatures

    X64 = np.random.default_rng(seed).standard_normal((n_rows, n_features))
    rows = []
    for dtype in dtypes:
        X = X64.astype(dtype)
        maps = {"binning": RandomBinning(n_grids=n_grids, random_state=seed).fit(X),
                "rff laplacian": RandomFourierFeatures(width, kernel="laplacian", random_state=seed).fit(X)}
        for est in maps.values():
            est.transform(X[:64])
        samples = {label: [] for label in maps}
        for _ in range(repeats):  # alternated, so drift in machine load falls on both
            for label, est in maps.items():
                started = time.perf_counter()
                est.transform(X)
                samples[label].append(time.perf_counter() - started)
        for label, times in samples.items():
            rows.append({"part": "speed", "map": label, "dtype": dtype,
                         "width": n_grids if label == "binning" else width,
                         "transform_seconds": float(np.median(times)),
                         "rows_per_second": n_rows / float(np.median(times))})
    return rows
