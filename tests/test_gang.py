"""Gang scheduling ([zhang-comparative] sections 5-6): the matrix of figure 9, the steps
on hand-made matrices, the clock rule, migration costs (eqs. 4-5), the
event loop on small worked streams, capacity loss (eq. 3), options and CLI
wiring."""
import argparse
from collections import deque

import numpy as np
import pandas as pd
import pytest

from epochbench.instances.core import InstanceError
from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.gang import simulate_gang, summarize_gang
from epochbench.sim.gang_matrix import (Budget, Clock, Matrix, bits, clean_matrix, collapse_migrating, compact_matrix,
                             fill_matrix, fill_migrating, lowest_bits, mask_of, migration_overhead,
                             schedule_gs)
from epochbench.sim.metrics import capacity_loss

E = -1


def stream(rows):
    """rows: (id, submit, procs, duration[, estimate])."""
    out = []
    for r in rows:
        i, sub, procs, dur = r[:4]
        est = r[4] if len(r) > 4 else max(dur, 1.0)
        out.append({"id": i, "submit": float(sub), "runtime": float(dur), "estimate": float(est),
                    "procs": procs, "duration": float(min(dur, est))})
    return pd.DataFrame(out).astype({"id": "int64", "procs": "int64"})


def clock_with(mpl, row=0, pos=None, deadlines=None):
    c = Clock(mpl, row, row if pos is None else pos)
    c.deadline.update(deadlines or {})
    return c


# ---- bit sets --------------------------------------------------------------------------------
def test_lowest_bits_and_masks():
    m = mask_of([1, 3, 4, 9, 12])
    assert bits(lowest_bits(m, 3)) == [1, 3, 4]
    assert lowest_bits(m, 5) == m and lowest_bits(m, 0) == 0
    with pytest.raises(ValueError):
        lowest_bits(m, 6)
    assert bits(mask_of(range(300, 320))) == list(range(300, 320))


# ---- figure 9 ----------------------------------------------------------------------------------
FIG9 = np.array([[1, 1, 1, 1, 1, 1, 1, 1],
                 [2, 2, 2, 2, 2, 2, 2, 2],
                 [3, 3, 3, 3, 4, 4, 5, 5],
                 [6, 6, 6, 6, 4, 4, 5, 5]])


def fig9_built():
    """Jobs J1..J6 (8, 8, 4, 2, 2, 4 processors) arrive in that order at an
    empty 8 x 4 matrix: Schedule (FCFS, best fit) then FillMatrix."""
    m, clock = Matrix(8, 4), Clock(4)
    procs = {1: 8, 2: 8, 3: 4, 4: 2, 5: 2, 6: 4}
    queue = deque(procs)
    assert schedule_gs(m, clock, queue, procs) == [1, 2, 3, 4, 5, 6] and not queue
    assert fill_matrix(m, clock) == 2
    return m, clock


def test_figure9_is_built_by_schedule_and_fill():
    """[zhang-comparative] section 5: two 8-way jobs and several smaller ones; J3 on P0-P3,
    J4 and J5 replicated over time slices 2 and 3 in the same columns."""
    m, _ = fig9_built()
    np.testing.assert_array_equal(m.grid(), FIG9)
    assert {j: m.home[j] for j in m.home} == {1: 0, 2: 1, 3: 2, 4: 2, 5: 2, 6: 3}
    assert bits(m.rows[4]) == bits(m.rows[5]) == [2, 3]  # J4, J5 in two rows, same columns
    assert bits(m.cols[4]) == [4, 5] and bits(m.cols[5]) == [6, 7]


def test_figure9_a_new_8_way_job_needs_a_fifth_row():
    """Section 5.1: an 8-way job fits only in a new row; with MPL 4 it waits,
    even after CleanMatrix and CompactMatrix."""
    m, clock = fig9_built()
    clean_matrix(m)
    compact_matrix(m, clock_with(4, deadlines={j: 10 for j in m.home}))
    q = deque([7])
    assert schedule_gs(m, clock, q, {7: 8}) == [] and list(q) == [7]


def test_figure9_clean_opens_room_for_a_waiting_job():
    """CleanMatrix drops the replicas of J4 and J5 in slice 3, so a 4-way job
    fits there (without it the expanded jobs keep the cells: fig. 11 line 1)."""
    m, clock = fig9_built()
    q = deque([7])
    assert schedule_gs(m, clock, q, {7: 4}) == []  # no room while J4, J5 are replicated
    assert clean_matrix(m) == 2
    np.testing.assert_array_equal(m.grid()[3], [6, 6, 6, 6, E, E, E, E])
    assert schedule_gs(m, clock, q, {7: 4}) == [7]
    np.testing.assert_array_equal(m.grid()[3], [6, 6, 6, 6, 7, 7, 7, 7])


def test_figure9_compacted_after_j3_leaves():
    """J3 ends.  Cleaning leaves slices 2 (J4, J5) and 3 (J6) half full;
    CompactMatrix moves J4 and J5 into slice 3 (same columns), which frees a
    whole row for a new 8-way job J7."""
    m, _ = fig9_built()
    m.remove(3)
    clean_matrix(m)
    clock = clock_with(4, row=0, pos=4, deadlines={1: 8, 2: 9, 4: 7, 5: 7, 6: 7})
    assert compact_matrix(m, clock) == 2
    np.testing.assert_array_equal(m.grid(), [[1] * 8, [2] * 8, [E] * 8, [6, 6, 6, 6, 4, 4, 5, 5]])
    assert m.home[4] == m.home[5] == 3
    q = deque([7])
    assert schedule_gs(m, clock, q, {7: 8}) == [7] and m.home[7] == 2


