"""``epochbench compare A B``: did a change make a method better or worse?

A and B are two saved runs: an ``epochbench bench`` results folder (its
``bench-solves.csv``, one row per solve), a ``score`` CSV (``PREFIX.csv``:
one row per solve, matched by instance) or a pytest-benchmark JSON file
(``--benchmark-json`` / ``--benchmark-autosave``: each benchmark's
``extra_info`` gaps and its timing median).  Per family, instance set
and method the change in mean and max gap (percentage points) and in
decision time is printed: ``B/A`` is the median over the instances both
runs measured of B's time / A's time (:func:`_paired_ratios`); the
instance sets are the leaderboards' blocks
(:func:`~epochbench.suite.instance_sets`: mapping's heuristics on 512 x 16
matrices, its exact methods and the heuristics again on 32 x 4 ones),
compared and guarded each on its own; a method's gaps are compared on
the instances where both runs have one (a gap in one run alone, where the
other had no reference or no answer, is said and left out:
:func:`_paired_gaps`; one lost in B is flagged).  A change in gap is flagged whenever
it is not zero (gaps are deterministic for a seed), a change in time when the ratio
leaves ``[1 / TIME_NOISE, TIME_NOISE]`` (timings on a shared machine move by
that much without any change; a ``--fail-on time:X%`` below that band
flags ``slower`` from its own limit, so that every FAIL is flagged).
``--fail-on gap:0.5%`` / ``time:20%`` (a value without its ``%`` is read
with it, and said) make the
command exit 1 when a method gets worse beyond the threshold, or is gone
from B (measured in A, not in B: worse by an unknown amount).

A and B must be of one kind: solves (results folders, ``bench-solves.csv``
or ``score`` CSVs; a folder against a score CSV compares gaps on the
instance names both hold, not times: :func:`_timing`) or JSON files: the kinds
measure time differently (a median over solves of decision times; a
median of each benchmark's median round time) and group solves
differently (a JSON file's family and method are its benchmarks', so that
``mapping``'s ``sa@1s`` of a folder is a ``sa`` benchmark there), so a
folder against a JSON file, even of one run, would show changes that are
none; it is refused (:func:`compare_runs`).
"""
from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

#: a median-time ratio within [1 / TIME_NOISE, TIME_NOISE] is noise
TIME_NOISE = 1.25
#: columns of :func:`load` (``gapped``: solves with a gap, i.e. a solution and a reference), which
#: adds ``set`` after them: the instance set, as the leaderboards' blocks, "" where a run is not cut
#: into sets (:func:`compare_runs` cuts both runs by what they measured in common)
COLUMNS = ["family", "method", "solves", "gapped", "mean_gap", "max_gap", "median_ms"]
#: the keys of a row of :func:`load` and :func:`compare`
ROW = ["family", "set", "method"]


def _numbers(df: pd.DataFrame, column: str, path: Path, low: float = -np.inf) -> pd.Series:
    """Column ``column`` as floats; ValueError naming the file and the value
    when one is not a number, infinite or below ``low`` (empty cells stay NaN)."""
    got = pd.to_numeric(df[column], errors="coerce").astype(float)
    bad = (got.isna() & df[column].notna()) | np.isinf(got) | (got < low)
    if bad.any():
        what = "not a number" if not np.isfinite(low) else f"not a finite number >= {low:g}"
        cell = df[column][bad].iloc[0]
        raise ValueError(f"{path}: column {column!r} has {getattr(cell, 'item', lambda: cell)()!r}, {what}")
    return got


