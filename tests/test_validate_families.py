"""``validate`` on every family: edge cases for each, a correct heuristic
passes, a broken one fails with a line naming the instance."""
import numpy as np
import pytest

import epochbench as eb
from epochbench.instances.registry import get
from epochbench.validation import CASES

GOOD = {"packing": "ff", "epochs": "ff", "knapsack": "greedy-mkp", "assignment": "mis", "mapping": "minmin"}


def _everything(inst):
    """Broken on purpose: every job / pair / task at once."""
    return list(range(inst.n))


def _all_on_one_machine_twice(inst):
    return [(i, 0) for i in range(inst.preference.shape[0])]


def _machine_out_of_range(inst):
    return [inst.etc.shape[1]] * inst.etc.shape[0]


def _epochs_one_bin(inst):
    return [list(range(inst.n))]


BROKEN = {"packing": _everything, "epochs": _epochs_one_bin, "knapsack": _everything,
          "assignment": _all_on_one_machine_twice, "mapping": _machine_out_of_range}


@pytest.mark.parametrize("family", sorted(CASES))
def test_every_family_has_edge_cases_then_random_ones(family):
    cases = CASES[family](3, 7)
    names = [c.name for c in cases]
    assert sum(n.startswith("edge-") for n in names) >= 2 and sum(n.startswith("random-") for n in names) == 3
    assert all(c.kind == family for c in cases)
    assert [c.name for c in CASES[family](3, 7)] == names                 # deterministic in the seed


@pytest.mark.parametrize("family", sorted(CASES))
def test_a_builtin_heuristic_passes(family):
    v = eb.validate(get(family, GOOD[family]).func, family, count=2, time_limit=2)
    assert v.ok, v.failures
    assert set(v.rows["method"]) >= {"cpsat"}
    assert v.rows["gap"].dropna().ge(-1e-9).all()


@pytest.mark.parametrize("family", sorted(CASES))
def test_a_broken_heuristic_fails_naming_the_instance(family):
    v = eb.validate(BROKEN[family], family, count=1, time_limit=2)
    assert not v.ok
    assert any(("edge-" in f or "random-" in f) for f in v.failures), v.failures


def test_unknown_family_is_one_clear_error():
    with pytest.raises(ValueError, match="knapsack, assignment, mapping"):
        eb.validate(_everything, "nope")


def test_cli_validate_takes_every_family(capsys):
    from epochbench.cli import main
    assert main(["validate", "epochbench.heuristics.mapping:minmin", "--family", "mapping", "--count", "1",
                 "--time-limit", "2"]) == 0
    assert "verdict: PASS" in capsys.readouterr().out


def test_a_registered_user_heuristic_is_no_yardstick_and_fails_like_any_candidate():
    """A heuristic registered from a user's module gets that module as its
    origin: validate's yardsticks stay the built-in ones (a broken user
    heuristic in the registry does not crash validating another), and
    validating it gives a FAIL verdict, not an exception."""
    from epochbench.instances.registry import METHODS

    def starts_everything(inst):
        return list(range(inst.n))

    starts_everything.__module__ = "my_lab.heuristics"
    state = METHODS.snapshot()
    try:
        eb.register("packing", "starts-everything")(starts_everything)
        assert get("packing", "starts-everything").origin == "module my_lab.heuristics"
        assert get("packing", "ff").origin == "builtin"
        ok = eb.validate(lambda inst: [], "packing", count=2, seed=0, time_limit=2)
        assert ok.ok and "starts-everything" not in set(ok.table.method)
        bad = eb.validate(starts_everything, "packing", count=2, seed=0, time_limit=2)
        assert not bad.ok and "infeasible" in bad.failures[0]
    finally:
        METHODS.restore(state)
    assert METHODS.find(("packing", "starts-everything")) is None


