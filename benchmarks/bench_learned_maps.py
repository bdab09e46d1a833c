"""Learned maps (Yu et al. 2015): training time and test error over k.

CompactNonlinearMap (classification and kernel-approximation objectives) and
OptimizedCirculantMap need labels to fit, so they are kept out of the generated
suite (their ``benchmark`` is ``None``) and timed here, beside the RFF + Pegasos
pipeline they replace, on the suite's standardized data and gamma. The quick
profile runs k in {8, 64} with 10 alternation rounds; the full profile adds
k = 512 and the default 20 rounds.
"""

from . import common

WIDTHS = {"quick": [8, 64], "full": [8, 64, 512]}[common.PROFILE]
ROUNDS = {"quick": 10, "full": 20}[common.PROFILE]
LABELS = ["cnm", "cnm-kerapp", "optimized_circulant", "rff+pegasos"]


def make(label, n_components, gamma):
    """An unfitted pipeline for ``label``: fit(X, y) then score(X, y)."""
    import kernelmaps

    common_params = {"gamma": gamma, "max_iter": ROUNDS, "random_state": common.SEED}
    if label == "cnm":
        return kernelmaps.CompactNonlinearMap(n_components, **common_params)
    if label == "cnm-kerapp":
        return kernelmaps.CompactNonlinearMap(n_components, objective="kernel", **common_params)
    if label == "optimized_circulant":
        return kernelmaps.OptimizedCirculantMap(n_components, **common_params)
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        kernelmaps.RandomFourierFeatures(n_components, gamma=gamma, random_state=common.SEED),
        kernelmaps.PegasosSVC(alpha=1e-4, max_iter=100 * (ROUNDS + 1), random_state=common.SEED),
    )


class LearnedMaps:
    """Fit time and downstream test error of the learned maps and of RFF + Pegasos."""

    params = [LABELS, common.DATASETS, WIDTHS]
    param_names = ["algorithm", "dataset", "n_components"]
    number = 1
    rounds = 1
    repeat = (1, 3, 30.0)
    warmup_time = 0.0
    timeout = 900

    def setup(self, label, dataset, n_components):
        self.data = common.prepared(dataset)
        X, y = self.data["X_train"], self.data["y_train"]
        make(label, 4, self.data["gamma"]).fit(X[:200], y[:200])  # compile before timing

    def time_fit(self, label, dataset, n_components):
        make(label, n_components, self.data["gamma"]).fit(self.data["X_train"], self.data["y_train"])

    def track_test_error(self, label, dataset, n_components):
        est = make(label, n_components, self.data["gamma"])
        est.fit(self.data["X_train"], self.data["y_train"])
        return 1.0 - est.score(self.data["X_test"], self.data["y_test"])

    track_test_error.unit = "test error"
