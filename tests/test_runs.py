"""Results with history (issue 16.5): each ``bench`` and ``experiment`` run
in a folder of its own with a ``run.json`` of provenance, ``score``'s files
where they always were with ``scores.run.json`` beside them, nothing
overwritten silently, ``epochbench runs`` listing them."""
from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import crash_experiment as cx
from epochbench import cli, runs
from epochbench.experiments import EXPERIMENTS, Experiment

SMALL = Experiment("runs-test", "test experiment (run folders)", lambda o: cx.tasks(o)[:6], cx.run, cx.table)


@pytest.fixture(autouse=True)
def _experiments(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cx, "SLEEP", 0.0)   # its tasks' sleep is for the kill tests; these run in this process
    EXPERIMENTS[SMALL.name] = SMALL
    yield
    EXPERIMENTS.pop(SMALL.name, None)


def _strict(text: str):
    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def _provenance_is_complete(info: dict, command: str) -> None:
    assert info["command"] == command and info["status"] == "finished" and info["seconds"] >= 0
    for v in ("epochbench", "python", "numpy", "ortools", "highspy", "pulp", "cbc"):
        assert info["versions"][v], v
    assert info["machine"]["cores"] >= 1 and info["machine"]["cpu"] and info["machine"]["host"]
    assert info["argv"] and info["started"] <= info["finished"]
    assert "git_commit" in info                                     # None outside a checkout
    assert isinstance(info["plugins"], list)                        # the installed plug-ins (none here)


