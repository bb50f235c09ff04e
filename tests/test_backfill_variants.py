"""[vadhiyar-notes]'s backfilling variants (sim/variants.py): golden hand examples,
invariants, options, recording and the ``backfill-variants`` experiment."""
import numpy as np
import pandas as pd
import pytest

from epochbench.sim.pool import simulate_pool as simulate
from epochbench.sim.policies import make
from test_sim_engine import random_stream, stream


def starts(df, cap, policy, engine="generic", **kw):
    """Start time by job id, on the engine named (easy-sjf, easy-xfactor and
    multi-queue also run compiled: tests/test_scan_fast.py,
    tests/test_multiqueue_fast.py)."""
    res = simulate(df, cap, policy, engine=engine, **kw)
    assert res.engine == engine
    return dict(zip(res.jobs["id"].tolist(), res.jobs["start"].tolist()))


# ---- (1) scan order --------------------------------------------------------------------
# (id, submit, procs, duration, estimate); estimates exact
SCAN = stream([(1, 0, 2, 30, 30), (2, 0, 2, 10, 10), (3, 0, 4, 5, 5), (4, 1, 2, 19, 19),
               (5, 2, 2, 8, 8), (6, 10, 2, 2, 2)])


@pytest.mark.parametrize("engine", ["fast", "generic"])
def test_scan_order_golden_easy_sjf_xfactor(engine):
    """4 processors.  t=0: jobs 1 (2 p, to 30) and 2 (2 p, to 10) start; the
    head 3 (4 p) is blocked, shadow 30 (job 1's end), extra 0.  t=10: job 2
    ends, 2 processors free, candidates 4 (est 19), 5 (est 8), 6 (est 2), all
    ending by 30, only one fits:

    * EASY scans in arrival order: 4 (10-29).  t=29: 5 and 6 would end after
      30; t=30: 3 (30-35); t=35: 5 and 6.
    * easy-sjf scans shortest first: 6 (10-12); t=12: 5 (12-20); t=20: 4
      would end at 39 > 30; t=30: 3; t=35: 4.
    * easy-xfactor scans by (wait + est) / est at t=10: 4: 28/19 = 1.47,
      5: 16/8 = 2, 6: 1: so 5 (10-18); t=18: 4: 36/19 = 1.9, 6: 10/2 = 5:
      6 (18-20); t=20: 4 ends too late; t=30: 3; t=35: 4.
    """
    assert starts(SCAN, [4], "easy", engine="generic") == {1: 0, 2: 0, 3: 30, 4: 10, 5: 35, 6: 35}
    assert starts(SCAN, [4], "easy-sjf", engine=engine) == {1: 0, 2: 0, 3: 30, 4: 35, 5: 12, 6: 10}
    assert starts(SCAN, [4], "easy-xfactor", engine=engine) == {1: 0, 2: 0, 3: 30, 4: 35, 5: 10, 6: 18}


@pytest.mark.parametrize("policy", ["easy-sjf", "easy-xfactor"])
def test_scan_orders_keep_the_head_reservation(policy):
    df = random_stream(np.random.default_rng(7), 150)
    jobs = simulate(df, [16], policy).jobs
    held = jobs["promised"].notna()
    assert held.any() and jobs["start"].notna().all()
    assert (jobs.loc[held, "start"] <= jobs.loc[held, "promised"] + 1e-9).all()


# ---- (2) slack-based and threshold ----------------------------------------------------------
SLACK = stream([(1, 0, 2, 10, 10), (2, 0, 4, 10, 10), (3, 1, 2, 12, 12), (4, 2, 2, 20, 20)])


def test_slack_golden_half_the_estimate():
    """4 processors, slack = 0.5 x estimate.  t=0: job 1 starts (0-10); job 2
    (4 p) is promised 10, deadline 15.  t=1: job 3 (2 p, 12 s) is promised 20;
    it fits now, and with it running (1-13) job 2 is planned at 13 <= 15:
    it starts (EASY would not: 13 > the shadow 10).  t=2: job 4 (2 p, 20 s)
    is promised 23 (after job 2 at 13-23), deadline 33.  t=10: job 4 fits,
    but with it running (10-30) job 2 would start at 30 > 15: refused.
    t=13: job 2 (13-23); t=23: job 4."""
    got = starts(SLACK, [4], "slack-bf", slack_factor=0.5)
    assert got == {1: 0, 2: 13, 3: 1, 4: 23}
    jobs = simulate(SLACK, [4], "slack-bf", slack_factor=0.5).jobs.set_index("id")
    assert jobs["promised"].to_dict() == {1: 0, 2: 10, 3: 20, 4: 23}


