"""The one sweep runner: independent tasks on ``dask.distributed``.

``experiment``, ``score`` and ``validate`` hand their independent tasks to
:func:`run_tasks`.  Where they run:

* in this process, when one task is left or ``workers == 1``;
* on a local cluster of ``workers`` processes (one thread each; default:
  every core), started for the sweep and stopped after it;
* on an existing Dask scheduler, ``scheduler="tcp://HOST:PORT"`` or the
  environment variable ``EPOCHBENCH_SCHEDULER``.

Nothing is lost: ``on_result`` gets each result as it arrives (experiments
append it to their JSON-lines checkpoint, :func:`append_record`, whose torn
last line :func:`repair_tail` cuts off), Dask reruns the tasks of a worker
that died, and a task that raises is reported (:class:`Failure`, its task
and traceback) while the others go on; :class:`SweepFailed` lists them at
the end (one line for the tasks that failed alike).  Timing-sensitive tasks
(``timing=True``) ask for the worker resource ``exclusive`` so that a worker
runs one of them at a time (a warning on stderr when the scheduler's
workers do not declare it), and their rows get the ``host`` and ``cpu``
that ran them.

A scheduler is checked before anything runs (:func:`check_scheduler`: a
malformed address or an unknown host is one ``ValueError``); what answers at
its address is given :data:`CONNECT_TIMEOUT` seconds (a web server or another
service is one ``ValueError``, not a hang or a traceback).  The tasks travel
to its workers pickled here (:func:`_payloads`): the modules of this process
that are not installed (a user's module on this process's path) travel by
value, so that the workers need only epochbench and the installed packages.
Losing the scheduler mid-sweep is one :class:`SchedulerLost`, not a failure
per task.

``distributed`` is imported only when a cluster is used: ``import
epochbench`` and ``epochbench simulate`` do not pay for it.

References
----------
[dask-distributed] Dask.distributed documentation, https://distributed.dask.org
"""
from __future__ import annotations

import contextlib
import functools
import io
import json
import logging
import os
import pickle
import queue
import re
import socket
import sys
import threading
import time
import traceback
import types
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from epochbench.instances.arguments import arg, in_python, named
from epochbench.instances.catalog import WARNED
from epochbench.instances.core import RunStopped
from epochbench.instances.files import atomic_path

from .checks import MAX_WORKERS

#: environment variable naming a Dask scheduler (``--scheduler`` wins)
SCHEDULER_ENV = "EPOCHBENCH_SCHEDULER"
#: environment variable: local worker processes when a command gives no
#: ``--workers`` (default: every core)
WORKERS_ENV = "EPOCHBENCH_WORKERS"
#: worker resource held by each timing-sensitive task (start remote workers
#: with ``--resources exclusive=1`` to give such tasks a worker each)
EXCLUSIVE = "exclusive"
#: seconds a scheduler has to answer (the connection and Dask's handshake)
CONNECT_TIMEOUT = 20.0
#: of those, the seconds left after Dask's own connection timeout, so that its
#: error (a port that refuses) comes back before the whole wait ends (a service
#: that accepts and never answers); at most half of :data:`CONNECT_TIMEOUT`
CONNECT_GRACE = 2.0
#: what an address that answers but is no scheduler usually is
PORT_HINT = "a Dask scheduler listens on port 8786 by default; 8787 is its dashboard"


@dataclass(frozen=True)
class Failure:
    """A task that raised: its index, the task and the traceback text;
    ``bad_input``: the exception said its input was malformed (an
    :class:`~epochbench.instances.core.InstanceError`: a data file, an
    instance), not that the task's code failed."""
    index: int
    task: Any
    error: str
    bad_input: bool = False

    def reason(self) -> str:
        """The error on one line (:func:`reason_of`)."""
        return reason_of(self.error)

    def line(self) -> str:
        return f"task {self.index} {_label(self.task)!s}: {self.reason()}"


def reason_of(error: str) -> str:
    """A traceback text's error on one line: the last exception's ``Type:
    message`` (a message of several lines joined), then ``; cause: ...`` with
    the first exception of the chain when it was raised ``from`` another
    (Dask's "Error during deserialization" from "No module named 'X'");
    text that is no traceback, joined on one line."""
    blocks = [b for b in re.split(r"^Traceback \(most recent call last\):$", error.strip(), flags=re.M)
              if b.strip()]
    if not blocks:
        return "error"
    last = _exception_text(blocks[-1])
    if len(blocks) > 1 and "direct cause of the following exception" in blocks[0]:
        last += f"; cause: {_exception_text(blocks[0])}"
    return last


def _exception_text(block: str) -> str:
    """The exception of one traceback block (the lines after its last frame),
    on one line, cut at 300 characters."""
    lines = [line for line in block.splitlines() if line.strip()]
    frames = [k for k, line in enumerate(lines) if line.startswith((" ", "\t"))]
    tail = lines[frames[-1] + 1:] if frames else lines
    tail = [line for line in tail if "direct cause of the following exception" not in line
            and "During handling of the above exception" not in line]
    text = " ".join(" ".join(tail).split()) or "error"
    return text if len(text) <= 300 else text[:297] + "..."


class SweepFailed(RuntimeError):
    """Some tasks raised; the others finished (and were saved).

    ``failures``: the :class:`Failure` of each; ``total``: the tasks of the
    sweep (``total - len(failures)`` finished: :attr:`done`).  The message
    names the first one's task and error on its first line, then one line
    per failure, or per error shared by several tasks (their indices)."""

    def __init__(self, failures: list[Failure], total: int):
        self.failures, self.total = failures, total
        first = failures[0]
        head = f"task {first.task!r} failed: {first.reason()}"
        lines = [f"{len(failures)} of {total} tasks failed; first: {head}"]
        for reason, group in _by_reason(failures).items():
            if len(group) == 1:
                lines.append(f"  {group[0].line()}")
            else:
                every = "all" if len(group) == len(failures) else f"{len(group)}"
                lines.append(f"  {every} of them (tasks {format_indices(f.index for f in group)}): {reason}")
        super().__init__("\n".join(lines))

    @property
    def done(self) -> int:
        """The tasks of the sweep that finished (0: none was saved)."""
        return self.total - len(self.failures)

    def report(self) -> str:
        """The message, then the traceback of each failure (one for the
        tasks that failed with the same error)."""
        tbs = []
        for group in _by_reason(self.failures).values():
            f = group[0]
            more = f" (and {len(group) - 1} more with this error)" if len(group) > 1 else ""
            tbs.append(f"--- task {f.index}{more}: {f.task!r}\n{f.error.rstrip()}")
        return "\n".join([str(self), *tbs])


def _by_reason(failures: list[Failure]) -> dict[str, list[Failure]]:
    """The failures grouped by their one-line reason, in order of first appearance."""
    groups: dict[str, list[Failure]] = {}
    for f in failures:
        groups.setdefault(f.reason(), []).append(f)
    return groups


class SchedulerLost(RunStopped):
    """The connection to the Dask scheduler was lost in the middle of a
    sweep (the scheduler stopped, or the network between): the sweep stops.

    ``address``; ``done`` of ``total`` tasks finished; ``saved``: their
    results are kept (an experiment's partial file), so the same command
    resumes.  The message is one line."""

    def __init__(self, address: str, done: int, total: int, saved: bool = False):
        self.address, self.done, self.total, self.saved = address, done, total, saved
        if saved:
            tail = f"{done} of {total} runs done (saved); run the same command to resume"
        else:
            tail = f"{done} of {total} tasks done (not kept); run the command again"
        super().__init__(f"lost the scheduler {address}: {tail}")


class WorkerDied(RunStopped):
    """Every worker process that ran a task died while running it (the task
    called ``os._exit``, crashed the interpreter, or ran out of memory), so
    Dask gave it up (``KilledWorker``).  ``index`` and ``task`` name it; the
    message is one line."""

    def __init__(self, index: int, task: Any):
        self.index, self.task = index, task
        super().__init__(f"task {index} {_label(task)}: {died(index)}")


def died(index: int) -> str:
    """What a task whose workers all died says (:class:`WorkerDied`, or the
    failure of a sweep that goes on)."""
    return (f"every worker process that ran task {index} died while running it (the task exited "
            "the process, crashed it or ran out of memory); Dask gave it up")


# ---- selecting tasks -------------------------------------------------------------------
def parse_indices(spec: str, n: int) -> list[int]:
    """Indices of ``--tasks SPEC`` among ``n`` tasks: comma-separated items,
    each ``I`` or a half-open range ``A:B`` (either end may be left out; an
    end ``B`` past the last task stops there).

    Raises ``ValueError`` naming ``--tasks`` for an item that is not an
    index or a range, and for an index (a range's start included) outside
    ``0:n``; negative indices are refused, not counted from the end."""
    return _parse(spec, n)[0]


def past_the_end(spec: str | None, n: int) -> bool:
    """Whether a range of ``--tasks SPEC`` ends past the ``n`` tasks (it then
    stops at the last one, as a slice does: worth a word to the user); False
    for no spec or one :func:`parse_indices` refuses."""
    try:
        return bool(spec) and _parse(spec, n)[1]
    except ValueError:
        return False


