"""LIBSVM datasets and files: what they are, the built-in pins, the cache's manifest, the checks.

:class:`LibsvmSpec` describes a dataset, :class:`RemoteFile` one of its files.
What a file must satisfy is, in order of precedence:

1. the ``checksums`` option of :func:`kernelmaps.datasets.load`;
2. a user pin recorded in the cache's ``manifest.json`` (``"origin": "user"``);
3. the built-in pin (an MD5 published in public code, see ``PINS_FROM``)
   together with the SHA-256 recorded in the manifest when the file first
   matched it;
4. for a file without any pin, its content (see
   :mod:`kernelmaps.datasets._libsvm_parse`), then the SHA-256 recorded in the
   manifest once the content has passed.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ._base import ChecksumMismatchError, file_digests

MANIFEST = "manifest.json"

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
    """One LIBSVM dataset: its files, the sizes of its splits, its classes and provenance."""

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

    def expected_rows(self, file: RemoteFile) -> int:
        """Rows of the genuine ``file``: all of a split's, else its official part's."""
        if self.test is None:
            return self.n_train + self.n_test
        return self.n_train if file == self.train else self.n_test


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


#: The start of the ``origin`` of a manifest entry that trusted an unpinned file on
#: first use, without any check: such an entry proves nothing about the file (this
#: package writes none, but a cache directory may hold them).
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
