"""Per-epoch recording of the gang simulator (sim/record.py GangRecorder,
``simulate --machine gang --record-epochs``): every Schedule and FillMatrix
row-filling step is a ``packing`` instance whose ``recorded`` solution is the
policy's own choice, the schedule does not change when recording, and
``score`` gives finite gaps against proven optima."""
import numpy as np
import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.instances import read_family
from epochbench.instances.registry import solve
from epochbench.sim.gang import simulate_gang
from epochbench.sim.record import GangRecorder, choice_of


def busy_stream(seed: int, n: int = 60, nodes: int = 16) -> pd.DataFrame:
    """A loaded stream: long queues, estimates above the runtimes."""
    rng = np.random.default_rng(seed)
    run = rng.integers(5, 300, n).astype(float)
    return pd.DataFrame({"id": np.arange(1, n + 1), "submit": np.cumsum(rng.exponential(12.0, n)).round(),
                         "runtime": run, "estimate": np.ceil(run * rng.uniform(1, 3, n)),
                         "procs": rng.integers(1, nodes + 1, n), "duration": run})


def record(policy, df, **kw):
    rec = GangRecorder()
    res = simulate_gang(df, [16], policy, mpl=3, slice=50.0, recorder=rec, **kw)
    return rec, res


@pytest.mark.parametrize("discrete", [False, True])
@pytest.mark.parametrize("policy", ["gs", "bgs", "mgs", "mbgs"])
def test_recording_leaves_the_schedule_bit_identical(policy, discrete):
    df = busy_stream(1)
    plain = simulate_gang(df, [16], policy, mpl=3, slice=50.0, discrete=discrete)
    rec, res = record(policy, df, discrete=discrete)
    pd.testing.assert_frame_equal(plain.jobs, res.jobs)
    assert plain.passes == res.passes and plain.kappa == res.kappa
    steps = {i.meta["step"] for i in rec.instances}
    assert steps == {"schedule", "fill"}
    # the policy placed and replicated jobs: some recorded choice is not empty
    assert any(choice_of(i) for i in rec.instances if i.meta["step"] == "schedule")
    assert any(choice_of(i) for i in rec.instances if i.meta["step"] == "fill")


@pytest.mark.parametrize("policy,discrete", [("gs", False), ("bgs", False), ("mbgs", False), ("bgs", True)])
def test_recorded_gang_epochs_replay_the_choice_and_pass_the_checker(policy, discrete):
    # discrete BGS starts jobs whose booking began before the boundary: they keep their booked end
    rec, _ = record(policy, busy_stream(2), discrete=discrete)
    assert len(rec.instances) > 10
    for inst in rec.instances:
        got = solve(inst, "recorded")           # solve() runs the family checker on the decision
        assert list(got.decision) == choice_of(inst)
        procs = inst.profit[choice_of(inst)]
        assert got.value == pytest.approx(procs.sum())           # value = cells filled in the row
        if inst.meta["step"] == "schedule":
            assert inst.used[0] + procs.sum() <= inst.capacity[0]       # the row's cells


def test_bgs_steps_carry_the_rows_reservations():
    rec, _ = record("bgs", busy_stream(3))
    sched = [i for i in rec.instances if i.meta["step"] == "schedule"]
    # resource 0 is the row's cells, the others the intervals of its availability profile
    assert all(i.meta["resources"][0] == "cells" for i in sched)
    assert any(i.k > 2 for i in sched)
    for inst in sched:
        times = [float(r.split("@")[1]) for r in inst.meta["resources"][1:]]
        assert times == sorted(times) and (not times or times[0] == inst.meta["time"])


def test_fill_step_blocks_follow_the_columns():
    rec, _ = record("gs", busy_stream(4))
    fills = [i for i in rec.instances if i.meta["step"] == "fill"]
    assert fills
    for inst in fills:
        # a candidate covers whole column blocks: its demand sums to its processors
        assert (inst.demand.sum(axis=1) == inst.profit).all()
        assert (inst.used == 0).all() and inst.capacity.sum() <= 16


