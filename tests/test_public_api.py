"""The public face (``import epochbench as eb``): the README's library
example runs unchanged, the face's doctests pass, the names resolve lazily,
and bad arguments are one clear error."""
import doctest
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import epochbench as eb

ROOT = Path(__file__).resolve().parents[1]
FACE = ["register", "solve", "score", "validate", "generate", "load", "save", "simulate", "Result", "SimResult"]


def test_readme_heuristic_example_passes_validate(registry_restored):
    """The README's first heuristic returned [0, 3] as a shape: copied and
    validated as the README then says, it failed on 15 of 38 instances
    (jobs out of range, over-committed, a broken reservation)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Adding a heuristic"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    space: dict = {}
    exec(compile(code, "README.md (Adding a heuristic)", "exec"), space)   # registers mine (undone after)
    v = eb.validate(space["mine"], "packing", count=12, seed=3, time_limit=5.0)
    assert v.ok, v


def test_readme_library_example_runs_unchanged(tmp_path, capsys, monkeypatch):
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Library"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md (Library)", "exec"), {})
    out = capsys.readouterr().out
    # the compiled loop where it is compiled (or cached), else its pure-Python twin (policies.loop_ready)
    assert "optimal" in out and re.search(r"^pool (fast|python) \d", out, re.M), out
    assert list(tmp_path.iterdir()) == []


def test_face_doctests():
    import epochbench.api as api
    result = doctest.testmod(api, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 2 and result.failed == 0


def test_every_face_name_resolves_and_is_listed():
    assert set(FACE) <= set(eb.__all__) and set(FACE) <= set(dir(eb))
    for name in FACE:
        assert getattr(eb, name) is not None
    assert callable(eb.score) and callable(eb.validate) and callable(eb.simulate)   # not submodules
    assert re.match(r"\d+\.\d+", eb.__version__)
    with pytest.raises(AttributeError):
        eb.no_such_name


def test_import_is_light():
    code = ("import sys, epochbench; print(sorted(m for m in ('ortools', 'pulp', 'scipy', 'highspy', 'pandas', "
            "'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_commands_import_no_solver_unless_an_exact_method_is_asked_for(tmp_path):
    kth = None
    code = f"""
