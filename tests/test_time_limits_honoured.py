"""An exact call's time limit is the wall time of the whole call: structural
checks that the deadline reaches each phase (start heuristics, bounds,
model building, the solver) and that a phase is skipped once it has passed,
and that a CBC crash returns the start instead of a traceback.  No test
here asserts on a measured time."""
from __future__ import annotations

import os
import stat
import time

import numpy as np
import pulp
import pytest

from epochbench.exact import _binary, _pulp_solvers, packing as ep, packing_bb
from epochbench.instances.generators import generate
from epochbench.instances.packing import EpochsInstance
from epochbench.instances.registry import solve


def epochs_instance(n: int = 40, seed: int = 1) -> EpochsInstance:
    rng = np.random.default_rng(seed)
    return EpochsInstance.build([100, 100, 100], rng.integers(5, 60, (n, 3)).tolist())


# ---- 1. CBC dying of a signal: the start comes back, with the crash in info ---------------------
def fake_cbc(tmp_path, body: str) -> str:
    path = tmp_path / "cbc"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for CBC")
def test_a_cbc_segfault_returns_the_start_with_the_crash_in_info(tmp_path, monkeypatch):
    monkeypatch.setattr(_pulp_solvers.TimedCBC, "pulp_cbc_path", fake_cbc(tmp_path, "kill -SEGV $$"))
    inst = epochs_instance()
    r = solve(inst, "milp-cbc", time_limit=5.0, pattern_bound=False)
    assert r.status == "feasible" and r.decision and r.bound is not None     # the start, the combinatorial bound
    assert r.info["solver_status"] == "crashed" and "SIGSEGV" in r.info["solver_error"]
    assert "crashed" in r.info["note"]
    pk = generate("leinberger", n=30, k=3, count=1, seed=2)[0]
    warm = solve(pk, "milp-cbc", time_limit=5.0)
    assert warm.status == "feasible" and warm.value == pytest.approx(warm.info["start_value"]) and warm.bound is None
    assert "SIGSEGV" in warm.info["solver_error"]
    cold = solve(pk, "milp-cbc", time_limit=5.0, warm=False)          # no start: nothing, no traceback
    assert (cold.status, cold.decision, cold.bound) == ("timeout", (), None)
    mp = generate("braun-range", tasks=12, machines=3, seed=1)[0]
    r = solve(mp, "milp-cbc", time_limit=5.0)
    assert r.status in ("feasible", "optimal") and "SIGSEGV" in r.info["solver_error"]


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for CBC")
def test_cbc_refusing_the_model_is_still_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(_pulp_solvers.TimedCBC, "pulp_cbc_path", fake_cbc(tmp_path, "exit 3"))
    with pytest.raises(pulp.PulpSolverError, match="exit status 3"):
        solve(generate("leinberger", n=30, k=3, count=1, seed=2)[0], "milp-cbc", time_limit=5.0)


# ---- 2. mkp-bb: the search looks at the clock between slices ------------------------------------
def test_mkp_bb_search_slices_stop_at_the_deadline(monkeypatch):
    """With a deadline already passed, a step runs one slice, not the
    nodes asked for; without one it runs them all in one kernel call."""
    inst = generate("leinberger", n=64, k=8, count=1, seed=3)[0]
    p = packing_bb.mkp_arrays(inst, ep.packing_candidates(inst))
    free = packing_bb._Search(p)
    free.step(500)                                               # (it measures a node rate of its own)
    late = packing_bb._Search(p, deadline=time.perf_counter() - 1.0)
    late.rate = 1000.0                                           # slices of 2 nodes (each search has its own rate)
    late.step(500)
    from epochbench.exact import _mkp_bb as kernel
    assert late.state[kernel.S_NODES] < free.state[kernel.S_NODES]


def test_mkp_bb_slices_explore_the_same_nodes_as_one_call(monkeypatch):
    """Slicing changes nothing but where the clock is read: same nodes, same incumbent."""
    inst = generate("leinberger", n=64, k=8, count=1, seed=3)[0]
    p = packing_bb.mkp_arrays(inst, ep.packing_candidates(inst))
    from epochbench.exact import _mkp_bb as kernel
    whole = packing_bb._Search(p)
    whole.step(3000)
    monkeypatch.setattr(packing_bb, "SLICE_S", 0.5)
    sliced = packing_bb._Search(p, deadline=time.perf_counter() + 3600)
    sliced.rate = 10.0                                           # slices of 5 nodes, then by the rate measured
    sliced.step(3000)
    assert (sliced.state == whole.state).all() and (sliced.best_x == whole.best_x).all()