def _parse(spec: str, n: int) -> tuple[list[int], bool]:
    """:func:`parse_indices`, and whether a range's end was past ``n``."""
    chosen: list[int] = []
    clipped = False
    for part in (p.strip() for p in spec.split(",")):
        try:
            if ":" in part:
                a, b = part.split(":", 1)
                start = _index(int(a), n) if a.strip() else 0
                stop = int(b) if b.strip() else n
                if stop < 0:
                    raise ValueError(f"--tasks: index {stop} is outside 0:{n}")
                if stop <= start:              # empty, as a slice is: said, not "select no task"
                    raise ValueError(f"--tasks: range {part} is empty (A:B takes A up to B - 1; B must exceed A)")
                clipped = clipped or stop > n
                chosen.extend(range(start, min(stop, n)))
            else:
                chosen.append(_index(int(part), n))
        except ValueError as exc:
            if str(exc).startswith("--tasks"):
                raise
            raise ValueError(f"--tasks: {part!r} is not an index or a range A:B") from None
    return sorted(set(chosen)), clipped


def _index(i: int, n: int) -> int:
    """``i`` when it is a task index (``0 <= i < n``); ``ValueError`` naming ``--tasks`` otherwise."""
    if not 0 <= i < n:
        raise ValueError(f"--tasks: index {i} is outside 0:{n}")
    return i


def format_indices(indices) -> str:
    """Indices in the syntax of ``--tasks``, consecutive runs as ranges:
    ``[0, 1, 2, 3, 10]`` -> ``"0:4,10"``."""
    runs: list[list[int]] = []
    for i in sorted(set(indices)):
        if runs and i == runs[-1][1]:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return ",".join(str(a) if b == a + 1 else f"{a}:{b}" for a, b in runs)


def _matches(value, want: str) -> bool:
    if str(value) == want:
        return True
    try:
        return float(value) == float(want)
    except (TypeError, ValueError):
        return False


def select(tasks: list[dict], spec: str | None = None, where=()) -> list[int]:
    """Indices of the tasks chosen by ``--tasks SPEC`` and every ``--where
    FIELD=VALUE`` (numbers compare by value: ``ta=4`` matches 4 and 4.0).

    Raises ``ValueError`` naming the option when a field is unknown, a
    condition is not ``FIELD=VALUE`` or nothing is left."""
    if spec is not None and not spec.strip():
        raise ValueError("--tasks: empty; give indices or ranges, e.g. 0:10,20 (or leave the option out)")
    idx = parse_indices(spec, len(tasks)) if spec else list(range(len(tasks)))
    for n, cond in enumerate(where):
        field, sep, want = cond.partition("=")
        field = field.strip()
        if not sep or not field:
            raise ValueError(f"--where: {cond!r} is not FIELD=VALUE")
        if not any(field in t for t in tasks):
            fields = sorted({k for t in tasks for k in t})
            raise ValueError(f"--where: no task has the field {field!r} (fields: {', '.join(fields)})")
        left = [i for i in idx if field in tasks[i] and _matches(tasks[i][field], want.strip())]
        if idx and not left:                        # this condition emptied the selection: say which and why
            seen = list(dict.fromkeys(str(tasks[i][field]) for i in idx if field in tasks[i]))
            takes = (f"{field} takes {', '.join(seen[:12])}{', ...' if len(seen) > 12 else ''}" if seen
                     else f"none of them has {field}")
            raise ValueError(f"--tasks/--where select no task: --where {cond} matches none of the tasks "
                             f"{'left ' if spec or n else ''}({takes})")
        idx = left
    if not idx:
        raise ValueError("--tasks/--where select no task")
    return idx


# ---- the JSON-lines store ----------------------------------------------------------------
def _key(task: dict) -> str:
    return json.dumps(task, sort_keys=True, default=str)


def _plain(x):
    """JSON for numpy scalars in rows."""
    return x.item() if hasattr(x, "item") else str(x)


def load_records(path: Path | None, tasks: list[dict]) -> dict[int, list[dict]]:
    """Rows of the tasks a previous sweep finished (``path``, JSON lines of
    ``{"task": ..., "rows": [...]}``), by index in ``tasks``; tasks not in
    this list and lines cut short by a kill are ignored.  O(size of the file)."""
    return {i: rows for i, (rows, _) in load_stamped(path, tasks).items()}


def load_stamped(path: Path | None, tasks: list[dict], unreadable: list[int] | None = None,
                 others: list[int] | None = None,
                 only: set[int] | None = None) -> dict[int, tuple[list[dict], dict]]:
    """As :func:`load_records`, each task's rows with the stamp of the run
    that computed them (the record's keys besides ``task``, ``rows`` and
    ``columns``: ``run``, ``commit``, ``version``; ``{}`` for a record
    written before records were stamped).  A task recorded twice: its last
    record.  ``unreadable`` gets the numbers (from 1) of the lines that are
    no record (not JSON, or no task object with a list of row objects), but
    for a torn last line (a sweep killed mid-write); ``others`` those of the
    records of tasks not in ``tasks``.

    The rows returned for the task indices ``only`` (default: all) are
    checked against what the code wrote (:func:`check_rows`): a row edited
    by hand with a key, or a value of a type, that its record's ``columns``
    do not name raises ``ValueError`` naming ``path`` and the line."""
    if path is None or not path.exists():
        return {}
    index = {_key(t): i for i, t in enumerate(tasks)}
    done, numbers = {}, {}
    data = path.read_bytes()
    lines = data.splitlines()
    for number, line in enumerate(lines, 1):
        rec = _record(line)
        if rec is not None:
            i, rows = index.get(_key(rec["task"])), list(rec["rows"])
        else:
            torn = number == len(lines) and not data.endswith(b"\n")
            if unreadable is not None and not torn and line.strip():
                unreadable.append(number)
            continue
        columns = rec.get("columns") if isinstance(rec.get("columns"), dict) else None
        if i is not None:
            done[i] = (rows, {k: v for k, v in rec.items() if k not in ("task", "rows", "columns")})
            numbers[i] = (number, columns)
        elif others is not None:
            others.append(number)
    chosen = set(done) if only is None else set(only) & set(done)
    for i in sorted(chosen):
        number, columns = numbers[i]
        # a record written before records named their columns is taken as it is: the other records'
        # kinds are no rule for it (a seed None in one task, 0 in another)
        if columns is not None:
            check_rows(done[i][0], columns, f"{path}: line {number}")
    return done


