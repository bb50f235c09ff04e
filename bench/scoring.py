"""Scoring: run methods on instances, check every answer, measure the gap.

Gap convention (ARCHITECTURE.md): ``gap = |reference - value| / |reference|``
against the strongest reference known for the instance, and every gap says
what it is measured against (``gap_kind``) and where that came from
(``ref_source``):

============  ================================================================
gap_kind      reference
============  ================================================================
optimum       a proven optimum: an exact method proved it in this run, a
              checked solution of this run meets a valid bound, or the
              instance / a reference file carries it (``optimum``)
best known    a data set's best-known value (``best_known``), or a checked
              solution of this run that beats it (then the best known):
              the gap is relative to it, and a method that beats the
              data set's value has ``beats_reference`` True
bound         the tightest valid bound: the best bound an exact method proved
              in this run, the instance's ``lp_bound`` / ``lower_bound``
              (minimising) / ``upper_bound`` (maximising), a reference file's
              bound, or the family's own cheap bound (``inst.lower_bound()``);
              the gap is then an upper bound on the true gap
no bound      nothing trustworthy: the gap is NaN and the summary says so
============  ================================================================

Only methods registered as exact prove anything: a heuristic's ``optimal``
status or bound is a claim, not a proof.  Two proofs that disagree, or a
bound that a checked solution or a best-known value violates, raise
:class:`SolverDisagreement`.

Units: an instance whose ``meta["cost"]`` maps the family's objective back to
its data set's (``{"offset": a, "scale": b, "sense": "min", "units": "cost"}``:
data value ``a + b * value``, e.g. OR-Library assignment costs loaded as
preferences) is reported in those units (``value``, ``bound``, ``gap``;
column ``units``), with the family's own figures in ``family_value`` and
``family_bound``.  Reference values in ``meta`` are in family units; those of
a reference file (:func:`read_references`) in the data set's units, as
``score`` prints them.
"""
from __future__ import annotations

import csv
import difflib
import functools
import math
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from epochbench.instances import InstanceError, Result, gap
from epochbench.instances.arguments import arg
from epochbench.instances.checks import first_repeat
from epochbench.instances.core import digest
from epochbench.instances.registry import CLAIM_TOL, UnknownMethod, get, solve

COLUMNS = ["family", "instance", "method", "kind", "n", "k", "value", "bound", "gap", "gap_kind",
           "ref_source", "beats_reference", "units", "family_value", "family_bound", "short", "cardinality",
           "max_cardinality", "status", "seconds", "error", "instance_digest"]
GAP_KINDS = ("optimum", "best known", "bound", "no bound")
#: what a summary's ``gap_vs`` counts: the kinds of reference, and the rows whose references disagreed
#: (no gap, ``gap_kind`` "no bound", ``error`` "disagreement: ...": counted apart, not as "no bound")
SUMMARY_KINDS = (*GAP_KINDS, "disagree")
#: the columns of :data:`COLUMNS` that are numbers, NaN where missing
FLOAT_COLUMNS = ("value", "bound", "gap", "family_value", "family_bound", "cardinality", "max_cardinality",
                 "seconds")
#: columns of a reference file besides ``instance`` and ``dataset``
REFERENCE_COLUMNS = ("optimum", "best_known", "lower_bound", "upper_bound")
#: the columns a reference file is read by (:func:`read_reference_file`)
READ_COLUMNS = ("instance", "dataset", *REFERENCE_COLUMNS)
TOL = 1e-6


class SolverDisagreement(RuntimeError):
    """Two proofs disagree (two proven optima, or a bound that a checked
    solution violates): a solver bug or a wrong reference value."""


# ---- units ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Units:
    """Affine map ``data = offset + scale * family`` from a family's objective
    to its data set's (``meta["cost"]``); the identity when absent."""
    offset: float = 0.0
    scale: float = 1.0
    sense: str = "max"
    name: str = "family"

    @classmethod
    def of(cls, inst) -> "Units":
        cost = inst.meta.get("cost")
        if not cost:
            return cls(sense=inst.sense)
        bad = f"{inst.name}: meta field 'cost' must be {{'offset': a, 'scale': b (non-zero), 'sense': 'min' " \
              f"or 'max', 'units': name}} with finite numbers, got {cost!r}"
        if not isinstance(cost, dict):
            raise InstanceError(bad)
        try:
            offset, scale = float(cost.get("offset", 0.0)), float(cost.get("scale", 1.0))
        except (TypeError, ValueError):
            raise InstanceError(bad) from None
        flipped = {"max": "min", "min": "max"}[inst.sense]
        if not (math.isfinite(offset) and math.isfinite(scale) and scale != 0) or \
                cost.get("sense") != (inst.sense if scale > 0 else flipped):
            raise InstanceError(bad)
        return cls(offset, scale, cost["sense"], str(cost.get("units", "data set")))

    def data(self, x):
        """Family value -> data set value (None / NaN pass through)."""
        return x if _missing(x) else self.offset + self.scale * float(x)

    def family(self, x):
        """Data set value -> family value."""
        return x if _missing(x) else (float(x) - self.offset) / self.scale


def _missing(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and math.isnan(x))


