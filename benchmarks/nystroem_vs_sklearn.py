"""Nystroem vs sklearn Nystroem: N=20000, d=64, m=1024, Gaussian, same uniform landmarks.

Usage: ``python benchmarks/nystroem_vs_sklearn.py``. asv imports every module in this folder,
so all the work is in ``main()`` under ``__main__``.
"""


def main():
    import numpy as np
    from common import median_seconds
    from sklearn.kernel_approximation import Nystroem as SkNystroem
    from kernelmaps import Nystroem

    rng = np.random.default_rng(0)
    N, d, m = 20000, 64, 1024
    X = rng.standard_normal((N, d))
    gamma = 1.0 / (d * X.var())
    Nystroem(64, gamma=gamma, random_state=0).fit(X[:500]).transform(X[:500])  # compile warm-up

    ours = Nystroem(m, gamma=gamma, random_state=0).fit(X)
    sk = SkNystroem(gamma=gamma, n_components=m, random_state=0).fit(X)
    assert np.array_equal(ours.components_, sk.components_)
    V, Nrm = ours.components_, ours.normalization_
    Kb = X @ V.T
    pairs = []
    for _ in range(7):  # interleaved, so that the load of the machine hits both alike
        a = median_seconds(lambda: Nystroem(m, gamma=gamma, random_state=0).fit(X).transform(X), 1)
        b = median_seconds(lambda: SkNystroem(gamma=gamma, n_components=m, random_state=0).fit(X).transform(X), 1)
        pairs.append((a, b))
    t_ours, t_sk = np.median(pairs, axis=0)
    print("median of per-pair speed-ups:", np.median([b / a for a, b in pairs]))
    t_fit = median_seconds(lambda: Nystroem(m, gamma=gamma, random_state=0).fit(X))
    tg = []
    for _ in range(7):
        tg.append((median_seconds(lambda: ours.transform(X), 1), median_seconds(lambda: (X @ V.T, Kb @ Nrm), 1)))
    t_tr, t_gemm = np.median(tg, axis=0)
    print("median of per-pair transform/GEMM ratios:", np.median([a / b for a, b in tg]))
    t_sk_tr = median_seconds(lambda: sk.transform(X))
    print(f"fit+transform: ours {t_ours:.3f}s  sklearn {t_sk:.3f}s  speed-up {t_sk/t_ours:.2f}x")
    print(f"fit: ours {t_fit:.3f}s; transform: ours {t_tr:.3f}s  sklearn {t_sk_tr:.3f}s; two GEMMs {t_gemm:.3f}s  ratio {t_tr/t_gemm:.2f}")
    Za, Zb = ours.transform(X[:2000]), sk.transform(X[:2000])
    print("max |ZZ^T - Z_sk Z_sk^T| on 2000 rows:", np.abs(Za @ Za.T - Zb @ Zb.T).max())


if __name__ == "__main__":
    main()
