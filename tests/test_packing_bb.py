"""The ``mkp-bb`` packing oracle (exact/packing_bb.py): brute force on small
random instances (every objective, with and without a reservation), CP-SAT on
medium ones, the warm start, identical jobs, honest statuses and bounds when
time runs out, and the registry entry."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from _processes import python_child
from epochbench.exact import _mkp_bb as kernel, packing_bb as pb
from epochbench.exact.packing import packing_candidates
from epochbench.instances.core import Result
from epochbench.instances.generators import leinberger
from epochbench.instances.packing import PackingInstance, check_packing
from epochbench.instances.registry import get, names, solve
from test_exact_packing import brute_packing as brute, random_packing

LIMIT = 10.0


CASES = [(seed, k, res, obj, dup) for seed, (k, res, obj, dup) in enumerate(
    itertools.product((1, 2, 3, 5), (False, True), ("utilization", "count", "profit"), (False, True)))]


def test_registered_as_exact_packing_method():
    assert "mkp-bb" in names("packing", "exact")
    assert get("packing", "mkp-bb").exact


@pytest.mark.parametrize("seed,k,reservation,objective,dup", CASES)
def test_matches_brute_force(seed, k, reservation, objective, dup):
    """The search alone (``nodes=None``: no hand-over to CP-SAT) proves the
    optimum, cold and warm; the default (with hand-over) agrees."""
    rng = np.random.default_rng(4000 + seed)
    inst = random_packing(rng, int(rng.integers(6, 14)), k, reservation, objective, dup)
    best = brute(inst)
    for kw in ({"nodes": None, "warm": False}, {"nodes": None}, {}):
        r = solve(inst, "mkp-bb", time_limit=LIMIT, **kw)
        assert r.status == "optimal", (kw, r)
        assert abs(r.value - best) <= 1e-9, (kw, r.value, best)
        assert r.bound == r.value and list(r.decision) == sorted(r.decision)
        check_packing(inst, r.decision)
        if kw.get("nodes", 1) is None:
            assert "finished_by" not in r.info


@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_matches_cpsat_on_medium_instances(k):
    for inst in leinberger(n=40, k=k, count=3, seed=7):
        a = solve(inst, "mkp-bb", time_limit=LIMIT)
        b = solve(inst, "cpsat", time_limit=LIMIT)
        assert a.status == b.status == "optimal"
        assert abs(a.value - b.value) <= 1e-9, (inst.name, a.value, b.value)


def test_identical_jobs_enumerated_as_counts():
    """60 copies of three job shapes: the search treats them as counts."""
    inst = PackingInstance.build([100, 100], [[7, 3]] * 20 + [[3, 8]] * 20 + [[11, 11]] * 20, objective="count")
    r = solve(inst, "mkp-bb", time_limit=LIMIT, nodes=None, warm=False)
    assert r.status == "optimal" and r.info["identical"] == 57
    assert r.value == solve(inst, "cpsat", time_limit=LIMIT).value == 18 and r.info["nodes"] < 2000


def test_warm_start_never_worse():
    for inst in leinberger(n=128, k=8, count=2, seed=3):
        start = max((solve(inst, h) for h in ("bb", "bl", "ff")), key=lambda r: r.value)
        r = pb.solve_packing_bb(inst, time_limit=0.05, start=start, nodes=1)
        assert r.value >= start.value - 1e-12
        r = pb.solve_packing_bb(inst, time_limit=1e-4, start=start, nodes=None)
        assert r.value >= start.value - 1e-12


def test_time_limit_gives_honest_status_and_bound():
    """A hard instance with no time and no hand-over: a checked selection,
    status feasible (or optimal only with bound == value), a bound no smaller
    than the optimum CP-SAT proves."""
    for inst in leinberger(n=64, k=8, count=3, seed=1):
        ref = solve(inst, "cpsat", time_limit=LIMIT)
        r = solve(inst, "mkp-bb", time_limit=1e-3, nodes=None, warm=False)
        check_packing(inst, r.decision)
        assert r.status in ("optimal", "feasible", "timeout")
        if r.status == "optimal":
            assert r.bound == r.value and abs(r.value - ref.value) <= 1e-9
        else:
            assert r.bound is None or r.bound >= ref.value - 1e-9
        if r.status == "timeout":                       # nothing selected in time: no value, no bound
            assert not r.decision and r.value != r.value and r.bound is None
        else:
            assert r.value <= ref.value + 1e-9


def agrees(r, ref) -> bool:
    """``r``'s proven optimum is CP-SAT's; where CP-SAT ended unproven (a
    loaded machine: 0.643625 at 10 s against the optimum 0.64375), no worse
    than its answer and within its bound."""
    if ref.status == "optimal":
        return abs(r.value - ref.value) <= 1e-9
    return r.value >= ref.value - 1e-9 and (ref.bound is None or r.value <= ref.bound + 1e-9)


def test_turns_prove_what_the_first_nodes_left_open():
    inst = leinberger(n=64, k=8, count=1, seed=1)[0]
    r = solve(inst, "mkp-bb", time_limit=LIMIT, nodes=1)
    ref = solve(inst, "cpsat", time_limit=LIMIT)
    assert r.status == "optimal" and agrees(r, ref)
    assert r.info.get("finished_by") in (None, "cpsat") and r.info["turns"] >= 1


@pytest.fixture
def short_cpsat_turns(monkeypatch):
    """CP-SAT's turns in mkp-bb cut to a microsecond of deterministic time:
    too short to prove anything, so the search must."""
    real = pb.solve_packing

    def short(inst, method, **kw):
        return real(inst, method, **{**kw, "solver_params": {**kw["solver_params"], "max_deterministic_time": 1e-6}})
    monkeypatch.setattr(pb, "solve_packing", short)


def test_the_search_finishes_after_cpsat_turns_too_short_to_prove(short_cpsat_turns):
    """Each search turn resumes where the last one stopped, with CP-SAT's
    selection as incumbent when better, and proves the optimum itself."""
    for inst in leinberger(n=64, k=8, count=2, seed=2):
        r = solve(inst, "mkp-bb", time_limit=LIMIT, nodes=1)
        ref = solve(inst, "cpsat", time_limit=LIMIT)
        assert r.status == "optimal" and r.bound == r.value and agrees(r, ref)
        assert "finished_by" not in r.info and r.info["turns"] >= 1 and r.info["nodes"] > pb.FIRST_NODES
        check_packing(inst, r.decision)


def test_a_turn_limited_run_keeps_the_smaller_proved_bound(short_cpsat_turns):
    """Out of time during the turns: a feasible selection and a bound that
    is at least the optimum (the smaller of the search's open bound and
    CP-SAT's)."""
    inst = leinberger(n=64, k=8, count=1, seed=1)[0]            # CP-SAT alone: about 2 s idle
    ref = solve(inst, "cpsat", time_limit=6 * LIMIT)             # ends when proven; 10 s was cut short under load
    assert ref.status == "optimal"
    r = solve(inst, "mkp-bb", time_limit=0.5, nodes=1, warm=False)
    check_packing(inst, r.decision)
    assert r.value <= ref.value + 1e-9 and r.info.get("turns", 0) >= 1
    if r.status == "optimal":
        assert r.bound == r.value and abs(r.value - ref.value) <= 1e-9
    else:
        assert r.status == "feasible" and r.bound is not None and r.bound >= ref.value - 1e-9


def test_turns_are_counted_in_work_so_a_solve_repeats_exactly():
    """Turns are measured in nodes and CP-SAT's deterministic time, not in
    seconds: the same instance gives the same selection, node count and
    turns every time."""
    inst = leinberger(n=64, k=8, count=1, seed=3)[0]
    runs = [solve(inst, "mkp-bb", time_limit=LIMIT, nodes=1) for _ in range(2)]
    assert runs[0].status == runs[1].status == "optimal"
    assert runs[0].decision == runs[1].decision
    work = [[r.info.get(k) for k in ("nodes", "turns", "finished_by")] for r in runs]
    assert work[0] == work[1]


def test_aspiration_finds_an_exact_fill_without_hand_over():
    """A K = 4 epoch whose optimum fills every resource exactly: the
    aspiration search finds that selection, worth the root bound, so it is
    proven at once; CP-SAT agrees.  (The first of these epochs is proven
    by the first 2000 nodes already.)"""
    inst = leinberger(n=64, k=4, count=2, seed=1)[1]
    r = solve(inst, "mkp-bb", time_limit=LIMIT)
    ref = solve(inst, "cpsat", time_limit=LIMIT)
    assert r.info["aspiration"] == "found" and "finished_by" not in r.info
    assert r.status == "optimal" and r.bound == r.value and agrees(r, ref)
    check_packing(inst, r.decision)
    assert np.all(inst.demand[list(r.decision)].sum(axis=0) == inst.free)


def test_aspiration_exhausted_proves_the_root_bound_unreachable():
    """Two jobs that each fill one resource and overfill the other: every row
    alone reaches its capacity (root bound 4 units), no selection does; the
    ladder's first attempt (the aspiration) finishes without a selection and
    lowers the proved bound below the root bound."""
    from epochbench.exact import _mkp_bb as kernel
    from epochbench.exact.packing import packing_candidates
    inst = PackingInstance.build([2, 2], [[2, 1], [1, 2]])
    p = pb.mkp_arrays(inst, packing_candidates(inst))
    run = pb._Search(p)
    run.step(1)                                             # the root only
    root, best = int(run.state[kernel.S_ROOT]), int(run.state[kernel.S_BEST])
    assert root > best >= 0
    ladder = pb._Ladder(run)
    assert ladder.bound() == root and not ladder.done()
    while ladder.attempts < 2 and not ladder.done():       # the first attempt and no further
        ladder.step(1)
    assert ladder.aspiration == "exhausted" and ladder.bound() < root
    assert ladder.state[kernel.S_BEST] >= best
    r = solve(inst, "mkp-bb", time_limit=LIMIT)
    assert r.status == "optimal" and abs(r.value - brute(inst)) <= 1e-9


def test_empty_and_nothing_fits():
    r = solve(PackingInstance.build([10, 10], []), "mkp-bb", time_limit=LIMIT)
    assert (r.status, r.value, r.decision, r.bound) == ("optimal", 0.0, (), 0.0)
    r = solve(PackingInstance.build([10], [[11], [12]]), "mkp-bb", time_limit=LIMIT)
    assert (r.status, r.decision) == ("optimal", ())


def test_awkward_capacities_use_rounded_scaling():
    rng = np.random.default_rng(7)
    inst = PackingInstance.build([1000003, 999983, 1000033, 999979], rng.integers(1, 400000, size=(10, 4)))
    r = solve(inst, "mkp-bb", time_limit=LIMIT, nodes=None)
    assert r.status == "optimal" and abs(r.value - brute(inst)) <= 1e-9


@pytest.mark.parametrize("kw,msg", [({"time_limit": 0}, "time_limit"), ({"time_limit": 1, "nodes": 0}, "nodes"),
                                    ({"time_limit": 1, "threads": 0}, "threads")])
def test_bad_options_refused(kw, msg):
    with pytest.raises(ValueError, match=msg):
        pb.solve_packing_bb(PackingInstance.build([10], [[3]]), **kw)


def best_selection(a, b, c) -> int:
    """max c x subject to a x <= b, x in {0, 1}^n, by brute force (the kernel's model units)."""
    best = 0
    for xs in itertools.product((0, 1), repeat=c.shape[0]):
        x = np.array(xs, dtype=np.int64)
        if np.all(a @ x <= b):
            best = max(best, int(c @ x))
    return best


@pytest.mark.parametrize("seed", range(40))
def test_node_lp_bound_is_the_lp_and_never_below_it(seed):
    """The node LP (its simplex's duals priced by the Lagrangian) equals the
    LP relaxation that HiGHS solves, within rounding, for a random residual
    and set of fitting items, and bounds the 0-1 optimum; the previous
    node's duals, however stale, never give less than the LP."""
    from scipy.optimize import linprog
    from epochbench.exact import _mkp_bb as kernel
    rng = np.random.default_rng(7000 + seed)
    m, n = int(rng.integers(2, 9)), int(rng.integers(3, 40))
    a = rng.integers(0, 50, size=(m, n)).astype(np.int64)
    c = rng.integers(1, 100, size=n).astype(np.int64)
    res = rng.integers(0, 200, size=m).astype(np.int64)
    pos = int(rng.integers(0, 3))
    fit = np.zeros(n, dtype=np.bool_)
    fit[pos:] = np.all(a[:, pos:] <= res[:, None], axis=0) & (rng.random(n - pos) < 0.9)
    lpw = kernel.lp_scratch(m, n)
    lpw[:m] = rng.random(m) * 3 * (seed % 2)               # stale duals from "a previous node"
    stale = kernel._lagrangian(a, c, res, fit, pos, lpw[:m].copy())
    got = kernel._lp_bound(a, c, res, fit, pos, lpw, stale)
    cols = np.flatnonzero(fit)
    lp = -linprog(-c[cols], A_ub=a[:, cols], b_ub=res, bounds=(0, 1), method="highs").fun if cols.size else 0.0
    assert got >= lp - 1e-6 * max(1.0, lp)
    assert got <= lp + 1e-6 * max(1.0, lp) or got == stale  # the simplex reached the LP (or stopped early)
    assert stale >= lp - 1e-6 * max(1.0, lp)
    if cols.size <= 14:
        assert got >= best_selection(a[:, cols], res, c[cols]) - 1e-9


def test_an_lp_value_float_error_put_below_an_integer_keeps_that_integer():
    """A bound from an LP value is rounded down after a slack of 1e-9 of the
    value (or of the size of the terms it was computed from, when they
    cancel): float error just below an integer does not cost the bound a
    unit, and a true fraction still rounds down."""
    from epochbench.exact import _mkp_bb as kernel
    assert kernel._floor(7.0 - 1e-12) == 7 and kernel._floor(7.5) == 7
    assert kernel._floor(3e6 * (1 - 1e-15)) == 3e6          # relative: an absolute 1e-9 would give 2999999
    assert kernel._floor(-1e-8, 1e4) == 0 and kernel._floor(-1e-8) == -1


def test_search_proves_the_same_optimum_with_and_without_the_lp(monkeypatch):
    """The node LP only prunes: on K = 2 to 8 epochs the search alone finds
    the same optimum with it and without it, in fewer nodes with it."""
    for k in (2, 4, 8):
        inst = leinberger(n=24, k=k, count=1, seed=3)[0]
        runs = {}
        for lp in (True, False):
            monkeypatch.setattr(pb, "LP_ROWS", 2 if lp else 0)
            runs[lp] = solve(inst, "mkp-bb", time_limit=LIMIT, nodes=None, warm=False)
        assert runs[True].status == runs[False].status == "optimal"
        assert runs[True].value == runs[False].value
        assert runs[True].info["nodes"] <= runs[False].info["nodes"]


@pytest.mark.parametrize("seed", range(40))
def test_reduced_cost_fixing_keeps_every_better_selection(seed):
    """At a node, the items the LP's reduced costs leave out are in no
    selection that beats the incumbent, the items they take are in every
    one, and a node they declare dead has none (brute force over the
    fitting items)."""
    from epochbench.exact import _mkp_bb as kernel
    rng = np.random.default_rng(9000 + seed)
    m, n = int(rng.integers(2, 7)), int(rng.integers(4, 13))
    a = rng.integers(0, 30, size=(m, n)).astype(np.int64)
    c = rng.integers(1, 60, size=n).astype(np.int64)
    res = rng.integers(10, 80, size=m).astype(np.int64)
    fit = np.all(a <= res[:, None], axis=0)
    lpw = kernel.lp_scratch(m, n)
    kernel._lp_bound(a, c, res, fit.copy(), 0, lpw, np.inf)            # the node LP's duals in lpw[:m]
    cols = np.flatnonzero(fit)
    values = {x: int(c[cols] @ np.array(x)) for x in itertools.product((0, 1), repeat=cols.size)
              if np.all(a[:, cols] @ np.array(x) <= res)}
    opt = max(values.values())
    best = opt - int(rng.integers(1, 6)) if seed % 4 else opt         # some nodes with nothing better
    out, trail, _ = kernel.fixing_scratch(n)
    r, f, x = res.copy(), fit.copy(), np.zeros(n, dtype=np.int64)
    tl, val, live = kernel._fix(a, c, r, 0, 0, f, best, lpw[:m].copy(), out, x, trail, 0)
    fixed = trail[:tl]
    taken, left = fixed[fixed >= n] - n, fixed[fixed < n]
    assert val == int(c[taken].sum()) and np.array_equal(r, res - a[:, taken].sum(axis=1))
    better = [dict(zip(cols.tolist(), xs)) for xs, v in values.items() if v > best]
    if not live:
        assert not better
    for sel in better:
        assert all(sel[int(j)] == 1 for j in taken) and all(sel[int(j)] == 0 for j in left)


def test_bisection_needs_fewer_nodes_than_the_plain_search(monkeypatch):
    """From the same start, the bisection on the value (:class:`_Ladder`)
    proves the optimum of K = 4 and 8 epochs in fewer nodes than the plain
    search alone (its first chunk made endless), and proves the same
    value."""
    for k in (4, 8):
        insts = leinberger(n=48, k=k, count=4, seed=5)
        ladder = [solve(inst, "mkp-bb", time_limit=LIMIT, nodes=None) for inst in insts]
        monkeypatch.setattr(pb, "FIRST_NODES", 10**9)
        plain = [solve(inst, "mkp-bb", time_limit=LIMIT, nodes=None) for inst in insts]
        monkeypatch.undo()
        assert all(r.status == "optimal" for r in ladder + plain)
        assert [r.value for r in ladder] == [r.value for r in plain]
        assert all("attempts" in r.info for r in ladder) and not any("attempts" in r.info for r in plain)
        assert sum(r.info["nodes"] for r in ladder) < sum(r.info["nodes"] for r in plain)
        for inst, r in zip(insts, ladder):
            check_packing(inst, r.decision)


def test_reservation_rows_near_the_int64_limit_are_kept():
    """Five late jobs of a quarter of 2**63 each: their int64 sum wraps, which
    used to drop the reservation row (``extra`` takes one of them) from
    mkp-bb's arrays, so it picked three and the checker refused them."""
    c = 2**63 - 1
    inst = PackingInstance.build([c], [[c // 4 + 1]] * 5, objective="count", shadow=10.0, extra=[c // 4 + 1],
                                 runtime_past_shadow=[True] * 5)
    r = solve(inst, "mkp-bb", time_limit=LIMIT)
    assert r.status == "optimal" and r.value == 1


def test_the_warm_up_loads_every_kernel_a_solve_calls():
    """In a fresh process, after mkp-bb's warm-up hook each compiled
    function that Python calls has a signature (loaded from numba's cache or
    compiled): the open subtrees' bound, read only when the first nodes do
    not finish, was compiled on the clock of the first such solve."""
    code = ("from epochbench.exact import _mkp_bb as kernel, packing_bb\n"
            "packing_bb._warm_up()\n"
            "from numba.core.registry import CPUDispatcher\n"
            "entry = {n: f for n, f in vars(kernel).items() if isinstance(f, CPUDispatcher) and n[0] != '_'}\n"
            "print(sorted(entry), sorted(n for n, f in entry.items() if not f.signatures))\n")
    assert python_child(code) == "['open_bound', 'search'] []"                 # the ones Python calls


@pytest.mark.parametrize("seed", range(12))
def test_open_bound_is_valid_after_every_single_node(seed):
    """Stopped after any number of nodes (one at a time, so in every state: a
    frame's first branch, between its two children, backtracking), the search
    reports a bound of its open subtrees no smaller than the optimum, -1
    before the root is evaluated, and the optimum once finished."""
    rng = np.random.default_rng(11000 + seed)
    objective = ("utilization", "count", "profit")[seed % 3]
    inst = random_packing(rng, int(rng.integers(7, 11)), int(rng.integers(1, 6)), seed % 2 == 1, objective)
    p = pb.mkp_arrays(inst, packing_candidates(inst))
    opt = best_selection(p["a"], p["b"], p["c"])
    run = pb._Search(p)
    assert run.bound() == -1                                  # the root not evaluated yet
    finished = False
    for _ in range(100_000):
        finished = run.step(1)
        assert run.bound() >= opt, (int(run.state[kernel.S_NODES]), run.bound(), opt)
        assert run.state[kernel.S_BEST] <= opt
        if finished:
            break
    assert finished and run.bound() == int(run.state[kernel.S_BEST]) == opt


def test_least_keeps_the_smallest_proved_bound():
    assert pb._least(None, 3.0, 2.0, None) == 2.0
    assert pb._least(5.0) == 5.0 and pb._least(None, None) is None


def test_outcome_with_nothing_selected_is_a_timeout_without_bound():
    """Stopped right after the root (its first child not entered): nothing
    selected, so the status is timeout and there is no bound, not 'feasible'."""
    inst = PackingInstance.build([10, 10], [[6, 3], [3, 6], [5, 5], [4, 4]])
    cand = packing_candidates(inst)
    run = pb._Search(pb.mkp_arrays(inst, cand))
    assert not run.step(1) and not run.best_x.any()
    sel, value, status, bound, info = pb._outcome(inst, run, cand, None, False)
    assert sel == () and status == "timeout"
    r = pb._result(inst, sel, value, status, bound, info, 0.0)
    assert r.status == "timeout" and r.bound is None and r.info["bound_kind"] == "none"


def test_take_start_replaces_only_a_worse_incumbent():
    """A start better than the incumbent becomes it; a worse one does not."""
    inst = PackingInstance.build([10], [[6], [5], [4], [3]], objective="count")
    cand = packing_candidates(inst)
    p = pb.mkp_arrays(inst, cand)
    run = pb._Search(p)
    one = Result(inst.kind, "h", (0,), 1.0, "feasible", 0.0, None)
    two = Result(inst.kind, "h", (1, 2), 2.0, "feasible", 0.0, None)
    pb._take_start(one, cand, p, run.best_x, run.state)
    assert run.state[kernel.S_BEST] == 1
    pb._take_start(two, cand, p, run.best_x, run.state)              # better: taken
    assert run.state[kernel.S_BEST] == 2 and int(run.best_x.sum()) == 2
    pb._take_start(one, cand, p, run.best_x, run.state)              # worse: ignored
    assert run.state[kernel.S_BEST] == 2 and int(run.best_x.sum()) == 2


def test_a_slow_slice_does_not_leave_the_search_one_node_a_call(monkeypatch):
    """The kernel runs in slices of about SLICE_S seconds, sized by the node
    rate of the last slice.  A slice of fewer than 16 nodes did not update
    the rate: once a slow slice (the first call's compilation) had set it to
    186 nodes/s, every later slice was one node, one kernel call a node, for
    the rest of the process (the oracle's median at n = 64, K = 4 went from
    6 ms to 11).  The nodes explored are the same however the search is
    sliced.  (Each search now measures its own rate from a first slice of
    one node; here that first slice is made slow.)"""
    import time
    inst = leinberger(n=64, k=4, dist="uniform", count=10, seed=1)[9]
    whole = pb.solve_packing_bb(inst, time_limit=math.inf)
    real, calls = kernel.search, []

    def counted(*args):
        if not calls:
            time.sleep(0.05)                         # as a compilation would: 20 nodes/s
        calls.append(1)
        return real(*args)
    monkeypatch.setattr(kernel, "search", counted)
    r = pb.solve_packing_bb(inst, time_limit=60.0)
    assert r.status == whole.status == "optimal" and r.value == whole.value
    assert r.info["nodes"] == whole.info["nodes"] > 1000
    assert 4 * len(calls) < r.info["nodes"], len(calls)


# ---- many resources (a review: 400 s on a limit of 1 s at K = 10,000) ---------------------------------
def test_many_rows_keep_dantzig_rows_linear_and_no_node_lp():
    """The surrogate row's weights are a vector (an m x m identity held the
    rows' own capacities: 800 MB and O(m^2) a node at K = 10,000), and past
    LP_MAX_ROWS rows the nodes take the Dantzig bounds, not the LP."""
    inst = leinberger(n=12, k=500, count=1, seed=3)[0]
    p = pb.mkp_arrays(inst, packing_candidates(inst))
    m = p["a"].shape[0]
    assert m > pb.LP_MAX_ROWS and not pb._node_lp(m) and pb._node_lp(pb.LP_MAX_ROWS)
    assert p["dz_map"].shape == (m,) and p["dz"].shape[0] == m + 1
    dz, dz_map, _ = pb.dantzig_rows(p["a"], p["b"], p["c"])
    assert np.array_equal(dz_map, 1.0 / np.maximum(p["b"], 1))


def test_many_rows_match_brute_force():
    """K = 2,000, n = 12: the search alone proves the optimum (all 4,096 subsets checked)."""
    inst = leinberger(n=12, k=2000, count=1, seed=4)[0]
    r = solve(inst, "mkp-bb", time_limit=60.0, nodes=None)
    assert r.status == "optimal" and abs(r.value - brute(inst)) <= 1e-9
    check_packing(inst, r.decision)


def test_a_search_sizes_its_first_slice_by_its_own_rate(monkeypatch):
    """A search's first slice is one node, whatever an earlier search ran
    at (a class-wide rate from an easy search sized the first slice of a
    slow one at 96 nodes of 4 s each)."""
    easy = leinberger(n=40, k=2, count=1, seed=1)[0]
    first = pb._Search(pb.mkp_arrays(easy, packing_candidates(easy)), deadline=math.inf)
    first.step(10**6)
    slices = []
    real = kernel.search

    def spy(*args):
        slices.append(args[18])                      # k: the nodes this call may explore
        return real(*args)
    monkeypatch.setattr(kernel, "search", spy)
    inst = leinberger(n=40, k=8, count=1, seed=2)[0]
    run = pb._Search(pb.mkp_arrays(inst, packing_candidates(inst)), deadline=time_now() + 30.0)
    assert run.rate is None
    run.step(10**6)
    assert slices[0] == 1 and run.rate is not None and len(slices) >= 2


def time_now() -> float:
    import time
    return time.perf_counter()
