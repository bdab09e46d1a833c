"""Input and parameter validation shared by every estimator.

One place for the rules the library's contract states: input is a finite,
numeric 2-D array, or a scipy sparse matrix where the estimator accepts one
(float32 stays float32, everything else becomes float64);
integer parameters are whole numbers, including NumPy's, and are used as Python
``int``; a size that cannot fit in memory is refused before anything is
allocated; a refit forgets everything the previous fit learned.
"""

import math
import numbers
import os
import sys
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import validate_data

FLOAT_DTYPES = (np.float64, np.float32)

#: dtype kinds that are not numbers: strings, bytes, datetimes and timedeltas.
#: NumPy would convert numeric strings and dates to float, which silently turns
#: labels, identifiers or timestamps into features; scikit-learn's own
#: transformers refuse them too.
NON_NUMERIC_KINDS = {"U": "strings", "S": "bytes", "M": "datetimes", "m": "timedeltas"}

#: Share of the available memory one estimator may plan to use. The rest is left
#: to the caller's data, the interpreter and the other processes on the machine.
MEMORY_FRACTION = 0.8


class InsufficientMemoryError(MemoryError, ValueError):
    """A parameter asks for more memory than the machine has available.

    Raised at ``fit``, before anything is allocated. It is a ``ValueError`` too,
    since the cause is a parameter value.
    """


class FeatureOverflowError(OverflowError, ValueError):
    """The result would not be finite in the working dtype.

    Raised instead of returning NaN or infinity for finite input: the message
    names the input and the parameters whose combination overflowed.
    """


# ------------------------------------------------------------------- input
def check_numeric_dtype(X, what="X"):
    """Raise ``TypeError`` when ``X`` holds strings, bytes, dates or timedeltas.

    Object arrays are checked element by element for ``str`` and ``bytes``;
    pandas frames column by column. Sparse matrices are numeric by construction.
    """
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and not hasattr(X, "format"):  # a pandas DataFrame
        kinds = [np.dtype(t).kind if isinstance(t, np.dtype) else "O" for t in dtypes]
        if any(kind in NON_NUMERIC_KINDS for kind in kinds):
            raise TypeError(f"{what} has non-numeric columns (dtypes {sorted(set(map(str, dtypes)))}): "
                            "encode them as numbers first")
        if "O" not in kinds:
            return
        X = np.asarray(X, dtype=object)
    dtype = getattr(X, "dtype", None)
    if dtype is None:
        X = np.asarray(X)
        dtype = X.dtype
    if dtype.kind in NON_NUMERIC_KINDS:
        raise TypeError(
            f"{what} holds {NON_NUMERIC_KINDS[dtype.kind]} (dtype {dtype}), not numbers: convert them "
            "to a numeric dtype first (they are not coerced silently)"
        )
    if dtype.kind == "O" and not hasattr(X, "format"):
        for value in np.asarray(X, dtype=object).ravel():
            if isinstance(value, (str, bytes, np.str_, np.bytes_)):
                raise TypeError(f"{what} holds {type(value).__name__} values such as {value!r}, not "
                                "numbers: convert them to a numeric dtype first")


def is_dask_array(X):
    """Whether ``X`` is a Dask collection, recognized without importing Dask.

    Dask is an optional extra: the core tells a Dask array apart by its type's
    module and the collection protocol, so that ``import kernelmaps`` never
    imports it.
    """
    return type(X).__module__.partition(".")[0] == "dask" and hasattr(X, "__dask_graph__")


def dask_support():
    """The :mod:`kernelmaps.dask` module, or an ``ImportError`` saying how to get it."""
    from importlib import import_module

    return import_module("kernelmaps.dask")


