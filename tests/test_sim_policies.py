"""Policies of the online simulator: the seeds' worked examples and
properties on random small streams (both engines)."""
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from epochbench.sim.pool import simulate_pool as simulate

ENGINES = ["fast", "generic"]
POLICIES = ["fcfs", "nonfcfs", "easy", "conservative"]
H = 3600.0  # the seed's "time unit": one hour


def stream(rows, k=1):
    """rows: (id, submit, procs, duration[, estimate][, res_1 ... res_{k-1}]);
    estimate defaults to the duration (exact estimates, as in [rajaei-dadfar])."""
    out = []
    for r in rows:
        i, sub, procs, dur = r[:4]
        est = r[4] if len(r) > 4 and r[4] is not None else dur
        row = {"id": i, "submit": float(sub), "runtime": float(dur), "estimate": float(est),
               "procs": procs, "duration": float(min(dur, est))}
        for x in range(1, k):
            row[f"res_{x}"] = r[4 + x]
        out.append(row)
    df = pd.DataFrame(out).astype({"id": "int64", "procs": "int64"})
    return df.sort_values(["submit", "id"], kind="stable").reset_index(drop=True)


def starts(res, unit=1.0):
    return {int(i): s / unit for i, s in zip(res.jobs["id"], res.jobs["start"])}


# ---- [rajaei-dadfar], tables 1 and 2: Non-FCFS with a 24 h starvation limit -----------------
def table1(waited):
    """16 nodes.  Job1 (6 nodes) and Job2 (6) run until 3 and 2 (time units of
    one hour); Job3 (12 nodes, 1 unit) has waited ``waited`` hours; Job4 (5
    nodes, 3 units) and Job5 (4, 2) arrive at 0."""
    before = -(waited + 1) * H
    return stream([(1, before, 6, 3 * H - before), (2, before, 6, 2 * H - before),
                   (3, -waited * H, 12, H), (4, 0, 5, 3 * H), (5, 0, 4, 2 * H)])


@pytest.mark.parametrize("engine", ENGINES)
def test_nonfcfs_below_the_limit_table1(engine):
    s = starts(simulate(table1(0.5), [16], "nonfcfs", engine=engine), H)
    assert s[5] == 0  # 4 nodes free: Job5 jumps over Job3 at once
    assert s[4] == 2  # Job4 when Job2 ends
    assert s[3] == 5 and s[3] > max(s[4], s[5])  # Job3 last, once Job4 is gone


@pytest.mark.parametrize("engine", ENGINES)
def test_nonfcfs_past_the_limit_table2(engine):
    s = starts(simulate(table1(25), [16], "nonfcfs", engine=engine), H)
    assert s[3] == 3  # the starved Job3 blocks the queue until Job1 ends
    assert s[4] >= s[3] and s[5] >= s[3]  # Job4 and Job5 wait until Job3 has started
    assert s[5] == 3 and s[4] == 4  # then priority order again: Job5 beside Job3


@pytest.mark.parametrize("engine", ENGINES)
def test_nonfcfs_starvation_limit_is_an_option(engine):
    s = starts(simulate(table1(25), [16], "nonfcfs", engine=engine, starvation_limit=30 * H), H)
    assert s[5] == 0 and s[4] == 2 and s[3] == 5


# ---- [rajaei-dadfar], tables 3 and 4: EASY ("aggressive") and conservative backfilling -------
def table3():
    """16 nodes.  Job1 (6 nodes) runs until 3, Job2 (6) until 1; Job3 (12
    nodes, 1 unit) and Job4 (14, 1) are queued in that order; Job5 (4, 2
    units) and Job6 (4, 3) arrive at 0."""
    return stream([(1, -1, 6, 4), (2, -1, 6, 2), (3, -0.5, 12, 1), (4, -0.4, 14, 1),
                   (5, 0, 4, 2), (6, 0, 4, 3)])


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_table3(engine):
    """Job5 backfills at once and Job3 starts at 3, when Job1 ends; then Job4
    holds the reservation and starts at 4.

    The paper's prose makes Job6 wait until Job5 ends, because it counts only
    jobs that end before the shadow time (3).  Under the strict EASY rule
    Job6 starts at 1, when Job2 ends: it fits then, and although it runs past
    the shadow time it needs no more than the 4 extra processors (16 free at
    3 minus Job3's 12), so Job3 is not delayed."""
    res = simulate(table3(), [16], "easy", engine=engine)
    s = starts(res)
    assert s[5] == 0 and s[3] == 3 and s[4] == 4
    assert s[6] == 1  # on the extra processors (the prose says after Job5)
    shadow = dict(zip(res.jobs["id"], res.jobs["promised"]))
    assert shadow[3] == 3 and shadow[4] == 4  # the reservations the seed describes


