"""What a measurement ran on: CPU, cores, the SIMD target Numba compiled for, BLAS, commit.

The asv suite, its report and the paper-claim experiments all name the machine
with :func:`machine_info`, so that every figure carries its CPU and target.
``NUMBA_CPU_NAME=haswell`` makes Numba emit AVX2 code on any recent x86 CPU (with
:func:`pin_named_target_features`, which the ``benchmarks`` package applies on
import); the target recorded here is the one Numba actually uses, not the host's.
"""

import os
import platform
import subprocess
from functools import lru_cache
from pathlib import Path

#: LLVM CPU names and the widest x86 vector extension their code uses.
_AVX512_NAMES = ("skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake",
                 "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids",
                 "graniterapids", "znver4", "znver5", "x86-64-v4")
#: Intel AVX-512 CPUs for which LLVM tunes its cost model to prefer 256-bit
#: vectors (``TuningPrefer256Bit``, as GCC's and Clang's
#: ``-mprefer-vector-width=256``): loops vectorize with ymm registers unless the
#: feature ``prefer-256-bit`` is turned off. AMD's znver4 and znver5 prefer 512 bits.
_PREFER_256_NAMES = ("skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake", "tigerlake",
                     "rocketlake", "sapphirerapids", "emeraldrapids", "graniterapids")
#: The feature that lifts that preference (``NUMBA_CPU_FEATURES=...,-prefer-256-bit``).
NO_PREFER_256 = "-prefer-256-bit"
_AVX2_NAMES = ("haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake",
               "znver1", "znver2", "znver3", "x86-64-v3")


