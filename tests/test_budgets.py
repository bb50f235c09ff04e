"""A heuristic with a budget of its own (SA) gets ``time_limit`` from
``solve`` / ``--time-limit``; the others ignore it; every family's file loads
in a fresh process (the registry imports nothing by hand)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import epochbench as eb
from epochbench.instances.registry import solve, takes_time_limit


def _mapping():
    return eb.generate("braun-range", tasks=40, machines=6, count=1, seed=3)[0]


def test_sa_stops_at_its_budget_and_only_then():
    inst = _mapping()
    free, capped = {}, {}
    solve(inst, "sa", max_iter=200_000, patience=200_000, seed=1, stats=free)
    solve(inst, "sa", time_limit=0.0, max_iter=200_000, patience=200_000, seed=1, stats=capped)
    assert capped["iterations"] == 0 < free["iterations"]            # the budget is checked before each chunk


def test_a_heuristic_without_a_budget_ignores_time_limit():
    inst = eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    assert solve(inst, "ff", time_limit=0.0).decision == solve(inst, "ff").decision
    assert not takes_time_limit(lambda inst: [])


def test_cli_time_limit_reaches_sa_and_every_family_file_loads(tmp_path):
    families = {"mapping": ("braun-range", ["--tasks", "20", "--machines", "4", "--count", "1"], "sa"),
                "knapsack": ("mkp", ["--n", "12", "--k", "2", "--count", "1"], "greedy-mkp"),
                "assignment": ("assign-random", ["--n", "6", "--machines", "5", "--count", "1"], "mis"),
                "epochs": ("fig1", [], "ff")}
    for fam, (gen, opts, method) in families.items():
        out = tmp_path / fam
        subprocess.run([sys.executable, "-m", "epochbench", "generate", gen, "--out", str(out), *opts],
                       check=True, capture_output=True, timeout=120)
        f = next(p for p in out.glob("*.json") if p.name != "manifest.json")
        extra = ["--time-limit", "0.5"] if method == "sa" else []
        proc = subprocess.run([sys.executable, "-m", "epochbench", "solve", str(f), "--method", method, "--json", *extra],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["method"] == method


def test_ga_and_tabu_take_a_budget_and_any_constructive_start():
    inst = _mapping()
    free, capped = {}, {}
    solve(inst, "ga", max_iter=300, patience=300, stats=free)
    solve(inst, "ga", max_iter=300, patience=300, time_limit=0.0, stats=capped)
    assert capped["iterations"] == 1 < free["iterations"]                # checked after each generation
    free, capped = {}, {}
    solve(inst, "tabu", init="minmin", stats=free)
    solve(inst, "tabu", init="minmin", time_limit=0.0, stats=capped)
    assert capped["long_hops"] <= 1 < free["long_hops"]                  # checked between scans
    capped = {}
    solve(inst, "tabu", time_limit=0.0, seed=1, stats=capped)            # a random start: hops to take
    assert capped["short_hops"] > 0      # the clock is first looked at after a part of the first descent
    mct = solve(inst, "mct").value
    assert solve(inst, "tabu", init="mct", seed=3).value <= mct + 1e-9   # never worse than its start
    assert solve(inst, "sa", init="mct", seed=3).value <= mct + 1e-9


def test_metaheuristic_start_and_budget_are_checked():
    import pytest
    inst = _mapping()
    for bad in ("nope", "cpsat", "sa"):
        with pytest.raises(ValueError, match="init must be"):
            solve(inst, "tabu", init=bad)
    with pytest.raises(ValueError, match="time_limit"):
        solve(inst, "ga", time_limit=-1.0)


def test_a_heuristics_first_timed_call_does_not_pay_for_loading_its_kernels():
    """Built-in heuristics without a warm_up hook run once, untimed, on the
    family's tiny instance before their first timed call in a process."""
    from epochbench.instances import registry
    m = registry.get("knapsack", "greedy-mkp")
    registry._WARMED.discard(("knapsack", "greedy-mkp"))
    calls = []
    real = m.func

    def spy(inst, **kw):
        calls.append(inst.n)
        return real(inst, **kw)

    registry.METHODS._items[("knapsack", "greedy-mkp")] = registry.Method(m.family, m.name, spy, m.kind, m.origin)
    try:
        inst = registry.TINY["knapsack"]()
        registry.solve(registry.TINY["mapping"](), "minmin")
        registry.solve(inst, "greedy-mkp")
        registry.solve(inst, "greedy-mkp")
    finally:
        registry.METHODS._items[("knapsack", "greedy-mkp")] = m
    assert calls == [inst.n] * 3            # one untimed warm-up, then the two timed calls