def test_slack_zero_and_important_jobs_hold_their_promise():
    """Slack 0: at t=1 job 3 would delay job 2 past its promise 10: refused,
    promised 20; t=2: job 4 fits at 20 beside job 3 (2 + 2 processors);
    t=10: job 2; t=20: jobs 3 and 4 (conservative gives the same).  With
    slack 0.5 but job 2 important (>= 4 processors, slack factor 0) the
    same schedule: job 3 may not delay job 2 at all."""
    want = {1: 0, 2: 10, 3: 20, 4: 20}
    assert starts(SLACK, [4], "slack-bf", slack_factor=0.0) == want
    assert starts(SLACK, [4], "conservative", engine="generic") == want
    assert starts(SLACK, [4], "slack-bf", slack_factor=0.5, important_procs=4,
                  important_slack_factor=0.0) == want


def test_threshold_golden():
    """Threshold 2: no job is reserved until its expected slowdown (now -
    submit + est) / est exceeds 2.  t=0: job 1; t=1: job 3 fits (job 2 at
    1.1 holds nothing); t=10: job 2 at (10 + 10) / 10 = 2, not above: job 4
    takes the 2 free processors (10-30); t=13: job 2 at 2.3 is reserved,
    planned 30; t=30: job 2.  Threshold 1.5: at t=10 job 2 (2.0) is reserved
    at 13 (job 3's end), so job 4 (to 30) is refused; t=13: job 2; t=23: 4."""
    assert starts(SLACK, [4], "threshold-bf", slowdown_threshold=2.0) == {1: 0, 2: 30, 3: 1, 4: 10}
    jobs = simulate(SLACK, [4], "threshold-bf", slowdown_threshold=2.0).jobs.set_index("id")
    assert jobs.loc[2, "promised"] == 30 and np.isnan(jobs.loc[4, "promised"])
    assert starts(SLACK, [4], "threshold-bf", slowdown_threshold=1.5) == {1: 0, 2: 13, 3: 1, 4: 23}


@pytest.mark.parametrize("policy,kw", [("slack-bf", {"slack_factor": 0.3}), ("slack-bf", {"slack_factor": 0.0}),
                                       ("threshold-bf", {"slowdown_threshold": 3.0})])
def test_slack_policies_meet_their_deadlines_with_exact_estimates(policy, kw):
    """Exact estimates: every reserved job starts by promise + slack."""
    df = random_stream(np.random.default_rng(11), 120)
    df["duration"] = df["runtime"] = df["estimate"]
    jobs = simulate(df, [16], policy, **kw).jobs
    assert jobs["start"].notna().all() and (jobs["start"] >= jobs["submit"]).all()
    f = kw.get("slack_factor", 0.0)
    held = jobs["promised"].notna()
    assert held.any()
    late = jobs.loc[held, "start"] - (jobs.loc[held, "promised"] + f * jobs.loc[held, "estimate"])
    assert (late <= 1e-9).all()



#: early ends, no overrun: job 90 ends at 122 instead of 137; re-planned from scratch, job 24
#: would take job 69's slot at 125 and push it to 132 (slack 0: past its deadline)
EARLY_END = stream([(6, 84, 13, 15, 15), (15, 84, 15, 0, 1), (90, 84, 2, 23, 38), (24, 113, 16, 5, 7),
                    (21, 117, 7, 8, 8), (69, 117, 13, 1, 1)])


def test_slack_zero_holds_every_promise_when_jobs_end_early():
    pol = make("slack-bf", slack_factor=0.0)
    jobs = simulate(EARLY_END, [16], pol).jobs.set_index("id")
    assert pol.compressions > 0                       # the re-plan was replaced at least once
    assert (jobs["start"] <= jobs["promised"]).all()
    assert jobs.loc[69, "start"] <= jobs.loc[69, "promised"] == 125


#: job 1 overruns its estimate (33 s, runs 45: as under --no-kill), 8 processors, slack 0
#: (id, submit, procs, duration, estimate)
OVERRUN = stream([(1, 14, 4, 45, 33), (4, 14, 8, 1, 32), (6, 14, 7, 57, 39), (2, 48, 1, 34, 45),
                  (3, 48, 3, 25, 36), (5, 82, 5, 4, 45)])


