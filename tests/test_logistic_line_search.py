"""The logistic Newton update tries multiples of the step, from the logits of the point and of the step."""

import numpy as np
import pytest

from kernelmaps import NystroemLogisticRegression
from kernelmaps._solvers import logistic_line_search
from kernelmaps._solvers.kernel_operator import KernelOperator
from kernelmaps._solvers.logistic_line_search import LINE_STEPS
from kernelmaps._solvers.logistic_passes import LogisticPasses


def _passes(row_weights=None):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    C = X[:40]
    Y = np.where(rng.standard_normal((300, 3)) + X[:, :3] > 0, 1.0, -1.0)
    K = KernelOperator(X, C, kernel="gaussian", gamma=0.3)
    a0, d = rng.standard_normal((40, 3)), rng.standard_normal((40, 3))
    b0, d_b = rng.standard_normal(3), rng.standard_normal(3)
    return LogisticPasses(K, Y, row_weights), a0, b0, d, d_b


def _objective(point, K_mm, penalty):
    """Per column, the objective at ``point``: its mean loss and ``0.5 penalty a^T K_mm a``."""
    return point.loss + 0.5 * penalty * np.einsum("ij,ij->j", point.a, K_mm @ point.a)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_losses_along_the_step_and_the_move_are_those_of_runs_at_each_multiple(weighted):
    """The loss at each multiple of a step, from the logits of the point and of the step, equals a direct run's
    there, with the rows' weights of a cross-validated fit as without; the move to one multiple per column gives
    the run's point there (gradient, loss, weights) and its logits."""
    weights = np.random.default_rng(1).integers(0, 2, (300, 3)).astype(float)
    passes, a0, b0, d, d_b = _passes((lambda lo, hi: weights[lo:hi]) if weighted else None)
    passes.run(a0, b0)
    passes.along(d, d_b)
    steps = np.array((1.0,) + LINE_STEPS)
    losses = passes.losses(np.repeat(steps[:, None], 3, axis=1))
    for t, loss in zip(steps, losses):
        np.testing.assert_allclose(loss, passes.run(a0 - t * d, b0 - t * d_b).loss, rtol=1e-12)
    passes.run(a0, b0)
    passes.along(d, d_b)
    t = np.array([0.5, 1.0, 2.5])
    moved = passes.move(t)
    logits = passes.logits.copy()
    direct = passes.run(a0 - t * d, b0 - t * d_b)
    np.testing.assert_allclose(moved.a, direct.a, rtol=0, atol=0)
    np.testing.assert_allclose(moved.loss, direct.loss, rtol=1e-12)
    np.testing.assert_allclose(moved.data_gradient, direct.data_gradient, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(moved.weighted_sum, direct.weighted_sum, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(logits, passes.logits, rtol=1e-12, atol=1e-13)


def test_losses_need_a_step():
    passes, a0, b0, _, _ = _passes()
    passes.run(a0, b0)
    with pytest.raises(RuntimeError, match="losses needs a step.*along"):
        passes.losses(np.ones((1, 3)))
    with pytest.raises(RuntimeError, match="move needs a step.*along"):
        passes.move(np.ones(3))
    passes.along(np.zeros((40, 3)), np.zeros(3))
    passes.move(np.ones(3))
    with pytest.raises(RuntimeError, match="move needs a step"):
        passes.move(np.ones(3))             # a move uses up its step


def test_the_update_keeps_the_multiple_with_the_lowest_objective():
    passes, a0, b0, d, d_b = _passes()
    rng = np.random.default_rng(2)
    centres = rng.standard_normal((40, 40))
    K_mm = centres @ centres.T / 40 + np.eye(40)
    penalty = 1e-3
    start = passes.run(a0, b0)
    before = _objective(start, K_mm, penalty)
    # a short direction: the objective keeps falling past one step in some columns
    direction, intercept_direction = 0.2 * d, 0.2 * d_b
    updated, _ = logistic_line_search.damped_update(passes, K_mm, start, before, direction, intercept_direction,
                                                penalty)
    objectives = np.array([_objective(passes.run(a0 - t * direction, b0 - t * intercept_direction),
                                                      K_mm, penalty) for t in (1.0,) + LINE_STEPS])
    best = objectives.min(axis=0)
    reached = _objective(updated, K_mm, penalty)
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
    unit = NystroemLogisticRegression(**params).fit(X, y)
    assert model.n_iter_ < unit.n_iter_
    assert model.gradient_norms_[-1] <= model.tol and unit.gradient_norms_[-1] <= unit.tol
    assert np.mean(model.predict(X) == unit.predict(X)) >= 0.99
