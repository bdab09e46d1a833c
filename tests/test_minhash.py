"""MinHash: the Numba hashes against a NumPy reference, the exact kernels, and the
statistics of the b-bit estimate (Li & König 2010, Theorem 1; Ioffe 2010; Li 2015).

The statistical tests fit one map with many hashes and read each hash's column:
the hashes are independent draws, so one wide map stands for many seeds.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from kernelmaps import MinHash, min_max_kernel, tanimoto_kernel
from kernelmaps._kernels.minhash import bbit_constants, low_bits_collision
from naive import exact_resemblance

D = 2048
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


# ------------------------------------------------------------------ references
def _fin(h):
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> np.uint64(33))


def _unit(h):
    return ((h >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53


def reference_hash_values(est, X):
    """Plain NumPy: each row's min hash (binary) or h_j(i*) of 0-bit ICWS (weighted), with
    h_j(i) = fmix64(key_j + i G); 2^64 - 1 for an empty row."""
    X = sp.csr_matrix(X, dtype=np.float64)
    keys = est.keys_
    out = np.full((X.shape[0], len(keys)), EMPTY, dtype=np.uint64)
    for row in range(X.shape[0]):
        cols = X.indices[X.indptr[row]:X.indptr[row + 1]]
        weights = X.data[X.indptr[row]:X.indptr[row + 1]]
        cols, weights = cols[weights != 0].astype(np.uint64), weights[weights != 0]
        if not len(cols):
            continue
        if est.mode_ == "binary":
            out[row] = _fin(keys[:, None] + cols[None, :] * GOLDEN).min(axis=1)
        else:
            chosen, _ = reference_icws(keys, cols, weights)
            out[row] = _fin(keys + chosen * GOLDEN)
    return out


def reference_icws(keys, cols, weights):
    """Ioffe's improved consistent weighted sampling of one row: ``(i*, t*)`` per hash key."""
    best = np.full(len(keys), np.inf)
    chosen, chosen_t = np.zeros(len(keys), dtype=np.uint64), np.zeros(len(keys))
    stream = np.uint64(0xD1B54A32D192ED03)
    for i, w in zip(cols, weights):
        z = _fin(keys + np.array([i], dtype=np.uint64) * GOLDEN)
        u1, u2, v1, v2, beta = (_unit(_fin(z + np.array([m], dtype=np.uint64) * stream)) for m in range(1, 6))
        r = -np.log(u1 * u2)  # Gamma(2, 1)
        log_c = np.log(-np.log(v1 * v2))  # log of a Gamma(2, 1)
        t = np.floor(np.log(w) / r + beta)
        log_a = log_c - r * (t - beta) - r  # Ioffe: a = c / (y e^r), y = e^(r (t - beta))
        better = log_a < best
        best[better], chosen[better], chosen_t[better] = log_a[better], i, t[better]
    return chosen, chosen_t


def hash_columns(Z, k):
    """The column each hash set in each (non-empty) row: ``(n, k)``."""
    return Z.indices.reshape(-1, k)


def pair_with(f1, f2, common, seed=0):
    idx = np.random.default_rng(seed).permutation(D)
    X = np.zeros((2, D))
    X[0, idx[:f1]] = 1
    X[1, idx[f1 - common:f1 - common + f2]] = 1
    return X


PAIRS = [(60, 40, 20), (50, 50, 45), (40, 40, 4), (30, 100, 30)]  # R = 0.25, 0.82, 0.05, 0.3


@pytest.fixture(scope="module")
def fingerprints():
    rng = np.random.default_rng(0)
    X = (rng.uniform(size=(40, 300)) < 0.08).astype(np.float64)
    X[1::2] = np.maximum(X[::2], rng.uniform(size=(20, 300)) < 0.04)
    X[7] = 0  # an empty row
    return X


@pytest.fixture(scope="module")
def counts(fingerprints):
    return fingerprints * np.random.default_rng(1).integers(1, 6, size=fingerprints.shape)


