"""Backfilling gang scheduling rules that a one-token change broke unseen
(mutation review, round 9): a job that fits now in two rows goes to the one
with fewer processors free, a job exactly at its predicted end may move into
a row reserved from now on, and a job started by a later pass keeps its
booked interval.
"""
from types import SimpleNamespace

import numpy as np
import pandas as pd

from epochbench.sim.gang import simulate_gang
from epochbench.sim.gang_backfill import RowBackfill
from epochbench.sim.gang_matrix import Clock, Matrix


# ---- Mutation review M9b, gang_backfill._book: the tie-break among rows where a
# waiting job fits *now* is the best fit (fewest processors free now), as the
# module docstring of sim/gang_backfill.py says ("of the rows, the one with the
# earliest such time (ties: the best fit, i.e. fewest processors free now, then
# the row that runs soonest) takes the reservation").  Mutant G3
# (``if t <= now`` -> ``if t < now`` in ``f = pf[r, 0, 0] if t <= now else 0``)
# drops the best fit and falls back to clock order.


def stream(rows):
    """rows: (id, submit, procs, runtime = estimate)."""
    return pd.DataFrame([dict(id=i, submit=float(s), runtime=float(d), estimate=float(d), procs=p,
                              duration=float(d)) for i, s, p, d in rows])


def test_bgs_books_a_job_that_fits_now_in_the_row_with_fewest_free_processors():
    """BGS, 4 processors, mpl 2, slice 10 s (row 0 runs [0, 10), [20, 30), ...;
    row 1 runs [10, 20), [30, 40), ...).

    * t = 0: J1 (3 procs, 100 s) fits now in both empty rows (tie on free
      processors): clock order, row 0, columns 0-2.  J2 (2 procs) fits now
      only in row 1 (row 0 has 1 free until 2 x 100): row 1, columns 0-1.
    * t = 12 (row 1 is running, so clock order is [1, 0]): J3 (1 proc,
      15 s) fits now in row 0 (1 free) and in row 1 (2 free).  Best fit:
      row 0, its lowest empty column 3.  Column 3 is empty in row 1 too, so
      FillMatrix replicates J3 there: it runs 12-20 in row 1 and 20-27 in
      row 0, ending at 27.
    * Clock order instead (the mutant) books row 1, column 2; column 2 is
      J1's in row 0, so there is no replica: 12-20, then 30-37: end 37.
    """
    df = stream([(1, 0, 3, 100), (2, 0, 2, 100), (3, 12, 1, 15)])
    j = simulate_gang(df, [4], "bgs", mpl=2, slice=10.0, check=True).jobs.set_index("id")
    assert j.loc[1, "start"] == 0 and j.loc[2, "start"] == 10
    assert j.loc[3, "placed"] == j.loc[3, "promised"] == j.loc[3, "start"] == 12
    assert j.loc[3, "end"] == 27


# ---- Mutation review M9b, gang_backfill.RowBackfill.allows: a job whose
# predicted end (placed + mpl x estimate) has come holds no time in any
# row's profile any more, so moving it (CompactMatrix / CollapseMatrix) breaks
# no reservation and is always allowed ("Moving ``job`` into row ``dst``
# keeps that row's reservations"; module docstring: CompactMatrix may move a
# job "only where it does not break that row's reservations").  Mutant G14:
# ``end <= self.now`` -> ``end < self.now`` asks a job overrunning from
# exactly its predicted end for free processors in the destination row.