# ---- reference values named on the command line ---------------------------------------
@dataclass(frozen=True)
class ReferenceFile:
    """Rows of one results file: ``(dataset or None, instance) -> {column: value}``;
    ``ignored``: its columns that are not read (said in :meth:`unused`)."""
    path: str
    rows: dict
    ignored: tuple = ()

    def key(self, inst) -> tuple | None:
        """The row for ``inst``: the one naming its data set (``meta["dataset"]``)
        and name, else one with no data set and its name; None if none."""
        ds = inst.meta.get("dataset")
        for key in ((ds, inst.name), (None, inst.name)):
            if key in self.rows:
                return key
        return None

    def lookup(self, inst) -> dict:
        """Values for ``inst`` (:meth:`key`); ``{}`` if none."""
        key = self.key(inst)
        return {} if key is None else self.rows[key]

    def unused(self, instances) -> list[str]:
        """What this file says that ``instances`` do not use, one line each:
        rows that name none of them, and bounds on the side that bounds
        nothing (a ``lower_bound`` of a maximising family, an
        ``upper_bound`` of a minimising one, in the data set's sense)."""
        src, out = Path(self.path).name, []
        if self.ignored:
            out.append(f"{src}: column(s) {', '.join(map(repr, self.ignored))} not read (the columns read: "
                       f"{', '.join(READ_COLUMNS)})")
        keys = {self.key(inst): inst for inst in instances}
        orphans = [name if ds is None else f"{ds}/{name}" for ds, name in self.rows if (ds, name) not in keys]
        if orphans:
            shown = ", ".join(orphans[:5]) + (", ..." if len(orphans) > 5 else "")
            out.append(f"{src}: {len(orphans)} of {len(self.rows)} row(s) name no instance here ({shown}): ignored")
        return out + idle_bounds(src, lambda col, sense: [
            inst.name for key, inst in keys.items()
            if key is not None and col in self.rows[key] and Units.of(inst).sense == sense])


