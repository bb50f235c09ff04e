"""slack-bf and threshold-bf on the compiled loop (sim/slack_fast.py): whole
streams against the generic engine, job for job and pass for pass (K = 1
and 2, overruns, slack factors 0 to inf, important jobs, thresholds), the
hand-worked streams of tests/test_backfill_variants.py, the rerun after the
profile's rows overflow, an option refused on the machine, a KTH prefix."""
import numpy as np
import pytest

from epochbench.instances.data import data_root
from epochbench.sim import policies, slack_fast, variants  # noqa: F401  (variants: registers the policies)
from epochbench.sim.pool import simulate_pool as simulate

from test_backfill_variants import EARLY_END, OVERRUN, PASSED_BY
from test_sim_engine import random_stream, same_schedule

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
INF = float("inf")
OPTIONS = [("slack-bf", {}), ("slack-bf", {"slack_factor": 0.0}), ("slack-bf", {"slack_factor": 0.3}),
           ("slack-bf", {"slack_factor": INF}), ("slack-bf", {"slack_factor": 2.0, "important_procs": 8}),
           ("slack-bf", {"slack_factor": INF, "important_procs": 10, "important_slack_factor": 0.5}),
           ("threshold-bf", {}), ("threshold-bf", {"slowdown_threshold": 1.5}),
           ("threshold-bf", {"slowdown_threshold": 4.0})]


@pytest.mark.parametrize("policy,rule", [("slack-bf", slack_fast.SLACK_RULE),
                                         ("threshold-bf", slack_fast.THRESHOLD_RULE)])
def test_both_take_the_compiled_loop(policy, rule):
    assert policies.FAST_CODES[policy] == rule
    assert simulate(random_stream(np.random.default_rng(0), 30), [16], policy).engine == "fast"


@pytest.mark.parametrize("policy,options", OPTIONS, ids=range(len(OPTIONS)))
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_whole_streams_equal_the_generic_engine(policy, options, seed):
    """K = 1 and 2, loads 1.5 and 3, seed 0 and 3 overrun their estimates."""
    k = 1 + seed % 2
    df = random_stream(np.random.default_rng(seed), 150, k=k, overrun=seed % 3 == 0, load=[1.5, 3.0][seed % 2])
    res = same_schedule(df, [16] * k, policy, **options)
    assert res.jobs["start"].notna().all()


@pytest.mark.parametrize("policy,options,df,cap", [
    ("slack-bf", {"slack_factor": 0.0}, EARLY_END, 16),   # the plan in force compressed
    ("slack-bf", {"slack_factor": 0.0}, OVERRUN, 8),      # a plan in force before now, voided
    ("threshold-bf", {}, PASSED_BY, 16),                  # a start brings a reserved job to now
])
def test_the_hand_worked_streams_equal_the_generic_engine(policy, options, df, cap):
    same_schedule(df, [cap], policy, **options)


def test_a_run_whose_plans_outgrow_the_rows_starts_again_with_more(monkeypatch):
    grown = []
    real = slack_fast.slack_grown

    def counted(sc, rows):
        grown.append(rows)
        return real(sc, rows)

    monkeypatch.setattr(slack_fast, "FIRST_ROWS", 4)
    monkeypatch.setattr(policies, "slack_grown", counted)
    df = random_stream(np.random.default_rng(5), 200, load=3.0)
    same_schedule(df, [16], "slack-bf", slack_factor=0.5)
    assert grown                                          # it overflowed, and gave the same schedule


def test_an_important_job_size_above_the_machine_is_refused_on_the_compiled_loop():
    with pytest.raises(ValueError, match="important_procs: 20 processors, more than the machine's 16"):
        simulate(random_stream(np.random.default_rng(1), 20), [16], "slack-bf", engine="fast",
                 important_procs=20, important_slack_factor=0.5)


@pytest.mark.parametrize("policy", ["slack-bf", "threshold-bf"])
def test_kth_prefix_equals_the_generic_engine(policy):
    if not KTH.exists():
        pytest.skip(f"KTH SWF trace absent at {KTH} (set EPOCHBENCH_DATA)")
    from epochbench.instances.jobs import read_swf
    w = read_swf(KTH)
    res = same_schedule(w.jobs.head(3000), w.capacity, policy)
    assert res.jobs["start"].notna().all()
