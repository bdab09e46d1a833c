"""CRAFTMaps: the composition against its two steps, the map against its kernel."""

import numpy as np
import pytest

import kernelmaps._core.base as base
from kernelmaps import CRAFTMaps, RandomMaclaurin, TensorSketch, nrmse

from kernel_checks import assert_within_bound_and_a_wrong_bandwidth_fails
from naive import srht


@pytest.mark.parametrize("up", ["random_maclaurin", "tensor_sketch"])
@pytest.mark.parametrize("down", ["gaussian", "srht"])
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-10), (np.float32, 2e-4)])
def test_map_is_the_up_projection_then_the_down_projection(up, down, dtype, rtol, sphere, monkeypatch):
    cm = CRAFTMaps(24, up=up, down=down, n_components_up=200, degree=3, random_state=0).fit(sphere)
    Z_up = cm.up_.transform(sphere)
    ref = Z_up @ cm.projection_ if down == "gaussian" else srht(Z_up, cm.signs_, cm.index_)
    monkeypatch.setattr(base, "block_rows", lambda *_: 7)  # many blocks
    got = cm.transform(sphere.astype(dtype))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol * 10)
    if down == "srht":
        assert cm.signs_.shape[1] == 256  # D = 200 padded to a power of two


def test_defaults_and_scratch(sphere):
    cm = CRAFTMaps(16, random_state=0).fit(sphere)
    assert cm.n_components_up_ == 128 and isinstance(cm.up_, RandomMaclaurin) and cm.up_.h01_
    # the D-wide intermediate is declared as per-row scratch, so blocks are sized for it
    assert cm._block_elements_per_row() >= 128 + cm.up_.n_projections_
    assert isinstance(CRAFTMaps(16, up="tensor_sketch", random_state=0).fit(sphere).up_, TensorSketch)


# The default (Random Maclaurin up, Gaussian down) is checked with the other maps in
# test_kernel_approximation. Typical error at E = 1024, D = 4096 on the unit
# sphere, degree 3: 0.12-0.14; a gamma off by 2 gives > 0.4.
def test_tensor_sketch_up_and_srht_down_within_the_bound_and_a_wrong_gamma_fails(sphere):
    assert_within_bound_and_a_wrong_bandwidth_fails(
        lambda gamma: CRAFTMaps(1024, up="tensor_sketch", down="srht", n_components_up=4096, degree=3, gamma=gamma,
                                coef0=1.0, random_state=0), sphere, 1.0, 0.2)


def test_beats_the_direct_maps_at_the_same_width_on_pendigits():
    """The paper's Figure 5-6 claim at small scale: r = 7, q = 1, unit-normalized rows."""
    import kernelmaps.datasets as kd

    X = kd.load("pendigits").X_train[:300].astype(np.float64)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    kw = dict(degree=7, gamma=1.0, coef0=1.0)
    K = CRAFTMaps(8, **kw).fit(X).kernel(X)
    E = 128

    def err(make):
        return np.mean([nrmse(K, Z=make(s).fit(X).transform(X)) for s in range(3)])

    cm_rfm = err(lambda s: CRAFTMaps(E, random_state=s, **kw))
    cm_ts = err(lambda s: CRAFTMaps(E, up="tensor_sketch", random_state=s, **kw))
    rfm = err(lambda s: RandomMaclaurin(E, random_state=s, **kw))
    ts = err(lambda s: TensorSketch(E, random_state=s, **kw))
    assert cm_rfm < rfm and cm_rfm < ts, (cm_rfm, rfm, ts)
    assert cm_ts < ts, (cm_ts, ts)


@pytest.mark.parametrize("bad, name", [(dict(up="nystroem"), "up"), (dict(down="fourier"), "down"),
                                       (dict(n_components_up=8), "n_components_up"),
                                       (dict(n_components_up=2.5), "n_components_up")])
def test_bad_parameters_are_named(bad, name, sphere):
    with pytest.raises(ValueError, match=name):
        CRAFTMaps(16, **bad).fit(sphere)
