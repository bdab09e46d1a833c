"""The paper-claim runner's machinery: the experiment registry and what each run writes.

An experiment is a function decorated with :func:`experiment`, which declares the
claim it checks, the paper's figure or table and the paper's number, the
settings of its quick and full modes, and its size knobs (``size=Size(...)``: the
setting that holds a size, and the size the claim names, if it names one). It
receives a :class:`Run` and uses it to

* read its settings (``run.settings``; ``run.quick`` tells the mode);
* show progress over long loops (``run.progress(iterable, desc=...)``, a tqdm bar);
* write its rows (``run.write_csv(rows)``: a list of dicts, one CSV);
* save its figure (``run.save_figure(fig)``: one PNG);
* give its verdict (``run.verdict(status, ours=..., measured=[...], note=...)``).

The runner then writes, in ``OUTPUT/NAME/``: ``NAME.csv``, ``NAME.png``,
``verdict.md`` (the claim, the paper's number, ours, whether the claim holds here)
and ``result.json`` (the same, for :mod:`benchmarks.experiments.measured`, which
builds the "Measured" tables of docs/measured.md and the README from every
``result.json``). :func:`rerender` rewrites both from ``result.json`` alone, with
the size entries of the experiment's current declaration.

Every verdict heading and table cell shows the status with its mode and size
(:mod:`benchmarks.experiments._sizes`): "holds (full)" for a full run,
"holds (quick: 300 rows)" for a quick one, and "holds at 20 000 rows (quick); claim
at 10⁶ rows not tested" for a run below a size its claim names, which therefore never
shows a bare "holds". The status stays one of :data:`STATUSES`, the experiment's
judgement at the size that ran.

This folder has no ``__init__.py`` on purpose: asv discovers only packages, so it
never imports these modules (they are not benchmarks).
"""

import csv
import io
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.experiments._sizes import Size, check, entry, shown_status, size_line
from benchmarks.machine import forced_target

#: The recorded results, kept in git: the "Measured" tables (docs/measured.md, the
#: README's headline rows) are generated from these files, so only ``run --record``
#: writes here.
RECORDED = Path(__file__).resolve().parent / "results"

#: Where a run writes unless told otherwise: untracked (``.asv/`` is ignored by
#: git), so that trying an experiment leaves the checkout clean.
DEFAULT_OUTPUT = Path(__file__).resolve().parents[2] / ".asv" / "experiments"

#: The verdicts an experiment may give, at the size it ran (shown with the mode and
#: size by :func:`~benchmarks.experiments._sizes.shown_status`).
STATUSES = ("holds", "partly holds", "does not hold")

_REGISTRY = {}


@dataclass(frozen=True)
class Experiment:
    name: str
    function: object
    paper: str               # e.g. "Yu et al., 2015 (CNM)"
    source: str              # e.g. "Figure 1"
    claim: str               # the sentence being checked
    paper_value: str         # the paper's number(s), as the paper gives them
    quick: dict              # settings of --quick
    full: dict               # settings of the default (the paper's sizes where we can)
    timed: bool = False      # measures speed: run it on an otherwise idle machine
    requires: tuple = ()     # (module, how to install it): optional peers it cannot run without
    sizes: tuple = ()        # Size(...) knobs: the size that ran, and the size the claim names

    def settings(self, quick):
        return dict(self.quick if quick else self.full)

    def missing(self):
        """The install hints of the required modules that are not importable here."""
        import importlib.util

        return [hint for module, hint in self.requires if importlib.util.find_spec(module) is None]


class MissingRequirement(RuntimeError):
    """An experiment's optional peer is not installed: nothing was run or overwritten."""


def experiment(name, *, paper, source, claim, paper_value, quick, full, size, timed=False, requires=()):
    """Register the decorated ``function(run)`` as the experiment ``name``.

    ``size`` is a :class:`~benchmarks.experiments._sizes.Size`, or a tuple of them:
    the settings that say how large a run is, each with the size the claim sentence
    names (``claim=10**6``) where it names one. ``requires`` lists ``(module,
    install hint)`` pairs: without them the experiment is not run (``all`` skips it
    and says so) and its earlier results stay as they are."""
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"experiment names are letters, digits, '-' and '_'; got {name!r}")
    sizes = (size,) if isinstance(size, Size) else tuple(size)
    check(name, sizes, quick, full)

    def register(function):
        if name in _REGISTRY:
            raise ValueError(f"experiment {name!r} is registered twice")
        _REGISTRY[name] = Experiment(name, function, paper, source, claim, paper_value,
                                     dict(quick), dict(full), timed, tuple(requires), sizes)
        return function

    return register


