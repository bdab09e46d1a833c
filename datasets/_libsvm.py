"""Remote datasets in LIBSVM format: the files, their loaders and options.

Files are fetched from ``<base_url>/<folder>/<file name>`` into
``<data_home>/libsvm/<file name>`` and checked on every load. The work is in
three modules: :mod:`~kernelmaps.datasets._libsvm_download` (bounded downloads
and the fetch of a verified copy), :mod:`~kernelmaps.datasets._libsvm_checksums`
(the datasets' and files' descriptions, what a file must match, and the cache's
manifest) and
:mod:`~kernelmaps.datasets._libsvm_parse` (reading a file, and identifying by
its content a file that has no checksum pin).
"""

from __future__ import annotations

import functools

from ._base import DatasetInfo, build_dataset, make_dataset, register, seeded_split
from ._libsvm_checksums import LibsvmSpec, RemoteFile, parse_checksum
from ._libsvm_download import (DEFAULT_DEADLINE, DEFAULT_MIN_RATE, DEFAULT_TIMEOUT,
                               DownloadLimits, base_url, fetch)
from ._libsvm_parse import _check_content, _read

SUBDIR = "libsvm"
SPLIT_SEED = 0
LICENSE = ("LIBSVM data page gives no licence; follow the original source's terms "
           "(see description)")


def _labels(values):
    return tuple(float(v) for v in values)


SPECS = [
    LibsvmSpec(
        "mnist", "classification", 784,
        RemoteFile("mnist.scale.bz2", "multiclass",
                   "md5:e8c48fc61df3cf808e7f35204431b376", ("pax",)),
        RemoteFile("mnist.scale.t.bz2", "multiclass",
                   "md5:56453a3c427a8b32632db2875abc891d", ("pax",)),
        60000, 10000, _labels(range(10)),
        "MNIST (LeCun et al.), LIBSVM 'mnist.scale' version",
        "MNIST: 28x28 digit images, pixels scaled to [0, 1], 10 classes, the official "
        "60000 train / 10000 test files. 784 feature columns (28 x 28); the LIBSVM page "
        "lists 780, the largest index that occurs."),
    LibsvmSpec(
        "usps", "classification", 256,
        RemoteFile("usps.bz2", "multiclass",
                   "md5:ec16c51db3855ca6c91edd34d0e9b197", ("torchvision",)),
        RemoteFile("usps.t.bz2", "multiclass",
                   "md5:8ea070ee2aca1ac39742fdd1ef5ed118", ("torchvision",)),
        7291, 2007, _labels(range(1, 11)),
        "USPS handwritten digits (Hull, 1994), LIBSVM version",
        "USPS: 16x16 digit images scaled to [-1, 1], 256 features, the official 7291 "
        "train / 2007 test files. LIBSVM labels 1..10 (10 is digit 9) become class "
        "indices 0..9."),
    LibsvmSpec(
        "covtype", "classification", 54,
        RemoteFile("covtype.libsvm.binary.scale.bz2", "binary",
                   "md5:d95f45e15c284005c2c7a4c82e4be102", ("pax",)),
        None, 522910, 58102, (1.0, 2.0),
        "UCI Covertype (Blackard, 1998; doi:10.24432/C50K5N), LIBSVM binary scaled "
        "version 'covtype.libsvm.binary.scale' (UCI licence: CC BY 4.0)",
        "COVTYPE (binary): 581012 forest cells, 54 features scaled to [0, 1], LIBSVM's "
        "two-class version of the 7 cover types (labels 1 / 2). No official test file: "
        "a random permutation with seed 0 is cut into 522910 train / 58102 test, the "
        "sizes used by Rahimi & Recht."),
    LibsvmSpec(
        "ijcnn1", "classification", 22,
        RemoteFile("ijcnn1.bz2", "binary",
                   "md5:c3e9162f8e38e0b6c0e02d313a59de2b", ("largesvm",)),
        RemoteFile("ijcnn1.t.bz2", "binary",
                   "md5:66433ab8089acee9e56dc61ac89a2fe2", ("pax", "largesvm")),
        49990, 91701, (-1.0, 1.0),
        "IJCNN 2001 neural network competition (Prokhorov, 2001), LIBSVM version with "
        "the winner's transformation (Chang & Lin, 2001)",
        "IJCNN1: 22 features, labels -1/1 (about 10% positive). Train is LIBSVM's "
        "'ijcnn1' (49990 rows: its train + validation parts), test is 'ijcnn1.t' "
        "(91701 rows)."),
    LibsvmSpec(
        "a9a", "classification", 123,
        RemoteFile("a9a", "binary", "md5:fb3596510d780aaf76a06dc721d49662",
                   ("largesvm",)),
        RemoteFile("a9a.t", "binary", "md5:f0bb16cf1ee3e80ff560e9d132ee647e",
                   ("largesvm",)),
        32561, 16281, (-1.0, 1.0),
        "UCI Adult (Becker & Kohavi, 1996; doi:10.24432/C5XW20), LIBSVM binarised "
        "version a9a (Platt, 1998) (UCI licence: CC BY 4.0)",
        "A9A (Adult): 123 binary features, income > 50K (1) or not (-1), the official "
        "32561 train / 16281 test files. n_features is fixed at 123 because the test "
        "file's largest index is 122."),
    LibsvmSpec(
        "cpusmall", "regression", 12,
        RemoteFile("cpusmall_scale", "regression"), None, 6554, 1638, None,
        "Delve 'comp-activ' computer activity data (cpuSmall prototask), LIBSVM scaled "
        "version 'cpusmall_scale'",
        "CPUSMALL: 8192 rows, 12 features scaled to [-1, 1], target: the portion of "
        "time the CPUs run in user mode. No official test file: a random permutation "
        "with seed 0 is cut 80/20 into 6554 train / 1638 test."),
    LibsvmSpec(
        "cadata", "regression", 8,
        RemoteFile("cadata", "regression"), None, 16512, 4128, None,
        "California housing (Pace & Barry, 1997; StatLib), LIBSVM version 'cadata'",
        "CADATA: 20640 California block groups, 8 unscaled features, target: median "
        "house value in dollars. No official test file: a random permutation with seed "
        "0 is cut 80/20 into 16512 train / 4128 test."),
]


