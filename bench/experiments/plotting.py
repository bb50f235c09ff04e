"""Shared figure helpers of the experiments (figures only; no rows, tasks or tables).

Every experiment figure is drawn at its final printed size, so that the
point sizes are what a reader sees: :data:`COLUMN` wide (one column of a
two-column paper) or :data:`PAGE` wide (the full text width), no text
smaller than :data:`FONT` pt, written at :data:`DPI`.

* :func:`style`: the rc settings, a context that must hold the whole plot
  (saving included: tick labels are made when the figure is drawn);
* :func:`figure`, :func:`mosaic`, :func:`legend`, :func:`save`:
  constrained layout, one legend for the figure (handles deduplicated by
  label), the title wrapped to the width, an atomic write;
* :func:`mean_err`, :func:`interval_note`: the mean over repetitions and
  its spread (one standard deviation, :data:`INTERVAL`; or the 95 %
  confidence interval of the mean, Student t), and the words that say so
  in a legend;
* :func:`curve`, :func:`points`: a line with markers and a band (numeric
  x), or points with error bars and no connecting line (categorical x);
* :func:`plain_ticks`, :func:`value_scale`: tick labels in plain decimal
  notation with thousands separators, never ``2.241e+04``; a log axis only
  where every value is positive (symlog otherwise: zeros stay at zero).
"""
from __future__ import annotations

import re
import textwrap
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

#: figure widths in inches: one column of a two-column paper, the full text width
COLUMN, PAGE = 3.4, 7.0
#: the smallest text, in points at the final size
FONT = 8
#: resolution of the PNG files
DPI = 300
#: distinct colours (Okabe-Ito without yellow, then Tol's muted scheme), colour-blind safe in order
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#882255",
           "#999933", "#332288", "#44AA99", "#888888")
#: markers, paired with :data:`PALETTE` by position
MARKERS = ("o", "s", "^", "v", "D", "P", "X", "<", ">", "h", "*", "p")
#: what bands and error bars over repetitions show: "sd" (mean ± one sample standard deviation:
#: robust with 2-3 seeds and on log axes) or "ci95" (95 % confidence interval of the mean, Student t)
INTERVAL = "sd"
#: two-sided 95 % quantiles of Student's t for 1 .. 30 degrees of freedom
T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
       2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
       2.045, 2.042)

RC = {"font.size": FONT, "axes.titlesize": FONT, "axes.labelsize": FONT, "xtick.labelsize": FONT,
      "ytick.labelsize": FONT, "legend.fontsize": FONT, "legend.title_fontsize": FONT,
      "figure.titlesize": FONT + 1, "lines.linewidth": 1.2, "lines.markersize": 4.5, "axes.linewidth": 0.6,
      "xtick.major.width": 0.6, "ytick.major.width": 0.6, "xtick.minor.width": 0.4, "ytick.minor.width": 0.4,
      "axes.grid": True, "grid.linewidth": 0.4, "grid.color": "0.85", "axes.spines.top": False,
      "axes.spines.right": False, "legend.frameon": False, "legend.handlelength": 2.6,
      "legend.columnspacing": 1.2, "errorbar.capsize": 2, "mathtext.default": "regular",
      "savefig.dpi": DPI, "figure.dpi": 100}


@contextmanager
def style():
    """The publication rc settings (:data:`RC`) for the block: wrap the
    whole plot in it, :func:`save` included."""
    import matplotlib.pyplot as plt

    with plt.rc_context(RC):
        yield


