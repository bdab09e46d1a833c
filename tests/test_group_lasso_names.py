"""Group-lasso MKL by name: column names and dict groups, group_names_,
kernel_weights_frame, what the alpha-selection rules promise, and examples that
run from an empty namespace."""

import doctest
import math
import sys

import numpy as np
import pytest

import kernelmaps._machines.group_lasso as group_lasso_fit
from kernelmaps import (GroupLassoMKL, GroupLassoMKLClassifier, GroupLassoMKLRegressor,
                        RandomFourierFeatures)
from kernelmaps.datasets import make_planted_groups

pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

FAST = dict(n_components=16, alpha=1e-3, max_iter=200, random_state=0)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((150, 6))
    y = np.sin(2 * X[:, 0]) + X[:, 3] ** 2
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    return X, frame, y


# ---------------------------------------------------------------- groups by name

def test_column_names_give_the_fit_of_their_positions(regression):
    X, frame, y = regression
    by_position = GroupLassoMKLRegressor([[0, 1], [2, 3], [4, 5]], **FAST).fit(X, y)
    by_name = GroupLassoMKLRegressor([["x0", "x1"], ["x2", "x3"], ["x4", "x5"]], **FAST).fit(frame, y)
    assert [c.tolist() for c in by_name.kernel_columns_] == [[0, 1], [2, 3], [4, 5]]
    np.testing.assert_array_equal(by_name.coef_, by_position.coef_)
    np.testing.assert_array_equal(by_name.predict(frame), by_position.predict(X))
    assert by_name.group_names_.tolist() == ["group0", "group1", "group2"]
    # positions still work on a DataFrame, and a group index per column too
    mixed = GroupLassoMKLRegressor([["x0", 1], [2, "x3"], [4, 5]], **FAST).fit(frame, y)
    np.testing.assert_array_equal(mixed.coef_, by_position.coef_)
    per_column = GroupLassoMKLRegressor([0, 0, 1, 1, 2, 2], **FAST).fit(frame, y)
    np.testing.assert_array_equal(per_column.coef_, by_position.coef_)


def test_dict_groups_name_the_kernels(regression):
    X, frame, y = regression
    by_position = GroupLassoMKLRegressor([[0, 1], [3], [2, 5]], **FAST).fit(X, y)
    by_dict = GroupLassoMKLRegressor({"smooth": ["x0", "x1"], "square": "x3", "rest": [2, "x5"]},
                                     **FAST).fit(frame, y)
    assert by_dict.group_names_.tolist() == ["smooth", "square", "rest"]
    assert by_dict.group_names_.dtype == object
    np.testing.assert_array_equal(by_dict.coef_, by_position.coef_)
    positions = GroupLassoMKLRegressor({"smooth": [0, 1], "square": 3, "rest": [2, 5]}, **FAST).fit(X, y)
    np.testing.assert_array_equal(positions.coef_, by_position.coef_)
    # the dict is a parameter like any other: cloned, and refitted the same
    from sklearn.base import clone
    np.testing.assert_array_equal(clone(by_dict).fit(frame, y).coef_, by_dict.coef_)


@pytest.mark.parametrize("groups, on_frame, message", [
    ([["x0", "zz"], ["x2"]], True, "group 0 names column 'zz', which X does not have"),
    ({"a": ["x0"], "b": ["nope"]}, True, "group 'b' names column 'nope'"),
    ([["x0", "x1"], ["x2"]], False, "X has no column names"),
    ({"a": "x0"}, False, "X has no column names"),
    (["x0", "x1", "x2", "x3", "x4", "x5"], True, "flat sequence of names"),
    ({"a": ["x0", "x1"], "b": [1, 2]}, True, "column 1 appears in groups 'a' and 'b'"),
    ({"a": ["x0"], "b": []}, True, "group 'b' is empty"),
    ({}, True, "empty dict"),
    ({1: [0], "1": [1]}, True, "distinct group names"),
    ({"a": [0, 9]}, True, "names column 9"),
])
def test_bad_names_are_refused_with_a_clear_error(regression, groups, on_frame, message):
    X, frame, y = regression
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        GroupLassoMKLRegressor(groups, **FAST).fit(frame if on_frame else X, y)


def test_group_names_of_the_other_forms(regression):
    X, _, y = regression
    assert GroupLassoMKLRegressor(None, **FAST).fit(X, y).group_names_.tolist() == ["all"]
    bandwidths = GroupLassoMKLRegressor(None, gamma=[0.05, 1.0, "scale"], **FAST).fit(X, y)
    assert bandwidths.group_names_.tolist() == ["gamma=0.05", "gamma=1", "gamma=scale"]
    repeated = GroupLassoMKLRegressor(None, gamma=[0.5, 0.5], **FAST).fit(X, y)
    assert repeated.group_names_.tolist() == ["kernel0", "kernel1"]
    maps = [RandomFourierFeatures(n_components=8, gamma=g) for g in (0.1, 1.0)]
    on_all = GroupLassoMKLRegressor(None, maps=maps, **FAST).fit(X, y)
    assert on_all.group_names_.tolist() == ["kernel0", "kernel1"]
    assert len(on_all.group_names_) == on_all.n_groups_ == on_all.kernel_weights_.shape[0]


# ---------------------------------------------------------------- kernel_weights_frame

