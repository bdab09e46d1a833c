"""The asv suite, its runner and report, and the paper-claim experiments.

Importing the package first

* makes ``NUMBA_CPU_NAME=haswell`` (or another AVX2 CPU) mean AVX2 code on an
  AVX-512 host too: see :func:`benchmarks.machine.pin_named_target_features`;
* sets ``OPENBLAS_THREAD_TIMEOUT=4`` unless it is set (it must be, before numpy
  loads OpenBLAS). After a threaded BLAS call, OpenBLAS's idle threads spin for
  2**28 cycles by default (about 0.1 s) before they sleep. In an interleaved A/B
  timing the peer's threaded product left them spinning on both cores during
  the next sample, kernelmaps' single-threaded blocks then ran at half speed
  (four 512-row float32 blocks of a 1024 x 1024 product: 48 ms instead of 24),
  and the benchmark charged the peer's idle threads to kernelmaps. With the
  short timeout the threaded products themselves ran as fast (a 2000^3 GEMM:
  182 ms against 208 ms).

  Experiments that measure what users see with OpenBLAS's default (``rff-floor``)
  start their timing process without it: :data:`SHORT_OPENBLAS_TIMEOUT_ADDED` tells
  them whether the variable came from here or from the user.
"""

import os

#: The environment variable that says the short timeout was set by this package (it
#: is inherited by child processes, which cannot tell otherwise).
ADDED_MARKER = "KERNELMAPS_BENCH_ADDED_OPENBLAS_THREAD_TIMEOUT"

if "OPENBLAS_THREAD_TIMEOUT" not in os.environ:
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"
    os.environ[ADDED_MARKER] = "1"
SHORT_OPENBLAS_TIMEOUT_ADDED = os.environ.get(ADDED_MARKER) == "1"

from benchmarks.machine import pin_named_target_features  # noqa: E402

pin_named_target_features()
