"""The public face of epochbench (re-exported by the package): the few names
a user needs, each a thin, checked call into the layer below.  Names below
the face may change between versions; these may not without a deprecation.

Examples
--------
>>> import epochbench as eb
>>> fam = eb.generate("leinberger", n=6, k=2, count=2, seed=1)
>>> [r.status for r in (eb.solve(fam[0], "ff"), eb.solve(fam[0], "cpsat", time_limit=5))]
['feasible', 'optimal']
"""
from __future__ import annotations

import functools
import inspect
import os
from pathlib import Path
from typing import Callable, Iterable

from epochbench.instances.arguments import python_names
from epochbench.instances.checks import is_int, short
from epochbench.instances.core import Result
from epochbench.sim.engine import SimResult

__all__ = ["register", "solve", "score", "validate", "generate", "load", "save", "simulate", "Result", "SimResult"]


def _keywords(func: Callable) -> Callable:
    """``func`` run under :func:`~epochbench.instances.arguments.python_names`:
    a message raised in the layers below names the caller's keyword
    argument (``selector=``), not the command line's flag (``--selector``).
    Arguments its signature cannot take (a keyword it does not have, one
    missing) are one ``ValueError`` naming the function and its keywords,
    as the README promises of a bad argument: Python's own TypeError named
    neither the valid keywords nor a close one (``score(timelimit=5)``)."""
    sig = inspect.signature(func)

    @functools.wraps(func)
    def call(*args, **kwargs):
        try:
            sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise ValueError(f"{func.__name__}: {exc}{_takes(sig, kwargs)}") from None
        with python_names():
            return func(*args, **kwargs)
    return call


def _takes(sig: inspect.Signature, kwargs: dict) -> str:
    """``; it takes a, b, c`` (the names of ``sig``), with the ones meant
    (:func:`~epochbench.instances.registry.did_you_mean`) for the first
    keyword of ``kwargs`` it does not have."""
    from epochbench.instances.registry import did_you_mean
    names = [p.name for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    wrong = next((k for k in kwargs if k not in names), None)
    return f"; it takes {', '.join(names)}" + (did_you_mean(wrong, names) if wrong is not None else "")


@_keywords
def register(family: str, name: str, *, kind: str = "heuristic", origin: str | None = None):
    """Decorator: register a function as method ``name`` of ``family``.

    Parameters
    ----------
    family : str
        One of the families (``packing``, ``epochs``, ``knapsack``,
        ``assignment``, ``mapping``, and any a plug-in adds).
    name : str
        The method's name (``epochbench list``); a name the family has
        already is refused.
    kind : str
        ``heuristic`` (default), ``exact`` (``f(inst, *, time_limit,
        threads, ...)`` returning a :class:`Result` with its bound) or
        ``replay``.
    origin : str, optional
        What listings say about where it comes from (default: the module
        that registers it); ``"builtin"`` is epochbench's own and refused.

    Returns
    -------
    callable
        The decorator; it returns the function unchanged.

    Examples
    --------
    ``@eb.register("packing", "mine")`` over ``def mine(inst): return [0]``
    (the README's "Adding a heuristic").
    """
    from epochbench.instances.io import families
    from epochbench.instances.registry import register as _register
    known = families()
    if not isinstance(family, str) or family not in known:
        raise ValueError(f"family: expected one of {', '.join(known)}, got {family!r}")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name: expected a method name, got {short(name, 80)}")
    return _register(family, name, kind=kind, origin=origin)


def _path(path, what: str = "path") -> Path:
    """``path`` as a :class:`~pathlib.Path`, or ValueError for anything but
    a ``str`` or an ``os.PathLike``."""
    import os
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"{what}: expected a file path (str or pathlib.Path), got {type(path).__name__}")
    return Path(path)