import sys
from epochbench.cli import main
main(["generate", "leinberger", "--out", r"{tmp_path / 'fam'}", "--n", "8", "--k", "2", "--count", "2"])
main(["solve", r"{tmp_path / 'fam'}/leinberger-K2-uniform-n8-s0000-000.json", "--method", "bb"])
main(["list", "--policies"])
print("HEAVY", sorted(m for m in ("ortools", "pulp", "highspy") if m in sys.modules))
main(["solve", r"{tmp_path / 'fam'}/leinberger-K2-uniform-n8-s0000-000.json", "--method", "cpsat"])
print("HEAVY", sorted(m for m in ("ortools", "pulp", "highspy") if m in sys.modules))
main(["solve", r"{tmp_path / 'fam'}/leinberger-K2-uniform-n8-s0000-000.json", "--method", "milp-highs"])
print("HEAVY", sorted(m for m in ("ortools", "pulp", "highspy") if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    heavy = [line for line in out.stdout.splitlines() if line.startswith("HEAVY")]
    # each solver loads when a method of it runs: CP-SAT alone imports OR-Tools only
    assert heavy == ["HEAVY []", "HEAVY ['ortools']", "HEAVY ['highspy', 'ortools', 'pulp']"], out.stdout + out.stderr


def test_simulate_skips_numbas_blas_probe_and_compiled_dot_still_works(tmp_path):
    """``simulate`` loads numba without importing scipy.linalg (its start-up
    BLAS probe); a kernel compiled later with np.dot imports it itself."""
    swf = tmp_path / "t.swf"
    swf.write_text("".join(f"{i} {i * 10} -1 {30 + i} 4 -1 -1 4 {40 + i} -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                           for i in range(1, 30)))
    code = f"""
import sys
from epochbench.cli import main
assert main(["simulate", "--workload", r"{swf}", "--policy", "easy", "--json", "--quiet"]) == 0
print("LINALG", "scipy.linalg" in sys.modules)
import numpy as np
from numba import njit
print("DOT", njit(lambda a, b: np.dot(a, b))(np.ones(3), np.ones(3)), "scipy.linalg" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    lines = [line for line in out.stdout.splitlines() if line.startswith(("LINALG", "DOT"))]
    assert lines == ["LINALG False", "DOT 3.0 True"], out.stdout + out.stderr


@pytest.mark.parametrize("limit", [float("nan"), -1.0, True, "5"])
@pytest.mark.parametrize("method", ["cpsat", "milp-highs", "cg", "lns", "ffd-sum"])
def test_solve_refuses_a_time_limit_that_is_not_a_duration(method, limit):
    """One check in ``solve`` for every method: a NaN limit used to crash
    CP-SAT (MODEL_INVALID) and a negative one to return the start quietly."""
    from epochbench.instances.packing import EpochsInstance
    inst = EpochsInstance.build([15, 16], [[5, 3], [5, 3], [3, 5], [1, 4], [5, 3], [1, 2]])
    with pytest.raises(ValueError, match="time_limit: must be a positive finite number"):
        eb.solve(inst, method, time_limit=limit)
    assert eb.solve(inst, method, time_limit=np.float64(2.0)).status in ("optimal", "feasible")


def test_solve_and_score_check_their_arguments():
    inst = eb.generate("leinberger", n=5, k=2, count=1, seed=2)[0]
    with pytest.raises(ValueError, match="method"):
        eb.solve(inst, "")
    with pytest.raises(ValueError, match="instance"):
        eb.solve("not an instance", "ff")
    with pytest.raises(KeyError, match="no method 'nope'"):
        eb.solve(inst, "nope")
    with pytest.raises(ValueError, match="at least one method"):
        eb.score([inst], "")
    assert eb.solve(inst, "ff", time_limit=3).status == "feasible"          # limits are ignored by heuristics


def test_save_load_round_trip_and_score_from_a_folder(tmp_path):
    fam = eb.generate("leinberger", n=6, k=2, count=2, seed=4)
    for inst in fam:
        eb.save(inst, tmp_path / f"{inst.name}.json")
    back = [eb.load(tmp_path / f"{inst.name}.json") for inst in fam]
    assert [b.name for b in back] == [f.name for f in fam]
    assert all(np.array_equal(a.demand, b.demand) for a, b in zip(fam, back))
    table = eb.score(tmp_path / f"{fam[0].name}.json", "ff,cpsat", time_limit=5)
    assert isinstance(table, pd.DataFrame) and set(table["method"]) == {"ff", "cpsat"}


def test_simulate_on_all_three_machines():
    from epochbench.instances.jobs import make_workload
    jobs = {"id": range(1, 9), "submit": [0, 1, 2, 3, 4, 5, 6, 7], "runtime": [30, 20, 40, 10, 60, 5, 15, 25],
            "estimate": [40, 20, 50, 10, 60, 10, 20, 30], "procs": [8, 4, 2, 8, 6, 1, 3, 5]}
    w = make_workload(jobs, [8])
    pool = eb.simulate(w, "easy")
    gang = eb.simulate(w, "gs", mpl=2)
    farm = eb.simulate(None, "edf", farm_jobs=20)
    assert [r.machine for r in (pool, gang, farm)] == ["pool", "gang", "farm"]
    assert all(isinstance(r, eb.SimResult) for r in (pool, gang, farm))
    assert len(pool.jobs) == len(gang.jobs) == 8 and len(farm.jobs) == 20
    assert pool.summary()["jobs"] == 8 and "capacity_loss" in gang.summary() and "late" in farm.summary()
    with pytest.raises(KeyError, match="no policy 'gs' on machine 'pool'"):
        eb.simulate(w, "gs", machine="pool")
    with pytest.raises(ValueError, match="slack_factor= applies to policy slack-bf only"):   # the keyword, not
        eb.simulate(w, "easy", slack_factor=2.0)                                           # the flag


def test_save_never_overwrites_unless_asked_and_writes_a_family_from_a_list(tmp_path):
    insts = eb.generate("mkp", n=5, k=2, count=2, seed=1)
    f = tmp_path / "x.json"
    f.write_text("precious")
    with pytest.raises(FileExistsError, match="already exists"):
        eb.save(insts[0], f)
    assert f.read_text() == "precious"
    eb.save(insts[0], f, overwrite=True)
    assert eb.load(f).name == insts[0].name
    eb.save(insts, tmp_path / "fam")
    assert sorted(p.name for p in (tmp_path / "fam").iterdir()) == sorted(
        ["manifest.json", *(f"{i.name}.json" for i in insts)])
    assert set(eb.score(tmp_path / "fam", ["greedy-mkp"])["instance"]) == {i.name for i in insts}
    with pytest.raises(Exception, match="already holds"):
        eb.save(insts, tmp_path / "fam")


def test_a_family_that_cannot_be_written_whole_is_refused_before_anything_is_written(tmp_path):
    """An instance named 'manifest' was overwritten by the manifest (the
    folder then failed to score); a bad name later in the list left an
    empty folder; an empty list wrote a family that score refuses; a file
    in the way gave a bare [Errno 17]."""
    from epochbench.instances.core import InstanceError
    from dataclasses import replace
    insts = eb.generate("mkp", n=5, k=2, count=2, seed=1)
    named = lambda i, name: replace(i, meta={**i.meta, "name": name})
    cases = {"taken by the family's manifest.json": [insts[0], named(insts[1], "manifest")],
             "is not a valid file name": [insts[0], named(insts[1], "../evil")],
             "holds a control or invisible character": [named(insts[0], "a\nb")],     # was written as a\nb.json
             "set its meta\\['name'\\]": [named(insts[0], "")],
             "no instances to write": []}
    for i, (why, family) in enumerate(cases.items()):
        with pytest.raises(InstanceError, match=why):
            eb.save(family, tmp_path / f"fam{i}")
        assert not (tmp_path / f"fam{i}").exists()
    (tmp_path / "a.json").write_text("precious")
    with pytest.raises(InstanceError, match="is a file, not a folder"):
        eb.save(insts, tmp_path / "a.json")
    assert (tmp_path / "a.json").read_text() == "precious"


def test_a_misspelt_name_is_matched_in_any_case_and_width_and_a_bound_keeps_its_digits():
    """FF and a full-width ｆｆ got no hint where Cpsat got one; the seed's
    bound 2**63 - 1 read 9.22337e+18."""
    inst = eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    for name in ("FF", "\uff26\uff26"):
        with pytest.raises(ValueError, match=r"\(did you mean 'ff'"):
            eb.solve(inst, name)
    with pytest.raises(ValueError, match=r"^seed must lie in \[0, 9223372036854775807\], got -1$"):
        eb.generate("leinberger", n=8, k=2, seed=-1)
    with pytest.raises(ValueError, match=r"^count must lie in \[1, 1e\+06\], got 0$"):
        eb.generate("leinberger", n=8, k=2, count=0)


def test_did_you_mean_names_every_entry_that_folds_alike():
    """Two plug-ins ``Foo`` and ``FOO`` (allowed: neither is built in) fold
    to one spelling; the hint named only the first of them."""
    from epochbench.instances.registry import did_you_mean
    assert did_you_mean("fooo", ["Foo", "bar", "FOO"]) == " (did you mean 'Foo' or 'FOO'?)"
    assert did_you_mean("fooo", ["FOO", "Foo", "FOO"]) == " (did you mean 'FOO' or 'Foo'?)"
    assert did_you_mean("zzz", ["Foo", "FOO"]) == ""
    assert did_you_mean("bb", ["bl", "bb", "ff"]).startswith(" (did you mean 'bb'")


def test_score_refuses_no_instances_and_unordered_method_or_reference_collections():
    fam = eb.generate("leinberger", n=8, k=2, count=1, seed=1)
    with pytest.raises(ValueError, match="instances: none given"):
        eb.score([], "ff")
    for methods in ({"ff", "bb"}, {"ff": 1}):
        with pytest.raises(ValueError, match="methods: expected method names in a list"):
            eb.score(fam, methods)
    with pytest.raises(ValueError, match="references: give the reference files' paths in a list, got dict"):
        eb.score(fam, "ff", references={"instance": "a"})


def test_numpy_integers_are_integers_for_count_seed_and_workers():
    """validate(count=np.int64(2)) said 'count: must be an integer', while
    solve and generate took numpy numbers; bools stay refused."""
    from epochbench.heuristics.packing import first_fit

    def mine(inst):
        return first_fit(inst)

    v = eb.validate(mine, "packing", count=np.int64(1), seed=np.int64(2), workers=np.int64(1), time_limit=2)
    assert v.ok
    fam = eb.generate("leinberger", n=8, k=2, count=1, seed=1)
    assert len(eb.score(fam, "ff", workers=np.int64(1))) == 1
    for bad, name in ((dict(count=np.bool_(True)), "count"), (dict(seed=np.float64(1)), "seed"),
                      (dict(workers=True), "workers")):
        with pytest.raises(ValueError, match=f"^{name}: must be an integer"):
            eb.validate(mine, "packing", **bad)


def test_simulate_reads_a_file_with_nodes_and_kill_at_estimate_as_the_command_line_does(tmp_path):
    """--nodes and --no-kill had no eb.simulate equivalent ('unknown option
    nodes'): a user had to go below the public face."""
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxNodes: 4\n1 0 0 100 4 -1 -1 4 50 -1 1 1 1 1 1 1 -1 -1\n"
                   "2 10 0 20 2 -1 -1 2 30 -1 1 1 1 1 1 1 -1 -1\n")
    ends = lambda **kw: eb.simulate(swf, "easy", **kw).jobs[["start", "end"]].values.tolist()
    assert ends() == [[0, 50], [50, 70]]                              # killed at the estimate, 4 nodes
    assert ends(kill_at_estimate=False) == [[0, 100], [100, 120]]
    assert ends(nodes=8) == [[0, 50], [10, 30]]
    for bad, says in ((dict(nodes=0), "nodes: a whole number of processors >= 1 \\(an int\\), got 0"),
                      (dict(nodes=64.0), "nodes: a whole number of processors >= 1 \\(an int\\), got 64.0"),
                      (dict(kill_at_estimate="no"), "kill_at_estimate: True or False")):
        with pytest.raises(ValueError, match=says):
            eb.simulate(swf, "easy", **bad)
    jobs = {"id": [1], "submit": [0.0], "runtime": [5.0], "procs": [1]}
    with pytest.raises(ValueError, match="nodes: for a workload read from a file"):
        eb.simulate((jobs, 4), "easy", nodes=8)


def test_bad_arguments_of_the_face_are_value_errors_in_one_line():
    """They were KeyError (an unknown policy, printed in quotes), TypeError
    (a DataFrame for a workload, methods=3, a path of None) and
    AttributeError (scheduler=5)."""
    import pandas as pd
    fam = eb.generate("leinberger", n=8, k=2, count=1, seed=1)
    calls = {"no policy 'nope'": lambda: eb.simulate(None, "nope"),
             "workload: expected": lambda: eb.simulate(pd.DataFrame({"a": [1]}), "easy"),
             "(farm): unknown option 'foo'; it takes farm_jobs, machines": lambda: eb.simulate(None, "cs-i-p", foo=1),
             "methods: expected": lambda: eb.score(fam, 3),
             "scheduler: expected": lambda: eb.score(fam, "ff", scheduler=5),
             "path: expected": lambda: eb.load(3)}
    for says, call in calls.items():
        with pytest.raises(ValueError) as err:
            call()
        assert says in str(err.value) and "\n" not in str(err.value) and not str(err.value).startswith(("'", '"'))
    assert eb.solve(fam[0], "cpsat", threads=None, time_limit=5).status == "optimal"   # None: not given


def test_results_and_score_tables_are_plain_numbers():
    """A timeout's to_dict() held NaN (json.dumps(allow_nan=False) raised);
    score's bound column was object (None) or float64 by content."""
    import json

    import pandas as pd
    fam = eb.generate("leinberger", n=8, k=2, count=2, seed=1)
    assert eb.score(fam, ["ff", "bb"])["bound"].dtype == float
    r = eb.Result("packing", "cpsat", (), float("nan"), "timeout", 0.01)
    assert json.loads(json.dumps(r.to_dict(), allow_nan=False))["value"] is None
    # a plug-in's info may hold a NaN or an infinity, as deep as it likes (a review: json.dumps raised)
    r = eb.Result("packing", "mine", (0,), 1.0, "feasible", 0.0,
                  info={"x": float("nan"), "deep": [{"y": np.inf}, np.float64(-np.inf), 2.5]})
    assert json.loads(json.dumps(r.to_dict(), allow_nan=False))["info"] == {"x": None, "deep": [{"y": None}, None, 2.5]}
    with pytest.raises(ValueError, match="references: give the reference files' paths"):
        eb.score(fam, ["ff"], references=pd.DataFrame({"instance": ["x"], "optimum": [1.0]}))


def test_generated_instances_do_not_share_their_params_and_scores_do_not_depend_on_method_order():
    fam = eb.generate("leinberger", n=8, k=2, count=2, seed=1)
    fam[0].meta["params"]["n"] = 99
    assert fam[1].meta["params"]["n"] == 8
    a = eb.score(fam, ["ff", "cpsat", "milp-highs"], time_limit=5)
    b = eb.score(fam, ["milp-highs", "cpsat", "ff"], time_limit=5)
    key = ["instance", "method"]
    cols = ["value", "bound", "gap", "gap_kind", "ref_source", "status"]
    assert a.set_index(key).sort_index()[cols].equals(b.set_index(key).sort_index()[cols])


def test_a_candidate_named_like_a_built_in_is_told_apart_in_the_verdict():
    def ff(inst):
        return []
    v = eb.validate(ff, count=1, time_limit=2)
    counts = v.table["method"].value_counts()
    assert counts["yours:ff"] == counts["ff"] == counts["cpsat"]          # one row each per instance
    for label, says in (("ff", "is a method of the family"), ("milp-highs", "is a method of the family"),
                        ("a,b", "has a comma")):
        with pytest.raises(ValueError, match=says):
            eb.validate(ff, count=1, time_limit=2, label=label)


def test_a_candidate_named_like_an_exact_method_cannot_pass_its_claims_off_as_proofs():
    """``def hungarian`` claiming optimal was labelled ``hungarian`` and its
    claim taken as the exact method's proof: validate raised SolverDisagreement."""
    def hungarian(inst):                  # greedy: each job its best free machine, claimed optimal
        taken, pairs = set(), []
        for j, row in enumerate(inst.preference):
            free = [(v, i) for i, v in enumerate(row) if v > 0 and i not in taken]
            if free:
                taken.add(max(free)[1])
                pairs.append((j, max(free)[1]))
        return eb.Result("assignment", "x", tuple(pairs), 0.0, "optimal", 0.0)

    v = eb.validate(hungarian, "assignment", count=6, time_limit=5)
    assert "yours:hungarian" in set(v.table["method"]) and not v.ok
    assert any("claims optimal, but its decision is worth" in f for f in v.failures)


def test_simulate_checks_the_selectors_options_before_the_run():
    """A bogus option failed mid-run with a TypeError; a negative limit said '>= 0'."""
    import numpy as np
    jobs = {"id": np.arange(1, 4), "submit": np.array([0, 5, 9.]), "runtime": np.array([50, 30, 40.]),
            "procs": np.array([32, 48, 16])}
    for opts, says in (({"bogus": 1}, "selector_options: packing method 'cpsat' has no parameter 'bogus'"),
                       ({"time_limit": -1}, "time_limit: must be a positive finite number"),
                       ([1], "selector_options: expected a dict")):
        with pytest.raises(ValueError, match=says):
            eb.simulate((jobs, 64), "easy", selector="cpsat", selector_options=opts)
    with pytest.raises(ValueError, match="without a selector"):
        eb.simulate((jobs, 64), "easy", selector_options={"time_limit": 1})
    # 'recorded' reads an epoch's recorded choice: accepted, it failed at the first step
    with pytest.raises(ValueError, match="^selector 'recorded' replays the choice recorded at an epoch"):
        eb.simulate((jobs, 64), "easy", selector="recorded")


def test_an_instance_made_outside_build_is_checked_and_never_read_from_a_stale_cache():
    """A constructor-made instance took negative demands, and after an edit
    of its (writable) arrays ff read cached weights: a utilization of 1.3."""
    import copy

    import numpy as np

    from epochbench.instances.packing import PackingInstance
    inst = PackingInstance(np.array([10, 10]), np.array([[5, 5], [5, 5], [3, 3]]), np.array([0, 0]))
    assert eb.solve(inst, "ff").value == 1.0
    inst.demand[0] = [1, 1]
    assert eb.solve(inst, "ff").value == pytest.approx(0.9)
    with pytest.raises(ValueError, match="negative"):
        eb.solve(PackingInstance(np.array([10, 10]), np.array([[-5, 5], [5, 5]]), np.array([0, 0])), "ff")
    twin = copy.deepcopy(eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0])
    twin.demand[:] = 0
    assert eb.solve(twin, "ff").value == 0.0


def test_every_instance_given_to_the_api_is_checked_as_a_file_would_be():
    """Only instances with writable arrays were built again: one made with
    the class over read-only arrays (a negative demand, a job wider than the
    machine: ff and cpsat then disagreed) or with ``dataclasses.replace``
    (an unknown objective, a demand cut short beside its estimates) was
    solved unchecked, and one made of lists failed inside a method."""
    import dataclasses

    import numpy as np

    from epochbench.instances.core import InstanceError
    from epochbench.instances.packing import PackingInstance

    def ro(a):
        a = np.array(a)
        a.setflags(write=False)
        return a

    i0 = eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    for bad, says in ((PackingInstance(capacity=ro([10]), demand=ro([[-3], [12]]), used=ro([0])), "negative entry"),
                      (dataclasses.replace(i0, objective="bogus"), "field 'objective' must be one of"),
                      (dataclasses.replace(i0, demand=i0.demand[:4]), "field 'estimate' must have length 4"),
                      (dataclasses.replace(i0, meta=[1]), "field 'meta' must be an object")):
        for call in (lambda: eb.solve(bad, "ff"), lambda: eb.score([bad], ["ff"])):
            with pytest.raises(InstanceError, match=says):
                call()
    lists = PackingInstance(capacity=[10], demand=[[3]], used=[0], meta={"name": "lists"})
    assert eb.solve(lists, "ff").value == pytest.approx(0.3)
    with pytest.raises(InstanceError, match="negative entry"):                      # nor saved unchecked
        eb.save(PackingInstance(capacity=ro([10]), demand=ro([[-3]]), used=ro([0]), meta={"name": "neg"}), "x.json")


def test_save_writes_nothing_load_would_refuse_and_overwrite_is_a_bool(tmp_path):
    """``eb.save`` wrote a NaN in ``meta`` that ``eb.load`` refused, and
    ``overwrite="no"`` (truthy) overwrote."""
    import dataclasses

    from epochbench.instances.core import InstanceError
    i0 = eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    with pytest.raises(InstanceError, match=r"field 'meta.x' holds nan .*: not written"):
        eb.save(dataclasses.replace(i0, meta={"name": "a", "x": float("nan")}), tmp_path / "a.json")
    assert not (tmp_path / "a.json").exists()
    eb.save(i0, tmp_path / "b.json")
    with pytest.raises(ValueError, match="overwrite: expected True or False, got 'no'"):
        eb.save(i0, tmp_path / "b.json", overwrite="no")
    # a family: every file checked before the first is written (a retry was refused: 'already holds')
    a, b = eb.generate("leinberger", n=8, k=2, count=2, seed=1)
    with pytest.raises(InstanceError, match=r"-001\.json: field 'meta.x' holds nan"):
        eb.save([a, dataclasses.replace(b, meta={**b.meta, "x": float("nan")})], tmp_path / "fam")
    assert not (tmp_path / "fam").exists()
    eb.save([a, b], tmp_path / "fam")
    eb.save(dataclasses.replace(a, meta={"name": "c", "flag": np.True_}), tmp_path / "c.json")   # json's TypeError
    assert eb.load(tmp_path / "c.json").meta["flag"] is True
    with pytest.raises(InstanceError, match=r"d\.json: not written: .*set"):
        eb.save(dataclasses.replace(a, meta={"name": "d", "s": {1, 2}}), tmp_path / "d.json")


def test_a_runs_summary_refuses_another_streams_workload():
    """``run.summary(workload=other)`` took the other stream's capacity:
    a utilization of 13.6 and a negative capacity loss."""
    from epochbench.instances.jobs import make_workload
    jobs = {"id": [1, 2, 3], "submit": [0, 1, 2], "runtime": [50, 30, 40], "estimate": [60, 40, 40],
            "procs": [48, 32, 16]}
    w = make_workload(jobs, [64])
    run = eb.simulate(w, "easy")
    assert run.summary(workload=w) == run.summary()
    other = make_workload({"id": [1], "submit": [0], "runtime": [5], "procs": [3]}, [4])
    with pytest.raises(ValueError, match=r"workload: its capacity \[4\] and resources \('procs',\) are not this "
                                         r"run's \[64\]"):
        run.summary(workload=other)
    with pytest.raises(ValueError, match="workload: expected the run's Workload"):
        run.job_table(workload="x")
    assert run.summary(workload=[64]) == run.summary()                 # a bare capacity, as metrics take one
    two = {**jobs, "res_mem": [1, 2, 3]}                                # the same capacity, other resources
    mem = eb.simulate(make_workload(two, [64, 8]), "easy")
    gpu = make_workload({k: v for k, v in two.items() if k != "res_mem"} | {"res_gpu": [1, 2, 3]}, [64, 8])
    with pytest.raises(ValueError, match=r"resources \('procs', 'gpu'\) are not this run's"):  # a KeyError before
        mem.summary(workload=gpu)


def test_score_reads_none_as_the_default_limits_as_solve_does():
    """``eb.score(..., threads=None)`` passed the check, then every exact
    row failed at run time (a TypeError, 'threads must be an integer')."""
    fam = eb.generate("leinberger", n=6, k=2, count=1, seed=3)
    table = eb.score(fam, ["ff", "cpsat", "mkp-bb"], threads=None, time_limit=None)
    assert (table["status"] != "error").all() and (table.loc[table.method != "ff", "status"] == "optimal").all()
    assert eb.validate(lambda inst: [], "packing", count=1, time_limit=None).ok


@pytest.mark.parametrize("seed", [2**31, 2**40])
def test_a_methods_seed_past_32_bits_is_one_line(seed):
    """CP-SAT's seed is 32-bit: 2**40 ended in a multi-line pybind error."""
    inst = eb.generate("leinberger", n=8, k=2, count=1, seed=4)[0]
    with pytest.raises(ValueError, match=r"packing method 'cpsat': seed=\d+: must be an integer from 0 to 2\*\*31 - 1"):
        eb.solve(inst, "cpsat", time_limit=1, seed=seed)
    assert eb.solve(inst, "cpsat", time_limit=1, seed=2**31 - 1).status == "optimal"
    etc = eb.generate("braun-range", tasks=10, machines=3, count=1, seed=1)[0]    # numpy's seeds: any size
    assert eb.solve(etc, "sa", time_limit=0.2, seed=seed).status == "feasible"


@pytest.mark.parametrize("meta", [[1], "abc"])
def test_a_meta_that_is_no_dict_is_one_line_naming_it(meta):
    """``build(..., meta=[1])`` raised dict()'s TypeError ('cannot convert
    dictionary update sequence element'), naming no field."""
    from epochbench.instances.core import InstanceError
    from epochbench.instances.knapsack import KnapsackInstance
    from epochbench.instances.packing import PackingInstance
    for build in (lambda: PackingInstance.build([10], [[1]], meta=meta),
                  lambda: KnapsackInstance.build([3], [[1]], [1], meta=meta)):
        with pytest.raises(InstanceError, match=r"field 'meta' must be a dict \(an object\), got "):
            build()


def test_a_runs_step_methods_are_loaded_before_its_clock(monkeypatch):
    """A generic-engine policy's selector (EASY backfilled by BB, as
    bb-easy ran before its compiled loop) and the farm's knapsack and
    matcher loaded inside the run's clock: 0.45 s of bb-easy's first run of
    0.47 s was loading."""
    from epochbench.instances import registry
    from epochbench.instances.jobs import make_workload
    loaded = []
    real = registry.load
    monkeypatch.setattr(registry, "load", lambda family, name: (loaded.append((family, name)), real(family, name)))
    jobs = {"id": [1, 2, 3], "submit": [0, 1, 2], "runtime": [50, 30, 40], "estimate": [60, 40, 40],
            "procs": [48, 32, 16]}
    eb.simulate(make_workload(jobs, [64]), "easy", selector="bb")
    assert loaded == [("packing", "bb")]
    loaded.clear()
    eb.simulate(None, "cs-ni-np", machine="farm", farm_jobs=10)
    assert ("knapsack", "greedy-mkp") in loaded and ("assignment", "mfs") in loaded
    # a policy of one's own may have a 'load' of its own (a system load: the hook was named load)
    from epochbench.sim.policies import EASY
    from epochbench.sim.pool import simulate_pool

    class Mine(EASY):
        name = "mine"

        def __init__(self, load=0.9, **kw):
            super().__init__(**kw)
            self.load = load
    w = make_workload(jobs, [64])
    assert simulate_pool(w.table, [64], Mine(selector="bb")).n == 3


@pytest.mark.parametrize("kw, says", [(dict(shadow=5, extra=[40]), r"field 'extra' has 40 on resource 0, beyond its "
                                                                   r"capacity 10"),
                                      (dict(shadow=-5, extra=[4]), r"field 'shadow' \(-5\) is before 'now' \(0\)")])
def test_a_reservation_beyond_the_machine_or_in_the_past_is_refused(kw, says):
    """``extra=[40]`` on a capacity of 10 and a shadow before now were
    built without a word."""
    from epochbench.instances.core import InstanceError
    from epochbench.instances.packing import PackingInstance
    with pytest.raises(InstanceError, match=says):
        PackingInstance.build([10], [[3]], estimate=[1], **kw)


@pytest.mark.parametrize("name, kw, says", [
    ("a:b", {}, "without commas, spaces, ':', '/' or '='"), ("a/b", {}, "':', '/' or '='"),
    ("a=b", {}, "':', '/' or '='"), ("fine-name", {"origin": 5}, "origin: expected text"),
    ("ffd-sum", {}, "epochs has a built-in 'ffd-sum'; choose another name"),
    # these were taken: --methods -x read as an option, NA and null as missing in compare's CSVs
    ("-x", {}, "starts with '-'"), ("--methods", {}, "starts with '-'"),
    ("a\u200bb", {}, "control or invisible character"), ("a\x00b", {}, "control or invisible character"),
    ("NA", {}, "reads as a missing value"), ("null", {}, "reads as a missing value"),
    ("nan", {}, "reads as a missing value"), ("None", {}, "reads as a missing value"),
    ("FF", {}, "differs from packing's built-in 'ff' only in case or width"),
    ("\uff26\uff26", {}, "differs from packing's built-in 'ff' only in case or width"),
    # its epochs twin beside epochs' built-in ffd-sum: accepted, and epochs then had both
    ("FFD-SUM", {}, "differs from epochs's built-in 'ffd-sum' only in case or width"),
    ("Bc-L2", {}, "differs from epochs's built-in 'bc-l2' only in case or width")])
def test_register_refuses_names_and_origins_that_would_clash(name, kw, says):
    """``:`` (entry points' FAMILY:NAME, validate's yours:NAME), ``/`` and
    ``=`` (``--param NAME=VALUE``) were taken, so was ``origin=5``; a
    packing heuristic named like a built-in epochs method silently served
    no epochs."""
    with pytest.raises(ValueError, match=re.escape(says) if "(" not in says else says):
        eb.register("packing", name, **kw)(lambda inst: ())


def _small_workload():
    from epochbench.instances.jobs import make_workload
    return make_workload({"id": [1, 2, 3], "submit": [0, 1, 2], "runtime": [5, 3, 4], "estimate": [5, 4, 4],
                          "procs": [1, 2, 1]}, [4])


@pytest.mark.parametrize("call, says", [
    (lambda w, fam: eb.score(fam, ["ff", "ff"]), "method 'ff' appears twice (methods=)"),
    (lambda w, fam: eb.simulate(w, "gs", selector="ff"), "selector= applies to the space-shared policies only"),
    (lambda w, fam: eb.simulate(w, "ff-easy", selector="bb"), "give policy='easy', selector='bb'"),
    (lambda w, fam: eb.simulate(None, "edf", cs_constant=["a=1"]), "cs_constant= applies to policy cs-i-p"),
    (lambda w, fam: eb.score(fam, "ff", scheduler="tcp//head:8786"),
     "scheduler='tcp//head:8786': not a scheduler address"),
])
def test_messages_to_a_python_caller_name_its_keyword_not_the_flag(call, says):
    """They said ``--methods``, ``--selector``, ``--policy easy --selector bb``,
    ``--cs-constant``, ``--scheduler``: options of a command the caller never ran."""
    fam = eb.generate("leinberger", n=4, k=2, count=1, seed=1)
    with pytest.raises(ValueError) as exc:
        call(_small_workload(), fam)
    assert says in str(exc.value) and "--" not in str(exc.value), str(exc.value)


def test_the_command_line_keeps_its_flags_in_the_same_messages(tmp_path, capsys):
    from epochbench.cli import main
    from epochbench.instances.arguments import arg, args
    from epochbench.instances.io import write_family
    assert (arg("nodes", 8), args(policy="easy", selector="bb")) == ("--nodes 8", "--policy easy --selector bb")
    write_family(tmp_path / "fam", eb.generate("leinberger", n=4, k=2, count=1, seed=1), generator="t", params={})
    assert main(["score", str(tmp_path / "fam"), "--methods", "ff,ff", "--workers", "1"]) == 2
    assert "method 'ff' appears twice (--methods)" in capsys.readouterr().err
    (tmp_path / "w.csv").write_text("id,submit,runtime,estimate,procs\n1,0,5,5,1\n2,1,3,4,2\n")
    assert main(["simulate", "--workload", str(tmp_path / "w.csv"), "--policy", "ff-easy", "--selector", "bb"]) == 2
    assert "give --policy easy --selector bb" in capsys.readouterr().err


GOOD = dict(family="packing", method="mine", decision=(0,), value=1.0, status="feasible", seconds=0.0)


@pytest.mark.parametrize("field, bad, says", [
    ("status", "done", "status must be one of ('optimal', 'feasible', 'infeasible', 'timeout'), got 'done'"),
    ("value", "3", "value must be a number, finite or NaN (no decision), or None (solve computes it), got '3'"),
    ("value", float("inf"), "value must be a number, finite or NaN (no decision), or None (solve computes it), "
                            "got inf"),
    ("value", True, "value must be a number, finite or NaN (no decision), or None (solve computes it), got True"),
    ("seconds", "1s", "seconds must be a finite number >= 0 (the wall time), got '1s'"),
    ("seconds", -1, "seconds must be a finite number >= 0 (the wall time), got -1"),
    ("seconds", float("nan"), "seconds must be a finite number >= 0 (the wall time), got nan"),
    ("seconds", float("inf"), "seconds must be a finite number >= 0 (the wall time), got inf"),
    ("seconds", 10**400, f"seconds must be a finite number >= 0 (the wall time), got {10**400}"),   # no OverflowError
    ("value", -10**400, "value must be a number, finite or NaN (no decision), or None (solve computes it), "
                        f"got {-10**400}"),
    ("bound", "9", "bound must be a number or None, got '9'"),
    ("info", ["note"], "info must be a dict, got list"),
    ("family", "", "family must be a non-empty string, got ''"),
    ("family", "pakcing", "family must be one of ('packing', 'epochs', 'knapsack', 'assignment', 'mapping'), "
                          "got 'pakcing'"),
    ("method", None, "method must be a non-empty string, got None"),
])
def test_a_result_a_user_makes_is_checked_field_by_field(field, bad, says):
    """``eb.Result`` took a text value, a list for info or an empty family
    without a word: they failed later, far from the heuristic that made them."""
    with pytest.raises(ValueError) as exc:
        eb.Result(**{**GOOD, field: bad})
    assert str(exc.value) == says


def test_a_results_decision_is_made_tuples_all_the_way_down():
    """A list decision stayed a list inside a frozen Result (changeable after
    its check, unequal to the same decision as a tuple)."""
    bins = [[0, 2], np.array([1])]
    res = eb.Result(**{**GOOD, "family": "epochs", "decision": bins})
    bins[0].append(5)
    assert res.decision == ((0, 2), (1,))
    assert res == eb.Result(**{**GOOD, "family": "epochs", "decision": ((0, 2), (1,))})
    same = (3, 1)
    assert eb.Result(**{**GOOD, "decision": same}).decision is same        # a flat tuple as given
    assert eb.Result(**{**GOOD, "family": "epochs", "decision": (range(0, 2), range(2, 3))}).decision == ((0, 1), (2,))


def test_the_results_the_library_makes_still_pass_the_check():
    import math
    assert math.isnan(eb.Result(**{**GOOD, "decision": (), "value": math.nan, "status": "timeout"}).value)
    assert eb.Result(**{**GOOD, "value": np.int64(3), "seconds": np.float64(0.5), "bound": np.float32(3)}).value == 3
    assert eb.Result(**{**GOOD, "seconds": None, "info": None}).info == {}      # solve measures; no info is {}
    assert eb.Result(**{**GOOD, "status": "optimal", "bound": math.inf}).bound == math.inf   # solve withdraws it


@pytest.mark.parametrize("family", ["packing", "assignment"])
@pytest.mark.parametrize("status", ["feasible", "optimal"])
def test_a_heuristic_may_leave_value_and_info_of_its_result_to_solve(family, status):
    """The README lets a heuristic's Result leave its value to solve (it
    puts what the decision is worth); the field check refused ``value=None``,
    and ``info=None`` ended in a TypeError in solve ('NoneType' object is
    not a mapping) for an optimal claim or an assignment's figures."""
    name = f"test-leaves-{family}-{status}"

    @eb.register(family, name)
    def leaves(inst, **_):
        decision = (0,) if family == "packing" else ((0, 0),)
        return eb.Result(family, name, decision, None, status, None, None, None)

    inst = (eb.generate("leinberger", n=6, k=2, count=1, seed=1) if family == "packing"
            else eb.generate("assign-random", n=4, machines=4, density=1.0, count=1, seed=1))[0]
    res = eb.solve(inst, name)
    assert res.value == inst.value(res.decision) and isinstance(res.info, dict) and res.status == "feasible"


def test_the_multi_queue_message_names_keywords_from_python():
    """It said 'lend=True, --lend' and 'partitions, --partitions' to both."""
    from epochbench.instances.jobs import make_workload
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 3], "estimate": [5, 4], "procs": [1, 3]}, [4])
    with pytest.raises(ValueError) as exc:
        eb.simulate(w, "multi-queue", queue_bounds=[10.0], partitions=[2, 2])
    assert "(lend=True)" in str(exc.value) and "(partitions=)" in str(exc.value) and "--" not in str(exc.value)


