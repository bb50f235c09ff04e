"""Outputs survive crashes and concurrency; plug-ins cannot break the tool.

Atomic writes (instances.files), the output-folder lock, the experiment
checkpoint after kill -9 / a torn line / Ctrl-C, worker processes dying with
their parent, quiet output into a closed pipe, and broken plug-ins.  The
subprocess tests run ``tests/crash_experiment.py`` (a tiny registered
experiment) through the real CLI; every process started here is stopped in
a ``finally``.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import crash_experiment as cx
from epochbench import cli
from epochbench.experiments import EXPERIMENTS, Options, _load_checkpoint, run_experiment, sweep
from epochbench.instances import files, registry
from epochbench.instances.core import InstanceError, write_json
from epochbench.instances.files import LOCK_NAME, OutputBusy, atomic_path, output_lock, write_text

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(cx.__file__).resolve()
WALL = ["seconds"]                      # wall-time columns: differ between runs
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and flock")
EXPERIMENTS.pop(cx.NAME, None)          # registered only while these tests run (fixture below)
EXPERIMENTS.pop(cx.FIGURE, None)


@pytest.fixture(autouse=True, scope="module")
def _test_experiment():
    EXPERIMENTS[cx.NAME], EXPERIMENTS[cx.FIGURE] = cx.EXPERIMENT, cx.FIGURE_EXPERIMENT
    yield
    EXPERIMENTS.pop(cx.NAME, None)
    EXPERIMENTS.pop(cx.FIGURE, None)


def _experiment(out: Path, *extra: str, **kw) -> subprocess.Popen:
    """The test experiment in a subprocess (own session: a group signal
    reaches it and its workers, as Ctrl-C on a terminal would)."""
    cmd = [sys.executable, str(SCRIPT), "experiment", cx.NAME, "--out", str(out), "--quiet", *extra]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kw)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def _wait_for(cond, timeout: float = 30.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _holds_lock(out: Path, proc: subprocess.Popen) -> bool:
    lock = out / LOCK_NAME
    return proc.poll() is not None or (lock.exists() and lock.read_text().strip() == str(proc.pid))


def _records(out: Path) -> int:
    part = out / f"{cx.NAME}.partial.jsonl"
    return part.read_bytes().count(b"\n") if part.exists() else 0


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux /proc)."""
    kids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(d.name))
    return kids


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> pd.DataFrame:
    """The uninterrupted run (in this process, one worker, no sleep: the
    rows compared are the same; a local cluster here cost 5.5 s a run)."""
    out = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cx, "SLEEP", 0.0)
        df, _ = run_experiment(cx.NAME, Options(out=out, jobs=1, progress=False))
    assert not (out / f"{cx.NAME}.partial.jsonl").exists()
    return pd.read_csv(out / f"{cx.NAME}.csv")


