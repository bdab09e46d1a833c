"""What the report's tables are made of: cells, tables, footnotes and number formats.

A :class:`Table` prints in the terminal (:meth:`Table.text`) and is drawn on the
page (:func:`benchmarks.report_html.table_html`) alike.

asv imports every module of the benchmark directory, so this one imports nothing
heavy at import time and defines no name asv would take for a benchmark.
"""

import datetime
import math
from dataclasses import dataclass, field

from benchmarks.report_results import _is_number


@dataclass
class Cell:
    """One cell: its text, its class on the page (``win``, ``lose``, ``na``) and its tooltip."""

    text: str
    css: str = ""
    title: str = ""


@dataclass
class Table:
    """A titled table, printed in the terminal and drawn on the page alike."""

    title: str
    columns: list
    align: str
    rows: list = field(default_factory=list)
    row_css: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    def add(self, cells, css=""):
        self.rows.append([c if isinstance(c, Cell) else Cell(str(c)) for c in cells])
        self.row_css.append(css)

    def visible(self):
        """``(columns, align, rows)`` without the columns no row has a value in (e.g.
        output memory where the suite does not track it)."""
        keep = [i for i in range(len(self.columns))
                if i == 0 or any(row[i].text not in ("-", "") for row in self.rows)]
        return ([self.columns[i] for i in keep], "".join(self.align[i] for i in keep),
                [[row[i] for i in keep] for row in self.rows])

    def text(self):
        """The table as monospace text, numbers right-aligned, notes below."""
        columns, align, rows = self.visible()
        widths = [max([len(c)] + [len(r[i].text) for r in rows]) for i, c in enumerate(columns)]

        def line(cells):
            return "  ".join((c.ljust(w) if a == "l" else c.rjust(w))
                             for c, w, a in zip(cells, widths, align)).rstrip()

        out = [f"\n== {self.title}", line(columns)]
        out += [line([c.text for c in row]) for row in rows]
        out += [f"   [{i}] {note}" for i, note in enumerate(self.notes, 1)]
        return "\n".join(out)


class Footnotes:
    """Numbered reasons of one table, one per method."""

    def __init__(self, table, registry):
        self.table, self.registry, self.index = table, registry, {}

    def mark(self, label):
        """`` [n]``: the footnote of ``label``'s reason (added once per table)."""
        if label not in self.index:
            reason = self.registry.reason(label) or "no stated reason"
            self.table.notes.append(f"{label}: {reason}")
            self.index[label] = len(self.table.notes)
        return f" [{self.index[label]}]"


def fmt_time(seconds):
    """``12 µs``, ``3.4 ms``, ``1.25 s``; ``-`` for None."""
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def fmt_mib(value):
    """``12.3 MiB``; two decimals below 1 MiB, where one would round small transforms to 0."""
    return "-" if value is None else f"{value:.2f} MiB" if abs(value) < 1 else f"{value:.1f} MiB"


def fmt(value, spec, unit=""):
    """``value`` formatted by ``spec``, then ``unit``; ``-`` for None."""
    return "-" if value is None else format(value, spec) + unit


def short(label):
    """A peer's name without its library prefix: ``sklearn.RBFSampler`` -> ``RBFSampler``."""
    return label.split(".", 1)[1] if label.startswith("sklearn.") else label


def compare(mine, theirs):
    """``(ratio, peer)`` for the fastest of ``theirs`` (``{peer: seconds}``), ratio =
    peer time / our time, or ``(None, None)``."""
    theirs = {p: t for p, t in theirs.items() if t}
    if not mine or not theirs:
        return None, None
    peer = min(theirs, key=theirs.get)
    return theirs[peer] / mine, peer


def ratio_cell(ratio, peer, notes=None, label=None, lower_is_better=False):
    """``1.85× RBFSampler``, green when we win, red with a footnote when we lose."""
    if ratio is None:
        return Cell("", "na")
    win = ratio <= 1.0 if lower_is_better else ratio >= 1.0
    mark = "" if win or notes is None else notes.mark(label)
    return Cell(f"{ratio:.2f}× {short(peer)}{mark}", "win" if win else "lose",
                title="peer time / our time" if not lower_is_better else "")


def order_labels(labels, registry):
    """Methods grouped by the peer they face, each group's peer last."""
    def key(label):
        peers = registry.peers(label)
        group = peers[0] if peers else label
        return (group, label == group, label)

    return sorted(set(labels), key=key)


def _num(value):
    """``value`` as a float for sorting; infinity (last) where it is not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.inf


def _dataset_rank(name):
    """Where ``name`` sorts among the suite's datasets; unknown ones last."""
    order = ["banana", "magic04", "letter", "pendigits"]
    return order.index(name) if name in order else len(order)


def _when(ms):
    """A time in ms since the epoch as a UTC date and time, or ``unknown``."""
    if not _is_number(ms):
        return "unknown"
    return datetime.datetime.fromtimestamp(ms / 1000.0, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