def test_an_epochs_plan_past_its_budget_gives_each_epoch_a_positive_time_limit(registry_restored):
    """A packing heuristic with a budget, applied epoch after epoch (the
    derived ``epochs`` method), got time_limit 0 for every epoch once the
    plan's budget was spent: its exact sub-solve stopped before it began,
    and ``eb.solve`` refused it (``time_limit: must be a positive finite
    number, got 0.0``), failing the whole plan.  Each epoch now gets at
    least MIN_EPOCH_TIME_LIMIT."""
    from epochbench.instances import packing
    from epochbench.instances.registry import register
    limits = []

    @register("packing", "test-exact-pick")
    def exact_pick(inst, *, time_limit=1.0):
        """Start what mkp-bb picks within the time limit."""
        limits.append(time_limit)
        return eb.solve(inst, "mkp-bb", time_limit=time_limit).decision

    demand = np.random.default_rng(1).integers(1, 60, size=(12, 2))
    inst = packing.EpochsInstance.build([100, 100], demand, meta={"name": "e"})
    plan = solve(inst, "test-exact-pick", time_limit=1e-9)       # spent before the first epoch
    assert len(limits) == len(plan.decision) > 1 and all(t > 0 for t in limits), limits
    assert set(limits) == {packing.MIN_EPOCH_TIME_LIMIT}
    limits.clear()
    solve(inst, "test-exact-pick", time_limit=30.0)              # within the budget: what is left of it
    least = packing.MIN_EPOCH_TIME_LIMIT
    assert all(least < t <= 30.0 for t in limits) and limits == sorted(limits, reverse=True)


_TIMED_CALLS_CHILD = """
import gc, json, sys
from numba.core.dispatcher import Dispatcher
import epochbench as eb
from epochbench.instances import registry

def loaded():
    return {id(d): (d.py_func.__module__ + "." + d.py_func.__qualname__, len(d.signatures))
            for d in gc.get_objects() if isinstance(d, Dispatcher) and d.py_func.__module__.startswith("epochbench")}

family, (generator, params), limit = sys.argv[1], json.loads(sys.argv[2]), float(sys.argv[3])
options = json.loads(sys.argv[4])                 # a method's parameters, where it takes some
inst = eb.generate(generator, **params)[0]
found = {}
for m in registry.methods(family):
    if m.origin != "builtin" or m.kind == "replay":
        continue
    registry.load(family, m.name)                 # what solve loads before its clock starts
    before = loaded()
    eb.solve(inst, m.name, time_limit=limit, threads=1, **options.get(m.name, {}))
    found[m.name] = sorted(name for key, (name, n) in loaded().items() if n > before.get(key, ("", 0))[1])
print(json.dumps(found))
"""


@pytest.mark.parametrize("family, instance", [
    ("packing", ("leinberger", dict(n=16, k=2, count=1, seed=1))),
    ("knapsack", ("farm-mkp", dict(n=12, seed=1))),
    ("assignment", ("assign-random", dict(n=8, seed=1))),
    ("epochs", ("fig1", {})),
    # bnp prices columns on this one (its knapsack kernels: without a CP-SAT presolve, which
    # can prove it first), and tabu with a limit descends in parts
    ("mapping", ("braun-range", dict(tasks=30, machines=5, count=1, seed=4))),
])
def test_a_timed_call_loads_no_kernel(family, instance):
    """Every built-in method of ``family``, each called with a time limit in
    one fresh process after what ``solve`` loads before its clock starts
    (its ``warm_up`` hook, or one untimed call on the tiny instance): the
    timed call compiles or loads no kernel.  Two did: bnp's pricing
    knapsacks (0.8 s on a 0.3 s limit with an empty cache, and a feasible
    answer where a warm call proves the optimum) and tabu's descent in parts,
    which only a call with a limit runs (0.74 s on 0.05 s, and another answer
    than the same seed's next call).  Nothing here reads a clock."""
    from _processes import python_child
    options = {"bnp": {"presolve": 0}} if family == "mapping" else {}
    found = json.loads(python_child(_TIMED_CALLS_CHILD, family, json.dumps(instance), "0.2", json.dumps(options)))
    assert found and not {m: k for m, k in found.items() if k}, found
