"""What the suite ran on, recorded in the results beside every figure.

asv's ``machine.json`` names the CPU, the core count and the memory, but not the
code Numba generates: the same CPU runs AVX-512 code natively and AVX2 code under
``NUMBA_CPU_NAME=haswell``. ``Environment``'s parameters record the target and
the profile (they are evaluated when the suite is discovered, in the benchmark
environment), so ``benchmarks/report.py`` can name them.
"""

from . import common
from .machine import numba_target

_NAME, _SIMD = numba_target()
_VECTOR_BITS = {"AVX-512": 512, "AVX-512, 256-bit loops": 256, "AVX2": 256, "AVX": 256, "SSE": 128,
                "NEON/SVE": 128}


class Environment:
    """``track_vector_bits``: the width of the vectors Numba's vectorized loops use here."""

    params = [[f"{_NAME} ({_SIMD})"], [common.PROFILE]]
    param_names = ["numba_target", "profile"]

    def track_vector_bits(self, target, profile):
        return float(_VECTOR_BITS.get(_SIMD, 0))

    track_vector_bits.unit = "bits"
