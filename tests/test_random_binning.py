"""Random binning features against a NumPy reference and the exact Laplacian kernel.

The contract, kernel-approximation and convention tests generated from the
registry cover the map too; these hold what is particular to it: the bins
themselves, the unbiased estimate, the sparse structure and the vocabulary.
"""

import numpy as np
import pytest
import scipy.sparse as sp

import kernelmaps
import kernelmaps.random_binning as random_binning
from kernelmaps import RandomBinning, exact_kernel
from kernelmaps._core.validation import FeatureOverflowError


def same_bin_fraction(binning, X, Y):
    """NumPy reference: the fraction of grids in which rows of ``X`` and ``Y`` share a bin,
    with bins ``floor((x - u) / delta)`` computed by plain division."""
    shares = np.zeros((len(X), len(Y)))
    for p in range(binning.n_grids):
        pitch, shift = binning.pitches_[:, p], binning.shifts_[:, p]
        bx, by = np.floor((X - shift) / pitch), np.floor((Y - shift) / pitch)
        shares += (bx[:, None, :] == by[None, :, :]).all(axis=2)
    return shares / binning.n_grids


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(3)
    return rng.uniform(-1, 1, size=(200, 4)), rng.uniform(-1, 1, size=(40, 4))


def test_bins_equal_the_numpy_reference(points):
    X, Y = points
    binning = RandomBinning(n_grids=32, gamma=1.5, random_state=0).fit(X)
    Z, Zy = binning.transform(X), binning.transform(Y)
    np.testing.assert_allclose((Z @ Z.T).toarray(), same_bin_fraction(binning, X, X), atol=1e-12)
    np.testing.assert_allclose((Zy @ Z.T).toarray(), same_bin_fraction(binning, Y, X), atol=1e-12)


@pytest.mark.parametrize("gamma", [0.7, 2.0])
def test_the_estimate_is_unbiased_and_a_bandwidth_off_by_two_fails(points, gamma):
    """Each grid is a Bernoulli(k(x, y)) draw: over P grids the estimate has
    standard error sqrt(k (1 - k) / P). Every pair is within 5 of them of the
    Laplacian kernel; the map drawn at 2 gamma or gamma / 2 is not."""
    X = points[0][:40]
    K = exact_kernel(X, kernel="laplacian", gamma=gamma)
    P = 6000
    standard_error = np.sqrt(K * (1 - K) / P) + 1e-3 / P

    def z_scores(g):
        Z = RandomBinning(n_grids=P, gamma=g, random_state=1).fit(X).transform(X)
        return np.abs((Z @ Z.T).toarray() - K) / standard_error

    assert z_scores(gamma).max() < 5
    assert z_scores(2 * gamma).max() > 20
    assert z_scores(gamma / 2).max() > 20


def test_pitches_are_gamma_2_and_shifts_uniform_within_them():
    binning = RandomBinning(n_grids=20000, gamma=4.0, random_state=0).fit(np.zeros((3, 1)))
    pitches, fractions = binning.pitches_.ravel(), (binning.shifts_ / binning.pitches_).ravel()
    # Gamma(2, 1/4): mean 1/2, variance 1/8; standard errors of the means 0.0025 and 0.0020
    assert abs(pitches.mean() - 0.5) < 0.0125 and abs(pitches.var() - 0.125) < 0.01
    assert fractions.min() >= 0 and fractions.max() < 1 and abs(fractions.mean() - 0.5) < 0.01


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_training_row_has_one_entry_per_grid_all_one_over_sqrt_p(points, dtype):
    X = points[0].astype(dtype)
    binning = RandomBinning(n_grids=50, gamma=3.0, random_state=0).fit(X)
    Z = binning.transform(X)
    assert isinstance(Z, sp.csr_matrix) and Z.dtype == dtype and Z.has_canonical_format
    np.testing.assert_array_equal(Z.getnnz(axis=1), 50)
    np.testing.assert_array_equal(Z.data, dtype(1 / np.sqrt(50)))
    # the p-th entry of a row lies in grid p's columns
    grid = np.searchsorted(binning.grid_columns_, Z.indices, side="right") - 1
    np.testing.assert_array_equal(grid.reshape(len(X), 50), np.tile(np.arange(50), (len(X), 1)))
    assert Z.shape[1] == binning.n_components_ == binning.grid_columns_[-1]
    # every column is some training row's bin
    assert (Z.getnnz(axis=0) > 0).all()


