"""The assignment family: instances, MIS / MFS / IMFS, exact lexicographic matching ([capannini2007] section 5)."""
import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from epochbench.cli import main
from epochbench.heuristics.assignment import imfs, mfs, mis
from epochbench.instances import InfeasibleSolution, InstanceError, load_instance, save_instance
from epochbench.instances.assignment import AssignmentInstance, check_assignment, lexicographic_matching
from epochbench.instances.data import data_root
from epochbench.instances.generators import generate
from epochbench.instances.registry import solve

EXACT = ("hungarian", "cpsat", "milp-highs", "milp-cbc")


def brute_force(p):
    """(cardinality, weight) of the lexicographic optimum, by enumeration."""
    n, m = p.shape
    best = (0, 0.0)

    def rec(i, used, card, w):
        nonlocal best
        if i == n:
            best = max(best, (card, w))
            return
        rec(i + 1, used, card, w)
        for k in range(m):
            if p[i, k] > 0 and not used >> k & 1:
                rec(i + 1, used | 1 << k, card + 1, w + p[i, k])

    rec(0, 0, 0, 0.0)
    return best


def key(inst, pairs):
    return len(pairs), inst.value(pairs)


# ---- instances and checker ---------------------------------------------------------------
def test_build_validates_and_names_the_field():
    with pytest.raises(InstanceError, match="negative entry -1.0 at \\[0, 1\\]"):
        AssignmentInstance.build([[1, -1]])
    with pytest.raises(InstanceError, match="2 dimensions"):
        AssignmentInstance.build([1, 2])
    with pytest.raises(InstanceError, match="non-finite"):
        AssignmentInstance.build([[np.nan]])
    with pytest.raises(InstanceError, match="meta.previous.*outside"):
        AssignmentInstance.build([[1, 2]], {"previous": [[0, 2]]})
    with pytest.raises(InstanceError, match="meta.previous.*two pairs"):
        AssignmentInstance.build([[1, 2], [3, 4]], {"previous": [[0, 1], [1, 1]]})
    with pytest.raises(InstanceError, match="'preference' missing"):
        AssignmentInstance.from_dict({"kind": "assignment"}, "f.json")
    assert AssignmentInstance.build([]).n == 0


def test_json_round_trip_keeps_the_previous_plan(tmp_path):
    inst = generate("assign-random", n=6, machines=5, event="leave", count=1)[0]
    save_instance(inst, tmp_path / "a.json")
    back = load_instance(tmp_path / "a.json")
    assert back.kind == "assignment" and np.array_equal(back.preference, inst.preference)
    assert back.previous() == inst.previous() and len(back.previous()) >= 1


def test_checker():
    inst = AssignmentInstance.build([[3, 0], [2, 5]], {"name": "t"})
    assert check_assignment(inst, [[1, 1], [0, 0]]) == ((0, 0), (1, 1))
    with pytest.raises(InfeasibleSolution, match="not eligible"):
        check_assignment(inst, [[0, 1]])
    with pytest.raises(InfeasibleSolution, match="job is matched twice"):
        check_assignment(inst, [[1, 0], [1, 1]])
    with pytest.raises(InfeasibleSolution, match="machine runs two jobs"):
        check_assignment(inst, [[0, 0], [1, 0]])
    with pytest.raises(InfeasibleSolution, match="outside"):
        check_assignment(inst, [[2, 0]])
    assert inst.describe([(0, 0)]) == {"cardinality": 1, "max_cardinality": 2}


# ---- MIS / MFS hand examples ------------------------------------------------------------
def test_mis_can_lose_cardinality_mfs_cannot():
    inst = AssignmentInstance.build([[10, 9], [8, 0]])
    assert mis(inst) == [(0, 0)]
    assert mfs(inst) == [(0, 1), (1, 0)]          # 17 with 2 pairs
    lex = AssignmentInstance.build([[10, 1], [1, 0]])
    assert mfs(lex) == [(0, 1), (1, 0)]           # cardinality first: 2 pairs of weight 2 beat (0, 0) = 10


# ---- MFS = exact optimum (property test) ---------------------------------------------------
matrices = st.integers(1, 6).flatmap(lambda n: st.integers(1, 6).flatmap(
    lambda m: st.lists(st.lists(st.sampled_from([0, 0, 1, 2, 3, 5, 8, 13]), min_size=m, max_size=m),
                       min_size=n, max_size=n)))


