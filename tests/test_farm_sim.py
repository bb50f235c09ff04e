"""The [capannini2007] farm simulator (sim/farm.py): machine model, event loop, metrics.

f1 and equation (1) on a fixed state are in tests/test_farm.py
(test_f1_follows_figure_2, test_deadline_delta_is_equation_1); here they are
checked against hand-computed numbers, and their update as a job progresses
inside a simulation."""
import numpy as np
import pytest

from epochbench.instances import InstanceError
from epochbench.instances import farm as fm
from epochbench.sim.farm import FarmPolicy, FarmStream, PlanError, generate_stream, simulate_farm
from epochbench.sim.farm_policies import make_farm_policy


def stream(estimate, submit, *, bench=None, cpus=None, licenses=None, deadline=None, m_bench=(200.0, 400.0),
           m_cpus=None, copies=None, license_ok=None, runtime=None):
    """A hand-made farm: machines with benchmarks ``m_bench`` (8 CPUs, every
    license usable by default), jobs as given."""
    n, M = len(estimate), len(m_bench)
    L = len(copies) if copies is not None else 1
    jobs = fm.Jobs(estimate=np.array(estimate, float), bench=np.array(bench or [400.0] * n, float),
                   cpus=np.array(cpus or [1] * n), licenses=np.array(licenses or [[0] * L] * n, dtype=bool),
                   input_size=np.full(n, 100.0), input_location=np.zeros(n, dtype=np.int64),
                   deadline=np.array(deadline if deadline is not None else [np.nan] * n, float),
                   submit=np.array(submit, float), progress=np.zeros(n), running_on=np.full(n, -1),
                   ids=np.arange(n))
    mach = fm.Machines(cpus=np.array(m_cpus or [8] * M), bench=np.array(m_bench, float),
                       license_ok=np.array(license_ok if license_ok is not None else [[True] * L] * M, dtype=bool))
    bw = np.full((M, M), 10.0)
    np.fill_diagonal(bw, np.inf)
    return FarmStream.build(mach, np.array(copies or [1] * L), bw, jobs, runtime=runtime)


class Fixed(FarmPolicy):
    """Test policy: a callable decides the plan."""

    def __init__(self, fn, preemptive=True):
        self.fn, self.preemptive, self.name = fn, preemptive, "fixed"

    def plan(self, view):
        return self.fn(view)


# ---- f1 and equation (1), hand-computed ----------------------------------------------------
def test_f1_and_equation_1_hand_values():
    # job: Estimated 1000 on BM 400, deadline 1500, Now 0; machines BM 200 / 400:
    # Nxtime = 2000 / 1000; k = 1.3: t = 1500 - 2600 = -1100 / 1500 - 1300 = 200.
    # m0: Extime 2000 > 1500 -> Min = 0.1.  m1: Extime 1000: 9.9 / 1300 * 800 + 0.1 = 6.192308
    # f-bar = (9.9, 3.807692), d = 13.707692, sum f1 = 6.292308
    # literal formula: Delta = 6.292308 * (9.9, 3.807692) / 13.707692 = (4.544444, 1.747863), most of
    # it on m0, where the job is late.  Default reading: f-bar = 0 on m0, so Delta = (0, 6.292308).
    s = stream([1000.0], [0.0], deadline=[1500.0])
    c = fm.Constants()
    state = fm.FarmState(s.machines, s.copies, s.jobs, s.bandwidth, now=0.0)
    assert fm.f1([2000.0, 1000.0], [-1100.0, 200.0], 1500.0, c.min, c.max) == pytest.approx([0.1, 6.192308], abs=1e-6)
    d = fm.deadline_delta(state, fm.Constants(literal_fbar=True), fm.eligible(state))
    assert d[0] == pytest.approx([4.544444, 1.747863], abs=1e-6)
    d = fm.deadline_delta(state, c, fm.eligible(state))
    assert d[0] == pytest.approx([0.0, 6.292308], abs=1e-6)


