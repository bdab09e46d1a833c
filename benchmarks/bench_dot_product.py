"""Dot-product maps: Tensor Sketch against scikit-learn, Random Maclaurin against BLAS.

* ``TensorSketchSpeed``: :class:`kernelmaps.TensorSketch` against scikit-learn's
  ``PolynomialCountSketch``, same degree (3), gamma (1/d), coef0 (1) and D (4096),
  X ~ N(0, 1) of shape N x 64 (N = 20000 in the full profile).
* ``RandomMaclaurinSpeed``: the transform of :class:`kernelmaps.RandomMaclaurin`
  (polynomial degree 3, D = 4096) against the BLAS product ``X W`` with the same
  stacked Rademacher matrix, the lower bound of its projections.

The ``track_*`` entries are ratios of medians measured in one process, so that
machine load affects both sides alike. Run directly
(``python benchmarks/bench_dot_product.py``) to print them for the full sizes.
"""

import os

import numpy as np

if __package__:
    from . import common
    from .common import median_seconds

    PROFILE = common.PROFILE
else:  # run as a script: the full sizes unless a profile is chosen
    from common import median_seconds

    PROFILE = os.environ.get("KERNELMAPS_BENCH_PROFILE", "full")

N_ROWS = {"quick": 5000, "full": 20000}[PROFILE]
N_FEATURES = 64
WIDTH = 4096
REPEATS = 7


def _data(dtype, n_rows=N_ROWS):
    return np.random.default_rng(0).standard_normal((n_rows, N_FEATURES)).astype(dtype)


class TensorSketchSpeed:
    params = [["float64", "float32"]]
    param_names = ["dtype"]
    timeout = 600

    def setup(self, dtype):
        from sklearn.kernel_approximation import PolynomialCountSketch

        from kernelmaps import TensorSketch

        self.X = _data(dtype)
        kw = dict(degree=3, gamma=1.0 / N_FEATURES, coef0=1.0, random_state=0)
        self.ours = TensorSketch(WIDTH, **kw).fit(self.X)
        self.theirs = PolynomialCountSketch(n_components=WIDTH, **kw).fit(self.X)
        self.ours.transform(self.X[:8])  # compile

    def time_kernelmaps(self, dtype):
        self.ours.transform(self.X)

    def time_sklearn(self, dtype):
        self.theirs.transform(self.X)

    def track_speedup_over_sklearn(self, dtype):
        return (median_seconds(lambda: self.theirs.transform(self.X), REPEATS)
                / median_seconds(lambda: self.ours.transform(self.X), REPEATS))

    track_speedup_over_sklearn.unit = "sklearn time / kernelmaps time"

    def track_output_is_input_dtype(self, dtype):
        return float(self.ours.transform(self.X[:4]).dtype == self.X.dtype)


class RandomMaclaurinSpeed:
    params = [["float64", "float32"], [False, True]]
    param_names = ["dtype", "structured"]
    timeout = 600

    def setup(self, dtype, structured):
        from kernelmaps import RandomMaclaurin

        self.X = _data(dtype)
        kw = dict(degree=3, gamma=1.0 / N_FEATURES, coef0=1.0, random_state=0)
        self.rm = RandomMaclaurin(WIDTH, structured=structured, **kw).fit(self.X)
        # the dense map's stacked Rademacher vectors: the same number of projections
        self.W = np.ascontiguousarray(RandomMaclaurin(WIDTH, **kw).fit(self.X).random_weights_, dtype=dtype)
        self.rm.transform(self.X[:8])

    def time_transform(self, dtype, structured):
        self.rm.transform(self.X)

    def time_blas_products(self, dtype, structured):
        self.X @ self.W

    def track_transform_over_blas(self, dtype, structured):
        return (median_seconds(lambda: self.rm.transform(self.X), REPEATS)
                / median_seconds(lambda: self.X @ self.W, REPEATS))

    track_transform_over_blas.unit = "transform time / BLAS product time"


def main():
    import sys

    print(f"N = {N_ROWS}, d = {N_FEATURES}, D = {WIDTH}; medians of {REPEATS} runs, ratios in one process",
          file=sys.stderr)
    for dtype in ("float64", "float32"):
        bench = TensorSketchSpeed()
        bench.setup(dtype)
        ours = median_seconds(lambda: bench.ours.transform(bench.X), REPEATS)
        theirs = median_seconds(lambda: bench.theirs.transform(bench.X), REPEATS)
        print(f"TensorSketch {dtype}: ours {ours:.3f} s ({bench.ours.transform(bench.X[:2]).dtype}), "
              f"PolynomialCountSketch {theirs:.3f} s ({bench.theirs.transform(bench.X[:2]).dtype}), "
              f"speed-up {theirs / ours:.2f}x")
    for dtype in ("float64", "float32"):
        for structured in (False, True):
            bench = RandomMaclaurinSpeed()
            bench.setup(dtype, structured)
            transform = median_seconds(lambda: bench.rm.transform(bench.X), REPEATS)
            blas = median_seconds(lambda: bench.X @ bench.W, REPEATS)
            print(f"RandomMaclaurin {dtype} {'Hadamard' if structured else 'dense'}: transform {transform:.3f} s, "
                  f"X @ W {bench.W.shape} {blas:.3f} s, ratio {transform / blas:.2f}")


if __name__ == "__main__":
    main()
