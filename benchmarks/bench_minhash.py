"""Min-hash features of synthetic 2048-bit fingerprints, binary (Tanimoto) and counts (min-max).

``MinHash`` has no generated entries: its width is ``n_hashes 2^n_bits``, its
output is sparse, and the suite's data sets are dense continuous features, not
sets. It is benchmarked here on seeded synthetic fingerprints (clusters of
related fingerprints of density 1-5 %, and ``1 + Poisson(1.5)`` counts on the
same bits):

* ``MinHashTransform``: ``time_transform`` of the training rows and
  ``track_kernel_error``, the relative Frobenius error of the bias-corrected
  estimate (``estimate_kernel``) against the exact kernel on evaluation rows.

``python -m benchmarks.experiments run minhash-tanimoto`` draws the error
against the number of hashes and times a NumPy min-hash beside it.
"""

from functools import lru_cache

from . import common

ROWS = {"quick": 5000, "full": 50000}[common.PROFILE]
EVAL_ROWS = 500
HASHES = {"quick": [256], "full": [64, 256, 1024]}[common.PROFILE]
MODES = ["binary", "weighted"]


@lru_cache(maxsize=None)
def data(mode):
    """``(X, X_eval)``: ``ROWS`` fingerprints (0/1 or counts) and ``EVAL_ROWS`` more."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(common.SEED)
    n, bits, members = ROWS + EVAL_ROWS, 2048, 8
    n_clusters = -(-n // members)
    density = rng.uniform(0.01, 0.05, size=n_clusters)
    cluster = rng.permutation(np.repeat(np.arange(n_clusters), members)[:n])
    X = sp.vstack([
        sp.csr_matrix(((rng.uniform(size=(len(rows), bits)) < density[cluster[rows], None] * 0.8)
                       | (rng.uniform(size=(len(rows), bits)) < density[cluster[rows], None] / 4)).astype(float))
        for rows in np.array_split(np.arange(n), 16)], format="csr")
    if mode == "weighted":
        X.data = 1.0 + rng.poisson(1.5, size=X.nnz)
    return X[:ROWS], X[ROWS:]


class MinHashTransform(common.Timing):
    """Transform time and corrected kernel error of MinHash (b = 8) on fingerprints."""

    params = [MODES, HASHES]
    param_names = ["mode", "n_hashes"]
    timeout = 300

    def setup(self, mode, k):
        from kernelmaps import MinHash

        self.X, self.X_eval = data(mode)
        self.map = common.warm(("minhash", mode, k),
                               lambda: MinHash(n_hashes=k, n_bits=8, mode=mode, random_state=common.SEED).fit(self.X))
        self.map.transform(self.X[:64])

    def time_transform(self, mode, k):
        self.map.transform(self.X)

    def track_kernel_error(self, mode, k):
        import numpy as np

        K = self.map.kernel(self.X_eval)
        return float(np.linalg.norm(self.map.estimate_kernel(self.X_eval) - K) / np.linalg.norm(K))

    track_kernel_error.unit = "relative error"
