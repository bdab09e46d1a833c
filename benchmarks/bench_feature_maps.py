"""Feature maps and their peers on the bundled datasets, generated from the registry.

Every registered feature map with a ``benchmark`` grid, and every peer it declares
(scikit-learn's RBFSampler, Nystroem, PolynomialCountSketch, ...), runs on the same
standardized data, with the same numeric gamma and the same width. Accuracy is
tracked as errors (lower is better, as asv assumes).
"""

import numpy as np

from . import common

_ENTRIES = common.entries()


class _Timing:
    """Median of up to three samples, one call each, no warm-up rounds (set-up compiles)."""

    number = 1
    rounds = 1
    repeat = (1, 3, 20.0)
    warmup_time = 0.0

_WIDTHS = sorted({w for label in _ENTRIES for w in common.widths_for(label)})


def _skip_unless_in_grid(label, n_components):
    if n_components not in common.widths_for(label):
        raise NotImplementedError(f"{label} does not run at n_components={n_components}")


class FeatureMaps(_Timing):
    """Fit and transform time, memory and accuracy on the bundled data."""

    params = [sorted(_ENTRIES), common.DATASETS, _WIDTHS]
    param_names = ["algorithm", "dataset", "n_components"]
    timeout = 600

    def setup(self, label, dataset, n_components):
        _skip_unless_in_grid(label, n_components)
        self.data = common.prepared(dataset)
        self.owner, self.factory = _ENTRIES[label]
        self.estimator, self.reference = common.fit_pair(label, dataset, n_components)
        self.estimator.transform(self.data["X_eval"][:8])  # compile before timing

    def time_fit(self, label, dataset, n_components):
        self.factory(n_components, common.SEED, self.data["gamma"]).fit(self.data["X_train"])

    def time_transform(self, label, dataset, n_components):
        self.estimator.transform(self.data["X_test"])

    def peakmem_transform(self, label, dataset, n_components):
        self.estimator.transform(self.data["X_test"])

    def track_kernel_error(self, label, dataset, n_components):
        K = common.ground_truth(dataset, self.reference)
        Z = self.estimator.transform(self.data["X_eval"])
        from kernelmaps import relative_frobenius_error

        return relative_frobenius_error(K, Z=Z)

    track_kernel_error.unit = "relative Frobenius error"

    def track_test_error(self, label, dataset, n_components):
        from kernelmaps import LeastSquaresClassifier

        Z_train = self.estimator.transform(self.data["X_train"])
        Z_test = self.estimator.transform(self.data["X_test"])
        clf = LeastSquaresClassifier(alpha=1.0).fit(Z_train, self.data["y_train"])
        return 1.0 - clf.score(Z_test, self.data["y_test"])

    track_test_error.unit = "test error (least squares on features)"


class ExactBaselines(_Timing):
    """Exact kernel machines (the papers' "RBF" row) beside their scikit-learn peers.

    Generated from the registry entries of kind ``baseline`` that declare a
    ``benchmark``, e.g. ``KernelSVC`` beside ``sklearn.SVC``, at the suite's gamma.
    """

    params = [sorted(common.baseline_entries()), common.DATASETS]
    param_names = ["algorithm", "dataset"]
    timeout = 1200

    def setup(self, label, dataset):
        self.data = common.prepared(dataset)
        self.factory = common.baseline_entries()[label]
        self.model = self.factory(self.data["gamma"]).fit(self.data["X_train"], self.data["y_train"])

    def time_fit(self, label, dataset):
        self.factory(self.data["gamma"]).fit(self.data["X_train"], self.data["y_train"])

    def track_test_error(self, label, dataset):
        return 1.0 - self.model.score(self.data["X_test"], self.data["y_test"])

    track_test_error.unit = "test error"


class TransformSpeed(_Timing):
    """The issue's speed workload: X ~ N(0, 1), D = 4096, gamma = 1/d, shift-invariant maps.

    Compare ``time_transform`` of an algorithm with its peer's in the same run.
    """

    shapes = {"quick": ["20000x64"], "full": ["20000x64", "10000x784"]}[common.PROFILE]
    params = [sorted(label for label, (cls, _) in _ENTRIES.items() if cls.kernel_family == "shift_invariant"),
              shapes, ["float64", "float32"]]
    param_names = ["algorithm", "shape", "dtype"]
    timeout = 600

    def setup(self, label, shape, dtype):
        n, d = (int(v) for v in shape.split("x"))
        self.X = np.random.default_rng(0).standard_normal((n, d)).astype(dtype)
        _, factory = _ENTRIES[label]
        self.estimator = factory(4096, 0, 1.0 / d).fit(self.X[:2000])
        self.estimator.transform(self.X[:8])

    def time_transform(self, label, shape, dtype):
        self.estimator.transform(self.X)

    def peakmem_transform(self, label, shape, dtype):
        self.estimator.transform(self.X)
