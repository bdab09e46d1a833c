"""CRAFTMaps experiments at small scale: kernel reconstruction and ECOC classification.

Usage::

    python benchmarks/craftmaps_experiments.py [reconstruction|classification|all] [--seeds N]

Reconstruction (the paper's Figures 5-6): polynomial kernel ``(<x,y> + 1)^7`` on
unit-normalized rows of PENDIGITS and LETTER; the same 1000 randomly selected
points (seed 0, from train + test) for every map and seed. NRMSE (RMSE over the
range of K, :func:`kernelmaps.nrmse`) of RFM (H-0/1), TS, CRAFTMaps on RFM and on
TS (Gaussian down-projection, and on RFM also the SRHT), ``E = 2^6..2^10`` and
``D = 8 E``; mean and median over seeds.

Classification (the paper's Table 1-e): PENDIGITS, UCI's 7494/3498 split, rows
unit-normalized (no other preprocessing), ``(<x,y> + 1)^9``, ``E = 2^6..2^10``,
``D = 8 E``; ECOC least squares (64-bit random code, Hamming decoding) with
``alpha`` picked per map and width from ``{1e-4, 1e-3, 1e-2, 1e-1, 1}`` on a 20 %
hold-out of the training set, then refitted on all of it; RFF uses the Gaussian
kernel with the ``'scale'`` bandwidth on the normalized rows. Test error in %,
mean over seeds.

(asv imports every module in this folder: all work is under ``__main__``.)
"""

PAPER_TABLE_1E = {  # Hamid et al., ICML 2014, Table 1-e (PENDIGITS), test error %
    "RFF": [5.83, 4.25, 2.63, 2.17, 2.08],  # "RKS"
    "RFM": [7.94, 3.94, 2.85, 2.28, 1.91],
    "CM-RFM": [7.43, 3.57, 2.28, 1.97, 1.57],
    "TS": [11.20, 4.57, 2.37, 1.80, 1.77],
    "CM-TS": [8.03, 3.80, 2.37, 2.05, 1.74],
}
WIDTHS = [2**6, 2**7, 2**8, 2**9, 2**10]


def unit_rows(X):
    import numpy as np

    X = np.asarray(X, dtype=np.float64)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def makers(degree, include_rff=False, include_srht=False):
    from kernelmaps import CRAFTMaps, RandomFourierFeatures, RandomMaclaurin, TensorSketch

    kw = dict(degree=degree, gamma=1.0, coef0=1.0)
    table = {
        "RFM": lambda E, s: RandomMaclaurin(E, random_state=s, **kw),
        "TS": lambda E, s: TensorSketch(E, random_state=s, **kw),
        "CM-RFM": lambda E, s: CRAFTMaps(E, up="random_maclaurin", down="gaussian", random_state=s, **kw),
        "CM-TS": lambda E, s: CRAFTMaps(E, up="tensor_sketch", down="gaussian", random_state=s, **kw),
    }
    if include_srht:
        table["CM-RFM (SRHT)"] = lambda E, s: CRAFTMaps(E, up="random_maclaurin", down="srht", random_state=s, **kw)
    if include_rff:
        table["RFF"] = lambda E, s: RandomFourierFeatures(E, gamma="scale", random_state=s)
    return table


def print_table(title, rows, fmt):
    print(f"\n{title}")
    print(f"{'map':15s}" + "".join(f"{'E=2^%d' % (E.bit_length() - 1):>9s}" for E in WIDTHS))
    for label, values in rows.items():
        print(f"{label:15s}" + "".join(fmt % v for v in values))


def reconstruction(n_seeds):
    import numpy as np

    import kernelmaps.datasets as kd
    from kernelmaps import exact_kernel, nrmse

    for name in ("pendigits", "letter"):
        data = kd.load(name)
        pool = np.vstack([data.X_train, data.X_test])
        X = unit_rows(pool[np.random.RandomState(0).choice(len(pool), 1000, replace=False)])
        K = exact_kernel(X, kernel="polynomial", degree=7, gamma=1.0, coef0=1.0)
        errors = {label: np.array([[nrmse(K, Z=make(E, s).fit(X).transform(X)) for s in range(n_seeds)]
                                   for E in WIDTHS])
                  for label, make in makers(7, include_srht=True).items()}
        print_table(f"{name}: NRMSE of (<x,y>+1)^7, 1000 points, D = 8E, mean of {n_seeds} seeds",
                    {k: v.mean(axis=1) for k, v in errors.items()}, "%9.4f")
        print_table(f"{name}: the same, median of {n_seeds} seeds",
                    {k: np.median(v, axis=1) for k, v in errors.items()}, "%9.4f")
        wins = [(errors["CM-RFM"][i].mean() < min(errors["RFM"][i].mean(), errors["TS"][i].mean()))
                for i in range(len(WIDTHS))]
        print(f"CM-RFM below both RFM and TS (means) at {sum(wins)}/{len(WIDTHS)} widths")


def classification(n_seeds):
    import numpy as np

    import kernelmaps.datasets as kd
    from kernelmaps import ECOCClassifier

    data = kd.load("pendigits")
    X_train, X_test = unit_rows(data.X_train), unit_rows(data.X_test)
    y_train, y_test = data.y_train, data.y_test
    n_val = len(y_train) // 5
    hold = np.random.RandomState(0).permutation(len(y_train))
    val, fit_rows = hold[:n_val], hold[n_val:]
    alphas = [1e-4, 1e-3, 1e-2, 1e-1, 1.0]
    results, chosen = {}, {}
    for label, make in makers(9, include_rff=True).items():
        results[label] = np.zeros((len(WIDTHS), n_seeds))
        for i, E in enumerate(WIDTHS):
            for s in range(n_seeds):
                fmap = make(E, s).fit(X_train)
                Z_train, Z_test = fmap.transform(X_train), fmap.transform(X_test)

                def error(alpha, rows_fit, Z_eval, y_eval):
                    clf = ECOCClassifier(code_size=64, alpha=alpha, random_state=s)
                    clf.fit(Z_train[rows_fit], y_train[rows_fit])
                    return 1.0 - clf.score(Z_eval, y_eval)

                val_err = [error(a, fit_rows, Z_train[val], y_train[val]) for a in alphas]
                alpha = alphas[int(np.argmin(val_err))]
                chosen.setdefault(label, []).append(alpha)
                results[label][i, s] = 100 * error(alpha, slice(None), Z_test, y_test)
    rows = {}
    for label in ["RFF", "RFM", "CM-RFM", "TS", "CM-TS"]:
        rows[f"{label} (ours)"] = results[label].mean(axis=1)
        rows[f"{label} (paper)"] = PAPER_TABLE_1E[label]
    print_table(f"PENDIGITS test error %, (<x,y>+1)^9, D = 8E, ECOC(64 bits) least squares, "
                f"mean of {n_seeds} seeds", rows, "%9.2f")
    for label, alpha in chosen.items():
        print(f"alpha chosen for {label}: {sorted(set(alpha))}")
    wins = [(results["CM-RFM"][i].mean() < results["RFM"][i].mean()) for i in range(len(WIDTHS))]
    print(f"CM-RFM below RFM at {sum(wins)}/{len(WIDTHS)} widths")


def main():
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", nargs="?", default="all", choices=["reconstruction", "classification", "all"])
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    if args.part in ("reconstruction", "all"):
        reconstruction(args.seeds)
    if args.part in ("classification", "all"):
        classification(args.seeds)


if __name__ == "__main__":
    main()
