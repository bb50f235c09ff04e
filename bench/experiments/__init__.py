"""``epochbench experiment NAME``: the experiment registry and the one sweep runner.

An experiment is a list of independent *tasks* (plain dicts: a workload, a
policy, a seed, ...) and a module-level function that runs one task and
returns tidy rows (dicts).  :func:`sweep` runs the tasks through the one
sweep runner :mod:`epochbench.sweep` (a local Dask cluster by default, a
Dask scheduler with ``--scheduler``), and :func:`run_experiment` writes ``OUT/NAME.csv``
(one row per run), ``OUT/NAME.png`` and prints the experiment's summary table.

Adding an experiment is one module in this package that calls
:func:`register` with an :class:`Experiment`; :func:`load_experiments`
imports every module here, so nothing else has to list it.
"""
from __future__ import annotations

import functools
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from epochbench import sweep as _sw
from epochbench.instances.catalog import (Catalog, PluginError, in_package, modules_of, origin_of, plugin_call,
                                           plugins)
from epochbench.instances.data import data_state
from epochbench.instances.files import atomic_path, output_lock


@dataclass(frozen=True)
class Options:
    """What the command line says: ``--quick``, ``--workers`` (``--jobs``),
    ``--seeds``, ``--out``, ``--scheduler``, ``--tasks``, ``--where``,
    ``--fresh`` and ``--resume``."""
    quick: bool = False
    jobs: int | None = None     # worker processes (None: $EPOCHBENCH_WORKERS, else every core)
    seeds: int | None = None    # repetitions (None: the experiment's default)
    out: Path = Path("results")
    progress: bool = True
    scheduler: str | None = None    # Dask scheduler address (None: $EPOCHBENCH_SCHEDULER, else local)
    tasks: str | None = None        # index subset, e.g. "0:10,20"
    where: tuple[str, ...] = ()     # field conditions, e.g. ("ta=4",)
    fresh: bool = False             # recompute every chosen task (reuse no stored rows)
    resume: bool = False            # reuse stored rows even where other code computed them


@dataclass(frozen=True)
class Experiment:
    """One named experiment.

    ``tasks(opts)`` lists the independent runs; ``run(task)`` (module level,
    picklable) performs one and returns a list of tidy rows; ``table(df)``
    is the summary printed at the end; ``plot(df, path)`` draws ``NAME.png``.
    ``timing=True`` marks experiments whose rows hold wall times: each task
    holds the worker resource ``exclusive`` (a worker to itself: the local
    cluster's workers have one thread and the resource; on a scheduler, the
    workers started with ``--resources exclusive=1``); their rows get the
    ``host`` and ``cpu`` that ran them.  ``data``: paths under
    :func:`~epochbench.instances.data.data_root` the tasks read; one that is
    absent stops the run before it starts, in one line (not one failure per
    task).  ``extra``: more summary tables, ``{KEY: f(df) -> DataFrame}``
    (a paper's claims checked point by point, say), each written as
    ``NAME-KEY.csv`` and printed after the table.
    """
    name: str
    help: str
    tasks: Callable[[Options], list[dict]]
    run: Callable[[dict], list[dict]]
    table: Callable[[pd.DataFrame], pd.DataFrame]
    plot: Callable[[pd.DataFrame, Path], None] | None = None
    timing: bool = False
    notes: dict = field(default_factory=dict)
    data: tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)


def _plugin_experiment(ep) -> None:
    """Entry point ``NAME = module:EXPERIMENT`` of group ``epochbench.experiments``
    (an :class:`Experiment`; registering it on import is enough)."""
    exp = ep.load()
    if not isinstance(exp, Experiment):
        raise PluginError(f"{ep.value} is a {type(exp).__name__}, not an Experiment")
    if exp.name != ep.name:        # `experiment NAME` found nothing under the entry point's name
        raise PluginError(f"entry point name {ep.name!r} is not its experiment's name {exp.name!r}")
    register(exp, origin=f"entry point {ep.value}")


#: every experiment by name, completed on lookup: the modules of this package
#: (each registers its experiments: the built-in ones), then plug-ins
CATALOG: Catalog[Experiment] = Catalog(
    "experiment", [modules_of(__name__), plugins("epochbench.experiments", _plugin_experiment)], builtin=1)
#: the experiments registered so far (:func:`load_experiments` completes it)
EXPERIMENTS: dict[str, Experiment] = CATALOG._items