@settings(max_examples=150, deadline=None)
@given(matrices)
def test_mfs_equals_brute_force_and_hungarian(rows):
    p = np.array(rows, dtype=float)
    inst = AssignmentInstance.build(p)
    want = brute_force(p)
    got = mfs(inst)
    check_assignment(inst, got)
    assert key(inst, got) == pytest.approx(want)
    assert key(inst, lexicographic_matching(p)) == pytest.approx(want)
    r = imfs(inst)  # from scratch: no cycle of positive gain, so MFS's paths and its optimum
    check_assignment(inst, r.decision)
    assert len(r.decision) == want[0] and r.value == pytest.approx(want[1], rel=1e-9, abs=1e-9)
    check_assignment(inst, mis(inst))


@settings(max_examples=40, deadline=None)
@given(matrices, st.integers(0, 2**31))
def test_imfs_from_any_previous_plan_keeps_maximum_cardinality(rows, seed):
    p = np.array(rows, dtype=float)
    rng = np.random.default_rng(seed)
    n, m = p.shape
    prev = [(int(i), int(k)) for i, k in zip(rng.permutation(n), rng.permutation(m)) if rng.random() < 0.7]
    inst = AssignmentInstance.build(p)
    r = imfs(inst, previous=prev)
    check_assignment(inst, r.decision)
    assert len(r.decision) == brute_force(p)[0]
    assert r.info["inherited"] + r.info["dropped"] == len(prev)
    assert r.info["dropped"] == sum(1 for i, k in prev if p[i, k] == 0)


def test_mfs_equals_exact_on_farm_and_random_instances():
    insts = (generate("assign-farm", n=40, machines=30, count=3, seed=2)
             + generate("assign-farm", n=25, machines=35, count=2, seed=3)
             + generate("assign-random", n=30, machines=30, density=0.2, count=3, seed=4))
    for inst in insts:
        got = mfs(inst)
        for method in EXACT:
            r = solve(inst, method, time_limit=20, threads=1)
            assert r.status == "optimal", (inst.name, method)
            assert r.info["cardinality"] == r.info["max_cardinality"] == len(got), (inst.name, method)
            assert inst.value(got) == pytest.approx(r.value, rel=1e-9), (inst.name, method)
            assert r.bound == pytest.approx(r.value)


def test_mfs_and_hungarian_reach_the_assign100_optimum():
    path = data_root() / "assign" / "assign100.txt"
    if not path.exists():
        pytest.skip(f"{path} absent (OR-Library data; set EPOCHBENCH_DATA)")
    (inst,) = generate("orlib-assign")
    assert inst.meta["optimum"] == 100 * 101 - 305
    assert inst.value(mfs(inst)) == inst.meta["optimum"]
    assert solve(inst, "hungarian").value == inst.meta["optimum"]


# ---- IMFS ----------------------------------------------------------------------------------
def test_imfs_keeps_an_optimal_previous_plan():
    inst = generate("assign-random", n=20, machines=15, density=0.4, count=1, seed=9)[0]
    best = mfs(inst)
    r = imfs(inst, previous=best)
    assert sorted(r.decision) == sorted(best) and r.info["augmentations"] == r.info["even_steps"] == 0



def test_imfs_sees_a_longer_path_of_larger_gain_to_a_machine_already_reached():
    """The longest path tree, not a breadth-first one: with job 0 on machine
    0 inherited, machine 1 is reached from job 1 directly (gain 0.3) and
    along job 1 -> machine 0 -> job 0 -> machine 1 (7.83 - 0.3 + 2.96 =
    10.49); the tree keeps the longer path, which gives the optimum 10.79
    (labelling each machine from the first layer that reached it kept 0.6)."""
    inst = AssignmentInstance.build([[0.3, 2.96], [7.83, 0.3]])
    r = imfs(inst, previous=[(0, 0)])
    assert sorted(r.decision) == [(0, 1), (1, 0)] and r.value == pytest.approx(10.79)
    assert r.info["augmentations"] == 1 and r.info["even_steps"] == 0