def _instance(obj, what: str = "instance"):
    """``obj`` built again from its fields, checked as a file would be (its
    arrays read-only, no cached figure of arrays edited since), if it is
    an instance of a known family; else ValueError.  Every instance is:
    one made with the class itself rather than ``build`` (read-only
    arrays included, or lists), with ``dataclasses.replace`` (a demand
    cut short beside its estimates, an unknown objective), deep-copied or
    unpickled was scored unchecked, or failed inside a method.  O(size of
    the instance): 0.05 to 0.15 ms for a 64-job epoch or a 512 x 16 ETC
    matrix."""
    from epochbench.instances.core import InstanceError
    from epochbench.instances.io import families
    if getattr(obj, "kind", None) not in families() or not hasattr(obj, "to_dict"):
        hint = "; a file? epochbench.load(path) reads one" if isinstance(obj, (str, os.PathLike)) else ""
        raise ValueError(f"{what}: expected an epochbench instance ({', '.join(families())}), "
                         f"got {type(obj).__name__}{hint}")
    try:
        return type(obj).from_dict(obj.to_dict(), source=f"{what} {getattr(obj, 'name', '')}".strip())
    except InstanceError:
        raise
    except (AttributeError, TypeError, KeyError, ValueError) as exc:
        raise InstanceError(f"{what}: its fields are not a {obj.kind} instance's ({type(exc).__name__}: {exc}); "
                            f"make it with {type(obj).__name__}.build(...)") from None


@_keywords
def solve(instance, method: str, **params) -> Result:
    """Solve ``instance`` with the registered ``method``, checked.

    Parameters
    ----------
    instance : a family's instance (``PackingInstance``, ``EpochsInstance``, ...)
    method : str
        A method of the instance's family (``epochbench list``).
    **params
        ``time_limit`` (seconds, a positive finite number: the wall time of
        the whole exact call, default 10; the budget of a heuristic that has
        one, e.g. ``sa``; other heuristics do not use it) and ``threads`` (an
        integer >= 1, default 1; exact methods) as ``epochbench solve``
        takes them; any keyword the method takes (e.g. ``window=2`` for
        ``bl``).  An unknown keyword or a value the method refuses is a
        ``ValueError`` naming the method and what it accepts, before it runs.

    Returns
    -------
    Result
        ``decision``, ``value``, ``status`` (``optimal`` only when proved),
        ``bound`` (None when nothing was proved), ``seconds``, ``info``.  An
        exact method that ended without a decision (``timeout``, or a
        backend's ``infeasible``) has ``decision=()``, ``value`` NaN and
        ``bound`` None (a bound without a decision is not kept: nothing
        checked stands beside it; an ``infeasible`` where choosing nothing
        is feasible, packing, knapsack and assignment, is withdrawn:
        ``timeout``, ``info["withdrawn"]``).  The
        decision has passed the family's independent checker; it is, per
        family: packing and knapsack, the indices of the jobs selected (in
        pick order); epochs, the bins (a tuple of job indices per epoch);
        assignment, the ``(job, machine)`` pairs; mapping, the machine of
        each task.

    Raises
    ------
    ValueError
        A bad argument, before the method runs: an unknown method
        (:class:`~epochbench.instances.registry.UnknownMethod`, also a
        ``KeyError``), parameter or value, an instance that fails the
        family's checks (:class:`~epochbench.instances.core.InstanceError`).
    epochbench.instances.core.InfeasibleSolution
        The method's decision failed the family's checker (an
        ``AssertionError``, not a ``ValueError``: the method erred, not the
        caller; catch it by name).
    epochbench.instances.core.MethodFailed
        A registered method of a user's called ``sys.exit``, or a method
        changed the instance it was given
        (:class:`~epochbench.instances.core.InstanceChanged`, also a
        ``ValueError`` as it was before).

    Notes
    -----
    Cost: the method's; the check is linear in the instance's size.
    """
    from epochbench.instances.registry import get, solve as _solve

    from .methods import check_limits, check_method
    if not isinstance(method, str) or not method:
        swapped = " (the arguments are eb.solve(instance, method))" if isinstance(instance, str) else ""
        raise ValueError(f"method: expected a method name, got {short(method, 80)}{swapped}")
    instance = _instance(instance)
    m = get(instance.kind, method)
    check_limits(params.get("time_limit"), params.get("threads"))
    own = {k: params.pop(k) for k in ("time_limit", "threads") if k in params}
    own = {k: v for k, v in own.items() if v is not None}      # None: not given (as score takes it)
    if not m.exact:
        own.pop("threads", None)             # a heuristic with a budget (sa) takes time_limit; others ignore it
    check_method(instance.kind, method, params, [instance], time_limit="time_limit" in own)
    return _solve(instance, method, **own, **params)