@pytest.mark.parametrize("engine", ENGINES)
def test_conservative_table4(engine):
    """Job3 is reserved after Job1 (3), Job4 after Job3 (4), Job5 backfills.

    The paper reserves Job6 after Job4, "since Job6 cannot be backfilled".
    Under the strict rule Job6 gets the earliest slot where it fits for its
    whole estimate without delaying a reservation: at 1, when Job2 ends, 4
    nodes stay free beside Job3's reservation on [3, 4) (16 - 12), so it
    starts at 1."""
    res = simulate(table3(), [16], "conservative", engine=engine)
    s = starts(res)
    assert s[5] == 0 and s[6] == 1 and s[3] == 3 and s[4] == 4
    first = dict(zip(res.jobs["id"], res.jobs["promised"]))
    assert first[3] == 3 and first[4] == 4 and first[5] == 0 and first[6] == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_conservative_compresses_once_per_early_end_in_queue_order(engine):
    """The README's rule (a review found it): Job2 ends at 1, 9 before its
    estimate; the compression moves Job3 to 8 (Job4's reservation [5, 8)
    still holds processors), then Job4 to 1.  The slot Job4 left is not
    offered to Job3 again: no job ends early after that, so Job3 starts at
    8 with the machine idle on [5, 8), where EASY starts it at 5."""
    df = stream([(1, 0, 2, 5), (2, 0, 2, 1, 10), (3, 0, 4, 2), (4, 0, 2, 3)])
    assert starts(simulate(df, [4], "conservative", engine=engine)) == {1: 0, 2: 0, 3: 8, 4: 1}
    assert starts(simulate(df, [4], "easy", engine=engine))[3] == 5


@pytest.mark.parametrize("engine", ENGINES)
def test_fcfs_blocks_behind_the_head_seed002(engine):
    """[vadhiyar-notes] figure 1: a 64-node job runs on 128 nodes; the queued 128-node
    job blocks the 32-node job behind it, which would fit."""
    df = stream([(1, 0, 64, 10), (2, 1, 128, 5), (3, 2, 32, 1)])
    s = starts(simulate(df, [128], "fcfs", engine=engine))
    assert s == {1: 0, 2: 10, 3: 15}
    s = starts(simulate(df, [128], "easy", engine=engine))
    assert s[3] == 2  # EASY backfills it: it ends before the shadow time 10


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_extra_with_two_resources(engine):
    """K = 2: a job qualifies through ``extra`` only if it fits there on
    every resource."""
    # 8 procs, 4 units of memory.  Job1 (6 procs, 1 mem) runs until 10; head
    # Job2 (4 procs, 3 mem) waits for procs: shadow 10, extra = (8 - 4, 4 - 3).
    rows = [(1, 0, 6, 10, None, 1), (2, 1, 4, 5, None, 3),
            (3, 2, 2, 20, None, 2),   # fits now and in extra procs, not in extra mem
            (4, 3, 2, 20, None, 1)]   # fits in extra on both: backfills at 3
    s = starts(simulate(stream(rows, k=2), [8, 4], "easy", engine=engine))
    assert s[4] == 3 and s[2] == 10 and s[3] == 15
    s1 = starts(simulate(stream([r[:4] for r in rows]), [8], "easy", engine=engine))
    assert s1[3] == 2  # with processors only, Job3 would have backfilled


# ---- properties on random small streams ------------------------------------------------
@st.composite
def streams(draw, overrun=False):
    k = draw(st.sampled_from([1, 2]))
    cap = [draw(st.integers(1, 10)) for _ in range(k)]
    n = draw(st.integers(1, 18))
    rows, t = [], 0.0
    for i in range(n):
        t += draw(st.sampled_from([0.0, 0.0, 1.0, 2.0, 3.5]))  # ties on purpose
        est = float(draw(st.integers(1, 12)))
        run = float(draw(st.integers(0, 16)))
        dur = run if overrun else min(run, est)
        rows.append((draw(st.integers(0, 10**6)) * (n + 1) + i, t, draw(st.integers(1, cap[0])), dur, est,
                     *[draw(st.integers(0, cap[x])) for x in range(1, k)]))
    df = stream(rows, k)
    df["runtime"] = df["duration"]
    return df, np.array(cap)


