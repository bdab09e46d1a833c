"""FWHT throughput of kernelmaps against FFHT, single-threaded, in one run.

A plain script, not an asv benchmark (asv imports every module here, so all the
work is under ``__main__`` and FFHT is imported lazily)::

    python benchmarks/fwht_vs_ffht.py [--repeats 31] [--elements 1048576]

FFHT (``pip install pybind11 setuptools wheel`` then
``pip install --no-build-isolation ffht-unofficial``) is Andoni et al.'s
AVX implementation. Both transform a batch of rows (float64, or float32 with
``--dtype float32``) in place; ours runs
the serial kernel (one thread), FFHT with ``nthreads=1``. Prints the median
throughput of each and the ratio ours / FFHT (above 1 means ours is faster).
"""


def main(argv=None):
    from common import median_seconds

    import argparse

    import numpy as np

    import numba

    from kernelmaps import fwht

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--elements", type=int, default=2**20, help="batch size in elements")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 14], help="log2 of the row lengths")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    args = parser.parse_args(argv)
    try:
        import ffht
    except ImportError:
        raise SystemExit("FFHT is not installed: pip install --no-build-isolation ffht-unofficial")

    dtype = np.dtype(args.dtype)
    numba.set_num_threads(1)  # one thread each, as FFHT's
    tol = 1e-9 if dtype == np.float64 else 1e-4
    print(f"{'n':>7} {'rows':>6} {'kernelmaps GB/s':>16} {'FFHT GB/s':>10} {'ratio':>6}")
    for log_n in args.sizes:
        n = 2**log_n
        X = np.random.default_rng(0).standard_normal((max(1, args.elements // n), n)).astype(dtype)
        check = X[:1].copy()
        fwht(check)
        np.testing.assert_allclose(check[0], ffht.fht(X[0].copy()), rtol=tol, atol=tol * n)
        fwht(X)  # warm-up (compilation, page faults)
        ffht.fht_(X)
        ours = median_seconds(lambda: fwht(X), args.repeats)
        theirs = median_seconds(lambda: ffht.fht_(X, 1), args.repeats)
        rate = X.nbytes / 1e9
        print(f"{n:>7} {X.shape[0]:>6} {rate / ours:>16.2f} {rate / theirs:>10.2f} {theirs / ours:>6.2f}")


if __name__ == "__main__":
    main()