@pytest.mark.parametrize("source, spec, needle", [
    ("pi = 3.14\n", "m_notfunc:pi", "is a float, not a function"),
    ("def f(:\n", "m_syntax:f", "failed on import: SyntaxError"),
    ("raise RuntimeError('boom')\n", "m_boom:f", "failed on import: RuntimeError: boom"),
    # validate passed with no output and status 0 (or the module's status)
    ("import sys\nsys.exit(0)\n", "m_exit0:f", "module 'm_exit0' failed on import: SystemExit(0)"),
    ("import sys\nsys.exit(3)\n", "m_exit3:f", "failed on import: SystemExit(3)"),
])
def test_validate_names_a_broken_user_module_in_one_line(tmp_path, monkeypatch, capsys, source, spec, needle):
    from epochbench.cli import main
    (tmp_path / f"{spec.split(':')[0]}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["validate", spec, "--count", "1", "--time-limit", "1"]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_a_heuristic_calling_sys_exit_is_a_failure_of_the_verdict():
    import sys

    def leaves(inst):
        sys.exit(3)

    v = eb.validate(leaves, "packing", count=1, seed=0, time_limit=2)
    assert not v.ok and "raised SystemExit: 3" in v.failures[0]


def test_a_failure_line_is_one_line_of_bounded_length():
    """An exception text with a line break printed over two lines, and one
    of 20,000 characters in full for every instance."""
    from epochbench.validation import FAILURE_WIDTH

    def multi(inst):
        raise ValueError("first line\nsecond line")

    def huge(inst):
        raise ValueError("x" * 20_000)

    v = eb.validate(multi, "packing", count=1, seed=0, time_limit=2)
    assert v.failures[0].endswith("raised ValueError: first line second line")
    v = eb.validate(huge, "packing", count=1, seed=0, time_limit=2)
    assert len(v.failures[0]) == FAILURE_WIDTH and v.failures[0].endswith("xxx...")


def _zero_demand_then_everything(inst):
    """Broken on purpose: makes the read-only demand array writable, zeroes it, then picks every job."""
    inst.demand.flags.writeable = True
    inst.demand[...] = 0
    return list(range(inst.n))


def _annotating(inner):
    """Broken on purpose: writes into the instance's ``meta`` (a dict, mutable in a frozen instance),
    then answers as ``inner``."""
    def candidate(inst):
        inst.meta["seen_by"] = "candidate"
        return inner(inst)
    return candidate


@pytest.mark.parametrize("family", sorted(CASES))
def test_a_heuristic_that_changes_its_instance_is_a_failure_and_is_checked_on_the_original(family):
    v = eb.validate(_annotating(get(family, GOOD[family]).func), family, count=1, time_limit=2)
    assert not v.ok and v.failures
    assert all("candidate changed the instance it was given" in f for f in v.failures), v.failures
    assert not v.rows[v.rows["method"] != "candidate"]["ok"].eq(False).any()   # the built-ins are untouched


def test_a_heuristic_that_changes_its_instance_cannot_pass_an_infeasible_answer():
    """With every demand zeroed, 'every job' fits the changed instance; checked on the original it is
    infeasible."""
    v = eb.validate(_zero_demand_then_everything, "packing", count=2, time_limit=2)
    assert any("returned an infeasible answer" in f for f in v.failures), v.failures
    # where every job does fit the original, the answer stands and the change is the failure
    assert all("returned an infeasible answer" in f or "changed the instance it was given" in f
               for f in v.failures), v.failures
    # (an empty queue has no demand to change: no failure there)
    assert len(v.failures) == v.rows["instance"].nunique() - 1


def test_a_plugin_method_that_changes_its_instance_is_one_clear_error_and_the_instance_stays(monkeypatch):
    from epochbench.instances import registry
    from epochbench.instances.generators import generate

    def plain_write(inst):
        inst.demand[0] = 0
        return []

    monkeypatch.setitem(registry._REGISTRY, ("packing", "zeroing"),
                        registry.Method("packing", "zeroing", _zero_demand_then_everything, "heuristic", "test"))
    monkeypatch.setitem(registry._REGISTRY, ("packing", "plugin-ff"),
                        registry.Method("packing", "plugin-ff", get("packing", "ff").func, "heuristic", "test"))
    inst = generate("leinberger", n=12, k=2, count=1, seed=4)[0]
    demand = inst.demand.copy()
    with pytest.raises(ValueError, match=r"method 'zeroing' \(test\) changed the instance it was given"):
        registry.solve(inst, "zeroing")
    assert np.array_equal(inst.demand, demand)
    monkeypatch.setitem(registry._REGISTRY, ("packing", "plain-write"),
                        registry.Method("packing", "plain-write", plain_write, "heuristic", "test"))
    with pytest.raises(ValueError, match="read-only"):         # the copy's arrays are read-only as the original's
        registry.solve(inst, "plain-write")
    assert registry.solve(inst, "plugin-ff").decision == registry.solve(inst, "ff").decision


def _one_pair(inst):
    """A valid matching of a single pair (the first eligible one), whatever could be matched."""
    pref = np.asarray(inst.preference)
    eligible = np.argwhere(pref > 0) if (pref > 0).any() else np.argwhere(np.isfinite(pref))
    return [tuple(int(x) for x in eligible[0])] if len(eligible) else []


def test_validate_summary_counts_short_matchings_as_score_does():
    """Six of ten answers matched fewer pairs than possible: the verdict
    table had no word of it (the flags were in the rows only)."""
    from epochbench.validation import verdict_table
    v = eb.validate(_one_pair, "assignment", count=4, seed=1)
    mine = v.rows[v.rows["method"] == "yours:_one_pair"] if "yours:_one_pair" in set(v.rows["method"]) else \
        v.rows[v.rows["method"] == "_one_pair"]
    n_short = int(mine["short"].fillna(False).astype(bool).sum())
    assert n_short > 0
    lines = verdict_table(v).splitlines()
    header = lines[0].split()
    assert "short" in header
    row = next(x.split() for x in lines[1:] if "_one_pair" in x)
    assert int(row[header.index("short")]) == n_short


@pytest.mark.parametrize("family", ["packing", "knapsack", "assignment"])
def test_a_heuristic_that_gives_no_answer_fails(family):
    """A result with status timeout or infeasible and no decision passed
    where the empty decision is feasible (packing, knapsack, assignment):
    a candidate that gave up on its hard instances had the better table."""
    def give_up(inst):
        return eb.Result(inst.kind, "x", (), 0.0, "timeout", 0.0)

    def call_it_infeasible(inst):
        return eb.Result(inst.kind, "x", (), 0.0, "infeasible", 0.0)

    v = eb.validate(give_up, family, count=1, time_limit=2)
    assert not v.ok and all("gave no answer (status timeout" in line for line in v.failures)
    v = eb.validate(call_it_infeasible, family, count=1, time_limit=2)
    assert not v.ok and all("claims the instance infeasible, but" in line for line in v.failures)


def test_a_label_with_a_space_is_refused_as_method_names_are():
    with pytest.raises(ValueError, match="label: 'my heur' has a comma or a space"):
        eb.validate(lambda inst: [], "packing", count=1, label="my heur")


def test_validate_refuses_a_required_parameter_left_without_param(tmp_path, monkeypatch, capsys):
    """Every instance failed with the same TypeError before."""
    from epochbench import cli
    (tmp_path / "params_mod.py").write_text("from epochbench.heuristics.packing import first_fit\n"
                                            "def kwonly(inst, *, window):\n    return first_fit(inst)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cli.main(["validate", "params_mod:kwonly", "--count", "1", "--workers", "1"]) == 2
    assert capsys.readouterr().err == ("epochbench validate: error: params_mod:kwonly: parameter 'window' has no "
                                       "default; give it with --param window=VALUE\n")


def test_a_wrong_kind_of_value_is_no_decision_and_an_epochs_duplicate_names_the_job():
    from epochbench.instances.core import InfeasibleSolution
    from epochbench.instances.packing import check_epochs
    v = eb.validate(lambda inst: {0}, "packing", count=1, label="aset", time_limit=2)
    assert all(" returned no decision on " in line for line in v.failures)
    assert all(line.count("aset") == 1 for line in v.failures)          # the label once, not twice
    with pytest.raises(InfeasibleSolution, match=r"missing: none; more than once: job 0\)"):
        check_epochs(eb.generate("fig1")[0], [[0, 0, 1, 2], [3, 4, 5]])


def test_count_zero_runs_the_edge_cases_alone(capsys):
    from epochbench.cli import main
    v = eb.validate(get("packing", "ff").func, "packing", count=0, time_limit=2)
    assert v.ok and set(v.table["instance"]) == {i.name for i in CASES["packing"](0, 0)}
    assert main(["validate", "epochbench.heuristics.packing:first_fit", "--count", "0", "--time-limit", "2"]) == 0
    assert "verdict: PASS" in capsys.readouterr().out


@pytest.mark.parametrize("kw, needle", [(dict(count=-1), "count: must be an integer from 0 to"), (dict(count=1.5), "got 1.5"),
                                        (dict(count=True), "got True"), (dict(count=10**7), "1,000,000"),
                                        (dict(seed=-1), "seed: must be an integer >= 0"), (dict(seed="1"), "seed")])
def test_bad_count_or_seed_from_python_is_one_line(kw, needle):
    with pytest.raises(ValueError, match=needle):       # count=-1 ran the edge cases as if 0; count=1.5 a TypeError
        eb.validate(lambda inst: [], "packing", time_limit=2, **kw)


@pytest.mark.parametrize("family", ["packing", "mapping"])
def test_a_heuristic_that_misreports_its_own_value_fails(family):
    """``validate`` replaced a returned Result's value by the recomputed one
    and never compared them: a heuristic reporting 99 for a decision worth
    0.6 (or a makespan of 0.5) passed."""
    good = get(family, GOOD[family]).func

    def lies(inst):
        return eb.Result(family, "lies", tuple(good(inst)), 99.0, "feasible", 0.0)

    def honest(inst):
        decision = tuple(good(inst))
        return eb.Result(family, "honest", decision, inst.value(decision), "feasible", 0.0)

    v = eb.validate(lies, family, count=1, time_limit=2)
    assert not v.ok and all("lies reports the value 99 for its decision, which is worth" in f for f in v.failures)
    assert eb.validate(honest, family, count=1, time_limit=2).ok


def test_a_wrapper_of_a_builtin_is_no_builtin():
    """Built-in is where the method is registered, not the ``__module__``
    that ``functools.wraps`` copies: a user's wrapper of ff that changes
    its instance was handed the caller's instance uncopied (every method
    scored after it saw the change) and became a yardstick of validate;
    ``origin="builtin"`` from a user's module is refused."""
    import functools

    from epochbench.heuristics.packing import first_fit
    from epochbench.instances.registry import METHODS, solve

    @functools.wraps(first_fit)
    def zeroing(inst, **kw):
        if inst.demand.flags.writeable:
            inst.demand[0] = 0
        else:
            object.__setattr__(inst, "meta", {**inst.meta, "touched": True})
        return first_fit(inst, **kw)

    state = METHODS.snapshot()
    try:
        eb.register("packing", "zeroing-ff")(zeroing)
        m = get("packing", "zeroing-ff")
        assert m.origin != "builtin" and m.origin.startswith("module ") and "epochbench" not in m.origin
        inst = eb.generate("leinberger", n=6, k=2, count=1, seed=1)[0]
        before = inst.to_dict()
        with pytest.raises(ValueError, match="changed the instance"):
            solve(inst, "zeroing-ff")
        assert inst.to_dict() == before
        ok = eb.validate(lambda inst: [], "packing", count=1, seed=0, time_limit=2)
        assert ok.ok and "zeroing-ff" not in set(ok.table.method)
        with pytest.raises(ValueError, match="origin: 'builtin'"):
            eb.register("packing", "fake-builtin", origin="builtin")(lambda inst: [])
    finally:
        METHODS.restore(state)


def test_validate_takes_a_registered_heuristics_name(capsys):
    """The README says plug-ins appear in validate: ``validate NAME`` was
    refused ("expected MODULE:FUNCTION").  A built-in or exact method's name
    says what to give instead."""
    from epochbench.cli import main
    from epochbench.instances.registry import METHODS
    state = METHODS.snapshot()
    try:
        eb.register("packing", "test-starts-nothing")(lambda inst: [])
        assert main(["validate", "test-starts-nothing", "--count", "0", "--time-limit", "2", "--jobs", "1"]) == 0
        out = capsys.readouterr().out
        assert "test-starts-nothing" in out and "verdict: PASS" in out
        for name, what in (("ff", "a built-in heuristic"), ("cpsat", "an exact method")):
            assert main(["validate", name, "--count", "0"]) == 2
            assert f"'{name}' is {what}: validate checks your own heuristics" in capsys.readouterr().err
        assert main(["validate", "nosuch", "--count", "0"]) == 2
        assert "expected MODULE:FUNCTION or the name of a registered packing heuristic" in capsys.readouterr().err
    finally:
        METHODS.restore(state)


def test_built_in_is_read_from_the_registering_modules_namespace_not_its_file():
    """The file compare failed where a module is a ``.pyc`` without its
    ``.py`` (``__file__`` and the code's file differ): every built-in read
    as a user's and the import died in a circular import."""
    import sys

    from epochbench.instances import registry
    from epochbench.instances.catalog import in_package, origin_of
    here = eval("sys._getframe(0)", vars(registry))              # code run in the module's own namespace
    assert in_package(here) and origin_of(len, here) == "builtin"
    fake = eval("sys._getframe(0)", {**vars(registry)})         # its name, another namespace
    assert not in_package(fake)
    mine = sys._getframe(0)
    assert not in_package(mine) and origin_of(mine.f_code, mine).startswith("module ")


def test_a_heuristic_with_a_required_parameter_is_refused_before_the_run():
    """The command line refuses it up front; eb.validate ran every instance
    and failed each with the same TypeError."""
    import functools

    def needs(inst, k):
        return []

    with pytest.raises(ValueError, match=r"needs: parameter 'k' has no default.*functools\.partial\(needs, k=\.\.\.\)"):
        eb.validate(needs, "packing", count=1, seed=0, time_limit=2)
    assert eb.validate(functools.partial(needs, k=1), "packing", count=0, seed=0, time_limit=2).table is not None

    @functools.wraps(needs)
    def wrapped(inst):                          # supplies k itself: its signature names needs' k (__wrapped__)
        return needs(inst, k=2)

    assert eb.validate(wrapped, "packing", count=0, seed=0, time_limit=2).table is not None

    def first_k(k, inst):
        return []

    with pytest.raises(ValueError, match=r"candidate: takes no positional parameter for the instance \(its parameters: k=1, inst\)"):
        eb.validate(functools.partial(first_k, k=1), "packing", count=0, seed=0, time_limit=2)
