"""Downloading LIBSVM files within bounds, and fetching a verified copy.

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

import http.client
import os
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from ._base import ChecksumMismatchError, DatasetNotAvailableError
from ._libsvm_checksums import (UNCHECKED_ORIGIN, Manifest, RemoteFile, _expectations, _is_pinned,
                                _verify)

T = TypeVar("T")

BASE_URL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets"
URL_ENV = "KERNELMAPS_LIBSVM_URL"
DEFAULT_TIMEOUT = 60.0
DEFAULT_DEADLINE = 3600.0        # seconds: generous for every file here on a slow line
DEFAULT_MIN_RATE = 1024.0        # bytes/s: far below any working connection
#: Seconds over which ``min_rate`` is averaged: long enough that a pause of a
#: few seconds on a slow but working connection does not end the download.
MIN_RATE_WINDOW = 30.0
READ_CHUNK = 1 << 20


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