def registry():
    """name -> :class:`Experiment`, after importing every experiment module."""
    import importlib
    import pkgutil

    here = Path(__file__).resolve().parent
    for info in sorted(pkgutil.iter_modules([str(here)]), key=lambda m: m.name):
        if not info.name.startswith("_") and info.name not in ("measured",):
            importlib.import_module(f"benchmarks.experiments.{info.name}")
    return dict(sorted(_REGISTRY.items()))


@dataclass
class Verdict:
    status: str
    ours: str
    measured: list = field(default_factory=list)  # [(what, figure), ...] for the README table
    note: str = ""


class Run:
    """One run of one experiment: its settings, its outputs, its verdict."""

    def __init__(self, spec, quick, folder, parts=None):
        self.spec = spec
        self.quick = quick
        self.settings = spec.settings(quick)
        # outputs go to a scratch folder that replaces the experiment's folder only
        # once the run has finished, so a failed run leaves the last results intact
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._verdict = None
        self._csv = None
        self._png = None
        # what each finished part measured, outside the scratch folder, so that a run that stops
        # (killed, out of time, crashed) leaves those figures; removed once the run finishes
        self.parts = Path(parts) if parts is not None else self.folder / "parts.jsonl"
        self._started = time.perf_counter()

    # -- helpers the experiments call -------------------------------------------------
    def progress(self, iterable, desc=None, total=None):
        """A tqdm bar over ``iterable`` (on stderr, so printed tables stay readable)."""
        from tqdm.auto import tqdm

        return tqdm(iterable, desc=f"{self.spec.name}: {desc}" if desc else self.spec.name,
                    total=total, leave=False, dynamic_ncols=True)

    def write_csv(self, rows):
        """Write ``rows`` (dicts with the same keys, in order) as the experiment's CSV."""
        rows = list(rows)
        if not rows:
            raise ValueError(f"{self.spec.name}: no rows to write")
        keys = list(rows[0])
        for row in rows:
            for key in row:
                if key not in keys:
                    keys.append(key)
        self._csv = self.folder / f"{self.spec.name}.csv"
        with open(self._csv, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=keys, restval="")
            writer.writeheader()
            writer.writerows(rows)
        return self._csv

    def record_part(self, part, values):
        """Append what one finished part measured (a dict of plain values) to the run's parts
        file at once, so that a run stopped before its verdict still leaves it on disk."""
        line = {"part": part, "seconds_into_run": round(time.perf_counter() - self._started, 1), **values}
        with open(self.parts, "a") as f:
            f.write(json.dumps(line, default=float) + "\n")

    def save_figure(self, fig):
        """Save a matplotlib figure as the experiment's PNG (and close it)."""
        import matplotlib.pyplot as plt

        self._png = self.folder / f"{self.spec.name}.png"
        fig.savefig(self._png, dpi=110, bbox_inches="tight")
        plt.close(fig)
        return self._png

    def verdict(self, status, *, ours, measured=(), note=""):
        """Say whether the claim holds here.

        ``ours`` is our number(s) in the paper's terms; ``measured`` the rows this
        experiment contributes to the README's table, as ``(what, figure)`` pairs.
        """
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {status!r}")
        self._verdict = Verdict(status, ours, [tuple(map(str, row)) for row in measured], note)