def test_imfs_from_an_empty_plan_reaches_the_optimum_on_farm_matrices():
    """From nothing, every step's tree has no cycle of positive gain, so
    IMFS takes MFS's paths: the Hungarian method's weight on farm and
    random matrices (a breadth-first tree took MIS's choices, about 4 %
    below)."""
    insts = (generate("assign-farm", n=40, machines=30, count=2, seed=2)
             + generate("assign-random", n=30, machines=30, density=0.5, count=2, seed=4))
    for inst in insts:
        r = imfs(inst, previous=[])
        best = solve(inst, "hungarian")
        assert len(r.decision) == best.info["cardinality"]
        assert r.value == pytest.approx(best.value, rel=1e-9), inst.name


def test_imfs_augments_along_the_longest_odd_path():
    """[capannini2007] section 5: IMFS augments along the odd path of largest
    gain, not the first free machine it reaches: job 0 reaches machines 0
    (gain 1) and 1 (gain 5) in one layer and takes 1, with no even step
    to repair a worse choice (max_even=0)."""
    inst = AssignmentInstance.build([[1.0, 5.0]])
    r = imfs(inst, max_even=0)
    assert r.decision == ((0, 1),) and r.info["augmentations"] == 1 and r.info["even_steps"] == 0


def test_imfs_keeps_one_previous_pair_per_machine():
    """Two previous pairs on one machine: the first is kept, the second
    dropped and counted; the matching stays one job per machine."""
    inst = AssignmentInstance.build([[3.0, 1.0], [2.0, 1.0]])
    r = imfs(inst, previous=[(0, 0), (1, 0)], max_even=0)
    assert (r.info["inherited"], r.info["dropped"]) == (1, 1)
    check_assignment(inst, r.decision)
    assert sorted(r.decision) == [(0, 0), (1, 1)]

def test_imfs_reads_the_previous_plan_from_meta_and_the_parameter_wins():
    # machine 0 is free: the even path from it moves job 0 over (gain 5 - 1)
    inst = AssignmentInstance.build([[5, 1]], {"previous": [[0, 1]]})
    r = imfs(inst)
    assert r.info["inherited"] == 1 and r.decision == ((0, 0),) and r.info["even_steps"] == 1
    assert imfs(inst, previous=[]).info["inherited"] == 0
    # no free job or machine: paths only, no alternating cycle, so a full plan stays (an approximation)
    full = AssignmentInstance.build([[5, 1], [1, 5]], {"previous": [[0, 1], [1, 0]]})
    assert sorted(imfs(full).decision) == [(0, 1), (1, 0)]


@pytest.mark.parametrize("event", ["arrive", "leave"])
def test_imfs_after_one_event_is_close_to_mfs(event):
    for inst in generate("assign-random", n=30, machines=30, density=0.3, event=event, count=3, seed=1):
        r = solve(inst, "imfs")
        best = mfs(inst)
        assert r.info["cardinality"] == len(best) == r.info["max_cardinality"]
        assert r.value <= inst.value(best) + 1e-9
        assert (inst.value(best) - r.value) / inst.value(best) < 0.05


def test_event_generators_remap_the_previous_plan():
    for gen, kw in (("assign-random", dict(n=12, machines=10, density=0.5)), ("assign-farm", dict(n=20, machines=15))):
        base = generate(gen, event="none", count=1, seed=5, **kw)[0]
        for event, dn in (("arrive", 1), ("leave", -1)):
            inst = generate(gen, event=event, count=1, seed=5, **kw)[0]
            assert inst.n == base.n + dn and inst.meta["event"] == event
            prev = inst.previous()
            check_assignment(inst, prev)  # distinct, in range, still eligible
            assert len(prev) >= min(inst.n, inst.k) - 3


# ---- command line ---------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["mis", "mfs", "imfs", "hungarian", "cpsat", "milp-cbc", "milp-highs"])
def test_cli_solve_json_prints_pairs_and_cardinality(capsys, tmp_path, method):
    assert main(["generate", "assign-farm", "--out", str(tmp_path), "--n", "12", "--machines", "10",
                 "--count", "1"]) == 0
    f = next(p for p in tmp_path.glob("assign*.json"))
    capsys.readouterr()
    assert main(["solve", str(f), "--method", method, "--json", "--time-limit", "10"]) == 0
    d = json.loads(capsys.readouterr().out)
    for k in ("pairs", "value", "bound", "status", "seconds"):
        assert k in d
    inst = load_instance(f)
    assert d["info"]["cardinality"] == len(d["pairs"]) and d["value"] == pytest.approx(inst.value(d["pairs"]))
    if method not in ("mis", "imfs"):
        assert d["info"]["cardinality"] == d["info"]["max_cardinality"]


