"""Feature groups for multiple kernel learning: one kernel per group of input columns.

Both multiple kernel learners (:mod:`kernelmaps.group_lasso_mkl` on random
features, :mod:`kernelmaps.exact_mkl` on Gram matrices) read their kernels from
the same description, checked here once:

* ``groups``: ``None`` (every column in one group), a group index per input
  column (``make_planted_groups`` and ``load("mfeat").extras["groups"]`` give
  this form), a list of column lists, one per group, or a dict
  ``{group_name: columns}``. Columns are integer positions, or column names
  when ``X`` had string column names at fit (a pandas DataFrame);
* a per-kernel setting (``gamma``, ``n_components``): one value for every
  kernel, or a sequence with one value per kernel. With ``groups=None`` a
  ``gamma`` sequence means several kernels on the same columns, one per
  bandwidth.

Every kernel also gets a name (:func:`kernel_names`): the dict key, ``'group<g>'``
for the other forms, ``'all'`` for the single kernel of ``groups=None``,
``'gamma=<value>'`` for one kernel per bandwidth and ``'kernel<t>'`` for
several maps on all columns.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from .._core.validation import check_fits_in_memory, check_integer, user_stacklevel

__all__ = ["check_groups", "fit_group_maps", "group_features", "kernel_columns", "kernel_names",
           "map_width", "per_kernel", "warn_constant_model"]


def _is_integer(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_groups(groups, n_features, feature_names=None):
    """Column indices of every group, checked against the input width.

    Parameters
    ----------
    groups : None, array-like of int of shape (n_features,), sequence of sequences, or dict
        ``None``: one group holding every column. A flat sequence of integers:
        the group index of each column, from ``0`` to ``n_groups - 1`` with every
        index used. A sequence of sequences: the columns of each group. A dict
        ``{group_name: columns}``: the columns of each named group, in the
        dict's order (a single column may be given without a list). Columns
        are integer positions in ``[0, n_features)`` or, when
        ``feature_names`` is given, column names; groups must be non-empty
        and disjoint. Columns that belong to no group are not used.
    n_features : int
        Number of input columns.
    feature_names : ndarray of str or None, default=None
        The column names of ``X`` (an estimator's ``feature_names_in_``);
        ``None`` when ``X`` had none, and then a name in ``groups`` is an error.

    Returns
    -------
    columns : list of ndarray of int64
        The columns of each group, in group order.

    Raises
    ------
    ValueError
        For an empty group, overlapping groups, a column that does not exist, a
        column name that ``X`` does not have (or any name when ``X`` has no
        column names), a flat sequence of names, a per-column index array of
        the wrong length, or a group index that is negative, fractional or
        skipped.
    """
    return _named_groups(groups, n_features, feature_names)[0]


def _named_groups(groups, n_features, feature_names):
    if groups is None:
        return [np.arange(n_features, dtype=np.int64)], ["all"]
    if isinstance(groups, Mapping):
        if not groups:
            raise ValueError("groups is an empty dict: give at least one group")
        names = [str(key) for key in groups]
        if len(set(names)) != len(names):
            raise ValueError(f"groups has keys that read the same as text: {list(groups)!r}; "
                             "give distinct group names")
        labels = [repr(key) for key in groups]
        lists = [_resolve_columns(value, f"group {label}", feature_names)
                 for label, value in zip(labels, groups.values())]
        return _column_lists(lists, labels, n_features), names
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__len__"):
        raise ValueError("groups must be None, a group index per column, a list of column "
                         f"lists or a dict {{group_name: columns}}, got {groups!r}")
    if len(groups) == 0:
        raise ValueError("groups is empty: give at least one group")
    nested = [not isinstance(g, (str, bytes)) and not np.isscalar(g) and np.ndim(g) > 0
              for g in groups]
    if all(nested):
        labels = [str(g) for g in range(len(groups))]
        lists = [_resolve_columns(group, f"group {g}", feature_names)
                 for g, group in enumerate(groups)]
        return _column_lists(lists, labels, n_features), [f"group{g}" for g in range(len(groups))]
    if any(nested):
        raise ValueError("groups mixes column lists with single values: give either a "
                         "group index per column or a list of column lists")
    if any(isinstance(g, (str, bytes)) for g in groups):
        raise ValueError("groups is a flat sequence of names: give a list of column-name "
                         "lists (one per group) or a dict {group_name: columns}, e.g. "
                         "{'a': ['x0', 'x1'], 'b': ['x2']}")
    columns = _index_per_column(groups, n_features)
    return columns, [f"group{g}" for g in range(len(columns))]


def _resolve_columns(group, what, feature_names):
    """One group's columns, names replaced by their positions in ``feature_names``."""
    if isinstance(group, (str, bytes)) or np.ndim(group) == 0:
        values = [group]
    elif isinstance(group, np.ndarray) or not any(isinstance(v, str) for v in group):
        values = list(np.ravel(group))
    else:
        values = list(group)
    if not any(isinstance(v, str) for v in values):
        return values
    if feature_names is None:
        name = next(v for v in values if isinstance(v, str))
        raise ValueError(f"{what} names column {str(name)!r}, but X has no column names: names "
                         "work when fit gets a pandas DataFrame with string column names; "
                         "give integer column positions otherwise")
    position = {str(name): i for i, name in enumerate(feature_names)}
    resolved = []
    for v in values:
        if isinstance(v, str):
            if v not in position:
                known = ", ".join(repr(str(n)) for n in feature_names[:8])
                more = ", ..." if len(feature_names) > 8 else ""
                raise ValueError(f"{what} names column {str(v)!r}, which X does not have; its "
                                 f"columns are {known}{more}")
            v = position[v]
        resolved.append(v)
    return resolved


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


def _column_lists(groups, labels, n_features):
    columns, owner = [], {}
    for label, group in zip(labels, groups):
        cols = _as_integers(group, f"group {label}")
        if cols.size == 0:
            raise ValueError(f"group {label} is empty: every group needs at least one column")
        bad = cols[(cols < 0) | (cols >= n_features)]
        if bad.size:
            raise ValueError(f"group {label} names column {int(bad[0])}, but X has columns 0 "
                             f"to {n_features - 1}")
        for c in cols.tolist():
            if c in owner:
                where = ("twice" if owner[c] == label
                         else f"in groups {owner[c]} and {label}")
                raise ValueError(f"groups overlap: column {c} appears {where}")
            owner[c] = label
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


def kernel_columns(groups, gamma, n_features, feature_names=None):
    """Columns and bandwidth of every kernel.

    With ``groups=None`` and a sequence ``gamma``, each bandwidth is a kernel on
    all columns ("one input with several bandwidths"); otherwise there is one
    kernel per group and ``gamma`` is one value or one per group.
    ``feature_names`` as in :func:`check_groups`.

    Returns
    -------
    columns : list of ndarray of int64
    gammas : list
        The (unresolved) ``gamma`` of each kernel.
    """
    columns, gammas, _ = _kernels(groups, gamma, n_features, feature_names)
    return columns, gammas


def _kernels(groups, gamma, n_features, feature_names):
    columns, names = _named_groups(groups, n_features, feature_names)
    several = not (isinstance(gamma, str) or np.isscalar(gamma) or gamma is None)
    if groups is None and several:
        gammas = list(gamma)
        if not gammas:
            raise ValueError("gamma is an empty sequence: give at least one bandwidth")
        return [columns[0]] * len(gammas), gammas, kernel_names(len(gammas), gammas)
    return columns, per_kernel(gamma, len(columns), "gamma"), names


def kernel_names(n_kernels, gammas=None):
    """Names of ``n_kernels`` kernels on all columns (``groups=None``).

    ``'all'`` for a single kernel; ``'gamma=<value>'`` for one kernel per
    bandwidth in ``gammas`` when those names are distinct; ``'kernel<t>'``
    otherwise (several feature maps, or repeated bandwidths).
    """
    if n_kernels == 1:
        return ["all"]
    if gammas is not None:
        names = [f"gamma={format(g, 'g') if isinstance(g, numbers.Real) else g}" for g in gammas]
        if len(set(names)) == n_kernels:
            return names
    return [f"kernel{t}" for t in range(n_kernels)]


def fit_group_maps(X, groups, gamma, n_components, maps, rng, feature_names=None):
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
    feature_names : ndarray of str or None, default=None
        The column names of ``X``, for groups that name columns (see
        :func:`check_groups`).

    Returns
    -------
    columns : list of ndarray of int
    fitted : list of fitted feature maps
    names : list of str
        One name per kernel (see the module docstring).
    """
    from ..rff import RandomFourierFeatures  # the default map; imported late, as a public module

    n_features = X.shape[1]
    if maps is None:
        columns, gammas, names = _kernels(groups, gamma, n_features, feature_names)
        widths = per_kernel(n_components, len(columns), "n_components")
        maps = [RandomFourierFeatures(n_components=check_integer(w, "n_components", 1), gamma=g)
                for w, g in zip(widths, gammas)]
    else:
        if isinstance(maps, (str, bytes)) or not hasattr(maps, "__len__"):
            raise ValueError(f"maps must be a list of feature maps, got {maps!r}")
        maps = list(maps)
        if not maps:
            raise ValueError("maps is empty: give at least one feature map")
        columns, names = _named_groups(groups, n_features, feature_names)
        if groups is None:
            columns, names = columns * len(maps), kernel_names(len(maps))
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
    return columns, fitted, names


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
                  f"smaller alpha, or {remedy}", UserWarning, stacklevel=user_stacklevel())