def test_selector_options_reach_the_step_a_policy_takes_by_its_name():
    """``eb.simulate(w, "bb-easy", selector_options={"fullness": "excess"})``
    was refused ('given without a selector'), though bb-easy's step is bb
    and the leinberger experiment runs exactly that arm."""
    from epochbench.instances.workloads import workload
    from epochbench.instances.jobs import make_workload
    from epochbench.sim.pool import simulate_pool
    s = workload(model="feitelson96", jobs=300, seed=3, k=2)
    w = make_workload(s.jobs, s.capacity, resources=("procs", "1"))
    for policy in ("bl-easy", "bb-easy"):
        mine = eb.simulate(w, policy, selector_options={"fullness": "excess"})
        ref = simulate_pool(w.table, w.capacity, policy, selector_options={"fullness": "excess"})
        assert mine.jobs["start"].tolist() == ref.jobs["start"].tolist()
    with pytest.raises(ValueError, match="fullness"):
        eb.simulate(w, "bb-easy", selector_options={"fullness": "nope"})
    with pytest.raises(ValueError, match="given without a selector"):
        eb.simulate(w, "easy", selector_options={"fullness": "excess"})


def test_score_splits_one_string_of_methods_as_the_command_line_does():
    """``--methods "ff, bl"`` scores both; eb.score split on commas only and
    refused ' bl'."""
    fam = eb.generate("leinberger", n=8, k=2, count=2, seed=1)
    for methods in ("ff, bl", "ff bl", "ff,bl", ["ff", "bl"]):
        assert sorted(set(eb.score(fam, methods)["method"])) == ["bl", "ff"], methods