# ---- the steps on hand-made matrices ------------------------------------------------------------
def test_clean_matrix_keeps_home_rows_only():
    g = [[1, 1, 2, 2, E, E],
         [1, 1, 3, 3, 3, E],
         [1, 1, 2, 2, 4, 4]]
    m = Matrix.from_grid(g, homes={1: 1, 2: 2})
    assert clean_matrix(m) == 3  # J1 in rows 0 and 2, J2 in row 0
    np.testing.assert_array_equal(m.grid(), [[E] * 6, [1, 1, 3, 3, 3, E], [E, E, 2, 2, 4, 4]])
    assert all(m.single(j) for j in m.home)


def test_compact_matrix_moves_from_less_to_more_populated_rows():
    g = [[1, E, E, E, E, E],   # 1 cell
         [E, 2, 2, E, 3, E],   # 3 cells
         [E, E, E, 4, E, 5]]   # 2 cells
    m = Matrix.from_grid(g)
    clock = clock_with(3, deadlines={j: 3 for j in range(1, 6)})
    moves = compact_matrix(m, clock)
    # row 0 (least populated) empties into row 1 (most); then row 2 into row 1 where columns allow:
    # J4 (col 3) and J5 (col 5) fit in row 1; J1 (col 0) too.
    np.testing.assert_array_equal(m.grid(), [[E] * 6, [1, 2, 2, 4, 3, 5], [E] * 6])
    assert moves == 3 and m.used == [0, 6, 0]


def test_compact_matrix_moves_either_way_between_rows_equally_full():
    """The printed loop of section 6.1 pairs every row i with every other j:
    between two rows of two cells each, J0 (row 0) may not go to row 1 (the
    clock rule: it has not run and is due sooner), but J1 (row 1) may go to
    row 0; j was only a row after i, so nothing moved."""
    m = Matrix.from_grid([[E, E, 0, 0], [1, 1, E, E], [E, E, E, E]])
    clock = Clock(3, row=2, pos=2)
    clock.deadline = {0: clock.at(0), 1: 4}
    assert not clock.allowed(0, 1) and clock.allowed(1, 0)
    assert compact_matrix(m, clock) == 1
    np.testing.assert_array_equal(m.grid(), [[1, 1, 0, 0], [E] * 4, [E] * 4])


def test_compact_matrix_needs_the_same_columns_free():
    g = [[1, 1, E, E],
         [2, 2, 2, E]]
    m = Matrix.from_grid(g)
    assert compact_matrix(m, clock_with(2, deadlines={1: 2, 2: 2})) == 0  # J1's columns are busy in row 1
    np.testing.assert_array_equal(m.grid(), g)


def test_clock_rule_never_moves_a_job_behind_its_last_run():
    """Figure 10.  Clock at row 1 (position 5).  J7 was placed in row 2 and has
    not run: it is due at position 6, so it may go to rows 1 or 2 but not to
    rows 3 or 0 (positions 7, 8), which would run it later than promised.
    J8 in the same row last ran at row 0 (position 4): due at 8, it may go
    anywhere."""
    g = [[1, 1, 1, E, E, E],   # row 0: 3 cells
         [E] * 6,              # row 1 (now): empty
         [E, E, E, 7, 8, E],   # row 2: 2 cells
         [2, 2, 2, E, E, 9]]   # row 3: 4 cells
    m = Matrix.from_grid(g)
    clock = clock_with(4, row=1, pos=5, deadlines={1: 8, 2: 7, 7: 6, 8: 8, 9: 7})
    assert clock.allowed(7, 1) and clock.allowed(7, 2) and not clock.allowed(7, 3) and not clock.allowed(7, 0)
    assert all(clock.allowed(8, r) for r in range(4))
    compact_matrix(m, clock)
    assert m.home[7] == 2 and m.home[8] == 3  # J8 joins the most populated row, J7 may not
    # no job ever sits in a row that comes after its deadline
    for j in m.home:
        assert clock.at(m.home[j]) <= clock.deadline[j]


def test_fill_matrix_replicates_in_starting_time_order():
    g = [[1, 1, E, E],
         [E, E, 2, 2],
         [E, 3, 3, E]]
    m = Matrix.from_grid(g)
    # starting-time order 3, 1, 2: J3 takes row 0? no (col 1 busy) -> row 1? col 2 busy -> none;
    # J1 -> row 1 (cols 0-1 free), then row 2? col 1 busy; J2 -> row 0 (cols 2-3 free)
    added = fill_matrix(m, Clock(3), order=[3, 1, 2])
    np.testing.assert_array_equal(m.grid(), [[1, 1, 2, 2], [1, 1, 2, 2], [E, 3, 3, E]])
    assert added == 2 and m.home == {1: 0, 2: 1, 3: 2}
    # a job is replicated as often as rows allow, one row per round, rows in clock order
    m = Matrix.from_grid([[5, E], [E, E], [E, E]])
    assert fill_matrix(m, Clock(3, row=2)) == 2 and bits(m.rows[5]) == [0, 1, 2]


