"""The update of a Nyström logistic Newton step: the multiple of the step each column takes.

The passes take the step's direction once (:meth:`~kernelmaps._solvers.logistic_passes.LogisticPasses.along`,
one product), give the loss at any multiples of it from the logits of the point and of the direction
(:meth:`~kernelmaps._solvers.logistic_passes.LogisticPasses.losses`, no pass over the kernel), and move to the
multiples chosen (:meth:`~kernelmaps._solvers.logistic_passes.LogisticPasses.move`, one pass of ``K^T``):
:func:`damped_update` keeps, per column, the multiple of :data:`LINE_STEPS` with the lowest objective, and
halves a step that raises it.
"""

import numpy as np

#: The multiples of a Newton step, besides the step itself, whose objective :func:`damped_update` compares.
LINE_STEPS = (0.5, 0.75, 1.25, 1.5, 2.0, 2.5, 3.0)
#: Halvings of a step that raised the objective before giving up on the column.
MAX_HALVINGS = 20
#: A column takes a multiple of Newton's step other than 1 where it lowers the objective by at least this
#: fraction of Newton's own decrease more. (When a multiple other than 1 cost a second pass, Newton steps / CG
#: iterations on the Zen 4, with CG tolerances of min(0.1, relative gradient), on letter, pendigits, magic04,
#: banana and magic04 at m = 256, were: always taking the best multiple 6/80, 6/69, 7/105, 8/108, 4/32; at 0.1
#: 6/80, 6/65, 7/101, 9/128, 4/27; at 0.3 7/84, 8/90, 7/101, 10/142, 4/27; never 8/97, 8/88, 7/101, 10/142, 4/27.
#: Now that every multiple costs the same pass, with per-column CG tolerances, 0 and 0.1 both give 6/60, 7/58,
#: 8/111, 8/85, 4/21.)
LONGER_STEP_GAIN = 0.1


def damped_update(passes, K_mm, point, before, direction, intercept_direction, penalty, image=None):
    """``(point, t)``: the point at ``(a - t d, b - t d_b)``, per column ``t`` the multiple of Newton's step among
    1 and :data:`LINE_STEPS` with the lowest objective where it beats Newton's own by :data:`LONGER_STEP_GAIN`,
    then halved while the objective (``before`` at ``point``) rises. ``image``: ``K_mm a`` if known.

    Where a column's classes are nearly separable the loss is close to an exponential of the margin, and
    Newton's step on ``exp(-x)`` covers a fixed distance however far the optimum is: a longer step gains
    more. Measured on letter (26 classes, 2000 centres, a ridge of 1e-5), Newton steps 8 -> 6 and CG
    iterations 97 -> 80; on pendigits (10 classes, 1000 centres, 1e-5) CG iterations 88 -> 65.
    """
    k = point.b.shape[0]
    passes.along(direction, intercept_direction)
    steps = np.array((1.0,) + LINE_STEPS)
    if image is None:
        image = K_mm @ point.a
    # the penalty along the step, 0.5 penalty (a - t d)^T K_mm (a - t d), by its three coefficients
    a_image_a = np.einsum("ij,ij->j", point.a, image)
    a_image_d = np.einsum("ij,ij->j", image, direction)
    d_image_d = np.einsum("ij,ij->j", direction, K_mm @ direction)

    def objectives(t):
        return passes.losses(t) + 0.5 * penalty * (a_image_a - 2 * t * a_image_d + t ** 2 * d_image_d)

    along = objectives(np.repeat(steps[:, None], k, axis=1))
    best = np.argmin(along, axis=0)
    gain = along[0] - along[best, np.arange(k)]
    longer = gain >= LONGER_STEP_GAIN * np.maximum(before - along[0], 0.0)
    t = np.where(longer, steps[best], 1.0)
    reached = np.where(longer, along[best, np.arange(k)], along[0])
    for _ in range(MAX_HALVINGS + 1):
        rising = reached > before + 1e-12 * np.abs(before)
        if not rising.any():
            return passes.move(t), t
        t = np.where(rising, 0.5 * t, t)
        reached = objectives(t[None, :])[0]
    # no decrease at 2^-20 of the step: the column is at its optimum to round-off
    t = np.where(rising, 0.0, t)
    return passes.move(t), t
