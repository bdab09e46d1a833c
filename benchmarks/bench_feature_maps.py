"""Feature maps and their peers on the bundled datasets, generated from the registry.

Every registered feature map with a ``benchmark`` entry, and every peer it declares
(scikit-learn's RBFSampler, Nystroem, PolynomialCountSketch, ...), runs on the same
standardized data, with the same numeric gamma and at the same widths
(``common.WIDTHS``). Accuracy is tracked as errors (lower is better, as asv
assumes).

* ``FeatureMaps``: fit and transform time per dataset and width.
* ``FeatureMapAccuracy``: kernel error, test error and the transform's memory,
  all computed once in ``setup_cache`` (one fit per map, dataset and width) and
  read back per parameter combination.
* ``DerivedWidthMaps`` / ``DerivedWidthAccuracy``: the same for maps whose width
  the data sets (``AdditiveChi2Map`` beside ``AdditiveChi2Sampler``).
* ``ExactBaselines``: the exact kernel machines beside their scikit-learn peers.
* ``TransformSpeed``: the speed workload, every map and peer at D = 4096 on its
  family's data (Nyström at m = 1024), both dtypes: time and memory.

Every ``setup`` runs what its benchmark times once (through ``common.warm``), so no
timed sample includes Numba compilation, cache loading or thread start-up.
"""

import numpy as np

from . import common

_ENTRIES = common.entries()
_DERIVED = common.derived_width_entries()
_MIB = 2.0**20


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


def _accuracy(estimator, reference, dataset, data):
    """Everything ``*Accuracy`` tracks for one fitted map."""
    memory, output = common.transform_memory(estimator.transform, data["X_test"])
    return {"kernel_error": _kernel_error(dataset, reference, estimator, data),
            "test_error": _test_error(estimator, data),
            "transform_memory": memory, "output_memory": output}


class _AccuracyTracks:
    """The tracks of a class whose ``setup_cache`` returns ``{params: {metric: value}}``."""

    def track_kernel_error(self, table, *params):
        return table[params]["kernel_error"]

    track_kernel_error.unit = "relative Frobenius error"

    def track_test_error(self, table, *params):
        return table[params]["test_error"]

    track_test_error.unit = "test error (least squares on features)"

    def track_transform_memory(self, table, *params):
        return table[params]["transform_memory"]

    track_transform_memory.unit = "MiB beyond the process baseline"

    def track_output_memory(self, table, *params):
        return table[params]["output_memory"]

    track_output_memory.unit = "MiB"


class FeatureMaps(common.Timing):
    """Fit and transform time on the bundled data, every map and peer at every width."""

    params = [sorted(_ENTRIES), common.DATASETS, common.WIDTHS]
    param_names = ["algorithm", "dataset", "n_components"]
    timeout = 600

    def setup(self, label, dataset, n_components):
        self.owner, self.factory = _ENTRIES[label]
        self.data = common.prepared(dataset, common.positive_only(self.owner))

        def build():
            est = self.factory(n_components, common.SEED, self.data["gamma"]).fit(self.data["X_train"])
            est.transform(self.data["X_test"])
            return est

        self.estimator = common.warm((label, dataset, n_components), build)

    def time_fit(self, label, dataset, n_components):
        self.factory(n_components, common.SEED, self.data["gamma"]).fit(self.data["X_train"])

    def time_transform(self, label, dataset, n_components):
        self.estimator.transform(self.data["X_test"])


class FeatureMapAccuracy(_AccuracyTracks):
    """Kernel error, test error and transform memory of every map and peer at every width.

    ``track_transform_memory`` is what one transform of the test rows allocates
    beyond the process's resident set before it (output included), in MiB;
    ``track_output_memory`` is the output array alone.
    """

    params = FeatureMaps.params
    param_names = FeatureMaps.param_names
    timeout = 1800

    def setup_cache(self):
        table = {}
        for label in sorted(_ENTRIES):
            for dataset in common.DATASETS:
                for n_components in common.WIDTHS:
                    est, reference = common.fit_pair(label, dataset, n_components)
                    data = common.prepared(dataset, common.positive_only(_ENTRIES[label][0]))
                    table[label, dataset, n_components] = _accuracy(est, reference, dataset, data)
        return table


class DerivedWidthMaps(common.Timing):
    """Maps whose width the data sets, beside their peers, at their ``benchmark``
    parameters: ``AdditiveChi2Map`` (``n_features (2 sample_steps - 1)`` columns)
    and scikit-learn's ``AdditiveChi2Sampler``, on the data made non-negative."""

    params = [sorted(_DERIVED), common.DATASETS]
    param_names = ["algorithm", "dataset"]
    timeout = 600

    def setup(self, label, dataset):
        self.owner, self.factory = _DERIVED[label]
        self.data = common.prepared(dataset, common.positive_only(self.owner))

        def build():
            est = self.factory().fit(self.data["X_train"])
            est.transform(self.data["X_test"])
            return est

        self.estimator = common.warm((label, dataset), build)

    def time_fit(self, label, dataset):
        self.factory().fit(self.data["X_train"])

    def time_transform(self, label, dataset):
        self.estimator.transform(self.data["X_test"])


class DerivedWidthAccuracy(_AccuracyTracks):
    """Kernel error, test error and memory of the derived-width maps and peers."""

    params = DerivedWidthMaps.params
    param_names = DerivedWidthMaps.param_names
    timeout = 600

    def setup_cache(self):
        table = {}
        for label in sorted(_DERIVED):
            owner, factory = _DERIVED[label]
            for dataset in common.DATASETS:
                data = common.prepared(dataset, common.positive_only(owner))
                est = factory().fit(data["X_train"])
                reference = _DERIVED[owner.name][1]().fit(data["X_train"][:50])
                table[label, dataset] = _accuracy(est, reference, dataset, data)
        return table