def register(exp: Experiment, origin: str | None = None) -> Experiment:
    """Register ``exp`` under its name (``origin``: what a clash of names
    says registered it; default ``builtin`` where epochbench's own modules
    register it, else ``module NAME``:
    :func:`~epochbench.instances.catalog.origin_of`).  Called from outside
    epochbench, it loads the built-in experiments first, so that a
    built-in's name is refused now: before, the catalog took the newcomer,
    and the built-in's module then failed to load at the first lookup."""
    frame = sys._getframe(1)
    origin = origin or origin_of(exp.run, frame)
    check_experiment_name(exp.name)
    if not in_package(frame):
        CATALOG.load_builtins()
    # the same experiment registered again (its module imported twice); another one under a taken name
    # is refused, even one that reuses a built-in's run (it silently replaced that experiment's tasks)
    CATALOG.add(exp.name, exp, same=lambda old, new: old == new, origin=origin)
    return exp


#: an experiment's name: it names files (NAME.csv, NAME.run.json) and is a word of the command line
EXPERIMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_experiment_name(name) -> None:
    """ValueError unless ``name`` suits an experiment (:data:`EXPERIMENT_NAME`,
    and not ``list``, which lists them): ``../evil`` wrote its files beside
    the folder ``--out`` named."""
    if not isinstance(name, str) or not EXPERIMENT_NAME.fullmatch(name) or name == "list":
        raise ValueError(f"experiment name: letters, digits, '.', '_' and '-', starting with a letter or digit, "
                         f"and not 'list' (the listing); got {name!r}")


def load_experiments() -> dict[str, Experiment]:
    """Every experiment (this package's modules and plug-ins, imported on
    first call); returns :data:`EXPERIMENTS`."""
    CATALOG.complete()
    return EXPERIMENTS


def save_figure(fig, path, title: str | None = None, dpi: int | None = None) -> None:
    """Give ``fig`` its ``title``, write it to ``path`` and close it: the
    experiments' one writer, :func:`epochbench.experiments.plotting.save`
    (kept under this name for plug-in experiments; ``dpi`` default: the
    publication resolution)."""
    from .plotting import DPI, save
    save(fig, path, title, dpi=DPI if dpi is None else dpi)


#: the store and selection live in :mod:`epochbench.sweep` (names kept for callers)
_label, _key, _plain = _sw._label, _sw._key, _sw._plain
_load_checkpoint, _repair_tail = _sw.load_records, _sw.repair_tail


def sweep(run: Callable[[dict], list[dict]], tasks: list[dict], *, jobs: int | None = None,
          progress: bool = True, checkpoint: Path | None = None, scheduler: str | None = None,
          timing: bool = False, only: list[int] | None = None, pool: bool = False,
          done: dict[int, list[dict]] | None = None, stamp: dict | None = None) -> list[dict]:
    """Run ``run(task)`` for every task (or the indices ``only``) through
    :func:`epochbench.sweep.run_tasks`; rows in task order, each with ``task``
    (its index in ``tasks``) added.

    ``jobs``: local worker processes (default: all cores; 1 runs in this
    process); ``scheduler``: a Dask scheduler's address instead.  A task
    that raises does not stop the others; at the end
    :class:`epochbench.sweep.SweepFailed` lists every failure with its task
    and traceback.  ``checkpoint``: a JSON-lines file that gets each
    finished task's rows as it arrives; tasks already in it are not run
    again (an interrupted sweep resumes); a torn last line (a sweep killed
    mid-write) is cut off before new records are appended.  ``timing``:
    rows hold wall times: each task gets a worker to itself and its rows
    the ``host`` and ``cpu``.  Ctrl-C stops the workers and raises
    ``KeyboardInterrupt("interrupted; N of M runs saved, ...")``; losing the
    scheduler raises :class:`epochbench.sweep.SchedulerLost` (``N of M runs
    done``, ``saved`` with a checkpoint).
    ``pool``: the former process pool instead of Dask (a fixed-size pool,
    a failure stops it; kept to measure the runner against it).
    ``done``: the rows to reuse, by task index, chosen by the caller (then
    the checkpoint is only written, not read: :func:`run_experiment` says
    what it reuses); ``stamp``: keys added to each record written (which
    run and code computed the rows, :func:`epochbench.sweep.append_record`)."""
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    chosen = list(range(len(tasks))) if only is None else list(only)
    wanted = set(chosen)
    stored = _load_checkpoint(checkpoint, tasks) if done is None else done
    results: dict[int, list[dict]] = {i: r for i, r in stored.items() if i in wanted}
    todo = [i for i in chosen if i not in results]
    if progress and done is None and len(todo) < len(chosen):
        _sw.Progress(0, progress).say(f"  resuming: {len(chosen) - len(todo)} of {len(chosen)} tasks "
                                      f"done in {checkpoint}")
    if checkpoint is not None:
        _repair_tail(checkpoint)
    made = checkpoint is not None and not checkpoint.exists()
    log = open(checkpoint, "a") if checkpoint is not None else None

    def keep(i: int, rows: list[dict], *_) -> None:
        results[i] = rows
        if log is not None:
            _sw.append_record(log, tasks[i], rows, stamp)

    failures = []
    try:
        if pool and jobs != 1 and len(todo) > 1:
            _in_pool(run, tasks, todo, min(jobs or os.cpu_count() or 1, len(todo)), keep)
        else:
            call = functools.partial(_sw.rows_of, run, timing=timing)
            _, failures = _sw.run_tasks(call, tasks, todo, workers=jobs, scheduler=scheduler,
                                        progress=progress, on_result=keep, exclusive=timing)
    except KeyboardInterrupt as exc:    # Ctrl-C, or SIGTERM as the command line's Terminated: kept as it came
        saved = len(results)
        raise type(exc)(f"interrupted; {saved} of {len(chosen)} runs saved, "
                        "run the same command to resume") from None
    except _sw.SchedulerLost as exc:    # counted again: this sweep's tasks and the ones it reused
        raise _sw.SchedulerLost(exc.address, len(results), len(chosen), saved=log is not None) from None
    finally:
        if log is not None:
            empty = made and log.tell() == 0     # nothing saved (every task failed): no empty file left behind
            log.close()
            if empty:
                checkpoint.unlink(missing_ok=True)
    if failures:
        raise _sw.SweepFailed(failures, len(chosen))
    return [{**row, "task": i} for i in sorted(results) for row in results[i]]