def test_knapsack_methods_pass_on_what_the_start_left(monkeypatch):
    """The knapsack wrappers time their start heuristics and hand the
    packing solver the rest of the limit, not the whole limit again."""
    from epochbench.exact import knapsack as ek
    got = []
    real = ek.solve_packing_bb

    def spy(inst, *, time_limit, **kw):
        got.append(time_limit)
        return real(inst, time_limit=time_limit, **kw)

    monkeypatch.setattr(ek, "solve_packing_bb", spy)
    inst = generate("farm-mkp", count=1, seed=3)[0]
    solve(inst, "mkp-bb", time_limit=2.0)
    assert got and got[0] < 2.0


# ---- 3. epochs: model building and the solver see the deadline -----------------------------------
def test_epochs_model_gives_up_once_the_deadline_has_passed():
    inst = epochs_instance(60)
    order = ep.ffd_order(inst)
    conf = ep.conflicts(inst)
    start = ep.canonical_bins(ep.ffd_bins(inst, order), {int(j): i for i, j in enumerate(order)})
    assert ep.epochs_model(inst, order, 0, start, 1, conf, deadline=time.perf_counter() - 1.0) is None
    model, xkey = ep.epochs_model(inst, order, 0, start, 1, conf)
    assert model.n_vars == len(xkey) + len(start)


def test_cpsat_model_gives_up_once_the_deadline_has_passed():
    model = _binary.BinaryModel(3, "max", [1, 2, 3])
    model.add_row([0, 1, 2], [1, 1, 1], None, 2)
    assert _binary.cpsat_model(model, deadline=time.perf_counter() - 1.0) is None
    assert _binary.cpsat_model(model) is not None


def test_highs_model_gives_up_once_the_deadline_has_passed():
    model = _binary.BinaryModel(3, "max", [1, 2, 3])
    model.add_row([0, 1, 2], [1, 1, 1], None, 2)
    assert _binary.highs_model(model, "int", deadline=time.perf_counter() - 1.0) is None
    out = _binary.run_model(model, "milp-highs", 10.0, 1)
    assert out.status == "optimal" and out.x.tolist() == [0, 1, 1] and out.bound == pytest.approx(5.0)


def test_highs_runs_without_presolve_where_its_presolve_would_outlast_the_limit(monkeypatch):
    """HiGHS's dominated-columns pass does not look at the clock (a 19,675-job
    packing epoch: 20 s on a 1 s limit).  Where its work (the rows' nonzeros
    squared) is above the rate times the seconds left, milp-highs runs
    without presolve and says so; the answer is still proven and the same.
    Below the floor, as every benchmark epoch is, presolve runs as before.
    The rate is lowered here so that a small epoch stands for a large one."""
    inst = generate("leinberger", n=24, k=4, count=1, seed=2)[0]
    model = _binary.BinaryModel(3, "max", [1, 2, 3])
    model.add_row([0, 1, 2], [1, 1, 1], None, 2)
    model.add_row([0, 2], [1, 1], None, 1)
    assert _binary._presolve_work(model) == 9 + 4
    plain = solve(inst, "milp-highs", time_limit=10, threads=1)
    assert "highs_presolve" not in plain.info
    monkeypatch.setattr(_binary, "HIGHS_PRESOLVE_FLOOR", 0)
    monkeypatch.setattr(_binary, "HIGHS_PRESOLVE_RATE", 1e-3)
    off = solve(inst, "milp-highs", time_limit=10, threads=1)
    assert off.info["highs_presolve"].startswith("off: its dominated-columns pass")
    assert off.status == plain.status == "optimal" and off.value == pytest.approx(plain.value)


