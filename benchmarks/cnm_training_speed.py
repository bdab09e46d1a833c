"""CNM (k = 64) training time against RFF (k = 512) + Pegasos to the same accuracy, on LETTER.

Usage: ``python benchmarks/cnm_training_speed.py``

Full LETTER training split (standardized), gamma from the knn50 rule; both sides
in one run. CNM uses its defaults (20 rounds of 100 + 100 steps, M = 500,
lambda = 1e-4). Each side is fit 3 times, with seeds 0, 1, 2 (for CNM, for the
RFF draw and for Pegasos' minibatches): times and test accuracies are medians
over the 3 fits. Training is chaotic (a one-ulp change of the data moves CNM's
test accuracy by about 0.01), so one seed's accuracy is not a fair target; the
median of three is. RFF + Pegasos is run at lambda = 1e-4, 1e-5 and 1e-6 for
100, 200, ..., 2000, 3000, 4000 and 8000 Pegasos steps, stopping at
the first count whose median test accuracy reaches CNM's; its time includes the
RFF fit and the transform of the training set, as CNM's includes its features.
asv imports every module here, so all work is in ``main()``.
"""

SEEDS = (0, 1, 2)
STEPS = tuple(range(100, 2001, 100)) + (3000, 4000, 8000)
LAMBDAS = (1e-4, 1e-5, 1e-6)


def main():
    import os
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
    print(f"load average at start: {os.getloadavg()[0]:.2f} (the machine has {os.cpu_count()} cores)")

    def median_fits(make):
        """Median fit time and median test accuracy of ``make(seed)`` over SEEDS."""
        times, accuracies = [], []
        for seed in SEEDS:
            start = time.perf_counter()
            model = make(seed)
            times.append(time.perf_counter() - start)
            accuracies.append(model.score(Xt, yt))
        return float(np.median(times)), float(np.median(accuracies)), accuracies

    t_cnm, target, accs = median_fits(
        lambda seed: CompactNonlinearMap(64, gamma=gamma, random_state=seed).fit(X, y))
    print(f"CNM k=64: fit {t_cnm:.2f} s, test accuracy {target:.4f} "
          f"(seeds: {', '.join(f'{a:.4f}' for a in accs)})")

    class RFFPegasos:
        def __init__(self, lam, steps, seed):
            self.rff = RandomFourierFeatures(512, gamma=gamma, random_state=seed).fit(X)
            self.clf = PegasosSVC(alpha=lam, max_iter=steps, random_state=seed).fit(self.rff.transform(X), y)

        def score(self, X_, y_):
            return self.clf.score(self.rff.transform(X_), y_)

    for lam in LAMBDAS:
        reached = None
        for steps in STEPS:
            t, accuracy, _ = median_fits(lambda seed: RFFPegasos(lam, steps, seed))
            print(f"  RFF k=512 + Pegasos lambda={lam:g} {steps:5d} steps: {t:6.2f} s, "
                  f"test accuracy {accuracy:.4f}")
            if accuracy >= target:
                reached = (steps, t)
                break
        if reached:
            print(f"  lambda={lam:g}: reaches CNM's accuracy after {reached[0]} steps, "
                  f"{reached[1]:.2f} s = {reached[1] / t_cnm:.2f} x CNM's training time")
        else:
            print(f"  lambda={lam:g}: does not reach CNM's accuracy within {STEPS[-1]} steps")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
