"""The logistic Newton update tries multiples of the step, from the losses its run at one step sums."""

import numpy as np
import pytest

from kernelmaps import NystroemLogisticRegression
from kernelmaps._solvers import logistic_line_search, logistic_passes
from kernelmaps._solvers.kernel_operator import KernelOperator
from kernelmaps._solvers.logistic_passes import LINE_STEPS, LogisticPasses


def _passes(row_weights=None):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    C = X[:40]
    Y = np.where(rng.standard_normal((300, 3)) + X[:, :3] > 0, 1.0, -1.0)
    K = KernelOperator(X, C, kernel="gaussian", gamma=0.3)
    a0, d = rng.standard_normal((40, 3)), rng.standard_normal((40, 3))
    b0, d_b = rng.standard_normal(3), rng.standard_normal(3)
    return LogisticPasses(K, Y, row_weights), a0, b0, d, d_b


@pytest.mark.parametrize("weighted", [False, True])
def test_the_losses_along_the_step_are_those_of_runs_at_each_multiple(weighted):
    """Each loss a run sums along the step from ``start`` equals a direct run's at that multiple, with the
    rows' weights of a cross-validated fit as without."""
    weights = np.random.default_rng(1).integers(0, 2, (300, 3)).astype(float)
    passes, a0, b0, d, d_b = _passes((lambda lo, hi: weights[lo:hi]) if weighted else None)
    along = passes.run(a0 - d, b0 - d_b, start=(a0, b0))
    direct = passes.run(a0 - d, b0 - d_b)
    assert direct.line_loss is None
    np.testing.assert_allclose(along.loss, direct.loss, rtol=1e-13)
    np.testing.assert_allclose(along.data_gradient, direct.data_gradient, rtol=1e-12, atol=1e-15)
    assert along.line_loss.shape == (len(LINE_STEPS), 3)
    for t, loss in zip(LINE_STEPS, along.line_loss):
        np.testing.assert_allclose(loss, passes.run(a0 - t * d, b0 - t * d_b).loss, rtol=1e-10)


def test_the_update_keeps_the_multiple_with_the_lowest_objective():
    passes, a0, b0, d, d_b = _passes()
    rng = np.random.default_rng(2)
    centres = rng.standard_normal((40, 40))
    K_mm = centres @ centres.T / 40 + np.eye(40)
    penalty = 1e-3
    start = passes.run(a0, b0)
    before = logistic_line_search.objective(start, K_mm, penalty)
    # a short direction: the objective keeps falling past one step in some columns
    direction, intercept_direction = 0.2 * d, 0.2 * d_b
    updated, _ = logistic_line_search.damped_update(passes, K_mm, start, before, direction, intercept_direction,
                                                penalty)
    objectives = np.array([logistic_line_search.objective(passes.run(a0 - t * direction, b0 - t * intercept_direction),
                                                      K_mm, penalty) for t in (1.0,) + LINE_STEPS])
    best = objectives.min(axis=0)
    reached = logistic_line_search.objective(updated, K_mm, penalty)
    np.testing.assert_allclose(reached, np.minimum(best, before), rtol=1e-10)


def test_a_nearly_separable_fit_takes_fewer_newton_steps(monkeypatch):
    """On well-separated classes the loss is nearly exponential in the margin, where a Newton step covers a fixed
    distance: trying longer steps leaves fewer Newton steps than steps of one, both to the gradient tolerance."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((900, 2))
    y = np.digitize(X[:, 0] + X[:, 1], [-1, 0, 1])
    params = dict(n_components=100, alpha=1e-4, gamma=1.0, random_state=0)
    model = NystroemLogisticRegression(**params).fit(X, y)
    # steps of one: the only other multiple tried is 1 again
    monkeypatch.setattr(logistic_line_search, "LINE_STEPS", (1.0,))
    monkeypatch.setattr(logistic_passes, "LINE_STEPS", (1.0,))
    unit = NystroemLogisticRegression(**params).fit(X, y)
    assert model.n_iter_ < unit.n_iter_
    assert model.gradient_norms_[-1] <= model.tol and unit.gradient_norms_[-1] <= unit.tol
    assert np.mean(model.predict(X) == unit.predict(X)) >= 0.99
