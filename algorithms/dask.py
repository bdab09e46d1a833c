"""Feature maps and the one-pass learners on Dask arrays (``pip install 'kernelmaps[dask]'``).

The estimators route Dask input here themselves, so the same code runs in memory
and on a cluster:

* ``feature_map.fit(X)`` reads a bounded, seeded sample of the rows
  (:func:`fit`, :func:`sample_rows`); everything else about the fit is the
  in-memory one, so an integer ``random_state`` gives the map fitted in memory on
  that sample.
* ``feature_map.transform(X)`` is lazy: one ``map_blocks`` task per row chunk,
  each running the in-memory transform on its chunk, single-threaded (Dask runs
  the chunks in parallel). The fitted map is one node of the graph, sent to each
  worker once, not pickled into every task (:func:`transform`).
* ``LeastSquaresClassifier``, ``LeastSquaresRegressor`` and ``ECOCClassifier``
  fit on a Dask array of features, or of inputs plus ``feature_map=``. Each
  chunk's task accumulates its ``Z^T Z`` and ``Z^T Y``
  (:class:`kernelmaps.NormalEquations`; with a map, mapping and
  accumulating one block at a time, so that no task holds more than a block of
  features), a tree of :meth:`~kernelmaps.NormalEquations.merge`
  tasks sums them, and the ``D x D`` system is solved once, on the client
  (:func:`fit_learner`). ``predict`` and ``decision_function`` are lazy
  (:func:`predict_lazily`).

Nothing here is a separate implementation: every task calls the library's
in-memory code on a NumPy chunk. With a ``dask.distributed.Client`` active,
``compute`` runs on its cluster; without one, on Dask's local threads.

Examples
--------
>>> import dask.array as da
>>> from kernelmaps import LeastSquaresClassifier, RandomFourierFeatures
>>> X = da.random.default_rng(0).standard_normal((20_000, 8), chunks=5_000)
>>> y = (X[:, 0] * X[:, 1] > 0).astype(int)
>>> rff = RandomFourierFeatures(n_components=256, gamma=0.1, random_state=0).fit(X)
>>> Z = rff.transform(X)  # lazy
>>> Z.shape, len(Z.chunks[0])
((20000, 256), 4)
>>> clf = LeastSquaresClassifier(alpha=1.0).fit(X, y, feature_map=rff)  # one pass
>>> accuracy = (clf.predict(Z) == y).mean().compute()
>>> print(round(float(accuracy), 2))
0.9

References
----------
Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. Compact random feature maps.
ICML 2014, section 4 (the single-pass ECOC learner "suits map-reduce").
Rocklin, M. Dask: parallel computation with blocked algorithms and task
scheduling. SciPy 2015.
"""

import copy

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.base import tokenize
except ImportError as error:  # pragma: no cover - exercised by the no-dask test in a subprocess
    raise ImportError(
        "kernelmaps.dask needs the optional 'dask' extra: pip install 'kernelmaps[dask]' "
        "(dask[array] and distributed)"
    ) from error

from sklearn.base import is_classifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ._core.validation import check_fits_in_memory, check_integer, clear_fitted_state, is_dask_array
from ._machines.dask_support import align_rows, as_targets, check_rows, graph_node, known_rows, serial, tree_sum

__all__ = ["FIT_SAMPLE_ROWS", "TREE_FAN_IN", "FeatureChunksWarning", "fit", "fit_learner", "map_reduce",
           "predict_lazily", "sample_rows", "transform"]

#: Rows a feature map's ``fit`` reads from a Dask array: a uniform sample of this
#: many rows (all of them when there are fewer). Enough for the bandwidth
#: heuristics (which themselves sample at most a few thousand rows), for
#: Nyström's landmarks and for the learned maps; bounded, so that fitting never
#: pulls a cluster's data onto the client.
FIT_SAMPLE_ROWS = 100_000
#: Partial normal equations each merge task sums: a tree of depth
#: ``log_4(chunks)``, holding at most five ``D x D`` matrices in one task.
TREE_FAN_IN = 4


class FeatureChunksWarning(UserWarning):
    """A Dask array chunked along its features was rejoined into whole rows."""


def _output_dtype(X):
    return np.dtype(np.float32 if X.dtype == np.float32 else np.float64)


