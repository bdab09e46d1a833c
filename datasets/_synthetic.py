"""Synthetic generators: scaling runs, planted-structure tests and a 2-D nonlinear set.

Every generator is a deterministic function of its arguments. Each first draws
the parameters of its labelling rule and then the samples, row by row, so for a
fixed ``random_state`` a smaller ``n_samples`` gives a prefix of the rows of a
larger one (``make_two_spirals`` excepted: it shuffles its rows).
"""

from __future__ import annotations

import numpy as np

from .._core.validation import check_fraction, check_generator, check_integer
from ._base import DatasetInfo, make_dataset, register

_REFERENCE_SIZE = 4096     # sample used to set the gaussian rule's threshold
_BLOCK_ROWS = 1 << 15      # rows per block when evaluating the RBF expansion
_RNG_DOC = """random_state : int, numpy.random.Generator or None, default=0
        Seed or generator; None draws fresh entropy."""


def _rbf_expansion(X, centers, weights, gamma):
    """f(x) = sum_j weights[j] * exp(-gamma * ||x - centers[j]||^2), in row blocks."""
    out = np.empty(X.shape[0])
    c_sq = np.einsum("ij,ij->i", centers, centers)
    for start in range(0, X.shape[0], _BLOCK_ROWS):
        block = X[start:start + _BLOCK_ROWS]
        sq = np.einsum("ij,ij->i", block, block)[:, None] - 2.0 * block @ centers.T + c_sq
        out[start:start + _BLOCK_ROWS] = np.exp(-gamma * np.maximum(sq, 0.0)) @ weights
    return out


def make_gaussian(n_samples=10000, n_features=32, *, n_centers=20, random_state=0):
    """Gaussian inputs with labels from a random RBF expansion, for scaling runs.

    ``X ~ N(0, I)``; the label is ``f(x) > t`` with
    ``f(x) = sum_j a_j (k(x, c_j) + k(x, -c_j))``,
    ``k(x, c) = exp(-||x - c||^2 / n_features)``, centres ``c_j ~ N(0, I)``,
    weights ``a_j ~ N(0, 1)``, and ``t`` the median of ``f`` on an
    independent reference sample. The classes are about balanced, the label
    is a fixed function of ``x``, and since ``f`` is even a linear classifier
    does no better than chance.

    Parameters
    ----------
    n_samples : int, default=10000
        Number of rows, >= 1.
    n_features : int, default=32
        Number of columns, >= 1.
    n_centers : int, default=20
        Number of mirrored pairs of RBF centres in the labelling rule, >= 1.
    {rng}

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,), int64 in {{0, 1}}
    """
    n_samples = check_integer(n_samples, "n_samples", 1)
    n_features = check_integer(n_features, "n_features", 1)
    n_centers = check_integer(n_centers, "n_centers", 1)
    rng = check_generator(random_state)
    gamma = 1.0 / n_features
    centers = rng.standard_normal((n_centers, n_features))
    weights = rng.standard_normal(n_centers)
    # Mirrored centres make f even, f(x) = f(-x): no linear part to exploit.
    centers, weights = np.concatenate([centers, -centers]), np.tile(weights, 2)
    reference = rng.standard_normal((_REFERENCE_SIZE, n_features))
    threshold = np.median(_rbf_expansion(reference, centers, weights, gamma))
    X = rng.standard_normal((n_samples, n_features))
    y = (_rbf_expansion(X, centers, weights, gamma) > threshold).astype(np.int64)
    return X, y


def make_planted_groups(n_samples=2000, n_groups=10, group_size=4, n_informative=3,
                        random_state=0):
    """Feature groups of which only a few, planted ones, decide the label.

    ``X ~ N(0, I)`` has ``n_groups`` contiguous groups of ``group_size``
    columns. ``n_informative`` groups, drawn at random, are informative: the
    label is 1 when the squared norm of the informative columns exceeds its
    median (the median of a chi-square law with
    ``n_informative * group_size`` degrees of freedom), else 0. The rule is
    additive over groups (a sum of per-group squared norms) and invisible to a
    linear model, so a multiple-kernel learner with one kernel per group
    should keep exactly the informative groups.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of rows, >= 1.
    n_groups : int, default=10
        Number of feature groups, >= 1.
    group_size : int, default=4
        Columns per group, >= 1.
    n_informative : int, default=3
        Number of informative groups, 1 <= n_informative <= n_groups.
    {rng}

    Returns
    -------
    X : ndarray of shape (n_samples, n_groups * group_size), float64
    y : ndarray of shape (n_samples,), int64 in {{0, 1}}
    groups : ndarray of shape (n_groups * group_size,), int64
        Group index of every column (``column // group_size``).
    informative : ndarray of shape (n_informative,), int64
        Sorted indices of the informative groups.
    """
    from scipy.stats import chi2

    n_samples = check_integer(n_samples, "n_samples", 1)
    n_groups = check_integer(n_groups, "n_groups", 1)
    group_size = check_integer(group_size, "group_size", 1)
    n_informative = check_integer(n_informative, "n_informative", 1)
    if n_informative > n_groups:
        raise ValueError(f"n_informative must be <= n_groups ({n_groups}), "
                         f"got {n_informative}")
    rng = check_generator(random_state)
    informative = np.sort(rng.choice(n_groups, n_informative, replace=False))
    informative = informative.astype(np.int64)
    groups = np.repeat(np.arange(n_groups, dtype=np.int64), group_size)
    X = rng.standard_normal((n_samples, n_groups * group_size))
    signal = X[:, np.isin(groups, informative)]
    energy = np.einsum("ij,ij->i", signal, signal)
    y = (energy > chi2.median(n_informative * group_size)).astype(np.int64)
    return X, y, groups, informative


