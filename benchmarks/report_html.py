"""Pure helpers of ``benchmarks/report.py``'s HTML page: styles, tables, inline SVG charts.

Everything here turns plain data (strings, numbers, dicts) into HTML text; nothing
reads results or the registry. The page must open offline, so the style sheet is
inline and every figure is an inline ``<svg>`` drawn by matplotlib's Agg-side SVG
writer, with its XML prologue, metadata and namespace declarations removed (an
HTML parser does not need them, and they are the only ``http`` strings matplotlib
writes). Without matplotlib the page is still written, with tables only.

asv imports every module of the benchmark directory to discover benchmarks, so
this module imports nothing heavy at import time and defines no name that asv
would take for a benchmark (``time_*``, ``track_*``, ``mem_*``, ``peakmem_*``).
"""

import html
import io
import itertools
import math
import re
import textwrap

#: Colours of our methods, in the order methods are met (a qualitative palette:
#: matplotlib's tab10 without its grey, then tab20b's darker tones, which stay
#: legible on white where tab20's light ones do not).
OURS_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#17becf", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
               "#5254a3", "#8ca252", "#bd9e39", "#ad494a"]
#: Peers are drawn dashed, in black and greys, each with its own hollow marker, so
#: that a reader tells "theirs" from "ours" before reading the legend.
PEER_COLORS = ["#000000", "#555555", "#222222", "#777777", "#333333", "#666666"]
PEER_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]
OURS_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<", ">"]
WIN, LOSE, NEUTRAL = "#2a9d5c", "#d1495b", "#4c78a8"

_FIGURE_IDS = itertools.count(1)

CSS = """
:root { --ink:#1d2430; --muted:#5b6575; --line:#e3e7ee; --card:#ffffff; --bg:#f4f6f9;
        --win:#1e7f4b; --win-bg:#e3f4ea; --lose:#b3263a; --lose-bg:#fbe7ea; --accent:#2f5d9e; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--ink);
       font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 0 24px 48px; }
header.top { background: #1d2a3d; color: #f3f6fb; padding: 28px 0 22px; margin-bottom: 24px; }
header.top .inner { max-width: 1320px; margin: 0 auto; padding: 0 24px; }
header.top h1 { margin: 0 0 4px; font-size: 26px; font-weight: 650; letter-spacing: .2px; }
header.top .sub { color: #b9c4d6; margin-bottom: 16px; }
dl.meta { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 10px 24px; margin: 0; }
dl.meta div { min-width: 0; }
dl.meta dt { font-size: 11.5px; text-transform: uppercase; letter-spacing: .8px; color: #93a1b8; }
dl.meta dd { margin: 0; font-size: 15px; overflow-wrap: anywhere; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .92em; }
nav.toc { display: flex; flex-wrap: wrap; gap: 8px; margin: 0 0 20px; }
nav.toc a { text-decoration: none; color: var(--accent); background: #e8eef8; border-radius: 999px;
            padding: 3px 12px; font-size: 13.5px; }
section.card { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
               padding: 18px 22px 20px; margin: 0 0 22px; box-shadow: 0 1px 2px rgba(20,30,50,.05); }
section.card > h2 { margin: 0 0 6px; font-size: 21px; }
h3 { margin: 22px 0 8px; font-size: 17px; }
p.lead, p.note { color: var(--muted); margin: 4px 0 12px; max-width: 980px; }
.banner { border-radius: 10px; padding: 14px 18px; margin: 0 0 20px; border: 1px solid; }
.banner.warn { background: #fff4df; border-color: #f0b64c; color: #5c3b00; }
.banner.bad { background: var(--lose-bg); border-color: #e58b98; color: #6b1220; }
.banner.ok { background: var(--win-bg); border-color: #9dd3b3; color: #124d2e; }
.banner strong { font-size: 16px; }
.banner ul { margin: 8px 0 0; padding-left: 20px; max-height: 260px; overflow: auto; }
.banner li { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px; }
figure { margin: 6px 0 14px; }
figure svg { width: 100%; height: auto; display: block; }
figure.narrow { max-width: 820px; }
figcaption { color: var(--muted); font-size: 13.5px; margin-top: 4px; }
.table-block { margin: 6px 0 16px; min-width: 0; }
.table-wrap { overflow-x: auto; margin: 0 0 6px; }
table.data { border-collapse: collapse; font-size: 13.5px; font-variant-numeric: tabular-nums; min-width: 60%; }
table.data caption { text-align: left; font-weight: 600; padding: 2px 0 6px; font-size: 14.5px; }
table.data th { text-align: right; font-weight: 600; color: var(--muted); border-bottom: 2px solid var(--line);
                padding: 5px 12px; white-space: nowrap; }
table.data th.l, table.data td.l { text-align: left; }
table.data td { text-align: right; padding: 4px 12px; border-bottom: 1px solid var(--line); white-space: nowrap; }
table.data tr.group-start td { border-top: 2px solid #cfd6e1; }
table.data tr.peer td:first-child { font-style: italic; color: var(--muted); }
table.data tr.peer td:first-child::after { content: " peer"; font-style: normal; font-size: 10.5px; color: #fff;
                background: #6b7585; border-radius: 4px; padding: 0 5px; margin-left: 6px; vertical-align: 1px; }
table.data td.win { color: var(--win); background: var(--win-bg); font-weight: 600; }
table.data td.lose { color: var(--lose); background: var(--lose-bg); font-weight: 600; }
table.data td.na { color: #a0a8b5; }
table.data tbody tr:hover td { background-color: #f3f7fd; }
ol.notes { margin: 0 0 8px; padding-left: 22px; color: var(--muted); font-size: 13.5px; }
ol.notes li::marker { font-weight: 600; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(560px, 1fr)); gap: 4px 28px; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; vertical-align: -1px; margin-right: 4px; }
footer { color: var(--muted); font-size: 13px; margin-top: 28px; }
footer ul { padding-left: 20px; }
"""


