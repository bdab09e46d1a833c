"""One rule for the shape of regression targets, as scikit-learn's.

A regressor that takes several target columns keeps the shape of ``y``: a 1-D
``y`` gives 1-D predictions, a column vector ``(n, 1)`` gives ``(n, 1)``. A
regressor of one target takes a column vector as its column, with scikit-learn's
``DataConversionWarning``, and predicts 1-D.
"""

import warnings

import numpy as np
import pytest
from sklearn.base import clone, is_regressor
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import get_tags

from registry import ALL, REGISTRY, make

REGRESSORS = [name for name in ALL if is_regressor(REGISTRY[name]())]


def test_the_registry_has_regressors_of_both_kinds():
    kinds = {get_tags(REGISTRY[name]()).target_tags.multi_output for name in REGRESSORS}
    assert kinds == {True, False}, kinds


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(0)
    X = rng.randn(80, 4)
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.05 * rng.randn(80)
    return X, y


@pytest.mark.parametrize("name", REGRESSORS)
def test_a_column_vector_target_follows_the_rule(name, problem):
    X, y = problem
    estimator = make(name)
    flat = clone(estimator).fit(X, y).predict(X)
    assert flat.shape == (len(X),)
    if get_tags(estimator).target_tags.multi_output:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DataConversionWarning)
            column = clone(estimator).fit(X, y[:, None]).predict(X)
        assert column.shape == (len(X), 1)
        np.testing.assert_allclose(column[:, 0], flat, rtol=1e-6, atol=1e-9)
    else:
        with pytest.warns(DataConversionWarning, match="column-vector y"):
            column = clone(estimator).fit(X, y[:, None]).predict(X)
        assert column.shape == (len(X),)
        np.testing.assert_allclose(column, flat, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", REGRESSORS)
def test_a_target_of_two_columns_is_taken_or_refused_by_name(name, problem):
    X, y = problem
    Y = np.column_stack([y, -y])
    estimator = make(name)
    if get_tags(estimator).target_tags.multi_output:
        assert clone(estimator).fit(X, Y).predict(X).shape == (len(X), 2)
    else:
        with pytest.raises(ValueError, match=r"1-D|one target|shape"):
            clone(estimator).fit(X, Y)
