"""Input checks of ``score``, ``solve`` and ``validate`` and of the Python
face: a bad option, parameter or argument is one clear error before any
work, and references that contradict a proved bound are a disagreement."""
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import epochbench as eb
from epochbench.cli import main
from epochbench.instances.knapsack import KnapsackInstance
from epochbench.instances.packing import EpochsInstance
from epochbench.scoring import SolverDisagreement, format_table, reference
from epochbench.validation import Verdict, verdict_table


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def fam():
    """Two small packing epochs on K = 4 resources."""
    return eb.generate("leinberger", n=8, k=4, count=2, seed=1)


@pytest.fixture
def folder(tmp_path, fam):
    out = tmp_path / "fam"
    out.mkdir()
    for inst in fam:
        eb.save(inst, out / f"{inst.name}.json")
    return out


def _epochs(name="e1", **meta):
    return EpochsInstance.build([15, 16], [[5, 3], [5, 3], [3, 5], [1, 4], [5, 3], [1, 2]],
                                meta={"name": name, **meta})


# ---- 3: a claimed optimum beyond a proved bound is a disagreement ------------------------------
def test_score_reference_optimum_above_the_instances_lp_bound_is_a_disagreement(tmp_path, capsys):
    inst = KnapsackInstance.build([10, 10], [[4, 3], [5, 6], [3, 3]], [7.0, 9.0, 4.0],
                                  meta={"name": "mk-1", "dataset": "mine", "lp_bound": 17.5})
    eb.save(inst, tmp_path / "mk-1.json")
    ref = tmp_path / "ref_high.csv"
    ref.write_text("instance,optimum\nmk-1,99999\n")
    code, _, err = run(capsys, "score", tmp_path / "mk-1.json", "--methods", "greedy-mkp", "--reference", ref,
                       "--workers", "1", "--out", tmp_path / "s")
    assert code == 1
    row = pd.read_csv(tmp_path / "s.csv").iloc[0]
    assert row["error"].startswith("disagreement: ") and "99999" in row["error"] and "lp_bound" in row["error"]
    assert np.isnan(row["gap"]) and row["gap_kind"] == "no bound"
    assert "disagreement" in err


@pytest.mark.parametrize("case", ["max-file-optimum-vs-meta-upper", "max-meta-optimum-vs-file-upper",
                                  "min-file-optimum-vs-own-lower-bound", "min-meta-optimum-vs-meta-lower"])
def test_a_claimed_optimum_beyond_any_valid_bound_is_refuted(tmp_path, case):
    ref = tmp_path / "ref.csv"
    if case.startswith("max"):
        meta = {"upper_bound": 17.0} if case == "max-file-optimum-vs-meta-upper" else {"optimum": 20.0}
        inst = KnapsackInstance.build([10, 10], [[4, 3], [5, 6], [3, 3]], [7.0, 9.0, 4.0],
                                      meta={"name": "k", **meta})
        ref.write_text("instance,optimum\nk,20\n" if case == "max-file-optimum-vs-meta-upper"
                       else "instance,upper_bound\nk,17\n")
    else:
        inst = _epochs("e", **({"optimum": 1.0, "lower_bound": 2.0} if case.endswith("meta-lower") else {}))
        ref.write_text("instance,optimum\ne,1\n")     # the volume bound alone needs 2 epochs
    files = [] if case == "min-meta-optimum-vs-meta-lower" else [ref]
    with pytest.raises(SolverDisagreement, match="better than"):
        reference(inst, [], files)


def test_a_claimed_optimum_that_meets_the_bounds_stays_the_reference(tmp_path):
    ref = tmp_path / "ref.csv"
    ref.write_text("instance,optimum\nk,16\n")
    inst = KnapsackInstance.build([10, 10], [[4, 3], [5, 6], [3, 3]], [7.0, 9.0, 4.0],
                                  meta={"name": "k", "lp_bound": 17.5})
    got = reference(inst, [], [ref])
    assert (got.kind, got.bound) == ("optimum", 16.0)


