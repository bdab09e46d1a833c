"""Draw docs/uncertainty.png, the README's uncertainty figure: a 1-D Nyström fit, its 95 % band, three samples.

Run from the repository root: ``python docs/uncertainty_figure.py``.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from kernelmaps import NystroemKernelRidge  # noqa: E402


def main(path=Path(__file__).resolve().parent / "uncertainty.png"):
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.uniform(-4, -0.5, 120), rng.uniform(1.5, 4, 80)])[:, None]
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 0] + 0.15 * rng.standard_normal(len(X))
    model = NystroemKernelRidge(40, alpha=0.05, gamma=1.0, variance="dtc", random_state=0).fit(X, y)
    grid = np.linspace(-6, 6, 400)[:, None]
    mean, std = model.predict(grid, return_std=True)
    samples = model.sample_y(grid, 3, random_state=1)
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    ax.fill_between(grid[:, 0], mean - 1.96 * std, mean + 1.96 * std, color="C0", alpha=0.2,
                    label="95 % band of f (DTC)")
    ax.plot(grid[:, 0], mean, color="C0", label="posterior mean")
    ax.plot(grid[:, 0], samples, color="C1", linewidth=0.8, alpha=0.8)
    ax.plot([], [], color="C1", linewidth=0.8, label="three posterior samples")
    ax.scatter(X[:, 0], y, s=5, color="black", label="data", zorder=3)
    ax.scatter(model.components_[:, 0], np.full(len(model.components_), -2.9), marker="|", color="grey",
               label="centres")
    ax.set(xlim=(-6, 6), ylim=(-3.2, 3.2), xlabel="x")
    ax.legend(fontsize=7, loc="upper left", ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


if __name__ == "__main__":
    main()
