"""Dataset containers, the registry and the small helpers every loader shares."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

#: The kinds of source a registered dataset can come from.
KINDS = ("bundled", "sklearn", "synthetic", "libsvm")
TASKS = ("classification", "regression")

#: Environment variable naming the cache directory for downloaded files.
DATA_HOME_ENV = "KERNELMAPS_DATA"


class DatasetNotAvailableError(OSError):
    """A dataset file is not in the cache and could not be downloaded.

    The message names the URL that was tried, the file name to place and the
    directory to place it in; the same are available as the attributes
    ``url``, ``filename`` and ``directory``.
    """

    def __init__(self, message: str, *, url: str, filename: str, directory: Path):
        super().__init__(message)
        self.url, self.filename, self.directory = url, filename, directory

    def __str__(self) -> str:
        return self.args[0]


class ChecksumMismatchError(OSError):
    """A data file's checksum differs from the expected one.

    Attributes ``filename``, ``algorithm``, ``expected`` and ``actual`` hold
    the details named in the message.
    """

    def __init__(self, message: str, *, filename: str, algorithm: str, expected: str,
                 actual: str):
        super().__init__(message)
        self.filename, self.algorithm = filename, algorithm
        self.expected, self.actual = expected, actual

    def __str__(self) -> str:
        return self.args[0]


def file_digests(path: os.PathLike) -> dict[str, str]:
    """Hex SHA-256 and MD5 digests of a file, read once in 1 MiB chunks."""
    sha256, md5 = hashlib.sha256(), hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha256.update(chunk)
            md5.update(chunk)
    return {"sha256": sha256.hexdigest(), "md5": md5.hexdigest()}


def _readonly(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, eq=False)
class Dataset:
    """A train/test split of one dataset, with its metadata.

    Instances are returned by :func:`kernelmaps.datasets.load`; every call
    returns freshly allocated, writable arrays.

    Attributes
    ----------
    name : str
        Registered name of the dataset (lower case).
    X_train, X_test : ndarray of shape (n_train, n_features), (n_test, n_features)
        Features, C-contiguous float64.
    y_train, y_test : ndarray of shape (n_train,), (n_test,)
        Targets. int64 class indices ``0 .. n_classes - 1`` for classification,
        float64 values for regression.
    task : {'classification', 'regression'}
        The learning task.
    n_classes : int or None
        Number of classes; None for regression.
    class_names : tuple of str or None
        ``class_names[k]`` is the original label of class index ``k``;
        None for regression.
    source : str
        Short text saying where the data comes from.
    license : str
        Short text giving the licence of the data, as far as known.
    description : str
        Size, split and preprocessing, in a few sentences.
    extras : mapping
        Read-only mapping of dataset-specific metadata (empty for most
        datasets). ``planted_groups`` stores ``groups`` (group index of every
        column) and ``informative`` (indices of the informative groups);
        LIBSVM datasets store the SHA-256 of the files they were read from.

    Notes
    -----
    The class is a frozen dataclass compared by identity (``eq=False``):
    element-wise array comparison has no single truth value.
    """

    name: str
    X_train: np.ndarray
    X_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    task: str
    n_classes: int | None
    class_names: tuple[str, ...] | None
    source: str
    license: str
    description: str
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")
        y_dtype = np.int64 if self.task == "classification" else np.float64
        for part in ("train", "test"):
            X = getattr(self, "X_" + part)
            y = getattr(self, "y_" + part)
            if not (isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype == np.float64
                    and X.flags.c_contiguous):
                raise ValueError(f"X_{part} must be a C-contiguous float64 2-D array")
            if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype == y_dtype):
                raise ValueError(f"y_{part} must be a 1-D {np.dtype(y_dtype)} array")
            if X.shape[0] != y.shape[0]:
                raise ValueError(f"X_{part} has {X.shape[0]} rows but y_{part} has "
                                 f"{y.shape[0]}")
        if self.X_train.shape[1] != self.X_test.shape[1]:
            raise ValueError("X_train and X_test have different numbers of features")
        object.__setattr__(self, "extras", _readonly(self.extras))

    @property
    def n_features(self) -> int:
        """Number of features (columns of ``X_train`` and ``X_test``)."""
        return self.X_train.shape[1]

    def __repr__(self) -> str:
        classes = "" if self.n_classes is None else f", n_classes={self.n_classes}"
        return (f"Dataset(name={self.name!r}, task={self.task!r}, "
                f"n_train={self.X_train.shape[0]}, n_test={self.X_test.shape[0]}, "
                f"n_features={self.n_features}{classes})")


@dataclass(frozen=True)
class DatasetInfo:
    """Metadata of a registered dataset, available without loading it.

    Returned by :func:`kernelmaps.datasets.info`.

    Attributes
    ----------
    name : str
        Registered name.
    kind : {'bundled', 'sklearn', 'synthetic', 'libsvm'}
        Where the data comes from: shipped in the package, shipped with
        scikit-learn, generated, or downloaded in LIBSVM format.
    task : {'classification', 'regression'}
        The learning task.
    n_features : int
        Number of features (for synthetic sets: with the default options).
    n_train, n_test : int
        Split sizes (for synthetic sets: with the default options).
    n_classes : int or None
        Number of classes; None for regression.
    class_names : tuple of str or None
        Original labels, in class-index order; None for regression.
    source, license, description : str
        As in :class:`Dataset`.
    options : mapping
        Read-only mapping of the options :func:`load` accepts for this
        dataset, with their default values.
    """

    name: str
    kind: str
    task: str
    n_features: int
    n_train: int
    n_test: int
    n_classes: int | None
    class_names: tuple[str, ...] | None
    source: str
    license: str
    description: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "options", _readonly(self.options))


@dataclass(frozen=True)
class Entry:
    """One registry entry: the metadata and the function that loads it.

    ``loader(options, data_home)`` receives the validated options (defaults
    filled in) and the resolved cache directory, and returns a Dataset.
    """

    info: DatasetInfo
    loader: Callable[[dict, Path], Dataset]


REGISTRY: dict[str, Entry] = {}


def register(info: DatasetInfo, loader: Callable[[dict, Path], Dataset]) -> None:
    if info.kind not in KINDS:
        raise ValueError(f"unknown kind {info.kind!r}")
    if info.name in REGISTRY:
        raise ValueError(f"dataset {info.name!r} is already registered")
    REGISTRY[info.name] = Entry(info, loader)


def resolve_data_home(data_home: str | os.PathLike | None) -> Path:
    """The cache directory: argument, else $KERNELMAPS_DATA, else ~/.cache/kernelmaps."""
    if data_home is None:
        data_home = os.environ.get(DATA_HOME_ENV) or Path("~", ".cache", "kernelmaps")
    return Path(data_home).expanduser().resolve()


# --------------------------------------------------------------------------- helpers


def seeded_split(n_samples: int, n_train: int, n_test: int, seed: int):
    """Row indices of a seeded random split: a permutation, cut in two.

    ``n_train + n_test`` may be smaller than ``n_samples``; the remaining rows
    are left out.
    """
    if n_train + n_test > n_samples:
        raise ValueError(f"cannot take {n_train} + {n_test} rows from {n_samples}")
    perm = np.random.default_rng(seed).permutation(n_samples)
    return perm[:n_train], perm[n_train:n_train + n_test]


def encode_labels(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Map every label to its index in the sorted array ``classes`` (int64).

    Raises ValueError if a label is not one of ``classes``.
    """
    index = np.searchsorted(classes, labels)
    index = np.clip(index, 0, len(classes) - 1)
    bad = classes[index] != labels
    if np.any(bad):
        raise ValueError(f"unexpected label {labels[np.argmax(bad)]!r}; "
                         f"expected one of {list(classes)}")
    return index.astype(np.int64)