@pytest.mark.parametrize("key, default", [("n", 64), ("k", 4), ("count", 10)])
def test_generate_refuses_none_for_a_parameter_with_a_default(key, default):
    """n=None gave 64 jobs, count=None 10 instances: None stood for the
    default without a word, as seed=None did."""
    with pytest.raises(ValueError, match=rf"^{key}: got None, which is no value of it \(leave {key} out for the "
                                         rf"default, {default}\)$"):
        eb.generate("leinberger", **{key: None})


def test_unknown_names_suggest_close_ones_and_name_their_argument():
    """A typo listed every name; a selector's or a matcher's message did not
    say which argument gave it."""
    from epochbench.instances.jobs import make_workload
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "estimate": [5, 5], "procs": [1, 1]}, [4])
    inst = eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    with pytest.raises(KeyError, match=r"^no method 'fff' for family 'packing' \(did you mean 'ff'\?\); registered: "):
        eb.solve(inst, "fff")
    with pytest.raises(KeyError, match=r"^no policy 'eazy' \(did you mean 'easy'\?\); policies: pool: "):
        eb.simulate(w, "eazy")
    with pytest.raises(KeyError, match=r"^selector='fff': no method 'fff' for family 'packing' \(did you mean 'ff'"):
        eb.simulate(w, "easy", selector="fff")
    with pytest.raises(KeyError, match=r"^matcher='imsf': no method 'imsf' for family 'assignment' \(did you mean "
                                       r"'imfs'"):
        eb.simulate(None, "cs-i-p", farm_jobs=10, seed=1, matcher="imsf")


