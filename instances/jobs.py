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
for times and memory, int64 otherwise.  Any further column passes through.

Jobs that cannot run are dropped and counted by reason in ``Workload.dropped``,
never silently.  The first rule that applies names the reason, in this order:
``negative_submit``, ``negative_runtime`` (SWF -1 = unknown), ``no_processors``,
``too_many_processors`` (more than capacity[0]), then per extra resource
``negative_<name>`` and ``too_much_<name>``.

Files: SWF (``.swf``, ``.swf.gz``) carries the 18 fields; extra resources,
deadlines, licenses and other columns go to a sidecar ``<path>.extra.csv``
keyed by ``id`` and the extra capacities to the header keys
``EpochbenchResources`` / ``EpochbenchCapacity``.  CSV keeps capacity,
resources, dropped counts and meta as JSON on a first line ``# epochbench
{...}``; Parquet keeps the same JSON under the schema metadata key
``epochbench``.
"""
from __future__ import annotations

import gzip
import io
import json
import re
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from epochbench.instances.core import InstanceError, _plain
from epochbench.instances.files import atomic_path, write_bytes

SWF_FIELDS = ("id", "submit", "wait", "runtime", "alloc_procs", "avg_cpu", "mem", "req_procs", "req_time",
              "req_mem", "status", "user", "group", "app", "queue", "partition", "prev_job", "think_time")
SWF_FLOAT = frozenset({"submit", "wait", "runtime", "avg_cpu", "mem", "req_time", "req_mem", "think_time"})
RAW_FIELDS = tuple(f for f in SWF_FIELDS if f not in ("id", "submit", "runtime"))
CORE = ("id", "submit", "runtime", "estimate", "procs", "duration")
REQUIRED = ("id", "submit", "runtime", "procs")
SIDECAR_SUFFIX = ".extra.csv"
CSV_TAG = "# epochbench "
PARQUET_KEY = b"epochbench"


@dataclass(frozen=True, eq=False)
class Workload:
    """A job stream on a machine of ``capacity`` (K entries; entry 0 = processors).

    Build it with :func:`make_workload` or a reader; ``jobs`` follows the column
    contract of this module's docstring.
    """

    jobs: pd.DataFrame
    capacity: np.ndarray
    resources: tuple = ("procs",)
    dropped: dict = field(default_factory=dict)
    source: str = "memory"
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        if len(self.resources) != len(self.capacity) or self.resources[0] != "procs":
            raise InstanceError(f"{self.source}: resources {self.resources} must start with 'procs' "
                                f"and match capacity {list(self.capacity)}")

    def __len__(self) -> int:
        return len(self.jobs)

    @property
    def nodes(self) -> int:
        """capacity[0], the machine size in processors (nodes)."""
        return int(self.capacity[0])

    @property
    def kill_at_estimate(self) -> bool:
        return bool(self.meta.get("kill_at_estimate", True))


# ---- building and validating --------------------------------------------------------
def make_workload(jobs, capacity, *, resources=None, kill_at_estimate: bool = True, source: str = "memory",
                  meta: dict | None = None, dropped: dict | None = None) -> Workload:
    """Validate a job table and build a :class:`Workload`; cost O(n log n) (the sort).

    ``jobs`` needs ``id, submit, runtime, procs``; ``estimate`` is optional
    (missing, NaN or <= 0 means unknown: the runtime, then at least 1 s).
    ``capacity`` is an int or K ints; without ``resources`` the extra names come
    from the ``res_<name>`` columns in table order.  Raises
    :class:`~epochbench.instances.core.InstanceError` on missing columns, non-numeric or
    NaN values, fractional counts and duplicate ids; drops by reason the jobs
    that cannot run (module docstring), adding to ``dropped``.
    """
    df = (jobs if isinstance(jobs, pd.DataFrame) else pd.DataFrame(jobs)).reset_index(drop=True).copy()
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise InstanceError(f"{source}: job table lacks column(s) {missing}")
    cap = _capacity(capacity, source)
    names = _resource_names(df, cap, resources, source)
    _coerce(df, names, source)
    df, drops = _drop(df, cap, names)
    meta = dict(meta or {})
    adjusted = dict(meta.get("adjusted", {}))
    floored = _set_estimate(df)
    if floored:
        adjusted["estimate_set_to_1s"] = adjusted.get("estimate_set_to_1s", 0) + floored
    kill = bool(kill_at_estimate)
    est, run = df["estimate"].to_numpy(), df["runtime"].to_numpy()
    df["duration"] = np.minimum(run, est) if kill else run
    meta.update(kill_at_estimate=kill, adjusted=adjusted)
    total = dict(dropped or {})
    for reason, count in drops.items():
        total[reason] = total.get(reason, 0) + count
    return Workload(_ordered(df, names), cap, names, total, str(source), meta)


def _capacity(capacity, source) -> np.ndarray:
    cap = np.atleast_1d(np.asarray(capacity))
    if cap.ndim != 1 or cap.size == 0 or cap.dtype.kind not in "iuf" or np.any(cap != np.round(cap)) \
            or np.any(cap < 1):
        raise InstanceError(f"{source}: capacity must be one or more positive integers, got {capacity!r}")
    cap = cap.astype(np.int64)
    cap.setflags(write=False)
    return cap


def _resource_names(df, cap, resources, source) -> tuple:
    res_cols = [c for c in df.columns if isinstance(c, str) and c.startswith("res_")]
    names = ("procs", *(c[4:] for c in res_cols)) if resources is None else tuple(resources)
    if names[0] != "procs" or len(names) != len(cap):
        raise InstanceError(f"{source}: resources {names} must start with 'procs' and match "
                            f"capacity {cap.tolist()} (res_ columns: {res_cols})")
    absent = [f"res_{n}" for n in names[1:] if f"res_{n}" not in df.columns]
    unused = [c for c in res_cols if c[4:] not in names[1:]]
    if absent or unused:
        raise InstanceError(f"{source}: resources {names} need columns {absent}, and columns {unused} "
                            f"have no capacity")
    return names


def _coerce(df, names, source) -> None:
    """Cast the contract columns in place; raise on NaN, text and fractions."""
    ints = ["id", "procs", *(f"res_{n}" for n in names[1:]), *(f for f in RAW_FIELDS if f not in SWF_FLOAT)]
    for col in ints:
        if col in df.columns:
            df[col] = _as_int(df[col], col, source)
    for col in ("submit", "runtime", "estimate", "deadline", *(f for f in RAW_FIELDS if f in SWF_FLOAT)):
        if col in df.columns:
            df[col] = _as_float(df[col], col, source, allow_nan=col in ("estimate", "deadline"))
    if "licenses" in df.columns:
        df["licenses"] = df["licenses"].fillna("").astype(str)
    dup = df["id"].duplicated()
    if dup.any():
        raise InstanceError(f"{source}: job id {int(df['id'][dup].iloc[0])} occurs more than once")


def _as_float(col: pd.Series, name, source, *, allow_nan=False) -> np.ndarray:
    try:
        arr = pd.to_numeric(col, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
    except (ValueError, TypeError) as exc:
        raise InstanceError(f"{source}: column '{name}' is not numeric ({exc})") from None
    bad = ~np.isfinite(arr) & ~(allow_nan & np.isnan(arr))
    if bad.any():
        raise InstanceError(f"{source}: column '{name}' has {arr[bad][0]} at row {int(np.argmax(bad))}")
    return arr


def _as_int(col: pd.Series, name, source) -> np.ndarray:
    if col.dtype.kind in "iu":
        return col.to_numpy(dtype=np.int64)
    arr = _as_float(col, name, source)
    frac = arr != np.round(arr)
    if frac.any():
        raise InstanceError(f"{source}: column '{name}' must hold integers, got {arr[frac][0]} "
                            f"at row {int(np.argmax(frac))}")
    return arr.astype(np.int64)


def _drop(df, cap, names) -> tuple[pd.DataFrame, dict]:
    """Drop the jobs that cannot run; first rule that applies names the reason."""
    rules = [("negative_submit", df["submit"].to_numpy() < 0),
             ("negative_runtime", df["runtime"].to_numpy() < 0),
             ("no_processors", df["procs"].to_numpy() < 1),
             ("too_many_processors", df["procs"].to_numpy() > cap[0])]
    for k, name in enumerate(names[1:], start=1):
        amount = df[f"res_{name}"].to_numpy()
        rules += [(f"negative_{name}", amount < 0), (f"too_much_{name}", amount > cap[k])]
    gone = np.zeros(len(df), dtype=bool)
    counts = {}
    for reason, hit in rules:
        new = hit & ~gone
        if new.any():
            counts[reason] = int(new.sum())
            gone |= new
    return (df[~gone].reset_index(drop=True) if gone.any() else df), counts


def _set_estimate(df) -> int:
    """Estimate rule in place: given if > 0, else runtime, else 1 s; returns the 1 s count."""
    run = df["runtime"].to_numpy()
    est = df["estimate"].to_numpy() if "estimate" in df.columns else np.full(len(df), np.nan)
    est = np.where(est > 0, est, run)
    floor = ~(est > 0)
    df["estimate"] = np.where(floor, 1.0, est)
    return int(floor.sum())


def _ordered(df, names) -> pd.DataFrame:
    """Rows by (submit, id), columns in contract order."""
    order = np.lexsort((df["id"].to_numpy(), df["submit"].to_numpy()))
    first = [*CORE, *(f"res_{n}" for n in names[1:]), "deadline", "licenses", *RAW_FIELDS]
    cols = [c for c in first if c in df.columns] + [c for c in df.columns if c not in first]
    out = df.take(order)[cols] if len(df) else df[cols]
    return out.reset_index(drop=True)


# ---- SWF ------------------------------------------------------------------------------
_KEY = re.compile(r"^;\s{0,2}(\w+):\s*(.*?)\s*$")


def read_swf(path, *, nodes: int | None = None, kill_at_estimate: bool = True) -> Workload:
    """Read a Standard Workload Format trace (``.swf`` or ``.swf.gz``), issue 3 rules.

    processors = field 8 if > 0 else field 5; estimate = field 9 if > 0 else
    the runtime (1 s if that is 0 too); machine size = ``nodes`` if given, else
    header ``MaxProcs``, else ``MaxNodes``, else the largest job
    (``meta["capacity_from"]`` says which).  Header keys go to
    ``meta["header"]`` (repeated keys and continuation lines joined by "\\n"),
    ``MaxProcs``/``MaxNodes`` also to ``meta`` as ints (None if absent).
    A sidecar ``<path>.extra.csv`` is merged by id when it exists.  Malformed
    lines raise :class:`InstanceError` naming file and line.  Parsing is
    pandas' C reader: O(n), about 0.25 s per 100,000 jobs.
    """
    path = Path(path)
    src = str(path)
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except IsADirectoryError:
        raise InstanceError(f"{src}: is a folder, expected an SWF file") from None
    except (OSError, EOFError, zlib.error) as exc:    # BadGzipFile is an OSError; a truncated .gz an EOFError
        raise InstanceError(f"{src}: cannot read SWF file ({type(exc).__name__}: {exc})") from None
    header = _swf_header(raw)
    for key, value in (("MaxProcs", _header_int(header, "MaxProcs")), ("MaxNodes", _header_int(header, "MaxNodes")),
                       ("nodes", nodes)):
        if value is not None and not 0 < value <= MAX_NODES:
            raise InstanceError(f"{src}: {'option --nodes' if key == 'nodes' else f'header field {key!r}'} "
                                f"= {value} is outside 1..{MAX_NODES}")
    df = _swf_body(raw, src)
    req, alloc = df["req_procs"].to_numpy(), df["alloc_procs"].to_numpy()
    df.insert(3, "procs", np.maximum(np.where(req > 0, req, alloc), 0))
    req_t = df["req_time"].to_numpy()
    df.insert(4, "estimate", np.where(req_t > 0, req_t, df["runtime"].to_numpy()))
    df = _merge_sidecar(df, _sidecar(path), src)
    names = ("procs", *(c[4:] for c in df.columns if c.startswith("res_")))
    cap, cap_from = _swf_capacity(df, header, names, nodes)
    meta = {"header": header, "capacity_from": cap_from,
            "MaxProcs": _header_int(header, "MaxProcs"), "MaxNodes": _header_int(header, "MaxNodes")}
    return make_workload(df, cap, resources=names, kill_at_estimate=kill_at_estimate, source=src, meta=meta)


def _swf_header(raw: bytes) -> dict:
    """``; Key: value`` lines before the first job; indented ``;`` lines continue a value."""
    header: dict[str, str] = {}
    last = None
    for bline in io.BytesIO(raw):                    # lazily: stops at the first job line
        line = bline.decode("latin-1").rstrip("\r\n")
        text = line.strip()
        if not text:
            continue
        if not text.startswith(";"):
            break
        m = _KEY.match(line.rstrip()) if line.startswith(";") else None
        if m:
            last = m.group(1)
            header[last] = f"{header[last]}\n{m.group(2)}" if last in header else m.group(2)
        elif text[1:].strip() and last is not None:
            header[last] += "\n" + text[1:].strip()
    return header


#: the largest machine size (nodes, or units of a resource) a workload may declare
MAX_NODES = 2**53


def _header_int(header: dict, key: str) -> int | None:
    m = re.match(r"\s*(\d+)", header.get(key, ""))
    return int(m.group(1)) if m and int(m.group(1)) > 0 else None


def _swf_body(raw: bytes, src: str) -> pd.DataFrame:
    """The 18 fields of every job line, dtypes per the contract; O(n) in pandas' C reader."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pd.errors.ParserWarning)
            table = pd.read_csv(io.BytesIO(raw), sep=r"\s+", comment=";", header=None, names=range(19),
                                dtype=np.float64, index_col=False, engine="c")
    except pd.errors.EmptyDataError:
        table = pd.DataFrame(np.empty((0, 19)))
    except (ValueError, pd.errors.ParserError) as exc:
        _raise_bad_line(raw, src, exc)
    arr = table.to_numpy(dtype=np.float64)
    ok = np.isfinite(arr[:, :18]).all() and np.isnan(arr[:, 18]).all()
    ints = [k for k, f in enumerate(SWF_FIELDS) if f not in SWF_FLOAT]
    if not ok or np.any(arr[:, ints] != np.round(arr[:, ints])) or np.any(np.abs(arr[:, ints]) > MAX_NODES):
        _raise_bad_line(raw, src, None)
    return pd.DataFrame({f: arr[:, k] if f in SWF_FLOAT else arr[:, k].astype(np.int64)
                         for k, f in enumerate(SWF_FIELDS)})


