"""Multiple kernel learning (Băzăvan et al., section 3.3): RFF-GL, its exact baseline, its solver.

The multiple kernel learners need labels and feature groups, so they are kept out
of the generated suite (their ``benchmark`` is ``None``) and measured here:

* ``MultipleKernelMfeat``: fit time and test error on the six views of ``mfeat``
  (standardized on the training rows; one Gaussian kernel per view, gamma='scale',
  alpha = 1e-3): ``GroupLassoMKLClassifier``, ``ExactMKLClassifier`` on the same
  kernels, and the equal-weight concatenation of the views' random features with
  least squares. The quick profile uses a stratified 600-row training subset (the
  exact learner costs O(N^3) per step) and 64 features per view; the full profile
  all 1500 training rows and 64, 256, 1024 features per view.
* ``GroupLassoSolver``: ``solve_group_lasso`` (FISTA) against skglm's
  ``GroupLasso`` (when installed) on the same random features of planted groups
  (10 kernels x 128 features, +-1 targets, alpha = 0.1 alpha_max), each at the
  loosest tolerance that reaches 1e-6 of the optimum on this problem
  (``python -m benchmarks.experiments run gl-solver``): time to solve and the
  objective's relative gap to a 1e-13-tolerance solution.
* ``MultipleKernelScaling``: fit time over N on planted groups (10 kernels, alpha =
  0.01): RFF-GL (128 features per kernel) and ExactMKL (up to 8000 rows), the
  paper's Figure 4.
"""

from functools import lru_cache

from . import common

MFEAT_WIDTHS = {"quick": [64], "full": [64, 256, 1024]}[common.PROFILE]
MFEAT_TRAIN = {"quick": 600, "full": None}[common.PROFILE]
MFEAT_ALPHA = 1e-3
SOLVER_SIZES = {"quick": [4000], "full": [1000, 4000]}[common.PROFILE]
SOLVER_TOL = {"kernelmaps": 1e-4, "skglm": 1e-4}
SCALING_SIZES = {"quick": [500, 1000], "full": [1000, 2000, 4000, 8000, 16000, 32000]}[
    common.PROFILE]
EXACT_MAX = 8000


@lru_cache(maxsize=None)
def mfeat():
    import numpy as np
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    from kernelmaps.datasets import load

    data = load("mfeat")
    X, y = data.X_train, data.y_train
    if MFEAT_TRAIN is not None:
        rows, _ = train_test_split(np.arange(len(y)), train_size=MFEAT_TRAIN,
                                   random_state=common.SEED, stratify=y)
        X, y = X[np.sort(rows)], y[np.sort(rows)]
    scaler = StandardScaler().fit(X)
    return (scaler.transform(X), y, scaler.transform(data.X_test), data.y_test,
            np.asarray(data.extras["groups"]))


def make_mfeat(label, n_components, groups):
    import kernelmaps

    if label == "rff_gl":
        return kernelmaps.GroupLassoMKLClassifier(groups, n_components=n_components,
                                                  alpha=MFEAT_ALPHA, random_state=common.SEED)
    if label == "exact_mkl":
        return kernelmaps.ExactMKLClassifier(groups, alpha=MFEAT_ALPHA)
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    views = [(f"view{g}", kernelmaps.RandomFourierFeatures(n_components,
                                                           random_state=common.SEED + g),
              [j for j, owner in enumerate(groups) if owner == g])
             for g in range(max(groups) + 1)]
    return make_pipeline(ColumnTransformer(views), kernelmaps.LeastSquaresClassifier())


class MultipleKernelMfeat(common.Timing):
    """RFF-GL, exact MKL and the equal-weight concatenation on mfeat's six views."""

    params = [["rff_gl", "exact_mkl", "rff_concat"], MFEAT_WIDTHS]
    param_names = ["algorithm", "n_components_per_kernel"]
    timeout = 900

    def setup(self, label, n_components):
        if label == "exact_mkl" and n_components != MFEAT_WIDTHS[0]:
            raise NotImplementedError("the exact learner has no width")
        self.X, self.y, self.X_test, self.y_test, self.groups = mfeat()
        self.model = common.warm((label, n_components), lambda: make_mfeat(
            label, n_components, self.groups).fit(self.X, self.y))

    def time_fit(self, label, n_components):
        make_mfeat(label, n_components, self.groups).fit(self.X, self.y)

    def track_test_error(self, label, n_components):
        return 1.0 - self.model.score(self.X_test, self.y_test)

    track_test_error.unit = "test error"