def test_deadline_update_as_the_job_progresses():
    # job 0 (Estimated 1000 on BM 400, deadline 1500) starts at 0 on machine 1 (BM 400, EASY takes the
    # fastest); at t = 500 job 1 arrives: Progress 0.5, Nxtime = (1000, 500), Extime = (1500, 1000),
    # t = (1500 - 1300, 1500 - 650) = (200, 850): f1 = (Max = 10, 9.9 / 650 * 150 + 0.1 = 2.384615),
    # f-bar = (0, 7.615385): Delta = (0, 12.384615)
    s = stream([1000.0, 1000.0], [0.0, 500.0], deadline=[1500.0, np.nan])
    seen = {}

    def hook(view, plan):
        if view.now == 500.0:
            st = view.state()
            seen["progress"] = st.jobs.progress.tolist()
            seen["delta"] = fm.deadline_delta(st, fm.Constants(), fm.eligible(st))[0].tolist()

    res = simulate_farm(s, make_farm_policy("easy"), on_pass=hook)
    assert seen["progress"] == pytest.approx([0.5, 0.0])
    assert seen["delta"] == pytest.approx([0.0, 12.384615], abs=1e-6)
    assert res.jobs["end"].tolist() == pytest.approx([1000.0, 2500.0])  # job 1 on machine 0 at half speed


# ---- machine model and event loop -------------------------------------------------------------
def test_speed_is_the_benchmark_ratio_and_metrics_by_hand():
    # one machine BM 400; jobs of 1000 s on BM 200 run 500 s; arrivals 0 and 100
    s = stream([1000.0, 1000.0], [0.0, 100.0], bench=[200.0, 200.0], m_bench=(400.0,), deadline=[900.0, 900.0])
    res = simulate_farm(s, make_farm_policy("easy"))
    j = res.jobs
    assert j["start"].tolist() == [0.0, 500.0] and j["end"].tolist() == [500.0, 1000.0]
    assert j["exec_time"].tolist() == [500.0, 500.0] and j["wait"].tolist() == [0.0, 400.0]
    assert j["late"].tolist() == [False, True] and res.metrics["late_share"] == 0.5
    # machine busy whenever a job is in the system: usage 1
    assert res.metrics["machine_usage"] == pytest.approx(1.0)
    assert res.metrics["passes"] == 3  # arrivals at 0 and 100, job 0 ends at 500 with job 1 queued; none at 1000


def test_machine_usage_is_time_averaged_over_min_machines_jobs():
    # two machines, a job needing 8 CPUs only fits machine 1; jobs 0 and 1 both need 8 CPUs
    s = stream([400.0, 400.0], [0.0, 0.0], m_cpus=[1, 8], cpus=[8, 8], m_bench=(400.0, 400.0))
    res = simulate_farm(s, make_farm_policy("easy"))
    # [0, 400): 2 jobs, 1 active of min(2, 2) -> 0.5; [400, 800): 1 job, 1 active of 1 -> 1
    assert res.metrics["machine_usage"] == pytest.approx(0.75)
    assert res.jobs["slowdown"].tolist() == pytest.approx([1.0, 2.0])
    assert res.metrics["slowdown_mean"] == pytest.approx(1.5)  # both without deadline


def test_license_usage_by_hand():
    # one license with 1 copy, two machines; both jobs need it: [0, 400) 1 of min(1, 2) -> 1; then 1 of 1
    s = stream([400.0, 400.0], [0.0, 0.0], licenses=[[1], [1]], copies=[1], m_bench=(400.0, 400.0))
    res = simulate_farm(s, make_farm_policy("easy"))
    assert res.jobs["end"].tolist() == [400.0, 800.0]
    assert res.metrics["license_usage"] == pytest.approx(1.0)
    assert res.metrics["machine_usage"] == pytest.approx(0.75)  # licence, not machines, held job 1 back


