"""kernelmaps on Dask: the one-pass fit in memory and on a ``dask.distributed`` cluster.

``DaskOnePass.time_fit``: RFF + ``LeastSquaresClassifier`` fitted in one pass over
the same rows (N(0, 1), d = 16, a nonlinear rule of three inputs as labels), in
memory (``fit(X, y, feature_map=rff)`` on NumPy arrays, the process's 2 threads) and
on a ``LocalCluster`` of 2 single-threaded worker processes bound to 127.0.0.1,
with the rows persisted on the workers. The ratio of the two is the Dask path's
overhead (the project's bar is >= 0.7x the in-memory throughput).
``track_worker_peak_memory``: the largest worker's peak resident set after the fit (in
memory: the fitting process's own).

Skipped (``NotImplementedError``) when the ``dask`` extra is absent. The quick
profile fits 100 000 rows at D = 1024; the full one 10^6 rows at D = 2048
(``python -m benchmarks.experiments run dask-out-of-core`` runs N = 10^7).
"""

from . import common

ROWS = {"quick": 100_000, "full": 1_000_000}[common.PROFILE]
WIDTH = {"quick": 1024, "full": 2048}[common.PROFILE]
CHUNK_ROWS = {"quick": 25_000, "full": 100_000}[common.PROFILE]
FEATURES = 16


class DaskOnePass(common.Timing):
    params = [["in-memory", "dask-2-workers"]]
    param_names = ["path"]
    timeout = 600
    # asv re-runs setup (a new cluster, a warm fit) before each sample: one sample in the quick profile
    repeat = (1, 1, 1.0) if common.PROFILE == "quick" else common.REPEAT

    def setup(self, path):
        try:
            import dask.array as da
            from distributed import Client, LocalCluster
        except ImportError as error:
            raise NotImplementedError(f"the dask extra is absent ({error})") from error
        import numpy as np

        import kernelmaps

        rng = np.random.default_rng(common.SEED)
        self.X = rng.standard_normal((ROWS, FEATURES))
        self.y = common.synthetic_labels(self.X)
        self.rff = kernelmaps.RandomFourierFeatures(n_components=WIDTH, gamma=1.0 / FEATURES,
                                                    random_state=common.SEED).fit(self.X[:10_000])
        self.cluster = self.client = None
        if path == "dask-2-workers":
            self.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=None, silence_logs=40)
            self.client = Client(self.cluster)
            self.X = self.client.persist(da.from_array(self.X, chunks=(CHUNK_ROWS, -1)))
            self.y = self.client.persist(da.from_array(self.y, chunks=CHUNK_ROWS))
        self.time_fit(path)  # compiled, workers warm: what is timed runs once here

    def teardown(self, path):
        # asv tears down after a setup that skipped (no dask): nothing was started then
        if getattr(self, "client", None) is not None:
            self.client.close()
            self.cluster.close()

    def time_fit(self, path):
        import kernelmaps

        kernelmaps.LeastSquaresClassifier(alpha=1.0).fit(self.X, self.y, feature_map=self.rff)

    def track_worker_peak_memory(self, path):
        if self.client is None:  # in memory: the fitting process itself
            return common.peak_resident_bytes() / 2**20

        def peak():  # defined here so that the workers receive it by value
            with open("/proc/self/status") as status:
                return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))

        return max(self.client.run(peak).values()) / 2**20

    track_worker_peak_memory.unit = "MiB"