def test_a_job_at_its_predicted_end_may_move_into_a_row_reserved_from_now():
    """4 processors, 2 rows, scale 2.  Job 0 (2 processors) is home in row 0
    until 10 (its predicted end); job 1 (4 processors) holds row 1's
    reservation on [10, 20).  At now = 10 job 0 still runs (it overran by
    0 s): row 1 has 0 processors free now, but job 0 needs no profile time
    there (its predicted end is not after now), so the move is allowed."""
    tb = SimpleNamespace(n=2, demand=np.array([[2], [4]]), estimate=np.full(2, 5.0),
                         promised=np.full(2, np.nan))
    rb = RowBackfill(tb, n=4, mpl=2, scale=2.0, now=0.0)
    rb._add(0, 0.0, 10.0, 0, -1)
    rb.end[0] = 10.0
    rb._add(1, 10.0, 20.0, 1, -1)
    rb.advance(10.0)
    assert rb.free_until(1, 10.0) == 0          # row 1 is full now, by job 1's reservation
    assert rb.allows(0, 1)
    rb.advance(10.5)                            # and after its end too
    assert rb.allows(0, 1)


# ---- Mutation review M9b, gang_backfill.RowBackfill.schedule: a job whose
# reservation came before the pass that starts it (discrete scheduling: the
# pass runs at the next slice boundary) "keeps its booked interval", so its
# predicted end, the end whose early release makes the next pass compress
# (:meth:`RowBackfill.finished`), is reservation + mpl x estimate, not
# pass time + mpl x estimate.  Mutant G22: ``float(t + self.est[job])`` ->
# ``float(now + self.est[job])`` (changes 1 of 144 random BGS/MBGS runs,
# BGS discrete variant 1, and no existing test).


def test_a_job_started_after_its_reservation_keeps_its_booked_end():
    """4 processors, mpl 1, scale 1.  Job 1 (4 processors) holds the row's
    profile on [0, 3) (it is not in the matrix: the cells are empty).  At
    now = 0 job 0 (2 processors, estimate 10) is booked at 3: not started.
    The next pass runs at now = 5 (a slice boundary): the reservation (3) has
    come, job 0 starts in row 0 and its predicted end is 3 + 10 = 13 (its
    booked interval [3, 13)), not 5 + 10 = 15."""
    tb = SimpleNamespace(n=2, demand=np.array([[2], [4]]), estimate=np.array([10.0, 3.0]),
                         promised=np.full(2, np.nan))
    rb = RowBackfill(tb, n=4, mpl=1, scale=1.0, now=0.0)
    rb._add(0, 0.0, 3.0, 1, -1)
    m, clock = Matrix(4, 1), Clock(1, 0, 0)
    placed, queue = rb.schedule([0], m, clock)
    assert placed == [] and queue == [0] and rb.res_t[0] == 3.0 and tb.promised[0] == 3.0
    rb.advance(5.0)
    placed, queue = rb.schedule(queue, m, clock)
    assert placed == [0] and queue == []
    assert rb.end[0] == 13.0


# ---- Mutation review, gang_backfill.RowBackfill.moved / allows / free_until:
# CompactMatrix / CollapseMatrix move a job whose predicted end lies ahead.  Its
# remaining predicted time [now, end) must leave the source row's profile (+1,
# processors freed) and enter the destination row's (-1, processors taken);
# the guard asks for "free processors ... for its whole estimate" in the
# destination row, i.e. at least the job's demand on [now, end): exactly
# enough is enough, and a reservation that starts at ``end`` (half-open
# intervals) is not in the way.


def _two_jobs(demands, estimates):
    return SimpleNamespace(n=len(demands), demand=np.array([[d] for d in demands]),
                           estimate=np.array(estimates, dtype=float),
                           promised=np.full(len(demands), np.nan))


def test_a_moved_job_frees_its_source_row_and_takes_its_destination_row():
    """Guards against moving a job's profile time the wrong way (taking it
    from the destination row and giving it back to the source).  4
    processors, 2 rows: job 0 (2 processors) is home in row 0 on [0, 10).
    After the move to row 1, row 0 is empty again (4 free until 10) and row 1
    has 4 - 2 = 2 free until 10."""
    rb = RowBackfill(_two_jobs([2], [10.0]), n=4, mpl=2, scale=1.0, now=0.0)
    rb._add(0, 0.0, 10.0, 0, -1)
    rb.end[0] = 10.0
    rb.moved(0, 0, 1)
    assert rb.free_until(0, 10.0) == 4
    assert rb.free_until(1, 10.0) == 2
    assert rb.compress