def figure(ncols=1, nrows=1, width=5.0, height=3.6):
    """A matplotlib figure and axes on the non-interactive backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)


def width_axis(ax, widths, axis="x"):
    """Mark a log-scaled axis at exactly ``widths``, labelled as plain integers.

    Matplotlib's default log ticks label the minor ticks too once the range spans
    less than a few decades, and their labels overlap at the report's size.
    """
    from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(FixedLocator(list(widths)))
    target.set_major_formatter(lambda value, _: f"{value:g}")
    target.set_minor_locator(NullLocator())
    target.set_minor_formatter(NullFormatter())


def _format_settings(settings):
    return ", ".join(f"{k}={v}" for k, v in settings.items()) or "none"


def command(name, quick):
    return f"python -m benchmarks.experiments run {name}" + (" --quick" if quick else "")


def execute(spec, quick, output=DEFAULT_OUTPUT):
    """Run one experiment and write its outputs; returns the ``result.json`` dict."""
    import shutil
    import tempfile

    from benchmarks.machine import describe, machine_info

    missing = spec.missing()
    if missing:
        raise MissingRequirement(f"{spec.name} needs what is not installed here: {'; '.join(missing)}")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{spec.name}-", dir=output))
    parts = output / f"{result_folder(spec.name)}.parts.jsonl"
    parts.unlink(missing_ok=True)
    try:
        run = Run(spec, quick, scratch, parts)
        started = time.perf_counter()
        spec.function(run)
        seconds = time.perf_counter() - started
        result = _finish(spec, run, quick, seconds, describe, machine_info)
        final = output / result_folder(spec.name)
        if final.exists():
            shutil.rmtree(final)
        scratch.rename(final)
        parts.unlink(missing_ok=True)
    finally:
        if scratch.exists():
            shutil.rmtree(scratch)
    return result


def _command_prefix():
    target = forced_target()
    if target == "512bit":
        return "NUMBA_CPU_FEATURES=$(python -m benchmarks.machine --full-width-features) "
    return f"NUMBA_CPU_NAME={target} " if target else ""


def result_folder(name):
    """``NAME``, or ``NAME@TARGET`` under a forced Numba target, so that the AVX2 run
    of a timed experiment sits beside the native one instead of replacing it."""
    target = forced_target()
    return f"{name}@{target}" if target else name


def _finish(spec, run, quick, seconds, describe, machine_info):
    if run._verdict is None:
        raise RuntimeError(f"experiment {spec.name} returned without a verdict")
    if run._csv is None or run._png is None:
        raise RuntimeError(f"experiment {spec.name} must write its CSV and its PNG")
    info = machine_info()
    v = run._verdict
    result = {
        "name": spec.name, "target": forced_target() or "host", "paper": spec.paper, "source": spec.source, "claim": spec.claim,
        "paper_value": spec.paper_value, "settings": run.settings,
        "mode": "quick" if quick else "full", "size": [entry(size, run.settings) for size in spec.sizes],
        "command": _command_prefix() + command(spec.name, quick),
        "status": v.status, "ours": v.ours, "note": v.note, "measured": v.measured,
        "seconds": round(seconds, 1), "machine": info, "machine_line": describe(info),
        "date": time.strftime("%Y-%m-%d"),
        "csv": run._csv.name, "png": run._png.name,
    }
    if spec.requires:
        result["requires"] = [module for module, _ in spec.requires]
    (run.folder / "result.json").write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    (run.folder / "verdict.md").write_text(render_verdict(result))
    return result


def render_verdict(result):
    out = io.StringIO()
    target = f" ({result['target']} target)" if result.get("target", "host") != "host" else ""
    out.write(f"# {result['name']}{target}: {shown_status(result)}\n\n")
    out.write(f"**Claim** ({result['paper']}, {result['source']}): {result['claim']}\n\n")
    out.write(f"**Paper**: {result['paper_value']}\n\n")
    out.write(f"**Ours**: {result['ours']}\n\n")
    if result["note"]:
        out.write(f"**Note**: {result['note']}\n\n")
    out.write(f"**Size**: {size_line(result)}\n\n")
    out.write(f"**Settings** ({result['mode']}): {_format_settings(result['settings'])}\n\n")
    out.write(f"**Machine**: {result['machine_line']}; {result['seconds']} s on {result['date']}\n\n")
    out.write(f"**Command**: `{result['command']}`\n\n")
    out.write(f"![{result['name']}]({result['png']})\n\nData: [{result['csv']}]({result['csv']})\n")
    return out.getvalue()


def rerender(folder, experiments):
    """Rewrite every ``*/result.json`` under ``folder`` with the size entries of its
    experiment's declaration in ``experiments`` (name -> :class:`Experiment`), and its
    ``verdict.md`` from it; nothing is re-run. Returns the folders rewritten."""
    paths = sorted(Path(folder).glob("*/result.json"))
    if not paths:
        raise ValueError(f"{folder} holds no NAME/result.json to rerender")
    results = [json.loads(path.read_text()) for path in paths]
    unknown = sorted({r["name"] for r in results} - set(experiments))
    if unknown:
        raise ValueError(f"results of unregistered experiment(s) {', '.join(unknown)} under {folder}")
    texts = []  # every file is rendered before the first is written, so a bad one leaves all as they were
    for path, result in zip(paths, results):
        try:
            sizes = [entry(size, result["settings"]) for size in experiments[result["name"]].sizes]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}: its settings lack a size setting its experiment declares ({exc})") from exc
        keys = list(result)
        # the size entries follow the mode, so that the rest of result.json stays as it was
        rewritten = {key: result[key] for key in keys[:keys.index("mode") + 1]}
        rewritten["size"] = sizes
        rewritten.update({key: value for key, value in result.items() if key not in rewritten})
        texts += [(path, json.dumps(rewritten, indent=1, ensure_ascii=False) + "\n"),
                  (path.with_name("verdict.md"), render_verdict(rewritten))]
    for path, text in texts:
        path.write_text(text)
    return [path.parent for path in paths]