def test_slack_bf_after_an_overrun_starts_the_first_reserved_job_first():
    """t=14: job 1 starts (estimated end 47); job 4 (8 p) is reserved at 47,
    job 6 (7 p) at 79.  t=48: job 1 overran: re-planned as if it ended now,
    4 at 48, 6 at 80; job 2 (1 p) is reserved beside 6 at 80, job 3 (3 p)
    at 119.  t=59: job 1 ends.  The plan in force put job 4 at 48, before
    now: void, so the re-plan runs it at 59 (the machine is empty).  It was
    compressed instead: job 4's slot, cut at now, held 21 s of its 32, so it
    went behind 6 and 2 (both started at 59) to 155, and started at 116.
    Then t=60: 6 and 2 start, 3 is planned at 6's estimated end 99; 6
    overruns to 117, where 3 and 5 (reserved at 105) start together."""
    jobs = simulate(OVERRUN, [8], "slack-bf", slack_factor=0.0).jobs.set_index("id")
    assert jobs["start"].to_dict() == {1: 14, 4: 59, 6: 60, 2: 60, 3: 117, 5: 117}
    assert jobs["promised"].to_dict() == {1: 14, 4: 47, 6: 79, 2: 80, 3: 119, 5: 105}


#: exact durations of a 13-job audit stream, 16 processors, killed at the estimate
#: (id, submit, procs, duration, estimate)
PASSED_BY = stream([(31, 0, 1, 10, 10), (103, 0, 13, 10, 37), (16, 1, 1, 27, 27), (82, 1, 1, 39, 41),
                    (43, 2, 1, 5, 10), (109, 3, 1, 5, 6), (10, 4, 1, 2.5, 2.5), (25, 4, 13, 5, 5),
                    (46, 6, 1, 1, 2.5), (70, 6, 9, 11, 11), (67, 7, 15, 0, 1), (7, 8, 14, 2, 2),
                    (13, 9, 1, 23, 23)])


def test_threshold_starts_a_job_a_backfill_moved_to_now():
    """threshold-bf, t=19.5: reserved in order 67 (15 p, planned 28), 43
    (1 p, planned 29 = its promise), 70 (9 p, planned 29).  The scan passes
    43: with it running, 67 moves to 29.5 and 70 to 30.5, past its promise.
    70 then starts, and the new plan puts 43 at 19.5, beside it.  43 started
    at the next event, 30.5, after its promise 29; it starts at 19.5."""
    jobs = simulate(PASSED_BY, [16], "threshold-bf").jobs.set_index("id")
    assert jobs.loc[43, "promised"] == 29 and jobs.loc[70, "start"] == 19.5
    assert jobs.loc[43, "start"] == 19.5
    held = jobs["promised"].notna()
    assert (jobs.loc[held, "start"] <= jobs.loc[held, "promised"]).all()


@pytest.mark.parametrize("policy,kw", [("slack-bf", {"slack_factor": 0.0}), ("slack-bf", {"slack_factor": 0.3}),
                                       ("threshold-bf", {"slowdown_threshold": 2.0})])
@pytest.mark.parametrize("k", [1, 2])
def test_slack_policies_meet_their_deadlines_when_jobs_end_early(policy, kw, k):
    """No job runs past its estimate (many end early): every reserved job
    starts by promise + slack, over 30 busy streams."""
    f = kw.get("slack_factor", 0.0)
    for seed in range(30):
        df = random_stream(np.random.default_rng(seed), 40, k=k)
        jobs = simulate(df, [16] * k, policy, **kw).jobs
        held = jobs["promised"].notna()
        late = jobs.loc[held, "start"] - (jobs.loc[held, "promised"] + f * jobs.loc[held, "estimate"])
        assert (late <= 1e-9).all(), (seed, jobs.loc[held][late > 1e-9])


# ---- (3) multiple queues -------------------------------------------------------------------
MULTI = stream([(1, 0, 2, 50, 50), (2, 0, 2, 40, 40), (3, 1, 1, 5, 5), (4, 1, 2, 10, 10), (5, 2, 1, 3, 3),
                (6, 2, 1, 30, 30)])