def test_a_method_taking_no_instance_is_refused_when_registered():
    """It registered, then every solve raised "takes 0 positional arguments
    but 1 was given", naming neither the method nor the instance."""
    def nothing():
        return []
    with pytest.raises(ValueError, match=r"^method 'test-noarg' for family 'packing': its function must take the "
                                         r"instance as its first positional argument"):
        eb.register("packing", "test-noarg")(nothing)
    eb.register("packing", "test-varargs")(lambda *a: [])         # *args takes it


def test_save_of_a_job_stream_says_how_to_write_one(tmp_path):
    """A Stream is a namedtuple: save read it as a list of instances and said
    'expected an epochbench instance ..., got DataFrame'."""
    s = eb.generate("workload", jobs=30, seed=1)
    with pytest.raises(ValueError, match=r"^instance: a job stream \(a Stream, from eb.generate\('workload'\)\) is no "
                                         r"instance: write it with epochbench.instances.jobs.save_workload"):
        eb.save(s, tmp_path / "x.json")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kw, message", [
    (dict(progress=3), "^progress: expected a function, got 3$"),
    (dict(on_pass="x"), "^on_pass: expected a function, got 'x'$"),
    (dict(selector="cpsat", selector_options={"time_limit": -1}), "^selector_options: time_limit: must be a "),
])
def test_simulate_names_the_argument_of_a_bad_hook_or_selector_limit(kw, message):
    """progress=3 raised "'int' object is not callable" mid-run; a bad
    selector time limit did not say it came from selector_options."""
    from epochbench.instances.jobs import make_workload
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "estimate": [5, 5], "procs": [1, 1]}, [4])
    with pytest.raises(ValueError, match=message):
        eb.simulate(w, "easy", **kw)


