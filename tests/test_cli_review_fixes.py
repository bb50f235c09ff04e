"""Review findings on ``bench``, ``compare``, ``runs`` and run records:
each test fails on the code before its fix.

1. ``compare`` of a folder against a JSON file (two time measures) is refused.
2. ``bench`` holds the folder it writes (``--results DIR``), not ``./results``.
3. A ``bench`` run's ``run.json`` is written when it starts and ends with its status.
4. An unfinished run's record is kept aside, not overwritten, by the next run.
5. A non-ASCII ``--name`` is refused naming ASCII letters.
6. ``bench`` lists only the tables it wrote.
7. ``--fail-on`` needs its ``%``; a row that FAILs is flagged; no ``-0.00``.
8. ``runs``: the commit's ``+dirty`` shows; one line per run.
9. ``compare`` says when a ``bench-solves.csv`` is cut mid-row.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import crash_experiment as cx
from epochbench import cli, runs
from epochbench.experiments import EXPERIMENTS, Experiment

#: one small benchmark (packing, first-fit on one configuration)
ONE = "leinberger-k2-distuniform-n32 and -ff]"


def _solves(folder: Path, ff_seconds: float = 1e-5, gaps=(0.0, 0.05)) -> Path:
    """A ``bench-solves.csv`` of 6 solves of ff (gaps cycling through ``gaps``) and 6 of cpsat."""
    folder.mkdir()
    rows = []
    for i in range(6):
        rows += [{"family": "packing", "config": "c", "instance": f"i{i}", "method": "ff", "kind": "heuristic",
                  "gap": gaps[i % len(gaps)], "gap_kind": "optimum", "seconds": ff_seconds},
                 {"family": "packing", "config": "c", "instance": f"i{i}", "method": "cpsat", "kind": "exact",
                  "gap": 0.0, "gap_kind": "optimum", "seconds": 0.01}]
    pd.DataFrame(rows).to_csv(folder / "bench-solves.csv", index=False)
    return folder


def _json_run(path: Path) -> Path:
    """A pytest-benchmark JSON file measuring the methods of :func:`_solves`."""
    benches = [{"name": f"test_method[packing-c-{m}]", "params": {"config": "c", "method": m},
                "extra_info": {"family": "packing", "config": "c", "method": m, "instances": 6, "mean_gap": g,
                               "max_gap": 2 * g},
                "stats": {"median": s}} for m, g, s in (("ff", 0.025, 1e-5), ("cpsat", 0.0, 0.01))]
    path.write_text(json.dumps({"benchmarks": benches}))
    return path


# ---- 1: a folder against a JSON file ------------------------------------------------------------
@pytest.mark.parametrize("guard", [[], ["--fail-on", "time:20%"], ["--fail-on", "gap:0.5%"]])
def test_a_folder_and_a_json_file_are_not_compared(tmp_path, capsys, guard):
    folder, doc = _solves(tmp_path / "run"), _json_run(tmp_path / "run.json")
    for a, b in ((doc, folder), (folder, doc)):
        assert cli.main(["compare", str(a), str(b), *guard]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1, err
        assert "measure time differently" in err and "compare two results folders or two JSON files" in err
    assert cli.main(["compare", str(doc), str(doc), *guard]) == 0          # one kind: compared


# ---- 2: bench holds the folder it writes ----------------------------------------------------------
_HOLD = """
import sys
from epochbench.instances.files import output_lock
with output_lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.readline()
"""


def _held(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder`` as an epochbench run does, until its stdin gets a line."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(folder)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_bench_holds_its_results_folder_not_the_working_folders_results(tmp_path, monkeypatch, capsys):
    shared = tmp_path / "shared-results"
    holder = _held(shared)
    try:
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.chdir(tmp_path / "elsewhere")                         # another working folder
        assert cli.main(["bench", "--quick", "--results", str(shared), "-k", "nomatch_xyz"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "output folder in use by another epochbench run" in err, err
        assert "--results another folder" in err and "--out" not in err
    finally:
        holder.communicate("\n", timeout=60)
    holder = _held(tmp_path / "elsewhere" / "results")                  # ./results of this working folder
    try:
        assert cli.main(["bench", "--quick", "--results", str(tmp_path / "mine"), "-k", "nomatch_xyz"]) == 2
        err = capsys.readouterr().err
        assert "in use" not in err and "no benchmark selected" in err, err   # not refused for ./results
    finally:
        holder.communicate("\n", timeout=60)


# ---- 3, 6: bench's record from its start; the tables it wrote ------------------------------------
_PROBE = """
import json, os
def pytest_runtest_call(item):
    with open(os.environ["PROBE_OUT"], "a") as f:
        f.write(json.load(open(os.environ["PROBE_RECORD"]))["status"] + "\\n")
    if os.environ.get("PROBE_STOP"):
        raise KeyboardInterrupt
