"""Strict feasibility checkers and strict numeric loading, all five families.

Each checker starts from a valid decision a heuristic produced on a small
generated instance; every mutation of it (float, boolean, numpy boolean,
string, negative, out-of-range, repeated or missing index, wrong nesting)
must be refused with ``InfeasibleSolution``, the unmutated one accepted.
Capacity sums must be exact where int64 would wrap.  At load time, NaN,
infinities, booleans and numbers beyond int64 / float are an
``InstanceError`` naming the source and the field.
"""
import json

import numpy as np
import pytest

from epochbench.instances import InfeasibleSolution, InstanceError, check, load_instance
from epochbench.instances.assignment import AssignmentInstance
from epochbench.instances.core import float_array, float_vector, int_matrix
from epochbench.instances.generators import generate
from epochbench.instances.knapsack import KnapsackInstance
from epochbench.instances.mapping import MappingInstance
from epochbench.instances.packing import EpochsInstance, PackingInstance
from epochbench.instances.registry import solve

# ---- a valid decision per family, from a heuristic ------------------------------------------------


def _packing():
    return generate("leinberger", n=40, k=3, count=1, seed=5, load=0.6)[0], "ff"


def _epochs():
    return generate("fig1")[0], "ff"


def _knapsack():
    return generate("mkp", n=12, k=3, count=1, seed=5)[0], "greedy-mkp"


def _assignment():
    return generate("assign-random", n=6, machines=5, density=0.7, count=1, seed=5)[0], "mis"


def _mapping():
    return generate("braun-range", tasks=8, machines=3, count=1, seed=5)[0], "minmin"


MAKERS = {"packing": _packing, "epochs": _epochs, "knapsack": _knapsack, "assignment": _assignment,
          "mapping": _mapping}
FAMILIES = tuple(MAKERS)


@pytest.fixture(scope="module", params=FAMILIES)
def case(request):
    inst, method = MAKERS[request.param]()
    decision = solve(inst, method).decision
    assert len(decision) >= 2, "need a decision with at least two entries to mutate"
    return request.param, inst, decision


# ---- where the first index of a decision sits, per family ----------------------------------------
def _first(family, d):
    """The first index of decision ``d``."""
    return d[0][0] if family in ("epochs", "assignment") else d[0]


def _put(family, d, value):
    """``d`` with its first index replaced by ``value``."""
    if family in ("epochs", "assignment"):
        head = (value,) + tuple(d[0][1:])
        return (head,) + tuple(d[1:])
    return (value,) + tuple(d[1:])


def _size(family, inst):
    """Number of valid values of the first index (jobs; machines for mapping)."""
    return inst.k if family == "mapping" else inst.n


#: mutations of the first index: (label, value of the original index and the instance -> new value)
ENTRY_MUTATIONS = {
    "float": lambda j, inst, fam: float(j),
    "numpy float": lambda j, inst, fam: np.float64(j),
    "bool": lambda j, inst, fam: bool(j % 2) if j in (0, 1) else True,
    "numpy bool": lambda j, inst, fam: np.True_,
    "string": lambda j, inst, fam: str(j),
    "None": lambda j, inst, fam: None,
    "negative": lambda j, inst, fam: -1,
    "out of range": lambda j, inst, fam: _size(fam, inst),
    "huge": lambda j, inst, fam: 2**70,
    "nested": lambda j, inst, fam: [j],
}


@pytest.mark.parametrize("mutation", ENTRY_MUTATIONS)
def test_mutated_entry_is_refused(case, mutation):
    family, inst, decision = case
    assert check(inst, decision) == decision  # the unmutated decision passes
    bad = _put(family, decision, ENTRY_MUTATIONS[mutation](_first(family, decision), inst, family))
    with pytest.raises(InfeasibleSolution) as err:
        check(inst, bad)
    assert inst.name in str(err.value) and "\n" not in str(err.value)


def _flat_bool_mask(family, inst, d):
    if family in ("packing", "knapsack"):
        mask = np.zeros(inst.n, dtype=bool)
        mask[list(d)] = True  # the selection as a mask: indexes rows, but is no list of indices
        return mask
    if family == "mapping":
        return np.asarray(d) > 0
    if family == "epochs":
        return tuple(np.isin(np.arange(inst.n), b) for b in d)
    return np.ones((len(d), 2), dtype=bool)


