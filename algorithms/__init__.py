"""kernelmaps: explicit kernel feature maps with Numba kernels.

Every public module of this package (a file not starting with ``_``) is imported
here; its classes register themselves in :data:`ALGORITHMS` and the names in its
``__all__`` are re-exported. Adding an algorithm therefore takes one new file.
"""

import importlib
import pkgutil

from ._base import REGISTRY as ALGORITHMS
from ._base import FeatureMap, KernelName, RegisteredEstimator
from ._kernels import KERNELS, exact_kernel
from ._metrics import kernel_mse, nrmse, relative_frobenius_error

__version__ = "0.1.0"

__all__ = [
    "ALGORITHMS",
    "FeatureMap",
    "KernelName",
    "RegisteredEstimator",
    "KERNELS",
    "exact_kernel",
    "kernel_mse",
    "nrmse",
    "relative_frobenius_error",
]


def _import_algorithm_modules():
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_") or info.name == "datasets":
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for public in getattr(module, "__all__", ()):
            globals()[public] = getattr(module, public)
            __all__.append(public)


_import_algorithm_modules()
