"""Nyström: the block kernel against NumPy, the map against scikit-learn and its kernel."""

import warnings

import numpy as np
import pytest
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.preprocessing import StandardScaler

from kernelmaps import Nystroem, datasets, relative_frobenius_error
from kernelmaps._kernels.formulas import RECORDS, evaluate_block, kernel_record
from kernelmaps._kernels.landmarks import ridge_leverage_scores as _ridge_leverage_scores
from kernelmaps.nystroem import _flush_subnormals

from kernel_checks import assert_within_bound_and_a_wrong_bandwidth_fails, gram_error
from naive import flush_subnormals, kernel_matrix


@pytest.mark.parametrize("kernel", sorted(RECORDS) + ["additive_chi2"])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_kernel_block_matches_numpy(kernel, dtype, rtol):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((19, 7)).astype(dtype)
    V = rng.standard_normal((33, 7)).astype(dtype)
    if kernel in ("chi2", "additive_chi2"):  # histogram kernels, with empty bins
        X, V = np.maximum(X, 0), np.maximum(V, 0)
    gamma, coef0, degree = 0.3, 0.7, 3
    record = kernel_record(kernel, gamma, degree, coef0, 1.5, 1.0, dtype)
    G = X @ V.T if record.product else np.empty((19, 33), dtype)
    evaluate_block(record, G, X, V, np.einsum("ij,ij->i", V, V))
    assert G.dtype == dtype
    expected = kernel_matrix(X, V, kernel, gamma, coef0, degree)
    np.testing.assert_allclose(G, expected, rtol=rtol, atol=rtol * 1e-2)


GAMMA = 0.15


@pytest.mark.parametrize("kernel, sk_kernel", [("gaussian", "rbf"), ("laplacian", "laplacian"),
                                               ("polynomial", "poly")])
def test_same_landmarks_and_same_approximation_as_scikit_learn(kernel, sk_kernel, cloud):
    ours = Nystroem(60, kernel=kernel, gamma=GAMMA, degree=3, coef0=1.0, random_state=7).fit(cloud)
    sk = SkNystroem(kernel=sk_kernel, gamma=GAMMA, degree=3, coef0=1.0, n_components=60,
                    random_state=7).fit(cloud)
    np.testing.assert_array_equal(ours.components_, sk.components_)
    np.testing.assert_array_equal(ours.component_indices_, sk.component_indices_)
    Za, Zb = ours.transform(cloud), sk.transform(cloud)
    scale = np.abs(Zb @ Zb.T).max()
    np.testing.assert_allclose(Za @ Za.T, Zb @ Zb.T, atol=1e-9 * scale, rtol=0)


def test_features_reproduce_the_formula(cloud):
    ny = Nystroem(40, gamma=GAMMA, random_state=0).fit(cloud)
    C = kernel_matrix(cloud, ny.components_, "gaussian", GAMMA, 1.0, 2)
    W = kernel_matrix(ny.components_, ny.components_, "gaussian", GAMMA, 1.0, 2)
    np.testing.assert_allclose(ny.transform(cloud) @ ny.transform(cloud).T,
                               C @ np.linalg.pinv(W) @ C.T, atol=1e-8)
    # exact on the landmarks
    Zv = ny.transform(ny.components_)
    np.testing.assert_allclose(Zv @ Zv.T, W, atol=1e-8)


def nystroem_error(X, m, gamma, seed=0, **params):
    return gram_error(Nystroem(m, gamma=gamma, random_state=seed, **params).fit(X), X)


# The Gaussian is checked with the other maps in test_kernel_approximation.
# Typical errors at m = 100 on the cloud: 0.01-0.03; a bandwidth off by 2 gives > 0.2.
@pytest.mark.parametrize("kernel", ["laplacian", "cauchy"])
def test_other_kernels_small_error_and_a_wrong_bandwidth_fails(kernel, cloud):
    assert_within_bound_and_a_wrong_bandwidth_fails(
        lambda gamma: Nystroem(100, kernel=kernel, gamma=gamma, random_state=0), cloud, GAMMA, 0.06)


def test_dot_product_kernels_are_approximated(cloud):
    # polynomial of degree 2 in 5 dimensions has rank 21: 40 landmarks recover it
    assert nystroem_error(cloud, 40, 0.2, kernel="polynomial", degree=2) < 1e-8
    assert nystroem_error(cloud, 100, 0.05, kernel="exponential") < 0.02


def test_error_falls_with_m_and_is_exact_with_every_point(cloud):
    errs = [np.mean([nystroem_error(cloud, m, GAMMA, s) for s in range(3)]) for m in (20, 60, 150)]
    assert errs[0] > errs[1] > errs[2]
    X = cloud[:80]
    assert nystroem_error(X, 80, GAMMA) < 1e-6
    # more landmarks than points: every point once, with a warning naming what was used
    with pytest.warns(UserWarning, match=r"n_components=100 is larger than the 80 rows.*n_components_=80"):
        ny = Nystroem(100, gamma=GAMMA, random_state=0).fit(X)
    assert ny.n_components_ == ny.rank_ == 80
    Z = ny.transform(X)
    assert Z.shape == (80, 80)
    assert list(ny.get_feature_names_out()) == [f"nystroem{i}" for i in range(80)]
    assert relative_frobenius_error(ny.kernel(X), Z=Z) < 1e-6
    # given landmarks are taken as given, however many
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Nystroem(100, gamma=GAMMA, landmarks=cloud[:100]).fit(X).n_components_ == 100


