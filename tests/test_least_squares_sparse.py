"""Least squares on scipy sparse features: the normal equations of sparse blocks and
conjugate gradient on implicitly centred features, against the dense normal equations."""

import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

import kernelmaps._solvers.sparse_ridge as sparse_ridge
import kernelmaps._solvers.normal_equations as normal_equations
from kernelmaps import ECOCClassifier, LeastSquaresClassifier, LeastSquaresRegressor, SparseFeatureMap
from kernelmaps._solvers.normal_equations import NormalEquations
from kernelmaps._core.validation import FeatureOverflowError

#: CG's tolerance in the comparisons with the exact solution, and their tolerance.
CG_TOL, CG_RTOL = 1e-10, 1e-6


def sparse_features(n=300, d=40, density=0.2, seed=0):
    """CSR features in [1, 2) at ``density``: non-zero column means, so that an
    intercept fitted without centring, or centred wrongly, gives other coefficients."""
    rng = np.random.default_rng(seed)
    return sp.random(n, d, density=density, format="csr", random_state=rng,
                     data_rvs=lambda k: 1.0 + rng.random(k))


def regression_targets(Z, n_targets, seed=1):
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((Z.shape[1], max(n_targets, 1)))
    Y = Z @ W + 3.0 + 0.1 * rng.standard_normal((Z.shape[0], W.shape[1]))
    return Y[:, 0] if n_targets == 0 else Y


def class_labels(Z, n_classes, seed=2):
    rng = np.random.default_rng(seed)
    scores = Z @ rng.standard_normal((Z.shape[1], n_classes)) + rng.standard_normal((Z.shape[0], n_classes))
    return np.argmax(scores, axis=1) * 10  # labels that are not their own indices


def cg_params(solver):
    return {"solver": solver, "tol": CG_TOL} if solver == "cg" else {"solver": solver}


def assert_same_fit(ours, reference, rtol):
    atol = rtol * np.abs(reference.coef_).max()
    np.testing.assert_allclose(ours.coef_, reference.coef_, rtol=rtol, atol=atol)
    np.testing.assert_allclose(ours.intercept_, reference.intercept_, rtol=rtol, atol=atol)


