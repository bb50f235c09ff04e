"""``epochbench compare A B``: did a change make a method better or worse?

A and B are two saved runs: an ``epochbench bench`` results folder (its
``bench-solves.csv``, one row per solve) or a pytest-benchmark JSON file
(``--benchmark-json`` / ``--benchmark-autosave``: each benchmark's
``extra_info`` gaps and its timing median).  Per family and method the
change in mean and max gap (percentage points) and in median decision time
(ratio B / A) is printed; a change in gap is flagged whenever it is not
zero (gaps are deterministic for a seed), a change in time when the ratio
leaves ``[1 / TIME_NOISE, TIME_NOISE]`` (timings on a shared machine move by
that much without any change).  ``--fail-on gap:0.5%`` / ``time:20%``
make the command exit 1 when a method gets worse beyond the threshold.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: a median-time ratio within [1 / TIME_NOISE, TIME_NOISE] is noise
TIME_NOISE = 1.25
#: columns of :func:`load`
COLUMNS = ["family", "method", "solves", "mean_gap", "max_gap", "median_ms"]


def _from_solves(path: Path) -> pd.DataFrame:
    df = pd.read_csv(path)
    missing = {"family", "method", "gap", "seconds"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: not a bench-solves.csv (missing columns {sorted(missing)})")
    out = []
    for (fam, method), g in df.groupby(["family", "method"], sort=False):
        gaps = g["gap"].astype(float).dropna()
        out.append({"family": fam, "method": method, "solves": len(g),
                    "mean_gap": gaps.mean() if len(gaps) else np.nan, "max_gap": gaps.max() if len(gaps) else np.nan,
                    "median_ms": 1000 * float(g["seconds"].astype(float).median())})
    return pd.DataFrame(out, columns=COLUMNS)


def _family_of(bench: dict) -> str:
    info = bench.get("extra_info") or {}
    if "family" in info:
        return str(info["family"])
    group = bench.get("group") or bench.get("name", "")
    return re.split(r"[-\[_ ]", group, maxsplit=1)[0] or "?"


def _from_benchmark_json(path: Path) -> pd.DataFrame:
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    benches = data.get("benchmarks") if isinstance(data, dict) else None
    if not isinstance(benches, list):
        raise ValueError(f"{path}: not a pytest-benchmark file (no 'benchmarks' list)")
    rows = []
    for b in benches:
        info = b.get("extra_info") or {}
        method = info.get("method") or (b.get("params") or {}).get("method")
        if method is None:
            continue
        stats = b.get("stats") or {}
        weight = float(info.get("instances") or info.get("problems") or 1)
        rows.append({"family": _family_of(b), "method": str(method), "weight": weight,
                     "mean_gap": info.get("mean_gap", info.get("mean_gap_best")), "max_gap": info.get("max_gap"),
                     "median_ms": 1000 * float(stats["median"]) if "median" in stats else np.nan})
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    for (fam, method), g in df.groupby(["family", "method"], sort=False):
        mg = pd.to_numeric(g["mean_gap"], errors="coerce")
        ok = mg.notna()
        out.append({"family": fam, "method": method, "solves": int(g["weight"].sum()),
                    "mean_gap": float(np.average(mg[ok], weights=g["weight"][ok])) if ok.any() else np.nan,
                    "max_gap": pd.to_numeric(g["max_gap"], errors="coerce").max(),
                    "median_ms": float(g["median_ms"].median())})
    return pd.DataFrame(out, columns=COLUMNS)


def load(path) -> pd.DataFrame:
    """One saved run, per (family, method): solves, mean and max gap
    (fractions), median decision time (ms).  ``path``: a run folder of
    ``epochbench bench`` (or a run's name under ``./results``), its
    ``bench-solves.csv``, or a pytest-benchmark JSON file."""
    path = Path(path)
    if not path.exists() and len(path.parts) == 1 and (Path("results") / path).is_dir():
        path = Path("results") / path                      # a run's name (epochbench runs lists them)
    if path.is_dir():
        solves = path / "bench-solves.csv"
        if not solves.is_file():
            raise ValueError(f"{path}: no bench-solves.csv (a results folder of 'epochbench bench')")
        return _from_solves(solves)
    if not path.is_file():
        raise ValueError(f"{path}: no such file or folder")
    if path.suffix == ".csv":
        return _from_solves(path)
    return _from_benchmark_json(path)


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Per (family, method) in either run: the gaps and times of A and B, the
    changes (``d_mean`` and ``d_max`` in percentage points, ``time_ratio`` =
    B / A) and ``flag``: ``gap+`` / ``gap-`` (worse / better gap), ``slower`` /
    ``faster`` (beyond :data:`TIME_NOISE`), ``new`` / ``gone``."""
    m = a.merge(b, on=["family", "method"], how="outer", suffixes=("_a", "_b"), sort=False)
    m["d_mean"] = 100 * (m["mean_gap_b"] - m["mean_gap_a"])
    m["d_max"] = 100 * (m["max_gap_b"] - m["max_gap_a"])
    m["time_ratio"] = m["median_ms_b"] / m["median_ms_a"]
    m["flag"] = [_flags(r) for r in m.itertuples()]
    return m


def _flags(r) -> str:
    if pd.isna(r.solves_a):
        return "new"
    if pd.isna(r.solves_b):
        return "gone"
    out = []
    if abs(r.d_mean) > 1e-9 or abs(r.d_max) > 1e-9:
        out.append("gap+" if (r.d_mean > 1e-9 or (abs(r.d_mean) <= 1e-9 and r.d_max > 0)) else "gap-")
    if r.time_ratio > TIME_NOISE:
        out.append("slower")
    elif r.time_ratio < 1 / TIME_NOISE:
        out.append("faster")
    return " ".join(out)


@dataclass(frozen=True)
class Threshold:
    """``gap:0.5%``: fail when a method's mean gap grows by more than 0.5
    percentage points; ``time:20%``: when its median time grows by more than 20 %."""

    what: str
    limit: float

    @classmethod
    def parse(cls, text: str) -> "Threshold":
        m = re.fullmatch(r"(gap|time):([0-9]*\.?[0-9]+)%?", text.strip())
        if not m:
            raise ValueError(f"--fail-on {text!r}: expected gap:X% (percentage points) or time:X%")
        return cls(m.group(1), float(m.group(2)))

    def broken_by(self, table: pd.DataFrame) -> pd.DataFrame:
        if self.what == "gap":
            return table[table["d_mean"] > self.limit + 1e-9]
        return table[table["time_ratio"] > 1 + self.limit / 100]


def format_comparison(table: pd.DataFrame) -> str:
    """The comparison as text (one block per family, under 100 columns)."""
    def pct(x):
        return "-" if pd.isna(x) else f"{100 * x:.2f}"

    def pp(x):
        return "-" if pd.isna(x) else f"{x:+.2f}"
    lines = []
    for fam, g in table.groupby("family", sort=False):
        shown = pd.DataFrame({"method": g["method"], "mean A %": g["mean_gap_a"].map(pct),
                              "mean B %": g["mean_gap_b"].map(pct), "d mean pp": g["d_mean"].map(pp),
                              "d max pp": g["d_max"].map(pp),
                              "ms A": g["median_ms_a"].map(lambda x: "-" if pd.isna(x) else f"{x:.3g}"),
                              "ms B": g["median_ms_b"].map(lambda x: "-" if pd.isna(x) else f"{x:.3g}"),
                              "B/A": g["time_ratio"].map(lambda x: "-" if pd.isna(x) else f"{x:.2f}"),
                              "flag": g["flag"]})
        lines += [f"{fam}:", shown.to_string(index=False), ""]
    return "\n".join(lines).rstrip()
