"""Fourier kernel learning (Băzăvan et al., NIPS 2012): every figure of the issue.

Usage: ``python benchmarks/fourier_kernel_learning.py [krr] [scaling] [speed] [synthetic]
[--components D] [--datasets letter,magic04]`` (all four modes when none is named;
``--components`` is RFF-SKL's D in ``krr``, default 2048). Run it on an otherwise idle machine: ``scaling`` and
``speed`` time things.

* ``krr``: RFF-SKL (``FourierKernelRidgeClassifier``) against KRR-GD
  (``KernelRidgeGDClassifier``) on ``letter`` and ``magic04`` (standardized on the
  training rows), N = 1000, 2000, 4000, 8000 training rows drawn from the training
  set, the whole test set, the paper's Table 2 comparison. Same alpha, split,
  iterations and starting rule for both.
* ``scaling``: fit time of RFF-SKL over N = 2000 ... 64000 (rows of ``letter``
  with small Gaussian jitter beyond its 12000 training rows, d = 16) and of KRR-GD
  over N = 1000 ... 8000, with a fixed number of L-BFGS iterations, and the
  log-log slope of each (least squares on log time against log N), the paper's
  Figure 2.
* ``speed``: transform time of ``QuantileFourierFeatures(kernel='skewed_chi2')``
  against scikit-learn's ``SkewedChi2Sampler`` (N = 20000, d = 64, D = 4096) and of
  ``AdditiveChi2Map`` against ``AdditiveChi2Sampler`` (``sample_steps=2``), medians
  of 7 interleaved runs, float64 and float32.
* ``synthetic``: 5 informative dimensions plus 15 noise dimensions with a 10x larger
  scale, 5 seeds: RFF-SKL's test error against the best single-gamma RFF ridge
  chosen on the same validation split, and the ratio of the largest noise scale
  to the smallest informative one.

asv imports every module in this folder, so all the work is under ``__main__``.
"""

KRR_SIZES = (1000, 2000, 4000, 8000)
KRR_D = 2048
ALPHA = 0.1
MAX_ITER = 30


def _cpu():
    import platform

    import numba

    try:
        with open("/proc/cpuinfo") as f:
            name = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        name = platform.processor()
    import os

    return f"{name}, {os.cpu_count()} cores, Numba target {os.environ.get('NUMBA_CPU_NAME', 'host')} " \
           f"({numba.config.CPU_NAME or 'host'})"


def _standardized(name):
    from sklearn.preprocessing import StandardScaler

    from kernelmaps import datasets

    data = datasets.load(name)
    scaler = StandardScaler().fit(data.X_train)
    return scaler.transform(data.X_train), data.y_train, scaler.transform(data.X_test), data.y_test


def krr(D=KRR_D, names=("letter", "magic04")):
    import time
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    from kernelmaps import FourierKernelRidgeClassifier, KernelRidgeGDClassifier

    warnings.simplefilter("ignore", ConvergenceWarning)
    print(f"# RFF-SKL (D={D}) vs KRR-GD, alpha={ALPHA}, max_iter={MAX_ITER}, validation 25 %")
    for name in names:
        X, y, X_test, y_test = _standardized(name)
        for n in KRR_SIZES:
            rows = np.random.RandomState(0).permutation(len(X))[:n]
            results = []
            for model in (FourierKernelRidgeClassifier(D, alpha=ALPHA, max_iter=MAX_ITER, random_state=0),
                          KernelRidgeGDClassifier(alpha=ALPHA, max_iter=MAX_ITER, random_state=0)):
                start = time.perf_counter()
                model.fit(X[rows], y[rows])
                seconds = time.perf_counter() - start
                results.append((100 * model.score(X_test, y_test), seconds, model.n_iter_))
            (a, ta, ia), (b, tb, ib) = results
            print(f"{name:8s} N={n:5d}  RFF-SKL {a:6.2f} % ({ta:6.1f} s, {ia} it)  KRR-GD {b:6.2f} % "
                  f"({tb:6.1f} s, {ib} it)  difference {a - b:+.2f} points", flush=True)


def _slope(sizes, seconds):
    import numpy as np

    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def scaling():
    import time
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning

    from kernelmaps import FourierKernelRidgeClassifier, KernelRidgeGDClassifier

    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y, _, _ = _standardized("letter")
    rng = np.random.RandomState(0)

    def rows(n):
        take = rng.choice(len(X), n, replace=n > len(X))
        jitter = 0.05 * rng.standard_normal((n, X.shape[1])) if n > len(X) else 0.0
        return X[take] + jitter, y[take]

    iterations = 10
    print(f"# fit time, {iterations} L-BFGS iterations (tol=0), letter-like data d=16, 26 classes")
    for label, model, sizes in (
            ("RFF-SKL D=1024", lambda: FourierKernelRidgeClassifier(1024, alpha=ALPHA, max_iter=iterations,
                                                                      tol=0.0, random_state=0),
             (2000, 4000, 8000, 16000, 32000, 64000)),
            ("KRR-GD", lambda: KernelRidgeGDClassifier(alpha=ALPHA, max_iter=iterations, tol=0.0, random_state=0),
             (1000, 2000, 4000, 8000))):
        seconds = []
        for n in sizes:
            Xn, yn = rows(n)
            start = time.perf_counter()
            est = model().fit(Xn, yn)
            seconds.append(time.perf_counter() - start)
            print(f"{label:15s} N={n:6d}  {seconds[-1]:7.2f} s  ({est.n_iter_} iterations)", flush=True)
        print(f"{label:15s} log-log slope of fit time over N = {sizes[0]}..{sizes[-1]}: "
              f"{_slope(sizes, seconds):.2f}", flush=True)


