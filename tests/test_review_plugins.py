"""Findings of a review of third-party plug-ins (an installed package with
entry points in every group), each reproduced first; every test fails on
the code before its fix.  Entry points are stood in for, as in
tests/test_plugin_package.py.

1. A generator plug-in refused at registration left a half-registered
   generator: every ``generate`` raised KeyError.
2. A policy factory that returns no policy, or raises a ``ValueError``, is
   one line naming the plug-in (one line when its message has several); a
   run, on every machine, is recorded under the name it was asked for.
3. ``solve`` with a user's method whose decision the checker refuses: the
   method's failure (status 1, named), not bad input (status 2).
4. A plug-in experiment cannot replace a built-in one (even with its run),
   needs a name that suits files and the command line, and its entry
   point's name.
5. A plug-in generator or experiment that raises or returns garbage is one
   line naming it.
6. A plug-in that lists its catalog while it imports was said skipped (it
   was registered).
"""
from __future__ import annotations

import pandas as pd
import pytest

import epochbench as eb
from epochbench import cli
from epochbench.experiments import Experiment, _plugin_experiment, load_experiments, register
from epochbench.instances import generators as gen
from epochbench.instances import catalog
from epochbench.instances.catalog import Catalog, PluginError
from epochbench.instances.core import MethodFailed
from epochbench.instances.jobs import make_workload
from epochbench.sim import policies, registry as sreg


class _EP:
    """A stand-in for an entry point (``name``, ``value``, ``load()``)."""
    def __init__(self, name, value, load):
        self.name, self.value, self._load = name, value, load

    def load(self):
        return self._load()


@pytest.fixture
def restored(catalogs_restored):
    """Every catalog these tests add to, as it was (conftest's fixture)."""
    yield


def _workload():
    return make_workload({"id": [1, 2, 3], "submit": [0, 1, 2], "runtime": [5, 5, 5], "estimate": [5, 5, 5],
                          "procs": [2, 2, 2]}, [4])


# ---- 1 ------------------------------------------------------------------------------------------------
def test_a_generator_refused_at_registration_leaves_no_trace(restored, capsys):
    def untyped(*, foo=None, count: int = 1):
        return []
    with pytest.raises(ValueError, match="give the type of parameter 'foo'"):
        gen._plugin_generator(_EP("test-untyped", "mylab:untyped", lambda: untyped))
    assert "test-untyped" not in gen.GENERATORS and set(gen.GENERATORS) == set(gen.GENERATOR_PARAMS)
    assert len(eb.generate("leinberger", n=4, k=1, count=1, seed=0)) == 1


# ---- 2 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("machine,options", [("pool", {}), ("gang", {}), ("farm", {"farm_jobs": 5})])
def test_a_policy_factory_that_returns_no_policy_is_named(restored, machine, options):
    sreg.register_policy(machine, "test-garbage", lambda **kw: 42, origin="entry point mylab:garbage")
    workload = None if machine == "farm" else _workload()
    with pytest.raises(MethodFailed, match=r"^policy 'test-garbage' \(entry point mylab:garbage\): its factory "
                                           r"returned 42 \(int\), not "):
        eb.simulate(workload, "test-garbage", machine=machine, **options)


def test_a_policy_factorys_value_error_names_it_and_its_run_is_recorded_under_its_name(restored):
    def refuses(**kw):
        raise ValueError("policy config broken")
    sreg.register_policy("pool", "test-refuses", refuses, origin="entry point mylab:refuses")
    with pytest.raises(ValueError, match=r"^policy 'test-refuses' \(entry point mylab:refuses\): policy config"):
        policies.make("test-refuses")
    sreg.register_policy("pool", "test-fcfs-again", lambda **kw: policies.make("fcfs", **kw),
                         origin="entry point mylab:again")
    run = eb.simulate(_workload(), "test-fcfs-again")
    assert run.policy == "test-fcfs-again"
    assert (run.jobs["start"].tolist() == eb.simulate(_workload(), "fcfs").jobs["start"].tolist())


@pytest.mark.parametrize("machine,builtin,options", [("gang", "bgs", {}), ("farm", "edf", {"farm_jobs": 6})])
def test_a_gang_or_farm_plugins_run_is_recorded_under_its_name(restored, machine, builtin, options):
    """A plug-in that returns a built-in gang policy's name, or a farm
    policy of its own, was recorded under the built-in's name."""
    make = sreg.get_policy(machine, builtin).make
    sreg.register_policy(machine, "test-again", lambda **kw: make(**kw), origin="entry point mylab:again")
    workload = None if machine == "farm" else _workload()
    run, ref = (eb.simulate(workload, name, machine=machine, **options) for name in ("test-again", builtin))
    assert run.policy == "test-again" and ref.policy == builtin
    assert run.jobs["start"].tolist() == ref.jobs["start"].tolist()


def test_a_plugins_error_of_several_lines_is_said_in_one(restored):
    def refuses(**kw):
        raise ValueError("first line\n  second line")
    sreg.register_policy("pool", "test-lines", refuses, origin="entry point mylab:lines")
    with pytest.raises(ValueError, match=r"^policy 'test-lines' \(entry point mylab:lines\): first line second "
                                         r"line$"):
        policies.make("test-lines")