def test_schedule_row_has_a_known_optimum():
    # 8 processors, one row: job 1 (6 procs) runs from t = 0; at t = 1 jobs 2 (3 procs) and 3 (2 procs)
    # arrive.  GS (FCFS) stops at job 2, which does not fit the 2 empty cells; job 3 would fill them.
    df = pd.DataFrame({"id": [1, 2, 3], "submit": [0.0, 1.0, 1.0], "runtime": [100.0, 50.0, 50.0],
                       "estimate": [100.0, 50.0, 50.0], "procs": [6, 3, 2], "duration": [100.0, 50.0, 50.0]})
    rec = GangRecorder(steps=("schedule",))
    simulate_gang(df, [8], "gs", mpl=1, slice=50.0, recorder=rec)
    inst = next(i for i in rec.instances if i.meta["time"] == 1.0)
    assert inst.meta["job_ids"] == [2, 3] and choice_of(inst) == []    # GS stops at the first misfit
    best = solve(inst, "cpsat", time_limit=5, threads=1)
    assert best.status == "optimal" and list(best.decision) == [1] and best.value == 2


def test_cli_records_gang_epochs_and_scores_them(tmp_path):
    trace = tmp_path / "s.csv"
    busy_stream(5, n=40).to_csv(trace, index=False)
    out = tmp_path / "epochs"
    assert main(["simulate", "--workload", str(trace), "--nodes", "16", "--machine", "gang", "--policy", "bgs",
                 "--mpl", "2", "--slice", "50", "--record-epochs", str(out), "--quiet"]) == 0
    insts = read_family(out)
    assert insts and all(i.meta["policy"] == "bgs" and "choice" in i.meta for i in insts)
    assert main(["score", str(out), "--methods", "recorded,cpsat", "--time-limit", "5"]) == 0
    table = pd.read_csv(out / "scores.csv")
    rec = table[table["method"] == "recorded"]
    assert len(rec) == len(insts)
    proven = rec[rec["gap_kind"] == "optimum"]
    assert len(proven) == len(rec)                       # small rows: CP-SAT proves every optimum
    assert np.isfinite(proven["gap"]).all() and (proven["gap"] >= 0).all() and (proven["gap"] <= 1).all()


def test_gang_recorder_rejects_unknown_steps():
    with pytest.raises(ValueError, match="no gang step"):
        GangRecorder(steps=("compact",))


@pytest.mark.parametrize("policy,seed", [("gs", 6), ("bgs", 10)])   # bgs: a stream whose rows, placing at one
def test_a_job_placed_in_one_row_is_no_candidate_of_another(policy, seed):   # time, each have a decision
    rec, _ = record(policy, busy_stream(seed))
    steps: dict = {}
    for inst in rec.instances:
        if inst.meta["step"] == "schedule":
            steps.setdefault(inst.meta["time"], []).append(inst)
    seen = 0
    for insts in steps.values():
        for a in insts:
            taken = {a.meta["job_ids"][i] for i in choice_of(a)}
            for b in insts:
                if b is not a and b.meta["row"] != a.meta["row"]:
                    seen += bool(taken)
                    assert not taken & set(b.meta["job_ids"])
    assert seen


