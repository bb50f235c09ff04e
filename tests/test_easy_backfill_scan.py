"""EASY's backfill scan finds the jobs that cannot start with one numpy
test for all (``policies.easy_backfill``); it starts the same jobs, in the
same order, as the rule tested job by job."""
from __future__ import annotations

import numpy as np
import pandas as pd
from epochbench.sim.engine import JobTable, PoolMachine
from epochbench.sim.policies import easy_backfill


def _one_by_one(tb, machine, cands, now, shadow, extra, start) -> list:
    """The rule as written before: every candidate asked in turn."""
    done = []
    for j in cands:
        if not machine.fits(j):
            continue
        if now + tb.estimate[j] <= shadow:
            pass
        elif (tb.demand[j] <= extra).all():
            extra = extra - tb.demand[j]
        else:
            continue
        start(j)
        done.append(j)
    return done


def test_easy_backfill_starts_what_the_rule_job_by_job_starts():
    started = [_case(np.random.default_rng(seed)) for seed in range(300)]
    assert min(started) == 0 and 1 in started and max(started) >= 3          # none, one and several


def _case(rng) -> int:
    """One random pass: both scans on machines in the same state; the jobs started."""
    k, n = int(rng.integers(1, 4)), int(rng.integers(1, 40))
    capacity = rng.integers(4, 20, size=k)
    frame = pd.DataFrame({"id": np.arange(n), "submit": np.zeros(n),
                          "estimate": rng.integers(1, 30, n).astype(float), "procs": rng.integers(1, capacity[0] + 1, n)})
    frame["duration"] = frame["estimate"]
    for r in range(1, k):
        frame[f"res_{r}"] = rng.integers(0, capacity[r] + 1, n)
    tb = JobTable.from_frame(frame, capacity.astype(np.int64))
    machines = [PoolMachine(tb, capacity), PoolMachine(tb, capacity)]
    held = rng.integers(0, capacity + 1)            # the same resources held by running jobs
    for m in machines:
        m.free = (capacity - held).astype(np.int64)
    cands = [int(j) for j in rng.permutation(n)]
    now, shadow = 5.0, float(rng.integers(5, 40))
    extra = rng.integers(-2, capacity + 1).astype(np.int64)
    got, want = [], []

    def starter(m, log):
        def start(j):
            m.start(j, now)
            log.append(j)
        return start
    done = easy_backfill(tb, machines[0], cands, now, shadow, extra.copy(), starter(machines[0], got))
    _one_by_one(tb, machines[1], cands, now, shadow, extra.copy(), starter(machines[1], want))
    assert got == want and done == set(want)
    assert (machines[0].free == machines[1].free).all()
    return len(want)