"""


def _bench(cwd: Path, results: Path, probe: Path, stop: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(probe.parent), os.environ.get("PYTHONPATH", "")]),
               PYTEST_PLUGINS=probe.stem, PROBE_OUT=str(cwd / "probe.txt"), PROBE_RECORD=str(results / "run.json"))
    if stop:
        env["PROBE_STOP"] = "1"
    return subprocess.run([sys.executable, "-m", "epochbench", "bench", "--quick", "--results", str(results),
                           "-k", ONE], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_a_bench_run_is_recorded_from_its_start_and_an_interrupted_one_is_kept(tmp_path):
    probe = tmp_path / "plugins" / "record_probe.py"
    probe.parent.mkdir()
    probe.write_text(_PROBE)
    results = tmp_path / "out"
    stopped = _bench(tmp_path, results, probe, stop=True)                # Ctrl-C in the benchmark
    assert (tmp_path / "probe.txt").read_text() == "running\n", stopped.stdout[-2000:] + stopped.stderr[-2000:]
    first = json.loads((results / "run.json").read_text())
    assert first["status"] == "interrupted" and first["command"] == "bench"
    assert first["exit_status"] == stopped.returncode == 130      # the command's status, not pytest's 2
    done = _bench(tmp_path, results, probe)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "probe.txt").read_text() == "running\nrunning\n"
    kept = json.loads((results / f"run-{first['id']}.json").read_text())  # the interrupted run's record
    assert kept["status"] == "interrupted" and kept["id"] == first["id"]
    final = json.loads((results / "run.json").read_text())
    assert final["status"] == "finished" and final["execution"] == {"scheduler": None}   # where reference solves ran
    lines = done.stdout.splitlines()
    at = lines.index(f"Full tables per configuration in {results.resolve()}/:") + 1
    import itertools
    block = list(itertools.takewhile(lambda line: line.startswith("  "), lines[at:]))   # wrapped at 100 columns
    listed = " ".join(line.strip() for line in block).split(", ")
    assert block and all(len(line) <= 100 for line in block)
    assert "leaderboard-packing.csv" in listed and all((results / name).is_file() for name in listed), listed


# ---- 4: an unfinished run's record is kept aside ---------------------------------------------------
def _interrupted_at_four(task: dict) -> list[dict]:
    if task["point"] * 2 + task["seed"] == 4:
        raise KeyboardInterrupt
    return cx.run(task)


def test_an_interrupted_experiments_record_is_kept_aside_by_a_run_with_other_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = "review-fixes-test"
    try:
        EXPERIMENTS[name] = Experiment(name, "test", lambda o: cx.tasks(o)[:6], _interrupted_at_four, cx.table)
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", "--out", "o1"]) == 130
        first = json.loads((tmp_path / "o1" / f"{name}.run.json").read_text())
        assert first["status"] == "interrupted" and first["exit_status"] == 130
        EXPERIMENTS[name] = Experiment(name, "test", lambda o: cx.tasks(o)[:6], cx.run, cx.table)
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", "--seeds", "3", "--out", "o1"]) == 0
    finally:
        EXPERIMENTS.pop(name, None)
    kept = json.loads((tmp_path / "o1" / f"{name}-{first['id']}.run.json").read_text())
    assert kept == first
    assert json.loads((tmp_path / "o1" / f"{name}.run.json").read_text())["exit_status"] == 0
    assert {r["status"] for r in runs.find_runs(tmp_path / "o1")} == {"interrupted", "finished"}


def test_keep_previous_keeps_a_record_without_files(tmp_path):
    info = runs.provenance("score", "20261129-184652")
    runs.finish(info, tmp_path / "scores.run.json", "failed")
    (moved,) = runs.keep_previous([tmp_path / "scores.csv"], tmp_path / "scores.run.json")
    assert moved.name == "scores-20261129-184652.run.json" and not (tmp_path / "scores.run.json").exists()
    assert runs.keep_previous([tmp_path / "scores.csv"], tmp_path / "scores.run.json") == []


# ---- 5: run names ------------------------------------------------------------------------------------
def test_a_run_name_must_be_ascii_and_the_message_says_so():
    with pytest.raises(ValueError, match="ASCII letters"):
        runs.check_name("ünï")
    with pytest.raises(ValueError, match="--name"):
        runs.check_name("run\n")                                           # no line break at the end either


# ---- 7: --fail-on ------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["gap:0.5", "time:20"])
def test_a_fail_on_without_its_unit_is_read_with_it_and_said(tmp_path, capsys, text):
    """gap:0.5 could be meant as a fraction: it is read as gap:0.5%, as it
    always was (a contract of the command), and a line says so."""
    a = _solves(tmp_path / "a")
    assert cli.main(["compare", str(a), str(a), "--fail-on", text]) == 0
    err = capsys.readouterr().err
    assert err == f"epochbench compare: --fail-on {text} read as {text}% " \
                  f"({'percentage points' if text.startswith('gap') else 'per cent'}); write the % to say so\n"


def test_a_last_row_with_all_its_cells_but_no_line_break_is_kept(tmp_path, capsys):
    a = _solves(tmp_path / "a")
    whole = tmp_path / "whole.csv"
    whole.write_bytes((a / "bench-solves.csv").read_bytes().rstrip(b"\n"))     # a hand edit, another tool
    assert cli.main(["compare", str(a), str(whole)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "in A alone" not in out


def test_a_time_failure_within_the_noise_band_is_flagged_on_its_row(tmp_path, capsys):
    a = _solves(tmp_path / "a", ff_seconds=1e-5)
    b = _solves(tmp_path / "b", ff_seconds=1.22e-5)                     # x1.22: inside the 1.25 band
    assert cli.main(["compare", str(a), str(b), "--fail-on", "time:20%"]) == 1
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.split()[:1] == ["ff"])
    assert row.split()[-1] == "slower" and "FAIL packing ff: time x1.22 (limit time:20%)" in out
    assert cli.main(["compare", str(a), str(b)]) == 0                   # no guard: within the noise, no flag
    row = next(line for line in capsys.readouterr().out.splitlines() if line.split()[:1] == ["ff"])
    assert row.split()[-1] == "1.22"


def test_a_change_that_rounds_to_zero_prints_as_plus_zero(tmp_path, capsys):
    a = _solves(tmp_path / "a", gaps=(0.1, 0.2))                         # mean 0.15000000000000002
    b = _solves(tmp_path / "b", gaps=(0.15,))                            # mean 0.15: d mean -2.8e-15 pp
    assert cli.main(["compare", str(a), str(b)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.split()[:1] == ["ff"])
    assert row.split()[3] == "+0.00" and "-0.00" not in row      # as an exact zero prints


# ---- 8: runs -------------------------------------------------------------------------------------------
def test_runs_shows_a_dirty_commit_and_keeps_one_line_per_run(tmp_path, capsys):
    info = runs.provenance("experiment", "r1")
    info["git_commit"] = "0123456789abcdef0123456789abcdef01234567+dirty"
    runs.finish(info, tmp_path / "x.run.json", "failed", error="RuntimeError: first line\nsecond line")
    assert cli.main(["runs", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and "01234567+dirty" in lines[1]
    assert lines[1].endswith("(RuntimeError: first line second line)")
    assert lines[0].index("path") == lines[1].index(str(tmp_path))      # the columns still line up


# ---- 9: a torn bench-solves.csv --------------------------------------------------------------------
def test_a_solves_file_cut_mid_row_is_said(tmp_path, capsys):
    a = _solves(tmp_path / "a")
    text = (a / "bench-solves.csv").read_bytes()
    torn = tmp_path / "torn.csv"
    torn.write_bytes(text[: len(text) - 9])                              # the last row cut in its middle
    assert cli.main(["compare", str(a), str(torn)]) == 0
    out, err = capsys.readouterr()
    assert err == f"epochbench compare: {torn}: ends mid-row (cut short?): its last, partial row is left out\n"
    assert "cpsat: compared on the 5 instances both runs measured (1 in A alone)" in out
    assert cli.main(["compare", str(a), str(a)]) == 0 and capsys.readouterr().err == ""


def test_an_interrupted_bench_exits_130_not_pytests_2_which_is_bad_usage(monkeypatch, capsys, tmp_path):
    """pytest ends a Ctrl-C'd session with its status 2, which every
    command of epochbench uses for bad usage; main documents 130."""
    from types import SimpleNamespace

    import pytest as _pytest

    from epochbench import cli
    from epochbench.benchmarks import plugin
    monkeypatch.chdir(tmp_path)

    def ctrl_c(argv):
        plugin.pytest_keyboard_interrupt(SimpleNamespace(value=KeyboardInterrupt()))   # pytest's call on a Ctrl-C
        return _pytest.ExitCode.INTERRUPTED

    monkeypatch.setattr(_pytest, "main", ctrl_c)
    assert cli.main(["bench", "--quick", "-k", "knapsack"]) == 130
    assert capsys.readouterr().err.startswith("epochbench bench: interrupted")
    assert plugin.end_status(2) == "interrupted"


def _fails_at_two(task: dict) -> list[dict]:
    if task["point"] * 2 + task["seed"] == 2:
        raise RuntimeError("task two broke")
    return cx.run(task)


def test_a_failed_experiments_record_keeps_the_commands_exit_status(tmp_path, monkeypatch, capsys):
    """A failed experiment exits 1 (2 when every failure is bad input) and
    its record had no exit_status; so had a score or experiment that lost
    its scheduler (1)."""
    from epochbench.sweep import SchedulerLost
    monkeypatch.chdir(tmp_path)
    name = "review-fixes-failed"
    try:
        EXPERIMENTS[name] = Experiment(name, "test", lambda o: cx.tasks(o)[:4], _fails_at_two, cx.table)
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", "--out", "o"]) == 1
    finally:
        EXPERIMENTS.pop(name, None)
    record = json.loads((tmp_path / "o" / f"{name}.run.json").read_text())
    assert (record["status"], record["exit_status"]) == ("failed", 1)
    assert runs.exit_status_of(SchedulerLost("tcp://127.0.0.1:1", 2, 4)) == {"exit_status": 1}
    # as main exits: bad input and sizes past the machine 2, any other error 1 (a review)
    assert runs.exit_status_of(ValueError("bad input")) == runs.exit_status_of(MemoryError()) == {"exit_status": 2}
    assert runs.exit_status_of(ZeroDivisionError()) == {"exit_status": 1} and runs.exit_status_of(SystemExit(3)) == {}


def _bad_table(df):
    raise ValueError("the table's input is bad")


def _experiment_record(tmp_path, monkeypatch, name: str, status: int, *, tasks: int = 2, run=cx.run,
                       table=cx.table, args: tuple = ()) -> dict:
    """Run a ``tasks``-task experiment of ``run`` and ``table`` into ``o``
    (exit ``status``); its record."""
    monkeypatch.chdir(tmp_path)
    try:
        EXPERIMENTS[name] = Experiment(name, "test", lambda o: cx.tasks(o)[:tasks], run, table)
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", *args, "--out", "o"]) == status
    finally:
        EXPERIMENTS.pop(name, None)
    return json.loads((tmp_path / "o" / f"{name}.run.json").read_text())


def test_an_experiment_failing_after_its_sweep_records_the_status_it_exits_with(tmp_path, monkeypatch):
    record = _experiment_record(tmp_path, monkeypatch, "review-fixes-bad-table", 2, table=_bad_table)
    assert (record["status"], record["exit_status"]) == ("failed", 2)


def test_a_failed_fresh_run_says_to_rerun_without_fresh(tmp_path, monkeypatch, capsys):
    """'run the same command to rerun the failed ones': with --fresh again,
    the saved rows were dropped and every task recomputed (a review)."""
    _experiment_record(tmp_path, monkeypatch, "review-fixes-fresh-failed", 1, tasks=4, run=_fails_at_two,
                       args=("--fresh",))
    assert "the other 3 runs are saved; run it again without --fresh to rerun the failed ones" in \
        capsys.readouterr().err


def _extra_figure_then_stop(df, path):
    Path(path).with_name(Path(path).stem + "-extra.png").write_bytes(b"figure")
    raise KeyboardInterrupt


def test_a_resumed_run_keeps_aside_the_files_its_stopped_predecessor_listed(tmp_path, monkeypatch):
    """A stopped run's record lists an extra figure it wrote; the resumed
    run overwrote it without a word (only the usual files were kept aside)."""
    monkeypatch.chdir(tmp_path)
    name = "review-fixes-extra-figure"
    try:
        EXPERIMENTS[name] = Experiment(name, "test", lambda o: cx.tasks(o)[:2], cx.run, cx.table,
                                       plot=_extra_figure_then_stop)
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", "--out", "o"]) == 130
        first = json.loads((tmp_path / "o" / f"{name}.run.json").read_text())
        assert f"{name}-extra.png" in first["files"]
        EXPERIMENTS[name] = Experiment(name, "test", lambda o: cx.tasks(o)[:2], cx.run, cx.table)
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", "--out", "o"]) == 0
    finally:
        EXPERIMENTS.pop(name, None)
    assert (tmp_path / "o" / f"{name}-extra-{first['id']}.png").read_bytes() == b"figure"


def test_a_stopped_fresh_run_says_to_resume_without_fresh(tmp_path, monkeypatch, capsys):
    """'run the same command to resume' was false for a --fresh run: the
    same command, --fresh again, dropped the saved rows and started over."""
    from epochbench.experiments import _resume_without_fresh
    from epochbench.sweep import SchedulerLost
    record = _experiment_record(tmp_path, monkeypatch, "review-fixes-fresh", 130, tasks=6, run=_interrupted_at_four,
                                args=("--fresh",))
    said = "run it again without --fresh to resume (with --fresh it starts over)"
    assert said in capsys.readouterr().err and said in record["error"]
    lost = SchedulerLost("tcp://127.0.0.1:1", 2, 4, saved=True)
    _resume_without_fresh(lost)
    assert str(lost).endswith(said) and lost.done == 2


def _stopped_while_tabling(df):
    raise KeyboardInterrupt


def test_a_run_stopped_while_writing_its_tables_lists_what_it_wrote(tmp_path, monkeypatch):
    """Stopped after NAME.csv was written: the record said files null, and
    the next run kept that file aside under a record listing none."""
    name = "review-fixes-tabling"
    record = _experiment_record(tmp_path, monkeypatch, name, 130, table=_stopped_while_tabling)
    assert (record["status"], record["files"]) == ("interrupted", [f"{name}.csv"])


def test_seeds_run_are_the_seeds_of_the_tasks_chosen(tmp_path, monkeypatch):
    """--where seed=1 ran seed 1 alone and the record said seeds_run [0, 1]."""
    monkeypatch.chdir(tmp_path)
    name = "review-fixes-seeds"
    try:
        EXPERIMENTS[name] = Experiment(name, "test", lambda o: cx.tasks(o)[:4], cx.run, cx.table)
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", "--where", "seed=1", "--out", "o"]) == 0
        assert cli.main(["experiment", name, "--quiet", "--workers", "1", "--tasks", "0:1", "--out", "p"]) == 0
    finally:
        EXPERIMENTS.pop(name, None)
    record = json.loads((tmp_path / "o" / f"{name}.run.json").read_text())
    assert record["seeds_run"] == [1]
    assert set(record["data"]) == {"root", "present"}        # the data the rows were computed on, as bench's
    assert json.loads((tmp_path / "p" / f"{name}.run.json").read_text())["seeds_run"] == [0]


def test_a_stopped_bench_records_the_commands_exit_status_and_plain_pytest_its_own(monkeypatch):
    """A bench run stopped by SIGTERM exits 143 and its record said
    exit_status 2, pytest's status for a stop, which the command never
    exits with; under plain ``pytest --benchmark`` 2 is the process's."""
    from types import SimpleNamespace

    from epochbench import cli
    from epochbench.benchmarks import plugin
    monkeypatch.setattr(plugin, "_CTRL_C", [])
    plugin.pytest_keyboard_interrupt(SimpleNamespace(value=cli.Terminated("stopped by SIGTERM")))
    monkeypatch.setattr(plugin, "COMMAND", [True])
    assert plugin.recorded_status(2) == 143 and plugin.recorded_status(1) == 1 and plugin.recorded_status(0) == 0
    plugin.pytest_keyboard_interrupt(SimpleNamespace(value=KeyboardInterrupt()))
    assert plugin.recorded_status(2) == 130
    monkeypatch.setattr(plugin, "COMMAND", [False])
    assert plugin.recorded_status(2) == 2