@pytest.mark.parametrize("engine", ["fast", "generic"])
def test_multi_queue_golden(engine):
    """4 processors, queues est <= 10 s (partition 2) and > 10 s (partition 2).
    No lending: t=0: job 1 takes the long partition, job 2 waits (shadow 50);
    t=1: job 3 (short) starts, job 4 (2 p) waits, shadow 6, extra 0; t=2:
    job 5 backfills (2 + 3 <= 6), job 6 waits; t=6: job 4; t=50: job 2;
    t=90: job 6.  Lending: t=0: the short queue is empty, so job 2 borrows
    its 2 processors (0-40); the short jobs wait for them: t=40: job 3,
    job 5 backfills (43 <= 45); t=45: job 4; t=50: job 6."""
    kw = dict(queue_bounds=[10.0], partitions=[2, 2])
    assert starts(MULTI, [4], "multi-queue", engine=engine, **kw) == {1: 0, 2: 50, 3: 1, 4: 6, 5: 2, 6: 90}
    assert starts(MULTI, [4], "multi-queue", engine=engine, lend=True, **kw) == {1: 0, 2: 0, 3: 40, 4: 45, 5: 40,
                                                                                 6: 50}


def test_multi_queue_assignment_and_partitions():
    df = stream([(1, 0, 3, 5, 5), (2, 0, 1, 5, 5), (3, 0, 1, 50, 50)])
    pol = make("multi-queue", queue_bounds=[10.0], partitions=[0.25, 0.75])
    res = simulate(df, [4], pol)
    assert pol.sizes.tolist() == [1, 3]
    assert [pol.queue_of(j) for j in range(3)] == [1, 0, 1]   # job 1 is too wide for the short partition
    # said in the report (the shares' sizes and the re-queued job were said nowhere)
    assert res.extras == {"partition_sizes": [1, 3], "queued_elsewhere": 1}
    lent = simulate(df, [4], "multi-queue", queue_bounds=[10.0], partitions=[0.25, 0.75], lend=True)
    assert lent.extras == {"partition_sizes": [1, 3], "queued_elsewhere": 0}
    assert simulate(df, [4], "easy").extras == {}
    with pytest.raises(ValueError, match=r"largest partition .* \(no lending\): lend idle partitions"):
        simulate(stream([(1, 0, 3, 5, 5)]), [4], "multi-queue", queue_bounds=[10.0], partitions=[2, 2])
    with pytest.raises(ValueError, match="partitions"):
        simulate(df, [4], "multi-queue", partitions=[1, 2])


@pytest.mark.parametrize("lend", [False, True])
def test_multi_queue_never_overcommits_a_partition(lend):
    df = random_stream(np.random.default_rng(5), 150)
    if not lend:
        df["procs"] = df["procs"].clip(upper=10)   # no job wider than the larger partition
    pol = make("multi-queue", queue_bounds=[20.0], partitions=[6, 10], lend=lend)
    peak = []
    res = simulate(df, [16], pol, on_pass=lambda *a: peak.append(pol.free.min()))
    assert res.jobs["start"].notna().all() and min(peak) >= 0


# ---- options and recording -------------------------------------------------------------------
@pytest.mark.parametrize("policy,kw,msg", [
    ("slack-bf", {"slack_factor": -1}, "slack_factor"),
    ("slack-bf", {"important_procs": 0}, "important_procs"),
    ("threshold-bf", {"slowdown_threshold": 0.5}, "slowdown_threshold"),
    ("multi-queue", {"queue_bounds": [10, 5]}, "queue_bounds"),
    ("multi-queue", {"selector": "ff"}, "no selector"),
    ("slack-bf", {"selector": "ff"}, "no packing selection step"),
    # from Python as from the command line: these ran as another rule (a negative or NaN
    # starvation limit as FCFS or as no limit; lend="no" lent; a string read as a number)
    ("nonfcfs", {"starvation_limit": -5}, r"starvation_limit: must be a finite number >= 0, got -5"),
    ("nonfcfs", {"starvation_limit": float("nan")}, "starvation_limit: must be a finite number"),
    ("nonfcfs", {"starvation_limit": "3600"}, "starvation_limit: .* got '3600'"),
    ("multi-queue", {"queue_bounds": "3600"}, "queue_bounds: .* got '3600'"),
    ("multi-queue", {"partitions": "1,2,3"}, "partitions: .* got '1,2,3'"),
    ("multi-queue", {"lend": "no"}, "lend: True or False, got 'no'"),
    ("slack-bf", {"important_procs": 2.5}, "important_procs: an integer >= 1"),
    ("slack-bf", {"important_procs": float("inf")}, "important_procs: an integer >= 1"),   # was OverflowError
    ("multi-queue", {"queue_bounds": [[60, 600], [6000, 60000]]}, "queue_bounds: .* got"),
    ("slack-bf", {"slack_factor": True}, "slack_factor"),
])
def test_bad_options_raise_one_clear_error(policy, kw, msg):
    with pytest.raises(ValueError, match=msg):
        make(policy, **kw)


