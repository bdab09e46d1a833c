"""ECOC least squares: the code, the one-pass solve against NumPy, the decoding."""

import numpy as np
import pytest
from sklearn.datasets import load_digits

import kernelmaps.ecoc as ecoc
from kernelmaps import ECOCClassifier, LeastSquaresClassifier
from kernelmaps.ecoc import _random_code


@pytest.mark.parametrize("n_classes, code_size", [(2, 1), (2, 16), (2, 64), (3, 2), (3, 64), (10, 4), (10, 64), (26, 5)])
def test_random_code_has_distinct_codewords_and_no_constant_column(n_classes, code_size):
    for seed in range(20):
        code = _random_code(n_classes, code_size, np.random.RandomState(seed))
        assert code.shape == (n_classes, code_size)
        assert set(np.unique(code)) <= {-1.0, 1.0}
        assert len(np.unique(code, axis=0)) == n_classes
        assert not np.any(np.all(code == code[:1], axis=0))


def test_too_short_a_code_is_rejected():
    with pytest.raises(ValueError, match="code_size"):
        _random_code(10, 3, np.random.RandomState(0))
    with pytest.raises(ValueError, match="code_size"):
        ECOCClassifier(code_size=0).fit(np.eye(4), [0, 1, 0, 1])


@pytest.fixture(scope="module")
def digits():
    X, y = load_digits(return_X_y=True)
    return X / 16.0, y


def test_coefficients_are_the_ridge_solution_for_the_code_targets(digits):
    X, y = digits
    clf = ECOCClassifier(code_size=12, alpha=3.0, random_state=0).fit(X, y)
    T = clf.code_[np.searchsorted(clf.classes_, y)]
    Xc, Tc = X - X.mean(0), T - T.mean(0)
    coef = np.linalg.solve(Xc.T @ Xc + 3.0 * np.eye(X.shape[1]), Xc.T @ Tc)
    np.testing.assert_allclose(clf.coef_, coef, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(clf.intercept_, T.mean(0) - X.mean(0) @ coef, rtol=1e-8, atol=1e-10)


def test_partial_fit_in_blocks_equals_one_fit(digits):
    X, y = digits
    full = ECOCClassifier(code_size=20, random_state=1).fit(X, y)
    parts = ECOCClassifier(code_size=20, random_state=1)
    for rows in np.array_split(np.arange(len(y)), 5):
        parts.partial_fit(X[rows], y[rows], classes=np.unique(y))
    np.testing.assert_allclose(parts.coef_, full.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(parts.predict(X), full.predict(X))


def test_identity_code_is_one_vs_rest_least_squares(digits, monkeypatch):
    X, y = digits
    monkeypatch.setattr(ecoc, "_random_code", lambda k, c, rng: 2.0 * np.eye(k) - 1.0)
    clf = ECOCClassifier(code_size=10, decoding="euclidean").fit(X, y)
    ovr = LeastSquaresClassifier(alpha=1.0).fit(X, y)
    np.testing.assert_allclose(clf.coef_, ovr.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), ovr.predict(X))


@pytest.mark.parametrize("decoding", ["hamming", "euclidean"])
def test_nearest_codeword_decoding(decoding, digits):
    X, y = digits
    clf = ECOCClassifier(code_size=32, decoding=decoding, random_state=0).fit(X[:1200], y[:1200])
    S = clf.predict_code(X[1200:])
    if decoding == "hamming":
        dist = (np.sign(S)[:, None, :] != clf.code_[None]).sum(-1) + 1e-6 * ((S[:, None, :] - clf.code_[None]) ** 2).sum(-1)
    else:
        dist = ((S[:, None, :] - clf.code_[None]) ** 2).sum(-1)
    np.testing.assert_array_equal(clf.predict(X[1200:]), clf.classes_[np.argmin(dist, axis=1)])
    assert clf.score(X[1200:], y[1200:]) > 0.85  # linear least squares on raw digits


def test_longer_codes_do_not_hurt(digits):
    X, y = digits
    err = {c: np.mean([1 - ECOCClassifier(code_size=c, random_state=s).fit(X[:1200], y[:1200])
                       .score(X[1200:], y[1200:]) for s in range(3)]) for c in (6, 64)}
    assert err[64] <= err[6] + 0.01, err


def test_binary_decision_function(digits):
    X, y = digits
    keep = y < 2
    clf = ECOCClassifier(code_size=5, random_state=0).fit(X[keep], y[keep])
    dec = clf.decision_function(X[keep])
    assert dec.shape == (keep.sum(),)
    np.testing.assert_array_equal(clf.predict(X[keep]), clf.classes_[(dec > 0).astype(int)])