def check_not_dask(estimator, X, what="X"):
    """Refuse a Dask collection where an estimator works in memory.

    ``np.asarray`` would compute the whole collection into memory, silently, which
    is what a Dask user never wants; the error names what does accept Dask input.
    """
    if is_dask_array(X):
        raise TypeError(
            f"{type(estimator).__name__} works in memory and got a Dask collection as {what}. "
            "Feature maps (fit on a sample, lazy transform), the one-pass learners "
            "(LeastSquaresClassifier, LeastSquaresRegressor, ECOCClassifier) and the Nyström kernel "
            "ridge machines (NystroemKernelRidge, NystroemKernelRidgeClassifier) accept Dask arrays; "
            f"for {type(estimator).__name__}, compute a sample first (kernelmaps.dask.sample_rows)."
        )


def check_input(estimator, X, y="no_validation", *, reset, accept_sparse=None, **kwargs):
    """scikit-learn's ``validate_data`` with the library's input contract.

    ``X`` must be numeric (:func:`check_numeric_dtype`), finite and 2-D;
    float32 stays float32 and any other numeric dtype becomes float64. Keyword
    arguments are passed to ``validate_data`` (e.g. ``multi_output``).

    Parameters
    ----------
    accept_sparse : bool, 'densify' or None, default=None
        What a scipy sparse ``X`` (any format) becomes:

        * ``True``: a CSR matrix in canonical format (sorted indices, no
          duplicates), so that row slices are cheap and a row's entries come in
          column order, as a dense row's do. Other formats are converted once;
          a CSR input already canonical is not copied. Its ``data`` is checked
          for NaN and infinity.
        * ``'densify'``: validated as for ``True``, then returned dense.
        * ``False``: refused with a ``TypeError`` that says sparse input is not
          supported.
        * ``None``: the estimator's ``_sparse_input`` attribute (``False``
          when it has none). Feature maps set ``'densify'``, so that a fit
          written for dense rows (the learned maps) gets them; their
          ``fit`` and ``transform`` ask for ``True``.
    """
    check_not_dask(estimator, X)
    if not isinstance(y, str) and y is not None:
        check_not_dask(estimator, y, "y")
    check_numeric_dtype(X)
    if accept_sparse is None:
        accept_sparse = getattr(estimator, "_sparse_input", False)
    kwargs.setdefault("dtype", list(FLOAT_DTYPES))
    kwargs.setdefault("order", "C")
    result = validate_data(estimator, X, y, reset=reset, accept_sparse=["csr"] if accept_sparse else False,
                           **kwargs)
    validated = result[0] if isinstance(result, tuple) else result
    if sp.issparse(validated):
        if accept_sparse == "densify":
            validated = validated.toarray()
        elif not validated.has_canonical_format:
            if validated is X:  # never sort the caller's matrix in place
                validated = validated.copy()
            validated.sum_duplicates()
        result = (validated,) + result[1:] if isinstance(result, tuple) else validated
    return result


def check_float_array(estimator, X, *, reset, accept_sparse=None):
    """Validate ``X`` as a finite, non-empty, numeric 2-D float32 or float64 array.

    float32 input stays float32; any other numeric input becomes float64. NaN, inf,
    empty input and (with ``reset=False``) a feature count other than the one
    seen in ``fit`` raise ``ValueError`` naming the problem; non-numeric input
    raises ``TypeError``. Sparse input follows ``accept_sparse`` (see
    :func:`check_input`): a canonical CSR matrix, a dense array, or an error.
    """
    return check_input(estimator, X, reset=reset, accept_sparse=accept_sparse, ensure_min_samples=1,
                       ensure_min_features=1)


# -------------------------------------------------------------- parameters
def check_integer(value, name, minimum=1):
    """``value`` as a Python ``int`` of at least ``minimum``.

    NumPy integers are accepted and converted, so that arithmetic on them
    (``2 * np.uint8(200)``) never wraps around; booleans and floats are refused.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def check_n_components(value, name="n_components", minimum=1):
    """An output width (or any count): :func:`check_integer` with minimum 1."""
    return check_integer(value, name, minimum)


def check_bool(value, name):
    """``value`` as a ``bool``; anything but a Python or NumPy boolean is refused by name."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_choice(value, name, choices):
    """Reject a string option outside ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return value


def check_positive(value, name, *, allow_zero=False):
    """``value`` as a finite float that is positive (or non-negative)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    ok = value >= 0 if allow_zero else value > 0
    if not (np.isfinite(value) and ok):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value}")
    return value


