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
