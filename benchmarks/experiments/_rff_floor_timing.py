"""The timing process of the ``rff-floor`` experiment.

``python -m benchmarks.experiments._rff_floor_timing SETTINGS_JSON`` times the
RFF transform, a bare GEMM, a GEMM into a reused array and ``RBFSampler`` alone
and right after a multi-threaded numpy GEMM, and prints one JSON line. It runs in
its own process so that OpenBLAS's idle-thread timeout is the one the parent
chose (see :func:`benchmarks.experiments.rff_floor._measure_in_child`).
"""

import json
import sys
import time

SIDES = ("kernelmaps RFF", "bare GEMM X @ W", "GEMM into a reused array", "sklearn RBFSampler")
MODES = ("alone", "interleaved")


def blas_spin_seconds(other, step=0.005, limit=1.0):
    """How long after ``other()`` the process keeps using CPU while this thread sleeps.

    Returns the time from the end of the call to the first ``step``-long sleep
    during which the process used less than a fifth of a core: how long
    OpenBLAS's idle workers keep polling.
    """
    other()
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        cpu = time.process_time()
        time.sleep(step)
        if time.process_time() - cpu < 0.2 * step:
            return time.perf_counter() - start - step
    return limit


def time_sides(sides, mode, other, pause, repeats):
    """Seconds per call of each side, the sides interleaved ``repeats`` times.

    ``alone``: after a pause longer than OpenBLAS's idle polling; ``interleaved``:
    right after ``other()``.
    """
    samples = {label: [] for label in sides}
    for _ in range(repeats):  # interleaved: a load on the machine hits every side alike
        for label, side in sides.items():
            if mode == "interleaved":
                other()
            else:
                time.sleep(pause)
            start = time.perf_counter()
            result = side()
            samples[label].append(time.perf_counter() - start)
            del result
    return samples


def measure(s):
    """Medians per ``"dtype mode"`` and side, the raw rows, the idle polling time and the target."""
    import numpy as np
    from sklearn.kernel_approximation import RBFSampler

    from benchmarks.machine import machine_info
    from kernelmaps import RandomFourierFeatures

    N, d, D = s["N"], s["d"], s["D"]
    target = machine_info()["numba_target"]
    A, B = np.random.default_rng(1).standard_normal((2, s["other_n"], s["other_n"]))

    def other():
        return A @ B

    spin = float(np.median([blas_spin_seconds(other) for _ in range(5)]))
    rows, summary = [], {}
    for dtype in s["dtypes"]:
        X = np.random.default_rng(0).standard_normal((N, d)).astype(dtype)
        ours = RandomFourierFeatures(D, gamma=1.0 / d, random_state=0).fit(X)
        peer = RBFSampler(gamma=1.0 / d, n_components=D, random_state=0).fit(X)
        W = ours.random_weights_.astype(dtype)
        preallocated = np.empty((N, D), dtype)
        sides = dict(zip(SIDES, (lambda: ours.transform(X), lambda: X @ W,
                                 lambda: np.matmul(X, W, out=preallocated), lambda: peer.transform(X))))
        for side in sides.values():  # compilation, thread start and page faults stay out of the clock
            side()
        for mode in MODES:
            samples = time_sides(sides, mode, other, s["pause"], s["repeats"])
            for label, values in samples.items():
                rows += [{"N": N, "d": d, "D": D, "dtype": dtype, "mode": mode, "implementation": label,
                          "repeat": r, "seconds": v, "numba_target": target} for r, v in enumerate(values)]
            summary[f"{dtype} {mode}"] = {label: float(np.median(v)) for label, v in samples.items()}
    return {"summary": summary, "rows": rows, "spin_seconds": spin, "numba_target": target}


if __name__ == "__main__":
    print(json.dumps(measure(json.loads(sys.argv[1]))))