def test_options_from_python_keep_their_values():
    assert make("nonfcfs", starvation_limit=0).starvation_limit == 0.0
    assert make("nonfcfs", starvation_limit=np.float32(60)).starvation_limit == 60.0
    mq = make("multi-queue", queue_bounds=np.array([60, 3600]), partitions=(0.25, 0.25, 0.5), lend=np.True_)
    assert mq.bounds.tolist() == [60.0, 3600.0] and mq.partitions == [0.25, 0.25, 0.5] and mq.lend is True
    assert make("multi-queue", queue_bounds=7200).bounds.tolist() == [7200.0]
    assert make("multi-queue", queue_bounds=np.array(7200)).bounds.tolist() == [7200.0]       # 0-d array
    assert make("multi-queue", queue_bounds=pd.Series([60, 3600])).bounds.tolist() == [60.0, 3600.0]
    assert make("slack-bf", important_procs=np.int64(4), slack_factor=np.inf).important_procs == 4


def test_cli_options_reach_the_policy_and_bad_values_fail(tmp_path, capsys):
    from epochbench.cli import main
    from epochbench.instances.jobs import make_workload, write_swf
    path = write_swf(make_workload(SLACK.drop(columns="duration"), 4), tmp_path / "s.swf")
    out = tmp_path / "run"
    assert main(["simulate", "--workload", str(path), "--policy", "slack-bf", "--slack-factor", "0.5",
                 "--out", str(out), "--quiet"]) == 0
    rep = pd.read_json(out / "report.json", typ="series")
    assert rep["options"]["slack_factor"] == 0.5
    assert pd.read_csv(out / "jobs.csv").set_index("id")["start"].to_dict() == {1: 0, 2: 13, 3: 1, 4: 23}
    capsys.readouterr()
    for argv in (["--policy", "multi-queue", "--partitions", "2,x"],
                 ["--policy", "easy", "--slack-factor", "0.5"],
                 ["--policy", "multi-queue", "--partitions", "1,2"]):
        with pytest.raises(SystemExit) if "x" in argv[-1] else _noop():
            status = main(["simulate", "--workload", str(path), "--quiet", *argv])
            assert status == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and ("partitions" in err or "slack-factor" in err), err


class _noop:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("policy,kw", [("easy-sjf", {}), ("easy-xfactor", {}),
                                       ("multi-queue", {"queue_bounds": [20.0], "partitions": [8, 8]}),
                                       ("multi-queue", {"queue_bounds": [20.0], "partitions": [6, 10], "lend": True})])
def test_selection_steps_are_recorded_and_replay_feasibly(policy, kw):
    from epochbench.instances import registry
    from epochbench.sim.record import EpochRecorder
    import epochbench.exact.packing  # noqa: F401  (registers cpsat)
    import epochbench.heuristics.packing  # noqa: F401

    df = random_stream(np.random.default_rng(3), 60)
    if not kw.get("lend"):
        df["procs"] = df["procs"].clip(upper=8)
    pol = make(policy, **kw)
    rec = EpochRecorder(pol, limit=5)
    simulate(df, [16], pol, on_pass=rec)
    assert rec.instances
    for inst in rec.instances:
        got = registry.solve(inst, "recorded")     # raises if the policy's choice breaks the instance
        assert list(got.decision) == inst.meta["choice"]
        best = registry.solve(inst, "cpsat", time_limit=2, threads=1)
        assert best.status == "optimal" and got.value <= best.value + 1e-9


def test_easy_sjf_with_a_selector_runs():
    df = random_stream(np.random.default_rng(4), 40)
    res = simulate(df, [16], "easy-sjf", selector="ff")
    assert res.jobs["start"].notna().all() and res.options["selector_stats"]["steps"] > 0


# ---- the experiment -----------------------------------------------------------------------
def test_experiment_task_grid():
    from epochbench.experiments import Options, load_experiments
    from epochbench.experiments.backfill_variants import POLICIES, STREAMS
    exp = load_experiments()["backfill-variants"]
    quick = exp.tasks(Options(quick=True))
    assert len(quick) == len(STREAMS) * len(POLICIES)      # KTH once, one Lublin seed
    assert {t["policy"] for t in quick} == set(POLICIES) >= {"easy", "conservative", "slack-bf", "multi-queue"}
    assert all(t["jobs"] == 800 and t["max_epochs"] == 30 for t in quick)
    full = exp.tasks(Options(seeds=2))
    assert len(full) == len(POLICIES) * (1 + 2)
    assert {t["seed"] for t in full if t["stream"] == "kth"} == {0}