def test_fill_matrix_prefers_the_row_that_runs_next():
    m = Matrix.from_grid([[1, E], [E, E], [E, E]])
    m2 = Matrix.from_grid([[1, 2], [E, 2], [E, E]])
    fill_matrix(m2, Clock(3, row=1), order=[1, 2])
    assert bits(m2.rows[1]) == [0, 1, 2] and bits(m2.rows[2]) == [0, 1, 2]
    fill_matrix(m, Clock(3, row=2), order=[1])
    assert bits(m.rows[1]) == [0, 1, 2]


def test_schedule_gs_is_best_fit_and_stops_at_the_first_misfit():
    g = [[1, 1, 1, E, E, E],   # 3 free
         [2, 2, 2, 2, 2, E],   # 1 free
         [E] * 6]              # 6 free
    m = Matrix.from_grid(g)
    clock = Clock(3)
    q = deque([10, 11, 12, 13])
    placed = schedule_gs(m, clock, q, {10: 1, 11: 3, 12: 6, 13: 1})
    # J10 -> row 1 (best fit: 1 free), J11 -> row 0 (3 free), J12 (6) -> row 2; J13: nothing left
    assert placed == [10, 11, 12] and list(q) == [13]
    assert (m.home[10], m.home[11], m.home[12]) == (1, 0, 2)
    assert clock.deadline[12] == 2  # placed, not run yet: due when row 2 comes up


def test_matrix_invariants_are_enforced():
    m = Matrix(4, 2)
    m.place(1, 2, 0)
    with pytest.raises(RuntimeError):
        m.place(2, 3, 0)  # not enough columns
    m.place(2, 2, 0)
    with pytest.raises(RuntimeError):
        m.replicate(1, 0)  # already there
    m.replicate(1, 1)
    with pytest.raises(RuntimeError):
        m.move(1, 1)  # has a replica
    with pytest.raises(RuntimeError):
        m.recolumn(1, mask_of([2, 3]))
    with pytest.raises(InstanceError, match="different columns"):
        Matrix.from_grid([[1, 1, E], [E, 1, 1]])


# ---- migration (section 6.4) -----------------------------------------------------------------
def test_migration_overheads_equations_4_and_5():
    assert migration_overhead(1, 8, [2, 3], 10.0) == 10 / 2 * 8 + 10 * 5   # eq. (4)
    assert migration_overhead(2, 8, [2, 3], 10.0) == 10 * 8 + 10 / 2 * 5   # eq. (5)
    with pytest.raises(ValueError):
        migration_overhead(3, 1, [], 1.0)


def test_collapse_with_migration_takes_the_cheaper_option():
    # Row 0: J1 (4 cells, cols 0-3).  Row 1: J2 on cols 0-1 blocks J1's columns, 6 cells used (J2, J3).
    g = [[1, 1, 1, 1, E, E, E, E, E, E],
         [2, 2, E, E, 3, 3, 3, 3, E, E]]
    m = Matrix.from_grid(g)
    clock = clock_with(2, deadlines={1: 2, 2: 2, 3: 2})
    migs = collapse_migrating(m, clock, Budget(), 10.0)
    # S(A) = {J2} (2 tasks) < |A| = 4: option 1 (eq. 4 = 5*4 + 10*2 = 40 < eq. 5 = 40 + 10 = 50)
    assert len(migs) == 1 and migs[0].option == 1 and migs[0].blocked == (2,) and migs[0].tasks == 2
    assert migs[0].overhead == 40.0 and migs[0].penalty == {2: 10.0, 1: 5.0}
    grid = m.grid()
    assert (grid[0] == E).all() and list(grid[1, :4]) == [1, 1, 1, 1] and (grid[1] == 2).sum() == 2
    # A small job blocked by a large one: option 2 moves A itself
    g = [[1, E, E, E, E, E],
         [2, 2, 2, 2, E, E]]
    m = Matrix.from_grid(g)
    migs = collapse_migrating(m, clock_with(2, deadlines={1: 2, 2: 2}), Budget(), 10.0)
    assert migs[0].option == 2 and migs[0].tasks == 1 and migs[0].penalty == {2: 5.0, 1: 10.0}
    assert m.home[1] == 1 and bits(m.cols[1]) == [4] and bits(m.cols[2]) == [0, 1, 2, 3]


def test_migration_respects_the_task_limit_q():
    g = [[1, 1, 1, 1, E, E, E, E, E, E],
         [2, 2, E, E, 3, 3, 3, 3, E, E]]
    m = Matrix.from_grid(g)
    clock = clock_with(2, deadlines={1: 2, 2: 2, 3: 2})
    assert collapse_migrating(m, clock, Budget(left=1), 10.0) == []  # 2 or 4 tasks > Q = 1
    np.testing.assert_array_equal(m.grid(), g)
    b = Budget(left=3)
    migs = collapse_migrating(m, clock, b, 10.0)
    assert migs and migs[0].option == 1 and b.left == 1