def read_reference_file(path) -> ReferenceFile:
    """Read a results file: CSV (or tab-separated) with a column ``instance``,
    optional ``dataset``, and one or more of :data:`REFERENCE_COLUMNS`, values
    in the data set's units; empty cells mean "not known", other columns are
    not read (``ignored``, said in :meth:`ReferenceFile.unused`; a
    byte-order mark, as spreadsheets write one, is skipped), but for one
    that is a known column misspelt (``bestknown``, ``optimun``: refused).  Raises
    :class:`~epochbench.instances.InstanceError` naming the file, line and
    column of anything malformed: a row with more or fewer cells than the header, a
    lower bound above an upper bound, a file without rows, a known column
    given twice."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InstanceError(f"{path}: no such reference file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read the reference file ({exc})") from None
    head = text.split("\n", 1)[0]
    if text.lstrip().startswith(("{", "[")):             # a manifest or an instance, given by mistake
        raise InstanceError(f"{path}: JSON, not a reference CSV file (a header line with 'instance' and one or "
                            f"more of {', '.join(REFERENCE_COLUMNS)}, then one row per instance)")
    reader = csv.DictReader(text.splitlines(), delimiter="\t" if "\t" in head and "," not in head else ",")
    fields = [f.strip() for f in (reader.fieldnames or [])]
    reader.fieldnames = fields
    _misspelt(path, fields)
    twice = first_repeat(f for f in fields if f in READ_COLUMNS)
    if twice is not None:                 # DictReader keeps the last: the first value would be lost
        raise InstanceError(f"{path}: column {twice!r} given twice")
    if "instance" not in fields:
        shown = ",".join(fields) or "empty"
        raise InstanceError(f"{path}: column 'instance' missing (header: "
                            f"{shown if len(shown) <= 200 else shown[:200] + '...'})")
    cols = [c for c in REFERENCE_COLUMNS if c in fields]
    if not cols:
        raise InstanceError(f"{path}: no reference column; give one or more of {', '.join(REFERENCE_COLUMNS)}")
    rows: dict = {}
    for row in reader:
        line = reader.line_num
        name = (row.get("instance") or "").strip()
        if not name:
            raise InstanceError(f"{path}: line {line}: column 'instance' is empty")
        if None in row:                 # csv puts the cells beyond the header under None
            raise InstanceError(f"{path}: line {line}: {len(fields) + len(row[None])} cells, the header "
                                f"has {len(fields)}")
        short = sum(v is None for v in row.values())          # and None under the columns a short row lacks
        if short:
            raise InstanceError(f"{path}: line {line}: {len(fields) - short} cells, the header has "
                                f"{len(fields)} (an unknown value is an empty cell)")
        ds = (row.get("dataset") or "").strip() or None
        vals = {c: _ref_number(row.get(c), path, line, c) for c in cols}
        vals = {c: v for c, v in vals.items() if v is not None}
        if vals.get("lower_bound", -math.inf) > vals.get("upper_bound", math.inf):
            raise InstanceError(f"{path}: line {line}: lower_bound {vals['lower_bound']:g} is above "
                                f"upper_bound {vals['upper_bound']:g}")
        if (ds, name) in rows:
            raise InstanceError(f"{path}: line {line}: instance {name!r}"
                                f"{'' if ds is None else f' of data set {ds!r}'} listed twice")
        rows[(ds, name)] = vals
    if not rows:
        raise InstanceError(f"{path}: no rows under the header")
    return ReferenceFile(str(path), rows, tuple(f for f in fields if f not in READ_COLUMNS))


def _misspelt(path, fields) -> None:
    """InstanceError for a column that is one of the known ones but for
    case, spaces, ``-`` or ``_`` (``bestknown``, ``Optimum``), or a close
    match of one the file lacks (``optimun``): other columns are not read
    (:meth:`ReferenceFile.unused` names them), so such a column's values
    would be lost."""
    known = {re.sub(r"[^a-z0-9]", "", c): c for c in READ_COLUMNS}
    for f in fields:
        key = re.sub(r"[^a-z0-9]", "", f.lower())
        want = known.get(key)
        if want is None and key:   # a typo of one the file lacks (optimun): a close match, difflib's ratio >= 0.8
            close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.8)
            want = known[close[0]] if close and known[close[0]] not in fields else None
        if want is not None and want != f:
            raise InstanceError(f"{path}: column {f!r} is not read; did you mean {want!r}?")


def _ref_number(cell, path, line, col):
    cell = (cell or "").strip()
    if not cell:
        return None
    try:
        x = float(cell)
    except ValueError:
        raise InstanceError(f"{path}: line {line}: column '{col}' is not a number: {cell!r}") from None
    if not math.isfinite(x):
        raise InstanceError(f"{path}: line {line}: column '{col}' must be finite, got {cell!r}")
    return x


def read_references(paths) -> list[ReferenceFile]:
    """:func:`read_reference_file` of every path (``--reference``, repeatable);
    ``paths``: one path (or :class:`ReferenceFile`) or a list of them.
    ValueError for anything else (a number, a list of numbers)."""
    if isinstance(paths, (str, os.PathLike, ReferenceFile)):
        paths = [paths]
    if paths is None:
        return []
    try:
        paths = list(paths)
    except TypeError:
        raise ValueError(f"references: expected a file path or a list of them, got {paths!r}") from None
    bad = next((p for p in paths if not isinstance(p, (str, os.PathLike, ReferenceFile))), None)
    if bad is not None:
        raise ValueError(f"references: expected file paths, got {bad!r} ({type(bad).__name__})")
    return [p if isinstance(p, ReferenceFile) else read_reference_file(p) for p in paths]


# ---- the reference of one instance ---------------------------------------------------
@dataclass(frozen=True)
class Reference:
    """The strongest reference of one instance, in family units; and the
    best-known value (a data set's or a results file's) whatever the
    reference's kind, so that a solution better than it is flagged even
    when this run proved the optimum; ``known_optimum``: the instance's data
    or a reference file already states the optimum (then nothing beats the
    reference: a data set's best-known value may lag behind its proven
    optimum, as VBP's ``best_overall`` does)."""
    bound: float | None
    kind: str  # one of GAP_KINDS
    source: str = ""
    best_known: float | None = None
    best_known_source: str = ""
    known_optimum: bool = False


@dataclass
class _Claims:
    """Reference values of one instance with their sources (family units)."""
    optimum: list = field(default_factory=list)     # (value, source)
    best_known: list = field(default_factory=list)
    bounds: list = field(default_factory=list)


def _method(inst, name: str):
    """The registered method ``name`` of ``inst``'s family, or None (a user's
    function under ``validate``)."""
    try:
        return get(inst.kind, name)
    except KeyError:
        return None


def _is_exact(inst, name: str) -> bool:
    m = _method(inst, name)
    return m is not None and m.exact


def has_solution(r: Result) -> bool:
    """Whether ``r`` holds a checked decision (an empty packing counts; a
    timeout or infeasible answer without a decision does not)."""
    return r.status in ("optimal", "feasible") or bool(r.decision)


#: family -> whether a checked result competes with the reference on
#: ``value`` alone.  Assignment is lexicographic (cardinality, then weight):
#: a matching with fewer pairs than the maximum may weigh more than the
#: optimum without refuting it (instances/assignment.py).
COMPARABLE = {
    "assignment": lambda r: r.info.get("cardinality", 0) >= r.info.get("max_cardinality", 0),
}


def comparable(inst, r: Result) -> bool:
    """Whether ``r`` has a solution whose ``value`` can prove, refute or beat
    a reference of ``inst`` (see :data:`COMPARABLE`)."""
    return has_solution(r) and not _missing(r.value) and COMPARABLE.get(inst.kind, lambda _: True)(r)


def _meta_number(inst, key):
    x = inst.meta.get(key)
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) or not math.isfinite(x):
        raise InstanceError(f"{inst.name}: meta field '{key}' must be a finite number or null, got {x!r}")
    return float(x)


def idle_meta_bounds(instances) -> list[str]:
    """One line for each bound in the instances' ``meta`` on the side that
    bounds nothing (a ``lower_bound`` of a maximising family, an
    ``upper_bound`` of a minimising one), which :func:`_meta_claims` leaves
    out, as :meth:`ReferenceFile.unused` says of a reference file's."""
    return idle_bounds("instance meta", lambda col, sense: [
        inst.name for inst in instances if inst.meta.get(col) is not None and getattr(inst, "sense", "max") == sense])