@pytest.mark.parametrize("big, d", [(1e12, 1e-3), (1e12, 1e-4), (1e14, 1e-2)])
def test_exact_methods_never_claim_optimal_on_a_coarsely_rounded_objective(big, d):
    """A huge preference on a pair no maximum matching uses makes the integer
    objective coarse (CP-SAT) and BIG + p inexact (Hungarian): the answer may
    then not be proven, but a claimed optimum is the brute-force one, every
    bound is valid, and no exact method is lighter than MFS."""
    p = np.array([[1.0, 1.0 + d, 0.0], [1.0 + d, 1.0, 0.0], [big, 0.0, 1.0]])
    inst = AssignmentInstance.build(p, {"name": "coarse"})
    card, want = brute_force(p)
    heur = solve(inst, "mfs")
    for method in EXACT:
        r = solve(inst, method, time_limit=5, threads=1)
        assert len(r.decision) == card == 3
        assert r.value >= heur.value - 1e-12, method
        if r.status == "optimal":
            assert r.value == pytest.approx(want, rel=0, abs=1e-12), method
        if r.bound is not None:
            assert r.bound >= want - 1e-12, method
    assert solve(inst, "cpsat", time_limit=5, threads=1).status == "feasible"


@pytest.mark.parametrize("previous", [[[0, 0.5]], [[0.5, 0]], [[True, 0]]])
def test_a_previous_plan_with_a_non_integer_index_is_refused(previous):
    with pytest.raises(InstanceError, match="non-integer index"):
        AssignmentInstance.build([[1.0, 1.0]], {"previous": previous})


def test_a_matching_with_fewer_pairs_is_short_never_at_the_reference():
    """MIS takes (0, 0) = 200 and leaves job 1 unmatched; the lexicographic
    optimum matches both jobs for 199.5.  The weight gap alone (0.25 %) would
    read nearly optimal: the row says ``short`` and the summary counts it."""
    from epochbench.scoring import score, summarize
    inst = AssignmentInstance(preference=np.array([[200.0, 100.0], [99.5, 0.0]]), meta={"name": "lex"})
    table = score([inst], ["mis", "hungarian"], time_limit=5).set_index("method")
    assert table.loc["mis", "value"] == 200.0 and table.loc["mis", "bound"] == 199.5
    assert table.loc["mis", ["short", "cardinality", "max_cardinality"]].tolist() == [True, 1, 2]
    assert table.loc["hungarian", ["short", "cardinality", "max_cardinality"]].tolist() == [False, 2, 2]
    assert not table.loc["mis", "beats_reference"]
    s = summarize(table.reset_index()).set_index("method")
    assert s.loc["mis", "short"] == 1 and s.loc["mis", "at_bound"] == 0.0 and s.loc["hungarian", "at_bound"] == 1.0


@pytest.mark.parametrize("bad", [[(0.9, 0.2)], [(True, False)], [("1", "0")], [(0, 1, 2)], [0]])
def test_imfs_refuses_a_previous_pair_that_is_not_two_whole_indices(bad):
    """int() cut (0.9, 0.2) to (0, 0), which IMFS kept as inherited (weight 2 where the optimum is 10)."""
    from epochbench.heuristics.assignment import imfs
    inst = AssignmentInstance.build([[1.0, 5.0], [5.0, 1.0]])
    with pytest.raises(ValueError, match="imfs: previous pair .* is not two whole-number indices"):
        imfs(inst, previous=bad)
    r = imfs(inst, previous=[(0, 1), (np.int64(1), 0.0), (5, 5)])      # numpy and whole floats; out of range: dropped
    assert sorted(r.decision) == [(0, 1), (1, 0)] and (r.info["inherited"], r.info["dropped"]) == (2, 1)


