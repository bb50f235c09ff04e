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
make the command exit 1 when a method gets worse beyond the threshold, or
is gone from B (measured in A, not in B: worse by an unknown amount).
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
#: columns of :func:`load` (``gapped``: solves with a gap, i.e. a solution and a reference)
COLUMNS = ["family", "method", "solves", "gapped", "mean_gap", "max_gap", "median_ms"]


def _numbers(df: pd.DataFrame, column: str, path: Path) -> pd.Series:
    """Column ``column`` as floats; ValueError naming the file and the value."""
    got = pd.to_numeric(df[column], errors="coerce")
    bad = got.isna() & df[column].notna()
    if bad.any():
        raise ValueError(f"{path}: column {column!r} has {df[column][bad].iloc[0]!r}, not a number")
    return got.astype(float)


def _from_solves(path: Path) -> pd.DataFrame:
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not a readable CSV ({type(exc).__name__})") from None
    missing = {"family", "method", "gap", "seconds"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: not a bench-solves.csv (missing columns {sorted(missing)})")
    df = df.assign(gap=_numbers(df, "gap", path), seconds=_numbers(df, "seconds", path))
    out = []
    for (fam, method), g in df.groupby(["family", "method"], sort=False):
        gaps = g["gap"].dropna()
        out.append({"family": fam, "method": method, "solves": len(g), "gapped": len(gaps),
                    "mean_gap": gaps.mean() if len(gaps) else np.nan, "max_gap": gaps.max() if len(gaps) else np.nan,
                    "median_ms": 1000 * float(g["seconds"].median())})
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
    for i, b in enumerate(benches):
        where = f"{path}: benchmark {i}"
        if not isinstance(b, dict):
            raise ValueError(f"{where} is not an object")
        info, params, stats = (b.get(k) or {} for k in ("extra_info", "params", "stats"))
        for key, val in (("extra_info", info), ("params", params), ("stats", stats)):
            if not isinstance(val, dict):
                raise ValueError(f"{where}: '{key}' is not an object")
        method = info.get("method") or params.get("method")
        if method is None:
            continue
        median = stats.get("median")
        if median is not None and not (isinstance(median, (int, float)) and not isinstance(median, bool)):
            raise ValueError(f"{where}: stats.median {median!r} is not a number")
        try:
            weight = float(info.get("instances") or info.get("problems") or 1)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: extra_info.instances is not a number") from None
        rows.append({"family": _family_of(b), "method": str(method), "weight": weight,
                     "mean_gap": info.get("mean_gap", info.get("mean_gap_best")), "max_gap": info.get("max_gap"),
                     "median_ms": 1000 * float(median) if median is not None else np.nan})
    df = pd.DataFrame(rows)
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = []
    for (fam, method), g in df.groupby(["family", "method"], sort=False):
        mg = pd.to_numeric(g["mean_gap"], errors="coerce")
        ok = mg.notna()
        out.append({"family": fam, "method": method, "solves": int(g["weight"].sum()),
                    "gapped": int(g["weight"][ok].sum()),
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
    B / A), ``lost_gaps`` (:func:`_lost_gaps`), ``gone`` (in A, not in B)
    and ``flag``: ``gaps-lost``, ``gap+`` / ``gap-`` (worse / better gap),
    ``slower`` / ``faster`` (beyond :data:`TIME_NOISE`), ``new`` / ``gone``."""
    m = a.merge(b, on=["family", "method"], how="outer", suffixes=("_a", "_b"), sort=False)
    m["d_mean"] = 100 * (m["mean_gap_b"] - m["mean_gap_a"])
    m["d_max"] = 100 * (m["max_gap_b"] - m["max_gap_a"])
    m["time_ratio"] = m["median_ms_b"] / m["median_ms_a"]
    m["lost_gaps"] = _lost_gaps(m)
    m["gone"] = (m["solves_a"].notna() & m["solves_b"].isna()).astype(bool)
    m["flag"] = [_flags(r) for r in m.itertuples()]
    return m


def _lost_gaps(m: pd.DataFrame) -> pd.Series:
    """Methods with a smaller share of solves with a gap in B than in A (a
    solve that found no solution, or lost its reference): the mean over the
    rest would hide it."""
    share_a = m["gapped_a"] / m["solves_a"]
    share_b = m["gapped_b"] / m["solves_b"]
    return (m["solves_a"].notna() & m["solves_b"].notna() & (share_b < share_a - 1e-12)).astype(bool)


def _flags(r) -> str:
    if pd.isna(r.solves_a):
        return "new"
    if pd.isna(r.solves_b):
        return "gone"
    out = ["gaps-lost"] if r.lost_gaps else []
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
    percentage points; ``time:20%``: when its median time grows by more than 20 %.
    Either fails a method that is gone from B (nothing measured: worse by
    an unknown amount); a method new in B fails neither."""

    what: str
    limit: float

    @classmethod
    def parse(cls, text: str) -> "Threshold":
        m = re.fullmatch(r"(gap|time):([0-9]*\.?[0-9]+)%?", text.strip())
        if not m:
            raise ValueError(f"--fail-on {text!r}: expected gap:X% (percentage points) or time:X%")
        return cls(m.group(1), float(m.group(2)))

    def broken_by(self, table: pd.DataFrame) -> pd.DataFrame:
        """The rows of :func:`compare`'s ``table`` that break this threshold."""
        gone = table["gone"] if "gone" in table else table["solves_b"].isna() & table["solves_a"].notna()
        if self.what == "gap":   # a method that lost gaps is worse by an unknown amount: it fails too
            return table[(table["d_mean"] > self.limit + 1e-9) | table["lost_gaps"] | gone]
        return table[(table["time_ratio"] > 1 + self.limit / 100) | gone]


def format_comparison(table: pd.DataFrame) -> str:
    """The comparison as text (one block per family, under 100 columns;
    times as the leaderboards write them, :func:`epochbench.suite.ms_text`)."""
    from .suite import ms_text
    def pct(x):
        return "-" if pd.isna(x) else f"{100 * x:.2f}"

    def pp(x):
        return "-" if pd.isna(x) else f"{x:+.2f}"
    lines = []
    for fam, g in table.groupby("family", sort=False):
        shown = pd.DataFrame({"method": g["method"], "mean A %": g["mean_gap_a"].map(pct),
                              "mean B %": g["mean_gap_b"].map(pct), "d mean pp": g["d_mean"].map(pp),
                              "d max pp": g["d_max"].map(pp),
                              "ms A": g["median_ms_a"].map(ms_text), "ms B": g["median_ms_b"].map(ms_text),
                              "B/A": g["time_ratio"].map(lambda x: "-" if pd.isna(x) else f"{x:.2f}"),
                              "flag": g["flag"]})
        lines += [f"{fam}:", shown.to_string(index=False), ""]
    return "\n".join(lines).rstrip()
