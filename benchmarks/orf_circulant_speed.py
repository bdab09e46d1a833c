"""Median transform time of ORF / circulant / RFF against sklearn RBFSampler, same run.

Usage: ``python benchmarks/orf_circulant_speed.py``. asv imports every module in this folder,
so all the work is in ``main()`` under ``__main__``.
"""


def main():
    import numpy as np
    from common import median_seconds
    from sklearn.kernel_approximation import RBFSampler
    from kernelmaps import RandomFourierFeatures, OrthogonalRandomFeatures, CirculantRandomFeatures

    for n, d, D in [(4000, 16, 1024), (4000, 16, 4096), (2000, 1024, 4096), (1000, 4096, 4096)]:
        X = np.random.default_rng(0).standard_normal((n, d))
        ests = {"RBFSampler": RBFSampler(gamma=0.01, n_components=D, random_state=0),
                "rff": RandomFourierFeatures(D, gamma=0.01, random_state=0),
                "orf": OrthogonalRandomFeatures(D, gamma=0.01, random_state=0),
                "circulant": CirculantRandomFeatures(D, gamma=0.01, random_state=0)}
        t = {}
        for k, e in ests.items():
            e.fit(X); t[k] = median_seconds(lambda: e.transform(X), warmup=True)
        fit = {k: median_seconds(lambda: e.fit(X), 3, warmup=True) for k, e in ests.items()}
        print(f"n={n} d={d} D={D}: transform " + "  ".join(f"{k} {v*1e3:.1f}ms ({t['RBFSampler']/v:.2f}x)" for k, v in t.items())
              + " | fit " + "  ".join(f"{k} {v*1e3:.1f}ms" for k, v in fit.items()))


if __name__ == "__main__":
    main()
