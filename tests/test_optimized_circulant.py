"""Optimized circulant maps: the eq. 17 FFT gradient against dense circulant
matrices and finite differences, and optimization beating random at small scale."""

import numpy as np
import pytest
from sklearn.preprocessing import StandardScaler

import kernelmaps.datasets
from kernelmaps import CirculantRandomFeatures, OptimizedCirculantMap, PegasosSVC

from naive import (central_differences, circulant_projection, fourier_features, kernel_matrix,
                   multiclass_hinge_loss)


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.RandomState(0)
    X = rng.standard_normal((60, 5))
    y = rng.randint(0, 3, 60)
    est = OptimizedCirculantMap(12, gamma=0.3, batch_size=30, n_steps_w=5, n_steps_theta=5,
                                max_iter=2, random_state=0).fit(X, y)
    return est, X, y


def test_transform_matches_dense_circulant(fitted):
    est, X, _ = fitted
    P = circulant_projection(X, est.signs_, est.circulant_vectors_, 12)
    np.testing.assert_allclose(est.transform(X), fourier_features(P, est.offset_), atol=1e-12)
    assert est.circulant_vectors_.shape == (3, 5)  # ceil(12 / 5) blocks
    np.testing.assert_allclose(est.decision_function(X),
                               est.transform(X) @ est.coef_ + est.intercept_, atol=1e-12)


def test_transform_is_the_randomized_circulant_maps_with_the_learned_vectors(fitted):
    """The two maps share one circulant projection: given the learned D, r and b, the
    randomized map transforms bit for bit as the optimized one."""
    est, X, _ = fitted
    twin = CirculantRandomFeatures(12, gamma=0.3).fit(X)
    twin.signs_, twin.circulant_vectors_, twin.random_offset_ = est.signs_, est.circulant_vectors_, est.offset_
    for dtype in (np.float64, np.float32):
        np.testing.assert_array_equal(twin.transform(X.astype(dtype)), est.transform(X.astype(dtype)))
    assert twin._block_elements_per_row() == est._block_elements_per_row()
    assert twin._planned_bytes(5) == est._planned_bytes(5)


def test_eq17_gradient_equals_the_dense_one(fitted):
    est, X, _ = fitted
    rng = np.random.RandomState(1)
    r = rng.standard_normal((3, 5))
    dP = rng.standard_normal((60, 12))
    (grad,) = est._project_backward(X, dP, [r])
    # d/dr sum(dP * (X D) R^T): the dense reference by the chain rule, column by column
    dense = np.zeros_like(r)
    for b in range(3):
        for j in range(5):
            e = np.zeros_like(r)
            e[b, j] = 1.0
            dense[b, j] = np.sum(dP * circulant_projection(X, est.signs_, e, 12))
    np.testing.assert_allclose(grad, dense, atol=1e-10)


def test_hinge_gradient_matches_finite_differences(fitted):
    est, X, y = fitted
    rng = np.random.RandomState(2)
    signs = np.full((60, 3), -1, dtype=np.int8)
    signs[np.arange(60), y] = 1
    W, b = rng.standard_normal((12, 3)), rng.standard_normal(3) * 0.1
    params = [rng.standard_normal((3, 5)) * 0.5, rng.uniform(0, 6, 12)]

    def loss():
        P = circulant_projection(X, est.signs_, params[0], 12)
        return multiclass_hinge_loss(fourier_features(P, params[1]), signs, W, b)

    value, grads = est._hinge_gradient(X, signs, W, b, params)
    assert value == pytest.approx(loss(), rel=1e-12)
    for g, numeric in zip(grads, central_differences(loss, params)):
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-8)


def test_initial_map_is_the_randomized_circulant_map():
    """With no optimization round the map is a randomized circulant map of the Gaussian."""
    rng = np.random.RandomState(3)
    X = rng.standard_normal((300, 16)) * 0.5
    gamma = 0.1
    est = OptimizedCirculantMap(2048, objective="kernel", gamma=gamma, max_iter=0,
                                random_state=0).fit(X)
    K = kernel_matrix(X, X, "gaussian", gamma)
    Z = est.transform(X)
    err = np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)
    assert err < 0.08
    K2 = kernel_matrix(X, X, "gaussian", 2 * gamma)
    assert np.linalg.norm(K2 - Z @ Z.T) / np.linalg.norm(K2) > 2 * err


def test_optimized_beats_random_circulant_on_digits():
    """Table 2 at small scale: k = d = 64 on digits, two seeds (gamma: the knn50 rule)."""
    data = kernelmaps.datasets.load("digits")
    scaler = StandardScaler().fit(data.X_train)
    X, Xt = scaler.transform(data.X_train), scaler.transform(data.X_test)
    y, yt = data.y_train, data.y_test
    gains = []
    for seed in range(2):
        opt = OptimizedCirculantMap(64, gamma=0.037, max_iter=10, random_state=seed).fit(X, y)
        rand = CirculantRandomFeatures(64, gamma=0.037, random_state=seed).fit(X)
        clf = PegasosSVC(alpha=1e-4, max_iter=1100, random_state=seed).fit(rand.transform(X), y)
        gains.append(opt.score(Xt, yt) - clf.score(rand.transform(Xt), yt))
    assert np.mean(gains) > 0.05
