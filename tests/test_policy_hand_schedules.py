"""Start times worked out by hand from the seeds' rules, on streams of a
few jobs, for the rules the worked examples of ``test_sim_policies`` leave
open (a review checked each against the papers; both engines run each).

Rows are ``(id, submit, procs, runtime[, estimate])``; the estimate is the
runtime unless given.  Where a seed's rule can be read two ways, the test
says which reading the simulator takes.
"""
import pytest

import epochbench as eb
from epochbench.sim.pool import simulate_pool

from test_sim_policies import ENGINES, starts, stream


def _starts(rows, capacity, policy, engine, **options):
    return starts(simulate_pool(stream(rows), capacity, policy, engine=engine, **options))


# ---- EASY: the shadow time and the extra nodes ([vadhiyar-notes] "EASY backfilling";
# [rajaei-dadfar] "Aggressive Backfilling") --------------------------------------------------------
#: 10 nodes: job 1 runs on 6 until 10; head job 2 needs 8, so its shadow time is 10 and 2 nodes are extra
_HEAD = [(1, 0, 6, 10), (2, 0.5, 8, 5)]


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_extra_nodes_run_out_after_one_backfilled_job(engine):
    """Job 3 runs past the shadow time on the 2 extra nodes; job 4, the same
    shape, would need 2 more: it waits until job 2 (10 to 15) has ended."""
    s = _starts(_HEAD + [(3, 1, 2, 20), (4, 1, 2, 20)], [10], "easy", engine)
    assert s == {1: 0, 2: 10, 3: 1, 4: 15}


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_a_job_that_ends_by_the_shadow_time_takes_no_extra_node(engine):
    s = _starts(_HEAD + [(3, 1, 2, 5), (4, 1, 2, 20)], [10], "easy", engine)
    assert s == {1: 0, 2: 10, 3: 1, 4: 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_shadow_time_is_read_from_estimates(engine):
    """Job 1 is estimated at 10 and runs 5: job 3 (1 node, until 9) ends by
    the shadow time 10 of the estimates and backfills; job 2 then starts at 9."""
    s = _starts([(1, 0, 6, 5, 10), (2, 0.5, 10, 5), (3, 1, 1, 8)], [10], "easy", engine)
    assert s == {1: 0, 2: 9, 3: 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_head_starts_at_an_early_end(engine):
    s = _starts([(1, 0, 6, 4, 10), (2, 0.5, 8, 5), (3, 1, 2, 20)], [10], "easy", engine)
    assert s == {1: 0, 2: 4, 3: 1}


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_recomputes_the_shadow_time_and_extra_nodes_after_an_early_end(engine):
    """12 nodes: jobs 1 (6, estimated 10, runs 3) and 5 (4, until 10); head
    job 2 needs 10: shadow 10, 2 extra, which job 3 takes at 1.  At 3 job 1
    ends early: the shadow time is still 10 (job 5), with no extra node left
    (12 - job 3's 2 - job 2's 10), so job 4 (4 nodes, long) may not start
    on the 6 free ones."""
    rows = [(1, 0, 6, 3, 10), (5, 0, 4, 10), (2, 0.5, 10, 5), (3, 1, 2, 30), (4, 2, 4, 30)]
    assert _starts(rows, [12], "easy", engine) == {1: 0, 5: 0, 2: 10, 3: 1, 4: 15}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("policy,expected", [("easy", {0: 0, 2: 10, 3: 1, 4: 15}),
                                             ("easy-sjf", {0: 0, 2: 10, 3: 15, 4: 1})])
def test_easy_backfills_in_its_scan_order(engine, policy, expected):
    """Jobs 3 (4 nodes, 8) and 4 (4 nodes, 3) both end by the shadow time 10,
    and only one fits the 4 free nodes: arrival order takes job 3, shortest
    first job 4 ([zhang-comparative] section 3's SJF order)."""
    rows = [(0, 0, 6, 10), (2, 1, 8, 5), (3, 1, 4, 8), (4, 1, 4, 3)]
    assert _starts(rows, [10], policy, engine) == expected


# ---- conservative: compression after an early end ([rajaei-dadfar] "Conservative Backfilling";
# [vadhiyar-notes]) --------------------------------------------------------------------------------
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rows,expected", [
    # the seeds leave open whether later jobs' old reservations stand while a job is re-placed: here
    # they do (one pass in reservation order), so job 4's old [10, 15) keeps job 3 (10 nodes) at 15
    ([(1, 0, 10, 2, 10), (2, 1, 5, 5), (3, 1, 10, 5), (4, 1, 5, 5)], {1: 0, 2: 2, 3: 15, 4: 2}),
    # job 3 (reserved at 18) moves to 10, beside job 4's old reservation; job 4 then moves to 2
    ([(1, 0, 10, 2, 10), (2, 1, 6, 8), (3, 1, 6, 3), (4, 1, 4, 8)], {1: 0, 2: 2, 3: 10, 4: 2}),
    # no earlier slot for job 3: it keeps its reservation; job 4 backfills before it
    ([(1, 0, 4, 1, 10), (2, 0, 6, 10), (3, 1, 10, 5), (4, 2, 4, 3)], {1: 0, 2: 0, 3: 10, 4: 2}),
], ids=["old-reservations-stand", "moves-up", "keeps-its-reservation"])
def test_conservative_compresses_in_one_pass_never_later(engine, rows, expected):
    assert _starts(rows, [10], "conservative", engine) == expected