def idle_bounds(src: str, idle) -> list[str]:
    """One line per side that bounds nothing (``lower_bound`` of a
    maximising objective, ``upper_bound`` of a minimising one) where
    ``idle(column, sense)`` names instances that ``src`` gives it for."""
    out = []
    for col, sense in (("lower_bound", "max"), ("upper_bound", "min")):
        names = idle(col, sense)
        if names:
            out.append(f"{src}: {col} bounds nothing on a {'maximising' if sense == 'max' else 'minimising'} "
                       f"objective ({len(names)} instance(s), e.g. {names[0]}): ignored")
    return out


def _meta_claims(inst, claims: _Claims) -> None:
    meta = inst.meta
    src = f"instance meta ({meta['ref_source']})" if meta.get("ref_source") else "instance meta"
    valid_bound = "upper_bound" if inst.sense == "max" else "lower_bound"
    for key, target in (("optimum", claims.optimum), ("best_known", claims.best_known),
                        ("lp_bound", claims.bounds), (valid_bound, claims.bounds)):
        x = _meta_number(inst, key)
        if x is not None:
            target.append((x, f"{src} {key}" if target is claims.bounds else src))


def _file_claims(inst, units: Units, files, claims: _Claims) -> None:
    valid_bound = "lower_bound" if units.sense == "min" else "upper_bound"
    for ref in files:
        row = ref.lookup(inst)
        src = Path(ref.path).name
        for key, target in (("optimum", claims.optimum), ("best_known", claims.best_known),
                            (valid_bound, claims.bounds)):
            if key in row:
                target.append((units.family(row[key]), f"{src} {key}" if target is claims.bounds else src))


def _positive_sum(w) -> float:
    w = np.asarray(w, dtype=float)
    return float(w[w > 0].sum())


#: family -> the value of taking every job at once, capacities ignored: no
#: solution of a maximisation is worth more (assignment: each job's best
#: machine).  An optimum or best-known value above it cannot be right.
CEILINGS = {
    "packing": lambda inst: _positive_sum(inst.weights()),
    "knapsack": lambda inst: _positive_sum(inst.profit),
    "assignment": lambda inst: _positive_sum(np.max(inst.preference, axis=1, initial=0.0)),
}


def _under_ceiling(inst, claims: _Claims) -> None:
    """:class:`SolverDisagreement` if a claimed optimum or best-known value
    of a maximisation is above :data:`CEILINGS` (a reference file's optimum
    of 5 for a packing whose jobs fill 0.8 of the machine together gave
    every heuristic a gap of 84 %).  O(n)."""
    ceiling = CEILINGS.get(inst.kind)
    if ceiling is None or inst.sense != "max" or not (claims.optimum or claims.best_known):
        return
    top = ceiling(inst)
    for v, src in claims.optimum + claims.best_known:
        if better(v, top, "max"):
            raise SolverDisagreement(f"{inst.name}: {v:g} claimed by {src} is above {top:g}, the value of "
                                     "every job taken at once: no solution reaches it")


def better(a: float, b: float, sense: str) -> bool:
    """``a`` strictly better than ``b`` beyond the tolerance."""
    slack = TOL * max(1.0, abs(b))
    return a > b + slack if sense == "max" else a < b - slack


def _same(a: float, b: float, tol: float = TOL) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def reference(inst, results: list[Result], files=()) -> Reference:
    """Strongest reference for ``inst`` from ``results`` (checked), the
    instance's ``meta`` and the reference ``files``, in family units.

    Order: a proven optimum; a best-known value (a checked solution of
    this run when it beats the data set's); the tightest valid bound
    (``optimum`` instead where a checked solution meets it); ``no bound``.
    Raises :class:`SolverDisagreement` if proofs disagree, a checked
    solution or a best-known value beats a proof or bound, an exact
    method claims infeasible where a checked solution exists, or an
    optimum or best-known value of a maximisation is above the value of
    every job taken at once (:data:`CEILINGS`).  Cost
    O(len(results) + claims^2).
    """
    sense = inst.sense
    claims = _Claims()
    _meta_claims(inst, claims)
    _file_claims(inst, Units.of(inst), read_references(files), claims)
    known = bool(claims.optimum)          # stated before this run: no solution of it is news
    for r in results:
        if r.status == "optimal" and _is_exact(inst, r.method):
            claims.optimum.append((float(r.value), f"run ({r.method})"))
        if _is_exact(inst, r.method) and not _missing(r.bound):
            claims.bounds.append((float(r.bound), f"run ({r.method} bound)"))
    if sense == "min" and hasattr(inst, "lower_bound"):
        claims.bounds.append((float(inst.lower_bound()), "instance (lower_bound())"))
    solutions = [(float(r.value), r.method) for r in results if comparable(inst, r)]
    best = (max if sense == "max" else min)(solutions, key=lambda s: s[0], default=None)

    bk = {}
    if claims.best_known:
        v, src = (max if sense == "max" else min)(claims.best_known, key=lambda c: c[0])
        bk = {"best_known": v, "best_known_source": src, "known_optimum": known}
    # a bound met within the registry's tolerance of a method's own claim, not TOL: at TOL a makespan of
    # 1.4e6 met a lower bound 1.25 below it, and was called the optimum with a gap of 0
    met = [src for v, src in claims.bounds if best is not None and _same(v, best[0], CLAIM_TOL)]
    _bounds_hold(inst.name, claims, sense)
    _under_ceiling(inst, claims)
    for r in results:
        if best is not None and r.status == "infeasible" and _is_exact(inst, r.method):
            raise SolverDisagreement(f"{inst.name}: {r.method} claimed the instance infeasible, but {best[1]} "
                                     f"found a checked solution of value {best[0]:g}")
    for v, src in claims.optimum + claims.bounds:
        if best is not None and better(best[0], v, sense):
            raise SolverDisagreement(f"{inst.name}: {best[1]} found a checked value {best[0]:g}, better than "
                                     f"{v:g} proved by {src}")
        for b, bsrc in claims.best_known:   # a best-known value is a solution's value: no proof may beat it
            if better(b, v, sense):
                raise SolverDisagreement(f"{inst.name}: the best-known value {b:g} of {bsrc} is better than "
                                         f"{v:g} proved by {src}")
    if claims.optimum:
        vals = [v for v, _ in claims.optimum]
        if max(vals) - min(vals) > TOL * max(1.0, abs(max(vals))):
            detail = ", ".join(f"{s}={v:g}" for v, s in claims.optimum)
            raise SolverDisagreement(f"{inst.name}: proven optima disagree ({detail})")
        first = min(claims.optimum, key=lambda c: c[1])       # by source: the same whatever the methods' order
        return Reference(first[0], "optimum", "; ".join(sorted({s for _, s in claims.optimum})), **bk)
    if met:  # a checked solution meets a valid bound: both are the optimum
        return Reference(best[0], "optimum", f"run ({best[1]} meets {met[0]})", **bk)
    if claims.best_known:
        if best is not None and better(best[0], bk["best_known"], sense):
            # a checked solution of this run beats the data set's value: it is the best known now,
            # and the gaps are measured against it (the beaten value stays in best_known, for the flag)
            return Reference(best[0], "best known", f"run ({best[1]}, beats {bk['best_known_source']})", **bk)
        return Reference(bk["best_known"], "best known", bk["best_known_source"], **bk)
    if claims.bounds:
        v, src = (min if sense == "max" else max)(claims.bounds, key=lambda c: c[0])
        return Reference(v, "bound", src)
    return Reference(None, "no bound", "")


