"""One side of ``benchmarks.compare``: discover the asv benchmarks and run a selection, in a subprocess.

``python -m benchmarks._compare_worker SPEC OUT`` reads the JSON ``SPEC``
(``{"pattern": regex, "samples": k, "kinds": ["time", "track"], "keys": [key, ...] or null}``),
runs every matching benchmark of this ``benchmarks`` package (only those in
``keys`` when it is given) against whichever ``kernelmaps`` the interpreter
imports (``benchmarks.compare`` puts one commit's package first on
``PYTHONPATH``) and writes ``OUT``: ``{"results": {key: outcome}, "unlisted":
{module or module.Class: reason}}``, the outcomes of :func:`run` and the units
whose keys could not be listed at this commit.

Only the modules the pattern can select are imported
(:mod:`benchmarks._compare_selection`). Whatever cannot be set up at this
commit, a module that does not import, a class whose parameters fail, a
``setup_cache``, construction or ``setup`` that raises, is recorded as absent,
never fatal: the benchmark definitions are one tree's, run against older and
newer packages.

A benchmark runs as asv runs it: a fresh instance per parameter set,
``setup_cache`` once per class and process (its value passed first to
``setup`` and the benchmark), ``setup``, then ``k`` samples of ``number``
calls each for a ``time_*`` method, one call for a ``track_*`` method.
"""

import importlib
import itertools
import json
import math
import re
import sys
import time

from benchmarks import _compare_selection as selection

KINDS = selection.PREFIXES


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


def _reason(stage, error):
    """One line: the stage that failed and the exception, e.g. ``setup: ImportError: cannot import name 'X'``."""
    message = str(error).strip()
    if isinstance(error, ImportError) and error.path:  # the temporary worktree's path says nothing
        message = message.replace(f" ({error.path})", "")
    first = message.splitlines()[0] if message else ""
    return f"{stage}: {type(error).__name__}" + (f": {first}" if first else "")


def discover(pattern, kinds=("time", "track"), keys=None):
    """``(found, unlisted)``: ``found`` is ``[(key, cls, method name, params)]`` of the benchmarks
    whose key matches ``pattern`` (and is in ``keys``, when given); ``unlisted`` maps a module
    or class whose keys could not be listed (its import or its parameters failed) to the reason.

    Only the modules :func:`benchmarks._compare_selection.selected_modules` names are imported.
    """
    regex = re.compile(pattern or "")
    prefixes = tuple(KINDS[kind] for kind in kinds)
    found, unlisted = [], {}
    for module_name in selection.selected_modules(pattern or "", kinds):
        try:
            module = importlib.import_module(f"benchmarks.{module_name}")
        except Exception as error:  # noqa: BLE001  (a module this commit cannot import is absent here)
            unlisted[module_name] = _reason(f"import of {module_name}", error)
            continue
        for cls_name, cls in sorted(vars(module).items()):
            if not isinstance(cls, type) or cls.__module__ != module.__name__ or cls_name.startswith("_"):
                continue
            try:
                sets = parameter_sets(cls)
            except Exception as error:  # noqa: BLE001
                unlisted[f"{module_name}.{cls_name}"] = _reason("parameters", error)
                continue
            for method in sorted(attr for attr in dir(cls) if attr.startswith(prefixes)):
                for params in sets:
                    name = key(f"{module_name}.{cls_name}.{method}", params)
                    if regex.search(name) and (keys is None or name in keys):
                        found.append((name, cls, method, params))
    return found, unlisted


def _prepare(cls, params, caches):
    """The arguments and a set-up instance of one benchmark, as asv makes them."""
    args = tuple(params)
    if hasattr(cls, "setup_cache"):
        if cls not in caches:
            try:
                caches[cls] = (cls().setup_cache(), None)
            except Exception as error:  # noqa: BLE001
                caches[cls] = (None, _reason("setup_cache", error))
        cache, failure = caches[cls]
        if failure:
            raise _SetUpFailed(failure)
        args = (cache,) + args
    try:
        instance = cls()
    except Exception as error:  # noqa: BLE001
        raise _SetUpFailed(_reason("construction", error)) from None
    if hasattr(instance, "setup"):
        try:
            instance.setup(*args)
        except NotImplementedError:
            raise
        except Exception as error:  # noqa: BLE001
            raise _SetUpFailed(_reason("setup", error)) from None
    return instance, args


class _SetUpFailed(Exception):
    """A benchmark that could not be set up: it is absent from this commit."""


def _measure(instance, method, args, samples):
    call = getattr(instance, method)
    if method.startswith("track_"):
        value = call(*args)
        return {"value": float(value) if value is not None else math.nan}
    number = int(getattr(call, "number", getattr(type(instance), "number", 1)) or 1)
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        for _ in range(number):
            call(*args)
        times.append((time.perf_counter() - started) / number)
    return {"samples": times}


def run(selection, samples):
    """Run the discovered ``selection``; returns ``{key: outcome}``.

    An outcome is ``{"samples": [seconds, ...]}`` (``time_*``), ``{"value": number}``
    (``track_*``), ``{"absent": reason}`` when the benchmark could not be set up
    (``setup_cache``, construction or ``setup`` raised), ``{"skipped": reason}`` for
    asv's skip (``NotImplementedError``), or ``{"error": reason}`` when the benchmark or
    its ``teardown`` raised after it was set up.
    """
    caches, results = {}, {}
    for name, cls, method, params in selection:
        stage = method
        try:
            instance, args = _prepare(cls, params, caches)
            outcome = _measure(instance, method, args, samples)
            stage = "teardown"
            if hasattr(instance, "teardown"):
                instance.teardown(*args)
            results[name] = outcome
        except NotImplementedError as error:
            results[name] = {"skipped": _reason("skipped", error)}
        except _SetUpFailed as error:
            results[name] = {"absent": str(error)}
        except Exception as error:  # noqa: BLE001  (a benchmark that fails on one side is reported, not fatal)
            results[name] = {"error": _reason(stage, error)}
    return results


def main(argv=None):
    spec_path, out_path = (argv or sys.argv[1:])[:2]
    with open(spec_path) as f:
        spec = json.load(f)
    keys = set(spec["keys"]) if spec.get("keys") is not None else None
    selection, unlisted = discover(spec["pattern"], spec.get("kinds", ("time", "track")), keys)
    results = run(selection, int(spec.get("samples", 5)))
    with open(out_path, "w") as f:
        json.dump({"results": results, "unlisted": unlisted}, f)


if __name__ == "__main__":
    main()
