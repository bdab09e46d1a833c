"""RFF transform against scikit-learn's RBFSampler: the foundation issue's workload.

Usage: ``python benchmarks/speed_rff.py``

Gaussian kernel, same gamma (1/d) and D = 4096, X ~ N(0, 1); medians of 7 runs of
each side in one process (after a warm-up), as ratios. Also the memory a
transform allocates beyond its output, traced with ``tracemalloc``.
(asv imports every module here; all work is under ``__main__``.)
"""


def main():
    from common import median_seconds

    import tracemalloc

    import numpy as np
    from sklearn.kernel_approximation import RBFSampler

    from kernelmaps import RandomFourierFeatures

    rng = np.random.default_rng(0)
    print(f"{'workload':24s} {'dtype':8s} {'ours':>9s} {'RBFSampler':>11s} {'ratio':>7s} {'extra memory':>13s}")
    for n, d in ((20000, 64), (10000, 784)):
        for dtype in (np.float64, np.float32):
            X = rng.standard_normal((n, d)).astype(dtype)
            ours = RandomFourierFeatures(4096, gamma=1.0 / d, random_state=0).fit(X)
            theirs = RBFSampler(gamma=1.0 / d, n_components=4096, random_state=0).fit(X)
            ours.transform(X[:16])
            theirs.transform(X[:16])
            t_ours = median_seconds(lambda: ours.transform(X))
            t_theirs = median_seconds(lambda: theirs.transform(X))
            tracemalloc.start()
            Z = ours.transform(X)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            extra = (peak - Z.nbytes) / 2**20
            del Z
            print(f"N={n}, d={d:<14d} {dtype.__name__:8s} {t_ours:8.3f}s {t_theirs:10.3f}s "
                  f"{t_theirs / t_ours:6.2f}x {extra:9.1f} MiB")


if __name__ == "__main__":
    main()
