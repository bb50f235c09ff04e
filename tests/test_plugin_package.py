"""A third-party plug-in package, found through its entry point only: it
appears in ``list``, ``score``, ``validate`` and as an ``epochs`` method,
in a fresh process (nothing loads it by hand)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = '''
"""A user's packing heuristic: largest total demand first, first fit."""
import numpy as np


def largest_first(inst):
    """Largest total demand first, each job started if it fits."""
    free = inst.capacity - inst.used
    picked = []
    for j in np.argsort(-inst.demand.sum(axis=1), kind="stable"):
        if (inst.demand[j] <= free).all():
            free = free - inst.demand[j]
            picked.append(int(j))
    if inst.reservation is not None:          # keep it simple: no job past the shadow time
        picked = [j for j in picked if not inst.reservation.past_shadow[j]]
    return picked
'''


@pytest.fixture
def plugin_env(tmp_path):
    """A folder with module ``userplug`` and a ``userplug-1.0.dist-info``
    declaring ``[epochbench.heuristics] largest = userplug:largest_first``."""
    (tmp_path / "userplug.py").write_text(PLUGIN)
    info = tmp_path / "userplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: userplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[epochbench.heuristics]\nlargest = userplug:largest_first\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return tmp_path, env


def run(env, cwd, *argv):
    proc = subprocess.run([sys.executable, "-m", "epochbench.cli", *argv], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def test_plugin_is_listed_for_packing_and_epochs(plugin_env):
    tmp, env = plugin_env
    code, out, err = run(env, tmp, "list")
    assert code == 0, err
    sections = {}
    for line in out.splitlines():
        if not line.startswith(" "):
            fam = line.rstrip(":")
        elif line.split()[0] == "largest":
            sections[fam] = line
    assert set(sections) == {"packing", "epochs"}, out
    assert "[entry point userplug:largest_first]" in sections["packing"]


def test_plugin_is_scored_validated_and_solves_epochs(plugin_env):
    tmp, env = plugin_env
    code, _, err = run(env, tmp, "generate", "leinberger", "--out", "fam", "--n", "10", "--k", "2", "--count", "2",
                       "--seed", "3")
    assert code == 0, err
    code, out, err = run(env, tmp, "score", "fam", "--methods", "largest,ff,cpsat", "--time-limit", "5")
    assert code == 0, err
    import pandas as pd
    table = pd.read_csv(tmp / "fam" / "scores.csv")
    assert set(table["method"]) == {"largest", "ff", "cpsat"} and len(table) == 6
    mine = table[table["method"] == "largest"]
    assert (mine["gap_kind"] == "optimum").all() and mine["gap"].ge(0).all()

    code, out, err = run(env, tmp, "validate", "userplug:largest_first", "--count", "3", "--time-limit", "5")
    assert code == 0, err + out
    assert "verdict: PASS" in out

    from epochbench.instances import EpochsInstance, save_instance
    save_instance(EpochsInstance.build([10, 10], [[6, 2], [5, 5], [4, 4], [3, 9]], meta={"name": "e"}),
                  tmp / "e.json")
    code, out, err = run(env, tmp, "solve", "e.json", "--method", "largest", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["method"] == "largest" and sorted(j for b in res["bins"] for j in b) == [0, 1, 2, 3]


def test_an_entry_point_named_after_an_exact_method_or_an_unknown_family_is_skipped(plugin_env):
    """The built-in methods load before the plug-ins: an entry point named
    ``cpsat`` cannot take the name (it used to, and broke every later lookup
    of ``list``); one for a family that does not exist is skipped, not listed
    as a new family."""
    tmp, env = plugin_env
    (tmp / "userplug-1.0.dist-info" / "entry_points.txt").write_text(
        "[epochbench.heuristics]\nlargest = userplug:largest_first\ncpsat = userplug:largest_first\n"
        "pakcing:foo = userplug:largest_first\n")
    code, out, err = run(env, tmp, "list")
    assert code == 0, err
    assert "'cpsat = userplug:largest_first'" in err and "already exists" in err
    assert "'pakcing:foo = userplug:largest_first'" in err and "unknown family 'pakcing'" in err
    assert "pakcing" not in out and "largest" in out
    # a sweep on two local workers: each warning once, not once more per worker (they share the terminal)
    code, out, err = run(env, tmp, "validate", "userplug:largest_first", "--count", "2", "--workers", "2",
                         "--time-limit", "5")
    assert code == 0, err + out
    assert err.count("'cpsat = userplug:largest_first'") == 1 and err.count("'pakcing:foo = ") == 1, err


def test_a_plugin_selector_that_fails_mid_simulation_is_one_line_with_status_1(plugin_env):
    """Not bad input (status 2), not a traceback: the selector, its step,
    the time and the candidate jobs, on one line."""
    tmp, env = plugin_env
    with open(tmp / "userplug.py", "a") as fh:
        fh.write("\n\ndef broken(inst):\n    return [0, 0] if inst.n > 1 else []\n")
    (tmp / "userplug-1.0.dist-info" / "entry_points.txt").write_text(
        "[epochbench.heuristics]\nlargest = userplug:largest_first\nbroken = userplug:broken\n")
    code, out, err = run(env, tmp, "generate", "workload", "--out", "w", "--model", "lublin03", "--jobs", "300",
                         "--processors", "64", "--seed", "2")
    assert code == 0, err
    trace = next((tmp / "w").glob("*.swf"))
    code, out, err = run(env, tmp, "simulate", "--workload", str(trace), "--policy", "easy", "--selector", "broken")
    assert code == 1, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "selector 'broken' failed at step" in err and "starts job 0 twice" in err



def test_a_plugin_named_like_a_builtin_is_said_by_score_and_solve_too(plugin_env):
    """'list' warned that 'ff = userplug:...' cannot replace the built-in,
    but score and solve found the built-in ff first and never loaded the
    plug-ins: a researcher whose plug-in is named ff got ff's numbers
    without a word."""
    tmp, env = plugin_env
    (tmp / "userplug-1.0.dist-info" / "entry_points.txt").write_text(
        "[epochbench.heuristics]\nff = userplug:largest_first\n")
    code, _, err = run(env, tmp, "generate", "leinberger", "--out", "fam", "--n", "6", "--count", "1")
    assert code == 0, err
    inst = next(p for p in (tmp / "fam").glob("*.json") if p.name != "manifest.json")
    for argv in (["score", "fam", "--methods", "ff", "--out", "s"], ["solve", str(inst), "--method", "ff"]):
        code, _, err = run(env, tmp, *argv)
        assert code == 0 and "'ff = userplug:largest_first'" in err and "already exists" in err, err


class _EP:
    """A stand-in for an entry point (``name``, ``value``, ``load()``)."""
    def __init__(self, name, value, load):
        self.name, self.value, self._load = name, value, load

    def load(self):
        return self._load()


def test_a_plugin_that_exits_on_import_is_skipped_with_one_line(capsys):
    """A plug-in module calling ``parse_args()`` at import (SystemExit) ended
    every command, ``list`` and ``solve --method ff`` included, with its own
    usage line and no word of which plug-in it was."""
    from epochbench.instances.catalog import plugins

    def exits():
        raise SystemExit(2)
    import epochbench.instances.catalog as catalog
    real = catalog.entry_points
    catalog.entry_points = lambda group: [_EP("packing:x", "badpkg:x", exits)]
    try:
        plugins("epochbench.heuristics", lambda ep: ep.load())()
    finally:
        catalog.entry_points = real
    err = capsys.readouterr().err
    assert err == ("epochbench: warning: plug-in entry point 'packing:x = badpkg:x' (epochbench.heuristics): "
                   "SystemExit(2) on import; skipped\n")


def test_a_plugin_policy_named_like_a_builtin_is_refused_not_ignored():
    from epochbench.instances.catalog import PluginError
    from epochbench.sim import registry as sreg
    sreg.POLICIES.complete()
    with pytest.raises(PluginError, match=r"^pool policy 'easy' already exists \(builtin\); a plug-in cannot"):
        sreg._plugin_policy(_EP("pool:easy", "mylab:pol", lambda: (lambda **kw: None)))


def test_a_plugin_policy_whose_factory_fails_is_one_line_naming_it():
    from epochbench.instances.core import MethodFailed
    from epochbench.sim import policies, registry as sreg
    sreg.POLICIES.complete()
    state = sreg.POLICIES.snapshot()

    def factory(**options):
        raise RuntimeError("x")
    try:
        sreg.register_policy("pool", "test-boom", factory, origin="entry point mylab:pol")
        with pytest.raises(MethodFailed, match=r"^policy 'test-boom' \(entry point mylab:pol\): its factory raised "
                                               r"RuntimeError: x$"):
            policies.make("test-boom")
    finally:
        sreg.POLICIES.restore(state)


def test_a_clash_of_plugin_generators_or_experiments_names_the_plugin_not_builtin():
    """Plug-in generators and experiments were stored as ``builtin``: a
    second plug-in's clash said "already registered by builtin"."""
    from epochbench.experiments import CATALOG as EXPS, Experiment, _plugin_experiment, load_experiments
    from epochbench.instances import generators as gen
    gen.load_generators()
    load_experiments()
    gstate, estate, params = gen.CATALOG.snapshot(), EXPS.snapshot(), dict(gen.GENERATOR_PARAMS)

    def mygen(*, n: int = 3, seed: int = 0):
        return []

    def othergen(*, n: int = 3, seed: int = 0):
        return []
    exp = Experiment("test-myexp", "a plug-in's", lambda opts: [], lambda task: [], lambda df: df)
    try:
        gen._plugin_generator(_EP("test-mygen", "mylab.gen:mygen", lambda: mygen))
        with pytest.raises(ValueError, match=r"generator 'test-mygen' already registered by entry point "
                                             r"mylab.gen:mygen"):
            gen._plugin_generator(_EP("test-mygen", "mybad.gen:mygen", lambda: othergen))
        _plugin_experiment(_EP("test-myexp", "mylab.exp:EXP", lambda: exp))
        assert EXPS.origin("test-myexp") == "entry point mylab.exp:EXP"
    finally:
        gen.CATALOG.restore(gstate)
        EXPS.restore(estate)
        gen.GENERATOR_PARAMS.clear()                 # its parameters too: a later test found 'test-mygen'
        gen.GENERATOR_PARAMS.update(params)          # among them and no such generator


def test_a_plugins_epochs_method_replaces_the_one_derived_from_its_packing_heuristic(monkeypatch):
    """The README's exception (an epochs method under the name of your
    packing heuristic replaces its derivation) held for ``eb.register`` but
    not through entry points: "already exists; a plug-in cannot replace it"."""
    import epochbench.instances.catalog as catalog
    from epochbench.instances import registry

    def packer(inst):
        return [0] if inst.n else []

    def planner(inst):
        return [[j] for j in range(inst.n)]
    eps = [_EP("packing:test-decor", "mylab.heur:packer", lambda: packer),
           _EP("epochs:test-decor", "mylab.heur:planner", lambda: planner)]
    registry.METHODS.complete()
    state = registry.METHODS.snapshot()
    monkeypatch.setattr(catalog, "entry_points", lambda group: eps if group == registry.ENTRY_POINT_GROUP else [])
    registry.METHODS.rewind(registry._plugins)
    try:
        registry.METHODS.complete()
        assert registry.get("epochs", "test-decor").func is planner
        assert registry.get("epochs", "test-decor").origin == "entry point mylab.heur:planner"
    finally:
        registry.METHODS.restore(state)


def test_plugin_heuristics_of_every_family_are_benchmarked(plugin_env):
    """The README says a plug-in appears in ``pytest --benchmark``: only
    packing and epochs plug-ins did; the knapsack, mapping and assignment
    benchmarks named their built-ins only (a review of plug-ins)."""
    tmp, env = plugin_env
    with open(tmp / "userplug.py", "a") as fh:
        fh.write("\n\ndef nothing(inst):\n    return []\n\n\ndef first_machine(inst):\n"
                 "    return [0] * inst.etc.shape[0]\n")
    (tmp / "userplug-1.0.dist-info" / "entry_points.txt").write_text(
        "[epochbench.heuristics]\nknapsack:userknap = userplug:nothing\nmapping:usermap = userplug:first_machine\n"
        "assignment:userassign = userplug:nothing\n")
    code, out, err = run(env, tmp, "bench", "--quick", "--collect-only", "-q", "-k",
                         "userknap or usermap or userassign")
    assert code == 0, err                      # before: "no benchmark selected"
    counts = dict(line.split(": ") for line in out.splitlines() if line.startswith("bench_"))
    # knapsack: speed and OR-Library gaps; mapping: 512 x 16; assignment: 3 sizes x 2 generators, dense 150
    assert counts == {"bench_knapsack.py": "2", "bench_mapping.py": "1", "bench_assignment.py": "7"}, out