@_keywords
def score(instances: Iterable, methods: Iterable[str] | str, *, time_limit: float = 10.0, threads: int = 1,
          references=(), params: dict | None = None, workers: int | None = 1, scheduler: str | None = None):
    """Score ``methods`` on ``instances``: one tidy row per instance and method.

    Parameters
    ----------
    instances : iterable of instances, or a family folder / instance file path
    methods : names, or one string of names separated by commas or spaces (as ``--methods``)
    time_limit, threads : exact methods' wall-time limit (s, a positive
        finite number) and threads (an integer >= 1); None: the default
    references : a result file (CSV) with reference values, or a list of
        them (see the README)
    params : ``{family: {method: {keyword: value}}}``, e.g.
        ``{"packing": {"bl": {"window": 2}}}``: every family one of the
        instances', every method one scored, every keyword and value one the
        method accepts on every instance of its family (else ``ValueError``,
        before anything runs)
    workers : 1 (default) scores in this process; N > 1 on a local Dask
        cluster of N processes, None on one of ``$EPOCHBENCH_WORKERS`` or
        every core (as ``epochbench score`` does; a script that starts one
        needs the ``if __name__ == "__main__":`` guard of multiprocessing)
    scheduler : address of a Dask scheduler to score on instead (default:
        ``$EPOCHBENCH_SCHEDULER``); its workers run the sweep, so a
        ``workers`` other than 1 or None beside one is refused, as the
        command line refuses ``--workers`` with ``--scheduler``

    Returns
    -------
    pandas.DataFrame
        Columns ``family, instance, method, kind, n, k, value, bound, gap,
        gap_kind, ref_source, beats_reference, units, status, seconds, ...``;
        ``gap`` is NaN where no reference exists (``gap_kind == "no bound"``).

    Raises
    ------
    ValueError
        A bad argument, before anything runs (``references`` are file
        paths: a DataFrame is refused).
    epochbench.scoring.SolverDisagreement
        The proofs, bounds or reference values of some instance disagree
        (a ``RuntimeError``, raised after every instance was scored): its
        ``table`` attribute is the whole table, the rows of those instances
        with no gap and ``error`` = ``"disagreement: ..."``, as the command
        line writes it.
    """
    from .scoring import score as _score
    if isinstance(methods, str):                # split as the command line's --methods: commas and spaces
        from epochbench.instances.checks import split_names
        methods = split_names(methods, "methods")
    if not isinstance(methods, Iterable) or isinstance(methods, (set, frozenset, dict)):   # no order of their own
        raise ValueError(f"methods: expected method names in a list or one string of names separated by commas "
                         f"or spaces, got {methods!r}")
    methods = list(methods)
    if not methods:
        raise ValueError("methods: give at least one method name")
    if not all(isinstance(m, str) and m for m in methods):
        raise ValueError(f"methods: expected method names, got {methods!r}")
    workers = _workers(workers, scheduler)
    if isinstance(instances, (str, Path)):
        from epochbench.instances.io import read_family
        path = Path(instances)
        instances = read_family(path) if path.is_dir() else [load(path)]
    elif hasattr(instances, "kind") or not isinstance(instances, Iterable):
        raise ValueError(f"instances: expected a list of instances or a path, got {type(instances).__name__}")
    instances = [_instance(inst, f"instances[{i}]") for i, inst in enumerate(instances)]
    if not instances:
        raise ValueError("instances: none given (the command line refuses an empty folder too)")
    if isinstance(references, (str, Path)):     # one file, as ``methods`` takes one string
        references = [references]
    if hasattr(references, "columns"):
        raise ValueError("references: give the reference files' paths (a DataFrame is not read)")
    if isinstance(references, (dict, set, frozenset)):
        raise ValueError(f"references: give the reference files' paths in a list, got {type(references).__name__}")
    from epochbench.instances.registry import DEFAULT_TIME_LIMIT
    time_limit, threads = DEFAULT_TIME_LIMIT if time_limit is None else time_limit, 1 if threads is None else threads
    return _score(instances, methods, time_limit=time_limit, threads=threads,     # None: the default, as
                  references=references, params=params, workers=workers, scheduler=scheduler)   # eb.solve


