"""RFF (D = 2048) + least squares against exact SVC(kernel='rbf') at the same gamma.

Usage: ``python benchmarks/downstream_rff.py [D]``

On the bundled ``banana``, ``magic04`` and ``letter`` splits in full, standardized
on the training split, gamma from the CNM paper's ``knn50`` rule. Prints test
errors and wall times. (asv imports every module here; all work is under
``__main__``.)
"""


def main(n_components=2048):
    import time

    import numpy as np
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    import kernelmaps.datasets as kd
    from kernelmaps import LeastSquaresClassifier, RandomFourierFeatures
    from kernelmaps import resolve_gamma

    print(f"{'dataset':10s} {'gamma':>8s} {'RFF+LS error':>13s} {'time':>7s} {'SVC error':>10s} {'time':>7s}")
    for name in ("banana", "magic04", "letter"):
        data = kd.load(name)
        scaler = StandardScaler().fit(data.X_train)
        X_train, X_test = scaler.transform(data.X_train), scaler.transform(data.X_test)
        gamma = resolve_gamma("knn50", X_train, "gaussian", np.random.RandomState(0))
        start = time.perf_counter()
        rff = RandomFourierFeatures(n_components, gamma=gamma, random_state=0).fit(X_train)
        clf = LeastSquaresClassifier(alpha=1.0).fit(rff.transform(X_train), data.y_train)
        err_rff = 1 - clf.score(rff.transform(X_test), data.y_test)
        t_rff = time.perf_counter() - start
        start = time.perf_counter()
        svc = SVC(kernel="rbf", gamma=gamma, C=1.0).fit(X_train, data.y_train)
        err_svc = 1 - svc.score(X_test, data.y_test)
        t_svc = time.perf_counter() - start
        print(f"{name:10s} {gamma:8.4f} {err_rff:13.4f} {t_rff:6.1f}s {err_svc:10.4f} {t_svc:6.1f}s")


if __name__ == "__main__":
    import sys

    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2048)
