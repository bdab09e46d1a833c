"""The asv suite's own contracts: warm set-ups, the ground-truth cache, one grid of widths."""

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _compiled_overloads():
    """Number of compiled signatures over every Numba dispatcher of kernelmaps."""
    from numba.core.registry import CPUDispatcher

    total = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("kernelmaps") or module is None:
            continue
        for value in vars(module).values():
            if isinstance(value, CPUDispatcher):
                total += len(value.overloads)
    return total


@pytest.fixture
def suite(monkeypatch, tmp_path):
    monkeypatch.setenv("KERNELMAPS_BENCH_CACHE", str(tmp_path))
    from benchmarks import bench_feature_maps, common

    common._WARM.clear()
    return bench_feature_maps, common


@pytest.mark.parametrize("label", ["rff", "fastfood", "tensor_sketch", "nystroem", "quantile_fourier"])
@pytest.mark.parametrize("method", ["time_fit", "time_transform"])
def test_setup_warms_exactly_what_is_timed(suite, label, method):
    bench_feature_maps, common = suite
    bench = bench_feature_maps.FeatureMaps()
    params = (label, "banana", common.WIDTHS[0])
    bench.setup(*params)
    before = _compiled_overloads()
    getattr(bench, method)(*params)
    assert _compiled_overloads() == before, f"{method} of {label} compiled Numba code inside the timed call"


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_speed_workload_setup_warms_the_transform(suite, dtype):
    bench_feature_maps, common = suite
    bench = bench_feature_maps.TransformSpeed()
    bench.setup("rff", dtype, 4096)
    before = _compiled_overloads()
    bench.time_transform("rff", dtype, 4096)
    assert _compiled_overloads() == before


def test_ground_truth_cache_is_keyed_by_the_evaluation_rows(suite, monkeypatch):
    """A cached Gram matrix is never returned for other evaluation rows (a profile or
    subsample change once served a stale matrix: kernel errors above 1)."""
    _, common = suite
    from kernelmaps import RandomFourierFeatures

    rng = np.random.default_rng(0)
    reference = RandomFourierFeatures(8, gamma=0.5, random_state=0).fit(rng.standard_normal((20, 3)))
    for seed in (1, 2):
        X_eval = np.random.default_rng(seed).standard_normal((30, 3))
        monkeypatch.setattr(common, "prepared", lambda dataset, non_negative=False, X=X_eval: {"X_eval": X})
        np.testing.assert_allclose(common.ground_truth("any", reference), reference.kernel(X_eval))


def test_every_map_and_peer_runs_at_every_width(suite):
    bench_feature_maps, common = suite
    labels, datasets, widths = bench_feature_maps.FeatureMaps.params
    assert widths == common.WIDTHS
    assert {"rff", "sklearn.RBFSampler", "nystroem", "sklearn.Nystroem", "craftmaps"} <= set(labels)


def test_transform_memory_counts_the_output_not_the_interpreter(suite):
    _, common = suite
    X = np.ones((1000, 10))
    beyond, output = common.transform_memory(lambda A: np.repeat(A, 400, axis=1) * 2.0, X)
    assert output == pytest.approx(1000 * 4000 * 8 / 2**20)
    # the output and the one temporary of `repeat(...) * 2`, not the ~100+ MiB process
    assert 0.9 * output <= beyond <= 2.5 * output


