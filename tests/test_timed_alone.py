"""``seconds`` of a simulation times the simulation alone: the compiled
kernels a policy's steps call are loaded before the clock starts, on a
rehearsal stream (:meth:`~epochbench.sim.engine.JobTable.rehearsal`), not
during the timed run.  The first run in a process reported 0.4 to 4 s of
loading as simulation for the priority backfilling policies (fcfs-bf and
the like), slack-bf, threshold-bf, bgs and mbgs.  (The farm's first runs
counted pandas' import and the result tables, built after its clock
stops now; its methods were loaded before already.)

Nothing here reads a clock: each run is made in a fresh process, and the
kernels' loaded signatures are compared at the start and at the end of the
timed run, which must load none."""
from __future__ import annotations

import copy
import json
import pickle
import types

import numpy as np
import pytest

from _processes import python_child
from epochbench.instances.jobs import make_workload
from epochbench.sim import policies
from epochbench.sim.engine import JobTable
from epochbench.instances.table import as_columns
from epochbench.sim.farm import generate_stream
from epochbench.sim.farm_policies import make_farm_policy
from epochbench.sim.pool import simulate_pool

_CHILD = """
import json, sys
import numpy as np
import epochbench as eb
from epochbench.instances import lazy
from epochbench.instances.jobs import make_workload
machine, policy, n = sys.argv[1], sys.argv[2], 60
runs = json.loads(sys.argv[3]) if len(sys.argv) > 3 else [{}]    # the options of each run, in one process

def loaded():
    return [lazy.kernels_loaded(), sorted((k.py_func.__module__ + "." + k.py_func.__qualname__,
                                           len(k.dispatcher.signatures))
                                          for k in lazy._KERNELS if getattr(k, "dispatcher", None) is not None)]

seen = []

def spy(cls):                     # the timed run's own object, built right after its clock starts
    init = cls.__init__
    def __init__(self, first, *args, **kwargs):
        init(self, first, *args, **kwargs)
        if first.n == n:
            seen.append(loaded())
    cls.__init__ = __init__

from epochbench.sim.engine import Engine
from epochbench.sim.farm import _Sim
from epochbench.sim.gang import GangSimulator
spy({"farm": _Sim, "gang": GangSimulator, "pool": Engine}[machine])
found = []
for options in runs:
    if machine == "farm":
        eb.simulate(None, policy, farm_jobs=n, **options)
    else:
        rng = np.random.default_rng(3)
        est = rng.integers(20, 400, n).astype(float)
        jobs = {"id": np.arange(1, n + 1), "submit": np.cumsum(rng.integers(0, 30, n)).astype(float),
                "runtime": np.floor(est * rng.uniform(0.2, 1.0, n)), "estimate": est,
                "procs": rng.integers(1, 17, n)}
        eb.simulate(make_workload(jobs, [16]), policy, **options)
    found.append({"start": seen[-1], "end": loaded()})
print(json.dumps(found))
"""


@pytest.mark.parametrize("machine, policy, runs", [
    # the pool policies on the generic engine, which hooks use (by default they run compiled, loaded
    # before the clock); an option may take steps the run before did not: an infinite slack factor books nothing
    ("pool", "fcfs-bf", [{"engine": "generic"}]), ("gang", "bgs", [{}]), ("farm", "cs-i-p", [{}]),
    ("pool", "slack-bf", [{"slack_factor": float("inf"), "engine": "generic"},
                          {"slack_factor": 1.0, "engine": "generic"}, {"engine": "generic"}]),
    ("pool", "threshold-bf", [{"slowdown_threshold": 1e9, "engine": "generic"},
                              {"slowdown_threshold": 1.0, "engine": "generic"}])])
def test_the_timed_run_loads_no_kernel(machine, policy, runs):
    for k, got in enumerate(json.loads(python_child(_CHILD, machine, policy, json.dumps(runs)).splitlines()[-1])):
        assert got["start"] == got["end"], f"{policy} {runs[k]}: kernels loaded while the clock ran"
        if machine != "farm":
            assert got["start"][0] is True    # the policy does call compiled kernels: the test can see them