# ---- what a record's rows may hold ---------------------------------------------------------
def _kind(value) -> str:
    """The JSON type of a stored row value: ``number`` (int or float, NaN
    included), ``text``, ``flag`` (bool), ``null`` or ``other`` (list, object)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "flag"
    if isinstance(value, (int, float)):
        return "number"
    return "text" if isinstance(value, str) else "other"


def column_kinds(rows: list[dict]) -> dict[str, list[str]]:
    """The columns of ``rows`` as stored (plain JSON values), each with the
    sorted kinds (:func:`_kind`) of its values: what a record says its code
    wrote, so that a row edited by hand is caught (:func:`check_rows`).
    O(cells)."""
    seen: dict[str, set[str]] = {}
    for row in rows:
        for key, value in row.items():
            seen.setdefault(key, set()).add(_kind(value))
    return {key: sorted(k) for key, k in seen.items()}


def check_rows(rows: list[dict], columns: dict[str, list[str]] | None, where: str) -> None:
    """Refuse ``rows`` read back from a store that hold what ``columns``
    (:func:`column_kinds` of the rows the code wrote) does not: a key it
    does not name, or a value of another kind in a column (text where the
    code wrote numbers, say; ``null`` is always a missing value).  None:
    nothing to check against (a record written before records named their
    columns).

    Raises
    ------
    ValueError
        One line: ``where``, the row, the key and what the column holds.
    """
    if columns is None:
        return
    for j, row in enumerate(rows, 1):
        for key, value in row.items():
            if key not in columns:
                raise ValueError(f"{where}: row {j} has the key {key!r}, which the experiment does not write "
                                 f"(its rows have {', '.join(map(repr, columns)) or 'no key'}); "
                                 "edited by hand? --fresh recomputes it")
            kind, allowed = _kind(value), columns[key]
            if kind != "null" and kind not in allowed:
                raise ValueError(f"{where}: row {j}: {key!r} is {value!r} ({kind}), where the experiment "
                                 f"writes {' or '.join(k for k in allowed if k != 'null') or 'null'}; "
                                 "edited by hand? --fresh recomputes it")


def drop_records(path: Path, tasks: list[dict]) -> None:
    """Remove the records of ``tasks`` from the store ``path`` (a finished
    sweep's rows are in its output); records of other tasks stay, and the
    file goes once none is left.  O(size of the file)."""
    if not path.exists():
        return
    mine = {_key(t) for t in tasks}
    keep = []
    for line in path.read_bytes().splitlines():
        try:
            if _key(json.loads(line)["task"]) in mine:
                continue
        except (ValueError, KeyError, TypeError, RecursionError):
            continue  # a line cut short by a kill (or nested too deep to be a record)
        keep.append(line)
    if not keep:
        path.unlink()
        return
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(b"\n".join(keep) + b"\n")


def repair_tail(path: Path) -> None:
    """Cut a torn last line (no final newline: the writer was killed in the
    middle of it) off the store ``path``, so that the next record appended
    starts on a line of its own; a last line that is a whole record (its
    newline lost, or cut off by hand) gets its newline instead, as
    :func:`load_stamped` reads it as one (it was reused, then cut off
    here).  O(length of the last line)."""
    try:
        fh = open(path, "rb+")
    except FileNotFoundError:
        return
    with fh:
        size = fh.seek(0, os.SEEK_END)
        end, cut_at = size, 0
        while end > 0:
            start = max(0, end - 65536)
            fh.seek(start)
            chunk = fh.read(end - start)
            if end == size and chunk.endswith(b"\n"):
                return                                 # intact
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                cut_at = start + cut + 1
                break
            end = start
        fh.seek(cut_at)
        if _record(fh.read(size - cut_at)) is not None:
            fh.seek(size)
            fh.write(b"\n")
        else:
            fh.truncate(cut_at)


def _record(line: bytes) -> dict | None:
    """``line`` of a store as a record (a task's dict and its rows, a list
    of dicts), else None (a torn line; e.g. ``{"task": 5, "rows": "x"}``:
    no task's rows); read by :func:`load_stamped` and :func:`repair_tail`."""
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError):        # RecursionError: nested too deep to be a record
        return None
    ok = (isinstance(rec, dict) and isinstance(rec.get("task"), dict) and isinstance(rec.get("rows"), list)
          and all(isinstance(r, dict) for r in rec["rows"]))
    return rec if ok else None


def append_record(log, task: dict, rows: list[dict], stamp: dict | None = None) -> None:
    """One line ``{"task": ..., "rows": [...], "columns": {...}, **stamp}``
    written with one ``write`` and flushed (a kill leaves at most this line
    torn); ``columns`` (:func:`column_kinds`) says what the rows hold, so
    that rows edited by hand are refused when they are read back.  ``stamp``:
    what says which run and code computed the rows (``run``, ``commit``,
    ``version``; see :func:`load_stamped`)."""
    plain = json.loads(json.dumps(rows, default=_plain))      # the rows as they are read back
    log.write(json.dumps({"task": task, "rows": plain, "columns": column_kinds(plain), **(stamp or {})},
                         default=_plain) + "\n")
    log.flush()


# ---- one task ------------------------------------------------------------------------------
def rows_of(run: Callable[[dict], Any], task: dict, timing: bool = False) -> list[dict]:
    """``run(task)`` as a list of rows (a single dict becomes one row); with
    ``timing``, each row gets the ``host`` and ``cpu`` that ran it."""
    rows = as_rows(run(task))
    if timing:
        from .runs import cpu_name
        where = {"host": socket.gethostname(), "cpu": cpu_name()}
        rows = [{**r, **where} for r in rows]
    return rows


def as_rows(rows) -> list[dict]:
    """What a task's ``run`` returned as a list of rows: a dict is one row,
    else an iterable of dicts (not a string, not a mapping).  Anything else
    is a ``TypeError`` saying what it returned, that task's failure: a list
    of numbers ended the whole command in a traceback from inside the
    table's column types, and None failed as "'NoneType' object is not
    iterable", naming nothing."""
    from collections.abc import Iterable, Mapping
    if isinstance(rows, dict):
        return [rows]
    from epochbench.instances.checks import short
    if isinstance(rows, (str, bytes, Mapping)) or not isinstance(rows, Iterable):
        raise TypeError(f"run() returned {short(rows, 40)} ({type(rows).__name__}), not a row (a dict) or a list "
                        "of rows")
    out = list(rows)
    for row in out:
        if not isinstance(row, dict):
            raise TypeError(f"run() returned a row that is {short(row, 40)} ({type(row).__name__}), not a dict")
    return out


def _label(task) -> str:
    """A task on one line: its plain fields, and an instance by its name."""
    if not isinstance(task, dict):
        return str(task)[:100]
    plain = {k: v if isinstance(v, (str, int, float)) else getattr(v, "name", None) for k, v in task.items()}
    return " ".join(f"{k}={v}" for k, v in plain.items() if isinstance(v, (str, int, float)))[:100]


# ---- progress ------------------------------------------------------------------------------
class Progress:
    """``[done/total] task  (elapsed, failures, ETA)`` lines on stderr, only
    when ``on`` and stderr is a terminal; ``link``: the scheduler's line
    (:meth:`say_link`) even where the caller prints its own progress (None:
    as ``on``)."""

    def __init__(self, total: int, on: bool = True, link: bool | None = None):
        self.total, self.done, self.failed = total, 0, 0
        self.on = bool(on) and sys.stderr.isatty()
        self.link = bool(on if link is None else link) and sys.stderr.isatty()
        self.t0 = time.perf_counter()

    def say(self, text: str) -> None:
        if self.on:
            print(text, file=sys.stderr, flush=True)

    def say_link(self, text: str) -> None:
        if self.link:
            print(text, file=sys.stderr, flush=True)

    def step(self, task, ok: bool = True) -> None:
        self.done += 1
        self.failed += not ok
        el = time.perf_counter() - self.t0
        eta = el / self.done * (self.total - self.done)
        fail = f", {self.failed} failed" if self.failed else ""
        self.say(f"  [{self.done}/{self.total}] {_label(task)}  ({el:.1f} s{fail}, ETA {eta:.0f} s)")


# ---- the runner ------------------------------------------------------------------------------
def default_workers() -> int:
    """Local worker processes of a sweep that names none: ``$EPOCHBENCH_WORKERS``,
    else every core; ``ValueError`` naming the variable when it is not a
    positive integer."""
    raw = os.environ.get(WORKERS_ENV, "").strip()
    if not raw:
        return os.cpu_count() or 1
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_WORKERS:
        raise ValueError(f"{WORKERS_ENV} must be an integer from 1 to {MAX_WORKERS}, got {raw!r}")
    return n


def check_workers(workers: int | None = None) -> int:
    """Local worker processes of a sweep: ``workers``, else
    :func:`default_workers`; ``ValueError`` naming the option or the
    variable when it is not a positive integer."""
    if workers is None:
        return default_workers()
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"{arg('workers')} must be an integer from 1 to {MAX_WORKERS}, got {workers}")
    return workers


def local_workers(workers: int | None, scheduler: str | None) -> int | None:
    """The local worker processes of a sweep on ``scheduler`` (resolved,
    :func:`scheduler_of`; None: a local cluster): ``workers`` checked
    (:func:`check_workers`), else every core or ``$EPOCHBENCH_WORKERS``
    without a scheduler, else None (the scheduler's workers run it)."""
    return check_workers(workers) if scheduler is None or workers is not None else None


def workers_started(workers: int | None, scheduler: str | None, count: int) -> int | None:
    """The local worker processes a sweep of ``count`` tasks starts with
    ``workers`` (:func:`local_workers`) on ``scheduler`` (resolved): 0 when
    it runs in this process (one worker, or one task or none), else one per
    task up to ``workers``; None on a scheduler (its workers run it).  What
    a run record's ``execution.workers_started`` says, beside the
    ``workers`` asked for."""
    if scheduler is not None:
        return None
    return 0 if workers == 1 or count <= 1 else min(workers or 1, count)


def scheduler_of(address: str | None = None) -> str | None:
    """The scheduler a sweep uses: ``address``, else ``$EPOCHBENCH_SCHEDULER``,
    else None (a local cluster); blank values count as none.  Not checked
    (:func:`check_scheduler`)."""
    return (address or "").strip() or os.environ.get(SCHEDULER_ENV, "").strip() or None


def _text(address) -> None:
    """Refuse a scheduler address that is not text (``scheduler=3`` or a
    list met ``.strip()`` deep inside: an AttributeError)."""
    if address is not None and not isinstance(address, str):
        raise ValueError(f"{named('scheduler')}: expected an address such as 'tcp://head:8786', got {address!r}")


def _option(address: str | None) -> str:
    """What named the scheduler: the option (``--scheduler``, or from
    Python ``scheduler=``: :func:`~epochbench.instances.arguments.arg`), or
    the environment variable."""
    _text(address)
    return arg("scheduler") if (address or "").strip() else SCHEDULER_ENV


def _naming(option: str, address: str) -> str:
    """``--scheduler ADDRESS``, ``scheduler='ADDRESS'`` or ``EPOCHBENCH_SCHEDULER ADDRESS``."""
    return f"{option}{address!r}" if option.endswith("=") else f"{option} {address}"


#: protocols whose addresses are HOST[:PORT] (Dask's default: tcp)
_HOST_PORT = ("tcp", "tls", "ws", "wss")
#: other protocols of Dask: inproc is refused (no other process reaches it), ucx / ucxx need UCX for Dask
_OTHER_PROTOCOLS = ("inproc", "ucx", "ucxx")
_LOCATION = re.compile(r"(?:\[(?P<ip6>[0-9A-Fa-f:.]+)\]|(?P<host>[A-Za-z0-9_][A-Za-z0-9_.-]*)):(?P<port>\d{1,5})")


