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
the end.  Timing-sensitive tasks (``timing=True``) ask for the worker
resource ``exclusive`` so that a worker runs one of them at a time, and
their rows get the ``host`` and ``cpu`` that ran them.

``distributed`` is imported only when a cluster is used: ``import
epochbench`` and ``epochbench simulate`` do not pay for it.

References
----------
[dask-distributed] Dask.distributed documentation, https://distributed.dask.org
"""
from __future__ import annotations

import functools
import json
import os
import platform
import socket
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from epochbench.instances.files import atomic_path

#: environment variable naming a Dask scheduler (``--scheduler`` wins)
SCHEDULER_ENV = "EPOCHBENCH_SCHEDULER"
#: environment variable: local worker processes when a command gives no
#: ``--workers`` (default: every core)
WORKERS_ENV = "EPOCHBENCH_WORKERS"
#: worker resource held by each timing-sensitive task (start remote workers
#: with ``--resources exclusive=1`` to give such tasks a worker each)
EXCLUSIVE = "exclusive"


@dataclass(frozen=True)
class Failure:
    """A task that raised: its index, the task and the traceback text."""
    index: int
    task: Any
    error: str

    def line(self) -> str:
        last = self.error.strip().splitlines()[-1] if self.error.strip() else "error"
        return f"task {self.index} {_label(self.task)!s}: {last}"


class SweepFailed(RuntimeError):
    """Some tasks raised; the others finished (and were saved).

    ``failures``: the :class:`Failure` of each; the message names the first
    one's task and error on its first line, then one line per failure."""

    def __init__(self, failures: list[Failure], total: int):
        self.failures = failures
        first = failures[0]
        head = f"task {first.task!r} failed: {first.error.strip().splitlines()[-1]}"
        lines = [f"{len(failures)} of {total} tasks failed; first: {head}"]
        lines += [f"  {f.line()}" for f in failures]
        super().__init__("\n".join(lines))

    def report(self) -> str:
        """The message, then each failure's task and traceback."""
        tbs = [f"--- task {f.index}: {f.task!r}\n{f.error.rstrip()}" for f in self.failures]
        return "\n".join([str(self), *tbs])


# ---- selecting tasks -------------------------------------------------------------------
def parse_indices(spec: str, n: int) -> list[int]:
    """Indices of ``--tasks SPEC`` among ``n`` tasks: comma-separated items,
    each ``I`` or a half-open range ``A:B`` (either end may be left out; an
    end ``B`` past the last task stops there).

    Raises ``ValueError`` naming ``--tasks`` for an item that is not an
    index or a range, and for an index (a range's start included) outside
    ``0:n``; negative indices are refused, not counted from the end."""
    chosen: list[int] = []
    for part in (p.strip() for p in spec.split(",")):
        try:
            if ":" in part:
                a, b = part.split(":", 1)
                start = _index(int(a), n) if a.strip() else 0
                stop = int(b) if b.strip() else n
                if stop < 0:
                    raise ValueError(f"--tasks: index {stop} is outside 0:{n}")
                chosen.extend(range(start, min(stop, n)))
            else:
                chosen.append(_index(int(part), n))
        except ValueError as exc:
            if str(exc).startswith("--tasks"):
                raise
            raise ValueError(f"--tasks: {part!r} is not an index or a range A:B") from None
    return sorted(set(chosen))


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
    for cond in where:
        field, sep, want = cond.partition("=")
        field = field.strip()
        if not sep or not field:
            raise ValueError(f"--where: {cond!r} is not FIELD=VALUE")
        if not any(field in t for t in tasks):
            fields = sorted({k for t in tasks for k in t})
            raise ValueError(f"--where: no task has the field {field!r} (fields: {', '.join(fields)})")
        idx = [i for i in idx if field in tasks[i] and _matches(tasks[i][field], want.strip())]
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


def load_stamped(path: Path | None, tasks: list[dict]) -> dict[int, tuple[list[dict], dict]]:
    """As :func:`load_records`, each task's rows with the stamp of the run
    that computed them (the record's keys besides ``task`` and ``rows``:
    ``run``, ``commit``, ``version``; ``{}`` for a record written before
    records were stamped).  A task recorded twice: its last record."""
    if path is None or not path.exists():
        return {}
    index = {_key(t): i for i, t in enumerate(tasks)}
    done = {}
    for line in path.read_bytes().splitlines():
        try:
            rec = json.loads(line)
            i, rows = index.get(_key(rec["task"])), list(rec["rows"])
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short when the previous sweep was killed
        if i is not None:
            done[i] = (rows, {k: v for k, v in rec.items() if k not in ("task", "rows")})
    return done


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
        except (ValueError, KeyError, TypeError):
            continue  # a line cut short by a kill
        keep.append(line)
    if not keep:
        path.unlink()
        return
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(b"\n".join(keep) + b"\n")


