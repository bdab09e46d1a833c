"""The fit of the group-lasso multiple kernel learners (RFF-GL), shared by both.

:class:`kernelmaps.GroupLassoMKLClassifier` and
:class:`kernelmaps.GroupLassoMKLRegressor` differ in their targets and losses
only: both fit one feature map per kernel, walk the regularization path on a
training split when ``alpha=None`` (alpha chosen on the held-out rows by
:func:`kernelmaps._solvers.group_lasso.select_alpha`), and solve the final
problem on every row with FISTA, as written here once.
"""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._core.parallel import blas_single_thread, n_worker_threads
from .._core.validation import check_generator, user_stacklevel, validation_rows
from .._solvers.fista import fista
from .._solvers.group_lasso import PATH_PATIENCE, group_lasso_alpha_max, group_lasso_path, select_alpha, select_products
from .groups import fit_group_maps, group_features, map_width, warn_constant_model


class GroupLassoFitMixin:
    """``_fit(X, T, stratify, loss)``: the fitted attributes of :class:`kernelmaps.GroupLassoMKL`."""

    def _features(self, X, groups=None):
        """The concatenated features of the kernels in ``groups`` (all by default), float64."""
        return group_features(self.feature_maps_, self.kernel_columns_, self.feature_bounds_, X, groups)

    def _fit(self, X, T, stratify, loss):
        rng = check_generator(self.random_state)
        X = np.asarray(X, dtype=np.float64)
        # names in groups refer to the columns of the DataFrame fit was given
        self.kernel_columns_, self.feature_maps_, names = fit_group_maps(
            X, self.groups, self.gamma, self.n_components, self.maps, rng,
            feature_names=getattr(self, "feature_names_in_", None))
        self.group_names_ = np.asarray(names, dtype=object)
        widths = [map_width(m, X[:1, cols])
                  for m, cols in zip(self.feature_maps_, self.kernel_columns_)]
        self.feature_bounds_ = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
        F = self._features(X)
        bounds = self.feature_bounds_
        self.n_groups_ = len(widths)

        with blas_single_thread(), ThreadPoolExecutor(n_worker_threads()) as pool:
            if self.alpha is None:
                alpha, W, b = self._path(F, T, bounds, loss, rng, stratify, pool)
            else:
                alpha, W, b = float(self.alpha), None, None
            products = select_products(F, T, loss, pool)
            lipschitz = products.lipschitz()
            b0 = loss.best_intercept(T)
            scale = max(group_lasso_alpha_max(products, bounds, b0), np.finfo(float).tiny)
            if W is None:
                W = np.zeros((F.shape[1], T.shape[1]))
                b = b0
            if self.alpha is not None and alpha >= scale:
                warn_constant_model(alpha, scale, "", "alpha=None to choose it on a validation split")
            result = fista(products, bounds, alpha, W, b, lipschitz=lipschitz,
                           max_iter=self._max_iter, tol=self.tol, scale=scale)
        W, b, norms = result.coef, result.intercept, result.group_norms
        if not result.converged:
            warnings.warn(f"FISTA stopped at max_iter={self._max_iter} (alpha={alpha:.4g}): its "
                          f"relative gradient mapping reached {result.residual:.3g} against "
                          f"tol={self.tol}; raise max_iter or tol", ConvergenceWarning,
                          stacklevel=user_stacklevel())
        self.alpha_ = alpha
        self.n_iter_ = result.n_iter
        self.objective_history_ = np.asarray(result.objective_history)
        single = T.shape[1] == 1
        self.coef_ = W[:, 0] if single else W.T.copy()
        self.intercept_ = float(b[0]) if single else b
        self.group_norms_ = norms[:, 0].copy() if single else norms.T.copy()
        self.kernel_weights_ = self.group_norms_ / math.sqrt(2.0)
        active = self.group_norms_ > 0
        self.active_groups_ = np.flatnonzero(active if single else active.any(axis=0))
        return self

    def _path(self, F, T, bounds, loss, rng, stratify, pool):
        """The regularization path on a training split; alpha chosen on the validation rows."""
        train, val = validation_rows(F.shape[0], self.validation_fraction, stratify,
                                     int(rng.integers(2 ** 31 - 1)), "give alpha or more rows")
        F_train, T_train = F[train], T[train]
        F_val, T_val = F[val], T[val]
        products = select_products(F_train, T_train, loss, pool)
        b = loss.best_intercept(T_train)
        alpha_max = group_lasso_alpha_max(products, bounds, b)
        if not alpha_max > 0:
            raise ValueError("every group's gradient is zero at the zero solution: the "
                             "targets are constant or the features carry no signal")
        alphas = alpha_max * np.geomspace(1.0, self.alpha_min_ratio, self._n_alphas)
        path = group_lasso_path(products, loss, bounds, alphas, b, F_val, T_val,
                                max_iter=self._max_iter, tol=self.tol, scale=alpha_max,
                                patience=PATH_PATIENCE)
        for alpha, converged, residual in zip(alphas, path.converged, path.residual):
            if not converged:
                warnings.warn(f"FISTA stopped at max_iter={self._max_iter} at alpha={alpha:.4g} on "
                              f"the path: its relative gradient mapping reached {residual:.3g} "
                              f"against tol={self.tol}; raise max_iter or tol", ConvergenceWarning,
                              stacklevel=user_stacklevel())
        val_loss, val_se = path.validation_loss, path.validation_loss_se
        best = select_alpha(val_loss, val_se, self.alpha_selection)
        self.alphas_ = alphas[:len(val_loss)]
        self.group_norms_path_ = path.group_norms
        self.validation_loss_ = val_loss
        self.validation_loss_se_ = val_se
        self.alpha_index_ = best
        return float(alphas[best]), path.coef[best], path.intercept[best]