def _raise_bad_line(raw: bytes, src: str, exc) -> None:
    """Slow path: find the first malformed job line and raise naming it."""
    for lineno, line in enumerate(raw.decode("latin-1").splitlines(), start=1):
        tokens = line.split(";", 1)[0].split()
        if not tokens:
            continue
        if len(tokens) != 18:
            raise InstanceError(f"{src}, line {lineno}: expected 18 fields, got {len(tokens)}")
        for k, tok in enumerate(tokens):
            try:
                value = float(tok)
            except ValueError:
                value = None
            if value is None or not np.isfinite(value) or (SWF_FIELDS[k] not in SWF_FLOAT and (
                    value != round(value) or abs(value) > MAX_NODES)):
                kind = "a number" if SWF_FIELDS[k] in SWF_FLOAT else f"an integer of at most {MAX_NODES}"
                raise InstanceError(f"{src}, line {lineno}: field {k + 1} ({SWF_FIELDS[k]}) is not "
                                    f"{kind}: {tok!r}")
    raise InstanceError(f"{src}: malformed SWF ({exc})")


def _swf_capacity(df, header, names, nodes) -> tuple[np.ndarray, str]:
    """Machine size by the issue 3 rule; extra capacities from the header or the largest job."""
    largest = _largest(df, "procs")
    for cap_from, value in (("nodes", nodes), ("MaxProcs", _header_int(header, "MaxProcs")),
                            ("MaxNodes", _header_int(header, "MaxNodes")), ("largest_job", largest)):
        if value is not None:
            break
    extra = header.get("EpochbenchCapacity", "").split()[1:]
    if len(names) > 1 and (header.get("EpochbenchResources", "").split()[1:] != list(names[1:])
                           or len(extra) != len(names) - 1):
        extra = [_largest(df, f"res_{n}") for n in names[1:]]
        cap_from += "; extra resources: largest_job"
    return np.array([int(value), *map(int, extra)], dtype=np.int64), cap_from