def test_preemption_keeps_progress_and_migration_changes_speed():
    # job 0 (1000 s on BM 400) starts on machine 1 (BM 400); at t = 200 job 1 arrives: job 0 moves to
    # machine 0 (BM 200, half speed) and job 1 takes machine 1; job 0 has 800 s of work left -> ends 1800
    s = stream([1000.0, 100.0], [0.0, 200.0])

    def fn(view):
        if view.now == 0.0:
            return {0: 1}
        if view.now == 200.0:
            return {0: 0, 1: 1}
        return {int(i): int(m) for i, m in zip(view.running, view.running_on[view.running_on >= 0])}

    res = simulate_farm(s, Fixed(fn))
    j = res.jobs
    assert j["end"].tolist() == pytest.approx([1800.0, 300.0])
    assert j["migrations"].tolist() == [1, 0] and j["exec_time"].tolist() == pytest.approx([1800.0, 100.0])


def test_suspended_job_waits_and_resumes():
    s = stream([1000.0, 100.0], [0.0, 200.0], m_bench=(400.0,))

    def fn(view):
        if view.now == 200.0:
            return {1: 0}          # suspend job 0
        return {int(view.jobs[0]): 0}

    res = simulate_farm(s, Fixed(fn))
    j = res.jobs
    assert j["preemptions"].tolist() == [1, 0]
    assert j["end"].tolist() == pytest.approx([1100.0, 300.0])
    assert j["wait"].tolist() == pytest.approx([100.0, 0.0])   # Tw: time spent suspended


def test_equal_times_finishes_then_arrivals_then_one_pass():
    # job 0 ends at 500 when job 1 arrives: one pass sees machine 0 free and job 1 queued
    s = stream([500.0, 100.0], [0.0, 500.0], m_bench=(400.0,))
    seen = []
    simulate_farm(s, make_farm_policy("easy"), on_pass=lambda v, p: seen.append((v.now, v.jobs.tolist(),
                                                                                    v.machine_job.tolist())))
    assert seen == [(0.0, [0], [-1]), (500.0, [1], [-1])]


@pytest.mark.parametrize("bad, msg", [
    (lambda v: {0: 0, 1: 0}, "both on machine 0"),
    (lambda v: {0: 5}, "outside"),
    (lambda v: {0: 0, 1: 1}, "license 0 used 2 times"),
    (lambda v: {7: 0}, "not in the system"),
    # a float was cut to a whole number without a word (0.7: machine 0, 0.5: job 0)
    (lambda v: {0: 0.7}, r"machine 0\.7 in its plan is not an index \(a whole number\)"),
    (lambda v: {0.5: 0}, r"job 0\.5 in its plan is not an index"),
    (lambda v: {0: True}, r"machine True in its plan is not an index"),
])
def test_engine_rejects_infeasible_plans(bad, msg):
    from epochbench.instances.core import RunStopped
    s = stream([100.0, 100.0], [0.0, 0.0], licenses=[[1], [1]], copies=[1])
    with pytest.raises(PlanError, match=msg) as info:
        simulate_farm(s, Fixed(bad))
    assert isinstance(info.value, RunStopped)        # one line and exit 1 on the command line, no traceback


def test_a_plan_of_whole_floats_runs_as_its_ints():
    s = stream([100.0, 100.0], [0.0, 0.0], licenses=[[1], [0]], copies=[1])
    whole = simulate_farm(s, Fixed(lambda v: {float(j): 0.0 for j in v.jobs[:1]}))
    ints = simulate_farm(s, Fixed(lambda v: {int(j): 0 for j in v.jobs[:1]}))
    assert whole.jobs.equals(ints.jobs)


def test_engine_rejects_ineligible_machine_and_interrupting_a_non_preemptive_job():
    s = stream([100.0], [0.0], cpus=[4], m_cpus=[2, 8])
    with pytest.raises(PlanError, match="cannot run on machine 0"):
        simulate_farm(s, Fixed(lambda v: {0: 0}))
    s = stream([1000.0, 100.0], [0.0, 10.0])
    with pytest.raises(PlanError, match="not preemptive"):
        simulate_farm(s, Fixed(lambda v: {0: 1} if v.now == 0 else {1: 1}, preemptive=False))
    with pytest.raises(PlanError, match="nothing runs"):
        simulate_farm(s, Fixed(lambda v: {}))