def cpu_model():
    """The CPU's marketing name (``/proc/cpuinfo``), or ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _simd_of_features(features):
    """Widest vector extension in an LLVM feature string or mapping."""
    if isinstance(features, str):
        enabled = {f[1:] for f in features.split(",") if f.startswith("+")}
    else:
        enabled = {name for name, on in features.items() if on}
    if "avx512f" in enabled:
        return "AVX-512"
    if "avx2" in enabled:
        return "AVX2"
    if "avx" in enabled:
        return "AVX"
    if "sse4.2" in enabled or "sse2" in enabled:
        return "SSE"
    if "neon" in enabled or "sve" in enabled:
        return "NEON/SVE"
    return "unknown"


#: Feature-name prefixes of AVX-512 and what needs it (LLVM's names).
_AVX512_FEATURES = ("avx512", "evex512", "avx10", "amx")


def feature_string(features):
    """An LLVM feature string (``'+avx2,-sse4a,...'``) of ``features`` (name -> enabled)."""
    return ",".join(("+" if enabled else "-") + name for name, enabled in sorted(features.items()))


def features_without_avx512(host_features):
    """An LLVM feature string: ``host_features`` (name -> enabled) with every
    AVX-512 feature turned off."""
    return feature_string({name: enabled and not name.startswith(_AVX512_FEATURES)
                           for name, enabled in host_features.items()})


def pin_named_target_features(environ=None, host_features=None):
    """Make ``NUMBA_CPU_NAME=<an AVX2 CPU>`` give AVX2 code on an AVX-512 host.

    Numba hands LLVM the host's feature list whenever ``NUMBA_CPU_FEATURES`` is
    unset, whatever ``NUMBA_CPU_NAME`` says, and LLVM lets the features win: on
    an AVX-512 host, ``NUMBA_CPU_NAME=haswell`` alone compiles to zmm registers
    (checked with ``inspect_asm``). This sets ``NUMBA_CPU_FEATURES`` to the host's
    features without AVX-512 when an AVX2-class name is forced and no features
    are given. It must run before Numba reads its configuration (the
    ``benchmarks`` package calls it on import); returns the features it set, or
    None.
    """
    environ = os.environ if environ is None else environ
    name = environ.get("NUMBA_CPU_NAME", "").strip().lower()
    if not name.startswith(_AVX2_NAMES) or environ.get("NUMBA_CPU_FEATURES", "").strip():
        return None
    if host_features is None:
        from llvmlite import binding

        host_features = dict(binding.get_host_cpu_features())
    if not any(on and feature.startswith(_AVX512_FEATURES) for feature, on in host_features.items()):
        return None  # the host has no AVX-512: its features are AVX2's already
    environ["NUMBA_CPU_FEATURES"] = features_without_avx512(host_features)
    import sys

    if "numba" in sys.modules:  # too late for the import-time read: read it again
        from numba.core import config

        config.reload_config()
    return environ["NUMBA_CPU_FEATURES"]


def numba_target():
    """``(cpu name, SIMD extension)`` of the code Numba generates in this process.

    On the Intel AVX-512 CPUs whose LLVM tuning prefers 256-bit vectors, the
    extension reads ``'AVX-512, 256-bit loops'`` (the vectorized loops use ymm
    registers; only hand-written vector code, such as the FWHT's, uses zmm),
    unless ``NUMBA_CPU_FEATURES`` turns that preference off.
    """
    from llvmlite import binding

    name = os.environ.get("NUMBA_CPU_NAME", "").strip()
    features = os.environ.get("NUMBA_CPU_FEATURES", "").strip()
    host = binding.get_host_cpu_name()
    if not name or name == "host":
        name = host
    if features:
        simd = _simd_of_features(features)
    elif name == host:
        simd = _simd_of_features(binding.get_host_cpu_features())
    elif name.lower().startswith(_AVX512_NAMES):
        simd = "AVX-512"
    elif name.lower().startswith(_AVX2_NAMES):
        simd = "AVX2"
    else:
        simd = "unknown"
    if simd == "AVX-512" and name.lower().startswith(_PREFER_256_NAMES) and NO_PREFER_256 not in features:
        simd = "AVX-512, 256-bit loops"
    return name, simd


def full_width_features(host_features=None):
    """The host's LLVM features without the preference for 256-bit vectors: with
    ``NUMBA_CPU_FEATURES`` set to this, loops on an Intel AVX-512 CPU vectorize
    with zmm registers (``python -m benchmarks.machine --full-width-features``)."""
    if host_features is None:
        from llvmlite import binding

        host_features = dict(binding.get_host_cpu_features())
    return feature_string(host_features) + "," + NO_PREFER_256


def forced_target():
    """The Numba target forced by ``NUMBA_CPU_NAME`` (e.g. ``'haswell'``), or
    ``'512bit'`` when ``NUMBA_CPU_FEATURES`` lifts LLVM's preference for 256-bit
    vectors on the host (:func:`full_width_features`), or None. Results measured
    under a forced target are filed apart from the native ones under this name."""
    name = os.environ.get("NUMBA_CPU_NAME", "").strip()
    if name and name != "host":
        return name
    return "512bit" if NO_PREFER_256 in os.environ.get("NUMBA_CPU_FEATURES", "") else None


def blas():
    """The BLAS numpy calls, e.g. ``'OpenBLAS 0.3.30 (SkylakeX)'``."""
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            if pool.get("user_api") == "blas":
                arch = pool.get("architecture")
                return f"{pool.get('internal_api')} {pool.get('version')}" + (f" ({arch})" if arch else "")
    except Exception:  # threadpoolctl is a dependency, but a broken BLAS must not stop a report
        pass
    return "unknown"


def git_commit(root=None):
    """Short hash of HEAD, with ``+dirty`` when the working tree has changes, or None."""
    root = root or Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short=8", "HEAD"], cwd=root, text=True,
                              capture_output=True, check=True).stdout.strip()
        # the experiments' own result files change with every run: they do not make the code dirty
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)benchmarks/experiments/results"], cwd=root,
                               text=True, capture_output=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


@lru_cache(maxsize=None)
def machine_info():
    """Everything a figure needs beside it, as a flat dict of strings."""
    import numba
    import numpy

    name, simd = numba_target()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": cpu_model(),
        "cores": str(usable),
        "numba_target": name,
        "simd": simd,
        "numba": numba.__version__,
        "numpy": numpy.__version__,
        "blas": blas(),
        "python": platform.python_version(),
        "commit": git_commit() or "unknown",
    }


def describe(info=None):
    """One line: ``AMD EPYC 9R14, 2 cores, Numba target znver4 (AVX-512), ...``."""
    info = info or machine_info()
    return (f"{info['cpu']}, {info['cores']} cores, Numba {info['numba']} target {info['numba_target']} "
            f"({info['simd']}), {info['blas']}, commit {info['commit']}")


if __name__ == "__main__":
    import sys

    print(full_width_features() if sys.argv[1:] == ["--full-width-features"] else describe())