def _workers(workers, scheduler=None) -> int | None:
    """``workers`` as an int (None stays None); ValueError unless it is an
    integer from 1 to :data:`epochbench.sweep.MAX_WORKERS`, or when it sizes
    a local cluster (more than 1) beside a scheduler (``scheduler``, else
    ``$EPOCHBENCH_SCHEDULER``), whose workers run the sweep instead: one of
    the two would be ignored."""
    from .sweep import MAX_WORKERS, SCHEDULER_ENV, _text, scheduler_of
    if workers is not None and (not is_int(workers) or not 1 <= workers <= MAX_WORKERS):
        raise ValueError(f"workers: must be an integer from 1 to {MAX_WORKERS} or None, got {workers!r}")
    _text(scheduler)
    address = scheduler_of(scheduler)
    if workers is not None and workers != 1 and address is not None:
        why = "the scheduler's workers run the sweep and workers sizes a local one"
        if (scheduler or "").strip():
            raise ValueError(f"workers={workers} and scheduler={scheduler!r}: {why}; give one of them")
        raise ValueError(f"workers={workers} and ${SCHEDULER_ENV} ({address}): {why}; unset {SCHEDULER_ENV} "
                         "to run on local workers")
    return None if workers is None else int(workers)


@_keywords
def validate(func: Callable, family: str = "packing", *, count: int = 30, seed: int = 0,
             time_limit: float = 10.0, exact: str = "cpsat", workers: int | None = 1,
             scheduler: str | None = None, label: str | None = None):
    """Check a user's heuristic ``func(instance) -> decision`` on edge cases
    and ``count`` random instances of ``family``; every answer is checked
    and scored against ``exact``'s proven optimum next to the built-ins.

    Parameters
    ----------
    func : callable
        ``func(instance)`` returning a decision of the family's form (see
        :func:`solve`).  It gets a copy of each instance (read-only arrays
        as the original's); its answer is checked on the original, and
        changing the copy (``meta``, or an array made writable) is a
        failure.  It runs without a time limit.
    family : str
        The family whose instances it is given (default ``packing``; the
        five built-in families).
    count : int
        Random instances besides the edge cases (an integer >= 0; 0: the
        edge cases alone).
    seed : int
        Seed of the random instances (an integer >= 0).
    time_limit : float
        The exact reference's wall-time limit per instance (seconds, a
        positive finite number; None: the default).
    exact : str
        The family's exact method whose optimum the answers are scored
        against (default ``cpsat``).
    workers, scheduler
        As in :func:`score` (``func`` travels to the workers by pickle).
    label : str, optional
        Its name in the table and the failure lines (default its
        ``__name__``).

    Returns
    -------
    Verdict
        ``ok`` (every answer feasible, no false claim, no instance changed),
        ``failures`` (one line each, empty when ``ok``), ``table``
        (per-instance gaps and times; a gap is NaN for an answer that is
        no decision, or not a feasible one, and where the reference gives no
        bound; an answer that fails by a false claim alone, a wrong value or
        a false ``optimal``, keeps the gap of its decision).

    Raises
    ------
    ValueError
        A bad argument, before anything runs.
    MethodFailed
        ``exact`` is a user's method and failed on an instance: it raised,
        or gave a decision the checker refuses (``func``'s own failures are
        the verdict's, not raised).

    Notes
    -----
    Cost: ``count`` plus the edge cases times (``func`` + the built-ins +
    one exact solve of at most ``time_limit``).
    """
    from .methods import check_limits
    from .validation import validate as _validate
    if not callable(func):
        raise ValueError(f"func: expected a function, got {type(func).__name__}")
    check_limits(time_limit)
    workers = _workers(workers, scheduler)
    if label is not None and (not isinstance(label, str) or not label.strip()):
        raise ValueError(f"label: expected a name, got {label!r}")
    from epochbench.instances.registry import DEFAULT_TIME_LIMIT
    time_limit = DEFAULT_TIME_LIMIT if time_limit is None else time_limit
    return _validate(func, family, count=count, seed=seed, time_limit=time_limit, exact=exact, workers=workers,
                     scheduler=scheduler, label=label)