def test_a_named_avx2_target_drops_the_hosts_avx512_features():
    """Numba passes the host's features whatever NUMBA_CPU_NAME says; on an
    AVX-512 host the benchmarks pin AVX2-only features for NUMBA_CPU_NAME=haswell."""
    from benchmarks.machine import pin_named_target_features

    host = {"avx2": True, "fma": True, "avx512f": True, "avx512vl": True, "evex512": True, "sse4a": False}
    env = {"NUMBA_CPU_NAME": "haswell"}
    features = pin_named_target_features(env, host)
    assert env["NUMBA_CPU_FEATURES"] == features
    assert set(features.split(",")) == {"+avx2", "+fma", "-avx512f", "-avx512vl", "-evex512", "-sse4a"}
    # nothing to do: features given, a host without AVX-512, no or an AVX-512 name
    for env in ({"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "+avx2"}, {}, {"NUMBA_CPU_NAME": "znver4"}):
        before = dict(env)
        assert pin_named_target_features(env, host) is None and env == before
    assert pin_named_target_features({"NUMBA_CPU_NAME": "haswell"}, {"avx2": True, "fma": True}) is None


def test_the_target_names_intel_avx512_loops_at_256_bits(monkeypatch):
    """LLVM tunes Intel's AVX-512 CPUs to prefer 256-bit vectors: the recorded
    target says so, and says AVX-512 once the preference is lifted."""
    from benchmarks.machine import NO_PREFER_256, full_width_features, numba_target

    monkeypatch.delenv("NUMBA_CPU_FEATURES", raising=False)
    monkeypatch.setenv("NUMBA_CPU_NAME", "sapphirerapids")
    assert numba_target() == ("sapphirerapids", "AVX-512, 256-bit loops")
    monkeypatch.setenv("NUMBA_CPU_NAME", "znver4")
    assert numba_target() == ("znver4", "AVX-512")
    monkeypatch.setenv("NUMBA_CPU_NAME", "haswell")
    assert numba_target() == ("haswell", "AVX2")
    features = full_width_features({"avx2": True, "avx512f": True, "sse4a": False})
    assert features == "+avx2,+avx512f,-sse4a," + NO_PREFER_256
    monkeypatch.setenv("NUMBA_CPU_NAME", "sapphirerapids")
    monkeypatch.setenv("NUMBA_CPU_FEATURES", features)
    assert numba_target() == ("sapphirerapids", "AVX-512")


def test_kernel_machine_setups_warm_exactly_what_is_timed(monkeypatch, tmp_path):
    """The Nyström kernel machines' fits, ours and scikit-learn's pipelines, compile nothing when timed."""
    monkeypatch.setenv("KERNELMAPS_BENCH_CACHE", str(tmp_path))
    from benchmarks import bench_kernel_machines, common

    common._WARM.clear()
    for cls in (bench_kernel_machines.KernelMachineClassifiers, bench_kernel_machines.KernelMachineRegressors):
        labels, widths = cls.params
        assert any(label.startswith("sklearn.") for label in labels), f"{cls.__name__} runs no peer"
        for label in labels:
            bench = cls()
            bench.setup(label, widths[0])
            before = _compiled_overloads()
            bench.time_fit(label, widths[0])
            assert _compiled_overloads() == before, f"time_fit of {label} compiled Numba code inside the timed call"


def test_kernel_pass_setups_warm_exactly_what_is_timed(monkeypatch, tmp_path):
    """The kernel pass, kept, fused and NumPy's, compiles nothing when timed, and the three paths agree."""
    monkeypatch.setenv("KERNELMAPS_BENCH_CACHE", str(tmp_path))
    from benchmarks import bench_kernel_pass, common

    common._WARM.clear()
    monkeypatch.setattr(bench_kernel_pass, "ROWS", 600)
    monkeypatch.setattr(bench_kernel_pass, "CENTRES", 64)
    paths, columns = bench_kernel_pass.KernelPass.params
    assert "numpy" in paths, "the kernel pass benchmark runs no peer"
    for path in paths:
        for k in columns:
            bench = bench_kernel_pass.KernelPass()
            bench.setup(path, k)
            before = _compiled_overloads()
            bench.time_pass(path, k)
            assert _compiled_overloads() == before, f"time_pass of {path}, k = {k} compiled Numba code when timed"
    kept, fused, V = bench_kernel_pass.problem()
    expected = kept.kept.T @ (kept.kept @ V[26])
    for operator in (kept, fused):
        np.testing.assert_allclose(operator.normal_matvec(V[26]), expected, rtol=1e-10, atol=1e-10)
    common._WARM.clear()


def test_random_binning_setups_warm_exactly_what_is_timed(monkeypatch, tmp_path):
    """Binning and its RFF comparison, transform and Binning + LS fit, compile nothing when timed."""
    monkeypatch.setenv("KERNELMAPS_BENCH_CACHE", str(tmp_path))
    from benchmarks import bench_random_binning, common

    common._WARM.clear()
    for cls, method in ((bench_random_binning.BinningTransform, "time_transform"),
                        (bench_random_binning.BinningLeastSquares, "time_fit")):
        labels, grids = cls.params
        for label in labels:
            bench = cls()
            bench.setup(label, grids[0])
            before = _compiled_overloads()
            getattr(bench, method)(label, grids[0])
            assert _compiled_overloads() == before, f"{method} of {label} compiled Numba code inside the timed call"
    errors = {label: bench_random_binning.BinningTransform() for label in bench_random_binning.MAPS}
    for label, bench in errors.items():
        bench.setup(label, 32)
        assert 0 < bench.track_kernel_error(label, 32) < 2


def test_tuning_setups_warm_exactly_what_is_timed(monkeypatch, tmp_path):
    """The cross-validated least-squares fits, ours and scikit-learn's, compile nothing when timed,
    and ours choose the alpha scikit-learn chooses; nor does the cross-validated Nyström fit."""
    monkeypatch.setenv("KERNELMAPS_BENCH_CACHE", str(tmp_path))
    from benchmarks import bench_tuning, common

    common._WARM.clear()
    (labels,) = bench_tuning.AlphaByLeaveOneOut.params
    assert any(label.startswith("sklearn.") for label in labels), "the tuning benchmark runs no peer"
    chosen = {}
    for label in labels:
        bench = bench_tuning.AlphaByLeaveOneOut()
        bench.setup(label)
        before = _compiled_overloads()
        bench.time_fit(label)
        assert _compiled_overloads() == before, f"time_fit of {label} compiled Numba code inside the timed call"
        chosen[label] = bench.model.alpha_
    assert chosen["least_squares_cv"] == chosen["sklearn.RidgeClassifierCV"]
    assert chosen["least_squares_regressor_cv"] == chosen["sklearn.RidgeCV"]
    (labels,) = bench_tuning.GammaAndAlphaByGridSearch.params
    assert any("sklearn." in label for label in labels), "the grid-search benchmark runs no peer"
    bench = bench_tuning.GammaAndAlphaByGridSearch()
    bench.setup("nystroem_ridge_classifier_cv")
    before = _compiled_overloads()
    bench.time_fit("nystroem_ridge_classifier_cv")
    assert _compiled_overloads() == before, "the cross-validated Nyström fit compiled Numba code when timed"
    assert bench.model.gamma_ in [bench.gamma * f for f in bench_tuning.GAMMA_FACTORS]
    # the logistic search chooses the plain machine's grid search's point (same centres, folds, log-loss)
    ours, theirs = bench_tuning.GammaAndAlphaByGridSearch(), bench_tuning.GammaAndAlphaByGridSearch()
    ours.setup("nystroem_logistic_cv")
    theirs.setup("grid_search.nystroem_logistic")
    assert (ours.model.gamma_, ours.model.alpha_) == (theirs.model.best_params_["gamma"],
                                                      theirs.model.best_params_["alpha"])
