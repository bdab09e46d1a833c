"""One pass ``K^T (K V)`` of the Nyström machines' kernel operator, beside NumPy on the same block.

``KernelPass.time_pass(path, k)`` times one ``KernelOperator.normal_matvec`` of the
Gaussian kernel between n rows and m = 1024 centres (d = 16, float64; n = 20 000 in
the quick profile, 50 000 in the full one) with k right-hand sides (1; 26 as
``letter``'s classes; 130 as its classes times five folds of a cross-validated
learner), on the path:

* ``kept``: the kernel block computed once and kept (``keep_blocks=True``, what
  ``kernel_cache='auto'`` does when it fits); each pass reads it once for both
  products;
* ``fused``: the block evaluated tile by tile in registers on every pass, never
  stored (what a Nyström machine does when the block does not fit); past
  ``FUSED_MAX_COLUMNS`` right-hand sides (32 in float64 on AVX2), each block of
  its values is written and BLAS multiplies it;
* ``numpy``: the peer a user would write, ``G.T @ (G @ V)`` on the same block
  held as a NumPy array: two BLAS products, each reading the block.

The whole fits are ``bench_kernel_machines``; ``python -m benchmarks.experiments run
kernel-pass-speed`` measures the same pass in core-ns per kernel entry over d, m and k.
"""

import numpy as np

from . import common

PATHS = ["kept", "fused", "numpy"]
COLUMNS = [1, 26, 130]
ROWS = {"quick": 20_000, "full": 50_000}[common.PROFILE]
CENTRES = 1024
FEATURES = 16


def problem():
    """``(kept operator, fused operator, right-hand sides by k)`` of the suite's pass, once per process."""
    def build():
        from kernelmaps._solvers.kernel_operator import KernelOperator

        rng = np.random.default_rng(common.SEED)
        X = rng.standard_normal((ROWS, FEATURES))
        centres = X[rng.choice(ROWS, CENTRES, replace=False)]
        gamma = 1.0 / FEATURES
        kept = KernelOperator(X, centres, kernel="gaussian", gamma=gamma, keep_blocks=True)
        fused = KernelOperator(X, centres, kernel="gaussian", gamma=gamma)
        assert kept.fused is not None and fused.fused is not None, "the Gaussian pass is not fused here"
        V = {k: rng.standard_normal((CENTRES, k)) for k in COLUMNS}
        for k in COLUMNS:  # compiles every path, fills the kept block
            kept.normal_matvec(V[k])
            fused.normal_matvec(V[k])
        return kept, fused, V

    return common.warm("kernel_pass", build)


class KernelPass(common.Timing):
    params = [PATHS, COLUMNS]
    param_names = ["path", "k"]
    timeout = 300

    def setup(self, path, k):
        self.kept, self.fused, V = problem()
        self.V = V[k]
        self.block = self.kept.kept

    def time_pass(self, path, k):
        if path == "kept":
            self.kept.normal_matvec(self.V)
        elif path == "fused":
            self.fused.normal_matvec(self.V)
        else:
            self.block.T @ (self.block @ self.V)