@_keywords
def generate(name: str, **params) -> list:
    """Instances of generator ``name``, deterministic by ``seed``.

    Parameters
    ----------
    name : str
        A generator (``epochbench generate --help`` lists them; unknown
        names raise ``ValueError`` naming the known ones).
    **params
        The generator's parameters (``epochbench generate NAME --help``).
        ``seed`` left out is the generator's default (0 for the
        built-ins); given, it is an integer >= 0: ``seed=None`` is a
        ``ValueError`` (it silently meant seed 0), unless the generator's
        own default is None; so is None for any other parameter whose
        default is not None (``n=None`` meant the default n).

    Returns
    -------
    list or Stream
        The instances, in order; ``workload`` gives a job stream instead
        (a :class:`~epochbench.instances.workloads.Stream`: ``jobs``,
        ``capacity``, ``meta``).

    Raises
    ------
    ValueError
        An unknown generator or parameter, or a value the generator
        refuses (the message names the known ones or the parameter).

    Notes
    -----
    Cost: linear in the instances' sizes for the random generators; the
    data-folder generators (``vbp``, ``orlib-*``) read their files.
    """
    from epochbench.instances.generators import generate as _generate
    _explicit_nones(name, params)
    return _generate(name, **params)


def _explicit_nones(name: str, params: dict) -> None:
    """ValueError for a parameter given as None to generator ``name`` whose
    default is not None (a None would stand for that default: ``seed=None``
    the same instances as ``seed=0``, ``n=None`` the default size, without
    saying so).  Other values are the generator's to check (an integer
    >= 0 for a seed; a bool or a string is refused there)."""
    nones = [k for k, v in params.items() if v is None]
    if not nones:
        return
    from epochbench.instances.generators import GENERATOR_PARAMS, load_generators
    load_generators()
    spec = GENERATOR_PARAMS.get(name, {})
    for key in nones:
        if key in spec and spec[key].default is not None:
            if key == "seed":
                raise ValueError(f"seed: must be an integer >= 0, got None (seeds are explicit: leave seed out "
                                 f"for the default, {spec[key].default!r})")
            raise ValueError(f"{key}: got None, which is no value of it (leave {key} out for the default, "
                             f"{spec[key].default!r})")


@_keywords
def load(path):
    """Read one instance file.

    Parameters
    ----------
    path : str or os.PathLike
        A JSON instance file, as :func:`save` or ``epochbench generate``
        writes one (a family folder is read by :func:`score`).

    Returns
    -------
    instance
        The family's instance (``PackingInstance``, ``EpochsInstance``,
        ...), checked as every instance is; its arrays are read-only.

    Raises
    ------
    ValueError
        ``path`` is no path.
    epochbench.instances.core.InstanceError
        The file is missing, not JSON, or not an instance of a known
        family (the message names the field at fault); a ``ValueError``.
    """
    from epochbench.instances.io import load_instance
    return load_instance(_path(path))


@_keywords
def save(instance, path, *, overwrite: bool = False) -> None:
    """Write ``instance`` to ``path`` as JSON (atomically).

    Parameters
    ----------
    instance : an instance, or a list of instances
        One instance is written to the file ``path``; a list makes ``path``
        a family folder as ``generate`` writes one (``NAME.json`` each and
        ``manifest.json``, for :func:`score`).
    path : str or os.PathLike
        The file (its folder must exist) or the family folder.
    overwrite : bool
        One instance only: replace a file already at ``path`` (default
        False: a ``FileExistsError``, nothing is overwritten, as
        ``generate`` refuses).  A folder that holds a family or one of the
        list's files is refused whatever ``overwrite`` says.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        A bad argument (a job stream is written with
        :func:`~epochbench.instances.jobs.save_workload`), or one instance
        to a ``path`` that is a folder.
    FileExistsError
        ``path`` exists and ``overwrite`` is False.
    epochbench.instances.core.InstanceError
        An instance that fails its family's checks, two instances of one
        name, or a folder that already holds a family.
    """
    from epochbench.instances.io import save_instance, write_family
    import numpy as np
    if not isinstance(overwrite, (bool, np.bool_)):          # "no" is truthy: it overwrote
        raise ValueError(f"overwrite: expected True or False, got {overwrite!r}")
    path = _path(path)
    from epochbench.instances.workloads import Stream
    if isinstance(instance, Stream):             # a namedtuple: it read as a list of instances
        raise ValueError("instance: a job stream (a Stream, from eb.generate('workload')) is no instance: write "
                         "it with epochbench.instances.jobs.save_workload(make_workload(s.jobs, s.capacity), path) "
                         "(.swf, .csv or .parquet)")
    if isinstance(instance, (list, tuple)):
        write_family(path, [_instance(i) for i in instance], generator="epochbench.save", params={})
        return
    inst = _instance(instance)
    if Path(path).is_dir():          # "pass overwrite=True" then said "cannot write (Is a directory)"
        raise ValueError(f"{path}: is a folder; save one instance to a file (e.g. {Path(path) / (inst.name + '.json')}), "
                         "or a list of instances to a new folder")
    if not overwrite and Path(path).exists():
        raise FileExistsError(f"{path}: already exists; save to a new file or pass overwrite=True")
    save_instance(inst, path)