def test_stream_validation():
    with pytest.raises(InstanceError, match="fits no machine"):
        stream([100.0], [0.0], cpus=[8], m_cpus=[2, 4])
    with pytest.raises(InstanceError, match="submit"):
        stream([100.0, 100.0], [5.0, 0.0])
    with pytest.raises(InstanceError, match="runtime"):
        stream([100.0], [0.0], runtime=[-1.0])


def test_generate_stream_shift_and_determinism():
    a = generate_stream(jobs=60, machines=20, licenses=5, interarrival=4.0, seed=3)
    b = generate_stream(jobs=60, machines=20, licenses=5, interarrival=4.0, seed=3)
    assert a.jobs.submit[0] == 0.0 and np.all(np.diff(a.jobs.submit) >= 0)
    assert np.array_equal(a.jobs.submit, b.jobs.submit) and np.array_equal(a.copies, b.copies)
    dl = ~np.isnan(a.jobs.deadline)
    assert np.all(a.jobs.deadline[dl] > a.jobs.submit[dl])
    assert np.isclose(np.diff(a.jobs.submit).mean(), 4.0, rtol=0.5)
    ra = simulate_farm(a, make_farm_policy("cs-i-p"))
    rb = simulate_farm(b, make_farm_policy("cs-i-p"))
    assert ra.jobs["end"].equals(rb.jobs["end"])   # deterministic
    assert ra.jobs["end"].notna().all()


def test_next_event_state_runs_the_previous_plan_and_adds_one_arrival():
    from epochbench.instances.farm import generate_farm
    from epochbench.sim.farm import next_event_state, snapshot
    from epochbench.sim.farm_policies import make_farm_policy

    state = generate_farm(np.random.default_rng(3), jobs=60, machines=30, licenses=3, busy=1.0)
    pol = make_farm_policy("cs-i-p")
    view = snapshot(state)
    pol.reset(view.stream)
    plan = pol.plan(view)
    nxt = next_event_state(state, make_farm_policy("cs-i-p"))
    assert nxt.n == state.n + 1 and nxt.now == state.now + 1.0
    run = nxt.jobs.running_on
    assert {int(i): int(run[i]) for i in np.nonzero(run >= 0)[0]} == plan   # the plan now runs
    assert run[-1] == -1 and nxt.jobs.submit[-1] == nxt.now and nxt.jobs.progress[-1] == 0.0
    few = generate_farm(np.random.default_rng(3), jobs=10, machines=30, licenses=3, busy=0.2)
    assert next_event_state(few, make_farm_policy("cs-i-p")).n == 11  # every job planned: the copy still arrives
    moved = nxt.jobs.progress[run >= 0] > 0
    assert moved.all()  # every running job progressed by dt
    # the incremental matching inherits that plan: the next pass keeps most of it
    view = snapshot(nxt)
    pol.reset(view.stream)
    again = pol.plan(view)
    assert sum(again.get(i) == m for i, m in plan.items()) >= 0.8 * len(plan)


def test_a_bad_seed_of_the_farm_stream_is_named():
    import epochbench as eb
    with pytest.raises(ValueError, match="seed: must be an integer >= 0, got -1"):
        eb.simulate(None, "edf", seed=-1)


def test_the_farm_streams_seed_has_the_generators_bounds():
    """generate refused a seed past 2**63 - 1 where the farm's stream took it."""
    import epochbench as eb
    with pytest.raises(ValueError, match=r"^seed must lie in \[0, 9223372036854775807\], got 9223372036854775808$"):
        eb.simulate(None, "edf", seed=2**63)
    with pytest.raises(ValueError, match=r"^seed must lie in \[0, 9223372036854775807\]"):
        eb.generate("leinberger", n=3, k=1, seed=2**63)