def _repeat(family, inst, d):
    if family in ("packing", "knapsack"):
        return tuple(d) + (d[0],)
    if family == "epochs":
        return tuple(d) + ((d[0][0],),)  # job in two epochs
    if family == "assignment":
        return tuple(d) + (d[0],)  # job and machine matched twice
    return None  # mapping: several tasks on one machine is the point


def _missing(family, inst, d):
    if family == "epochs":
        return (d[0][1:],) + tuple(d[1:]) if len(d[0]) > 1 else tuple(d[1:])
    if family == "mapping":
        return tuple(d[:-1])
    return None  # a packing / knapsack / matching may leave any job out


def _wrong_nesting(family, inst, d):
    if family in ("packing", "knapsack", "mapping"):
        return (tuple(d),) if family != "mapping" else tuple((j,) for j in d)
    if family == "epochs":
        return tuple(j for b in d for j in b)  # bins flattened
    return tuple(x for p in d for x in p)  # pairs flattened


WHOLE_MUTATIONS = {
    "numpy bool array": _flat_bool_mask,
    "numpy float array": lambda fam, inst, d: (np.asarray(d, dtype=float) if fam not in ("epochs",)
                                               else tuple(np.asarray(b, dtype=float) for b in d)),
    "string": lambda fam, inst, d: json.dumps([list(x) if isinstance(x, tuple) else x for x in d]),
    "set": lambda fam, inst, d: set(d),
    "dict": lambda fam, inst, d: dict(enumerate(d)),
    "scalar": lambda fam, inst, d: 3,
    "repeated": _repeat,
    "missing": _missing,
    "wrong nesting": _wrong_nesting,
    "extra level": lambda fam, inst, d: (tuple(d),) if fam in ("epochs", "assignment") else ((tuple(d),),),
}


@pytest.mark.parametrize("mutation", WHOLE_MUTATIONS)
def test_mutated_decision_is_refused(case, mutation):
    family, inst, decision = case
    bad = WHOLE_MUTATIONS[mutation](family, inst, decision)
    if bad is None:
        pytest.skip(f"{mutation} is no mutation for {family}")
    with pytest.raises(InfeasibleSolution) as err:
        check(inst, bad)
    assert "\n" not in str(err.value)


def test_numpy_integers_are_accepted_and_normalised(case):
    family, inst, decision = case
    if family in ("epochs", "assignment"):
        numpy_dec = [np.asarray(x, dtype=np.int32) for x in decision]
    else:
        numpy_dec = np.asarray(decision, dtype=np.uint16)
    got = check(inst, numpy_dec)
    assert got == check(inst, decision)
    flat = [x for part in got for x in (part if isinstance(part, tuple) else (part,))]
    assert all(type(x) is int for x in flat)
    scalars = [np.int64(x) for x in decision] if family not in ("epochs", "assignment") else decision
    assert check(inst, scalars) == check(inst, decision)


def test_empty_epoch_plans():
    inst = generate("fig1")[0]
    d = solve(inst, "ff").decision
    with pytest.raises(InfeasibleSolution, match="epoch 3 is empty"):
        check(inst, tuple(d) + ((),))
    with pytest.raises(InfeasibleSolution, match="exactly once"):
        check(inst, ())
    none = EpochsInstance.build([4], np.zeros((0, 1), dtype=np.int64), meta={"name": "empty-queue"})
    assert check(none, ()) == ()
    with pytest.raises(InfeasibleSolution, match="empty"):
        check(none, ((),))


def test_assignment_pair_shapes():
    inst = AssignmentInstance.build([[3, 0], [2, 5]], {"name": "t"})
    assert check(inst, np.array([[1, 1], [0, 0]])) == ((0, 0), (1, 1))
    for bad in ([[0, 0, 1]], [[0]], [(0, 0), 1], [[0.0, 0]], [[0, np.False_]], np.array([[0.0, 0.0]]),
                [np.array([[0, 0]])], [[0, 1]]):
        with pytest.raises(InfeasibleSolution):
            check(inst, bad)


# ---- exact sums: int64 would wrap ------------------------------------------------------------------
BIG = 3 * 2**61  # 1.5 * 2**62: one job fits, two sum to 1.5 * 2**63, past int64


def _wraps(rows):
    """The int64 column sums of ``rows`` (what unchecked numpy would compute)."""
    with np.errstate(over="ignore"):
        return np.asarray(rows, dtype=np.int64).sum(axis=0)