def test_kernel_weights_frame_labels_the_weights(regression):
    X, frame, y = regression
    reg = GroupLassoMKLRegressor({"a": ["x0", "x1"], "b": ["x3"]}, **FAST).fit(frame, y)
    weights = reg.kernel_weights_frame()
    assert weights.columns.tolist() == ["a", "b"] and weights.columns.name == "group"
    assert weights.index.tolist() == ["y"]
    np.testing.assert_array_equal(weights.to_numpy(), reg.kernel_weights_[None, :])
    np.testing.assert_allclose(weights.to_numpy()[0], reg.group_norms_ / math.sqrt(2))

    labels = np.where(X[:, 0] + X[:, 3] > 0, "yes", "no")
    binary = GroupLassoMKLClassifier([[0, 1], [3]], **FAST).fit(X, labels)
    weights = binary.kernel_weights_frame()
    assert weights.index.tolist() == ["yes"] and weights.index.name == "class"
    np.testing.assert_array_equal(weights.to_numpy()[0], binary.kernel_weights_)

    three = np.digitize(X[:, 0], [-0.5, 0.5]) * 10
    multi = GroupLassoMKLClassifier([[0, 1], [3], [4, 5]], **FAST).fit(X, three)
    weights = multi.kernel_weights_frame()
    assert weights.shape == (3, 3) and weights.index.tolist() == [0, 10, 20]
    np.testing.assert_array_equal(weights.to_numpy(), multi.kernel_weights_)
    # the class that depends on column 0 leans on group0 most
    assert weights.loc[20].idxmax() == "group0"


def test_kernel_weights_frame_without_pandas_raises_importerror(regression, monkeypatch):
    X, _, y = regression
    reg = GroupLassoMKLRegressor([[0, 1], [3]], **FAST).fit(X, y)
    monkeypatch.setitem(sys.modules, "pandas", None)       # import pandas now fails
    with pytest.raises(ImportError, match="kernel_weights_frame needs pandas"):
        reg.kernel_weights_frame()


# ---------------------------------------------------------------- the selection rules

def _one_se_reference(est):
    """The one-standard-error alpha, recomputed from the recorded validation curve."""
    loss, se = est.validation_loss_, est.validation_loss_se_
    best = int(np.argmin(loss))
    return float(np.max(est.alphas_[:len(loss)][loss <= loss[best] + se[best]]))


def _promise_broken(sparse, best, informative):
    """What 'one_se' (``sparse``) promises against 'min' (``best``); the broken parts."""
    broken = []
    if not sparse.alpha_ >= best.alpha_:
        broken.append("alpha below the 'min' alpha")
    if not math.isclose(sparse.alpha_, _one_se_reference(sparse), rel_tol=1e-12):
        broken.append("not the largest alpha within one standard error")
    if not sparse.group_norms_.sum() <= best.group_norms_.sum() * (1 + 1e-6):
        broken.append("a larger sum of group norms")
    if not sparse.active_groups_.size <= best.active_groups_.size:
        broken.append("more active groups")
    noise = np.setdiff1d(np.arange(sparse.n_groups_), informative)
    if not sparse.kernel_weights_[informative].min() > sparse.kernel_weights_[noise].max():
        broken.append("a noise group outweighs a planted one")
    return broken


@pytest.fixture(scope="module")
def planted_fits():
    fits = []
    for seed in range(3):
        X, y, groups, informative = make_planted_groups(500, random_state=seed)
        params = dict(n_components=32, max_iter=300, random_state=seed)
        best = GroupLassoMKLClassifier(groups, **params).fit(X, y)
        sparse = GroupLassoMKLClassifier(groups, alpha_selection="one_se", **params).fit(X, y)
        fits.append((X, y, groups, informative, params, best, sparse))
    return fits


def test_one_se_keeps_its_promise_on_planted_groups(planted_fits):
    stricter = 0
    for _, _, _, informative, _, best, sparse in planted_fits:
        assert _promise_broken(sparse, best, informative) == []
        assert best.alpha_ == best.alphas_[np.argmin(best.validation_loss_)]
        # 'min' ranks the planted groups first as well
        noise = np.setdiff1d(np.arange(best.n_groups_), informative)
        assert best.kernel_weights_[informative].min() > best.kernel_weights_[noise].max()
        stricter += sparse.alpha_ > best.alpha_
    assert stricter >= 1, "one_se never chose a larger alpha: the comparison tests nothing"


def test_a_broken_one_se_rule_would_be_caught(planted_fits, monkeypatch):
    # the smallest alpha on the path instead of the largest within one standard error
    monkeypatch.setattr(group_lasso_fit, "select_alpha", lambda loss, se, rule: len(loss) - 1)
    X, y, groups, informative, params, best, sparse = planted_fits[0]
    broken = GroupLassoMKLClassifier(groups, alpha_selection="one_se", **params).fit(X, y)
    assert broken.alpha_ < sparse.alpha_
    assert "not the largest alpha within one standard error" in _promise_broken(broken, best, informative)


# ---------------------------------------------------------------- examples

@pytest.mark.parametrize("obj", [GroupLassoMKL, GroupLassoMKLClassifier, GroupLassoMKLRegressor,
                                 GroupLassoMKL.kernel_weights_frame],
                         ids=lambda obj: obj.__qualname__)
def test_examples_run_from_an_empty_namespace(obj):
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(obj, obj.__qualname__, globs={})
    assert tests and tests[0].examples
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for test in tests:
        assert set(test.globs) <= {"__builtins__", "__name__"}      # nothing imported
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
