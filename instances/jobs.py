"""Job streams: the :class:`Workload` table and its SWF, CSV and Parquet files.

Column contract of ``Workload.jobs`` (one row per job, sorted by (submit, id),
index 0..n-1); the simulator reads the first six columns and the optional ones.

==========  =======  ======================================================================
column      dtype    meaning
==========  =======  ======================================================================
id          int64    job number (SWF field 1), unique
submit      float64  arrival time in seconds (SWF field 2), >= 0
runtime     float64  actual run time from the trace (SWF field 4), >= 0
estimate    float64  user estimate, > 0: requested time (field 9) if > 0, else the runtime;
                     a job with neither (runtime 0, no request) gets 1 s, the SWF time unit,
                     and is counted in ``meta["adjusted"]["estimate_set_to_1s"]``
procs       int64    processors (nodes), 1 <= procs <= capacity[0]: requested (field 8)
                     if > 0, else allocated (field 5)
duration    float64  what the simulator runs the job for: min(runtime, estimate) when
                     ``meta["kill_at_estimate"]`` (default; [zhang-comparative] section 2.1: jobs are
                     killed at their estimate), else runtime.  Always derived, never read.
res_<name>  int64    optional, one per extra resource ``resources[k]``, k >= 1, with
                     0 <= res_<name> <= capacity[k]
deadline    float64  optional, absolute time in seconds, NaN = none
licenses    str      optional, license names joined by ";", "" = none
==========  =======  ======================================================================

The other SWF fields are kept under these names (SWF field number in brackets;
-1 = unknown as in SWF): ``wait`` (3), ``alloc_procs`` (5), ``avg_cpu`` (6),
``mem`` (7, KB), ``req_procs`` (8), ``req_time`` (9), ``req_mem`` (10),
``status`` (11), ``user`` (12), ``group`` (13), ``app`` (14), ``queue`` (15),
``partition`` (16), ``prev_job`` (17), ``think_time`` (18).  They are float64
for times and memory; the integer ones take the narrowest signed integer type
that holds their values (int8 to int64), so that millions of jobs fit in
memory.  Names in ``user``, ``group``, ``app``, ``queue`` or ``partition``
(a CSV's text) are numbered as SWF numbers them (:data:`NAME_FIELDS`),
the names kept in ``meta["names"]``.  Any further column passes through, unless it is spelt like an
absent ``estimate`` (``estmate``, ``Estimate``, ``user_estimate``), is
another system's name for it (``walltime``, ``requested_time``,
``timelimit``: :data:`ESTIMATE_NAMES`), or is ``req_time`` without
``estimate``: that is refused, not run with every estimate the runtime.  A
given ``duration`` that differs from the derived one is refused too.
:attr:`Workload.table` holds the columns as numpy arrays (read-only);
:attr:`Workload.jobs` is the same table as a DataFrame, built on first use.

Jobs that cannot run are dropped and counted by reason in ``Workload.dropped``,
never silently.  The first rule that applies names the reason, in this order:
``negative_submit``, ``negative_runtime`` (SWF -1 = unknown), ``no_processors``,
``too_many_processors`` (more than capacity[0]), then per extra resource
``negative_<name>`` and ``too_much_<name>``.  An SWF file's partial
executions (status 2, 3 or 4: the lines of a checkpointed or swapped job
that follow its summary line under the same job number) are dropped before
that, counted as ``partial_execution``; the summary line is the job.

Files: SWF (``.swf``, ``.swf.gz``) carries the 18 fields; extra resources,
deadlines, licenses and other columns go to a sidecar ``<path>.extra.csv``
keyed by ``id`` and the extra capacities to the header keys
``EpochbenchResources`` / ``EpochbenchCapacity`` (``procs mem`` / ``64
100``: one whole number per name, procs first, each name once, the
processors as ``MaxProcs`` says; refused by name otherwise; a resource the
sidecar adds undeclared takes its largest job's amount).  CSV keeps capacity,
resources, dropped counts and meta as JSON on a first line ``# epochbench
{...}``; Parquet keeps the same JSON under the schema metadata key
``epochbench``.  Suffixes are matched in any case (``T.SWF.GZ``, ``C1.CSV``), and a
UTF-8 byte-order mark at the start of a text file is skipped.
"""
from __future__ import annotations

import gzip
import io
import json
import math
import os
import re
import zlib
from pathlib import Path

import numpy as np

from epochbench.instances.arguments import arg
from epochbench.instances.checks import first_repeat
from epochbench.instances.core import MAX_NODES, InstanceError, _plain, note
from epochbench.instances.files import atomic_path, write_bytes
from epochbench.instances.lazy import kernels_loaded
from epochbench.instances.table import Columns, as_columns, in_arrival_order, narrowest_int

SWF_FIELDS = ("id", "submit", "wait", "runtime", "alloc_procs", "avg_cpu", "mem", "req_procs", "req_time",
              "req_mem", "status", "user", "group", "app", "queue", "partition", "prev_job", "think_time")
SWF_FLOAT = frozenset({"submit", "wait", "runtime", "avg_cpu", "mem", "req_time", "req_mem", "think_time"})
RAW_FIELDS = tuple(f for f in SWF_FIELDS if f not in ("id", "submit", "runtime"))
#: the raw SWF fields that read_swf stores in the narrowest integer type holding them
NARROW_FIELDS = tuple(f for f in RAW_FIELDS if f not in SWF_FLOAT)
CORE = ("id", "submit", "runtime", "estimate", "procs", "duration")
REQUIRED = ("id", "submit", "runtime", "procs")
SIDECAR_SUFFIX = ".extra.csv"
CSV_TAG = "# epochbench "
PARQUET_KEY = b"epochbench"
#: the UTF-8 byte-order mark that some editors write before a text file: skipped when read
UTF8_BOM = b"\xef\xbb\xbf"


class Workload:
    """A job stream on a machine of ``capacity`` (K entries; entry 0 = processors).

    Build it with :func:`make_workload` or a reader.  ``table`` holds the
    jobs as numpy :class:`~epochbench.instances.table.Columns` following the
    column contract of this module's docstring; ``jobs`` is the same table as
    a :class:`pandas.DataFrame`, built on first use (the simulator's fast
    path never needs it, so that ``epochbench simulate`` does not import
    pandas).  Both are read-only: the arrays of a workload that
    :func:`make_workload` or a reader built are (an edit of a cell of
    ``jobs`` raises numpy's "assignment destination is read-only"; a column
    assigned to it reaches neither the table nor the next ``jobs``); to
    change the jobs, edit ``jobs.copy()`` and build a new workload from it.
    """

    __slots__ = ("table", "capacity", "resources", "dropped", "source", "meta", "_frame", "_text")

    def __init__(self, jobs, capacity, resources: tuple = ("procs",), dropped: dict | None = None,
                 source: str = "memory", meta: dict | None = None):
        self.table = as_columns(jobs)
        self.capacity = capacity
        self.resources = tuple(resources)
        self.dropped = dict(dropped or {})
        self.source = source
        self.meta = dict(meta or {})
        self._frame = jobs if hasattr(jobs, "iloc") else None
        self._text: dict = {}             # the frame's own arrays of its text columns (:func:`_shows`)
        if len(self.resources) != len(self.capacity) or self.resources[0] != "procs":
            raise InstanceError(f"{self.source}: resources {self.resources} must start with 'procs' "
                                f"and match capacity {list(self.capacity)}")

    @property
    def jobs(self):
        """The job table as a :class:`pandas.DataFrame` over its arrays, built
        on first use and again where an edit changed the frame itself: a
        column assigned, added or removed, the rows sorted in place
        (:func:`_shows`).  Such an edit never reaches the workload, whose
        ``table`` the simulations read; it was kept on the frame, which then
        showed jobs that no simulation ran.  O(columns) a call."""
        if self._frame is None or not _shows(self._frame, self.table, self._text):
            self._frame = self.table.to_frame()
            self._text = {c: self._frame[c].array for c in self.table.columns if self.table[c].dtype.kind not in "biuf"}
        return self._frame

    def __len__(self) -> int:
        return len(self.table)

    def __repr__(self) -> str:
        return (f"Workload({len(self)} jobs, capacity={self.capacity.tolist()}, resources={self.resources}, "
                f"source={self.source!r})")

    @property
    def nodes(self) -> int:
        """capacity[0], the machine size in processors (nodes)."""
        return int(self.capacity[0])

    @property
    def kill_at_estimate(self) -> bool:
        return bool(self.meta.get("kill_at_estimate", True))


def _shows(frame, table: Columns, text: dict) -> bool:
    """Whether ``frame`` still shows ``table``: its columns in order, rows
    0..n-1, each numeric column over the table's own array and each text
    column over the array it was built with (``text``: pandas copies text
    into its string type, so those are compared by the frame's own array).
    An empty table shares no memory to compare."""
    names = list(table.columns)
    index = frame.index
    if list(frame.columns) != names or type(index).__name__ != "RangeIndex" or index.start != 0 or \
            index.step != 1 or len(index) != len(table):
        return False
    if len(table) == 0:
        return True
    for name in names:
        mine = table[name]
        if mine.dtype.kind in "biuf":
            if not np.may_share_memory(frame[name].to_numpy(copy=False), mine):
                return False
        elif name not in text or frame[name].array is not text[name]:
            return False
    return True


# ---- building and validating --------------------------------------------------------
def make_workload(jobs, capacity, *, resources=None, kill_at_estimate: bool = True, source: str = "memory",
                  meta: dict | None = None, dropped: dict | None = None) -> Workload:
    """Validate a job table and build a :class:`Workload`; cost O(n log n) (the sort).

    ``jobs`` (a DataFrame, :class:`~epochbench.instances.table.Columns` or a
    mapping of columns) needs ``id, submit, runtime, procs``; ``estimate`` is optional
    (missing, NaN or <= 0 means unknown: the runtime, or 1 s where that is 0 too).
    ``capacity`` is an int or K ints; without ``resources`` the extra names come
    from the ``res_<name>`` columns in table order.  Raises
    :class:`~epochbench.instances.core.InstanceError` on missing columns, non-numeric or
    NaN values, fractional counts and duplicate ids; drops by reason the jobs
    that cannot run (module docstring), adding to ``dropped``.  The input's
    arrays are never written to, and the workload shares none of them: a
    column already in its contract dtype and order is copied once, so that a
    later change to the caller's table does not reach the checked workload.
    The workload's arrays are read-only.  A ``duration`` column is derived
    (module docstring); one given that differs from the derived one is refused.
    """
    return _build(jobs, capacity, resources=resources, kill_at_estimate=kill_at_estimate, source=source,
                  meta=meta, dropped=dropped, owned=False)


def _build(jobs, capacity, *, resources, kill_at_estimate, source, meta, dropped, owned: bool) -> Workload:
    """:func:`make_workload`; ``owned``: the table is the caller's own to
    give away (a file reader's), so none of its arrays is copied."""
    given = as_columns(jobs)
    tab = Columns(dict(given.items()))
    missing = [c for c in REQUIRED if c not in tab]
    if missing:
        raise InstanceError(_lacks(tab, missing, source))
    _no_misspelt_options(tab, source)
    cap = _capacity(capacity, source)
    names = _resource_names(tab, cap, resources, source)
    numbered = _coerce(tab, names, source)
    for col, said in numbered.items():
        note(f"{source}: column '{col}' holds names: numbered 1 to {len(said)} in order of first appearance, "
             "as SWF numbers them" + (", -1 where empty or -1" if (tab[col] < 0).any() else ""))
    tab, drops = _drop(tab, cap, names)
    _fractions_kept(tab, source)
    meta = dict(meta or {})
    if numbered:                    # number k of a column is the name at k - 1
        meta["names"] = {**meta.get("names", {}), **numbered}
    adjusted = dict(meta.get("adjusted", {}))
    unknown, floored = _set_estimate(tab)
    if unknown:
        adjusted["estimate_unknown_set_to_runtime"] = adjusted.get("estimate_unknown_set_to_runtime", 0) + unknown
    if floored:
        adjusted["estimate_set_to_1s"] = adjusted.get("estimate_set_to_1s", 0) + floored
    if not isinstance(kill_at_estimate, (bool, np.bool_)):       # bool("no") is True
        raise InstanceError(f"{source}: kill_at_estimate must be True or False, got {kill_at_estimate!r}")
    kill = bool(kill_at_estimate)
    est, run = tab["estimate"], tab["runtime"]
    derived = np.minimum(run, est) if kill else run
    if "duration" in tab:
        _same_duration(tab["duration"], derived, tab["id"], kill, source)
    tab["duration"] = derived
    meta.update(kill_at_estimate=kill, adjusted=adjusted)
    total = dict(dropped or {})
    for reason, count in drops.items():
        total[reason] = total.get(reason, 0) + count
    return Workload(_private(_ordered(tab, names), () if owned else given), cap, names, total, str(source), meta)


def _same_duration(duration, derived, ids, kill: bool, source) -> None:
    """Refuse a given ``duration`` column unlike the derived one: it was
    overwritten without a word (``duration=1000`` ran every job for its
    runtime).  A job table of a run, given back with its rule, passes
    (:func:`read_table` drops the column of a table it wrote itself)."""
    try:
        same = np.asarray(duration, dtype=np.float64) == derived
    except (TypeError, ValueError):
        same = np.zeros(len(derived), bool)
    if not np.all(same):
        row = int(np.argmin(same))
        rule = ("min(runtime, estimate), jobs killed at their estimate" if kill
                else "the runtime (kill_at_estimate=False)")
        raise InstanceError(f"{source}: column 'duration' is derived, never read: {rule}; yours differs at job "
                            f"id {int(ids[row])} ({_shown(duration[row])}, derived {float(derived[row])!r}): drop "
                            "it, or set runtime / estimate / kill_at_estimate")


