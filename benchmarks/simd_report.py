"""Which vector width the hot Numba kernels compile to, per Numba target.

``python -m benchmarks.simd_report [--targets host,haswell,znver4]`` compiles
each kernel below for float32 and float64 in a fresh process per target (a
temporary ``NUMBA_CACHE_DIR``, since Numba does not show the code of cached
functions) without running it, so a target this CPU lacks (AVX-512 on an AVX2
machine) is inspected too, and counts the packed floating-point instructions of
its machine code by register width: xmm (128-bit), ymm (256-bit), zmm
(512-bit), and the scalar ones (``...sd``/``...ss``). A loop vectorized at the
target's full width shows as packed ops on the target's widest register; the
scalar count is the code outside the vector loop (remainders, the libm
fallback, set-up).

Under a forced target Numba passes the host's CPU features unless
``NUMBA_CPU_FEATURES`` is set (see :func:`benchmarks.machine.pin_named_target_features`):
here an AVX2 name gets the host's features without AVX-512, an AVX-512 name the
host's features with AVX-512's.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

#: (module, function, argument-type builder) of the kernels whose loops must vectorize.
KERNELS = [
    ("kernelmaps._maps.cosine", "cos_features", "P2, V1, S"),
    ("kernelmaps._maps.cosine", "_cossin_features", "P2, P2, S"),
    ("kernelmaps._numba.fastmath_arrays", "_apply_cos", "V1, V1"),
    ("kernelmaps._numba.fastmath_arrays", "_apply_exp", "V1, V1"),
    ("kernelmaps._numba.fastmath_arrays", "all_finite", "P2"),
    ("kernelmaps._numba.fwht", "_fwht_rows_parallel", "P2, S"),
]
AVX512_FEATURES = "+avx512f,+avx512vl,+avx512dq,+avx512bw,+avx512cd,+evex512"
_PACKED = re.compile(r"^\s*v(?:add|sub|mul|fmadd\d*|fnmadd\d*|fmsub\d*|fnmsub\d*|div|max|min|and|xor|blendv)"
                     r"p[sd]\s[^\n]*?%([xyz])mm", re.M)
_SCALAR = re.compile(r"^\s*v(?:add|sub|mul|fmadd\d*|fnmadd\d*|fmsub\d*|fnmsub\d*|div)s[sd]\s", re.M)


def _inspect_here():
    """Child process: compile every kernel for both dtypes, print JSON counts."""
    import importlib

    from numba import types

    result = {}
    for module, name, args in KERNELS:
        function = getattr(importlib.import_module(module), name)
        for dtype in (types.float32, types.float64):
            kinds = {"P2": types.Array(dtype, 2, "C"), "V1": types.Array(dtype, 1, "C"), "S": dtype}
            signature = tuple(kinds[a.strip()] for a in args.split(","))
            function.compile(signature)
            asm = function.inspect_asm(signature)
            widths = {"xmm": 0, "ymm": 0, "zmm": 0}
            for register in _PACKED.findall(asm):
                widths[register + "mm"] += 1
            result[f"{name}[{dtype}]"] = {**widths, "scalar": len(_SCALAR.findall(asm))}
    print(json.dumps(result))


def inspect_target(target):
    """Counts per kernel for one Numba target (``'host'`` for the native one,
    ``'host-512bit'`` for it without LLVM's preference for 256-bit vectors)."""
    from llvmlite import binding

    from benchmarks.machine import (_AVX512_FEATURES, _AVX512_NAMES, feature_string, features_without_avx512,
                                    full_width_features)

    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CPU")}
    host = dict(binding.get_host_cpu_features())
    if target == "host-512bit":
        env["NUMBA_CPU_FEATURES"] = full_width_features(host)
    elif target != "host":
        env["NUMBA_CPU_NAME"] = target
        if target.lower().startswith(_AVX512_NAMES):
            on = feature_string({f: enabled for f, enabled in host.items() if not f.startswith(_AVX512_FEATURES)})
            env["NUMBA_CPU_FEATURES"] = on + "," + AVX512_FEATURES
        else:
            env["NUMBA_CPU_FEATURES"] = features_without_avx512(host)
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        out = subprocess.run([sys.executable, "-m", "benchmarks.simd_report", "--child"], env=env,
                             capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="host,host-512bit,haswell,znver4,skylake-avx512")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _inspect_here()
        return
    from llvmlite import binding

    from benchmarks.machine import describe

    print(describe())
    print(f"host CPU: {binding.get_host_cpu_name()}; packed FP instructions by register "
          "(xmm 128 / ymm 256 / zmm 512 bits) and scalar ones")
    for target in args.targets.split(","):
        counts = inspect_target(target.strip())
        print(f"\ntarget {target}")
        print(f"  {'kernel':42s} {'xmm':>5s} {'ymm':>5s} {'zmm':>5s} {'scalar':>7s}")
        for kernel, c in counts.items():
            print(f"  {kernel:42s} {c['xmm']:5d} {c['ymm']:5d} {c['zmm']:5d} {c['scalar']:7d}")


if __name__ == "__main__":
    main()
