"""CNM (k = 64) training time against RFF (k = 512) + Pegasos to the same accuracy, on LETTER.

Usage: ``python benchmarks/cnm_training_speed.py``

Full LETTER training split (standardized), gamma from the knn50 rule; both sides
in one run, medians of 3 fits. CNM uses its defaults (20 rounds of 100 + 100 steps,
M = 500, lambda = 1e-4). RFF + Pegasos is run at lambda = 1e-4 (CNM's) and 1e-5
(its better setting here) for a growing number of Pegasos steps; the table shows
when it first reaches CNM's test accuracy, and its time to get there (RFF fit and
transform included). asv imports every module here, so all work is in ``main()``.
"""


def main():
    import sys
    import time
    from pathlib import Path

    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figure1_cnm import prepare

    from kernelmaps import CompactNonlinearMap, PegasosSVC, RandomFourierFeatures

    X, y, Xt, yt, gamma = prepare("letter")
    CompactNonlinearMap(4, gamma=gamma, max_iter=1).fit(X[:300], y[:300])  # compile
    PegasosSVC(max_iter=2).fit(X[:300], y[:300])

    def median_fit(make):
        times, model = [], None
        for _ in range(3):
            start = time.perf_counter()
            model = make()
            times.append(time.perf_counter() - start)
        return float(np.median(times)), model

    t_cnm, cnm = median_fit(lambda: CompactNonlinearMap(64, gamma=gamma, random_state=0).fit(X, y))
    target = cnm.score(Xt, yt)
    print(f"CNM k=64: fit {t_cnm:.2f} s, test accuracy {target:.4f}")
    for lam in (1e-4, 1e-5):
        reached = None
        for steps in (250, 500, 1000, 2000, 4000, 8000):
            def rff_pegasos():
                rff = RandomFourierFeatures(512, gamma=gamma, random_state=0).fit(X)
                clf = PegasosSVC(alpha=lam, max_iter=steps, random_state=0).fit(rff.transform(X), y)
                return rff, clf
            t, (rff, clf) = median_fit(rff_pegasos)
            accuracy = clf.score(rff.transform(Xt), yt)
            print(f"  RFF k=512 + Pegasos lambda={lam:g} {steps:5d} steps: {t:6.2f} s, test accuracy {accuracy:.4f}")
            if accuracy >= target:
                reached = (steps, t)
                break
        if reached:
            print(f"  lambda={lam:g}: reaches CNM's accuracy after {reached[0]} steps, "
                  f"{reached[1]:.2f} s = {reached[1] / t_cnm:.2f} x CNM's training time")
        else:
            print(f"  lambda={lam:g}: does not reach CNM's accuracy within 8000 steps")


if __name__ == "__main__":
    main()