def repair_tail(path: Path) -> None:
    """Cut a torn last line (no final newline: the writer was killed in the
    middle of it) off the store ``path``, so that the next record appended
    starts on a line of its own.  O(length of the last line)."""
    try:
        fh = open(path, "rb+")
    except FileNotFoundError:
        return
    with fh:
        size = fh.seek(0, os.SEEK_END)
        end = size
        while end > 0:
            start = max(0, end - 65536)
            fh.seek(start)
            chunk = fh.read(end - start)
            if end == size and chunk.endswith(b"\n"):
                return                                 # intact
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                fh.truncate(start + cut + 1)
                return
            end = start
        fh.truncate(0)


def append_record(log, task: dict, rows: list[dict], stamp: dict | None = None) -> None:
    """One line ``{"task": ..., "rows": [...], **stamp}`` written with one
    ``write`` and flushed (a kill leaves at most this line torn).  ``stamp``:
    what says which run and code computed the rows (``run``, ``commit``,
    ``version``; see :func:`load_stamped`)."""
    log.write(json.dumps({"task": task, "rows": rows, **(stamp or {})}, default=_plain) + "\n")
    log.flush()


# ---- one task ------------------------------------------------------------------------------
def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def rows_of(run: Callable[[dict], Any], task: dict, timing: bool = False) -> list[dict]:
    """``run(task)`` as a list of rows (a single dict becomes one row); with
    ``timing``, each row gets the ``host`` and ``cpu`` that ran it."""
    rows = run(task)
    rows = [rows] if isinstance(rows, dict) else list(rows)
    if timing:
        where = {"host": socket.gethostname(), "cpu": _cpu()}
        rows = [{**r, **where} for r in rows]
    return rows


def _label(task) -> str:
    if not isinstance(task, dict):
        return str(task)[:100]
    return " ".join(f"{k}={v}" for k, v in task.items() if isinstance(v, (str, int, float)))[:100]


# ---- progress ------------------------------------------------------------------------------
class Progress:
    """``[done/total] task  (elapsed, failures, ETA)`` lines on stderr, only
    when ``on`` and stderr is a terminal."""

    def __init__(self, total: int, on: bool = True):
        self.total, self.done, self.failed = total, 0, 0
        self.on = bool(on) and sys.stderr.isatty()
        self.t0 = time.perf_counter()

    def say(self, text: str) -> None:
        if self.on:
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
    if n < 1:
        raise ValueError(f"{WORKERS_ENV} must be a positive integer, got {raw!r}")
    return n


def run_tasks(call: Callable[[Any], Any], tasks: list, todo: list[int] | None = None, *,
              workers: int | None = None, scheduler: str | None = None, progress: bool = True,
              on_result: Callable[[int, Any], None] | None = None, exclusive: bool = False,
              stop_on_error: bool = False) -> tuple[dict[int, Any], list[Failure]]:
    """Run ``call(tasks[i])`` for every ``i`` in ``todo`` (default: all).

    Parameters
    ----------
    call : module-level function (picklable) of one task.
    tasks : the tasks (plain dicts for experiments; any picklable object).
    todo : indices to run.
    workers : local worker processes (default: :func:`default_workers`, every
        core); 1 runs in this process.  Ignored with a scheduler.
    scheduler : address of a Dask scheduler (default: ``$EPOCHBENCH_SCHEDULER``;
        none: a local cluster).
    progress : progress lines on a terminal.
    on_result : ``on_result(i, result)`` in this process as each task finishes.
    exclusive : each task holds the worker resource ``exclusive`` (a worker
        to itself), where the workers declare it.
    stop_on_error : the first exception a task raises stops the sweep and
        propagates, its type kept (``score`` and ``validate``: bad input is
        an error of the whole command); default: collect failures.

    Returns
    -------
    results : ``{i: call(tasks[i])}`` of the tasks that finished.
    failures : a :class:`Failure` per task that raised (the others go on).

    Notes
    -----
    Ctrl-C cancels the pending tasks, stops a local cluster and raises
    ``KeyboardInterrupt``.  Dask reruns a task whose worker died (up to its
    ``distributed.scheduler.allowed-failures``).  Cost per task: one
    pickle round trip plus the scheduler's few milliseconds.
    """
    todo = list(range(len(tasks))) if todo is None else list(todo)
    scheduler = scheduler or os.environ.get(SCHEDULER_ENV) or None
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    bar = Progress(len(todo), progress)
    results: dict[int, Any] = {}
    failures: list[Failure] = []

    def finish(i: int, ok: bool, value) -> None:
        if ok:
            results[i] = value
            if on_result is not None:
                on_result(i, value)
        else:
            failures.append(Failure(i, tasks[i], value))
        bar.step(tasks[i], ok)

    if scheduler is None and (workers == 1 or len(todo) <= 1):
        for i in todo:
            try:
                value = call(tasks[i])
            except Exception:
                if stop_on_error:
                    raise
                finish(i, False, traceback.format_exc())
            else:
                finish(i, True, value)
    elif todo:
        _on_dask(call, tasks, todo, min(workers, len(todo)), scheduler, exclusive, bar, finish,
                 stop_on_error)
    failures.sort(key=lambda f: f.index)
    return results, failures


