"""Fastfood vs dense RFF (ours and sklearn RBFSampler) at d=1024, D=16384, N=5000.

Usage: ``python benchmarks/fastfood_vs_rff.py``. asv imports every module in this folder,
so all the work is in ``main()`` under ``__main__``.
"""


def main():
    from common import median_seconds

    import numpy as np, kernelmaps as km
    from sklearn.kernel_approximation import RBFSampler
    d, D, N = 1024, 16384, 5000
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, d))
    gamma = 1.0 / (2 * d)
    maps = {
        "Fastfood": km.Fastfood(D, gamma=gamma, random_state=0).fit(X),
        "RFF (kernelmaps)": km.RandomFourierFeatures(D, gamma=gamma, random_state=0).fit(X),
        "RBFSampler (sklearn)": RBFSampler(gamma=gamma, n_components=D, random_state=0).fit(X),
    }
    for m in maps.values():
        m.transform(X[:50])  # warm-up
    times = {}
    for name, m in maps.items():
        times[name] = median_seconds(lambda: m.transform(X), 5)
        print(f"{name:22s} median {times[name]:.3f} s  ({times[name] / N * 1e3:.3f} ms/row)")
    for name in ("RFF (kernelmaps)", "RBFSampler (sklearn)"):
        print(f"Fastfood speed-up over {name}: {times[name] / times['Fastfood']:.1f}x")
    # kernel error at the same D on 500 rows
    Xs = X[:500]
    K = maps["Fastfood"].kernel(Xs)
    for name, cls in (("Fastfood", km.Fastfood), ("RFF", km.RandomFourierFeatures)):
        e = [km.relative_frobenius_error(K, Z=cls(D, gamma=gamma, random_state=s).fit(Xs).transform(Xs)) for s in range(3)]
        print(name, "relative Frobenius error (mean of 3 seeds):", np.mean(e))


if __name__ == "__main__":
    main()
