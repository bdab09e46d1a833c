"""Data preparation shared by the experiments."""


def standardized_split(name, seed=0):
    """``(X, y, X_test, y_test, gamma)``: the bundled split standardized on its training
    rows, and the CNM paper's knn50 bandwidth (``2 / sigma^2``) on them."""
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    import kernelmaps.datasets as kd
    from kernelmaps import resolve_gamma

    data = kd.load(name)
    scaler = StandardScaler().fit(data.X_train)
    X, Xt = scaler.transform(data.X_train), scaler.transform(data.X_test)
    gamma = resolve_gamma("knn50", X, "gaussian", np.random.RandomState(seed))
    return X, data.y_train, Xt, data.y_test, gamma


def lazy_smooth_regression(n_rows, n_features, chunk_rows, seed, noise=0.1):
    """``(X, y)`` as Dask arrays in chunks of ``chunk_rows`` rows, generated lazily from ``seed``.

    The law of :func:`benchmarks.common.smooth_regression` (``X ~ N(0, I)``, the
    targets of :func:`benchmarks.common.smooth_target`); no chunk exists until it
    is computed, and each chunk's targets come from its own random rows.
    """
    import dask.array as da
    import numpy as np

    from benchmarks.common import smooth_target

    block = da.random.default_rng(seed).standard_normal((n_rows, n_features + 1),
                                                        chunks=(chunk_rows, n_features + 1))
    return block[:, :n_features], block.map_blocks(smooth_target, noise=noise, drop_axis=1, dtype=np.float64)