def test_each_experiment_run_gets_its_own_folder_and_a_name_is_never_reused(tmp_path, capsys):
    for _ in range(2):
        assert cli.main(["experiment", SMALL.name, "--quiet"]) == 0
    folders = sorted((tmp_path / "results").iterdir())
    assert len(folders) == 2 and all(f.name.startswith(f"{SMALL.name}-") for f in folders)
    for f in folders:
        info = _strict((f / "run.json").read_text())
        _provenance_is_complete(info, "experiment")
        assert info["id"] == f.name and info["experiment"] == SMALL.name and info["rows"] == 12
        assert sorted(info["files"]) == [f"{SMALL.name}-table.csv", f"{SMALL.name}.csv"]
    assert cli.main(["experiment", SMALL.name, "--quiet", "--name", "mine"]) == 0
    assert (tmp_path / "results" / "mine" / f"{SMALL.name}.csv").is_file()
    capsys.readouterr()
    assert cli.main(["experiment", SMALL.name, "--quiet", "--name", "mine"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "run folder results/mine exists; choose another name" in err
    assert cli.main(["experiment", SMALL.name, "--name", "../up"]) == 2
    assert "is not a run name" in capsys.readouterr().err


def interrupted_at_four(task: dict) -> list[dict]:
    if task["point"] * 2 + task["seed"] == 4:
        raise KeyboardInterrupt
    return cx.run(task)


def test_an_interrupted_default_run_is_resumed_in_its_folder(tmp_path, capsys):
    EXPERIMENTS[SMALL.name] = Experiment(SMALL.name, SMALL.help, SMALL.tasks, interrupted_at_four, cx.table)
    assert cli.main(["experiment", SMALL.name, "--quiet"]) == 130
    (folder,) = (tmp_path / "results").iterdir()
    stopped = _strict((folder / "run.json").read_text())
    assert stopped["status"] == "interrupted"
    EXPERIMENTS[SMALL.name] = SMALL
    assert cli.main(["experiment", SMALL.name, "--quiet", "--seeds", "3"]) == 0   # other options: a new run
    assert cli.main(["experiment", SMALL.name, "--quiet", "--workers", "1"]) == 0  # same tasks: resumed
    folders = sorted((tmp_path / "results").iterdir())
    assert len(folders) == 2 and folder in folders
    df = pd.read_csv(folder / f"{SMALL.name}.csv")
    assert sorted(set(df["task"])) == list(range(6)) and not (folder / f"{SMALL.name}.partial.jsonl").exists()
    done = _strict((folder / "run.json").read_text())
    assert done["status"] == "finished"
    # the interrupted run's record is kept, as the resumed run names it among those it reused (it was lost)
    kept = _strict((folder / f"run-{stopped['id']}.json").read_text())
    assert kept["status"] == "interrupted" and stopped["id"] in done["reused"]["runs"]


def test_a_rerun_into_the_same_out_keeps_the_previous_files(tmp_path, capsys):
    out = tmp_path / "fixed"
    assert cli.main(["experiment", SMALL.name, "--quiet", "--out", str(out)]) == 0
    first = _strict((out / f"{SMALL.name}.run.json").read_text())
    before = (out / f"{SMALL.name}.csv").read_text()
    capsys.readouterr()
    assert cli.main(["experiment", SMALL.name, "--quiet", "--out", str(out)]) == 0
    rid = first["id"]
    said = capsys.readouterr().err
    assert f"the previous run's files in {out} are kept as " in said and f"{SMALL.name}-{rid}.csv" in said
    kept = out / f"{SMALL.name}-{rid}.csv"
    assert kept.read_text() == before and (out / f"{SMALL.name}-table-{rid}.csv").is_file()
    assert _strict((out / f"{SMALL.name}-{rid}.run.json").read_text())["id"] == rid
    assert (out / f"{SMALL.name}.csv").is_file() and (out / f"{SMALL.name}.run.json").is_file()
    assert cli.main(["experiment", SMALL.name, "--out", str(out), "--name", "x"]) == 2


def test_score_keeps_the_previous_scores_under_the_previous_run_name(tmp_path, capsys):
    fam = tmp_path / "fam"
    assert cli.main(["generate", "leinberger", "--out", str(fam), "--n", "6", "--k", "2", "--count", "2"]) == 0
    assert cli.main(["score", str(fam), "--methods", "ff", "--time-limit", "3"]) == 0
    first = _strict((fam / "scores.run.json").read_text())
    _provenance_is_complete(first, "score")
    assert first["methods"] == ["ff"] and first["time_limit"] == 3 and first["instances"] == 2
    old = pd.read_csv(fam / "scores.csv")
    assert cli.main(["score", str(fam), "--methods", "ff,cpsat", "--time-limit", "3"]) == 0
    assert "the previous run's files are kept as" in capsys.readouterr().out
    rid = first["id"]
    pd.testing.assert_frame_equal(pd.read_csv(fam / f"scores-{rid}.csv"), old)
    assert (fam / f"scores-{rid}.parquet").is_file() and (fam / f"scores-{rid}.run.json").is_file()
    assert len(pd.read_csv(fam / "scores.csv")) == 4
    assert cli.main(["score", str(fam), "--methods", "ff"]) == 0      # the folder's provenance is no instance


def test_runs_lists_every_run_newest_first_and_as_strict_json(tmp_path, capsys):
    assert cli.main(["experiment", SMALL.name, "--quiet", "--name", "a"]) == 0
    fam = tmp_path / "fam"
    cli.main(["generate", "leinberger", "--out", str(fam), "--n", "6", "--k", "2", "--count", "1"])
    assert cli.main(["score", str(fam), "--methods", "ff"]) == 0
    capsys.readouterr()
    assert cli.main(["runs"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["id", "command", "status"] and len(lines) == 3
    assert lines[1].split()[1] == "score" and lines[2].split()[:3] == ["a", "experiment", "finished"]
    assert cli.main(["runs", "--json", "results"]) == 0
    (rec,) = _strict(capsys.readouterr().out)
    assert rec["id"] == "a" and rec["path"].endswith("a")
    for twice in (["results", "results/"], ["results", "results/a"], ["results", str(tmp_path / "results")]):
        assert cli.main(["runs", "--json", *twice]) == 0       # each run once (it was listed twice)
        assert [r["id"] for r in _strict(capsys.readouterr().out)] == ["a"]
    assert cli.main(["runs", "nowhere"]) == 2


def test_a_named_bench_run_is_never_overwritten(tmp_path):
    def bench(*extra):
        return subprocess.run([sys.executable, "-m", "epochbench", "bench", "--quick", "-k",
                               "leinberger-k2-distuniform-n32 and -ff]", *extra], cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)
    first = bench("--name", "base")
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    info = _strict((tmp_path / "results" / "base" / "run.json").read_text())
    _provenance_is_complete(info, "bench")
    assert info["quick"] is True and "leaderboard-packing.csv" in info["files"]
    assert info["seeds"] == [1] and info["time_limit"] == [5.0]          # the README: seeds and time limits
    assert {"config": "leinberger-k2-distuniform-n32", "family": "packing", "generator": "leinberger",
            "params": {"count": 3, "dist": "uniform", "k": 2, "n": 32, "seed": 1}, "time_limit": 5.0} in info["configs"]
    solved = pd.read_csv(tmp_path / "results" / "base" / "bench-solves.csv")
    assert set(solved["method"]) == {"ff"}                          # the references solved for its gaps are no rows
    assert "cpsat, milp-cbc, milp-highs, mkp-bb solved as references only (not selected)" in first.stdout
    again = bench("--name", "base")
    assert again.returncode != 0 and "run folder" in again.stderr + again.stdout
    fixed = tmp_path / "fixed"
    for _ in range(2):
        assert bench("--results", str(fixed)).returncode == 0
    (old,) = fixed.glob("run-bench-*.json")                        # the first run's provenance, renamed
    rid = _strict(old.read_text())["id"]
    assert (fixed / f"bench-solves-{rid}.csv").is_file() and (fixed / f"leaderboard-packing-{rid}.csv").is_file()
    assert _strict((fixed / "run.json").read_text())["id"] != rid


def test_run_folder_names_are_checked():
    assert runs.check_name("run-1.b_2") == "run-1.b_2"
    for bad in ("", "a/b", ".hidden", "x" * 101):
        with pytest.raises(ValueError, match="--name"):
            runs.check_name(bad)


def test_an_unreadable_provenance_file_is_listed_not_skipped(tmp_path, capsys):
    from epochbench.cli import main
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "run.json").write_text("{not json")
    (tmp_path / "x.run.json").write_text("[1]")
    assert main(["runs", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert [line.split()[2] for line in lines] == ["unreadable", "unreadable"]
    assert any(line.endswith("x.run.json  (a JSON list, not an object)") for line in lines)


def test_bench_refuses_a_results_folder_it_cannot_write_and_a_selection_of_nothing(tmp_path, capsys):
    (tmp_path / "f.swf").write_text("x")
    for argv, says in ((["--results", "f.swf"], "f.swf: is a file, not a folder"),
                       (["--results=f.swf/sub"], "f.swf/sub: cannot be written"),
                       (["--name", ""], "--name: '' is not a run name")):
        assert cli.main(["bench", "--quick", *argv, "-k", "nothing"]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err
    assert not (tmp_path / "results").exists() and (tmp_path / "f.swf").read_text() == "x"
    none = subprocess.run([sys.executable, "-m", "epochbench", "bench", "--quick", "-k", "nomatch_xyz"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert none.returncode == 2 and "no benchmark selected" in none.stderr


def _bad_data_run(task):
    from epochbench.instances.core import InstanceError
    raise InstanceError(f"data/m{task['i'] % 2}.txt line 2: 'garbage' is not a number")


def test_an_experiment_whose_data_file_is_malformed_is_bad_input_in_one_line_per_error(capsys):
    bad = Experiment("bad-data-test", "reads a malformed file", lambda o: [{"i": i} for i in range(6)],
                     _bad_data_run, cx.table)
    EXPERIMENTS[bad.name] = bad
    try:
        assert cli.main(["experiment", bad.name, "--workers", "1", "--quiet", "--out", "out"]) == 2
    finally:
        EXPERIMENTS.pop(bad.name)
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("epochbench experiment: error: 6 of 6 tasks failed")
    assert err.count("'garbage' is not a number") == 3          # the first, then once per file
    assert "3 of them (tasks 0,2,4)" in err or "3 of them (tasks 0, 2, 4)" in err


def test_a_partial_file_line_that_is_no_record_is_said_when_a_run_reuses_the_file(capsys):
    assert cli.main(["experiment", SMALL.name, "--workers", "1", "--quiet", "--out", "o", "--tasks", "0:3"]) == 0
    partial = next(iter(__import__("pathlib").Path("o").glob("*.partial.jsonl")))
    lines = partial.read_text().splitlines()
    partial.write_text("\n".join([lines[0], "not json", '{"task": 5, "rows": "x"}', '{"task": {}, "rows": [1]}',
                                   *lines[1:]]) + "\n")     # the shaped ones were skipped without a word
    capsys.readouterr()
    assert cli.main(["experiment", SMALL.name, "--workers", "1", "--quiet", "--out", "o"]) == 0
    err = capsys.readouterr().err
    assert "3 line(s) are no record (line 2, 3, 4): skipped" in err and "3 of 6 tasks reused" in err


def test_a_partial_file_of_other_tasks_only_is_said_not_ignored(capsys):
    """Another experiment's partial file (copied, or a run with other
    options in the folder) was ignored without a word: everything reran."""
    out = __import__("pathlib").Path("o2")
    out.mkdir()
    (out / f"{SMALL.name}.partial.jsonl").write_text('{"task": {"other": 1}, "rows": [{"a": 1}]}\n'
                                                     '{"task": {"other": 2}, "rows": []}\n')
    assert cli.main(["experiment", SMALL.name, "--workers", "1", "--quiet", "--out", str(out)]) == 0
    assert ("o2/" + SMALL.name + ".partial.jsonl: its 2 record(s) are of tasks this run does not have "
            "(another run's options, or another experiment's): kept, none reused") in capsys.readouterr().err


def test_runs_says_why_a_record_is_unreadable_and_which_running_run_is_dead(tmp_path, capsys):
    import os
    import socket
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)                                   # a process that has ended
    from datetime import datetime, timezone
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    base = {"command": "experiment", "started": "2026-01-01T00:00:00+00:00", "machine": {"host": socket.gethostname()}}
    for name, rec in (("gone", {**base, "id": "gone", "status": "running", "pid": pid}),
                      ("live", {**base, "id": "live", "status": "running", "pid": os.getpid(), "started": now}),
                      # a pid a process started after the run holds: reused, the run is dead
                      ("reused", {**base, "id": "reused", "status": "running", "pid": os.getpid()}),
                      ("noid", {**base, "id": None, "status": "finished"}),
                      # an OverflowError (a traceback), and pids 0, -1, true read as running
                      *((f"odd{i}", {**base, "id": f"odd{i}", "status": "running", "pid": p})
                        for i, p in enumerate((10**30, 0, -1, True))),
                      # a hand-edited machine that is no object: a traceback; its host is not known
                      ("oddmachine", {**base, "id": "om", "status": "running", "pid": pid, "machine": "x"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text(json.dumps(rec))
    (tmp_path / "x.run.json").write_text("[1]")
    assert cli.main(["runs", str(tmp_path), "--json"]) == 0
    got = {r["path"].rsplit("/", 1)[-1]: r for r in _strict(capsys.readouterr().out)}
    assert got["gone"]["status"] == "dead" and got["live"]["status"] == "running"
    assert got["reused"]["status"] == "dead"
    assert [got[f"odd{i}"]["status"] for i in range(4)] == ["dead"] * 4
    assert got["oddmachine"]["status"] == "running"
    assert got["noid"]["status"] == "unreadable" and got["noid"]["error"] == "field 'id' is None, not text"
    assert got["x.run.json"]["error"] == "a JSON list, not an object"
    f = tmp_path / "w.swf"
    f.write_text("x")
    assert cli.main(["runs", str(f)]) == 2
    assert "a file, not a folder" in capsys.readouterr().err


def test_an_experiments_extra_tables_are_written_printed_recorded_and_kept_aside(capsys):
    import dataclasses
    extra = dataclasses.replace(SMALL, name="extra-test", extra={"claims": lambda df: pd.DataFrame({"rows": [len(df)]})})
    EXPERIMENTS[extra.name] = extra
    try:
        for _ in range(2):
            assert cli.main(["experiment", extra.name, "--workers", "1", "--quiet", "--out", "o"]) == 0
    finally:
        EXPERIMENTS.pop(extra.name)
    out = capsys.readouterr().out
    assert "extra-test-claims:" in out and "extra-test-claims.csv" in out
    assert pd.read_csv("o/extra-test-claims.csv")["rows"].tolist() == [len(pd.read_csv("o/extra-test.csv"))]
    info = _strict(__import__("pathlib").Path("o/extra-test.run.json").read_text())
    assert "extra-test-claims.csv" in info["files"]
    assert len(list(__import__("pathlib").Path("o").glob("extra-test-claims-*.csv"))) == 1   # the first run's, kept


def test_a_package_installed_inside_another_projects_repository_has_no_commit(tmp_path):
    """git -C found the outer repository and gave its commit (a worker
    installed from a wheel in a project's .venv was then 'other code')."""
    import subprocess
    from epochbench import runs
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "x").write_text("1")
    subprocess.run(["git", "-C", str(tmp_path), "add", "x"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"],
                   check=True)
    pkg = tmp_path / ".venv" / "epochbench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    assert runs.git_commit(pkg) is None
    assert runs.git_commit() is None or len(runs.git_commit().split("+")[0]) == 40   # this checkout: its own


def test_a_run_whose_table_fails_is_recorded_failed_not_left_running(tmp_path, capsys):
    """Only the sweep was inside the failure handling: a table (or figure)
    that raised left ``run.json`` at ``running``, listed later as ``dead``."""
    def broken(df):
        raise RuntimeError("no table")

    EXPERIMENTS["runs-test-broken"] = Experiment("runs-test-broken", "its table fails", SMALL.tasks, cx.run, broken)
    try:
        with pytest.raises(RuntimeError, match="no table"):
            cli.main(["experiment", "runs-test-broken", "--quiet", "--name", "b"])
    finally:
        EXPERIMENTS.pop("runs-test-broken", None)
    info = _strict((tmp_path / "results" / "b" / "run.json").read_text())
    assert info["status"] == "failed" and info["error"] == "RuntimeError: no table"
    kept = (tmp_path / "results" / "b" / "runs-test-broken.partial.jsonl").read_text().splitlines()
    assert len(kept) == len(SMALL.tasks(None))        # the rows stay for a rerun: it need not compute them again


def test_a_running_run_is_not_resumed_by_a_second_identical_command(tmp_path, capsys):
    """A second identical command found the first one's folder (unfinished:
    still running) and was refused, "output folder in use", at random as
    the first had saved a task or not; it gets a folder of its own."""
    from epochbench.instances.files import output_lock
    EXPERIMENTS[SMALL.name] = Experiment(SMALL.name, SMALL.help, SMALL.tasks, interrupted_at_four, cx.table)
    assert cli.main(["experiment", SMALL.name, "--quiet"]) == 130
    (folder,) = (tmp_path / "results").iterdir()
    EXPERIMENTS[SMALL.name] = SMALL
    with output_lock(folder):                              # as the first run holds it while it runs
        assert cli.main(["experiment", SMALL.name, "--quiet"]) == 0
    assert len(list((tmp_path / "results").iterdir())) == 2
    assert (folder / f"{SMALL.name}.partial.jsonl").exists()
    assert cli.main(["experiment", SMALL.name, "--quiet"]) == 0          # let go: resumed there
    assert not (folder / f"{SMALL.name}.partial.jsonl").exists()


def test_a_named_unfinished_run_of_other_options_says_how_to_resume_it(tmp_path, capsys):
    EXPERIMENTS[SMALL.name] = Experiment(SMALL.name, SMALL.help, SMALL.tasks, interrupted_at_four, cx.table)
    assert cli.main(["experiment", SMALL.name, "--quiet", "--name", "mine"]) == 130
    EXPERIMENTS[SMALL.name] = SMALL
    capsys.readouterr()
    assert cli.main(["experiment", SMALL.name, "--quiet", "--seeds", "3", "--name", "mine"]) == 2
    err = capsys.readouterr().err
    assert "run folder results/mine holds an unfinished run of other options: resume it with its own command (" in err
    assert err.count("\n") == 1                # (the command line it names is this process's sys.argv)


def _draw(df, path):
    path.write_bytes(b"\x89PNG\r\n\x1a\n")                  # a stand-in figure


def test_the_wrote_line_names_only_the_figures_this_run_wrote(tmp_path, capsys):
    """It globbed NAME*.png: another experiment's figure sharing the prefix
    (zhang-queues-he.png beside zhang-queues) was listed as written."""
    other = f"{SMALL.name}-he"
    EXPERIMENTS[SMALL.name] = Experiment(SMALL.name, SMALL.help, SMALL.tasks, cx.run, cx.table, plot=_draw)
    EXPERIMENTS[other] = Experiment(other, SMALL.help, SMALL.tasks, cx.run, cx.table, plot=_draw)
    try:
        assert cli.main(["experiment", other, "--quiet", "--out", "o"]) == 0
        capsys.readouterr()
        assert cli.main(["experiment", SMALL.name, "--quiet", "--out", "o"]) == 0
    finally:
        EXPERIMENTS.pop(other, None)
    wrote = [line for line in capsys.readouterr().out.splitlines() if line.startswith("wrote ")][-1]
    assert f"{SMALL.name}.png" in wrote and f"{other}.png" not in wrote


def test_an_interrupted_score_records_why_in_words(tmp_path):
    """A Ctrl-C was recorded as 'KeyboardInterrupt:' (its text is empty)."""
    from epochbench.cli import Terminated, _record_stopped
    for exc, said, status in ((KeyboardInterrupt(), "stopped by Ctrl-C", 130),
                              (Terminated("stopped by SIGTERM"), "Terminated: stopped by SIGTERM", 143),
                              (RuntimeError("lost"), "RuntimeError: lost", 1), (RuntimeError(), "RuntimeError", 1)):
        info = runs.provenance("score", "s1")
        _record_stopped(info, tmp_path / "a.run.json", exc)
        record = _strict((tmp_path / "a.run.json").read_text())
        assert record["error"] == said
        assert record.get("exit_status") == status      # the command's status for a stop, as simulate's records


def test_an_out_run_into_a_named_runs_folder_keeps_its_files_under_its_id(tmp_path, capsys):
    """The earlier run's record there is run.json (a --name run), which was
    not read: its files were kept as '-unrecorded-STAMP' and its run.json,
    left in place, listed the new run's files as its own."""
    assert cli.main(["experiment", SMALL.name, "--quiet", "--name", "same"]) == 0
    folder = tmp_path / "results" / "same"
    assert cli.main(["experiment", SMALL.name, "--quiet", "--out", str(folder)]) == 0
    names = sorted(p.name for p in folder.iterdir())
    assert f"{SMALL.name}-same.csv" in names and f"{SMALL.name}-table-same.csv" in names
    assert "run-same.json" in names and "run.json" not in names
    assert not any("unrecorded" in n for n in names)


def test_provenance_lists_the_installed_plugins(monkeypatch):
    """A run's methods, generators, experiments and policies may be a
    plug-in's: its record names every installed entry point and the
    package and version that ship it (nothing did)."""
    import importlib.metadata as md
    from types import SimpleNamespace

    def eps(group):
        if group != "epochbench.heuristics":
            return []
        return [SimpleNamespace(name="packing:greedyx", value="mylab.heur:greedyx",
                                dist=SimpleNamespace(name="mylab", version="0.2.0"))]
    monkeypatch.setattr(md, "entry_points", eps)
    info = runs.provenance("score", "s1")
    assert info["plugins"] == [{"group": "epochbench.heuristics", "name": "packing:greedyx",
                                "value": "mylab.heur:greedyx", "package": "mylab", "version": "0.2.0"}]


def test_a_record_whose_start_is_no_time_is_unreadable_not_the_newest(tmp_path, capsys):
    """'started': 'yesterday' was listed as a normal run and sorted as the
    newest of all (an audit of runs)."""
    base = {"command": "experiment", "status": "finished"}
    for name, started in (("old", "2026-01-01T00:00:00+00:00"), ("new", "2026-06-01T00:00:00+00:00"),
                          ("word", "yesterday")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text(json.dumps({**base, "id": name, "started": started}))
    assert cli.main(["runs", str(tmp_path), "--json"]) == 0
    got = _strict(capsys.readouterr().out)
    by = {r["path"].rsplit("/", 1)[-1]: r for r in got}
    assert by["word"]["status"] == "unreadable"
    assert by["word"]["error"] == "field 'started' is 'yesterday', not an ISO 8601 time"
    assert [r["path"].rsplit("/", 1)[-1] for r in got][:2] == ["new", "old"]


def test_a_resumed_run_keeps_the_outputs_its_unfinished_run_wrote(tmp_path, capsys):
    """A run stopped (or failed) after writing NAME.csv was resumed by the
    next identical command, which overwrote that file without a word
    (``--fresh``: its rows too); they are kept aside under its id."""
    calls = []

    def late(df):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("no table this time")
        return cx.table(df)

    name = "runs-test-late"
    EXPERIMENTS[name] = Experiment(name, "its first table fails", SMALL.tasks, cx.run, late)
    try:
        with pytest.raises(RuntimeError, match="no table this time"):
            cli.main(["experiment", name, "--quiet", "--workers", "1", "--out", "o"])
        first = _strict((tmp_path / "o" / f"{name}.run.json").read_text())
        written = (tmp_path / "o" / f"{name}.csv").read_text()
        capsys.readouterr()
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", "--out", "o", "--fresh"]) == 0
    finally:
        EXPERIMENTS.pop(name, None)
    err = capsys.readouterr().err
    kept = tmp_path / "o" / f"{name}-{first['id']}.csv"
    assert f"the unfinished run's files in o are kept as {kept.name}" in err
    assert kept.read_text() == written and (tmp_path / "o" / f"{name}.csv").exists()


def test_kept_files_are_renamed_in_their_record_and_kept_figures_are_no_runs_own(tmp_path):
    """A kept record listed its files under the names the next run took; a
    record without files (an interrupted run) was given every NAME-*.png,
    figures kept from older runs included."""
    from epochbench.experiments import _files_of
    out = tmp_path / "k"
    out.mkdir()
    for f in ("x.csv", "x.png", "x-20260101-000000.png", "x-fig2.png"):
        (out / f).write_text(f)
    (out / "x.run.json").write_text(json.dumps({"id": "r1", "command": "experiment", "status": "finished",
                                                "started": "2026-01-01T00:00:00+00:00",
                                                "files": ["x.csv", "x.png"]}))
    names = [p.name for p in _files_of("x", out)]
    assert "x-fig2.png" in names and "x.png" in names and "x-20260101-000000.png" not in names
    kept = runs.keep_previous([out / "x.csv", out / "x.png"], out / "x.run.json")
    assert sorted(p.name for p in kept) == ["x-r1.csv", "x-r1.png", "x-r1.run.json"]
    assert _strict((out / "x-r1.run.json").read_text())["files"] == ["x-r1.csv", "x-r1.png"]


def test_a_whole_last_record_without_its_newline_is_kept_and_a_torn_one_cut(tmp_path):
    """load_stamped reads a whole last record without its newline as a
    record (and a run reused it); repair_tail then cut it off the file."""
    from epochbench.sweep import repair_tail
    whole, torn = tmp_path / "w.jsonl", tmp_path / "t.jsonl"
    line = '{"task": {"i": 1}, "rows": [{"a": 1}]}'
    whole.write_text(line + "\n" + line.replace("1}]", "2}]"))
    torn.write_text(line + "\n" + line[:20])
    repair_tail(whole)
    repair_tail(torn)
    assert whole.read_text() == line + "\n" + line.replace("1}]", "2}]") + "\n"
    assert torn.read_text() == line + "\n"