@pytest.mark.parametrize("policy, kw, message", [
    ("easy", dict(on_pass=lambda: None), r"^on_pass: the pool machine calls it as on_pass\(time, machine, queue, "
                                         r"started\); <lambda>\(\) cannot take that$"),
    ("easy", dict(progress=lambda arrived: None), r"^progress: the pool machine calls it as progress\(arrived, now\); "),
    ("gs", dict(on_pass=lambda t, m, q, s: None), r"^on_pass: the gang machine calls it as on_pass\(time, sim\); "),
    (None, dict(on_pass=lambda view: None), r"^on_pass: the farm machine calls it as on_pass\(view, plan\); "),
    (None, dict(progress=lambda arrived, now: None), r"^progress: the farm machine calls it as progress\(done, now, "
                                                     r"total\); "),
])
def test_simulate_refuses_a_hook_that_cannot_take_its_arguments_before_the_run(policy, kw, message):
    """on_pass=lambda: None failed mid-run with "<lambda>() takes 0
    positional arguments but 4 were given", naming neither the hook nor
    what it is given."""
    from epochbench.instances.jobs import make_workload
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "estimate": [5, 5], "procs": [1, 1]}, [4])
    calls = []
    with pytest.raises(ValueError, match=message):
        if policy is None:
            eb.simulate(None, "edf", farm_jobs=5, seed=1, **{"progress": lambda *a: calls.append(a), **kw})
        else:
            eb.simulate(w, policy, progress=lambda *a: calls.append(a), **kw) if "progress" not in kw else \
                eb.simulate(w, policy, **kw)
    assert calls == []                                    # refused before the run
    seen = []
    eb.simulate(w, "easy", on_pass=lambda *args: seen.append(len(args)), progress=lambda arrived, now=0: None)
    assert seen and set(seen) == {4}                      # *args and defaults take them
    farm = []
    eb.simulate(None, "edf", farm_jobs=5, seed=1, progress=lambda done, now, total: farm.append(total))
    assert farm and set(farm) == {5}