def _shown(value) -> str:
    """A table value as a user wrote it (``1000.0``, not ``np.float64(1000.0)``)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _private(tab: Columns, given) -> Columns:
    """``tab`` with a copy of every array it shares with the caller's
    ``given`` (a column already in its dtype and order was the caller's own
    array: changing it afterwards changed the checked workload), all read-only.
    The file readers' tables are their own (``given`` empty): nothing is copied."""
    theirs = [v for _, v in (given.items() if given else ()) if isinstance(v, np.ndarray)]
    out = {}
    for name, arr in tab.items():
        if any(np.may_share_memory(arr, v) for v in theirs):
            arr = arr.copy()
        arr.setflags(write=False)
        out[name] = arr
    return Columns(out)


#: the optional columns that change a run when present and are missed silently when misspelt (an
#: absent ``estimate`` is the runtime; ``deadline`` and ``licenses`` change no run of the pool or gang)
READ_OPTIONAL = ("estimate",)


#: what batch systems and traces call the user's estimate (requested wall time); such a column without
#: ``estimate`` passed through unread and every estimate was the runtime
ESTIMATE_NAMES = frozenset({"walltime", "wall_time", "wallclock", "wall_clock", "wclimit", "req_walltime",
                            "requested_walltime", "requested_time", "request_time", "reqtime", "req_wall_time",
                            "time_limit", "timelimit", "timelimit_raw", "estimated_runtime",
                            "estimated_time", "runtime_estimate", "est_runtime"})


def _others(tab) -> list[str]:
    """The columns of ``tab`` that the contract does not name (module docstring)."""
    known = {*CORE, *SWF_FIELDS, *READ_OPTIONAL, "deadline", "licenses"}
    return [c for c in tab.columns if isinstance(c, str) and c not in known and not c.startswith("res_")]


def _lacks(tab, missing, source) -> str:
    """The message for a table without the columns ``missing``: the columns
    spelt like them, else the columns it has (a CSV read with the wrong
    delimiter has one column named after the whole header line)."""
    guess = _did_you_mean(tab, missing)
    if guess:
        return f"{source}: job table lacks column(s) {missing}{guess}"
    has = [str(c) for c in tab.columns]
    shown = ", ".join(repr(c) for c in has[:12]) + (f" and {len(has) - 12} more" if len(has) > 12 else "")
    hint = " (is the file comma-separated?)" if len(has) == 1 and any(d in has[0] for d in ";\t|") else ""
    return f"{source}: job table lacks column(s) {missing}; it has {shown or 'no columns'}{hint}"


def _did_you_mean(tab, names) -> str:
    """``"; did you mean ..."`` naming the columns of ``tab`` spelt like ``names``, else ""."""
    import difflib
    others = {c.lower(): c for c in _others(tab)}
    guesses = {n: [others[g] for g in difflib.get_close_matches(n, list(others), n=1, cutoff=0.75)] for n in names}
    said = [f"{g[0]!r} for {n!r}" for n, g in guesses.items() if g]
    return f"; did you mean {', '.join(said)}?" if said else ""


def _no_misspelt_options(tab, source) -> None:
    """Refuse a column spelt like an absent column of :data:`READ_OPTIONAL`
    (``estmate``): it would pass through unread and the run go without it
    (every estimate the runtime), silently; so would an SWF ``req_time``
    without ``estimate`` (a CSV of SWF fields: the same job ran killed at
    its request from the SWF file, at its runtime from the CSV)."""
    absent = [n for n in READ_OPTIONAL if n not in tab]
    if "estimate" in absent and "req_time" in tab:   # the SWF reader's estimate, taken by nothing here
        raise InstanceError(f"{source}: has SWF field req_time but no estimate column, which is what the simulator "
                            "reads (without it every estimate is the runtime): add estimate (req_time where > 0, "
                            "as the SWF reader takes it) or drop req_time")
    others = _others(tab)
    _no_misspelt_resources(others, source)
    if others:
        import difflib                            # only a table with unknown columns pays for it
    for c in others:
        if "estimate" in absent and c.lower().replace("-", "_").replace(" ", "_") in ESTIMATE_NAMES:
            raise InstanceError(f"{source}: column {c!r} is not one epochbench reads, and 'estimate' (the user's "
                                f"requested time) is absent: rename it 'estimate' if it is that (without it every "
                                "estimate is the runtime), or give it another name")
        close = difflib.get_close_matches(c.lower(), absent, n=1, cutoff=0.75)
        if close:
            raise InstanceError(f"{source}: column {c!r} is not one epochbench reads, and {close[0]!r} is absent: "
                                f"rename it {close[0]!r} (or drop it, or give it another name)")


def _no_misspelt_resources(columns, source) -> None:
    """Refuse a column that reads as a resource column once spaces, case and
    hyphens are set aside (`` res_mem``, ``Res_mem``, ``res-mem``): only
    ``res_<name>`` as written is one, so its resource would be left out of
    the run, silently (a review found the jobs then shared memory they
    could not)."""
    for c in columns:
        if not isinstance(c, str) or c.startswith("res_"):
            continue
        meant = c.strip().lower().replace("-", "_").replace(" ", "_")
        if meant.startswith("res_"):
            raise InstanceError(f"{source}: column {c!r} is not one epochbench reads; a resource column is named "
                                f"res_<name> exactly: rename it {meant!r} (or give it another name)")


def _capacity(capacity, source) -> np.ndarray:
    """``capacity`` as K positive int64s; one past :data:`MAX_NODES` is
    refused (2**63 wrapped to a negative capacity and dropped every job)."""
    try:
        cap = np.atleast_1d(np.asarray(capacity))
    except (OverflowError, ValueError, TypeError):
        cap = np.zeros(0)
    if cap.ndim != 1 or cap.size == 0 or cap.dtype.kind not in "iuf" or np.any(cap != np.round(cap)) \
            or np.any(cap < 1):
        raise InstanceError(f"{source}: capacity must be one or more positive integers, got {capacity!r}")
    if np.any(cap > MAX_NODES):
        raise InstanceError(f"{source}: capacity {cap.tolist()} is beyond {MAX_NODES} (2**53) units")
    cap = cap.astype(np.int64)
    cap.setflags(write=False)
    return cap


def _resource_names(tab, cap, resources, source) -> tuple:
    res_cols = [c for c in tab.columns if isinstance(c, str) and c.startswith("res_")]
    names = ("procs", *(c[4:] for c in res_cols)) if resources is None else tuple(resources)
    blank = [n for n in names if not isinstance(n, str) or not n.strip()]
    if blank:                                  # a column 'res_' was a resource named '' (a review)
        raise InstanceError(f"{source}: a resource's name must be text that is not blank, got {blank[0]!r} "
                            f"(resources {list(names)}; a column res_NAME names resource NAME)")
    if first_repeat(names) is not None:        # one res_ column read as two resources (a review)
        raise InstanceError(f"{source}: resources {list(names)} name {first_repeat(names)!r} twice")
    if names[0] != "procs" or len(names) != len(cap):
        raise InstanceError(f"{source}: resources {names} must start with 'procs' and match "
                            f"capacity {cap.tolist()} (res_ columns: {res_cols})")
    absent = [f"res_{n}" for n in names[1:] if f"res_{n}" not in tab]
    unused = [c for c in res_cols if c[4:] not in names[1:]]
    if absent or unused:
        raise InstanceError(f"{source}: resources {names} need columns {absent}, and columns {unused} "
                            f"have no capacity")
    return names


#: the SWF fields that number people and places: user (12), group (13), app
#: (14), queue (15), partition (16).  A job table's column of names there (a
#: Slurm export's user names) is numbered 1, 2, ... in order of first
#: appearance, as the Parallel Workloads Archive numbers them when it converts
#: a log; -1 where empty or -1 (SWF's unknown), in a column of numbers too.
#: :func:`_numbered`, :func:`_unknown_as_minus_one`
NAME_FIELDS = ("user", "group", "app", "queue", "partition")


def _numbered(values) -> tuple[np.ndarray, list[str]] | None:
    """A :data:`NAME_FIELDS` column that the numeric read refused, as
    numbers: (the numbers, the names in the order numbered: name k - 1 has
    number k), or None when it holds no text that is not a number (then
    its refusal stands: a fraction, an infinity).  Missing values (None,
    NaN, ``pd.NA``), blank text and ``-1`` are -1; bytes are read as UTF-8.
    O(n)."""
    import pandas as pd
    ser = pd.Series(np.asarray(values, dtype=object), dtype=object)
    miss = ser.isna().to_numpy()                  # None, NaN, pd.NA, NaT
    text = pd.Series([None if gone else (v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)).strip()
                      for v, gone in zip(ser, miss)], dtype=object)
    words = text[[isinstance(v, (str, bytes)) for v in ser]]
    if not pd.to_numeric(words[words != ""], errors="coerce").isna().any():
        return None
    unknown = miss | (text == "").to_numpy() | (text == "-1").to_numpy()
    codes, uniques = pd.factorize(text.where(~unknown))
    return narrowest_int(np.where(codes >= 0, codes + 1, -1).astype(np.int64)), [str(u) for u in uniques]


def _unknown_as_minus_one(values) -> tuple[np.ndarray, int] | None:
    """A :data:`NAME_FIELDS` column of numbers with missing values (None,
    NaN, ``pd.NA``, blank text) as -1 there, SWF's unknown, as
    :func:`_numbered` reads them among names, and how many were missing;
    None when nothing is missing (its refusal stands). O(n)."""
    import pandas as pd
    ser = pd.Series(np.asarray(values, dtype=object), dtype=object)
    miss = ser.isna().to_numpy() | np.array([isinstance(v, (str, bytes)) and not v.strip() for v in ser], dtype=bool)
    if not miss.any():
        return None
    return np.where(miss, -1, ser.to_numpy()).astype(object), int(miss.sum())


