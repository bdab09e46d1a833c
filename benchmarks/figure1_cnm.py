"""Redraw Figure 1 (and the MSE of Figure 2) of the CNM paper on the bundled datasets.

Yu, Kumar, Rowley & Chang, Compact nonlinear maps and circulant extensions,
arXiv:1503.03893, 2015, section 7.

For banana, magic04, letter and pendigits (standardized on the training split,
gamma = the paper's knn50 rule) and k = 2, 4, ..., 512 it measures the test
accuracy of

* ``CNM-classification``: :class:`kernelmaps.CompactNonlinearMap`, its jointly
  trained one-vs-rest Pegasos SVM;
* ``CNM-kerapp``: ``CompactNonlinearMap(objective='kernel')`` (k <= 128, as the
  paper) with a :class:`kernelmaps.PegasosSVC` on its features;
* ``RFF+Pegasos``: :class:`kernelmaps.RandomFourierFeatures` with the same
  learner as CNM's linear part (:class:`kernelmaps.PegasosSVC`, same alpha,
  minibatch and total number of steps as CNM's W-steps);
* ``RFF+LS``: the same features with :class:`kernelmaps.LeastSquaresClassifier`
  (alpha = 1e-3), a stronger, exactly solved linear learner, for reference;
* ``Linear``: Pegasos on the standardized raw features;
* ``RBF``: scikit-learn's exact ``SVC(C=1, gamma)`` (one-vs-one) trained on at
  most 6000 training rows (a horizontal line);

and, for k <= 128, the kernel MSE ``mean (K - Z Z^T)^2`` of CNM-kerapp and RFF on
500 held-out test points. BLAS runs single-threaded for every method. Training sets are the full bundled splits (banana
1000, magic04 14226, letter 12000, pendigits 7494). It writes ``figure1_cnm.csv``
(one row per dataset, k and method: accuracy, kernel MSE, fit seconds) and
``figure1_cnm.png`` to the output directory.

Run (7 m 50 s measured on this busy 2-core machine)::

    /work/venv/bin/python benchmarks/figure1_cnm.py /tmp/figure1

``--datasets`` and ``--widths`` restrict the grid.
"""

SETTINGS = {"alpha": 1e-4, "batch_size": 500, "n_steps_w": 100, "n_steps_theta": 100,
            "max_iter": 20, "learning_rate": 0.2}
KERAPP = {"batch_size": 500, "n_steps_theta": 100, "max_iter": 10, "learning_rate": 0.2}
RBF_MAX_TRAIN = 6000
N_EVAL = 500


def prepare(name, seed=0):
    import numpy as np
    from sklearn.preprocessing import StandardScaler

    import kernelmaps.datasets as kd
    from kernelmaps import resolve_gamma

    data = kd.load(name)
    scaler = StandardScaler().fit(data.X_train)
    X, Xt = scaler.transform(data.X_train), scaler.transform(data.X_test)
    gamma = resolve_gamma("knn50", X, "gaussian", np.random.RandomState(seed))
    return X, data.y_train, Xt, data.y_test, gamma