@lru_cache(maxsize=None)
def solver_problem(n_samples):
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    from kernelmaps import GroupLassoMKLClassifier
    from kernelmaps.datasets import make_planted_groups
    from kernelmaps._solvers.group_lasso import group_lasso_objective, solve_group_lasso

    X, y, groups, _ = make_planted_groups(n_samples, random_state=common.SEED)
    with warnings.catch_warnings():
        # one iteration at an alpha that may zero every kernel: only the fitted maps are wanted
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.filterwarnings("ignore", "alpha=.* is at or above alpha_max", UserWarning)
        model = GroupLassoMKLClassifier(groups, n_components=128, alpha=1.0, max_iter=1,
                                        random_state=common.SEED).fit(X, y)
    # the learner's own random features, through its public fitted maps
    F = np.hstack([m.transform(X[:, cols]) for m, cols in zip(model.feature_maps_, model.kernel_columns_)])
    target, bounds = 2.0 * y - 1.0, model.feature_bounds_
    alpha = 0.1 * solve_group_lasso(F, target, bounds, 1e9).alpha_max
    best = solve_group_lasso(F, target, bounds, alpha, tol=1e-13, max_iter=200000)
    optimum = group_lasso_objective(F, target, bounds, alpha, best.coef[:, 0], best.intercept[0])
    return F, target, np.asarray(bounds), alpha, optimum


def solve(solver, F, y, bounds, alpha):
    """``(coef, intercept)`` from one of the two solvers at its tolerance."""
    if solver == "kernelmaps":
        from kernelmaps._solvers.group_lasso import solve_group_lasso

        result = solve_group_lasso(F, y, bounds, alpha, tol=SOLVER_TOL[solver],
                                   max_iter=100000)
        return result.coef[:, 0], result.intercept[0]
    from skglm import GroupLasso

    groups = [list(range(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]
    model = GroupLasso(groups=groups, alpha=alpha, tol=SOLVER_TOL[solver], max_iter=1000,
                       max_epochs=100000).fit(F, y)
    return model.coef_, model.intercept_


class GroupLassoSolver(common.Timing):
    """Time to a 1e-6-accurate group lasso on the same features: ours against skglm.

    The problems and their optima (a 1e-13-tolerance solve) are built once, in
    ``setup_cache``, for every benchmark of the class."""

    params = [["kernelmaps", "skglm"], SOLVER_SIZES]
    param_names = ["solver", "n_samples"]
    timeout = 600

    def setup_cache(self):
        return {n: solver_problem(n) for n in SOLVER_SIZES}

    def setup(self, problems, solver, n_samples):
        if solver == "skglm":
            try:
                import skglm  # noqa: F401
            except ImportError:
                raise NotImplementedError("skglm is not installed") from None
        self.problem = problems[n_samples]
        common.warm((solver, n_samples), lambda: solve(solver, *self.problem[:4]))

    def time_solve(self, problems, solver, n_samples):
        solve(solver, *self.problem[:4])

    def track_objective_gap(self, problems, solver, n_samples):
        from kernelmaps._solvers.group_lasso import group_lasso_objective

        F, y, bounds, alpha, optimum = self.problem
        coef, intercept = solve(solver, F, y, bounds, alpha)
        return group_lasso_objective(F, y, bounds, alpha, coef, intercept) / optimum - 1

    track_objective_gap.unit = "relative gap"


class MultipleKernelScaling(common.Timing):
    """Fit time over N, the paper's Figure 4: linear for RFF-GL, cubic-ish for exact MKL."""

    params = [["rff_gl", "exact_mkl"], SCALING_SIZES]
    param_names = ["algorithm", "n_samples"]
    timeout = 1800

    def setup(self, label, n_samples):
        from kernelmaps.datasets import make_planted_groups

        if label == "exact_mkl" and n_samples > EXACT_MAX:
            raise NotImplementedError(f"ExactMKL is benchmarked up to {EXACT_MAX} rows")
        self.X, self.y, self.groups, _ = make_planted_groups(n_samples,
                                                             random_state=common.SEED)
        common.warm((label, n_samples), lambda: self.make(label).fit(self.X, self.y))

    def make(self, label):
        import kernelmaps

        if label == "rff_gl":
            return kernelmaps.GroupLassoMKLClassifier(self.groups, n_components=128,
                                                      alpha=0.01, random_state=common.SEED)
        return kernelmaps.ExactMKLClassifier(self.groups, alpha=0.01)

    def time_fit(self, label, n_samples):
        self.make(label).fit(self.X, self.y)
