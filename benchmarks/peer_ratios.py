"""Every feature map against its scikit-learn peer, at every width of the quick profile.

``python -m benchmarks.peer_ratios [--maps rff,nystroem] [--dtypes float64,float32]
[--datasets banana,letter] [--repeats 7]`` times ``transform`` of each registered
map and of each peer it declares, built exactly as the asv suite builds them
(:func:`benchmarks.common.entries`, :func:`benchmarks.bench_feature_maps.speed_plan`):
on the quick profile's test rows of each bundled dataset at widths 256 and 1024,
and on the speed workload (5000 rows of 64 features, D = 4096, Nyström m = 1024,
CRAFTMaps E = 1024), in both dtypes. Each ratio is the peer's median time over
ours, the two sides interleaved in one process (above 1: kernelmaps is faster).
A ratio below 1 is flagged, with the reason the map declares in its registry
entry (``slower_because``) when it does more work by its method.

It prints the CPU and the Numba target first; run it again under
``NUMBA_CPU_NAME=haswell`` for the AVX2 code.
"""

import argparse
import time

import numpy as np

from benchmarks import common
from benchmarks.bench_feature_maps import _speed_data, speed_plan
from benchmarks.machine import describe


def _median_pair(ours, theirs, X, repeats):
    samples = {"ours": [], "theirs": []}
    for side in (ours, theirs):  # warm: compilation, first-touch pages, thread start
        side.transform(X)
    for _ in range(repeats):
        for label, side in (("ours", ours), ("theirs", theirs)):
            start = time.perf_counter()
            side.transform(X)
            samples[label].append(time.perf_counter() - start)
    return float(np.median(samples["ours"])), float(np.median(samples["theirs"]))


def workloads(maps, dtypes, datasets):
    """``(map, peer label, where, dtype, width, build_ours, build_peer, X)`` to time."""
    entries = common.entries()
    speed = speed_plan()
    for name in maps:
        owner, ours = entries[name]
        for peer in common.peers_of(name):
            for dtype in dtypes:
                for dataset in datasets:
                    data = common.prepared(dataset, common.positive_only(owner))
                    X_train, X_test = data["X_train"].astype(dtype), data["X_test"].astype(dtype)
                    for width in common.WIDTHS:
                        yield (name, peer, dataset, dtype, width,
                               lambda o=ours, w=width, g=data["gamma"], X=X_train: o(w, common.SEED, g).fit(X),
                               lambda p=entries[peer][1], w=width, g=data["gamma"], X=X_train:
                               p(w, common.SEED, g).fit(X), X_test)
                widths = [w for (label, w) in speed if label == name]
                for width in widths:
                    if (peer, width) not in speed:
                        continue
                    X = _speed_data(owner, dtype)
                    gamma = 1.0 / X.shape[1] if common.uses_data_gamma(owner, dict(owner.benchmark["params"])) else None
                    fit_rows = X[:max(2000, width)]
                    yield (name, peer, "speed", dtype, width,
                           lambda f=speed[name, width], g=gamma, X=fit_rows: f(g).fit(X),
                           lambda f=speed[peer, width], g=gamma, X=fit_rows: f(g).fit(X), X)


def main(argv=None):
    from kernelmaps import ALGORITHMS

    with_peers = sorted(n for n, cls in ALGORITHMS.items()
                        if cls.kind == "feature_map" and cls.benchmark and common.peers_of(n)
                        and "n_components" in cls().get_params())
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", default=",".join(with_peers))
    parser.add_argument("--dtypes", default="float64,float32")
    parser.add_argument("--datasets", default=",".join(common.DATASETS))
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    maps = args.maps.split(",")
    unknown = sorted(set(maps) - set(with_peers))
    if unknown:
        parser.error(f"no map with a scikit-learn peer named {', '.join(unknown)}; choose from {', '.join(with_peers)}")
    print(describe())
    print(f"profile {common.PROFILE}; ratio = peer time / ours (median of {args.repeats}, interleaved); "
          "'<1' marks kernelmaps slower\n")
    print(f"{'map':18s} {'peer':34s} {'data':10s} {'dtype':8s} {'D':>5s} {'ours ms':>9s} {'peer ms':>9s} {'ratio':>6s}")
    slower = []
    for name, peer, where, dtype, width, build_ours, build_peer, X in workloads(
            maps, args.dtypes.split(","), args.datasets.split(",")):
        ours, theirs = _median_pair(build_ours(), build_peer(), X, args.repeats)
        ratio = theirs / ours
        flag = " <1" if ratio < 1 else ""
        print(f"{name:18s} {peer:34s} {where:10s} {dtype:8s} {width:5d} {ours * 1e3:9.2f} {theirs * 1e3:9.2f} "
              f"{ratio:6.2f}{flag}", flush=True)
        if ratio < 1:
            slower.append((name, peer, where, dtype, width, ratio))
    print()
    if not slower:
        print("every map is at least as fast as its peer at every width")
    for name, peer, where, dtype, width, ratio in slower:
        reason = ALGORITHMS[name].benchmark.get("slower_because")
        print(f"slower: {name} vs {peer} on {where}, {dtype}, D={width}: {ratio:.2f}x"
              + (f" -- declared: {reason}" if reason else " -- no reason declared"))


if __name__ == "__main__":
    main()