def test_fill_with_migration_moves_the_blocking_job():
    # J1 (row 0, cols 0-1) cannot be replicated in row 1 because J2 holds col 1; row 1 has room.
    g = [[1, 1, 3, 3, 3],
         [E, 2, E, E, 4]]
    m = Matrix.from_grid(g)
    clock = Clock(2)
    assert fill_matrix(m, clock) == 0
    migs = fill_migrating(m, clock, Budget(), 10.0)
    assert [(x.job, x.option, x.blocked, x.penalty) for x in migs] == [(1, 1, (2,), {2: 10.0, 1: 5.0})]
    np.testing.assert_array_equal(m.grid(), [[1, 1, 3, 3, 3], [1, 1, 2, E, 4]])
    assert m.rows[1] == 0b11 and m.single(2)
    # a blocking job that appears in several rows is never migrated (same columns in every
    # row): J1 cannot go to rows 1-2 past J2; J2 goes to row 0 after J1 (one row only) moves
    m = Matrix.from_grid([[1, 1, E, E], [E, 2, E, E], [E, 2, E, E]])
    migs = fill_migrating(m, Clock(3), Budget(), 10.0)
    assert [(x.job, x.blocked) for x in migs] == [(2, (1,))]
    assert bits(m.cols[2]) == [1] and bits(m.cols[1]) == [0, 2]
    m.grid()


# ---- the event loop on worked streams ---------------------------------------------------------
def test_time_sharing_two_full_width_jobs():
    """Two 4-way jobs on 4 processors, MPL 2, slice 10 s, context switch 10 %
    (1 s).  J1 runs in slice 0 from 0 (switch to 1) and ends at 6; J2, replicated
    into row 0 by FillMatrix, switches in at 6 and keeps running into slice 1
    (its own row) without another switch: it ends at 12."""
    df = stream([(1, 0, 4, 5), (2, 0, 4, 5)])
    r = simulate_gang(df, [4], "gs", mpl=2, slice=10, switch_overhead=0.1, check=True)
    assert r.jobs["start"].tolist() == [0, 6] and r.jobs["end"].tolist() == [6, 12]
    assert r.jobs["switches"].tolist() == [1, 1] and r.jobs["placed"].tolist() == [0, 0]
    assert r.kappa["capacity_loss"] == 0  # nobody waits in the queue
    assert r.kappa["capacity_lost_any_time_switch"] == pytest.approx(8 / (4 * 12))
    # discrete scheduling: J1's cells idle until the boundary at 10, then J2 switches in
    r = simulate_gang(df, [4], "gs", mpl=2, slice=10, switch_overhead=0.1, discrete=True, check=True)
    assert r.jobs["end"].tolist() == [6, 16] and r.jobs["start"].tolist() == [0, 10]
    assert r.kappa["capacity_lost_any_time_idle"] == pytest.approx(4 * 4 / (4 * 16))


def test_gang_scheduling_alternates_rows():
    """Two 4-way jobs of 25 s, MPL 2, slice 10: they alternate 10 s slices."""
    df = stream([(1, 0, 4, 25), (2, 0, 4, 25)])
    r = simulate_gang(df, [4], "gs", mpl=2, slice=10, check=True)
    assert r.jobs["start"].tolist() == [0, 10]
    # J1: 0-10, 20-30, 40-45 ; J2: 10-20, 30-40, then alone (replicated) 45-50
    assert r.jobs["end"].tolist() == [45, 50]
    assert (r.jobs["executed"] == r.jobs["duration"]).all()


def test_cut_slice_starts_the_next_row_at_every_event():
    """Section 5.2: at an arrival or departure "the current time slice is
    cut short".  Two 4-way jobs of 30 s on 4 processors, MPL 2, slice 10,
    J2 arriving at 2.  The default keeps row 0's slice to 10 (J1: 0-10,
    20-30, 40-50; J2: 10-20, 30-40, 50-60).  ``cut_slice``: J1's arrival
    steps the rotation to row 1, where J1 is placed; J2's arrival at 2 cuts
    that slice and row 0 (J2) starts a fresh one: J2 runs 2-12, 22-32,
    42-52; J1 0-2, 12-22, 32-42 and, after J2's departure cuts the slice at
    52, 52-60, entering execution once more."""
    df = stream([(1, 0, 4, 30), (2, 2, 4, 30)])
    keep = simulate_gang(df, [4], "gs", mpl=2, slice=10, check=True)
    assert keep.jobs["start"].tolist() == [0, 10] and keep.jobs["end"].tolist() == [50, 60]
    cut = simulate_gang(df, [4], "gs", mpl=2, slice=10, cut_slice=True, check=True, trace=True)
    assert cut.jobs["start"].tolist() == [0, 2] and cut.jobs["end"].tolist() == [60, 52]
    assert cut.jobs["switches"].tolist() == [4, 3] and keep.jobs["switches"].tolist() == [3, 3]
    assert [(x[1], x[4]) for x in cut.trace if x[0] == "run"] == [
        (0, (0,)), (2, (1,)), (12, (0,)), (22, (1,)), (32, (0,)), (42, (1,)), (52, (0,))]
    assert (cut.jobs["executed"] == cut.jobs["duration"]).all()
    assert cut.options["cut_slice"] is True and "cut_slice" not in keep.options


