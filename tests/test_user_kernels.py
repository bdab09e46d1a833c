"""User-supplied kernels: kernel='precomputed', callables, and given landmark rows."""

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.svm import SVC

from kernelmaps import KernelRidge, KernelRidgeClassifier, KernelSVC, Nystroem, exact_kernel

GAMMA = 0.3


def gaussian(A, B):
    return exact_kernel(A, B, kernel="gaussian", gamma=GAMMA)


@pytest.fixture
def data():
    X = np.random.default_rng(0).standard_normal((200, 4))
    return X, np.sin(X[:, 0]) + X[:, 1] ** 2


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans", "leverage"])
def test_nystroem_precomputed_and_callable_equal_the_built_in(landmarks, data):
    X, _ = data
    ny = Nystroem(30, gamma=GAMMA, landmarks=landmarks, random_state=0).fit(X)
    Z = ny.transform(X)
    pre = Nystroem(30, kernel="precomputed").fit(exact_kernel(ny.components_, ny.components_, gamma=GAMMA))
    np.testing.assert_allclose(pre.transform(exact_kernel(X, ny.components_, gamma=GAMMA)), Z, atol=1e-10)
    assert pre.n_features_in_ == 30 and np.array_equal(pre.component_indices_, np.arange(30))
    assert not hasattr(pre, "components_") and pre.__sklearn_tags__().input_tags.pairwise
    call = Nystroem(30, kernel=gaussian, landmarks=landmarks, random_state=0).fit(X)
    np.testing.assert_array_equal(call.components_, ny.components_)
    np.testing.assert_allclose(call.transform(X), Z, atol=1e-10)
    assert call.transform(X[:5].astype(np.float32)).dtype == np.float32
    assert not call.__sklearn_tags__().input_tags.pairwise


def test_nystroem_takes_given_landmark_rows(data):
    X, _ = data
    rows = X[[3, 50, 7, 120]]
    ny = Nystroem(4, gamma=GAMMA, landmarks=rows).fit(X)
    np.testing.assert_array_equal(ny.components_, rows)
    Z = ny.transform(rows)
    np.testing.assert_allclose(Z @ Z.T, exact_kernel(rows, gamma=GAMMA), atol=1e-10)


def test_nystroem_precomputed_errors(data):
    X, _ = data
    W = exact_kernel(X[:10], gamma=GAMMA)
    with pytest.raises(ValueError, match="square"):
        Nystroem(10, kernel="precomputed").fit(W[:, :8])
    assert Nystroem(9, kernel="precomputed").fit(W).n_components_ == 10  # every row is a landmark
    with pytest.raises(ValueError, match="symmetric"):
        Nystroem(10, kernel="precomputed").fit(W + np.triu(np.full((10, 10), 1e-3), 1))
    bad = W.copy()
    bad[2, 3] = bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Nystroem(10, kernel="precomputed").fit(bad)
    for rule in ("kmeans", "leverage", X[:10]):
        with pytest.raises(ValueError, match="landmarks must be 'uniform'"):
            Nystroem(10, kernel="precomputed", landmarks=rule).fit(W)
    ny = Nystroem(10, kernel="precomputed").fit(W)
    with pytest.raises(ValueError, match="10"):
        ny.transform(exact_kernel(X, X[:9], gamma=GAMMA))
    with pytest.raises(ValueError, match="precomputed"):
        ny.kernel(X)


def test_callable_output_is_checked_naming_the_callable(data):
    X, _ = data

    def wrong_shape(A, B):
        return exact_kernel(A, B[:-1], gamma=GAMMA)

    def not_finite(A, B):
        return np.full((A.shape[0], B.shape[0]), np.nan)

    for bad in (wrong_shape, not_finite):
        for estimator in (Nystroem(10, kernel=bad), KernelRidge(kernel=bad), KernelSVC(kernel=bad)):
            with pytest.raises(ValueError, match=bad.__name__):
                estimator.fit(X, (X[:, 0] > 0).astype(int))