def test_a_row_with_exactly_the_demand_free_allows_the_move():
    """Guards against the move guard asking for more processors than the
    job needs.  4 processors, 2 rows: job 0 (2 processors) is home in row 0
    on [0, 10); job 1 (2 processors) holds row 1 on [0, 10), leaving exactly
    2 free there: job 0 fits, so the move is allowed."""
    rb = RowBackfill(_two_jobs([2, 2], [10.0, 10.0]), n=4, mpl=2, scale=1.0, now=0.0)
    rb._add(0, 0.0, 10.0, 0, -1)
    rb.end[0] = 10.0
    rb._add(1, 0.0, 10.0, 1, -1)
    assert rb.free_until(1, 10.0) == 2
    assert rb.allows(0, 1)


def test_a_reservation_starting_at_the_predicted_end_does_not_block_the_move():
    """Guards against counting a reservation that starts exactly at the
    moving job's predicted end as overlapping it.  4 processors, 2 rows: job
    0 (2 processors) is home in row 0 on [0, 10); job 1 (4 processors) holds
    row 1 on [10, 20).  Row 1 is all free on [0, 10), so job 0 may move
    there; on [0, 10.5) it is not."""
    rb = RowBackfill(_two_jobs([2, 4], [10.0, 10.0]), n=4, mpl=2, scale=1.0, now=0.0)
    rb._add(0, 0.0, 10.0, 0, -1)
    rb.end[0] = 10.0
    rb._add(1, 10.0, 20.0, 1, -1)
    assert rb.free_until(1, 10.0) == 4
    assert rb.free_until(1, 10.5) == 0
    assert rb.allows(0, 1)


# ---- Paper-fidelity review: a job still running at its predicted end (mpl x
# estimate after its placement: time slices and switches can make it later)
# vanished from its row's profile while it still held the processors.  Jobs
# were then booked into that row at once, could not start, and waited for the
# next event while another row had room.


def test_a_job_past_its_predicted_end_keeps_its_rows_processors():
    """12 processors, MPL 3, slices of 10 s, exact estimates.  Row 0: job 0
    (12 processors).  Row 1: job 1 (7, ends at 21) and job 3 (2).  Row 2:
    job 2 (7) and job 4 (4 processors, 11 s, placed at 30: predicted end
    30 + 3 x 11 = 63, it ends at 81).  Job 5 (4 processors, 5 s) arrives at
    64: row 2 has 1 processor free, row 1 has 10.  It was booked into row 2
    (its profile showed 5 free after 63), waited to 81 and ran 100-105; it
    now goes to row 1 at once and runs 70-75, as under GS."""
    df = stream([(0, 0, 12, 10000), (1, 1, 7, 20), (2, 2, 7, 10000), (3, 3, 2, 10000), (4, 30, 4, 11),
                 (5, 64, 4, 5)])
    for policy in ("gs", "bgs", "mbgs"):
        j = simulate_gang(df, [12], policy, mpl=3, slice=10.0, check=True).jobs.set_index("id")
        assert j.loc[4, "placed"] == 30 and j.loc[4, "end"] > 64          # past 63, still running at 64
        assert (j.loc[5, "placed"], j.loc[5, "start"], j.loc[5, "end"]) == (64, 70, 75), policy


def test_a_held_job_books_its_row_until_it_ends():
    """RowBackfill.hold: the job's processors leave its row's profile from
    now on (no end known); a move into a row without that room from now on
    is refused; its end gives them back and compresses the queue."""
    tb = _two_jobs([2, 4], [5.0, 5.0])
    rb = RowBackfill(tb, n=4, mpl=2, scale=2.0, now=0.0)
    m = Matrix(4, 2)
    m.place(0, 2, 0)
    rb._add(0, 0.0, 10.0, 0, -1)
    rb.end[0] = 10.0
    rb._add(1, 30.0, 40.0, 1, -1)                # row 1: a reservation of all 4 on [30, 40)
    rb.advance(12.0)
    assert rb.overdue() == [0] and rb.free_until(0, 1e9) == 4
    rb.hold(rb.overdue(), m)
    assert rb.end[0] == np.inf and rb.compress and rb.overdue() == []
    assert rb.free_until(0, 1e12) == 2           # held from now on, however far
    assert not rb.allows(0, 1)                   # row 1 is full on [30, 40): the held job cannot move there
    rb.compress = False
    rb.advance(15.0)
    rb.finished(0, 0, 15.0)
    assert rb.compress and rb.free_until(0, 1e12) == 4