def test_cut_slice_switches_more_often_as_the_events_come_faster():
    """The paper's warning: with frequent events continuous scheduling
    thrashes, "because context switches are more frequent".  On one stream,
    each policy with ``cut_slice`` switches jobs in more often than with the
    slice kept, and loses more capacity to the switches; every run keeps
    the matrix invariants and the clock rule (``check``)."""
    rng = np.random.default_rng(7)
    n = 80
    df = stream([(i + 1, float(s), int(p), float(d)) for i, (s, p, d) in
                 enumerate(zip(np.cumsum(rng.integers(0, 15, n)), rng.integers(1, 9, n), rng.integers(20, 300, n)))])
    for pol in ("gs", "bgs", "mgs", "mbgs"):
        kw = dict(mpl=3, slice=50, switch_overhead=0.05, check=True)
        keep = simulate_gang(df, [8], pol, **kw)
        cut = simulate_gang(df, [8], pol, cut_slice=True, **kw)
        assert cut.jobs["end"].notna().all()
        assert (cut.jobs["executed"] >= cut.jobs["duration"] + cut.jobs["penalty"] - 1e-9).all()
        assert cut.jobs["switches"].sum() > keep.jobs["switches"].sum(), pol
        assert cut.kappa["capacity_lost_any_time_switch"] > keep.kappa["capacity_lost_any_time_switch"], pol


def test_cut_slice_cuts_at_arrivals_and_departures_only(monkeypatch):
    """A backfilling reservation falling due is a scheduling event of bgs
    and mbgs, but neither an arrival nor a departure: it does not cut the
    slice (it did, 2 and 3 times on this stream)."""
    from epochbench.sim import gang as g
    rng = np.random.default_rng(7)
    n = 80
    df = stream([(i + 1, float(s), int(p), float(d), float(d) * 1.5) for i, (s, p, d) in
                 enumerate(zip(np.cumsum(rng.integers(0, 15, n)), rng.integers(1, 9, n), rng.integers(20, 300, n)))])
    cuts, ends = [], []
    boundary, finish = g.GangSimulator._boundary, g.GangSimulator._finish

    def cut(self, t):
        cuts.append((t, self.slice_end))
        return boundary(self, t)

    def fin(self, j, t):
        ends.append(t)
        return finish(self, j, t)

    monkeypatch.setattr(g.GangSimulator, "_boundary", cut)
    monkeypatch.setattr(g.GangSimulator, "_finish", fin)
    for pol in ("bgs", "mbgs"):
        cuts.clear()
        ends.clear()
        simulate_gang(df, [8], pol, mpl=3, slice=50, cut_slice=True, check=True)
        events = set(df["submit"]) | set(ends)
        assert [t for t, end in cuts if t < end and t not in events] == [], pol


def test_mpl1_gs_is_fcfs_and_bgs1_is_conservative_on_a_small_stream():
    df = stream([(1, 0, 6, 30, 40), (2, 1, 6, 10, 20), (3, 2, 12, 10, 10), (4, 3, 4, 15, 15),
                 (5, 3, 4, 30, 30), (6, 50, 16, 5, 5)])
    for pol, ref in (("gs", "fcfs"), ("bgs", "conservative")):
        a = simulate(df, [16], ref).jobs
        b = simulate_gang(df, [16], pol, mpl=1, check=True).jobs
        pd.testing.assert_frame_equal(a[["id", "start", "end", "promised"]], b[["id", "start", "end", "promised"]])


def test_bgs1_waits_for_the_next_event_while_a_job_overruns():
    """BGS-1's Schedule step is conservative's: while job 1 (no kill) runs
    past its estimate, job 2 is booked now and does not fit, and the pass
    asks for no other before job 1 ends (it asked for one at job 3's
    booking, a few seconds on: 4,004 passes for an overrun of 1e4 s)."""
    df = stream([(1, 0, 1, 2e4, 1e4), (2, 0, 1, 1, 4), (3, 0, 1, 0.5, 1)])
    df["duration"] = df["runtime"]                    # no kill at the estimate
    a = simulate(df, [1], "conservative")
    b = simulate_gang(df, [1], "bgs", mpl=1, check=True)
    assert b.jobs["start"].tolist() == a.jobs["start"].tolist() == [0, 2e4, 2e4 + 1]
    assert b.passes <= 5


def test_capacity_loss_eq3_reduces_to_eq2_with_mpl1():
    df = stream([(1, 0, 2, 100), (2, 0, 4, 10), (3, 5, 1, 30), (4, 20, 3, 50)])
    r = simulate_gang(df, [4], "gs", mpl=1)
    assert r.kappa["capacity_loss"] == pytest.approx(capacity_loss(r.jobs, [4]))
    assert r.jobs.attrs["capacity_loss"] == r.kappa["capacity_loss"]
    s = summarize_gang(r, np.array([4]))
    assert s["capacity_loss"] == r.kappa["capacity_loss"] and s["jobs"] == 4


