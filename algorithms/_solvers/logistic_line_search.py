"""The update of a Nyström logistic Newton step: the multiple of the step each column takes.

A run along the step (:meth:`kernelmaps._solvers.logistic_passes.LogisticPasses.run` with ``start``)
sums the loss at :data:`~kernelmaps._solvers.logistic_passes.LINE_STEPS` multiples of it besides the step
itself; :func:`damped_update` keeps, per column, the multiple with the lowest objective, and halves a step
that raises it.
"""

import numpy as np

from .logistic_passes import LINE_STEPS

#: Halvings of a step that raised the objective before giving up on the column.
MAX_HALVINGS = 20
#: A multiple of Newton's step other than 1 costs a second pass: a column takes it where it lowers the
#: objective by at least this fraction of Newton's own decrease more. Newton steps / CG iterations (with CG
#: tolerances of min(0.1, relative gradient), before they were loosened per column) on the Zen 4 (letter, pendigits, magic04, banana, magic04 at m = 256), always taking the best multiple: 6/80,
#: 6/69, 7/105, 8/108, 4/32; at 0.1: 6/80, 6/65, 7/101, 9/128, 4/27; at 0.3: 7/84, 8/90, 7/101, 10/142,
#: 4/27; never: 8/97, 8/88, 7/101, 10/142, 4/27.
LONGER_STEP_GAIN = 0.1


def objective(point, K_mm, penalty):
    """Per column, the objective ``J`` at ``point``: its mean loss and ``0.5 penalty a^T K_mm a``."""
    return point.loss + 0.5 * penalty * np.einsum("ij,ij->j", point.a, K_mm @ point.a)


def damped_update(passes, K_mm, point, before, direction, intercept_direction, penalty):
    """The point at ``(a - t d, b - t d_b)``: per column, ``t`` the multiple of Newton's step among 1 and
    :data:`LINE_STEPS` with the lowest objective where it beats Newton's own by :data:`LONGER_STEP_GAIN`
    (the run at ``t = 1`` sums the loss at the others), then halved while the objective (``before`` at
    ``point``) rises.

    Where a column's classes are nearly separable the loss is close to an exponential of the margin, and
    Newton's step on ``exp(-x)`` covers a fixed distance however far the optimum is: a longer step gains
    more. Measured on letter (26 classes, 2000 centres, a ridge of 1e-5), Newton steps 8 -> 6 and CG
    iterations 97 -> 80; on pendigits (10 classes, 1000 centres, 1e-5) CG iterations 88 -> 65.
    """
    candidate = passes.run(point.a - direction, point.b - intercept_direction, start=(point.a, point.b))
    steps = np.array((1.0,) + LINE_STEPS)
    image = K_mm @ direction
    # the penalty along the step, 0.5 penalty (a - t d)^T K_mm (a - t d), by its three coefficients
    a_image_a = np.einsum("ij,ij->j", point.a, K_mm @ point.a)
    a_image_d = np.einsum("ij,ij->j", point.a, image)
    d_image_d = np.einsum("ij,ij->j", direction, image)
    along = np.vstack([candidate.loss, candidate.line_loss]) + 0.5 * penalty * (
        a_image_a - 2 * steps[:, None] * a_image_d + steps[:, None] ** 2 * d_image_d)
    best = np.argmin(along, axis=0)
    # a longer step costs a second pass: it is taken where it adds a fair share to Newton's own decrease
    gain = along[0] - along[best, np.arange(along.shape[1])]
    t = np.where(gain >= LONGER_STEP_GAIN * np.maximum(before - along[0], 0.0), steps[best], 1.0)
    if np.any(t != 1.0):
        candidate = passes.run(point.a - t * direction, point.b - t * intercept_direction)
    for _ in range(MAX_HALVINGS + 1):
        rising = objective(candidate, K_mm, penalty) > before + 1e-12 * np.abs(before)
        if not rising.any():
            return candidate, t
        t = np.where(rising, 0.5 * t, t)
        candidate = passes.run(point.a - t * direction, point.b - t * intercept_direction)
    # no decrease at 2^-20 of the step: the column is at its optimum to round-off
    t = np.where(rising, 0.0, t)
    return passes.run(point.a - t * direction, point.b - t * intercept_direction), t
