"""Remote datasets in LIBSVM format: download, cache, checksum, parse.

Files are fetched from ``<base_url>/<folder>/<file name>`` into
``<data_home>/libsvm/<file name>`` and checked on every load. What a file must
satisfy is, in order of precedence:

1. the ``checksums`` option of :func:`kernelmaps.datasets.load`;
2. a user pin recorded in the cache's ``manifest.json`` (``"origin": "user"``);
3. the built-in pin (an MD5 published in public code, see ``PINS_FROM``)
   together with the SHA-256 recorded in the manifest when the file first
   matched it;
4. for a file without any pin, its content, then the SHA-256 recorded in the
   manifest once the content has passed.

No published checksum of ``cpusmall_scale`` or ``cadata`` was found, and none
is invented, so these two files are identified by their content instead: the
file must parse, hold exactly the number of rows the LIBSVM page lists for it
(8192 and 20640), have ``n_features`` as its largest feature index (12 and 8)
and contain only finite values. A file that fails (an empty or truncated
download, an error page, another data set) is refused with a ``ValueError``
naming the expected and the found counts, and nothing about it is recorded: a
download is deleted and a cached copy is moved aside to ``<file>.rejected``,
so the genuine file is accepted when it comes. Only a file that passed is
recorded in the manifest; later copies must then match that SHA-256. Entries
written by older versions, which trusted such files on first use without any
check, prove nothing and are ignored (and replaced once a file passes).

Downloads are bounded three ways: ``timeout`` (seconds a single socket
operation may wait), ``deadline`` (seconds for the whole download, counted
from sending the request) and ``min_rate`` (bytes/s the response body must
average over every ``MIN_RATE_WINDOW`` seconds; 0 disables it). The deadline
and the rate are checked each time body data arrive, so a server that sends
nothing at all is ended by ``timeout``, and the deadline is overrun by at most
one ``timeout``; a server that trickles its response headers is not caught.
A download that breaks a bound raises
:class:`~kernelmaps.datasets.DatasetNotAvailableError` and its partial file is
deleted.
"""

from __future__ import annotations

import datetime
import functools
import http.client
import json
import os
import re
import tempfile
import time
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
DEFAULT_DEADLINE = 3600.0        # seconds: generous for every file here on a slow line
DEFAULT_MIN_RATE = 1024.0        # bytes/s: far below any working connection
#: Seconds over which ``min_rate`` is averaged: long enough that a pause of a
#: few seconds on a slow but working connection does not end the download.
MIN_RATE_WINDOW = 30.0
READ_CHUNK = 1 << 20
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
                             "or delete it (the checksums of files that pass their "
                             "checks will then be recorded again)") from None

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


#: How entries written by versions that trusted unpinned files on first use,
#: without any check, begin their ``origin``.
UNCHECKED_ORIGIN = "trust on first use"


def _is_pinned(file: RemoteFile, user_pin: str | None, entry: dict | None) -> bool:
    """Whether a checksum chosen before the download (built-in or by the user)
    identifies ``file``, rather than its content."""
    return (user_pin is not None or file.pin is not None
            or (entry is not None and entry.get("origin") == "user"))


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


@dataclass(frozen=True)
class DownloadLimits:
    """Bounds on one download; see the module docstring.

    Attributes
    ----------
    timeout : float
        Seconds a single socket operation (connect, one read) may wait.
    deadline : float
        Seconds the whole download may take, counted from sending the request.
    min_rate : float
        Bytes per second the response body must average over every
        ``MIN_RATE_WINDOW`` seconds; 0 disables the check.
    """

    timeout: float
    deadline: float
    min_rate: float


def _copy_within_limits(response, out, url: str, limits: DownloadLimits,
                        started: float) -> None:
    """Copy the body of ``response`` to ``out`` while it keeps within ``limits``.

    Parameters
    ----------
    response : http.client.HTTPResponse
        The open response.
    out : binary file
        Where the body goes.
    url : str
        Named in the errors.
    limits : DownloadLimits
        ``deadline`` and ``min_rate`` are enforced here.
    started : float
        ``time.monotonic()`` when the request was sent.

    Raises
    ------
    TimeoutError
        The download exceeded its deadline, or its rate fell below
        ``min_rate`` over a window of ``MIN_RATE_WINDOW`` seconds.
    """
    window_started, window_bytes = time.monotonic(), 0
    # read1, not read: read(n) waits for all n bytes, through any number of
    # socket reads, so a trickling server would never give control back.
    while chunk := response.read1(READ_CHUNK):
        out.write(chunk)
        now = time.monotonic()
        if now - started > limits.deadline:
            raise TimeoutError(f"download of {url} exceeded the total deadline of "
                               f"{limits.deadline:g} s (the deadline option)")
        window_bytes += len(chunk)
        window = now - window_started
        if window >= MIN_RATE_WINDOW:
            if window_bytes < limits.min_rate * window:
                raise TimeoutError(
                    f"download of {url} fell below the minimum rate of "
                    f"{limits.min_rate:g} bytes/s over the last {window:.1f} s "
                    f"({window_bytes} bytes; the min_rate option)")
            window_started, window_bytes = now, 0


