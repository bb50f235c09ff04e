"""Runner rules that a one-token change broke unseen (mutation review, round
8): report's small-job threshold is 32, killed_at_estimate is 0 (not None)
when a workload kills nothing, and gang's migration_limit 0 migrates
nothing."""
from __future__ import annotations

import pandas as pd

from epochbench.instances.jobs import make_workload
from epochbench.sim.runner import report, simulate


def _jobs(rows):
    """rows: (id, submit, runtime, procs, estimate)."""
    return pd.DataFrame(rows, columns=["id", "submit", "runtime", "procs", "estimate"])


def test_report_default_small_threshold_is_32_processors():
    # 64 nodes: a 32-node job is small, a 33-node one large (README / summarize default)
    w = make_workload(_jobs([(1, 0.0, 10.0, 32, 10.0), (2, 0.0, 10.0, 33, 10.0)]), 64)
    rep = report(simulate(w, "fcfs"), w)
    assert rep["small_threshold"] == 32
    assert (rep["metrics"]["small_jobs"], rep["metrics"]["large_jobs"]) == (1, 1)


def test_killed_at_estimate_is_zero_not_none_when_the_workload_kills_nothing():
    # kill_at_estimate off: no job is killed, and the workload has columns, so 0 (None: no workload)
    w = make_workload(_jobs([(1, 0.0, 20.0, 1, 10.0)]), 4, kill_at_estimate=False)
    res = simulate(w, "fcfs")
    assert report(res, w)["killed_at_estimate"] == 0
    assert report(res)["killed_at_estimate"] is None


def test_gang_migration_limit_zero_is_zero_not_unlimited():
    # gang.py: "migration_limit 0 migrates nothing"; only a negative limit means "no limit"
    jobs = _jobs([(i, float(i), 50.0, 2 + i % 3, 60.0) for i in range(1, 13)])
    zero = simulate((jobs, 4), "mgs", migration_limit=0)
    assert zero.options["migration_limit"] == 0
    assert int(zero.jobs["migrations"].sum()) == 0
    assert simulate((jobs, 4), "mgs", migration_limit=-1).options["migration_limit"] is None