def test_farm_options_from_python_are_checked_as_the_command_line_checks_them():
    """eb.simulate ran oracle_every=-1 without an oracle, took True for 1 and
    '2' for 2, ran farm_jobs=0 (an empty stream, NaN metrics) and raised raw
    TypeErrors for licenses=1.5 or cs_constant=5."""
    import epochbench as eb
    farm = dict(farm_jobs=20, machines=4, licenses=2)
    for kw, says in ((dict(oracle_every=-1), "oracle_every: must be an integer >= 0, got -1"),
                     (dict(oracle_every="2"), "oracle_every: must be an integer, got '2'"),
                     (dict(seed=True), "seed: must be an integer, got True"),
                     (dict(farm_jobs=0), "farm_jobs: must be an integer from 1 to 1,000,000, got 0"),
                     (dict(licenses=1.5), "licenses: must be an integer, got 1.5"),
                     (dict(interarrival=1e300), "interarrival: must be a number of seconds > 0 and at most 1e"),
                     (dict(exact_time_limit=-1), "exact_time_limit: must be a positive finite number, got -1"),
                     (dict(cs_constant=5), "cs_constant: KEY=VALUE strings")):
        with pytest.raises(ValueError, match=says):
            eb.simulate(None, "cs-i-p", machine="farm", **{**farm, **kw})
    r = eb.simulate(None, "edf", machine="farm", seed=np.int64(3), **farm)
    assert r.extras["stream"]["seed"] == 3             # a report names the stream it ran


def test_cs_constants_come_one_or_several_to_an_item_and_never_twice():
    from epochbench.instances.farm import Constants
    assert Constants.parse(["aging=0.5,literal_fbar=1"]) == Constants.parse(["aging=0.5", "literal_fbar=1"])
    assert Constants.parse("aging=0.5").aging == 0.5
    with pytest.raises(ValueError, match="constant aging given twice"):
        Constants.parse(["aging=1", "aging=2"])


@pytest.mark.parametrize("argv, says", [(["--farm-jobs", "100000000"], "argument --farm-jobs: must be an integer from 1 to"),
                                        (["--interarrival", "1e300"], "argument --interarrival: must be a number of seconds")])
def test_farm_streams_too_large_for_memory_or_time_are_refused_in_one_line(argv, says, capsys):
    """--farm-jobs 1e8 was killed for memory; --interarrival 1e300 ran with NaN slowdowns."""
    from epochbench.cli import main
    with pytest.raises(SystemExit) as stop:            # argparse's own exit
        main(["simulate", "--machine", "farm", "--policy", "edf", *argv])
    assert stop.value.code == 2 and says in capsys.readouterr().err


def test_a_stream_the_generator_cannot_draw_says_which_options_to_change():
    """It said 'job 0 (and 9 more) fits no machine ...; it could never run'
    about jobs no user wrote."""
    with pytest.raises(InstanceError, match=r"after 100 draws, 10 of 10 jobs still fit no machine .* give fewer "
                                            r"--licenses or more --machines"):
        generate_stream(jobs=10, licenses=2000)            # 100,000 drew the same in 45 s


def test_what_python_gave_the_simulators_before_still_runs():
    """The face's option checks kept what the machines take from Python: a
    whole float for an integer (mpl=2.0), inf or any negative
    migration_limit for no limit, a numpy Generator as the farm's seed (a
    seed that is no integer is named None in the report)."""
    import math

    import epochbench as eb
    jobs = {"id": [1, 2], "submit": [0.0, 1.0], "runtime": [5.0, 5.0], "procs": [2, 2]}
    assert eb.simulate((jobs, 4), "gs", machine="gang", mpl=2.0).options["mpl"] == 2
    for limit in (math.inf, -5, np.int64(-1)):
        assert eb.simulate((jobs, 4), "mgs", machine="gang", migration_limit=limit).options["migration_limit"] is None
    r = eb.simulate(None, "edf", machine="farm", farm_jobs=10, machines=4, licenses=2, seed=np.random.default_rng(1))
    assert r.n == 10 and r.extras["stream"]["seed"] is None
    assert generate_stream(jobs=5, machines=4, licenses=2, seed=None).meta["seed"] is None


