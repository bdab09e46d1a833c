"""The size an experiment ran at, the size its claim names, and the status line that says both.

An experiment declares its size knobs in its registration, ``size=Size(...)`` or a
tuple of them: the setting that holds the size, how to say it, and, where the claim
sentence names a size, that size (``claim=10**6``). A run then records, for each
knob, the size it ran at and whether it reached the claimed one (the ``size``
entries of ``result.json``), and its verdict is shown with the mode and the size:

* ``holds (full)``: a full run (the paper's sizes, where the data allow) that
  reached every size its claim names;
* ``holds (quick: 300 rows)``: a quick run (reduced settings), at the size it ran;
* ``holds at 20 000 rows (quick); claim at 10⁶ rows not tested``: a run below a size
  its claim names, so the verdict speaks only for the size that ran.

The status itself stays one of the runner's three (holds, partly holds, does not
hold): it is the experiment's judgement at the size that ran, and this module only
qualifies how it is shown.
"""

import math
import numbers
from dataclasses import dataclass

#: A claimed size meaning every row of the data (a setting of ``None`` runs on all of them).
WHOLE = "whole"

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Size:
    """One size knob of an experiment.

    Parameters
    ----------
    setting : str
        The key of the settings that holds the size; ``"forest.n_train"`` reaches
        into a nested dict.
    text : str
        How to say a size, with ``{}`` for the number: ``"{} rows"``, ``"m = {}"``.
    claim : int, list of int, WHOLE or None
        The size the claim sentence names (a list where it names several, the largest
        counts); ``WHOLE`` for "all the rows"; None where it names no size.
    measure : callable or None
        Maps the setting's value to the size (e.g. ``max`` over a list of widths);
        None takes the value itself. A size of None means all the rows.
    whole : str
        How to say "all the rows" (default: ``text`` with "all").

    Examples
    --------
    >>> size = Size("rows", "{} rows", claim=10**6)
    >>> entry(size, {"rows": 20000})["ran_text"], entry(size, {"rows": 20000})["reached"]
    ('20 000 rows', False)
    """

    setting: str
    text: str
    claim: object = None
    measure: object = None
    whole: str = ""

    def value(self, settings):
        """The size ``settings`` run at."""
        value = settings
        for key in self.setting.split("."):
            value = value[key]
        return self.measure(value) if self.measure is not None else value

    def describe(self, value):
        """``value`` (a size, a list of sizes, or None for all the rows) in words."""
        if value is None or value == WHOLE:
            return self.whole or self.text.format("all")
        if isinstance(value, (list, tuple)):
            return self.text.format(_joined([count(v) for v in value]))
        return self.text.format(count(value))


def count(n):
    """A size as the claims write it: ``4096``, ``20 000``, ``10⁶``, ``2·10⁵``; other values as they are."""
    if isinstance(n, bool) or not isinstance(n, numbers.Real) or not math.isfinite(n) or n != int(n):
        return str(n)
    n = int(n)
    exponent = len(str(abs(n))) - 1
    lead, rest = divmod(n, 10 ** exponent)
    if n >= 10 ** 5 and rest == 0:
        return ("" if lead == 1 else f"{lead}·") + "10" + str(exponent).translate(_SUPERSCRIPTS)
    return f"{n:,}".replace(",", " ") if n >= 10 ** 4 else str(n)  # four digits stay ungrouped, as in SI


def _joined(words):
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _knobs(entries, key):
    # knobs are separated by commas, since a knob's own list of sizes reads "a and b"
    return ", ".join(e[key] for e in entries)


def _largest(value):
    return max(value) if isinstance(value, (list, tuple)) else value


def _reached(ran, claim):
    if claim is None:
        return None
    if claim == WHOLE:
        return ran is None
    return ran is None or _largest(ran) >= _largest(claim)


def entry(size, settings):
    """The ``result.json`` entry of one size knob: what ran, what the claim names, whether it reached it."""
    ran = size.value(settings)
    return {"setting": size.setting, "ran": ran, "ran_text": size.describe(ran),
            "claim": size.claim, "claim_text": None if size.claim is None else size.describe(size.claim),
            "reached": _reached(ran, size.claim)}


def check(name, sizes, quick, full):
    """Raise a clear error if a declared size cannot be read from both modes' settings or compared."""
    for size in sizes:
        if not isinstance(size, Size):
            raise TypeError(f"{name}: size must be Size(...) declarations, got {size!r}")
        for mode, settings in (("quick", quick), ("full", full)):
            try:
                ran = size.value(settings)
            except (KeyError, TypeError) as exc:
                raise ValueError(f"{name}: size setting {size.setting!r} is not in its {mode} settings") from exc
            numeric = ran is None or all(isinstance(v, numbers.Real) for v in
                                         (ran if isinstance(ran, (list, tuple)) else [ran]))
            if size.claim is not None and not numeric:
                raise ValueError(f"{name}: size {size.setting!r} has a claimed size, but its {mode} "
                                 f"setting {ran!r} is not a number to compare with it")


def _entries(result):
    if "size" not in result:
        raise ValueError(f"{result['name']}: its result.json has no 'size' entries; write them with "
                         "`python -m benchmarks.experiments rerender --out FOLDER`")
    return result["size"]


def shown_status(result):
    """The status with the mode and the size, as every verdict heading and table cell shows it."""
    status, mode, entries = result["status"], result["mode"], _entries(result)
    short = [e for e in entries if e["reached"] is False]
    if short:
        return (f"{status} at {_knobs(short, 'ran_text')} ({mode}); "
                f"claim at {_knobs(short, 'claim_text')} not tested")
    if mode == "full" or not entries:
        return f"{status} ({mode})"
    return f"{status} ({mode}: {_knobs(entries, 'ran_text')})"


def size_line(result):
    """The verdict's sentence on the size: what ran, and what the claim names."""
    entries = _entries(result)
    ran = _knobs(entries, "ran_text") if entries else "the declared settings"
    claimed = [e for e in entries if e["claim"] is not None]
    if not claimed:
        return f"ran at {ran}; the claim names no size"
    line = f"ran at {ran}; the claim is at {_knobs(claimed, 'claim_text')}"
    if any(e["reached"] is False for e in claimed):
        line += ": this run is below it, so it does not test the claim at its size"
    return line