def test_every_keeps_an_even_sample():
    df = busy_stream(7)
    full, _ = record("gs", df)
    rec = GangRecorder(every=3)
    simulate_gang(df, [16], "gs", mpl=3, slice=50.0, recorder=rec)
    assert rec.seen == full.seen == len(full.instances)
    assert len(rec.instances) == -(-full.seen // 3)
    assert [i.meta["job_ids"] for i in rec.instances] == [i.meta["job_ids"] for i in full.instances[::3]]
    with pytest.raises(ValueError, match="every"):
        GangRecorder(every=0)


def test_zhang_gang_scores_the_gang_steps():
    from epochbench.experiments import Options
    from epochbench.experiments import zhang_gang as zg

    quick = zg.tasks(Options(quick=True))
    scored = [t for t in quick if t.get("gap_epochs")]
    assert scored and all(t["policy"] != "bf" and t["overhead"] == 0 for t in scored)
    task = {"stream": "lublin03", "policy": "bgs", "mpl": 2, "overhead": 0.0, "discrete": False, "point": 1.2,
            "seed": 0, "jobs": 150, "gap_epochs": 12, "gap_time_limit": 2.0}
    row = zg.run(task)[0]
    assert 0 < row["gap_epochs"] <= 12 and row["gap_unproven"] == 0
    assert 0 <= row["gap_schedule"] <= 1 and 0 <= row["gap_fill"] <= 1
    gs = zg.run({**task, "policy": "gs", "overhead": 0.01, "gap_epochs": None})[0]
    assert "gap_schedule" not in gs                       # not scored: no gap columns
    t = zg.table(pd.DataFrame([row, gs]))
    got = t.set_index("config")
    assert got.loc["BGS-2", "gap_vs"] == "optimum" and got.loc["BGS-2", "epochs"] == row["gap_epochs"]
    assert got.loc["BGS-2", "gap_sched %"] == pytest.approx(100 * row["gap_schedule"], abs=0.01)
    assert np.isnan(got.loc["GS-2", "gap_sched %"])


# ---- Schedule and FillMatrix instances, worked by hand (mutation review: the
# cases below pin the estimates, the profile resources and the candidates).


def stream(rows):
    """rows: (id, submit, procs, runtime = estimate)."""
    return pd.DataFrame([dict(id=i, submit=float(s), runtime=float(d), estimate=float(d), procs=p,
                              duration=float(d)) for i, s, p, d in rows])


def schedule_steps(df, policy, mpl, slice=50.0, **kw):
    rec = GangRecorder(steps=("schedule",))
    simulate_gang(df, [4], policy, mpl=mpl, slice=slice, recorder=rec, **kw)
    return rec.instances


def test_bgs_instances_carry_the_estimate_times_mpl():
    """Guards against recording the raw estimates under BGS: a row runs at
    1/mpl of the machine's speed, so a job's time there is "estimated time x
    MPL" ([zhang-comparative] section 6.2), the time the profiles use.  4
    processors, mpl 2: job 1 (2 procs, estimate 10) goes to row 0, job 2
    (3 procs, estimate 20) to row 1 (row 0 has 2 free until 2 x 10)."""
    insts = schedule_steps(stream([(1, 0, 2, 10), (2, 0, 3, 20)]), "bgs", mpl=2)
    assert [(i.meta["row"], i.meta["job_ids"]) for i in insts] == [(0, [1]), (1, [2])]
    assert list(insts[0].estimate) == [20.0]
    assert list(insts[1].estimate) == [40.0]


def test_a_job_started_by_the_step_frees_its_cells_only_before_its_end():
    """Guards against giving a started job's processors back on the profile
    interval that begins at its end (half-open [start, end)).  4 processors,
    BGS-1: at t = 0 job 1 (2 procs, 10 s) starts and job 2 (4 procs, 20 s)
    is booked on [10, 30).  Row profile: 2 free on [0, 10) (job 1), 0 on
    [10, 30) (job 2).  Job 1 back to waiting: 4 free on [0, 10), still 0 on
    [10, 30), so the profile intervals use 0 and 4 processors."""
    inst = schedule_steps(stream([(1, 0, 2, 10), (2, 0, 4, 20)]), "bgs", mpl=1)[0]
    assert inst.meta["time"] == 0.0 and inst.meta["job_ids"] == [1, 2]
    assert inst.meta["resources"] == ["cells", "profile@0", "profile@10"]
    assert list(inst.used) == [0, 0, 4]
    assert inst.demand.tolist() == [[2, 2, 0], [4, 4, 4]]
    assert choice_of(inst) == [0]


def test_a_merged_profile_interval_uses_its_busiest_stretch():
    """Guards against a merged profile interval taking the least busy of
    its stretches: the candidates need their processors on all of it, so it
    uses n - (fewest free).  4 processors, BGS-1: job 1 (2 procs, 10 s) runs
    from t = 0.  At t = 1 job 2 (3 procs, 20 s) is booked on [10, 30) and
    job 3 (1 proc, 5 s) starts now, ending at 6.  Job 3 back to waiting,
    the profile is 2 free on [1, 10), 1 on [10, 30).  Job 2, if started now,
    would end at 21, job 3 at 6: the intervals [6, 10) and [10, 30) hold the
    same candidate (job 2), so they merge into profile@6 with 4 - min(2, 1)
    = 3 used."""
    insts = schedule_steps(stream([(1, 0, 2, 10), (2, 1, 3, 20), (3, 1, 1, 5)]), "bgs", mpl=1)
    inst = next(i for i in insts if i.meta["time"] == 1.0)
    assert inst.meta["job_ids"] == [2, 3]
    assert inst.meta["resources"] == ["cells", "profile@1", "profile@6"]
    assert list(inst.used) == [2, 2, 3]
    assert inst.demand.tolist() == [[3, 3, 3], [1, 1, 0]]
    assert choice_of(inst) == [1]


def test_discrete_bgs_records_a_late_started_job_with_its_booked_end():
    """Guards against recording a job that the step starts after its
    reservation came as if it ran from the pass for its whole estimate:
    it keeps its booked interval.  4 processors, BGS-1, slice 10, discrete
    (passes at the boundaries): at t = 0 job 1 (4 procs, 3 s) starts, job 2
    (2 procs, 10 s) is booked on [3, 13), job 3 (4 procs, 5 s) on [13, 18).
    At the pass at t = 10 job 2 starts with its booked end 13 (not
    10 + 10 = 20); job 3 would end at 15.  The profile with job 2 back to
    waiting: 4 free on [10, 13), 0 on [13, 18)."""
    insts = schedule_steps(stream([(1, 0, 4, 3), (2, 0, 2, 10), (3, 0, 4, 5)]), "bgs", mpl=1,
                           slice=10.0, discrete=True)
    inst = next(i for i in insts if i.meta["time"] == 10.0)
    assert inst.meta["job_ids"] == [2, 3]
    assert inst.meta["resources"] == ["cells", "profile@10", "profile@13"]
    assert list(inst.used) == [0, 0, 4]
    assert inst.demand.tolist() == [[2, 2, 0], [4, 4, 4]]
    assert choice_of(inst) == [0]


def test_fill_lists_only_jobs_whose_columns_are_empty_in_the_row():
    """Guards against FillMatrix candidates whose columns are taken in the
    row (a replica keeps its columns).  GS, 4 processors, mpl 2, at t = 0:
    job 1 (3 procs) takes row 0 columns 0-2, job 2 (2 procs) row 1 columns
    0-1, job 3 (1 proc) row 0 column 3.  Row 0: job 2's columns 0-1 are
    job 1's, no candidate.  Row 1: job 1's columns 0-2 overlap job 2's;
    job 3's column 3 is empty: the one candidate, and it is replicated."""
    rec = GangRecorder(steps=("fill",))
    simulate_gang(stream([(1, 0, 3, 100), (2, 0, 2, 100), (3, 0, 1, 100)]), [4], "gs", mpl=2, slice=10.0,
                  recorder=rec)
    at0 = [i for i in rec.instances if i.meta["time"] == 0.0]
    assert [(i.meta["row"], i.meta["job_ids"]) for i in at0] == [(1, [3])]
    assert choice_of(at0[0]) == [0]


def test_limit_keeps_exactly_that_many_instances():
    """Guards against the limit letting one instance more through."""
    rec = GangRecorder(limit=3)
    simulate_gang(busy_stream(1), [16], "gs", mpl=3, slice=50.0, recorder=rec)
    assert len(rec.instances) == 3
    assert [i.meta["name"] for i in rec.instances] == ["epoch000000", "epoch000001", "epoch000002"]


def test_a_gang_runs_seconds_leave_the_recorder_and_hook_out(monkeypatch):
    """``seconds`` times the simulation alone: a recorder's and an
    ``on_pass`` hook's time are not in it (each slept 0.01 s a call here)."""
    import time as _time
    df = busy_stream(5, n=30)
    calls = [0]

    def slow(*args):
        calls[0] += 1
        _time.sleep(0.01)
    rec = GangRecorder()
    for name in ("before_schedule", "before_fill"):            # the recorder's reads, slowed
        real = getattr(rec, name)
        monkeypatch.setattr(rec, name, lambda sim, real=real: (slow(), real(sim))[1])
    res = simulate_gang(df, [16], "bgs", mpl=3, slice=50.0, recorder=rec, on_pass=slow)
    assert calls[0] > 20 and res.seconds < 0.01 * calls[0] / 2


@pytest.mark.parametrize("policy", ["mbgs"])          # bgs's rows too (92 such steps), mbgs's more
def test_a_bgs_row_whose_reservations_block_every_candidate_is_not_recorded(policy):
    """A diff review: the gang recorder checked a row's free cells only, so
    BGS / MBGS steps where the row's reservations block every candidate
    were recorded (92 and 217 of about 3,000 on this stream) and scored at
    the optimum for every method.  They are counted in ``nothing_fits``."""
    from epochbench.instances.packing import fits_any
    from epochbench.instances.workloads import workload
    s = workload(model="feitelson96", jobs=600, seed=1, k=1, load=1.2)
    rec = GangRecorder()
    simulate_gang(s.jobs, s.capacity, policy, recorder=rec)
    assert rec.nothing_fits > 0 and rec.instances and all(fits_any(inst) for inst in rec.instances)