def test_a_selector_of_the_users_is_not_rehearsed():
    """A rehearsal runs epochbench's own code only: a selector the user
    registered was called on the rehearsal's steps too (it may count its
    calls, print or write)."""
    from epochbench import register
    calls = []

    @register("packing", "count-calls-rehearsal", origin="test")
    def count_calls(inst):
        calls.append(inst.meta.get("time"))
        return list(range(len(inst.demand)))[:0]

    rng = np.random.default_rng(1)
    jobs = {"id": np.arange(1, 31), "submit": np.cumsum(rng.integers(0, 5, 30)).astype(float),
            "runtime": rng.integers(5, 90, 30).astype(float), "estimate": np.full(30, 100.0),
            "procs": rng.integers(1, 9, 30)}
    w = make_workload(jobs, [8])
    counted = []
    for _ in range(2):
        calls.clear()
        simulate_pool(w.table, w.capacity, "easy", selector="count-calls-rehearsal", engine="generic")
        counted.append(len(calls))
    assert counted[0] == counted[1] > 0


def test_the_farms_seconds_end_before_its_result_tables_are_built(monkeypatch):
    """A clock that moves 1 s a reading, and 1,000 s while the farm's metrics
    are computed: the run's seconds hold none of those."""
    from epochbench.sim import farm
    clock = [0.0]

    def tick():
        clock[0] += 1.0
        return clock[0]

    def slow_metrics(*args, **kwargs):
        clock[0] += 1000.0
        return metrics(*args, **kwargs)

    metrics = farm.farm_metrics
    monkeypatch.setattr(farm, "time", types.SimpleNamespace(perf_counter=tick))
    monkeypatch.setattr(farm, "farm_metrics", slow_metrics)
    res = farm.simulate_farm(generate_stream(jobs=20, machines=4, licenses=2, seed=1), make_farm_policy("edf"))
    assert 0 < res.seconds < 1000


def _table(n=20, k=2):
    rng = np.random.default_rng(5)
    jobs = {"id": np.arange(1, n + 1), "submit": np.sort(rng.uniform(0, 500, n)), "runtime": rng.uniform(1, 90, n),
            "estimate": np.full(n, 100.0), "procs": rng.integers(1, 9, n), "res_mem": rng.integers(0, 5, n)}
    w = make_workload(jobs, [8, 4])
    return JobTable.from_columns(as_columns(w.table), np.asarray(w.capacity))


def test_a_rehearsal_is_the_first_jobs_at_once_ending_early_in_arrays_like_the_tables():
    t = _table()
    t.estimate.flags.writeable = False
    before = {f: getattr(t, f).copy() for f in ("ids", "submit", "runtime", "estimate", "duration", "demand")}
    r = t.rehearsal(5)
    assert r.n == 5 and r.resources == t.resources and (r.submit == t.submit[0]).all()
    assert (r.ids == t.ids[:5]).all() and (r.demand == t.demand[:5]).all() and (r.estimate == t.estimate[:5]).all()
    assert (r.duration == np.minimum(t.duration[:5], t.estimate[:5] / 2)).all()
    for f in ("ids", "submit", "runtime", "estimate", "duration", "demand"):
        a, b = getattr(r, f), getattr(t, f)
        assert a.dtype == b.dtype and a.flags.writeable == b.flags.writeable and a.flags.c_contiguous, f
        assert not np.shares_memory(a, b), f
        assert (getattr(t, f) == before[f]).all(), f      # the table is untouched
    assert np.isnan(r.start).all() and np.isnan(r.promised).all()
    assert t.rehearsal(100).n == t.n


@pytest.mark.parametrize("name", sorted(set(policies.FAST_CODES) | {"fcfs-bf", "sjf-bf", "bfit-bf", "wfit-bf",
                                                                     "slack-bf", "threshold-bf", "multi-queue"}))
def test_every_pool_policy_pickles_and_copies(name):
    """What a rehearsal copies and a sweep sends: the classes made in a loop
    (fcfs-bf and its kin, bl-easy, bb-easy) were named after module ``abc``
    and did not pickle."""
    p = policies.make(name)
    for q in (pickle.loads(pickle.dumps(p)), copy.deepcopy(p)):
        assert type(q) is type(p) and q.options() == p.options()
    assert type(p).__module__.startswith("epochbench.sim.")