def run(datasets, widths, out_dir):
    import time
    from pathlib import Path

    import numpy as np
    from sklearn.svm import SVC

    from kernelmaps import CompactNonlinearMap, LeastSquaresClassifier, PegasosSVC, RandomFourierFeatures

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    w_steps = SETTINGS["n_steps_w"] * (SETTINGS["max_iter"] + 1)

    def record(ds, k, method, acc, mse=float("nan"), seconds=float("nan")):
        rows.append({"dataset": ds, "k": k, "method": method, "accuracy": acc,
                     "kernel_mse": mse, "fit_seconds": seconds})
        print(f"{ds:10s} k={k!s:4s} {method:20s} acc={acc:.4f} mse={mse:.5f} t={seconds:.1f}s", flush=True)

    def pegasos():
        return PegasosSVC(alpha=SETTINGS["alpha"], batch_size=SETTINGS["batch_size"],
                          max_iter=w_steps, random_state=0)

    for ds in datasets:
        X, y, Xt, yt, gamma = prepare(ds)
        Xe = Xt[:N_EVAL]
        sq = np.einsum("ij,ij->i", Xe, Xe)
        K = np.exp(-gamma * np.maximum(sq[:, None] + sq[None] - 2 * Xe @ Xe.T, 0))

        def mse(Z):
            return float(np.mean((K - Z @ Z.T) ** 2))

        keep = np.random.RandomState(0).permutation(len(X))[:RBF_MAX_TRAIN]
        t = time.perf_counter()
        svc = SVC(C=1.0, gamma=gamma).fit(X[keep], y[keep])
        record(ds, "", "RBF", svc.score(Xt, yt), seconds=time.perf_counter() - t)
        t = time.perf_counter()
        lin = pegasos().fit(X, y)
        record(ds, "", "Linear", lin.score(Xt, yt), seconds=time.perf_counter() - t)
        for k in widths:
            t = time.perf_counter()
            cnm = CompactNonlinearMap(k, gamma=gamma, random_state=0, **SETTINGS).fit(X, y)
            record(ds, k, "CNM-classification", cnm.score(Xt, yt), seconds=time.perf_counter() - t)
            t = time.perf_counter()
            rff = RandomFourierFeatures(k, gamma=gamma, random_state=0).fit(X)
            Z = rff.transform(X)
            clf = pegasos().fit(Z, y)
            seconds = time.perf_counter() - t
            Zt = rff.transform(Xt)
            rff_mse = mse(rff.transform(Xe)) if k <= 128 else float("nan")
            record(ds, k, "RFF+Pegasos", clf.score(Zt, yt), rff_mse, seconds)
            t = time.perf_counter()
            ls = LeastSquaresClassifier(alpha=1e-3).fit(Z, y)
            record(ds, k, "RFF+LS", ls.score(Zt, yt), rff_mse, time.perf_counter() - t)
            if k <= 128:
                t = time.perf_counter()
                kerapp = CompactNonlinearMap(k, objective="kernel", gamma=gamma, alpha=SETTINGS["alpha"],
                                             n_steps_w=SETTINGS["n_steps_w"], random_state=0,
                                             **KERAPP).fit(X, y)
                record(ds, k, "CNM-kerapp", kerapp.score(Xt, yt), mse(kerapp.transform(Xe)),
                       time.perf_counter() - t)
        write(rows, out_dir)
    return rows


def write(rows, out_dir):
    import csv

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(out_dir / "figure1_cnm.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.2 * len(datasets), 3.6), squeeze=False)
    styles = {"CNM-classification": "r-o", "CNM-kerapp": "g-s", "RFF+Pegasos": "b-^", "RFF+LS": "c:v"}
    for ax, ds in zip(axes[0], datasets):
        mine = [r for r in rows if r["dataset"] == ds]
        for method, style in styles.items():
            pts = sorted((r["k"], r["accuracy"]) for r in mine if r["method"] == method)
            if pts:
                ax.plot(*zip(*pts), style, label=method, markersize=4)
        for method, style in [("RBF", "k--"), ("Linear", "m-.")]:
            for r in mine:
                if r["method"] == method:
                    ax.axhline(r["accuracy"], linestyle=style[1:], color=style[0], label=method)
        ax.set_xscale("log", base=2)
        ax.set_title(ds.upper())
        ax.set_xlabel("k (number of features)")
        ax.set_ylabel("test accuracy")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out_dir / "figure1_cnm.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--datasets", nargs="+", default=["banana", "magic04", "letter", "pendigits"])
    parser.add_argument("--widths", nargs="+", type=int, default=[2**i for i in range(1, 10)])
    args = parser.parse_args()
    from threadpoolctl import threadpool_limits

    # every method's products are small: single-threaded BLAS for all of them (CNM
    # limits itself; Pegasos and the RFF products would otherwise spin on a busy machine)
    with threadpool_limits(limits=1, user_api="blas"):
        run(args.datasets, args.widths, args.out_dir)