def _bounds_hold(name: str, claims: _Claims, sense: str) -> None:
    """:class:`SolverDisagreement` if a claimed optimum is better than a
    valid bound (the instance's LP / lower / upper bound, a reference
    file's, one an exact method proved in this run): a maximum above an
    upper bound, a minimum below a lower bound.  O(optima x bounds)."""
    for o, osrc in claims.optimum:
        for b, bsrc in claims.bounds:
            if better(o, b, sense):
                raise SolverDisagreement(f"{name}: the optimum {o:g} claimed by {osrc} is better than {b:g} "
                                         f"proved by {bsrc}")


# ---- rows ----------------------------------------------------------------------------
def run_methods(inst, methods: list[str], *, time_limit: float = 10.0, threads: int = 1,
                params: dict | None = None) -> list[Result]:
    """Every method on ``inst``, exact ones with the time limit and threads;
    ``params[name]``: keyword arguments of method ``name``.

    Every decision passes the family's feasibility checker inside
    :func:`epochbench.instances.registry.solve`; an infeasible one raises there."""
    out, extra = [], params or {}
    for name in methods:
        params = {"time_limit": time_limit, "threads": threads} if get(inst.kind, name).exact else {}
        out.append(solve(inst, name, **params, **extra.get(name, {})))
    return out


def gap_fields(inst, r: Result, ref: Reference, units: Units | None = None) -> dict:
    """The gap columns of one result against ``ref``: ``value``, ``bound``
    (the reference) and ``gap`` in the data set's units, ``gap_kind``,
    ``ref_source``, ``beats_reference``, ``units``, ``family_value``,
    ``family_bound``, ``short`` and, for assignment, ``cardinality`` and
    ``max_cardinality`` (NaN elsewhere).  ``gap`` is NaN without a solution
    or a reference.  ``short``: a solution that falls short of the family's
    first objective (assignment: fewer pairs than a maximum matching, whose
    weight gap alone would hide it; :data:`COMPARABLE`): never at the
    reference, never beating it."""
    units = units or Units.of(inst)
    solved = has_solution(r) and not _missing(r.value)
    value = float(r.value) if solved else math.nan
    g = gap(units.data(value), units.data(ref.bound)) if solved else math.nan
    beats = bool(comparable(inst, r) and ref.best_known is not None and not ref.known_optimum
                 and better(value, ref.best_known, inst.sense))
    first = inst.kind in COMPARABLE and solved
    return {"value": units.data(value), "bound": units.data(ref.bound), "gap": g, "gap_kind": ref.kind,
            "ref_source": ref.source, "beats_reference": beats, "units": units.name,
            "family_value": value, "family_bound": ref.bound, "short": bool(first and not comparable(inst, r)),
            "cardinality": r.info.get("cardinality", math.nan) if first else math.nan,
            "max_cardinality": r.info.get("max_cardinality", math.nan) if first else math.nan}


def gap_of(inst, r: Result, others=(), files=()) -> dict:
    """:func:`gap_fields` of ``r`` against the reference of ``inst`` built
    from ``r``, the ``others`` results (e.g. an exact method's) and ``files``:
    the one gap rule for the benchmarks and experiments."""
    return gap_fields(inst, r, reference(inst, [*others, r], files))