def esc(text):
    """``text`` escaped for HTML element content and attribute values."""
    return html.escape(str(text), quote=True)


def slug(text):
    """An anchor id made of ``text``'s letters and digits."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "section"


# --------------------------------------------------------------------------- tables

def table_html(table):
    """A :class:`report.Table` (title, columns, align, rows of cells, notes) as HTML."""
    columns, align, rows = table.visible()
    head = "".join(f'<th class="{"l" if a == "l" else "r"}">{esc(c)}</th>'
                   for c, a in zip(columns, align))
    body = []
    for row, row_css in zip(rows, table.row_css):
        cells = []
        for cell, a in zip(row, align):
            classes = " ".join(c for c in ("l" if a == "l" else "", cell.css) if c)
            title = f' title="{esc(cell.title)}"' if cell.title else ""
            cells.append(f'<td class="{classes}"{title}>{esc(cell.text)}</td>')
        body.append(f'<tr class="{row_css}">{"".join(cells)}</tr>')
    notes = ""
    if table.notes:
        notes = '<ol class="notes">' + "".join(f"<li>{esc(n)}</li>" for n in table.notes) + "</ol>"
    caption = f"<caption>{esc(table.title)}</caption>" if table.title else ""
    return (f'<div class="table-block"><div class="table-wrap"><table class="data">{caption}<thead><tr>{head}'
            f'</tr></thead><tbody>{"".join(body)}</tbody></table></div>{notes}</div>')


def banner(kind, title, items=(), more=None):
    """A coloured box (``kind`` is ``warn``, ``bad`` or ``ok``) with a list of ``items``."""
    listing = "".join(f"<li>{esc(i)}</li>" for i in items)
    extra = f"<div>{esc(more)}</div>" if more else ""
    return (f'<div class="banner {kind}"><strong>{esc(title)}</strong>{extra}'
            + (f"<ul>{listing}</ul>" if listing else "") + "</div>")


def page(title, header_html, body_html, footer_html=""):
    """The whole document: one file, inline style, no external reference."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
            f"{header_html}<main>{body_html}<footer>{footer_html}</footer></main></body></html>\n")


# --------------------------------------------------------------------------- figures

