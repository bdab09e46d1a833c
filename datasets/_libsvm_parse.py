"""Parsing LIBSVM files, and identifying by their content the files without a pin.

No published checksum of ``cpusmall_scale`` or ``cadata`` was found, and none
is invented, so these two files are identified by their content instead: the
file must parse, hold exactly the number of rows the LIBSVM page lists for it
(8192 and 20640), have ``n_features`` as its largest feature index (12 and 8)
and contain only finite values. A file that fails (an empty or truncated
download, an error page, another data set) is refused with a ``ValueError``
naming the expected and the found counts, and nothing about it is recorded: a
download is deleted and a cached copy is moved aside to ``<file>.rejected``,
so the genuine file is accepted when it comes. Only a file that passed is
recorded in the manifest; later copies must then match that SHA-256. A manifest
entry that trusted such a file on first use, without any check (a cache may
hold one; this package writes none), proves nothing and is ignored (and
replaced once a file passes).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ._base import encode_labels
from ._libsvm_checksums import LibsvmSpec


def _read(path: Path, name: str, spec: LibsvmSpec):
    """Dense X and encoded y from a LIBSVM file (``name``: its proper file name)."""
    from sklearn.datasets import load_svmlight_file

    try:
        X, y = load_svmlight_file(str(path), n_features=spec.n_features,
                                  dtype=np.float64, zero_based=False)
        if spec.task == "classification":
            y = encode_labels(y, np.array(spec.classes))
    except (ValueError, EOFError, OSError) as exc:     # bad text, bad bz2 stream
        raise ValueError(f"{name} is not a valid LIBSVM file for dataset "
                         f"{spec.name!r} ({type(exc).__name__}: {exc})") from exc
    return np.ascontiguousarray(X.toarray()), y


def _check_content(parsed: tuple[np.ndarray, np.ndarray], name: str, spec: LibsvmSpec,
                   n_rows: int) -> None:
    """Refuse a parsed file that cannot be the expected one.

    Used for files without a checksum pin, for which these counts are the
    only evidence of identity. An empty or truncated file fails on its rows.

    Parameters
    ----------
    parsed : (X, y)
        What :func:`_read` returned for the file.
    name : str
        The file's proper name, for the message.
    spec : LibsvmSpec
        The dataset: ``n_features`` is the expected largest feature index.
    n_rows : int
        The expected number of rows.

    Raises
    ------
    ValueError
        Naming the file and the expected and found counts, or the values
        that are not finite.
    """
    X, y = parsed
    # Columns are counted as the largest feature index in use, which is what
    # the LIBSVM page lists (``_read`` already refused indices beyond it).
    used = np.flatnonzero(np.any(X != 0, axis=0))
    n_columns = int(used[-1]) + 1 if used.size else 0
    problems = []
    if (len(y), n_columns) != (n_rows, spec.n_features):
        problems.append(f"expected {n_rows} rows and {spec.n_features} feature columns, "
                        f"found {len(y)} rows and {n_columns} feature columns")
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        problems.append("it holds values that are not finite")
    if problems:
        raise ValueError(f"{name} is not the expected LIBSVM file for dataset "
                         f"{spec.name!r}: {'; '.join(problems)}. It has no checksum pin, "
                         "so it is identified by these counts; it was not recorded in "
                         "the checksum manifest.")
