"""The mapping family ([vadhiyar-notes] ETC mapping): instance model, checker, bounds,
generators, the Braun files, greedy heuristics against plain reference
implementations, the metaheuristics' rules, and the exact models against
brute force and each other."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from epochbench.cli import main
from epochbench.exact import mapping as X
from epochbench.heuristics import _mapping_kernels as K
from epochbench.heuristics import mapping as H
from epochbench.instances import InfeasibleSolution, InstanceError, check, load_instance, save_instance
from epochbench.instances.generators import generate
from epochbench.instances.mapping import (BRAUN_NAMES, MappingInstance, braun_etc, braun_family, braun_range,
                               check_mapping, dual_bound, load_braun, water_level)
from epochbench.instances.registry import solve
from epochbench.instances.data import data_root

BRAUN = data_root() / "braun"
needs_braun = pytest.mark.skipif(not (BRAUN / "REFERENCE.csv").is_file(),
                                 reason=f"Braun reference data missing at {BRAUN} (set EPOCHBENCH_DATA)")
GREEDY = ("olb", "uda", "mct", "minmin", "maxmin", "sufferage", "duplex")


def random_instance(rng, t, m, *, ready=False, integer=False, name="rand"):
    etc = rng.integers(1, 10, size=(t, m)).astype(float) if integer else rng.uniform(1, 100, size=(t, m))
    rd = rng.integers(0, 15, size=m).astype(float) if ready else None
    return MappingInstance.build(etc, rd, {"name": name})


def brute_force(inst) -> float:
    """Smallest makespan over all m**t mappings."""
    maps = np.array(list(itertools.product(range(inst.k), repeat=inst.n)), dtype=np.int64)
    return float(H.makespans(inst, maps).min())


# ---- instance model ------------------------------------------------------------------------
def test_makespan_ignores_idle_machines_and_counts_ready_times():
    inst = MappingInstance.build([[2, 5, 9], [4, 1, 9]], [0, 3, 100])
    assert inst.value([0, 0]) == 6            # machine 2 idle: its ready time 100 does not count
    assert inst.value([0, 1]) == 4            # machine 1: 3 + 1
    assert inst.value([2, 1]) == 109
    assert inst.finish_times([0, 1]).tolist() == [2, 4, 0]
    assert inst.describe([0, 1]) == {"critical_machine": 1, "tasks_per_machine": [1, 1, 0]}
    assert (inst.n, inst.k, inst.tasks, inst.machines, inst.sense) == (2, 3, 2, 3, "min")


@pytest.mark.parametrize("etc, ready, msg", [
    ([[1, 2], [3]], None, "'etc'"),
    ([1, 2, 3], None, "t x m"),
    (np.zeros((0, 3)), None, "at least one task"),
    ([[1, -1]], None, r"entry \[0\]\[1\] = -1.0 is not a number >= 0"),
    ([[1, float("nan")]], None, "not a number >= 0"),
    ([[1, 0], [0, 2]], None, "every task takes 0 on a machine ready at 0, so the optimum makespan is 0"),
    ([[1, 0], [0, 2]], [0, 0.0], "optimum makespan is 0"),
    ([[1, 2]], [0], "one entry per machine"),
    ([[1, 2]], [0, -1], r"'ready' entry \[1\]"),
    ([["a", 2]], None, "'etc'"),
    ([[1e308, 1e308], [1e308, 4]], None, "longer than a float can hold"),     # sums overflow: lns said "math domain error"
    ([[1e308, 2]], [1.7e308, 0], "longer than a float can hold"),
])
def test_build_rejects_bad_fields(etc, ready, msg):
    with pytest.raises(InstanceError, match=msg):
        MappingInstance.build(etc, ready, source="f.json")


def test_json_round_trip_and_kind_errors(tmp_path):
    inst = random_instance(np.random.default_rng(1), 5, 3, ready=True, name="rt")
    save_instance(inst, tmp_path / "rt.json")
    back = load_instance(tmp_path / "rt.json")
    np.testing.assert_array_equal(back.etc, inst.etc)
    np.testing.assert_array_equal(back.ready, inst.ready)
    assert back.meta == inst.meta and back.kind == "mapping"
    data = json.loads((tmp_path / "rt.json").read_text())
    assert set(data) == {"kind", "etc", "ready", "meta"}
    del data["etc"]
    with pytest.raises(InstanceError, match="field 'etc' missing"):
        MappingInstance.from_dict(data, "x.json")
    with pytest.raises(InstanceError, match="expected 'mapping'"):
        MappingInstance.from_dict({"kind": "packing"}, "x.json")


def test_checker():
    inst = MappingInstance.build([[1, 2], [3, 4], [5, 6]], meta={"name": "c"})
    assert check_mapping(inst, np.array([0, 1, 1])) == (0, 1, 1)
    with pytest.raises(InfeasibleSolution, match="not an integer"):  # no floats, not even 1.0
        check(inst, [1.0, 0, 1])
    for bad, msg in [([0, 1], "2 entries"), ([0, 1, 2], "machine 2, outside"), ([0, -1, 0], "outside"),
                     ([0, 0.5, 1], "not an integer"), ([0, True, 1], "not a machine index"),
                     ([0, "x", 1], "not a machine index"), (5, "not a sequence")]:
        with pytest.raises(InfeasibleSolution, match=msg):
            check_mapping(inst, bad)


def test_water_level():
    assert water_level(np.zeros(4), 8.0) == 2.0
    assert water_level(np.array([0.0, 10.0]), 4.0) == 4.0          # the late machine stays idle
    assert water_level(np.array([0.0, 2.0]), 6.0) == 4.0


@pytest.mark.parametrize("seed", range(6))
def test_lower_bounds_are_valid_on_tiny_instances(seed):
    rng = np.random.default_rng(seed)
    inst = random_instance(rng, 6, 3, ready=seed % 2 == 1)
    opt = brute_force(inst)
    assert inst.lower_bound() <= opt * (1 + 1e-12)
    assert X.lp_bound(inst) <= opt * (1 + 1e-12)
    # the cheap Lagrangian bound never beats the LP it approximates
    assert dual_bound(inst.etc) <= X.lp_bound(inst) * (1 + 1e-9)


def test_cpsat_proves_the_true_optimum_with_etc_of_1e13():
    """ETC entries of 1e13 and more: CP-SAT 9.15's presolve (inclusion
    detection) proved a makespan above brute force's optimum here; with
    :func:`~epochbench.exact._binary.cpsat_safeguard` it proves the optimum."""
    rng = np.random.default_rng(59)
    t, m = int(rng.integers(5, 8)), int(rng.integers(2, 4))
    etc = rng.integers(10**13, 20 * 10**13, (t, m)).astype(float)
    inst = MappingInstance.build(etc, np.zeros(m), {"name": "big-etc"})
    r = solve(inst, "cpsat", time_limit=10, threads=1, warm=False)
    assert r.status == "optimal" and r.value == pytest.approx(brute_force(inst), rel=1e-12)


# ---- generators ------------------------------------------------------------------------------
def test_braun_range_classes_and_determinism():
    insts = braun_range(tasks=20, machines=6, task_het="all", machine_het="all", consistency="all", count=2, seed=3)
    assert len(insts) == 24 and len({i.name for i in insts}) == 24
    again = generate("braun-range", tasks=20, machines=6, task_het="lo", machine_het="hi", consistency="s",
                     count=1, seed=3)
    same = next(i for i in insts if i.name == again[0].name)
    np.testing.assert_array_equal(same.etc, again[0].etc)   # independent of the other classes and of count
    for inst in insts:
        p = inst.meta["params"]
        e = inst.etc
        assert e.min() >= 1 and np.all(np.round(e, 2) == e)
        hi = {"hi": 3000, "lo": 100}[p["task_het"]] * {"hi": 1000, "lo": 10}[p["machine_het"]]
        assert e.max() <= hi
        if p["consistency"] == "c":
            assert np.all(np.diff(e, axis=1) >= 0)
        elif p["consistency"] == "s":
            assert np.all(np.diff(e[:, 0::2], axis=1) >= 0) and not np.all(np.diff(e, axis=1) >= 0)


def test_braun_etc_ranges_unrounded():
    e = braun_etc(np.random.default_rng(0), 400, 8, "lo", "lo", "i")
    assert 1 <= e.min() and e.max() <= 100 * 10 and not np.all(np.round(e, 2) == e)
    with pytest.raises(ValueError, match="consistency"):
        braun_etc(np.random.default_rng(0), 4, 2, consistency="x")


def test_braun_file_reader_errors(tmp_path):
    good = tmp_path / "u_c_hilo.0"
    good.write_text("2 2 0\n1.5\n2\n3\n4.25\n")
    inst = load_braun(good)
    assert inst.etc.tolist() == [[1.5, 2], [3, 4.25]]
    assert inst.meta["consistency"] == "c" and inst.meta["task_het"] == "hi" and inst.meta["machine_het"] == "lo"
    for text, msg in [("2 x 0\n1\n2\n3\n4\n", "header must be integers"), ("2 2 0.5\n1\n2\n3\n4\n", "'t m c'"),
                      ("2 2 0\n1\n2\n3\n", "the file has 3"), ("2 2 0\n1\n2\nabc\n4\n", r"line 4: 'abc'"),
                      ("2 2 0\n1 2\n-3\n4\n", r"line 3: -3.0 \(etc\[1\]\[0\]\) is not a time >= 0"),
                      ("2 2 -1\n1\n2\n3\n4\n", "c >= 0"), ("2 2 0 1\n1\n2\n3\n4\n", "'t m' or 't m c'")]:
        bad = tmp_path / "bad.0"
        bad.write_text(text)
        with pytest.raises(InstanceError, match=msg):
            load_braun(bad)
    with pytest.raises(InstanceError, match="no such file"):
        load_braun(tmp_path / "missing.0")
    # the larger HCSP sets (Nesmachnow et al.): the consistency code 1 or 2 in the header, or none;
    # times rounded to 0.00 (e.g. 1024x32/B.u_c_lolo) are times
    hcsp = tmp_path / "A.u_i_lolo"
    hcsp.write_text("2 2 2\n0.00\n1.5\n0.25\n0.50\n")
    inst = load_braun(hcsp)
    assert inst.etc.tolist() == [[0, 1.5], [0.25, 0.5]] and inst.meta["consistency"] == "i"
    for name, braun in (("A.u_c_hihi", False), ("u_c_hihi.0", True)):     # 512 x 16 named as Braun's or not
        (tmp_path / name).write_text("512 16 1\n" + "1.5\n" * 8192)
        assert load_braun(tmp_path / name).meta.get("dataset") == ("braun2001" if braun else None), name
    assert inst.value([0, 0]) == 0.25 and inst.value([0, 1]) == 0.5 and 0 < inst.lower_bound() <= 0.25
    hcsp.write_text("2 2\n0.00\n1.5\n0.25\n0.00\n")              # both tasks can take 0: no gap to 0
    with pytest.raises(InstanceError, match="optimum makespan is 0"):
        load_braun(hcsp)
    with pytest.raises(InstanceError, match="not found"):
        braun_family(root=str(tmp_path), names="u_i_hihi.0")


@needs_braun
def test_braun_files_and_reference_meta():
    insts = braun_family()
    assert [i.name for i in insts] == list(BRAUN_NAMES)
    for inst in insts:
        assert inst.etc.shape == (512, 16)
        ref = inst.meta["reference"]
        assert inst.meta["lp_bound"] == ref["lp_bound"] and inst.meta["best_known"] == ref["best_known"]
        assert ref["lp_bound"] <= ref["best_known"] <= ref["minmin"]
        # the cheap bound is valid against the best known makespan and close to the LP
        assert inst.lower_bound() <= ref["best_known"]
        assert inst.lower_bound() >= ref["lp_bound"] * (1 - 1e-3)
        if inst.meta["consistency"] == "c":
            assert np.all(np.diff(inst.etc, axis=1) >= 0)


@needs_braun
def test_minmin_and_maxmin_reproduce_reference_makespans():
    """Min-Min and Max-Min on the 12 Braun matrices within 0.01% of
    REFERENCE.csv (no ties occur there, so the tie rule does not matter)."""
    for inst in braun_family():
        ref = inst.meta["reference"]
        for name in ("minmin", "maxmin"):
            got = solve(inst, name).value
            assert got == pytest.approx(ref[name], rel=1e-4), (inst.name, name)


# ---- greedy heuristics against plain reference implementations ------------------------------------
def ref_batch(inst, rule):
    """Min-Min / Max-Min / Sufferage, O(t^2 m) plain Python, lowest task then
    lowest machine index on ties."""
    t, m = inst.etc.shape
    mat = list(inst.ready)
    left = list(range(t))
    out = [None] * t
    while left:
        best = None
        for i in left:
            ct = [mat[j] + inst.etc[i, j] for j in range(m)]
            order = sorted(range(m), key=lambda j: (ct[j], j))
            j1 = order[0]
            if rule == "minmin":
                key = -ct[j1]
            elif rule == "maxmin":
                key = ct[j1]
            else:
                key = ct[order[1]] - ct[j1] if m > 1 else 0.0
            if best is None or key > best[0]:
                best = (key, i, j1)
        _, i, j = best
        out[i] = j
        mat[j] += inst.etc[i, j]
        left.remove(i)
    return out


def ref_sequential(inst, rule):
    t, m = inst.etc.shape
    mat = list(inst.ready)
    out = []
    for i in range(t):
        if rule == "mct":
            j = min(range(m), key=lambda j: (mat[j] + inst.etc[i, j], j))
        elif rule == "olb":
            j = min(range(m), key=lambda j: (mat[j], j))
        else:
            j = min(range(m), key=lambda j: (inst.etc[i, j], j))
        out.append(j)
        mat[j] += inst.etc[i, j]
    return out


@pytest.mark.parametrize("seed", range(8))
def test_greedy_heuristics_match_reference_implementations(seed):
    rng = np.random.default_rng(seed)
    t, m = int(rng.integers(1, 25)), int(rng.integers(1, 6))
    inst = random_instance(rng, t, m, ready=seed % 2 == 0, integer=seed % 3 == 0)  # integers: many ties
    for rule in ("minmin", "maxmin", "sufferage"):
        assert getattr(H, rule)(inst).tolist() == ref_batch(inst, rule), rule
    for rule in ("mct", "olb", "uda"):
        assert getattr(H, rule)(inst).tolist() == ref_sequential(inst, rule), rule
    dup = H.duplex(inst)
    assert inst.value(dup) == min(inst.value(H.minmin(inst)), inst.value(H.maxmin(inst)))
    assert X.minmin_start(inst).tolist() == H.minmin(inst).tolist()


def test_seed_rules_on_a_hand_example():
    """OLB ignores ETC, UDA ignores availability ([vadhiyar-notes]); Min-Min maps the
    short task first, Max-Min the long one."""
    inst = MappingInstance.build([[1, 10], [2, 20], [100, 30]], [0, 0])
    assert H.olb(inst).tolist() == [0, 1, 0]       # free machines in turn, whatever the ETC
    assert H.uda(inst).tolist() == [0, 0, 1]
    assert H.minmin(inst).tolist() == [0, 0, 1]    # 1, then 2 on machine 0 (ct 3), then 30 on machine 1
    assert H.maxmin(inst).tolist() == [0, 0, 1]
    inst2 = MappingInstance.build([[4, 5], [4, 5], [6, 7]])
    assert H.minmin(inst2).tolist() == [0, 1, 0]   # 4 on 0; 5 on 1 beats 8 on 0; then 6 on 0 (10) vs 7 on 1 (12)
    # Max-Min: 6 on 0; task 0 (5 on 1, tied with task 1); task 1: 10 on 0 = 10 on 1, machine 0
    assert H.maxmin(inst2).tolist() == [1, 0, 0]


def test_all_registered_methods_pass_the_checker_via_solve():
    inst = braun_range(tasks=30, machines=5, seed=2)[0]
    for name in GREEDY + ("ga", "sa", "tabu"):
        res = solve(inst, name)
        assert len(res.decision) == 30 and res.value == inst.value(res.decision) and res.status == "feasible"


# ---- metaheuristics --------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_ga_never_worse_than_its_minmin_seed(seed):
    rng = np.random.default_rng(100 + seed)
    inst = random_instance(rng, 40, 5, ready=seed == 3)
    st = {}
    out = H.ga(inst, population=30, max_iter=60, patience=20, seed=seed, stats=st)
    mm = inst.value(H.minmin(inst))
    assert inst.value(out) <= mm
    assert st["seed_makespan"] == mm and inst.value(out) == st["elite"][-1]
    assert np.all(np.diff(st["elite"]) <= 0)     # elitism: the elite never worsens
    assert st["iterations"] <= 60 and len(st["elite"]) == st["iterations"] + 1


def test_ga_is_deterministic_and_stops_without_elite_change():
    inst = braun_range(tasks=50, machines=4, seed=5)[0]
    a = H.ga(inst, population=20, max_iter=50, seed=7)
    b = H.ga(inst, population=20, max_iter=50, seed=np.random.default_rng(7))
    assert a.tolist() == b.tolist()
    st = {}
    H.ga(inst, population=20, max_iter=10_000, patience=5, seed=1, stats=st)
    hist = st["elite"]
    assert st["iterations"] < 10_000 and hist[-1] == hist[-6] and (len(hist) < 7 or hist[-7] > hist[-6])
    with pytest.raises(ValueError, match="population"):
        H.ga(inst, population=1)


def test_ga_generation_kernel_crossover_and_mutation():
    etc = np.arange(1.0, 13.0).reshape(4, 3)
    pop = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2]], dtype=np.int64)
    span = H.makespans(MappingInstance.build(etc), pop)
    new, new_span = np.empty_like(pop), np.empty(3)
    e = np.array([2, 1, 0, 0], dtype=np.int64)
    K.ga_generation(pop, span, e, 99.0, np.array([1, 2]), np.array([1]), np.array([2]), np.array([3]),
                    np.array([2]), np.array([0]), np.array([2]), etc, np.zeros(3), new, new_span)
    assert new.tolist() == [[2, 1, 0, 0], [1, 1, 1, 2], [(2 + 2) % 3, 2, 2, 1]]
    assert new_span[0] == 99.0
    inst = MappingInstance.build(etc)
    assert new_span[1:].tolist() == [inst.value(new[1]), inst.value(new[2])]


def test_sa_acceptance_rule():
    """z = 1 > y accepts every move; z = 0 accepts only improvements; the
    temperature drops by the cooling factor per step."""
    rng = np.random.default_rng(0)
    inst = random_instance(rng, 12, 4, ready=True)
    etc, ready = np.array(inst.etc), np.array(inst.ready)
    n = 40
    task, off = rng.integers(0, 12, n), rng.integers(1, 4, n)
    for z, everything in ((1.0, True), (0.0, False)):
        cur = rng.integers(0, 4, 12).astype(np.int64)
        start = cur.copy()
        load, cnt = K.loads_of(etc, cur, 4)
        span0 = K.span_of(load, cnt, ready)
        best = cur.copy()
        steps, span, best_span, temp, _ = K.anneal(etc, ready, cur, load, cnt, span0, best, span0, 1e9, 0.9, 0,
                                                  10**9, task, off, np.full(n, z))
        assert steps == n and temp == pytest.approx(1e9 * 0.9**n)   # y < 1 throughout at this temperature
        # replay by hand
        ref = start.copy()
        ref_span = inst.value(ref)
        for k in range(n):
            trial = ref.copy()
            trial[task[k]] = (trial[task[k]] + off[k]) % 4
            v = inst.value(trial)
            if everything or v < ref_span:
                ref, ref_span = trial, v
        assert cur.tolist() == ref.tolist() and span == pytest.approx(ref_span)
        assert best_span <= span0 and inst.value(best) == pytest.approx(best_span)


def test_sa_deterministic_never_worse_than_start_and_patience():
    inst = braun_range(tasks=60, machines=6, seed=4)[0]
    st = {}
    a = H.sa(inst, seed=3, stats=st)
    assert a.tolist() == H.sa(inst, seed=3).tolist()
    assert inst.value(a) == st["best_makespan"] <= st["start_makespan"]
    assert st["iterations"] < 100_000
    st2 = {}
    m = H.sa(inst, init="minmin", seed=3, stats=st2)
    assert inst.value(m) <= inst.value(H.minmin(inst))
    st3 = {}
    H.sa(inst, seed=3, max_iter=10, stats=st3)
    assert st3["iterations"] == 10
    with pytest.raises(ValueError, match="init"):
        H.sa(inst, init="bad")


@pytest.mark.parametrize("shape", [(60, 6), (200, 16)])
def test_sa_with_a_time_limit_it_does_not_reach_answers_as_without_one(shape):
    """With a time limit sa drew its random numbers in blocks of 256, not
    4096: another sequence, another answer (score and eb.solve(...,
    time_limit=10) disagreed on one instance)."""
    inst = braun_range(tasks=shape[0], machines=shape[1], seed=4)[0]
    st, st2 = {}, {}
    a = H.sa(inst, seed=3, stats=st)
    b = H.sa(inst, seed=3, stats=st2, time_limit=100.0)
    assert a.tolist() == b.tolist() and st == st2
    assert H.sa(inst, seed=3, time_limit=0.0).tolist() == H.sa(inst, seed=3, max_iter=0).tolist()


def test_tabu_short_hops_reach_a_swap_local_optimum():
    rng = np.random.default_rng(2)
    inst = random_instance(rng, 15, 4, ready=True)
    etc, ready = np.array(inst.etc), np.array(inst.ready)
    cur = rng.integers(0, 4, 15).astype(np.int64)
    before = inst.value(cur)
    load, cnt = K.loads_of(etc, cur, 4)
    hops, span = K.short_hops(etc, ready, cur, load, cnt, 10**6)
    assert hops >= 1 and span == pytest.approx(inst.value(cur)) and span < before
    for i, j in itertools.combinations(range(15), 2):  # no swap improves any more
        trial = cur.copy()
        trial[i], trial[j] = cur[j], cur[i]
        assert inst.value(trial) >= span - 1e-9
    # the first successful hop is the first improving pair in scan order
    cur2 = rng.integers(0, 4, 15).astype(np.int64)
    first = None
    for i, j in itertools.combinations(range(15), 2):
        trial = cur2.copy()
        trial[i], trial[j] = cur2[j], cur2[i]
        if inst.value(trial) < inst.value(cur2):
            first = trial
            break
    assert first is not None
    moved = cur2.copy()
    load, cnt = K.loads_of(etc, moved, 4)
    n, _ = K.short_hops(etc, ready, moved, load, cnt, 1)
    assert n == 1 and moved.tolist() == first.tolist()


def test_tabu_long_hops_and_determinism():
    inst = braun_range(tasks=40, machines=4, seed=6)[0]
    st = {}
    a = H.tabu(inst, hops=200, seed=2, stats=st)
    assert a.tolist() == H.tabu(inst, hops=200, seed=2).tolist()
    assert st["short_hops"] + st["long_hops"] == 200 and st["long_hops"] >= 1
    assert inst.value(a) == st["best_makespan"]
    assert K.min_distance(np.array([0, 1, 2]), np.array([[0, 1, 1], [2, 2, 2]]), 2) == 1
    assert K.min_distance(np.array([0, 1, 2]), np.array([[0, 1, 1], [2, 2, 2]]), 0) == 3
    tiny = MappingInstance.build([[1.0]])
    assert H.tabu(tiny, hops=10, seed=0).tolist() == [0]



def test_the_kernels_makespan_is_the_instances_over_machines_that_hold_a_task():
    """The metaheuristics' makespan (``span_of``) is the instance's value: an
    idle machine's ready time does not count ([vadhiyar-notes]: max ct(i, j)
    over the tasks), here a machine ready at 1000 with no task."""
    rng = np.random.default_rng(8)
    etc = rng.uniform(1, 10, size=(6, 4))
    ready = np.array([0.0, 3.0, 1000.0, 2.0])
    inst = MappingInstance.build(etc, ready)
    for _ in range(50):
        a = rng.integers(0, 4, 6)
        a[a == 2] = rng.integers(0, 2)          # machine 2 stays idle
        load, cnt = K.loads_of(inst.etc, a, 4)
        assert K.span_of(load, cnt, inst.ready) == pytest.approx(inst.value(a)) and inst.value(a) < 1000

def _hops(etc, cur, limit=10**6):
    etc = np.asarray(etc, dtype=float)
    cur = np.asarray(cur, dtype=np.int64)
    ready = np.zeros(etc.shape[1])
    load, cnt = K.loads_of(etc, cur, etc.shape[1])
    n, span = K.short_hops(etc, ready, cur, load, cnt, limit)
    return n, span, cur.tolist()


def test_tabu_short_hop_between_the_only_two_machines():
    """[vadhiyar-notes] Tabu: exchanging the machines of tasks i and j is a successful
    short hop when the makespan drops; with two machines the swap changes both."""
    n, span, cur = _hops([[1, 10], [10, 1]], [1, 0])
    assert (n, span, cur) == (1, 1.0, [0, 1])


def test_tabu_short_hop_between_two_machines_tied_for_the_makespan():
    """Both machines of maximal finish time (10, 10) lose it in one swap: a
    successful hop (the third machine, 2, is the new makespan)."""
    n, span, cur = _hops([[10, 1, 50], [1, 10, 50], [50, 50, 2]], [0, 1, 2])
    assert (n, span, cur) == (1, 2.0, [1, 0, 2])


def test_sa_patience_counts_accepted_moves_that_keep_the_makespan():
    """Patience counts iterations without a change of the current makespan:
    accepted moves of a light task between two light machines (makespan
    stays 100, set by task 0) do not reset it."""
    etc = np.array([[100.0, 100.0, 100.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]])
    ready = np.zeros(3)
    cur = np.array([0, 1, 2], dtype=np.int64)
    load, cnt = K.loads_of(etc, cur, 3)
    best = cur.copy()
    n = 10
    r_task = np.ones(n, dtype=np.int64)
    r_off = np.array([1, 2] * 5, dtype=np.int64)      # task 1: machine 1 -> 2 -> 1 -> ..., never machine 0
    r_z = np.full(n, 0.9)                              # > y = 0.5 for an equal makespan: accepted
    steps, span, best_span, temp, since = K.anneal(etc, ready, cur, load, cnt, 100.0, best, 100.0, 100.0, 0.9,
                                                   0, 5, r_task, r_off, r_z)
    assert (steps, since, span) == (5, 5, 100.0)
    assert cur.tolist() == [0, 2, 2]                   # five accepted moves: 1->2->1->2->1->2


def test_duplex_keeps_minmin_on_a_tie():
    """Duplex ([braun2001] sec. 2): the better of Min-Min and Max-Min, Min-Min's
    mapping when both reach the same makespan (module docstring)."""
    inst = MappingInstance.build([[10, 10], [1, 2], [1, 2]])
    a, b = H.minmin(inst), H.maxmin(inst)
    assert a.tolist() == [1, 0, 0] and b.tolist() == [0, 1, 1]
    assert inst.value(a) == inst.value(b) == 10.0
    assert H.duplex(inst).tolist() == [1, 0, 0]


def test_ga_generation_draws_keep_the_elite_and_move_tasks_to_another_machine(monkeypatch):
    """[vadhiyar-notes] GA: elitism keeps the best chromosome untouched (slot 0: no
    crossover, no mutation); a crossover point lies inside the chromosome
    (1..t-1, a cut at 0 swaps whole chromosomes); a mutation reassigns the task
    to a NEW machine (offset 1..m-1)."""
    seen = []
    orig = K.ga_generation

    def spy(pop, span, elite, elite_span, pick, pa, pb, cut, mut, task, off, etc, ready, new, new_span):
        orig(pop, span, elite, elite_span, pick, pa, pb, cut, mut, task, off, etc, ready, new, new_span)
        seen.append((elite.copy(), new[0].copy(), pa.copy(), pb.copy(), cut.copy(), mut.copy(), off.copy()))

    monkeypatch.setattr(K, "ga_generation", spy)
    rng = np.random.default_rng(5)
    inst = MappingInstance.build(rng.uniform(1, 100, size=(12, 2)))
    H.ga(inst, population=16, max_iter=30, patience=30, crossover_rate=0.9, mutation_rate=0.9, seed=3)
    assert len(seen) == 30
    for elite, slot0, pa, pb, cut, mut, off in seen:
        assert slot0.tolist() == elite.tolist()
        assert 0 not in pa and 0 not in pb and 0 not in mut
        assert np.all((cut >= 1) & (cut <= 11))
        assert np.all(off == 1)                        # m = 2: the other machine


def test_tabu_long_hop_differs_from_every_tabu_entry_in_at_least_half_the_tasks(monkeypatch):
    """[vadhiyar-notes] Tabu: the final mapping of each descent joins the tabu list; a
    long hop jumps to a random mapping that differs from EVERY tabu entry (the
    one just added included) in at least half of the assignments: ceil(t/2),
    2 of t = 3."""
    starts, ends = [], []
    orig = K.short_hops

    def spy(etc, ready, assign, load, cnt, limit):
        starts.append(assign.copy())
        out = orig(etc, ready, assign, load, cnt, limit)
        ends.append(assign.copy())
        return out

    monkeypatch.setattr(K, "short_hops", spy)
    rng = np.random.default_rng(1)
    inst = MappingInstance.build(rng.uniform(1, 100, size=(3, 2)))
    st = {}
    H.tabu(inst, hops=50, max_tries=200, seed=4, stats=st)
    assert st["long_hops"] >= 2
    for k in range(1, len(starts)):
        for e in ends[:k]:
            assert int(np.sum(starts[k] != e)) >= 2, (k, starts[k], e)


def test_sa_each_iteration_moves_its_task_to_another_machine(monkeypatch):
    """[vadhiyar-notes] SA: each iteration mutates the mapping (one task to a NEW
    machine): every drawn machine offset is in 1..m-1, never a no-op."""
    offs = []
    orig = K.anneal

    def spy(*args):
        offs.append(np.array(args[-2]).copy())
        return orig(*args)

    monkeypatch.setattr(K, "anneal", spy)
    rng = np.random.default_rng(2)
    inst = MappingInstance.build(rng.uniform(1, 100, size=(10, 2)))
    H.sa(inst, seed=0, max_iter=300, patience=300)
    allo = np.concatenate(offs)
    assert allo.size > 0 and np.all(allo == 1)         # m = 2: always the other machine


def test_tabu_short_hop_needs_a_lower_makespan():
    """A swap that keeps the makespan is no successful hop ([vadhiyar-notes]
    Tabu: a hop succeeds when the makespan drops): no hop, nothing moved."""
    assert _hops([[5, 5], [5, 5]], [0, 1], limit=10) == (0, 5.0, [0, 1])


@pytest.mark.parametrize("seed,want", [(0, 33.0), (4, 40.0)])
def test_tabu_counts_a_last_long_hop_that_beats_the_best(seed, want):
    """With one hop allowed, all four tasks start on machine 0 (UDA: 40) where
    no swap can help, so the one hop is a long hop and the search ends on
    it: its mapping is returned when it is better (seed 0: three tasks on
    machine 1, 33), the start when it is worse (seed 4: all on machine 1, 44)."""
    inst = MappingInstance.build(np.array([[10.0, 11.0]] * 4))
    st = {}
    a = H.tabu(inst, hops=1, init="uda", seed=seed, stats=st)
    assert (st["short_hops"], st["long_hops"]) == (0, 1)
    assert inst.value(a) == st["best_makespan"] == want

# ---- exact models ---------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_exact_models_agree_with_brute_force(seed):
    rng = np.random.default_rng(40 + seed)
    t, m = (6, 3) if seed < 4 else (7, 2)
    inst = random_instance(rng, t, m, ready=seed in (1, 3), integer=seed == 2)
    if seed == 0:   # decimal data: CP-SAT scales exactly
        inst = MappingInstance.build(np.round(inst.etc, 2), None, {"name": "dec"})
    opt = brute_force(inst)
    for method in X.METHODS:
        res = solve(inst, method, time_limit=20, threads=1)
        assert res.status == "optimal", (method, res.info)
        assert res.value == pytest.approx(opt, rel=1e-6), method
        assert res.bound <= opt * (1 + 1e-9)
    sc = X.scaled(inst)
    assert sc.exact == (seed in (0, 2))


def test_zero_times_on_machines_ready_later_are_an_instance_with_a_positive_optimum():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                       # and dual_bound says no numpy warning
        inst = MappingInstance.build([[0, 2], [0, 3]], [1, 0])
        assert inst.value([0, 0]) == 1 and 0 <= inst.lower_bound() <= 1


def test_a_small_matrix_named_as_brauns_is_not_tagged_braun2001(tmp_path):
    f = tmp_path / "u_c_hilo.0"
    f.write_text("2 2 0\n1.5\n2\n3\n4.25\n")
    assert "dataset" not in load_braun(f).meta


@pytest.mark.parametrize("seed", range(3))
def test_times_of_zero_are_solved_to_the_brute_force_optimum(seed):
    """Public ETC files round small times to 0.00: with such entries (and
    ready times) every exact method proves the brute-force optimum, the LNS
    and the cheap bound stay valid, and every heuristic's mapping passes the
    checker at or above it."""
    from epochbench.instances.registry import names
    rng = np.random.default_rng(90 + seed)
    etc = rng.integers(1, 6, size=(6, 3)).astype(float)
    etc[rng.random(etc.shape) < 0.4] = 0
    etc[0] = [0, 0, 0] if seed else [2, 3, 4]                            # a task that costs nothing anywhere
    etc[1] = [4, 5, 6]                                                  # and one that costs everywhere
    inst = MappingInstance.build(etc, [0, 2, 0] if seed == 1 else None)
    opt = brute_force(inst)
    assert opt > 0 and inst.lower_bound() <= opt
    for method in (*X.METHODS, "lns"):
        res = solve(inst, method, time_limit=20, threads=1)
        assert res.status == "optimal" and res.value == pytest.approx(opt), (method, res.info)
        assert res.bound <= opt * (1 + 1e-9)
    for method in names("mapping", "heuristic"):
        res = solve(inst, method, **({"seed": 1} if method in H.METAHEURISTICS else {}))
        check(inst, res.decision)
        assert res.value >= opt - 1e-9 and res.value == inst.value(res.decision), method


@pytest.mark.parametrize("method", ["milp-highs", "milp-cbc"])
@pytest.mark.parametrize("seed", range(3))
def test_work_weight_minimises_makespan_plus_weighted_work_with_a_valid_bound(method, seed):
    """``work_weight`` w: the MILP's mapping minimises C + w (total work) / m
    (brute force over all mappings), its bound stays below the true minimum
    makespan, and 'optimal' (for the weighted objective) is not reported as
    a proven makespan."""
    rng = np.random.default_rng(70 + seed)
    inst = random_instance(rng, 7, 3, ready=seed == 1, integer=seed == 2)
    maps = np.array(list(itertools.product(range(inst.k), repeat=inst.n)), dtype=np.int64)
    spans = H.makespans(inst, maps)
    work = inst.etc[np.arange(inst.n), maps].sum(axis=1)
    w = 0.3
    res = solve(inst, method, time_limit=20, threads=1, work_weight=w, warm=False)
    a = np.array(res.decision)
    got = inst.value(a) + w * inst.etc[np.arange(inst.n), a].sum() / inst.k
    assert got == pytest.approx((spans + w * work / inst.k).min(), rel=1e-6)
    assert res.bound <= spans.min() * (1 + 1e-9)
    assert res.info["work_weight"] == w
    # the machines are not all equally loaded, so the weighted optimum proves no makespan
    assert inst.etc[np.arange(inst.n), a].sum() / inst.k < inst.value(a)
    assert res.status == "feasible" and res.value > res.bound


@pytest.mark.parametrize("method", ["milp-highs", "milp-cbc"])
def test_work_prices_weigh_each_machines_work_with_a_valid_bound(method):
    """``work_prices`` p (normalised to sum 1): the MILP's mapping minimises
    C + w sum_j p_j (work on machine j) (brute force over all mappings), and
    its bound stays below the true minimum makespan."""
    rng = np.random.default_rng(75)
    inst = random_instance(rng, 7, 3)
    maps = np.array(list(itertools.product(range(inst.k), repeat=inst.n)), dtype=np.int64)
    spans = H.makespans(inst, maps)
    p = np.array([0.75, 0.25, 0.0])
    priced = (p[maps] * inst.etc[np.arange(inst.n), maps]).sum(axis=1)
    w = 0.3
    res = solve(inst, method, time_limit=20, threads=1, work_weight=w, work_prices=[3.0, 1.0, 0.0], warm=False)
    a = np.array(res.decision)
    got = inst.value(a) + w * (p[a] * inst.etc[np.arange(inst.n), a]).sum()
    assert got == pytest.approx((spans + w * priced).min(), rel=1e-6)
    assert res.bound <= spans.min() * (1 + 1e-9)
    assert res.info["work_prices"] == pytest.approx(p.tolist())
    as_text = solve(inst, method, time_limit=20, threads=1, work_weight=w, work_prices="3,1,0", warm=False)
    assert as_text.info["work_prices"] == pytest.approx(p.tolist())        # as --param work_prices=3,1,0 gives


@pytest.mark.parametrize("params, message", [
    ({"work_prices": [1, 1]}, "work_prices price the work term: give a positive work_weight too"),
    ({"work_weight": 0.1, "work_prices": [1, 1, 1]}, "work_prices must be 2 finite numbers >= 0, not all 0"),
    ({"work_weight": 0.1, "work_prices": [1, -1]}, "work_prices must be 2 finite numbers >= 0, not all 0"),
    ({"work_weight": 0.1, "work_prices": [0, 0]}, "work_prices must be 2 finite numbers >= 0, not all 0"),
    ({"work_weight": 0.1, "work_prices": [1, float("nan")]}, "work_prices must be 2 finite numbers >= 0"),
    ({"work_weight": 0.1, "work_prices": "1,x"}, "work_prices must be 2 finite numbers >= 0")])
def test_work_prices_are_checked(params, message):
    inst = random_instance(np.random.default_rng(1), 5, 2)
    with pytest.raises(ValueError, match=message):
        solve(inst, "milp-highs", time_limit=1, **params)


def test_work_weight_is_refused_where_it_does_not_apply():
    inst = random_instance(np.random.default_rng(1), 5, 2)
    with pytest.raises(ValueError, match="work_weight is a parameter of milp-highs and milp-cbc, not cpsat"):
        solve(inst, "cpsat", time_limit=1, work_weight=0.1)
    with pytest.raises(ValueError, match="work_weight must be a finite number >= 0"):
        solve(inst, "milp-highs", time_limit=1, work_weight=-1)
    assert solve(inst, "cpsat", time_limit=5, work_weight=0).status == "optimal"


def test_cpsat_floor_scaling_bound_is_valid_for_the_unscaled_objective():
    """Huge, non-decimal entries force the floor scaling: the bound must stay
    below the true optimum and 'optimal' needs the true value to meet it."""
    rng = np.random.default_rng(9)
    inst = MappingInstance.build(rng.uniform(1e13, 3e13, size=(6, 3)) + 1 / 3, None, {"name": "huge"})
    sc = X.scaled(inst)
    assert not sc.exact and np.all(sc.etc <= inst.etc * sc.scale)
    opt = brute_force(inst)
    res = solve(inst, "cpsat", time_limit=20, threads=1)
    assert res.bound <= opt * (1 + 1e-12)
    assert res.value == pytest.approx(opt, rel=1e-9)
    assert res.status in ("optimal", "feasible") and (res.status == "feasible" or res.bound == res.value)


def test_cpsat_proves_a_generated_32x4_instance():
    inst = braun_range(tasks=32, machines=4, task_het="hi", machine_het="hi", consistency="i", seed=1)[0]
    res = solve(inst, "cpsat", time_limit=30, threads=1)
    assert res.status == "optimal" and res.bound == res.value
    assert res.value <= inst.value(H.minmin(inst)) and res.value >= X.lp_bound(inst)
    assert res.info["scaling"] == "exact" and res.info["scale"] == 100.0


def test_exact_hint_and_start_meeting_the_bound():
    inst = MappingInstance.build([[1, 5], [5, 1]], meta={"name": "easy"})
    res = X.solve_mapping(inst, "cpsat", time_limit=5)
    assert res.status == "optimal" and res.value == 1 and res.info["solver"] == "none"
    inst2 = random_instance(np.random.default_rng(3), 6, 3)
    res2 = X.solve_mapping(inst2, "milp-highs", time_limit=10, hint=H.ga(inst2, population=10, max_iter=20))
    assert res2.status == "optimal" and res2.value == pytest.approx(brute_force(inst2), rel=1e-6)
    with pytest.raises(ValueError, match="hint"):
        X.solve_mapping(inst2, "cpsat", time_limit=5, hint=[0, 1])
    with pytest.raises(KeyError, match="unknown exact method"):
        X.solve_mapping(inst2, "gurobi", time_limit=5)


@pytest.mark.parametrize("method,presolve,match", [
    ("cpsat", 1.0, "presolve is a parameter of bnp, not cpsat"),       # was ignored
    ("milp-highs", "x", "presolve is a parameter of bnp, not milp-highs"),
    ("bnp", float("nan"), "bnp: option 'presolve' must be a finite number >= 0, got nan"),  # was no presolve
    ("bnp", -1, "got -1"),
    ("bnp", "banana", "got 'banana'"),
    ("bnp", [1], r"got \[1\]"),                                          # was a TypeError
    ("bnp", True, "got True"),
])
def test_presolve_refused_in_one_line(method, presolve, match):
    inst = MappingInstance.build([[1, 5], [5, 1], [2, 2]], meta={"name": "pre"})
    with pytest.raises(ValueError, match=match) as err:
        solve(inst, method, time_limit=5, threads=1, presolve=presolve)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("hint,match", [
    (1e30, r"hint 1e\+30 \(float\) is not a sequence"),             # was OverflowError
    ([10**30, 0, 0], r"of task 0 is machine 1000000000000000000000000000000, outside 0..1"),
    ([0.9, 1.0, 0.0], "of task 0 is 0.9, not an integer machine index"),  # was cut to 0
    (["1", "0", "1"], r"of task 0 is '1' \(str\)"),                       # was taken as 1
    ([True, 0, 1], "of task 0 is True, a boolean"),
    ([0, 1], "got 2 entries"),
    ("0,x,1", r"hint '0,x,1' is not comma-separated whole numbers"),   # --param hint=0,x,1
    ("0,1.0,1", r"hint '0,1.0,1' is not comma-separated whole numbers"),
    ("0,1", "got 2 entries"),
    ("0,2,1", "of task 1 is machine 2, outside 0..1"),
])
def test_hint_refused_in_one_line(hint, match):
    """A hint is a machine index per task, integers only, as the decision
    checker takes them; each exact method refuses anything else before it runs."""
    inst = MappingInstance.build([[1, 5], [5, 1], [2, 2]], meta={"name": "hinted"})
    for method in ("cpsat", "milp-highs"):
        with pytest.raises(ValueError, match=match) as err:
            solve(inst, method, time_limit=5, threads=1, hint=hint)
        assert "\n" not in str(err.value) and "machine in 0..1" in str(err.value)
    assert solve(inst, "cpsat", time_limit=5, threads=1, hint=np.array([0, 1, 0])).value == 3


def test_a_hint_from_the_command_line_is_read_as_machine_indices(tmp_path, capsys):
    """``--param hint=1,0,0`` reaches every exact method as a mapping (it was
    refused as a string, so a start could not be given from the command line)."""
    import json

    from epochbench.cli import main
    from epochbench.instances.io import save_instance
    path = tmp_path / "hinted.json"
    save_instance(MappingInstance.build([[1, 5], [5, 1], [2, 2]], meta={"name": "hinted"}), path)
    for method in ("cpsat", "milp-highs", "bnp"):
        assert main(["solve", str(path), "--method", method, "--param", "hint=1,0,0", "--json",
                     "--time-limit", "5"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["info"]["start"] == "hint" and out["value"] == 3, out
    one = tmp_path / "one.json"
    save_instance(MappingInstance.build([[3, 1]], meta={"name": "one"}), one)
    assert main(["solve", str(one), "--method", "cpsat", "--param", "hint=1", "--json", "--time-limit", "5"]) == 0
    assert json.loads(capsys.readouterr().out)["info"]["start"] == "hint"      # '1' reads as a number, not a list


# ---- branch-and-price on the configuration LP (bnp) ----------------------------------------------
def test_knapsack_dp_matches_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(1, 9))
        w = rng.integers(0, 20, size=n).astype(np.int64)
        p = rng.uniform(-0.2, 1.0, size=n)
        cap = int(rng.integers(0, 40))
        val, sel = X._knap(w, p, cap)
        best = max(sum(p[k] for k in range(n) if bits >> k & 1)
                   for bits in range(2**n) if sum(w[k] for k in range(n) if bits >> k & 1) <= cap)
        assert val == pytest.approx(max(best, 0.0))
        assert w[sel].sum() <= cap and p[sel].sum() == pytest.approx(val)
        bval, bsel, complete = X._knap_exact(w, p, cap, 0.0)
        assert complete and bval == pytest.approx(val)
        assert bsel is None and val == 0 or w[bsel].sum() <= cap and p[bsel].sum() == pytest.approx(val)
        assert X._knap_exact(w, p, cap, 0.0, limit=0)[0] <= val + 1e-12


def test_bnp_descent_never_worsens_and_reaches_a_local_optimum():
    rng = np.random.default_rng(8)
    for trial in range(40):
        t, m = int(rng.integers(1, 9)), int(rng.integers(1, 4))
        etc = rng.integers(1, 50, size=(t, m))
        rd = rng.integers(0, 20, size=m) * (trial % 2)
        inst = MappingInstance.build(etc.astype(float), rd.astype(float), {"name": "d"})
        a = rng.integers(0, m, size=t)
        b = X._descent(etc, rd, a)
        assert inst.value(b) <= inst.value(a)
        assert inst.value(X._descent(etc, rd, b)) == inst.value(b)  # no improving move or swap left


@pytest.mark.parametrize("grid, bb_nodes", [(None, None), (16, None), (16, 0)])
@pytest.mark.parametrize("seed", range(6))
def test_bnp_decisions_agree_with_brute_force(seed, grid, bb_nodes, monkeypatch):
    """Root certificates never cut the optimum off; the full decision finds a
    mapping at T = optimum and closes the tree at T = optimum - 1: on the
    integer data, on a coarse grid with the exact branch-and-bound knapsack,
    and on the grid alone (floor / ceil weights; no knapsack node allowed)."""
    if grid is not None:
        monkeypatch.setattr(X, "CFG_GRID", grid)
        monkeypatch.setattr(X, "CFG_COARSE", (4,))
    if bb_nodes is not None:
        monkeypatch.setattr(X, "KNAP_BB_NODES", bb_nodes)
    rng = np.random.default_rng(70 + seed)
    t, m = (7, 3) if seed % 2 else (6, 2)
    etc = rng.integers(1, 30, size=(t, m)).astype(float)
    rd = rng.integers(0, 20, size=m).astype(float) if seed in (2, 5) else None
    inst = MappingInstance.build(etc, rd, {"name": f"bnp{seed}"})
    opt = int(brute_force(inst))
    cfg = X.ConfigLP(etc.astype(np.int64), inst.ready.astype(np.int64))
    deadline = float("inf")
    for T in range(opt, opt + 3):
        assert not cfg.prove(T, deadline)
    status, mapping = cfg.decide(opt, deadline)
    assert status == "feasible" and inst.value(mapping) <= opt
    assert cfg.decide(opt - 1, deadline) == ("infeasible", None)


@pytest.mark.parametrize("seed", range(5))
def test_bnp_solves_tiny_instances_to_the_brute_force_optimum(seed):
    rng = np.random.default_rng(40 + seed)
    t, m = (6, 3) if seed < 4 else (7, 2)
    inst = random_instance(rng, t, m, ready=seed in (1, 3), integer=seed == 2)
    if seed == 0:
        inst = MappingInstance.build(np.round(inst.etc, 2), None, {"name": "dec"})
    opt = brute_force(inst)
    res = X.solve_mapping(inst, "bnp", time_limit=20, presolve=0)
    assert res.info["solver"].startswith("branch-and-price")
    assert res.value == pytest.approx(opt, rel=1e-6)
    assert res.bound <= opt * (1 + 1e-9)
    assert res.status in ("optimal", "feasible") and (res.status == "feasible" or res.bound == res.value)
    if X.scaled(inst).exact:
        assert res.status == "optimal"


def test_bnp_floor_scaling_keeps_the_bound_valid():
    rng = np.random.default_rng(9)
    inst = MappingInstance.build(rng.uniform(1e13, 3e13, size=(6, 3)) + 1 / 3, None, {"name": "huge"})
    opt = brute_force(inst)
    res = X.solve_mapping(inst, "bnp", time_limit=20, presolve=0)
    assert res.info["scaling"] == "floor"
    assert res.bound <= opt * (1 + 1e-12)
    assert res.value == pytest.approx(opt, rel=1e-9)


def test_bnp_cpsat_and_milp_agree_on_small_generated_instances():
    """Cross-check on 12 x 3 Braun-range instances (one per consistency and
    machine heterogeneity): every method that proves agrees; bnp proves all."""
    insts = braun_range(tasks=12, machines=3, task_het="hi", machine_het="all", consistency="all", seed=3)
    for inst in insts:
        vals = {}
        for method in ("cpsat", "milp-highs"):
            r = solve(inst, method, time_limit=10, threads=1)
            if r.status == "optimal":
                vals[method] = r.value
        r = solve(inst, "bnp", time_limit=20, threads=1, presolve=0)
        assert r.status == "optimal" and r.bound == r.value, (inst.name, r.info)
        for method, v in vals.items():
            assert v == pytest.approx(r.value, rel=1e-6), (inst.name, method)
        assert vals, inst.name


# ---- CLI ------------------------------------------------------------------------------------------
def test_cli_generate_and_solve_json(tmp_path, capsys):
    assert main(["generate", "braun-range", "--out", str(tmp_path / "g"), "--tasks", "6", "--machines", "3",
                 "--consistency", "c", "--seed", "4"]) == 0
    f = tmp_path / "g" / "range_c_hihi_6x3_4_0.json"
    capsys.readouterr()
    for method in ("minmin", "cpsat"):
        assert main(["solve", str(f), "--method", method, "--json", "--time-limit", "10"]) == 0
        out = json.loads(capsys.readouterr().out)
        inst = load_instance(f)
        assert out["family"] == "mapping" and len(out["assignment"]) == 6
        assert out["value"] == pytest.approx(inst.value(out["assignment"]))
        assert {"bound", "status", "seconds"} <= set(out)
    assert out["status"] == "optimal" and out["bound"] == pytest.approx(out["value"])


@pytest.mark.parametrize("method", ["sa", "tabu"])
def test_a_users_start_heuristic_is_called_as_every_method(method):
    """SA and tabu's ``init=NAME`` of a user's heuristic: its answer is
    checked (floats and -1 were cast to machines) and it gets a copy of the
    instance (one that rewrote ``etc`` made sa, minmin and milp-highs all
    report a makespan of the rewritten matrix)."""
    from epochbench.instances.registry import METHODS, register
    inst = MappingInstance.build([[1.0, 2.0], [2.0, 1.0], [1.5, 1.5], [3.0, 1.0]], meta={"name": "ma"})
    state = METHODS.snapshot()
    try:
        register("mapping", "floaty")(lambda inst: [0.9, 1.9, -1, 1.0])

        def rewrites(inst):
            inst.etc.flags.writeable = True
            inst.etc[:] = 1000.0
            return [0, 1, 0, 1]
        register("mapping", "rewrites")(rewrites)
        with pytest.raises(InfeasibleSolution, match=r"init='floaty' \(module .*\): ma: assignment of task 0"):
            solve(inst, method, init="floaty", seed=0)
        with pytest.raises(ValueError, match="'rewrites' .* changed the instance"):
            solve(inst, method, init="rewrites", seed=0)
        assert float(inst.etc.max()) == 3.0
    finally:
        METHODS.restore(state)


def test_each_exact_mapping_method_names_and_takes_only_its_own_parameters(tmp_path, capsys):
    """The four share one signature: cpsat's 'it accepts' listed presolve,
    work_weight and work_prices, which it refuses, and ``score --param
    work_weight=0.1`` over cpsat and milp-highs passed it to cpsat too,
    which refused the whole run."""
    from epochbench.checks import accepted_text
    from epochbench.instances.registry import get
    takes = {m: accepted_text(get("mapping", m).func) for m in ("cpsat", "bnp", "milp-highs", "milp-cbc")}
    assert takes == {"cpsat": "seed, hint, warm", "bnp": "seed, hint, presolve, warm",
                     "milp-highs": "seed, hint, warm, work_weight, work_prices",
                     "milp-cbc": "seed, hint, warm, work_weight, work_prices"}
    inst = random_instance(np.random.default_rng(3), 6, 2)
    (tmp_path / "fam").mkdir()
    save_instance(inst, tmp_path / "fam" / "a.json")
    assert main(["score", str(tmp_path / "fam"), "--methods", "cpsat,milp-highs", "--param", "work_weight=0.1",
                 "--time-limit", "5", "--threads", "1"]) == 0
    rows = __import__("pandas").read_csv(tmp_path / "fam" / "scores.csv").set_index("method")
    assert rows.loc["cpsat", "status"] == "optimal" and rows.loc["milp-highs", "status"] == "feasible"  # weighted
    capsys.readouterr()
    assert main(["solve", str(tmp_path / "fam" / "a.json"), "--method", "cpsat", "--param", "zzz=1"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("has no parameter 'zzz'; it accepts: seed, hint, warm")


def test_the_lower_bound_holds_each_of_its_three_parts():
    """Each part of :meth:`MappingInstance.lower_bound` decides somewhere:
    (1) one task that needs 100 on every machine (the work and LP bounds
    say 50.5), also through a machine's ready time; (2) and (3) on random
    matrices, where the bound is at least each part recomputed here, and
    never above the brute-forced optimum."""
    inst = MappingInstance.build([[100.0, 100.0], [1.0, 1.0]])
    assert inst.lower_bound() == 100.0 == brute_force(inst)
    inst = MappingInstance.build([[5.0, 50.0], [1.0, 1.0]], [20.0, 0.0])
    assert inst.lower_bound() == 25.0 == brute_force(inst)
    rng = np.random.default_rng(8)
    for _ in range(60):
        inst = random_instance(rng, int(rng.integers(1, 6)), int(rng.integers(1, 4)), ready=bool(rng.random() < 0.5))
        etc, ready = inst.etc, inst.ready
        lb1 = (etc + ready).min(axis=1).max()
        work, lo, hi = etc.min(axis=1).sum(), 0.0, float(ready.max() + etc.sum())
        for _ in range(200):                      # the water level, by bisection
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if np.maximum(0.0, mid - ready).sum() < work else (lo, mid)
        w = np.full(inst.k, 1.0 / inst.k)         # one point of the LP dual: uniform weights
        dual = (etc * w).min(axis=1).sum()
        lb = inst.lower_bound()
        assert lb >= max(lb1, hi, dual) * (1 - 1e-9) - 1e-9
        assert lb <= brute_force(inst) * (1 + 1e-9) + 1e-9


# -- rules a one-token change broke unseen (mutation review, round 5) --
def test_the_hints_own_pairs_are_allowed_even_the_one_at_its_makespan():
    inst = MappingInstance.build(np.array([[10.0, 20.0], [1.0, 30.0], [1.0, 30.0]]), np.zeros(2))
    hint = np.array([1, 0, 0])                   # makespan 20: task 0 alone on machine 1
    for sc in (X.scaled(inst), None):
        ok = X._allowed(inst, hint, sc)
        assert ok[np.arange(3), hint].all()
        assert not ok[1, 1] and not ok[2, 1]     # 30 > 20: no mapping as good as the hint uses them


def test_a_cpsat_answer_that_is_not_proven_is_not_called_optimal(monkeypatch):
    """CP-SAT stopped at its first solution (FEASIBLE): 'feasible', with a
    bound below the value."""
    real = X.cpsat_solve

    def first_solution(s, model):
        s.parameters.stop_after_first_solution = True
        return real(s, model)

    monkeypatch.setattr(X, "cpsat_solve", first_solution)
    inst = generate("braun-range", tasks=64, machines=8, seed=1)[0]
    r = solve(inst, "cpsat", time_limit=5.0, threads=1, seed=0)
    assert r.status == "feasible" and r.bound < r.value


def test_bnp_root_bisection_never_raises_the_bound_past_the_optimum():
    """Branch-and-price called directly (no CP-SAT presolve settles these
    first): on 30 small integer instances, brute force on the scaled data;
    the bisection's bound stays at or below the optimum, and 'optimal' is
    the optimum (seed 14: a bisection step one too far called 57 optimal
    where 56 is)."""
    import time
    raised = 0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        t, m = int(rng.integers(4, 8)), int(rng.integers(2, 4))
        inst = MappingInstance.build(rng.integers(1, 100, size=(t, m)).astype(float),
                                     rng.integers(0, 20, size=m).astype(float))
        sc = X.scaled(inst)
        opt = min(sc.makespan(np.array(a)) for a in itertools.product(range(m), repeat=t))
        st, best, lo, info = X._bnp(inst, sc, X.minmin_start(inst), 0, time.perf_counter() + 30, 1, improve=None)
        raised += info["config_lp_bound"] * sc.scale > X._scaled_lower_bound(sc)
        assert lo <= opt <= sc.makespan(best), seed
        assert st != "optimal" or sc.makespan(best) == opt, seed
    assert raised >= 20                  # the bisection ran: it raised the cheap bound on most of them


def test_cpsat_reaches_an_optimum_that_meets_the_cheap_bound():
    """The optimum, 13, is the cheap lower bound; Min-Min (the hint) takes
    14.  CP-SAT's makespan variable starts at that bound, not a unit above
    it (one unit above gave 14 as 'optimal' with bound 14)."""
    inst = MappingInstance.build(np.array([[13.0, 16, 13], [3, 11, 12], [15, 2, 10], [1, 15, 6], [5, 14, 1]]),
                                 np.zeros(3))
    assert inst.lower_bound() == 13.0 and solve(inst, "minmin").value == 14.0
    r = solve(inst, "cpsat", time_limit=10.0, threads=1, seed=0)
    assert (r.status, r.value, r.bound) == ("optimal", 13.0, 13.0)


def test_bnp_bound_at_the_instance_lower_bound_is_combinatorial(monkeypatch):
    """A branch-and-price that proved nothing past the instance's lower
    bound (rounded up to the makespans' grid) said ``bound_kind: solver``
    with 0 nodes; the bound is the instance's, combinatorial.  A bound above
    it is the solver's."""
    import math

    from epochbench.exact import mapping as em
    from epochbench.instances.generators import generate as gen
    inst = gen("braun-range", tasks=24, machines=4, seed=1)[0]
    sc = em.scaled(inst)
    assert sc.exact
    lb_int = math.ceil(inst.lower_bound() * sc.scale * (1 - 1e-12) - 1e-9)
    for raw, kind in ((lb_int, "combinatorial"), (lb_int + 1, "solver")):
        monkeypatch.setattr(em, "_bnp", lambda inst_, sc_, first, lo, deadline, threads, improve=None, raw=raw:
                            ("feasible", first, raw, {"solver": "bnp", "nodes": 0}))
        r = solve(inst, "bnp", time_limit=5.0, threads=1, presolve=0)
        assert r.status == "feasible" and r.info["bound_kind"] == kind, raw
        assert r.bound == pytest.approx(raw / sc.scale)
