"""The FWHT against FFHT (Andoni et al.'s AVX library), one thread each, same data.

FFHT is optional (``pip install pybind11 setuptools wheel`` then
``pip install --no-build-isolation ffht-unofficial`` into the benchmark
environment); without it the ``ffht`` rows are skipped and only ours run.
``benchmarks/report.py`` prints the ratio FFHT time / our time.
"""

import numba
import numpy as np

from kernelmaps import fwht

from . import common


class FWHT:
    """Batched in-place transform of 2**20 elements, rows of length 2**log2_n (asv picks
    the number of calls per sample: one call takes about a millisecond)."""

    params = [["kernelmaps", "ffht"], [10, 14], ["float64", "float32"]]
    param_names = ["implementation", "log2_n", "dtype"]
    repeat = common.REPEAT

    def setup(self, implementation, log2_n, dtype):
        n = 2**log2_n
        self.X = np.random.default_rng(0).standard_normal((2**20 // n, n)).astype(dtype)
        if implementation == "ffht":
            try:
                import ffht
            except ImportError:
                raise NotImplementedError("ffht-unofficial is not installed")
            self.run = lambda: ffht.fht_(self.X, 1)
        else:
            # one thread, as FFHT's
            numba.set_num_threads(1)
            self.run = lambda: fwht(self.X)
        common.warm((implementation, log2_n, dtype), self.run)  # compilation, page faults

    def time_fwht(self, implementation, log2_n, dtype):
        self.run()