def score_rows(inst, results: list[Result], files=(), errors: dict | None = None,
               ref: Reference | None = None) -> list[dict]:
    """Tidy rows (one per method, :data:`COLUMNS`) for one instance;
    ``errors``: method -> message of the methods that raised on it (a row
    with status ``error`` each, no value, no gap); ``ref``: the reference
    (default :func:`reference` of the results and ``files``)."""
    ref = reference(inst, results, files) if ref is None else ref
    units = Units.of(inst)
    rows, data = [], digest(inst)
    for r in results:
        m = _method(inst, r.method)
        rows.append({"family": inst.kind, "instance": inst.name, "method": r.method,
                     "kind": m.kind if m else "user", "n": inst.n, "k": inst.k,
                     **gap_fields(inst, r, ref, units), "status": r.status, "seconds": r.seconds, "error": "",
                     "instance_digest": data})
    for name, message in (errors or {}).items():
        m = _method(inst, name)
        rows.append({"family": inst.kind, "instance": inst.name, "method": name, "kind": m.kind if m else "user",
                     "n": inst.n, "k": inst.k, "value": math.nan, "bound": units.data(ref.bound), "gap": math.nan,
                     "gap_kind": ref.kind, "ref_source": ref.source, "beats_reference": False, "units": units.name,
                     "family_value": math.nan, "family_bound": ref.bound, "short": False, "cardinality": math.nan,
                     "max_cardinality": math.nan, "status": "error", "seconds": math.nan, "error": message,
                     "instance_digest": data})
    return rows


def score(instances, methods: list[str], *, time_limit: float = 10.0, threads: int = 1,
          progress=None, references=(), params: dict | None = None, workers: int | None = 1,
          scheduler: str | None = None) -> pd.DataFrame:
    """Score ``methods`` on ``instances``: a tidy table with :data:`COLUMNS`.

    ``references``: a results file or a list of them (paths or
    :class:`ReferenceFile`) whose values join the instances' own (see
    :func:`read_reference_file`).  ``params``: per family, per method,
    keyword arguments of the method, ``{family: {method: {keyword:
    value}}}``; ``time_limit`` (a positive finite number) and ``threads``
    (an integer >= 1) and ``params`` are checked before anything runs
    (:func:`epochbench.methods.score_params`: a family, method, keyword or
    value that is not used or that a method refuses on one of the instances
    is a ValueError).
    ``workers`` / ``scheduler``: one task per instance through
    :func:`epochbench.sweep.run_tasks` (default 1: in this process; None: a
    local cluster of ``$EPOCHBENCH_WORKERS`` or every core, the command
    line's default; a single instance always runs in this process).  Each task has a worker to itself (the ``seconds`` of two
    solves never share a worker), and the methods travel with the tasks, so
    a method registered at run time is found on the workers too.  A method
    name that is not registered for a family of ``instances`` raises
    KeyError before anything runs; a method that raises on an instance gets
    a row with status ``error`` and the message in ``error`` (no value, no
    gap); the others go on.  When the proofs, bounds or reference values of
    an instance disagree (:func:`reference`), its rows get no gap and
    ``error`` = ``"disagreement: ..."``, the other instances are scored, and
    then :class:`SolverDisagreement` is raised with the whole table as its
    ``table`` attribute."""
    from epochbench.instances.registry import snapshot

    from .methods import check_limits, score_params
    from .sweep import run_tasks
    instances = list(instances)
    if not methods:
        raise ValueError(f"no method to score ({arg('methods')} names at least one)")
    unique(list(methods), "method", arg("methods"))
    unique([f"{inst.kind} {inst.name}" for inst in instances], "instance", "give each instance its own meta.name")
    kinds = list(dict.fromkeys(inst.kind for inst in instances))
    for kind in kinds:
        for name in methods:           # a name no family here knows: refused before any work (KeyError)
            try:
                get(kind, name)
            except UnknownMethod as exc:
                if len(kinds) < 2:
                    raise
                count = sum(inst.kind == kind for inst in instances)
                raise UnknownMethod(f"{exc}; the instances mix the families {', '.join(kinds)} ({count} of "
                                    f"{len(instances)} are {kind}): score each family's folder with its own "
                                    "methods") from None
    check_limits(time_limit, threads)  # bad options and parameters: one ValueError before any solve
    params = score_params(params, instances, list(methods))
    files = read_references(references)
    tasks = [{"instance": inst} for inst in instances]
    shipped = tuple(m for kind in dict.fromkeys(inst.kind for inst in instances)
                    for m in snapshot(kind, methods))
    call = functools.partial(_score_task, methods=methods, time_limit=time_limit, threads=threads,
                             params=params or {}, files=files, shipped=shipped)
    count = iter(range(1, len(tasks) + 1))
    done, _ = run_tasks(call, tasks, workers=workers, scheduler=scheduler, progress=False, stop_on_error=True,
                        exclusive=True, dashboard=progress is not None,
                        on_result=(lambda i, rows: progress(next(count), tasks[i]["instance"])) if progress
                        else None)
    table = pd.DataFrame([row for i in range(len(tasks)) for row in done[i]], columns=COLUMNS)
    table = table.astype({c: float for c in FLOAT_COLUMNS})     # None where no bound: NaN, never object
    clash = table["error"].str.startswith(DISAGREEMENT)
    if clash.any():                    # every instance was scored: the table travels with the error
        exc = SolverDisagreement(table.loc[clash, "error"].iloc[0][len(DISAGREEMENT):])
        exc.table = table
        raise exc
    return table