def _coerce(tab: Columns, names, source) -> dict[str, list[str]]:
    """Cast the contract columns in place (new arrays); raise on NaN, text and fractions.
    The raw SWF integer fields keep a narrower integer type when they have one;
    a column of names among :data:`NAME_FIELDS` is numbered (:func:`_numbered`):
    returns its names by column."""
    ints = ["id", "procs", *(f"res_{n}" for n in names[1:])]
    for col in ints:
        if col in tab:
            tab[col] = _as_int(tab[col], col, source, ids=tab["id"] if col != "id" else None)
    ids = tab["id"]
    numbered: dict[str, list[str]] = {}
    for col in NARROW_FIELDS:
        if col in tab:
            try:
                tab[col] = _as_int(tab[col], col, source, narrow=True, ids=ids)
            except InstanceError:          # numbers read as before; only text that is no number is named
                got = _numbered(tab[col]) if col in NAME_FIELDS else None
                unknown = _unknown_as_minus_one(tab[col]) if got is None and col in NAME_FIELDS else None
                if unknown is not None:    # numbers with empty cells: -1 there, as among names (a review)
                    filled, empty = unknown
                    tab[col] = _as_int(filled, col, source, narrow=True, ids=ids)
                    note(f"{source}: column '{col}' has {empty} empty cell(s): -1 there, SWF's unknown")
                    continue
                if got is None:
                    raise
                tab[col], numbered[col] = got
    for col in ("submit", "runtime", "estimate", "deadline", *(f for f in RAW_FIELDS if f in SWF_FLOAT)):
        if col in tab:
            tab[col] = _as_float(tab[col], col, source, allow_nan=col in ("estimate", "deadline"), ids=ids)
    if "licenses" in tab:
        lic = tab["licenses"]
        if lic.dtype.kind != "U" or len(lic) == 0:
            lic = np.array(["" if _missing(v) else str(v) for v in lic], dtype=object)
        tab["licenses"] = lic
    job = _repeated_id(ids)
    if job is not None:
        first, second = np.flatnonzero(ids == job)[:2] + 1
        raise InstanceError(f"{source}: job id {job} occurs more than once (jobs {first} and {second} of the input)")
    return numbered


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _numeric(values, name: str = "", source: str = "", *, errors: str = "raise", ids=None) -> np.ndarray:
    """``values`` as float64; text goes through pandas' parser, which raises
    (``errors="raise"``: an :class:`InstanceError` naming the value and its
    job, :func:`_at`) or gives NaN for it (``"coerce"``)."""
    arr = np.asarray(values)
    if arr.dtype.kind in "mM" and errors == "raise":     # numpy would read datetimes as microseconds
        what, how = (("dates", "(t - t.min()).dt.total_seconds()") if arr.dtype.kind == "M"
                     else ("durations", "t.dt.total_seconds()"))
        raise InstanceError(f"{source}: column '{name}' holds {what} ({arr.dtype}); give seconds as numbers, "
                            f"e.g. {how}")
    if arr.dtype.kind == "b" and errors == "raise":
        raise InstanceError(f"{source}: column '{name}' holds true / false, not numbers")
    if arr.dtype.kind == "c":      # numpy's cast to float64 drops the imaginary part with only a ComplexWarning
        raise InstanceError(f"{source}: column '{name}' holds complex numbers ({arr.dtype}); give real numbers")
    if arr.dtype.kind in "iufb":
        return arr.astype(np.float64, copy=False)
    if arr.dtype == object and errors == "raise":
        # true / false beside an empty cell or None: not a boolean column, and pandas reads them as 1 / 0
        # (an estimate of True ran a 50 s job for 1 s, exit 0)
        row = next((i for i, v in enumerate(arr.ravel().tolist()) if type(v) is bool), None)   # np.bool_ -> bool
        if row is not None:
            raise InstanceError(f"{source}: column '{name}' holds true / false, not numbers "
                                f"({arr.ravel()[row]!r} at {_at(row, ids)})")
    import pandas as pd
    try:
        got = pd.to_numeric(pd.Series(arr), errors=errors)
        if got.dtype.kind == "c":           # Python complex values in an object column
            raise InstanceError(f"{source}: column '{name}' holds complex numbers ({arr.dtype}); give real numbers")
        return got.to_numpy(dtype=np.float64, na_value=np.nan)
    except (ValueError, TypeError) as exc:
        if isinstance(exc, InstanceError):
            raise
        # pandas names a 0-based "position": the job is named as the other value errors name it
        got = pd.to_numeric(pd.Series(arr), errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        bad = np.flatnonzero(np.isnan(got) & ~pd.isna(pd.Series(arr)).to_numpy())
        if bad.size:
            raise InstanceError(f"{source}: column '{name}' has {arr[bad[0]]!r}, not a number, at "
                                f"{_at(int(bad[0]), ids)}") from None
        raise InstanceError(f"{source}: column '{name}' is not numeric ({exc})") from None


#: the largest magnitude of a time or other float column (2**53: beyond it
#: float64 no longer holds every whole second, so that end - submit is wrong)
FLOAT_LIMIT = 2.0 ** 53


def _at(row: int, ids=None) -> str:
    """Where a bad value is: the job's place in the input, counted from 1
    as lines are (a 0-based row matched neither the file's line nor its job
    count), and its id once the ids are read."""
    return f"job {row + 1} of the input" + (f" (id {int(ids[row])})" if ids is not None else "")


def _as_float(col, name, source, *, allow_nan=False, ids=None) -> np.ndarray:
    arr = _numeric(col, name, source, ids=ids)
    ok = np.abs(arr) <= FLOAT_LIMIT                      # False for NaN and +-inf
    if allow_nan:
        ok |= np.isnan(arr)
    if not ok.all():
        row = int(np.argmin(ok))
        why = " (above 2**53, where a float64 no longer holds every whole number)" if np.isfinite(arr[row]) else ""
        if np.isnan(arr[row]) and str(source).lower().endswith(".csv"):
            why = " (the job's field is empty or nan)"   # a line with fewer fields: refused first (_check_short_rows)
        raise InstanceError(f"{source}: column '{name}' has {arr[row]} at {_at(row, ids)}{why}")
    return arr


#: the end time past which a float64 keeps less than a microsecond (its step is 2**-19 s at 2**33 s,
#: 272 years): fractions of a second are lost when the simulation adds a duration to a start there
FRACTION_LIMIT = 2.0 ** 33


def _fractions_kept(tab: Columns, source) -> None:
    """InstanceError when the jobs' end times reach past :data:`FRACTION_LIMIT`
    (last submit plus the longest runtime or estimate) and a time or
    duration has a fraction of a second, naming the first: the simulation
    keeps absolute times, so at a submit of 1e12 s a runtime of 10.00003 s
    ran as 10.0, and the metrics mixed the two (utilization 1.000003, a
    bounded slowdown below 1), exit 0.  Whole seconds stay exact up to 2**53
    (:data:`FLOAT_LIMIT`), and Unix times (about 1.7e9 s) are far below
    the limit; ends that reach past 2**53 are refused too (each value was
    checked, not their sum: a runtime of 5,001 s ended 5,000 s after its
    start, bounded slowdown 0.9998).  O(n)."""
    if not len(tab["submit"]):
        return
    cols = [c for c in ("submit", "runtime", "estimate") if c in tab]      # an estimate is optional
    longest = max(float(np.nanmax(tab[c])) if np.isfinite(tab[c]).any() else 0.0 for c in cols[1:])
    reach = float(tab["submit"].max()) + longest
    if reach > FLOAT_LIMIT:      # each value is within it, their sum not: an end rounded (a slowdown below 1)
        raise InstanceError(f"{source}: the jobs reach {reach:.17g} s (the last submit plus the longest runtime "
                            "or estimate), past 2**53 s, where a float64 no longer holds every whole second; "
                            "shift the submit times to start near 0")
    if not reach > FRACTION_LIMIT:
        return
    for col in cols:
        arr = tab[col]
        frac = np.isfinite(arr) & (arr != np.floor(arr))
        if frac.any():
            row = int(np.argmax(frac))
            raise InstanceError(f"{source}: column '{col}' has {arr[row]} at {_at(row, tab['id'])}, a fraction of "
                                f"a second, and the jobs reach {reach:.4g} s, past 2**33 s, where the simulation's "
                                "times keep less than a microsecond; shift the submit times to start near 0")


def _as_int(col, name, source, *, narrow: bool = False, ids=None) -> np.ndarray:
    col = np.asarray(col)
    if col.dtype.kind in "iu" and not (col.dtype.kind == "u" and col.dtype.itemsize == 8):
        return narrowest_int(col) if narrow else col.astype(np.int64, copy=False)
    arr = _as_float(col, name, source, ids=ids)
    frac = arr != np.round(arr)
    if frac.any():
        raise InstanceError(f"{source}: column '{name}' must hold integers, got {arr[frac][0]} "
                            f"at {_at(int(np.argmax(frac)), ids)}")
    out = arr.astype(np.int64)
    return narrowest_int(out) if narrow else out


def _drop(tab: Columns, cap, names) -> tuple[Columns, dict]:
    """Drop the jobs that cannot run; first rule that applies names the reason."""
    rules = [("negative_submit", lambda: tab["submit"] < 0),
             ("negative_runtime", lambda: tab["runtime"] < 0),
             ("no_processors", lambda: tab["procs"] < 1),
             ("too_many_processors", lambda: tab["procs"] > cap[0])]
    for k, name in enumerate(names[1:], start=1):
        rules += [(f"negative_{name}", lambda name=name: tab[f"res_{name}"] < 0),
                  (f"too_much_{name}", lambda name=name, k=k: tab[f"res_{name}"] > cap[k])]
    gone = None
    counts = {}
    for reason, hit in rules:
        hit = hit()
        if not hit.any():
            continue
        new = hit if gone is None else hit & ~gone
        if new.any():
            counts[reason] = int(new.sum())
            gone = new if gone is None else gone | new
    return (tab.mask(~gone) if gone is not None else tab), counts


def _set_estimate(tab: Columns) -> tuple[int, int]:
    """Estimate rule in place: given if > 0, else runtime, else 1 s; returns
    how many took the runtime (an estimate missing, NaN or <= 0, and a
    runtime > 0; none with no estimate column) and how many the 1 s: each
    changed job counted once (one without an estimate and with a runtime of
    0 was counted in both)."""
    run = tab["runtime"]
    unknown = 0
    if "estimate" in tab:
        est = tab["estimate"]
        if not (est > 0).all():
            given = est > 0
            unknown = int((~given & (run > 0)).sum())
            est = np.where(given, est, run)
    else:
        est = run
    floor = ~(est > 0)
    count = int(floor.sum())
    tab["estimate"] = np.where(floor, 1.0, est) if count else est
    return unknown, count


def _ordered(tab: Columns, names) -> Columns:
    """Rows by (submit, id), columns in contract order."""
    first = [*CORE, *(f"res_{n}" for n in names[1:]), "deadline", "licenses", *RAW_FIELDS]
    cols = [c for c in first if c in tab] + [c for c in tab.columns if c not in first]
    out = tab.select(cols)
    submit, ids = out["submit"], out["id"]
    if len(submit) > 1 and not in_arrival_order(submit, ids):
        out = out.take(np.lexsort((ids, submit)))
    return out


# ---- SWF ------------------------------------------------------------------------------
#: whitespace in a header line's pattern: ASCII's alone (\xa0, \x85 are bytes of UTF-8 text there);
#: a key's letters stay Unicode's, as before
_WS = r"[ \t\n\r\f\v]"
_KEY = re.compile(rf"^;{_WS}{{0,2}}(\w+):{_WS}*(.*?){_WS}*$")
#: the whitespace of a header line: a line is read byte for byte as Latin-1, where str.strip()
#: would also take \xa0 and \x85, the last byte of a UTF-8 'à' or 'Å' (a review)
ASCII_SPACE = " \t\n\r\f\v"
#: the header fields the reader acts on (machine size, extra resources), by their lower-case spelling
READ_KEYS = {k.lower(): k for k in ("MaxProcs", "MaxNodes", "EpochbenchResources", "EpochbenchCapacity")}
#: a ``;`` line that holds nothing but a word, a colon and one value, however indented
#: (``;   MaxProcs: 8``); a line of text that goes on (``;   MaxProcs: 8 on partition 1``) is a note
_LOOSE_KEY = re.compile(rf"^{_WS}*;{_WS}*(\w+){_WS}*:{_WS}*[^ \t\n\r\f\v]*{_WS}*$")
#: bytes of SWF text parsed per step: memory stays O(this), not O(file)
SWF_CHUNK = 1 << 23


def read_swf(path, *, nodes: int | None = None, kill_at_estimate: bool = True,
             fields: tuple | None = None) -> Workload:
    """Read a Standard Workload Format trace (``.swf`` or ``.swf.gz``), issue 3 rules.

    processors = field 8 if > 0 else field 5; estimate = field 9 if > 0 else
    the runtime (1 s if that is 0 too); machine size = ``nodes`` if given, else
    header ``MaxProcs``, else ``MaxNodes``, else the largest job
    (``meta["capacity_from"]`` says which).  Header keys go to
    ``meta["header"]`` (repeated keys and continuation lines joined by "\\n"),
    ``MaxProcs``/``MaxNodes`` also to ``meta`` as ints (None if absent).
    A sidecar ``<path>.extra.csv`` is merged by id when it exists (a row for
    every job).  Header fields are spelt as SWF writes them, ``; MaxProcs:
    8``; a line naming a field the reader uses in another case or indented
    as a continuation (``; maxprocs: 8``, ``;   MaxProcs: 8``) raises
    :class:`InstanceError`, rather than being ignored.  Malformed lines raise :class:`InstanceError` naming file and
    line.  A UTF-8 byte-order mark at the start of the file (``.gz`` in any
    case: gzip) is skipped.

    Field 11 (status) is read for one rule: a partial execution (status 2,
    3 or 4; :func:`_partial_lines`) of a job that has its summary line is
    dropped, counted in ``dropped["partial_execution"]``.  Otherwise a job
    runs whatever its status: failed (0) and cancelled (5) jobs held the
    processors for their runtime, as the trace records it.

    ``fields``: the raw SWF fields to keep (:data:`RAW_FIELDS`; default all);
    ``()`` keeps only the contract columns, what a simulation needs.  The
    raw integer fields are stored in the narrowest integer type that holds
    them.

    The file is read in steps of :data:`SWF_CHUNK` bytes by a compiled
    parser (:mod:`epochbench.instances._swf_parse`): O(n), no Python work
    per line, memory for the kept columns only, and the status field for
    the partial executions' rule (about 1 s and 60 bytes per job for 5
    million jobs with ``fields=()``).  A file the parser declines
    (numbers it does not convert exactly) is read by pandas' C reader.
    """
    path = Path(path)
    src = str(path)
    keep = RAW_FIELDS if fields is None else tuple(fields)
    unknown = [f for f in keep if f not in RAW_FIELDS]
    if unknown:
        raise InstanceError(f"{src}: unknown SWF field(s) {unknown}; the raw fields are {list(RAW_FIELDS)}")
    try:
        header, tab = _swf_columns(path, src, keep)
    except IsADirectoryError:
        raise InstanceError(f"{src}: is a folder, expected an SWF file") from None
    except (OSError, EOFError, zlib.error) as exc:    # BadGzipFile is an OSError; a truncated .gz an EOFError
        raise InstanceError(f"{src}: cannot read SWF file ({type(exc).__name__}: {exc})") from None
    _check_line_ends(header, src)
    _check_misspelt(header, src)
    tab, partial = _partial_lines(tab, src)
    _check_distinct_lines(tab["id"], path, src)
    if "status" not in keep:
        del tab["status"]
    for key, value in (("MaxProcs", _header_int(header, "MaxProcs", src)),
                       ("MaxNodes", _header_int(header, "MaxNodes", src)), ("nodes", nodes)):
        if value is not None and not 0 < value <= MAX_NODES:
            what = arg("nodes", value) if key == "nodes" else f"header field {key!r} = {value}"
            raise InstanceError(f"{src}: {what} is outside 1..{MAX_NODES}")
    tab.insert(3, "procs", _or_else(tab["req_procs"], tab["alloc_procs"], reuse="req_procs" not in keep))
    np.maximum(tab["procs"], 0, out=tab["procs"])
    tab.insert(4, "estimate", _or_else(tab["req_time"], np.nan, reuse="req_time" not in keep))
    # unknown (field 9 <= 0): NaN, which make_workload sets to the runtime and counts in meta["adjusted"]
    for f in ("req_procs", "alloc_procs", "req_time"):
        if f not in keep:
            del tab[f]
    tab = _merge_sidecar(tab, _sidecar(path), src)
    names = ("procs", *(c[4:] for c in tab.columns if c.startswith("res_")))
    _check_declared_resources(header, names, _sidecar(path), src)
    cap, cap_from = _swf_capacity(tab, header, names, nodes, src)
    meta = {"header": header, "capacity_from": cap_from,
            "MaxProcs": _header_int(header, "MaxProcs"), "MaxNodes": _header_int(header, "MaxNodes")}
    return _build(tab, cap, resources=names, kill_at_estimate=kill_at_estimate, source=src, meta=meta,
                  dropped={"partial_execution": partial} if partial else None, owned=True)


#: SWF status values of a partial execution: 2 (to be continued), 3 (the last
#: part of a completed job), 4 (the last part of a failed one)
PARTIAL_STATUS = (2, 3, 4)


def _partial_lines(tab: Columns, src: str = "<swf>") -> tuple[Columns, int]:
    """``tab`` without the partial executions (status 2, 3, 4) of jobs
    that have a summary line (another status, same job number), and how
    many went.  The SWF definition gives a checkpointed or swapped job as
    its summary line followed by one line per partial execution, all under
    its job number: read as jobs, they ran the job twice and its id
    repeated (the file was refused).  A job given by one partial line and
    no summary line is kept as that line; several partial lines without a
    summary line repeat the job's id, which is refused as any repeat is
    (there is no summary to take).  The lines are matched by job number
    only: a trace whose numbers wrap around would lose a later job of
    status 2 to 4 that shares one.  O(n log n) when there are partial
    lines, one pass over the status column otherwise."""
    status = tab["status"]
    part = (status >= PARTIAL_STATUS[0]) & (status <= PARTIAL_STATUS[-1])
    if not part.any():
        return tab, 0
    ids = tab["id"]
    at = np.flatnonzero(part)
    summed = np.isin(ids[at], ids[~part])
    _no_summary(ids[at[~summed]], tab["status"][at[~summed]], src)
    drop = at[summed]
    if not drop.size:
        return tab, 0
    keep = np.ones(len(ids), bool)
    keep[drop] = False
    return tab.take(np.flatnonzero(keep)), int(drop.size)


def _repeated_id(ids: np.ndarray) -> int | None:
    """:func:`_first_repeat`, after one comparison pass: increasing ids, the
    usual case, are distinct."""
    if len(ids) < 2 or (ids[1:] > ids[:-1]).all():
        return None
    return _first_repeat(ids)


def _first_repeat(ids: np.ndarray) -> int | None:
    """The id whose second occurrence comes first in ``ids``, or None when
    they are distinct.  O(n log n)."""
    if ids.size < 2:
        return None
    order = np.argsort(ids, kind="stable")
    twice = order[1:][ids[order[1:]] == ids[order[:-1]]]
    return int(ids[twice.min()]) if twice.size else None


def _check_distinct_lines(ids: np.ndarray, path: Path, src: str) -> None:
    """InstanceError naming the first repeated job number of the SWF file
    ``path`` (``ids``: its jobs once the partial executions are dropped) and
    the two lines that give it (:func:`_swf_job_lines`): the row of a job
    in the parsed columns is not its line (header, comments and partial
    lines come between)."""
    job = _repeated_id(ids)
    if job is not None:
        lines = _swf_job_lines(path, job, 2)
        where = f" (lines {lines[0]} and {lines[1]})" if len(lines) == 2 else ""   # (a file changed meanwhile)
        raise InstanceError(f"{src}: job id {job} occurs more than once{where}")


def _swf_job_lines(path: Path, job: int, n: int) -> list[int]:
    """The numbers (from 1, a line per newline as the parser counts them) of
    the first ``n`` lines of the SWF file ``path`` that give job ``job`` as a
    job of its own: not a partial execution (status 2 to 4), which the
    reader has dropped once its job has a summary line.  For an error
    message: one pass in Python over the lines, up to the n-th such line."""
    found: list[int] = []
    with (gzip.open if _gzip_input(path) else open)(path, "rb") as fh:
        _skip_bom(fh)
        for lineno, line in enumerate(fh, start=1):
            tokens = line.split(b";", 1)[0].split()
            if len(tokens) < 11:
                continue
            try:
                number, status = float(tokens[0]), float(tokens[10])
            except ValueError:
                continue
            if number == job and status not in PARTIAL_STATUS:
                found.append(lineno)
                if len(found) == n:
                    break
    return found


def _no_summary(ids: np.ndarray, status: np.ndarray, src: str) -> None:
    """InstanceError naming the first job given by several partial lines
    (``ids``, ``status``: the partial lines without a summary line) and
    nothing else: the repeat was refused as "job id 1 occurs more than
    once", which did not say that the summary line was what was missing."""
    job = _first_repeat(ids)
    if job is not None:
        seen = sorted({int(x) for x in status[ids == job]})
        raise InstanceError(f"{src}: job id {job} has {int((ids == job).sum())} partial-execution lines "
                            f"(status {', '.join(map(str, seen))}) and no summary line (a line of another status); "
                            "the SWF format gives a checkpointed or swapped job's summary line with its partial "
                            "lines under the same job number")


def _or_else(given: np.ndarray, other, *, reuse: bool) -> np.ndarray:
    """``given`` where > 0, else ``other`` (an array as long, or one value:
    the SWF rule for processors, and NaN for an estimate); written over
    ``given`` itself when it is not kept (``reuse``)."""
    out = given if reuse else given.copy()
    unknown = ~(given > 0)
    out[unknown] = other[unknown] if isinstance(other, np.ndarray) else other
    return out


def _swf_columns(path: Path, src: str, keep: tuple) -> tuple[dict, Columns]:
    """(header, columns) of an SWF file: in a process without the compiled
    kernels, a short file of integers by numpy (:func:`_integer_columns`);
    else the compiled parser on pieces of whole lines, :data:`PARSE_THREADS`
    at a time (it holds no GIL), each writing straight into its own range of
    the columns (as many places as the piece has lines; ranges left short by
    comment or blank lines are closed up at the end); else (a line it does
    not read) pandas' reader on the whole text.  The pieces are read into a few buffers, each reused
    once its piece is parsed (:class:`_Buffers`): no new memory per piece."""
    want = ["id", "submit", "runtime", *(f for f in RAW_FIELDS if f in keep or f in
                                         ("alloc_procs", "req_procs", "req_time", "status"))]
    layout = _Layout(want)
    gz = _gzip_input(path)
    if path.stat().st_size <= SWF_SMALL and not kernels_loaded():
        got = _integer_columns(path, layout, want)
        if got is not None:
            return got
    from concurrent.futures import ThreadPoolExecutor

    from ._swf_parse import count_newlines
    # plain text: room for every line at once (pages never touched cost no memory);
    # gzip: a guess at 4x the compressed size, grown when full
    cols = layout.arrays(_job_room(path.stat().st_size * (4 if gz else 1)))
    header, base, pieces, read = None, 0, [], 0      # pieces: (future, first place, lines); read: lines before
    buffers, late = _Buffers(PARSE_THREADS + 1), _LateKeys(src)
    with (gzip.open if gz else open)(path, "rb") as fh, ThreadPoolExecutor(PARSE_THREADS) as pool:
        _skip_bom(fh)
        while True:
            buf, end, cut = buffers.fill(fh)
            first = header is None
            if first or not header.done:       # a header longer than a piece goes on in the next one
                header = _swf_header(memoryview(buf)[:cut], header, read + 1,
                                     bytes(buf[:min(end, CR_PROBE)]) if first else None)
            if cut:
                lines = count_newlines(np.frombuffer(buf, np.uint8, cut)) + (0 if buf[cut - 1] == 10 else 1)
                read += lines
                late.scan(buf, cut, lines)
                if base + lines > cols[0].shape[1]:                 # gzip guessed short: grow (all idle)
                    _finish(pieces)
                    cols = tuple(_grown(c, base + lines) for c in cols)
                if first:             # the header's piece: parsed at once, so that the ranges after it
                    rows, ok = layout.parse_into(memoryview(buf)[:cut], *cols, 0)   # start where its jobs end
                    if not ok:
                        _check_late_keys(path, src)
                        return _header_to_end(header, fh, buffers, read), _swf_body(path, src, want)
                    base = rows
                else:
                    fut = pool.submit(layout.parse_into, memoryview(buf)[:cut], *cols, base)
                    buffers.busy(fut)
                    pieces.append((fut, base, lines))
                    base += lines
            if not buffers.more:
                break
        if not _finish(pieces):
            return header, _swf_body(path, src, want)      # every piece was scanned (late)
    rows = _close_up(cols, pieces, pieces[0][1] if pieces else base)
    out, iout = cols
    return header if header is not None else _Header(), Columns({f: out[layout.floats.index(f), :rows] if f in SWF_FLOAT
                                  else iout[layout.ints.index(f), :rows] for f in want})


#: bytes of SWF file (compressed or not) that a process without the compiled
#: kernels reads with numpy when the numbers are integers (:func:`_integer_columns`)
SWF_SMALL = 1 << 23


def _integer_columns(path: Path, layout: "_Layout", want: list) -> tuple[dict, Columns] | None:
    """(header, columns) of a short SWF file whose job lines hold integers
    only, read by :func:`epochbench.instances._swf_parse.parse_integer_text`
    (numpy, no compiled parser to load: the values are the compiled
    parser's, bit for bit); None for any other file."""
    from ._swf_parse import parse_integer_text
    raw = _read_all(path)
    values = parse_integer_text(raw)
    if values is None:
        return None
    _LateKeys(str(path)).scan(raw, len(raw))
    out, iout = layout.arrays(values.shape[1])
    for i, (f, row) in enumerate(zip(SWF_FIELDS, layout.dest)):
        if row >= 0:
            (out if f in SWF_FLOAT else iout)[row] = values[i]
    return _swf_header(raw), Columns({f: out[layout.floats.index(f)] if f in SWF_FLOAT
                                      else iout[layout.ints.index(f)] for f in want})


def _header_to_end(header: _Header, fh, buffers: "_Buffers", read: int) -> _Header:
    """``header`` read on from ``fh``, piece by piece through ``buffers``
    (``read``: the lines before), to the first job line, where the pieces
    read so far held none (the reader gives the file to pandas' after its
    first piece)."""
    while not header.done and buffers.more:
        buf, end, cut = buffers.fill(fh)
        header = _swf_header(memoryview(buf)[:cut], header, read + 1)
        read += buf.count(b"\n", 0, cut)
    return header


class _Buffers:
    """A ring of ``size`` byte buffers that a file is read into, piece by
    piece (:meth:`fill`); a buffer is reused once the parse of the piece it
    holds is done (:meth:`busy` names that parse), so reading a file of any
    size allocates ``size`` buffers of about :data:`SWF_CHUNK` bytes."""

    def __init__(self, size: int):
        self.ring = [bytearray(SWF_CHUNK) for _ in range(size)]
        self.parse = [None] * size
        self.k = -1
        self.rest = b""
        self.more = True

    def fill(self, fh) -> tuple[bytearray, int, int]:
        """Read the next :data:`SWF_CHUNK` bytes of ``fh`` after the partial
        line the last piece left; returns (buffer, bytes in it, bytes up to
        its last newline, or all of them at the end of the file)."""
        self.k = (self.k + 1) % len(self.ring)
        if self.parse[self.k] is not None:
            self.parse[self.k].exception()                 # wait; its outcome is read by _finish
            self.parse[self.k] = None
        carry = len(self.rest)
        if len(self.ring[self.k]) < carry + SWF_CHUNK:       # a line longer than a piece
            self.ring[self.k] = bytearray(carry + SWF_CHUNK)
        buf = self.ring[self.k]
        buf[:carry] = self.rest
        got = fh.readinto(memoryview(buf)[carry:carry + SWF_CHUNK])
        end = carry + got
        self.more = got > 0
        cut = buf.rfind(b"\n", 0, end) + 1 if self.more else end      # whole lines only
        self.rest = bytes(buf[cut:end])
        return buf, end, cut

    def busy(self, parse) -> None:
        """The buffer last filled is being parsed by ``parse`` (a future)."""
        self.parse[self.k] = parse


def _finish(pieces: list) -> bool:
    """Wait for every piece; replace each future by its jobs (-1 for a piece
    with a line the parser does not read).  False when there is such a piece."""
    for k, (fut, first, lines) in enumerate(pieces):
        if not isinstance(fut, int):
            rows, good = fut.result()
            pieces[k] = (rows if good else -1, first, lines)
    return all(got >= 0 for got, _, _ in pieces)


def _close_up(cols, pieces: list, rows: int) -> int:
    """Move each piece's rows down to follow the previous piece's (a piece
    with comment or blank lines filled fewer places than it had lines);
    returns the number of jobs."""
    for got, first, _ in pieces:
        if first != rows:
            for c in cols:
                c[:, rows:rows + got] = c[:, first:first + got]
        rows += got
    return rows


#: threads parsing SWF text at once
PARSE_THREADS = max(1, min(4, os.cpu_count() or 1))


def _job_room(nbytes: int) -> int:
    """Most job lines ``nbytes`` of SWF text hold (18 numbers, 17 separators
    and a newline: at least 36 bytes a line)."""
    return nbytes // 36 + 1


class _Layout:
    """Where the parser puts each SWF field: the kept float fields are rows
    of one float64 array, the kept integer fields rows of one int64 array."""

    def __init__(self, want: list[str]):
        self.floats = [f for f in want if f in SWF_FLOAT]
        self.ints = [f for f in want if f not in SWF_FLOAT]
        self.dest = np.array([(self.floats if f in SWF_FLOAT else self.ints).index(f) if f in want else -1
                              for f in SWF_FIELDS])
        self.is_int = np.array([f not in SWF_FLOAT for f in SWF_FIELDS])

    def arrays(self, room: int) -> tuple[np.ndarray, np.ndarray]:
        return np.empty((len(self.floats), room)), np.empty((len(self.ints), room), dtype=np.int64)

    def parse_into(self, piece, out: np.ndarray, iout: np.ndarray, first: int) -> tuple[int, bool]:
        """Parse ``piece`` (whole lines) into ``out`` / ``iout`` from place
        ``first`` on: (jobs, whether every line was read)."""
        from ._swf_parse import OK, _POW10, parse_lines
        rows, _, verdict = parse_lines(np.frombuffer(piece, dtype=np.uint8), out, iout, first, self.dest,
                                       self.is_int, True, _POW10)
        return rows - first, verdict == OK


def _grown(out: np.ndarray, need: int) -> np.ndarray:
    """``out`` with room for at least ``need`` columns (doubling)."""
    bigger = np.empty((out.shape[0], max(need, 2 * out.shape[1])), dtype=out.dtype)
    bigger[:, :out.shape[1]] = out
    return bigger


def _read_all(path: Path) -> bytes:
    """The whole file, decompressed by the reader the compiled path uses (so
    that a damaged ``.gz`` gets the same message), without a leading UTF-8
    byte-order mark."""
    if _gzip_input(path):
        with gzip.open(path, "rb") as fh:
            raw = fh.read()
    else:
        raw = path.read_bytes()
    return raw[len(UTF8_BOM):] if raw.startswith(UTF8_BOM) else raw


def _skip_bom(fh) -> None:
    """Move ``fh`` (a buffered binary file at its start, plain or gzip) past
    a UTF-8 byte-order mark, if the file starts with one (by ``peek``: no
    seek, so that a pipe reads too)."""
    if fh.peek(len(UTF8_BOM))[:len(UTF8_BOM)] == UTF8_BOM:
        fh.read(len(UTF8_BOM))


class _CRAsSpace(io.RawIOBase):
    """A binary file read with every CR, vertical tab and form feed as a
    space: the numpy and compiled readers take them for white space (CRLF
    lines, a stray CR inside a line or a comment), pandas' C reader ends a
    line at a lone CR, and reads CR, VT and FF inside a field (``10\\r0``).
    One ``bytes.translate`` a piece read."""

    _TABLE = bytes.maketrans(b"\r\x0b\x0c", b"   ")

    def __init__(self, fh):
        self.fh = fh

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        data = self.fh.read(len(buf))
        buf[:len(data)] = data.translate(self._TABLE)
        return len(data)


def _gzipped(path: Path) -> bool:
    """Whether ``path`` names a gzip file (``.gz``, in any case)."""
    return path.suffix.lower() == ".gz"


#: the first two bytes of a gzip file (RFC 1952)
GZIP_MAGIC = b"\x1f\x8b"


def _gzip_input(path: Path) -> bool:
    """Whether an SWF file to read is gzip: named ``.gz``, or starting with
    gzip's magic bytes (``gzip -c t.swf > t2.swf`` was refused as "line 1:
    expected 18 fields, got 3"; no SWF text starts with them)."""
    if _gzipped(path):
        return True
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == GZIP_MAGIC
    except OSError:
        return False


class _Header(dict):
    """An SWF header's fields (a dict: key -> value, repeats and continuation
    lines joined by "\\n") and ``keyed``: each key's values as its own
    ``; Key:`` lines gave them, continuation lines apart (a note under
    ``MaxProcs: 4096`` starting with a number is no second machine size)."""

    def __init__(self):
        super().__init__()
        self.keyed: dict[str, list[str]] = {}
        self.misspelt: list[tuple[int, str, str]] = []     # (line number, line, field it reads as none of)
        self.cr_only = False          # lines end in CR alone (classic Mac OS): :func:`_check_line_ends`
        self.done = False             # the first job line was met: no header line follows
        self.last: str | None = None  # the field an indented ``;`` line continues


def _swf_header(raw: bytes, header: _Header | None = None, first_line: int = 1, head: bytes | None = None) -> dict:
    """``; Key: value`` lines before the first job; indented ``;`` lines continue a value.
    A line that spells a field the reader acts on (:data:`READ_KEYS`) otherwise
    (``; maxprocs: 8``, or indented as a continuation: ``;   MaxProcs: 8``)
    goes to ``header.misspelt`` (:func:`_check_misspelt`).  Given a
    ``header`` not ``done`` (``raw`` held no job line), ``raw`` is the next
    whole lines of the file, from line ``first_line``: a header longer than
    the first piece the reader reads (8 MB) kept only what that piece held,
    and its later fields were lost without a word.  ``head``: the file's
    first bytes, where ``raw`` may hold fewer (a first piece cut before a
    partial line), to tell lines that end in CR alone."""
    if header is None:
        header = _Header()
        head = bytes(raw[:CR_PROBE]) if head is None else head[:CR_PROBE]
        header.cr_only = b"\r" in head and b"\n" not in head
    last = header.last
    for lineno, bline in enumerate(io.BytesIO(raw), start=first_line):   # lazily: stops at the first job line
        line = bline.decode("latin-1").rstrip("\r\n")
        text = line.strip(ASCII_SPACE)      # not str.strip(): \xa0 and \x85 are bytes of UTF-8 text here
        if not text:
            continue
        if not text.startswith(";"):
            header.done = True
            break
        m = _KEY.match(line.rstrip(ASCII_SPACE)) if line.startswith(";") else None
        wrong = _misspelt_key(line, m)
        if wrong:
            header.misspelt.append((lineno, line.rstrip(), wrong))
        if m:
            last = m.group(1)
            header[last] = f"{header[last]}\n{m.group(2)}" if last in header else m.group(2)
            header.keyed.setdefault(last, []).append(m.group(2))
        elif text[1:].strip(ASCII_SPACE) and last is not None:
            header[last] += "\n" + text[1:].strip(ASCII_SPACE)
    header.last = last
    return header


class _LateKeys:
    """Refuses a header field that the reader acts on (:data:`READ_KEYS`) on
    a ``;`` line after the first job line: the header is read before the
    jobs, and the readers skip later ``;`` lines, so ``cat a.swf b.swf`` ran
    on the first file's ``MaxProcs`` without a word when no job id repeated.
    Other ``;`` lines there (notes) pass.  :meth:`scan` is given the file's
    text in order, whole lines at a time; a step costs a ``find`` of each
    ``;`` in it (0.3 ms for 8 MB of job lines), and Python work only for the
    lines that hold one."""

    _JOB = re.compile(rb"^[ \t\r\x0b\x0c]*[^;\s]", re.M)     # a line that is not a comment or blank

    def __init__(self, src: str):
        self.src, self.line, self.started = src, 0, False     # line: the lines of the steps before

    def scan(self, data, end: int, lines: int | None = None) -> None:
        """``data[:end]`` (bytes or bytearray): the next whole lines, of which
        ``lines`` line breaks (counted here when not given)."""
        lines = data.count(b"\n", 0, end) if lines is None else lines
        at = 0
        if not self.started:
            job = self._JOB.search(data, 0, end)
            if job is None:
                self.line += lines
                return
            self.started, at = True, job.start()
        p = data.find(b";", at, end)
        while p >= 0:
            q = data.find(b"\n", p, end)
            q = end if q < 0 else q
            start = data.rfind(b"\n", 0, p) + 1
            line = bytes(data[start:q]).decode("latin-1").rstrip(ASCII_SPACE) if not data[start:p].strip() else ""
            m = _KEY.match(line) or _LOOSE_KEY.match(line)     # indented or in another case, as the header refuses
            if m and m.group(1).lower() in READ_KEYS:
                lineno = self.line + data.count(b"\n", 0, p) + 1
                raise InstanceError(f"{self.src}, line {lineno}: header field "
                                    f"{m.group(1)!r} after the first job line; a header is read before the "
                                    "jobs only (two traces joined into one file?)")
            p = data.find(b";", q, end)
        self.line += lines


def _check_late_keys(path: Path, src: str) -> None:
    """:class:`_LateKeys` over the whole file, a pass of its own (for the
    reader that pandas runs, which sees no lines)."""
    late = _LateKeys(src)
    with (gzip.open if _gzip_input(path) else open)(path, "rb") as fh:
        _skip_bom(fh)
        for data, end in _whole_lines(fh):
            late.scan(data, end)


def _misspelt_key(line: str, m) -> str | None:
    """The field of :data:`READ_KEYS` that the header line ``line`` (a
    field and one value alone on it) names in another case or indentation
    than SWF's ``; Key: value`` (``m``: its match of the exact form, or
    None); None for any other line, a note's text among them."""
    loose = _LOOSE_KEY.match(line)
    key = READ_KEYS.get(loose.group(1).lower()) if loose else None
    if key is None or (m is not None and m.group(1) == key):
        return None
    return key


#: bytes at the start of an SWF file in which a CR without any LF marks CR-only line ends
CR_PROBE = 1 << 16


def _check_line_ends(header: dict, src: str) -> None:
    """InstanceError for a file whose lines end in a carriage return alone
    (classic Mac OS): the numpy and compiled readers split lines at LF, so
    they read the whole file as one comment line, no jobs (pandas' reader
    read them), and the run said only that the workload was empty."""
    if getattr(header, "cr_only", False):
        raise InstanceError(f"{src}: its lines end in a carriage return alone (CR, classic Mac OS); "
                            "convert the line ends to LF (\\n) or CRLF")


def _check_misspelt(header: dict, src: str) -> None:
    """InstanceError on the first header line that names a field the reader
    acts on but is not read as it (:func:`_swf_header`): the Parallel
    Workloads Archive's SWF spells header fields ``; MaxProcs: value``, as
    written, and an indented ``;`` line continues the field above, so
    ``; maxprocs: 8`` or ``;   MaxProcs: 8`` was ignored without a word and
    the machine sized by the largest job."""
    for lineno, text, key in getattr(header, "misspelt", ()):
        raise InstanceError(f"{src}, line {lineno}: header line {text!r} is not read as field {key!r}; "
                            f"write it '; {key}: value' (';' first on the line, that case, at most 2 spaces "
                            "after ';')")




def _header_int(header: dict, key: str, src: str = "<swf>") -> int | None:
    """Header field ``key`` as a positive integer: its first word (a note may
    follow it); None when absent or -1 (SWF's "unknown"); anything else is an
    :class:`InstanceError` naming the field, as is a field given twice with
    two numbers (``MaxProcs: 8``, then ``MaxProcs: 16``: the first was
    taken, and the wider jobs dropped, without a word)."""
    numbers = list(dict.fromkeys(value.split()[0] for value in getattr(header, "keyed", {}).get(key, ())
                                 if value.split() and re.fullmatch(r"-?\d+", value.split()[0])))
    if len(numbers) > 1:
        raise InstanceError(f"{src}: header field {key!r} given twice, as {' and '.join(numbers)}; keep one")
    words = header.get(key, "").split()
    if not words or words[0] == "-1":
        return None
    if not re.fullmatch(r"\d+", words[0]) or int(words[0]) == 0:
        raise InstanceError(f"{src}: header field {key!r} = {_as_utf8(words[0])!r} is not a positive integer "
                            "(-1 or no field: unknown)")
    return int(words[0])


#: job lines that the general SWF path parses at a time (memory: 19 float64 columns of this many)
PANDAS_ROWS = 1 << 18
#: 2**52: from here on a float64 holds no fraction, so an integer field read as float64 from this
#: size on is checked on its text (a fraction, or 2**53 + 1, would pass as a whole number)
EXACT_FRACTION = 2**52


def _swf_body(path: Path, src: str, want) -> Columns:
    """The ``want`` fields of every job line, dtypes per the contract; O(n)
    in pandas' C reader (the general path, and the one that names a bad
    line), :data:`PANDAS_ROWS` lines at a time: memory for the kept columns
    and one piece, where the whole text and all 18 fields as float64 took
    1.54 GB at 2 million jobs (one time written with 17 digits sends a
    file here), and the fields a caller did not keep were returned all the
    same.  A bad line is named from the whole text (:func:`_raise_bad_line`)."""
    import warnings

    import pandas as pd
    ints = [k for k, f in enumerate(SWF_FIELDS) if f not in SWF_FLOAT]
    parts: dict[str, list] = {f: [] for f in want}
    done = 0                                       # job lines read in whole pieces: none of them is bad
    try:
        with (gzip.open if _gzip_input(path) else open)(path, "rb") as fh, warnings.catch_warnings():
            _skip_bom(fh)
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            # CR read as a space, as the other two readers read it: pandas ends a line at a lone CR, so a CR
            # inside a comment made its tail a job line (a CR-only file is refused before)
            text = io.BufferedReader(_CRAsSpace(fh), 1 << 20)
            for table in pd.read_csv(text, sep=r"\s+", comment=";", header=None, names=range(19), dtype=np.float64,
                                     index_col=False, engine="c", chunksize=PANDAS_ROWS):
                arr = table.to_numpy(dtype=np.float64)
                ok = np.isfinite(arr[:, :18]).all() and np.isnan(arr[:, 18]).all()
                if not ok or np.any(arr[:, ints] != np.round(arr[:, ints])) or np.any(np.abs(arr[:, ints]) > MAX_NODES):
                    _raise_bad_line(_read_all(path), src, None, done)
                if np.any(np.abs(arr[:, ints]) >= EXACT_FRACTION):   # from 2**52 on float64 drops a fraction,
                    # and 2**53 + 1 reads as 2**53: this piece's lines checked on their text
                    _raise_bad_line(_read_all(path), src, None, done, only_bad=True, lines=len(arr))
                for f in want:
                    k = SWF_FIELDS.index(f)
                    parts[f].append(arr[:, k].copy() if f in SWF_FLOAT else arr[:, k].astype(np.int64))
                done += len(arr)
    except pd.errors.EmptyDataError:
        pass
    except InstanceError:
        raise                                      # a bad line, already named
    except (ValueError, pd.errors.ParserError) as exc:
        _raise_bad_line(_read_all(path), src, exc, done)
    return Columns({f: np.concatenate(parts[f]) if parts[f] else np.empty(0, np.float64 if f in SWF_FLOAT else np.int64)
                    for f in want})


#: the white space of an SWF line besides the space, as the readers take it (:class:`_CRAsSpace`)
_SPACES = str.maketrans("\t\r\x0b\x0c", "    ")


def _raise_bad_line(raw: bytes, src: str, exc, skip: int = 0, only_bad: bool = False,
                    lines: int | None = None) -> None:
    """Slow path: find the first malformed job line and raise naming it;
    the first ``skip`` job lines are known good and only counted (a bad
    line near the end of 2 million took 81 s when each was checked), and
    only ``lines`` job lines after them are checked when given; with
    ``only_bad``, return when none is bad.  Integer fields are read
    exactly (:class:`decimal.Decimal`): float64 reads 9007199254740993 as
    2**53, which passed as an id of 9007199254740992, and
    4503599627370496.5 as a whole number.  Lines
    are counted at LF and fields split at spaces, tabs, CRs, vertical tabs
    and form feeds, as the readers read them (:class:`_CRAsSpace`): a form
    feed is no line break, and a cp1252 ellipsis (0x85) neither a line
    break nor a space."""
    from decimal import Decimal            # here: its import is 8 ms of every command's start-up
    for lineno, line in enumerate(raw.decode("latin-1").split("\n"), start=1):
        tokens = [t for t in line.split(";", 1)[0].translate(_SPACES).split(" ") if t]
        if not tokens:
            continue
        if skip > 0:
            skip -= 1
            continue
        if lines is not None:
            if lines <= 0:
                break
            lines -= 1
        if len(tokens) != 18:
            raise InstanceError(f"{src}, line {lineno}: expected 18 fields, got {len(tokens)}")
        for k, tok in enumerate(tokens):
            integer = SWF_FIELDS[k] not in SWF_FLOAT
            try:                       # float() and Decimal() take "1_000", which the readers do not
                value = None if "_" in tok else Decimal(tok) if integer else float(tok)
            except (ValueError, ArithmeticError):
                value = None
            if integer:
                bad = (value is None or not value.is_finite() or value != value.to_integral_value()
                       or abs(value) > MAX_NODES)
            else:
                bad = value is None or not np.isfinite(value)
            if bad:
                kind = "a number" if SWF_FIELDS[k] in SWF_FLOAT else f"an integer of at most {MAX_NODES}"
                raise InstanceError(f"{src}, line {lineno}: field {k + 1} ({SWF_FIELDS[k]}) is not "
                                    f"{kind}: {_as_utf8(tok)!r}")
    if only_bad:
        return
    raise InstanceError(f"{src}: malformed SWF ({exc})")


def _header_text(value: str) -> str:
    """A header field's value, read byte for byte as Latin-1 (so that a
    header is written back as it was read), as its text: UTF-8 where its
    bytes are UTF-8 (a resource ``mém`` or ``gpu₂`` that
    :func:`_swf_header_text` wrote), else Latin-1, as files that wrote a
    name such as ``mém`` in Latin-1 read.  O(len)."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


def _utf8_in_header(text: str) -> str:
    """``text`` as the header's Latin-1 string of its UTF-8 bytes, the form
    :func:`save_swf` writes byte for byte (:func:`_header_text` reads it);
    a file name's bytes that are not UTF-8 (``surrogateescape``) as they
    were, any other character UTF-8 cannot hold as ``?``."""
    try:
        data = text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        data = text.encode("utf-8", errors="replace")
    return data.decode("latin-1")


def _as_utf8(text: str) -> str:
    """A field read as Latin-1 (byte for byte) shown as its UTF-8 text, where
    it is UTF-8: a no-break space is ``'1\\xa00'``, not ``'1Â\\xa00'``."""
    return text.encode("latin-1").decode("utf-8", errors="backslashreplace")


def _check_declared_resources(header: dict, names: tuple, side: Path, src) -> None:
    """The resources an epochbench SWF header declares (``EpochbenchResources``)
    all have their ``res_`` column (from the ``.extra.csv`` sidecar), and a
    file epochbench wrote (its Note says so) has no other: it declares
    every resource it has, so a sidecar adding one belongs to another
    stream (a stale copy was merged as a resource of this one);
    ``InstanceError`` naming the missing sidecar or columns otherwise."""
    declared = _declared_resources(header, src)[1:]
    missing = [f"res_{n}" for n in declared if n not in names[1:]]
    undeclared = [f"res_{n}" for n in names[1:] if n not in declared]
    if undeclared and "epochbench: written from" in header.get("Note", ""):   # its writer declares them all
        raise InstanceError(f"{src}: written by epochbench with resources {' '.join(['procs', *declared])}, but "
                            f"{side.name} adds {', '.join(undeclared)}: a sidecar of another stream? (to add "
                            "resources, declare them in the header: '; EpochbenchResources: procs NAME...' and "
                            "'; EpochbenchCapacity: P C...')")
    if not missing:
        return
    if not side.exists():
        raise InstanceError(f"{src}: its header declares resources {', '.join(declared)}, whose columns "
                            f"({', '.join(missing)}) are in {side.name}, which is missing: keep the sidecar "
                            "beside the SWF file")
    raise InstanceError(f"{src}: its header declares resources {', '.join(declared)}, but {side.name} has no "
                        f"column {', '.join(missing)}")


def _swf_capacity(tab, header, names, nodes, src="") -> tuple[np.ndarray, str]:
    """Machine size by the issue 3 rule (``nodes``, else ``MaxProcs``, else
    ``MaxNodes``, else what ``EpochbenchCapacity`` gives processors, else
    the largest job); each other resource's capacity from the header
    (:func:`_declared_capacity`), else the largest job's amount (said in
    the second item, ``capacity_from``).  InstanceError naming the header
    field when ``MaxProcs`` / ``MaxNodes`` and ``EpochbenchCapacity``
    disagree on the processors (without ``nodes``, which sets them)."""
    declared = _declared_capacity(header, src)
    for cap_from, value in (("nodes", nodes), ("MaxProcs", _header_int(header, "MaxProcs")),
                            ("MaxNodes", _header_int(header, "MaxNodes")),
                            ("EpochbenchCapacity", declared.get("procs")), ("largest_job", -1)):
        if value is not None:
            break
    if cap_from in ("MaxProcs", "MaxNodes") and declared and declared["procs"] != value:
        raise InstanceError(f"{src}: header fields {cap_from} ({value}) and EpochbenchCapacity (procs "
                            f"{declared['procs']}) disagree on the machine's processors ({arg('nodes')} sets them)")
    if value == -1:
        value = _largest(tab, "procs")
    guessed = [n for n in names[1:] if n not in declared]
    extra = [declared[n] if n in declared else _largest(tab, f"res_{n}") for n in names[1:]]
    if guessed:
        cap_from += ("; extra resources: largest_job" if len(guessed) == len(names) - 1
                     else f"; largest_job for {', '.join(guessed)}")
    return np.array([int(value), *map(int, extra)], dtype=np.int64), cap_from


def _declared_resources(header: dict, src) -> list[str]:
    """The names of the header field ``EpochbenchResources`` (``procs
    NAME...``; [] without it); InstanceError naming the field when procs is
    not first or a name comes twice (``mem gpu`` dropped mem unsaid)."""
    names = _header_text(header.get("EpochbenchResources", "")).split()
    if names and (names[0] != "procs" or first_repeat(names) is not None):
        why = f"names {first_repeat(names)!r} twice" if names[0] == "procs" else "does not start with procs"
        raise InstanceError(f"{src}: header field EpochbenchResources ({' '.join(names)}) {why}")
    return names


def _declared_capacity(header: dict, src) -> dict:
    """``{resource: capacity}`` that the header fields ``EpochbenchResources``
    (``procs NAME...``) and ``EpochbenchCapacity`` (``P C...``) declare,
    ``{}`` without ``EpochbenchCapacity``; InstanceError naming the field
    when they do not pair up: a value that is no whole number in
    1..MAX_NODES, a count that differs, a name twice, no ``procs`` first
    (a malformed header was ignored, and the largest job's amount taken as
    the capacity, exit 0).  O(K)."""
    names = _declared_resources(header, src)
    if "EpochbenchCapacity" not in header:
        return {}
    words = _header_text(header["EpochbenchCapacity"]).split()
    if not names:
        raise InstanceError(f"{src}: header field EpochbenchCapacity without EpochbenchResources, which names the "
                            "resources it gives the capacity of ('; EpochbenchResources: procs NAME...')")
    if len(words) != len(names):
        raise InstanceError(f"{src}: header field EpochbenchCapacity has {len(words)} value(s) for the "
                            f"{len(names)} resources of EpochbenchResources ({' '.join(names)})")
    for name, word in zip(names, words):
        if not (word.isdigit() and word.isascii() and 0 < int(word) <= MAX_NODES):
            raise InstanceError(f"{src}: header field EpochbenchCapacity gives {name} {word!r}, not a whole number "
                                f"in 1..{MAX_NODES}")
    return {name: int(word) for name, word in zip(names, words)}


def _largest(tab, column: str) -> int:
    """The largest amount of ``column`` among jobs that pass the runtime and
    processor rules (at least 1): the machine size when nothing else gives it.
    An amount beyond :data:`MAX_NODES` is left to the column's own check,
    which names the job (a procs of 1e20 was read as the capacity, and
    refused as "capacity must be positive integers", ``--nodes`` or not)."""
    num = {c: _numeric(tab[c], errors="coerce") for c in ("submit", "runtime", "procs", column)}
    runnable = ((num["submit"] >= 0) & (num["runtime"] >= 0) & (num["procs"] >= 1) & np.isfinite(num[column])
                & (num[column] <= MAX_NODES))
    return max(int(num[column][runnable].max(initial=1)), 1)


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _merge_sidecar(tab: Columns, side: Path, src) -> Columns:
    """``tab`` with the columns of the sidecar file ``side`` joined by id,
    when it exists; it must hold no id that is not a job of ``src``, no id
    twice, values that the job table's checks take (:func:`_coerce`: a
    resource an integer, a deadline a number), and a row for every job when
    it holds resource columns (``res_*``: a job without its demand; other
    columns may leave a job out, NaN) (:class:`InstanceError`, one line,
    naming the sidecar and the value or ids otherwise)."""
    if not side.exists():
        return tab
    import pandas as pd
    df = tab.to_frame()
    extra = _read_csv(side).to_frame()
    if "id" not in extra.columns:
        raise InstanceError(f"{side}: sidecar lacks the 'id' column")
    clash = [c for c in extra.columns if c in df.columns and c != "id"]
    if clash:
        raise InstanceError(f"{side}: column(s) {clash} are fields of {src}; a sidecar holds only extra columns")
    _no_misspelt_resources(extra.columns, side)
    ids = _numeric(extra["id"], errors="coerce")
    bad = ~(np.isfinite(ids) & (ids == np.round(ids)))
    if bad.any():
        row = int(np.argmax(bad))
        raise InstanceError(f"{side}: id {extra['id'].iloc[row]} (row {row}) is not an integer")
    extra["id"] = ids.astype(np.int64)
    # its values are checked here, as the job table's are, so that a bad one is named against this file
    # (licenses: any text, read row by row: not twice)
    _coerce(Columns.from_frame(extra.drop(columns=["licenses"], errors="ignore")),
            ("procs", *(str(c)[4:] for c in extra.columns if str(c).startswith("res_"))), str(side))
    unknown = np.setdiff1d(extra["id"].to_numpy(), np.asarray(df["id"], dtype=np.int64))
    if unknown.size:
        raise InstanceError(f"{side}: id(s) {unknown[:5].tolist()} are not jobs of {src}")
    if any(str(c).startswith("res_") for c in extra.columns):
        _check_sidecar_covers(np.asarray(df["id"], dtype=np.int64), extra["id"].to_numpy(), side, src)
    try:
        return Columns.from_frame(df.merge(extra, on="id", how="left", validate="one_to_one"))
    except pd.errors.MergeError as exc:
        raise InstanceError(f"{side}: ids do not match {src} one to one ({exc})") from None


def _check_sidecar_covers(ids: np.ndarray, rows: np.ndarray, side: Path, src) -> None:
    """Every job id of ``ids`` (the SWF file ``src``) is among the ``rows`` ids
    of its sidecar ``side``; else :class:`InstanceError` naming the first
    five jobs lacking a row and how many do (a missing extra resource would
    otherwise read as NaN)."""
    missing = np.setdiff1d(ids, rows)
    if not missing.size:
        return
    first = ", ".join(map(str, missing[:5].tolist())) + (", ..." if missing.size > 5 else "")
    plural = "s" if missing.size > 1 else ""
    raise InstanceError(f"{src}: {side.name} has no row for job{plural} {first} "
                        f"({missing.size} job{plural} of {ids.size})")


def write_swf(workload: Workload, path) -> Path:
    """Write ``workload`` as SWF (gzip if the name ends in .gz, in any case); returns the path.

    The header keeps ``meta["header"]`` with ``MaxNodes`` and ``MaxProcs`` set
    to capacity[0] and Note lines (source, dropped counts).  Raw fields absent
    from the table are written as -1 (``alloc_procs``/``req_procs`` as procs,
    ``req_time`` as the estimate); where the raw fields would not give back
    ``procs``/``estimate`` under the read rules, fields 8/9 are overwritten so
    that ``read_swf`` returns the same jobs (read it with the same
    ``kill_at_estimate``).  Columns SWF cannot carry go to ``<path>.extra.csv``.
    """
    path = Path(path)
    data = _swf_header_text(workload).encode("latin-1", errors="replace") + \
        _swf_fields(workload.table).csv_bytes(header=False, delimiter=" ")
    write_bytes(path, gzip.compress(data, compresslevel=6, mtime=0) if _gzipped(path) else data)
    extra = [c for c in workload.table.columns if c not in SWF_FIELDS and c not in CORE]
    side = _sidecar(path)
    if extra:
        write_bytes(side, workload.table.select(["id", *extra]).csv_bytes())
    elif side.exists():
        side.unlink()
    return path


def _swf_fields(jobs: Columns) -> Columns:
    n = len(jobs)
    procs, est = jobs["procs"], jobs["estimate"]
    defaults = {"alloc_procs": procs, "req_procs": procs, "req_time": est}
    cols = {f: jobs[f] if f in jobs else defaults.get(f, np.full(n, -1)) for f in SWF_FIELDS}
    req, alloc, req_t = cols["req_procs"].copy(), cols["alloc_procs"], cols["req_time"].copy()
    fix = np.maximum(np.where(req > 0, req, alloc), 0) != procs
    req[fix] = procs[fix]
    got = np.where(req_t > 0, req_t, jobs["runtime"])
    fix = np.where(got > 0, got, 1.0) != est
    req_t[fix] = est[fix]
    cols.update(req_procs=req, req_time=req_t)
    return Columns({f: _compact(np.asarray(v)) for f, v in cols.items()})


def _compact(values: np.ndarray) -> np.ndarray:
    """Integral floats as int64, so the file reads like an archive trace."""
    if values.dtype.kind == "f" and np.all(values == np.round(values)) and np.all(np.abs(values) < 2**53):
        return values.astype(np.int64)
    return values


def _swf_header_text(w: Workload) -> str:
    header = dict(w.meta.get("header") or {"Version": "2.2"})
    notes = [n for n in header.pop("Note", "").split("\n") if n and not n.startswith("epochbench:")]
    header["MaxNodes"] = header["MaxProcs"] = str(w.nodes)
    header.pop("EpochbenchResources", None), header.pop("EpochbenchCapacity", None)
    if len(w.resources) > 1:
        header["EpochbenchResources"] = _utf8_in_header(" ".join(w.resources))   # 'gpu₂' was written 'gpu?'
        header["EpochbenchCapacity"] = " ".join(map(str, w.capacity.tolist()))
    notes.append(_utf8_in_header(f"epochbench: written from {w.source}"))
    if w.dropped:
        notes.append("epochbench: dropped on reading: " + ", ".join(f"{k}={v}" for k, v in w.dropped.items()))
    header["Note"] = "\n".join(notes)
    lines = []
    for key, value in header.items():
        first, *rest = str(value).split("\n")
        lines += [f"; {key}: {first}", *(f";       {r}" for r in rest)]
    return "\n".join(lines) + "\n"


# ---- CSV and Parquet -------------------------------------------------------------------
#: the format and the version of the metadata :func:`write_table` writes; a
#: file that names another format, or a later version, is refused
TABLE_FORMAT, TABLE_VERSION = "epochbench-workload", 1


#: the keys of a job table's metadata (:func:`write_table`; :func:`read_table` refuses others)
TABLE_KEYS = ("format", "version", "capacity", "resources", "dropped", "source", "meta")
#: keys of a workload's ``meta`` that a table's metadata may hold by mistake at its top
META_KEYS = ("kill_at_estimate", "adjusted", "names", "header", "capacity_from")


def _table_meta(w: Workload) -> str:
    return json.dumps(_plain({"format": TABLE_FORMAT, "version": TABLE_VERSION, "capacity": w.capacity,
                              "resources": list(w.resources), "dropped": w.dropped, "source": w.source,
                              "meta": w.meta}))


def write_table(workload: Workload, path) -> Path:
    """Write the job table as CSV or Parquet (by suffix, in any case) with capacity, resources,
    dropped counts and meta as JSON (CSV first line ``# epochbench {...}``,
    Parquet schema metadata ``epochbench``); returns the path."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        write_bytes(path, (CSV_TAG + _table_meta(workload) + "\n").encode() + workload.table.csv_bytes())
    elif suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq
        table = workload.table.to_arrow()
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               PARQUET_KEY: _table_meta(workload).encode()})
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
    else:
        raise InstanceError(f"{path}: write_table writes .csv or .parquet")
    return path


