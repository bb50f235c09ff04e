"""The benchmark run's one figure: per family, the gap of every method
against its median decision time, with the Pareto front (no method both
faster and closer to the reference), heuristics and exact methods told apart."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def pareto_front(table: pd.DataFrame) -> pd.DataFrame:
    """The methods no other method beats on both median time and mean gap
    (ties count as not beaten), by increasing time, among those that
    answered every solve in full (``no ans`` and ``short`` 0 where the table
    has them: the leaderboard ranks the others after them, and their mean
    gap is over part of the solves; ``mis``, short of the maximum matching
    on 27 of 30 solves, sat on the front).  O(m log m)."""
    full = pd.Series(True, index=table.index)
    for col in ("no ans", "short"):
        if col in table:
            full &= table[col].fillna(0).eq(0)
    t = table[full].dropna(subset=["mean %", "median ms"]).sort_values(["median ms", "mean %"], kind="stable")
    front, best = [], np.inf
    for r in t.itertuples(index=False):
        gap = r[t.columns.get_loc("mean %")]
        if gap < best - 1e-12:
            front.append(r)
            best = gap
    return pd.DataFrame(front, columns=t.columns)


#: label offsets tried in turn (points from the marker): right, left, above, below, then farther out
_OFFSETS = ((4, 2), (4, -9), (-4, 2), (-4, -9), (4, 10), (4, -17), (-4, 10), (-4, -17), (10, 18), (10, -25),
            (-10, 18), (-10, -25), *((dx, 18 + 10 * k) for k in range(1, 7) for dx in (10, -10)))
#: offsets this far from the point get a leader line to it
_LEADER = 12


def _clusters(pts: np.ndarray, radius: float) -> list[list[int]]:
    """Points within ``radius`` (display pixels) of a cluster's first point
    join it (greedy, in order): one label names them all."""
    out: list[list[int]] = []
    for i, p in enumerate(pts):
        for c in out:
            if np.hypot(*(pts[c[0]] - p)) <= radius:
                c.append(i)
                break
        else:
            out.append([i])
    return out


def place_labels(ax, xs, ys, names, fontsize: float = 7) -> None:
    """Name each point: points that nearly coincide (within 8 pixels) share
    one label listing them; each label tries the offsets of :data:`_OFFSETS`
    (a leader line to a label moved far up or down) until it lies inside the
    axes and overlaps no label placed before it and no other point (greedy,
    in order of decreasing y); the first try inside the axes is kept when
    all overlap.  O(m^2) per try for m points."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    pts = ax.transData.transform(np.column_stack([xs, ys]))
    inside = ax.get_window_extent(renderer)
    taken: list = []
    groups = _clusters(pts, 8.0)
    for g in sorted(groups, key=lambda g: -max(ys[i] for i in g)):
        i = g[0]
        text = ", ".join(names[j] for j in g)
        kept = None
        for dx, dy in _OFFSETS:
            ann = ax.annotate(text, (xs[i], ys[i]), textcoords="offset points", xytext=(dx, dy),
                              fontsize=fontsize, ha="left" if dx >= 0 else "right")
            box = ann.get_window_extent(renderer).expanded(1.05, 1.1)      # the text alone
            within = (box.x0 >= inside.x0 and box.x1 <= inside.x1 and box.y0 >= inside.y0
                      and box.y1 <= inside.y1)
            hits = any(box.overlaps(b) for b in taken) or any(
                box.contains(px, py) for j, (px, py) in enumerate(pts) if j not in g)
            if within and not hits:
                if kept is not None:
                    kept[0].remove()
                kept = (ann, box)
                break
            if within and kept is None:
                kept = (ann, box)                  # the first try inside the axes, if none is free
                continue
            ann.remove()
        if kept is None:                           # nothing fits inside: the first offset
            ann = ax.annotate(text, (xs[i], ys[i]), textcoords="offset points", xytext=_OFFSETS[0],
                              fontsize=fontsize, ha="left")
            kept = (ann, ann.get_window_extent(renderer))
        ann = kept[0]
        if abs(ann.xyann[1]) > _LEADER:            # moved far from its point: drawn again with a line to it
            ann.remove()
            ax.annotate(text, (xs[i], ys[i]), textcoords="offset points", xytext=ann.xyann, fontsize=fontsize,
                        ha=ann.get_ha(), arrowprops=dict(arrowstyle="-", lw=0.5, color="0.5", shrinkA=0,
                                                         shrinkB=2))
        taken.append(kept[1])


def leaderboard_figure(boards: dict[str, pd.DataFrame], path) -> Path:
    """One panel per family (per family and instance set where a board has
    several, :func:`epochbench.suite.board_blocks`): mean gap (%, y) against
    median decision time (ms, x, log), one point per method, exact methods
    as squares, the Pareto front as a line; one legend for the figure.
    Written atomically to ``path`` (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, NullFormatter

    from epochbench.instances.files import atomic_path
    from epochbench.suite import board_blocks
    panels = {(fam if name is None else f"{fam}: {name}"[:48]): t
              for fam, table in boards.items() for name, t in board_blocks(table)}
    fams = [f for f, t in panels.items() if t["mean %"].notna().any()]
    cols = min(3, max(1, len(fams)))
    rows = int(np.ceil(len(fams) / cols)) if fams else 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax in axes.flat[len(fams):]:
        ax.set_visible(False)
    for ax, fam in zip(axes.flat, fams):
        t = panels[fam].dropna(subset=["mean %"])
        for kind, marker, color in (("heuristic", "o", "tab:blue"), ("exact", "s", "tab:red")):
            k = t[t["kind"] == kind]
            ax.scatter(k["median ms"], k["mean %"], marker=marker, color=color, s=28, zorder=3)
        front = pareto_front(t)
        ax.step(front["median ms"], front["mean %"], where="post", color="0.4", lw=1, zorder=2)
        ax.set_xscale("log")
        lo, hi = float(t["median ms"].min()), float(t["median ms"].max())
        mid = np.sqrt(lo * hi)
        half = max(hi / lo, 10.0) ** 0.5                      # at least a decade
        ax.set_xlim(mid / half / 2.0, mid * half * 4.0)       # room for the labels, right of the points
        ax.xaxis.set_major_locator(LogLocator(base=10))
        ax.xaxis.set_minor_formatter(NullFormatter())
        top = float(t["mean %"].max())
        ax.set_ylim(-0.05 * max(top, 1.0), 1.12 * max(top, 1.0))
        ax.set_title(fam, fontsize=10)
        ax.set_xlabel("median decision time (ms, log)")
        ax.set_ylabel("mean gap to the reference (%)")
        ax.grid(True, which="major", alpha=0.3)
    handles = [plt.Line2D([], [], marker="o", ls="", color="tab:blue", label="heuristic"),
               plt.Line2D([], [], marker="s", ls="", color="tab:red", label="exact"),
               plt.Line2D([], [], color="0.4", lw=1, label="Pareto front (faster or closer)")]
    fig.legend(handles=handles, loc="lower center", ncol=3, frameon=False, fontsize=8)
    fig.suptitle("epochbench: gap against decision time, per family", fontsize=11)
    fig.tight_layout(rect=(0, 0.06, 1, 0.95))
    for ax, fam in zip(axes.flat, fams):                  # labels last: the layout is final
        t = panels[fam].dropna(subset=["mean %"])
        place_labels(ax, t["median ms"].to_numpy(float), t["mean %"].to_numpy(float), list(t.iloc[:, 0]))
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=130, format="png")
    plt.close(fig)
    return path