def test_float32_and_float64_give_the_same_bins(points):
    X = points[0]
    binning = RandomBinning(n_grids=40, gamma=2.0, random_state=0).fit(X)
    Z64, Z32 = binning.transform(X), binning.transform(X.astype(np.float32))
    np.testing.assert_array_equal(Z32.indices, Z64.indices)


def test_same_seed_same_map_and_vocabulary_whatever_the_blocks(points, monkeypatch):
    X = np.vstack([points[0]] * 30)
    first = RandomBinning(n_grids=30, gamma=2.0, random_state=5).fit(X)
    monkeypatch.setattr(random_binning, "block_rows", lambda *_: 7)
    again = RandomBinning(n_grids=30, gamma=2.0, random_state=5).fit(X)
    np.testing.assert_array_equal(again.pitches_, first.pitches_)
    np.testing.assert_array_equal(again.grid_columns_, first.grid_columns_)
    np.testing.assert_array_equal(again.transform(X).indices, first.transform(X).indices)
    other = RandomBinning(n_grids=30, gamma=2.0, random_state=6).fit(X)
    assert not np.array_equal(other.pitches_, first.pitches_)


def test_a_vocabulary_that_outgrows_its_first_table(monkeypatch):
    """A fine grid gives nearly every row its own bin: the tables grow many times."""
    monkeypatch.setattr(random_binning, "_FIRST_TABLE_SLOTS", 16)
    X = np.random.default_rng(0).uniform(size=(5000, 2))
    binning = RandomBinning(n_grids=4, gamma=300.0, random_state=0).fit(X)
    Z = binning.transform(X)
    reference = same_bin_fraction(binning, X[:300], X[:300])
    np.testing.assert_allclose((Z[:300] @ Z[:300].T).toarray(), reference, atol=1e-12)
    assert binning.n_components_ > 4 * 1000


def test_unseen_bins_are_dropped_and_the_cross_estimate_stays_exact(points):
    X, _ = points
    binning = RandomBinning(n_grids=64, gamma=2.0, random_state=0).fit(X)
    far = X[:10] + 50.0  # beyond every training row in every grid
    Z_far = binning.transform(far)
    assert Z_far.nnz == 0 and Z_far.shape == (10, binning.n_components_)
    mixed = np.vstack([X[:5], far[:5]])
    Z_mixed = binning.transform(mixed)
    np.testing.assert_array_equal(Z_mixed.getnnz(axis=1), [64] * 5 + [0] * 5)
    assert (Z_mixed.data != 0).all()
    Y = points[1] * 1.5  # partly outside the training range: some bins unseen
    Zy = binning.transform(Y)
    assert Zy.nnz < 64 * len(Y)
    np.testing.assert_allclose((Zy @ binning.transform(X).T).toarray(), same_bin_fraction(binning, Y, X),
                               atol=1e-12)


@pytest.mark.parametrize("kernel", ["gaussian", "rbf", "cauchy", "skewed_chi2"])
def test_kernels_without_a_pitch_density_are_refused(points, kernel):
    with pytest.raises(ValueError, match="density of pitches"):
        RandomBinning(kernel=kernel).fit(points[0])


@pytest.mark.parametrize("kernel", ["polynomial", "chi2", "nope", "matern", 3])
def test_kernels_outside_the_vocabulary_are_named(points, kernel):
    # exactly the kernels random binning takes, each once
    with pytest.raises(ValueError, match=r"kernel must be one of \['laplacian', 'skewed_intersection'\], got"):
        RandomBinning(kernel=kernel).fit(points[0])


@pytest.mark.parametrize("kernel, alternative", [("gaussian", "RandomFourierFeatures"),
                                                 ("cauchy", "RandomFourierFeatures"),
                                                 ("skewed_chi2", "QuantileFourierFeatures")])
def test_a_refused_kernel_is_sent_to_a_map_that_takes_it(points, kernel, alternative):
    with pytest.raises(ValueError, match=rf"{alternative}\(kernel='{kernel}'\)"):
        RandomBinning(kernel=kernel).fit(points[0])
    getattr(kernelmaps, alternative)(kernel=kernel).fit(np.abs(points[0]))