def check_scheduler(address: str | None = None) -> str | None:
    """:func:`scheduler_of` ``address``, checked before anything runs:
    ``PROTOCOL://HOST:PORT`` or ``HOST:PORT`` (Dask's default protocol:
    tcp) with a host that resolves.

    Raises ``ValueError`` naming ``--scheduler`` (or ``$EPOCHBENCH_SCHEDULER``
    when the address came from there) for a malformed address
    (``tcp//head:8786``, no port), an unknown protocol, a port outside
    1-65535, a host name that does not resolve, an address where nothing
    accepts a connection (within :data:`CONNECT_TIMEOUT` seconds), an
    ``inproc://`` address (no other process reaches it), or a ``ucx://``
    one where UCX for Dask is not installed; and an address that is not a
    string (``scheduler=3``).  Cost:
    one name lookup and one TCP connection.  An ``address`` given but blank
    (``--scheduler ''``) is refused too: it quietly ran on a local cluster
    (a blank ``$EPOCHBENCH_SCHEDULER`` counts as unset, as shells leave it)."""
    _text(address)
    if address is not None and not str(address).strip():
        named = arg("scheduler", address) if in_python() else arg("scheduler")
        raise ValueError(f"{named}: an empty address; give tcp://HOST:PORT, or leave the option out for a "
                         "local cluster")
    resolved = scheduler_of(address)
    if resolved is None:
        return None
    option = _option(address)
    scheme, sep, location = resolved.partition("://")
    if not sep:
        scheme, location = "tcp", resolved
    if scheme == "inproc":                # a scheduler inside this process: no command starts one
        raise ValueError(f"{_naming(option, resolved)}: an in-process address names no scheduler another "
                         "process can reach; give tcp://HOST:PORT, e.g. tcp://head:8786")
    if scheme in _OTHER_PROTOCOLS:
        import importlib.util
        if not any(importlib.util.find_spec(m) for m in ("ucxx", "distributed_ucxx", "ucp")):
            raise ValueError(f"{_naming(option, resolved)}: protocol {scheme!r} needs UCX for Dask "
                             "(distributed-ucxx), which is not installed here; give tcp://HOST:PORT")
        return resolved
    example = "give tcp://HOST:PORT, e.g. tcp://head:8786"
    if scheme not in _HOST_PORT:
        raise ValueError(f"{_naming(option, resolved)}: unknown protocol {scheme!r}; {example}")
    m = _LOCATION.fullmatch(location)
    if m is None or not 1 <= int(m["port"]) <= 65535:
        raise ValueError(f"{_naming(option, resolved)}: not a scheduler address; {example}")
    host, port = m["ip6"] or m["host"], int(m["port"])
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise ValueError(f"{_naming(option, resolved)}: unknown host {host!r}; {example}") from None
    try:                                              # nothing listening: said now, not after Dask's retries
        socket.create_connection((host, port), timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise ValueError(f"{_naming(option, resolved)}: cannot connect ({exc.strerror or exc}); is the scheduler "
                         f"running? {PORT_HINT}") from None
    return resolved


def probe_scheduler(address: str | None = None) -> str | None:
    """:func:`check_scheduler`, then one connection to what answers there,
    closed at once: ``ValueError`` (as :func:`_connect`) when it is no Dask
    scheduler, or when a worker cannot run epochbench's tasks or runs other
    code (:func:`_check_workers`), so that a command can refuse before it
    touches its output.  Costs the connection (milliseconds to a scheduler;
    up to :data:`CONNECT_TIMEOUT` seconds to a service that never answers)
    and one question to each worker."""
    option, resolved = _option(address), check_scheduler(address)
    if resolved is not None:
        client = _connect(_client_class(), resolved, option)
        try:
            _check_workers(client, resolved, say_empty=False)     # the sweep says it, once
        finally:
            with contextlib.suppress(Exception):
                client.run(_restore_sigint)
            client.close()
    return resolved


def run_tasks(call: Callable[[Any], Any], tasks: list, todo: list[int] | None = None, *,
              workers: int | None = None, scheduler: str | None = None, progress: bool = True,
              on_result: Callable[[int, Any], None] | None = None, exclusive: bool = False,
              stop_on_error: bool = False, dashboard: bool | None = None) -> tuple[dict[int, Any], list[Failure]]:
    """Run ``call(tasks[i])`` for every ``i`` in ``todo`` (default: all).

    Parameters
    ----------
    call : module-level function (picklable) of one task.
    tasks : the tasks (plain dicts for experiments; any picklable object).
    todo : indices to run.
    workers : local worker processes (default: :func:`default_workers`, every
        core); 1 runs in this process.  Ignored with a scheduler.
    scheduler : address of a Dask scheduler (default: ``$EPOCHBENCH_SCHEDULER``;
        none: a local cluster), checked first (:func:`check_scheduler`).
    progress : progress lines on a terminal.
    dashboard : on a terminal, the line naming the scheduler and its
        dashboard link (default: as ``progress``; ``score`` and ``validate``
        print their own progress and ask for it).
    on_result : ``on_result(i, result)`` in this process as each task finishes.
    exclusive : each task holds the worker resource ``exclusive`` (a worker
        to itself), where the workers declare it (a warning on stderr when
        no worker of a scheduler does and one runs several threads).
    stop_on_error : the first exception a task raises stops the sweep and
        propagates, its type kept (``score`` and ``validate``: bad input is
        an error of the whole command); default: collect failures.

    Returns
    -------
    results : ``{i: call(tasks[i])}`` of the tasks that finished.
    failures : a :class:`Failure` per task that raised (the others go on).

    Raises
    ------
    ValueError
        A malformed scheduler address, a bad ``workers`` or
        ``$EPOCHBENCH_WORKERS`` (before anything runs); a scheduler that does
        not answer as one within :data:`CONNECT_TIMEOUT` seconds; with
        ``stop_on_error``, a task that its worker cannot unpickle (a module
        of it is missing there).
    SchedulerLost
        The scheduler went away mid-sweep (``on_result`` had the results
        of the tasks done).

    Notes
    -----
    Ctrl-C cancels the pending tasks, stops a local cluster and raises
    ``KeyboardInterrupt``.  Dask reruns a task whose worker died (up to its
    ``distributed.scheduler.allowed-failures``).  Cost per task: one
    pickle round trip plus the scheduler's few milliseconds; with a
    scheduler, the modules pickled by value are found by pickling ``call``
    and the tasks once more.
    """
    todo = list(range(len(tasks))) if todo is None else list(todo)
    if in_python():                     # a worker process names arguments as this call does
        call = functools.partial(_keywords, call)
    option = _option(scheduler)
    scheduler = check_scheduler(scheduler)
    workers = local_workers(workers, scheduler)
    bar = Progress(len(todo), progress, dashboard)
    results: dict[int, Any] = {}
    failures: list[Failure] = []

    def finish(i: int, ok: bool, value) -> None:
        if ok:
            results[i] = value
            if on_result is not None:
                on_result(i, value)
        else:
            failures.append(Failure(i, tasks[i], *value) if isinstance(value, tuple) else Failure(i, tasks[i], value))
        bar.step(tasks[i], ok)

    started = workers_started(workers, scheduler, len(todo))
    if started == 0:
        for i in todo:
            ok, value = _outcome(call, tasks[i], stop_on_error)
            finish(i, ok, value)
    elif todo:
        _on_dask(call, tasks, todo, started or min(workers or 1, len(todo)), scheduler, exclusive, bar, finish,
                 stop_on_error, option)
    failures.sort(key=lambda f: f.index)
    return results, failures


def _on_dask(call, tasks, todo, workers, scheduler, exclusive, bar, finish, stop_on_error=False,
             option="--scheduler") -> None:
    """Submit the tasks to a Dask client (a local cluster unless ``scheduler``)
    and hand each outcome to ``finish`` as it completes."""
    import dask
    from distributed import LocalCluster
    Client = _client_class()

    # worker processes not daemonic: a task may start processes of its own
    # (they still exit when this process dies: distributed watches the parent)
    with dask.config.set({"distributed.worker.daemon": False, "logging.distributed": "error"}), _quiet_logs():
        cluster, ended, tag = None, False, sweep_tag()
        try:
            if scheduler is None:
                with _deferred_interrupts(), _sigint_kept_from_new_processes():   # see there
                    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                           host="127.0.0.1", dashboard_address=None,
                                           scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                           resources={EXCLUSIVE: 1}, env={SWEEP_TAG: tag},
                                           silence_logs=logging.CRITICAL)
                client = Client(cluster)
                client.run(_use_path, list(sys.path), sorted(WARNED))   # what this process can import, they
                # can; the plug-in warnings it gave, they do not give again
                work = functools.partial(_on_worker, call, raising=stop_on_error)
                jobs = {i: (work, tasks[i]) for i in todo}
            else:
                client = _connect(Client, scheduler, option)
                jobs = _payloads(call, tasks, todo, stop_on_error, code_here())
            try:
                _sweep_on(client, scheduler, jobs, tasks, exclusive, bar, finish, stop_on_error)
            except BaseException as exc:
                if isinstance(exc, KeyboardInterrupt):   # the shutdown's comms closing under the workers: no
                    _silence_distributed()               # screenfuls of "Closed comm" after a Ctrl-C
                try:                                     # a close that times out must not hide why it stopped
                    client.close(timeout=5)
                except Exception:                        # noqa: BLE001 - a scheduler gone: the close cannot end
                    _abandon(client)
                raise
            client.close()
            ended = True
        finally:      # not sys.exc_info(): a sweep run from a caller's except block would read as stopped
            if cluster is not None:
                if not ended:                # a second Ctrl-C or SIGTERM waits for the end of it (it cut
                    with _deferred_interrupts():     # the clean-up short, and left CBC running)
                        workers, started = _worker_trees(cluster)
                        _end(started, wait=0)    # first: a worker waiting on one (CBC) held the close 4 s
                        with contextlib.suppress(Exception):
                            cluster.close(timeout=10)
                        _end(workers + started)
                        _end(_tagged(tag))       # those a task started after the look above, re-parented
                else:
                    cluster.close(timeout=10)