def make_two_spirals(n_samples=2000, *, noise=0.05, turns=1.5, random_state=0):
    """Two interleaved spirals in 2-D, one per class: a nonlinear test set.

    Points are spread uniformly over the area swept by each arm, within the
    unit disc, with isotropic Gaussian noise of standard deviation ``noise``.
    Rows are shuffled.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of rows, >= 2; class 1 gets ``n_samples // 2`` of them.
    noise : float, default=0.05
        Standard deviation of the added noise, >= 0.
    turns : float, default=1.5
        Number of turns of each arm, > 0.
    {rng}

    Returns
    -------
    X : ndarray of shape (n_samples, 2), float64
    y : ndarray of shape (n_samples,), int64 in {{0, 1}}
    """
    n_samples = check_integer(n_samples, "n_samples", 2)
    if isinstance(noise, bool) or not isinstance(noise, (int, float)) or not noise >= 0:
        raise ValueError(f"noise must be a number >= 0, got {noise!r}")
    if isinstance(turns, bool) or not isinstance(turns, (int, float)) or not turns > 0:
        raise ValueError(f"turns must be a number > 0, got {turns!r}")
    rng = check_generator(random_state)
    y = (np.arange(n_samples) < n_samples // 2).astype(np.int64)
    radius = np.sqrt(rng.uniform(size=n_samples))
    angle = 2.0 * np.pi * turns * radius + np.pi * y
    X = radius[:, None] * np.column_stack([np.cos(angle), np.sin(angle)])
    X += noise * rng.standard_normal(X.shape)
    order = rng.permutation(n_samples)
    return np.ascontiguousarray(X[order]), y[order]


for _f in (make_gaussian, make_planted_groups, make_two_spirals):
    if _f.__doc__:                                   # None under python -OO
        _f.__doc__ = _f.__doc__.format(rng=_RNG_DOC)


# ------------------------------------------------------------------------ registry

_SOURCE = "synthetic, generated by kernelmaps.datasets.{}"
_LICENSE = "generated data: no restrictions (BSD-3-Clause, as kernelmaps)"


def _split_rows(n_samples: int, test_size: float):
    n_test = int(round(n_samples * check_fraction(test_size, "test_size", allow_zero=False)))
    if not 1 <= n_test < n_samples:
        raise ValueError(f"test_size={test_size} leaves {n_samples - n_test} train and "
                         f"{n_test} test rows out of n_samples={n_samples}; both must be "
                         ">= 1")
    n_train = n_samples - n_test
    return slice(0, n_train), slice(n_train, n_samples)


def _register(name, make, options, n_features, describe):
    """Register a generator; ``describe(options, outputs)`` gives (description, extras)."""
    train, _ = _split_rows(options["n_samples"], options["test_size"])
    n_train, n_test = train.stop, options["n_samples"] - train.stop
    info = DatasetInfo(
        name=name, kind="synthetic", task="classification", n_features=n_features,
        n_train=n_train, n_test=n_test, n_classes=2, class_names=("0", "1"),
        source=_SOURCE.format(make.__name__), license=_LICENSE,
        description=describe(options, None)[0], options=options)

    def load(opts, data_home):
        kwargs = {k: v for k, v in opts.items() if k != "test_size"}
        out = make(**kwargs)
        train, test = _split_rows(opts["n_samples"], opts["test_size"])
        description, extras = describe(opts, out)
        return make_dataset(info, out[0], out[1], train, test, description=description,
                            extras=extras)

    register(info, load)


def _split_text(o):
    return (f"The first {1 - o['test_size']:.0%} of the rows are the train set, the "
            f"rest the test set (test_size={o['test_size']}); random_state="
            f"{o['random_state']!r}.")


def _describe_gaussian(o, out):
    return (f"GAUSSIAN: {o['n_samples']} rows of N(0, I) in {o['n_features']} dimensions,"
            f" two classes split by a random, even RBF expansion with {o['n_centers']} "
            "mirrored pairs of centres (see make_gaussian). " + _split_text(o)), {}


def _describe_planted(o, out):
    if out is None:    # the planted groups are drawn first: one row shows them
        out = make_planted_groups(1, o["n_groups"], o["group_size"], o["n_informative"],
                                  o["random_state"])
    groups, informative = out[2], out[3]
    extras = {"groups": tuple(groups.tolist()), "informative": tuple(informative.tolist())}
    planted = str(informative.tolist())
    return (f"PLANTED_GROUPS: {o['n_samples']} rows of N(0, I), {o['n_groups']} groups of "
            f"{o['group_size']} contiguous columns; the label depends only on the "
            f"{o['n_informative']} informative groups {planted} (1 if their squared norm "
            "exceeds its median; see make_planted_groups). " + _split_text(o)), extras


def _describe_spirals(o, out):
    return (f"TWO_SPIRALS: {o['n_samples']} points in 2-D on two interleaved spirals of "
            f"{o['turns']} turns, noise {o['noise']} (see make_two_spirals). "
            + _split_text(o)), {}


_register("gaussian", make_gaussian,
          dict(n_samples=10000, n_features=32, n_centers=20, test_size=0.25,
               random_state=0), 32, _describe_gaussian)
_register("planted_groups", make_planted_groups,
          dict(n_samples=2000, n_groups=10, group_size=4, n_informative=3,
               test_size=0.25, random_state=0), 40, _describe_planted)
_register("two_spirals", make_two_spirals,
          dict(n_samples=2000, noise=0.05, turns=1.5, test_size=0.25, random_state=0),
          2, _describe_spirals)
