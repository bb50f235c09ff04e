"""One simulator face over the three machine models.

:func:`simulate` replays a job stream under a registered policy
(:mod:`epochbench.sim.registry`) on the space-shared pool, the
gang-scheduling matrix or the farm with licenses, and returns a
:class:`~epochbench.sim.engine.SimResult` (the gang and farm results are
subclasses with their extras).  :func:`report` and :func:`write_run` give
every machine the same ``report.json`` keys and one ``jobs.csv`` writer.
"""
from __future__ import annotations

import numbers
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np

from epochbench.instances.arguments import arg

from . import registry
from .engine import SimResult

#: top-level keys of every ``report.json`` (machine-specific content under ``extras``)
REPORT_KEYS = ("machine", "workload", "policy", "options", "engine", "capacity", "jobs", "dropped",
               "kill_at_estimate", "seconds", "jobs_per_second", "passes", "metrics", "extras",
               "adjusted", "killed_at_estimate", "capacity_from", "small_threshold", "tau", "unused")


class NoEffect(UserWarning):
    """An option given that changes nothing in this run (``exact_time_limit``
    of a CS policy whose steps are all heuristics): the run goes on, and the
    command line prints the warning as one note."""


class BadArgument(TypeError, ValueError):
    """An argument of the wrong kind: the ``TypeError`` it is, and the
    ``ValueError`` the library promises for a bad argument."""


def _jobs_and_capacity(workload) -> tuple:
    """``(jobs, capacity, dropped)`` of a :class:`~epochbench.instances.jobs.Workload`,
    a path of one, or a ``(jobs, capacity)`` pair; ``dropped``: the jobs
    the workload rules left out, by reason.  A workload without a job to
    run is refused as an empty file is
    (:func:`~epochbench.instances.jobs.require_jobs`): its metrics were all NaN."""
    from epochbench.instances.jobs import Workload, load_workload, make_workload, require_jobs
    if isinstance(workload, (str, Path)):
        workload = load_workload(workload)
    if isinstance(workload, tuple) and len(workload) == 2:
        from epochbench.instances.table import Columns
        jobs, capacity = workload
        if isinstance(jobs, Columns) and "duration" in jobs.columns:   # already the simulator's job table
            require_jobs(jobs)
            return jobs, capacity, {}
        w = require_jobs(make_workload(jobs, capacity))   # a user's table: read by the workload rules (which copy
        return w.table, w.capacity, dict(w.dropped)      # what they would share with it)
    if isinstance(workload, Workload):
        require_jobs(workload)
    dropped = dict(getattr(workload, "dropped", None) or {})
    if hasattr(workload, "table") and hasattr(workload, "capacity"):
        return workload.table, workload.capacity, dropped  # numpy columns: no pandas on the pool's path
    if hasattr(workload, "jobs") and hasattr(workload, "capacity"):
        return workload.jobs, workload.capacity, dropped
    raise BadArgument(f"workload: expected a Workload, a path or (jobs, capacity), got {type(workload).__name__}")


def _pool(workload, policy, *, record=None, **options) -> SimResult:
    """The pool; ``record(policy_object) -> on_pass hook`` (e.g.
    :class:`~epochbench.sim.record.EpochRecorder`) sees every pass."""
    from .pool import simulate_pool
    jobs, cap, dropped = _jobs_and_capacity(workload)
    if record is not None:
        from .policies import make
        run = {k: options.pop(k) for k in ("engine", "progress") if k in options}
        policy = make(policy, **options)
        return _with_dropped(simulate_pool(jobs, cap, policy, on_pass=record(policy), **run), dropped)
    return _with_dropped(simulate_pool(jobs, cap, policy, **options), dropped)


def _asked(result: SimResult, policy: str) -> SimResult:
    """``result`` recorded under ``policy``, the name the run was asked for:
    a plug-in's factory returns a built-in gang policy's name or a farm
    policy named after its own rule (as the pool's ``label``)."""
    result.policy = policy
    return result


def _with_dropped(result: SimResult, dropped: dict) -> SimResult:
    """``result`` with ``dropped`` (the jobs the workload rules left out) recorded."""
    result.dropped = dict(dropped)
    return result


def _gang(workload, policy, **options) -> SimResult:
    from .gang import simulate_gang
    jobs, cap, dropped = _jobs_and_capacity(workload)
    jobs = jobs.to_frame() if hasattr(jobs, "to_frame") and not hasattr(jobs, "iloc") else jobs
    limit = options.get("migration_limit", 64)
    if isinstance(limit, numbers.Real) and not isinstance(limit, bool) and limit < 0:   # -1: no limit (the others:
        options["migration_limit"] = None                                                # simulate_gang says)
    if options.pop("selector", None):
        raise ValueError(f"{arg('selector')} applies to the space-shared policies only")
    import inspect
    takes = [p for p in inspect.signature(simulate_gang).parameters if p not in ("jobs", "capacity", "policy")]
    unknown = sorted(set(options) - set(takes))
    if unknown:                        # on_pass and progress: every machine's, which eb.simulate's message adds
        own = [p for p in takes if p not in ("on_pass", "progress")]
        raise registry.OptionError(f"policy {policy!r} (gang): unknown option {unknown[0]!r}; it takes "
                                   f"{', '.join(own)}")
    from .gang import GANG_POLICIES
    name = registry.made("gang", policy, {}, lambda p: isinstance(p, str) and p in GANG_POLICIES,
                         f"the name of a gang policy ({', '.join(GANG_POLICIES)})")
    return _asked(_with_dropped(simulate_gang(jobs, cap, name, **options), dropped), policy)


