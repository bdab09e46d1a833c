"""What every random-cosine map of the Gaussian kernel shares, generated from the
registry (the maps with an ``output`` parameter): its parameters are checked, and
float32 input gives the float64 features to float32 precision."""

import numpy as np
import pytest

from kernel_checks import assert_dense_form_matches
from registry import FEATURE_MAPS, REGISTRY

COSINE_MAPS = sorted(name for name in FEATURE_MAPS if "output" in REGISTRY[name]().get_params())


def test_the_cosine_maps_are_found():
    assert {"rff", "orf", "fastfood", "sorf", "circulant"} <= set(COSINE_MAPS)


@pytest.mark.parametrize("name", COSINE_MAPS)
def test_parameters_are_checked(name, cloud):
    cls = REGISTRY[name]
    with pytest.raises(ValueError, match="even n_components"):
        cls(7, output="cossin").fit(cloud)
    with pytest.raises(ValueError, match="output"):
        cls(8, output="sin").fit(cloud)
    for bad in (0, -1.0, "wide"):
        with pytest.raises(ValueError, match="gamma"):
            cls(8, gamma=bad).fit(cloud)
    for heuristic in ("median", "knn50"):
        assert cls(8, gamma=heuristic).fit(cloud).kernel_ == "gaussian"


@pytest.mark.parametrize("name", COSINE_MAPS)
def test_float32_close_to_float64(name, cloud):
    est = REGISTRY[name](256, gamma=0.15, random_state=0).fit(cloud)
    np.testing.assert_allclose(est.transform(cloud.astype(np.float32)), est.transform(cloud), atol=1e-5)


@pytest.mark.parametrize("name", ["fastfood", "sorf"])
@pytest.mark.parametrize("n_features", [3, 16, 40])
@pytest.mark.parametrize("output", ["cos", "cossin"])
def test_small_hadamard_blocks_multiplied_out_give_the_structured_features(name, n_features, output, monkeypatch):
    """Blocks of at most DENSE_MAX_BLOCK are applied as the dense matrix they
    equal; forcing the structured product must give the same features."""
    from kernelmaps._maps import hadamard as hadamard_map

    X = np.random.default_rng(1).standard_normal((300, n_features))
    est = REGISTRY[name](96, gamma=0.2, output=output, random_state=0).fit(X)
    assert_dense_form_matches(est, X, hadamard_map, "DENSE_MAX_BLOCK",
                              est.padded_features_ <= hadamard_map.DENSE_MAX_BLOCK, monkeypatch)