#: prefix of the ``error`` of the rows of an instance whose references disagree
DISAGREEMENT = "disagreement: "


def unique(items, what: str, hint: str) -> None:
    """ValueError naming the first ``what`` that appears twice in ``items``
    (its rows would be counted twice in the summary)."""
    twice = first_repeat(items)
    if twice is not None:
        raise ValueError(f"{what} {twice!r} appears twice ({hint})")


def _score_task(task: dict, *, methods, time_limit, threads, params, files, shipped=()) -> list[dict]:
    """The rows of one instance (a task of :func:`score`), with the methods
    as the calling process registered them (``shipped``)."""
    from epochbench.instances.registry import using
    inst = task["instance"]
    with using(shipped):
        results, errors = [], {}
        for name in methods:            # a method that raises loses its row here, not the run
            try:
                results += run_methods(inst, [name], time_limit=time_limit, threads=threads,
                                       params=params.get(inst.kind))
            except Exception as exc:    # noqa: BLE001 - reported as the row's error, and by the command
                errors[name] = f"{type(exc).__name__}: {exc}"
        return _in_order(rows_or_disagreement(inst, results, files, errors), methods)


def rows_or_disagreement(inst, results: list[Result], files=(), errors: dict | None = None) -> list[dict]:
    """:func:`score_rows`, or where the results' proofs, bounds or
    reference values disagree (:class:`SolverDisagreement`), the rows with
    no trustworthy reference: no gap, and ``error`` = ``"disagreement:
    ..."`` where a row has no error of its own."""
    try:
        return score_rows(inst, results, files, errors)
    except SolverDisagreement as exc:
        rows = score_rows(inst, results, (), errors, ref=Reference(None, "no bound", ""))
        return [{**row, "error": row["error"] or f"{DISAGREEMENT}{exc}"} for row in rows]


def _in_order(rows: list[dict], methods) -> list[dict]:
    """``rows`` in the order the methods were asked for (a method that
    raised got its row after the others)."""
    order = {m: i for i, m in enumerate(methods)}
    return sorted(rows, key=lambda row: order.get(row["method"], len(order)))


# ---- summary -------------------------------------------------------------------------
def gap_vs(kinds) -> str:
    """What a group's gaps are measured against: ``"optimum"`` or, mixed,
    ``"optimum 8, no bound 2"`` (in :data:`SUMMARY_KINDS` order)."""
    c = Counter(kinds)
    if len(c) == 1:
        return next(iter(c))
    return ", ".join(f"{k} {c[k]}" for k in SUMMARY_KINDS if k in c)


def summary_kinds(table: pd.DataFrame) -> pd.Series:
    """``gap_kind`` of each row of a score table, "disagree" where the
    instance's references disagreed (``error`` starts with
    :data:`DISAGREEMENT`): those rows carry "no bound" and no gap, and a
    summary counted them as "no bound", which hid why they had none.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows of :func:`score` (``gap_kind``; ``error`` where present).

    Returns
    -------
    pandas.Series
        One of :data:`SUMMARY_KINDS` per row, on the table's index.
    """
    kinds = table["gap_kind"]
    if "error" not in table:
        return kinds
    clash = table["error"].fillna("").astype(str).str.startswith(DISAGREEMENT)
    return kinds.where(~clash, "disagree")


