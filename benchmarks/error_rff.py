"""RFF kernel error against RBFSampler's on 1000 standardized LETTER rows.

Usage: ``python benchmarks/error_rff.py``

Same gamma (``knn50`` rule), D in {256, 1024, 4096}, mean relative Frobenius error
over 5 seeds for each; the last column checks the O(1/sqrt(D)) decay (the error
times sqrt(D) should stay about constant). (asv imports every module here; all
work is under ``__main__``.)
"""


def main():
    import numpy as np
    from sklearn.kernel_approximation import RBFSampler
    from sklearn.preprocessing import StandardScaler

    import kernelmaps.datasets as kd
    from kernelmaps import RandomFourierFeatures, relative_frobenius_error

    X = StandardScaler().fit_transform(kd.load("letter").X_train)
    X = X[np.random.default_rng(0).choice(X.shape[0], 1000, replace=False)]
    base = RandomFourierFeatures(1, gamma="knn50", random_state=0).fit(X)
    K = base.kernel(X)
    print(f"gamma = {base.gamma_:.4f}")
    print(f"{'D':>6s} {'RFF':>8s} {'RFF cossin':>11s} {'RBFSampler':>11s} {'ratio':>6s} {'RFF*sqrt(D)':>12s}")
    for D in (256, 1024, 4096):
        def mean_error(make):
            return np.mean([relative_frobenius_error(K, Z=make(s).fit(X).transform(X)) for s in range(5)])

        ours = mean_error(lambda s: RandomFourierFeatures(D, gamma=base.gamma_, random_state=s))
        pair = mean_error(lambda s: RandomFourierFeatures(D, gamma=base.gamma_, output="cossin", random_state=s))
        theirs = mean_error(lambda s: RBFSampler(gamma=base.gamma_, n_components=D, random_state=100 + s))
        print(f"{D:6d} {ours:8.4f} {pair:11.4f} {theirs:11.4f} {ours / theirs:6.3f} {ours * np.sqrt(D):12.3f}")


if __name__ == "__main__":
    main()