def test_kernel_svc_precomputed_and_callable_predict_as_built_in_and_scikit_learn():
    X, y = load_iris(return_X_y=True)
    Xtr, ytr, Xte = X[::2], y[::2], X[1::2]
    K, Kt = exact_kernel(Xtr, gamma=0.5), exact_kernel(Xte, Xtr, gamma=0.5)
    for multi_class in ("ovr", "ovo"):
        built_in = KernelSVC(gamma=0.5, multi_class=multi_class, tol=1e-8).fit(Xtr, ytr)
        pre = KernelSVC(kernel="precomputed", multi_class=multi_class, tol=1e-8).fit(K, ytr)
        call = KernelSVC(kernel=lambda A, B: exact_kernel(A, B, gamma=0.5), multi_class=multi_class,
                         tol=1e-8).fit(Xtr, ytr)
        np.testing.assert_array_equal(pre.predict(Kt), built_in.predict(Xte))
        np.testing.assert_allclose(pre.decision_function(Kt), built_in.decision_function(Xte), atol=1e-6)
        np.testing.assert_allclose(call.decision_function(Xte), built_in.decision_function(Xte), atol=1e-6)
        np.testing.assert_array_equal(pre.support_, built_in.support_)
        assert pre.support_vectors_ is None and pre.__sklearn_tags__().input_tags.pairwise
    sk = SVC(kernel="precomputed", tol=1e-8).fit(K, ytr)
    pre = KernelSVC(kernel="precomputed", multi_class="ovo", tol=1e-8).fit(K, ytr)
    np.testing.assert_array_equal(pre.predict(Kt), sk.predict(Kt))
    with pytest.raises(ValueError, match="75"):
        pre.predict(Kt[:, :70])
    with pytest.raises(ValueError, match="square"):
        KernelSVC(kernel="precomputed").fit(Kt[:, :70], y[1::2][:75])


def test_kernel_svc_precomputed_with_zero_weights_and_probabilities():
    X, y = load_iris(return_X_y=True)
    K = exact_kernel(X, gamma=0.5)
    w = np.ones(150)
    w[::7] = 0
    a = KernelSVC(gamma=0.5, probability=True, random_state=0).fit(X, y, sample_weight=w)
    b = KernelSVC(kernel="precomputed", probability=True, random_state=0).fit(K, y, sample_weight=w)
    np.testing.assert_array_equal(a.support_, b.support_)
    np.testing.assert_allclose(b.predict_proba(K), a.predict_proba(X), atol=1e-4)


def test_kernel_ridge_precomputed_and_callable_equal_the_built_in(data):
    X, t = data
    Xtr, ttr, Xte = X[:150], t[:150], X[150:]
    K, Kt = exact_kernel(Xtr, gamma=GAMMA), exact_kernel(Xte, Xtr, gamma=GAMMA)
    w = np.random.default_rng(1).uniform(0, 2, 150)
    w[:10] = 0
    for weights in (None, w):
        built_in = KernelRidge(alpha=0.1, gamma=GAMMA).fit(Xtr, ttr, sample_weight=weights)
        pre = KernelRidge(alpha=0.1, kernel="precomputed").fit(K, ttr, sample_weight=weights)
        call = KernelRidge(alpha=0.1, kernel=gaussian).fit(Xtr, ttr, sample_weight=weights)
        np.testing.assert_allclose(pre.predict(Kt), built_in.predict(Xte), atol=1e-10)
        np.testing.assert_allclose(call.predict(Xte), built_in.predict(Xte), atol=1e-10)
    labels = (ttr > np.median(ttr)).astype(int)
    built_in = KernelRidgeClassifier(alpha=0.1, gamma=GAMMA).fit(Xtr, labels)
    pre = KernelRidgeClassifier(alpha=0.1, kernel="precomputed").fit(K, labels)
    np.testing.assert_allclose(pre.decision_function(Kt), built_in.decision_function(Xte), atol=1e-10)
    assert pre.__sklearn_tags__().input_tags.pairwise
    with pytest.raises(ValueError, match="symmetric"):
        KernelRidge(kernel="precomputed").fit(K + np.triu(np.full(K.shape, 1e-3), 1), ttr)
    with pytest.raises(ValueError, match="150"):
        KernelRidge(kernel="precomputed").fit(K, ttr).predict(Kt[:, :100])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_precomputed_kernel_block_reads_the_gram_columns(dtype):
    from kernelmaps._kernels.formulas import PrecomputedColumns, evaluate_block

    rng = np.random.default_rng(2)
    K = rng.standard_normal((12, 12)).astype(dtype)
    rows = np.hstack([K, np.arange(12, dtype=dtype)[:, None]])  # each row followed by its column
    order = rng.permutation(12)  # the solver permutes its rows
    X, V = rows[order[:5]], rows[order]
    G = np.empty((5, 12), dtype)
    evaluate_block(PrecomputedColumns(dtype(1)), G, X, V, np.zeros(12, dtype))
    np.testing.assert_array_equal(G, K[np.ix_(order, order[:5])].T)


