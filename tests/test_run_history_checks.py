"""Review of run history: rows an experiment reuses are said and recorded
(and never those of other code unless asked), ``--tasks`` refuses negative
indices, ``bench --name`` is a usage error naming ``--name``, run ids are
unique in their folder, the output lock goes when a run ends, and
``compare --fail-on`` fails a method that is gone."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from epochbench import cli, runs
from epochbench import sweep as sw
from epochbench.experiments import EXPERIMENTS, Experiment
from epochbench.instances.files import LOCK_NAME

#: the tasks each run of the test experiment computed (it runs in this process: --workers 1)
CALLS: list[int] = []


def _tasks(opts) -> list[dict]:
    return [{"point": p} for p in range(4)]


def _run(task: dict) -> list[dict]:
    CALLS.append(task["point"])
    return [{"point": task["point"], "value": 10 * task["point"]}]


def _table(df: pd.DataFrame) -> pd.DataFrame:
    return df.groupby("point", as_index=False)["value"].mean()


TINY = Experiment("history-test", "test experiment (reused rows)", _tasks, _run, _table)
NAME = TINY.name


@pytest.fixture(autouse=True)
def _tiny(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    EXPERIMENTS[NAME] = TINY
    CALLS.clear()
    yield
    EXPERIMENTS.pop(NAME, None)


def _experiment(*extra: str) -> int:
    return cli.main(["experiment", NAME, "--quiet", "--workers", "1", "--out", "ex", *extra])


def _info(path: str = f"ex/{NAME}.run.json") -> dict:
    return json.loads(Path(path).read_text())


def _commit(monkeypatch, commit: str) -> None:
    monkeypatch.setattr(runs, "git_commit", lambda where=None: commit)
    monkeypatch.setattr(runs, "git_diff", lambda where=None: None)      # not this checkout's own changes


# ---- 4: reused rows --------------------------------------------------------------------------
def test_a_rerun_of_a_finished_subset_says_what_it_reuses_and_records_it(monkeypatch, capsys):
    _commit(monkeypatch, "a" * 40 + "+dirty")
    assert _experiment("--tasks", "0:2") == 0
    first = _info()
    records = [json.loads(line) for line in Path(f"ex/{NAME}.partial.jsonl").read_text().splitlines()]
    assert [(r["run"], r["commit"]) for r in records] == [(first["id"], "a" * 40 + "+dirty")] * 2
    assert all(r["version"] == first["versions"]["epochbench"] for r in records)
    capsys.readouterr()
    CALLS.clear()
    assert _experiment("--tasks", "0:3") == 0                       # --quiet, stderr not a terminal
    err = capsys.readouterr().err.strip().splitlines()
    assert CALLS == [2]
    kept = [line for line in err if "the previous run's files in ex are kept as" in line]
    assert len(kept) == 1 and f"{NAME}-{first['id']}.csv" in kept[0]   # the finished first run, kept aside
    assert [line for line in err if line not in kept] == [
        f"epochbench experiment {NAME}: 2 of 3 tasks reused from ex/{NAME}.partial.jsonl "
        f"(run {first['id']}, commit aaaaaaaa+dirty), not recomputed; --fresh recomputes them"]
    assert _info()["execution"]["workers_started"] == 0         # --workers 1: in this process
    assert _info()["reused"] == {"tasks": 2, "indices": "0:2", "from": f"{NAME}.partial.jsonl",
                                 "runs": [first["id"]], "commits": ["a" * 40 + "+dirty"],
                                 "versions": [first["versions"]["epochbench"]], "other_code": False}


def test_a_run_that_computes_everything_records_no_reuse(capsys):
    assert _experiment() == 0
    assert "reused" not in _info() and "reused" not in capsys.readouterr().err
    assert sorted(CALLS) == [0, 1, 2, 3]


def test_rows_of_another_commit_are_refused_unless_fresh_or_resume(monkeypatch, capsys):
    _commit(monkeypatch, "a" * 40)
    assert _experiment("--tasks", "1") == 0
    before = {p.name: p.read_bytes() for p in Path("ex").iterdir()}
    _commit(monkeypatch, "b" * 40)
    capsys.readouterr()
    assert _experiment("--tasks", "1") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "computed by other code (commit aaaaaaaa; this is commit bbbbbbbb)" in err
    assert "--fresh" in err and "--resume" in err
    assert {p.name: p.read_bytes() for p in Path("ex").iterdir()} == before     # refused: nothing changed
    CALLS.clear()
    assert _experiment("--tasks", "1", "--resume") == 0
    assert CALLS == [] and _info()["reused"]["other_code"] is True
    assert "not this run's code, reused as --resume asks" in capsys.readouterr().err
    assert _experiment("--tasks", "1", "--fresh") == 0
    assert CALLS == [1] and "reused" not in _info() and "reused" not in capsys.readouterr().err
    (record,) = Path(f"ex/{NAME}.partial.jsonl").read_text().splitlines()    # the old record replaced
    assert json.loads(record)["commit"] == "b" * 40
    with pytest.raises(SystemExit, match="2"):
        _experiment("--tasks", "1", "--fresh", "--resume")
    assert "argument --resume: not allowed with argument --fresh" in capsys.readouterr().err


def test_rows_of_another_dirty_tree_of_the_same_commit_are_other_code(monkeypatch, capsys):
    _commit(monkeypatch, "a" * 40 + "+dirty")
    monkeypatch.setattr(runs, "git_diff", lambda where=None: "1" * 12)   # after _commit, which sets none
    assert _experiment("--tasks", "1") == 0
    assert _info()["git_diff"] == "1" * 12
    assert json.loads(Path(f"ex/{NAME}.partial.jsonl").read_text())["diff"] == "1" * 12
    CALLS.clear()
    assert _experiment("--tasks", "1") == 0 and CALLS == []          # the same changes: reused
    assert _info()["reused"]["changes"] == ["1" * 12]
    monkeypatch.setattr(runs, "git_diff", lambda where=None: "2" * 12)    # other uncommitted changes
    capsys.readouterr()
    assert _experiment("--tasks", "1") == 2                            # were reused as the same code before
    err = capsys.readouterr().err
    assert ("computed by other code (commit aaaaaaaa+dirty (changes 111111111111); "
            "this is commit aaaaaaaa+dirty (changes 222222222222))") in err, err
    _commit(monkeypatch, "a" * 40)                                     # committed: a clean tree has no diff
    assert "git_diff" not in runs.provenance("experiment", "x")


def test_rows_stored_without_a_stamp_are_of_unknown_code(capsys):
    Path("ex").mkdir()
    old = {"task": {"point": 0}, "rows": [{"point": 0, "value": 0}]}          # written before records had stamps
    Path(f"ex/{NAME}.partial.jsonl").write_text(json.dumps(old) + "\n")
    assert _experiment("--tasks", "0") == 2
    assert "(unknown code; this is" in capsys.readouterr().err and CALLS == []
    assert _experiment("--tasks", "0", "--resume") == 0
    assert "(run unknown, unknown code; not this run's code" in capsys.readouterr().err
    assert _info()["reused"]["runs"] == [None]


def test_rows_computed_on_other_reference_data_are_refused_and_a_moved_copy_keeps_them(monkeypatch, tmp_path, capsys):
    for folder in ("d1", "d2"):                                    # the same data set in two folders
        (tmp_path / folder / "set").mkdir(parents=True)
        (tmp_path / folder / "set" / "a.txt").write_text("1 2 3\n")
    EXPERIMENTS[NAME] = Experiment(NAME, TINY.help, _tasks, _run, _table, data=("set",))
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path / "d1"))
    assert _experiment("--tasks", "1") == 0
    stamped = json.loads(Path(f"ex/{NAME}.partial.jsonl").read_text())["data"]
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path / "d2"))        # a copy: the same bytes
    CALLS.clear()
    assert _experiment("--tasks", "1") == 0 and CALLS == []
    assert _info()["reused"]["data"] == [stamped]
    (tmp_path / "d2" / "set" / "a.txt").write_text("1 2 4\n")           # another version of the data set
    capsys.readouterr()
    assert _experiment("--tasks", "1") == 2 and CALLS == []            # were reused as the same before
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "computed on other reference data" in err and f"(data {stamped})" in err
    (tmp_path / "d2" / "set" / "a.txt").write_text("1 2 3\n")
    (tmp_path / "d2" / "set" / ".DS_Store").write_text("x")              # hidden files and backups are no data
    (tmp_path / "d2" / "set" / "a.txt~").write_text("x")
    assert _experiment("--tasks", "1") == 0 and CALLS == []
    (tmp_path / "d2" / "set" / "b.txt").write_text("")                    # a file more in its folder: other data
    assert _experiment("--tasks", "1") == 2 and CALLS == []
    assert _experiment("--tasks", "1", "--resume") == 0 and CALLS == []
    assert _info()["reused"]["other_code"] is True


def test_rows_saved_before_data_was_stamped_say_so_when_refused(monkeypatch, tmp_path, capsys):
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "a.txt").write_text("1\n")
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path))
    assert _experiment("--tasks", "1") == 0                              # read no data: no data stamp
    EXPERIMENTS[NAME] = Experiment(NAME, TINY.help, _tasks, _run, _table, data=("set",))
    capsys.readouterr()
    assert _experiment("--tasks", "1") == 2
    assert "computed with no record of the reference data they read" in capsys.readouterr().err


def _data_experiment(monkeypatch, root):
    (root / "set").mkdir(parents=True, exist_ok=True)
    (root / "set" / "a.txt").write_text("1\n")
    monkeypatch.setenv("EPOCHBENCH_DATA", str(root))


def test_workers_started_counts_only_the_tasks_computed(capsys):
    """Reused rows and tasks not chosen start no worker."""
    def exp(*more):
        return cli.main(["experiment", NAME, "--quiet", "--out", "ex", *more])
    assert exp("--workers", "2", "--tasks", "0") == 0          # one task chosen of 4: in this process
    assert _info()["execution"]["workers_started"] == 0
    assert exp("--workers", "1", "--tasks", "1") == 0
    assert exp("--workers", "2", "--tasks", "0:3") == 0        # 2 of 3 reused: one task computed
    info = _info()
    assert info["reused"]["tasks"] == 2 and info["execution"]["workers_started"] == 0


def test_rows_with_and_without_a_data_stamp_are_said_to_have_no_record(monkeypatch, tmp_path, capsys):
    _data_experiment(monkeypatch, tmp_path / "d")
    assert _experiment("--tasks", "0") == 0                                   # read no data: no stamp
    EXPERIMENTS[NAME] = Experiment(NAME, TINY.help, _tasks, _run, _table, data=("set",))
    assert _experiment("--tasks", "1") == 0                                   # stamped with the data
    (tmp_path / "d" / "set" / "a.txt").write_text("2\n")
    capsys.readouterr()
    assert _experiment("--tasks", "0:2") == 2
    assert "2 of the tasks chosen were computed with no record of the reference data they read" in \
        capsys.readouterr().err


def test_rows_of_other_code_beside_rows_of_other_data_are_of_other_code(monkeypatch, tmp_path, capsys):
    _data_experiment(monkeypatch, tmp_path / "d")
    EXPERIMENTS[NAME] = Experiment(NAME, TINY.help, _tasks, _run, _table, data=("set",))
    _commit(monkeypatch, "a" * 40)
    assert _experiment("--tasks", "0") == 0
    _commit(monkeypatch, "b" * 40)
    assert _experiment("--tasks", "1") == 0
    (tmp_path / "d" / "set" / "a.txt").write_text("2\n")
    capsys.readouterr()
    assert _experiment("--tasks", "0:2") == 2
    assert "2 of the tasks chosen were computed by other code" in capsys.readouterr().err


def test_data_code_hashes_a_data_folder_inside_a_hidden_folder_and_file_names(monkeypatch, tmp_path):
    from epochbench.experiments import data_code
    root = tmp_path / ".cache" / "data"                       # only what lies under the data set's folder is stray
    _data_experiment(monkeypatch, root)
    exp = Experiment(NAME, TINY.help, _tasks, _run, _table, data=("set",))
    before = data_code(exp)
    (root / "set" / "a.txt").write_text("2\n")
    assert data_code(exp) != before
    before = data_code(exp)
    (root / "set" / "a.txt").rename(root / "set" / "b.txt")  # the same bytes under another name
    assert data_code(exp) != before


def test_fresh_without_out_starts_a_new_run_folder_instead_of_resuming(capsys):
    EXPERIMENTS[NAME] = Experiment(NAME, TINY.help, _tasks, _interrupted_at_two, _table)
    assert cli.main(["experiment", NAME, "--quiet", "--workers", "1"]) == 130
    EXPERIMENTS[NAME] = TINY
    CALLS.clear()
    assert cli.main(["experiment", NAME, "--quiet", "--workers", "1", "--fresh"]) == 0
    assert len(list(Path("results").iterdir())) == 2 and sorted(CALLS) == [0, 1, 2, 3]


def _interrupted_at_two(task: dict) -> list[dict]:
    if task["point"] == 2:
        raise KeyboardInterrupt
    return _run(task)


# ---- 14: --tasks --------------------------------------------------------------------------------
@pytest.mark.parametrize("spec, bad", [("-1", -1), ("0,-4", -4), ("-2:", -2), ("1:-1", -1), ("4", 4), ("9:", 9)])
def test_negative_task_indices_are_refused_like_those_past_the_end(spec, bad):
    with pytest.raises(ValueError, match=rf"^--tasks: index {bad} is outside 0:4$"):
        sw.parse_indices(spec, 4)


def test_task_ranges_still_select_and_stop_at_the_end(capsys):
    assert sw.parse_indices(":2,3", 4) == [0, 1, 3] and sw.parse_indices("2:99", 4) == [2, 3]
    assert sw.format_indices([0, 1, 2, 3, 10, 12, 13]) == "0:4,10,12:14"
    assert _experiment("--tasks", "-1") == 2
    assert capsys.readouterr().err.strip() == "epochbench experiment: error: --tasks: index -1 is outside 0:4"


def test_an_empty_task_list_and_a_file_as_out_are_refused(capsys):
    assert _experiment("--tasks", "") == 2
    assert capsys.readouterr().err.strip().endswith("--tasks: empty; give indices or ranges, e.g. 0:10,20 "
                                                    "(or leave the option out)")
    assert not Path("ex").exists()
    Path("afile").write_text("x")
    assert cli.main(["experiment", NAME, "--quiet", "--workers", "1", "--out", "afile"]) == 2
    assert "afile: is a file, not a folder" in capsys.readouterr().err


def test_a_run_says_every_file_it_wrote(capsys):
    assert _experiment() == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    written = {p.name for p in Path("ex").iterdir() if p.suffix in (".csv", ".png")}
    assert line.startswith("wrote ") and all(name in line for name in written), (line, written)


# ---- 15: bench --name, run ids, the lock --------------------------------------------------------
@pytest.mark.parametrize("args", [["--name", "after", "-k", "nothing"], ["-k", "nothing", "--name", "after"],
                                  ["-k", "nothing", "--name=after"]])
def test_bench_with_a_taken_name_is_a_usage_error_naming_name(capsys, args):
    Path("results/after").mkdir(parents=True)
    assert cli.main(["bench", "--quick", *args]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("epochbench bench: error: --name: run folder results/after exists; choose another "
                           "name (runs are never overwritten)")


def test_bench_name_with_results_is_a_usage_error(capsys):
    assert cli.main(["bench", "--name", "x", "--results", "r", "-k", "nothing"]) == 2
    assert "--name names a run folder under results/" in capsys.readouterr().err


def test_two_score_runs_in_one_second_get_different_ids(monkeypatch, capsys):
    monkeypatch.setattr(runs, "stamp", lambda when=None: "20261129-184652")
    assert cli.main(["generate", "leinberger", "--out", "fam", "--n", "6", "--k", "2", "--count", "1"]) == 0
    for _ in range(3):
        assert cli.main(["score", "fam", "--methods", "ff", "--time-limit", "3"]) == 0
    ids = [r["id"] for r in runs.find_runs(Path("fam"))]
    assert sorted(ids) == ["20261129-184652", "20261129-184652-2", "20261129-184652-3"]
    assert sorted(p.name for p in Path("fam").glob("scores*.csv")) == [
        "scores-20261129-184652-2.csv", "scores-20261129-184652.csv", "scores.csv"]


def test_a_run_json_kept_aside_is_still_listed_and_its_id_taken(tmp_path):
    folder = tmp_path / "dir"
    folder.mkdir()
    info = runs.provenance("bench", "bench-20261129-184652")
    runs.finish(info, folder / runs.RUN_JSON, files=["bench-scores.csv"])
    (folder / "bench-scores.csv").write_text("x\n")
    (folder / "run-1.json").write_text('{"benchmarks": []}')          # not a provenance record
    moved = runs.keep_previous([folder / "bench-scores.csv"], folder / runs.RUN_JSON)
    assert sorted(p.name for p in moved) == ["bench-scores-bench-20261129-184652.csv",
                                             "run-bench-20261129-184652.json"]
    again = runs.provenance("bench", "bench-20261129-184652")
    runs.finish(again, folder / runs.RUN_JSON)
    assert again["id"] == "bench-20261129-184652-2"
    assert sorted(r["id"] for r in runs.find_runs(folder)) == ["bench-20261129-184652", "bench-20261129-184652-2"]


_HOLD = """
import sys, time
from epochbench.instances.files import output_lock, OutputBusy
try:
    with output_lock(sys.argv[1]):
        print("held", flush=True)
        sys.stdin.readline()