def have_matplotlib():
    """Whether figures can be drawn (matplotlib is a ``bench`` extra, not a test one)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update({
        # text stays text, set in the page's fonts; smaller than paths, and selectable
        "svg.fonttype": "none",
        "svg.hashsalt": "kernelmaps-report",   # stable ids from run to run
        "font.family": "DejaVu Sans",  # bundled with matplotlib; svg_of adds a generic fallback
        "font.size": 10.5,
        "axes.titlesize": 12,
        "axes.titleweight": "bold",
        "axes.labelsize": 10.5,
        "axes.edgecolor": "#9aa3b2",
        "axes.linewidth": 0.8,
        "axes.grid": True,
        "grid.color": "#e4e8ef",
        "grid.linewidth": 0.7,
        "axes.axisbelow": True,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "xtick.color": "#4a5363",
        "ytick.color": "#4a5363",
        "legend.frameon": False,
        "legend.fontsize": 10,
    })
    return plt


def svg_of(fig):
    """The figure as an inline ``<svg>`` element, sized by CSS through its viewBox.

    Element ids get a per-figure prefix: matplotlib derives them from content, and
    several figures inline in one document must not share an id.
    """
    plt = _pyplot()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.DOTALL)
    text = re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", text)
    text = re.sub(r'^(<svg\b[^>]*?)\s+width="[^"]*"\s+height="[^"]*"', r"\1", text, count=1)
    # matplotlib names one family; a browser without DejaVu must not fall back to a serif
    text = text.replace("font-family: 'DejaVu Sans'", "font-family: 'DejaVu Sans', Verdana, Arial, sans-serif")
    prefix = f"f{next(_FIGURE_IDS)}-"
    ids = set(re.findall(r'\sid="([^"]+)"', text))
    text = re.sub(r'\sid="([^"]+)"', lambda m: f' id="{prefix}{m.group(1)}"', text)
    text = re.sub(r"#([A-Za-z_][\w.-]*)",
                  lambda m: "#" + prefix + m.group(1) if m.group(1) in ids else m.group(0), text)
    return text


def styles_for(ours, peers):
    """``label -> matplotlib line style``: one colour and marker per method of ours, in
    the order given; peers dashed, black/grey, hollow markers. Used by every chart,
    so a method keeps its colour across the page."""
    styles = {}
    for i, label in enumerate(ours):
        styles[label] = {"color": OURS_COLORS[i % len(OURS_COLORS)],
                         "marker": OURS_MARKERS[i % len(OURS_MARKERS)], "linestyle": "-",
                         "linewidth": 2.0, "markersize": 6, "markerfacecolor": OURS_COLORS[i % len(OURS_COLORS)]}
    for i, label in enumerate(peers):
        color = PEER_COLORS[i % len(PEER_COLORS)]
        styles[label] = {"color": color, "marker": PEER_MARKERS[i % len(PEER_MARKERS)],
                         "linestyle": (0, (5, 2.5)), "linewidth": 2.0, "markersize": 7,
                         "markerfacecolor": "white", "markeredgewidth": 1.6}
    return styles


def _style(styles, label):
    return styles.get(label) or {"color": "#888888", "marker": ".", "linestyle": ":"}


def line_panels(panels, styles, order, ncols=None, panel_size=(4.3, 3.2), legend=True):
    """Small multiples of lines sharing one legend (below the panels).

    ``panels``: dicts with ``title``, ``xlabel``, ``ylabel``, ``logx``, ``logy``,
    ``series`` (``label -> [(x, y), ...]``) and optional ``xticks``. ``order`` fixes
    the legend's order. Returns the ``<svg>`` text, or ``""`` if no panel has data.
    """
    panels = [p for p in panels if any(p["series"].values())]
    if not panels:
        return ""
    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter, NullLocator

    ncols = ncols or len(panels)
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_size[0] * ncols, panel_size[1] * nrows),
                             squeeze=False)
    shown = {}
    for ax, panel in zip(axes.flat, panels):
        for label in order:
            points = sorted(panel["series"].get(label) or [])
            points = [(x, y) for x, y in points if y is not None and math.isfinite(y)
                      and (not panel.get("logy") or y > 0)]
            if not points:
                continue
            xs, ys = zip(*points)
            (line,) = ax.plot(xs, ys, label=label, **_style(styles, label))
            shown.setdefault(label, line)
        if panel.get("logx"):
            ax.set_xscale("log", base=2)
        if panel.get("logy"):
            ax.set_yscale("log")
        xticks = panel.get("xticks")
        if xticks:
            ax.set_xticks(xticks)
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            if panel.get("logx") and len(xticks) > 1:
                ax.set_xlim(min(xticks) / 1.25, max(xticks) * 1.25)
        if panel.get("logy"):
            _log_ticks(ax.yaxis, seconds=panel.get("seconds", False))
        ax.set_title(panel.get("title", ""), loc="left")
        ax.set_xlabel(panel.get("xlabel", ""))
        ax.set_ylabel(panel.get("ylabel", ""))
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout(w_pad=2.2, h_pad=1.6)
    if legend and shown:
        labels = [label for label in order if label in shown]
        fig.legend([shown[label] for label in labels], labels, loc="upper center",
                   bbox_to_anchor=(0.5, 0.0), ncol=min(len(labels), max(3, ncols * 2)),
                   handlelength=3.2, columnspacing=1.8)
    return svg_of(fig)


def tick_seconds(value):
    """``0.0123`` -> ``12 ms``: a time axis in the units a reader thinks in."""
    if value >= 1:
        return f"{value:g} s"
    if value >= 1e-3:
        return f"{value * 1e3:g} ms"
    return f"{value * 1e6:g} µs"


def _log_ticks(axis, seconds=False):
    """Plain-number ticks at 1, 2, 5 of each decade on a log axis (no ``10^-2``
    mathtext, no labelled minor ticks), in time units if ``seconds``."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    lo, hi = sorted(axis.get_view_interval())
    # a narrow range has no 1-2-5 tick, or only one: label every integer multiple then
    subs = (1.0, 2.0, 5.0) if lo > 0 and hi / lo > 4 else tuple(float(i) for i in range(1, 10))
    axis.set_major_locator(LogLocator(base=10, subs=subs))
    axis.set_minor_formatter(NullFormatter())
    axis.set_major_formatter(FuncFormatter(lambda v, _: tick_seconds(v) if seconds else f"{v:g}"))


