"""Random binning features and Binning + LS beside RFF of the same Laplacian kernel.

``RandomBinning`` has no generated entries (its width is a number of grids and
its output is sparse), so it is benchmarked here, beside
``RandomFourierFeatures(kernel='laplacian')``, on the suite's prepared
``magic04`` (standardized, 10 dimensions) at the L1 knn50 bandwidth:

* ``BinningTransform``: ``time_transform`` of the training rows and
  ``track_kernel_error`` (relative Frobenius error against the exact Laplacian
  kernel on the suite's evaluation rows), binning at P grids against RFF at
  D = 8 P features (a CSR row of binning holds P values and P column indices;
  the ``rff-table1`` experiment draws both errors against memory and time);
* ``BinningLeastSquares``: ``time_fit`` of map + ``LeastSquaresClassifier`` and
  ``track_test_error``, Binning + LS (sparse features, conjugate gradient)
  against Fourier + LS.

``python -m benchmarks.experiments run rff-table1`` measures the same methods
at 500 000 rows.
"""

from functools import lru_cache

from . import common

GRIDS = {"quick": [32], "full": [32, 128]}[common.PROFILE]
DATASET = "magic04"
ALPHA = 0.1


@lru_cache(maxsize=None)
def data():
    """``(X, y, X_test, y_test, X_eval, gamma)``: the prepared set and its L1 knn50 gamma."""
    import numpy as np

    from kernelmaps import resolve_gamma

    prepared = common.prepared(DATASET)
    gamma = resolve_gamma("knn50", prepared["X_train"], "laplacian", np.random.RandomState(common.SEED))
    return (prepared["X_train"], prepared["y_train"], prepared["X_test"], prepared["y_test"],
            prepared["X_eval"], gamma)


def _map(label, P, gamma):
    from kernelmaps import RandomBinning, RandomFourierFeatures

    if label == "random_binning":
        return RandomBinning(n_grids=P, gamma=gamma, random_state=common.SEED)
    return RandomFourierFeatures(8 * P, kernel="laplacian", gamma=gamma, random_state=common.SEED)


MAPS = ["random_binning", "rff_laplacian"]


class BinningTransform(common.Timing):
    """Transform time and kernel error of binning (P grids) and RFF Laplacian (8 P features)."""

    params = [MAPS, GRIDS]
    param_names = ["algorithm", "n_grids"]
    timeout = 300

    def setup(self, label, P):
        self.X, _, _, _, self.X_eval, gamma = data()
        self.map = common.warm(("binning-map", label, P), lambda: _map(label, P, gamma).fit(self.X))
        self.map.transform(self.X[:64])

    def time_transform(self, label, P):
        self.map.transform(self.X)

    def track_kernel_error(self, label, P):
        from kernelmaps import relative_frobenius_error

        Z = self.map.transform(self.X_eval)
        return relative_frobenius_error(self.map.kernel(self.X_eval), Z=Z.toarray() if hasattr(Z, "toarray") else Z)

    track_kernel_error.unit = "relative error"


class BinningLeastSquares(common.Timing):
    """Fit time and test error of Binning + LS and Fourier + LS (Laplacian, same gamma)."""

    params = [MAPS, GRIDS]
    param_names = ["algorithm", "n_grids"]
    timeout = 600

    def _fit(self, label, P):
        from sklearn.pipeline import make_pipeline

        from kernelmaps import LeastSquaresClassifier

        return make_pipeline(_map(label, P, self.gamma), LeastSquaresClassifier(alpha=ALPHA)).fit(self.X, self.y)

    def setup(self, label, P):
        self.X, self.y, self.X_test, self.y_test, _, self.gamma = data()
        self.model = common.warm(("binning-ls", label, P), lambda: self._fit(label, P))

    def time_fit(self, label, P):
        self._fit(label, P)

    def track_test_error(self, label, P):
        return 1.0 - self.model.score(self.X_test, self.y_test)

    track_test_error.unit = "test error"
