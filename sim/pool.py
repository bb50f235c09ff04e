"""The space-shared K-resource pool machine: :func:`simulate_pool` runs a
policy of the registry (:mod:`epochbench.sim.registry`) on the generic event
engine (:mod:`epochbench.sim.engine`) or, where one exists, on its compiled
fast path (:func:`epochbench.sim.policies.run_fast`, tested for identical
schedules against the generic engine)."""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from epochbench.instances.catalog import plugin_label
from epochbench.instances.core import MethodFailed
from epochbench.instances.table import as_columns

from . import policies
from .engine import ENGINES, Engine, JobTable, PassHook, Policy, PoolMachine, RunStalled, SimResult, result_columns
from .profile import CompiledProfile


class SelectorStalled(MethodFailed, RunStalled):
    """A run with a selector stalled (:class:`~epochbench.sim.engine.RunStalled`):
    the selector's last steps on an idle machine chose nothing.  Both the
    selector's fault (:class:`~epochbench.instances.core.MethodFailed`, which
    names it) and a stalled run, so that either ``except`` catches it, as
    :func:`epochbench.simulate` documents both.  ``queued`` and ``now`` are
    the stalled run's."""

    def __init__(self, message: str, stalled: RunStalled | None = None):   # None: as unpickling calls it
        RuntimeError.__init__(self, message)
        if stalled is not None:
            self.queued, self.now = stalled.queued, stalled.now


def simulate_pool(jobs, capacity, policy: str | Policy = "easy", *, engine: str = "auto",
             selector: str | None = None, selector_options: dict | None = None,
             on_pass: PassHook | None = None, machine: Callable | None = None,
             progress: Callable[[int, float], None] | None = None, **options) -> SimResult:
    """Replay ``jobs`` (a DataFrame or numpy :class:`~epochbench.instances.table.Columns`,
    the column contract of :mod:`epochbench.instances.jobs`; its arrays are
    shared, never written) on a machine of ``capacity`` (K entries, 0 = processors).

    ``policy``: ``fcfs``, ``nonfcfs``, ``easy``, ``conservative`` (see
    :mod:`epochbench.sim.policies`) or a :class:`Policy` object.  ``options`` go to the
    policy (``starvation_limit`` for ``nonfcfs``, default 86400 s).
    ``selector``: None for the policy's own selection rule, or the name of a
    registered packing method (``epochbench.instances.registry``) that picks the set to
    start at each selection step (an oracle policy, e.g. EASY backfilled by
    ``cpsat``); ``selector_options`` go to ``registry.solve``.  ``on_pass``:
    hook called after each pass (see :class:`Engine`).  ``machine``: factory
    ``machine(table, capacity)`` of another machine model.  ``engine``:
    ``auto`` takes the compiled fast path when nothing above asks for the
    generic one; ``fast`` insists on the compiled loop (never its pure-Python
    twin); ``generic`` forces the Python loop.
    ``progress(arrived, now)``: called about twice a second with the number
    of jobs arrived so far and the simulated time, and once at the end (both
    engines).  ``seconds`` of the result is the simulation alone (not the
    ``on_pass`` hook's time: :class:`~epochbench.sim.engine.HookTimer`): the
    compiled loop is loaded (or compiled) before the clock starts, by a run
    of the first two jobs, and so are the kernels that one of epochbench's
    policies calls on the generic engine, by a run of a copy of it on
    :meth:`~epochbench.sim.engine.JobTable.rehearsal` (a policy or a
    selector of your own is not rehearsed: it might count its calls);
    ``engine`` says which ran: ``fast`` (compiled),
    ``python`` (its pure-Python twin, for a short EASY stream in a process
    that has not loaded the kernels) or ``generic``.  A twin that runs past
    its time budget gives way to the compiled loop, which is then loaded
    and timed as above (the twin's attempt is in neither).
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    cap = np.asarray(capacity, dtype=np.int64).reshape(-1)
    table = JobTable.from_columns(as_columns(jobs), cap)
    if isinstance(policy, str):
        pol = policies.make(policy, selector=selector, selector_options=selector_options, **options)
    elif selector is not None or selector_options or options:
        raise ValueError("give selector and options to the Policy object, not to simulate()")
    else:
        pol = policy
    # the name it was asked for and registered under (a plug-in's factory may return a built-in's object)
    label = policy if isinstance(policy, str) else pol.name
    held = getattr(pol, "selector_options", None)     # as the policy holds them: a dict, whatever was given
    options_ok = isinstance(policy, str) and policies.fast_takes_options(policy, held, cap.shape[0])
    fast_ok = (isinstance(policy, str) and policy in policies.FAST_CODES and selector is None and options_ok
               and on_pass is None and machine is None)
    if engine == "fast" and not fast_ok:
        raise ValueError(_no_fast_path(policy, selector=selector, on_pass=on_pass, machine=machine,
                                       selector_options=None if options_ok else selector_options))
    compiled = fast_ok and engine != "generic"
    if compiled and table.n and engine == "auto" and policies.python_route(pol, table):
        t0 = time.perf_counter()                 # the compiled loop's pure-Python twin: nothing to load
        passes = policies.run_python(table, cap, progress)
        if passes is not None:
            return SimResult(result_columns(table), label, pol.options(), passes, time.perf_counter() - t0,
                             "python", cap)
        # past its time budget (nothing written): the compiled loop, loaded first and timed alone
    if compiled and table.n:
        policies.warm_up(pol, table, cap)      # one-time loading is not the simulation's time
    elif table.n:
        getattr(pol, "load_step_methods", lambda: None)()     # nor is the generic engine's (a selector's kernels)
        if machine is None:
            _rehearse(pol, table, cap)         # nor the kernels its steps call (the profile's)
    given = _given(table) if not compiled and machine is None else None   # for the check after the run
    t0 = time.perf_counter()
    if compiled:
        passes, used = policies.run_fast(pol, table, cap, progress), "fast"
    else:
        mach = (machine or PoolMachine)(table, cap)
        eng = Engine(table, mach, pol, on_pass, progress)
        try:
            eng.run()
        except RunStalled as exc:
            if getattr(pol, "selector", None) is None:
                raise
            raise SelectorStalled(f"selector {pol.selector!r} of policy {pol.name!r}: {exc} (the selector's "
                                  "last steps on an idle machine chose nothing)", exc) from exc
        passes, used = eng.passes, "generic"
    seconds = time.perf_counter() - t0 - (0.0 if compiled else eng.hooks.seconds)   # the hook's time is not the run's
    if given is not None:                      # checked outside the run's time
        _checked(plugin_label(pol) or f"policy {label!r}", table, cap, given)
    facts = getattr(pol, "facts", dict)()      # multi-queue's, on either engine (run_fast resets it too)
    return SimResult(result_columns(table), label, pol.options(), passes, seconds, used, cap, facts=facts)


def _given(table: JobTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Copies of what a run on the generic engine must not change (submit
    times, durations, demands), for :func:`_checked`."""
    return table.submit.copy(), table.duration.copy(), table.demand.copy()


