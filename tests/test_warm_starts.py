"""Exact never worse than a heuristic (issue 20.1): every exact method
starts from the best decision of its family's fast heuristics (a CP-SAT
hint, a MIP start) and returns at least that decision, whatever its time
limit; ``warm=False`` starts cold; simulators' oracle steps start cold."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from epochbench.exact import _binary, starts
from epochbench.instances.generators import generate
from epochbench.instances.packing import EpochsInstance
from epochbench.instances.registry import get, names, solve

BACKENDS = ("cpsat", "milp-cbc", "milp-highs")
#: the other exact methods, each of one family (``hungarian`` always ends optimal: no start needed)
OTHERS = (("packing", "mkp-bb"), ("knapsack", "mkp-bb"), ("epochs", "cg"), ("epochs", "lns"), ("mapping", "bnp"), ("mapping", "lns"))


def instances(family: str, seed: int):
    """Instances large enough that a short limit leaves the solvers unfinished."""
    if family == "packing":
        return generate("leinberger", n=200, k=8, count=2, seed=seed)
    if family == "epochs":
        return [EpochsInstance.build(p.capacity, p.demand)
                for p in generate("leinberger", n=120, k=4, count=2, seed=seed)]
    if family == "knapsack":
        return generate("mkp", n=250, k=10, count=2, seed=seed)
    if family == "assignment":
        return generate("assign-random", n=120, machines=120, count=2, seed=seed)
    return generate("braun-range", tasks=256, machines=16, count=2, seed=seed)


def best_heuristic(inst) -> float:
    values = [solve(inst, h).value for h in starts.START_HEURISTICS[inst.kind] if h in names(inst.kind, "heuristic")]
    return max(values) if inst.sense == "max" else min(values)


@pytest.mark.parametrize("family, method", [(f, m) for f in ("packing", "epochs", "knapsack", "assignment", "mapping")
                                            for m in BACKENDS] + list(OTHERS))
def test_an_exact_method_is_never_worse_than_the_best_heuristic(family, method, monkeypatch):
    # the start's clock stands still, so every start heuristic runs within its share of the limit however
    # slow or loaded the machine (with a running clock a heuristic that did not run may beat the answer,
    # as starts.py says; test_with_no_time_the_first_start_heuristic_still_answers covers the budget)
    monkeypatch.setattr(starts, "time", SimpleNamespace(perf_counter=lambda: 0.0))
    # each instance at one of the two limits (a tenth of it for the start): the start alone at 0.05 s, the
    # solver's own search from it at 0.5 s (both limits on both instances, as before, took 20 s of the run)
    for inst, limit in zip(instances(family, seed=1), (0.05, 0.5), strict=True):
        ref = best_heuristic(inst)                   # (also loads the heuristics' compiled kernels)
        r = solve(inst, method, time_limit=limit, threads=1)         # checked by the family's checker
        if inst.sense == "max":
            assert r.value >= ref - 1e-9 * max(1.0, abs(ref)), (inst.name, limit, r.status, r.value, ref)
        else:
            assert r.value <= ref + 1e-9 * max(1.0, abs(ref)), (inst.name, limit, r.status, r.value, ref)
        assert r.decision and r.status in ("optimal", "feasible")
        assert r.status != "optimal" or r.bound == r.value


def test_with_no_time_the_first_start_heuristic_still_answers():
    inst = instances("packing", seed=1)[0]
    r = solve(inst, "cpsat", time_limit=0.0, threads=1)
    first = starts.START_HEURISTICS["packing"][0]
    assert r.status == "feasible" and r.info["start"] == first and r.value == solve(inst, first).value


def test_the_start_is_the_hint(monkeypatch):
    """The packing model reaches the solver with the best heuristic's
    selection as its hint (and none when started cold)."""
    inst = generate("leinberger", n=40, k=3, count=1, seed=2)[0]
    seen = []
    real = _binary.run_model

    def spy(model, *args, **kw):
        seen.append(None if model.hint is None else model.hint.copy())
        return real(model, *args, **kw)

    import epochbench.exact.packing as ep
    monkeypatch.setattr(ep, "run_model", spy)
    warm = solve(inst, "cpsat", time_limit=5.0, threads=1)
    start = starts.best_start(inst, budget=1.0)
    cand = ep.packing_candidates(inst)
    assert warm.info["start"] == start.method and warm.info["start_value"] == start.value
    assert seen[0] is not None and set(cand[seen[0].astype(bool)].tolist()) == set(start.decision)
    cold = solve(inst, "cpsat", time_limit=5.0, threads=1, warm=False)
    assert seen[1] is None and cold.info["start"] == "none" and cold.value == pytest.approx(warm.value)  # both proved


def test_best_start_keeps_the_best_checked_decision_and_skips_unknown_names():
    inst = generate("leinberger", n=30, k=2, count=1, seed=7)[0]
    best = starts.best_start(inst, budget=1.0, names=("ff", "no-such-heuristic", "bl", "fcfs"))
    assert best.value == max(solve(inst, m).value for m in ("ff", "bl", "fcfs"))
    assert starts.best_start(inst, budget=1.0, names=("no-such-heuristic",)) is None
    assert starts.best_start(inst, budget=0.0, names=("fcfs", "bl")).method == "fcfs"   # the first always runs


def test_exact_methods_declare_the_warm_start_they_take():
    for family in ("packing", "epochs", "knapsack", "assignment", "mapping"):
        for method in BACKENDS:
            assert getattr(get(family, method).func, "warm_start", False), (family, method)
    for family, method in OTHERS:
        assert getattr(get(family, method).func, "warm_start", False), (family, method)
    for family in ("packing", "epochs", "knapsack", "assignment", "mapping"):     # none of ours forgotten
        ours = {m for m in names(family, "exact") if get(family, m).origin == "builtin"}   # not a test's own
        assert ours <= {*BACKENDS, *(m for f, m in OTHERS if f == family), "hungarian"}


def test_a_simulators_oracle_step_starts_cold():
    """With no time an oracle step falls back to the policy's own rule (not
    to the best heuristic): the schedule equals the policy's."""
    import pandas as pd

    from epochbench.sim.pool import simulate_pool
    rng = np.random.default_rng(5)
    n = 40
    est = rng.integers(1, 50, n).astype(float)
    df = pd.DataFrame({"id": np.arange(1, n + 1), "submit": np.cumsum(rng.choice([0.0, 1.0, 3.0], n)),
                       "procs": rng.integers(1, 17, n), "duration": np.floor(est * rng.uniform(0, 1, n)),
                       "estimate": est})
    df["runtime"] = df["duration"]
    own = simulate_pool(df, [16], "easy", engine="generic")
    via = simulate_pool(df, [16], "easy", selector="cpsat", selector_options={"time_limit": 0.0})
    assert via.options["selector_stats"]["fallback"] > 0
    pd.testing.assert_frame_equal(own.jobs, via.jobs)


def test_a_given_start_is_valued_by_its_decision_not_by_its_claim():
    """(mutation review, round 5: trusting the start's own value passed every test)"""
    from dataclasses import replace
    from epochbench.instances.mapping import MappingInstance
    inst = MappingInstance.build(np.array([[1.0, 3.0], [2.0, 1.0], [4.0, 4.0]]), np.zeros(2))
    res = solve(inst, "minmin")
    assert starts.given_start(inst, replace(res, value=0.01)).value == inst.value(np.asarray(res.decision)) == res.value