def _on_dask(call, tasks, todo, workers, scheduler, exclusive, bar, finish, stop_on_error=False) -> None:
    """Submit the tasks to a Dask client (a local cluster unless ``scheduler``)
    and hand each outcome to ``finish`` as it completes."""
    import logging

    import dask
    from distributed import Client, LocalCluster, as_completed

    # worker processes not daemonic: a task may start processes of its own
    # (they still exit when this process dies: distributed watches the parent)
    log = logging.getLogger("distributed")
    level = log.level
    with dask.config.set({"distributed.worker.daemon": False, "logging.distributed": "error"}):
        log.setLevel(logging.ERROR)        # no shutdown chatter on stderr
        cluster = None
        try:
            if scheduler is None:
                cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                                       resources={EXCLUSIVE: 1},
                                       silence_logs=logging.CRITICAL)
                client = Client(cluster)
                client.run(_use_path, list(sys.path))   # what this process can import, they can
            else:
                client = _connect(Client, scheduler)
                bar.say(f"  scheduler {scheduler}; dashboard {client.dashboard_link}")
            with client:
                client.run(_ignore_sigint)
                res = {EXCLUSIVE: 1} if exclusive and _has_exclusive(client) else None
                wrap = functools.partial(_outcome, call, raising=stop_on_error)
                futures = {client.submit(wrap, tasks[i], key=f"epochbench-task-{i}-{_token()}",
                                         resources=res, pure=False): i for i in todo}
                for fut in as_completed(futures):
                    i = futures[fut]
                    try:
                        ok, value = fut.result()
                    except Exception:          # lost too many workers, or cannot unpickle
                        if stop_on_error:
                            raise
                        ok, value = False, traceback.format_exc()
                    finish(i, ok, value)
                    fut.release()
        finally:
            if cluster is not None:
                cluster.close(timeout=10)
            log.setLevel(level)


def _connect(Client, address: str):
    """A client of the scheduler at ``address``; ``ValueError`` naming the
    option when none answers within 20 s."""
    try:
        return Client(address, timeout="20s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise ValueError(f"--scheduler {address}: cannot connect ({' '.join(str(exc).split())[:200]})") from None


def _token() -> str:
    return f"{os.getpid()}-{time.time_ns()}"


def _has_exclusive(client) -> bool:
    info = client.scheduler_info().get("workers", {})
    return any(EXCLUSIVE in (w.get("resources") or {}) for w in info.values())


def _outcome(call, task, raising: bool = False) -> tuple[bool, Any]:
    """``(True, call(task))``, or ``(False, traceback text)`` when it raises
    (a failure is a result, so that Dask does not retry it as a lost task);
    ``raising``: the exception goes on to the client instead."""
    try:
        return True, call(task)
    except Exception:
        if raising:
            raise
        return False, traceback.format_exc()


def _use_path(path: list[str]) -> None:
    """On each local worker: import from the client's ``sys.path`` too (a
    user's module found through the current directory or a test's path)."""
    sys.path[:] = list(dict.fromkeys(list(path) + sys.path))


def _ignore_sigint() -> None:
    """On each worker: ignore SIGINT (Ctrl-C on the client's terminal reaches
    the whole process group; the client decides)."""
    import signal
    import threading
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
