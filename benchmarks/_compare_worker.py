"""One side of ``benchmarks.compare``: discover the asv benchmarks and run a selection, in a subprocess.

``python -m benchmarks._compare_worker SPEC OUT`` reads the JSON ``SPEC``
(``{"pattern": regex, "samples": k, "kinds": ["time", "track"]}``), runs every
matching benchmark of this ``benchmarks`` package against whichever
``kernelmaps`` the interpreter imports (``benchmarks.compare`` puts one
commit's package first on ``PYTHONPATH``) and writes ``OUT``:
``{key: {"samples": [seconds, ...]} | {"value": number} | {"error": text}}``.

A benchmark runs as asv runs it: a fresh instance per parameter set,
``setup_cache`` once per class and process (its value passed first to
``setup`` and the benchmark), ``setup``, then ``k`` samples of ``number``
calls each for a ``time_*`` method, one call for a ``track_*`` method.
"""

import importlib
import itertools
import json
import math
import pkgutil
import re
import sys
import time
import traceback

KINDS = {"time": "time_", "track": "track_"}


def parameter_sets(cls):
    """asv's parameter sets of a class: the product of ``params`` (a list of lists), the
    items of a flat ``params`` list, or one empty set."""
    params = getattr(cls, "params", None)
    if not params:
        return [()]
    if all(isinstance(values, (list, tuple)) for values in params):
        return list(itertools.product(*params))
    return [(value,) for value in params]


def key(name, params):
    """The compare key of a benchmark and parameter set, e.g. ``bench_x.C.time_y('rff', 1024)``."""
    return f"{name}({', '.join(repr(value) for value in params)})"


def discover(pattern, kinds=("time", "track")):
    """``[(key, cls, method name, params)]`` of the benchmarks whose key matches ``pattern``."""
    import benchmarks

    regex = re.compile(pattern or "")
    prefixes = tuple(KINDS[kind] for kind in kinds)
    found = []
    for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
        if not info.name.startswith("bench_"):
            continue
        module = importlib.import_module(f"benchmarks.{info.name}")
        for cls_name, cls in sorted(vars(module).items()):
            if not isinstance(cls, type) or cls.__module__ != module.__name__ or cls_name.startswith("_"):
                continue
            for method in sorted(attr for attr in dir(cls) if attr.startswith(prefixes)):
                for params in parameter_sets(cls):
                    name = key(f"{info.name}.{cls_name}.{method}", params)
                    if regex.search(name):
                        found.append((name, cls, method, params))
    return found


def run(selection, samples):
    """Run the discovered ``selection``; returns the ``OUT`` mapping."""
    caches, results = {}, {}
    for name, cls, method, params in selection:
        try:
            args = tuple(params)
            if hasattr(cls, "setup_cache"):
                if cls not in caches:
                    caches[cls] = cls().setup_cache()
                args = (caches[cls],) + args
            instance = cls()
            if hasattr(instance, "setup"):
                instance.setup(*args)
            call = getattr(instance, method)
            if method.startswith("track_"):
                value = call(*args)
                results[name] = {"value": float(value) if value is not None else math.nan}
            else:
                number = int(getattr(call, "number", getattr(cls, "number", 1)) or 1)
                times = []
                for _ in range(samples):
                    started = time.perf_counter()
                    for _ in range(number):
                        call(*args)
                    times.append((time.perf_counter() - started) / number)
                results[name] = {"samples": times}
            if hasattr(instance, "teardown"):
                instance.teardown(*args)
        except NotImplementedError:
            results[name] = {"error": "skipped (NotImplementedError)"}
        except Exception:  # noqa: BLE001  (a benchmark that fails on one side is reported, not fatal)
            results[name] = {"error": traceback.format_exc(limit=3).strip().splitlines()[-1]}
    return results


def main(argv=None):
    spec_path, out_path = (argv or sys.argv[1:])[:2]
    with open(spec_path) as f:
        spec = json.load(f)
    selection = discover(spec["pattern"], spec.get("kinds", ("time", "track")))
    if spec.get("list_only"):
        results = {name: {} for name, *_ in selection}
    else:
        results = run(selection, int(spec.get("samples", 5)))
    with open(out_path, "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
