"""Group-lasso multiple kernel learning (Băzăvan et al., section 3.3): every figure of the issue.

Usage: ``python benchmarks/group_lasso_mkl.py [loss] [solver] [planted] [mfeat] [weights]
[scaling] [--exact-max N] [--widths 128,512,2048] [--alpha A]`` (every mode when none
is named). Run it on an otherwise idle
machine: ``solver`` and ``scaling`` time things.

* ``loss``: the largest gap between the epsilon-insensitive logistic loss and the
  epsilon-insensitive loss over residuals in [-1, 1], eps = 0.1, sharpness 1, 5, 10
  (the paper's Figure 1) and 100.
* ``solver``: on random features of planted groups (10 Gaussian kernels x 128
  features, +-1 targets, squared loss), at alpha = 0.3, 0.1, 0.03, 0.01 alpha_max:
  FISTA's objective at its default tolerance against the optimum (the best of a
  1e-13-tolerance run of ours and a 1e-10 run of skglm), its iterations against
  plain proximal gradient's to reach 1e-6 of the optimum, and the time each of
  ``solve_group_lasso`` and ``skglm.GroupLasso`` needs to reach 1e-6 of the optimum
  (the loosest of the tolerances 1e-4 ... 1e-10 that gets there; median of 5 runs
  after a warm-up), for N = 4000 (P < N: the Gram form) and N = 1000 (P > N: passes
  over the features).
* ``planted``: ``make_planted_groups`` (2000 rows, 10 groups of 4 columns, 3
  informative), 5 seeds, ``GroupLassoMKLClassifier(n_components=128)`` with alpha
  chosen on the validation split (minimum and one-standard-error rules): whether
  the informative groups have the largest norms and are the first to enter the
  path, and how many noise groups are exactly zero.
* ``mfeat``: the six views of UCI Multiple Features (standardized on the training
  rows), one Gaussian kernel per view with gamma='scale', 512 random features each:
  RFF-GL's test accuracy against the best single view's RFF ridge and the
  equal-weight concatenation (ridge alpha chosen on the same validation split), and
  the kernel weights of RFF-GL and ``ExactMKLClassifier`` at the same alpha on the
  same kernels, summed over the ten one-vs-rest problems, with their Spearman
  correlation (the paper's Table 3).
* ``weights``: the same comparison of kernel weights at a fixed alpha (mfeat's
  validation choice) as the number of random features per view grows: RFF-GL's
  weights approximate the exact learner's only as well as its features approximate
  the kernels.
* ``scaling``: fit time of RFF-GL (alpha = 0.01, 10 kernels x 128 features) over
  N = 1000 ... 32000 planted-group rows and of ExactMKL over N = 1000 ... 8000
  (``--exact-max``), with the log-log slope of each (the paper's Figure 4).

asv imports every module in this folder, so all the work is under ``__main__``.
"""

ALPHA_RATIOS = (0.3, 0.1, 0.03, 0.01)
TOLERANCES = (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-10)
SEEDS = range(5)
MFEAT_D = 512
SCALING_SIZES = (1000, 2000, 4000, 8000, 16000, 32000)
SCALING_ALPHA = 0.01


