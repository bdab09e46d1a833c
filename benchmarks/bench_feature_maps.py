"""Feature maps and their peers on the bundled datasets, generated from the registry.

Every registered feature map with a ``benchmark`` grid, and every peer it declares
(scikit-learn's RBFSampler, Nystroem, PolynomialCountSketch, ...), runs on the same
standardized data, with the same numeric gamma and the same width. Accuracy is
tracked as errors (lower is better, as asv assumes).
"""

import numpy as np

from . import common

_ENTRIES = common.entries()
_DERIVED = common.derived_width_entries()


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


def _kernel_error(dataset, reference, estimator, data):
    """Relative Frobenius error of the features of the evaluation rows against the
    exact kernel of the owner class (``reference``, a fitted map)."""
    from kernelmaps import relative_frobenius_error

    return relative_frobenius_error(common.ground_truth(dataset, reference), Z=estimator.transform(data["X_eval"]))


def _test_error(estimator, data):
    """Test error of a least-squares classifier on the features."""
    from kernelmaps import LeastSquaresClassifier

    Z_train = estimator.transform(data["X_train"])
    Z_test = estimator.transform(data["X_test"])
    clf = LeastSquaresClassifier(alpha=1.0).fit(Z_train, data["y_train"])
    return 1.0 - clf.score(Z_test, data["y_test"])


class FeatureMaps(_Timing):
    """Fit and transform time, memory and accuracy on the bundled data."""

    params = [sorted(_ENTRIES), common.DATASETS, _WIDTHS]
    param_names = ["algorithm", "dataset", "n_components"]
    timeout = 600

    def setup(self, label, dataset, n_components):
        _skip_unless_in_grid(label, n_components)
        self.owner, self.factory = _ENTRIES[label]
        self.data = common.prepared(dataset, common.positive_only(self.owner))
        self.estimator, self.reference = common.fit_pair(label, dataset, n_components)
        self.estimator.transform(self.data["X_eval"][:8])  # compile before timing

    def time_fit(self, label, dataset, n_components):
        self.factory(n_components, common.SEED, self.data["gamma"]).fit(self.data["X_train"])

    def time_transform(self, label, dataset, n_components):
        self.estimator.transform(self.data["X_test"])

    def peakmem_transform(self, label, dataset, n_components):
        self.estimator.transform(self.data["X_test"])

    def track_kernel_error(self, label, dataset, n_components):
        return _kernel_error(dataset, self.reference, self.estimator, self.data)

    track_kernel_error.unit = "relative Frobenius error"

    def track_test_error(self, label, dataset, n_components):
        return _test_error(self.estimator, self.data)

    track_test_error.unit = "test error (least squares on features)"


class DerivedWidthMaps(_Timing):
    """Maps whose width the data sets, beside their peers, at their ``benchmark``
    parameters: ``AdditiveChi2Map`` (``n_features (2 sample_steps - 1)`` columns)
    and scikit-learn's ``AdditiveChi2Sampler``, on the data made non-negative."""

    params = [sorted(_DERIVED), common.DATASETS]
    param_names = ["algorithm", "dataset"]
    timeout = 600

    def setup(self, label, dataset):
        self.owner, self.factory = _DERIVED[label]
        self.data = common.prepared(dataset, common.positive_only(self.owner))
        self.estimator = self.factory().fit(self.data["X_train"])
        self.reference = _DERIVED[self.owner.name][1]().fit(self.data["X_train"][:50])
        self.estimator.transform(self.data["X_eval"][:8])  # compile before timing

    def time_fit(self, label, dataset):
        self.factory().fit(self.data["X_train"])

    def time_transform(self, label, dataset):
        self.estimator.transform(self.data["X_test"])

    def peakmem_transform(self, label, dataset):
        self.estimator.transform(self.data["X_test"])

    def track_kernel_error(self, label, dataset):
        return _kernel_error(dataset, self.reference, self.estimator, self.data)

    track_kernel_error.unit = "relative Frobenius error"

    def track_test_error(self, label, dataset):
        return _test_error(self.estimator, self.data)

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


class HistogramTransformSpeed(_Timing):
    """The histogram maps' speed workload beside their peers: X ~ U[0, 1), 20000 x 64.

    ``QuantileFourierFeatures(kernel='skewed_chi2')`` against ``SkewedChi2Sampler``
    at D = 4096, and ``AdditiveChi2Map`` against ``AdditiveChi2Sampler``
    (``sample_steps=2``: 192 columns). Compare ``time_transform`` within one run.
    """

    params = [sorted([label for label, (cls, _) in _ENTRIES.items() if common.positive_only(cls)]
                     + [label for label, (cls, _) in _DERIVED.items() if common.positive_only(cls)]),
              ["20000x64"], ["float64", "float32"]]
    param_names = ["algorithm", "shape", "dtype"]
    timeout = 600

    def setup(self, label, shape, dtype):
        n, d = (int(v) for v in shape.split("x"))
        self.X = np.random.default_rng(0).uniform(size=(n, d)).astype(dtype)
        if label in _ENTRIES:
            self.estimator = _ENTRIES[label][1](4096, 0, None).fit(self.X[:2000])
        else:
            self.estimator = _DERIVED[label][1]().fit(self.X[:2000])
        self.estimator.transform(self.X[:8])

    def time_transform(self, label, shape, dtype):
        self.estimator.transform(self.X)

    def peakmem_transform(self, label, shape, dtype):
        self.estimator.transform(self.X)