def test_a_landmark_gram_that_is_not_positive_semi_definite_is_named(data):
    X, _ = data
    with pytest.raises(ValueError, match=r"not positive semi-definite.*most negative eigenvalue is -1 "):
        Nystroem(kernel="precomputed").fit(-np.eye(5))

    def negated(A, B):
        return -exact_kernel(A, B, gamma=GAMMA)

    with pytest.raises(ValueError, match=r"kernel='negated'.*not positive semi-definite"):
        Nystroem(10, kernel=negated, random_state=0).fit(X)
    # m 2^-24 max|eigenvalue| is round-off (a Gram matrix computed in float32); beyond it, refused
    W = exact_kernel(X[:40], gamma=GAMMA)
    s, U = np.linalg.eigh(W)
    for shift, accepted in ((-0.5 * 40 * 2.0**-24 * s[-1], True), (-2 * 40 * 2.0**-24 * s[-1], False)):
        shifted = (U * np.r_[shift, s[1:]]) @ U.T
        if accepted:
            ny = Nystroem(kernel="precomputed").fit(shifted)
            assert ny.rank_ < 40  # the negative eigenvalue is dropped
        else:
            with pytest.raises(ValueError, match="not positive semi-definite"):
                Nystroem(kernel="precomputed").fit(shifted)
    with pytest.raises(ValueError, match="is zero"):
        Nystroem(kernel="precomputed").fit(np.zeros((4, 4)))


def test_an_unknown_kernel_name_lists_the_user_kernels_too(data):
    X, _ = data
    with pytest.raises(ValueError, match=r"one of \[.*'matern'.*'precomputed'\] or a callable"):
        Nystroem(10, kernel="sigmoid").fit(X)


def test_a_float32_gram_matrix_need_be_symmetric_only_to_its_round_off(data):
    X, y = data
    K = exact_kernel(X[:40].astype(np.float32), gamma=GAMMA)
    K[3, 5] = np.nextafter(K[5, 3], np.float32(2))  # one ulp apart
    assert K[3, 5] != K[5, 3]
    for estimator in (Nystroem(kernel="precomputed"), KernelRidge(kernel="precomputed"),
                      KernelSVC(kernel="precomputed")):
        estimator.fit(K, (y[:40] > 1).astype(int))
    with pytest.raises(ValueError, match="not symmetric"):
        K[3, 5] += np.float32(1e-3)
        Nystroem(kernel="precomputed").fit(K)
    with pytest.raises(ValueError, match="not symmetric"):  # float64: 1e-8 relative
        Nystroem(kernel="precomputed").fit(exact_kernel(X[:40], gamma=GAMMA) + np.triu(np.full((40, 40), 1e-7), 1))