_STREAM = {"farm_jobs": "jobs", "machines": "machines", "licenses": "licenses", "interarrival": "interarrival",
           "seed": "seed"}


def _farm(workload, policy, *, on_pass=None, progress=None, **options) -> SimResult:
    from epochbench.instances import farm as _farm_model
    from .farm import FarmStream, generate_stream, simulate_farm
    stream_kw = {_STREAM[k]: options.pop(k) for k in list(options) if k in _STREAM}
    if workload is not None and not isinstance(workload, FarmStream):
        raise ValueError("the farm machine generates its own stream ([capannini2007] section 6): give no workload, "
                         "or a FarmStream")
    stream = workload if workload is not None else generate_stream(**stream_kw)
    constants = options.pop("cs_constant", None) or []
    kw, limit_given = {}, False
    if policy.startswith("cs-"):
        # as registry.check_applies: the default (the command line passes it) counts as not given
        default = registry.OPTIONS["farm"]["exact_time_limit"].default
        limit_given = options.get("exact_time_limit") not in (None, default)
        kw = {"matcher": options.pop("matcher", None), "knapsack": options.pop("mkp", "greedy-mkp"),
              "exact_time_limit": options.pop("exact_time_limit", 1.0), "oracle_every": options.pop("oracle_every", 0),
              "constants": _farm_model.Constants.parse(constants, preemptive=policy.endswith("-p"))}
    elif constants:
        raise ValueError(f"{arg('cs_constant')} applies to the CS policies only, not {policy!r}")
    else:
        for key in ("matcher", "mkp", "exact_time_limit", "oracle_every"):
            options.pop(key, None)
    if options:                       # as the pool's and the gang's: naming what the policy takes
        known = [*_STREAM, *(o.name for o in registry.OPTIONS["farm"].values() if not o.applies or policy in o.applies
                             if o.name not in _STREAM)]
        raise registry.OptionError(f"policy {policy!r} (farm): unknown option {sorted(options)[0]!r}; it takes "
                                   f"{', '.join(dict.fromkeys(known))}")
    from .farm import FarmPolicy
    made = registry.made("farm", policy, kw, lambda p: isinstance(p, FarmPolicy),
                         "a farm policy (epochbench.sim.farm.FarmPolicy)")
    if limit_given and not made.exact_steps():
        warnings.warn(NoEffect(f"{arg('exact_time_limit')} has no effect: it limits a CS policy's exact steps "
                               f"(an exact {arg('matcher')} or {arg('mkp')}, or {arg('oracle_every')}), and "
                               f"{policy} with {made.matcher} and {made.knapsack} has none"), stacklevel=3)
    return _asked(simulate_farm(stream, made, on_pass=on_pass, progress=progress), policy)


#: the machine runners: ``run(workload, policy, **options) -> SimResult``
RUNNERS: dict[str, Callable[..., SimResult]] = {"pool": _pool, "gang": _gang, "farm": _farm}


def simulate(workload=None, policy: str = "easy", *, machine: str | None = None, **options) -> SimResult:
    """Replay a job stream under a registered policy on one machine model.

    Parameters
    ----------
    workload : Workload, path, (jobs, capacity) or None
        The job stream (:mod:`epochbench.instances.jobs`; SWF, CSV or Parquet
        by path).  The farm generates its own stream from its options
        (``farm_jobs``, ``machines``, ``licenses``, ``interarrival``,
        ``seed``) when ``workload`` is None.
    policy : str
        A policy of :func:`epochbench.sim.registry.policies`.
    machine : {"pool", "gang", "farm"}, optional
        Default: the first machine that has ``policy`` (``pool`` for
        ``easy``; ``gang`` for ``gs``, ``bgs``, ``mgs``, ``mbgs``; ``farm``
        for the ``cs-*`` policies).
    **options
        The policy's and machine's options (``epochbench list --policies``
        lists them), plus the pool's ``selector``, ``selector_options`` and
        ``engine``, every machine's ``on_pass`` and ``progress``, and the
        gang's ``recorder``.  None means "the default".

    Returns
    -------
    SimResult
        ``jobs`` (one row per job), ``policy``, ``options``, ``machine``,
        ``passes``, ``seconds``, ``engine``, ``capacity``; ``summary()`` the
        metrics, ``extras`` the machine's own results (gang: capacity-loss
        parts and migration counts; farm: the stream and the policy's stats).

    Notes
    -----
    Cost: that of the machine's event loop (see :func:`epochbench.sim.pool.simulate_pool`,
    :func:`epochbench.sim.gang.simulate_gang`, :func:`epochbench.sim.farm.simulate_farm`).
    """
    machine = registry.machine_of(policy, machine)
    registry.get_policy(machine, policy)                       # KeyError naming the machine's policies
    registry.machine_options(machine)
    options = {k: v for k, v in options.items() if v is not None}
    registry.check_applies(machine, policy, options)
    registry.check_hooks(machine, options)
    return _reportable(RUNNERS[machine](workload, policy, **options), machine, policy)


