"""KernelSVC vs sklearn SVC: accuracy and train time at the same C and gamma.

Usage: ``python benchmarks/kernel_svc_vs_sklearn.py [ovo|ovr] [--full]``: 3000-row
training subsets at C = 1 and 10 by default; ``--full`` uses the full magic04 and
letter training sets. asv imports every module in this folder, so all the work is
in ``main()`` under ``__main__``.
"""


def main():
    import time, sys, numpy as np
    args = [a for a in sys.argv[1:] if a != "--full"]
    MC = args[0] if args else "ovo"
    from sklearn.svm import SVC
    from sklearn.preprocessing import StandardScaler
    from kernelmaps import KernelSVC, datasets
    from kernelmaps import resolve_gamma

    def run(name, n_train, C):
        ds = datasets.load(name)
        rng = np.random.RandomState(0)
        idx = rng.permutation(len(ds.X_train))[:n_train]
        Xtr, ytr = ds.X_train[idx], ds.y_train[idx]
        sc = StandardScaler().fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(ds.X_test)
        gamma = resolve_gamma("scale", Xtr, "gaussian", None)
        KernelSVC(C=C, gamma=gamma).fit(Xtr[:300], ytr[:300])  # warm-up compile
        t = time.perf_counter(); ours = KernelSVC(C=C, gamma=gamma, multi_class=MC).fit(Xtr, ytr); t_ours = time.perf_counter() - t
        t = time.perf_counter(); ref = SVC(C=C, gamma=gamma, decision_function_shape="ovr").fit(Xtr, ytr); t_ref = time.perf_counter() - t
        a, b = (ours.predict(Xte) == ds.y_test).mean(), (ref.predict(Xte) == ds.y_test).mean()
        print(f"{name:8s} n={len(Xtr):5d} C={C} gamma={gamma:.4g}: KernelSVC {100*a:.2f}% ({t_ours:.2f}s, iters {ours.n_iter_.sum()})"
              f"  SVC {100*b:.2f}% ({t_ref:.2f}s)  diff {100*(a-b):+.2f} pp", flush=True)

    if "--full" in sys.argv[1:]:
        runs = [("magic04", 14226, 1.0), ("letter", 12000, 1.0), ("letter", 12000, 10.0)]
    else:
        runs = [("banana", 1000, 1.0), ("magic04", 3000, 1.0), ("letter", 3000, 1.0),
                ("banana", 1000, 10.0), ("magic04", 3000, 10.0), ("letter", 3000, 10.0)]
    for name, n, C in runs:
        run(name, n, C)


if __name__ == "__main__":
    main()