def _median_seconds(run, repeats=7):
    import time

    import numpy as np

    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def speed():
    import numpy as np
    from sklearn.kernel_approximation import AdditiveChi2Sampler, SkewedChi2Sampler

    from kernelmaps import AdditiveChi2Map, QuantileFourierFeatures

    print("# transform time, N = 20000, d = 64, medians of 7")
    for dtype in (np.float64, np.float32):
        X = np.random.default_rng(0).uniform(size=(20000, 64)).astype(dtype)
        pairs = (
            ("QuantileFourierFeatures(skewed_chi2) D=4096",
             QuantileFourierFeatures(4096, kernel="skewed_chi2", scale=0.5, random_state=0).fit(X[:100]),
             "SkewedChi2Sampler", SkewedChi2Sampler(n_components=4096, random_state=0).fit(X[:100])),
            ("AdditiveChi2Map(sample_steps=2)", AdditiveChi2Map(sample_steps=2).fit(X[:100]),
             "AdditiveChi2Sampler", AdditiveChi2Sampler(sample_steps=2).fit(X[:100])),
        )
        for ours_label, ours, peer_label, peer in pairs:
            ours.transform(X[:8])
            t_ours = _median_seconds(lambda: ours.transform(X))
            t_peer = _median_seconds(lambda: peer.transform(X))
            print(f"{np.dtype(dtype).name}  {ours_label}: {t_ours * 1e3:8.1f} ms   {peer_label}: "
                  f"{t_peer * 1e3:8.1f} ms   ratio {t_peer / t_ours:5.2f}x", flush=True)


def synthetic():
    import warnings

    import numpy as np
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Ridge

    from kernelmaps import FourierKernelRidge, RandomFourierFeatures

    warnings.simplefilter("ignore", ConvergenceWarning)
    D, alpha = 1000, 0.1
    print(f"# 5 informative + 15 noise dimensions (10x scale), 600 training rows, 1000 test, D={D}, "
          f"alpha={alpha}")
    for seed in range(5):
        rng = np.random.default_rng(seed)
        X = np.hstack([rng.standard_normal((1600, 5)), 10.0 * rng.standard_normal((1600, 15))])
        y = np.sin(1.5 * X[:, :5]).sum(axis=1) + 0.1 * rng.standard_normal(1600)
        X_train, y_train, X_test, y_test = X[:600], y[:600], X[600:], y[600:]
        skl = FourierKernelRidge(D, alpha=alpha, random_state=seed).fit(X_train, y_train)
        learned = np.mean((skl.predict(X_test) - y_test) ** 2)
        n_val = len(X_train) // 4
        best = None
        for gamma in np.logspace(-5, 1, 13):
            rff = RandomFourierFeatures(D, gamma=gamma, random_state=seed).fit(X_train[n_val:])
            ridge = Ridge(alpha=alpha).fit(rff.transform(X_train[n_val:]), y_train[n_val:])
            error = np.mean((ridge.predict(rff.transform(X_train[:n_val])) - y_train[:n_val]) ** 2)
            best = min(best or (np.inf, None), (error, gamma))
        rff = RandomFourierFeatures(D, gamma=best[1], random_state=seed).fit(X_train)
        single = np.mean((Ridge(alpha=alpha).fit(rff.transform(X_train), y_train).predict(rff.transform(X_test))
                          - y_test) ** 2)
        ratio = skl.scales_[5:].max() / skl.scales_[:5].min()
        print(f"seed {seed}: test MSE RFF-SKL {learned:.3f}  best single gamma ({best[1]:.1e}) {single:.3f}  "
              f"max noise / min informative scale {ratio:.3f}  (var y {np.var(y_test):.2f})", flush=True)


def main():
    import argparse
    import functools

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modes", nargs="*")
    parser.add_argument("--components", type=int, default=KRR_D)
    parser.add_argument("--datasets", default="letter,magic04")
    args = parser.parse_args()
    modes = {"krr": functools.partial(krr, args.components, tuple(args.datasets.split(","))),
             "scaling": scaling, "speed": speed, "synthetic": synthetic}
    chosen = args.modes or list(modes)
    unknown = [m for m in chosen if m not in modes]
    if unknown:
        raise SystemExit(f"unknown mode(s) {unknown}; choose from {sorted(modes)}")
    print("#", _cpu())
    for mode in chosen:
        modes[mode]()


if __name__ == "__main__":
    main()