@pytest.mark.parametrize("family", ["packing", "knapsack", "epochs"])
@pytest.mark.parametrize("count, weight", [(2, BIG), (4, 2**62)])
def test_sums_past_int64_are_refused(family, count, weight):
    cap = BIG + 5
    rows = [[weight, 1]] * count
    capacity = [cap, count]
    if family == "knapsack":
        inst = KnapsackInstance.build(capacity, rows, [1.0] * count, {"name": "big"})
    elif family == "epochs":
        inst = EpochsInstance.build(capacity, rows, meta={"name": "big"})
    else:
        inst = PackingInstance.build(capacity, rows, meta={"name": "big"})
    both = tuple(range(count))
    assert (_wraps(rows) <= np.asarray(capacity)).all()  # wrapped arithmetic says: fits
    with pytest.raises(InfeasibleSolution, match="over-commit") as err:
        check(inst, (both,) if family == "epochs" else both)
    assert str(int(weight) * count) in str(err.value)  # the exact load, not a wrapped one
    single = ((0,),) + tuple((j,) for j in range(1, count)) if family == "epochs" else (0,)
    assert check(inst, single) == single  # one job alone fits


def test_large_but_safe_sums_stay_exact():
    """Magnitudes near the int64 limit that do not overflow are summed exactly."""
    cap = 2**63 - 1
    rows = [[2**62], [2**62 - 2], [1]]
    inst = KnapsackInstance.build([cap], rows, [1.0, 1.0, 1.0], {"name": "edge"})
    assert check(inst, (0, 1, 2)) == (0, 1, 2)  # 2**63 - 1 exactly
    tight = KnapsackInstance.build([cap - 1], rows, [1.0, 1.0, 1.0], {"name": "edge"})
    with pytest.raises(InfeasibleSolution, match=f"{cap} > capacity {cap - 1}"):
        check(tight, (0, 1, 2))
    # the reservation: both jobs fit the machine, not the capacity left beyond the head's start
    res = PackingInstance.build([cap], rows[:2], shadow=10.0, extra=[2**62], runtime_past_shadow=[True, True],
                                meta={"name": "res"})
    assert check(res, (1,)) == (1,)
    with pytest.raises(InfeasibleSolution, match=f"need {cap - 1} > extra {2**62}"):
        check(res, (0, 1))


def test_a_sum_past_int64_through_what_is_used_is_refused():
    """The capacity in use counts in the exact sum: 2**62 used plus a job of
    2**62 is 2**63, past a capacity of 2**63 - 1, where int64 wraps to a
    negative load that fits (the int64 tests above had nothing in use)."""
    cap = 2**63 - 1
    inst = PackingInstance.build([cap], [[2**62]], [2**62], meta={"name": "used"})
    assert _wraps([[2**62], [2**62]])[0] < 0                 # what unchecked numpy would sum
    with pytest.raises(InfeasibleSolution, match=f"{2**62} \\+ selected {2**62} > capacity {cap}"):
        check(inst, (0,))
    assert check(inst, ()) == ()


# ---- load time: NaN, inf, booleans and huge numbers -----------------------------------------------
def _packing_dict():
    inst = PackingInstance.build([10, 8], [[2, 1], [3, 3], [1, 2]], [1, 1], estimate=[5.0, 6.0, 7.0],
                                 profit=[1.0, 2.0, 3.0], shadow=6.5, extra=[4, 4],
                                 runtime_past_shadow=[False, True, False], now=0.0, meta={"name": "p"})
    return inst.to_dict()


DICTS = {
    "packing": (_packing_dict, {"capacity": "int", "demand": "int", "used": "int", "extra": "int",
                                "estimate": "float", "profit": "float", "shadow": "float",
                                "runtime_past_shadow": "flag"}),
    "epochs": (lambda: EpochsInstance.build([10, 8], [[2, 1], [3, 3]], meta={"name": "e"}).to_dict(),
               {"capacity": "int", "demand": "int"}),
    "knapsack": (lambda: KnapsackInstance.build([3, 2], [[1, 1], [2, 0]], [1.5, 2.0], {"name": "k"}).to_dict(),
                 {"capacity": "int", "weights": "int", "profit": "float"}),
    "assignment": (lambda: AssignmentInstance.build([[3, 0], [2, 5]], {"name": "a"}).to_dict(),
                   {"preference": "float"}),
    "mapping": (lambda: MappingInstance.build([[1.0, 2.0], [3.0, 4.0]], [0.0, 1.0], {"name": "m"}).to_dict(),
                {"etc": "float", "ready": "float"}),
}
CLASSES = {"mapping": MappingInstance, "assignment": AssignmentInstance, "knapsack": KnapsackInstance,
           "epochs": EpochsInstance, "packing": PackingInstance}