# ---- 6: eb.score's params ----------------------------------------------------------------------
@pytest.mark.parametrize("params, match", [
    ({"window": 2, "fullness": "bogus"}, r"'window' is not a family"),
    ({"pakcing": {"bl": {"window": 1}}}, r"'pakcing' is not a family"),
    ({"packing": {"bl": {"nosuch": 1}}}, r"bl' has no parameter 'nosuch'; it accepts: window, fullness"),
    ([1, 2], r"expected \{family: \{method"),
    ({"packing": [1]}, r"params\['packing'\]: expected \{method"),
    ({"packing": {"bb": {"fullness": "off"}}}, r"'bb' is not a method scored here"),
    ({"epochs": {"bl": {"window": 1}}}, r"no epochs instance is scored here"),
    ({"packing": {"bl": {"window": -1}}}, r"'window' must be an integer >= 0"),
    ({"packing": {"bl": {"fullness": "bogus"}}}, r"'fullness' must be one of"),
    ({"packing": {"bl": {"window": "2"}}}, r"window='2' expects an integer"),
    ({"packing": {"bl": {"time_limit": 2}}}, r"time_limit is an argument of score itself"),
])
def test_api_score_refuses_misplaced_or_bad_params(fam, monkeypatch, params, match):
    import epochbench.scoring as scoring
    monkeypatch.setattr(scoring, "run_methods", lambda *a, **k: pytest.fail("solved before the check"))
    with pytest.raises(ValueError, match=match):
        eb.score(fam, ["bl"], params=params)


def test_api_score_takes_good_params_per_family(fam):
    table = eb.score(fam, ["bl", "ff"], params={"packing": {"bl": {"window": 2, "fullness": "off"}}})
    assert list(table["error"]) == [""] * 4


# ---- 7: option values are checked before anything is renamed or written -----------------------
@pytest.mark.parametrize("param, match", [("window=-1", "'window' must be an integer >= 0"),
                                          ("resource=4", r"'resource' must be an integer in 0\.\.3"),
                                          ("fullness=bogus", "'fullness' must be one of")])
def test_score_refuses_a_bad_parameter_value_before_writing(capsys, folder, param, match):
    method = {"window": "bl", "resource": "los", "fullness": "bb"}[param.split("=")[0]]
    assert run(capsys, "score", folder, "--methods", "ff", "--workers", "1")[0] == 0
    before = sorted(p.name for p in folder.iterdir())
    code, out, err = run(capsys, "score", folder, "--methods", method, "--param", param, "--workers", "1")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and f"--param {param}" in err
    assert re.search(match, err)
    assert sorted(p.name for p in folder.iterdir()) == before          # nothing renamed, nothing written


@pytest.mark.parametrize("kw, match", [({"time_limit": -1}, "time_limit: must be a positive finite number"),
                                       ({"time_limit": 0}, "time_limit: must be a positive finite number"),
                                       ({"time_limit": float("nan")}, "positive finite"),
                                       ({"threads": 0}, r"threads: must be an integer from 1 to 1024"), ({"threads": 20000}, r"threads: must be an integer from 1 to 1024, got 20000")])
def test_api_score_checks_its_limits_before_solving(fam, kw, match):
    with pytest.raises(ValueError, match=match):
        eb.score([fam[0]], ["cpsat"], **kw)


@pytest.mark.parametrize("limit", [np.int64(2), np.float32(1.5), Fraction(3, 2)])
def test_numpy_and_fraction_limits_reach_every_exact_method(fam, limit):
    """The public check takes any real number; every exact method gets it
    as a float (mkp-bb and cg refused numpy numbers and Fractions from inside
    the solve, and score recorded each of their rows as an error)."""
    epochs = _epochs()
    for inst, method in [(fam[0], "mkp-bb"), (fam[0], "cpsat"), (epochs, "cg"), (epochs, "milp-highs")]:
        res = eb.solve(inst, method, time_limit=limit, threads=np.int64(1))
        assert res.status == "optimal", (method, res.status)
    table = eb.score([fam[0]], ["ff", "mkp-bb"], time_limit=limit)
    assert set(table["status"]) == {"feasible", "optimal"}


# ---- 12: --out names a folder -----------------------------------------------------------------
def test_score_out_existing_folder_or_trailing_separator_writes_inside(capsys, folder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "so").mkdir()
    for out in ("so", "so2/"):
        code, stdout, _ = run(capsys, "score", folder, "--methods", "ff", "--workers", "1", "--out", out)
        assert code == 0
        name = out.rstrip("/")
        assert sorted(p.name for p in (tmp_path / name).iterdir() if not p.name.startswith(".")) == \
            ["scores.csv", "scores.parquet", "scores.run.json"]
        assert f"wrote {name}/scores.csv" in stdout
    assert not list(tmp_path.glob("so*.csv"))                      # nothing beside the folders
    assert run(capsys, "score", folder, "--methods", "ff", "--workers", "1", "--out", "pre")[0] == 0
    assert (tmp_path / "pre.csv").exists()                          # a prefix stays a prefix