def _csv_text(path: Path) -> tuple[bytes, str | None]:
    """The bytes of a CSV file, cut after its last complete line, and a note
    when something was cut: a last line with fewer cells than the header
    and no line break was cut short (a copy or a disk that stopped
    mid-row), and is left out, said, rather than read with empty cells; a
    last row with all its cells is kept, line break or not."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if not data or data.endswith(b"\n") or not end:
        return data, None
    try:
        header, tail = (next(csv.reader([line])) for line in (data[:data.find(b"\n")].decode(),
                                                               data[end:].decode()))
    except (UnicodeDecodeError, StopIteration, csv.Error):
        header, tail = [], []
    if len(tail) >= len(header):          # a whole last row without its line break (a hand edit, another tool)
        return data + b"\n", None
    return data[:end], f"{path}: ends mid-row (cut short?): its last, partial row is left out"


#: the columns of a solves CSV that hold names, read as text (pandas reads "NA", "null" and "nan" as missing)
_NAMES = ("family", "method", "config", "instance")


def _solve_rows(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """A ``bench-solves.csv`` or a ``score`` CSV: one row per solve (``family``, ``method``,
    ``key`` = config and instance where the file has them, the instance
    alone where it has no config (``instance``, ``by_config`` kept: a
    results folder beside a score CSV is matched by instance), ``gap``,
    ``seconds``), and the lines to say about it: a torn last row is left
    out and said (:func:`_csv_text`)."""
    import io
    data, torn = _csv_text(path)
    try:
        df = pd.read_csv(io.BytesIO(data))
        names = [c for c in _NAMES if c in df.columns]
        if names:    # as written: a method or instance named NA, null or nan is no missing value
            raw = pd.read_csv(io.BytesIO(data), usecols=names, dtype=str, keep_default_na=False)
            df[names] = raw[names].replace("", np.nan)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        said = " ".join(str(exc).split())[:160]       # pandas names the line ("Expected 9 fields in line 3, saw 10")
        raise ValueError(f"{path}: not a readable CSV ({type(exc).__name__}{': ' + said if said else ''})") from None
    missing = {"family", "method", "gap", "seconds"} - set(df.columns)
    if missing:
        raise ValueError(f"{path}: not a bench-solves.csv (missing columns {sorted(missing)})")
    if df.empty:
        raise ValueError(f"{path}: no solves")
    _no_blank_keys(df, path)
    instance = df["instance"].astype(str) if "instance" in df.columns else pd.Series(np.nan, df.index)
    if {"config", "instance"} <= set(df.columns):
        key = df["config"].astype(str) + "\x1f" + instance
    else:                                     # a score CSV: its instances alone (its subsets were not matched)
        key = instance
    seconds = _numbers(df, "seconds", path, low=0.0)
    timed = df["status"].astype(str).ne("error") if "status" in df.columns else pd.Series(True, df.index)
    if (seconds.isna() & timed).any():       # only a score CSV's error rows have no time
        row = int(np.flatnonzero(seconds.isna() & timed)[0]) + 2
        raise ValueError(f"{path}: line {row} has no seconds (a solve that is not an error row has a time)")
    twice = key.notna() & pd.DataFrame({"f": df["family"], "m": df["method"], "k": key}).duplicated()
    if twice.any():
        row = int(np.flatnonzero(twice)[0])
        where = f" ({df['config'].iloc[row]})" if "config" in df.columns else ""
        raise ValueError(f"{path}: line {row + 2} repeats {df['method'].iloc[row]} on instance "
                         f"{instance.iloc[row]}{where}")
    out = pd.DataFrame({"family": df["family"].astype(str), "method": df["method"].astype(str), "key": key,
                        "instance": instance, "by_config": "config" in df.columns,
                        "config": df["config"].astype(str) if "config" in df.columns else np.nan,
                        "gap": _numbers(df, "gap", path, low=0.0),
                        "gap_kind": df["gap_kind"].astype(str).where(df["gap_kind"].notna())
                        if "gap_kind" in df.columns else np.nan,
                        # a score CSV's value and reference in the family's units: B against A's reference
                        "value": _family_column(df, "value"), "ref": _family_column(df, "bound"),
                        "seconds": seconds,
                        # what a time is: a median over a benchmark's rounds (bench-solves.csv), or the
                        # one checked call that gave the answer (a score CSV, bench-scores.csv: its value)
                        "timing": "call" if "value" in df.columns or "config" not in df.columns else "rounds",
                        "digest": df["instance_digest"] if "instance_digest" in df.columns else np.nan})
    unnamed = [] if "instance" in df.columns else [   # compared whole (compare_runs), said: not silently
        f"{path} names no instances: its methods are compared on all of each run's solves, not on the instances "
        "both measured (a count that differs is no change of gap)"]
    return out, ([torn] if torn else []) + unnamed


def _no_blank_keys(df: pd.DataFrame, path: Path) -> None:
    """Refuse a row with a blank ``family``, ``method``, ``config`` or
    ``instance`` (where the file has the column): a blank method or family
    dropped the row without a word (pandas' groupby leaves NaN keys out),
    and one blank instance turned off the matching of instances for the
    whole file (a method compared on 4 instances against 3, a false gain)."""
    for name in ("family", "method", "config", "instance"):
        if name in df.columns:
            blank = df[name].isna() | df[name].astype(str).str.strip().eq("")
            if blank.any():
                row = int(np.flatnonzero(blank)[0]) + 2
                raise ValueError(f"{path}: line {row} has no {name}")


def _family_column(df: pd.DataFrame, name: str):
    """A score CSV's ``family_value`` / ``family_bound`` (the family's units,
    whose sense the family gives), else ``value`` / ``bound`` where they are
    in those units (``units`` "family"); NaN for a file without them
    (``bench-solves.csv`` holds gaps only)."""
    if f"family_{name}" in df.columns:
        return pd.to_numeric(df[f"family_{name}"], errors="coerce")
    if name in df.columns and ("units" not in df.columns or df["units"].astype(str).eq("family").all()):
        return pd.to_numeric(df[name], errors="coerce")
    return np.nan


def _with_set(rows: pd.DataFrame) -> pd.DataFrame:
    return rows if "set" in rows else rows.assign(set="")


def _from_solves(rows: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (fam, st, method), g in _with_set(rows).groupby(ROW, sort=False):
        gaps = g["gap"].dropna()
        out.append({"family": fam, "set": st, "method": method, "solves": len(g), "gapped": len(gaps),
                    "mean_gap": gaps.mean() if len(gaps) else np.nan, "max_gap": gaps.max() if len(gaps) else np.nan,
                    "median_ms": 1000 * float(g["seconds"].median())})
    return pd.DataFrame(out, columns=[*COLUMNS, "set"])


def _family_of(bench: dict, where: str = "benchmark") -> str:
    """The benchmark's family: ``extra_info.family``, else the first word of
    its group or name.  A field of another JSON type than a string is a
    ValueError naming ``where`` and the field (a family ``True`` or
    ``{"x": 1}`` was compared as one)."""
    info = bench.get("extra_info") or {}
    if "family" in info:
        return _text(info["family"], where, "extra_info.family")
    key = "group" if bench.get("group") else "name"
    group = _text(bench.get(key, ""), where, key, empty_ok=True)
    return re.split(r"[-\[_ ]", group, maxsplit=1)[0] or "?"


def _text(value, where: str, what: str, empty_ok: bool = False) -> str:
    """``value`` as a string; ValueError naming ``where`` and ``what`` for
    another JSON type (or an empty string, unless ``empty_ok``)."""
    if not isinstance(value, str) or not (value or empty_ok):
        raise ValueError(f"{where}: {what} {value!r} is not a name (a non-empty string)")
    return value


def _number(value, where: str, what: str, low: float = 0.0, none_ok: bool = True) -> float:
    """``value`` as a finite float >= ``low`` (None: NaN where allowed);
    ValueError naming ``where`` and ``what`` otherwise."""
    if value is None and none_ok:
        return np.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < low:
        raise ValueError(f"{where}: {what} {value!r} is not a finite number >= {low:g}")
    return float(value)


def _benchmark_rows(path: Path) -> pd.DataFrame:
    """A pytest-benchmark JSON file: one row per benchmark with a method
    (``key``: the benchmark's name, ``weight``: the instances it scored)."""
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:                     # arrays or objects nested thousands deep
        raise ValueError(f"{path}: not a pytest-benchmark file (JSON nested too deep to read)") from None
    except UnicodeDecodeError:                 # a Parquet or PNG file given: the message named no file
        raise ValueError(f"{path}: not a text file (a pytest-benchmark JSON file, a bench-solves.csv or a score "
                         "CSV, or a results folder)") from None
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
        method = _text(method, where, "extra_info.method")
        field = next((k for k in ("instances", "problems") if info.get(k) is not None), None)
        weight = _number(info[field], where, f"extra_info.{field}", low=1, none_ok=False) if field else 1.0
        if not weight.is_integer():
            raise ValueError(f"{where}: extra_info.{field} {info[field]!r} is not a whole number of instances")
        rows.append({"family": _family_of(b, where), "method": method, "key": str(b.get("name", i)),
                     "weight": weight,
                     "mean_gap": _number(info.get("mean_gap", info.get("mean_gap_best")), where, "extra_info.mean_gap"),
                     "max_gap": _number(info.get("max_gap"), where, "extra_info.max_gap"),
                     "median_ms": 1000 * _number(median, where, "stats.median")})
    if not rows:
        raise ValueError(f"{path}: no benchmark of a method (extra_info.method)")
    out = pd.DataFrame(rows)
    twice = out["key"].duplicated()
    if twice.any():              # a file edited or merged by hand: its medians would count twice
        raise ValueError(f"{path}: benchmark {out['key'][twice].iloc[0]!r} appears twice")
    return out


def _from_benchmarks(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (fam, st, method), g in _with_set(df).groupby(ROW, sort=False):
        mg = g["mean_gap"]
        ok = mg.notna()
        out.append({"family": fam, "set": st, "method": method, "solves": int(g["weight"].sum()),
                    "gapped": int(g["weight"][ok].sum()),
                    "mean_gap": float(np.average(mg[ok], weights=g["weight"][ok])) if ok.any() else np.nan,
                    "max_gap": g["max_gap"].max(), "median_ms": float(g["median_ms"].median())})
    return pd.DataFrame(out, columns=[*COLUMNS, "set"])


def _resolve(path) -> Path:
    path = Path(path)
    if not path.exists() and len(path.parts) == 1 and (Path("results") / path).is_dir():
        path = Path("results") / path                      # a run's name (epochbench runs lists them)
    if path.is_dir():
        solves = path / "bench-solves.csv"
        if not solves.is_file() and (path / "run.json").is_file():    # a run's folder: why it holds none
            raise ValueError(_no_solves(path))
        if not solves.is_file():
            raise ValueError(f"{path}: no bench-solves.csv (a results folder of 'epochbench bench')")
        return solves
    if not path.is_file():
        raise ValueError(f"{path}: no such file or folder")
    return path


def _no_solves(path: Path) -> str:
    """Why run folder ``path`` (it has a ``run.json``) holds no
    ``bench-solves.csv``: a bench run that scored no gap, or another
    command's run."""
    from . import runs
    info = runs.read(path / "run.json") or {}
    command = info.get("command")
    if isinstance(command, str) and command != "bench":
        return (f"{path}: a run folder of 'epochbench {command}', which writes no bench-solves.csv; compare "
                "takes bench run folders, score CSVs or pytest-benchmark JSON files")
    return (f"{path}: a run folder without bench-solves.csv: its run scored no gap (only speed benchmarks were "
            "selected) or stopped before the end ('epochbench runs' says which)")


def rows(path) -> tuple[str, pd.DataFrame]:
    """One saved run as read: ``("solves", one row per solve)`` from a
    ``bench-solves.csv``, or ``("benchmarks", one row per benchmark)`` from
    a pytest-benchmark JSON file; each row has a ``key`` saying what was
    measured (config and instance; the benchmark's name)."""
    return _read(path)[:2]


def _read(path) -> tuple[str, pd.DataFrame, list[str]]:
    """:func:`rows` and the lines to say about the file (a torn last row)."""
    path = _resolve(path)
    if path.suffix.lower() == ".csv":
        return ("solves", *_solve_rows(path))
    return "benchmarks", _benchmark_rows(path), []


def _aggregate(kind: str, df: pd.DataFrame) -> pd.DataFrame:
    return _from_solves(df) if kind == "solves" else _from_benchmarks(df)


def load(path) -> pd.DataFrame:
    """One saved run, per (family, method): solves, mean and max gap
    (fractions), median decision time (ms).  ``path``: a run folder of
    ``epochbench bench`` (or a run's name under ``./results``), its
    ``bench-solves.csv``, or a pytest-benchmark JSON file.  A file with no
    solve, or a number that is negative, infinite or not a number (an
    empty gap is a solve without one), is a ValueError naming it."""
    return _aggregate(*rows(path))


def _shared(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``a`` and ``b`` cut, per (family, method) measured in both, to the
    keys both measured; and per (family, method) how many keys each had
    alone (``only_a``, ``only_b``)."""
    keep_a, keep_b, notes = [], [], []
    groups_b = dict(tuple(b.groupby(["family", "method"], sort=False)))
    for fm, ga in a.groupby(["family", "method"], sort=False):
        gb = groups_b.pop(fm, None)
        if gb is None or ga["key"].isna().any() or gb["key"].isna().any():
            keep_a.append(ga)
            if gb is not None:
                keep_b.append(gb)
            continue
        both = set(ga["key"]) & set(gb["key"])
        only_a, only_b = ga["key"].nunique() - len(both), gb["key"].nunique() - len(both)
        if both:
            keep_a.append(ga[ga["key"].isin(both)])
            keep_b.append(gb[gb["key"].isin(both)])
        else:                                       # nothing in common: not comparable, shown apart
            keep_a.append(ga)
            keep_b.append(gb)
        notes.append({"family": fm[0], "method": fm[1], "shared": len(both), "only_a": only_a, "only_b": only_b})
    keep_b += list(groups_b.values())
    return (pd.concat(keep_a, ignore_index=True), pd.concat(keep_b, ignore_index=True),
            pd.DataFrame(notes, columns=["family", "method", "shared", "only_a", "only_b"]))


#: a kind of reference by how far it sits from the solutions: one solution's gap to a best-known
#: value is at most its gap to the optimum, which is at most its gap to a bound
_REF_RANK = {"best known": 0, "optimum": 1, "bound": 2}


def _signed_gap(value: float, ref: float, sense: str | None) -> float:
    """``value``'s gap to ``ref`` (:func:`~epochbench.instances.core.gap`),
    negative where ``value`` is better (it beats the reference: a method
    that improved); NaN without a value, a reference or the sense."""
    from epochbench.instances.core import gap
    g = gap(value, ref)
    if sense is None or math.isnan(g) or g == 0:
        return g if sense is not None else math.nan
    return -g if (value > ref if sense == "max" else value < ref) else g


def _moved_references(a: pd.DataFrame, b: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Solves of ``a`` and ``b`` (one key, family and method) whose gaps were
    taken against different references: the reference moved, not
    necessarily the method.  Where both runs hold the solve's value and
    reference (score CSVs: ``family_value``, ``family_bound``), B's gap is
    taken against A's reference, negative where B's value beats it
    (``remeasured``): one yardstick, whatever the kinds.  Where they hold
    gaps only (``bench-solves.csv``) and the kind moved (``gap_kind``), a
    change the move could explain (a larger gap against a reference farther
    from the solutions, :data:`_REF_RANK`; a smaller one against a nearer)
    is left out of both sides (``moved_refs``); one it cannot (a larger gap
    against a nearer reference: the solution got worse) counts.  Returns
    the two frames and, per (family, method), ``moved_refs``,
    ``remeasured`` and ``moved_kinds`` (``"best known -> optimum"``).  A
    gap lost on either side (no solution, no reference) is kept: that is
    counted as lost (:func:`_lost_gaps`)."""
    from epochbench.instances.io import families
    empty = pd.DataFrame(columns=["family", "method", "moved_refs", "remeasured", "moved_kinds"])
    cols = ["family", "method", "key"]
    if a["key"].isna().any() or b["key"].isna().any():
        return a, b, empty
    keep = cols + ["gap_kind", "gap", "value", "ref"]
    pair = a[keep].drop_duplicates(cols).merge(b[keep].drop_duplicates(cols), on=cols, suffixes=("_a", "_b"))
    both = pair["gap_a"].notna() & pair["gap_b"].notna()
    refs = pair["ref_a"].notna() & pair["ref_b"].notna() & pair["value_b"].notna()
    other = ~np.isclose(pair["ref_a"].astype(float), pair["ref_b"].astype(float), rtol=1e-12, atol=0.0)
    rank_a, rank_b = pair["gap_kind_a"].map(_REF_RANK), pair["gap_kind_b"].map(_REF_RANK)
    kinds = rank_a.notna() & rank_b.notna() & (rank_a != rank_b)
    moved = pair[both & ((refs & other) | (~refs & kinds))].copy()
    if moved.empty:
        return a, b, empty
    sense = {name: getattr(cls, "sense", None) for name, cls in families().items()}
    moved["again"] = [_signed_gap(v, r, sense.get(f)) if has else math.nan
                      for v, r, f, has in zip(moved["value_b"], moved["ref_a"], moved["family"], refs[moved.index])]
    ra, rb = rank_a[moved.index], rank_b[moved.index]
    moved["remeasured"] = moved["again"].notna()
    moved["dropped"] = ~moved["remeasured"] & (((rb > ra) & (moved["gap_b"] >= moved["gap_a"]))
                                               | ((rb < ra) & (moved["gap_b"] <= moved["gap_a"])))
    a, b = (f.merge(moved[cols + ["dropped", "remeasured", "again"]], on=cols, how="left", sort=False)
            for f in (a, b))
    a, b = ((f.drop(columns=["dropped", "remeasured", "again"])
             .assign(gap=f["gap"].mask(f["dropped"].eq(True)).mask(f["remeasured"].eq(True) & again, f["again"])))
            for f, again in ((a, False), (b, True)))
    counted = moved[moved["dropped"] | moved["remeasured"]]
    if counted.empty:
        return a, b, empty
    label = counted["gap_kind_a"].fillna("?") + " -> " + counted["gap_kind_b"].fillna("?")
    grouped = counted.assign(k=label).groupby(["family", "method"], sort=False)
    out = grouped.agg(moved_refs=("dropped", "sum"), remeasured=("remeasured", "sum"),
                      moved_kinds=("k", lambda s: ", ".join(dict.fromkeys(s))))
    return a, b, out.reset_index()


#: what each kind of saved run is, and how it measures time (said when two kinds are given)
KIND_TEXT = {"solves": ("a results folder", "a median over solves"),
             "benchmarks": ("a pytest-benchmark JSON file", "a median of the benchmarks' median round times")}


def compare_runs(a, b, slower: float = TIME_NOISE) -> pd.DataFrame:
    """:func:`compare` of two saved runs (paths as :func:`load` takes them)
    on what both measured: a method's solves (or benchmarks) are cut to the
    instances (config and instance; the benchmark's name) that both runs
    have for it, so that a run of a smaller selection is not read as a
    change of gap or time.  Adds ``shared``, ``only_a``, ``only_b`` (keys
    per method: in both, in A alone, in B alone; NaN where a run does not
    say which instances it measured) and flags ``disjoint`` a method both
    runs measured on no common instance (its figures are not compared).
    Solves measured against references of different kinds in A and B are
    left out of the gaps (``moved_refs``, ``moved_kinds``:
    :func:`_moved_references`).

    ``slower``: the ratio beyond which a row is flagged ``slower``.
    ``attrs["notes"]``: the lines to say about the files (a torn row);
    ``attrs["same"]``: :func:`same_measurements`; ``attrs["untimed"]``:
    why times were not compared, or None (a results folder against a score
    CSV: ``time_ratio`` is NaN, :func:`_timing`).  A results folder and a
    JSON file are a ValueError (see the module's notes): they measure time
    differently."""
    (kind_a, ra, notes_a), (kind_b, rb, notes_b) = _read(a), _read(b)
    if kind_a != kind_b:
        (what_a, time_a), (what_b, time_b) = KIND_TEXT[kind_a], KIND_TEXT[kind_b]
        raise ValueError(f"A ({a}) is {what_a}, B ({b}) {what_b}: they measure time differently ({time_a}; "
                         f"{time_b}) and name their solves differently; compare two results folders or two "
                         "JSON files")
    families = []
    if kind_a == "solves" and ra["by_config"].iloc[0] != rb["by_config"].iloc[0]:
        ra, rb = ra.assign(key=ra["instance"]), rb.assign(key=rb["instance"])   # a results folder and a score CSV
    if kind_a == "solves" and _timing(ra, rb, a, b):                             # the same, or its bench-scores.csv
        ra, rb, families = _common_families(ra, rb, a, b)
    ra, rb, notes = _shared(ra, rb)
    if kind_a == "solves":
        _same_instances(ra, rb, a, b)
        ra, rb, moved = _moved_references(ra, rb)
        notes = notes.merge(moved, on=["family", "method"], how="outer", sort=False)
        ra, rb = _instance_sets(ra, rb, notes)
        ra, rb, paired = _paired_gaps(ra, rb)
    table = compare(_aggregate(kind_a, ra), _aggregate(kind_b, rb), slower=slower)
    table = table.merge(notes, on=["family", "method"], how="left", sort=False)
    if kind_a == "solves" and not paired.empty:
        table = table.merge(paired, on=ROW, how="left", sort=False)
        table["lost_gaps"] = table["lost_gaps"] | table["lost_n"].fillna(0).gt(0)
        table["gapped_a"] += table["lost_n"].fillna(0)          # the counts as measured, not as compared
        table["gapped_b"] += table["gained_n"].fillna(0)
    paired = _paired_ratios(ra, rb, "seconds" if kind_a == "solves" else "median_ms")
    table = table.merge(paired, on=ROW, how="left", sort=False)
    table["time_ratio"] = table["paired_ratio"].where(table["paired_ratio"].notna(), table["time_ratio"])
    table = table.drop(columns=["paired_ratio"])
    timing = _timing(ra, rb, a, b) if kind_a == "solves" else None
    if timing:                                    # medians over rounds against single calls: not compared
        table["time_ratio"] = np.nan
    table["flag"] = [_flags(r, slower) for r in table.itertuples()]
    disjoint = table["shared"].eq(0)
    for col in ("d_mean", "d_max", "time_ratio"):
        table.loc[disjoint, col] = np.nan
    table.loc[disjoint, ["lost_gaps", "lost_time"]] = False      # not compared: no guard fails on them
    table.loc[disjoint, "flag"] = "disjoint"
    table.attrs["notes"] = list(dict.fromkeys(notes_a + notes_b + families + _unfinished(a, b)
                                              + ([f"gaps compared, times not: {timing}"] if timing else [])))
    table.attrs["untimed"] = timing
    table.attrs["unit"] = "instance" if kind_a == "solves" else "benchmark"
    table.attrs["same"] = same_measurements(a, b)
    return table


def _paired_gaps(ra: pd.DataFrame, rb: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``ra`` and ``rb`` with each method's gaps cut to the instances where
    both runs have one, so that the means compare one set: a solve that
    has a gap in B alone (A had no reference for it, or no solution) is
    left out of B's mean (``gained_n``), one that has it in A alone out of
    A's (``lost_n``, which flags ``gaps-lost`` as before).  Without it a
    heuristic whose answers did not change was failed by ``--fail-on gap``
    when B's references covered an instance more (its mean over two
    instances against A's over one: +6.15 pp).  Returns the counts per
    (family, set, method); nothing is cut where a run does not name its
    instances."""
    empty = pd.DataFrame(columns=[*ROW, "gained_n", "lost_n"])
    if ra.empty or rb.empty or ra["key"].isna().any() or rb["key"].isna().any():
        return ra, rb, empty
    keys = [*ROW, "key"]
    # a key may hold several rows (a results folder's configs against a score CSV's instance): it has a
    # gap in a run if any of its rows has one
    has_a, has_b = (r.groupby(keys, sort=False)["gap"].agg(lambda g: bool(g.notna().any())) for r in (ra, rb))
    common = has_a.index.intersection(has_b.index)
    has_a, has_b = (h.reindex(common).to_numpy(dtype=bool) for h in (has_a, has_b))
    gained, lost = common[~has_a & has_b], common[has_a & ~has_b]
    if gained.empty and lost.empty:
        return ra, rb, empty

    def cut(r: pd.DataFrame, drop: pd.Index, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """``r`` without the gaps of the keys ``drop``, and per ROW how many gaps that took out."""
        hit = pd.MultiIndex.from_frame(r[keys]).isin(drop) & r["gap"].notna().to_numpy()
        return r.assign(gap=r["gap"].mask(hit)), r[hit].groupby(ROW, sort=False).size().rename(name).reset_index()
    ra, lost_n = cut(ra, lost, "lost_n")
    rb, gained_n = cut(rb, gained, "gained_n")
    counts = lost_n.merge(gained_n, on=ROW, how="outer", sort=False).fillna(0)
    return ra, rb, counts.astype({"gained_n": int, "lost_n": int})


def _unfinished(a, b) -> list[str]:
    """A line for each of A and B that is a run whose record (``run.json``
    beside its ``bench-solves.csv``) says it did not finish (``interrupted``,
    ``failed``, ``running``): its tables hold what it measured before it
    stopped, and were compared without a word."""
    from . import runs
    out = []
    for side, path in (("A", a), ("B", b)):
        info = runs.read(_resolve(path).parent / runs.RUN_JSON)
        status = info.get("status") if isinstance(info, dict) else None
        if isinstance(status, str) and status != "finished":
            out.append(f"{side} ({path}) is a run recorded {status!r}: its tables hold what it measured before it "
                       "stopped")
    return out


def _common_families(ra: pd.DataFrame, rb: pd.DataFrame, a, b) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """A results folder against a score CSV: both cut to the families both
    hold, and a line naming the others.  A score CSV holds the families it
    scored (``bench-scores.csv``: packing and epochs, whose solves the suite
    scores in one table; the others keep a row per benchmark): every
    method of the rest read as gone from B, and a guard failed on them."""
    both = set(ra["family"]) & set(rb["family"])
    if not both:
        raise ValueError(f"A ({a}) holds {', '.join(sorted(set(ra['family'])))} and B ({b}) "
                         f"{', '.join(sorted(set(rb['family'])))}: no family in common to compare")
    alone = [(side, sorted(set(r["family"]) - both)) for side, r in (("A", ra), ("B", rb))]
    lines = [f"{side} ({path}) alone holds {', '.join(fams)}: not compared (a score CSV holds the families it "
             "scored)" for (side, fams), path in zip(alone, (a, b)) if fams]
    return ra[ra["family"].isin(both)], rb[rb["family"].isin(both)], lines


def _instance_sets(ra: pd.DataFrame, rb: pd.DataFrame, notes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``ra`` and ``rb`` with the instance set of each solve (``set``): the
    leaderboards' blocks (:func:`epochbench.suite.instance_sets`) of the
    solves of both runs together (each method cut by :func:`_shared` to the
    instances both runs have, a method of one run whole).  Without it a
    method measured on two sets (mapping's ``minmin`` on 512 x 16 and 32 x
    4 matrices) was one mean over both: a gap 10 points worse on one set and
    10 better on the other passed ``--fail-on gap``.  The blocks are taken
    from both runs, not from A alone: a run of part of the suite (``-k ff``)
    has one block for ff's two configurations (blocks merge by the methods
    that solved them), so the sets, and the guard, depended on which run was
    A.  A method the runs measured on nothing in common, one without
    configurations (a score CSV), and every method of a family of one set,
    have the set ``""``."""
    if not (ra["by_config"].all() and rb["by_config"].all()) or ra.empty:
        return ra.assign(set=""), rb.assign(set="")
    from .suite import instance_sets
    apart = set(map(tuple, notes.loc[notes["shared"].eq(0), ["family", "method"]].to_numpy()))
    keys = ["family", "method", "key"]
    both = pd.concat([ra, rb], ignore_index=True).drop_duplicates(keys)
    both = both[[(f, m) not in apart for f, m in zip(both["family"], both["method"])]]
    label = pd.Series("", index=both.index, dtype=object)
    for _, f in both.groupby("family", sort=False):
        blocks = instance_sets(f)
        for name, part in blocks if len(blocks) > 1 else ():        # one set: named nowhere, as on the boards
            label[part.index] = name
    sets = pd.Series(label.to_numpy(), index=pd.MultiIndex.from_frame(both[keys]))

    def labelled(r):
        return r.assign(set=sets.reindex(pd.MultiIndex.from_frame(r[keys])).fillna("").to_numpy())
    return labelled(ra), labelled(rb)


def _paired_ratios(ra: pd.DataFrame, rb: pd.DataFrame, column: str) -> pd.DataFrame:
    """Per row (:data:`ROW`), ``paired_ratio``: the median over the keys
    both runs measured with a time above 0 of B's time / A's time.  The
    ratio of the two medians jumped between clusters of instance sizes: two
    runs of the same code read x2.25 for a method whose per-instance ratios
    had a median of 1.16, and a 30 % guard failed 12 methods.  NaN where no
    key pairs up (the ratio of the medians is used)."""
    cols = ["family", "set", "method", "key"]
    if ra.empty or rb.empty or ra["key"].isna().any() or rb["key"].isna().any():
        return pd.DataFrame(columns=[*ROW, "paired_ratio"])
    ta, tb = (_with_set(r).groupby(cols, sort=False)[column].median() for r in (ra, rb))
    pair = pd.concat({"a": ta, "b": tb}, axis=1, join="inner")
    pair = pair[(pair["a"] > 0) & (pair["b"] > 0)]
    ratio = (pair["b"] / pair["a"]).groupby(level=[0, 1, 2], sort=False).median()
    return ratio.rename("paired_ratio").reset_index()


def _timing(ra: pd.DataFrame, rb: pd.DataFrame, a, b) -> str | None:
    """Why times are not compared, or None: A's are medians
    over a benchmark's rounds (a results folder's ``bench-solves.csv``) and
    B's the one checked call of each solve (a score CSV, ``bench-scores.csv``)
    or the other way round.  A heuristic's first call runs with cold caches,
    up to hundreds of times its median, so a run compared with its own
    ``bench-scores.csv`` read 2 to 4 times slower; gaps are the same kind."""
    what = {"rounds": "medians over each benchmark's rounds (bench-solves.csv)",
            "call": "one checked call per solve (a score CSV or bench-scores.csv)"}
    ta, tb = ra["timing"].iloc[0] if len(ra) else None, rb["timing"].iloc[0] if len(rb) else None
    if ta is None or tb is None or ta == tb:
        return None
    return f"A's times ({a}) are {what[ta]}, B's ({b}) {what[tb]}"


def _same_instances(ra: pd.DataFrame, rb: pd.DataFrame, a, b) -> None:
    """ValueError where A and B name two different instances alike (score
    CSVs: ``instance_digest``, the instance's data; a generator's name
    leaves out some of its parameters, so families generated with another
    tightness were compared as the same instances)."""
    da = ra.dropna(subset=["digest"]).drop_duplicates("key").set_index("key")["digest"]
    db = rb.dropna(subset=["digest"]).drop_duplicates("key").set_index("key")["digest"]
    both = da.index.intersection(db.index)
    other = [k for k in both if da[k] != db[k]]
    if other:
        name = str(ra.loc[ra["key"] == other[0], "instance"].iloc[0])
        raise ValueError(f"A ({a}) and B ({b}) hold different instances under the same name ({len(other)} of "
                         f"{len(both)}, e.g. {name}: its data differ); compare runs on the same instances")


def same_measurements(a, b) -> str | None:
    """``"file"`` when A and B are one saved run (one file, however named:
    a run's name, its folder, its ``bench-solves.csv``, a link), ``"copy"``
    when their files hold the same bytes (a copied run), else None."""
    from epochbench.runs import same_file
    fa, fb = _resolve(a), _resolve(b)
    if same_file(fa, fb):
        return "file"
    if fa.stat().st_size == fb.stat().st_size and fa.read_bytes() == fb.read_bytes():
        return "copy"
    return None


def compare(a: pd.DataFrame, b: pd.DataFrame, slower: float = TIME_NOISE) -> pd.DataFrame:
    """Per (family, set, method) in either run: the gaps and times of A and B, the
    changes (``d_mean`` and ``d_max`` in percentage points, ``time_ratio`` =
    B / A of the median times; :func:`compare_runs` makes it the median of
    the per-instance ratios), ``lost_gaps`` (:func:`_lost_gaps`), ``gone`` (in A, not in B),
    ``lost_time`` (in both, timed in A, with no time in B: every solve of B
    failed) and ``flag``: ``gaps-lost``, ``time-lost``, ``gap+`` / ``gap-`` (worse / better gap),
    ``slower`` (ratio above ``slower``: :data:`TIME_NOISE`, or a tighter
    time guard's limit, :meth:`Threshold.slower`) / ``faster`` (below
    1 / :data:`TIME_NOISE`), ``new`` / ``gone``."""
    m = _with_set(a).merge(_with_set(b), on=ROW, how="outer", suffixes=("_a", "_b"), sort=False)
    m["d_mean"] = 100 * (m["mean_gap_b"] - m["mean_gap_a"])
    m["d_max"] = 100 * (m["max_gap_b"] - m["max_gap_a"])
    m["time_ratio"] = m["median_ms_b"] / m["median_ms_a"]
    m["lost_gaps"] = _lost_gaps(m)
    m["gone"] = (m["solves_a"].notna() & m["solves_b"].isna()).astype(bool)
    m["lost_time"] = (m["median_ms_a"].notna() & m["median_ms_b"].isna() & ~m["gone"]).astype(bool)
    m["flag"] = [_flags(r, slower) for r in m.itertuples()]
    return m


def _lost_gaps(m: pd.DataFrame) -> pd.Series:
    """Methods with a smaller share of solves with a gap in B than in A (a
    solve that found no solution, or lost its reference): the mean over the
    rest would hide it."""
    share_a = m["gapped_a"] / m["solves_a"]
    share_b = m["gapped_b"] / m["solves_b"]
    return (m["solves_a"].notna() & m["solves_b"].notna() & (share_b < share_a - 1e-12)).astype(bool)


def _flags(r, slower: float = TIME_NOISE) -> str:
    if pd.isna(r.solves_a):
        return "new"
    if pd.isna(r.solves_b):
        return "gone"
    out = ["gaps-lost"] if r.lost_gaps else []
    if r.lost_time:
        out.append("time-lost")
    if abs(r.d_mean) > 1e-9 or abs(r.d_max) > 1e-9:
        out.append("gap+" if (r.d_mean > 1e-9 or (abs(r.d_mean) <= 1e-9 and r.d_max > 0)) else "gap-")
    if r.time_ratio > slower:
        out.append("slower")
    elif r.time_ratio < 1 / TIME_NOISE:
        out.append("faster")
    return " ".join(out)


@dataclass(frozen=True)
class Threshold:
    """``gap:0.5%``: fail when a method's mean gap grows by more than 0.5
    percentage points; ``time:20%``: when its time grows by more than 20 %
    (``time_ratio``: the median of its per-instance ratios B / A).  Each
    instance set of a method is guarded on its own (:func:`_instance_sets`).
    Either fails a method that is gone from B (nothing measured: worse by
    an unknown amount), and a time guard one that B measured with no time
    (``lost_time``: every solve failed), as a gap guard fails one that lost
    gaps; a method new in B fails neither.  A value
    without its ``%`` is read as one with it, as it always was, and
    :attr:`note` says so (``gap:0.5`` could be meant as a fraction)."""

    what: str
    limit: float
    note: str = ""

    @classmethod
    def parse(cls, text: str) -> "Threshold":
        m = re.fullmatch(r"(gap|time):([0-9]*\.?[0-9]+)(%?)", text.strip())
        if not m:
            raise ValueError(f"--fail-on {text!r}: expected gap:X% (mean gap, percentage points) or time:X% "
                             "(median time, per cent)")
        note = "" if m.group(3) else (f"--fail-on {text.strip()} read as {text.strip()}% "
                                      f"({'percentage points' if m.group(1) == 'gap' else 'per cent'}); "
                                      "write the % to say so")
        return cls(m.group(1), float(m.group(2)), note)

    def slower(self) -> float:
        """The time ratio B / A beyond which this guard fails (inf for a gap guard)."""
        return 1 + self.limit / 100 if self.what == "time" else np.inf

    def broken_by(self, table: pd.DataFrame) -> pd.DataFrame:
        """The rows of :func:`compare`'s ``table`` that break this threshold."""
        gone = table["gone"] if "gone" in table else table["solves_b"].isna() & table["solves_a"].notna()
        if self.what == "gap":   # a method that lost gaps is worse by an unknown amount: it fails too
            return table[(table["d_mean"] > self.limit + 1e-9) | table["lost_gaps"] | gone]
        lost = table["lost_time"] if "lost_time" in table else False
        return table[(table["time_ratio"] > self.slower()) | gone | lost]


def _fixed(x: float, sign: str) -> str:
    """``x`` with two decimals, or in powers of ten from 1e6 on (a gap of
    1e300 in a file printed 300 digits a cell, and the table broke)."""
    return f"{x:{sign}.2f}" if abs(x) < 1e6 else f"{x:{sign}.3g}"


def format_comparison(table: pd.DataFrame) -> str:
    """The comparison as text (one block per family, under 100 columns;
    times as the leaderboards write them, :func:`epochbench.suite.ms_text`)."""
    from .suite import ms_text
    def pct(x):
        return "-" if pd.isna(x) else _fixed(100 * x, "")

    def pp(x):
        return "-" if pd.isna(x) else _fixed(x, "+").replace("-0.00", "+0.00")     # never "-0.00"
    def block(g):
        return pd.DataFrame({"method": g["method"], "mean A %": g["mean_gap_a"].map(pct),
                             "mean B %": g["mean_gap_b"].map(pct), "d mean pp": g["d_mean"].map(pp),
                             "d max pp": g["d_max"].map(pp),
                             "ms A": g["median_ms_a"].map(ms_text), "ms B": g["median_ms_b"].map(ms_text),
                             "B/A": g["time_ratio"].map(lambda x: "-" if pd.isna(x) else _fixed(x, "")),
                             "flag": g["flag"]}).to_string(index=False)
    lines = []
    for fam, g in _with_set(table).groupby("family", sort=False):
        sets = list(dict.fromkeys(g["set"]))
        lines.append(f"{fam}:")
        if len(sets) == 1:
            lines.append(block(g))
        else:                                             # the leaderboards' blocks, each on its own
            for st in sets:
                lines += [f"on {st[:90] or 'no common set'}:", block(g[g["set"] == st])]
        lines += [*_cut_notes(g.drop_duplicates("method"), table.attrs.get("unit", "instance")), ""]
    return "\n".join(lines).rstrip()


def _cut_notes(g: pd.DataFrame, unit: str = "instance") -> list[str]:
    """Lines saying which methods of a family were compared on part of what
    one run measured (:func:`compare_runs`), or on nothing in common;
    ``unit``: what a key is (``instance``; ``benchmark`` in JSON files, a
    benchmark of several instances)."""
    if "shared" not in g:
        return []
    out = []
    for r in g.itertuples():
        for count, then in ((getattr(r, "moved_refs", np.nan), "left out of both"),
                            (getattr(r, "remeasured", np.nan), "B's taken against A's reference")):
            if pd.notna(count) and count > 0:
                what = "solve's gap was" if count == 1 else f"{count:g} solves' gaps were"
                out.append(f"  {r.method}: {what} taken against another reference in B "
                           f"({r.moved_kinds}): {then}")
        for count, side, other in ((getattr(r, "gained_n", np.nan), "B", "A"),
                                   (getattr(r, "lost_n", np.nan), "A", "B")):
            if pd.notna(count) and count > 0:
                what = "solve has a gap" if count == 1 else f"{count:g} solves have a gap"
                out.append(f"  {r.method}: {what} in {side} alone (no reference or no answer in {other}): "
                           f"left out of {side}'s mean")
        if pd.isna(r.shared) or (r.only_a == 0 and r.only_b == 0):
            continue
        if r.shared == 0:
            out.append(f"  {r.method}: no {unit} measured in both runs ({r.only_a:g} in A, {r.only_b:g} in B): "
                       "not compared")
        else:
            alone = ", ".join(f"{n:g} in {side} alone" for side, n in (("A", r.only_a), ("B", r.only_b)) if n)
            what = f"the {unit}" if r.shared == 1 else f"the {r.shared:g} {unit}s"
            out.append(f"  {r.method}: compared on {what} both runs measured ({alone})")
    return out
