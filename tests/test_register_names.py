"""``eb.register``: a built-in name is refused on the first call of a
process, before any lookup has loaded the built-in methods (it used to be
accepted then, and every later lookup failed); any callable is a method, a
non-callable is refused."""
import functools
import subprocess
import sys

import pytest

import epochbench as eb

pytestmark = pytest.mark.usefixtures("registry_restored")   # the methods registered here leave with each test


FRESH = """
import epochbench as eb
def mine(inst):
    return []
for family, name in (("packing", "ff"), ("packing", "cpsat"), ("epochs", "cg"), ("mapping", "minmin"),
                     ("epochs", "bb")):   # derived from the built-in packing heuristic: taken too
    try:
        eb.register(family, name)(mine)
        print("accepted", family, name)
    except ValueError as exc:
        print("refused", family, name)
fam = eb.generate("leinberger", n=6, k=2, count=1, seed=1)
print(eb.solve(fam[0], "ff").method, eb.solve(fam[0], "bb").status, eb.solve(fam[0], "cpsat", time_limit=5).status)
"""

#: the same for a simulator policy and an experiment, registered under a built-in's name first thing
FRESH_OTHERS = """
from epochbench.sim import registry
from epochbench import experiments
def make(**options):
    return None
class Mine:
    "Mine."
mine = experiments.Experiment("rajaei", "mine", tasks=lambda o: [], run=lambda t: [], table=lambda d: d)
def by_decorator():
    from epochbench.sim import policies
    policies.register_policy("easy-sjf")(Mine)    # the pool policies' class decorator
for what, call in (("policy", by_decorator),
                   ("policy", lambda: registry.register_policy("pool", "easy", make)),
                   ("experiment", lambda: experiments.register(mine))):
    try:
        call()
        print("accepted", what)
    except ValueError as exc:
        print("refused", what, exc)
import epochbench as eb
w = eb.generate("workload", jobs=20, seed=1, processors=8)
registry.register_policy("pool", "mine-x", make)
print(registry.POLICIES.origin(("pool", "mine-x")))    # it was "builtin", what a clash then said
from epochbench.sim import policies
print(eb.simulate(w, "easy").summary()["jobs"], eb.simulate(w, "easy-sjf").summary()["jobs"],
      experiments.load_experiments()["rajaei"] is not mine, policies.POLICIES["easy-sjf"] is not Mine)
"""


def test_a_builtin_name_is_refused_before_any_lookup_and_the_registry_stays_usable():
    proc = subprocess.run([sys.executable, "-c", FRESH], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[:5] == ["refused packing ff", "refused packing cpsat", "refused epochs cg", "refused mapping minmin",
                         "refused epochs bb"]
    assert lines[5] == "ff feasible optimal"


def test_a_builtin_policy_or_experiment_name_is_refused_before_any_lookup():
    """As methods: the catalog had taken the newcomer, and the module of
    the built-in then failed to load (``easy`` and every policy of its
    module gone; ``experiment rajaei``: "already registered by module")."""
    proc = subprocess.run([sys.executable, "-c", FRESH_OTHERS], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == ["refused policy policy 'easy-sjf' on machine 'pool' already registered by builtin",
                     "refused policy policy 'easy' on machine 'pool' already registered by builtin",
                     "refused experiment experiment 'rajaei' already registered by builtin", "module __main__",
                     "20 20 True True"], lines


def test_any_callable_is_a_method_and_anything_else_is_refused():
    fam = eb.generate("leinberger", n=6, k=2, count=1, seed=1)

    class Smallest:
        def __call__(self, inst):
            return [int(inst.demand.sum(axis=1).argmin())]

    def first(inst, *, which=0):
        return [which]

    eb.register("packing", "test-partial")(functools.partial(first, which=0))
    eb.register("packing", "test-object")(Smallest())
    assert eb.solve(fam[0], "test-partial").status == eb.solve(fam[0], "test-object").status == "feasible"
    with pytest.raises(ValueError, match="expected a callable, got int"):
        eb.register("packing", "test-number")(42)


@pytest.mark.parametrize("name", ["a,b", " sp ", "x y", ""])
def test_a_name_the_command_line_cannot_reach_is_refused(name):
    with pytest.raises(ValueError, match="name"):
        eb.register("packing", name)(lambda inst: [])


def test_validate_takes_a_label_and_the_command_line_an_exact_reference(tmp_path):
    v = eb.validate(lambda inst: [], family="packing", count=1, label="nothing-started", time_limit=2)
    assert set(v.table["method"]) >= {"nothing-started", "cpsat"}
    (tmp_path / "startnone.py").write_text("def none(inst):\n    return []\n")
    proc = subprocess.run([sys.executable, "-m", "epochbench.cli", "validate", "startnone:none", "--count", "1",
                           "--time-limit", "2", "--exact", "milp-highs", "--jobs", "1"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert "milp-highs" in proc.stdout and "cpsat" not in proc.stdout, proc.stderr


def test_a_heuristics_claim_of_optimal_is_not_passed_on_as_a_proof(registry_restored):
    """A registered heuristic returning Result(..., "optimal", bound=999)
    came out of solve and score as 'optimal' with that bound."""
    import epochbench as eb
    fam = eb.generate("leinberger", n=12, k=2, count=1, seed=5)

    def liar(inst):
        return eb.Result("packing", "x", (0,), 999.0, "optimal", 0.0, bound=999.0)
    eb.register("packing", "test-liar")(liar)
    r = eb.solve(fam[0], "test-liar")
    assert (r.status, r.bound, r.info["claimed"]) == ("feasible", None, "optimal") and r.value < 1
    row = eb.score(fam, ["test-liar", "cpsat"], time_limit=5).set_index("method").loc["test-liar"]
    assert row["status"] == "feasible" and row["gap"] > 0


def test_the_epochs_method_derived_from_a_builtin_heuristic_cannot_be_replaced():
    """``eb.register("epochs", "bb")`` replaced the built-in's derivation
    silently: ``bb`` then scored the user's function under the built-in's name."""
    with pytest.raises(ValueError, match="method 'bb' already registered for family 'epochs' by builtin"):
        eb.register("epochs", "bb")(lambda i: [[j] for j in range(i.n)])
    from epochbench.instances import registry
    assert registry.get("epochs", "bb").origin == "builtin"
    # the derivation of a user's own heuristic stays theirs to replace, from any module
    registry.register("packing", "test-own", origin="module pack")(lambda i: [0] if i.n else [])
    registry.register("epochs", "test-own", origin="module other")(lambda i: [[j] for j in range(i.n)])
    assert registry.get("epochs", "test-own").origin == "module other"