@_keywords
def simulate(workload=None, policy: str = "easy", machine: str | None = None, *, nodes: int | None = None,
             kill_at_estimate: bool | None = None, **options) -> SimResult:
    """Replay a job stream under a registered policy (``epochbench list
    --policies``) on the ``pool``, ``gang`` or ``farm`` machine.

    Parameters
    ----------
    workload : Workload, path, (jobs, capacity) or None
        A :class:`~epochbench.instances.jobs.Workload`, a path (SWF, CSV,
        Parquet) or ``(jobs, capacity)``; None for the farm's generated
        stream.
    policy : str
        A policy of the machine (default ``easy``).
    machine : {"pool", "gang", "farm"}, optional
        Default: the first machine that has ``policy``.
    nodes : int, optional
        For a path only: the machine's processors, as ``--nodes``.
    kill_at_estimate : bool, optional
        For a path only: False lets jobs run past their estimates, as
        ``--no-kill`` (a Workload or a ``(jobs, capacity)`` pair has it
        already: ``make_workload(jobs, capacity, kill_at_estimate=False)``).
    **options
        The policy's and machine's options (``epochbench list --policies``).
        ``selector`` (a packing method that picks the jobs to start at each
        step) and ``selector_options`` (a dict given to it at every step:
        ``time_limit``, seconds per step, a positive finite number, and
        ``threads`` for an exact selector, and the method's own
        parameters, all checked before the run starts).  ``engine`` (pool
        machine): ``"auto"`` (default) takes the compiled loop where the
        policy has one (or, for a short EASY stream in a process that has
        not loaded the compiled kernels, its pure-Python twin: the result's
        ``engine`` then says ``"python"``), ``"fast"`` insists on the
        compiled loop, ``"generic"`` runs the Python engine; the schedules
        are the same (the tests compare them job for job).
        ``progress`` and ``on_pass`` are functions, checked before the run
        against what each machine's loop passes them: pool
        ``on_pass(time, machine, queue, started)`` and
        ``progress(arrived, now)``; gang ``on_pass(time, sim)`` and
        ``progress(arrived, now)``; farm ``on_pass(view, plan)`` and
        ``progress(done, now, total)``.  ``seed`` is an integer >= 0 (None
        is refused).

    Returns
    -------
    SimResult
        ``jobs`` (one row per job), ``policy``, ``options``, ``machine``,
        ``passes``, ``seconds``, ``engine``, ``capacity``; ``summary()`` the
        metrics, ``extras`` the machine's own results (see
        :func:`epochbench.sim.runner.simulate`).

    Raises
    ------
    ValueError
        A bad argument, before the run (an unknown option names the
        policy's own).
    epochbench.instances.core.MethodFailed
        A ``selector`` raised or gave a decision the checker refuses (a
        ``RuntimeError`` naming the selector, the step, the time and the
        candidate jobs).
    epochbench.sim.engine.RunStalled
        The run ended with jobs that never started (a selector that chose
        nothing on an idle machine: then also a ``MethodFailed`` naming the
        selector, :class:`epochbench.sim.pool.SelectorStalled`).

    Notes
    -----
    Cost: that of the machine's event loop (see
    :func:`epochbench.sim.runner.simulate`).
    """
    from epochbench.sim.runner import simulate as _simulate

    from .checks import python_options
    selector = None
    if options.get("selector_options") is not None:     # the policy is made only to name its step then
        selector = options.get("selector") or _implied_selector(policy, machine)
        _selector_options(selector, options["selector_options"])
    if "seed" in options and options["seed"] is None:   # None is "not given" below: the default seed, silently
        raise ValueError("seed: must be an integer >= 0, got None (seeds are explicit: leave seed out for the "
                         "default, 0)")
    options = python_options(options)                  # as the command line checks its options' text
    workload = _read_with(workload, nodes, kill_at_estimate)
    if selector is not None:
        _selector_values(selector, options["selector_options"], workload)
    from epochbench.sim.registry import OptionError
    try:
        return _simulate(workload, policy, machine=machine, **options)
    except OptionError as exc:                         # the policy's own list; this call's keywords too
        if "unknown option" not in str(exc):
            raise
        more = OptionError(f"{exc.args[0]}; and, for any policy, machine, engine (pool), on_pass, progress, nodes "
                           "and kill_at_estimate (a workload read from a file)")
        more.hint = exc.hint
        raise more from None