def test_score_help_says_what_out_does(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "existing folder" in " ".join(capsys.readouterr().out.split())


# ---- 13: the Python face's errors --------------------------------------------------------------
def test_api_score_takes_one_reference_path(fam, tmp_path):
    ref = tmp_path / "ref1.csv"
    ref.write_text(f"instance,best_known\n{fam[0].name},{float(fam[0].weights().sum())!r}\n")   # every job: 0.16
    for given in (str(ref), ref):
        table = eb.score([fam[0]], ["ff"], references=given)
        assert table["ref_source"].iloc[0] == "ref1.csv" and table["gap_kind"].iloc[0] == "best known"
    with pytest.raises(ValueError, match="references"):
        eb.score([fam[0]], ["ff"], references=5)


@pytest.mark.parametrize("call, match", [
    (lambda f: eb.score([1, 2], ["ff"]), r"instances\[0\]: expected an epochbench instance"),
    (lambda f: eb.score(f[0], ["ff"]), r"instances: expected a list of instances"),
    (lambda f: eb.save({"a": 1}, "x.json"), r"instance: expected an epochbench instance .*got dict"),
    (lambda f: eb.solve("x.json", "ff"), r"instance: expected an epochbench instance .*got str; a file\? "
                                         r"epochbench.load\(path\) reads one"),
    (lambda f: eb.solve(f[0], "ff", foo=1), r"packing method 'ff' has no parameter 'foo'; it accepts: none"),
    (lambda f: eb.solve(f[0], "bl", windw=1), r"it accepts: window, fullness"),
    (lambda f: eb.solve(f[0], "cpsat", time_limit=0), r"time_limit: must be a positive finite number, got 0"),
    (lambda f: eb.solve(f[0], "cpsat", threads=0), r"threads: must be an integer from 1 to 1024, got 0"),
    (lambda f: eb.solve(f[0], "ff", threads=1.5), r"threads: must be an integer from 1 to 1024"),
    (lambda f: eb.solve(f[0], "cpsat", threads=20000), r"threads: must be an integer from 1 to 1024, got 20000"),
    (lambda f: eb.solve(f[0], "mkp-bb", nodes=0), r"nodes"),
    (lambda f: eb.validate(lambda i: [], "packing", count=1, exact="ff"), r"exact: 'ff' is a heuristic"),
    (lambda f: eb.validate(lambda i: [], "packing", count=-1), r"count: must be an integer from 0 to 1,000,000"),
    (lambda f: eb.validate(lambda i: [], "packing", count=10**11), r"count: must be an integer from 0 to 1,000,000"),
    (lambda f: eb.validate(lambda i: [], "packing", seed=-1), r"seed: must be an integer >= 0"),
    (lambda f: eb.register("bogus", "x"), r"family: expected one of packing, epochs"),
])
def test_api_bad_arguments_are_one_line_value_errors(fam, tmp_path, monkeypatch, call, match):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=match) as info:
        call(fam)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("threads", [0, -1, 2.5, "2", True, 20000])
@pytest.mark.parametrize("method", ["cpsat", "ff"])
def test_registry_solve_refuses_bad_threads_as_the_api_does(fam, method, threads):
    """The library's lower layer (what the simulators and a plug-in call)
    refuses them too: CP-SAT took 0 and -1 for its default and 2.5 ran."""
    from epochbench.instances import registry
    with pytest.raises(ValueError, match=rf"^threads: must be an integer from 1 to 1024, got {re.escape(repr(threads))}$"):
        registry.solve(fam[0], method, time_limit=1, threads=threads)
    for fine in (np.int64(2), None):                 # None: the default, as time_limit=None is
        assert registry.solve(fam[0], method, time_limit=5, threads=fine).status in ("optimal", "feasible")


def test_api_solve_keeps_python_objects_the_cli_cannot_give(fam):
    start = eb.solve(fam[0], "ff")
    assert eb.solve(fam[0], "cpsat", start=start, time_limit=5).status == "optimal"
    assert eb.solve(fam[0], "cpsat", solver_params={"log_search_progress": False}, time_limit=5).status == "optimal"
    mapping = eb.generate("braun-range", tasks=5, machines=2, count=1)[0]
    assert eb.solve(mapping, "ga", seed=np.random.default_rng(1), max_iter=3).status == "feasible"