def figure(nrows: int = 1, ncols: int = 1, *, width: float = PAGE, height: float | None = None,
           panel: float = 2.1, **kw):
    """A figure of ``nrows`` x ``ncols`` panels, ``width`` inches wide and
    ``height`` (default ``panel`` per row) high, constrained layout.

    Returns
    -------
    (Figure, 2-D array of Axes)
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(width, height or panel * nrows), layout="constrained",
                             squeeze=False, **kw)
    return fig, axes


def mosaic(layout, *, width: float = PAGE, height: float = 3.0, **kw):
    """A figure of named panels (:meth:`matplotlib.figure.Figure.subplot_mosaic`,
    ``"."`` for an empty cell), ``width`` x ``height`` inches, constrained layout.

    Returns
    -------
    (Figure, dict name -> Axes)
    """
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplot_mosaic(layout, **kw)


def _columns(labels: list[str], width_in: float) -> int:
    """How many legend columns of ``labels`` fit in ``width_in`` inches."""
    longest = max((len(s) for s in labels), default=1)
    col_pt = (RC["legend.handlelength"] + 1.8) * FONT + 0.56 * FONT * longest
    fit = max(1, int(width_in * 72 // col_pt))
    rows = -(-len(labels) // fit) if labels else 1
    return max(1, -(-len(labels) // rows))


def legend(fig, handles=None, labels=None, *, title: str | None = None, ncol: int | None = None,
           loc: str = "outside lower center"):
    """One legend for the whole figure, below the panels by default.

    Without ``handles``, every labelled artist of every panel, deduplicated
    by label (first one wins); ``ncol`` by default as many columns as fit.
    A ``title`` wider than the figure is wrapped to its width (``oracle``'s
    was cut at both edges on a one-column figure).
    """
    if handles is None:
        seen: dict = {}
        for ax in fig.axes:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab and not lab.startswith("_"):
                    seen.setdefault(lab, h)
        handles, labels = list(seen.values()), list(seen)
    elif labels is None:
        labels = [h.get_label() for h in handles]
    if not handles:
        return None
    if title:
        title = _wrap(title, int(fig.get_figwidth() * 72 / (0.55 * RC["legend.title_fontsize"])))
    ncol = ncol or _columns(labels + ([title] if title and len(labels) == 1 else []), fig.get_figwidth())
    return fig.legend(handles, labels, loc=loc, ncol=ncol, title=title)


def _wrap(text: str, chars: int) -> str:
    """``text`` in as few lines of at most ``chars`` characters as it needs,
    of about equal length (no lone last word), never breaking a number from
    its unit or the sides of an ``=``."""
    text = re.sub(r"(\d) (s|h|ms|%|nodes)\b", "\\1\u00a0\\2", text)
    text = re.sub(r"(\d) x (\d)", "\\1\u00a0x\u00a0\\2", text).replace(" = ", "\u00a0=\u00a0")
    lines = len(textwrap.wrap(text, chars))
    if lines <= 1:
        return text
    width = -(-len(text) // lines)
    while len(textwrap.wrap(text, width)) > lines:
        width += 1
    return textwrap.fill(text, width)


def save(fig, path, title: str | None = None, dpi: int = DPI) -> None:
    """Give ``fig`` its ``title`` (wrapped to the figure's width), write it
    to ``path`` (atomically, ``dpi``, default :data:`DPI`) and close it."""
    import matplotlib.pyplot as plt

    from epochbench.instances.files import atomic_path

    if title:
        fig.suptitle(_wrap(title, int(fig.get_figwidth() * 72 / (0.55 * RC["figure.titlesize"]))))
    try:
        with atomic_path(Path(path)) as tmp:
            fig.savefig(tmp, dpi=dpi)
    finally:
        plt.close(fig)


def styles(names) -> dict[str, dict]:
    """``name -> {"color", "marker"}``: a distinct colour and marker for each
    of ``names`` in order (:data:`PALETTE`, :data:`MARKERS`)."""
    out = {}
    for i, name in enumerate(dict.fromkeys(names)):
        out[name] = {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)]}
    return out


def proxy(label: str, **kw):
    """A legend entry that draws nothing on the axes (``Line2D`` with ``kw``)."""
    from matplotlib.lines import Line2D

    kw.setdefault("color", "k")
    return Line2D([], [], label=label, **kw)


# ---- repetitions -----------------------------------------------------------------------------
def t95(dof) -> np.ndarray:
    """Two-sided 95 % quantile of Student's t for ``dof`` degrees of freedom
    (array-like; NaN below 1, the normal 1.96 approached beyond 30)."""
    d = np.asarray(dof, dtype=float)
    table = np.asarray(T95)
    idx = np.clip(np.nan_to_num(d, nan=0).astype(int), 1, len(T95)) - 1
    out = np.where(d > len(T95), 1.96 + (T95[-1] - 1.96) * len(T95) / np.maximum(d, 1), table[idx])
    return np.where(d >= 1, out, np.nan)


def mean_err(df: pd.DataFrame, keys: list[str], cols: list[str], kind: str | None = None) -> pd.DataFrame:
    """Per group of ``keys``: the mean of every column of ``cols``, its
    spread ``COL_err`` over the n non-missing values of the group (``kind``,
    default :data:`INTERVAL`: ``"sd"`` one sample standard deviation,
    ``"ci95"`` the half-width of the 95 % confidence interval of the mean,
    Student t with n - 1 degrees of freedom; 0 for a single value) and
    ``reps``, the rows in the group.  Groups in first-seen order."""
    kind = kind or INTERVAL
    g = df.groupby(keys, sort=False, dropna=False)
    mean = g[cols].mean()
    n = g[cols].count()
    err = g[cols].std(ddof=1)
    if kind == "ci95":
        err = err * t95(n - 1) / np.sqrt(n.where(n > 0))
    elif kind != "sd":
        raise ValueError(f"kind: 'sd' or 'ci95', got {kind!r}")
    err = err.where(n > 1, 0.0).fillna(0.0)
    out = mean.join(err.add_suffix("_err"))
    out["reps"] = g.size()
    return out.reset_index()


def interval_note(reps, unit: str = "seeds", kind: str | None = None) -> str:
    """What the bands or error bars of :func:`mean_err` are, for a legend:
    ``mean ± 1 s.d. over 5 seeds`` (or ``one run per point: no interval``)."""
    kind = kind or INTERVAL
    n = pd.Series(np.asarray(reps, dtype=float)).dropna()
    if n.empty or n.max() < 2:
        return "one run per point: no interval"
    lo, hi = int(n.min()), int(n.max())
    what = "1 s.d." if kind == "sd" else "95 % CI"
    return f"mean ± {what} over {lo if lo == hi else f'{lo}-{hi}'} {unit}"


# ---- marks -----------------------------------------------------------------------------------
def curve(ax, x, y, err=None, *, band: bool = True, sort: bool = True, **kw):
    """A line with markers through (x, y), sorted by x (in the given order
    where ``sort`` is False: a path through measured x such as the
    utilization reached along increasing load); with ``err`` a band
    y ± err, or error bars where ``band`` is False or x does not increase.
    Markers are always drawn, so a curve of one point is a visible point,
    not an empty line."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.argsort(x, kind="stable") if sort else np.arange(len(x))
    x, y = x[order], y[order]
    kw.setdefault("marker", "o")
    (line,) = ax.plot(x, y, **kw)
    if err is not None:
        e = np.asarray(err, dtype=float)[order]
        if np.nansum(e) > 0:
            if band and len(x) > 1 and np.all(np.diff(x) >= 0):
                ax.fill_between(x, y - e, y + e, color=line.get_color(), alpha=0.15, lw=0)
            else:
                ax.errorbar(x, y, yerr=e, fmt="none", ecolor=line.get_color(), elinewidth=0.8)
    return line


def points(ax, x, y, lo=None, hi=None, *, horizontal: bool = False, **kw):
    """Unconnected markers at (x, y), with an interval from ``lo`` to ``hi``
    (along y, or along x where ``horizontal``) where given: the mark for a
    categorical axis."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    kw = {"marker": "o", "linestyle": "none", "elinewidth": 0.8, **kw}
    val = x if horizontal else y
    err = None
    if lo is not None:
        err = np.vstack([val - np.asarray(lo, dtype=float), np.asarray(hi, dtype=float) - val])
        err = np.where(np.isfinite(err), np.maximum(err, 0), 0)
    return ax.errorbar(x, y, **({"xerr": err} if horizontal else {"yerr": err}), **kw)


def dodge(k: int, n: int, width: float = 0.7) -> float:
    """Offset of the ``k``-th of ``n`` marks side by side in a category of ``width``."""
    return (k - (n - 1) / 2) * width / max(n, 1)


# ---- ticks and scales ------------------------------------------------------------------------
def plain(v: float) -> str:
    """``v`` in plain decimal notation: ``22,410``, ``1.5``, ``0.01``, ``0``
    (mathtext powers of ten below 0.001)."""
    if v == 0 or not np.isfinite(v):
        return "0" if v == 0 else ""
    a = abs(v)
    if a < 1e-3:
        e = np.log10(a)
        body = f"10^{{{int(round(e))}}}" if np.isclose(e, round(e)) else f"{a:.0e}"
        return ("-" if v < 0 else "") + (f"${body}$" if "^" in body else body)
    if a >= 1000:
        return f"{v:,.0f}"
    return f"{v:.6g}"


def _formatter(minor: bool = False):
    """A matplotlib ``Formatter`` of :func:`plain` labels (for a log axis's
    minor ticks with ``minor``)."""
    from matplotlib.ticker import Formatter

    class PlainFormatter(Formatter):
        """:func:`plain` tick labels; a log axis's minor ticks at 2 and 5 x
        10^k are labelled only when the axis spans less than ~1.3 decades."""

        def __call__(self, x, pos=None):
            if minor:
                lo, hi = sorted(abs(float(v)) for v in self.axis.get_view_interval())
                if x <= 0 or lo <= 0 or hi / lo > 20:
                    return ""
                m = x / 10 ** np.floor(np.log10(x))
                if not (np.isclose(m, 2) or np.isclose(m, 5)):
                    return ""
            return plain(x)

    return PlainFormatter()


def plain_ticks(ax, axis: str = "y") -> None:
    """:func:`plain` tick labels on ``ax``'s ``axis`` ("x" or "y"); call it
    after the axis's scale is set (setting a scale resets the labels)."""
    a = ax.yaxis if axis == "y" else ax.xaxis
    a.set_major_formatter(_formatter())
    if a.get_scale() == "log":
        a.set_minor_formatter(_formatter(minor=True))


def value_scale(ax, values, axis: str = "y", label: str | None = None) -> str:
    """A log scale on ``axis`` where every finite value is positive; where
    some are zero or negative, symlog, linear through 0 up to the decade of
    the smallest positive value (a zero is drawn at zero, never faked as a
    small number).  Plain tick labels.  ``label``: the axis label, its
    ``{scale}`` replaced by ``log`` (and a second line ``(linear below
    0.1)``, say, for symlog).  Returns the scale's name."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    setter = ax.set_yscale if axis == "y" else ax.set_xscale
    if v.size and (v > 0).all():
        setter("log")
        name, word = "log", "log"
    else:
        pos = v[v > 0]
        lin = 10 ** np.floor(np.log10(pos.min())) if pos.size else 1.0
        setter("symlog", linthresh=lin, linscale=0.6)
        name, word = "symlog", "log"
    plain_ticks(ax, axis)
    if label is not None:
        text = label.replace("{scale}", word) + (f"\n(linear below {plain(lin)})" if name == "symlog" else "")
        (ax.set_ylabel if axis == "y" else ax.set_xlabel)(text)
    return name


def na_marks(ax, where, at: float = 0.02, text: str = "n/a", *, horizontal: bool = False) -> None:
    """Write ``text`` at the categorical positions ``where`` (data
    coordinates), ``at`` (axes fraction) from the value axis's start: the
    mark of an undefined value, or of a true zero (``text="0"``) that a bar
    of no height would hide."""
    for p in where:
        if horizontal:
            ax.text(at, p, text, transform=ax.get_yaxis_transform(), ha="left", va="center", color="0.3")
        else:
            ax.text(p, at, text, transform=ax.get_xaxis_transform(), ha="center", va="bottom", color="0.3")
