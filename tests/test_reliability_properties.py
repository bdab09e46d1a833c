"""Properties over random input, generated from the registry.

Valid input gives finite output of the right shape, dtype and sparsity; bad input
(NaN, infinity, the wrong width, bad sample weights) gives a ``ValueError`` that
names the problem: never a silent answer, never an unrelated exception. Covered:
every registered estimator on dense arrays (the maps at magnitudes across their
dtype's range), the maps with sparse output, the estimators that take
``kernel='precomputed'`` and callables, the learners that take ``sample_weight``,
and the Nyström kernel machines on Dask arrays. Hypothesis draws few examples per
estimator: the registry makes them many.
"""

import inspect

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from sklearn.base import is_classifier
from sklearn.utils import get_tags

from kernelmaps import SparseFeatureMap, exact_kernel
from registry import ALL, FEATURE_MAPS, REGISTRY, domain, fit, make, output, stored, takes

# the registry's small iteration budgets and regularizations, on random rows
pytestmark = [pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
              pytest.mark.filterwarnings("ignore:alpha=.* is at or above alpha_max")]

#: Hypothesis settings of the properties over the whole registry.
#: Derandomized, so that a run fails or passes whatever the day; not shrinking, so that a
#: failure (and each case marked xfail below) costs its examples and no search.
FEW = settings(max_examples=5, deadline=None, derandomize=True, phases=(Phase.explicit, Phase.generate),
               report_multiple_bugs=False,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
#: Estimators that take ``kernel='precomputed'`` (their fit matrix is then pairwise) and callables.
USER_KERNELS = sorted(n for n in ALL if takes(n, "kernel")
                      and get_tags(REGISTRY[n](kernel="precomputed")).input_tags.pairwise)
#: Learners whose ``fit`` takes ``sample_weight``.
WEIGHTED = sorted(n for n in ALL if "sample_weight" in inspect.signature(REGISTRY[n].fit).parameters)
#: The kernel machines that fit and predict on Dask arrays.
DASK_MACHINES = ["nystroem_kernel_ridge", "nystroem_kernel_ridge_classifier"]
#: What the ``ValueError`` of each defect must say (a regular expression).
NAMES = {"nan": "(?i)nan", "inf": "(?i)inf", "width": "features"}


@st.composite
def inputs(draw):
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    max_exponent = 150 if dtype == np.float64 else 30
    exponent = draw(st.integers(-max_exponent, max_exponent))
    n_rows = draw(st.integers(1, 50))
    n_features = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**31 - 1))
    X = np.random.default_rng(seed).standard_normal((n_rows, n_features)) * 10.0**exponent
    return X.astype(dtype)


@st.composite
def ordinary(draw, min_rows=12, max_rows=40):
    """Rows every estimator fits: both classes of ``labels``, moderate magnitudes, 2-5 features, more
    rows than the registry's small ``n_components``."""
    dtype = draw(st.sampled_from([np.float64, np.float32]))
    n_rows, n_features = draw(st.integers(min_rows, max_rows)), draw(st.integers(2, 5))
    X = np.random.default_rng(draw(st.integers(0, 2**31 - 1))).standard_normal((n_rows, n_features))
    return (X * 10.0 ** draw(st.integers(-3, 3))).astype(dtype)


@st.composite
def defects(draw):
    """``(X, row, column, value)``: ordinary rows and one entry to spoil with NaN or an infinity."""
    X = draw(ordinary())
    return (X, draw(st.integers(0, X.shape[0] - 1)), draw(st.integers(0, X.shape[1] - 1)),
            draw(st.sampled_from([np.nan, np.inf, -np.inf])))


def labels(n):
    return np.arange(n) % 2


def spoiled(X, row, column, value):
    bad = X.copy()
    bad[row, column] = value
    return bad


def defect_name(value):
    return "nan" if np.isnan(value) else "inf"