def test_epochs_skips_heuristics_pattern_bound_and_model_when_time_is_gone(monkeypatch):
    """A limit already spent by FFD and the bounds: no start heuristics,
    no pattern LP, no model; the FFD packing comes back, feasible, with
    the phases that took the time."""
    calls = []
    monkeypatch.setattr(ep, "best_start", lambda *a, **k: calls.append("start"))
    monkeypatch.setattr(ep, "epochs_model", lambda *a, **k: calls.append("model"))
    monkeypatch.setattr(ep, "bin_patterns", lambda *a, **k: calls.append("patterns"))
    inst = epochs_instance(40)
    r = ep.solve_epochs(inst, "cpsat", time_limit=1e-9)
    assert calls == [] and r.status in ("feasible", "optimal") and r.decision
    if r.status == "feasible":
        assert r.info["solver_status"] == "not started"


def test_epochs_model_building_gets_the_deadline(monkeypatch):
    seen = []
    real = ep.epochs_model

    def spy(*a, deadline=float("inf"), **k):
        seen.append(deadline)
        return real(*a, deadline=deadline, **k)

    monkeypatch.setattr(ep, "epochs_model", spy)
    t = time.perf_counter()
    ep.solve_epochs(epochs_instance(40), "cpsat", time_limit=30.0, pattern_bound=False)
    assert seen and t < seen[0] <= t + 30.0 + 1.0


def test_ffd_and_l2_bound_unchanged_by_vectorising():
    """The vectorised FFD and L2 bound against their plain definitions."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        inst = EpochsInstance.build([50, 70], rng.integers(1, 50, (int(rng.integers(1, 40)), 2)).tolist())
        bins, loads = [], []
        for j in ep.ffd_order(inst):
            d = inst.demand[j]
            for b, load in enumerate(loads):
                if np.all(d <= inst.capacity - load):
                    bins[b].append(int(j))
                    load += d
                    break
            else:
                bins.append([int(j)])
                loads.append(d.astype(np.int64).copy())
        assert ep.ffd_bins(inst) == bins
        for r in range(2):
            s, cap = inst.demand[:, r], int(inst.capacity[r])
            best = 0
            big = s > cap - s
            for a in np.unique(np.concatenate(([0], s[~big]))):
                j2 = s[big][s[big] <= cap - a]
                room = j2.size * cap - int(j2.sum())
                extra = max(0, -(-(int(s[(s >= a) & ~big].sum()) - room) // cap))
                best = max(best, int(big.sum()) + extra)
            assert ep.l2_bound(s, cap) == best


# ---- 4. warm-ups: one-time loading stays out of the clock -----------------------------------------
def test_exact_warm_up_also_warms_start_heuristics_without_a_hook(monkeypatch):
    from epochbench.exact.starts import START_HEURISTICS, warm_up_starts
    from epochbench.instances import registry
    for name in START_HEURISTICS["mapping"]:
        registry._WARMED.discard(("mapping", name))
    warm_up_starts("mapping")
    hookless = [n for n in START_HEURISTICS["mapping"]
                if registry.METHODS.find(("mapping", n)) is not None
                and not hasattr(registry.get("mapping", n).func, "warm_up")]
    assert hookless and all(("mapping", n) in registry._WARMED for n in hookless)


def test_hungarian_has_a_warm_up_that_loads_scipy():
    from epochbench.instances import registry
    m = registry.get("assignment", "hungarian")
    assert callable(m.func.warm_up)
    m.func.warm_up()
    import sys
    assert "scipy.optimize" in sys.modules and "scipy.sparse.csgraph" in sys.modules


# ---- 5. the registry records an overrun ------------------------------------------------------------
def test_an_overrun_is_recorded_in_info(monkeypatch):
    from epochbench.instances import registry
    from epochbench.instances.core import Result
    m = registry.get("packing", "cpsat")

    def slow(inst, *, time_limit, threads=1, **kw):
        time.sleep(0.06)
        return Result("packing", "cpsat", (), 0.0, "timeout", 0.0, None, {})

    monkeypatch.setitem(registry.METHODS._items, ("packing", "cpsat"),
                        registry.Method(m.family, m.name, slow, m.kind, m.origin))
    inst = generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    r = solve(inst, "cpsat", time_limit=0.0)
    assert r.info["overrun_s"] > 0
    fast = solve(inst, "cpsat", time_limit=10.0)
    assert "overrun_s" not in fast.info
