"""The error-per-second experiment's judging rule and its check that a peer approximates our kernel."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.experiments._error_per_second import lead, overall_status, peer_kernel  # noqa: E402


def test_peer_error_is_interpolated_in_log_time():
    # the peer's error at t = 10 is the log-midpoint of 1 and 100: 0.3
    peer = ([100.0, 1.0], [0.2, 0.4])  # unsorted on purpose
    assert lead([10.0], [0.25], *peer)["outcome"] == "leads"
    assert lead([10.0], [0.35], *peer)["outcome"] == "trails"
    out = lead([10.0], [0.29], *peer)  # within 5% of 0.3
    assert out["outcome"] == "ties" and out["median_ratio"] == pytest.approx(0.29 / 0.3)
    # linear interpolation in time would give 0.3818 at t = 10: 0.35 would lead
    assert lead([10.0], [0.35], *peer, rel_tol=0.0)["outcome"] == "trails"


def test_only_points_inside_the_peers_time_range_count():
    peer = ([1.0, 2.0], [0.5, 0.4])
    out = lead([0.5, 1.5, 3.0], [0.01, 0.9, 0.01], *peer)
    assert (out["n_overlap"], out["n_above"], out["outcome"]) == (1, 1, "trails")
    out = lead([3.0, 4.0], [0.41, 0.41], *peer)  # slower, but within 5% of the peer's best
    assert (out["outcome"], out["basis"], out["n_overlap"]) == ("no overlap", "none", 0)
    assert np.isnan(out["median_ratio"])


def test_majority_rule_and_absolute_tolerance():
    peer = ([1.0, 8.0], [0.4, 0.1])
    times = [1.0, 2.0, 4.0, 8.0]
    # below at 2 of 4 points: not more than half, so a tie
    assert lead(times, [0.1, 0.1, 0.4, 0.1], *peer)["outcome"] == "ties"
    assert lead(times, [0.1, 0.1, 0.1, 0.4], *peer)["outcome"] == "leads"
    # an absolute band wider than the differences makes every point a tie
    assert lead(times, [0.39, 0.29, 0.19, 0.09], *peer, rel_tol=0.0, abs_tol=0.02)["outcome"] == "ties"
    assert lead(times, [0.39, 0.29, 0.19, 0.09], *peer, rel_tol=0.0, abs_tol=0.0)["outcome"] == "leads"


@pytest.mark.parametrize("args", [([1.0], [0.1, 0.2], [1.0], [0.1]), ([0.0], [0.1], [1.0], [0.1]),
                                  ([], [], [1.0], [0.1])])
def test_lead_rejects_malformed_curves(args):
    with pytest.raises(ValueError):
        lead(*args)


def test_overall_status():
    assert overall_status(["leads", "ties", "no overlap"]) == "holds"
    assert overall_status(["leads", "trails"]) == "partly holds"
    assert overall_status(["trails", "no overlap", "trails"]) == "does not hold"
    assert overall_status(["no overlap"]) == "partly holds"


def _rows(seed, n=60, d=4, positive=False):
    X = np.random.default_rng(seed).standard_normal((n, d))
    return np.abs(X) if positive else X


def _features_error(peer, X, K):
    Z = peer.fit(X).transform(X)
    return np.linalg.norm(Z @ Z.T - K) / np.linalg.norm(K)


def _peer(name, value):
    """A scikit-learn sampler with its kernel parameter at ``value``, wide enough to be accurate."""
    from sklearn import kernel_approximation as ka

    return {
        "RBFSampler": lambda: ka.RBFSampler(gamma=value, n_components=20000, random_state=0),
        "Nystroem": lambda: ka.Nystroem(kernel="rbf", gamma=value, n_components=60, random_state=0),
        "PolynomialCountSketch": lambda: ka.PolynomialCountSketch(degree=3, gamma=value, coef0=1.0,
                                                                  n_components=20000, random_state=0),
        "SkewedChi2Sampler": lambda: ka.SkewedChi2Sampler(skewedness=value, n_components=20000, random_state=0),
    }[name]()


@pytest.mark.parametrize("name", ["RBFSampler", "Nystroem", "PolynomialCountSketch", "SkewedChi2Sampler"])
def test_peer_kernel_is_what_the_peer_approximates(name):
    X = _rows(1, positive=name == "SkewedChi2Sampler")
    peer = _peer(name, 0.3)
    K = peer_kernel(peer, X)
    assert K.shape == (60, 60) and np.allclose(K, K.T)
    assert _features_error(peer, X, K) < 0.05
    # the kernel at twice the parameter is far from the peer's features: the check reads the parameter
    assert _features_error(peer, X, peer_kernel(_peer(name, 0.6), X)) > 0.1


def test_peer_kernel_of_the_additive_chi2_sampler():
    from sklearn.kernel_approximation import AdditiveChi2Sampler

    X = _rows(2, positive=True)
    X[0, 0] = 0.0  # a zero coordinate: its term is 0, not 0/0
    K = peer_kernel(AdditiveChi2Sampler(sample_steps=3), X)
    x, y = X[3], X[5]
    assert K[3, 5] == pytest.approx(np.sum(2 * x * y / (x + y)))
    assert np.isfinite(K).all()
    assert _features_error(AdditiveChi2Sampler(sample_steps=3), X, K) < 0.05


def test_peer_kernel_of_an_unknown_peer_is_none():
    from sklearn.preprocessing import StandardScaler

    assert peer_kernel(StandardScaler(), _rows(3)) is None


def test_dominance_decides_where_the_time_ranges_do_not_overlap():
    peer = ([10.0, 20.0], [0.5, 0.3])
    # faster at every width: leads if its best error is below the peer's at the peer's fastest point
    out = lead([1.0, 2.0], [0.6, 0.4], *peer)
    assert (out["outcome"], out["basis"], out["median_ratio"]) == ("leads", "dominance", pytest.approx(0.8))
    assert lead([1.0, 2.0], [0.6, 0.55], *peer)["outcome"] == "no overlap"
    # slower at every width: trails if its error at its fastest point is above the peer's best
    out = lead([30.0, 40.0], [0.4, 0.1], *peer)
    assert (out["outcome"], out["basis"]) == ("trails", "dominance")
    assert lead([30.0, 40.0], [0.3, 0.1], *peer)["outcome"] == "no overlap"


class _Counting:
    """A transformer that counts its calls and sleeps ``seconds`` in each."""

    def __init__(self, seconds):
        self.seconds, self.calls = seconds, 0

    def transform(self, X):
        import time

        self.calls += 1
        time.sleep(self.seconds)
        return X


def test_interleaved_times_repeats_until_enough_seconds_are_timed():
    from benchmarks.experiments._error_per_second import MAX_REPEATS, interleaved_times

    fast, slow = _Counting(0.0), _Counting(0.002)
    X = np.ones((2, 2))
    times, outputs = interleaved_times([fast, slow], X, repeats=3)
    assert (fast.calls, slow.calls) == (4, 4)  # one untimed call each, then 3 rounds
    assert outputs[0] is X and times[1] >= 0.002 > times[0]
    fast, slow = _Counting(0.0), _Counting(0.002)
    interleaved_times([fast, slow], X, repeats=3, min_seconds=0.02)
    # the fast map never reaches 0.02 s: the rounds stop at the cap
    assert fast.calls == slow.calls == MAX_REPEATS + 1