def _download(url: str, file: RemoteFile, directory: Path, limits: DownloadLimits,
              dataset: str) -> Path:
    """Download ``url`` to a temporary file in ``directory``.

    Parameters
    ----------
    url : str
        What to download.
    file : RemoteFile
        The file it is; the temporary file gets the same extension, so that
        the parser recognises compression.
    directory : Path
        Where the temporary file is created.
    limits : DownloadLimits
        Timeout, deadline and minimum rate of the download.
    dataset : str
        Named in the error.

    Returns
    -------
    Path
        The temporary file, for the caller to verify and move or delete.

    Raises
    ------
    DatasetNotAvailableError
        The download failed or broke one of ``limits``; the partial file has
        been deleted.
    """
    suffix = ".part" + os.path.splitext(file.name)[1]
    fd, tmp = tempfile.mkstemp(prefix=f".{file.name}.", suffix=suffix, dir=directory)
    request = urllib.request.Request(url, headers={"User-Agent": "kernelmaps.datasets"})
    started = time.monotonic()
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(
                request, timeout=limits.timeout) as response:
            _copy_within_limits(response, out, url, limits, started)
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


def fetch(file: RemoteFile, directory: Path, url_base: str, limits: DownloadLimits,
          user_pin: str | None, dataset: str, read: Callable[[Path], T],
          check_content: Callable[[T], None]) -> tuple[T, str]:
    """``read`` applied to a verified copy of ``file`` in ``directory``, and its SHA-256.

    A download is moved into place, and a new checksum recorded in the
    manifest, only after it has passed its checksums, ``read`` has succeeded
    on it and, for a file without a pin, ``check_content`` has accepted it.

    Parameters
    ----------
    file : RemoteFile
        The file wanted.
    directory : Path
        The cache directory, ``<data_home>/libsvm``.
    url_base : str
        The server, without the folder.
    limits : DownloadLimits
        Bounds on the download, if one is needed.
    user_pin : str or None
        The ``checksums`` option's value for this file.
    dataset : str
        Named in the errors.
    read : callable
        Parses a file; raises ValueError if it cannot.
    check_content : callable
        Given what ``read`` returned for a file no checksum pin identifies,
        raises ValueError unless it is the expected file.

    Returns
    -------
    result : T
        What ``read`` returned.
    sha256 : str
        The file's SHA-256.

    Raises
    ------
    ChecksumMismatchError, ValueError
        The file failed a check; a download has been deleted, a cached copy
        moved aside to ``<file>.rejected``, and nothing has been recorded.
    DatasetNotAvailableError
        The file is not cached and could not be downloaded.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / file.name
    manifest = Manifest(directory)
    entry = manifest.files.get(file.name)
    if entry is not None and str(entry.get("origin", "")).startswith(UNCHECKED_ORIGIN):
        entry = None             # recorded without any check: may be an empty file
    expected = _expectations(file, user_pin, entry)
    pinned = _is_pinned(file, user_pin, entry)

    def accept(candidate: Path, where: str, on_fail: str):
        digests = _verify(candidate, file, expected, where, on_fail)
        try:
            result = read(candidate)
            if not pinned:
                check_content(result)
        except ValueError as exc:
            raise ValueError(f"{exc} {on_fail}") from exc
        return digests, result

    if path.exists():
        url = None
        rejected = path.with_name(path.name + ".rejected")
        try:
            digests, result = accept(path, f"cached copy {path}",
                                     f"The file was moved aside to {rejected}; the next "
                                     "load downloads it again.")
        except (ChecksumMismatchError, ValueError):
            os.replace(path, rejected)
            raise
    else:
        url = f"{url_base}/{file.folder}/{file.name}"
        tmp = _download(url, file, directory, limits, dataset)
        try:
            digests, result = accept(tmp, f"downloaded from {url}",
                                     "The download was deleted.")
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
        origin = "passed the row and column check (" + (
            f"downloaded from {url}" if url else "found in the cache") + ")"
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


def _expected_rows(spec: LibsvmSpec, file: RemoteFile) -> int:
    """Rows of the genuine ``file``: all of a split's, else its official part's."""
    if spec.test is None:
        return spec.n_train + spec.n_test
    return spec.n_train if file == spec.train else spec.n_test


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
                                      n_rows=_expected_rows(spec, f)))
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
