"""Farm policies of [capannini2007] section 6 (sim/farm_policies.py): CS, EDF, EASY,
flexible backfilling; plans respect licenses and machines (property test)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from epochbench.instances import farm as fm
from epochbench.sim.farm import generate_stream, simulate_farm
from epochbench.sim.farm_policies import POLICIES, ConvergentScheduling, license_knapsack, make_farm_policy

from test_farm_sim import stream


# ---- the license heuristic's ordering ([capannini2007] 4.1, Licenses) -------------------------------
def test_license_weight_orders_critical_before_non_critical():
    # copies (1, 1, 4); requests: license 0 by 3 jobs (rho 3, critical), 1 by 2 (rho 2), 2 by 3 (0.75)
    lic = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 0, 1], [0, 0, 1], [0, 0, 0]], dtype=bool)
    w = fm.license_weight(lic, np.array([1, 1, 4]))
    # w = |L| * critical + non-critical, |L| = 3: (9, 15, 6.75, 9.75, 0.75, 0)
    assert w == pytest.approx([9.0, 15.0, 6.75, 9.75, 0.75, 0.0])
    assert np.argsort(-w, kind="stable").tolist() == [1, 3, 0, 2, 4, 5]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_license_weight_respects_the_lexicographic_order(seed):
    # a < b iff w1(a) < w1(b) (critical part), else w2: |L| w1 + w2 agrees whenever w1 differs by >= 1
    rng = np.random.default_rng(seed)
    n, L = int(rng.integers(2, 30)), int(rng.integers(1, 8))
    lic = rng.random((n, L)) < 0.4
    copies = rng.integers(1, 6, L)
    rho = lic.sum(axis=0) / copies
    crit = rho > 1
    w1, w2 = lic[:, crit] @ rho[crit], lic[:, ~crit] @ rho[~crit]
    w = fm.license_weight(lic, copies)
    for a in range(n):
        for b in range(n):
            if w1[a] >= w1[b] + 1:
                assert w[a] > w[b]
            if abs(w1[a] - w1[b]) < 1e-9 and w2[a] > w2[b] + 1e-9:
                assert w[a] > w[b]


def test_license_knapsack_items_blocked_and_critical():
    lic = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 0]], dtype=bool)
    profit = np.array([1.0, 1.0, 1.0, 1.0, 0.0])   # job 4 no free eligible machine
    items, blocked, crit = license_knapsack(lic, np.array([2, 0]), profit)
    assert blocked.tolist() == [2, 3]               # license 1 has no copy left
    assert crit.tolist() == [False, False]          # license 0: 2 live requests, 2 copies
    assert items.tolist() == []
    items, blocked, crit = license_knapsack(lic, np.array([1, 3]), profit)
    assert crit.tolist() == [True, False] and items.tolist() == [0, 1, 2] and blocked.size == 0


# ---- no plan over-uses a license or a machine; non-preemptive CS never interrupts --------------
def _checker(s, policy):
    held = {}

    def hook(view, plan):
        machines = list(plan.values())
        assert len(machines) == len(set(machines)), "two jobs on one machine"
        idx = np.array(list(plan), dtype=np.int64)
        used = s.jobs.licenses[idx].sum(axis=0) if idx.size else 0
        assert np.all(used <= s.copies), "license over-used"
        assert all(view.eligible[i, m] for i, m in plan.items())
        if not policy.preemptive:
            for i, m in zip(view.running, view.running_on[view.running_on >= 0]):
                assert plan.get(int(i)) == int(m), "non-preemptive policy interrupted a running job"
        held["passes"] = held.get("passes", 0) + 1
    return hook, held


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), policy=st.sampled_from(POLICIES), ta=st.sampled_from([1.0, 3.0, 8.0]))
def test_plans_respect_licenses_and_machines(seed, policy, ta):
    s = generate_stream(jobs=40, machines=8, licenses=3, interarrival=ta, seed=seed, ratio=(0.2, 0.4), need=0.5)
    pol = make_farm_policy(policy)
    hook, held = _checker(s, pol)
    res = simulate_farm(s, pol, on_pass=hook)
    assert res.jobs["end"].notna().all() and held["passes"] == res.metrics["passes"]
    if not pol.preemptive:
        assert res.metrics["preemptions"] == 0 and res.metrics["migrations"] == 0


@pytest.mark.parametrize("name", ["cs-i-np", "cs-ni-np"])
def test_non_preemptive_cs_never_interrupts(name):
    s = generate_stream(jobs=120, machines=12, licenses=4, interarrival=2.0, seed=5, ratio=(0.2, 0.3), need=0.4)
    pol = make_farm_policy(name)
    hook, _ = _checker(s, pol)
    res = simulate_farm(s, pol, on_pass=hook)
    assert (res.jobs["preemptions"] == 0).all() and (res.jobs["migrations"] == 0).all()
    assert pol.stats["knapsacks"] > 0          # licenses were contended: the knapsack ran


def test_preemptive_cs_does_preempt_under_contention():
    s = generate_stream(jobs=120, machines=12, licenses=4, interarrival=2.0, seed=5, ratio=(0.2, 0.3), need=0.4)
    res = simulate_farm(s, make_farm_policy("cs-ni-p"))
    assert res.metrics["preemptions"] + res.metrics["migrations"] > 0


# ---- EASY, flexible backfilling, EDF on hand-made farms --------------------------------------
def test_easy_backfills_a_short_job_but_not_a_long_one():
    # one machine with 8 CPUs (BM 400) and one with 1 CPU (BM 400); job 0 (8 CPUs, 1000 s) runs;
    # job 1 (8 CPUs) waits for machine 1 -> reservation at 1000 on machine 1;
    # job 2 (1 CPU, 2000 s) may use machine 0 (not reserved) now; job 3 (1 CPU, 500 s) fits before 1000
    # on machine 1 only if machine 0 is taken: it must not delay job 1 -> runs on ... nothing free left
    s = stream([1000.0, 1000.0, 2000.0, 500.0], [0.0, 1.0, 2.0, 3.0], cpus=[8, 8, 1, 1], m_cpus=[1, 8],
               m_bench=(400.0, 400.0))
    res = simulate_farm(s, make_farm_policy("easy"))
    assert res.jobs["start"].tolist() == [0.0, 1000.0, 2.0, 2000.0]


def test_easy_license_reservation_blocks_a_long_backfill():
    # 3 machines; one license with 1 copy held by job 0 (1000 s); job 1 (head) needs it;
    # job 2 needs it too and is long: may not start (the copy is free only at 1000 anyway),
    # job 3 needs no license and starts at once
    s = stream([1000.0, 100.0, 5000.0, 300.0], [0.0, 1.0, 2.0, 3.0], licenses=[[1], [1], [1], [0]], copies=[1],
               m_bench=(400.0, 400.0, 400.0))
    res = simulate_farm(s, make_farm_policy("easy"))
    assert res.jobs["start"].tolist() == [0.0, 1000.0, 1100.0, 3.0]


def test_edf_runs_earliest_deadline_first_and_preempts():
    # one machine; job 0 (no deadline) runs; job 1 with a deadline preempts it; job 2 with a later
    # deadline than job 1 waits
    s = stream([1000.0, 100.0, 100.0], [0.0, 10.0, 10.0], deadline=[np.nan, 500.0, 400.0], m_bench=(400.0,))
    res = simulate_farm(s, make_farm_policy("edf"))
    j = res.jobs
    assert j["start"].tolist() == [0.0, 110.0, 10.0]
    assert j["preemptions"].tolist() == [1, 0, 0] and j["end"].tolist() == pytest.approx([1200.0, 210.0, 110.0])
    assert j["late"].sum() == 0


def _reservation_heads(pol):
    """Per pass that makes a reservation: (head reserved, jobs queued before
    the pass, jobs in the plan), recorded by wrapping ``pol._reservation``."""
    seen, inner = [], pol._reservation

    def spy(head, plan, mjob, free_lic, view):
        seen.append((head, set(map(int, view.queued)), set(plan)))
        return inner(head, plan, mjob, free_lic, view)
    pol._reservation = spy
    return seen


def _lost(seen):
    """Passes where the previous pass's reserved job was still waiting (queued,
    not started in this pass) but another job got the reservation."""
    return [k for k in range(1, len(seen)) if seen[k][0] != seen[k - 1][0]
            and seen[k - 1][0] in seen[k][1] and seen[k - 1][0] not in seen[k][2]]


def test_bf_unrm_keeps_its_reservation():
    s = generate_stream(jobs=80, machines=8, licenses=3, interarrival=2.0, seed=2)
    lost = {}
    for name in ("bf-rm", "bf-unrm"):
        pol = make_farm_policy(name)
        seen = _reservation_heads(pol)
        res = simulate_farm(s, pol)
        assert res.jobs["end"].notna().all() and pol.stats["reservations"] > 0
        lost[name] = _lost(seen)
    assert lost["bf-rm"], "the stream must make bf-rm move its reservation to another job"
    assert lost["bf-unrm"] == [], f"bf-unrm moved its reservation at passes {lost['bf-unrm']}"


def test_cs_exact_oracles_and_per_epoch_gaps():
    s = generate_stream(jobs=50, machines=8, licenses=3, interarrival=2.0, seed=4, ratio=(0.2, 0.3), need=0.5)
    pol = ConvergentScheduling(False, False, oracle_every=1, exact_time_limit=2.0)
    base = simulate_farm(s, pol)
    assert len(pol.stats["match_gap"]) == base.metrics["passes"]
    assert len(pol.stats["mkp_gap"]) == pol.stats["knapsacks"] > 0
    assert min(pol.stats["mkp_gap"]) >= 0 and min(pol.stats["match_card_gap"]) == 0  # MFS: max cardinality
    assert max(pol.stats["match_gap"]) < 1e-9                                    # MFS is exact
    ex = simulate_farm(s, ConvergentScheduling(False, False, matcher="hungarian", knapsack="cpsat",
                                               exact_time_limit=2.0))
    assert ex.jobs["end"].notna().all()


def test_make_farm_policy_errors():
    with pytest.raises(ValueError, match="unknown farm policy"):
        make_farm_policy("fcfs")
    with pytest.raises(ValueError, match="takes no options"):
        make_farm_policy("easy", matcher="mis")
    assert make_farm_policy("cs-i-p").matcher == "imfs" and make_farm_policy("cs-ni-np").matcher == "mfs"
    assert make_farm_policy("cs-ni-np", matcher="mis").matcher == "mis"


def test_oracle_time_is_left_out_of_the_pass_time(monkeypatch):
    """Per-epoch oracles are measurement: simulate_farm subtracts their
    seconds (policy.untimed) from the scheduling time of the pass.  A fake
    clock makes it exact: each pass "schedules" for 1 ms and runs an oracle
    for 10 s."""
    import types

    import epochbench.sim.farm as farm_mod
    from epochbench.sim.farm import FarmPolicy

    clock = [0.0]
    monkeypatch.setattr(farm_mod, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))

    class Timed(FarmPolicy):
        name = "timed"

        def plan(self, view):
            clock[0] += 0.001 + 10.0
            self.untimed += 10.0
            free = np.nonzero(view.machine_job < 0)[0]
            plan = {int(i): int(m) for i, m in zip(view.running, view.running_on[view.running_on >= 0])}
            for i in view.queued:
                ok = free[view.eligible[i, free]] if free.size else free
                if ok.size and np.all(view.license_free[view.stream.jobs.licenses[i]] >= 1):
                    plan[int(i)] = int(ok[0])
                    free = free[free != ok[0]]
                    break
            return plan

    s = generate_stream(jobs=20, machines=12, licenses=0, interarrival=50.0, seed=2)
    res = simulate_farm(s, Timed())
    assert res.metrics["passes"] >= 4
    assert res.metrics["sched_ms_mean"] == pytest.approx(1.0) and res.metrics["sched_ms_max"] == pytest.approx(1.0)


# -- rules a one-token change broke unseen (mutation review, round 6) --
@pytest.mark.parametrize("name", ["edf", "edf-np"])
def test_edf_takes_the_fastest_free_machine(name):
    """[capannini2007] section 6: machines in decreasing order of benchmark,
    each job on the best available one.  Machines BM 200 / 400: the job
    runs on machine 1 at full speed."""
    from epochbench.sim.farm_policies import EDF
    res = simulate_farm(stream([1000.0], [0.0], deadline=[5000.0]), EDF(preemptive=name == "edf"))
    assert res.jobs["end"].tolist() == [1000.0]


def test_edf_preempts_the_latest_deadline_on_the_fastest_machine():
    """Jobs 0 and 1 (same deadline) run on machines 1 (BM 400) and 0 (BM 200);
    job 2 with an earlier deadline preempts one of them: of the latest
    deadlines, the one on the faster machine (first in benchmark order)."""
    s = stream([1000.0, 1000.0, 100.0], [0.0, 0.0, 10.0], deadline=[10000.0, 10000.0, 500.0])
    res = simulate_farm(s, make_farm_policy("edf"))
    assert res.jobs["preemptions"].tolist() == [1, 0, 0]
    assert res.jobs["end"].tolist()[2] == pytest.approx(110.0)


def test_easy_keeps_the_reserved_free_machine_from_a_long_backfill():
    """Machine 0 (8 CPUs, BM 200), machine 1 (1 CPU, BM 400), one copy of
    license A.  Job 0 (8 CPUs, A) runs on machine 0 until 1000; job 1 (A)
    is reserved at 1000 on machine 1, free now; job 2 (no license, 5000 s)
    would end after 1000, so it may not take machine 1: it waits and runs
    on machine 0 after job 0."""
    s = stream([500.0, 100.0, 5000.0], [0.0, 1.0, 2.0], cpus=[8, 1, 1], m_cpus=[8, 1],
               licenses=[[1], [1], [0]], copies=[1], m_bench=(200.0, 400.0))
    res = simulate_farm(s, make_farm_policy("easy"))
    assert res.jobs["start"].tolist() == [0.0, 1000.0, 1000.0]
    assert res.jobs["end"].tolist() == pytest.approx([1000.0, 1100.0, 11000.0])


def test_easy_a_short_backfill_leaves_the_license_copies_after_the_reservation():
    """Machine 0 (8 CPUs), machines 1 and 2 (1 CPU); license A, 2 copies.
    Job 0 (8 CPUs) runs until 1000; job 1 (8 CPUs, A) is reserved at 1000
    on machine 0, leaving 1 copy of A spare then.  Job 2 (A, 100 s) ends
    before 1000, so it takes none of that spare copy: job 3 (A, 5000 s)
    may still start at once on machine 2."""
    s = stream([1000.0, 100.0, 100.0, 5000.0], [0.0, 0.0, 0.0, 0.0], cpus=[8, 8, 1, 1], m_cpus=[8, 1, 1],
               licenses=[[0], [1], [1], [1]], copies=[2], m_bench=(400.0, 400.0, 400.0))
    res = simulate_farm(s, make_farm_policy("easy"))
    assert res.jobs["start"].tolist() == [0.0, 1000.0, 0.0, 0.0]


def test_easy_a_long_backfill_may_not_take_the_copy_the_reserved_job_needs():
    """Machine 0 (8 CPUs), machine 1 (1 CPU); license A, 1 copy, free.
    Job 0 (8 CPUs, no license) runs until 1000; job 1 (8 CPUs, A) is
    reserved at 1000 and needs the only copy of A then; job 2 (A, 5000 s)
    would still hold it: it waits until job 1 ends."""
    s = stream([1000.0, 100.0, 5000.0], [0.0, 0.0, 0.0], cpus=[8, 8, 1], m_cpus=[8, 1],
               licenses=[[0], [1], [1]], copies=[1], m_bench=(400.0, 400.0))
    res = simulate_farm(s, make_farm_policy("easy"))
    assert res.jobs["start"].tolist() == [0.0, 1000.0, 1100.0]