class ExactBaselines(common.Timing):
    """Exact kernel machines (the papers' "RBF" row) beside their scikit-learn peers.

    Generated from the registry entries of kind ``baseline`` that declare a
    ``benchmark``, e.g. ``KernelSVC`` beside ``sklearn.SVC``, at the suite's gamma.
    ``setup`` fits once (the warm-up of ``time_fit`` and the model ``track_test_error``
    scores).
    """

    params = [sorted(common.baseline_entries()), common.DATASETS]
    param_names = ["algorithm", "dataset"]
    timeout = 1200

    def setup(self, label, dataset):
        self.data = common.prepared(dataset)
        self.factory = common.baseline_entries()[label]
        self.model = common.warm((label, dataset), lambda: self.factory(self.data["gamma"]).fit(
            self.data["X_train"], self.data["y_train"]))

    def time_fit(self, label, dataset):
        self.factory(self.data["gamma"]).fit(self.data["X_train"], self.data["y_train"])

    def track_test_error(self, label, dataset):
        return 1.0 - self.model.score(self.data["X_test"], self.data["y_test"])

    track_test_error.unit = "test error"


#: Width of the speed workload, unless a map's ``benchmark["speed"]`` sets its own.
SPEED_WIDTH = 4096
SPEED_FEATURES = 64


def speed_plan():
    """``{(label, width): factory(gamma)}`` of the speed workload: each map at its
    speed width and parameters, each peer beside it at the same width with the
    map's kernel parameters."""
    plan = {}
    for name, cls, fixed, shared_gamma in common._benchmarked("feature_map"):
        if "n_components" not in cls().get_params():
            continue
        speed = cls.benchmark.get("speed", {})
        width = speed.get("n_components", SPEED_WIDTH)
        ours = dict(fixed, **speed.get("params", {}))
        plan[name, width] = lambda gamma, cls=cls, w=width, p=ours, g=shared_gamma: cls(
            n_components=w, random_state=common.SEED, **common._params(p, g, gamma))
        for label, factory in cls.peers().items():
            plan.setdefault((label, width), lambda gamma, f=factory, w=width, p=fixed, g=shared_gamma: f(
                w, common.SEED, **common._params(p, g, gamma)))
    return plan


_SPEED = speed_plan()


def _speed_data(owner, dtype):
    """The workload's rows: U[0, 1) for maps of non-negative data, else N(0, 1)."""
    rng = np.random.default_rng(common.SEED)
    if common.positive_only(owner):
        return rng.uniform(size=(common.SPEED_ROWS, SPEED_FEATURES)).astype(dtype)
    return rng.standard_normal((common.SPEED_ROWS, SPEED_FEATURES)).astype(dtype)


class TransformSpeed(common.Timing):
    """The speed workload: every map and peer on its family's data (``SPEED_ROWS`` x 64,
    gamma = 1/d for the shift-invariant kernels), D = 4096 unless the map's
    ``benchmark["speed"]`` says otherwise (Nyström m = 1024; CRAFTMaps E = 1024
    with the SRHT down-projection), float64 and float32. Compare ``time_transform``
    of a map with its peer's at the same width in the same run."""

    params = [sorted({label for label, _ in _SPEED}), ["float64", "float32"],
              sorted({width for _, width in _SPEED})]
    param_names = ["algorithm", "dtype", "n_components"]
    timeout = 600

    def setup(self, label, dtype, n_components):
        if (label, n_components) not in _SPEED:
            raise NotImplementedError(f"{label} does not run at n_components={n_components} in the speed workload")
        owner = _ENTRIES[label][0]

        def build():
            X = _speed_data(owner, dtype)
            gamma = 1.0 / SPEED_FEATURES if common.uses_data_gamma(owner, dict(owner.benchmark["params"])) else None
            est = _SPEED[label, n_components](gamma).fit(X[:max(2000, n_components)])
            est.transform(X)
            return X, est

        self.X, self.estimator = common.warm((label, dtype, n_components), build)

    def time_transform(self, label, dtype, n_components):
        self.estimator.transform(self.X)

    def track_transform_memory(self, label, dtype, n_components):
        return common.transform_memory(self.estimator.transform, self.X)[0]

    track_transform_memory.unit = "MiB beyond the process baseline"


class DerivedWidthSpeed(common.Timing):
    """The speed workload of the maps whose width the data sets, beside their peers:
    ``AdditiveChi2Map(sample_steps=2)`` and ``AdditiveChi2Sampler`` on
    U[0, 1) rows (``SPEED_ROWS`` x 64, 192 output columns)."""

    params = [sorted(_DERIVED), ["float64", "float32"]]
    param_names = ["algorithm", "dtype"]
    timeout = 600

    def setup(self, label, dtype):
        owner, factory = _DERIVED[label]

        def build():
            X = _speed_data(owner, dtype)
            est = factory().fit(X[:2000])
            est.transform(X)
            return X, est

        self.X, self.estimator = common.warm((label, dtype), build)

    def time_transform(self, label, dtype):
        self.estimator.transform(self.X)

    def track_transform_memory(self, label, dtype):
        return common.transform_memory(self.estimator.transform, self.X)[0]

    track_transform_memory.unit = "MiB beyond the process baseline"


# inherited by the forked child of every parameter combination (see common.prepare_all)

common.prepare_all()
