"""Every map's output at a fixed seed is pinned, so that a refactor that changes
any bit is noticed.

``tests/data/pinned_outputs.json`` was last written (``--repin-all``) on an AVX2 AMD EPYC
(Numba target znver3) where four pins no longer held: the changes since the pin
before had moved last bits of CNM, Nyström and the optimized circulant map on that target,
unseen while the work ran on AVX-512 machines, where only the samples are compared (they
still agreed). A BLAS product's last bits depend on the CPU's kernels, so the exact
SHA-256 is compared where the CPU and Numba target are the ones recorded; elsewhere a
sample of the output is compared to 1e-10 (float32: 1e-6), relative to each entry and
to the sample's largest entry.
"""

import hashlib
import json
import platform
from pathlib import Path

import numpy as np
import pytest

from benchmarks.machine import numba_target
from registry import FEATURE_MAPS, dense, domain, make

PINNED = json.loads((Path(__file__).parent / "data" / "pinned_outputs.json").read_text())


def fingerprint():
    """What decides a product's last bits: the CPU, its vector width, the BLAS
    kernels chosen for it and the Numba target."""
    from threadpoolctl import threadpool_info

    cpu, flags = "", set()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name") and not cpu:
                    cpu = line.split(":", 1)[1].strip()
                if line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    blas = sorted(f"{info['internal_api']} {info.get('version')} {info.get('architecture')}"
                  for info in threadpool_info() if info["user_api"] == "blas")
    # the CPU Numba compiles for, resolved ("host" would match any CPU of the same name and BLAS)
    return {"cpu": cpu, "avx512f": "avx512f" in flags, "blas": blas,
            "numba_target": numba_target()[0], "machine": platform.machine()}


def test_every_map_is_pinned():
    assert sorted({key.split("/")[0] for key in PINNED["maps"]}) == FEATURE_MAPS


@pytest.mark.parametrize("key", sorted(PINNED["maps"]))
def test_output_is_unchanged(key):
    dtype = key.split("/")[1]
    Z = _output(key)
    pinned = PINNED["maps"][key]
    sample = np.array(pinned["sample"])
    # rounding scales with the terms of a sum, not with its result: an entry
    # that cancels to near zero moves by the tolerance times the sample's scale
    tol = 1e-10 if dtype == "float64" else 1e-6
    np.testing.assert_allclose(Z[:3, :4], sample, rtol=tol, atol=tol * np.abs(sample).max())
    if fingerprint() == PINNED["fingerprint"]:
        assert hashlib.sha256(Z.tobytes()).hexdigest() == pinned["sha256"]


def _output(key):
    name, dtype = key.split("/")
    X = domain(name, np.random.default_rng(20261123).standard_normal((64, 6))).astype(dtype)
    y = np.arange(64) % 3
    est = make(name, random_state=7)
    est.fit(X, y) if getattr(est, "objective", None) == "classification" else est.fit(X)
    return dense(est.transform(X))


if __name__ == "__main__":
    # python tests/test_pinned_outputs.py NAME [NAME ...]: pin a new map's output
    # (both dtypes); maps already pinned are never overwritten.
    # python tests/test_pinned_outputs.py --repin-all: after a deliberate change of
    # outputs (say so in the commit), pin every map again on this machine and
    # record its fingerprint; elsewhere only the samples are compared.
    import sys

    path = Path(__file__).parent / "data" / "pinned_outputs.json"
    if sys.argv[1:] == ["--repin-all"]:
        PINNED["fingerprint"] = fingerprint()
        names = sorted({key.split("/")[0] for key in PINNED["maps"]} | set(FEATURE_MAPS))
        PINNED["maps"] = {}
        sys.argv[1:] = names
    for name in sys.argv[1:]:
        for dtype in ("float64", "float32"):
            key = f"{name}/{dtype}"
            if key in PINNED["maps"]:
                raise SystemExit(f"{key} is pinned already")
            Z = _output(key)
            PINNED["maps"][key] = {"sha256": hashlib.sha256(Z.tobytes()).hexdigest(),
                                   "sample": Z[:3, :4].astype(float).tolist()}
    path.write_text(json.dumps(PINNED, indent=1))