# ------------------------------------------------------------------ kernels vs reference
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("which", ["fingerprints", "counts"])
def test_hashes_equal_the_numpy_reference(which, dtype, request):
    X = request.getfixturevalue(which).astype(dtype)
    est = MinHash(n_hashes=48, n_bits=5, random_state=2).fit(sp.csr_matrix(X))
    assert est.mode_ == ("binary" if which == "fingerprints" else "weighted")
    expected = reference_hash_values(est, X)
    np.testing.assert_array_equal(est._hash_values(sp.csr_matrix(X)), expected)
    # and the features are their one-hot low bits, 1/sqrt(k) each, none for the empty row
    Z = est.transform(X)
    assert Z.dtype == dtype and Z.shape == (X.shape[0], 48 * 32)
    dense = np.zeros(Z.shape, dtype=dtype)
    rows = np.flatnonzero(X.any(axis=1))
    cols = (np.arange(48) << 5)[None, :] + (expected[rows] & np.uint64(31)).astype(np.int64)
    dense[rows[:, None], cols] = dtype(1 / np.sqrt(48))
    np.testing.assert_array_equal(Z.toarray(), dense)


@pytest.mark.parametrize("which", ["fingerprints", "counts"])
def test_estimate_kernel_is_the_corrected_inner_product_of_the_features(which, request):
    """The Numba match count behind estimate_kernel against z(x).z(y) of the sparse output."""
    X = request.getfixturevalue(which)
    est = MinHash(n_hashes=40, n_bits=3, random_state=5).fit(X)
    Z = est.transform(X)
    C1, C2 = est.collision_constants(X, X[:9])
    expected = np.where(C2 > 0, ((Z @ Z[:9].T).toarray() - C1) / (1 - C2), 0.0)
    np.testing.assert_allclose(est.estimate_kernel(X, X[:9]), expected, rtol=1e-12, atol=1e-12)


def test_each_hash_is_its_own():
    est = MinHash(n_hashes=64, random_state=0).fit(np.eye(4))
    assert len(set(est.keys_.tolist())) == 64


# ------------------------------------------------------------------ output structure
def test_rows_have_k_entries_of_unit_norm_and_empty_rows_none(fingerprints):
    k = 40
    Z = MinHash(n_hashes=k, n_bits=3, random_state=0).fit_transform(fingerprints)
    counts = Z.getnnz(axis=1)
    assert counts[7] == 0 and (np.delete(counts, 7) == k).all()
    np.testing.assert_allclose(np.delete(sp.linalg.norm(Z, axis=1), 7), 1.0)
    cols = hash_columns(Z, k)
    assert ((cols >> 3) == np.arange(k)).all()  # hash j's entry in its own 2^b columns
    assert len(MinHash(n_hashes=k, n_bits=3).fit(fingerprints).get_feature_names_out()) == k * 8


def test_sparse_input_and_explicit_zeros(fingerprints):
    S = sp.csr_matrix(fingerprints)
    S.data[:5] = 0  # stored zeros: not members of the sets
    dense = S.toarray()
    est = MinHash(n_hashes=16, random_state=1).fit(S)
    assert est.mode_ == "binary"
    for other in (dense, sp.csc_matrix(dense), S):
        np.testing.assert_array_equal(est.transform(other).toarray(), est.transform(dense).toarray())


# ------------------------------------------------------------------ modes and errors
def test_modes(fingerprints, counts):
    assert MinHash(random_state=0).fit(fingerprints).mode_ == "binary"
    assert MinHash(random_state=0).fit(counts).mode_ == "weighted"
    assert MinHash(mode="weighted", random_state=0).fit(fingerprints).mode_ == "weighted"
    with pytest.raises(ValueError, match="mode='binary' needs 0/1"):
        MinHash(mode="binary").fit(counts)
    with pytest.raises(ValueError, match="fitted in binary mode"):
        MinHash().fit(fingerprints).transform(counts)
    with pytest.raises(ValueError, match="mode"):
        MinHash(mode="sets").fit(fingerprints)


@pytest.mark.parametrize("params, match", [({"n_bits": 0}, "n_bits"), ({"n_bits": 17}, "n_bits"),
                                           ({"n_bits": 2.0}, "n_bits"), ({"n_hashes": 0}, "n_hashes")])
def test_bad_parameters(params, match, fingerprints):
    with pytest.raises(ValueError, match=match):
        MinHash(**params).fit(fingerprints)