def _validated_number(options: dict, name: str, unit: str, minimum: float,
            inclusive: bool) -> float:
    """Validate a numeric option (bool is refused, and so is NaN)."""
    value = options[name]
    relation = ">=" if inclusive else ">"
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not (value >= minimum if inclusive else value > minimum)):
        raise ValueError(f"{name} must be a number of {unit} {relation} {minimum:g}, "
                         f"got {value!r}")
    return float(value)


def _check_options(options: dict) -> tuple[DownloadLimits, dict]:
    """The download limits and the checksums dict of validated LIBSVM options.

    Parameters
    ----------
    options : dict
        The options of :func:`kernelmaps.datasets.load`, defaults filled in.

    Returns
    -------
    limits : DownloadLimits
    checksums : dict
        File name -> checksum string, each already parsed once.

    Raises
    ------
    ValueError
        Naming the bad option.
    """
    limits = DownloadLimits(
        timeout=_validated_number(options, "timeout", "seconds", 0, inclusive=False),
        deadline=_validated_number(options, "deadline", "seconds", 0, inclusive=False),
        min_rate=_validated_number(options, "min_rate", "bytes/s", 0, inclusive=True))
    checksums = options["checksums"] or {}
    if not isinstance(checksums, dict):
        raise ValueError(f"checksums must be a dict of file name -> checksum, got "
                         f"{checksums!r}")
    for fname, value in checksums.items():
        parse_checksum(value, fname)
    return limits, checksums


def _loader(spec: LibsvmSpec, info: DatasetInfo):
    def load(options, data_home):
        limits, checksums = _check_options(options)
        known = {spec.train.name} | ({spec.test.name} if spec.test else set())
        unknown = set(checksums) - known
        if unknown:
            raise ValueError(f"checksums names files {sorted(unknown)} that dataset "
                             f"{spec.name!r} does not use; its files are {sorted(known)}")
        url_base = base_url(options["base_url"])
        directory = data_home / SUBDIR
        parts, hashes = [], {}
        for f in (spec.train, spec.test):
            if f is not None:
                part, hashes[f.name] = fetch(
                    f, directory, url_base, limits, checksums.get(f.name), spec.name,
                    functools.partial(_read, name=f.name, spec=spec),
                    functools.partial(_check_content, name=f.name, spec=spec,
                                      n_rows=spec.expected_rows(f)))
                parts.append(part)
        extras = {"files": hashes}
        if spec.test is not None:
            (X_train, y_train), (X_test, y_test) = parts
            return build_dataset(info, X_train, X_test, y_train, y_test, extras=extras)
        X, y = parts[0]
        n = len(y)
        n_test = (2 * n * spec.n_test + spec.n_train + spec.n_test) // (
            2 * (spec.n_train + spec.n_test))            # round(n * the spec's ratio)
        train, test = seeded_split(n, n - n_test, n_test, SPLIT_SEED)
        return make_dataset(info, X, y, train, test, extras=extras)
    return load


OPTIONS = dict(base_url=None, timeout=DEFAULT_TIMEOUT, deadline=DEFAULT_DEADLINE,
               min_rate=DEFAULT_MIN_RATE, checksums=None)

for _spec in SPECS:
    _classes = (None if _spec.classes is None
                else tuple(format(c, "g") for c in _spec.classes))
    _info = DatasetInfo(
        name=_spec.name, kind="libsvm", task=_spec.task, n_features=_spec.n_features,
        n_train=_spec.n_train, n_test=_spec.n_test,
        n_classes=None if _classes is None else len(_classes), class_names=_classes,
        source=f"{_spec.source}; LIBSVM data sets (Chang & Lin), downloaded on demand",
        license=LICENSE, description=_spec.description, options=OPTIONS)
    register(_info, _loader(_spec, _info))