def read_table(path, *, nodes: int | None = None, capacity=None, resources=None,
               kill_at_estimate: bool | None = None) -> Workload:
    """Read a CSV or Parquet job table written by :func:`write_table` or by hand
    (by suffix, in any case: ``.csv``, ``.parquet``, ``.pq``).

    Capacity and resources come from ``capacity``/``resources`` if given, else
    the file's metadata, else the largest job per resource; ``nodes`` then
    overrides capacity[0].  ``kill_at_estimate`` defaults to the file's flag
    (True without one).  Validation and drops as :func:`make_workload`.
    """
    path = Path(path)
    src = str(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        lines = _first_lines(path, 64)
        first = lines[0]
        _no_comment_lines(lines, src)
        tagged = first.startswith(CSV_TAG)
        info = _json_info(first[len(CSV_TAG):], src, "the header line") if tagged else {}
        df = _read_csv(path, skiprows=1 if tagged else 0)     # the tag line even when its object is empty ({})
    elif suffix in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq
        if path.is_dir():       # pyarrow would read a folder as an (empty) data set
            raise InstanceError(f"{src}: is a folder, expected a Parquet file")
        try:
            table = pq.read_table(path)
        except (pa.ArrowException, OSError, ValueError) as exc:   # ArrowInvalid, ArrowIOError, ...
            raise InstanceError(f"{src}: cannot read Parquet ({exc})") from None
        blob = (table.schema.metadata or {}).get(PARQUET_KEY)
        info = _json_info(blob, src, f"metadata {PARQUET_KEY!r}") if blob else {}
        df = Columns({name: _arrow_column(col) for name, col in zip(table.column_names, table.columns)})
    else:
        raise InstanceError(f"{src}: read_table reads .csv or .parquet")
    if info and "duration" in df.columns:      # write_table's own: derived again by this read's kill rule
        df = Columns({c: v for c, v in as_columns(df).items() if c != "duration"})
    names = tuple(resources or info.get("resources") or
                  ("procs", *(c[4:] for c in df.columns if str(c).startswith("res_"))))
    cap = capacity if capacity is not None else info.get("capacity")
    if capacity is not None:
        info.setdefault("meta", {})["capacity_from"] = "given"
    elif cap is not None:                      # the file's own metadata (kept when it names an SWF header's key)
        info.setdefault("meta", {}).setdefault("capacity_from", "metadata")
    if cap is None:
        missing = [c for c in REQUIRED if c not in df.columns]
        if missing:
            raise InstanceError(_lacks(df, missing, src))
        cap = [_largest(df, "procs" if n == "procs" else f"res_{n}") for n in names]
        info.setdefault("meta", {})["capacity_from"] = "largest_job"
    try:
        cap = np.array(np.atleast_1d(cap), dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise InstanceError(f"{src}: capacity must be positive integers, got {cap!r}") from None
    if nodes is not None:
        if not 0 < nodes <= MAX_NODES:
            raise InstanceError(f"{src}: {arg('nodes', nodes)} is outside 1..{MAX_NODES}")
        cap[0] = nodes
        meta = info.setdefault("meta", {})   # the processors come from nodes now, whatever gave them before
        widest = meta.get("capacity_from") == "largest_job" and cap.shape[0] > 1
        meta["capacity_from"] = "nodes" + ("; extra resources: largest_job" if widest else "")
    meta = dict(info.get("meta", {}))
    kill = meta.pop("kill_at_estimate", True) if kill_at_estimate is None else kill_at_estimate
    return _build(df, cap, resources=names, kill_at_estimate=kill, source=src, meta=meta,
                  dropped=info.get("dropped"), owned=True)


def _first_lines(path: Path, n: int) -> list[str]:
    """The first ``n`` lines of a text file ("" past its end), after a UTF-8
    byte-order mark if it has one (as pandas skips it); :class:`InstanceError`
    naming it when it is missing, a folder, unreadable or not UTF-8."""
    try:
        with path.open(encoding="utf-8-sig") as fh:
            return [fh.readline() for _ in range(n)]
    except FileNotFoundError:
        raise InstanceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InstanceError(f"{path}: is a folder, expected a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read ({type(exc).__name__}: {exc})") from None


def _no_comment_lines(lines: list[str], src: str) -> None:
    """Refuse in one line a CSV job table whose header row (the first line
    that is not blank, after a first metadata line ``# epochbench {...}``
    if there is one: pandas skips blank lines) is a comment (``# ...``).
    pandas read the comment as the header and then said only "Expected 1
    fields in line 2, saw 5"."""
    for lineno, line in enumerate(lines, start=1):
        if (lineno == 1 and line.startswith(CSV_TAG)) or (not line.strip() and line):
            continue
        if line.lstrip().startswith("#"):
            raise InstanceError(f"{src}, line {lineno}: a comment line ({' '.join(line.split())[:40]!r}); a CSV job "
                                f"table starts with its header row, after at most one metadata line "
                                f"'{CSV_TAG.strip()} {{...}}'")
        return


def _json_info(text, src: str, where: str) -> dict:
    """The JSON object of a table's embedded metadata, else :class:`InstanceError`."""
    try:
        info = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InstanceError(f"{src}: {where} is not valid JSON ({exc})") from None
    if not isinstance(info, dict):
        raise InstanceError(f"{src}: {where} must be a JSON object")
    return _checked_info(info, f"{src}: {where}")


def _count(value) -> bool:
    """A count: a non-negative JSON integer (not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _checked_info(info: dict, where: str) -> dict:
    """``info`` when the fields :func:`read_table` uses have the types
    :func:`write_table` writes, else :class:`InstanceError` naming the field:
    ``capacity`` positive integers, ``resources`` names, ``dropped`` and
    ``meta.adjusted`` counts by reason, ``meta.kill_at_estimate`` true or false;
    ``format`` and ``version``, where given, :data:`TABLE_FORMAT` and at most
    :data:`TABLE_VERSION` (a later version was read as this one).  A key
    :func:`write_table` never writes (:data:`TABLE_KEYS`) is refused by
    name: a ``kill_at_estimate`` there, not in ``meta``, was ignored, and
    the jobs were killed at their estimates all the same."""
    unknown = [k for k in info if k not in TABLE_KEYS]
    if unknown:
        hint = "; the workload's own settings (kill_at_estimate, ...) go in 'meta'" if any(
            k in META_KEYS for k in unknown) else ""
        raise InstanceError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} (the keys are "
                            f"{', '.join(TABLE_KEYS)}){hint}")
    if info.get("format", TABLE_FORMAT) != TABLE_FORMAT:
        raise InstanceError(f"{where}: 'format' is {info['format']!r}, not {TABLE_FORMAT!r}")
    version = info.get("version", TABLE_VERSION)
    if not (_count(version) and 1 <= version <= TABLE_VERSION):
        raise InstanceError(f"{where}: 'version' is {version!r}; this epochbench reads version "
                            f"{TABLE_VERSION} (a later one wrote the file?)")
    cap = info.get("capacity")
    if cap is not None:
        items = cap if isinstance(cap, list) else [cap]
        if not items or not all(isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c)
                                and float(c).is_integer() and 0 < c <= MAX_NODES for c in items):
            raise InstanceError(f"{where}: 'capacity' must be integers in 1..{MAX_NODES}, got {cap!r}")
    res = info.get("resources")
    if res is not None and not (isinstance(res, list) and all(isinstance(r, str) and r for r in res)):
        raise InstanceError(f"{where}: 'resources' must be a list of names, got {res!r}")
    meta = info.get("meta", {})
    if not isinstance(meta, dict):
        raise InstanceError(f"{where}: 'meta' must be a JSON object, got {meta!r}")
    for key, counts in (("dropped", info.get("dropped", {})), ("meta.adjusted", meta.get("adjusted", {}))):
        if not (isinstance(counts, dict) and all(_count(v) for v in counts.values())):
            raise InstanceError(f"{where}: '{key}' must map reasons to job counts (integers >= 0), got {counts!r}")
    kill = meta.get("kill_at_estimate", True)
    if not isinstance(kill, bool):
        raise InstanceError(f"{where}: 'meta.kill_at_estimate' must be true or false, got {kill!r}")
    said = meta.get("capacity_from")       # a report prints it as where the capacity came from: text, or not said
    if "capacity_from" in meta and not (isinstance(said, str) and said.strip()):
        del meta["capacity_from"]          # (a 5 was printed so; refusing it refused files epochbench had written)
    return info


def _arrow_column(col) -> np.ndarray:
    """One Parquet column as numpy: numbers as they are (nulls as NaN;
    booleans with nulls as Python objects, which a column read as numbers
    refuses, as it refuses one of booleans alone),
    dates and durations as numpy's datetime64 / timedelta64 (which a column
    read as numbers refuses by name, :func:`_numeric`: as Python objects they
    read as microseconds), times of day as ``datetime.time`` objects (refused
    the same way, as text that is not a number), lists and records as
    Python objects, one a row (a column read as numbers names the first),
    text as str objects."""
    import pyarrow as pa
    if pa.types.is_boolean(col.type) and col.null_count:     # as floats, true / false would pass as 1 / 0
        return np.array(col.to_pylist(), dtype=object)
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_boolean(col.type):
        if col.null_count:
            return col.to_numpy().astype(np.float64) if not pa.types.is_floating(col.type) else col.to_numpy()
        return col.to_numpy()
    if pa.types.is_timestamp(col.type) or pa.types.is_date(col.type) or pa.types.is_duration(col.type):
        return col.to_numpy()
    values = col.to_pylist()
    if pa.types.is_nested(col.type):    # lists of one length: numpy would make a 2-D array, refused unnamed
        out = np.empty(len(values), dtype=object)
        for i, v in enumerate(values):
            out[i] = v
        return out
    return np.array(values, dtype=object)


def _read_csv(path, **kw) -> Columns:
    """A CSV table through pandas' C reader (no Python work per row).

    A row with more fields than the header is an :class:`InstanceError`
    naming its line, the first data row included: pandas would make its
    first fields the row index (shifting every column), or with
    ``index_col=False`` drop the last ones (:func:`_check_row_lengths`).
    So is a row with fewer (:func:`_check_short_rows`): pandas fills the
    missing fields as empty ones.
    """
    import warnings

    import pandas as pd
    try:
        _check_row_lengths(path, **kw)
        _check_short_rows(path, **kw)
        with warnings.catch_warnings():     # pandas' "loss of data" warning: a row too long after all
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(path, keep_default_na=False, na_values=["", "NaN", "nan"], index_col=False, **kw)
    except pd.errors.EmptyDataError:
        raise InstanceError(f"{path}: empty file (no header, no jobs)") from None
    except InstanceError:
        raise
    except (ValueError, pd.errors.ParserError, pd.errors.ParserWarning) as exc:   # UnicodeDecodeError: a ValueError
        raise InstanceError(f"{path}: malformed CSV ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    except IsADirectoryError:
        raise InstanceError(f"{path}: is a folder, expected a file") from None
    except OSError as exc:
        raise InstanceError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if "licenses" in df.columns:    # an all-empty column reads as float NaN, which fillna("") warns of (pandas 3)
        lic = df["licenses"].astype(object)
        df["licenses"] = lic.where(lic.notna(), "").astype(str)
    return Columns.from_frame(df)


#: bytes of a CSV file read per step by :func:`_check_short_rows`
CSV_CHUNK = 1 << 23


def _check_short_rows(path, *, skiprows: int = 0) -> None:
    """:class:`InstanceError` naming the first row that has fewer fields
    than the header: pandas reads the missing fields as empty ones, so the
    torn row ``2,1,10,4`` under ``id,submit,runtime,procs,estimate`` ran
    with an unknown estimate (the runtime) without a word.  Blank lines
    (white space only), which pandas skips, pass; the first ``skiprows``
    lines are not read.

    Reads :data:`CSV_CHUNK` bytes at a time with numpy, no Python work per
    row: a step whose commas number the header's times its lines passes
    (a short row there goes with a longer one, which pandas refuses), any
    other has each line's commas counted (measured on 90 MB: about 0.1 s,
    where pandas reads it in 0.3 s; 0.6 s when every line is counted).  A
    file with a quote character after the skipped lines is read by
    :mod:`csv` (a quoted field may hold commas and line breaks)."""
    header, fast, first = None, False, 0     # first: the number of the step's first line, from 0
    with open(path, "rb") as fh:
        _skip_bom(fh)
        for data, end in _whole_lines(fh):
            if data.find(b'"', _line_start(data, end, skiprows - first), end) >= 0:   # (the JSON tag line has quotes)
                return _check_short_rows_quoted(path, skiprows)
            if data.find(b"\r", 0, end) >= 0:       # pandas ends a line at a lone CR too
                data = data[:end].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
                end = len(data)
            buf = np.frombuffer(data, np.uint8, end)
            lines = np.count_nonzero(buf == 10) + (data[end - 1] != 10)
            if not fast or np.count_nonzero(buf == 44) != header * lines:
                header, fast = _short_lines(path, data, buf, first, skiprows, header, fast)
            first += lines


def _line_start(data, end: int, k: int) -> int:
    """Where line ``k`` (from 0) of ``data[:end]`` starts (``end`` past its
    lines, 0 for k <= 0)."""
    at = 0
    for _ in range(k):
        at = data.find(b"\n", at, end) + 1
        if at == 0:
            return end
    return at


def _whole_lines(fh):
    """(bytes, end) of the binary file ``fh`` in steps of about
    :data:`CSV_CHUNK` bytes: ``bytes[:end]`` holds whole lines (the file's
    last one may lack its line break)."""
    rest = b""                               # the start of a line that the last step cut
    while True:
        got = fh.read(CSV_CHUNK)
        if not got:
            if rest:
                yield rest, len(rest)
            return
        data = rest + got if rest else got
        end = data.rfind(b"\n") + 1
        rest = data[end:]
        if end:
            yield data, end


def _short_lines(path, data: bytes, buf: np.ndarray, first: int, skiprows: int, header, fast: bool):
    """One step of :func:`_check_short_rows` (``buf``: its lines, over
    ``data``), line by line: returns the header's commas (found here if
    ``header`` is None; empty names at its end do not count, as a
    spreadsheet writes them: pandas names those columns ``Unnamed: N``, which
    no reader takes) and whether a step may pass by its count of commas (not
    when such names were cut off: a row as long as the whole header would
    make up for a short one), or raises naming the first short row."""
    ends = np.flatnonzero(buf == 10)
    if buf[-1] != 10:
        ends = np.append(ends, len(buf))
    starts = np.concatenate(([0], ends[:-1] + 1))
    commas = np.diff(np.searchsorted(np.flatnonzero(buf == 44), np.concatenate(([0], ends))))
    rows = np.arange(max(skiprows - first, 0), len(ends))
    filled = commas[rows] > 0                # else a short row of one field, or a blank line: looked at
    for x in np.flatnonzero(~filled):
        filled[x] = bool(data[starts[rows[x]]:ends[rows[x]]].strip())
    rows = rows[filled]
    if header is None and rows.size:
        line = data[starts[rows[0]]:ends[rows[0]]]
        header, rows = line.rstrip(b" \t,").count(b","), rows[1:]
        fast = header == line.count(b",")
    short = rows[commas[rows] < header] if rows.size else rows
    if short.size:
        k = short[0]
        _short_row(path, first + k + 1, commas[k] + 1, header + 1)
    return header, fast


def _check_short_rows_quoted(path, skiprows: int) -> None:
    """:func:`_check_short_rows` for a file with quoted fields, by :mod:`csv`."""
    import csv
    header = None
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        for _ in range(skiprows):
            fh.readline()
        reader = csv.reader(fh)
        for row in reader:
            if not any(field.strip() for field in row) and len(row) <= 1:
                continue                     # a blank line
            if header is None:
                while len(row) > 1 and not row[-1].strip():
                    row = row[:-1]           # empty names at the end (:func:`_short_lines`)
                header = len(row)
            elif len(row) < header:
                _short_row(path, skiprows + reader.line_num, len(row), header)


def _short_row(path, line: int, fields: int, header: int):
    raise InstanceError(f"{path}, line {line}: {fields} field(s), the header has {header}; give every field "
                        "(an unknown value: an empty field between its commas)")


#: the columns a job table's reader uses (besides ``res_*``): one named twice is refused
_READ_COLUMNS = frozenset((*CORE, "deadline", "licenses", *RAW_FIELDS))


def _check_row_lengths(path, *, skiprows: int = 0) -> None:
    """Raise pandas' ``ParserError`` ("Expected N fields in line L, saw M")
    when the first data row of a CSV file has more fields than its header,
    and an :class:`InstanceError` when the header names a column it reads
    twice (blank or unknown names, which it ignores, may repeat).

    pandas checks every later row against the wider of the two, but takes
    a first row that is longer for one with index columns; read as data
    (``header=None``), the header and that row are two rows, which its
    tokenizer compares.  Reads the first two rows only.
    """
    import pandas as pd
    head = pd.read_csv(path, header=None, nrows=2, skiprows=skiprows, dtype=str, keep_default_na=False,
                       index_col=False)
    names = [str(x).strip() for x in head.iloc[0]] if len(head) else []
    read = [x for x in names if x.startswith("res_") or x in _READ_COLUMNS]     # others (blank ones) are ignored
    twice = first_repeat(read)
    if twice is not None:       # pandas would read the second as 'NAME.1' (another resource) or drop it
        raise InstanceError(f"{path}: column {twice!r} given twice")


#: the workload file suffixes, each with the writer of its format
_WRITERS = {(".swf", ".swf.gz"): "swf", (".csv", ".parquet", ".pq"): "table"}


def save_workload(workload: Workload, path) -> Path:
    """Write ``workload`` to a new file by suffix: ``.swf``/``.swf.gz``
    (:func:`write_swf`, with its ``.extra.csv`` sidecar when it has columns
    SWF cannot carry), ``.csv``/``.parquet``/``.pq`` (:func:`write_table`).
    Nothing is overwritten: a path, or an SWF's sidecar, that exists already
    is refused, as is an unknown suffix (``InstanceError``, one line).
    Returns the path written."""
    path = Path(path)
    kind = check_new_workload(path)
    return write_swf(workload, path) if kind == "swf" else write_table(workload, path)


def check_new_workload(path) -> str:
    """The format (``"swf"`` or ``"table"``) of a workload file about to be
    written at ``path`` by :func:`save_workload`; ``InstanceError`` (one
    line) for an unknown suffix or a file there already (the path, or an
    SWF's ``.extra.csv`` sidecar).  A command calls it before its work, so
    that a bad path fails at once, not after a long run."""
    path = Path(path)
    kind = next((k for suffixes, k in _WRITERS.items() if path.name.lower().endswith(suffixes)), None)
    if kind is None:
        raise InstanceError(f"{path}: unknown workload format (write .swf, .swf.gz, .csv or .parquet)")
    for taken in (path, _sidecar(path)) if kind == "swf" else (path,):
        if taken.exists():
            raise InstanceError(f"{taken}: already exists; write the stream to a new file (nothing is overwritten)")
    return kind


def load_workload(path, **kw) -> Workload:
    """Read a job stream by suffix: ``.swf``/``.swf.gz`` (:func:`read_swf`),
    ``.csv``/``.parquet`` (:func:`read_table`); ``kw`` goes to the reader."""
    name = Path(path).name.lower()
    readers = {(".swf", ".swf.gz"): read_swf, (".csv", ".parquet", ".pq"): read_table}
    reader = next((r for suffixes, r in readers.items() if name.endswith(suffixes)), None)
    if reader is None:
        raise InstanceError(f"{path}: unknown workload format (expected .swf, .swf.gz, .csv or .parquet)")
    if not Path(path).exists():
        raise InstanceError(f"{path}: no such file")
    return require_jobs(reader(path, **kw), path)


def require_jobs(workload, where=None):
    """``workload`` if it holds a job to run; the one refusal of an empty one
    otherwise, read from a file or built in memory alike.

    Parameters
    ----------
    workload : Workload or job table
        A stream read (:func:`load_workload`) or built (:func:`make_workload`),
        or the simulator's job table (``Columns``).
    where : str or path, optional
        What to name in the message (default: the workload's ``source``;
        ``memory`` for a table given from Python).

    Returns
    -------
    Workload or job table
        ``workload`` itself.

    Raises
    ------
    InstanceError
        One line: ``WHERE: no runnable jobs (REASON N dropped): an empty
        workload has no metrics`` (every metric of a simulation would be NaN).
    """
    if len(workload):
        return workload
    drops = getattr(workload, "dropped", None) or {}
    dropped = f" ({', '.join(f'{k} {v}' for k, v in drops.items())} dropped)" if drops else ""
    where = getattr(workload, "source", "memory") if where is None else where
    raise InstanceError(f"{where}: no runnable jobs{dropped}: an empty workload has no metrics")