def test_a_bench_stopped_by_sigterm_is_recorded_interrupted_and_exits_143(monkeypatch, capsys, tmp_path):
    """SIGTERM reaches pytest as the command line's Terminated, a subclass
    of KeyboardInterrupt, which the plug-in took for one of pytest's own:
    the run's record said failed and bench exited 2 without a word."""
    from types import SimpleNamespace

    import pytest as _pytest
    from _pytest.main import Interrupted

    from epochbench import cli
    from epochbench.benchmarks import plugin
    monkeypatch.chdir(tmp_path)

    def sigterm(argv):
        plugin.pytest_keyboard_interrupt(SimpleNamespace(value=cli.Terminated("stopped by SIGTERM")))
        return _pytest.ExitCode.INTERRUPTED

    monkeypatch.setattr(_pytest, "main", sigterm)
    assert cli.main(["bench", "--quick", "-k", "knapsack"]) == 130     # no SIGTERM seen by main here
    assert capsys.readouterr().err.startswith("epochbench bench: interrupted")
    assert plugin.end_status(2) == "interrupted"
    plugin.pytest_configure(SimpleNamespace(getoption=lambda name: False))
    plugin.pytest_keyboard_interrupt(SimpleNamespace(value=Interrupted("1 error during collection")))
    assert plugin.end_status(2) == "failed"