_SWEEP_CLIENT: list = []                     # the Client subclass, once distributed is imported
_COLLECTED = queue.SimpleQueue()              # clients the garbage collector found, for the closer thread
_CLOSER: list = []                            # that thread


def _client_class():
    """distributed's ``Client`` whose ``__del__`` hands the client to a
    thread of this module (:func:`_close_collected`), which closes it.

    The garbage collector runs ``__del__`` at any allocation, also while its
    thread holds distributed's ``LoopRunner`` lock (a lock of the class, not
    reentrant, held while any client's loop starts or stops): a client not
    closed by then, closed in ``__del__``, waited on that lock for good
    (fresh-clone test runs stood 180 s in it, until the test's time limit).
    The closer thread waits for the lock until the collecting thread lets it
    go.  ``SimpleQueue.put`` is safe in ``__del__``; the thread is started
    here, outside the collector (starting a thread takes a lock too)."""
    if not _SWEEP_CLIENT:
        from distributed import Client

        class SweepClient(Client):
            def __del__(self):
                if sys.is_finalizing():       # no thread runs any more: distributed's own (it stops no loop)
                    super().__del__()
                else:
                    _COLLECTED.put(self)
        _SWEEP_CLIENT.append(SweepClient)
    if not (_CLOSER and _CLOSER[0].is_alive()):   # once a process (a forked child has none)
        _CLOSER[:] = [threading.Thread(target=_close_collected, name="epochbench-client-closer", daemon=True)]
        _CLOSER[0].start()
    return _SWEEP_CLIENT[0]


def _close_collected() -> None:
    """Close, one after the other, the clients that the garbage collector
    found (:func:`_client_class`): ``Client.__del__`` (its close unless the
    constructor failed early), then :func:`_abandon` if that close failed."""
    from distributed import Client
    while True:
        client = _COLLECTED.get()
        try:
            Client.__del__(client)
        except BaseException:                 # noqa: BLE001 - a scheduler gone: the close cannot end
            _abandon(client)
        del client


def _abandon(client) -> None:
    """Give up a client whose close failed (its scheduler gone): its loop
    is stopped here, and it is marked closed, so that its ``__del__`` does
    not close it again.  The garbage collector runs ``__del__`` at any
    allocation, also inside distributed's ``LoopRunner`` lock, a lock of the
    class that is not reentrant: the client's second close waited on it
    for good (a fresh-clone test run stood 180 s in it, until the test's
    time limit)."""
    with contextlib.suppress(Exception):
        client._loop_runner.stop()
    client.status = "closed"


@contextlib.contextmanager
def _deferred_interrupts():
    """Hold Ctrl-C and SIGTERM (their Python handlers) until the block ends,
    then act on the first that came: a local cluster interrupted while it
    started was never assigned, so nothing here closed it, and distributed's
    exit hook failed on its half-started workers (a traceback ending in
    ``AssertionError: Status.init``).  Outside the main thread the block
    runs as it is; a signal whose handler is not Python's is left alone."""
    import signal
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list = []
    held = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    held = {sig: handler for sig, handler in held.items() if callable(handler)}   # SIG_DFL: left alone
    for sig in held:
        signal.signal(sig, lambda signum, frame: came.append((signum, frame)))
    try:
        yield
    finally:
        for sig, handler in held.items():
            signal.signal(sig, handler)
        if came:
            signum, frame = came[0]
            held[signum](signum, frame)            # raises KeyboardInterrupt (or Terminated) here


@contextlib.contextmanager
def _sigint_kept_from_new_processes():
    """Block SIGINT in this thread while the block runs, so that the threads
    it starts (distributed's IO loop, and from there the threads that start
    the worker processes) and the processes they start inherit it blocked.
    A Ctrl-C at a terminal reaches every process of its group: a worker
    still starting (importing, connecting to the scheduler) died of it with
    a traceback on this command's stderr, a screenful for each worker, in
    the first seconds of a local sweep.  The workers are stopped by this
    process instead, as later in the sweep (where they ignore SIGINT,
    :func:`_worker_code`).  This thread gets the signal when the block ends
    (a pending one then, kept by :func:`_deferred_interrupts`).  Only in the
    main thread, where Python handles signals; elsewhere, and where the
    platform has no ``pthread_sigmask``, the block runs as it is.

    multiprocessing's resource tracker is started first, here: the thread
    that starts it is left with SIGINT unblocked (``ensure_running``
    unblocks what it blocked around the start), and that was distributed's
    IO loop, the thread the workers are started from."""
    import signal
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    from multiprocessing import resource_tracker
    resource_tracker.ensure_running()
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _worker_trees(cluster) -> tuple[list, list]:
    """A local cluster's worker processes and, apart, their descendants
    (the processes their tasks started: CBC), as ``psutil`` processes; not
    the other children of this process (multiprocessing's resource
    tracker, a user's own).

    A stopped sweep ends the descendants before it closes the cluster: a
    worker whose task waits on one closes only when the nanny gives up on
    it (SIGTERM to ``validate`` whose two tasks each wait on a process:
    the close took 4.0 s and the command ended 5.3 s after the signal;
    0.44 s with the descendants ended first)."""
    workers: list = []
    started: list = []
    try:
        import psutil
        for nanny in list(getattr(cluster, "workers", {}).values()):
            pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
            if pid is not None:
                with contextlib.suppress(psutil.Error):
                    worker = psutil.Process(pid)
                    below = worker.children(recursive=True)
                    workers.append(worker)
                    started += below
    except Exception:                                    # noqa: BLE001 - best effort
        pass
    return workers, started


#: the environment variable that marks a local cluster's workers, and so every process their tasks
#: start (:func:`_tagged`)
SWEEP_TAG = "EPOCHBENCH_SWEEP"


def sweep_tag() -> str:
    """A new value for :data:`SWEEP_TAG`, one per pool of workers: this
    process's id and a random part, so that no other sweep's match it."""
    return f"{os.getpid()}-{uuid.uuid4().hex}"


def _tagged(tag: str) -> list:
    """The processes of this user whose environment says ``SWEEP_TAG=tag``:
    a stopped local sweep's workers and whatever their tasks started,
    re-parented or not.  :func:`_worker_trees` sees only the processes that
    exist when it looks; a task still building its model then started CBC
    a moment later, and that CBC outlived its worker and ran to its own
    time limit (a Ctrl-C 4.5 s into ``score --methods milp-cbc,cpsat
    --time-limit 60 --workers 2`` left two, 3 times in 4)."""
    found: list = []
    try:
        import psutil
        for p in psutil.process_iter():
            with contextlib.suppress(psutil.Error, OSError):
                if p.pid != os.getpid() and p.environ().get(SWEEP_TAG) == tag:
                    found.append(p)
    except Exception:                                    # noqa: BLE001 - best effort
        pass
    return found


def _end(procs: list, wait: float = 3.0) -> None:
    """Kill those of ``procs`` still running, and wait up to ``wait``
    seconds for them to go: a stopped sweep's local cluster, before and
    after its close (:func:`_worker_trees`).  A solver a worker had started
    (CBC, a subprocess) outlived its worker, re-parented, and ran on to its
    own time limit (SIGTERM to a ``score`` left them; so did a Ctrl-C, which
    reaches the whole process group, for a CBC started after it:
    :func:`_tagged`).  psutil checks each is the same process (its start
    time), not a later one that took its number."""
    try:
        import psutil
        alive = [p for p in procs if p.is_running()]
        for p in alive:
            with contextlib.suppress(psutil.Error):
                p.kill()
        psutil.wait_procs(alive, timeout=wait)
    except Exception:                                    # noqa: BLE001 - best effort
        pass


