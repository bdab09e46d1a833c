"""Kernel MSE of RFF, ORF and the randomized circulant map on LETTER (300 standardized rows).

Usage: ``python benchmarks/orf_circulant_mse.py``. asv imports every module in this folder,
so all the work is in ``main()`` under ``__main__``.
"""


def main():
    import sys
    import numpy as np
    from sklearn.preprocessing import StandardScaler
    import kernelmaps.datasets as kd
    from kernelmaps import (RandomFourierFeatures, OrthogonalRandomFeatures, CirculantRandomFeatures,
                            kernel_mse)
    S = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    X = StandardScaler().fit_transform(kd.load("letter").X_train)
    X = X[np.random.default_rng(0).choice(X.shape[0], 1000, replace=False)][:300]
    d = X.shape[1]
    g = RandomFourierFeatures(1, gamma="knn50", random_state=0).fit(X).gamma_
    K = RandomFourierFeatures(1, gamma=g).fit(X).kernel(X)
    print(f"letter n=300 d={d} gamma(knn50)={g:.4f} seeds={S}")
    for D in (d, 4 * d, 16 * d):
        m = {c.__name__[:4]: np.array([kernel_mse(K, Z=c(D, gamma=g, random_state=s).fit(X).transform(X))
                                       for s in range(S)])
             for c in (RandomFourierFeatures, OrthogonalRandomFeatures, CirculantRandomFeatures)}
        r, o, c = m["Rand"], m["Orth"], m["Circ"]
        se = lambda a: a.std() / np.sqrt(S)
        diff = o - r
        print(f"D={D:4d}  MSE rff {r.mean():.3e}±{se(r):.1e}  orf {o.mean():.3e}±{se(o):.1e}  circ {c.mean():.3e}±{se(c):.1e}"
              f"  orf/rff {o.mean()/r.mean():.3f} (paired diff {diff.mean():.2e}±{se(diff):.1e})  circ/rff {c.mean()/r.mean():.3f}")


if __name__ == "__main__":
    main()