def test_backfilling_gang_scales_estimates_by_mpl():
    """BGS-2: a waiting job's reservation assumes running jobs take 2 x their estimate."""
    df = stream([(1, 0, 4, 10, 10), (2, 0, 4, 10, 10), (3, 0, 4, 10, 10)])
    r = simulate_gang(df, [4], "bgs", mpl=2, slice=5, check=True)
    j = r.jobs.set_index("id")
    assert j.loc[3, "promised"] == 20  # rows hold J1 and J2 until 2 x 10
    assert j.loc[1, "start"] == 0 and j.loc[2, "start"] == 5
    assert (j["end"] - j["start"] >= j["duration"]).all()


def test_migration_policies_run_and_record_migrations():
    rng = np.random.default_rng(3)
    n = 60
    df = stream([(i + 1, float(s), int(p), float(d)) for i, (s, p, d) in
                 enumerate(zip(np.cumsum(rng.integers(0, 20, n)), rng.integers(1, 9, n), rng.integers(5, 200, n)))])
    for pol in ("mgs", "mbgs"):
        r = simulate_gang(df, [8], pol, mpl=3, slice=20, migration_cost=4, migration_limit=None, check=True)
        assert r.jobs["end"].notna().all()
        assert (r.jobs["executed"] >= r.jobs["duration"] + r.jobs["penalty"] - 1e-9).all()
        assert r.stats["migrations"] >= 1 and r.jobs["migrations"].sum() >= 1
        assert r.jobs["penalty"].sum() > 0
        r0 = simulate_gang(df, [8], pol, mpl=3, slice=20, migration_limit=0, check=True)
        assert r0.stats["migrated_tasks"] == 0


def test_empty_stream_and_options():
    df = stream([(1, 0, 1, 1)]).iloc[:0]
    r = simulate_gang(df, [4], "bgs")
    assert r.n == 0 and r.passes == 0
    df = stream([(1, 0, 1, 1)])
    r = simulate_gang(df, [4], "mbgs", mpl=3, slice=100, switch_overhead=0.02, migration_cost=5,
                      migration_limit=None, discrete=True, variant=2)
    assert r.options == {"mpl": 3, "slice": 100.0, "switch_overhead": 0.02, "discrete": True, "variant": 2,
                         "migration_cost": 5.0, "migration_limit": None}
    assert r.engine == "gang" and r.policy == "mbgs"


@pytest.mark.parametrize("kw, match", [
    (dict(policy="rr"), "no gang policy"), (dict(mpl=0), "mpl"), (dict(slice=0), "slice"),
    (dict(switch_overhead=1.0), "switch_overhead"), (dict(migration_cost=-1), "migration_cost"),
    (dict(migration_limit=-2), "migration_limit"), (dict(variant=4), "variant"),
    (dict(policy="mgs", variant=1), "variant"),
    (dict(mpl=129), "mpl: at most 128 rows"), (dict(mpl=10**20), "mpl: at most 128 rows"),
    (dict(slice=1e-9), "slice: 1e-09 s cuts this stream's .* into about .* slices, more than 1e\\+08"),
    # from Python, as the command line refuses the text (a raw TypeError, or a string taken as true, before)
    (dict(policy="mgs", migration_limit="x"), "migration_limit: tasks per slice >= 0 or None, got 'x'"),
    (dict(mpl="3"), "mpl: .* got '3'"), (dict(slice="200"), "slice: .* got '200'"),
    (dict(switch_overhead="0"), "switch_overhead"), (dict(migration_cost=True), "migration_cost"),
    (dict(discrete="no"), "discrete: True or False, got 'no'"),
    (dict(cut_slice="yes"), "cut_slice: True or False, got 'yes'"),
    (dict(cut_slice=True, discrete=True), "cut_slice: applies to continuous scheduling"),
    # NaN and ints beyond a float raised raw errors; 1.5 tasks and variant=True were converted
    (dict(mpl=float("nan")), "mpl: .* got nan"), (dict(slice=10**400), "slice: .* got 1000"),
    (dict(migration_cost=10**400), "migration_cost"), (dict(policy="mgs", migration_limit=10**400), "migration_limit"),
    (dict(policy="mgs", migration_limit=1.5), "migration_limit: .* got 1.5"), (dict(variant=True), "variant: .* True"),
    # a slice of 1e300 s overflowed the metrics; a migration costing 1e300 s never ended
    (dict(slice=1e300), "slice: at most 1e\\+09 seconds"), (dict(slice=2e9, migration_cost=1), "slice: at most"),
    (dict(policy="mgs", migration_cost=1e300), "migration_cost: at most 200000 s \\(1000 slices of 200 s, or 10000 s"),
    (dict(policy="mgs", slice=20, migration_cost=20_001), "migration_cost: at most 20000 s"),
    (dict(policy="mgs", slice=0.005, migration_cost=10_001), "migration_cost: at most 10000 s")])
def test_bad_options_are_named(kw, match):
    df = stream([(1, 0, 1, 1)])
    kw = dict(kw)
    policy = kw.pop("policy", "gs")
    with pytest.raises(InstanceError, match=match):
        simulate_gang(df, [4], policy, **kw)


def test_a_short_slice_keeps_the_default_migration_cost():
    df = stream([(1, 0, 1, 1), (2, 0, 2, 1)])
    r = simulate_gang(df, [4], "mgs", slice=0.005)                      # refused for the default cost of 10 s
    assert r.n == 2 and r.options["migration_cost"] == 10.0