# ---- 14: BL's window, solver_params on the command line ----------------------------------------
def test_bl_window_beyond_k_is_accepted_and_the_message_says_so(fam, capsys, folder):
    f = sorted(folder.glob("*.json"))[0]
    assert run(capsys, "solve", f, "--method", "bl", "--param", "window=10")[0] == 0     # K = 4: checks nothing
    code, _, err = run(capsys, "solve", f, "--method", "bl", "--param", "window=-1")
    assert code == 2 and "w >= K check no resource" in err


def test_solver_params_is_python_only_on_the_command_line(capsys, folder):
    f = sorted(folder.glob("*.json"))[0]
    code, _, err = run(capsys, "solve", f, "--method", "cpsat", "--param", "solver_params=x")
    assert code == 2 and "from Python only" in err
    code, _, err = run(capsys, "solve", f, "--method", "cpsat", "--param", "nosuch=1")
    assert code == 2 and "it accepts: seed, warm (from Python only: start, solver_params)" in err


def test_epochs_heuristics_check_the_packing_heuristics_parameters(capsys, tmp_path):
    eb.save(_epochs(), tmp_path / "e1.json")
    code, _, err = run(capsys, "solve", tmp_path / "e1.json", "--method", "bl", "--param", "nosuch=1")
    assert code == 2 and "epochs method 'bl' has no parameter 'nosuch'; it accepts: window, fullness" in err
    with pytest.raises(ValueError, match=r"'resource' must be an integer in 0\.\.1"):
        eb.score([_epochs()], ["los"], params={"epochs": {"los": {"resource": 2}}})


# ---- 15: one mark for "no time" ----------------------------------------------------------------
def test_tables_mark_a_missing_time_with_a_dash():
    rows = pd.DataFrame({"instance": ["a", "a"], "method": ["mine", "ff"], "ok": [False, True],
                         "gap": [np.nan, 0.0], "gap_kind": ["optimum", "optimum"], "seconds": [np.nan, 0.001]})
    text = verdict_table(Verdict(rows, ["a: failed"]))
    assert "nan" not in text and "1.000" in text
    mine = text.splitlines()[1].split()
    assert mine[0] == "mine" and mine[-1] == "-"
    summary = pd.DataFrame({"family": ["packing"], "method": ["bl"], "instances": [2], "mean_gap": [np.nan],
                            "max_gap": [np.nan], "at_bound": [np.nan], "median_s": [np.nan],
                            "gap_vs": ["no bound"], "unproven": [2], "beats": [0]})
    assert "nan" not in format_table(summary)


def test_cli_threads_beyond_the_maximum_are_one_line(fam, capsys):
    from epochbench.cli import main
    with pytest.raises(SystemExit) as exit_:
        main(["solve", "any.json", "--method", "cpsat", "--threads", "20000"])
    assert exit_.value.code == 2
    assert "--threads: must be an integer from 1 to 1024, got 20000" in capsys.readouterr().err


def test_a_meta_bound_on_the_side_that_bounds_nothing_is_said_to_be_ignored(capsys, tmp_path, fam):
    """A lower_bound in a maximising instance's meta bounds nothing: solve and
    score say so on stderr, as they do of a reference file's (it was ignored
    without a word, even above a proven optimum)."""
    import json
    folder = tmp_path / "lb"
    folder.mkdir()
    eb.save(fam[0], folder / "a.json")
    data = json.loads((folder / "a.json").read_text())
    data["meta"]["lower_bound"] = 1e9
    (folder / "a.json").write_text(json.dumps(data))
    line = "instance meta: lower_bound bounds nothing on a maximising objective (1 instance(s), e.g. "
    code, _, err = run(capsys, "solve", folder / "a.json", "--method", "ff")
    assert code == 0 and f"epochbench solve: {line}{fam[0].name}): ignored" in err
    code, _, err = run(capsys, "score", folder, "--methods", "ff", "--out", tmp_path / "out")
    assert code == 0 and f"epochbench score: {line}" in err
    eb.save(fam[1], folder / "b.json")
    code, _, err = run(capsys, "solve", folder / "b.json", "--method", "ff")
    assert code == 0 and "bounds nothing" not in err
