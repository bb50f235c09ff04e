"""Messages a new user met walking the README: each names the way out."""
from __future__ import annotations

import subprocess
import sys

import pytest

import epochbench as eb
from epochbench.cli import main

SWF = """; MaxProcs: 8
1 0 -1 10 2 -1 -1 2 20 -1 1 -1 -1 -1 -1 -1 -1 -1
2 1 -1 10 4 -1 -1 4 20 -1 1 -1 -1 -1 -1 -1 -1 -1
"""


def test_data_given_after_the_command_says_it_is_epochbenchs_own_option(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["generate", "braun", "--out", "x", "--data", "/tmp"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert "--data is epochbench's own option, given before the command: epochbench --data DIR COMMAND" in err


def test_a_data_folder_the_user_named_is_not_told_to_be_set(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("EPOCHBENCH_DATA", "")          # recorded, so that what --data sets is undone after
    monkeypatch.delenv("EPOCHBENCH_DATA")
    assert main(["--data", str(tmp_path / "nodata"), "generate", "braun", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert (f"the data folder {tmp_path / 'nodata'} is what EPOCHBENCH_DATA or epochbench --data says, and there "
            "is no such folder; this data set is not in it") in err
    assert "set EPOCHBENCH_DATA or pass" not in err                 # it was passed
    (tmp_path / "afile").write_text("")
    assert main(["--data", str(tmp_path / "afile"), "generate", "braun", "--out", str(tmp_path / "b")]) == 2
    assert "epochbench --data says, a file, not a folder; this data set" in capsys.readouterr().err   # not "no such"


def test_an_unknown_simulate_keyword_lists_the_calls_own_keywords_too(tmp_path):
    path = tmp_path / "w.swf"
    path.write_text(SWF)
    with pytest.raises(ValueError, match=r"unknown option 'nodez'; it takes selector, selector_options; and, for "
                                         r"any policy, machine, engine \(pool\), on_pass, progress, nodes and "
                                         r"kill_at_estimate"):
        eb.simulate(path, "easy", nodez=16)
    with pytest.raises(ValueError) as exc:                              # not an unknown keyword: its own message
        eb.simulate(path, "gs", migration_cost=5.0)
    assert "applies to policy" in str(exc.value) and "kill_at_estimate" not in str(exc.value)
    assert eb.simulate(path, "easy", nodes=16).n == 2


def test_a_table_files_capacity_says_where_it_came_from(tmp_path):
    from epochbench.instances.jobs import load_workload
    from epochbench.instances.workloads import write_workload
    for ext in ("csv", "parquet"):
        path = write_workload(tmp_path / f"g.{ext}", model="lublin03", jobs=50, seed=1)
        assert load_workload(path).meta["capacity_from"] == "metadata"      # None before
        assert load_workload(path, nodes=32).meta["capacity_from"] == "nodes"
        assert eb.simulate(path, "easy").n == 50


def test_an_empty_data_folder_is_recorded_absent(tmp_path, monkeypatch):
    from types import SimpleNamespace
    from epochbench.benchmarks.conftest import _data_state
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path))
    reporter = SimpleNamespace(stats={})
    assert _data_state(reporter)["present"] is False                      # True before: the folder existed
    (tmp_path / "braun").mkdir()
    assert _data_state(reporter)["present"] is True


def test_a_workload_out_that_names_another_kind_of_file_is_refused(tmp_path, capsys):
    from epochbench.instances.workloads import write_workload
    with pytest.raises(ValueError, match=r"x.txt names a .txt file, which a workload is not written as"):
        write_workload(tmp_path / "x.txt", model="lublin03", jobs=10)       # became a folder x.txt/ before
    assert not (tmp_path / "x.txt").exists()
    with pytest.raises(ValueError, match=r"names a .bz2 file"):
        write_workload(tmp_path / "x.swf.bz2", model="lublin03", jobs=10)     # a compressed table: a folder before
    assert write_workload(tmp_path / "runs.v2", model="lublin03", jobs=10).parent == tmp_path / "runs.v2"
    (tmp_path / "old.d").mkdir()                                            # an existing folder is a folder
    assert write_workload(tmp_path / "old.d", model="lublin03", jobs=10).parent == tmp_path / "old.d"
    with pytest.raises(SystemExit):
        main(["generate", "workload", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "--out OUT a file ending in .swf, .swf.gz, .csv or .parquet, else a folder" in out
    assert "a new name with another file suffix (x.txt, x.csv.bz2) is refused" in out
    assert "lublin03 ([lublin2003])," in out


def test_a_result_without_info_gets_bound_kind_none_and_heuristics_have_it_from_the_library():
    from epochbench.instances import registry
    from epochbench.instances.core import Result
    from epochbench.instances.packing import PackingInstance
    inst = PackingInstance.build([4], [[2], [3]], meta={"name": "p"})
    state = registry.METHODS.snapshot()
    try:
        @registry.register("packing", "test-none-info")
        def none_info(inst):
            return Result("packing", "test-none-info", (0,), 0.0, "feasible", None, 0.0, None)
        res = registry.solve(inst, "test-none-info")                # AttributeError on None.get before
        assert res.info["bound_kind"] == "none"
    finally:
        registry.METHODS.restore(state)
    assert registry.solve(inst, "ff").info["bound_kind"] == "none"     # the library's, not only solve --json's
    assert registry.solve(inst, "cpsat", time_limit=5).info["bound_kind"] != "none"


def test_no_data_folder_is_recorded_null_and_said_once(monkeypatch):
    """run.json's data.root held the hint's prose, and the footer gave the remedy twice."""
    from types import SimpleNamespace
    from epochbench.benchmarks import conftest as bc
    from epochbench.instances import data
    monkeypatch.setattr(data, "data_root", lambda: data.NOT_SET)
    state = bc._data_state(SimpleNamespace(stats={}))
    assert state == {"root": None, "present": False, "skipped_for_data": 0}
    lines = []
    bc._say_data(SimpleNamespace(write_line=lines.append), state)
    assert len(lines) == 1 and lines[0].startswith("Reference data: no folder set: 0 benchmark(s) skipped")
    assert lines[0].count("EPOCHBENCH_DATA") == 1
    bc._no_board(SimpleNamespace(write_line=lines.append), state)          # nothing skipped: no such line
    assert len(lines) == 1


def test_a_run_without_a_board_for_want_of_data_says_so(tmp_path):
    """``bench -k knapsack`` without the data printed no leaderboard and no word why."""
    import os
    env = {**os.environ, "EPOCHBENCH_DATA": str(tmp_path / "none")}
    (tmp_path / "none").mkdir()
    proc = subprocess.run([sys.executable, "-m", "epochbench", "bench", "--quick", "-k", "knapsack and not speed"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=170)
    assert proc.returncode == 0, proc.stderr
    assert "epochbench: no leaderboard: the selected benchmarks that measure gaps were skipped" in proc.stdout


@pytest.mark.parametrize("generator, holds", [("vbp", "vbp"), ("braun", "braun"), ("orlib-assign", "assign/assign100.txt"),
                                              ("orlib-mknapcb", "orlib/mknapcb1.txt")])
def test_no_data_folder_is_said_without_a_placeholder_glued_into_a_path(generator, holds, monkeypatch):
    """``<no data folder: set EPOCHBENCH_DATA or pass epochbench --data DIR>/vbp: no VBP data folder``."""
    import epochbench as eb
    from epochbench.instances import assignment, data, generators, knapsack, mapping
    from epochbench.instances.core import InstanceError
    for module in (data, assignment, generators, knapsack, mapping):
        monkeypatch.setattr(module, "data_root", lambda: data.NOT_SET, raising=False)
    with pytest.raises(InstanceError) as exc:
        eb.generate(generator)
    assert str(exc.value) == ("no data folder: set EPOCHBENCH_DATA or pass epochbench --data DIR (the folder that "
                              f"holds {holds})")


def test_a_selectors_option_given_to_the_policy_says_where_it_goes(tmp_path):
    """(API review) ``eb.simulate(w, "bl-easy", window=1)`` named no
    ``selector_options``; a function given as ``selector`` read "no method
    <function ...>", not that its registered name is asked for."""
    path = tmp_path / "w.swf"
    path.write_text(SWF)
    with pytest.raises(ValueError) as exc:
        eb.simulate(path, "bl-easy", nodes=16, window=1)
    assert str(exc.value).endswith("kill_at_estimate (a workload read from a file); an option of its selection "
                                   "step's packing method goes in selector_options (e.g. selector_options="
                                   "{'window': 2}; --param window=2 on the command line)")
    with pytest.raises(ValueError) as exc:                  # no selection step: no such hint
        eb.simulate(path, "conservative", nodes=16, window=1)
    assert "selector_options (e.g." not in str(exc.value)
    with pytest.raises(ValueError, match=r"selector=.*: expected the name of a registered packing method, got "
                                         r"function .*; register a function with eb.register\('packing', NAME\) "
                                         r"and pass NAME$"):
        eb.simulate(path, "easy", nodes=16, selector=lambda inst: [])


def test_loading_a_family_folder_or_its_manifest_says_how_to_read_a_family(tmp_path):
    """(API review) ``eb.load`` of a manifest said only "field 'kind' missing"."""
    from epochbench.instances.core import InstanceError
    eb.save(eb.generate("leinberger", n=6, k=2, count=2, seed=1), tmp_path / "fam")
    with pytest.raises(InstanceError, match=r"manifest.json: field 'kind' missing \(expected a JSON object with "
                                            r"'kind'\); this is a family folder's manifest: read the folder with "
                                            r"read_family, or score it with eb.score\(folder\)$"):
        eb.load(tmp_path / "fam" / "manifest.json")
    with pytest.raises(InstanceError, match=r"fam: is a folder, expected a JSON file; a family folder"):
        eb.load(tmp_path / "fam")
    (tmp_path / "plain").mkdir()
    with pytest.raises(InstanceError, match=r"plain: is a folder, expected a JSON file$"):
        eb.load(tmp_path / "plain")