def _in_pool(run, tasks: list[dict], todo: list[int], workers: int, finish) -> None:
    """Run ``tasks[i]`` for ``i`` in ``todo`` in ``workers`` processes, calling
    ``finish(i, rows, done)`` as each completes.  The workers ignore SIGINT
    (the parent decides) and die with the parent (:func:`_worker_init`); on
    any exception, Ctrl-C included, pending tasks are cancelled and the
    workers are terminated before the exception goes on, and so are the
    processes their tasks started (CBC): they carry the pool's tag in their
    environment (:func:`epochbench.sweep._tagged`; terminated workers left
    them running to their own time limits).  A second Ctrl-C or SIGTERM
    waits until that clean-up ends."""
    tag = _sw.sweep_tag()
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(os.getpid(), tag))
    try:
        futures = {pool.submit(_checked, run, tasks[i]): i for i in todo}
        for done, fut in enumerate(as_completed(futures), 1):
            finish(futures[fut], fut.result(), done)
    except BaseException:
        with _sw._deferred_interrupts():
            procs = list((getattr(pool, "_processes", None) or {}).values())
            manager = getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                p.terminate()
            for p in procs:
                p.join(5)
            if manager is not None:
                # let the pool's manager thread see the dead workers and close its
                # wake-up pipe now; otherwise the exit hook of concurrent.futures
                # may write into that pipe as it closes (EBADF noise on 3.11)
                manager.join(5)
            _sw._end(_sw._tagged(tag))
        raise
    pool.shutdown()


def _worker_init(parent: int, tag: str | None = None) -> None:
    """Pool initializer: ignore SIGINT and die with the parent process;
    ``tag``, the pool's, goes into the environment that the processes its
    tasks start inherit (``epochbench.sweep.SWEEP_TAG``).

    On Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` has the kernel kill the
    worker when the parent dies (``kill -9`` included); elsewhere a daemon
    thread polls :func:`os.getppid` once a second and exits the worker when
    the parent is gone."""
    import signal
    import threading

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if tag is not None:
        os.environ[_sw.SWEEP_TAG] = tag
    if _pdeathsig(signal.SIGKILL):
        if os.getppid() != parent:                     # the parent died before prctl
            os._exit(1)
        return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="epochbench-parent-watch", daemon=True).start()


def _pdeathsig(sig: int) -> bool:
    """``prctl(PR_SET_PDEATHSIG, sig)`` through libc; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, int(sig), 0, 0, 0) == 0   # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return False


def _checked(run, task: dict) -> list[dict]:
    """``run(task)`` as rows (:func:`~epochbench.sweep.as_rows`); what it
    raises, ``sys.exit`` too (it ended the command with the task's own
    status), or rows that are none, is that task's failure, named."""
    try:
        return _sw.as_rows(run(task))
    except (Exception, SystemExit) as exc:
        raise RuntimeError(f"task {task!r} failed: {type(exc).__name__}: {exc}") from exc