#: Metadata fields a Dataset takes from its DatasetInfo.
_SHARED_FIELDS = ("name", "task", "n_classes", "class_names", "source", "license",
                  "description")


def build_dataset(info: DatasetInfo, X_train, X_test, y_train, y_test,
                  **changes: Any) -> Dataset:
    """Build a Dataset from its four arrays, with metadata from ``info``.

    The arrays are used as they are when they already have the right dtype and
    layout, so pass arrays nobody else holds. Keyword arguments override single
    fields (e.g. ``description`` or ``extras``).
    """
    y_dtype = np.int64 if info.task == "classification" else np.float64
    fields = {name: getattr(info, name) for name in _SHARED_FIELDS}
    fields.update(changes)
    return Dataset(
        X_train=np.ascontiguousarray(X_train, dtype=np.float64),
        X_test=np.ascontiguousarray(X_test, dtype=np.float64),
        y_train=np.ascontiguousarray(y_train, dtype=y_dtype),
        y_test=np.ascontiguousarray(y_test, dtype=y_dtype),
        **fields,
    )


def make_dataset(info: DatasetInfo, X: np.ndarray, y: np.ndarray, train, test,
                 **changes: Any) -> Dataset:
    """Build a Dataset from full arrays and row selections (index arrays or slices).

    The parts are copies that share no memory with ``X`` and ``y``.
    """
    return build_dataset(info, _take(X, train), _take(X, test), _take(y, train),
                         _take(y, test), **changes)


def _take(a: np.ndarray, rows) -> np.ndarray:
    """Rows of ``a`` as a new C-contiguous array that shares no memory with ``a``."""
    out = np.ascontiguousarray(a[rows])
    return out.copy() if np.may_share_memory(out, a) else out