def _read_with(workload, nodes, kill_at_estimate):
    """``workload`` read with the reader's ``nodes`` / ``kill_at_estimate``
    when either is given (a path only: ValueError otherwise)."""
    import os
    given = {k: v for k, v in (("nodes", nodes), ("kill_at_estimate", kill_at_estimate)) if v is not None}
    if not given:
        return workload
    if not isinstance(workload, (str, os.PathLike)):
        raise ValueError(f"{', '.join(given)}: for a workload read from a file; a Workload or (jobs, capacity) "
                         "has its capacity and kill rule (make_workload(jobs, capacity, kill_at_estimate=...))")
    if "kill_at_estimate" in given and type(kill_at_estimate).__name__ not in ("bool", "bool_"):   # numpy's too
        raise ValueError(f"kill_at_estimate: True or False, got {kill_at_estimate!r}")
    if "nodes" in given and not (is_int(nodes) and nodes >= 1):
        raise ValueError(f"nodes: a whole number of processors >= 1 (an int), got {nodes!r}")
    from epochbench.instances.jobs import load_workload
    return load_workload(workload, **{k: (int(v) if k == "nodes" else bool(v)) for k, v in given.items()})


def _implied_selector(policy, machine) -> str | None:
    """The packing step a pool policy takes by its name (``bl-easy``: ``bl``),
    whose options ``selector_options`` may set without a ``selector``; None
    for a policy without one, or one that cannot be made (its own error
    comes from the run)."""
    if machine not in (None, "pool") or not isinstance(policy, str):
        return getattr(policy, "selector", None)
    from epochbench.sim.policies import make
    try:
        return getattr(make(policy), "selector", None)
    except (ValueError, TypeError, KeyError):
        return None


def _selector_values(selector, opts, workload) -> None:
    """ValueError unless the packing method ``selector``'s ``check_params``
    hook takes ``opts`` on a one-job epoch with the workload's resources
    (as ``simulate --param`` checks them): a value only the hook refuses
    (BL's ``window=-1``, LOS's ``resource`` beyond K) failed at the first
    backfill step, or never when no step had candidates."""
    from epochbench.instances.packing import PackingInstance

    from .methods import check_on
    cap = getattr(workload, "capacity", None)          # a FarmStream has none: no selector either
    k = 0 if cap is None else len(cap)
    params = {key: v for key, v in opts.items() if key not in ("time_limit", "threads")}
    if k and params:
        epoch = PackingInstance.build([2] * k, [[1] * k], meta={"name": f"an epoch of the workload's K = {k}"})
        check_on("packing", selector, params, [epoch], prefix="selector_options: ")


def _selector_options(selector, opts) -> None:
    """ValueError unless ``opts`` (``simulate``'s ``selector_options``) are
    limits and parameters the packing method ``selector`` takes."""
    from .methods import check_limits, check_method
    if opts is None:
        return
    if not isinstance(opts, dict):
        raise ValueError(f"selector_options: expected a dict of keyword arguments, got {opts!r}")
    if selector is None:
        raise ValueError("selector_options: given without a selector")
    try:
        check_limits(opts.get("time_limit"), opts.get("threads"))
    except ValueError as exc:
        raise ValueError(f"selector_options: {exc}") from None
    check_method("packing", selector, {k: v for k, v in opts.items() if k not in ("time_limit", "threads")},
                 prefix="selector_options: ")