def test_negative_input_is_refused(fingerprints):
    bad = fingerprints.copy()
    bad[3, 4] = -1
    for call in (lambda: MinHash().fit(bad), lambda: MinHash().fit(fingerprints).transform(bad),
                 lambda: min_max_kernel(bad), lambda: MinHash().fit(np.abs(bad)).kernel(bad)):
        with pytest.raises(ValueError, match="Negative values in data"):
            call()


# ------------------------------------------------------------------ exact kernels
def test_tanimoto_is_the_resemblance_of_the_sets(fingerprints):
    sets = [set(np.flatnonzero(row)) for row in fingerprints]
    brute = np.array([[len(a & b) / len(a | b) if a | b else 0.0 for b in sets] for a in sets])
    np.testing.assert_allclose(tanimoto_kernel(fingerprints), brute, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(tanimoto_kernel(sp.csr_matrix(fingerprints), fingerprints[:5]), brute[:, :5])
    np.testing.assert_allclose(MinHash().fit(fingerprints).kernel(fingerprints), brute)


def test_min_max_kernel_against_numpy(counts, fingerprints):
    mins = np.minimum(counts[:, None, :], counts[None, :, :]).sum(-1)
    maxs = np.maximum(counts[:, None, :], counts[None, :, :]).sum(-1)
    brute = np.where(maxs > 0, mins / np.where(maxs > 0, maxs, 1), 0.0)
    np.testing.assert_allclose(min_max_kernel(counts), brute, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(min_max_kernel(sp.csc_matrix(counts), counts[3:9]), brute[:, 3:9], rtol=1e-12)
    np.testing.assert_allclose(MinHash().fit(counts).kernel(counts), brute, rtol=1e-12)
    np.testing.assert_allclose(min_max_kernel(fingerprints), tanimoto_kernel(fingerprints), rtol=1e-12)


# ------------------------------------------------------------------ magnitudes
def test_min_max_kernel_of_rows_near_the_largest_float64():
    X = np.array([[1e308, 1e308, 0], [1e308, 0, 1e308]])  # each row sum overflows float64
    expected = [[1, 1 / 3], [1 / 3, 1]]
    np.testing.assert_allclose(min_max_kernel(X), expected, rtol=1e-15)
    np.testing.assert_allclose(MinHash(mode="weighted", random_state=0).fit(X).kernel(X), expected, rtol=1e-15)


@pytest.mark.parametrize("dtype, scales", [(np.float64, [1e-300, 1e-170, 1e200, 1e300]),
                                           (np.float32, [1e-40, 1e-30, 1e20, 1e35])])
def test_exact_kernels_are_scale_invariant_at_any_magnitude(dtype, scales):
    """k(cx, cy) = k(x, y): squares and sums that overflow or underflow must not show."""
    rng = np.random.default_rng(2)
    sets = (rng.uniform(size=(12, 30)) < 0.3).astype(np.float64)
    weights = rng.exponential(size=(12, 30)) * (rng.uniform(size=(12, 30)) < 0.5)
    for kernel, function, X in (("tanimoto", tanimoto_kernel, sets), ("tanimoto", tanimoto_kernel, weights),
                                ("min_max", min_max_kernel, weights)):
        for scale in scales:
            scaled = (X * scale).astype(dtype)  # in float32, rounded: the reference reads the same values
            expected = exact_resemblance(scaled, scaled, kernel)
            for A in (scaled, sp.csr_matrix(scaled)):
                np.testing.assert_allclose(function(A), expected, rtol=1e-13, atol=1e-15)
    for scale in scales:
        np.testing.assert_allclose(np.diag(tanimoto_kernel((sets * scale).astype(dtype))), 1.0, rtol=1e-15)


def test_exact_kernels_of_rows_of_very_different_magnitudes():
    rng = np.random.default_rng(3)
    X = rng.exponential(size=(10, 6)) * (rng.uniform(size=(10, 6)) < 0.7) * 10.0 ** rng.integers(-300, 300, (10, 1))
    Y = X[::-1] * 10.0 ** rng.integers(-5, 5, (10, 1))
    for kernel, function in (("tanimoto", tanimoto_kernel), ("min_max", min_max_kernel)):
        np.testing.assert_allclose(function(X, Y), exact_resemblance(X, Y, kernel), rtol=1e-13, atol=1e-300)


# ------------------------------------------------------------------ Theorem 1 constants
def test_theorem_1_against_random_permutations():
    """P_b = C1 + (1 - C2) R on a small universe where r = f/D is large (C far from 2^-b)."""
    rng = np.random.default_rng(0)
    universe, f1, f2, common, b, n = 200, 60, 40, 20, 3, 40000
    ranks = np.argsort(rng.random((n, universe)), axis=1)  # a random permutation per draw
    min1 = ranks[:, :f1].min(axis=1)
    min2 = ranks[:, f1 - common:f1 - common + f2].min(axis=1)
    observed = np.mean((min1 & 7) == (min2 & 7))
    C1, C2 = bbit_constants(b, f1, f2, universe=universe)
    R = common / (f1 + f2 - common)
    expected = C1 + (1 - C2) * R
    assert abs(C1 - 2.0 ** -b) > 0.05  # the regime where the exact constants matter
    assert abs(observed - expected) < 4 * np.sqrt(expected * (1 - expected) / n) + 2e-3


def test_constants_tend_to_two_to_the_minus_b():
    for b in (1, 2, 8, 16):
        C1, C2 = bbit_constants(b, 40, 70)
        np.testing.assert_allclose([C1, C2], 2.0 ** -b, rtol=1e-3)
        assert abs(low_bits_collision(b) - 2.0 ** -b) < 1e-8


# ------------------------------------------------------------------ statistics, binary
def _matches(est, X):
    cols = hash_columns(est.transform(X), est.n_hashes)
    return cols[0] == cols[1]


def mean_matches_pb(matches, Pb, n_sigma=4.0):
    return abs(matches.mean() - Pb) < n_sigma * np.sqrt(Pb * (1 - Pb) / len(matches))


def variance_matches_paper(matches, k, C1, C2, R):
    """Var(R_b) = P_b (1 - P_b) / (k (1 - C2)^2) (Li & König 2010), within 30 %, over groups of k hashes."""
    estimates = (matches.reshape(-1, k).mean(axis=1) - C1) / (1 - C2)
    Pb = C1 + (1 - C2) * R
    return abs(estimates.var(ddof=1) / (Pb * (1 - Pb) / (k * (1 - C2) ** 2)) - 1) < 0.3


@pytest.mark.parametrize("f1, f2, common", PAIRS)
@pytest.mark.parametrize("b", [1, 2, 8])
def test_raw_mean_is_pb_and_the_corrected_estimate_is_unbiased(f1, f2, common, b):
    X = pair_with(f1, f2, common)
    R = common / (f1 + f2 - common)
    k = 16000
    est = MinHash(n_hashes=k, n_bits=b, random_state=b).fit(X)
    C1, C2 = (C[0, 1] for C in est.collision_constants(X))
    Pb = C1 + (1 - C2) * R
    matches = _matches(est, X)
    assert mean_matches_pb(matches, Pb)
    if b < 8:
        assert not mean_matches_pb(matches, R), "the raw estimate should be biased towards C1"
    R_hat = est.estimate_kernel(X)[0, 1]
    assert abs(R_hat - R) < 4 * np.sqrt(Pb * (1 - Pb) / (k * (1 - C2) ** 2))
    assert variance_matches_paper(matches, 64, C1, C2, R)


def test_a_wrong_mask_or_a_shared_hash_fails_the_checks():
    X = pair_with(60, 40, 20)
    R, k = 0.25, 16000
    est = MinHash(n_hashes=k, n_bits=1, random_state=0).fit(X)
    C1, C2 = (C[0, 1] for C in est.collision_constants(X))
    values = est._hash_values(X)
    two_bits = (values[0] & np.uint64(3)) == (values[1] & np.uint64(3))  # a mask of b + 1 bits
    assert mean_matches_pb(_matches(est, X), C1 + (1 - C2) * R)
    assert not mean_matches_pb(two_bits, C1 + (1 - C2) * R)
    est.keys_[:] = est.keys_[0]  # every hash the same permutation
    assert not variance_matches_paper(_matches(est, X), 64, C1, C2, R)


def test_sets_of_consecutive_columns_are_not_biased():
    """Every dense row is such a set; the 2-universal (a i + c) mod p gave R = 0.28 here."""
    X = np.zeros((2, D))
    X[0, :40], X[1, 20:60] = 1, 1
    k = 16000
    est = MinHash(n_hashes=k, n_bits=8, random_state=0).fit(X)
    assert abs(est.estimate_kernel(X)[0, 1] - 1 / 3) < 4 * np.sqrt((1 / 3) * (2 / 3) / k) * 1.01


def test_estimate_kernel_on_fingerprints(fingerprints):
    est = MinHash(n_hashes=2048, n_bits=8, random_state=0).fit(fingerprints)
    K, E = est.kernel(fingerprints), est.estimate_kernel(fingerprints)
    assert (E[7] == 0).all() and (E[:, 7] == 0).all() and K[7, 7] == 0
    np.testing.assert_allclose(np.delete(np.diag(E), 7), 1.0)
    assert np.abs(E - K).mean() < 0.02
    assert np.linalg.norm(E - K) / np.linalg.norm(K) < 0.06


# ------------------------------------------------------------------ statistics, weighted
def weighted_pair(seed, ratios=(0.5, 1.0, 2.0)):
    """Two weight vectors sharing 60 % of their support, with the weights on it multiplied by one of
    ``ratios``, so that the min-max kernel is far from the resemblance of the supports."""
    rng = np.random.default_rng(seed)
    W = rng.gamma(0.5, 2.0, size=(2, D)) * (rng.uniform(size=(2, D)) < 0.04)
    shared = rng.uniform(size=D) < 0.6
    W[1] = np.where(shared, W[0] * rng.choice(ratios, size=D), W[1])
    return W


@pytest.mark.parametrize("seed", [0, 1])
def test_full_icws_samples_collide_with_the_min_max_kernel(seed):
    """Ioffe's theorem, on the reference draws the Numba kernel is held to: Pr[(i*, t*) equal] = K."""
    W = weighted_pair(seed)
    K, k = min_max_kernel(W)[0, 1], 8000
    keys = np.random.default_rng(seed).integers(0, 2 ** 63, size=k, dtype=np.uint64)
    (i0, t0), (i1, t1) = (reference_icws(keys, np.flatnonzero(w).astype(np.uint64), w[w > 0]) for w in W)
    full = np.mean((i0 == i1) & (t0 == t1))
    assert abs(full - K) < 4 * np.sqrt(K * (1 - K) / k)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_zero_bit_cws_estimates_the_min_max_kernel(seed):
    """The 0-bit collision probability Pr[i*_x = i*_y] exceeds K by Pr[i* equal, t* not], which is
    >= 0 and which Li (2015) finds negligible on real data; on these pairs (weights on the shared
    support 1/2, 1 or 2 times each other) it measured 0.001-0.011. Allowed: 4 standard errors of the
    mean over 30000 hashes below K, and 4 standard errors plus 0.015 above; the resemblance of the
    supports, which a sampler ignoring the weights would estimate, lies further away."""
    W = weighted_pair(seed)
    K = min_max_kernel(W)[0, 1]
    k = 30000
    est = MinHash(n_hashes=k, n_bits=16, random_state=seed).fit(W)
    assert est.mode_ == "weighted"
    E = est.estimate_kernel(W)[0, 1]
    se = np.sqrt(K * (1 - K) / k)
    assert -4 * se < E - K < 4 * se + 0.015
    assert abs(tanimoto_kernel(W > 0)[0, 1] - K) > 4 * se + 0.015 + 0.05


@pytest.mark.parametrize("b", [1, 8])
def test_weighted_raw_mean_has_the_low_bits_offset(b):
    W = weighted_pair(4)
    K, k = min_max_kernel(W)[0, 1], 30000
    est = MinHash(n_hashes=k, n_bits=b, random_state=0).fit(W)
    q = low_bits_collision(b)
    assert mean_matches_pb(_matches(est, W), q + (1 - q) * K, n_sigma=4.5)


def test_weighted_mode_on_sets_estimates_their_resemblance():
    X = pair_with(60, 40, 20)
    est = MinHash(n_hashes=20000, n_bits=8, mode="weighted", random_state=0).fit(X)
    assert abs(est.estimate_kernel(X)[0, 1] - 0.25) < 4 * np.sqrt(0.25 * 0.75 / 20000) + 0.005
