"""What the dataset tests share: the offline set-up and the checks of a loaded dataset."""

import socket

import numpy as np


def closed_port_url():
    """An http URL on 127.0.0.1 at a port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def go_offline(tmp_path, monkeypatch):
    """Point every loader at a closed local port and a temporary cache."""
    monkeypatch.setenv("KERNELMAPS_LIBSVM_URL", closed_port_url())
    monkeypatch.setenv("KERNELMAPS_DATA", str(tmp_path / "env-cache"))


def check_dataset(ds, info):
    """The arrays and the metadata of a loaded dataset, against its registry ``info``."""
    for X, y in ((ds.X_train, ds.y_train), (ds.X_test, ds.y_test)):
        assert X.dtype == np.float64 and X.ndim == 2 and X.flags.c_contiguous
        assert X.flags.writeable and y.ndim == 1 and len(y) == len(X)
        assert np.isfinite(X).all()
        if ds.task == "classification":
            assert y.dtype == np.int64
            assert 0 <= y.min() and y.max() < ds.n_classes
        else:
            assert y.dtype == np.float64
    assert ds.n_features == ds.X_test.shape[1] == info.n_features
    assert (ds.name, ds.task, ds.n_classes, ds.class_names) == (
        info.name, info.task, info.n_classes, info.class_names)
    assert ds.source and ds.license and ds.description
