"""Remote datasets in LIBSVM format: download, cache, checksum, parse.

Files are fetched from ``<base_url>/<folder>/<file name>`` into
``<data_home>/libsvm/<file name>`` and checked on every load. A file's
expected checksum is, in order of precedence:

1. the ``checksums`` option of :func:`kernelmaps.datasets.load`;
2. a user pin recorded in the cache's ``manifest.json`` (``"origin": "user"``);
3. the built-in pin (an MD5 published in public code, see ``PINS_FROM``)
   together with the SHA-256 recorded in the manifest at first use;
4. for files without a built-in pin, the SHA-256 recorded at first use alone
   (trust on first use).
"""

from __future__ import annotations

import datetime
import functools
import http.client
import json
import os
import re
import shutil
import tempfile
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

import numpy as np

from ._base import (ChecksumMismatchError, DatasetInfo, DatasetNotAvailableError,
                    build_dataset, encode_labels, file_digests, make_dataset, register,
                    seeded_split)

T = TypeVar("T")

BASE_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
URL_ENV = "KERNELMAPS_LIBSVM_URL"
SUBDIR = "libsvm"
MANIFEST = "manifest.json"
SPLIT_SEED = 0
DEFAULT_TIMEOUT = 60.0
LICENSE = ("LIBSVM data page gives no licence; follow the original source's terms "
           "(see description)")

#: Where the built-in MD5 pins were found (public code that asserts them after download).
PINS_FROM = {
    "torchvision": "torchvision (pytorch/vision, torchvision/datasets/usps.py; the same "
                   "values are in DeepMind's dm_nevis USPS handler)",
    "pax": "a public research code base (module pax.tasks.datasets, class "
           "LibSVMDataset), which asserts these MD5s after download",
    "largesvm": "the R data-retrieval script of A. Demircioglu's large-scale SVM "
                "experiments (largescalesvm.de), which checks these MD5s after download",
}


@dataclass(frozen=True)
class RemoteFile:
    """One file on the LIBSVM site, with its built-in checksum pin if any."""

    name: str
    folder: str                          # 'binary', 'multiclass' or 'regression'
    pin: str | None = None               # 'md5:<hex>' or 'sha256:<hex>'
    pin_from: tuple[str, ...] = ()       # keys of PINS_FROM


@dataclass(frozen=True)
class LibsvmSpec:
    name: str
    task: str
    n_features: int
    train: RemoteFile
    test: RemoteFile | None              # None: seeded split of ``train``
    n_train: int                         # of the real files; for a split, its sizes
    n_test: int
    classes: tuple[float, ...] | None
    source: str
    description: str


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


# ------------------------------------------------------------------------ checksums

_HEX = {"md5": 32, "sha256": 64}


def parse_checksum(value: str, what: str) -> tuple[str, str]:
    """'md5:<hex>', 'sha256:<hex>' or a bare 64-digit SHA-256 -> (algorithm, hex)."""
    if not isinstance(value, str):
        raise ValueError(f"checksum for {what} must be a string, got {value!r}")
    algo, _, digest = value.strip().lower().rpartition(":")
    algo = algo or "sha256"
    if algo not in _HEX or not re.fullmatch(f"[0-9a-f]{{{_HEX[algo]}}}", digest):
        raise ValueError(f"checksum for {what} must be 'sha256:<64 hex digits>' or "
                         f"'md5:<32 hex digits>', got {value!r}")
    return algo, digest


