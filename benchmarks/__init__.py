"""The asv suite, its runner and report, and the paper-claim experiments.

Importing the package first makes ``NUMBA_CPU_NAME=haswell`` (or another AVX2
CPU) mean AVX2 code on an AVX-512 host too: see
:func:`benchmarks.machine.pin_named_target_features`.
"""

from benchmarks.machine import pin_named_target_features

pin_named_target_features()
