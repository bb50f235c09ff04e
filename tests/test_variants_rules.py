"""Rules of sim/variants.py that no existing test pins (mutation review,
round 7).  Expected schedules are worked by hand in each docstring."""
import numpy as np
import pytest

from epochbench.sim.pool import simulate_pool as simulate
from test_sim_engine import stream


def starts(df, cap, policy, **kw) -> dict:
    res = simulate(df, cap, policy, **kw)
    return dict(zip(res.jobs["id"].tolist(), res.jobs["start"].tolist()))


@pytest.mark.parametrize("engine", ["fast", "generic"])
@pytest.mark.parametrize("policy", ["easy-sjf", "easy-xfactor"])
def test_ordered_easy_backfills_a_job_ending_exactly_at_the_shadow_time(policy, engine):
    """Rule (_EASYOrdered._scan): a candidate with now + estimate <= shadow
    backfills (the bound is inclusive, as in EASY).  4 nodes: job 1 (3 nodes)
    runs 0-10; head job 2 (4 nodes) is reserved at 10 with extra 0; job 3
    (1 node, 9 s) arriving at 1 ends exactly at 10, so it starts at 1.  With
    a strict bound it would need the (empty) extra and wait until 20."""
    df = stream([(1, 0, 3, 10, 10), (2, 1, 4, 10, 10), (3, 1, 1, 9, 9)])
    assert starts(df, [4], policy, engine=engine) == {1: 0, 2: 10, 3: 1}


@pytest.mark.parametrize("engine", ["fast", "generic"])
@pytest.mark.parametrize("policy", ["easy-sjf", "easy-xfactor"])
def test_ordered_easy_spends_the_extra_nodes_once(policy, engine):
    """Rule (_EASYOrdered._scan): a backfilled job running past the shadow
    time uses up its share of ``extra``.  4 nodes: job 1 (2) runs 0-10; head
    job 2 (3) is reserved at 10 with extra 1.  Jobs 3 and 4 (1 node, 100 s,
    same estimate and wait: scanned in arrival order) both fit at 1: job 3
    takes the one extra node; job 4 would take a node the head needs at 10,
    so it waits until the head ends (20).  Without the decrement job 4 starts
    at 1 and the head slips to 101."""
    df = stream([(1, 0, 2, 10, 10), (2, 1, 3, 10, 10), (3, 1, 1, 100, 100), (4, 1, 1, 100, 100)])
    assert starts(df, [4], policy, engine=engine) == {1: 0, 2: 10, 3: 1, 4: 20}


def test_slack_bf_reserves_no_job_of_infinite_slack():
    """Rule (SlackBackfill._to_reserve): only jobs of finite slack get a
    reservation; the others have no promise and never hold a slot.  4 nodes,
    slack_factor inf, jobs of >= 3 nodes important with slack 0.  Job 1 (4
    nodes) runs 0-10.  At 1 job 2 (2 nodes, slack inf) and job 3 (3 nodes,
    important) arrive: only job 3 is reserved, at 10 (its promise and
    deadline), and starts then; job 2 fits beside it only when it ends, at
    20.  Reserving job 2 too (before job 3, in arrival order) would give it
    10 and push job 3, whose slack is 0, to 20.  Job 2 keeps no promise
    (NaN); job 1 (4 nodes: important) was promised 0."""
    df = stream([(1, 0, 4, 10, 10), (2, 1, 2, 10, 10), (3, 1, 3, 10, 10)])
    res = simulate(df, [4], "slack-bf", slack_factor=np.inf, important_procs=3, important_slack_factor=0)
    jobs = res.jobs.set_index("id")
    assert jobs["start"].to_dict() == {1: 0, 2: 20, 3: 10}
    assert np.isnan(jobs.loc[2, "promised"])
    assert jobs.loc[1, "promised"] == 0 and jobs.loc[3, "promised"] == 10


def test_slack_bf_of_infinite_slack_promises_nothing():
    """Rule (SlackBackfill, slack_factor = inf: "no guarantees"): no job is
    reserved, so ``promised`` stays NaN for every job.  4 nodes: job 1 (4)
    runs 0-10, job 2 (4) arriving at 1 starts at 10 (first fit)."""
    df = stream([(1, 0, 4, 10, 10), (2, 1, 4, 10, 10)])
    res = simulate(df, [4], "slack-bf", slack_factor=np.inf)
    assert res.jobs["start"].tolist() == [0, 10]
    assert res.jobs["promised"].isna().all()


def test_multi_queue_sends_a_too_wide_job_to_the_nearest_longer_queue():
    """Rule (MultiQueue.queue_of, no lending): a job wider than its queue's
    partition goes to the nearest queue of longer jobs whose partition
    holds it, before any queue of shorter jobs.  10 nodes, bounds 10 and 100,
    partitions 4, 2, 4.  Job 1 (estimate 5: queue 0, 4 nodes) fills
    partition 0 until 5.  Job 2 (estimate 50: queue 1, whose partition has 2
    nodes; it needs 3) goes to queue 2, whose partition is idle: it starts at
    1.  Sent to queue 0 instead it would wait for job 1 until 5."""
    df = stream([(1, 0, 4, 5, 5), (2, 1, 3, 50, 50)])
    assert starts(df, [10], "multi-queue", queue_bounds=[10, 100], partitions=[4, 2, 4]) == {1: 0, 2: 1}


def test_multi_queue_backfills_a_job_ending_exactly_at_the_shadow_time():
    """Rule (MultiQueue._serve): now + estimate <= shadow backfills (inclusive
    bound, as in EASY).  8 nodes, bound 10 s: all jobs are in the long queue
    (partition of 4).  Job 1 (2) runs 0-100; head job 2 (3) is reserved at
    100 with extra 1; job 3 (2 nodes, 99 s) arriving at 1 ends exactly at 100
    and starts at 1.  With a strict bound it needs 2 > extra 1 and waits
    until the head ends, at 200."""
    df = stream([(1, 0, 2, 100, 100), (2, 0, 3, 100, 100), (3, 1, 2, 99, 99)])
    assert starts(df, [8], "multi-queue", queue_bounds=[10]) == {1: 0, 2: 100, 3: 1}
