"""The feature-map base classes and the estimator registry.

Every estimator of the library subclasses :class:`FeatureMap` (dense output),
:class:`~kernelmaps._core.sparse_map.SparseFeatureMap` (sparse output) or, for learners
and exact baselines, :class:`RegisteredEstimator`, and declares its registry
metadata as class attributes. Defining a class with a ``name`` registers it: the contract tests
and the asv suite are generated from :data:`REGISTRY`, so a new algorithm gets them
without editing a test.
"""

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._kernels.exact import exact_kernel
from .._numba.fastmath_arrays import all_finite
from .parallel import ThreadScratch, block_rows, n_worker_threads, run_row_blocks
from .rows import dense_rows, densify_rows
from .validation import (FeatureOverflowError, check_fits_in_memory, check_float_array, check_n_components,
                         clear_fitted_state, dask_support, is_dask_array)

#: name -> class, filled as the algorithm modules are imported.
REGISTRY: dict = {}

#: The kinds an entry of the registry can be.
KINDS = ("feature_map", "learner", "baseline")

class RegisteredEstimator:
    """Mixin holding the registry metadata every public estimator declares.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"rff"``.
    paper : str
        The paper the class implements.
    kind : {"feature_map", "learner", "baseline"}
    kernel_family : str
        ``"shift_invariant"``, ``"dot_product"``, ``"any"`` or ``"learned"``.
    test_params : dict
        Small constructor parameters for the contract tests.
    benchmark : dict or None
        ``{"n_components": [...], "params": {...}}``: the asv grid (the suite runs
        every map and peer at the union of these widths, so that each has its
        comparison). ``None`` keeps the class out of the generated asv suite.
        Optional keys: ``"speed": {"n_components": D, "params": {...}}``, the
        width and parameters of the speed workload where D = 4096 does not suit
        the method; ``"slower_because"``: one sentence on why the method does more
        work than its peer, which the report prints where it is slower.
    unbiased : bool
        A map whose ``Z(x).Z(y)`` is an unbiased estimate of its kernel over the
        random draws (held by ``tests/test_kernel_approximation.py``).
    """

    name: ClassVar[str]
    paper: ClassVar[str] = ""
    kind: ClassVar[str] = "feature_map"
    kernel_family: ClassVar[str] = ""
    test_params: ClassVar[dict] = {}
    benchmark: ClassVar[Any] = None
    unbiased: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            return
        if cls.kind not in KINDS:
            raise TypeError(f"{cls.__name__}.kind must be one of {KINDS}, got {cls.kind!r}")
        if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
            previous = REGISTRY[cls.name]
            if (previous.__module__, previous.__qualname__) != (cls.__module__, cls.__qualname__):
                raise TypeError(f"registry name {cls.name!r} is taken by {previous.__name__}")
        REGISTRY[cls.name] = cls

    @classmethod
    def peers(cls):
        """Peer implementations benchmarked beside this class.

        Returns
        -------
        dict
            ``label -> factory(n_components, random_state, **params)`` returning an
            unfitted estimator that approximates the same kernel, or ``{}``.
        """
        return {}


def encode_classes(estimator, y):
    """Set ``estimator.classes_`` from classification targets; return label indices."""
    check_classification_targets(y)
    estimator.classes_ = np.unique(y)
    if len(estimator.classes_) < 2:
        raise ValueError(f"need at least 2 classes, got {len(estimator.classes_)} class")
    return np.searchsorted(estimator.classes_, y)


def classes_from_scores(classes, scores):
    """Predicted classes: the sign of binary scores, else the largest score."""
    if scores.ndim == 1:
        return classes[(scores > 0).astype(np.intp)]
    return classes[np.argmax(scores, axis=1)]


def one_vs_rest_code(n_classes):
    """The ±1 one-vs-rest code: row ``c`` is class ``c``'s targets.

    One column (``[-1], [+1]``) for two classes, else ``2 I - 1``; the targets of
    labels ``y`` are ``one_vs_rest_code(C)[y]``.
    """
    if n_classes == 2:
        return np.array([[-1.0], [1.0]])
    return 2.0 * np.eye(n_classes) - 1.0


