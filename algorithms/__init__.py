"""kernelmaps: explicit kernel feature maps with Numba kernels.

Every public module of this package (a file not starting with ``_``) is imported
here; its estimator classes register themselves in :data:`ALGORITHMS` and the
names in its ``__all__`` (its estimators) are re-exported. Adding an algorithm
therefore takes one new file.

The public names are the estimators, the registry :data:`ALGORITHMS`, the fast
Walsh-Hadamard transform :func:`fwht`, :func:`exact_kernel`,
:func:`resolve_gamma`, the metrics, the least-squares accumulator
:class:`NormalEquations` (what the one-pass and Dask fits merge) and
:mod:`kernelmaps.datasets`. The Numba kernels are private.
"""

import importlib
import pkgutil
from importlib.metadata import PackageNotFoundError, version

from ._core import threads as _threads  # noqa: F401  (registers the threadpoolctl controller of our threads)
from . import datasets
from ._core.base import REGISTRY as ALGORITHMS
from ._core.base import FeatureMap, KernelName, RegisteredEstimator  # noqa: F401  (the extension API)
from ._numba.fwht import fwht
from ._kernels.bandwidth import resolve_gamma
from ._kernels.exact import exact_kernel
from ._kernels.names import KERNELS  # noqa: F401
from ._core.metrics import kernel_mse, nrmse, relative_frobenius_error
from ._core.sparse_map import SparseFeatureMap  # noqa: F401  (the extension API for sparse output)
from ._solvers.normal_equations import NormalEquations  # noqa: F401  (the accumulator partial fits and Dask merge)
from ._kernels.minhash import min_max_kernel, tanimoto_kernel
from .arc_cosine import arc_cosine_kernel

try:
    __version__ = version("kernelmaps")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "ALGORITHMS",
    "arc_cosine_kernel",
    "datasets",
    "exact_kernel",
    "fwht",
    "kernel_mse",
    "min_max_kernel",
    "nrmse",
    "relative_frobenius_error",
    "resolve_gamma",
    "tanimoto_kernel",
]


#: Public modules that need an optional extra: imported by their users, never here,
#: so that the core works without it (``kernelmaps.dask`` needs ``kernelmaps[dask]``).
OPTIONAL_MODULES = ("dask",)


def _import_algorithm_modules():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "datasets" or info.name in OPTIONAL_MODULES:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for public in getattr(module, "__all__", ()):
            globals()[public] = getattr(module, public)
            __all__.append(public)


_import_algorithm_modules()