# ----------------------------------------------------------------- feature maps


def sample_rows(X, n_rows=FIT_SAMPLE_ROWS, random_state=None, y=None):
    """A uniform sample of the rows of a Dask array, in memory.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
    n_rows : int, default=FIT_SAMPLE_ROWS
        Rows to draw, without replacement; all rows (in order) when ``X`` has at
        most this many.
    random_state : int, RandomState or None
        Draws the rows.
    y : dask.array.Array or array-like of shape (n_samples, ...), optional
        Sampled at the same rows.

    Returns
    -------
    X_sample : ndarray of shape (min(n_rows, n_samples), n_features)
        The rows in increasing order.
    y_sample : ndarray
        Only when ``y`` is given.

    Examples
    --------
    >>> import dask.array as da
    >>> from kernelmaps.dask import sample_rows
    >>> X = da.arange(20.0, chunks=5).reshape(10, 2)
    >>> sample_rows(X, 3, random_state=0)
    array([[ 4.,  5.],
           [ 8.,  9.],
           [16., 17.]])
    """
    X = known_rows(check_rows(X))
    n_rows = check_integer(n_rows, "n_rows")
    n = X.shape[0]
    if n == 0:
        raise ValueError("X has no rows to sample")
    take = min(n, n_rows)
    check_fits_in_memory(take * X.shape[1] * X.dtype.itemsize, f"n_rows={n_rows}",
                         f"a sample of {take} rows of {X.shape[1]} features")
    if take == n:
        rows = slice(None)
    else:
        rows = np.sort(check_random_state(random_state).choice(n, take, replace=False))
    if y is None:
        return np.asarray(X[rows].compute())
    if len(y) != n:
        raise ValueError(f"X has {n} rows but y has {len(y)}")
    y_rows = y[rows]
    X_sample, y_sample = dask.compute(X[rows], y_rows) if is_dask_array(y) else (X[rows].compute(), y_rows)
    return np.asarray(X_sample), np.asarray(y_sample)


def fit(feature_map, X, y=None, *, n_rows=FIT_SAMPLE_ROWS, random_state=None):
    """Fit a feature map on a bounded, seeded sample of the rows of a Dask array.

    ``feature_map.fit(X)`` calls this for a Dask ``X``. The map is fitted in
    memory on ``sample_rows(X, n_rows, seed, y)``, where the seed is
    ``random_state`` or, when that is None, the map's own ``random_state``: with
    an integer seed the result equals ``feature_map.fit(sample)`` on that sample.

    Parameters
    ----------
    feature_map : kernelmaps feature map
    X : dask.array.Array of shape (n_samples, n_features)
    y : array-like or Dask array, optional
        Labels, for the maps that learn from them.
    n_rows : int, default=FIT_SAMPLE_ROWS
    random_state : int, RandomState or None

    Returns
    -------
    feature_map
        Fitted.
    """
    seed = random_state if random_state is not None else getattr(feature_map, "random_state", None)
    clear_fitted_state(feature_map)
    if y is None:
        return feature_map.fit(sample_rows(X, n_rows, seed))
    return feature_map.fit(*sample_rows(X, n_rows, seed, y=y))


def _transform_chunk(block, feature_map):
    with serial():
        return feature_map.transform(block)


def transform(feature_map, X):
    """Lazily map a row-chunked Dask array: one task per chunk.

    ``feature_map.transform(X)`` calls this for a Dask ``X``. Each task runs the
    in-memory transform on its NumPy chunk, single-threaded. The row chunks are
    moved, where needed, to the nearest multiples of the transform's row block
    (BLAS picks its kernel by the product's size, so a row's last bits depend on
    the block it is computed in): every row's features are then those of the
    in-memory ``feature_map.transform``, bit for bit, whatever the chunking. A
    chunk's output holds ``rows x n_components`` values: choose the row chunks
    so that this fits a worker's memory.

    Parameters
    ----------
    feature_map : fitted kernelmaps feature map
    X : dask.array.Array of shape (n_samples, n_features)
        Chunked along rows; chunks along the features are rejoined with a
        :class:`FeatureChunksWarning`.

    Returns
    -------
    Z : dask.array.Array of shape (n_samples, n_components)
        float32 for float32 ``X``, float64 otherwise; its row chunks are ``X``'s,
        with each boundary moved to the nearest multiple of the row block.
    """
    check_is_fitted(feature_map)
    X = check_rows(X)
    if X.shape[1] != feature_map.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {type(feature_map).__name__} was fitted on "
                         f"{feature_map.n_features_in_}")
    dtype = _output_dtype(X)
    width = feature_map.n_components_
    X = align_rows(X, feature_map._block_step(dtype, X.shape[1]))
    node = graph_node(feature_map, f"kernelmaps-{type(feature_map).__name__.lower()}")
    return da.map_blocks(_transform_chunk, X, node, dtype=dtype, chunks=(X.chunks[0], (width,)),
                         meta=np.empty((0, width), dtype=dtype),
                         name=f"kernelmaps-transform-{tokenize(X, node.key)}")


