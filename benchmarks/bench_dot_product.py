"""Random Maclaurin against its floor, the BLAS product of its projections.

``RandomMaclaurinSpeed``: the transform of :class:`kernelmaps.RandomMaclaurin`
(polynomial degree 3, D = 4096, dense or Hadamard-structured projections) against
the BLAS product ``X W`` with the same stacked Rademacher matrix, the lower bound
of its projections. ``track_transform_over_blas`` is a ratio of medians measured
in one process, so that machine load affects both sides alike. (Tensor Sketch and
Random Maclaurin against scikit-learn's ``PolynomialCountSketch`` are in
``bench_feature_maps.TransformSpeed``.)
"""

import numpy as np

from . import common
from .common import median_seconds

N_ROWS = common.SPEED_ROWS // 2
N_FEATURES = 64
WIDTH = 4096
REPEATS = {"quick": 3, "full": 7}[common.PROFILE]


def _data(dtype, n_rows=N_ROWS):
    return np.random.default_rng(0).standard_normal((n_rows, N_FEATURES)).astype(dtype)


class RandomMaclaurinSpeed(common.Timing):
    params = [["float64", "float32"], [False, True]]
    param_names = ["dtype", "structured"]
    timeout = 600

    def setup(self, dtype, structured):
        def build():
            from kernelmaps import RandomMaclaurin

            X = _data(dtype)
            kw = dict(degree=3, gamma=1.0 / N_FEATURES, coef0=1.0, random_state=0)
            rm = RandomMaclaurin(WIDTH, structured=structured, **kw).fit(X)
            # the dense map's stacked Rademacher vectors: the same number of projections
            W = np.ascontiguousarray(RandomMaclaurin(WIDTH, **kw).fit(X).random_weights_, dtype=dtype)
            rm.transform(X)
            X @ W
            return X, rm, W

        self.X, self.rm, self.W = common.warm((dtype, structured), build)

    def time_transform(self, dtype, structured):
        self.rm.transform(self.X)

    def time_blas_products(self, dtype, structured):
        self.X @ self.W

    def track_transform_over_blas(self, dtype, structured):
        return (median_seconds(lambda: self.rm.transform(self.X), REPEATS)
                / median_seconds(lambda: self.X @ self.W, REPEATS))

    track_transform_over_blas.unit = "transform time / BLAS product time"