@pytest.mark.parametrize("params, message", [
    ({"n_grids": 0}, "n_grids"), ({"n_grids": 2.5}, "n_grids"), ({"gamma": -1.0}, "gamma"),
    ({"gamma": "wide"}, "gamma"),
])
def test_impossible_parameters_are_named(points, params, message):
    with pytest.raises(ValueError, match=message):
        RandomBinning(**params).fit(points[0])


def test_bins_beyond_float64_are_refused_not_merged(points):
    X = points[0]
    with pytest.raises(FeatureOverflowError, match="beyond float64's range of bins"):
        RandomBinning(gamma=1e300, random_state=0).fit(X * 1e10)
    binning = RandomBinning(gamma=1e300, random_state=0).fit(X)
    with pytest.raises(FeatureOverflowError, match="smaller gamma"):
        binning.transform(X * 1e10)


def test_the_skewed_intersection_kernel_is_binned_in_log_space():
    X = np.random.default_rng(0).dirichlet(np.full(4, 0.5), size=40)
    gamma, P = 0.5, 6000
    binning = RandomBinning(n_grids=P, kernel="skewed_intersection", gamma=gamma, skewedness=0.1,
                            random_state=0).fit(X)
    K = exact_kernel(X, kernel="skewed_intersection", gamma=gamma, skewedness=0.1)
    np.testing.assert_allclose(binning.kernel(X), K)
    Z = binning.transform(X)
    z = np.abs((Z @ Z.T).toarray() - K) / (np.sqrt(K * (1 - K) / P) + 1e-3 / P)
    assert z.max() < 5
    with pytest.raises(ValueError, match="skewedness"):
        binning.transform(X - 1.0)


def test_a_heuristic_gamma_reads_the_l1_distances(points):
    X = points[0]
    binning = RandomBinning(gamma="median", random_state=0).fit(X)
    from scipy.spatial.distance import pdist

    assert binning.gamma_ == pytest.approx(1 / np.median(pdist(X, "cityblock")), rel=1e-9)


def test_a_dask_fit_reads_every_chunk_into_the_vocabulary(points):
    da = pytest.importorskip("dask.array")
    X = np.vstack([points[0], points[1] * 3])
    in_memory = RandomBinning(n_grids=20, gamma=2.0, random_state=0).fit(X)
    lazy = RandomBinning(n_grids=20, gamma=2.0, random_state=0).fit(da.from_array(X, chunks=(37, -1)))
    np.testing.assert_array_equal(lazy.grid_columns_, in_memory.grid_columns_)
    Z, Z_lazy = in_memory.transform(X), lazy.transform(X)
    np.testing.assert_array_equal(Z_lazy.indices, Z.indices)
    np.testing.assert_array_equal(Z_lazy.getnnz(axis=1), 20)


@pytest.mark.parametrize("learner", ["least_squares", "pegasos"])
def test_pipelines_learn_on_sparse_features_without_densifying(learner, monkeypatch):
    """Binning into a linear learner: sparse features all the way, and a fine
    boundary (a 4 x 4 checkerboard) learnt far above chance."""
    from sklearn.pipeline import make_pipeline

    from kernelmaps import LeastSquaresClassifier, PegasosSVC

    rng = np.random.default_rng(0)
    X = rng.uniform(0, 4, size=(4000, 2))
    y = (np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2
    model = (LeastSquaresClassifier(alpha=1e-2) if learner == "least_squares"
             else PegasosSVC(alpha=1e-5, batch_size=100, max_iter=3000, random_state=0))

    densify = sp.csr_matrix.toarray

    def no_densifying(self, *args, **kwargs):
        # small products (a class's feature sums) may be dense; the rows may not
        assert self.shape[0] < 100, "the sparse features were densified"
        return densify(self, *args, **kwargs)

    monkeypatch.setattr(sp.csr_matrix, "toarray", no_densifying)
    pipeline = make_pipeline(RandomBinning(n_grids=50, gamma=4.0, random_state=0), model).fit(X[:3000], y[:3000])
    assert pipeline.score(X[3000:], y[3000:]) > 0.9