@pytest.mark.parametrize("name", ["cs-i-p", "cs-ni-p"])
def test_a_job_ending_with_nothing_queued_lets_a_preemptive_cs_migrate(name):
    """[capannini2007] sections 3 and 6: a plan at every submission and
    ending, a running job interruptible at each.  Both jobs arrive at 0 and
    the plan puts job 1 on the slow machine (benchmark 200); job 0 ends at
    300 with nothing queued, and no pass ran: job 1 stayed and ended at
    3000, late for 2000.  The pass at 300 moves it to the fast machine
    (its row there, 15.10 against 14.10 with the overhead: by hand)."""
    s = stream([300.0, 1000.0], [0.0, 0.0], bench=[600.0, 600.0], deadline=[310.0, 2000.0],
               m_bench=(600.0, 200.0))
    passes = []
    r = simulate_farm(s, make_farm_policy(name), on_pass=lambda view, plan: passes.append((view.now, dict(plan))))
    assert passes[0] == (0.0, {0: 0, 1: 1}) and passes[1] == (300.0, {1: 0})
    job1 = r.jobs.set_index("id").loc[1]
    assert job1["end"] == pytest.approx(1200.0) and not job1["late"] and job1["migrations"] == 1
    np_passes = []
    simulate_farm(s, make_farm_policy(name.replace("-p", "-np")),
                  on_pass=lambda view, plan: np_passes.append(view.now))
    assert np_passes == [0.0]         # a non-preemptive plan cannot move it: no pass with nothing queued


def test_the_farms_slowdown_mean_says_which_jobs_it_averages(tmp_path, monkeypatch, capsys):
    """It printed 'slowdown_mean  1.035' beside a jobs.csv whose slowdown
    column averages 1.018: the figure is over the jobs without a deadline
    ([capannini2007] fig. 5), which nothing said (an audit of the outputs)."""
    import json

    import pandas as pd

    from epochbench import cli
    monkeypatch.chdir(tmp_path)
    assert cli.main(["simulate", "--machine", "farm", "--policy", "cs-i-p", "--farm-jobs", "60", "--out", "f"]) == 0
    out = capsys.readouterr().out
    assert any(line.split()[:4] == ["slowdown_mean", "(jobs", "without", "deadline)"] for line in out.splitlines())
    rep = json.loads((tmp_path / "f" / "report.json").read_text())
    jobs = pd.read_csv(tmp_path / "f" / "jobs.csv")
    free = jobs["deadline"].isna()
    assert rep["metrics"]["slowdown_mean"] == pytest.approx(jobs.loc[free, "slowdown"].mean(), rel=1e-9)


# -- rules a one-token change broke unseen (mutation review, round 6) --
def test_a_migrated_jobs_partial_results_stay_on_the_machine_it_left():
    """Job 0 starts on machine 1 at 0 and moves to machine 0 at 100 (job 1
    takes machine 1): from then on its input sits on machine 1
    ([capannini2007] Input heuristic; module docstring of sim/farm.py)."""
    s = stream([1000.0, 100.0, 100.0], [0.0, 100.0, 200.0])
    seen = {}

    def fn(view):
        plan = {int(i): int(m) for i, m in zip(view.jobs, view.running_on) if m >= 0}
        if view.now == 100.0:
            plan = {0: 0}
        free = [m for m in (1, 0) if m not in plan.values()]
        for i in view.queued:
            if free:
                plan[int(i)] = free.pop(0)
        return plan

    def hook(view, plan):
        st = view.state()
        seen[view.now] = dict(zip(st.jobs.ids.tolist(), st.jobs.input_location.tolist()))

    res = simulate_farm(s, Fixed(fn), on_pass=hook)
    assert res.jobs["migrations"].tolist() == [1, 0, 0]
    assert seen[0.0][0] == 0 and seen[200.0][0] == 1