# ----------------------------------------------------------------- one-pass learners


def _chunk_equations(template, block, targets, feature_map):
    """One chunk's normal equations (the map step): validated as in memory."""
    equations = template._new_equations()
    if block.shape[0] == 0:
        return equations
    block, targets = template._validate_rows(block, targets, False, feature_map)
    return template._accumulate(equations, block, template._block_targets(targets), feature_map)


def _run_chunk(function, node, block, *row_chunks):
    with serial():
        return function(node, block, *row_chunks)


def map_reduce(function, node, X, *rows, feature_map=None):
    """One pass over the row chunks of a Dask array: a task per chunk, a tree of merges.

    Each task computes ``function(node, chunk, *row_chunks, feature_map)`` on one
    thread, for a NumPy chunk of ``X`` and the same rows of each of ``rows``; the
    results (objects with a ``merge(other)`` method that adds another's rows, in
    row order) are merged :data:`TREE_FAN_IN` at a time, and the one left is
    computed here. ``node`` and ``feature_map`` are sent to each worker once.
    The one-pass learners' fit (:func:`fit_learner`) is this map-reduce, and
    the cross-validated ones take one or two of them.

    Parameters
    ----------
    function : callable
        A module-level function ``(node, chunk, *row_chunks, feature_map) -> part``.
    node : object
        What every task reads (a learner, a fitted state).
    X : dask.array.Array of shape (n_samples, n_features)
        Chunked along rows.
    *rows : dask.array.Array or array-like, each of n_samples rows
        Row-aligned arrays (targets, fold membership), rechunked to ``X``'s rows.
    feature_map : fitted kernelmaps feature map, optional
        Handed to every task as its last argument.

    Returns
    -------
    object
        The merge of all the chunks' parts.

    Examples
    --------
    >>> import dask.array as da
    >>> import numpy as np
    >>> from kernelmaps.dask import map_reduce
    >>> from kernelmaps import NormalEquations
    >>> def moments(width, chunk, targets, feature_map):
    ...     equations = NormalEquations(width, 1)
    ...     equations.add(chunk, targets)
    ...     return equations
    >>> X = da.random.default_rng(0).standard_normal((1000, 3), chunks=250)
    >>> equations = map_reduce(moments, 3, X, np.ones(1000))
    >>> equations.n_samples
    1000
    """
    X = known_rows(check_rows(X))
    aligned = [as_targets(row_array, X.chunks[0], X.shape[0]) for row_array in rows]
    node = graph_node(node, f"kernelmaps-{type(node).__name__.lower()}")
    map_node = None if feature_map is None else graph_node(
        feature_map, f"kernelmaps-{type(feature_map).__name__.lower()}")
    chunks = zip(X.to_delayed().ravel(), *(row_array.to_delayed().ravel() for row_array in aligned))
    parts = [dask.delayed(_run_chunk, pure=True)(function, node, *chunk, map_node) for chunk in chunks]
    return tree_sum(parts, TREE_FAN_IN).compute()


def _without(learner, *attributes):
    """A shallow copy of ``learner`` without ``attributes``: what its tasks need to be sent
    (parameters, classes, code), without the ``D x D`` accumulator."""
    light = copy.copy(learner)
    for attribute in attributes:
        light.__dict__.pop(attribute, None)
    return light


