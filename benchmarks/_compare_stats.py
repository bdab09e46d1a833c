"""The statistics of ``benchmarks.compare``: paired rounds, confidence intervals, false-discovery control.

A compare runs R rounds; in each, one worker process per commit runs every
selected benchmark, the two in alternating order. The unit of evidence is the
round, not the sample: samples within one process share its caches, memory
layout and neighbours, so they understate the spread between processes, and a
test on them flags differences between two processes of the same code. For
benchmark ``j`` and round ``r``::

    d_jr = log(median of HEAD's samples) - log(median of BASE's samples)

The two workers of a round ran back to back, so slow drift in the machine's
load falls on both and cancels in ``d_jr``. The ratio HEAD/BASE is
``exp(mean_r d_jr)`` with a Student-t confidence interval on the R paired
differences. The two-sided p-values of all the compared benchmarks go through
the Benjamini-Hochberg procedure at ``FDR``: when nothing changed (an A/A
compare) every null hypothesis is true, and the procedure then bounds the
probability of flagging anything at all by ``FDR``, however many benchmarks
run. A benchmark is slower (faster) when it is a discovery and its ratio is
beyond ``1 + MIN_EFFECT`` (``1 / (1 + MIN_EFFECT)``): a difference smaller than
that is below what two processes of the same code on a shared 2-core machine
reproduce, and is reported as no change.

``track_*`` results are seeded and deterministic: the accuracy tracks (errors,
RMSE, iteration counts) are compared for equality up to round-off
(``ACCURACY_RTOL``); other tracks (memory) are shown but get no verdict.
"""

import math
import re

import numpy as np

#: The false-discovery rate of the Benjamini-Hochberg procedure over all timed benchmarks.
FDR = 0.05
#: Ratios within ``[1 / (1 + MIN_EFFECT), 1 + MIN_EFFECT]`` are "no change" even when significant.
MIN_EFFECT = 0.05
#: Relative change beyond round-off of an accuracy track.
ACCURACY_RTOL = 1e-6
#: The accuracy tracks, by name.
ACCURACY_TRACK = re.compile(r"error|rmse|iterations|accuracy")


def paired(base_rounds, head_rounds):
    """``(ratio, low, high, p)`` from per-round median seconds of the two commits.

    ``low`` and ``high`` bound the ratio at 95 % (Student t on the paired log
    ratios); ``p`` is the two-sided p-value of "no change".
    """
    from scipy import stats

    d = np.log(np.asarray(head_rounds, dtype=float)) - np.log(np.asarray(base_rounds, dtype=float))
    mean = float(d.mean())
    if len(d) < 2:
        return math.exp(mean), 0.0, math.inf, 1.0
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        return math.exp(mean), math.exp(mean), math.exp(mean), 1.0 if mean == 0.0 else 0.0
    se = sd / math.sqrt(len(d))
    half = float(stats.t.ppf(0.975, len(d) - 1)) * se
    p = float(2 * stats.t.sf(abs(mean) / se, len(d) - 1))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half), p


def benjamini_hochberg(p_values, rate=FDR):
    """Boolean discoveries of the Benjamini-Hochberg step-up procedure at ``rate``."""
    p = np.asarray(p_values, dtype=float)
    if p.size == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p)
    passed = p[order] <= rate * np.arange(1, p.size + 1) / p.size
    discoveries = np.zeros(p.size, dtype=bool)
    if passed.any():
        discoveries[order[:np.flatnonzero(passed)[-1] + 1]] = True
    return discoveries


def timing_verdicts(rounds, min_effect=MIN_EFFECT, rate=FDR):
    """Rows ``{key, ratio, low, high, p, verdict}`` for the timed benchmarks.

    ``rounds`` maps a key to ``(base medians, head medians)``, one per round.
    """
    keys = sorted(rounds)
    rows = [dict(zip(("ratio", "low", "high", "p"), paired(*rounds[key])), key=key) for key in keys]
    for row, discovery in zip(rows, benjamini_hochberg([row["p"] for row in rows], rate)):
        if discovery and row["ratio"] > 1 + min_effect:
            row["verdict"] = "slower"
        elif discovery and row["ratio"] < 1 / (1 + min_effect):
            row["verdict"] = "faster"
        else:
            row["verdict"] = "no change"
    return rows


def accuracy_verdicts(values, rtol=ACCURACY_RTOL):
    """Rows ``{key, base, head, verdict}``: ``'accuracy changed'`` or ``'same'`` for the
    accuracy tracks, ``'not compared'`` for the others (memory varies between runs)."""
    rows = []
    for key in sorted(values):
        base, head = values[key]
        if not ACCURACY_TRACK.search(key.split("(")[0].rsplit(".", 1)[-1]):
            verdict = "not compared"
        elif (math.isnan(base) and math.isnan(head)) or abs(head - base) <= rtol * max(abs(base), abs(head), 1e-12):
            verdict = "same"
        else:
            verdict = "accuracy changed"
        rows.append({"key": key, "base": base, "head": head, "verdict": verdict})
    return rows