def test_gang_takes_processors_only():
    df = stream([(1, 0, 1, 1)]).assign(res_mem=1)
    with pytest.raises(InstanceError, match="processors only"):
        simulate_gang(df, [4, 2], "gs")
    with pytest.raises(ValueError, match="could never run"):
        simulate_gang(stream([(1, 0, 5, 1)]), [4], "gs")


def test_cli_options():
    """The gang options come from the policy registry's declarations."""
    from epochbench.cli import build_parser
    from epochbench.cli_simulate import _machine_options
    p = build_parser("simulate")
    args = p.parse_args(["simulate", "--policy", "mgs", "--mpl", "3", "--slice", "60", "--switch-overhead", "0.01",
                         "--migration-cost", "5", "--migration-limit", "0", "--discrete", "--variant", "2"])
    assert _machine_options(args, "gang") == dict(mpl=3, slice=60.0, switch_overhead=0.01, migration_cost=5.0,
                                                  migration_limit=0, discrete=True, variant=2, cut_slice=False)
    args = p.parse_args(["simulate", "--policy", "gs"])
    assert _machine_options(args, "gang") == dict(mpl=5, slice=200.0, switch_overhead=0.0, migration_cost=10.0,
                                                  migration_limit=64, discrete=False, variant=3, cut_slice=False)
    args = p.parse_args(["simulate", "--policy", "bgs", "--cut-slice"])
    assert _machine_options(args, "gang")["cut_slice"] is True

def test_bgs_without_cleanmatrix_keeps_its_reservations():
    """Variant 1 (Schedule + FillMatrix, [zhang-comparative] figure 12 line 1)
    keeps FillMatrix's replicas; a reservation that has come drops those in
    its row (section 6.2: a reservation guarantees the start time).  Job 2
    was promised 10 and, before, placed only at 100 behind a replica of job 1."""
    import pandas as pd
    from epochbench.sim.gang import simulate_gang
    df = pd.DataFrame([dict(id=1, submit=0.0, runtime=100.0, estimate=100.0, procs=4, duration=100.0),
                       dict(id=2, submit=10.0, runtime=10.0, estimate=10.0, procs=4, duration=10.0)])
    for variant in (1, 3):
        jobs = simulate_gang(df, [4], "bgs", mpl=2, slice=20.0, variant=variant).jobs.set_index("id")
        assert jobs.loc[2, "placed"] == jobs.loc[2, "promised"] == 10.0


def test_migration_options_of_a_policy_without_migration_are_refused(tmp_path, capsys):
    """gs and bgs do not migrate: --migration-cost there was dropped silently."""
    from epochbench.cli import main
    f = tmp_path / "w.csv"
    stream([(1, 0, 1, 10), (2, 1, 2, 10)]).to_csv(f, index=False)
    for opt in (["--migration-cost", "5"], ["--migration-limit", "3"]):
        assert main(["simulate", "--workload", str(f), "--nodes", "4", "--policy", "gs", *opt, "--quiet"]) == 2
        assert "applies to policy mgs, mbgs only, not 'gs'" in capsys.readouterr().err
    assert main(["simulate", "--workload", str(f), "--nodes", "4", "--policy", "mgs", "--migration-cost", "5",
                 "--quiet"]) == 0


def test_the_text_report_prints_each_figure_once(tmp_path, capsys):
    from epochbench.cli import main
    f = tmp_path / "w.csv"
    stream([(1, 0, 3, 100), (2, 1, 2, 50), (3, 2, 4, 30)]).to_csv(f, index=False)
    assert main(["simulate", "--workload", str(f), "--nodes", "4", "--policy", "mbgs", "--mpl", "3",
                 "--slice", "10", "--switch-overhead", "0.02"]) == 0
    keys = [line.split()[0] for line in capsys.readouterr().out.splitlines()[1:] if line.startswith("  ")]
    assert "capacity_loss_idle" in keys and "migrations" in keys and len(keys) == len(set(keys))


@pytest.mark.parametrize("cost", [10.0, 1e-9, 0.0])
def test_collapse_option_choice_does_not_depend_on_the_migration_cost(cost):
    """Eqs. (4) and (5) of [zhang-comparative] section 6.4 both scale with C:
    at C = 0 both overheads were 0 and the tie took option 1, moving a
    4-task blocker to place a 1-task job (option 2 at any C > 0)."""
    m = Matrix.from_grid([[1, E, E, E, E, E], [2, 2, 2, 2, E, E]])
    migs = collapse_migrating(m, clock_with(2, deadlines={1: 2, 2: 2}), Budget(), cost)
    assert migs[0].option == 2 and migs[0].tasks == 1 and migs[0].overhead == pytest.approx(cost * 1 + cost / 2 * 4)
    assert bits(m.cols[1]) == [4] and bits(m.cols[2]) == [0, 1, 2, 3]