def fit_learner(learner, X, y, *, feature_map=None, classes=None, partial=False):
    """Fit a one-pass learner out of core: per-chunk normal equations, a tree of merges,
    one solve on the client.

    The estimators' ``fit`` and ``partial_fit`` call this for Dask input. No task
    holds more than one chunk of features (with ``feature_map``, one block of
    them), so the ``N x D`` feature matrix never exists anywhere; the client
    receives one ``D x D`` accumulator. A classifier whose classes are not given
    reads ``y`` once for them (``dask.array.unique``) before the pass.

    Parameters
    ----------
    learner : LeastSquaresClassifier, LeastSquaresRegressor or ECOCClassifier
    X : dask.array.Array of shape (n_samples, n_features)
        Features, or with ``feature_map`` its inputs.
    y : dask.array.Array or array-like of shape (n_samples,) or (n_samples, n_targets)
    feature_map : fitted kernelmaps feature map, optional
    classes : array-like, optional
        The classes; required on the first ``partial_fit``.
    partial : bool, default=False
        Add to what earlier ``partial_fit`` calls accumulated instead of refitting.

    Returns
    -------
    learner
    """
    from ._machines.least_squares import check_feature_map

    if not is_dask_array(X):
        raise TypeError("fit_learner reads X as a Dask array: wrap it with dask.array.from_array")
    X = known_rows(check_rows(X))
    y = as_targets(y, X.chunks[0], X.shape[0])
    if X.shape[0] == 0:
        raise ValueError("X has no rows")
    width = X.shape[1]
    if feature_map is not None:
        feature_map = check_feature_map(feature_map)
        if X.shape[1] != feature_map.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but feature_map was fitted on "
                             f"{feature_map.n_features_in_}")
        width = feature_map.n_components_
    first = not (partial and hasattr(learner, "normal_equations_"))
    if first:
        clear_fitted_state(learner)
        learner.n_features_in_ = width
        if is_classifier(learner):
            if classes is None:
                if partial:
                    raise ValueError("classes must be given on the first call to partial_fit")
                classes = da.unique(y).compute()
            learner._begin(np.asarray(classes))
        else:
            learner._begin(np.zeros((1,) + y.shape[1:]))
    elif learner.n_features_in_ != width:
        raise ValueError(f"X gives {width} features, but {type(learner).__name__} was fitted on "
                         f"{learner.n_features_in_}")
    template = _without(learner, "normal_equations_", "coef_", "intercept_")
    learner.normal_equations_.merge(map_reduce(_chunk_equations, template, X, y, feature_map=feature_map))
    return learner._solve()


def _predict_chunk(block, learner, method):
    with serial():
        return getattr(learner, method)(block)


def predict_lazily(learner, Z, method="predict"):
    """``learner.<method>`` of a row-chunked Dask array of features, lazily.

    Parameters
    ----------
    learner : fitted learner
    Z : dask.array.Array of shape (n_samples, n_features)
    method : {'predict', 'decision_function', 'predict_code'}

    Returns
    -------
    dask.array.Array
        One task per chunk of ``Z``.
    """
    check_is_fitted(learner)
    Z = check_rows(Z, "Z")
    if Z.shape[1] != learner.n_features_in_:
        raise ValueError(f"Z has {Z.shape[1]} features, but {type(learner).__name__} was fitted on "
                         f"{learner.n_features_in_}")
    # one row in memory gives the output's dtype and trailing shape
    probe = np.asarray(getattr(learner, method)(np.zeros((1, Z.shape[1]), dtype=_output_dtype(Z))))
    node = graph_node(_without(learner, "normal_equations_"),
                      f"kernelmaps-{type(learner).__name__.lower()}")
    name = f"kernelmaps-{method}-{tokenize(Z, node.key)}"
    if probe.ndim == 1:
        return da.map_blocks(_predict_chunk, Z, node, method, dtype=probe.dtype, drop_axis=1,
                             chunks=(Z.chunks[0],), meta=np.empty((0,), dtype=probe.dtype), name=name)
    return da.map_blocks(_predict_chunk, Z, node, method, dtype=probe.dtype,
                         chunks=(Z.chunks[0], (probe.shape[1],)),
                         meta=np.empty((0, probe.shape[1]), dtype=probe.dtype), name=name)