def test_a_job_past_its_own_estimate_is_not_held():
    """An overrun of the user's estimate (runtime 9 > estimate 4) is read as
    conservative backfilling reads one: MPL 1 gives conservative's schedule."""
    from epochbench.sim.pool import simulate_pool
    df = pd.DataFrame(dict(id=[1, 2, 3], submit=[0.0, 1.0, 2.0], runtime=[9.0, 3.0, 2.0], estimate=[4.0, 3.0, 2.0],
                           procs=[3, 2, 1], duration=[9.0, 3.0, 2.0]))
    a = simulate_pool(df, [4], "conservative").jobs
    b = simulate_gang(df, [4], "bgs", mpl=1, slice=7.0, check=True).jobs
    pd.testing.assert_frame_equal(a[["id", "start", "end", "promised"]], b[["id", "start", "end", "promised"]])


def test_a_job_read_past_its_estimate_is_not_held_after_a_migration():
    """Job 11 (estimate 8.87, runtime 29.55) was read as past its own
    estimate at two passes, migrated (a penalty of 10 s added to what
    remains), and was then read as short of its estimate and held on
    [now, inf) to its end (a diff review's fuzzing: 6 of 2,000 runs).
    Once read as an overrun, a job stays one."""
    rows = [(0, 0.0, 5.009568614039, 2.50478430702, 7), (1, 0.0, 2.301417424361, 1.15070871218, 7),
            (2, 6.179777266837, 2.725144302712, 4.087716454068, 1), (3, 6.179777266837, 126.187354441447, 63.093677220724, 3),
            (4, 11.879517283829, 7.483191582877, 14.966383165753, 7), (5, 12.237900034965, 0.610371108075, 1.831113324225, 4),
            (6, 21.754033838146, 13.071948598197, 13.071948598197, 2), (7, 23.098513727557, 1.029391278324, 0.823513022659, 3),
            (8, 23.098513727557, 15.261188501587, 45.78356550476, 8), (9, 23.098513727557, 1.479770925119, 1.479770925119, 2),
            (10, 23.098513727557, 9.076578176638, 9.076578176638, 6), (11, 23.098513727557, 29.552896424557, 8.865868927367, 2),
            (12, 23.898252798947, 14.940839000681, 4.482251700204, 5), (13, 25.622798230538, 53.615238720355, 26.807619360178, 1),
            (14, 25.622798230538, 0.538152276717, 1.614456830151, 3), (15, 25.622798230538, 6.338497229267, 5.070797783414, 5),
            (16, 30.411506050545, 1.477779774887, 0.5, 5), (17, 30.411506050545, 53.527198944707, 80.29079841706, 1),
            (18, 30.411506050545, 3.679907211139, 3.679907211139, 1), (19, 30.411506050545, 1.481553312217, 0.740776656108, 1)]
    df = pd.DataFrame(rows, columns=["id", "submit", "runtime", "estimate", "procs"])
    df["duration"] = df["runtime"]
    held, read_over = [], []

    def watch(t, sim):
        if sim.guard.end.get(11) == np.inf:
            held.append(t)
        if 11 in sim.overran:
            read_over.append(t)

    r = simulate_gang(df, [8], "mbgs", mpl=3, slice=1.0, switch_overhead=0.0, migration_cost=10.0,
                      migration_limit=64, variant=2, check=True, on_pass=watch)
    assert read_over and r.jobs.set_index("id").loc[11, "penalty"] > 0   # read as an overrun, and migrated
    assert held == []