def check_regression_targets(estimator, y, classifier):
    """Regression targets as a finite float64 vector; class labels are refused by name.

    Numbers stored as objects are converted; strings raise a ``ValueError`` that
    names ``classifier``, the estimator to use for class labels.
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        # scikit-learn's rule for an estimator of one target: take the column, and say so
        warnings.warn(f"{type(estimator).__name__} fits one target: a column-vector y of shape {y.shape} was "
                      "passed, and is used as its 1-D column; predictions are 1-D", DataConversionWarning,
                      stacklevel=user_stacklevel())
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D, got shape {y.shape}")
    if y.dtype.kind in "OUS":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{type(estimator).__name__} needs numeric targets, got labels of "
                             f"dtype {y.dtype}; for class labels use {classifier}") from None
    y = y.astype(np.float64)
    if not np.isfinite(y).all():
        raise ValueError("y contains NaN or infinity")
    return y


def check_fraction(value, name, *, allow_zero=True):
    """``value`` as a float in ``[0, 1)``, or ``(0, 1)`` with ``allow_zero=False``.

    A held-out share may be 0 (no split: ``validation_fraction``); a test share
    that must leave rows on both sides may not (``test_size``).
    """
    value = check_positive(value, name, allow_zero=allow_zero)
    if value >= 1.0:
        interval = "[0, 1)" if allow_zero else "(0, 1)"
        raise ValueError(f"{name} must be in {interval}, got {value}")
    return value


def check_generator(value, name="random_state"):
    """``value`` (an int >= 0, None or a ``numpy.random.Generator``) as a Generator.

    The data generators use NumPy's Generator API; the estimators keep
    scikit-learn's ``check_random_state`` (a ``RandomState``), so that a seed
    draws what scikit-learn's own estimators draw.
    """
    if isinstance(value, np.random.Generator):
        return value
    if value is not None:
        value = check_integer(value, name, 0)
    return np.random.default_rng(value)


# ------------------------------------------------------------------ memory
def available_memory_bytes():
    """Memory this process can still allocate: the smaller of the system's
    available memory and the room left under a cgroup (container) limit."""
    available = None
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if available is None:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return math.inf
    try:
        with open("/sys/fs/cgroup/memory.max") as limit_file, \
                open("/sys/fs/cgroup/memory.current") as current_file:
            limit = limit_file.read().strip()
            if limit != "max":
                available = min(available, int(limit) - int(current_file.read().strip()))
    except (OSError, ValueError):
        pass
    return max(0, available)


def format_bytes(n_bytes):
    """``n_bytes`` in the largest binary unit that keeps it above 1, e.g. ``'37.3 GiB'``."""
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024


def check_fits_in_memory(n_bytes, parameter, what, remedy=None):
    """Refuse a plan that needs more than :data:`MEMORY_FRACTION` of free memory.

    Parameters
    ----------
    n_bytes : int or float
        Planned allocation.
    parameter : str
        The parameter (or parameters) that set the size, named in the error,
        e.g. ``"n_components=1000000000"``.
    what : str
        What would be allocated, e.g. ``"the projection matrix and one transform
        block"``.
    remedy : str or None
        What the user can change, appended to the error.

    Raises
    ------
    InsufficientMemoryError
    """
    available = available_memory_bytes()
    if n_bytes > MEMORY_FRACTION * available:
        raise InsufficientMemoryError(
            f"{parameter} is too large: {what} would take {format_bytes(n_bytes)}, but only "
            f"{format_bytes(available)} of memory is available" + ("" if remedy is None else f"; {remedy}")
        )


def first_negative(A):
    """``(row, column, value)`` of the first entry of ``A`` that is not ``>= 0`` (a
    negative or NaN), in row-major order, or ``None``; ``A`` dense or sparse."""
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        A.sum_duplicates()
        negative = np.flatnonzero(~(A.data >= 0))
        if not negative.size:
            return None
        position = negative[0]
        row = int(np.searchsorted(A.indptr, position, side="right") - 1)
        return row, int(A.indices[position]), float(A.data[position])
    A = np.asarray(A)
    negative = np.flatnonzero(~(A >= 0))
    if not negative.size:
        return None
    row, col = np.unravel_index(negative[0], A.shape)
    return int(row), int(col), float(A[row, col])


def check_non_negative(A, who, reads="", name="X"):
    """Refuse a negative entry of dense or sparse ``A``, naming ``who`` and the first such entry.

    The message reads "Negative values in data passed to {who}: {name}[row, col] =
    value", followed by ``reads`` (what the input must be) when given.
    """
    found = first_negative(A)
    if found is not None:
        row, col, value = found
        raise ValueError(f"Negative values in data passed to {who}: {name}[{row}, {col}] = {value!r}"
                         + (f". {reads}" if reads else ""))


# ---------------------------------------------------------------- warnings
def user_stacklevel():
    """The ``stacklevel`` that makes a warning point at the first caller outside kernelmaps.

    Call it as the ``stacklevel`` argument of ``warnings.warn``: the paths to a
    warning (``fit``, a Dask fit, a cross-validation inside ``fit``) differ in
    depth, and the user should see their own line whichever was taken.
    """
    # the folder of the whole package: this module sits in its _core/ subfolder
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and _inside_the_library(os.path.abspath(frame.f_code.co_filename), package):
        frame, level = frame.f_back, level + 1
    return level


#: scikit-learn's ``set_output`` wrapper stands between the user's ``transform`` or
#: ``fit_transform`` call and the estimator's own method: a frame of the call, not a caller.
_SET_OUTPUT_WRAPPER = os.path.join("sklearn", "utils", "_set_output.py")


def _inside_the_library(filename, package):
    return filename.startswith(package) or filename.endswith(_SET_OUTPUT_WRAPPER)


# -------------------------------------------------------------- fitted state
def clear_fitted_state(estimator):
    """Delete every fitted attribute (``name_``, not dunder) of ``estimator``.

    Called at the start of each ``fit``, so that nothing an earlier fit learned
    (a classifier, a feature count, classes) survives a refit that does not set
    it again.
    """
    for name in [key for key in vars(estimator) if key.endswith("_") and not key.startswith("__")]:
        delattr(estimator, name)
    for private in getattr(estimator, "_fitted_private", ()):
        estimator.__dict__.pop(private, None)


def validation_rows(n, fraction, stratify, seed, remedy):
    """Training and validation row indices for choosing a hyperparameter on held-out rows.

    ``round(fraction * n)`` rows (at least one) are held out, stratified by the
    labels ``stratify`` when every class has two rows or more (plainly random
    otherwise).

    Parameters
    ----------
    n : int
    fraction : float in (0, 1)
    stratify : ndarray of int or None
    seed : int
    remedy : str
        What the user can do when ``n`` is too small, for the error message.

    Returns
    -------
    train, validation : ndarray of int
    """
    from sklearn.model_selection import train_test_split

    n_val = max(1, int(round(fraction * n)))
    if n - n_val < 2:
        raise ValueError(f"{n} rows are too few to hold out a validation split; {remedy}")
    if stratify is not None and np.bincount(stratify).min() < 2:
        stratify = None
    try:
        return train_test_split(np.arange(n), test_size=n_val, random_state=seed, stratify=stratify)
    except ValueError:      # too few rows per class for a stratified split
        return train_test_split(np.arange(n), test_size=n_val, random_state=seed)