def test_experiment_tiny_run_and_table(tmp_path):
    from epochbench.experiments.backfill_variants import plot, run, table
    rows = [run({"stream": "lublin03", "seed": 0, "policy": p, "jobs": 60, "max_epochs": 3, "time_limit": 1.0})[0]
            for p in ("easy-sjf", "slack-bf")]
    df = pd.DataFrame(rows)
    assert (df["utilization"] > 0).all() and (df["wait"] >= 0).all() and (df["bsld"] >= 1).all()
    sjf, slack = rows
    assert sjf["recorded"] > 0 and 0 < sjf["epochs"] + sjf["unproven"] <= 3 and sjf["gap_mean"] >= 0
    assert slack["recorded"] == 0 and np.isnan(slack["gap_mean"])
    t = table(df)
    assert list(t["policy"]) == ["easy-sjf", "slack-bf"] and "gap_mean %" in t
    import matplotlib
    matplotlib.use("Agg")
    plot(df, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 0


def test_list_policies_gives_each_rule_whole(capsys):
    """threshold-bf's rule was cut at the "e.g." of its quotation."""
    from epochbench.cli import main
    from epochbench.instances.catalog import first_sentence as _rule_of
    assert main(["list", "--policies"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("threshold-bf"))
    assert line.rstrip().endswith('slowdowns > threshold").')
    assert _rule_of("A rule (see [x] sec. 2). More text.") == "A rule (see [x] sec. 2)."
    assert _rule_of("First. Second.") == "First."


@pytest.mark.parametrize("value", [float("inf"), 10**400, float("nan"), 0.5])
def test_threshold_bf_refuses_a_threshold_no_job_reaches(value):
    """inf was taken: no job was ever reserved (slack-bf with an infinite
    slack), against the class's "every job is eventually reserved"."""
    with pytest.raises(ValueError, match="slowdown_threshold: a finite expected slowdown >= 1"):
        simulate(SLACK, [4], "threshold-bf", slowdown_threshold=value)


def test_slack_bf_options_that_would_change_nothing_are_refused():
    """--important-slack-factor without --important-procs (no job is
    important) and --important-procs wider than the machine ran as if not
    given, without a word."""
    df = stream([(1, 0, 2, 10, 10), (2, 1, 4, 5, 5)])
    with pytest.raises(ValueError, match=r"^important_slack_factor: applies to important jobs only, and none is "
                                         r"without important_procs"):
        simulate(df, [4], "slack-bf", important_slack_factor=3)
    with pytest.raises(ValueError, match=r"^important_procs: 5 processors, more than the machine's 4: no job would "
                                         r"be important"):
        simulate(df, [4], "slack-bf", important_procs=5)
    assert simulate(df, [4], "slack-bf", important_procs=4, important_slack_factor=3).jobs["start"].notna().all()


def test_more_queues_than_processors_blames_the_bounds_not_the_partitions_never_given():
    """128 bounds on 128 processors (129 queues): the error named
    partitions, which were not given, and listed 129 zeros."""
    from epochbench.sim.variants import parse_partitions
    with pytest.raises(ValueError, match=r"^queue_bounds: 5 queues on 4 processors leave some queues no processor; "
                                         r"give at most 3 bounds, or partitions$"):
        parse_partitions(None, 4, 5)
    assert parse_partitions(None, 4, 4).tolist() == [1, 1, 1, 1]


def test_the_command_line_says_which_jobs_ran_in_another_queue(tmp_path, capsys):
    from epochbench.cli import main
    lines = ["; MaxProcs: 10"] + [f"{i} {s} -1 {r} {p} -1 -1 {p} {r} -1 1 1 1 1 1 1 -1 -1"
                                  for i, s, r, p in ((1, 0, 50, 4), (2, 1, 50, 2), (3, 2, 500, 6), (4, 3, 100, 4))]
    (tmp_path / "mq.swf").write_text("\n".join(lines) + "\n")
    assert main(["simulate", "--workload", str(tmp_path / "mq.swf"), "--policy", "multi-queue",
                 "--queue-bounds", "100", "--partitions", "6,4"]) == 0
    out = capsys.readouterr().out
    assert ("queued elsewhere: 1 job(s) wider than their queue's partition (partitions of 6, 4 processors) ran in "
            "another queue's (--lend keeps them in their own)") in out