#: bad entries per kind of field: NaN, infinities, a boolean, beyond int64 / float, a fraction (ints)
BAD = {"int": [float("nan"), float("inf"), -float("inf"), True, 2**63, 2**64, -(2**63) - 1, 1e19, 2.5],
       "float": [float("nan"), float("inf"), -float("inf"), True, 10**400],
       "flag": [float("nan"), 2, 0.5, "yes"]}
LOAD_CASES = [(fam, fld, v) for fam, (_, fields) in DICTS.items() for fld, kind in fields.items() for v in BAD[kind]]


def _plain(d):
    return json.loads(json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in d.items()}))


def _spoil(d, field, value):
    """``d`` with the first entry of ``field`` (or the field, a scalar) set to ``value``."""
    v = d[field]
    if not isinstance(v, list):
        d[field] = value
    elif isinstance(v[0], list):
        v[0][0] = value
    else:
        v[0] = value
    return d


@pytest.mark.parametrize("family, field, value", LOAD_CASES, ids=[f"{f}-{fl}-{v!r:.12}" for f, fl, v in LOAD_CASES])
def test_bad_numbers_refused_at_load(family, field, value, tmp_path):
    make, _ = DICTS[family]
    good = _plain(make())
    assert CLASSES[family].from_dict(good, source="ok.json").kind == family
    d = _spoil(_plain(make()), field, value)
    with pytest.raises(InstanceError) as err:  # a dict handed over directly
        CLASSES[family].from_dict(d, source="bad.json")
    msg = str(err.value)
    assert msg.startswith("bad.json:") and f"'{field}" in msg and "\n" not in msg
    path = tmp_path / "bad.json"  # and the same through a file (NaN / Infinity literals, big integers)
    path.write_text(json.dumps(d))
    with pytest.raises(InstanceError, match=field):
        load_instance(path)


# ---- int_matrix / float_array, directly ----------------------------------------------------------
def test_int_matrix_reads_integers_exactly():
    assert int_matrix([3.0, 4], "f", "s", ndim=1).tolist() == [3, 4]  # integral floats: a JSON writer's 3.0
    assert int_matrix([1.0, 2**62 + 1], "f", "s", ndim=1).tolist() == [1, 2**62 + 1]  # no rounding via float
    assert int_matrix(np.array([7], dtype=np.uint64), "f", "s", ndim=1).dtype == np.int64
    assert int_matrix([], "f", "s", ndim=2).shape == (0, 0)
    for bad, msg in [([1, True], "boolean"), (np.array([True, False]), "boolean"), ([1.5], "must hold integers"),
                     ([float("nan")], "non-finite"), ([2**63], "int64"), (np.array([2**63], dtype=np.uint64), "int64"),
                     ([1e19], "int64"), (["3"], "numbers"), ([None], "number"), ([[1, 2], [3]], "rectangular"),
                     ([-1], "negative")]:
        with pytest.raises(InstanceError, match=msg) as err:
            int_matrix(bad, "demand", "x.json", ndim=len(np.shape(bad)) if msg != "rectangular" else 2)
        assert str(err.value).startswith("x.json: field 'demand'")


def test_float_fields_refuse_booleans_and_overflow():
    assert float_vector([1, 2.5], "profit", "s", 2).tolist() == [1.0, 2.5]
    assert float(float_array(3, "shadow", "s", ndim=0)) == 3.0
    for bad, msg in [([True, 1.0], "boolean"), ([10**400, 1.0], "too large"), ([float("inf"), 1.0], "non-finite"),
                     (["1.5", 1.0], "numbers")]:
        with pytest.raises(InstanceError, match=msg) as err:
            float_vector(bad, "profit", "y.json", 2)
        assert str(err.value).startswith("y.json: field 'profit'")
    with pytest.raises(InstanceError, match="'shadow'"):
        PackingInstance.build([4], [[1]], shadow=float("nan"), extra=[1], runtime_past_shadow=[True])
    with pytest.raises(InstanceError, match="'runtime_past_shadow'"):
        PackingInstance.build([4], [[1]], shadow=1.0, extra=[1], runtime_past_shadow=[float("nan")])