def _largest(df, column: str) -> int:
    """The largest amount of ``column`` among jobs that pass the runtime and
    processor rules (at least 1): the machine size when nothing else gives it."""
    num = {c: pd.to_numeric(df[c], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
           for c in ("submit", "runtime", "procs", column)}
    runnable = (num["submit"] >= 0) & (num["runtime"] >= 0) & (num["procs"] >= 1) & np.isfinite(num[column])
    return max(int(num[column][runnable].max(initial=1)), 1)


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def _merge_sidecar(df, side: Path, src) -> pd.DataFrame:
    if not side.exists():
        return df
    extra = _read_csv(side)
    if "id" not in extra.columns:
        raise InstanceError(f"{side}: sidecar lacks the 'id' column")
    extra = extra.drop(columns=[c for c in extra.columns if c in df.columns and c != "id"])
    try:
        return df.merge(extra, on="id", how="left", validate="one_to_one")
    except pd.errors.MergeError as exc:
        raise InstanceError(f"{side}: ids do not match {src} one to one ({exc})") from None


def write_swf(workload: Workload, path) -> Path:
    """Write ``workload`` as SWF (gzip if the name ends in .gz); returns the path.

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
        _csv_bytes(_swf_fields(workload.jobs), header=False, delimiter=" ")
    write_bytes(path, gzip.compress(data, compresslevel=6, mtime=0) if path.suffix == ".gz" else data)
    extra = [c for c in workload.jobs.columns if c not in SWF_FIELDS and c not in CORE]
    side = _sidecar(path)
    if extra:
        write_bytes(side, _csv_bytes(workload.jobs[["id", *extra]]))
    elif side.exists():
        side.unlink()
    return path


def _swf_fields(jobs: pd.DataFrame) -> pd.DataFrame:
    n = len(jobs)
    procs, est = jobs["procs"].to_numpy(), jobs["estimate"].to_numpy()
    defaults = {"alloc_procs": procs, "req_procs": procs, "req_time": est}
    cols = {f: jobs[f].to_numpy() if f in jobs.columns else defaults.get(f, np.full(n, -1)) for f in SWF_FIELDS}
    req, alloc, req_t = cols["req_procs"].copy(), cols["alloc_procs"], cols["req_time"].copy()
    fix = np.maximum(np.where(req > 0, req, alloc), 0) != procs
    req[fix] = procs[fix]
    got = np.where(req_t > 0, req_t, jobs["runtime"].to_numpy())
    fix = np.where(got > 0, got, 1.0) != est
    req_t[fix] = est[fix]
    cols.update(req_procs=req, req_time=req_t)
    return pd.DataFrame({f: _compact(np.asarray(v)) for f, v in cols.items()})


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
        header["EpochbenchResources"] = " ".join(w.resources)
        header["EpochbenchCapacity"] = " ".join(map(str, w.capacity.tolist()))
    notes.append(f"epochbench: written from {w.source}")
    if w.dropped:
        notes.append("epochbench: dropped on reading: " + ", ".join(f"{k}={v}" for k, v in w.dropped.items()))
    header["Note"] = "\n".join(notes)
    lines = []
    for key, value in header.items():
        first, *rest = str(value).split("\n")
        lines += [f"; {key}: {first}", *(f";       {r}" for r in rest)]
    return "\n".join(lines) + "\n"


# ---- CSV and Parquet -------------------------------------------------------------------
def _table_meta(w: Workload) -> str:
    return json.dumps(_plain({"format": "epochbench-workload", "version": 1, "capacity": w.capacity,
                              "resources": list(w.resources), "dropped": w.dropped, "source": w.source,
                              "meta": w.meta}))


def write_table(workload: Workload, path) -> Path:
    """Write the job table as CSV or Parquet (by suffix) with capacity, resources,
    dropped counts and meta as JSON (CSV first line ``# epochbench {...}``,
    Parquet schema metadata ``epochbench``); returns the path."""
    path = Path(path)
    if path.suffix == ".csv":
        write_bytes(path, (CSV_TAG + _table_meta(workload) + "\n").encode() + _csv_bytes(workload.jobs))
    elif path.suffix in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq
        table = pa.Table.from_pandas(workload.jobs, preserve_index=False)
        table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                               PARQUET_KEY: _table_meta(workload).encode()})
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
    else:
        raise InstanceError(f"{path}: write_table writes .csv or .parquet")
    return path


def read_table(path, *, nodes: int | None = None, capacity=None, resources=None,
               kill_at_estimate: bool | None = None) -> Workload:
    """Read a CSV or Parquet job table written by :func:`write_table` or by hand.

    Capacity and resources come from ``capacity``/``resources`` if given, else
    the file's metadata, else the largest job per resource; ``nodes`` then
    overrides capacity[0].  ``kill_at_estimate`` defaults to the file's flag
    (True without one).  Validation and drops as :func:`make_workload`.
    """
    path = Path(path)
    src = str(path)
    if path.suffix == ".csv":
        first = _first_line(path)
        info = _json_info(first[len(CSV_TAG):], src, "the header line") if first.startswith(CSV_TAG) else {}
        df = _read_csv(path, skiprows=1 if info else 0)
    elif path.suffix in (".parquet", ".pq"):
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
        df = table.to_pandas()
    else:
        raise InstanceError(f"{src}: read_table reads .csv or .parquet")
    names = tuple(resources or info.get("resources") or
                  ("procs", *(c[4:] for c in df.columns if str(c).startswith("res_"))))
    cap = capacity if capacity is not None else info.get("capacity")
    if cap is None:
        missing = [c for c in REQUIRED if c not in df.columns]
        if missing:
            raise InstanceError(f"{src}: job table lacks column(s) {missing}")
        cap = [_largest(df, "procs" if n == "procs" else f"res_{n}") for n in names]
        info.setdefault("meta", {})["capacity_from"] = "largest_job"
    try:
        cap = np.array(np.atleast_1d(cap), dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise InstanceError(f"{src}: capacity must be positive integers, got {cap!r}") from None
    if nodes is not None:
        if not 0 < nodes <= MAX_NODES:
            raise InstanceError(f"{src}: option --nodes = {nodes} is outside 1..{MAX_NODES}")
        cap[0] = nodes
    meta = dict(info.get("meta", {}))
    kill = meta.pop("kill_at_estimate", True) if kill_at_estimate is None else kill_at_estimate
    return make_workload(df, cap, resources=names, kill_at_estimate=kill, source=src, meta=meta,
                         dropped=info.get("dropped"))


def _first_line(path: Path) -> str:
    """The first line of a text file; :class:`InstanceError` naming it when
    it is missing, a folder, unreadable or not UTF-8."""
    try:
        with path.open(encoding="utf-8") as fh:
            return fh.readline()
    except FileNotFoundError:
        raise InstanceError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InstanceError(f"{path}: is a folder, expected a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstanceError(f"{path}: cannot read ({type(exc).__name__}: {exc})") from None


def _json_info(text, src: str, where: str) -> dict:
    """The JSON object of a table's embedded metadata, else :class:`InstanceError`."""
    try:
        info = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InstanceError(f"{src}: {where} is not valid JSON ({exc})") from None
    if not isinstance(info, dict):
        raise InstanceError(f"{src}: {where} must be a JSON object")
    return info


def _read_csv(path, **kw) -> pd.DataFrame:
    try:
        df = pd.read_csv(path, keep_default_na=False, na_values=["", "NaN", "nan"], **kw)
    except pd.errors.EmptyDataError:
        raise InstanceError(f"{path}: empty file (no header, no jobs)") from None
    except (ValueError, pd.errors.ParserError) as exc:   # UnicodeDecodeError is a ValueError
        raise InstanceError(f"{path}: malformed CSV ({type(exc).__name__}: {' '.join(str(exc).split())})") from None
    except IsADirectoryError:
        raise InstanceError(f"{path}: is a folder, expected a file") from None
    except OSError as exc:
        raise InstanceError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if "licenses" in df.columns:
        df["licenses"] = df["licenses"].fillna("").astype(str)
    return df


def _csv_bytes(df: pd.DataFrame, *, header: bool = True, delimiter: str = ",") -> bytes:
    """``df`` as CSV text through pyarrow's writer (10x pandas' to_csv); NaN as empty."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    buf = io.BytesIO()
    pacsv.write_csv(pa.Table.from_pandas(df, preserve_index=False), buf,
                    pacsv.WriteOptions(include_header=header, delimiter=delimiter))
    return buf.getvalue()


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
    workload = reader(path, **kw)
    if not len(workload.jobs):
        dropped = f" ({', '.join(f'{k} {v}' for k, v in workload.dropped.items())} dropped)" \
            if workload.dropped else ""
        raise InstanceError(f"{path}: no runnable jobs{dropped}: an empty workload has no metrics")
    return workload