def _silence_distributed() -> None:
    """Every ``distributed`` logger says nothing: the root of them and those
    with a level of their own (the ones :func:`_quiet_logs` restores; the
    others inherit)."""
    for n, lg in list(logging.root.manager.loggerDict.items()):
        if (n.startswith("distributed.") and isinstance(lg, logging.Logger) and lg.level != logging.NOTSET):
            lg.setLevel(logging.CRITICAL + 1)
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)


@contextlib.contextmanager
def _quiet_logs():
    """While a sweep runs, ``distributed``'s loggers say errors only, and
    ``distributed.client`` (a level of its own: its warnings "Couldn't
    gather ... rescheduling", its errors when the scheduler is lost, which
    :class:`SchedulerLost` says in one line) nothing; their levels are
    restored after."""
    names = {"distributed", "distributed.client"} | {
        n for n, lg in logging.root.manager.loggerDict.items()
        if n.startswith("distributed.") and isinstance(lg, logging.Logger) and lg.level != logging.NOTSET}
    saved = {n: logging.getLogger(n).level for n in names}
    for n in names:                                    # no reconnection or shutdown chatter on stderr
        logging.getLogger(n).setLevel(logging.CRITICAL if n == "distributed.client" else logging.ERROR)
    try:
        yield
    finally:
        for n, level in saved.items():
            logging.getLogger(n).setLevel(level)


def _sweep_on(client, scheduler, jobs, tasks, exclusive, bar, finish, stop_on_error) -> None:
    """Submit ``jobs`` (``{i: (function, argument...)}``: ``tasks[i]`` as it
    travels) to ``client`` and hand each outcome to ``finish``; losing the
    scheduler (``scheduler`` not None) raises :class:`SchedulerLost` once,
    with the count done; a task whose workers all died is a
    :class:`WorkerDied` with ``stop_on_error``, else a failure saying so."""
    from distributed import as_completed
    done = 0
    stack = contextlib.ExitStack()
    try:
        _check_workers(client, scheduler)
        if scheduler is not None and bar.link:
            link = _dashboard(client)
            bar.say_link(f"  scheduler {scheduler}" + (f"; dashboard {link}" if link else ""))
        res = _resources(client, scheduler) if exclusive else None
        futures = {client.submit(*job, key=f"epochbench-task-{i}-{_token()}", resources=res, pure=False): i
                   for i, job in jobs.items()}
        if scheduler is not None:
            stack.enter_context(_watch_workers(client, scheduler, lambda: len(jobs) - done, needs=res))
        for fut in as_completed(futures, loop=client.loop):
            i = futures[fut]
            try:
                ok, value, *notes = fut.result()
            except Exception as exc:           # lost too many workers, or the scheduler
                _say_notes(getattr(exc, "_input_notes", ()))
                if _lost(client, exc):
                    raise
                if type(exc).__name__ == "KilledWorker":
                    if stop_on_error:
                        raise WorkerDied(i, tasks[i]) from None
                    ok, value = False, f"WorkerDied: {died(i)}"
                elif stop_on_error:
                    raise
                else:
                    ok, value = False, traceback.format_exc()
            else:
                _say_notes(notes[0] if notes else ())
            done += 1
            finish(i, ok, value)
            fut.release()
    except Exception as exc:
        if scheduler is not None and _lost(client, exc):
            raise SchedulerLost(scheduler, done, len(jobs)) from None
        raise
    finally:       # best effort; not after Ctrl-C: a worker busy in a compiled kernel would hold it up
        stack.close()
        if client.status == "running" and not isinstance(sys.exc_info()[1], KeyboardInterrupt):
            with contextlib.suppress(Exception):
                client.run(_restore_sigint)


#: seconds between two looks at a scheduler's worker count during a sweep (:func:`_watch_workers`)
WATCH_EVERY = 5.0
#: seconds a look may go unanswered before the sweep says that the scheduler is silent (:func:`_watch_workers`)
SILENT_AFTER = 60.0


@contextlib.contextmanager
def _watch_workers(client, scheduler: str, left: Callable[[], int], every: float = WATCH_EVERY,
                   needs: dict | None = None, silent_after: float | None = None):
    """While the block runs, say on stderr (once each time it happens) that
    ``scheduler`` has no worker left that can take the tasks, with the
    ``left()`` tasks waiting for one, and that such workers joined again: a
    sweep whose workers all died waited in silence until killed (the
    start's check says it when there is none at first, so a start without
    workers is not said twice).  ``needs``: the resources each task asks
    for (``exclusive``); then only workers that declare them count: a timed
    sweep whose ``exclusive`` workers left waited in silence beside workers
    that could take none of its tasks.  A thread asks the scheduler every
    ``every`` seconds (its totals only, without ``needs``: a small message),
    each look in a thread of its own: a scheduler that stops answering
    (stopped, or its machine swapping) is said once ``silent_after``
    seconds pass without an answer (the first look's too), and again when
    it answers (a look that fails is no answer): such a sweep waited in
    silence, the watcher's look hung with it."""
    stop = threading.Event()
    silent_after = SILENT_AFTER if silent_after is None else silent_after
    having = "" if not needs else f" with the resource {', '.join(map(repr, needs))}"

    def usable() -> int:
        if not needs:
            info = _totals(client)
            return int(info.get("n_workers", len(info.get("workers") or {})))
        workers = _workers(client).values()
        return sum(all(k in (w.get("resources") or {}) for k in needs) for w in workers)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    def watch() -> None:
        look, answered, silent, empty = _Look(usable), time.monotonic(), False, None
        while True:
            if not look.done.wait(0 if silent else min(every, silent_after)):
                if not silent and time.monotonic() - answered >= silent_after:
                    say(f"epochbench: warning: {scheduler} has not answered for {silent_after:g} s (stopped, or "
                        f"its machine overloaded?): {left()} task(s) wait for it (Ctrl-C stops the run)")
                    silent = True
                if stop.wait(every):
                    return
                continue
            count = look.count                      # None: the look failed (the run's own waits say why)
            if count is not None:
                answered = time.monotonic()
                if silent:
                    say(f"epochbench: {scheduler} answers again; the sweep goes on")
                    silent = False
                if empty is not None and count == 0 and not empty:
                    say(f"epochbench: warning: {scheduler} has no worker{having} left: {left()} task(s) wait "
                        "until one joins (Ctrl-C stops the run)")
                elif empty is not None and count and empty:
                    say(f"epochbench: {scheduler}: {count} worker(s){having} now; the sweep goes on")
                empty = count == 0
            elif empty is None:
                empty = False                       # none at the start: the start's check said so
            if stop.wait(every):
                return
            look = _Look(usable)
    thread = threading.Thread(target=watch, name="epochbench-watch-workers", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=every + 1)


class _Look:
    """``ask()`` run in a daemon thread of its own: ``done`` is set when it
    returns, ``count`` its answer (None where it raised).  A look that never
    returns (a scheduler that stopped answering) is left to die with the
    process."""

    def __init__(self, ask: Callable[[], int]) -> None:
        self.done, self.count = threading.Event(), None

        def run() -> None:
            try:
                self.count = ask()
            except Exception:                       # noqa: BLE001 - counted as no answer of use
                pass
            finally:
                self.done.set()
        threading.Thread(target=run, name="epochbench-look", daemon=True).start()


def _totals(client) -> dict:
    """The scheduler's identity with its totals alone (``n_workers``), not
    every worker's state; the whole of it from a ``distributed`` whose
    ``scheduler_info`` takes no ``n_workers`` (before 2025)."""
    try:
        return client.scheduler_info(n_workers=0)
    except TypeError:
        return client.scheduler_info()


def _workers(client) -> dict:
    """Every worker's state, by address: ``distributed`` from 2025.4 on lists
    only the first 5 unless asked for all (``n_workers=-1``; a timed sweep
    counted 0 workers with ``exclusive`` where they came later); an older
    one lists all and takes no ``n_workers``."""
    try:
        info = client.scheduler_info(n_workers=-1)
    except TypeError:
        info = client.scheduler_info()
    return info.get("workers", {}) or {}


def _lost(client, exc: BaseException) -> bool:
    """``exc`` says that ``client`` lost its scheduler (not that a task failed):
    a future cancelled for ``scheduler-connection-lost``, or any error once
    the client is no longer connected (a closed comm, a timeout)."""
    if getattr(exc, "reason", None) == "scheduler-connection-lost":
        return True
    return client.status not in ("running", "newly-created")