def at_reference_share(gap: pd.Series, missed: pd.Series, short: pd.Series | None = None) -> float:
    """Share of instances at the reference (gap <= 1e-9, and not ``short``
    of the family's first objective, :func:`gap_fields`) among those with a
    gap or ``missed`` (no answer where there was a reference, or one that
    failed: not at the reference); NaN when no instance has either (0 for a
    method that answered none, as on the leaderboards: it printed "-" in
    ``score`` where they print 0 %)."""
    has = gap.notna()
    if not (has | missed).any():
        return math.nan
    at = (gap <= 1e-9) & has
    if short is not None:
        at &= ~short.fillna(False).astype(bool)
    return float(at.sum() / (has | missed).sum())


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per (family, method): mean and max gap (over rows that have one), share
    of instances at the reference (of those with a gap or with no answer: a
    solve that gave no decision is not at the reference), median seconds, what the gaps are measured
    against (``gap_vs``; rows whose references disagreed, which have no gap,
    count as "disagree", not "no bound": :func:`summary_kinds`), how many
    are not against an optimum (``unproven``),
    how many beat their reference, and how many gave no decision
    (``no_answer``: a timeout without a solution, an error; the gaps leave
    them out, so read the gaps with it); ``units`` where not the family's;
    ``short`` where a family of the table has a first objective (assignment):
    the solutions with fewer pairs than a maximum matching, which are not
    at the reference whatever their weight gap; ``cut``: an exact method's
    solves that ended without a proof (status ``feasible``: its time limit
    cut it short, or a claim it made was withdrawn), whose gaps are those
    solutions' (0 for a heuristic; printed where it counts something, as
    on the leaderboards)."""
    def agg(df):
        g = df["gap"].astype(float)
        missed = (df["value"].isna() & ~df["gap_kind"].isin(NO_GAP_KINDS) if "value" in df
                  else pd.Series(False, index=df.index))         # no answer, though there was a reference
        short = df["short"].fillna(False).astype(bool) if "short" in df else None
        out = {
            "instances": len(df),
            "no_answer": int(df["value"].isna().sum()) if "value" in df else 0,
            **({"short": int(short.sum())} if lexicographic else {}),
            "mean_gap": g.mean(),
            "max_gap": g.max(),
            "at_bound": at_reference_share(g, missed, short),
            "median_s": float(np.nanmedian(df["seconds"])) if df["seconds"].notna().any() else math.nan,
            "gap_vs": gap_vs(df["gap_kind"]),
            "unproven": int((df["gap_kind"] != "optimum").sum()),
            "beats": int(df["beats_reference"].astype(bool).sum()),
            "cut": int(((df["kind"] == "exact") & (df["status"] == "feasible")).sum()) if cut else 0,
        }
        if "units" in df:
            out["units"] = ", ".join(sorted(set(df["units"])))
        return pd.Series(out)
    keys = ["family", "method"]
    table = table.assign(gap_kind=summary_kinds(table))      # a disagreement counted apart, not as "no bound"
    lexicographic = "short" in table and table["family"].isin(list(COMPARABLE)).any()
    cut = "kind" in table and "status" in table
    cols = [c for c in ("gap", "value", "seconds", "gap_kind", "beats_reference", "units", "short", "kind", "status")
            if c in table]
    out = table.groupby(keys, sort=False)[cols].apply(agg).reset_index()
    if "units" in out and (out["units"] == "family").all():
        out = out.drop(columns="units")
    return out.astype({"instances": int, "no_answer": int, "unproven": int, "beats": int, "cut": int,
                       **({"short": int} if lexicographic else {})})


def percent(x) -> str:
    """A gap in percent with 2 decimals; one that is not 0 never reads
    "0.00%" ("<0.01%"): a mean gap of 0.003 % read as none beside an
    at-reference share under 100 %."""
    if pd.isna(x):
        return "-"
    if x == 0:
        return "0.00%"                          # -0.0 too
    text = f"{100 * x:.2f}%"
    if text in ("0.00%", "-0.00%"):
        return "<0.01%" if x > 0 else ">-0.01%"
    return text


def share_text(x) -> str:
    """A share in whole percent, never rounded onto 0 % or 100 % when it is
    neither: 1330 of 1331 read "100%" beside a max gap of 12.5 %; one
    decimal more where whole percent would round onto either."""
    if pd.isna(x):
        return "-"
    text = f"{100 * x:.0f}%"
    if (text == "100%" and x < 1) or (text == "0%" and x > 0):
        digits = 1
        while f"{100 * x:.{digits}f}" in (f"{100:.{digits}f}", f"{0:.{digits}f}") and digits < 6:
            digits += 1
        text = f"{100 * x:.{digits}f}%"
    return text


def shown(df: pd.DataFrame) -> pd.DataFrame:
    """Copy for printing: gaps in percent (2 decimals), shares in whole
    percent (:func:`share_text`); a gap with nothing to measure against
    reads "no bound", "disagree" where every reference disagreed, "no gap"
    where some had none and the others disagreed (:func:`_gapless`)."""
    out = df.copy()
    vs = out["gap_vs"] if "gap_vs" in out else pd.Series("", index=out.index)
    for col in ("mean_gap", "max_gap"):
        if col in out:
            out[col] = [_gapless(v) or percent(x) for x, v in zip(out[col], vs)]
    for col in ("at_bound", "optimal"):
        if col in out and pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].map(share_text)
    return out


#: the kinds of :data:`SUMMARY_KINDS` whose rows have no gap
NO_GAP_KINDS = ("no bound", "disagree")


def _gapless(vs: str) -> str | None:
    """What a summary's gap reads when its ``gap_vs`` (:func:`gap_vs`) holds
    only rows without a gap: that kind ("no bound", "disagree"), or "no gap"
    for both; None otherwise."""
    if vs in NO_GAP_KINDS:
        return vs
    kinds = [part.rsplit(" ", 1)[0] for part in str(vs).split(", ")]
    return "no gap" if kinds and all(k in NO_GAP_KINDS for k in kinds) else None


def format_table(df: pd.DataFrame) -> str:
    """Plain-text summary with gaps in percent and times in ms."""
    out = shown(df)
    if "cut" in out and not out["cut"].any():
        out = out.drop(columns="cut")                        # a count of nothing (always in the CSV)
    if "median_s" in out:
        out["median_ms"] = out.pop("median_s").map(milliseconds)
    return out.to_string(index=False)


def milliseconds(x) -> str:
    """Seconds as milliseconds with 3 decimals; "-" where there is no time
    (every solve failed), as for a share or a gap."""
    return "-" if pd.isna(x) else f"{1000 * x:.3f}"


def recorded_gap(inst, *, time_limit: float, method: str = "cpsat") -> float | None:
    """Gap of a recorded epoch's own choice (method ``recorded``) to the
    optimum proved by exact ``method`` (one thread); ``None`` when the
    reference is not a proven optimum.  Used by the experiments that score
    a sample of their simulators' epochs."""
    mine = solve(inst, "recorded")
    exact = solve(inst, method, time_limit=time_limit, threads=1)
    ref = reference(inst, [mine, exact])
    return gap(mine.value, ref.bound) if ref.kind == "optimum" else None
