"""Every warning of the library points at the user's line, whatever the depth it is raised at.

Each case below reaches one ``warnings.warn`` of ``algorithms/`` through a
public call, some directly from ``fit``, some through a base class, a solver
wrapper or a Dask route several frames deeper. The warning's ``filename`` must
be this file: the line a user wrote, not a line inside kernelmaps.
"""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernelmaps import (ExactMKLRegressor, FourierKernelRidge, GroupLassoMKLClassifier, KernelRidgeGD,
                        LeastSquaresRegressor, Nystroem, NystroemKernelRidge, RandomFourierFeatures,
                        RandomMaclaurin)
from kernelmaps.datasets import make_planted_groups


def _rows(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.sin(X[:, 0]) + 0.1 * X[:, 1]


def _nystroem_more_landmarks_than_rows():
    Nystroem(n_components=80, gamma=0.5, random_state=0).fit(_rows()[0])


def _nystroem_machine_more_centres_than_rows():
    NystroemKernelRidge(n_components=80, gamma=0.5, random_state=0).fit(*_rows())


def _maclaurin_h01_fallback():
    RandomMaclaurin(2, degree=3, random_state=0).fit(_rows()[0])


def _scale_learning_stops_early():
    FourierKernelRidge(alpha=0.01, max_iter=1, tol=0.0, random_state=0).fit(*_rows(200, 4))


def _gradient_descent_scale_learning_stops_early():
    KernelRidgeGD(alpha=0.01, max_iter=1, tol=0.0, random_state=0).fit(*_rows(200, 4))


def _exact_mkl_stops_early():
    ExactMKLRegressor(gamma=[0.1, 1.0, 5.0], alpha=0.001, max_iter=1, tol=1e-12).fit(*_rows(50))


def _exact_mkl_constant_model():
    ExactMKLRegressor(gamma=[0.1, 1.0], alpha=1e6).fit(*_rows(50))


def _fista_stops_early():
    X, y, groups, _ = make_planted_groups(300, random_state=0)
    GroupLassoMKLClassifier(groups, n_components=16, alpha=1e-3, max_iter=2, random_state=0).fit(X, y)


def _group_lasso_constant_model():
    X, y, groups, _ = make_planted_groups(300, random_state=0)
    GroupLassoMKLClassifier(groups, n_components=16, alpha=1e6, random_state=0).fit(X, y)


def _least_squares_cg_stops_early():
    X, y = _rows(200, 20)
    LeastSquaresRegressor(alpha=1e-8, solver="cg", max_iter=1, tol=1e-12).fit(X, y)


def _dask_transform_rejoins_feature_chunks():
    da = pytest.importorskip("dask.array")
    X = _rows()[0]
    RandomFourierFeatures(n_components=16, random_state=0).fit(X).transform(da.from_array(X, chunks=(20, 1)))


def _dask_learner_rejoins_feature_chunks():
    da = pytest.importorskip("dask.array")
    X, y = _rows()
    LeastSquaresRegressor(alpha=1.0).fit(da.from_array(X, chunks=(20, 1)), y)


CASES = {
    "landmark count (Nystroem)": (_nystroem_more_landmarks_than_rows, UserWarning),
    "landmark count (Nystroem machine base)": (_nystroem_machine_more_centres_than_rows, UserWarning),
    "h01 fallback (RandomMaclaurin._fit)": (_maclaurin_h01_fallback, UserWarning),
    "L-BFGS stop (scale learning base)": (_scale_learning_stops_early, ConvergenceWarning),
    "L-BFGS stop (gradient-descent ridge)": (_gradient_descent_scale_learning_stops_early, ConvergenceWarning),
    "KKT stop (ExactMKL)": (_exact_mkl_stops_early, ConvergenceWarning),
    "constant model (ExactMKL through groups)": (_exact_mkl_constant_model, UserWarning),
    "FISTA stop (group lasso base)": (_fista_stops_early, ConvergenceWarning),
    "constant model (group lasso through groups)": (_group_lasso_constant_model, UserWarning),
    "CG stop (least squares base)": (_least_squares_cg_stops_early, ConvergenceWarning),
    "feature chunks (Dask transform, through the set_output wrapper)": (_dask_transform_rejoins_feature_chunks,
                                                                        UserWarning),
    "feature chunks (Dask one-pass learner)": (_dask_learner_rejoins_feature_chunks, UserWarning),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_warning_points_at_the_callers_line(case):
    call, category = CASES[case]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    raised = [w for w in caught if issubclass(w.category, category)]
    assert raised, f"{case}: no {category.__name__} was raised"
    assert {w.filename for w in raised} == {__file__}, [(w.filename, w.lineno, str(w.message)) for w in raised]