def _connect(Client, address: str, option: str = "--scheduler"):
    """A client of the scheduler at ``address``; ``ValueError`` naming the
    option when none answers within :data:`CONNECT_TIMEOUT` seconds or what
    answers is no Dask scheduler.

    The client is made in a daemon thread joined with that deadline (Dask
    bounds the connection, not the handshake after it: a web server would
    hang it for good); one that does not return is left to die with the
    process.  Dask's own timeout is :data:`CONNECT_GRACE` seconds shorter,
    so that the whole wait is the deadline the message gives (it was that
    deadline plus the grace).  Any exception of the connection (a service that speaks first
    makes Dask read its banner as frame lengths: ``MemoryError``) is the
    ``ValueError``; ``KeyboardInterrupt`` goes on."""
    box: dict[str, Any] = {}
    dask_timeout = max(CONNECT_TIMEOUT - CONNECT_GRACE, CONNECT_TIMEOUT / 2)

    def connect() -> None:
        try:
            box["client"] = Client(address, timeout=f"{dask_timeout}s", set_as_default=False)
        except BaseException as exc:   # noqa: BLE001 - handed to the calling thread
            box["error"] = exc

    thread = threading.Thread(target=connect, name="epochbench-connect", daemon=True)
    thread.start()
    thread.join(CONNECT_TIMEOUT)
    if thread.is_alive():
        raise ValueError(f"{_naming(option, address)}: no Dask scheduler answered within {CONNECT_TIMEOUT:g} s "
                         f"(a web server or another service? {PORT_HINT})")
    exc = box.get("error")
    if exc is None:
        return box["client"]
    if not isinstance(exc, Exception):
        raise exc
    msg = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
    if isinstance(exc, (OSError, TimeoutError)):
        raise ValueError(f"{_naming(option, address)}: cannot connect ({msg})") from None
    raise ValueError(f"{_naming(option, address)}: cannot connect (not a Dask scheduler? Dask could not read its "
                     f"answer: {msg}; {PORT_HINT})") from None


def _dashboard(client) -> str | None:
    """The scheduler's dashboard link, when it serves one: a scheduler
    started with ``--no-dashboard`` still reports an HTTP service, whose
    ``/status`` is 404 (one request, 2 s at most; a link this process cannot
    reach is given all the same)."""
    import urllib.error
    import urllib.request
    if "dashboard" not in (client.scheduler_info().get("services") or {}):
        return None
    link = client.dashboard_link
    try:
        with urllib.request.urlopen(link, timeout=2):
            return link
    except urllib.error.HTTPError:
        return None
    except (OSError, ValueError):
        return link


def _resources(client, address: str | None) -> dict | None:
    """The resources a timing-sensitive task asks for: ``exclusive``, where a
    worker declares it.  Else none, and on a scheduler a warning on stderr
    when a worker runs several threads (timed tasks may then share a
    process; a scheduler without workers is said by :func:`_check_workers`)."""
    info = _workers(client)
    if any(EXCLUSIVE in (w.get("resources") or {}) for w in info.values()):
        return {EXCLUSIVE: 1}
    threads = max((w.get("nthreads") or 1 for w in info.values()), default=0)
    if address is not None and threads > 1:         # none yet: said by _check_workers
        why = f"one runs {threads} threads"
        print(f"epochbench: warning: no worker of {address} declares the resource {EXCLUSIVE!r} and {why}: "
              f"timed tasks may run side by side in one process (start workers with --nthreads 1 or "
              f"--resources {EXCLUSIVE}=1)", file=sys.stderr, flush=True)
    return None


def _token() -> str:
    return f"{os.getpid()}-{time.time_ns()}"


def _keywords(call, task):
    """``call(task)`` with messages naming keyword arguments
    (:func:`~epochbench.instances.arguments.python_names`): a task of a
    Python API call, run in a worker process, where the caller's context
    is not (its messages named command-line flags)."""
    from epochbench.instances.arguments import python_names
    with python_names():
        return call(task)


def _on_worker(call, task, raising: bool = False) -> tuple:
    """:func:`_outcome` on a worker, what the task prints going to the
    worker's stderr: a local worker's stdout is the command's, and a
    heuristic's prints came before its report (``score``'s table,
    ``validate``'s verdict).  The notes on its input that the task raised
    (:class:`~epochbench.instances.core.InputNote`) travel back with its
    outcome, a third item ``(ok, value, notes)`` present only when there
    are some, and an exception raised to the client carries them
    (``_input_notes``): :func:`_sweep_on` says them in the caller's process,
    where the command line prints each once as its own line.  On the
    worker they printed in Python's warning form, in the worker's log or
    mixed into the command's stderr.  SIGINT is unblocked in the task's
    thread first (:func:`_unblock_sigint`)."""
    _unblock_sigint()
    _catch_notes()
    notes: list[str] = []
    _TASK.notes = notes
    try:
        with contextlib.redirect_stdout(sys.stderr):
            ok, value = _outcome(call, task, raising)
    except Exception as exc:
        if notes:
            exc._input_notes = tuple(notes)
        raise
    finally:
        _TASK.notes = None
    return (ok, value, tuple(notes)) if notes else (ok, value)


#: the task running in this thread of a worker: ``notes``, the list its notes go to (None: none runs)
_TASK = threading.local()
_HOOK_LOCK = threading.Lock()


def _catch_notes() -> None:
    """Make ``warnings.showwarning`` hand an :class:`InputNote` raised in a
    thread running a task (:func:`_on_worker`) to that task's list, every
    other warning to the function it replaces.  A thread-local list, not
    ``warnings.catch_warnings``: that swaps process-wide state, and the
    tasks of a worker with several threads would restore each other's.
    Installed again where something replaced it since."""
    import warnings
    from epochbench.instances.core import InputNote
    with _HOOK_LOCK:
        shown = warnings.showwarning
        if getattr(shown, "_task_notes", False):
            return

        def show(message, category, filename, lineno, file=None, line=None):
            notes = getattr(_TASK, "notes", None)
            if notes is not None and issubclass(category, InputNote):
                notes.append(str(message))
            else:
                shown(message, category, filename, lineno, file, line)
        show._task_notes = True
        warnings.showwarning = show


def _say_notes(notes) -> None:
    """Raise again, in this process, the notes a task raised on a worker."""
    from epochbench.instances.core import note
    for text in notes:
        note(text)


def _outcome(call, task, raising: bool = False) -> tuple[bool, Any]:
    """``(True, call(task))``, or ``(False, (traceback text, bad input))``
    when it raises (a failure is a result, so that Dask does not retry it as
    a lost task; bad input: an ``InstanceError``, :class:`Failure`);
    ``raising``: the exception goes on to the client instead."""
    from epochbench.instances.core import InstanceError, MethodFailed
    try:
        return True, call(task)
    except (Exception, SystemExit) as exc:     # sys.exit in a task (an experiment's run): its failure, not the
        if raising and isinstance(exc, SystemExit):   # command's end with the task's status and no word
            raise MethodFailed(f"a task called sys.exit({exc.code!r})") from exc
        if raising:
            raise
        return False, (traceback.format_exc(), isinstance(exc, InstanceError))


# ---- the tasks on a scheduler's workers -----------------------------------------------------
def _payloads(call, tasks, todo, raising: bool, code: dict | None = None) -> dict[int, tuple]:
    """``{i: (_remote, call, task, raising, code)}`` with ``call`` and ``tasks[i]``
    pickled here with cloudpickle: the scheduler unpickles no module of
    theirs, and the modules that travel by value (:func:`_by_value`) need
    not be on the workers.  Should pickling by value fail (a module holding
    something unpicklable), they travel by reference as Dask would send
    them."""
    import cloudpickle
    chosen = [tasks[i] for i in todo]

    def dump() -> list[bytes]:
        return [cloudpickle.dumps(x, protocol=pickle.HIGHEST_PROTOCOL) for x in (call, *chosen)]

    mine = _by_value((call, chosen))
    try:
        try:
            blobs = dump()
        except Exception:                                   # noqa: BLE001 - retried by reference
            if not mine:
                raise
            _unregister(mine)
            blobs = dump()
    finally:
        _unregister(mine)
    return {i: (_remote, blobs[0], blob, raising, code) for i, blob in zip(todo, blobs[1:])}


def _by_value(obj) -> list[str]:
    """Register with cloudpickle, to be pickled by value, the modules that
    ``obj`` refers to and that a remote worker may lack (:func:`_local`),
    and those that their functions refer to in turn; returns the names
    registered (for :func:`_unregister`; none when pickling fails: the
    caller's own pickling reports it)."""
    import cloudpickle
    mine: list[str] = []
    try:
        for _ in range(20):                                 # a chain of modules, each found one pickle later
            new = sorted(n for n in _modules_in(obj) if _local(n)
                         and n not in cloudpickle.list_registry_pickle_by_value())
            if not new:
                break
            for name in new:
                cloudpickle.register_pickle_by_value(sys.modules[name])
                mine.append(name)
    except Exception:                                       # noqa: BLE001 - pickled by reference instead
        _unregister(mine)
    return mine


def _unregister(names: list[str]) -> None:
    import cloudpickle
    for name in names:
        if name in cloudpickle.list_registry_pickle_by_value() and name in sys.modules:
            cloudpickle.unregister_pickle_by_value(sys.modules[name])
    names.clear()


def _modules_in(obj) -> set[str]:
    """The names of the modules of the functions, classes and modules that
    pickling ``obj`` with cloudpickle meets."""
    seen: set[str] = set()
    _recorder()(io.BytesIO(), seen).dump(obj)
    return seen