class KernelName(str):
    """A kernel-name parameter that is also callable as the exact kernel.

    The issue's public names ask for both a constructor parameter ``kernel='gaussian'``
    and a method ``estimator.kernel(X, Y)``. The parameter value is stored as this
    ``str`` subclass: it compares, prints and pickles as the plain string, and calling
    it evaluates the exact Gram matrix of the estimator it was read from.
    """

    def __call__(self, X, Y=None):
        estimator = self.__dict__.get("_owner")
        if estimator is None:
            raise TypeError(f"{str(self)!r} is a kernel name read outside an estimator")
        check_is_fitted(estimator)
        return estimator._kernel_gram(X, Y)

    def __repr__(self):
        return str.__repr__(self)

    def __reduce__(self):
        return (str, (str(self),))

    # A copy is a fresh, unowned name, so that a clone (which deep-copies the
    # parameters) never shares the object, and the owner it reports, with the original.
    def __copy__(self):
        return KernelName(str(self))

    def __deepcopy__(self, memo):
        return KernelName(str(self))


class KernelParameter:
    """Data descriptor for a ``kernel`` constructor parameter (see :class:`KernelName`).

    The value is stored unchanged, so ``clone`` and ``set_params`` keep the
    identity of what they pass; a plain string is wrapped once, on first read.
    """

    def __set_name__(self, owner, name):
        self.slot = "_" + name + "_parameter"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        value = obj.__dict__[self.slot]
        if type(value) is str:
            value = KernelName(value)
            obj.__dict__[self.slot] = value
        if isinstance(value, KernelName):
            # a strong reference: ``Est().fit(X).kernel(X)`` must work on a temporary
            value.__dict__["_owner"] = obj
        return value

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value


