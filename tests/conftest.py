import numpy as np
import pytest


@pytest.fixture(scope="session")
def letter_standardized():
    """1000 standardized rows of the bundled LETTER training split."""
    from sklearn.preprocessing import StandardScaler

    import kernelmaps.datasets as kd

    data = kd.load("letter")
    X = StandardScaler().fit_transform(data.X_train)
    rng = np.random.default_rng(0)
    return X[rng.choice(X.shape[0], 1000, replace=False)]


@pytest.fixture(scope="module")
def cloud():
    """300 standard normal points in 5 dimensions, on which the Gaussian maps are
    held to their kernel (a test module may define its own)."""
    return np.random.default_rng(5).standard_normal((300, 5))


@pytest.fixture(scope="module")
def sphere():
    """300 points on the unit sphere in 8 dimensions, where the dot-product kernels
    are bounded and their maps are held to them."""
    X = np.random.default_rng(5).standard_normal((300, 8))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes over 5 s; CI runs them all")


@pytest.fixture(scope="module")
def client():
    """A ``dask.distributed`` cluster of two single-threaded worker processes on 127.0.0.1,
    closed after the module (the Dask test modules skip themselves without the extra)."""
    distributed = pytest.importorskip("distributed", reason="the 'dask' extra is absent: pip install 'kernelmaps[dask]'")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, silence_logs=40)
    with distributed.Client(cluster) as dask_client:
        yield dask_client
    cluster.close()
