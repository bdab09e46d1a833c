"""Kernel error ||K - ZZ^T||_F/||K||_F of Nystroem landmarks on letter and magic04 (standardized).

Usage: ``python benchmarks/nystroem_landmarks.py``. asv imports every module in this folder,
so all the work is in ``main()`` under ``__main__``.
"""


def main():
    import time, numpy as np
    from sklearn.preprocessing import StandardScaler
    from kernelmaps import Nystroem, datasets, relative_frobenius_error
    from kernelmaps import resolve_gamma

    for name in ["letter", "magic04"]:
        ds = datasets.load(name)
        X = StandardScaler().fit_transform(ds.X_train)
        ev = X[np.random.RandomState(1).permutation(len(X))[:2000]]
        for heur in ["knn50", "scale"]:
            g = resolve_gamma(heur, X, "gaussian", np.random.RandomState(0))
            K = Nystroem(1, gamma=g).fit(ev).kernel(ev)
            for m in [64, 256]:
                row = []
                for lm in ["uniform", "kmeans", "leverage"]:
                    errs = []
                    t = time.perf_counter()
                    for seed in range(3):
                        ny = Nystroem(m, gamma=g, landmarks=lm, random_state=seed).fit(X)
                        errs.append(relative_frobenius_error(K, Z=ny.transform(ev)))
                    row.append(f"{lm} {np.mean(errs):.4f} ({(time.perf_counter()-t)/3:.2f}s)")
                print(f"{name:8s} gamma={heur}({g:.3g}) m={m:4d}: " + "  ".join(row), flush=True)


if __name__ == "__main__":
    main()