def _cpu():
    import os
    import platform

    import numba

    try:
        with open("/proc/cpuinfo") as f:
            name = next(line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name"))
    except (OSError, StopIteration):
        name = platform.processor()
    return (f"{name}, {os.cpu_count()} cores, Numba target "
            f"{os.environ.get('NUMBA_CPU_NAME', 'host')}, numba {numba.__version__}")


def _median_time(fit, repeats=5):
    import time

    import numpy as np

    fit()                                          # warm-up: compile, caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fit()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _planted_features(n, seed=0, width=128):
    import numpy as np

    from kernelmaps import GroupLassoMKLClassifier
    from kernelmaps.datasets import make_planted_groups

    X, y, groups, informative = make_planted_groups(n, random_state=seed)
    model = GroupLassoMKLClassifier(groups, n_components=width, alpha=1.0, max_iter=1,
                                    random_state=seed).fit(X, y)
    return model._features(X), 2.0 * y - 1.0, model.feature_bounds_, informative, np.asarray(groups)


def run_loss():
    import numpy as np

    from kernelmaps.group_lasso_mkl import _Loss

    print("== epsilon-insensitive logistic loss vs the epsilon-insensitive loss (eps = 0.1)")
    r = np.linspace(-1, 1, 2001)[:, None]
    exact = np.maximum(0, np.abs(r[:, 0]) - 0.1)
    for sharpness in (1, 5, 10, 100):
        loss = _Loss("epsilon_logistic", 0.1, float(sharpness))
        values = loss.per_sample(r, np.zeros_like(r))
        print(f"  sharpness {sharpness:>4}: max |gap| {np.abs(values - exact).max():.4f} "
              f"(bound 2 log 2 / sharpness = {2 * np.log(2) / sharpness:.4f}); at r = 0: "
              f"{values[1000]:.4f}")


def run_solver():
    import numpy as np
    from skglm import GroupLasso

    from kernelmaps.group_lasso_mkl import group_lasso_objective, solve_group_lasso

    print(f"== solver: FISTA (solve_group_lasso) vs ISTA vs skglm.GroupLasso; {_cpu()}")
    for n in (4000, 1000):
        F, y, bounds, _, _ = _planted_features(n)
        groups = [list(range(a, b)) for a, b in zip(bounds[:-1], bounds[1:])]
        alpha_max = solve_group_lasso(F, y, bounds, 1e9).alpha_max
        print(f"  N = {n}, P = {F.shape[1]} ({'Gram form' if F.shape[1] <= n else 'passes'})")
        for ratio in ALPHA_RATIOS:
            alpha = ratio * alpha_max
            ours_long = solve_group_lasso(F, y, bounds, alpha, tol=1e-13, max_iter=200000)
            peer_long = GroupLasso(groups=groups, alpha=alpha, tol=1e-10, max_iter=1000,
                                   max_epochs=100000).fit(F, y)
            best = min(group_lasso_objective(F, y, bounds, alpha, ours_long.coef[:, 0],
                                        ours_long.intercept[0]),
                       group_lasso_objective(F, y, bounds, alpha, peer_long.coef_,
                                        peer_long.intercept_))
            default = solve_group_lasso(F, y, bounds, alpha)
            gap = group_lasso_objective(F, y, bounds, alpha, default.coef[:, 0],
                                   default.intercept[0]) / best - 1
            peer_default = GroupLasso(groups=groups, alpha=alpha).fit(F, y)
            peer_gap = group_lasso_objective(F, y, bounds, alpha, peer_default.coef_,
                                        peer_default.intercept_) / best - 1
            fast = solve_group_lasso(F, y, bounds, alpha, tol=1e-12, max_iter=20000)
            slow = solve_group_lasso(F, y, bounds, alpha, tol=1e-12, max_iter=20000,
                                     accelerated=False)

            def reach(history):
                hit = np.flatnonzero(history <= best * (1 + 1e-6))
                return int(hit[0]) if hit.size else None

            def loosest(run):
                for tol in TOLERANCES:
                    value = run(tol)
                    if value / best - 1 <= 1e-6:
                        return tol
                return None

            tol_ours = loosest(lambda tol: solve_group_lasso(F, y, bounds, alpha, tol=tol,
                                                             max_iter=100000).objective_history[-1])
            tol_peer = loosest(lambda tol: group_lasso_objective(
                F, y, bounds, alpha, *(lambda m: (m.coef_, m.intercept_))(
                    GroupLasso(groups=groups, alpha=alpha, tol=tol, max_iter=1000,
                               max_epochs=100000).fit(F, y))))
            t_ours = _median_time(lambda: solve_group_lasso(F, y, bounds, alpha, tol=tol_ours,
                                                             max_iter=100000))
            t_peer = _median_time(lambda: GroupLasso(groups=groups, alpha=alpha, tol=tol_peer,
                                                     max_iter=1000, max_epochs=100000
                                                     ).fit(F, y))
            active = int(np.count_nonzero(default.group_norms[:, 0]))
            print(f"    alpha = {ratio:>4} alpha_max ({active} active groups): default tol gap "
                  f"{gap:.1e} (skglm default {peer_gap:.1e}); iterations to 1e-6: FISTA "
                  f"{reach(fast.objective_history)}, ISTA {reach(slow.objective_history)}; "
                  f"time to 1e-6: ours {t_ours * 1e3:.1f} ms (tol {tol_ours:g}), skglm "
                  f"{t_peer * 1e3:.1f} ms (tol {tol_peer:g}), skglm/ours {t_peer / t_ours:.2f}x")


def run_planted():
    import numpy as np

    from kernelmaps import GroupLassoMKLClassifier
    from kernelmaps.datasets import make_planted_groups

    print("== planted groups: 2000 rows, 10 groups x 4 columns, 3 informative, D = 128")
    for seed in SEEDS:
        X, y, groups, informative = make_planted_groups(2000, random_state=seed)
        X_train, y_train, X_test, y_test = X[:1500], y[:1500], X[1500:], y[1500:]
        rows = []
        for rule in ("min", "one_se"):
            clf = GroupLassoMKLClassifier(groups, n_components=128, alpha_selection=rule,
                                          random_state=seed).fit(X_train, y_train)
            norms = clf.group_norms_
            top = sorted(np.argsort(norms)[-3:].tolist())
            noise = np.setdiff1d(np.arange(10), informative)
            entry = _entry_order(clf.group_norms_path_)
            rows.append(f"{rule}: alpha {clf.alpha_:.4f}, informative largest "
                        f"{top == informative.tolist()}, first to enter "
                        f"{sorted(entry[:3]) == informative.tolist()}, noise groups at zero "
                        f"{int(np.sum(norms[noise] == 0))}/7, test accuracy "
                        f"{clf.score(X_test, y_test):.3f}")
        print(f"  seed {seed} (informative {informative.tolist()}):\n    " + "\n    ".join(rows))


def _entry_order(path):
    import numpy as np

    first = [int(np.argmax(path[:, g] > 0)) if np.any(path[:, g] > 0) else len(path)
             for g in range(path.shape[1])]
    return sorted(range(path.shape[1]), key=lambda g: (first[g], -path[-1, g]))


def _ridge_on_validation(Z_train, y_train, Z_test, y_test, seed):
    """Least-squares ridge with alpha chosen on a stratified 25% validation split."""
    import numpy as np
    from sklearn.model_selection import train_test_split

    from kernelmaps import LeastSquaresClassifier

    fit_rows, val_rows = train_test_split(np.arange(len(y_train)), test_size=0.25,
                                          random_state=seed, stratify=y_train)
    scores = {}
    for alpha in 10.0 ** np.arange(-4, 3):
        model = LeastSquaresClassifier(alpha=alpha).fit(Z_train[fit_rows], y_train[fit_rows])
        scores[alpha] = model.score(Z_train[val_rows], y_train[val_rows])
    best = max(scores, key=scores.get)
    return LeastSquaresClassifier(alpha=best).fit(Z_train, y_train).score(Z_test, y_test)


def run_mfeat():
    import time

    import numpy as np
    from scipy.stats import spearmanr
    from sklearn.preprocessing import StandardScaler

    from kernelmaps import ExactMKLClassifier, GroupLassoMKLClassifier
    from kernelmaps.datasets import load

    data = load("mfeat")
    scaler = StandardScaler().fit(data.X_train)
    X_train, X_test = scaler.transform(data.X_train), scaler.transform(data.X_test)
    y_train, y_test = data.y_train, data.y_test
    groups = np.asarray(data.extras["groups"])
    views = data.extras["views"]
    print(f"== mfeat: {X_train.shape[0]} train / {X_test.shape[0]} test, views {views}, "
          f"D = {MFEAT_D} per view; {_cpu()}")
    start = time.perf_counter()
    gl = GroupLassoMKLClassifier(groups, n_components=MFEAT_D, random_state=0).fit(X_train,
                                                                                    y_train)
    gl_time = time.perf_counter() - start
    gl_accuracy = gl.score(X_test, y_test)
    features_train = [m.transform(X_train[:, c]) for m, c in zip(gl.feature_maps_,
                                                                 gl.kernel_columns_)]
    features_test = [m.transform(X_test[:, c]) for m, c in zip(gl.feature_maps_,
                                                               gl.kernel_columns_)]
    single = [_ridge_on_validation(Ftr, y_train, Fte, y_test, 0)
              for Ftr, Fte in zip(features_train, features_test)]
    equal = _ridge_on_validation(np.hstack(features_train), y_train, np.hstack(features_test),
                                 y_test, 0)
    print(f"  RFF-GL test accuracy {gl_accuracy:.3f} (alpha {gl.alpha_:.2e} chosen on "
          f"validation, fit {gl_time:.1f} s)")
    print("  single views (RFF ridge): " + ", ".join(f"{v} {a:.3f}" for v, a in
                                                       zip(views, single)))
    print(f"  best single view {views[int(np.argmax(single))]} {max(single):.3f}; equal-weight "
          f"concatenation {equal:.3f}")
    gammas = [m.gamma_ for m in gl.feature_maps_]
    start = time.perf_counter()
    exact = ExactMKLClassifier(groups, gamma=gammas, alpha=gl.alpha_, max_iter=300).fit(
        X_train, y_train)
    exact_time = time.perf_counter() - start
    rff_weights = gl.kernel_weights_.sum(axis=0)
    exact_weights = exact.kernel_weights_.sum(axis=0)
    rho = spearmanr(rff_weights, exact_weights).statistic
    per_class = [spearmanr(a, b).statistic for a, b in zip(gl.kernel_weights_,
                                                            exact.kernel_weights_)]
    print(f"  ExactMKL (same kernels, alpha) test accuracy {exact.score(X_test, y_test):.3f}, "
          f"fit {exact_time:.1f} s")
    print("  kernel weights summed over the 10 one-vs-rest problems:")
    print("    view   " + "".join(f"{v:>8}" for v in views))
    print("    RFF-GL " + "".join(f"{w:8.4f}" for w in rff_weights))
    print("    exact  " + "".join(f"{w:8.4f}" for w in exact_weights))
    print(f"  Spearman(summed) = {rho:.3f}; per class median {np.nanmedian(per_class):.3f}, "
          f"min {np.nanmin(per_class):.3f}")


def run_weights(widths, alpha):
    """Agreement of RFF-GL's kernel weights with ExactMKL's as the width per view grows."""
    import numpy as np
    from scipy.stats import spearmanr
    from sklearn.preprocessing import StandardScaler

    from kernelmaps import ExactMKLClassifier, GroupLassoMKLClassifier
    from kernelmaps.datasets import load

    data = load("mfeat")
    X = StandardScaler().fit(data.X_train).transform(data.X_train)
    groups = np.asarray(data.extras["groups"])
    exact = ExactMKLClassifier(groups, alpha=alpha, max_iter=300).fit(X, data.y_train)
    exact_weights = exact.kernel_weights_.sum(axis=0)
    print(f"== mfeat kernel weights against ExactMKL at alpha {alpha:g} (summed over classes)")
    print("    D/view " + "".join(f"{v:>8}" for v in data.extras["views"]) + "  Spearman")
    print("    exact  " + "".join(f"{w:8.4f}" for w in exact_weights))
    for width in widths:
        gl = GroupLassoMKLClassifier(groups, n_components=width, alpha=alpha, random_state=0,
                                     max_iter=5000).fit(X, data.y_train)
        weights = gl.kernel_weights_.sum(axis=0)
        per_class = [spearmanr(a, b).statistic for a, b in zip(gl.kernel_weights_,
                                                                exact.kernel_weights_)]
        print(f"    {width:>6} " + "".join(f"{w:8.4f}" for w in weights)
              + f"  {spearmanr(weights, exact_weights).statistic:.3f} (per class median "
              f"{np.nanmedian(per_class):.3f})")


def run_scaling(exact_max):
    import time

    import numpy as np

    from kernelmaps import ExactMKLClassifier, GroupLassoMKLClassifier
    from kernelmaps.datasets import make_planted_groups

    print(f"== scaling: fit time over N (planted groups, 10 kernels, alpha {SCALING_ALPHA}); "
          f"{_cpu()}")
    GroupLassoMKLClassifier(n_components=8, alpha=0.1).fit(*make_planted_groups(200)[:2])
    results = {"RFF-GL (D = 128 per kernel)": [], "ExactMKL": []}
    for n in SCALING_SIZES:
        X, y, groups, _ = make_planted_groups(n, random_state=0)
        start = time.perf_counter()
        GroupLassoMKLClassifier(groups, n_components=128, alpha=SCALING_ALPHA,
                                random_state=0).fit(X, y)
        results["RFF-GL (D = 128 per kernel)"].append((n, time.perf_counter() - start))
        if n <= exact_max:
            start = time.perf_counter()
            ExactMKLClassifier(groups, alpha=SCALING_ALPHA).fit(X, y)
            results["ExactMKL"].append((n, time.perf_counter() - start))
        print(f"  N = {n}: " + ", ".join(f"{k} {v[-1][1]:.2f} s" for k, v in results.items()
                                         if v and v[-1][0] == n))
    for name, points in results.items():
        n, t = np.array(points).T
        slope = np.polyfit(np.log(n), np.log(t), 1)[0]
        print(f"  {name}: log-log slope {slope:.2f} over N = {int(n[0])} ... {int(n[-1])}")


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modes", nargs="*")
    parser.add_argument("--exact-max", type=int, default=8000)
    parser.add_argument("--widths", default="128,512,2048",
                        help="features per view in the weights mode")
    parser.add_argument("--alpha", type=float, default=1.7e-3,
                        help="alpha of the weights mode (mfeat's validation choice)")
    args = parser.parse_args()
    modes = args.modes or ["loss", "solver", "planted", "mfeat", "scaling"]
    runners = {"loss": run_loss, "solver": run_solver, "planted": run_planted,
               "mfeat": run_mfeat, "scaling": lambda: run_scaling(args.exact_max),
               "weights": lambda: run_weights([int(w) for w in args.widths.split(",")],
                                              args.alpha)}
    unknown = set(modes) - set(runners)
    if unknown:
        parser.error(f"unknown mode(s) {sorted(unknown)}; choose from {sorted(runners)}")
    for mode in modes:
        runners[mode]()


if __name__ == "__main__":
    main()