def _checked(who: str, table: JobTable, cap: np.ndarray, given: tuple) -> None:
    """:class:`~epochbench.instances.core.MethodFailed` naming the policy (``who``)
    when its run on the generic engine is no valid schedule of the stream as
    given (:func:`schedule_fault`).  The engine checks each start against the
    machine's free resources, which the policy sees and could change: a
    plug-in that set ``machine.free`` high ran 264 processors' worth of jobs
    on 128 nodes, and one whose ``len()`` said 0 ended with no job started,
    both exit status 0.  O(n log n + n K), next to the engine's Python work
    per event."""
    submit, duration, demand = given
    if not (np.array_equal(table.submit, submit) and np.array_equal(table.duration, duration)
            and np.array_equal(table.demand, demand)):
        raise MethodFailed(f"{who}: its run changed the job table (submit times, durations or demands)")
    fault = schedule_fault(submit, duration, demand, cap, table.start, table.ids)
    if fault is not None:
        raise MethodFailed(f"{who}: its run is no valid schedule: {fault}")


def schedule_fault(submit, duration, demand, capacity, start, ids=None) -> str | None:
    """What makes ``start`` no schedule of a pool of ``capacity``, checked
    from the stream alone (no engine, no policy); None when it is one.

    Parameters
    ----------
    submit, duration : numpy.ndarray
        Per job (n): when it arrives and how long it holds its demand.
    demand : numpy.ndarray
        n x K, the resources each job holds.
    capacity : numpy.ndarray
        K.
    start : numpy.ndarray
        Per job: when it started (NaN: never).
    ids : numpy.ndarray, optional
        The jobs' ids, for the message (default: the rows).

    Returns
    -------
    str or None
        The first fault found, in one line: a job never started, started
        before it arrived, or a time at which the jobs running hold more of a
        resource than the pool has (a job holds ``[start, start +
        duration)``: jobs ending at a time free their resources for the jobs
        starting then).

    Notes
    -----
    Cost: O(n log n + n K), a sort of the 2n start and end events and a
    running sum.
    """
    ids = np.arange(len(submit)) if ids is None else ids
    never = np.flatnonzero(np.isnan(start))
    if never.size:
        return f"{never.size} job(s) never started (first id {ids[never[0]]})"
    early = np.flatnonzero(start < submit)
    if early.size:
        j = early[0]
        return (f"{early.size} job(s) started before they arrived (first id {ids[j]}: start {start[j]:g}, "
                f"submit {submit[j]:g})")
    n = len(start)
    times = np.concatenate([start + duration, start])
    order = np.lexsort((np.repeat([0, 1], n), times))         # at equal times the ends first
    held = np.cumsum(np.concatenate([-demand, demand])[order], axis=0)
    over = np.flatnonzero((held > capacity).any(axis=1))
    if not over.size:
        return None
    e = over[0]
    r = int(np.flatnonzero(held[e] > capacity)[0])
    return (f"at time {times[order[e]]:g} the jobs running hold {int(held[e, r])} of resource {r} "
            f"(capacity {int(capacity[r])}), from the start of job id {ids[order[e] - n]}")