@functools.cache
def _recorder():
    """A cloudpickle pickler that records the modules it meets (made on
    first use: cloudpickle is imported only with a scheduler)."""
    import cloudpickle

    class Recorder(cloudpickle.Pickler):
        def __init__(self, file, seen: set[str]):
            super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
            self.seen = seen

        def reducer_override(self, obj):
            if isinstance(obj, types.ModuleType):
                self.seen.add(obj.__name__)
            elif isinstance(obj, (type, types.FunctionType)) and isinstance(getattr(obj, "__module__", None), str):
                self.seen.add(obj.__module__)
            return super().reducer_override(obj)

    return Recorder


def _local(name: str) -> bool:
    """Module ``name`` is this process's own, which a remote worker may lack:
    loaded from a file outside the standard library and the installed
    packages (site-packages), and not epochbench (installed on every worker)."""
    top = name.partition(".")[0]
    if top in ("epochbench", "__main__") or top in sys.stdlib_module_names:
        return False
    path = getattr(sys.modules.get(name), "__file__", None)
    if not isinstance(path, str):
        return False
    real = os.path.realpath(path)
    return not any(real.startswith(d + os.sep) for d in _installed_dirs())


@functools.cache
def _installed_dirs() -> tuple[str, ...]:
    """The folders of the standard library and of installed packages."""
    import site
    import sysconfig
    dirs = {sysconfig.get_paths().get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    dirs |= set(getattr(site, "getsitepackages", list)()) | {getattr(site, "getusersitepackages", str)()}
    return tuple(sorted({os.path.realpath(d) for d in dirs if d}))


def _remote(call: bytes, task: bytes, raising: bool = False, code: dict | None = None) -> tuple[bool, Any]:
    """On a worker: unpickle ``call`` and ``task`` and run :func:`_outcome`.
    A task that cannot be unpickled here (a module it needs is missing) is
    a failure on one line naming the module (with ``raising``, that line as
    a ``ValueError``), and so is one on a worker that runs other code than
    the client's ``code`` (:func:`code_here`; with ``raising``, a
    :class:`~epochbench.instances.core.RunStopped`): a worker that joined or
    was restarted after the sweep's check is asked here, at its first task
    (a worker restarted by its nanny from edited files recorded its rows as
    the client's commit)."""
    if code is not None and not _same_code(code, code_here()):
        line = (f"worker {_worker_name()} runs other code ({_code_text(code_here(), code)}) than the client "
                f"({_code_text(code, code_here())}): it joined or restarted after the check; restart it from this code")
        if raising:              # not bad input (exit status 1, as an experiment's failed tasks give)
            raise RunStopped(line)
        return False, line
    try:
        fn, item = pickle.loads(call), pickle.loads(task)
    except Exception as exc:                                # noqa: BLE001 - reported as the task's failure
        line = (f"cannot unpickle the task on worker {_worker_name()}: {type(exc).__name__}: {exc} "
                "(the modules it uses must be importable on the workers)")
        if raising:
            raise ValueError(line) from None
        return False, line
    return _on_worker(fn, item, raising)


def _worker_name() -> str:
    """This worker's address (``tcp://10.0.0.5:40321``) with its host's name,
    or the host's name alone outside a worker: with one worker per core,
    the host alone named none of them."""
    host = socket.gethostname()
    try:
        from distributed import get_worker
        return f"{get_worker().address} ({host})"
    except (ImportError, ValueError):            # not in a worker (get_worker's ValueError)
        return host


def _use_path(path: list[str], warned: list[str] = ()) -> None:
    """On each local worker: import from the client's ``sys.path`` too (a
    user's module found through the current directory or a test's path),
    and take the plug-in warnings the client gave (``warned``) as given:
    the worker shares its terminal, where each showed once per worker
    besides the client's.  A warning only the workers meet (a catalog the
    client never loaded) is still given by each."""
    sys.path[:] = list(dict.fromkeys(list(path) + sys.path))
    WARNED.update(warned)


#: a worker's SIGINT handler before :func:`_worker_code` set it aside (restored after the sweep)
_SIGINT_BEFORE: list = []


def _worker_code(stamp: bool) -> dict | None:
    """On each worker: ignore SIGINT while the sweep runs (Ctrl-C on the
    client's terminal reaches the whole process group; the client decides),
    keeping the handler it had for :func:`_restore_sigint`; with ``stamp``,
    return the code the worker runs (:func:`code_here`)."""
    import signal
    if threading.current_thread() is threading.main_thread() and not _SIGINT_BEFORE:
        _SIGINT_BEFORE.append(signal.signal(signal.SIGINT, signal.SIG_IGN))
    _unblock_sigint()                  # a local worker started with it blocked: now ignored, so a Ctrl-C
    return code_here() if stamp else None     # held while it started is dropped


def _unblock_sigint() -> None:
    """Unblock SIGINT in this thread of a worker.  A local cluster's workers
    start with it blocked (:func:`_sigint_kept_from_new_processes`), and a
    blocked signal is inherited by the threads they start and, across
    ``exec``, by the processes their tasks start: CBC then never got the
    SIGINT with which its time limit stops it
    (:class:`~epochbench.exact._pulp_solvers.TimedCBC`; it was killed
    after the grace period, its incumbent and bound lost).  A no-op where
    it is not blocked, or where the platform has no ``pthread_sigmask``."""
    import signal
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _restore_sigint() -> None:
    """On each worker, after the sweep: the SIGINT handler it had before
    (a worker started by hand stops on Ctrl-C again)."""
    import signal
    if threading.current_thread() is threading.main_thread() and _SIGINT_BEFORE:
        signal.signal(signal.SIGINT, _SIGINT_BEFORE.pop() or signal.SIG_DFL)


@functools.lru_cache(maxsize=1)
def code_here() -> dict:
    """The code this process runs (:func:`epochbench.runs.current_code`:
    ``version``, ``commit``, ``diff``; and ``plugins``, the version of each
    installed plug-in package by name), as it was when first asked (on a
    worker: when the first sweep's check imported epochbench there), not as
    the files on disk are later: a worker that imported older code reports
    that code."""
    from . import runs
    plugins = {e["package"]: e["version"] for e in runs.installed_plugins() if e["package"]}
    return {**runs.current_code(), "plugins": dict(sorted(plugins.items()))}


def _code_text(code: dict, other: dict | None = None) -> str:
    """``code`` in words; beside ``other``, the plug-ins whose versions differ."""
    commit = f", commit {code['commit'][:8]}{'+dirty' if code['commit'].endswith('+dirty') else ''}" \
        if code.get("commit") else ""
    text = f"epochbench {code.get('version')}{commit}" + (f" (changes {code['diff']})" if code.get("diff") else "")
    differ = _plugins_differ(code, other) if other is not None else []
    return text + "".join(f", plug-in {name} {code['plugins'][name]}" for name in differ)


def _plugins_differ(mine: dict, theirs: dict) -> list[str]:
    """The plug-in packages installed on both sides in different versions
    (one a side lacks is left to the task: it fails naming the module)."""
    a, b = mine.get("plugins") or {}, theirs.get("plugins") or {}
    return [name for name in a if name in b and a[name] != b[name]]


def _same_code(mine: dict, theirs: dict) -> bool:
    """Whether a worker runs this client's code: the same version, and the
    same commit and changes where both run from a checkout (a worker
    installed from a wheel has no commit to tell), and the same version of
    every plug-in package both have (a worker with another version of one
    returned its results under the client's version)."""
    if mine.get("version") != theirs.get("version") or _plugins_differ(mine, theirs):
        return False
    if mine.get("commit") and theirs.get("commit"):
        return mine["commit"] == theirs["commit"] and mine.get("diff") == theirs.get("diff")
    return True


def _check_workers(client, scheduler: str | None, say_empty: bool = True) -> None:
    """Set SIGINT aside on every worker; on a scheduler, refuse (one-line
    ``ValueError``) workers that cannot run epochbench's tasks, or run other
    code than this client (their rows would be stamped with this client's
    code).  Workers that join later are asked at each task (:func:`_remote`)."""
    codes = client.run(_worker_code, scheduler is not None, on_error="return")
    if not codes and scheduler is not None and say_empty:   # the tasks wait: said, not a silent hang
        print(f"epochbench: warning: {scheduler} has no worker yet: the tasks wait until one joins (its code "
              "is not checked)", file=sys.stderr, flush=True)
    broken = {w: c for w, c in codes.items() if isinstance(c, BaseException)}
    where = f"of {scheduler} " if scheduler else ""
    if broken:
        w, exc = next(iter(broken.items()))
        raise ValueError(f"{len(broken)} worker(s) {where}failed epochbench's check before the sweep ({w}: "
                         f"{type(exc).__name__}: {exc}); every worker needs epochbench, this version, and "
                         "must answer")
    if scheduler is None:
        return
    mine = code_here()
    other = {w: c for w, c in codes.items() if not _same_code(mine, c)}
    if other:
        w, code = next(iter(other.items()))
        raise ValueError(f"{len(other)} worker(s) of {scheduler} run other code than this client ({w}: "
                         f"{_code_text(code, mine)}; here: {_code_text(mine, code)}): their rows would pass for "
                         "this code's; restart the workers from this code")