def test_a_selection_from_an_empty_queue_says_the_queue_is_empty():
    from epochbench.instances.packing import PackingInstance, check_packing
    inst = PackingInstance.build([4], np.zeros((0, 1), np.int64))
    with pytest.raises(InfeasibleSolution, match=r"entry 0 is job 0, and there is no job \(none to choose from\)"):
        check_packing(inst, [0])                                     # "outside 0..-1" before


# -- checker rules a one-token change broke unseen, or that only an indirect test caught (mutation review, round 6) --
def test_a_mapping_with_more_entries_than_tasks_is_refused():
    inst = MappingInstance.build([[2.0, 4.0], [3.0, 1.0]], ready=[5.0, 0.0], meta={"name": "m"})
    with pytest.raises(InfeasibleSolution, match="has 3 entries"):
        check(inst, [0, 1, 1])
    assert inst.value([0, 1]) == 7.0          # machine 0: ready 5 + 2
    assert inst.value([1, 1]) == 5.0
    assert 4.0 <= inst.lower_bound() <= 5.0   # task 0: min(5 + 2, 0 + 4) = 4; optimum 5


def test_packing_a_single_late_job_must_fit_extra():
    inst = PackingInstance.build([10], [[3], [1]], shadow=5.0, extra=[2],
                                 runtime_past_shadow=[True, False], meta={"name": "p"})
    with pytest.raises(InfeasibleSolution, match="reservation broken on resource 0: .*need 3 > extra 2"):
        check(inst, [0])
    assert check(inst, [1]) == (1,)
    inst2 = PackingInstance.build([10], [[1], [2]], shadow=5.0, extra=[2],
                                  runtime_past_shadow=[True, True], meta={"name": "p"})
    with pytest.raises(InfeasibleSolution, match="need 3 > extra 2"):
        check(inst2, [0, 1])
    assert check(inst2, [1]) == (1,)


def test_packing_late_jobs_equal_to_extra_pass_and_one_more_fails():
    inst = PackingInstance.build([10, 10], [[2, 1], [1, 1]], shadow=5.0, extra=[3, 2],
                                 runtime_past_shadow=[True, True], meta={"name": "p"})
    assert check(inst, [0, 1]) == (0, 1)
    tight = PackingInstance.build([10, 10], [[2, 1], [1, 2]], shadow=5.0, extra=[3, 2],
                                  runtime_past_shadow=[True, True], meta={"name": "p"})
    with pytest.raises(InfeasibleSolution, match="resource 1"):
        check(tight, [0, 1])


def test_packing_used_counts_against_capacity():
    inst = PackingInstance.build([10], [[4], [3]], used=[4], meta={"name": "p"})
    assert check(inst, [0]) == (0,)
    with pytest.raises(InfeasibleSolution, match="used 4 \\+ selected 7 > capacity 10"):
        check(inst, [0, 1])


def test_epochs_bins_of_unequal_loads():
    inst = EpochsInstance.build([5], [[1], [1], [1], [5]], meta={"name": "e"})
    assert check(inst, [[0, 1, 2], [3]]) == ((0, 1, 2), (3,))
    with pytest.raises(InfeasibleSolution, match="epoch 1 over-commits"):
        check(inst, [[0], [1, 2, 3]])


def test_knapsack_a_repeated_job_and_the_last_license():
    inst = KnapsackInstance.build([5, 2], [[3, 0], [1, 2], [1, 1]], [1.0, 1.0, 1.0], meta={"name": "k"})
    with pytest.raises(InfeasibleSolution, match="takes job 0 twice"):
        check(inst, [0, 0])
    with pytest.raises(InfeasibleSolution, match="license 1 over-committed: 3 > capacity 2"):
        check(inst, [1, 2])
    assert check(inst, [0, 1]) == (0, 1)


def test_assignment_checker_edges():
    inst = AssignmentInstance.build([[1.0, 0.0], [2.0, 3.0]], meta={"name": "a"})
    with pytest.raises(InfeasibleSolution, match="not eligible"):
        check(inst, [[0, 1]])
    with pytest.raises(InfeasibleSolution, match="a machine runs two jobs"):
        check(inst, [[0, 0], [1, 0]])
    with pytest.raises(InfeasibleSolution, match="outside 2 jobs x 2 machines"):
        check(inst, [[2, 0]])
    assert check(inst, [[1, 1], [0, 0]]) == ((0, 0), (1, 1))
    assert inst.value([(0, 0), (1, 1)]) == 4.0