def test_mis_breaks_ties_to_the_lower_job_then_the_lower_machine():
    """[capannini2007] section 5 takes the largest entry; the docstring's tie
    rule (lower job, then lower machine) decides which matching comes out
    when entries tie: taking (1, 0) first gives two pairs, (0, 0) one."""
    inst = AssignmentInstance.build([[1.0, 1.0], [1.0, 0.0]])
    assert [tuple(map(int, p)) for p in mis(inst)] == [(0, 0)]
    inst = AssignmentInstance.build([[3.0, 3.0, 1.0], [3.0, 3.0, 2.0]])
    assert [tuple(map(int, p)) for p in mis(inst)] == [(0, 0), (1, 1)]


def test_hungarians_warm_up_loads_the_start_heuristics_kernels():
    """On preferences that are not decimal, hungarian falls back on the
    start heuristics (MFS, IMFS, MIS): their kernels loaded on the clock of
    the first such solve in a process (1.4 s reported against a limit of
    0.05 s).  In a fresh process, after its warm-up hook, every kernel they
    call has a signature."""
    from _processes import python_child
    code = ("from epochbench.instances.registry import get\n"
            "get('assignment', 'hungarian').func.warm_up()\n"
            "from epochbench.heuristics import assignment as h\n"
            "names = ('_mis_pick_kernel', '_mfs_kernel', '_imfs_kernel')\n"
            "print([n for n in names if not getattr(h, n).signatures])\n")
    assert python_child(code) == "[]"


@pytest.mark.parametrize("shape", [(0, 3), (0, 0), (3, 0), (2, 3)])
def test_an_assignment_of_no_job_keeps_its_machines_through_save_and_load(tmp_path, shape):
    """A 0 x 3 matrix is ``[]`` in JSON: the file says ``machines`` beside it
    (0 x 3 came back 0 x 0); other shapes are written as before."""
    import epochbench as eb
    inst = AssignmentInstance.build(np.ones(shape), meta={"name": "a"})
    eb.save(inst, tmp_path / "a.json")
    back = eb.load(tmp_path / "a.json")
    assert back.preference.shape == shape and back.k == shape[1] and back.meta == inst.meta
    assert ("machines" in json.loads((tmp_path / "a.json").read_text())) == (shape[0] == 0)


@pytest.mark.parametrize("value, said", [(-1, "must be an integer >= 0, got -1"), (2.5, "must be an integer >= 0"),
                                         (True, "must be a number, got a boolean")])
def test_a_machines_field_that_is_no_count_is_refused(value, said):
    with pytest.raises(InstanceError, match=f"x.json: field 'machines' {said}"):
        AssignmentInstance.from_dict({"kind": "assignment", "preference": [], "machines": value}, "x.json")
    with pytest.raises(InstanceError, match="field 'machines' is 4, but the rows of 'preference' have 2"):
        AssignmentInstance.from_dict({"kind": "assignment", "preference": [[1, 2]], "machines": 4}, "x.json")


def test_the_job_that_arrives_in_an_assign_farm_event_arrives_now(monkeypatch):
    """A review: the arriving job was drawn like the waiting ones, with
    ``submit = now - Exp(10)`` (985.65 at now = 1000), so it came with an
    age that the anti-aging term rewards and a deadline moved as early.
    It arrives at the event; its deadline keeps its distance."""
    from epochbench.instances import assignment as amod, farm as fmod
    seen, drawn = [], []
    real_from, real_gen = amod.from_farm, fmod.generate_farm

    def capture(state, constants=None, meta=None):
        seen.append(state)
        return real_from(state, constants, meta)

    def generate(rng, **kw):
        state = real_gen(rng, **kw)
        drawn.append(state.jobs)
        return state

    monkeypatch.setattr(amod, "from_farm", capture)
    monkeypatch.setattr(fmod, "generate_farm", generate)
    amod.farm_assignment(n=12, machines=10, licenses=3, event="arrive", count=3, seed=5)
    for state, new in zip(seen, drawn[1::2]):                # each instance: its farm, then the arriving job
        assert state.jobs.submit[-1] == state.now and state.jobs.ids[-1] == 12
        assert np.array_equal(state.jobs.deadline[-1] - state.jobs.submit[-1], new.deadline[0] - new.submit[0],
                              equal_nan=True)