class Manifest:
    """The JSON record of checksums in a cache directory."""

    def __init__(self, directory: Path):
        self.path = directory / MANIFEST
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self.files = dict(data["files"])
        except FileNotFoundError:
            self.files = {}
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"checksum manifest {self.path} is not valid ({exc}); fix "
                             "or delete it (files will then be trusted on first use "
                             "again)") from None

    def record(self, name: str, digests: dict, origin: str, url: str | None) -> None:
        self.files[name] = dict(
            sha256=digests["sha256"], md5=digests["md5"], origin=origin, url=url,
            recorded=datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"))
        text = json.dumps({"version": 1, "files": self.files}, indent=2, sort_keys=True)
        fd, tmp = tempfile.mkstemp(prefix=".manifest.", suffix=".tmp", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.replace(tmp, self.path)


def _expectations(file: RemoteFile, user_pin: str | None, entry: dict | None):
    """(algorithm, hex, where the value comes from) triples a file must satisfy."""
    if user_pin is not None:
        return [(*parse_checksum(user_pin, file.name), "the checksums option")]
    if entry is not None and entry.get("origin") == "user":
        return [("sha256", entry["sha256"], "the user pin in the manifest")]
    out = []
    if file.pin is not None:
        sources = "; ".join(PINS_FROM[k] for k in file.pin_from)
        out.append((*parse_checksum(file.pin, file.name), f"the built-in pin from {sources}"))
    if entry is not None:
        out.append(("sha256", entry["sha256"],
                    f"the manifest (recorded {entry.get('recorded', '?')}, "
                    f"{entry.get('origin', '?')})"))
    return out


def _verify(path: Path, file: RemoteFile, expected, where: str, on_fail: str) -> dict:
    digests = file_digests(path)
    for algo, hexdigest, origin in expected:
        if digests[algo] != hexdigest:
            raise ChecksumMismatchError(
                f"checksum mismatch for LIBSVM file {file.name!r} ({where}): expected "
                f"{algo} {hexdigest} (from {origin}), got {digests[algo]}. {on_fail} If the "
                "upstream file has legitimately changed, pin the new value with "
                f"load(..., checksums={{{file.name!r}: 'sha256:<hex>'}}).",
                filename=file.name, algorithm=algo, expected=hexdigest,
                actual=digests[algo])
    return digests


# ------------------------------------------------------------------------- fetching


def base_url(option: str | None) -> str:
    url = option or os.environ.get(URL_ENV) or BASE_URL
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise ValueError(f"base_url must be an http(s) URL, got {url!r}")
    return url.rstrip("/")


def _download(url: str, file: RemoteFile, directory: Path, timeout: float,
              dataset: str) -> Path:
    """Download ``url`` to a temporary file in ``directory`` (same extension as
    ``file``, so that the parser recognises compression)."""
    suffix = ".part" + os.path.splitext(file.name)[1]
    fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=suffix, dir=directory)
    request = urllib.request.Request(url, headers={"User-Agent": "kernelmaps.datasets"})
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request,
                                                                timeout=timeout) as resp:
            shutil.copyfileobj(resp, out, 1 << 20)
    except (OSError, http.client.HTTPException) as exc:
        os.unlink(tmp)
        raise DatasetNotAvailableError(
            f"could not download {url} ({type(exc).__name__}: {exc}), needed for "
            f"dataset {dataset!r}. To use the dataset without network access, get that "
            f"URL some other way and save it under the exact file name {file.name!r} "
            f"in the directory\n    {directory}\n(that is, as {directory / file.name}). "
            "The directory is <data_home>/libsvm, with data_home from "
            "load(..., data_home=...), else the KERNELMAPS_DATA environment variable, "
            "else ~/.cache/kernelmaps.",
            url=url, filename=file.name, directory=directory) from exc
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


def fetch(file: RemoteFile, directory: Path, url_base: str, timeout: float,
          user_pin: str | None, dataset: str, read: Callable[[Path], T]) -> tuple[T, str]:
    """``read`` applied to a verified copy of ``file`` in ``directory``, and its SHA-256.

    A download is moved into place, and a new checksum recorded in the manifest,
    only after it has passed its checksums and ``read`` has succeeded on it.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file.name
    manifest = Manifest(directory)
    entry = manifest.files.get(file.name)
    expected = _expectations(file, user_pin, entry)
    if path.exists():
        url = None
        rejected = path.with_name(path.name + ".rejected")
        try:
            digests = _verify(path, file, expected, f"cached copy {path}",
                              f"The file was moved aside to {rejected}; the next load "
                              "downloads it again.")
        except ChecksumMismatchError:
            os.replace(path, rejected)
            raise
        result = read(path)
    else:
        url = f"{url_base}/{file.folder}/{file.name}"
        tmp = _download(url, file, directory, timeout, dataset)
        try:
            digests = _verify(tmp, file, expected, f"downloaded from {url}",
                              "The download was deleted.")
            result = read(tmp)
        except BaseException:
            os.unlink(tmp)
            raise
        os.replace(tmp, path)
    # An existing entry was among the expectations (so it matched), unless a user
    # pin replaced it; record only what is new.
    if entry is not None and (user_pin is None or (entry.get("origin") == "user" and
                                                   entry["sha256"] == digests["sha256"])):
        return result, digests["sha256"]
    if user_pin is not None:
        origin = "user"
    elif file.pin is not None:
        origin = f"matched the built-in {file.pin.split(':')[0]} pin"
    else:
        origin = "trust on first use (" + (f"downloaded from {url}" if url
                                           else "found in the cache") + ")"
    manifest.record(file.name, digests, origin, url)
    return result, digests["sha256"]


# -------------------------------------------------------------------------- loading


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


def _check_options(options: dict) -> tuple[float, dict]:
    timeout = options["timeout"]
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    checksums = options["checksums"] or {}
    if not isinstance(checksums, dict):
        raise ValueError(f"checksums must be a dict of file name -> checksum, got "
                         f"{checksums!r}")
    for fname, value in checksums.items():
        parse_checksum(value, fname)
    return float(timeout), checksums


def _loader(spec: LibsvmSpec, info: DatasetInfo):
    def load(options, data_home):
        timeout, checksums = _check_options(options)
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
                part, hashes[f.name] = fetch(f, directory, url_base, timeout,
                                             checksums.get(f.name), spec.name,
                                             functools.partial(_read, name=f.name,
                                                               spec=spec))
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


OPTIONS = dict(base_url=None, timeout=DEFAULT_TIMEOUT, checksums=None)

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