@pytest.mark.parametrize("form", ["split", "joined"])
def test_a_benchmark_json_file_that_exists_or_cannot_be_written_is_refused_before_the_run(
        monkeypatch, capsys, tmp_path, form):
    """pytest-benchmark wrote over an existing --benchmark-json file without
    a word, and a path in a missing folder failed the finished run (its
    tables lost); both are refused before pytest starts."""
    import pytest as _pytest
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_pytest, "main", lambda argv: pytest.fail("the suite ran"))
    (tmp_path / "before.json").write_text("baseline")

    def bench(path):
        opt = ["--benchmark-json", path] if form == "split" else [f"--benchmark-json={path}"]
        return cli.main(["bench", "--quick", "-k", "knapsack", *opt])

    assert bench("before.json") == 2
    assert "--benchmark-json before.json: exists, and would be written over" in capsys.readouterr().err
    assert (tmp_path / "before.json").read_text() == "baseline"
    assert bench("nodir/x.json") == 2
    assert "--benchmark-json nodir/x.json: no folder nodir to write it in" in capsys.readouterr().err
    assert not (tmp_path / "nodir").exists() and not (tmp_path / "results").exists()


@pytest.mark.parametrize("args, needle", [
    (["-n", "2"], "-n: the benchmarks run in one process"),
    (["-n2"], "-n2: the benchmarks run in one process"),
    (["--numprocesses=auto"], "--numprocesses=auto: the benchmarks run in one process"),
    (["--dist", "load"], "--dist: the benchmarks run in one process"),
    (["-p", "no:benchmark"], "-p no:benchmark: the suite needs that plug-in"),
    (["-pno:epochbench.benchmarks.plugin"], "-p no:epochbench.benchmarks.plugin: the suite needs that plug-in"),
    (["--benchmark-json", "a.json", "--benchmark-json=b.json"], "--benchmark-json is given 2 times ('a.json', "
                                                                "'b.json')"),
    (["--benchmark-json", "sub"], "--benchmark-json sub: is a folder"),
    (["--benchmark-json="], "--benchmark-json '': needs a file name"),
    (["--benchmark-json"], "--benchmark-json needs a file name"),             # last: an IndexError traceback
    (["--noconftest"], "--noconftest: the suite's conftest.py measures and records its runs"),
])
def test_pytest_arguments_that_would_leave_a_bench_run_unmeasured_are_refused(monkeypatch, capsys, tmp_path, args,
                                                                              needle):
    """``-n 2`` printed ten worker tracebacks and a wrong error (or, without
    --name, a run recorded finished whose timing pytest-xdist had turned
    off); blocking the suite's plug-ins recorded runs with nothing
    measured; a second --benchmark-json silently replaced the
    first, a folder was said to exist "and be written over", '' to exist."""
    import pytest as _pytest
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_pytest, "main", lambda argv: pytest.fail("the suite ran"))
    (tmp_path / "sub").mkdir()
    assert cli.main(["bench", "--quick", "-k", "knapsack", *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "results").exists()


def test_the_bench_run_blocks_pytest_xdist(monkeypatch, tmp_path):
    """A form of an xdist option the check does not know is a usage error, not workers."""
    import pytest as _pytest
    seen = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_pytest, "main", lambda argv: seen.append(argv) or 0)
    assert cli.main(["bench", "--quick", "-k", "knapsack"]) == 0
    assert cli.main(["bench", "--quick", "-k", "-nothing"]) == 0      # an expression after -k is no -n option
    argv = seen[0]
    assert any(a == "-p" and b == "no:xdist" for a, b in zip(argv, argv[1:]))