def _same_apart_from_wall_time(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert len(want) == 2 * cx.TASKS
    pd.testing.assert_frame_equal(got.drop(columns=WALL), want.drop(columns=WALL))


# ---- atomic writes -------------------------------------------------------------------------
def test_atomic_writer_keeps_the_old_file_when_the_write_fails(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("old\n")
    with pytest.raises(RuntimeError, match="midway"):
        with atomic_path(path) as tmp:
            tmp.write_text("new, half writ")
            raise RuntimeError("killed midway")
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scores.csv"]      # no temporary left
    with pytest.raises(InstanceError, match="not written"):                  # not JSON: refused, nothing written
        write_json(path, {"kind": "packing", "bad": object()})
    assert path.read_text() == "old\n"
    write_text(path, "new\n")
    assert path.read_text() == "new\n" and len(list(tmp_path.iterdir())) == 1


def test_atomic_path_keeps_the_suffix_for_writers_that_choose_by_suffix(tmp_path):
    with atomic_path(tmp_path / "fig.png") as tmp:
        assert tmp.parent == tmp_path and tmp.name.endswith("fig.png") and not tmp.exists()
        tmp.write_bytes(b"png")
    assert (tmp_path / "fig.png").read_bytes() == b"png"


def test_taking_the_lock_removes_what_killed_runs_left_half_written(tmp_path):
    dead = tmp_path / ".tmp-999999999-0a1b2c3d-inst.json"          # pid above any pid_max
    live = tmp_path / f".tmp-{os.getppid()}-0a1b2c3d-inst.json"
    for p in (dead, live):
        p.write_text("{")
    with output_lock(tmp_path):
        pass
    assert not dead.exists() and live.exists()


# ---- checkpoint ------------------------------------------------------------------------------
def test_torn_checkpoint_line_loses_nothing_after_it(tmp_path):
    tasks = cx.tasks(Options())[:6]
    part = tmp_path / "x.partial.jsonl"
    good = [json.dumps({"task": t, "rows": cx.run(t)}) for t in tasks[:2]]
    torn = json.dumps({"task": tasks[2], "rows": cx.run(tasks[2])})[:37]      # killed mid-line
    part.write_text("\n".join(good) + "\n" + torn)
    assert sorted(_load_checkpoint(part, tasks)) == [0, 1]
    calls = []

    def run(task):
        calls.append(task)
        if len(calls) == 2:
            raise KeyboardInterrupt                                           # stop after one new record
        return cx.run(task)

    with pytest.raises(KeyboardInterrupt, match=r"interrupted; 3 of 6 runs saved"):
        sweep(run, tasks, jobs=1, progress=False, checkpoint=part)
    assert calls[0] == tasks[2]
    lines = part.read_bytes().split(b"\n")
    assert lines[-1] == b"" and all(json.loads(l) for l in lines[:-1])        # the torn tail is gone
    assert sorted(_load_checkpoint(part, tasks)) == [0, 1, 2]                 # the next record is readable
    rows = sweep(cx.run, tasks, jobs=1, progress=False, checkpoint=part)
    assert sorted(_load_checkpoint(part, tasks)) == list(range(6))
    assert [r["task"] for r in rows] == [i for i in range(6) for _ in range(2)]


def test_a_sweep_stopped_by_sigterm_stays_terminated(tmp_path):
    """SIGTERM comes as the command line's Terminated (a KeyboardInterrupt):
    the sweep's message on how many runs were saved keeps that type, so the
    run's record says Terminated, not KeyboardInterrupt."""
    from epochbench.cli import Terminated
    tasks = cx.tasks(Options())[:3]

    def run(task):
        raise Terminated("stopped by SIGTERM")

    with pytest.raises(Terminated, match=r"interrupted; 0 of 3 runs saved"):
        sweep(run, tasks, jobs=1, progress=False, checkpoint=tmp_path / "y.partial.jsonl")


# ---- kill -9, resume -------------------------------------------------------------------------
@posix_only
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_kill_9_twice_then_resume_equals_an_uninterrupted_run(tmp_path, reference):
    """Two kills: the second resumes a run that was itself resumed (a
    third round, as before, cost 5 s and checked nothing new)."""
    rng = np.random.default_rng(20261124)
    out = tmp_path / "out"
    for attempt in range(2):
        before = _records(out)
        proc = _experiment(out, "--jobs", "2")
        try:
            _wait_for(lambda: _holds_lock(out, proc), what="the experiment to start")
            _wait_for(lambda: proc.poll() is not None or len(_children(proc.pid)) >= 2, what="workers")
            workers = _children(proc.pid)
            time.sleep(rng.uniform(0.0, 0.4))
            assert proc.poll() is None, proc.communicate()
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
            _wait_for(lambda: not any(_alive(w) for w in workers), timeout=10,
                      what="the workers to die with their parent")
        finally:
            _stop(proc)
        assert not (out / f"{cx.NAME}.csv").exists()
        assert _records(out) >= before                                       # nothing saved is lost
    proc = _experiment(out, "--jobs", "2")
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        _stop(proc)
    assert proc.returncode == 0, err
    assert not (out / f"{cx.NAME}.partial.jsonl").exists()
    _same_apart_from_wall_time(pd.read_csv(out / f"{cx.NAME}.csv"), reference)


@posix_only
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_worker_watchdog_ends_a_worker_whose_parent_died():
    """The portable fallback (no prctl): the worker polls its parent id."""
    code = ("import os, time\nimport epochbench.experiments as e\ne._pdeathsig = lambda sig: False\n"
            "parent = os.getpid()\npid = os.fork()\nif pid == 0:\n    e._worker_init(parent)\n"
            "    time.sleep(60)\n    os._exit(0)\nprint(pid, flush=True)\nos._exit(0)\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    worker = int(res.stdout)
    try:
        _wait_for(lambda: not _alive(worker), timeout=15, what="the orphaned worker to exit")
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)


# ---- two runs on one --out -------------------------------------------------------------------
@posix_only
def test_second_run_on_the_same_out_is_refused_and_the_first_finishes(tmp_path, reference, capsys):
    out = tmp_path / "out"
    first = _experiment(out, "--jobs", "2")
    try:
        _wait_for(lambda: _holds_lock(out, first), what="the first run to hold --out")
        assert first.poll() is None
        status = cli.main(["experiment", cx.NAME, "--out", str(out), "--quiet"])
        err = capsys.readouterr().err
        assert status == 2
        assert err.count("\n") == 1 and "Traceback" not in err
        assert f"{out}: output folder in use by another epochbench run (pid {first.pid})" in err
        _, ferr = first.communicate(timeout=60)
    finally:
        _stop(first)
    assert first.returncode == 0, ferr
    _same_apart_from_wall_time(pd.read_csv(out / f"{cx.NAME}.csv"), reference)
    with output_lock(out):                                                    # released at exit
        pass


@posix_only
def test_output_lock_is_refused_across_processes_and_nests_within_one(tmp_path):
    out = tmp_path / "o"
    with output_lock(out):
        with output_lock(out):                                                # same process: nests
            pass
        code = ("import sys; from epochbench.instances.files import output_lock, OutputBusy\n"
                "try:\n    held = output_lock(sys.argv[1]); held.__enter__()\nexcept OutputBusy as e:\n"
                "    print(e); sys.exit(2)\n")
        res = subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
        assert res.returncode == 2 and f"(pid {os.getpid()})" in res.stdout
    (tmp_path / "file").write_text("x")
    with pytest.raises(files.OutputError, match="cannot create the output folder"):
        with output_lock(tmp_path / "file" / "sub"):
            pass


def test_score_and_generate_refuse_a_held_out_folder(tmp_path, capsys):
    out = tmp_path / "fam"
    assert cli.main(["generate", "leinberger", "--out", str(out), "--n", "6", "--k", "2",
                     "--count", "1", "--seed", "1"]) == 0
    capsys.readouterr()
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from epochbench.instances.files import "
                               "output_lock; held = output_lock(sys.argv[1]); held.__enter__(); print('held', flush=True);"
                               " time.sleep(60)", str(out)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for argv in (["generate", "leinberger", "--out", str(out), "--count", "1"],
                     ["score", str(out), "--methods", "ff"],
                     ["simulate", "--workload", str(tmp_path / "w.swf"), "--policy", "fcfs", "--out", str(out)],
                     ["experiment", cx.NAME, "--out", str(out)]):
            assert cli.main(argv) == 2
            err = capsys.readouterr().err
            name = " ".join(argv[:2]) if argv[0] == "generate" else argv[0]      # generate names its generator
            assert err.startswith(f"epochbench {name}: error: {out}: output folder in use") and \
                err.count("\n") == 1
    finally:
        holder.kill()
        holder.communicate(timeout=30)
    assert cli.main(["score", str(out), "--methods", "ff"]) == 0
    assert (out / "scores.csv").exists() and not list(out.glob(".tmp-*"))


# ---- Ctrl-C ----------------------------------------------------------------------------------
@posix_only
def test_sigint_prints_one_line_exits_130_and_the_rerun_resumes(tmp_path, reference):
    out = tmp_path / "out"
    proc = _experiment(out, "--jobs", "2")
    try:
        _wait_for(lambda: proc.poll() is not None or _records(out) >= 2, what="two saved runs")
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)                                    # Ctrl-C: the whole group
        _, err = proc.communicate(timeout=30)
    finally:
        _stop(proc)
    assert proc.returncode == 130, err
    saved = _records(out)
    assert err == (f"epochbench experiment: interrupted; {saved} of {cx.TASKS} runs saved, "
                   "run the same command to resume\n")
    assert 2 <= saved < cx.TASKS
    proc = _experiment(out, "--jobs", "2")
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        _stop(proc)
    assert proc.returncode == 0, err
    _same_apart_from_wall_time(pd.read_csv(out / f"{cx.NAME}.csv"), reference)


#: a CP-SAT solve no machine finishes in a second (a 1,000-item knapsack with 30
#: constraints, one worker, 120 s), a Ctrl-C sent to the process after 0.5 s, then
#: a second one after the solve; prints what each did
_CPSAT_SIGINT = """
import os, signal, threading, time
import numpy as np
from ortools.sat.python import cp_model as c
from epochbench.exact._binary import cpsat_solve
rng = np.random.default_rng(0)
m = c.CpModel(); n = 1000
x = [m.new_bool_var(f"x{i}") for i in range(n)]
for _ in range(30):
    w = rng.integers(1, 1000, n)
    m.add(sum(int(w[i]) * x[i] for i in range(n)) <= int(w.sum() // 2))
m.maximize(sum(int(p) * v for p, v in zip(rng.integers(1, 1000, n), x)))
s = c.CpSolver(); s.parameters.max_time_in_seconds = 120; s.parameters.num_workers = 1
threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    print("answer", s.status_name(cpsat_solve(s, m)), flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
    print("second swallowed", flush=True)
except KeyboardInterrupt:
    print("second interrupted", flush=True)
"""


@posix_only
def test_ctrl_c_during_a_cpsat_solve_interrupts_it_and_keeps_python_handling_sigint():
    """CP-SAT's own SIGINT handling ended the search and returned its best
    solution as if the time were up (an experiment recorded it and ended
    'finished', exit 0), then left SIGINT to the system default (the next
    Ctrl-C killed the process with no clean-up and no record)."""
    proc = subprocess.run([sys.executable, "-c", _CPSAT_SIGINT], capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["interrupted", "second interrupted"], proc.stdout + proc.stderr


#: a milp-cbc solve no machine finishes in 1.5 s (a 128 x 16 ETC mapping, 60 s), a KeyboardInterrupt
#: raised in this process alone after 1.5 s (as SIGTERM to the client is: CBC is not signalled), then the
#: number of CBC processes still alive among this process's children
_CBC_INTERRUPTED = """
import os, signal, threading, time
import psutil
import epochbench as eb
inst = eb.generate("braun-range", tasks=128, machines=16, task_het="hi", machine_het="hi", consistency="i",
                   count=1, seed=2)[0]
# compiled once beforehand: a SIGINT that lands in numba's compile or cache load (a ctypes callback,
# which swallows it) is no test of CBC's (a fresh clone's cold cache made the solve answer)
eb.solve(eb.generate("braun-range", tasks=8, machines=2, count=1, seed=2)[0], "milp-cbc", time_limit=10)
threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    eb.solve(inst, "milp-cbc", time_limit=60)
    print("answered")
except KeyboardInterrupt:
    print("interrupted")
time.sleep(0.5)
print(sum("cbc" in p.name() for p in psutil.Process().children(recursive=True) if p.is_running()))
"""


@posix_only
def test_an_interrupted_cbc_solve_ends_cbc_too():
    """Interrupted by an exception (SIGTERM turned into one, or Ctrl-C to
    this process alone), a milp-cbc solve left CBC running to its limit."""
    proc = subprocess.run([sys.executable, "-c", _CBC_INTERRUPTED], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["interrupted", "0"], proc.stdout + proc.stderr


#: Ctrl-C and SIGTERM (as the command line handles it) inside the block that starts a local cluster
_DEFERRED = """
import os, signal, time
from epochbench.cli import Terminated
from epochbench.sweep import _deferred_interrupts
def term(signum, frame):
    raise Terminated("stopped by SIGTERM")
signal.signal(signal.SIGTERM, term)
for sig in (signal.SIGINT, signal.SIGTERM):
    try:
        with _deferred_interrupts():
            os.kill(os.getpid(), sig)
            time.sleep(0.2)
            print("inside", flush=True)
    except KeyboardInterrupt as exc:
        print("after", type(exc).__name__, flush=True)
print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, signal.getsignal(signal.SIGTERM) is term)
"""


@posix_only
def test_an_interrupt_while_a_local_cluster_starts_waits_until_it_has_started():
    """SIGTERM or Ctrl-C while LocalCluster(...) ran left a cluster that was
    never assigned, so nothing closed it, and distributed's exit hook
    printed a traceback ending in 'AssertionError: Status.init'."""
    proc = subprocess.run([sys.executable, "-c", _DEFERRED], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:5] == ["inside", "after KeyboardInterrupt", "inside", "after Terminated",
                                           "True True"], proc.stdout + proc.stderr


def _starting_workers(proc: subprocess.Popen) -> list:
    """The worker processes of ``proc``'s local cluster (spawned by
    multiprocessing; not its resource tracker) that have got as far as
    importing numpy: Python runs in them, with its SIGINT handler (before
    it, the signal's default ends a process without a word)."""
    import psutil
    try:
        kids = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for kid in kids:
        with contextlib.suppress(psutil.Error, OSError):
            if "spawn_main" in " ".join(kid.cmdline()) and "_multiarray_umath" in Path(
                    f"/proc/{kid.pid}/maps").read_text():
                found.append(kid)
    return found


@posix_only
def test_ctrl_c_while_the_local_workers_start_is_one_line_and_ends_them(tmp_path):
    """A Ctrl-C at a terminal reaches every process of the group: the
    workers of a local sweep, still importing, each died of it with a
    traceback on the command's stderr (a screenful each, in the first
    seconds of every local sweep).  They are started with SIGINT blocked
    now, and the command stops them: one line, status 130, no worker left."""
    import psutil
    proc = _experiment(tmp_path / "out", "--jobs", "2")
    try:
        _wait_for(lambda: proc.poll() is not None or _starting_workers(proc), timeout=60, what="a worker process")
        workers = _starting_workers(proc)
        assert workers and proc.poll() is None
        os.killpg(proc.pid, signal.SIGINT)                      # Ctrl-C: the whole group, workers included
        _, err = proc.communicate(timeout=60)
    finally:
        _stop(proc)
    assert proc.returncode == 130, err
    assert len(err.splitlines()) == 1 and err.startswith("epochbench experiment: interrupted"), err
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, alive


def test_keyboard_interrupt_elsewhere_is_one_plain_line(monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "list", interrupted)
    assert cli.main(["list"]) == 130
    assert capsys.readouterr().err == "epochbench list: interrupted\n"


# ---- closed pipe -----------------------------------------------------------------------------
@posix_only
def test_list_into_a_closed_pipe_is_quiet(tmp_path):
    r, w = os.pipe()
    os.close(r)                                       # no reader: every write gets EPIPE
    try:
        res = subprocess.run([sys.executable, "-m", "epochbench.cli", "list"], cwd=ROOT, stdout=w,
                             stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(w)
    assert res.returncode == 141 and res.stderr == ""
    res = subprocess.run(["bash", "-c", f"'{sys.executable}' -m epochbench.cli list | head -1"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout == "packing:\n" and res.stderr == ""


# ---- plug-ins --------------------------------------------------------------------------------
def _plugin_package(root: Path, lines: list[str]) -> None:
    """A distribution ``brokenplug`` in ``root`` (importlib.metadata finds its
    dist-info on sys.path) with the entry points ``lines``."""
    info = root / "brokenplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[epochbench.heuristics]\n" + "\n".join(lines) + "\n")
    (root / "brokenplug_mod.py").write_text(
        "def first(inst):\n    \"\"\"Plug-in: the first job.\"\"\"\n    return [0]\n\n"
        "def ff(inst):\n    return [0]\n\nVALUE = 3\n")


def test_broken_plugins_warn_once_each_and_list_still_works(tmp_path, monkeypatch, capsys):
    _plugin_package(tmp_path, ["gone = brokenplug_missing:f", "ff = brokenplug_mod:ff",
                               "notfunc = brokenplug_mod:VALUE", "plugfirst = brokenplug_mod:first"])
    state = registry.METHODS.snapshot()                 # before the plug-in is on sys.path
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.METHODS.rewind(registry._plugins)
    try:
        assert cli.main(["list"]) == 0
        out, err = capsys.readouterr()
        assert registry.get("packing", "ff").origin == "builtin"
        cli.main(["list"])                                                    # loaded once: no repeat
        assert capsys.readouterr().err == ""
    finally:
        registry.METHODS.restore(state)
        sys.modules.pop("brokenplug_mod", None)
    warnings = err.splitlines()
    assert len(warnings) == 3, err
    assert warnings[0].startswith("epochbench: warning: plug-in entry point 'gone = brokenplug_missing:f'")
    assert "ModuleNotFoundError" in warnings[0]
    assert warnings[1].startswith("epochbench: warning: plug-in entry point 'ff = brokenplug_mod:ff'")
    assert "already exists (builtin)" in warnings[1]
    assert "'notfunc = brokenplug_mod:VALUE'" in warnings[2] and "not a function" in warnings[2]
    assert all(w.endswith("; skipped") for w in warnings)
    assert "plugfirst" in out and "[entry point brokenplug_mod:first]" in out


def test_a_run_with_other_options_keeps_the_earlier_runs_files_and_rows(tmp_path, monkeypatch):
    """A finished subset run, then a whole run on the same folder: the subset
    run's files are renamed, not overwritten; the whole run reuses its rows
    (same tasks) and then drops only its own tasks' records."""
    monkeypatch.setattr(cx, "SLEEP", 0.0)   # in this process, nothing to interrupt: 4 s of sleep saved
    out = tmp_path / "o"
    run_experiment(cx.NAME, Options(out=out, jobs=1, progress=False, tasks="0:3"))
    first = pd.read_csv(out / f"{cx.NAME}.csv")
    assert len(first) == 6 and _records(out) == 3
    time.sleep(1.1)                     # run ids are stamped to the second
    df, _ = run_experiment(cx.NAME, Options(out=out, jobs=1, progress=False))
    assert len(df) == 2 * cx.TASKS
    kept = [p for p in out.glob(f"{cx.NAME}-*.csv") if "table" not in p.name]
    assert len(kept) == 1 and pd.read_csv(kept[0]).equals(first)
    assert not (out / f"{cx.NAME}.partial.jsonl").exists()


def test_drop_records_keeps_other_tasks_records(tmp_path):
    from epochbench.sweep import append_record, drop_records
    path = tmp_path / "p.jsonl"
    with open(path, "a") as log:
        for task in ({"a": 1}, {"a": 2}, {"a": 3}):
            append_record(log, task, [{"x": task["a"]}])
    drop_records(path, [{"a": 1}, {"a": 3}])
    assert [json.loads(line)["task"] for line in path.read_text().splitlines()] == [{"a": 2}]
    drop_records(path, [{"a": 2}])
    assert not path.exists()


def test_a_kept_figure_is_renamed_once_and_claimed_by_its_own_run(tmp_path):
    """Three finished runs of an experiment with a figure into one folder:
    each earlier figure keeps its own run's id, and each run lists only the
    figure it wrote."""
    from epochbench import runs
    out, name = tmp_path / "o", cx.FIGURE     # the tiny experiment: two tasks, a figure
    ids = []
    for _ in range(3):
        run_experiment(name, Options(out=out, quick=True, jobs=1, progress=False))
        ids.append(runs.read(out / f"{name}.run.json")["id"])
        time.sleep(1.1)
    figures = sorted(p.name for p in out.glob(f"{name}*.png"))
    assert figures == sorted([f"{name}.png", f"{name}-{ids[0]}.png", f"{name}-{ids[1]}.png"]), figures
    record = runs.read(out / f"{name}.run.json")
    assert [f for f in record["files"] if f.endswith(".png")] == [f"{name}.png"]
    assert record["options"]["seeds"] is None and record["seeds_run"] == [0, 1]   # the default --seeds, as run


def test_a_run_that_fails_on_its_input_leaves_no_folder_behind(tmp_path, capsys, monkeypatch):
    """The data file is missing: the error comes after the folder was locked."""
    monkeypatch.setenv("EPOCHBENCH_DATA", str(tmp_path / "no-data"))     # restored after the test
    argv = ["generate", "orlib-mknapcb", "--file", "9", "--out"]
    out = tmp_path / "new"
    assert cli.main([*argv, str(out)]) == 2
    assert not out.exists()
    kept = tmp_path / "old"
    kept.mkdir()
    assert cli.main([*argv, str(kept)]) == 2
    assert kept.is_dir()                      # a folder that was there stays


@posix_only
def test_a_cpsat_solve_started_while_the_solving_thread_is_busy_runs_in_place():
    """A solve from a signal handler that interrupted the main thread's wait
    queued behind the solve it interrupted (a deadlock without a time
    limit); it runs in the main thread now."""
    import signal
    import threading
    from types import SimpleNamespace

    from epochbench.exact._binary import cpsat_solve
    nested_done, where = threading.Event(), []

    class Fake:
        def __init__(self, solve):
            self.parameters, self.solve = SimpleNamespace(catch_sigint_signal=True), solve

        def stop_search(self):
            pass

    def inner_solve(model):
        where.append(threading.current_thread().name)
        nested_done.set()
        return 7

    def outer_solve(model):
        nested_done.wait(20)                               # until the nested solve has run
        return 4

    old = signal.signal(signal.SIGALRM, lambda *a: cpsat_solve(Fake(inner_solve), None))
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        outer = Fake(outer_solve)
        assert cpsat_solve(outer, None) == 4 and outer.parameters.catch_sigint_signal is False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert where == ["MainThread"]


#: a user's packing heuristic that starts a long child process (as milp-cbc starts CBC) and waits for it
_SPAWNING = '''
import os, pathlib, subprocess, sys
def slow(inst):
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    pathlib.Path(os.environ["EB_TEST_PIDS"], str(child.pid)).touch()
    child.wait()
    return ()
'''


@posix_only
def test_sigterm_stops_a_sweep_like_ctrl_c_and_ends_the_processes_its_tasks_started(tmp_path):
    """SIGTERM (timeout, a batch system's cancel) to a local-cluster sweep
    left the solver processes its workers had started running to their
    time limit, re-parented; the command said nothing and exited -15."""
    (tmp_path / "spawning_heuristic.py").write_text(_SPAWNING)
    pids = tmp_path / "pids"
    pids.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
           "EB_TEST_PIDS": str(pids)}
    cmd = [sys.executable, "-m", "epochbench", "validate", "spawning_heuristic:slow", "--count", "2",
           "--workers", "2"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    started = []
    try:
        _wait_for(lambda: proc.poll() is not None or len(list(pids.iterdir())) >= 2, timeout=120,
                  what="two child processes started by the tasks")
        assert proc.poll() is None, proc.communicate()
        started = [int(p.name) for p in pids.iterdir()]
        assert all(_alive(pid) for pid in started)
        os.kill(proc.pid, signal.SIGTERM)                        # the client alone, as timeout sends it
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 143, err
        assert err.strip().splitlines()[-1] == "epochbench validate: stopped by SIGTERM"
        _wait_for(lambda: not any(_alive(pid) for pid in started), timeout=10, what="the children to end")
    finally:
        _stop(proc)
        for pid in started:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


@posix_only
def test_a_stopped_local_clusters_workers_and_the_processes_their_tasks_started_are_told_apart():
    """A stopped sweep ends what the tasks started before it closes its
    local cluster (a worker waiting on such a process held the close 4 s),
    and the workers after: ``_worker_trees`` gives the two apart."""
    from types import SimpleNamespace

    from epochbench import sweep as sw
    code = "import subprocess, sys, time\nsubprocess.Popen(['sleep', '60'])\nprint('up', flush=True)\ntime.sleep(60)\n"
    worker = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert worker.stdout.readline().strip() == "up"
        cluster = SimpleNamespace(workers={"w": SimpleNamespace(process=SimpleNamespace(process=worker))})
        workers, started = sw._worker_trees(cluster)
        assert [p.pid for p in workers] == [worker.pid]
        assert len(started) == 1 and started[0].name() == "sleep" and started[0].ppid() == worker.pid
        sw._end(started, wait=0)
        _wait_for(lambda: not _alive(started[0].pid), timeout=10, what="the task's process to end")
        assert worker.poll() is None                                          # the worker itself is left
        assert sw._worker_trees(SimpleNamespace()) == ([], [])                # no workers: nothing
    finally:
        import contextlib

        import psutil
        with contextlib.suppress(psutil.Error):
            for child in psutil.Process(worker.pid).children(recursive=True):
                child.kill()
        worker.kill()
        worker.wait()


@posix_only
def test_ctrl_c_stops_a_long_compiled_simulation_run_without_progress():
    """The compiled loop ran in the calling thread when no progress was
    asked for, which held off every signal handler until it returned: an
    overloaded stream of 2 million jobs ran on for over an hour through
    SIGTERM (the command line's handler raises as Ctrl-C does).  Here a
    stream that would take hours (every job at 0, EASY scanning the whole
    queue at each end) stops at Ctrl-C."""
    code = ("import numpy as np, sys\n"
            "import epochbench as eb\n"
            "from epochbench.instances.jobs import make_workload\n"
            "n = 300_000\n"
            "rng = np.random.default_rng(1)\n"
            "w = make_workload({'id': np.arange(1, n + 1), 'submit': np.zeros(n), 'runtime': rng.uniform(1, 100, n),"
            " 'procs': rng.integers(1, 64, n)}, [64])\n"
            "eb.simulate(make_workload({'id': [1], 'submit': [0.0], 'runtime': [1.0], 'procs': [1]}, [64]), 'easy',"
            " engine='fast')\n"
            "print('started', flush=True)\n"
            "eb.simulate(w, 'easy', engine='fast')\n"
            "print('finished', flush=True)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "started", child.stderr.read()[-2000:]
        time.sleep(1.0)                                             # into the loop
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=120)                     # hours, had it not stopped
        assert "finished" not in out and child.returncode != 0
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_sigterm_lost_in_code_python_cannot_raise_from_is_raised_again():
    """The handler's Terminated, raised inside a garbage-collection callback
    of Dask's, was dropped ("Exception ignored in ..."): once in ten SIGTERMs
    the experiment ran to the end, exited 0 and was recorded finished.  The
    unraisable hook delivers SIGTERM again, where it can raise."""
    import signal
    import time

    from epochbench import cli

    class Dropper:
        def __del__(self):
            term._raise(signal.SIGTERM, None)      # the handler inside __del__: its exception is dropped

    term = cli._TermAsInterrupt()
    try:
        with pytest.raises(cli.Terminated, match="stopped by SIGTERM"):
            d = Dropper()
            del d
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.001)
        assert term.seen
    finally:
        term.restore()
    assert sys.unraisablehook is not term._unraisable

    # the main thread blocked in a wait (a Dask result): a flag set for the eval loop waited with it,
    # a signal ends the wait (a functional bound, 60 s of a 120 s wait, not a speed measure)
    import threading
    term = cli._TermAsInterrupt()
    try:
        t0 = time.monotonic()
        with pytest.raises(cli.Terminated):
            d = Dropper()
            del d
            threading.Event().wait(120)
        assert time.monotonic() - t0 < 60
    finally:
        term.restore()

    class DropsCtrlC:
        def __del__(self):
            raise KeyboardInterrupt                # as Python's SIGINT handler raises it there

    term = cli._TermAsInterrupt()
    try:
        with pytest.raises(KeyboardInterrupt) as got:
            d = DropsCtrlC()
            del d
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                time.sleep(0.001)
        assert not isinstance(got.value, cli.Terminated)
    finally:
        term.restore()