except OutputBusy as exc:
    print("busy", flush=True)
"""


def test_the_lock_file_goes_when_a_run_ends_and_a_held_folder_is_still_refused(capsys):
    assert _experiment() == 0
    assert not Path("ex", LOCK_NAME).exists()
    EXPERIMENTS[NAME] = Experiment(NAME, TINY.help, _tasks, _fails, _table)
    assert _experiment("--fresh") == 1
    assert not Path("ex", LOCK_NAME).exists()
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, "ex"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        second = subprocess.run([sys.executable, "-c", _HOLD, "ex"], input="\n", capture_output=True, text=True,
                                timeout=60)
        assert second.stdout.strip() == "busy"
    finally:
        holder.communicate("\n", timeout=60)
    assert not Path("ex", LOCK_NAME).exists()


def _fails(task: dict) -> list[dict]:
    raise RuntimeError("no")


# ---- 16: compare, a method gone ---------------------------------------------------------------
def _solves(folder: Path, methods) -> Path:
    folder.mkdir()
    rows = [{"family": "packing", "config": "c", "instance": f"i{i}", "method": m, "kind": "heuristic",
             "gap": 0.01, "gap_kind": "optimum", "seconds": 1e-4} for i in range(3) for m in methods]
    pd.DataFrame(rows).to_csv(folder / "bench-solves.csv", index=False)
    return folder


@pytest.mark.parametrize("limit", ["gap:0.5%", "time:20%"])
def test_a_method_gone_from_the_after_run_fails_the_guard(tmp_path, capsys, limit):
    a = _solves(tmp_path / "a", ["ff", "bb"])
    b = _solves(tmp_path / "b", ["ff", "bl"])                         # bb gone, bl new
    assert cli.main(["compare", str(a), str(b)]) == 0                  # reported, no guard
    assert cli.main(["compare", str(a), str(b), "--fail-on", limit]) == 1
    fails = [line for line in capsys.readouterr().out.splitlines() if line.startswith("FAIL")]
    assert fails == [f"FAIL packing bb: gone: measured in A, not in B (limit {limit})"]
    assert cli.main(["compare", str(b), str(b), "--fail-on", limit]) == 0


def test_files_no_recorded_run_wrote_are_kept_as_unrecorded_never_under_a_run_id(tmp_path):
    """A user's own ``scores.csv`` in the folder: kept aside, but not under a
    stamp that a run started in the same second would take as its id."""
    (tmp_path / "scores.csv").write_text("mine\n")
    (moved,) = runs.keep_previous([tmp_path / "scores.csv"], tmp_path / "scores.run.json")
    assert moved.name.startswith("scores-unrecorded-") and moved.read_text() == "mine\n"


def test_a_task_range_past_the_last_task_is_said(capsys):
    """--tasks 1:20 of 4 tasks ran 1:4 without a word (slice semantics, kept)."""
    from epochbench.sweep import past_the_end
    capsys.readouterr()
    assert _experiment("--tasks", "1:20") == 0
    assert f"epochbench experiment {NAME}: --tasks 1:20: 3 of 4 tasks (1:4); a range past the last task stops there" \
        in capsys.readouterr().err
    assert _experiment("--tasks", "0:4", "--fresh") == 0
    assert "past the last task" not in capsys.readouterr().err
    assert past_the_end("0:2,5:9", 8) and not past_the_end("0:8,3", 8) and not past_the_end("4:", 8)
    assert past_the_end("2:+50", 12) and past_the_end(" 2 : 50 ", 12)     # read as --tasks reads them
    assert not past_the_end("x:50", 12) and not past_the_end(None, 12)   # refused by select, or no spec


def test_experiment_list_refuses_the_options_of_a_run(capsys):
    """'experiment list --quick' or '--seeds 3' listed and ignored them."""
    from epochbench import cli
    assert cli.main(["experiment", "list", "--quick", "--seeds", "3"]) == 2
    assert capsys.readouterr().err == ("epochbench experiment: error: --quick, --seeds: options of a run; "
                                       "'experiment list' runs nothing\n")
    assert cli.main(["experiment", "list"]) == 0 and "zhang-gang" in capsys.readouterr().out


def test_rows_of_another_version_of_a_plugins_experiment_are_refused(monkeypatch, capsys, tmp_path):
    """The stamp named epochbench's commit and version only: a plug-in's
    experiment changed (code and version) reused its old rows as the new
    code's, "reused ... (version 0.1.0)"."""
    from epochbench import experiments as ex
    mod = tmp_path / "plugexp.py"
    mod.write_text("def run(task):\n    return [{'point': task['point'], 'value': 1}]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib
    plugexp = importlib.import_module("plugexp")
    exp = Experiment("history-plugin", "a plug-in's", _tasks, plugexp.run, _table)
    state = ex.CATALOG.snapshot()
    try:
        ex.register(exp, origin="entry point plugexp:EXP")
        first = ex.plugin_code(exp)
        assert first.startswith("entry point plugexp:EXP, code ") and "unknown" not in first
        mod.write_text("def run(task):\n    return [{'point': task['point'], 'value': 2}]\n")
        assert ex.plugin_code(exp) != first                   # the file's code is part of the stamp
        args = ["experiment", exp.name, "--quiet", "--workers", "1", "--out", "ex", "--tasks", "1"]
        monkeypatch.setattr(ex, "plugin_code", lambda e: "entry point plugexp:EXP, code aaaaaaaaaaaa")
        assert cli.main(args) == 0
        monkeypatch.setattr(ex, "plugin_code", lambda e: "entry point plugexp:EXP, code bbbbbbbbbbbb")
        capsys.readouterr()
        assert cli.main(args) == 2
        err = capsys.readouterr().err
        assert "computed by other code" in err and "code aaaaaaaaaaaa" in err and "code bbbbbbbbbbbb" in err
    finally:
        ex.CATALOG.restore(state)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a /proc folder in which no file can be made")
def test_an_output_folder_without_room_for_the_lock_names_the_option_and_the_folder():
    """It named the internal lock file (``/proc/.epochbench.lock: cannot
    write in the output folder``), not the option nor the folder."""
    from epochbench.instances.files import OutputError, output_lock
    with pytest.raises(OutputError, match=r"^--results: cannot write in the output folder /proc \(.*lock file"):
        with output_lock("/proc", option="--results"):
            pass