def test_simulate_refuses_seed_none_for_the_farms_stream():
    """seed=None was dropped as "not given": the stream of seed 0, silently
    (eb.generate refuses it)."""
    with pytest.raises(ValueError, match=r"^seed: must be an integer >= 0, got None \(seeds are explicit"):
        eb.simulate(None, "edf", farm_jobs=20, seed=None)
    assert eb.simulate(None, "edf", farm_jobs=20, seed=1).n == 20


@pytest.mark.parametrize("name", [n for n in FACE if n not in ("Result", "SimResult")])
def test_every_face_function_has_numpydoc_sections(name):
    """Each function of the face documents its parameters, what it returns
    and what it raises, in numpydoc sections (as the heuristics do)."""
    import inspect
    doc = inspect.getdoc(getattr(eb, name)) or ""
    sections = ["Parameters\n----------", "Returns\n-------"] + (["Raises\n------"] if name != "register" else [])
    missing = [s.split("\n")[0] for s in sections if s not in doc]
    assert not missing, f"{name}: no {', '.join(missing)} section"
    params = [p for p in inspect.signature(getattr(eb, name)).parameters if p not in ("params", "options")]
    undocumented = [p for p in params if not re.search(rf"^{p}\b|, {p}\b", doc, re.M)]
    assert not undocumented, f"{name}: parameters {undocumented} not in its Parameters section"


