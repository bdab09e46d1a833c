"""Least squares and Pegasos against plain NumPy references."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from kernelmaps import LeastSquaresClassifier, LeastSquaresRegressor, PegasosSVC
from kernelmaps._solvers.pegasos_dense import pegasos_steps

from naive import pegasos


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((4, 10)) * 3
    y = rng.integers(0, 4, 800)
    X = centers[y] + rng.standard_normal((800, 10))
    return X, y


def test_least_squares_regressor_matches_ridge():
    rng = np.random.default_rng(1)
    Z = rng.standard_normal((500, 12))
    y = Z @ rng.standard_normal(12) + 0.3 + 0.1 * rng.standard_normal(500)
    ours = LeastSquaresRegressor(alpha=2.0).fit(Z, y)
    ref = Ridge(alpha=2.0).fit(Z, y)
    np.testing.assert_allclose(ours.coef_.ravel(), ref.coef_, rtol=1e-9)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-9)
    np.testing.assert_allclose(ours.predict(Z), ref.predict(Z), rtol=1e-9)


def test_least_squares_classifier_is_one_vs_rest_ridge(blobs):
    X, y = blobs
    ours = LeastSquaresClassifier(alpha=0.5).fit(X, y)
    targets = 2.0 * (y[:, None] == np.arange(4)) - 1.0
    ref = Ridge(alpha=0.5).fit(X, targets)
    np.testing.assert_allclose(ours.decision_function(X), ref.predict(X), rtol=1e-8, atol=1e-10)
    assert ours.score(X, y) > 0.95


def test_partial_fit_over_blocks_equals_fit(blobs):
    X, y = blobs
    full = LeastSquaresClassifier(alpha=1.0).fit(X, y)
    parts = LeastSquaresClassifier(alpha=1.0)
    for rows in np.array_split(np.arange(len(y)), 5):
        parts.partial_fit(X[rows], y[rows], classes=np.arange(4))
    np.testing.assert_allclose(parts.coef_, full.coef_, rtol=1e-9)
    with pytest.raises(ValueError, match="classes must be given"):
        LeastSquaresClassifier().partial_fit(X, y)
    with pytest.raises(ValueError, match="outside classes"):
        parts.partial_fit(X[:3], np.array([0, 1, 9]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pegasos_kernel_matches_numpy_reference(blobs, dtype):
    X, y = blobs
    signs = np.where(y[:, None] == np.arange(4), 1, -1).astype(np.int8)
    batches = np.random.default_rng(3).integers(0, len(y), (60, 32))
    W = np.zeros((10, 4))
    b = np.zeros(4)
    pegasos_steps(X.astype(dtype), signs, W, b, batches, 0.01, 0, True)
    W_ref, b_ref, _ = pegasos(X.astype(dtype).astype(np.float64), signs.astype(float), batches, 0.01)
    np.testing.assert_allclose(W, W_ref, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b, b_ref, rtol=1e-9, atol=1e-12)


def test_pegasos_weights_stay_in_the_ball_and_classify(blobs):
    X, y = blobs
    clf = PegasosSVC(alpha=1e-2, batch_size=64, max_iter=500, random_state=0).fit(X, y)
    norms = np.sqrt((clf.coef_**2).sum(axis=0) + clf.intercept_**2)
    assert np.all(norms <= 1 / np.sqrt(1e-2) + 1e-9)
    assert clf.score(X, y) > 0.95
    binary = PegasosSVC(alpha=1e-2, batch_size=64, max_iter=300, random_state=0).fit(X, y > 1)
    assert binary.decision_function(X).shape == (len(y),)
    assert binary.score(X, y > 1) > 0.9


@pytest.mark.parametrize("params", [{"alpha": 0}, {"batch_size": 0}, {"max_iter": -1}])
def test_pegasos_rejects_impossible_parameters(blobs, params):
    X, y = blobs
    with pytest.raises(ValueError):
        PegasosSVC(**params).fit(X, y)