def _ratio_text(value):
    return f"{value:.2f}×" if value < 100 else f"{value:.0f}×"


def ratio_bars(bars, xlabel, styles=None, reference=1.0, lower_is_better=False, note_width=58, width=None):
    """Horizontal bars of ratios on a log axis, a line at ``reference`` (1×).

    ``bars``: dicts with ``label`` (the y tick), ``value`` (the ratio), ``good``
    (True green, False red, None blue) and optional ``note`` (a reason, written
    beside the bar in the right margin) and ``method`` (its legend colour as the
    tick's swatch). Returns the ``<svg>`` text, or ``""`` without bars.
    """
    bars = [b for b in bars if b.get("value") is not None and math.isfinite(b["value"]) and b["value"] > 0]
    if not bars:
        return ""
    plt = _pyplot()
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    has_notes = any(b.get("note") for b in bars)
    # room for the bars, and for each wrapped reason beyond the bars it stands beside
    lines = {(b.get("method", b["label"]), b["note"]): textwrap.fill(b["note"], note_width).count("\n") + 1
             for b in bars if b.get("note")}
    height = 0.9 + 0.36 * len(bars) + 0.16 * sum(lines.values())
    fig, ax = plt.subplots(figsize=(width or (12.5 if has_notes else 9.5), max(2.2, height)))
    values = [b["value"] for b in bars]
    lo, hi = min(values + [reference]), max(values + [reference])
    ys = list(range(len(bars)))[::-1]
    colors = [WIN if b.get("good") is True else LOSE if b.get("good") is False else NEUTRAL for b in bars]
    # bars grow from the reference line, so a loss points left and a win right
    ax.barh(ys, [v - reference for v in values], left=reference, color=colors, height=0.62,
            edgecolor="none", alpha=0.92)
    ax.set_xscale("log")
    ax.set_xlim(lo / 1.6, hi * 1.9)
    ax.axvline(reference, color="#1d2430", linewidth=1.3)
    ax.set_yticks(ys)
    ax.set_yticklabels([b["label"] for b in bars])
    ax.grid(axis="y", visible=False)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}×"))
    ax.set_xlabel(xlabel)
    ax.set_ylim(-0.7, len(bars) - 0.3)
    notes = {}
    for y, b, v in zip(ys, bars, values):
        outward = v >= reference
        ax.annotate(_ratio_text(v), (v, y), xytext=(4 if outward else -4, 0), textcoords="offset points",
                    ha="left" if outward else "right", va="center", fontsize=9.5, color="#1d2430")
        if b.get("note"):
            notes.setdefault((b.get("method", b["label"]), b["note"]), []).append(y)
    # one reason per method, centred on its losing bars (a map slow in both dtypes
    # has one sentence, not two overlapping ones)
    for (_, note), at in notes.items():
        ax.annotate(textwrap.fill(note, note_width), (1.02, sum(at) / len(at)),
                    xycoords=("axes fraction", "data"), ha="left", va="center", fontsize=9,
                    color="#7a2030", style="italic", annotation_clip=False)
    if styles and any(b.get("method") in styles for b in bars):
        # the method's colour and marker left of its label, as in the line charts
        ax.tick_params(axis="y", pad=16)
        for y, b in zip(ys, bars):
            style = styles.get(b.get("method"))
            if style:
                ax.plot([-0.022], [y], transform=ax.get_yaxis_transform(), clip_on=False, linestyle="none",
                        marker=style.get("marker", "o"), markersize=7, color=style["color"],
                        markerfacecolor=style.get("markerfacecolor", style["color"]),
                        markeredgewidth=style.get("markeredgewidth", 1.0))
    better = "← better" if lower_is_better else "better →"
    ax.annotate(better, (1.0, 1.0), xycoords="axes fraction", ha="right", va="bottom", fontsize=9.5,
                color="#5b6575", xytext=(0, 4), textcoords="offset points")
    fig.tight_layout()
    if has_notes:
        fig.subplots_adjust(right=0.6)
    return svg_of(fig)


def legend_html(labels, styles):
    """Colour swatches of ``labels``, for a table that stands in for a chart."""
    parts = []
    for label in labels:
        color = (styles.get(label) or {}).get("color", "#888")
        parts.append(f'<span class="swatch" style="background:{esc(color)}"></span>{esc(label)}')
    return "&nbsp;&nbsp; ".join(parts)
