"""Feature groups for multiple kernel learning: one kernel per group of input columns.

Both multiple kernel learners (:mod:`kernelmaps.group_lasso_mkl` on random
features, :mod:`kernelmaps.exact_mkl` on Gram matrices) read their kernels from
the same description, checked here once:

* ``groups``: ``None`` (every column in one group), a group index per input
  column (``make_planted_groups`` and ``load("mfeat").extras["groups"]`` give
  this form), or a list of column-index lists, one per group;
* a per-kernel setting (``gamma``, ``n_components``): one value for every
  kernel, or a sequence with one value per kernel. With ``groups=None`` a
  ``gamma`` sequence means several kernels on the same columns, one per
  bandwidth.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from ._validation import check_fits_in_memory, check_integer

__all__ = ["check_groups", "fit_group_maps", "group_features", "kernel_columns", "map_width", "per_kernel",
           "warn_constant_model"]


def _is_integer(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_groups(groups, n_features):
    """Column indices of every group, checked against the input width.

    Parameters
    ----------
    groups : None, array-like of int of shape (n_features,), or sequence of sequences
        ``None``: one group holding every column. A flat sequence of integers:
        the group index of each column, from ``0`` to ``n_groups - 1`` with every
        index used. A sequence of sequences: the columns of each group; groups
        must be non-empty and disjoint, columns in ``[0, n_features)``. Columns
        that belong to no group are not used.
    n_features : int
        Number of input columns.

    Returns
    -------
    columns : list of ndarray of int64
        The columns of each group, in group order.

    Raises
    ------
    ValueError
        For an empty group, overlapping groups, a column that does not exist, a
        per-column index array of the wrong length, or a group index that is
        negative, fractional or skipped.
    """
    if groups is None:
        return [np.arange(n_features, dtype=np.int64)]
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
        raise ValueError("groups must be None, a group index per column or a list of "
                         f"column lists, got {groups!r}")
    if len(groups) == 0:
        raise ValueError("groups is empty: give at least one group")
    nested = [not np.isscalar(g) and np.ndim(g) > 0 for g in groups]
    if all(nested):
        return _column_lists(groups, n_features)
    if any(nested):
        raise ValueError("groups mixes column lists with single numbers: give either a "
                         "group index per column or a list of column lists")
    return _index_per_column(groups, n_features)


def _as_integers(values, what):
    values = list(values)
    for value in values:
        if _is_integer(value) or (isinstance(value, np.integer)):
            continue
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            continue
        raise ValueError(f"{what} must hold integers, got {value!r}")
    return np.asarray(values, dtype=np.int64)


def _index_per_column(groups, n_features):
    index = _as_integers(groups, "groups (a group index per column)")
    if index.shape[0] != n_features:
        raise ValueError(f"groups gives a group index for {index.shape[0]} columns, but X "
                         f"has {n_features} columns")
    if index.min() < 0:
        raise ValueError(f"group indices must be >= 0, got {int(index.min())}")
    n_groups = int(index.max()) + 1
    counts = np.bincount(index, minlength=n_groups)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise ValueError(f"group {int(empty[0])} is empty: group indices must run from 0 "
                         f"to {n_groups - 1} with every index used")
    return [np.flatnonzero(index == g).astype(np.int64) for g in range(n_groups)]


def _column_lists(groups, n_features):
    columns, owner = [], {}
    for g, group in enumerate(groups):
        cols = _as_integers(np.ravel(group), f"group {g}")
        if cols.size == 0:
            raise ValueError(f"group {g} is empty: every group needs at least one column")
        bad = cols[(cols < 0) | (cols >= n_features)]
        if bad.size:
            raise ValueError(f"group {g} names column {int(bad[0])}, but X has columns 0 "
                             f"to {n_features - 1}")
        for c in cols.tolist():
            if c in owner:
                where = ("twice" if owner[c] == g
                         else f"in groups {owner[c]} and {g}")
                raise ValueError(f"groups overlap: column {c} appears {where}")
            owner[c] = g
        columns.append(cols)
    return columns


def per_kernel(value, n_kernels, name):
    """One setting per kernel: a scalar (or string) repeated, or a sequence of ``n_kernels``."""
    if isinstance(value, str) or np.isscalar(value) or value is None:
        return [value] * n_kernels
    values = list(value)
    if len(values) != n_kernels:
        raise ValueError(f"{name} has {len(values)} entries, but there are {n_kernels} "
                         "kernels: give one value, or one per kernel")
    return values


def kernel_columns(groups, gamma, n_features):
    """Columns and bandwidth of every kernel.

    With ``groups=None`` and a sequence ``gamma``, each bandwidth is a kernel on
    all columns ("one input with several bandwidths"); otherwise there is one
    kernel per group and ``gamma`` is one value or one per group.

    Returns
    -------
    columns : list of ndarray of int64
    gammas : list
        The (unresolved) ``gamma`` of each kernel.
    """
    columns = check_groups(groups, n_features)
    several = not (isinstance(gamma, str) or np.isscalar(gamma) or gamma is None)
    if groups is None and several:
        gammas = list(gamma)
        if not gammas:
            raise ValueError("gamma is an empty sequence: give at least one bandwidth")
        return [columns[0]] * len(gammas), gammas
    return columns, per_kernel(gamma, len(columns), "gamma")


def fit_group_maps(X, groups, gamma, n_components, maps, rng):
    """The feature map of each kernel, fitted on its group's columns.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    groups, gamma, n_components
        As for :func:`kernel_columns` and :func:`per_kernel`: one Gaussian
        :class:`kernelmaps.RandomFourierFeatures` per kernel.
    maps : list of feature maps or None
        Replaces the Gaussian maps: one per group (or per kernel on all columns
        when ``groups=None``). Unfitted maps are cloned and fitted; fitted ones are
        used as they are.
    rng : numpy.random.Generator
        Draws one seed per cloned map.

    Returns
    -------
    columns : list of ndarray of int
    fitted : list of fitted feature maps
    """
    from .rff import RandomFourierFeatures  # the default map; imported late, as a public module

    n_features = X.shape[1]
    if maps is None:
        columns, gammas = kernel_columns(groups, gamma, n_features)
        widths = per_kernel(n_components, len(columns), "n_components")
        maps = [RandomFourierFeatures(n_components=check_integer(w, "n_components", 1), gamma=g)
                for w, g in zip(widths, gammas)]
    else:
        if isinstance(maps, (str, bytes)) or not hasattr(maps, "__len__"):
            raise ValueError(f"maps must be a list of feature maps, got {maps!r}")
        maps = list(maps)
        if not maps:
            raise ValueError("maps is empty: give at least one feature map")
        columns, _ = kernel_columns(groups, "scale", n_features)
        if groups is None:
            columns = columns * len(maps)
        if len(maps) != len(columns):
            raise ValueError(f"maps has {len(maps)} entries but groups defines "
                             f"{len(columns)} groups: give one map per group")
    fitted = []
    for t, (cols, feature_map) in enumerate(zip(columns, maps)):
        if not hasattr(feature_map, "transform"):
            raise ValueError(f"maps[{t}] is not a feature map: {feature_map!r}")
        try:
            check_is_fitted(feature_map)
        except NotFittedError:
            feature_map = clone(feature_map)
            if "random_state" in feature_map.get_params():
                feature_map.set_params(random_state=int(rng.integers(2 ** 31 - 1)))
            feature_map.fit(X[:, cols])
        else:
            expected = getattr(feature_map, "n_features_in_", len(cols))
            if expected != len(cols):
                raise ValueError(f"maps[{t}] was fitted on {expected} columns but its group "
                                 f"has {len(cols)}")
        fitted.append(feature_map)
    return columns, fitted


def map_width(feature_map, row):
    """Output width of a fitted map, read from the transform of one row (any map has one)."""
    return int(feature_map.transform(row).shape[1])


def group_features(feature_maps, columns, bounds, X, groups=None):
    """The concatenated features of the kernels in ``groups`` (all by default), float64.

    Kernel ``t``'s features are columns ``bounds[t]:bounds[t + 1]`` of the result.
    """
    groups = range(len(feature_maps)) if groups is None else groups
    widths = [int(bounds[t + 1] - bounds[t]) for t in groups]
    check_fits_in_memory(8 * X.shape[0] * sum(widths), f"n_samples={X.shape[0]}",
                         "the concatenated random features")
    F = np.empty((X.shape[0], sum(widths)))
    start = 0
    for t, width in zip(groups, widths):
        block = feature_maps[t].transform(X[:, columns[t]])
        if block.shape[1] != width:
            raise ValueError(f"feature map {t} gives {block.shape[1]} features, not the "
                             f"{width} it gave at fit")
        F[:, start:start + width] = block
        start += width
    return F


def warn_constant_model(alpha, alpha_max, problem, remedy):
    """Warn that ``alpha >= alpha_max`` zeroes every kernel's weight: the fitted model is a constant."""
    warnings.warn(f"alpha={alpha:.4g} is at or above alpha_max={alpha_max:.4g}{problem}, the smallest "
                  "alpha at which every kernel's weight is zero: the model is a constant. Give a "
                  f"smaller alpha, or {remedy}", UserWarning, stacklevel=5)
