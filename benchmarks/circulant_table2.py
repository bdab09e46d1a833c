"""The CNM paper's Table 2 on our data: optimized vs randomized circulant vs RFF.

Usage: ``python benchmarks/circulant_table2.py [dataset ...]`` (default: digits,
magic04, letter, pendigits; about 4 minutes). k = d and 2d, 5 seeds, test
accuracy mean and std; the random maps are trained with Pegasos and with least
squares. asv imports every module here, so all work is in ``main()``.
"""


def main():
    from pathlib import Path
    import sys, numpy as np
    from threadpoolctl import threadpool_limits
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figure1_cnm import prepare
    import kernelmaps as km
    rows = []
    with threadpool_limits(1, 'blas'):
        for ds in sys.argv[1:] or ['digits', 'magic04', 'letter', 'pendigits']:
            X, y, Xt, yt, g = prepare(ds)
            d = X.shape[1]
            for mult in (1, 2):
                k = mult * d
                res = {}
                for s in range(5):
                    opt = km.OptimizedCirculantMap(k, gamma=g, random_state=s).fit(X, y)
                    res.setdefault('circ-opt', []).append(opt.score(Xt, yt))
                    for key, cls in [('circ-rand', km.CirculantRandomFeatures), ('rff', km.RandomFourierFeatures)]:
                        f = cls(k, gamma=g, random_state=s).fit(X)
                        Z, Zt = f.transform(X), f.transform(Xt)
                        p = km.PegasosSVC(alpha=1e-4, max_iter=2100, random_state=s).fit(Z, y)
                        res.setdefault(key + '+peg', []).append(p.score(Zt, yt))
                        ls = km.LeastSquaresClassifier(alpha=1e-3).fit(Z, y)
                        res.setdefault(key + '+LS', []).append(ls.score(Zt, yt))
                line = f"| {ds} (k={'d' if mult == 1 else '2d'}={k}) | " + " | ".join(
                    f"{100*np.mean(v):.2f} ± {100*np.std(v):.2f}" for v in res.values()) + " |"
                if not rows:
                    print("| dataset | " + " | ".join(res) + " |", flush=True)
                rows.append(line); print(line, flush=True)


if __name__ == "__main__":
    main()