def _resume_without_fresh(exc: BaseException) -> None:
    """Correct the advice of a stopped ``--fresh`` run: the same command,
    ``--fresh`` again, drops the rows this run saved and starts over (it
    said "run the same command to resume")."""
    said = str(exc.args[0]) if exc.args else ""
    if RESUME in said:
        exc.args = (said.replace(RESUME, "run it again without --fresh to resume (with --fresh it starts over)"),
                    *exc.args[1:])


#: the advice that ends a stopped sweep's message (:func:`sweep`, :class:`~epochbench.sweep.SchedulerLost`)
RESUME = "run the same command to resume"


def run_experiment(name: str, opts: Options, provenance: Path | None = None,
                   argv: list[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run experiment ``name``; write ``OUT/NAME.csv``, ``OUT/NAME.png`` and
    ``OUT/NAME-table.csv``; return (all rows, summary table).  Finished runs
    go to ``OUT/NAME.partial.jsonl`` as they complete; an interrupted
    experiment started again with the same options runs only what is
    missing (rows are matched by task, so a run with other options reuses
    those of its own tasks), and once ``NAME.csv`` is written this run's
    tasks' records are dropped from it (all of them kept after a
    ``--tasks``/``--where`` subset; the file goes when it is empty; the CSV
    of a subset holds the subset, ``task`` still the index in the full
    list).  A failing task raises :class:`epochbench.sweep.SweepFailed`
    after the others finished (their rows are in the partial file).  Every
    file is written atomically and ``OUT`` is locked while the experiment
    runs (:mod:`epochbench.instances.files`): a second run on it raises
    :class:`epochbench.instances.files.OutputBusy`.

    Provenance (:mod:`epochbench.runs`) goes to ``provenance`` (default
    ``OUT/NAME.run.json``; the command line's run folders use ``OUT/run.json``),
    ``argv`` its command line.  An unfinished earlier run with the same
    options is resumed; any other earlier run's files in ``OUT`` (those its
    provenance lists) are renamed ``NAME-RUNID.*`` before this run starts
    (nothing is overwritten).

    Rows are never reused silently (:func:`reusable`): each record of the
    partial file carries the run, commit and version that computed it; a
    run that reuses rows says how many, from which file and runs, in one
    line on stderr (``--quiet`` too) and in its provenance (``reused``);
    rows of another commit or version are refused (``ValueError``) unless
    ``opts.resume``; ``opts.fresh`` recomputes every chosen task."""
    from epochbench import runs
    exps = load_experiments()
    if name not in exps:
        raise ValueError(f"unknown experiment {name!r}; known: {', '.join(sorted(exps)) or 'none'}")
    exp = exps[name]
    _check_data(exp)
    tasks = _own(exp, "tasks", opts, ok=lambda t: isinstance(t, list) and all(isinstance(x, dict) for x in t),
                 wanted="a list of dicts")
    if not tasks:
        raise ValueError(f"experiment {name!r} has no runs for these options")
    subset = opts.tasks is not None or bool(opts.where)          # --tasks "" is refused by select
    only = _sw.select(tasks, opts.tasks, opts.where) if subset else None
    if only is not None and _sw.past_the_end(opts.tasks, len(tasks)):
        print(f"epochbench experiment {name}: --tasks {opts.tasks}: {len(only)} of {len(tasks)} tasks "
              f"({_sw.format_indices(only)}); a range past the last task stops there", file=sys.stderr, flush=True)
    if _sw.probe_scheduler(opts.scheduler) is None:     # like --tasks: refused before OUT is touched
        _sw.check_workers(opts.jobs)
    out = Path(opts.out)
    prov = Path(provenance) if provenance is not None else out / f"{name}.run.json"
    with output_lock(out):
        partial = out / f"{name}.partial.jsonl"
        options = run_options(name, opts, len(tasks))
        # what --seeds (None: the default) came to, on the tasks chosen (--tasks, --where)
        options["seeds_run"] = _seeds_of(tasks if only is None else [tasks[i] for i in only])
        earlier = runs.read(prov) or {}
        resuming = (partial.exists() and earlier.get("status") != "finished"
                    and earlier.get("experiment") == name and earlier.get("options") == options["options"])
        info = runs.provenance("experiment", prov.parent.name if prov.name == runs.RUN_JSON else runs.stamp(),
                               argv=argv, **options)
        info["data"] = data_state()          # the reference data this process reads (workers: their own)
        stamp = code_stamp(info, exp)
        reused = reusable(partial, tasks, only, opts, stamp)   # refuses rows of other code: nothing changed yet
        if opts.fresh:
            _sw.drop_records(partial, [tasks[i] for i in (only or range(len(tasks)))])
        if not resuming:    # a finished run, or an unfinished one with other options: its files are kept aside
            _keep_previous_run(name, out, prov)
        else:   # the unfinished run's record too (the new one names it among the reused runs), and the outputs
            listed = _listed_files(earlier, out)
            kept = runs.keep_previous([p for p in dict.fromkeys([*_fixed_files(name, out), *listed])
                                       if p.exists()], prov)   # what it wrote (a stop while writing lists them)
            if len(kept) > 1:        # stopped while writing them (they were overwritten without a word)
                print(f"epochbench experiment {name}: the unfinished run's files in {out} are kept as "
                      f"{', '.join(p.name for p in kept)}", file=sys.stderr, flush=True)
        before = _file_stamps(name, out)
        ex = info["execution"]        # what the sweep starts for the tasks it computes (not those reused)
        ex["workers_started"] = _sw.workers_started(ex["workers"], ex["scheduler"],
                                                    len(tasks if only is None else only) - len(reused))
        if reused:
            info["reused"] = reuse_record(reused, partial, stamp)
            print(f"epochbench experiment {name}: {reuse_line(reused, len(only or tasks), partial, stamp)}",
                  file=sys.stderr, flush=True)
        runs.write(info, prov)
        try:
            rows = sweep(exp.run, tasks, jobs=opts.jobs, progress=opts.progress, checkpoint=partial,
                         scheduler=opts.scheduler, timing=exp.timing, only=only,
                         done={i: rows for i, (rows, _) in reused.items()}, stamp={**stamp, "run": info["id"]})
            df, table = _write_outputs(name, exp, rows, out, subset, partial, tasks)
        except BaseException as exc:    # the tables and figures too: a run they fail is failed, not left running
            stopped = isinstance(exc, (KeyboardInterrupt, _sw.SchedulerLost))     # not the tasks' fault
            if stopped and opts.fresh:
                _resume_without_fresh(exc)
            status = runs.exit_status_of(exc)
            wrote = sorted(p.name for p in _files_of(name, out) if before.get(p.name) != p.stat().st_mtime_ns)
            runs.finish(info, prov, "interrupted" if stopped else "failed",  # stopped while writing: what it wrote
                        error=f"{type(exc).__name__}: {exc}"[:500], **({"files": wrote} if wrote else {}), **status)
            raise
        files = sorted(p.name for p in _files_of(name, out) if p.suffix != ".png" or p.name == f"{name}.png"
                       or before.get(p.name) != p.stat().st_mtime_ns)   # figures this run wrote
        runs.finish(info, prov, rows=len(df), files=files, exit_status=0)
    return df, table


def _write_outputs(name: str, exp, rows: list[dict], out: Path, subset: bool, partial: Path, tasks: list[dict]):
    """``NAME.csv``, ``NAME-table.csv``, the extra tables and the figure of
    a finished sweep's ``rows``; returns the rows and the table as frames."""
    df = pd.DataFrame(rows)
    _write_csv(df, out / f"{name}.csv")
    table = _table(exp, "table", df)
    _write_csv(table, out / f"{name}-table.csv")
    for (key, make), file in zip(exp.extra.items(), extra_files(name)):
        _write_csv(_table(exp, f"extra[{key!r}]", df, make), out / file)
    if exp.plot is not None:
        import matplotlib
        matplotlib.use("Agg")
        _own(exp, "plot", df, out / f"{name}.png")
    if not subset:   # complete: NAME.csv holds this run's rows; other task lists' rows stay
        _sw.drop_records(partial, tasks)     # last: a table or figure that fails leaves them for a rerun
    return df, table


def _own(exp: Experiment, what: str, *args, func: Callable | None = None, ok: Callable | None = None,
         wanted: str = ""):
    """``exp.<what>(*args)`` (or ``func``); a plug-in experiment's failure
    is one line naming it (:func:`~epochbench.instances.catalog.plugin_call`),
    not a traceback from inside it: it raised, or returned what ``ok``
    refuses.  A ``ValueError`` (options it refuses) stays the caller's,
    named after the experiment."""
    func = func or getattr(exp, what)
    return plugin_call(f"experiment {exp.name!r}", CATALOG.origin(exp.name), lambda: func(*args),
                       doing=f"its {what}()", ok=ok, wanted=wanted)


def _table(exp: Experiment, what: str, df: pd.DataFrame, func: Callable | None = None) -> pd.DataFrame:
    """A table of ``exp`` (:func:`_own`), refused in one line unless a DataFrame."""
    return _own(exp, what, df, func=func, ok=lambda t: isinstance(t, pd.DataFrame), wanted="a DataFrame")


def code_stamp(info: dict, exp: Experiment | None = None) -> dict:
    """What says which code computes a run's rows: ``commit`` (git, with
    ``+dirty``; None outside a checkout), ``diff`` (with ``+dirty``, the
    hash of the uncommitted changes, :func:`epochbench.runs.git_diff`: two
    dirty trees of one commit are other code) and ``version``
    (epochbench's), from the run's provenance ``info``; and for an
    experiment ``exp`` of a plug-in's, ``plugin`` (:func:`plugin_code`:
    rows an older version of its code computed were reused as this
    code's)."""
    stamp = {"commit": info.get("git_commit"), "version": (info.get("versions") or {}).get("epochbench")}
    if info.get("git_diff"):
        stamp["diff"] = info["git_diff"]
    if exp is not None and CATALOG.origin(exp.name) != "builtin":
        stamp["plugin"] = plugin_code(exp)
    if exp is not None and exp.data:
        stamp["data"] = data_code(exp)
    return stamp


def data_code(exp: Experiment) -> str:
    """The hash of the reference data ``exp`` reads (each path of
    ``exp.data`` under :func:`~epochbench.instances.data.data_root`; a
    folder's files by name, hidden ones and editor backups (``.*``, ``*~``)
    left out; names and bytes): rows computed on another copy of a data set
    that differs (a file edited, one more in a folder the experiment reads)
    are rows of other data, while a data folder moved or copied whole keeps
    its rows.  O(bytes read), in pieces: 3 MB for KTH."""
    import hashlib
    from epochbench.instances.data import data_root
    digest = hashlib.sha256()
    root = data_root()
    for rel in exp.data:
        path = root / rel
        files = sorted(p for p in path.rglob("*") if p.is_file() and not _stray(p.relative_to(path))) \
            if path.is_dir() else [path]
        for file in files:
            digest.update(f"{file.relative_to(root).as_posix()}\0".encode())
            try:
                with open(file, "rb") as fh:
                    digest.update(hashlib.file_digest(fh, "sha256").digest())
            except OSError:                  # unreadable: the tasks that read it fail by name
                digest.update(b"unreadable")
    return digest.hexdigest()[:12]


def _stray(rel: Path) -> bool:
    """A hidden file or folder (``.DS_Store``, ``.git``) or an editor's
    backup (``name~``): not data a task reads."""
    return any(part.startswith(".") or part.endswith("~") for part in rel.parts)


def plugin_code(exp: Experiment) -> str:
    """Where a plug-in's experiment comes from and the hash of the source
    file of its ``run`` (``entry point mylab.exp:EXP, code 0f1e2d3c4b5a``):
    another version of that file is other code."""
    import hashlib
    import inspect
    try:
        digest = hashlib.sha256(Path(inspect.getsourcefile(exp.run) or "").read_bytes()).hexdigest()[:12]
    except (OSError, TypeError):
        digest = "unknown"
    return f"{CATALOG.origin(exp.name)}, code {digest}"


def _same_code(stamp: dict, code: dict) -> bool:
    """A record's ``stamp`` names the same commit, changes, version and
    reference data (:func:`data_code`) as ``code`` (a record without a
    stamp names none: it is not known to be the same; a ``+dirty`` one
    without ``diff``, from before it was recorded, neither; nor one without
    ``data`` of an experiment that reads data)."""
    return "version" in stamp and all(stamp.get(k) == code.get(k)
                                      for k in ("commit", "version", "diff", "plugin", "data"))


def reusable(partial: Path, tasks: list[dict], only: list[int] | None, opts: Options,
             code: dict) -> dict[int, tuple[list[dict], dict]]:
    """The stored rows (with their stamps) a run reuses: the records of its
    chosen tasks (``only``, default all) in ``partial``; none with ``--fresh``.

    Raises ``ValueError`` (naming ``--fresh`` and ``--resume``) when some
    were computed by another commit or version than ``code``, or by an
    unknown one, unless ``opts.resume``; ``ValueError`` naming the file
    and line when a chosen task's row holds a key or a type of value its
    code did not write (:func:`epochbench.sweep.check_rows`: edited by hand)."""
    if opts.fresh:
        return {}
    wanted = set(range(len(tasks)) if only is None else only)
    unreadable: list[int] = []
    others: list[int] = []
    every = _sw.load_stamped(partial, tasks, unreadable, others, only=wanted)   # refuses rows edited by hand
    stored = {i: rec for i, rec in every.items() if i in wanted}
    if others and not every:        # e.g. another experiment's file, or a run with other options: said, not silent
        print(f"epochbench experiment: {partial}: its {len(others)} record(s) are of tasks this run does not "
              "have (another run's options, or another experiment's): kept, none reused", file=sys.stderr)
    if unreadable:
        shown = ", ".join(map(str, unreadable[:10])) + (", ..." if len(unreadable) > 10 else "")
        print(f"epochbench experiment: {partial}: {len(unreadable)} line(s) are no record (line {shown}): "
              "skipped; a task they held runs again", file=sys.stderr)
    other = sorted(i for i, (_, st) in stored.items() if not _same_code(st, code))
    if other and not opts.resume:
        commits = sorted({_short(stored[i][1]) for i in other})
        how = "by other code"
        if all(_same_code({**stored[i][1], "data": code.get("data")}, code) for i in other):   # the data alone
            how = ("on other reference data" if all("data" in stored[i][1] for i in other)
                   else "with no record of the reference data they read")
        raise ValueError(f"{partial}: {len(other)} of the tasks chosen were computed {how} "
                         f"({', '.join(commits)}; this is {_short(code)}); "
                         "give --fresh to recompute them or --resume to reuse them")
    return stored


def _short(stamp: dict) -> str:
    """``commit 1a2b3c4d``, ``commit 1a2b3c4d+dirty (changes 0f1e2d3c4b5a)``,
    ``version 0.1.0`` (outside a checkout) or ``unknown code``; a plug-in's
    experiment adds its :func:`plugin_code` in brackets, an experiment that
    reads reference data ``(data 0f1e2d3c4b5a)`` (:func:`data_code`)."""
    commit, version = stamp.get("commit"), stamp.get("version")
    plugin = (f" ({stamp['plugin']})" if stamp.get("plugin") else "") + (f" (data {stamp['data']})"
                                                                          if stamp.get("data") else "")
    if commit:
        sha, _, dirty = commit.partition("+")
        changes = f" (changes {stamp['diff']})" if dirty and stamp.get("diff") else ""
        return f"commit {sha[:8]}" + (f"+{dirty}" if dirty else "") + changes + plugin
    return (f"version {version}" if version else "unknown code") + plugin


def reuse_record(reused: dict[int, tuple[list[dict], dict]], partial: Path, code: dict) -> dict:
    """What a run's provenance says about the rows it reused: ``tasks``
    (how many), ``indices`` (as ``--tasks`` writes them), ``from`` (the
    partial file's name, beside the provenance), the ``runs``, ``commits``
    and ``versions`` that computed them (None: unknown), the ``changes``
    (:func:`epochbench.runs.git_diff`) where a dirty tree computed some, the
    ``data`` they read (:func:`data_code`) for an experiment that reads
    reference data, and ``other_code``
    (some came from another commit or version: ``--resume``)."""
    stamps = [st for _, st in reused.values()]

    def distinct(key):
        return sorted({st.get(key) for st in stamps}, key=lambda v: (v is None, str(v)))
    return {"tasks": len(reused), "indices": _sw.format_indices(reused), "from": partial.name,
            "runs": distinct("run"), "commits": distinct("commit"), "versions": distinct("version"),
            **({"changes": distinct("diff")} if any(st.get("diff") for st in stamps) else {}),
            **({"data": distinct("data")} if "data" in code else {}),
            "other_code": any(not _same_code(st, code) for st in stamps)}


def reuse_line(reused: dict[int, tuple[list[dict], dict]], chosen: int, partial: Path, code: dict) -> str:
    """The one line a run that reuses rows prints (``--quiet`` or not):
    how many of the ``chosen`` tasks, from which file, runs and code."""
    stamps = [st for _, st in reused.values()]
    ids = sorted({str(st.get("run") or "unknown") for st in stamps})
    codes = sorted({_short(st) for st in stamps})
    other = "; not this run's code, reused as --resume asks" if any(not _same_code(st, code) for st in stamps) else ""
    return (f"{len(reused)} of {chosen} tasks reused from {partial} (run{'s' * (len(ids) > 1)} {', '.join(ids)}, "
            f"{', '.join(codes)}{other}), not recomputed; --fresh recomputes them")


def _check_data(exp: Experiment) -> None:
    """:class:`InstanceError` naming the first path of ``exp.data`` that is absent."""
    from epochbench.instances import InstanceError
    from epochbench.instances.data import data_root
    for rel in exp.data:
        path = data_root() / rel
        if not path.exists():
            raise InstanceError(f"experiment {exp.name!r} reads {path}, which is absent (set EPOCHBENCH_DATA)")


def run_options(name: str, opts: Options, count: int) -> dict:
    """What a run's provenance says about an experiment run: its
    ``options`` (what an unfinished run must match to be resumed: the
    same tasks) and its ``execution`` (``--fresh``, ``--resume``, and where
    it runs as resolved: the scheduler, ``$EPOCHBENCH_SCHEDULER``'s when no
    ``--scheduler``; the local workers, ``$EPOCHBENCH_WORKERS`` or every
    core when no ``--workers``, None with a scheduler; a resumed run may use
    others; :func:`run_experiment` adds ``workers_started``,
    :func:`epochbench.sweep.workers_started`).  ``ValueError`` naming ``$EPOCHBENCH_WORKERS`` when it is
    needed and not a positive integer."""
    scheduler = _sw.scheduler_of(opts.scheduler)
    workers = _sw.local_workers(opts.jobs, scheduler)
    return {"experiment": name, "tasks_total": count,
            "options": {"quick": opts.quick, "seeds": opts.seeds, "tasks": opts.tasks, "where": list(opts.where)},
            "execution": {"workers": workers, "scheduler": scheduler,    # not part of a resume's match
                          "fresh": opts.fresh, "resume": opts.resume}}


def _seeds_of(tasks: list[dict]) -> list | None:
    """The distinct ``seed`` values of an experiment's tasks, in order
    (None when its tasks have none): ``options.seeds`` is the command's
    ``--seeds``, null where it was left to the experiment's default."""
    seen = [t["seed"].item() if hasattr(t["seed"], "item") else t["seed"]      # a numpy number: JSON's
            for t in tasks if isinstance(t, dict) and "seed" in t]
    return list(dict.fromkeys(seen)) if seen else None


def extra_files(name: str) -> list[str]:
    """The file names of experiment ``name``'s extra tables (``NAME-KEY.csv``)."""
    exp = EXPERIMENTS.get(name)
    return [f"{name}-{key}.csv" for key in (exp.extra if exp is not None else {})]


def _fixed_files(name: str, out: Path) -> list[Path]:
    """The files of experiment ``name`` in ``out`` whose names are known
    before it runs: its CSV, table, extra tables and figure."""
    return [out / f"{name}.csv", out / f"{name}-table.csv", *(out / f for f in extra_files(name)),
            out / f"{name}.png"]


#: a figure kept aside from an earlier run (``STEM-RUNID.png``, :func:`epochbench.runs.keep_previous`):
#: not a figure of the run the folder holds (an interrupted run that drew none was given one)
KEPT = re.compile(r"-\d{8}-\d{6}(-\d+)*\.png$")


def _files_of(name: str, out: Path) -> list[Path]:
    """The files experiment ``name`` writes into ``out`` (its figures may be several)."""
    fixed = _fixed_files(name, out)
    extra = [p for p in out.glob(f"{name}-*.png") if not KEPT.search(p.name) and not any(
             p.name.startswith(f"{other}-") or p.name == f"{other}.png"
             for other in EXPERIMENTS if other != name and other.startswith(f"{name}-"))]
    return [p for p in fixed if p.exists()] + sorted(set(extra) - set(fixed))


def _file_stamps(name: str, out: Path) -> dict[str, int]:
    """Modification times of the experiment's files in ``out`` now (to tell
    the ones a run writes from figures kept from earlier runs, and a stopped
    run's tables from none)."""
    return {p.name: p.stat().st_mtime_ns for p in _files_of(name, out)}


def _listed_files(record: dict, out: Path) -> list[Path]:
    """The files in ``out`` that a run's ``record`` lists as its own (names
    only: a path elsewhere is none of this folder's)."""
    return [out / f for f in record.get("files") or [] if isinstance(f, str) and "/" not in f]


def _keep_previous_run(name: str, out: Path, prov: Path) -> None:
    """Rename an earlier run's files to ``STEM-RUNID.*``: those its
    provenance lists (figures kept from runs before it are not its own),
    else the experiment's usual ones.  Its provenance is ``prov``, or the
    folder's ``run.json`` of a ``--name`` run of this experiment (renamed
    with them: it listed those files)."""
    from epochbench import runs
    if not prov.exists():          # a run of this experiment made with --name: its record is OUT/run.json
        named = runs.read(out / runs.RUN_JSON) or {}
        if named.get("command") == "experiment" and named.get("experiment") == name:
            prov = out / runs.RUN_JSON
    listed = _listed_files(runs.read(prov) or {}, out)
    fixed = _fixed_files(name, out)
    kept = runs.keep_previous(sorted(set(listed) | set(fixed if listed else _files_of(name, out))), prov)
    if kept:    # said, as score and simulate say it
        print(f"epochbench experiment {name}: the previous run's files in {out} are kept as "
              f"{', '.join(p.name for p in kept)}", file=sys.stderr, flush=True)


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    """``df`` to ``path`` as CSV, atomically (:func:`epochbench.instances.files.atomic_path`)."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


__all__ = ["Options", "Experiment", "EXPERIMENTS", "register", "load_experiments", "sweep",
           "run_experiment", "reusable", "code_stamp"]