# ------------------------------------------------------- the exact solution
@pytest.mark.parametrize("solver", ["normal", "cg"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_targets", [0, 3])  # 0: a 1-D target
@pytest.mark.parametrize("alpha", [0.5, 0.0])
def test_sparse_regressor_equals_the_dense_normal_equations(solver, fit_intercept, n_targets, alpha):
    Z = sparse_features()
    y = regression_targets(Z, n_targets)
    reference = LeastSquaresRegressor(alpha, fit_intercept=fit_intercept, solver="normal").fit(Z.toarray(), y)
    ours = LeastSquaresRegressor(alpha, fit_intercept=fit_intercept, **cg_params(solver)).fit(Z, y)
    assert ours.solver_ == solver
    assert_same_fit(ours, reference, 1e-9 if solver == "normal" else CG_RTOL)
    assert ours.predict(Z).shape == y.shape
    if not fit_intercept:
        assert np.all(ours.intercept_ == 0)


@pytest.mark.parametrize("solver", ["normal", "cg"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_sparse_classifier_equals_the_dense_normal_equations(solver, fit_intercept, n_classes):
    Z = sparse_features(seed=3)
    y = class_labels(Z, n_classes)
    reference = LeastSquaresClassifier(0.3, fit_intercept=fit_intercept, solver="normal").fit(Z.toarray(), y)
    ours = LeastSquaresClassifier(0.3, fit_intercept=fit_intercept, **cg_params(solver)).fit(Z, y)
    assert ours.solver_ == solver
    assert ours.coef_.shape == (Z.shape[1], 1 if n_classes == 2 else n_classes)
    assert_same_fit(ours, reference, 1e-9 if solver == "normal" else CG_RTOL)
    np.testing.assert_array_equal(ours.classes_, reference.classes_)
    np.testing.assert_array_equal(ours.predict(Z), reference.predict(Z.toarray()))


def test_ecoc_codes_go_through_conjugate_gradient_too():
    Z = sparse_features(seed=4)
    y = class_labels(Z, 5)
    reference = ECOCClassifier(code_size=6, random_state=0).fit(Z.toarray(), y)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sparse_ridge, "CG_MIN_FEATURES", 10)  # these 40 columns count as wide
        ours = ECOCClassifier(code_size=6, tol=1e-10, random_state=0).fit(Z, y)
    assert ours.solver_ == "cg"
    np.testing.assert_allclose(ours.coef_, reference.coef_, rtol=1e-4, atol=1e-4 * np.abs(reference.coef_).max())


def test_empty_and_constant_columns_get_no_weight_without_a_penalty():
    """alpha = 0: a column that is zero, or constant (zero once centred), has no
    curvature; the diagonal scaling must not divide by it, and CG leaves it at 0."""
    Z = sparse_features(seed=5)
    y = regression_targets(Z, 0)
    wider = sp.hstack([Z, sp.csr_matrix(np.full((Z.shape[0], 1), 2.5)), sp.csr_matrix((Z.shape[0], 1))]).tocsr()
    reference = LeastSquaresRegressor(0.0, solver="normal").fit(Z.toarray(), y)
    ours = LeastSquaresRegressor(0.0, solver="cg", tol=CG_TOL).fit(wider, y)
    np.testing.assert_allclose(ours.coef_[:-2], reference.coef_, rtol=CG_RTOL, atol=1e-8)
    np.testing.assert_allclose(ours.coef_[-2:], 0.0, atol=1e-8)
    np.testing.assert_allclose(ours.intercept_, reference.intercept_, rtol=CG_RTOL)


def test_rank_deficient_features_without_a_penalty_give_the_least_squares_fit():
    """More columns than rows and alpha = 0: the system is only semi-definite, and CG
    from zero still reaches a least-squares solution (whose fitted values are unique)."""
    Z = sparse_features(n=60, d=150, density=0.1, seed=6)
    y = regression_targets(Z, 0)
    ours = LeastSquaresRegressor(0.0, solver="cg", tol=CG_TOL, max_iter=5000).fit(Z, y)
    A = np.hstack([Z.toarray(), np.ones((Z.shape[0], 1))])
    fitted = A @ np.linalg.lstsq(A, y, rcond=None)[0]
    np.testing.assert_allclose(ours.predict(Z), fitted, rtol=1e-6, atol=1e-6 * np.abs(y).max())


def test_the_diagonal_preconditioner_undoes_the_scale_of_the_columns():
    """Columns scaled over six decades: unpreconditioned CG took 2468 iterations here;
    the Jacobi scaling solves it in as many as the unscaled features need (18)."""
    Z = sparse_features(n=400, d=60, seed=30)
    y = regression_targets(Z, 0)
    badly_scaled = (Z @ sp.diags(10.0 ** np.linspace(-3, 3, Z.shape[1]))).tocsr()
    plain = LeastSquaresRegressor(1e-6, solver="cg", tol=1e-8).fit(Z, y)
    scaled = LeastSquaresRegressor(1e-6, solver="cg", tol=1e-8).fit(badly_scaled, y)
    assert scaled.n_iter_ <= 2 * plain.n_iter_ + 5, (scaled.n_iter_, plain.n_iter_)
    exact = LeastSquaresRegressor(1e-6, solver="normal").fit(badly_scaled, y)
    np.testing.assert_allclose(scaled.predict(badly_scaled), exact.predict(badly_scaled), rtol=1e-6,
                               atol=1e-6 * np.abs(y).max())


# ----------------------------------------------------- the normal equations
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_normal_equations_of_sparse_blocks_equal_the_dense_ones(fmt, monkeypatch):
    Z = sparse_features(n=120, d=15, density=0.3, seed=7)
    T = regression_targets(Z, 2)
    labels = np.random.default_rng(8).integers(0, 3, Z.shape[0])
    code = np.random.default_rng(9).standard_normal((3, 4))
    # small product blocks, so that the sparse accumulation takes several
    monkeypatch.setattr(normal_equations, "SPARSE_BLOCK_PRODUCTS", 50)
    for kwargs, n_targets in (({"T": T}, 2), ({"labels": labels, "code": code}, 4)):
        dense, sparse = NormalEquations(15, n_targets), NormalEquations(15, n_targets)
        dense.add(Z.toarray(), **kwargs)
        sparse.add(Z.asformat(fmt), **kwargs)
        for moment in ("gram", "cross", "feature_sum", "target_sum"):
            np.testing.assert_allclose(getattr(sparse, moment), getattr(dense, moment), rtol=1e-12, atol=1e-12)
        assert sparse.n_samples == dense.n_samples
        assert sparse.largest_feature == dense.largest_feature


def test_partial_fit_accumulates_sparse_blocks():
    Z = sparse_features(seed=10)
    y = class_labels(Z, 3)
    full = LeastSquaresClassifier(0.5).fit(Z.toarray(), y)
    parts = LeastSquaresClassifier(0.5)
    for rows in np.array_split(np.arange(Z.shape[0]), 3):
        parts.partial_fit(Z[rows], y[rows], classes=np.unique(y))
    assert parts.solver_ == "normal" and parts.n_iter_ == 1
    assert_same_fit(parts, full, 1e-9)


# --------------------------------------------------------- choosing a solver
def test_auto_picks_the_normal_equations_unless_sparse_and_wide():
    y = np.arange(30.0)
    narrow = sparse_features(n=30, d=50, seed=11)
    wide = sparse_features(n=30, d=sparse_ridge.CG_MIN_FEATURES + 1, density=0.002, seed=12)
    assert LeastSquaresRegressor().fit(narrow.toarray(), y).solver_ == "normal"
    assert LeastSquaresRegressor().fit(narrow, y).solver_ == "normal"
    assert sparse_ridge.select_solver("auto", 4096, True) == "normal"
    assert sparse_ridge.select_solver("auto", 4097, True) == "cg"
    assert sparse_ridge.select_solver("auto", 4097, False) == "normal"
    fitted = LeastSquaresRegressor().fit(wide, y)
    assert fitted.solver_ == "cg" and fitted.n_iter_ >= 1
    assert not hasattr(fitted, "normal_equations_")
    assert LeastSquaresRegressor(solver="normal").fit(wide, y).solver_ == "normal"
    assert LeastSquaresRegressor(solver="cg").fit(narrow.toarray(), y).solver_ == "cg"


def test_auto_picks_conjugate_gradient_when_the_normal_equations_do_not_fit(monkeypatch):
    Z = np.random.default_rng(14).standard_normal((40, 30))
    y = Z @ np.arange(30.0)
    assert sparse_ridge.select_solver("auto", 30, False) == "normal"
    # room for one 30 x 30 float64 matrix, not two
    room = 8 * 30 * 30 * 1.5 / sparse_ridge.MEMORY_FRACTION
    monkeypatch.setattr(sparse_ridge, "available_memory_bytes", lambda: room)
    assert sparse_ridge.select_solver("auto", 30, False) == "cg"
    assert sparse_ridge.select_solver("normal", 30, False) == "normal"
    assert LeastSquaresRegressor(alpha=1e-3).fit(Z, y).solver_ == "cg"


def test_wide_sparse_features_never_form_the_gram_matrix():
    """Random-binning shape: 2000 rows, 200000 columns, 20 non-zeros a row. Z^T Z
    would take 320 GB; CG needs a few vectors of the width."""
    rng = np.random.default_rng(15)
    n, d, per_row = 2000, 200_000, 20
    columns = np.concatenate([rng.choice(d, per_row, replace=False) for _ in range(n)])
    Z = sp.csr_matrix((np.full(n * per_row, 1 / np.sqrt(per_row)), columns, np.arange(0, n * per_row + 1, per_row)),
                      shape=(n, d))
    y = Z @ rng.standard_normal(d) + 1.0 + 0.1 * rng.standard_normal(n)
    alpha = 0.1
    tracemalloc.start()
    try:
        reg = LeastSquaresRegressor(alpha, tol=1e-8).fit(Z, y)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reg.solver_ == "cg" and reg.coef_.shape == (d, 1)
    assert peak < 64 * 2**20, f"fit peaked at {peak / 2**20:.0f} MiB"
    # the normal equations' residual, by sparse products: Z^T (Z w + b - y) + alpha w
    w = reg.coef_[:, 0]
    residual = Z.T @ (Z @ w + reg.intercept_[0] - y) + alpha * w
    assert np.linalg.norm(residual) < 1e-4 * np.linalg.norm(Z.T @ (y - y.mean()))
    np.testing.assert_allclose(reg.predict(Z[:5]), Z[:5] @ w + reg.intercept_[0], rtol=1e-12)


# --------------------------------------------------------- inputs and dtypes
@pytest.mark.parametrize("solver", ["normal", "cg"])
def test_float32_sparse_input(solver):
    Z = sparse_features(seed=16)
    y = class_labels(Z, 3)
    reference = LeastSquaresClassifier(0.5, **cg_params(solver)).fit(Z, y)
    ours = LeastSquaresClassifier(0.5, **cg_params(solver)).fit(Z.astype(np.float32), y)
    assert ours.coef_.dtype == np.float64
    assert_same_fit(ours, reference, 1e-5)
    scores = ours.decision_function(Z.astype(np.float32))
    assert scores.dtype == np.float32
    np.testing.assert_allclose(scores, ours.decision_function(Z.astype(np.float32).toarray()), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_predictions_on_sparse_rows_equal_those_on_their_dense_copy(fmt):
    Z = sparse_features(seed=17)
    y, labels = regression_targets(Z, 2), class_labels(Z, 4)
    reg = LeastSquaresRegressor(0.5).fit(Z, y)
    clf = LeastSquaresClassifier(0.5).fit(Z, labels)
    test = sparse_features(n=50, seed=18)
    np.testing.assert_allclose(reg.predict(test.asformat(fmt)), reg.predict(test.toarray()), rtol=1e-12)
    np.testing.assert_allclose(clf.decision_function(test.asformat(fmt)), clf.decision_function(test.toarray()),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(test.asformat(fmt)), clf.predict(test.toarray()))
    assert clf.score(test.asformat(fmt), labels[:50]) == clf.score(test.toarray(), labels[:50])


class _OneHotGridMap(SparseFeatureMap):
    """Each input feature's bin on a fixed grid of ``bins`` over [-3, 3], one-hot."""

    def __init__(self, bins=10):
        self.bins = bins

    def _validate_params_common(self):
        self.n_components_ = self.n_features_in_ * self.bins

    def _fit(self, X, rng):
        pass

    def _nnz_per_row(self, n_features):
        return n_features

    def _transform_block(self, X, indices, data, context):
        cells = np.clip(np.floor((X + 3) / 6 * self.bins), 0, self.bins - 1).astype(indices.dtype)
        indices[:] = cells + self.bins * np.arange(X.shape[1])
        data[:] = 1.0


def test_a_sparse_feature_map_is_mapped_once_for_conjugate_gradient():
    X = np.random.default_rng(19).standard_normal((400, 5))
    y = np.sin(X).sum(axis=1)
    grid = _OneHotGridMap(bins=1000).fit(X)  # 5000 columns: wide
    ours = LeastSquaresRegressor(0.1).fit(X, y, feature_map=grid)
    assert ours.solver_ == "cg" and ours.n_features_in_ == 5000
    np.testing.assert_array_equal(ours.coef_, LeastSquaresRegressor(0.1).fit(grid.transform(X), y).coef_)
    narrow = _OneHotGridMap(bins=20).fit(X)
    normal = LeastSquaresRegressor(0.1, solver="normal").fit(X, y, feature_map=narrow)
    cg = LeastSquaresRegressor(0.1, solver="cg", tol=CG_TOL).fit(X, y, feature_map=narrow)
    assert_same_fit(cg, normal, CG_RTOL)
    np.testing.assert_allclose(normal.predict(narrow.transform(X)), cg.predict(narrow.transform(X)), rtol=1e-6)


# ------------------------------------------------ what only one pass can do
def test_partial_fit_merge_and_dask_refuse_conjugate_gradient():
    Z = sparse_features(seed=20)
    y = class_labels(Z, 3)
    with pytest.raises(ValueError, match="partial_fit .*solver='cg'"):
        LeastSquaresClassifier(solver="cg").partial_fit(Z, y, classes=np.unique(y))
    with pytest.raises(ValueError, match="partial_fit .*solver='cg'"):
        LeastSquaresRegressor(solver="cg").partial_fit(Z, y.astype(float))
    by_cg = LeastSquaresClassifier(solver="cg").fit(Z, y)
    one_pass = LeastSquaresClassifier(solver="normal").fit(Z, y)
    by_cg.solver = "auto"  # a fit by CG keeps no normal equations to continue
    with pytest.raises(ValueError, match=r"partial_fit continues .*solver_='cg'"):
        by_cg.partial_fit(Z, y)
    with pytest.raises(ValueError, match=r"merge continues .*solver_='cg'"):
        one_pass.merge(by_cg)
    with pytest.raises(ValueError, match="merge .*solver='cg'"):
        LeastSquaresClassifier(solver="cg").fit(Z, y).merge(one_pass)
    da = pytest.importorskip("dask.array")
    with pytest.raises(ValueError, match="Dask input .*solver='cg'"):
        LeastSquaresRegressor(solver="cg").fit(da.from_array(Z.toarray()), da.from_array(y.astype(float)))


@pytest.mark.parametrize("params, message", [
    ({"solver": "lsqr"}, "solver must be one of .* got 'lsqr'"),
    ({"solver": None}, "solver must be one of .* got None"),
    ({"tol": 0.0}, r"tol must be finite and > 0, got 0\.0"),
    ({"tol": -1e-3}, r"tol must be finite and > 0, got -0\.001"),
    ({"tol": np.inf}, "tol must be finite and > 0, got inf"),
    ({"tol": np.nan}, "tol must be finite and > 0, got nan"),
    ({"max_iter": 0}, "max_iter must be >= 1, got 0"),
    ({"max_iter": 2.5}, "max_iter must be an integer, got 2.5"),
])
@pytest.mark.parametrize("cls", [LeastSquaresRegressor, LeastSquaresClassifier])
def test_invalid_solver_parameters_are_named(cls, params, message):
    Z = sparse_features(n=40, seed=21)
    y = class_labels(Z, 2)
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(Z, y)
    with pytest.raises(ValueError, match=message):
        cls(**params).fit(Z.toarray(), y)  # refused on the normal equations' path too


def test_too_few_iterations_warn_with_the_residual_and_keep_the_result():
    Z = sparse_features(seed=22)
    y = regression_targets(Z, 2)
    with pytest.warns(ConvergenceWarning, match=r"max_iter=2\b.*reached [0-9.e+-]+ against tol=1e-10") as record:
        short = LeastSquaresRegressor(1e-3, solver="cg", tol=1e-10, max_iter=2).fit(Z, y)
    assert {w.filename for w in record if issubclass(w.category, ConvergenceWarning)} == {__file__}
    assert short.n_iter_ == 2 and short.coef_.shape == (Z.shape[1], 2)
    exact = LeastSquaresRegressor(1e-3, solver="normal").fit(Z, y)
    assert 0 < np.abs(short.coef_ - exact.coef_).max()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        converged = LeastSquaresRegressor(1e-3, solver="cg", tol=1e-10).fit(Z, y)
    assert 2 < converged.n_iter_ <= 1000


# ------------------------------------------------------ scikit-learn's API
@pytest.mark.parametrize("cls", [LeastSquaresRegressor, LeastSquaresClassifier])
def test_new_parameters_in_get_params_and_clone(cls):
    est = cls(alpha=0.2, solver="cg", tol=1e-8, max_iter=50)
    params = est.get_params()
    assert {key: params[key] for key in ("solver", "tol", "max_iter")} == {"solver": "cg", "tol": 1e-8, "max_iter": 50}
    assert cls().get_params()["solver"] == "auto"
    assert cls().get_params()["tol"] == 1e-4 and cls().get_params()["max_iter"] == 1000
    copy = clone(est)
    assert copy is not est and copy.get_params() == params
    assert clone(est.set_params(solver="normal")).solver == "normal"


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_more_columns_than_rows_solve_the_dual_system_to_the_same_ridge(fit_intercept, n_classes, monkeypatch):
    """With fewer rows than columns CG runs on (Z_c Z_c^T + alpha I) A = T_c, W = Z_c^T A:
    the ridge solution of the normal equations, for classes and regression targets."""
    Z = sparse_features(n=60, d=250, density=0.1, seed=21)
    dual_calls = []
    original = sparse_ridge._dual_ridge_cg
    monkeypatch.setattr(sparse_ridge, "_dual_ridge_cg", lambda *a: dual_calls.append(1) or original(*a))
    y = class_labels(Z, n_classes)
    reference = LeastSquaresClassifier(0.5, fit_intercept=fit_intercept, solver="normal").fit(Z.toarray(), y)
    ours = LeastSquaresClassifier(0.5, fit_intercept=fit_intercept, solver="cg", tol=CG_TOL).fit(Z, y)
    assert_same_fit(ours, reference, CG_RTOL)
    Y = regression_targets(Z, 2)
    reference = LeastSquaresRegressor(0.5, fit_intercept=fit_intercept, solver="normal").fit(Z.toarray(), Y)
    assert_same_fit(LeastSquaresRegressor(0.5, fit_intercept=fit_intercept, solver="cg", tol=CG_TOL).fit(Z, Y),
                    reference, CG_RTOL)
    assert len(dual_calls) == 2


# ------------------------------------------------- singular normal equations, overflow
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("alpha, weight", [(0.0, 1.0), (1.0, 1e300)])  # 1e300: alpha is below rounding
def test_singular_normal_equations_give_the_minimum_norm_solution_with_a_warning(fit_intercept, alpha, weight,
                                                                                 monkeypatch):
    """More columns than rows: the Cholesky factorization fails and the pivoted one
    gives the minimum-norm least-squares solution in O(D^2 rank), not a dense
    least-squares solve of the D x D system (minutes at D = 6000)."""
    import scipy.linalg
    from scipy.linalg import LinAlgWarning

    def dense_solve(*args, **kwargs):
        raise AssertionError("the singular system went to a dense least-squares solver")

    monkeypatch.setattr(scipy.linalg, "lstsq", dense_solve)
    Z = sparse_features(n=60, d=1500, density=0.05, seed=7)
    y = regression_targets(Z, 0)
    rank = 59 if fit_intercept else 60
    with pytest.warns(LinAlgWarning, match=f"numerical rank {rank}, alpha={alpha:g}.*minimum-norm") as caught:
        ours = LeastSquaresRegressor(alpha, fit_intercept=fit_intercept, solver="normal").fit(
            Z, y, sample_weight=None if weight == 1.0 else np.full(Z.shape[0], weight))
    assert caught[0].filename == __file__
    A, t = Z.toarray(), y
    if fit_intercept:
        A, t = A - A.mean(axis=0), y - y.mean()
    minimum_norm = np.linalg.pinv(A) @ t
    np.testing.assert_allclose(ours.coef_.ravel(), minimum_norm, rtol=0, atol=1e-9 * np.abs(minimum_norm).max())


@pytest.mark.parametrize("cls", [LeastSquaresRegressor, LeastSquaresClassifier])
@pytest.mark.parametrize("shape, alpha", [((80, 40), 1.0), ((40, 80), 1.0), ((80, 40), 0.0)])  # primal, dual
@pytest.mark.parametrize("weighted", [False, True])
def test_conjugate_gradient_names_the_overflow_of_the_squared_features(cls, shape, alpha, weighted):
    Z = sparse_features(*shape, seed=8) * 1e300
    y = class_labels(Z, 2) if cls is LeastSquaresClassifier else regression_targets(Z / 1e300, 0)
    weights = "weighted by sample weights up to 3" if weighted else r"square past the largest float"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning before the error
        with pytest.raises(FeatureOverflowError, match=f"magnitude up to .*e\\+300.*{weights}.*Rescale the features"):
            cls(alpha, solver="cg").fit(Z, y, sample_weight=np.full(shape[0], 3.0) if weighted else None)