#: what only the generic engine takes, as :func:`_no_fast_path` names it
_GENERIC_ONLY = {"selector": "selector", "selector_options": "selector options", "on_pass": "on_pass hook",
                 "machine": "machine factory"}


def _rehearse(pol: Policy, table: JobTable, cap: np.ndarray) -> None:
    """Run a copy of ``pol`` on the table's :meth:`~JobTable.rehearsal`
    stream (no hooks) on the generic engine, so that the compiled kernels
    its steps call are loaded before the timed run: the backfilling
    policies of :mod:`epochbench.sim.variants` load the compiled profile on
    first use, 0.4 to 3.7 s (a cold cache) that ``seconds`` counted as
    simulation.  Only epochbench's own policies are rehearsed (a policy of
    the user's might count its calls); a rehearsal that fails is left to
    the timed run, which reports what went wrong with the whole stream;
    so is a policy whose selector is not epochbench's (it is the user's
    code, loaded by ``load_step_methods``).  Once per process for each
    policy class, options and table layout (:meth:`~JobTable.layout`; an
    option may take other steps: slack-bf with an infinite slack factor
    books nothing): 1 to 4 ms a run on a 200-job stream otherwise."""
    import copy
    key = (type(pol), _options_key(pol), table.layout())
    if key in _REHEARSED or not _rehearsable(pol):
        return
    made = CompiledProfile.made
    try:
        tiny = table.rehearsal()
        Engine(tiny, PoolMachine(tiny, cap), copy.deepcopy(pol), None, None).run()
    except Exception:          # the timed run raises it again, named for the whole stream
        return
    if CompiledProfile.made > made:        # it books on the compiled profile: its growth too, which a
        CompiledProfile.rehearse_growth(table.k)   # long run reaches
    _REHEARSED.add(key)


def _rehearsable(pol: Policy) -> bool:
    """``pol`` and its selector are epochbench's own (a user's code might
    count its calls, print or write; a plug-in's factory may return one of
    epochbench's, which comes guarded: :class:`~epochbench.instances.catalog.PluginObject`)."""
    from epochbench.instances.catalog import PluginObject
    if isinstance(pol, PluginObject) or not type(pol).__module__.startswith("epochbench."):
        return False
    selector = getattr(pol, "selector", None)
    if selector is None:
        return True
    from epochbench.instances import registry
    try:
        return registry.get("packing", selector).origin == "builtin"
    except Exception:          # the timed run names an unknown selector
        return False


def _options_key(pol: Policy) -> str:
    """The policy's options as one hashable text (its selector's running
    counts left out)."""
    import json
    return json.dumps(pol.settings(), sort_keys=True, default=repr)


#: what :func:`_rehearse` has rehearsed in this process
_REHEARSED: set = set()


def _no_fast_path(policy, **asked) -> str:
    """Why ``engine="fast"`` cannot run: the policy has no compiled loop
    (naming those that have), or what was given that only the generic
    engine takes.  (No command-line option sets the engine: the message
    names the keyword.)"""
    if not isinstance(policy, str):
        return "engine='fast' (the compiled fast path) takes a policy name, not a Policy object"
    if policy not in policies.FAST_CODES:
        return (f"engine='fast': policy {policy!r} has no compiled loop (fast path); those with one: "
                f"{', '.join(policies.FAST_CODES)} (leave engine='auto' for the generic engine)")
    own = policies.fast_option_names(policy)
    given = [_GENERIC_ONLY[name] if name != "selector_options" or not own
             else f"selector options but its heuristic's own ({', '.join(own)}) with values the heuristic takes"
             for name, value in asked.items() if value]
    return (f"engine='fast' (the compiled fast path) of policy {policy!r} takes no {' or '.join(given)}; leave "
            "engine='auto' for the generic engine, which does")
