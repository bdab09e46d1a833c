"""Measurement script (see the README's Measured table).

Usage: ``python benchmarks/structured_mse_letter.py``. asv imports every module in this folder,
so all the work is in ``main()`` under ``__main__``.
"""


def main():
    import numpy as np, kernelmaps as km, kernelmaps.datasets as kd
    from sklearn.preprocessing import StandardScaler
    X = StandardScaler().fit_transform(kd.load("letter").X_train)
    X = X[np.random.default_rng(0).choice(X.shape[0], 1000, replace=False)][:300]
    g = km.RandomFourierFeatures(64, gamma="scale").fit(X).gamma_
    K = km.RandomFourierFeatures(2, gamma=g).fit(X).kernel(X)
    for D in (32, 64, 128):
        r = {C.__name__: np.mean([km.kernel_mse(K, Z=C(D, gamma=g, random_state=s).fit(X).transform(X)) for s in range(20)])
             for C in (km.RandomFourierFeatures, km.StructuredOrthogonalFeatures, km.Fastfood)}
        print(D, {k: f"{v:.5f}" for k, v in r.items()}, "SORF/RFF %.2f FF/RFF %.2f" % (r["StructuredOrthogonalFeatures"] / r["RandomFourierFeatures"], r["Fastfood"] / r["RandomFourierFeatures"]))


if __name__ == "__main__":
    main()
