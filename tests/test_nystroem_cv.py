"""NystroemKernelRidgeCV and NystroemKernelRidgeClassifierCV: the (gamma, alpha) grid from one
pass, equal to GridSearchCV over the plain machines on the same centres and folds."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, StratifiedKFold

import kernelmaps._core.validation as validation
from kernelmaps import (NystroemKernelRidge, NystroemKernelRidgeClassifier, NystroemKernelRidgeClassifierCV,
                        NystroemKernelRidgeCV, NystroemLogisticRegressionCV, exact_kernel, resolve_gamma)
from kernelmaps._core.validation import InsufficientMemoryError
from kernelmaps._kernels.blocks import BandwidthBlocks

ALPHAS = [1e-3, 1e-2, 0.1, 1.0, 10.0]
GAMMAS = [0.05, 0.3, 1.5]
#: The plain machine's conjugate gradient, converged far below the scores' tolerance.
CONVERGED = {"tol": 1e-11, "max_iter": 500}


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.3 * rng.standard_normal(150)
    labels = np.argmax(X + 0.7 * rng.standard_normal((150, 3)), axis=1)
    centres = X[rng.choice(150, 20, replace=False)] + 0.01
    return X, y, labels, centres


def grid_search(plain, centres, X, y, cv, scoring=None):
    model = plain(n_components=len(centres), landmarks=centres, **CONVERGED)
    return GridSearchCV(model, {"alpha": ALPHAS, "gamma": GAMMAS}, cv=cv, scoring=scoring).fit(X, y)


def assert_same_search(ours, search, n_splits, atol=1e-6):
    theirs = search.cv_results_
    assert ours.cv_results_["params"] == theirs["params"]
    np.testing.assert_array_equal(ours.cv_results_["param_alpha"], np.asarray(theirs["param_alpha"], float))
    np.testing.assert_array_equal(ours.cv_results_["param_gamma"], np.asarray(theirs["param_gamma"], float))
    for key in [f"split{k}_test_score" for k in range(n_splits)] + ["mean_test_score", "std_test_score"]:
        np.testing.assert_allclose(ours.cv_results_[key], theirs[key], rtol=0, atol=atol, err_msg=key)
    assert ours.best_index_ == search.best_index_
    assert (ours.alpha_, ours.gamma_) == (search.best_params_["alpha"], search.best_params_["gamma"])
    assert ours.best_score_ == pytest.approx(search.best_score_, abs=atol)


@pytest.mark.parametrize("scoring", [None, "neg_mean_squared_error", "neg_mean_absolute_error"])
def test_regressor_scores_every_point_as_grid_search_does(problem, scoring):
    X, y, _, centres = problem
    cv = KFold(4, shuffle=True, random_state=1)
    ours = NystroemKernelRidgeCV(len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres, cv=cv,
                                 scoring=scoring).fit(X, y)
    assert_same_search(ours, grid_search(NystroemKernelRidge, centres, X, y, cv, scoring), 4)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_scores_every_point_as_grid_search_does(problem, n_classes):
    X, _, labels, centres = problem
    labels = labels % n_classes
    cv = StratifiedKFold(3, shuffle=True, random_state=2)
    ours = NystroemKernelRidgeClassifierCV(len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres,
                                           cv=cv).fit(X, labels)
    # accuracies are multiples of 1/50: equal, not close
    assert_same_search(ours, grid_search(NystroemKernelRidgeClassifier, centres, X, labels, cv), 3, atol=1e-12)
    np.testing.assert_array_equal(ours.classes_, np.arange(n_classes))


def test_evidence_scores_every_point_by_the_plain_machines_dtc_likelihood(problem):
    """scoring='evidence': each point's score is NystroemKernelRidge(variance='dtc', amplitude='dtc')'s
    dtc_log_marginal_likelihood_ on all rows, on the same centres; the best is its maximum."""
    X, y, _, centres = problem
    ours = NystroemKernelRidgeCV(len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres,
                                 scoring="evidence").fit(X, y)
    theirs = [NystroemKernelRidge(len(centres), landmarks=centres, variance="dtc", amplitude="dtc", **params,
                                  **CONVERGED).fit(X, y) for params in ours.cv_results_["params"]]
    np.testing.assert_allclose(ours.cv_results_["mean_test_score"],
                               [model.dtc_log_marginal_likelihood_ for model in theirs], rtol=1e-9)
    best = int(np.argmax([model.dtc_log_marginal_likelihood_ for model in theirs]))
    assert (ours.alpha_, ours.gamma_) == (theirs[best].alpha, theirs[best].gamma)
    assert "split1_test_score" not in ours.cv_results_
    with pytest.raises(ValueError, match="evidence.*leave cv=None"):
        NystroemKernelRidgeCV(10, scoring="evidence", cv=3).fit(X, y)
    with pytest.raises(ValueError, match="regressor"):
        NystroemKernelRidgeClassifierCV(10, scoring="evidence").fit(X, np.sign(y))


def test_kept_blocks_give_the_scores_of_recomputed_ones(problem):
    X, _, labels, centres = problem
    params = dict(n_components=len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres, cv=3)
    kept = NystroemKernelRidgeClassifierCV(kernel_cache=1e9, **params).fit(X, labels)
    recomputed = NystroemKernelRidgeClassifierCV(kernel_cache=None, **params).fit(X, labels)
    auto = NystroemKernelRidgeClassifierCV(**params).fit(X, labels)
    assert kept.kernel_cache_ == len(GAMMAS) * X.size // 3 * len(centres) * 8 and recomputed.kernel_cache_ == 0
    # 'auto' evaluates the blocks again in the second pass (cheaper than keeping them); its refit may keep its own
    assert auto.kernel_cache_ == 0 and auto.best_estimator_.kernel_cache_ > 0
    for other in (recomputed, auto):
        np.testing.assert_array_equal(kept.cv_results_["mean_test_score"], other.cv_results_["mean_test_score"])


@pytest.mark.parametrize("target", ["y", "two classes", "three classes"])
def test_the_refit_is_the_plain_machine_at_the_chosen_point_started_at_its_solution(problem, target):
    X, y, labels, centres = problem
    cv_class, plain_class = ((NystroemKernelRidgeCV, NystroemKernelRidge) if target == "y"
                             else (NystroemKernelRidgeClassifierCV, NystroemKernelRidgeClassifier))
    y = {"y": y, "two classes": labels > 0, "three classes": labels}[target]
    ours = cv_class(len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres).fit(X, y)
    model = ours.best_estimator_
    assert type(model) is plain_class and (model.alpha, model.gamma) == (ours.alpha_, ours.gamma_)
    # the search's direct solution of the same system meets CG's tolerance at once: the same
    # jitter, the same scaling of alpha, the same target columns
    assert model.n_iter_ == 0 and model.residuals_[0] < 1e-9
    plain = plain_class(len(centres), alpha=ours.alpha_, gamma=ours.gamma_, landmarks=centres, **CONVERGED)
    plain.fit(X, y)
    assert plain.n_iter_ > 2
    np.testing.assert_allclose(model.coef_, plain.coef_, rtol=1e-7, atol=1e-9 * np.abs(plain.coef_).max())
    np.testing.assert_array_equal(ours.predict(X), model.predict(X))
    # a later fit of the refitted machine starts from zero, as any plain fit
    assert clone(model).fit(X, y).n_iter_ > 2 and model.fit(X, y).n_iter_ > 2
    # cv=None is five folds
    assert [key for key in ours.cv_results_ if key.startswith("split")] == [f"split{k}_test_score"
                                                                            for k in range(5)]


def test_refit_false_fits_no_model_and_says_so(problem):
    X, y, _, centres = problem
    ours = NystroemKernelRidgeCV(len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres,
                                 refit=False).fit(X, y)
    assert not hasattr(ours, "best_estimator_") and ours.alpha_ in ALPHAS
    with pytest.raises(NotFittedError, match="refit=False"):
        ours.predict(X)


def test_validation_fraction_holds_out_one_split(problem):
    X, y, _, centres = problem
    ours = NystroemKernelRidgeCV(len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres,
                                 validation_fraction=0.3, random_state=0).fit(X, y)
    assert "split0_test_score" in ours.cv_results_ and "split1_test_score" not in ours.cv_results_
    # the held-out rows are those of the plain machines' early stopping with the same seed
    held_out = validation.validation_rows(150, 0.3, None, np.random.RandomState(0).randint(2**31 - 1), "")[1]
    train = np.setdiff1d(np.arange(150), held_out)
    search = grid_search(NystroemKernelRidge, centres, X, y, [(train, held_out)])
    assert_same_search(ours, search, 1)


def test_auto_gammas_are_multiples_of_the_scale_heuristic(problem):
    X, y, _, _ = problem
    ours = NystroemKernelRidgeCV(20, alphas=[0.1, 1.0], random_state=0).fit(X, y)
    scale = resolve_gamma("scale", X, "gaussian", None)
    np.testing.assert_allclose(ours.gammas_, scale * np.array([1 / 16, 1 / 4, 1, 4, 16]), rtol=1e-12)
    assert len(ours.cv_results_["params"]) == 10 and ours.components_.shape == (20, 3)


@pytest.mark.parametrize("kernel, params", [("gaussian", {}), ("laplacian", {}), ("matern", {"nu": 2.5}),
                                            ("matern", {"nu": 1.2}), ("polynomial", {"degree": 3})])
def test_bandwidth_blocks_are_each_bandwidths_kernel(kernel, params):
    rng = np.random.default_rng(3)
    X, C = rng.standard_normal((40, 4)) + 5.0, rng.standard_normal((7, 4)) + 5.0
    nu = params.get("nu", 1.5)
    blocks = BandwidthBlocks(C, kernel, GAMMAS, degree=params.get("degree", 2), nu=nu)
    out = blocks.fill(X, np.empty((len(GAMMAS), 40, 7)))
    for gamma, block in zip(GAMMAS, out):
        expected = exact_kernel(X, C, kernel=kernel, gamma=gamma, **params)
        np.testing.assert_allclose(block, expected, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("params, message", [
    ({"alphas": []}, "alphas is empty"),
    ({"alphas": [1.0, -1.0]}, "alphas must be finite and > 0"),
    ({"alphas": 1.0}, "1-D"),
    ({"gammas": [0.0, 1.0]}, "gammas must be finite and > 0"),
    ({"gammas": "scale"}, "gammas must be a 1-D"),
    ({"scoring": "no_such_score"}, "no_such_score"),
    ({"cv": 3, "validation_fraction": 0.2}, "cv or validation_fraction, not both"),
    ({"validation_fraction": 1.5}, "validation_fraction"),
    ({"refit": "yes"}, "refit must be True or False"),
    ({"cv": 1}, "cv=1"),
    ({"kernel": "nope"}, "nope"),
])
def test_bad_parameters_are_refused_by_name(problem, params, message):
    X, y, _, _ = problem
    with pytest.raises(ValueError, match=message):
        NystroemKernelRidgeCV(10, **params).fit(X, y)


def test_non_finite_rows_are_refused(problem):
    X, y, labels, _ = problem
    X = X.copy()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        NystroemKernelRidgeCV(10, alphas=ALPHAS).fit(X, y)
    with pytest.raises(ValueError, match="NaN"):
        NystroemKernelRidgeClassifierCV(10, alphas=ALPHAS).fit(X, labels)


def test_a_grid_that_cannot_fit_in_memory_is_refused_before_any_centre(problem, monkeypatch):
    X, y, _, _ = problem
    monkeypatch.setattr(validation, "available_memory_bytes", lambda: 1e6)
    model = NystroemKernelRidgeCV(100, alphas=ALPHAS, gammas=GAMMAS)
    with pytest.raises(InsufficientMemoryError, match=r"n_components=100 .*3 gammas x 5 folds"):
        model.fit(X, y)
    assert not hasattr(model, "components_")


def test_dask_input_is_refused_with_what_to_do(problem):
    da = pytest.importorskip("dask.array")
    X, y, _, _ = problem
    with pytest.raises(TypeError, match="compute them"):
        NystroemKernelRidgeCV(10).fit(da.from_array(X, chunks=50), y)


def test_clone_and_get_params_follow_scikit_learn(problem):
    model = NystroemKernelRidgeClassifierCV(10, alphas=ALPHAS, gammas=GAMMAS, cv=3, verbose=False)
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    assert copy.set_params(cv=4).cv == 4 and model.cv == 3


def test_a_factorization_per_alpha_and_one_eigendecomposition_give_the_same_scores(problem, monkeypatch):
    from kernelmaps._machines import nystroem_grid

    X, y, _, centres = problem
    params = dict(n_components=len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres, cv=3)
    scores = {}
    for ratio in (0, 100):  # every grid through the eigendecomposition, then through factorizations
        monkeypatch.setattr(nystroem_grid, "EIGEN_CHOLESKY_RATIO", ratio)
        scores[ratio] = NystroemKernelRidgeCV(**params).fit(X, y).cv_results_["mean_test_score"]
    np.testing.assert_allclose(scores[0], scores[100], rtol=0, atol=1e-9)


@pytest.mark.parametrize("cls", [NystroemKernelRidgeCV, NystroemKernelRidgeClassifierCV, NystroemLogisticRegressionCV])
def test_verbose_shows_one_bar_that_reaches_its_total(problem, monkeypatch, cls):
    import tqdm.auto

    X, y, labels, centres = problem
    bars = []

    class Recording(tqdm.auto.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.shown = not kwargs.get("disable", False)
            bars.append(self)

    monkeypatch.setattr(tqdm.auto, "tqdm", Recording)
    model = cls(len(centres), alphas=ALPHAS, gammas=GAMMAS, landmarks=centres, cv=3, verbose=True)
    model.fit(X, y if cls is NystroemKernelRidgeCV else labels)
    shown = [bar for bar in bars if bar.shown]  # the refit's own bar stays hidden
    assert len(shown) == 1 and "search" in shown[0].desc
    assert shown[0].n == shown[0].total > 3 * len(GAMMAS)