def test_duplicate_landmarks_survive(cloud):
    V = np.vstack([cloud[:10], cloud[:10], cloud[5:6]])
    ny = Nystroem(21, gamma=GAMMA, landmarks=V).fit(cloud)
    assert ny.rank_ == 10
    Z = ny.transform(cloud)
    assert np.isfinite(Z).all()
    reference = Nystroem(10, gamma=GAMMA, landmarks=cloud[:10]).fit(cloud).transform(cloud)
    np.testing.assert_allclose(Z @ Z.T, reference @ reference.T, atol=1e-7)


def test_float32_matches_float64(cloud):
    ny = Nystroem(50, gamma=GAMMA, random_state=0).fit(cloud)
    Z64 = ny.transform(cloud)
    Z32 = ny.transform(cloud.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32 @ Z32.T, Z64 @ Z64.T, atol=2e-3)


@pytest.fixture(scope="module")
def letter_small():
    ds = datasets.load("letter")
    X = StandardScaler().fit_transform(ds.X_train[:6000])
    return X[np.random.RandomState(0).permutation(len(X))[:1500]]


def test_kmeans_landmarks_beat_uniform(letter_small):
    """Zhang et al. (2008); the lecture: k-means landmarks "perform extremely well"."""
    err = {lm: np.mean([nystroem_error(letter_small, 32, 1 / 16, s, landmarks=lm) for s in range(2)])
           for lm in ("uniform", "kmeans")}
    assert err["kmeans"] < 0.8 * err["uniform"], err


def test_ridge_leverage_scores_match_the_definition():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((120, 4))
    K = kernel_matrix(X, X, "gaussian", 0.3, 1.0, 2)
    scores, lam = _ridge_leverage_scores(K, 20)
    expected = np.diag(K @ np.linalg.inv(K + lam * np.eye(len(K))))
    np.testing.assert_allclose(scores, expected, atol=1e-10)
    s = np.sort(np.linalg.eigvalsh(K))[::-1]
    assert np.isclose(lam, s[20:].sum() / 20)
    # the scores sum to the effective dimension, of the order of the rank asked for
    assert 10 < scores.sum() < 40


def test_leverage_landmarks_are_distinct_training_rows(cloud):
    ny = Nystroem(50, gamma=GAMMA, landmarks="leverage", random_state=0).fit(cloud)
    idx = ny.component_indices_
    assert len(np.unique(idx)) == 50
    np.testing.assert_array_equal(ny.components_, cloud[idx])
    assert nystroem_error(cloud, 50, GAMMA, landmarks="leverage") < 2 * nystroem_error(cloud, 50, GAMMA)
    again = Nystroem(50, gamma=GAMMA, landmarks="leverage", random_state=0).fit(cloud)
    np.testing.assert_array_equal(again.component_indices_, idx)


@pytest.mark.parametrize("params, message", [
    ({"landmarks": "random"}, "landmarks"),
    ({"landmarks": np.zeros((3, 5))}, "landmarks"),
    ({"landmarks": np.zeros((10, 4))}, "landmarks"),
    ({"kernel": "sigmoid"}, "kernel"),
    ({"degree": 1.5, "kernel": "polynomial"}, "degree"),
    ({"coef0": "one", "kernel": "polynomial"}, "coef0"),
    ({"gamma": -1.0}, "gamma"),
])
def test_bad_parameters_are_named(params, message, cloud):
    with pytest.raises(ValueError, match=message):
        Nystroem(10, **params).fit(cloud)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_flush_subnormals_matches_numpy_and_keeps_nan(dtype):
    tiny = np.finfo(dtype).tiny
    G = np.array([[1.0, tiny, tiny / 2, -tiny / 8, 0.0], [np.nan, -np.inf, 3e-3, -tiny, tiny / 1e3]], dtype=dtype)
    expected = flush_subnormals(G)
    _flush_subnormals(G, tiny)
    np.testing.assert_array_equal(G, expected)
    assert np.isnan(G[1, 0]) and G[1, 1] == -np.inf and G[0, 2] == 0 and G[0, 1] == tiny


def test_a_kernel_block_of_subnormals_gives_the_unflushed_features(monkeypatch):
    """Far landmarks make a Gaussian block of subnormals (float32 < 1.2e-38):
    flushing them changes no feature beyond float32 rounding."""
    import kernelmaps.nystroem as module

    rng = np.random.default_rng(4)
    X = np.concatenate([rng.standard_normal((150, 2)), rng.standard_normal((150, 2)) + 4.0]).astype(np.float32)
    ny = Nystroem(200, gamma=6.0, random_state=0).fit(X)
    K = kernel_matrix(X.astype(np.float64), ny.components_, "gaussian", 6.0).astype(np.float32)
    assert np.mean((K != 0) & (np.abs(K) < np.finfo(np.float32).tiny)) > 0.001
    flushed = ny.transform(X)
    monkeypatch.setattr(module, "_flush_subnormals", lambda G, tiny: None)
    kept = ny.transform(X)
    np.testing.assert_allclose(flushed, kept, rtol=0, atol=1e-6 * np.abs(kept).max())