def test_validate_table_has_one_column_order_whatever_the_heuristic_did():
    """A heuristic that raised put ``short`` after ``seconds``: its row
    came first and lacked the column."""
    def broken(inst):
        raise RuntimeError("no")

    good = eb.validate(lambda inst: [], "packing", count=1, seed=1, time_limit=5.0)
    bad = eb.validate(broken, "packing", count=1, seed=1, time_limit=5.0)
    assert not bad.ok and list(bad.table.columns) == list(good.table.columns)
    assert list(good.table.columns)[-2:] == ["short", "seconds"]


@pytest.mark.parametrize("call, message", [
    (lambda fam: eb.score(fam, "ff", timelimit=5), r"^score: got an unexpected keyword argument 'timelimit'; it takes "
                                                    r"instances, methods, time_limit, .* \(did you mean 'time_limit'\?\)$"),
    (lambda fam: eb.save(fam[0], "x.json", overwite=True), r"^save: got an unexpected keyword argument 'overwite'; "
                                                           r"it takes instance, path, overwrite \(did you mean "),
    (lambda fam: eb.validate(lambda inst: [], cnt=3), r"^validate: got an unexpected keyword argument 'cnt'; .* "
                                                       r"\(did you mean 'count'\?\)$"),
    (lambda fam: eb.register("packing", "x", knd="heuristic"), r"^register: got an unexpected keyword argument 'knd'"),
    (lambda fam: eb.solve(), r"^solve: missing a required argument: 'instance'; it takes instance, method$"),
])
def test_a_keyword_a_face_function_does_not_take_is_one_value_error(call, message, tmp_path, monkeypatch):
    """The README promises one ValueError for a bad argument; a keyword the
    function does not have was Python's TypeError, naming neither the
    valid keywords nor the one meant."""
    monkeypatch.chdir(tmp_path)
    fam = eb.generate("leinberger", n=6, k=2, count=1, seed=1)
    with pytest.raises(ValueError, match=message):
        call(fam)
    assert not list(tmp_path.iterdir())


def test_a_result_is_hashable_and_equal_results_hash_alike():
    """``hash(result)`` raised TypeError (the frozen dataclass hashed its
    ``info`` dict): no set of results, no dict keyed by them."""
    import epochbench as eb
    a = eb.Result("packing", "m", (0,), 1.0, "feasible", 0.1, None, {"note": "x"})
    b = eb.Result("packing", "m", (0,), 1.0, "feasible", 0.1, None, {"note": "x"})
    c = eb.Result("packing", "m", (0,), 1.0, "feasible", 0.1, None, {"note": "y"})
    assert hash(a) == hash(b) and len({a, b}) == 1
    assert a != c and len({a, c}) == 2
    inst = eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    assert len({eb.solve(inst, "ff"), eb.solve(inst, "bl")}) == 2