def _reportable(result: SimResult, machine: str, policy: str) -> SimResult:
    """``result``, unless a plug-in policy's ``options()`` returned what a
    report cannot hold (strict JSON): then
    :class:`~epochbench.instances.core.MethodFailed`, one line naming it
    (``simulate --json`` and ``--out`` ended in a traceback after the run)."""
    origin = registry.POLICIES.origin((machine, policy))
    if origin == "builtin":
        return result
    from epochbench.instances.core import MethodFailed, json_text
    try:
        json_text(result.options)
    except (TypeError, ValueError) as exc:
        raise MethodFailed(f"policy {policy!r} ({origin}): its options() returned what a report cannot hold: "
                           f"{' '.join(str(exc).split())}") from exc
    return result


def report(result: SimResult, workload=None, *, metrics: dict | None = None, source: str | None = None,
           small_threshold: int = 32) -> dict:
    """The run's report with :data:`REPORT_KEYS` (the same for every machine):
    besides the run and its metrics, what its numbers depend on and the
    input does not say: the estimates the workload changed (``adjusted``,
    by reason), the jobs killed at their estimate (``killed_at_estimate``:
    runtime > estimate with ``kill_at_estimate``), where the machine size
    came from (``capacity_from``, when the workload says), and the small
    jobs' threshold (processors) and the bounded slowdown's ``tau`` (s),
    None on the farm, whose figures use neither (its slowdown is
    unbounded, [capannini2007] section 6); ``unused``: the workload's
    columns that the contract names and this machine does not read, with
    the jobs that give them a value (``deadline``, ``licenses``: a
    deadline of 5 s on a job that ended at 10 passed without a word)."""
    from .metrics import TAU
    metrics = result.summary(workload, small_threshold) if metrics is None else metrics
    meta = getattr(workload, "meta", None) or {}
    return {"machine": result.machine,
            "workload": source if source is not None else getattr(workload, "source", None),
            "policy": result.policy, "options": result.options, "engine": result.engine,
            "capacity": np.asarray(result.capacity).tolist(), "jobs": result.n,
            "dropped": dict(getattr(workload, "dropped", None) or result.dropped or {}),
            "kill_at_estimate": getattr(workload, "kill_at_estimate", None),
            "seconds": result.seconds, "jobs_per_second": result.jobs_per_second, "passes": result.passes,
            "metrics": metrics, "extras": result.extras,
            "adjusted": dict(meta.get("adjusted") or {}), "killed_at_estimate": _killed(workload),
            "capacity_from": meta.get("capacity_from"),
            **({"small_threshold": None, "tau": None} if result.machine == "farm" else
               {"small_threshold": int(small_threshold), "tau": TAU}),
            "unused": _unused(workload)}


#: the job table's optional columns that no simulation of a workload reads (the farm's jobs carry their
#: own deadlines and licenses: it takes no workload), and how a job says it has none
UNREAD = {"deadline": lambda col: ~np.isnan(np.asarray(col, dtype=float)),
          "licenses": lambda col: np.asarray(np.asarray(col) != "", dtype=bool)}


def _unused(workload) -> dict:
    """Per column of :data:`UNREAD` that ``workload`` gives a value on some
    job, how many jobs it does (empty without a workload)."""
    jobs = getattr(workload, "table", None)
    if jobs is None:
        return {}
    out = {}
    for name, given in UNREAD.items():
        if name in jobs:
            n = int(given(jobs[name]).sum())
            if n:
                out[name] = n
    return out


def _killed(workload) -> int | None:
    """Jobs of ``workload`` that a run kills at their estimate (runtime above
    it, with ``kill_at_estimate``); None without a workload's columns."""
    jobs = getattr(workload, "table", None)
    if jobs is None or not getattr(workload, "kill_at_estimate", False):
        return None if jobs is None else 0
    return int((np.asarray(jobs["runtime"]) > np.asarray(jobs["estimate"])).sum())


def to_json(obj, **kw) -> str:
    """Strict JSON text of a report (numpy values as plain numbers, NaN as null)."""
    from epochbench.instances.core import json_text
    return json_text(obj, **kw)


def write_run(out, result: SimResult, rep: dict, workload=None) -> None:
    """``OUT/jobs.csv`` (:meth:`SimResult.job_table`) and ``OUT/report.json``,
    each written atomically.  ``jobs.csv`` is written column by column by
    pyarrow's CSV writer (:meth:`~epochbench.instances.table.Columns.write_csv`;
    NaN as an empty field, booleans as true/false), not row by row."""
    from epochbench.instances.files import atomic_path, write_text
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "jobs.csv") as tmp:
        result.job_columns(workload).write_csv(str(tmp))
    write_text(out / "report.json", to_json(rep, indent=1))