# ---- 3 ------------------------------------------------------------------------------------------------
def test_solve_with_a_users_refused_decision_is_its_failure(restored, tmp_path, capsys):
    eb.register("packing", "test-twice")(lambda inst: [0, 0])
    path = tmp_path / "i.json"
    eb.save(eb.generate("leinberger", n=6, k=2, count=1, seed=1)[0], path)
    assert cli.main(["solve", str(path), "--method", "test-twice"]) == 1
    err = capsys.readouterr().err
    assert "method 'test-twice'" in err and "the checker refuses" in err and err.count("\n") == 1


# ---- 4 ------------------------------------------------------------------------------------------------
def _rows(task):
    return [{"x": task["i"]}]


def test_a_plugin_experiment_cannot_replace_a_builtin_even_with_its_run(restored):
    builtin = load_experiments()["rajaei"]
    hijack = Experiment("rajaei", "HIJACKED", lambda opts: builtin.tasks(opts)[:1], builtin.run, builtin.table)
    with pytest.raises(ValueError, match="already registered"):
        _plugin_experiment(_EP("rajaei", "hijpl:HIJ", lambda: hijack))
    assert load_experiments()["rajaei"] is builtin


@pytest.mark.parametrize("name", ["../evil", "list", "", "-x", "a b"])
def test_an_experiment_name_must_suit_files_and_the_command_line(restored, name):
    with pytest.raises(ValueError, match="experiment name"):
        register(Experiment(name, "bad", lambda opts: [{"i": 0}], _rows, lambda df: df))


def test_an_experiment_entry_point_names_its_experiment(restored):
    exp = Experiment("test-othername", "mine", lambda opts: [{"i": 0}], _rows, lambda df: df)
    with pytest.raises(PluginError, match="entry point name 'test-mism' is not its experiment's name"):
        _plugin_experiment(_EP("test-mism", "mylab:MISM", lambda: exp))


# ---- 5 ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("returns,match", [(RuntimeError("exploded"), "raised RuntimeError: exploded"),
                                           ([1, 2], r"returned \[1, 2\] \(list\), not a list of instances"),
                                           (None, r"returned None \(NoneType\)")])
def test_a_plugin_generator_that_fails_is_named(restored, tmp_path, capsys, returns, match):
    def bad(*, count: int = 1):
        if isinstance(returns, Exception):
            raise returns
        return returns
    gen.register_generator("test-bad", bad, origin="entry point mylab:bad")
    with pytest.raises(MethodFailed, match=r"^generator 'test-bad' \(entry point mylab:bad\): it " + match):
        eb.generate("test-bad")
    assert cli.main(["generate", "test-bad", "--out", str(tmp_path / "g")]) == 1
    assert capsys.readouterr().err.count("\n") == 1 and not (tmp_path / "g").exists()


def _boom(*args):
    raise RuntimeError("exploded")


@pytest.mark.parametrize("part", ["tasks", "table"])
def test_a_plugin_experiment_that_fails_is_one_line_naming_it(restored, tmp_path, capsys, part):
    exp = Experiment("test-fails", "mine", _boom if part == "tasks" else (lambda opts: [{"i": 0}]), _rows,
                     _boom if part == "table" else (lambda df: df))
    register(exp, origin="entry point mylab:FAILS")
    assert cli.main(["experiment", "test-fails", "--workers", "1", "--out", str(tmp_path / "e"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"experiment 'test-fails' (entry point mylab:FAILS): its {part}() raised RuntimeError: exploded" in err
    assert "Traceback" not in err
    if part == "table":                                                  # the rows are kept, the record says why
        assert pd.read_csv(tmp_path / "e" / "test-fails.csv")["x"].tolist() == [0]


# ---- 6 ------------------------------------------------------------------------------------------------
def test_a_plugin_that_lists_its_catalog_while_it_imports_is_not_said_skipped(monkeypatch, capsys):
    """Its listing ran the plug-in source again from inside itself: the
    entry point, half-imported, failed there and was said "skipped" while
    the outer run registered it (a source without an import to stop it
    recursed for ever)."""
    cat = Catalog("thing", [lambda: cat.add("builtin", 0)])
    seen, loads = [], []

    def imports():                       # the plug-in module's import: registers, lists, registers
        loads.append(1)
        cat.add("mine", 1, origin="entry point mylab:mine")
        seen.append(sorted(cat.keys()))
        assert cat.find("theirs") is None
        cat.add("mine-too", 2, origin="entry point mylab:mine")
        return None

    monkeypatch.setattr(catalog, "entry_points", lambda group: [_EP("mine", "mylab:mine", imports)])
    cat.add_source(catalog.plugins("test.group", lambda ep: ep.load()))
    assert cat.keys() == ["builtin", "mine", "mine-too"]
    assert seen == [["builtin", "mine"]] and loads == [1]
    assert "skipped" not in capsys.readouterr().err
