"""Rules of epoch recording (sim/record.py) that a one-token change broke
unseen (mutation review, round 8): min_candidates and limit are inclusive,
a choice is in start order, a step where one method starts something is
compared, a gap of exactly the tolerance is optimal, and a step without
candidates is never recorded."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from epochbench.sim.policies import make
from epochbench.sim.pool import simulate_pool
from epochbench.sim.record import EpochGaps, EpochRecorder, _choice
from test_sim_engine import random_stream


def _recorded(**kw):
    pol = make("easy")
    rec = EpochRecorder(pol, **kw)
    simulate_pool(random_stream(np.random.default_rng(71), 120), [16], pol, on_pass=rec)
    return rec


def _sizes(rec):
    return [len(inst.meta["job_ids"]) for inst in rec.instances]


def test_min_candidates_keeps_steps_with_exactly_that_many():
    every = _sizes(_recorded())                       # default min_candidates = 1
    assert min(every) == 1                            # a step with one candidate is recorded
    two = _sizes(_recorded(min_candidates=2))
    assert 2 in two and two == [s for s in every if s >= 2]   # "skip steps with fewer", not "as few"


def test_limit_records_exactly_that_many_steps():
    full = _recorded()
    assert len(full.instances) > 3
    three = _recorded(limit=3)
    assert len(three.instances) == 3
    assert [i.meta["time"] for i in three.instances] == [i.meta["time"] for i in full.instances[:3]]


def test_choice_is_in_start_order_not_candidate_order():
    step = SimpleNamespace(candidates=[5, 7, 9])
    # the policy started job 9 first, then job 5: candidate positions 2, then 0; job 4 is no candidate
    assert _choice(step, [9, 4, 5]) == [2, 0]
    assert _choice(step, []) == []


def test_a_step_where_one_method_starts_something_is_compared():
    # the policy started nothing (reference 0); FF starts nothing either but BL does: a decision to
    # compare for BL (its gap is undefined, counted), so the step is not "nothing fits"
    gaps = EpochGaps(make("bb-easy"), ("ff", "bl"))
    gaps.rows = [{"time": 0.0, "candidates": 2, "started": 0, "reference": 0.0, "proven": False,
                  "ff_value": 0.0, "ff_gap": 0.0, "bl_value": 0.5, "bl_gap": float("nan")}]
    s = gaps.summary()
    assert s["nothing_fits"] == 0
    assert s["bl_gap"]["undefined"] == 1 and s["ff_gap"]["count"] == 1 and s["ff_gap"]["optimal_share"] == 1.0


def test_a_gap_of_exactly_the_tolerance_counts_as_optimal():
    gaps = EpochGaps(make("bb-easy"), ("ff",))
    gaps.rows = [{"time": 0.0, "candidates": 2, "started": 1, "reference": 1.0, "proven": False,
                  "ff_value": 1.0 - 1e-9, "ff_gap": 1e-9},
                 {"time": 1.0, "candidates": 2, "started": 1, "reference": 1.0, "proven": False,
                  "ff_value": 0.5, "ff_gap": 0.5}]
    assert gaps.summary()["ff_gap"]["optimal_share"] == pytest.approx(0.5)   # "gap <= 1e-9"


def test_epoch_gaps_never_records_a_step_without_candidates():
    # min_candidates is floored at 1: a step with no candidate has nothing to decide, even when asked for 0
    pol = make("easy")
    gaps = EpochGaps(pol, ("ff",), min_candidates=0)
    simulate_pool(random_stream(np.random.default_rng(71), 120), [16], pol, on_pass=gaps)
    assert gaps.rows and min(r["candidates"] for r in gaps.rows) >= 1
