"""What several experiments share in how they measure and how they judge.

* :func:`one_blas_thread`: BLAS limited to one thread while an experiment runs.
* :func:`loglog_slope` and :func:`scaling_verdict`: how fit time grows with the
  number of rows, and the verdict on a claim that ours grows linearly where a
  peer's grows faster.
"""


def one_blas_thread():
    """BLAS on one thread, for experiments that measure an algorithm rather than a thread pool.

    Their products and factorizations are small or mid-sized, and on a shared
    2-core machine OpenBLAS's spinning threads made them 10-60x slower than one
    thread does (CRAFTMaps' Table 1-e took 3x the CPU time); limiting every
    method alike also lets them share the machine alike.

    Returns
    -------
    threadpoolctl.threadpool_limits
        The limit, in force until ``restore_original_limits()`` or the end of a
        ``with`` block.
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


def loglog_slope(sizes, seconds):
    """The least-squares slope of log time against log size: 1 for linear growth, 2 for quadratic.

    Parameters
    ----------
    sizes, seconds : sequence of float
        The sizes and the times measured at them.

    Returns
    -------
    float
    """
    import numpy as np

    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


#: the largest log-log slope that still counts as linear growth
LINEAR = 1.2


def scaling_verdict(run, what, ours, peer, peer_floor, peer_why=""):
    """Give the verdict on "our time grows linearly in N, the peer's faster".

    The claim holds where our slope is at most :data:`LINEAR` and the peer's at
    least ``peer_floor``, partly where one of the two is so.

    Parameters
    ----------
    run : benchmarks.experiments._framework.Run
        The run to give the verdict of.
    what : str
        What was measured, for the README's table.
    ours, peer : tuple
        ``(name, sizes, seconds, slope)``: the method's short name, the sizes
        and median times it was measured at, and its :func:`loglog_slope`.
    peer_floor : float
        The smallest slope of the peer the claim accepts.
    peer_why : str, optional
        Why the peer's slope may be below ``peer_floor`` at the sizes measured,
        added to the note when it is.
    """
    name, sizes, seconds, slope = ours
    peer_name, peer_sizes, peer_seconds, peer_slope = peer
    linear, steeper = slope <= LINEAR, peer_slope >= peer_floor
    shortfalls = [text for text, good in ((f"{name}'s slope exceeds {LINEAR}", linear),
                                          (f"{peer_name}'s slope is below {peer_floor} at these sizes"
                                           + (f" ({peer_why})" if peer_why else ""), steeper)) if not good]
    run.verdict(
        "holds" if linear and steeper else ("partly holds" if linear or steeper else "does not hold"),
        ours=f"log-log slope {name} {slope:.2f} (N = {sizes[0]}…{sizes[-1]}: {seconds[0]:.2f} s → "
             f"{seconds[-1]:.2f} s), {peer_name} {peer_slope:.2f} (N = {peer_sizes[0]}…{peer_sizes[-1]}: "
             f"{peer_seconds[0]:.2f} s → {peer_seconds[-1]:.2f} s)",
        measured=[(what, f"{slope:.2f} ({seconds[0]:.2f} s → {seconds[-1]:.2f} s); {peer_slope:.2f} "
                         f"({peer_seconds[0]:.2f} s → {peer_seconds[-1]:.2f} s)")],
        note="; ".join(shortfalls),
    )


def timed(work):
    """``(work(), seconds)``: one call and its wall time."""
    import time

    start = time.perf_counter()
    result = work()
    return result, time.perf_counter() - start


#: Fraction of the available memory :func:`touch_memory` touches at most.
TOUCH_FRACTION = 0.5


def touch_memory(n_bytes):
    """Write one value per page of ``n_bytes`` (at most :data:`TOUCH_FRACTION` of the available memory)
    and free them: the untimed first use of memory the timed fits will allocate.

    On the virtual machines these figures come from, memory a process touches for the first time
    costs the host's page faults, 1.5 s per GB (6.5 GB: 10.0 s in a fresh process, then 0.56 s
    again after it was freed); a fit that allocates its kept kernel blocks first would pay that
    and the peer run after it would not. An ordinary host only zeroes the pages, the 0.56 s.
    """
    import numpy as np

    from kernelmaps._core.validation import available_memory_bytes

    size = int(min(n_bytes, TOUCH_FRACTION * available_memory_bytes())) // 8
    if size > 0:
        pages = np.empty(size)
        pages[::512] = 0.0
        del pages