class RowBlockMap(RegisteredEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """What :class:`FeatureMap` and :class:`~kernelmaps._core.sparse_map.SparseFeatureMap` share.

    They differ only in where ``transform`` stores the features of a row block.
    This holds the rest once: ``fit`` with its validation and memory plan, the
    loop over row blocks, the overflow report, the feature names and the exact
    kernel. Subclass one of the two, not this class.
    """

    #: Whether ``_transform_block`` takes a CSR row block (the map's first step
    #: is a product with ``X``); otherwise sparse blocks are densified for it.
    accepts_sparse_blocks: ClassVar[bool] = False
    #: Sparse input to a validation that does not ask for CSR (a subclass's own
    #: ``fit``, ``kernel``) is densified (see :func:`kernelmaps._core.validation.check_input`).
    _sparse_input: ClassVar[str] = "densify"

    def fit(self, X, y=None):
        """Draw (or learn) the feature map.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A Dask array is read through a bounded, seeded sample of its rows
            (:func:`kernelmaps.dask.fit`).
        y : ignored by unsupervised maps

        Returns
        -------
        self
        """
        if is_dask_array(X):
            return dask_support().fit(self, X, y)
        clear_fitted_state(self)
        X = check_float_array(self, X, reset=True, accept_sparse=True)
        self._validate_params_common()
        self._check_memory_plan(X.shape[1])
        rng = check_random_state(getattr(self, "random_state", None))
        self._fit(X, rng)
        self._check_fitted_state_finite()
        return self

    def _check_fitted_state_finite(self):
        """Refuse parameters that make the map itself non-finite (e.g. ``gamma=1e308``:
        frequencies of standard deviation ``sqrt(2 gamma)`` overflow)."""
        for key, value in vars(self).items():
            if (key.endswith("_") and isinstance(value, np.ndarray) and value.dtype.kind in "fc"
                    and not np.isfinite(value).all()):
                params = {name: val for name, val in self.get_params(deep=False).items()
                          if isinstance(val, (int, float, np.number)) and not isinstance(val, bool)}
                raise ValueError(
                    f"{type(self).__name__}: the parameters {params} give a map with non-finite "
                    f"entries ({key}); choose values whose frequencies or weights stay finite "
                    "(e.g. a smaller gamma)"
                )

    def _validate_params_common(self):
        self.n_components_ = check_n_components(self.n_components)

    def _planned_bytes(self, n_features):
        """``(state, per_row)``: bytes of fitted state and of one transform row.

        Computed from the parameters before anything is drawn, so that an
        impossible width is refused before it is allocated. The default fits a
        dense float64 ``n_features x n_components`` projection and an output row
        plus as much scratch; maps with other state override it.
        """
        D = self.n_components_
        return 8 * (n_features * D + D), 8 * 2 * D

    def _check_memory_plan(self, n_features):
        state, per_row = self._planned_bytes(n_features)
        rows = n_worker_threads()
        check_fits_in_memory(
            state + rows * per_row, f"n_components={self.n_components_}",
            f"the fitted map (n_features={n_features}) and one row block per worker thread",
        )

    def _validated_transform_input(self, X):
        """``X`` checked against the fitted map, as ``transform`` reads it."""
        check_is_fitted(self)
        X = check_float_array(self, X, reset=False, accept_sparse=True)
        self._check_transform_input(X)
        return X

    def _map_row_blocks(self, X, store):
        """Call ``store(start, stop, block, context)`` on the worker threads for every
        row block ``X[start:stop]`` of validated ``X`` (densified, one block at a time,
        unless the class accepts sparse blocks); ``context`` is ``_prepare_transform``'s."""
        densify = sp.issparse(X) and not self.accepts_sparse_blocks
        step = self._block_step(X.dtype, X.shape[1], densify)
        context = self._prepare_transform(X.dtype)
        dense_blocks = ThreadScratch() if densify else None

        def work(start, stop):
            block = X[start:stop]
            if densify:
                block = densify_rows(block, dense_blocks.get("rows", block.shape, X.dtype))
            store(start, stop, block, context)

        run_row_blocks(X.shape[0], step, work)

    def _block_step(self, dtype, n_features, densify=False):
        """Rows per block of ``transform``: blocks start at multiples of it.

        BLAS picks its kernel by the product's size, so a row's last bits can
        depend on the rows it is computed with; a lazy transform that keeps its
        chunk boundaries on multiples of this step computes every row in the same
        block as the in-memory transform, bit for bit.
        """
        # a densified block is scratch too: wide sparse input gets shorter blocks
        elements = self._block_elements_per_row() + (n_features if densify else 0)
        return block_rows(elements * np.dtype(dtype).itemsize)

    def _raise_overflow(self, X, out, block_start):
        bad_rows = np.flatnonzero(~np.isfinite(out).all(axis=1))
        row = int(bad_rows[0]) if len(bad_rows) else block_start
        x = dense_rows(X, slice(row, row + 1))
        params = {key: value for key, value in self.get_params(deep=False).items()
                  if key in ("gamma", "degree", "coef0", "scale", "coefficients") or key.startswith("gamma")}
        fitted = {key: getattr(self, key) for key in ("gamma_",) if hasattr(self, key)}
        raise FeatureOverflowError(
            f"{type(self).__name__}.transform overflowed {np.dtype(X.dtype).name}: {len(bad_rows)} of "
            f"{X.shape[0]} rows give non-finite features, first row {row} (max |x| = "
            f"{float(np.max(np.abs(x))):.3g}), with parameters {params | fitted}. Rescale the input "
            "or choose parameters whose features stay finite."
        )

    def _check_transform_input(self, X):
        """Refuse validated input outside the map's domain (e.g. ``x <= -c`` for a
        kernel of ``log(x + c)``) with a ``ValueError``; the default accepts all."""

    def _prepare_transform(self, dtype):
        """Per-call set-up shared by the blocks (e.g. parameters cast to ``dtype``).

        Returns the ``context`` handed to every ``_transform_block`` call. It must
        not modify the estimator.
        """
        return None

    def _block_elements_per_row(self):
        """Elements of scratch memory one row needs, in units of the dtype size."""
        return self.n_components_

    @property
    def _n_features_out(self):
        # what ClassNamePrefixFeaturesOutMixin names; missing until fitted
        return self.n_components_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def kernel(self, X, Y=None):
        """Exact Gram matrix of the kernel this fitted map approximates.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n, n_features)
        Y : {array-like, sparse matrix} of shape (m, n_features) or None
            ``None`` means ``Y = X``. Sparse input is densified.

        Returns
        -------
        K : ndarray of shape (n, m)
        """
        check_is_fitted(self)
        return self._kernel_gram(X, Y)

    def _kernel_gram(self, X, Y):
        return self._exact_gram(X, Y, **self._kernel_params())

    def _kernel_params(self):
        """Keyword arguments of :func:`exact_kernel` for the fitted map."""
        raise NotImplementedError(f"{type(self).__name__} does not approximate a fixed kernel")

    def _exact_gram(self, X, Y, **kernel_params):
        """Validated exact Gram matrix for ``kernel(X, Y)`` implementations."""
        check_is_fitted(self)
        X = check_float_array(self, X, reset=False, accept_sparse=True)
        Y = None if Y is None else check_float_array(self, Y, reset=False, accept_sparse=True)
        return exact_kernel(X, Y, **kernel_params)


class FeatureMap(RowBlockMap):
    """Base class of the explicit feature maps ``Z: R^d -> R^D``.

    Subclasses store their constructor parameters unchanged and implement

    * ``_fit(X, rng)``: draw or learn the map from validated ``X`` (float32 or
      float64; a canonical CSR matrix when the input is sparse, see
      :func:`kernelmaps._core.validation.check_input`) and a ``numpy.random.RandomState``;
      set fitted attributes ending in ``_``. It must not depend on the thread count. A map
      that needs dense rows at fit densifies what it reads (e.g.
      :func:`kernelmaps._core.rows.bandwidth_input`).
    * ``_transform_block(X, out, context)``: write the features of the rows ``X`` into the
      preallocated ``out`` (``X.dtype``, shape ``(len(X), n_components)``). It runs
      on worker threads (:func:`run_row_blocks`) with BLAS limited to one thread,
      so it must be thread-safe and call serial ``nogil`` kernels. ``X`` is a
      dense block, or a CSR block when the class sets
      ``accepts_sparse_blocks = True``. It returns ``True`` only when its own
      kernels have established that every output of the block is finite (the
      cosine epilogue does, at no cost); otherwise (``None``) the base class
      checks the block for non-finite features while it is still in cache.
    * ``_prepare_transform(dtype)`` (optional): per-call set-up shared by the blocks,
      returned as the ``context`` argument; it must not modify the estimator.
    * ``_block_elements_per_row()``: working elements (of the dtype) one row needs in
      ``_transform_block`` beyond ``out``, used to size the blocks.
    * ``kernel(X, Y=None)``: the exact kernel the map approximates.

    The base class validates input, keeps float32 as float32, sizes row blocks so
    that peak memory is the output plus at most :data:`MAX_BLOCK_BYTES` of scratch
    per worker thread, and checks
    ``n_components`` is the exact output width. ``get_feature_names_out`` names
    the ``n_components_`` outputs after the class (``randomfourierfeatures0``,
    ...), so ``set_output(transform="pandas")`` works.

    Sparse input (any scipy format, kept as CSR) is accepted by every map and
    the output is always dense (maps with sparse output subclass
    :class:`~kernelmaps._core.sparse_map.SparseFeatureMap`). Maps whose first step is
    a product with ``X`` set ``accepts_sparse_blocks = True`` and receive sparse
    row blocks; for the others ``transform`` densifies one row block at a time
    into a scratch buffer, so that ``X`` itself is never densified.
    """

    def transform(self, X):
        """Map ``X`` to the feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            float32 if ``X`` is float32, float64 otherwise; dense for sparse ``X``
            too (a DataFrame under ``set_output(transform="pandas")``). A
            row-chunked Dask array gives a lazy Dask array, chunk by chunk
            (:func:`kernelmaps.dask.transform`).

        Raises
        ------
        FeatureOverflowError
            If a feature is not finite in the working dtype (the input's
            magnitude combined with the map's parameters overflows).
        """
        if is_dask_array(X):
            return dask_support().transform(self, X)
        X = self._validated_transform_input(X)
        out = np.empty((X.shape[0], self.n_components_), dtype=X.dtype)
        overflowed = []

        def store(start, stop, block, context):
            known_finite = self._transform_block(block, out[start:stop], context)
            # checked while the block is still in cache: one cheap pass, unless
            # the block's own epilogue has already established it
            if known_finite is not True and not all_finite(out[start:stop]):
                overflowed.append(start)

        self._map_row_blocks(X, store)
        if overflowed:
            self._raise_overflow(X, out, min(overflowed))
        return out
