"""Rules of sim/backfill.py (the [zhang-comparative] section 3 priority
orders with backfilling) that no existing test pins (mutation review,
round 7).  Expected schedules are worked by hand in each docstring."""
from epochbench.sim.pool import simulate_pool as simulate
from test_sim_engine import stream


def by_id(res, col):
    return dict(zip(res.jobs["id"].tolist(), res.jobs[col].tolist()))


def test_sjf_bf_breaks_equal_estimates_by_arrival():
    """Rule (_sjf_key): SJF order, ties in arrival order.  4 nodes: job 1
    (4 nodes) runs 0-10; jobs 2 (arrives 1) and 3 (arrives 2), 4 nodes and
    5 s each, tie on the estimate: job 2 goes first at 10, job 3 at 15."""
    df = stream([(1, 0, 4, 10, 10), (2, 1, 4, 5, 5), (3, 2, 4, 5, 5)])
    assert by_id(simulate(df, [4], "sjf-bf"), "start") == {1: 0, 2: 10, 3: 15}


def test_bfit_bf_plans_the_jobs_that_fit_now_first():
    """Rule (_bfit_key): jobs that fit now come before those that do not.
    4 nodes: job 1 (2 nodes) runs 0-10.  At 1, job 2 (4 nodes, 10 s) does
    not fit, job 3 (2 nodes, 20 s) fits exactly: job 3 is planned first, at
    1 (until 21), and starts; job 2 follows at 21.  Planning job 2 first (at
    10) would push job 3 past it, to 20."""
    df = stream([(1, 0, 2, 10, 10), (2, 1, 4, 10, 10), (3, 1, 2, 20, 20)])
    assert by_id(simulate(df, [4], "bfit-bf"), "start") == {1: 0, 2: 21, 3: 1}


def test_bfit_bf_orders_the_jobs_that_do_not_fit_by_smallest_excess():
    """Rule (_bfit_key): the jobs that do not fit now are planned by smallest
    excess over what is free.  4 nodes: job 1 (3 nodes) runs 0-10, 1 node
    free.  At 1 job 2 (2 nodes, excess 1) and job 3 (4 nodes, excess 3)
    arrive: the plan of that pass (their ``promised``) puts job 2 first, at
    10, and job 3 after it at 20.  (At 10 the order is recomputed: both fit
    then and job 3, leaving 0 nodes, starts first; the promise keeps the
    first plan.)"""
    df = stream([(1, 0, 3, 10, 10), (2, 1, 2, 10, 10), (3, 1, 4, 10, 10)])
    res = simulate(df, [4], "bfit-bf")
    promised = by_id(res, "promised")
    assert promised[2] == 10 and promised[3] == 20
    assert by_id(res, "start") == {1: 0, 2: 20, 3: 10}


def test_ordered_backfill_promised_is_the_first_plan():
    """Rule (OrderedBackfill.schedule): ``promised`` is the job's start in
    the first plan that held it, and may be earlier than its start.  4
    nodes, SJF: job 1 (4 nodes) runs 0-10; job 2 (4 nodes, 10 s) arrives at
    1, planned at 10.  Job 3 (4 nodes, 5 s, shorter) arrives at 2 and takes
    10; job 2 moves to 15.  Job 2 keeps the promise 10 and starts at 15."""
    df = stream([(1, 0, 4, 10, 10), (2, 1, 4, 10, 10), (3, 2, 4, 5, 5)])
    res = simulate(df, [4], "sjf-bf")
    assert by_id(res, "start") == {1: 0, 2: 15, 3: 10}
    promised = by_id(res, "promised")
    assert promised[2] == 10 and promised[3] == 10
