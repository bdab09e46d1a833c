"""Print the latest asv results of this machine as side-by-side tables.

Usage: ``python benchmarks/report.py [--results .asv/results]``

For every dataset and width: each algorithm's fit and transform time, its
kernel error and test error, and its transform-time ratio against the peers of
the same kernel (``peer time / our time``: above 1 means we are faster).
Then the speed workload (X ~ N(0, 1), D = 4096) with the same ratios.
"""

import argparse
import json
import math
import sys
from pathlib import Path


def _load_latest(results_dir):
    from asv.results import Results

    machines = [p for p in Path(results_dir).iterdir() if p.is_dir()] if Path(results_dir).exists() else []
    candidates = [f for m in machines for f in m.glob("*.json") if f.name != "machine.json"]
    if not candidates:
        sys.exit(f"no asv results under {results_dir}: run `asv run --python=same --quick` first")
    latest = max(candidates, key=lambda f: f.stat().st_mtime)
    return Results.load(str(latest)), latest


def _values(results, key):
    """{param tuple: value} of one benchmark, or {} if it did not run."""
    if key not in results.get_all_result_keys():
        return {}
    import itertools

    params = results.get_result_params(key)
    values = results.get_result_value(key, params)
    out = {}
    for combo, value in zip(itertools.product(*params), values):
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            out[tuple(json.loads(p) if p.startswith("'") is False and p[:1] not in "'\"" else p.strip("'\"")
                      for p in combo)] = value
    return out


def _fmt_time(seconds):
    return "-" if seconds is None else (f"{seconds * 1e3:8.1f} ms" if seconds < 10 else f"{seconds:8.2f} s ")


def _fmt(value, spec):
    return "-" if value is None else format(value, spec)


def _peers():
    """Our label -> the peer labels it declares (peers map to [])."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks import common

    labels = list(common.entries()) + list(common.derived_width_entries())
    return {label: common.peers_of(label) for label in labels}


def _ratio(times, label, key_rest, peers):
    """Best peer time / our time, formatted, or '' when there is nothing to compare."""
    mine = times.get((label,) + key_rest)
    theirs = [times.get((p,) + key_rest) for p in peers.get(label, [])]
    theirs = [t for t in theirs if t]
    return f"{min(theirs) / mine:8.2f}x" if mine and theirs else ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=".asv/results")
    args = parser.parse_args(argv)
    results, path = _load_latest(args.results)
    print(f"asv results: {path}\n")
    peers = _peers()
    prefix = "bench_feature_maps.FeatureMaps."
    fit = _values(results, prefix + "time_fit")
    transform = _values(results, prefix + "time_transform")
    kerr = _values(results, prefix + "track_kernel_error")
    terr = _values(results, prefix + "track_test_error")
    baselines = _values(results, "bench_feature_maps.ExactBaselines.track_test_error")
    baseline_fit = _values(results, "bench_feature_maps.ExactBaselines.time_fit")
    keys = sorted(set(transform) | set(kerr), key=lambda k: (k[1], int(k[2]), not peers.get(k[0]), k[0]))
    current = None
    for label, dataset, width in keys:
        if (dataset, width) != current:
            current = (dataset, width)
            print(f"\n== {dataset}, n_components = {width}")
            print(f"{'algorithm':28s} {'fit':>11s} {'transform':>11s} {'vs peer':>9s} {'kernel err':>11s} {'test err':>9s}")
        mine = transform.get((label, dataset, width))
        ratio = _ratio(transform, label, (dataset, width), peers)
        print(f"{label:28s} {_fmt_time(fit.get((label, dataset, width))):>11s} {_fmt_time(mine):>11s} {ratio:>9s} "
              f"{_fmt(kerr.get((label, dataset, width)), '11.4f'):>11s} {_fmt(terr.get((label, dataset, width)), '9.4f'):>9s}")
    if baselines:
        print("\n== exact kernel baselines (the papers' RBF row), same gamma")
        print(f"{'algorithm':28s} {'dataset':>10s} {'fit':>11s} {'test err':>9s}")
        for (label, dataset), err in sorted(baselines.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            print(f"{label:28s} {dataset:>10s} {_fmt_time(baseline_fit.get((label, dataset))):>11s} {err:9.4f}")
    derived = "bench_feature_maps.DerivedWidthMaps."
    derived_transform = _values(results, derived + "time_transform")
    if derived_transform:
        print("\n== maps whose width the data sets, at their benchmark parameters (non-negative data)")
        print(f"{'algorithm':28s} {'dataset':>10s} {'fit':>11s} {'transform':>11s} {'vs peer':>9s} "
              f"{'kernel err':>11s} {'test err':>9s}")
        derived_fit = _values(results, derived + "time_fit")
        derived_kerr = _values(results, derived + "track_kernel_error")
        derived_terr = _values(results, derived + "track_test_error")
        for (label, dataset), t in sorted(derived_transform.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            key = (label, dataset)
            print(f"{label:28s} {dataset:>10s} {_fmt_time(derived_fit.get(key)):>11s} {_fmt_time(t):>11s} "
                  f"{_ratio(derived_transform, label, (dataset,), peers):>9s} "
                  f"{_fmt(derived_kerr.get(key), '11.4f'):>11s} {_fmt(derived_terr.get(key), '9.4f'):>9s}")
    speed = _values(results, "bench_feature_maps.TransformSpeed.time_transform")
    mem = _values(results, "bench_feature_maps.TransformSpeed.peakmem_transform")
    if speed:
        print("\n== speed workload: X ~ N(0,1), D = 4096 (ratio = peer time / our time)")
        print(f"{'algorithm':28s} {'shape':>10s} {'dtype':>8s} {'transform':>11s} {'vs peer':>9s} {'peak mem':>10s}")
        for (label, shape, dtype), t in sorted(speed.items()):
            ratio = _ratio(speed, label, (shape, dtype), peers)
            m = mem.get((label, shape, dtype))
            print(f"{label:28s} {shape:>10s} {dtype:>8s} {_fmt_time(t):>11s} {ratio:>9s} "
                  f"{(f'{m / 2**20:7.0f} MiB') if m else '-':>10s}")

    fwht = _values(results, "bench_fwht.FWHT.time_fwht")
    if fwht:
        print("\n== FWHT, 2**20 elements, one thread (ratio = FFHT time / our time)")
        print(f"{'n':>8s} {'dtype':>8s} {'kernelmaps':>11s} {'FFHT':>11s} {'vs FFHT':>9s}")
        for (impl, log_n, dtype), t in sorted(fwht.items()):
            if impl != "kernelmaps":
                continue
            theirs = fwht.get(("ffht", log_n, dtype))
            ratio = f"{theirs / t:8.2f}x" if theirs else "(no FFHT)"
            print(f"{2**int(log_n):>8d} {dtype:>8s} {_fmt_time(t):>11s} {_fmt_time(theirs):>11s} {ratio:>9s}")


if __name__ == "__main__":
    main()