# ------------------------------------------------------------------ every estimator
@pytest.mark.parametrize("name", FEATURE_MAPS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(X=inputs())
def test_every_map_returns_finite_features_or_a_clear_error(name, X):
    X = domain(name, X)
    y = np.arange(len(X)) % 2
    est = make(name)
    try:
        fit(est, X, y)
        Z = est.transform(X)
    except (ValueError, OverflowError) as error:
        message = str(error)
        assert len(message) > 20 and any(word in message for word in (
            "overflow", "gamma", "float", "sample", "class", "n_components", "coincide", "features")), message
        return
    assert Z.shape == (len(X), est.n_components_)
    assert Z.dtype == X.dtype
    assert np.isfinite(stored(Z)).all()
    # the maps with sparse output give CSR, every other map a dense array
    assert sp.issparse(Z) == isinstance(est, SparseFeatureMap)
    assert not sp.issparse(Z) or Z.format == "csr"


LEARNERS = sorted(set(ALL) - set(FEATURE_MAPS))


@pytest.mark.parametrize("name", LEARNERS)
@FEW
@given(X=ordinary())
def test_every_learner_predicts_finite_values_of_the_targets_kind(name, X):
    y = labels(len(X))
    est = fit(make(name), X, y)
    assert_predictions(est, output(est, X), len(X), y)


def assert_predictions(est, predicted, n_rows, y):
    predicted = np.asarray(predicted)
    assert predicted.shape == (n_rows,)
    if is_classifier(est):
        assert set(np.unique(predicted)) <= set(np.unique(y))
    else:
        assert predicted.dtype.kind == "f" and np.isfinite(predicted).all()


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("stage", ["fit", "output"])
@FEW
@given(case=defects())
def test_non_finite_input_is_a_clear_error(name, stage, case):
    X, row, column, value = case
    X = domain(name, X)
    bad, y = spoiled(X, row, column, value), labels(len(X))
    est = make(name)
    if stage == "output":
        fit(est, X.astype(np.float64), y)  # float32 fits are the other properties' matter
    with pytest.raises(ValueError, match=NAMES[defect_name(value)]):
        fit(est, bad, y) if stage == "fit" else output(est, bad)


@pytest.mark.parametrize("name", ALL)
@FEW
@given(X=ordinary(), change=st.sampled_from([-1, 1, 3]))
def test_the_wrong_width_is_a_clear_error(name, X, change):
    X = domain(name, X)
    est = fit(make(name), X.astype(np.float64), labels(len(X)))
    wrong = X[:, :change] if change < 0 else np.hstack([X, X[:, :change]])
    with pytest.raises(ValueError, match=NAMES["width"]):
        output(est, wrong)


# ------------------------------------------------------------------ precomputed and callable kernels
def gaussian(A, B):
    return exact_kernel(A, B, kernel="gaussian", gamma=0.3)


def user_kernel_case(name, kind, X):
    """``(estimator, fit input, output input of rows A)``: the Gram matrices for 'precomputed', the rows for a callable."""
    if kind == "precomputed":
        return make(name, kernel="precomputed"), gaussian(X, X), lambda A: gaussian(A, X)
    return make(name, kernel=gaussian), X, lambda A: A


@pytest.mark.parametrize("name", USER_KERNELS)
@pytest.mark.parametrize("kind", ["precomputed", "callable"])
@pytest.mark.filterwarnings("ignore:n_components=")  # Nystroem: fewer rows than landmarks asked for
@FEW
@given(X=inputs())
def test_user_kernels_give_finite_output(name, kind, X):
    est, fit_input, rows = user_kernel_case(name, kind, X)
    y = labels(len(X))
    try:
        fit(est, fit_input, y)
    except ValueError as error:  # one row, or one class
        assert any(word in str(error) for word in ("class", "sample", "landmark")), error
        return
    out = output(est, rows(X))
    if est.kind == "feature_map":
        assert out.shape == (len(X), est.n_components_) and out.dtype == X.dtype
        assert np.isfinite(out).all()
    else:
        assert_predictions(est, out, len(X), y)


@pytest.mark.parametrize("name", USER_KERNELS)
@pytest.mark.parametrize("kind", ["precomputed", "callable"])
@pytest.mark.parametrize("stage", ["fit", "output"])
@pytest.mark.filterwarnings("ignore:n_components=")
@FEW
@given(case=defects())
def test_user_kernels_refuse_non_finite_input(name, kind, stage, case):
    X, row, column, value = case
    est, fit_input, rows = user_kernel_case(name, kind, X)
    y = labels(len(X))
    if stage == "output":
        fit(est, fit_input, y)
        bad = spoiled(rows(X), row, column, value)
    else:
        bad = spoiled(fit_input, row, column, value)
    with pytest.raises(ValueError, match=NAMES[defect_name(value)]):
        fit(est, bad, y) if stage == "fit" else output(est, bad)


@pytest.mark.parametrize("name", USER_KERNELS)
@pytest.mark.parametrize("kind", ["precomputed", "callable"])
@pytest.mark.filterwarnings("ignore:n_components=")
@FEW
@given(X=ordinary())
def test_user_kernels_refuse_the_wrong_width(name, kind, X):
    est, fit_input, rows = user_kernel_case(name, kind, X)
    y = labels(len(X))
    if kind == "precomputed":
        with pytest.raises(ValueError, match="square"):
            fit(est, fit_input[:, :-1], y)
    fit(est, fit_input, y)
    # 'precomputed': K(X, fit rows) with a column short; a callable: rows a feature short
    wrong = fit_input[:, :-1] if kind == "precomputed" else X[:, :-1]
    with pytest.raises(ValueError, match="columns|features"):
        output(est, wrong)


# ------------------------------------------------------------------ sample weights
#: The weighted fits: each learner on rows, and the kernel machines on their precomputed Gram matrix.
WEIGHTED_CASES = [(name, "rows") for name in WEIGHTED] + [(name, "precomputed") for name in WEIGHTED
                                                          if name in USER_KERNELS]
#: Bad weights, what each is for ``n`` rows.
BAD_WEIGHTS = {
    "scalar NaN": lambda n: np.nan,
    "scalar inf": lambda n: np.inf,
    "NaN entry": lambda n: np.r_[np.nan, np.ones(n - 1)],
    "inf entry": lambda n: np.r_[np.ones(n - 1), np.inf],
    "negative entry": lambda n: np.r_[np.ones(n // 2), -0.5, np.ones(n - n // 2 - 1)],
    "too few": lambda n: np.ones(n - 1),
    "too many": lambda n: np.ones(n + 2),
    "two-dimensional": lambda n: np.ones((n, 2)),
}


def weighted_case(name, kind, X):
    """``(estimator, fit input, output input)`` of a weighted fit on ``X``."""
    if kind == "precomputed":
        return make(name, kernel="precomputed"), gaussian(X, X), gaussian(X, X)
    X = domain(name, X)
    return make(name), X, X


@pytest.mark.parametrize("name, kind", WEIGHTED_CASES)
@FEW
@given(X=ordinary(), weights=st.sampled_from(["positive", "some zero", "scalar"]), seed=st.integers(0, 2**16))
def test_weighted_fits_give_finite_output(name, kind, X, weights, seed):
    est, fit_input, out_input = weighted_case(name, kind, X)
    y = labels(len(X))
    w = np.random.default_rng(seed).uniform(0.1, 5.0, len(X))
    if weights == "some zero":
        w[4::5] = 0.0  # every class keeps rows of positive weight
    fit(est, fit_input, y, sample_weight=2.5 if weights == "scalar" else w)
    assert_predictions(est, output(est, out_input), len(X), y)


@pytest.mark.parametrize("name, kind, bad", [(name, kind, bad) for name, kind in WEIGHTED_CASES
                                             for bad in BAD_WEIGHTS])
@FEW
@given(X=ordinary())
def test_bad_weights_are_a_clear_error_naming_sample_weight(name, kind, bad, X):
    est, fit_input, _ = weighted_case(name, kind, X)
    with pytest.raises(ValueError, match="(?i)sample[_ ]weight"):
        fit(est, fit_input, labels(len(X)), sample_weight=BAD_WEIGHTS[bad](len(X)))


# ------------------------------------------------------------------ Dask arrays
#: Fewer examples and iterations: each iteration of a fit is a round trip to the cluster.
FEWER = settings(FEW, max_examples=3)
DASK_ITERATIONS = 15


@st.composite
def chunked(draw):
    """Ordinary rows of at least 30 and their chunk size (several chunks)."""
    X = draw(ordinary(min_rows=30, max_rows=120))
    return X, draw(st.integers(10, 40))


@pytest.mark.parametrize("name", DASK_MACHINES)
@FEWER
@given(case=chunked())
def test_kernel_machines_on_dask_arrays_give_finite_predictions(client, name, case):
    da = pytest.importorskip("dask.array")
    X, chunk = case
    y = labels(len(X))
    est = make(name, max_iter=DASK_ITERATIONS).fit(da.from_array(X, chunks=chunk), da.from_array(y, chunks=chunk))
    predicted = est.predict(da.from_array(X, chunks=chunk))
    assert isinstance(predicted, da.Array)
    assert_predictions(est, predicted.compute(), len(X), y)


@pytest.mark.parametrize("name", DASK_MACHINES)
@pytest.mark.parametrize("stage", ["fit", "output"])
@FEWER
@given(case=chunked(), where=st.floats(0, 1, exclude_max=True), value=st.sampled_from([np.nan, np.inf, -np.inf]))
def test_kernel_machines_on_dask_arrays_refuse_non_finite_rows(client, name, stage, case, where, value):
    da = pytest.importorskip("dask.array")
    X, chunk = case
    y = labels(len(X))
    bad = da.from_array(spoiled(X, int(where * len(X)), 0, value), chunks=chunk)
    if stage == "fit":
        with pytest.raises(ValueError, match=NAMES[defect_name(value)]):
            make(name, max_iter=DASK_ITERATIONS).fit(bad, da.from_array(y, chunks=chunk))
        return
    est = make(name, max_iter=DASK_ITERATIONS).fit(da.from_array(X.astype(np.float64), chunks=chunk), da.from_array(y, chunks=chunk))
    with pytest.raises(ValueError, match=NAMES[defect_name(value)]):
        est.predict(bad).compute()
    with pytest.raises(ValueError, match=NAMES["width"]):
        est.predict(da.from_array(X[:, :-1], chunks=chunk))
