"""Choosing the ridge of least squares on random features: every alpha from one pass, against one fit
and against scikit-learn's ``RidgeCV`` on the same materialized features.

Experiment
----------
``least-squares-cv-cost`` (timed)
    ``LeastSquaresRegressorCV`` (exact leave-one-out, 20 penalties) over random
    Fourier features (D = 4096, passed as ``feature_map=``, so the features are
    never held), timed against one ``LeastSquaresRegressor`` fit at the chosen
    penalty on the same features, and compared with ``RidgeCV`` (its efficient
    leave-one-out) on the features materialized: the chosen penalty, every
    penalty's leave-one-out mean squared error, the test predictions.
"""

from benchmarks.experiments._common import timed
from benchmarks.experiments._framework import experiment, figure
from benchmarks.experiments._sizes import Size

#: The whole search may take at most this many times one fit.
FIT_MULTIPLE_BAR = 2.5
#: Agreement with RidgeCV: relative, on every penalty's leave-one-out error and on the test predictions.
AGREEMENT = 1e-6


@experiment(
    "least-squares-cv-cost",
    paper="Golub, Heath & Wahba, Technometrics 1979 (every ridge from one eigendecomposition); Rahimi & Recht, "
          "NIPS 2007 (the features)",
    source="README, \"Choosing γ and λ\"",
    claim=f"LeastSquaresRegressorCV over random Fourier features (D = 4096, 10^5 rows, 20 penalties, exact "
          f"leave-one-out) takes at most {FIT_MULTIPLE_BAR:g} times one LeastSquaresRegressor fit at the chosen "
          f"penalty, and equals RidgeCV on the same materialized features: the same penalty, every penalty's "
          f"leave-one-out error and the test predictions within {AGREEMENT:g} relative.",
    paper_value="leave-one-out residuals from the hat matrix's diagonal (RidgeCV's closed form); the bars: "
                f"search ≤ {FIT_MULTIPLE_BAR:g} fits, equal to RidgeCV",
    quick={"rows": 5000, "D": 512, "d": 16, "n_alphas": 20, "test_rows": 2000, "noise": 0.1, "seed": 0},
    full={"rows": 100_000, "D": 4096, "d": 16, "n_alphas": 20, "test_rows": 10_000, "noise": 0.1, "seed": 0},
    timed=True,
    size=(Size("rows", "{} rows", claim=10**5), Size("D", "D = {}", claim=4096)),
)
def least_squares_cv_cost(run):
    import numpy as np
    from sklearn.linear_model import RidgeCV

    from benchmarks.common import smooth_regression
    from kernelmaps import LeastSquaresRegressor, LeastSquaresRegressorCV, RandomFourierFeatures

    s = run.settings
    X, y = smooth_regression(s["rows"], s["d"], noise=s["noise"], seed=s["seed"])
    X_test, y_test = smooth_regression(s["test_rows"], s["d"], noise=s["noise"], seed=s["seed"] + 1)
    alphas = np.logspace(-4, 4, s["n_alphas"])
    features = RandomFourierFeatures(s["D"], gamma="scale", random_state=s["seed"]).fit(X)
    # compilation, outside the clocks
    LeastSquaresRegressorCV(alphas=alphas[:2]).fit(X[:500], y[:500], feature_map=features)
    ours, search = timed(lambda: LeastSquaresRegressorCV(alphas=alphas, scoring="neg_mean_squared_error",
                                                          store_cv_results=True).fit(X, y, feature_map=features))
    run.record_part("search", {"seconds": search, "alpha": ours.alpha_})
    _, one_fit = timed(lambda: LeastSquaresRegressor(alpha=ours.alpha_).fit(X, y, feature_map=features))
    run.record_part("one fit", {"seconds": one_fit})
    Z = features.transform(X).astype(np.float64)
    ridge, ridge_seconds = timed(lambda: RidgeCV(alphas=alphas, store_cv_results=True).fit(Z, y))
    ours_errors = -np.asarray(ours.cv_results_["mean_test_score"])
    ridge_errors = ridge.cv_results_.mean(axis=0)
    Z_test = features.transform(X_test).astype(np.float64)
    ours_test, ridge_test = ours.predict(features.transform(X_test)), ridge.predict(Z_test)
    error_gap = float(np.max(np.abs(ours_errors - ridge_errors) / ridge_errors))
    prediction_gap = float(np.max(np.abs(ours_test - ridge_test)) / np.max(np.abs(ridge_test)))
    multiple = search / one_fit
    run.write_csv([{"alpha": a, "ours_loo_mse": o, "ridgecv_loo_mse": r} for a, o, r in
                   zip(alphas, ours_errors, ridge_errors)]
                  + [{"search_seconds": search, "one_fit_seconds": one_fit, "ridgecv_seconds": ridge_seconds,
                      "ours_alpha": ours.alpha_, "ridgecv_alpha": ridge.alpha_, "error_gap": error_gap,
                      "prediction_gap": prediction_gap}])
    _plot(run, alphas, ours_errors, ridge_errors, ours.alpha_, s)
    same = ours.alpha_ == ridge.alpha_ and error_gap <= AGREEMENT and prediction_gap <= AGREEMENT
    met = [multiple <= FIT_MULTIPLE_BAR, same]
    status = "holds" if all(met) else ("partly holds" if any(met) else "does not hold")
    rmse = float(np.sqrt(np.mean((ours_test - y_test) ** 2)))
    run.verdict(
        status,
        ours=f"n = {s['rows']:,}, D = {s['D']}: search {search:.1f} s = {multiple:.2f} fits ({one_fit:.1f} s); "
             f"RidgeCV on the materialized features {ridge_seconds:.1f} s; alpha {ours.alpha_:.4g} vs "
             f"{ridge.alpha_:.4g}; largest relative gap: leave-one-out errors {error_gap:.1e}, test predictions "
             f"{prediction_gap:.1e}",
        measured=[(f"LeastSquaresRegressorCV, RFF D = {s['D']}, {s['rows']:.0e} rows, {s['n_alphas']} alphas: "
                   "search in fits · RidgeCV's seconds · gap to RidgeCV",
                   f"{multiple:.2f} fits ({search:.1f} s) · {ridge_seconds:.1f} s · {max(error_gap, prediction_gap):.1e}")],
        note=f"smooth regression (d = {s['d']}, noise {s['noise']:g}); test RMSE at the chosen alpha {rmse:.4f}; "
             "RidgeCV fits the features as a float64 array it holds, ours reads them block by block from the map; "
             "one run each, on the machine's 2 cores",
    )


def _plot(run, alphas, ours_errors, ridge_errors, chosen, s):
    fig, ax = figure(1, 1, width=5.0)
    axes = ax[0, 0]
    axes.loglog(alphas, ours_errors, marker="o", label="LeastSquaresRegressorCV")
    axes.loglog(alphas, ridge_errors, ls="--", marker="x", label="RidgeCV (materialized features)")
    axes.axvline(chosen, color="k", lw=0.8, label=f"chosen alpha {chosen:.3g}")
    axes.set(xlabel="alpha", ylabel="leave-one-out mean squared error",
             title=f"RFF D = {s['D']}, n = {s['rows']:,}")
    axes.legend(fontsize=8)
    fig.tight_layout()
    run.save_figure(fig)