def test_the_bench_run_blocks_hypothesis_and_a_run_of_it_imports_none(monkeypatch, tmp_path):
    """The suite has no property tests: hypothesis's pytest plug-in is not
    loaded (1.5 s of a 6.7 s run of one heuristic), and a run of the suite
    imports no hypothesis module."""
    import pytest as _pytest
    seen = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_pytest, "main", lambda argv: seen.append(argv) or 0)
    assert cli.main(["bench", "--quick", "-k", "knapsack"]) == 0
    assert any(a == "-p" and b == "no:hypothesispytest" for a, b in zip(seen[0], seen[0][1:]))
    code = ("import sys\nfrom epochbench.cli import main\n"
            "status = main(['bench', '--quick', '--collect-only', '-k', 'leinberger-k2-distuniform-n32 and -ff]'])\n"
            "print(status, sorted(m for m in sys.modules if m.split('.')[0] in ('hypothesis', '_hypothesis_pytestplugin')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout + done.stderr


def test_a_failed_bench_runs_record_says_what_failed():
    """``epochbench runs`` shows a failed run's error, but a bench run's
    record had none: the user saw 'failed' and nothing else."""
    from types import SimpleNamespace as NS

    from epochbench.benchmarks.plugin import failure

    def config(**stats):
        reporter = NS(stats=stats)
        return NS(pluginmanager=NS(get_plugin=lambda name: reporter if name == "terminalreporter" else None))

    crash = NS(longrepr=NS(reprcrash=NS(message="RuntimeError: boom in setup\nmore")), nodeid="b.py::t[ff]")
    plain = NS(longrepr="Traceback ...\nb.py:3: AssertionError", nodeid="b.py::t[bl]")
    assert failure(config()) == {} and failure(config(passed=[NS(nodeid="x")])) == {}
    assert failure(config(error=[crash])) == {"error": "1 error; first: b.py::t[ff]: RuntimeError: boom in setup"}
    assert failure(config(failed=[plain, plain], error=[crash, crash])) == {
        "error": "2 failed, 2 errors; first: b.py::t[bl]: b.py:3: AssertionError"}


def test_a_run_name_taken_by_a_run_started_at_the_same_time_names_name_not_pytest_arguments(
        monkeypatch, capsys, tmp_path):
    """Two benches started at once with one --name: both passed the check
    before pytest, and the second was refused by the plug-in as
    '--run-name' (an option the user did not type), then told that pytest
    refused the arguments passed on to it."""
    monkeypatch.chdir(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\n"
                               "from epochbench.instances.files import output_lock\n"
                               "with output_lock('results/same'):\n"
                               "    print('held', flush=True); time.sleep(60)"],
                              cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(cli, "_check_bench_name", lambda name, rest: None)   # both passed it at once
        assert cli.main(["bench", "--quick", "--name", "same", "-k", "knapsack"]) == 2
        err = capsys.readouterr().err
        assert "ERROR: --name: run folder" in err and "--run-name" not in err
        assert cli.main(["bench", "--quick", "-k", "knapsack", "--name", "same"]) == 2    # among pytest's
    finally:
        holder.kill()
        holder.wait(timeout=30)
    err = capsys.readouterr().err
    assert "ERROR: --name: run folder" in err and "--run-name" not in err and "pytest refused" not in err
    from epochbench.benchmarks import plugin
    assert plugin.NAME_OPTION == ["--run-name"]


def test_a_bench_file_that_fails_to_import_is_a_failure_not_an_interrupt(monkeypatch, capsys, tmp_path):
    """pytest ends a session whose collection failed with status 2 too: it
    was reported 'interrupted', exit 130."""
    from epochbench import cli
    monkeypatch.chdir(tmp_path)
    broken = tmp_path / "bench_broken.py"
    broken.write_text("import no_such_module_here\n")
    status = cli.main(["bench", "--results", str(tmp_path / "r"), str(broken)])
    assert status == 2 and "interrupted" not in capsys.readouterr().err


def test_keep_previous_renames_all_of_an_earlier_runs_files_or_none(tmp_path, monkeypatch):
    """When one rename failed (an immutable file), the files renamed before
    it stayed renamed: the earlier run's files were left half renamed."""
    import os
    (tmp_path / "a.csv").write_text("a")
    (tmp_path / "b.csv").write_text("b")
    runs.write(runs.provenance("experiment", "r0"), tmp_path / "x.run.json")
    real = os.replace

    def refuse_b(src, dst):
        if str(src).endswith("b.csv"):
            raise PermissionError(1, "Operation not permitted", str(src))
        return real(src, dst)

    monkeypatch.setattr(runs.os, "replace", refuse_b)
    with pytest.raises(PermissionError):
        runs.keep_previous([tmp_path / "a.csv", tmp_path / "b.csv"], tmp_path / "x.run.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv", "x.run.json"]


def test_a_method_that_prints_does_not_corrupt_solve_json(tmp_path, capsys):
    """A heuristic's print went to stdout before the JSON: json.load failed."""
    import epochbench as eb
    from epochbench.instances import registry

    def noisy(inst):
        print("hello from heuristic")
        return [0]

    fam = eb.generate("leinberger", n=6, k=2, count=1, seed=1, load=0.3)
    eb.save(fam[0], tmp_path / "i.json")
    registry.register("packing", "noisy-test", origin="test")(noisy)
    try:
        capsys.readouterr()
        assert cli.main(["solve", str(tmp_path / "i.json"), "--method", "noisy-test", "--json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out)["method"] == "noisy-test" and "hello from heuristic" in err
    finally:
        registry._REGISTRY.pop(("packing", "noisy-test"), None)


def test_score_methods_given_in_one_quoted_argument_are_split_on_spaces(tmp_path):
    """--methods "ff bb" said "no method 'ff bb'"; the help says comma- or space-separated."""
    import epochbench as eb
    eb.save(eb.generate("leinberger", n=6, k=2, count=1, seed=1), tmp_path / "fam")
    assert cli.main(["score", str(tmp_path / "fam"), "--methods", "ff bb", "--out", str(tmp_path / "s")]) == 0
    assert list(pd.read_csv(tmp_path / "s.csv")["method"]) == ["ff", "bb"]


def test_param_time_limit_in_score_says_where_time_limit_goes(tmp_path, capsys):
    """It said 'set it with --time-limit', which in score and validate
    reaches exact methods only: a heuristic never gets it."""
    import epochbench as eb
    eb.save(eb.generate("leinberger", n=6, k=2, count=1, seed=1), tmp_path / "fam")
    capsys.readouterr()
    assert cli.main(["score", str(tmp_path / "fam"), "--methods", "ff", "--param", "time_limit=1"]) == 2
    assert "--time-limit is the exact methods' limit here; heuristics run with their own default budget" \
        in capsys.readouterr().err


def test_bench_leaves_no_empty_benchmarks_folder_in_the_working_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["bench", "--quick", "--results", str(tmp_path / "r"), "-k", "nomatch_xyz"]) == 2
    assert not (tmp_path / ".benchmarks").exists()            # pytest-benchmark's storage, made empty at start
    (tmp_path / ".benchmarks").mkdir()                         # a user's own is kept
    assert cli.main(["bench", "--quick", "--results", str(tmp_path / "r"), "-k", "nomatch_xyz"]) == 2
    assert (tmp_path / ".benchmarks").is_dir()


def test_bench_checks_the_scheduler_of_its_reference_solves_before_the_suite(tmp_path, monkeypatch, capsys):
    """A bad ``$EPOCHBENCH_SCHEDULER`` failed every benchmark that solved a
    reference (1,257 lines of tracebacks), or was ignored where none did."""
    import socket
    with socket.socket() as s:                                 # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("EPOCHBENCH_SCHEDULER", f"tcp://127.0.0.1:{port}")
    monkeypatch.chdir(tmp_path)
    from epochbench.cli import main
    assert main(["bench", "--quick", "-k", "knapsack and greedy"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "EPOCHBENCH_SCHEDULER" in err and "cannot connect" in err
    assert not (tmp_path / "results").exists()


def test_an_instance_a_builtin_exact_method_cannot_solve_is_named_by_file_and_method(tmp_path, capsys):
    """Profits too small to scale onto integers: ``solve`` refuses with one
    line and status 2, as before, and the line now names the file and the
    method, as the README says bad input's line does (it named neither)."""
    f = tmp_path / "tiny.json"
    f.write_text('{"kind": "knapsack", "capacity": [10], "weights": [[3], [4], [5]], '
                 '"profit": [1e-300, 2e-300, 1.5e-300]}')
    assert cli.main(["solve", str(f), "--method", "cpsat", "--time-limit", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"epochbench solve: error: {f}: method 'cpsat' cannot solve this instance: ")
    assert "too small for an exact method" in err[0]
    assert cli.main(["solve", str(f), "--method", "greedy-mkp"]) == 0      # a heuristic still answers