def test_a_free_migration_places_the_waiting_job_as_a_cheap_one_does():
    """Hand-worked (6 processors, mpl 2, 100 s slices, Q = 3): J (3 procs,
    1000 s) and B (3, 250 s) fill row 0; A1 and A2 (1 proc each) go to row
    1; W (6 procs) waits.  When B ends at 250, CollapseMatrix-2 moves A1 and
    A2 into row 0 by option 2 (1 task each), row 1 empties and W is placed
    at 250, starting with row 1's slice at 300.  At C = 0 the tie took
    option 1 for A1 (J's 3 tasks: all of Q), A2 stayed and W started at 700."""
    import pandas as pd
    import epochbench as eb
    from epochbench.instances.jobs import make_workload
    jobs = pd.DataFrame({"id": range(5), "submit": [0.0, 0.0, 5.0, 6.0, 7.0], "procs": [3, 3, 1, 1, 6],
                         "runtime": [1000.0, 250.0, 500.0, 500.0, 100.0]})
    jobs["estimate"] = jobs["runtime"]
    w = make_workload(jobs, [6])
    for cost in (0.0, 10.0):
        r = eb.simulate(w, "mgs", machine="gang", mpl=2, slice=100.0, migration_cost=cost, migration_limit=3)
        row = r.jobs.set_index("id").loc[4]
        assert (row["placed"], row["start"], row["end"]) == (250.0, 300.0, 400.0), cost


def test_the_gang_policies_say_the_rules_of_the_paper():
    """gs was listed as 'first fit into rows'; [zhang-comparative] section
    6.1's Schedule takes the row with the fewest free slots that holds the
    job, "a best fit algorithm", as the code does."""
    from epochbench.sim import registry
    registry.policies("gang")
    rule = {name: registry.get_policy("gang", name).rule for name in ("gs", "bgs", "mgs", "mbgs")}
    assert "best fit into rows" in rule["gs"] and "first fit" not in rule["gs"] and "6.1" in rule["gs"]
    assert "6.2" in rule["bgs"] and "between processors" in rule["mgs"] and "6.5" in rule["mbgs"]


# -- rules a one-token change broke unseen (mutation review, round 6) --
def test_collapse_never_migrates_a_blocking_job_twice_in_one_pass():
    """[zhang-comparative] 6.4: migration never recurs within one matrix (no
    ping-pong).  The grid of test_collapse_with_migration_takes_the_cheaper_option,
    but J2 already migrated in this pass: option 1 (move J2) is out, so J1
    itself goes to row 1's empty columns (option 2, 4 tasks)."""
    m = Matrix.from_grid([[1, 1, 1, 1, E, E, E, E, E, E],
                          [2, 2, E, E, 3, 3, 3, 3, E, E]])
    b = Budget(moved={2})
    migs = collapse_migrating(m, clock_with(2, deadlines={1: 2, 2: 2, 3: 2}), b, 10.0)
    assert [(x.job, x.option, x.tasks) for x in migs] == [(1, 2, 4)]
    assert bits(m.cols[2]) == [0, 1] and bits(m.cols[1]) == [2, 3, 8, 9] and b.moved == {1, 2}


def test_fill_with_migration_may_migrate_exactly_q_tasks():
    """[zhang-comparative] 6.4: the migrated tasks must not exceed Q.  The grid
    of test_fill_with_migration_moves_the_blocking_job with Q = 1: moving
    J2 (1 task) is allowed and uses up the budget."""
    m = Matrix.from_grid([[1, 1, 3, 3, 3], [E, 2, E, E, 4]])
    b = Budget(left=1)
    migs = fill_migrating(m, Clock(2), b, 10.0)
    assert [(x.job, x.tasks) for x in migs] == [(1, 1)] and b.left == 0
    assert m.grid().tolist() == [[1, 1, 3, 3, 3], [1, 1, 2, E, 4]]


def test_fill_matrix_replicates_a_job_that_fits_only_the_emptiest_row():
    """FillMatrix ([zhang-comparative] 6.1) tries every row: J1 (2 cells)
    does not fit row 1 (1 cell free) but fits the empty row 2."""
    m = Matrix.from_grid([[1, 1, E, E], [2, 2, 2, E], [E, E, E, E]])
    assert fill_matrix(m, Clock(3)) == 1
    assert m.grid().tolist() == [[1, 1, E, E], [2, 2, 2, E], [1, 1, E, E]]


def test_a_reservation_drops_only_the_replicas_it_needs():
    """Variant 1 (no CleanMatrix): a 2-processor job whose reservation has
    come in row 1 drops replicas there in row order until 2 cells are
    empty: J1's replica goes, J2's stays."""
    from epochbench.sim.gang_backfill import _make_room
    m = Matrix.from_grid([[1, 1, 2, 2], [1, 1, 2, 2]])
    _make_room(m, 1, 2)
    assert m.grid().tolist() == [[1, 1, 2, 2], [E, E, 2, 2]]


def test_the_slice_limit_counts_the_work_a_queue_makes_wait():
    """A review: 20 jobs of 100 s on one processor run 2,000 s, and the
    limit counted the span as the first to the last arrival plus the
    longest job (100 s), so a slice of 1e-5 s (2e8 slices, about an hour)
    was accepted.  The work over the processors bounds the span too."""
    df = stream([(i, 0, 1, 100) for i in range(1, 21)])
    with pytest.raises(InstanceError, match=r"cuts this stream's 2e\+03 s into about 2e\+08 slices"):
        simulate_gang(df, [1], "gs", mpl=2, slice=1e-5)
    assert simulate_gang(df, [1], "gs", mpl=2, slice=1.0).jobs["end"].max() == 2000