# ---- Non-FCFS ([rajaei-dadfar] "Non-FCFS"): fewest nodes first, ties by run time; starvation ----
@pytest.mark.parametrize("engine", ENGINES)
def test_nonfcfs_takes_fewest_nodes_first_then_shortest(engine):
    rows = [(90, 0, 10, 10), (1, 1, 5, 8), (2, 1, 5, 3), (3, 1, 3, 20)]
    assert _starts(rows, [10], "nonfcfs", engine) == {90: 0, 1: 13, 2: 10, 3: 10}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("limit,start", [(10, 100), (50, 50), (60, 50)])
def test_nonfcfs_starves_a_job_that_waited_more_than_the_limit(engine, limit, start):
    """Job 3 (12 nodes) waits from 0 for job 0 (until 100); job 4 (4 nodes)
    arrives at 50 onto 4 free nodes.  Past the limit job 3 blocks the queue;
    at exactly the limit ("more than", strictly) it does not yet."""
    rows = [(0, -1, 12, 101), (3, 0, 12, 5), (4, 50, 4, 10)]
    s = _starts(rows, [16], "nonfcfs", engine, starvation_limit=limit)
    assert s == {0: -1, 3: 100, 4: start}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("limit,expected", [(10, {0: -1, 1: 100, 2: 100, 3: 105}),
                                            (1000, {0: -1, 1: 105, 2: 100, 3: 100})])
def test_nonfcfs_starts_starved_jobs_first_come_first_served(engine, limit, expected):
    """At 100 jobs 1 (10 nodes), 2 (6) and 3 (2) have all starved: they start
    in arrival order (1 and 2 fill the 16 nodes); not starved, fewest nodes
    first (3 and 2, and job 1's 10 nodes wait)."""
    rows = [(0, -1, 16, 101), (1, 0, 10, 5), (2, 1, 6, 5), (3, 2, 2, 5)]
    assert _starts(rows, [16], "nonfcfs", engine, starvation_limit=limit) == expected


# ---- LOS ([vadhiyar-notes] algorithms 1 and 2): the most utilization the shadow allows -------------
#: 10 nodes: jobs 100 and 101 (5 each) end at 25 and 28; head job 1 needs 7: shadow 28, 3 extra nodes
_LOS = [(100, 0, 5, 25), (101, 0, 5, 28), (1, 1, 7, 4)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("tail,los,easy", [
    # both fill the 5 free nodes: job 2 (3, long) on the extra nodes and job 4 (2, ends by 28)
    ([(2, 2, 3, 100), (3, 3, 2, 100), (4, 4, 2, 2)], {2: 25, 3: 32, 4: 25}, {2: 25, 3: 32, 4: 25}),
    # EASY takes job 3 (1 node, long) first; LOS fills the 5 nodes with job 4 (ends at 27), then job 3
    ([(2, 2, 4, 100), (3, 3, 1, 100), (4, 4, 5, 2)], {2: 32, 3: 27, 4: 25}, {2: 32, 3: 25, 4: 32}),
], ids=["same", "los-fills"])
def test_los_fills_the_free_nodes_within_the_shadow(engine, tail, los, easy):
    base = {100: 0, 101: 0, 1: 28}
    assert _starts(_LOS + tail, [10], "los", engine) == {**base, **los}
    assert _starts(_LOS + tail, [10], "easy", engine) == {**base, **easy}


# ---- gang scheduling ([zhang-comparative] section 4) -------------------------------------------------
def test_gang_two_whole_machine_jobs_share_it_in_turns():
    """4 processors, MPL 2, slices of 10: jobs 1 and 2 (4 processors, 20 s
    each) run in turns, one slice each, and end at 30 and 40."""
    run = eb.simulate((stream([(1, 0, 4, 20), (2, 0, 4, 20)]), [4]), policy="gs", machine="gang", mpl=2,
                      slice=10)
    jobs = run.jobs.set_index("id")
    assert jobs["start"].to_dict() == {1: 0, 2: 10} and jobs["end"].to_dict() == {1: 30, 2: 40}