def peak_use(jobs, k):
    """Largest use of each resource over time, from the start / end events
    (at equal times ends first: [start, end) intervals)."""
    cols = ["procs"] + [f"res_{x}" for x in range(1, k)]
    d = jobs[cols].to_numpy()
    ev = sorted([(e, 0, i) for i, e in enumerate(jobs["end"])] +
                [(s, 1, i) for i, s in enumerate(jobs["start"])])
    use, peak = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.int64)
    for _, kind, i in ev:
        use += d[i] if kind else -d[i]
        peak = np.maximum(peak, use)
    return peak


@settings(max_examples=60, deadline=None)
@given(data=streams(), policy=st.sampled_from(POLICIES), engine=st.sampled_from(ENGINES))
def test_schedules_are_valid(data, policy, engine):
    df, cap = data
    j = simulate(df, cap, policy, engine=engine).jobs
    assert j["start"].notna().all()  # every job runs
    assert (j["start"] >= j["submit"]).all()  # none before it arrives
    assert ((j["end"] - j["start"]) == j["duration"]).all()  # each for exactly its duration
    assert (peak_use(j, len(cap)) <= cap).all()  # no resource over-committed


@settings(max_examples=60, deadline=None)
@given(data=streams(), engine=st.sampled_from(ENGINES))
def test_easy_head_never_starts_after_its_shadow_time(data, engine):
    j = simulate(*data, "easy", engine=engine).jobs
    had = j["promised"].notna()
    assert (j.loc[had, "start"] <= j.loc[had, "promised"]).all()


@settings(max_examples=60, deadline=None)
@given(data=streams(), engine=st.sampled_from(ENGINES))
def test_conservative_never_starts_after_its_first_reservation(data, engine):
    j = simulate(*data, "conservative", engine=engine).jobs
    assert j["promised"].notna().all()
    assert (j["start"] <= j["promised"]).all()


@settings(max_examples=60, deadline=None)
@given(data=streams(), engine=st.sampled_from(ENGINES))
def test_fcfs_starts_jobs_in_arrival_order(data, engine):
    j = simulate(*data, "fcfs", engine=engine).jobs  # rows in (submit, id) order
    assert j["start"].is_monotonic_increasing


@settings(max_examples=40, deadline=None)
@given(data=streams(overrun=True), policy=st.sampled_from(POLICIES), engine=st.sampled_from(ENGINES))
def test_valid_when_jobs_overrun_their_estimates(data, policy, engine):
    """Without kill-at-estimate a job may run past its estimate: schedules stay
    valid (the guarantees of EASY and conservative then no longer hold)."""
    df, cap = data
    j = simulate(df, cap, policy, engine=engine).jobs
    assert j["start"].notna().all() and (j["start"] >= j["submit"]).all()
    assert (peak_use(j, len(cap)) <= cap).all()


def test_a_policy_option_beyond_every_float_is_refused_naming_it():
    """registry.number let float()'s OverflowError through: a policy built
    with starvation_limit=10**400 raised a raw OverflowError."""
    from epochbench.sim.policies import make
    with pytest.raises(ValueError, match="^starvation_limit: .*got 1000"):
        make("nonfcfs", starvation_limit=10**400)


@pytest.mark.parametrize("engine", ENGINES + ["python"])
def test_easy_backfills_a_job_that_ends_exactly_at_the_shadow_time(engine):
    """[vadhiyar-notes] "start and shadow": a job may start now if it ends by
    the shadow time, when the head starts (ends come before starts at one
    time), whatever ``extra`` is.  4 nodes: job 1 (3 nodes) runs until 10;
    head job 2 (4 nodes) is promised 10, extra 0; job 3 (1 node, estimate
    8) arrives at 2 and ends at 10 exactly: it starts at 2; job 4 (1 node,
    estimate 9) would end after 10 and fits no extra: it waits for job 2.
    No golden schedule had a job ending at the shadow time, so '<' for
    '<=' passed every test."""
    df = stream([(1, 0, 3, 10), (2, 1, 4, 5), (3, 2, 1, 8), (4, 2, 1, 9)])
    if engine == "python":
        from epochbench.sim import easy_python
        start, promised, _, _ = easy_python.easy_python(df["submit"].tolist(), df["duration"].tolist(),
                                                         df["estimate"].tolist(), df["id"].tolist(),
                                                         df["procs"].tolist(), 4)
        s = dict(zip(df["id"].tolist(), start))
    else:
        s = starts(simulate(df, [4], "easy", engine=engine))
    assert s == {1: 0, 2: 10, 3: 2, 4: 15}
