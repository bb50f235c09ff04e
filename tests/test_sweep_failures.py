"""The sweep runner when its scheduler is wrong, goes away or lacks what a task needs.

Dask schedulers and workers are started on 127.0.0.1 (random ports, the
address read from a scheduler file; their HTTP servers on 127.0.0.1 too),
each under ``timeout`` and killed in a ``finally``.  The workers of
``bare`` start in an empty folder without the tests on their
``PYTHONPATH``: what a task of this file needs travels by value.  The
services that are no scheduler (a web server's silence, an SSH banner) are
sockets of this process.
"""
from __future__ import annotations

import contextlib
import importlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import cloudpickle
import pytest

from _processes import kill_group, wait_for, workers_seen

import epochbench as eb
from epochbench import cli, sweep as sw
from epochbench.experiments import EXPERIMENTS, Experiment, Options, run_experiment, run_options, sweep

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
DASK = str(Path(sys.executable).with_name("dask"))
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
NAME = "sweep-failures-test"


# ---- helpers ---------------------------------------------------------------------------------


def _bare_env() -> dict:
    """The environment of a remote machine: none of the tests' modules."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _start(args: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(["timeout", "300", DASK, *args], cwd=cwd, env=_bare_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


@contextlib.contextmanager
def _cluster(folder: Path, workers: int = 1, *worker_args: str):
    """A scheduler (``--no-dashboard``) and ``workers`` workers started in
    ``folder``; yields the address and the scheduler's process."""
    folder.mkdir(parents=True, exist_ok=True)
    info = folder / "scheduler.json"
    sched = _start(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--dashboard-address",
                    "127.0.0.1:0", "--scheduler-file", str(info)], folder)
    procs = [sched]
    try:
        wait_for(lambda: info.exists() and info.stat().st_size > 0, what="the scheduler")
        address = json.loads(info.read_text())["address"]
        for _ in range(workers):
            procs.append(_start(["worker", address, "--no-nanny", "--host", "127.0.0.1", "--no-dashboard",
                                 "--dashboard-address", "127.0.0.1:0", "--death-timeout", "20", *worker_args],
                                folder))
        if workers:
            wait_for(lambda: workers_seen(address, workers), what=f"{workers} worker(s)")
        yield address, sched
    finally:
        for p in procs[::-1]:
            kill_group(p)


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A scheduler and one worker of two threads, no resource ``exclusive``,
    started elsewhere without the tests on their path."""
    with _cluster(tmp_path_factory.mktemp("bare"), 1, "--nthreads", "2") as (address, _):
        yield address


@contextlib.contextmanager
def _server(reply: bytes | None):
    """A TCP server on 127.0.0.1 that accepts and sends ``reply`` (None:
    says nothing, as a web server waiting for a request); yields its address."""
    srv = socket.create_server(("127.0.0.1", 0))
    conns = []

    def serve():
        with contextlib.suppress(OSError):
            while True:
                conn, _ = srv.accept()
                conns.append(conn)
                if reply is not None:
                    conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        srv.close()
        for c in conns:
            c.close()


def square(task: dict) -> list[dict]:
    time.sleep(task.get("sleep", 0))
    return [{"x": task["x"], "y": task["x"] ** 2}]


def tasks_of(opts: Options) -> list[dict]:
    """30 tasks of 0.1 s; ``--quick``: 4 at once."""
    return [{"x": x} for x in range(4)] if opts.quick else [{"x": x, "sleep": 0.1} for x in range(30)]


@pytest.fixture
def experiment():
    """A tiny experiment (module-level run function: by value on ``bare``)."""
    exp = Experiment(NAME, "test experiment (sweep failures)", tasks_of, square, lambda df: df)
    EXPERIMENTS[exp.name] = exp
    yield exp
    EXPERIMENTS.pop(exp.name, None)


# ---- 1, 2: what answers at the address is no scheduler ----------------------------------------
def test_a_silent_service_is_refused_in_one_line_within_the_deadline(monkeypatch):
    monkeypatch.setattr(sw, "CONNECT_TIMEOUT", 1.5)
    with _server(None) as address:
        t0 = time.monotonic()
        with pytest.raises(ValueError) as err:
            sw.run_tasks(square, [{"x": 1}, {"x": 2}], scheduler=address, progress=False)
        assert time.monotonic() - t0 < 10
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"--scheduler {address}: no Dask scheduler answered within 1.5 s")
    assert "8786" in msg and "8787 is its dashboard" in msg


def test_the_command_exits_promptly_after_a_silent_service():
    code = ("import sys; from epochbench import cli, sweep; sweep.CONNECT_TIMEOUT = 1.0; "
            "sys.exit(cli.main(['validate', 'sample_heuristics:smallest_first', '--count', '2', "
            "'--scheduler', sys.argv[1]]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    with _server(None) as address:
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", code, address], cwd=ROOT, capture_output=True, text=True,
                              env=env, timeout=60)
        took = time.monotonic() - t0
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "no Dask scheduler answered within 1 s" in proc.stderr and took < 30


def test_a_service_that_speaks_first_is_no_scheduler_in_one_line():
    with _server(b"SSH-2.0-OpenSSH_9.2p1\r\n") as address:
        with pytest.raises(ValueError) as err:
            sw.run_tasks(square, [{"x": 1}, {"x": 2}], scheduler=address, progress=False)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"--scheduler {address}: cannot connect (not a Dask scheduler?")


# ---- 6: a bad address or worker count is refused before anything is touched --------------------
@pytest.mark.parametrize("address, says", [("tcp//127.0.0.1:8799", "not a scheduler address"),
                                           ("notanaddress.invalid:8786", "unknown host 'notanaddress.invalid'"),
                                           ("head", "not a scheduler address"),       # no port
                                           ("http://127.0.0.1:8787", "unknown protocol 'http'"),
                                           ("tcp://127.0.0.1:99999", "not a scheduler address")])
def test_a_malformed_address_is_refused_at_once(address, says):
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=f"^--scheduler {address}: {says}; give tcp://HOST:PORT"):
        sw.run_tasks(square, [{"x": 1}, {"x": 2}], scheduler=address, progress=False)
    assert time.monotonic() - t0 < 5
    with socket.socket() as listening:                                     # well formed, something listens
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        where = f"127.0.0.1:{listening.getsockname()[1]}"
        assert sw.check_scheduler(where) == where                          # Dask's default protocol


@pytest.mark.parametrize("address", ["", "  "])
def test_an_empty_scheduler_option_is_refused_but_a_blank_environment_is_unset(address, monkeypatch):
    """``score --scheduler ''`` quietly ran on a local cluster."""
    with pytest.raises(ValueError, match="^--scheduler: an empty address; give tcp://HOST:PORT, or leave the "
                                         "option out for a local cluster$"):
        sw.check_scheduler(address)
    monkeypatch.setenv(sw.SCHEDULER_ENV, address)
    assert sw.check_scheduler(None) is None


def test_the_environment_address_is_checked_and_named(monkeypatch):
    monkeypatch.setenv(sw.SCHEDULER_ENV, "tcp//127.0.0.1:8799")
    with pytest.raises(ValueError, match="^EPOCHBENCH_SCHEDULER tcp//127.0.0.1:8799: not a scheduler address"):
        sw.check_scheduler(None)


def _listing(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()} if folder.exists() else {}


def test_a_bad_scheduler_or_worker_count_leaves_the_previous_run_alone(tmp_path, experiment, monkeypatch,
                                                                       capsys):
    out = tmp_path / "out"
    run_experiment(NAME, Options(out=out, jobs=1, progress=False, quick=True))
    before = _listing(out)
    assert f"{NAME}.csv" in before and f"{NAME}.run.json" in before
    with pytest.raises(ValueError, match="not a scheduler address"):
        run_experiment(NAME, Options(out=out, progress=False, quick=True, scheduler="tcp//127.0.0.1:8799"))
    monkeypatch.setenv(sw.WORKERS_ENV, "x")
    with pytest.raises(ValueError, match="EPOCHBENCH_WORKERS must be an integer from 1 to .*, got 'x'"):
        run_experiment(NAME, Options(out=out, progress=False, quick=True))
    assert _listing(out) == before                          # nothing renamed aside, no failed run written
    monkeypatch.delenv(sw.WORKERS_ENV)
    monkeypatch.chdir(tmp_path)
    assert cli.main(["experiment", NAME, "--scheduler", "tcp://notanaddress.invalid:8786", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown host 'notanaddress.invalid'" in err
    assert not (tmp_path / "results").exists()              # no empty run folder
    monkeypatch.setattr(sw, "CONNECT_TIMEOUT", 1.0)
    with _server(None) as address:                          # well formed, listening, but no Dask scheduler
        with pytest.raises(ValueError, match="no Dask scheduler answered within 1 s"):
            run_experiment(NAME, Options(out=out, progress=False, quick=True, scheduler=address))
    assert _listing(out) == before


# ---- 3: the scheduler goes away mid-sweep ----------------------------------------------------------
def _kill_when(proc: subprocess.Popen, cond) -> threading.Thread:
    def kill():
        wait_for(cond, what="the moment to kill the scheduler")
        os.killpg(proc.pid, signal.SIGKILL)
    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


def test_losing_the_scheduler_stops_an_experiment_in_one_line_and_it_resumes(tmp_path, experiment, capfd):
    out = tmp_path / "out"
    part = out / f"{NAME}.partial.jsonl"
    with _cluster(tmp_path / "dask", 1, "--nthreads", "1") as (address, sched):
        killer = _kill_when(sched, lambda: part.exists() and part.read_bytes().count(b"\n") >= 3)
        with pytest.raises(sw.SchedulerLost) as err:
            run_experiment(NAME, Options(out=out, progress=False, scheduler=address))
        killer.join(5)
    lost = err.value
    assert isinstance(lost, RuntimeError) and not isinstance(lost, ValueError)
    assert 3 <= lost.done < 30 and lost.total == 30 and lost.saved and lost.address == address
    assert str(lost) == f"lost the scheduler {address}: {lost.done} of 30 runs done (saved); " \
                        "run the same command to resume"
    assert part.read_bytes().count(b"\n") == lost.done
    info = json.loads((out / f"{NAME}.run.json").read_text())
    assert info["status"] == "interrupted" and info["error"].startswith("SchedulerLost: lost the scheduler")
    err_text = capfd.readouterr().err
    assert "Traceback" not in err_text and "distributed" not in err_text     # no failure per task, no log
    df, _ = run_experiment(NAME, Options(out=out, jobs=1, progress=False))    # resumes here
    assert sorted(df["x"]) == list(range(30))


def test_losing_the_scheduler_stops_a_score_like_sweep_in_one_line(tmp_path):
    with _cluster(tmp_path / "dask", 0) as (address, sched):   # no worker: the tasks wait
        started = time.monotonic()
        killer = _kill_when(sched, lambda: time.monotonic() - started > 2)
        with pytest.raises(sw.SchedulerLost) as err:
            sw.run_tasks(square, [{"x": x} for x in range(3)], scheduler=address, progress=False,
                         stop_on_error=True, exclusive=True)
        killer.join(5)
        assert time.monotonic() - started < 20
    assert str(err.value) == f"lost the scheduler {address}: 0 of 3 tasks done (not kept); run the command again"


# ---- 4, 5: what the workers lack -------------------------------------------------------------------
class NeedsAMissingModule:
    """Unpickles by importing a module that no worker has."""

    def __reduce__(self):
        return importlib.import_module, ("epochbench_no_such_module",)


def echo(task: dict) -> list[dict]:
    return [{"x": task["x"]}]


def test_a_task_the_workers_cannot_unpickle_says_why_once(bare):
    tasks = [{"x": x, "needs": NeedsAMissingModule()} for x in range(6)]
    with pytest.raises(sw.SweepFailed) as err:
        sweep(echo, tasks, scheduler=bare, progress=False)
    lines = str(err.value).splitlines()
    why = "No module named 'epochbench_no_such_module'"
    assert len(lines) == 2 and lines[0].startswith("6 of 6 tasks failed; first: task") and why in lines[0]
    assert lines[1].startswith("  all of them (tasks 0:6): cannot unpickle the task on worker") and why in lines[1]
    assert "on worker tcp://127.0.0.1:" in lines[1]          # its address: the host alone named none of them
    assert "https://" not in str(err.value) and err.value.done == 0
    assert err.value.report().count("--- task") == 1                       # one traceback for the six
    with pytest.raises(ValueError, match=f"cannot unpickle the task .*{why}"):
        sw.run_tasks(echo, tasks, scheduler=bare, progress=False, stop_on_error=True)


def test_a_failure_line_is_the_error_not_the_last_line_of_its_message():
    dask_text = """Traceback (most recent call last):
  File "distributed/protocol/pickle.py", line 95, in loads
    return pickle.loads(x)
ModuleNotFoundError: No module named 'usermod'

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "epochbench/sweep.py", line 433, in _on_dask
    ok, value = fut.result()
RuntimeError: Error during deserialization of the task graph. This frequently
occurs if the Scheduler and Client have different environments.
For more information, see
https://docs.dask.org/en/stable/deployment-considerations.html#consistent-software-environments
"""
    line = sw.Failure(0, {"x": 0}, dask_text).line()
    assert line.startswith("task 0 x=0: RuntimeError: Error during deserialization of the task graph. This "
                           "frequently occurs")
    assert line.endswith("; cause: ModuleNotFoundError: No module named 'usermod'") and "\n" not in line
    assert sw.reason_of("Traceback (most recent call last):\n  File \"x\", line 1\nZeroDivisionError: boom\n") \
        == "ZeroDivisionError: boom"
    failures = [sw.Failure(i, {"x": i}, dask_text) for i in range(40)] + [sw.Failure(40, {"x": 40}, "oops")]
    msg = str(sw.SweepFailed(failures, 50))
    assert msg.count("\n") == 2 and "  40 of them (tasks 0:40): RuntimeError" in msg and "  task 40 x=40: oops" in msg


def write_module(folder: Path, name: str) -> None:
    (folder / f"{name}.py").write_text(
        "import importlib.util\nimport epochbench as eb\n\n"
        "def candidate(inst):\n    return list(eb.solve(inst, 'ff').decision)\n\n"
        "def where(task):\n"
        "    return [{'x': task['x'], 'found': importlib.util.find_spec(task['name']) is not None}]\n")


def test_a_module_only_this_process_has_travels_by_value(tmp_path, bare, monkeypatch, capsys):
    name = f"epochbench_sweep_user_{os.getpid()}"
    write_module(tmp_path, name)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        mod = importlib.import_module(name)
        rows = sweep(mod.where, [{"x": x, "name": name} for x in range(3)], scheduler=bare, progress=False)
        assert [r["found"] for r in rows] == [False, False, False]          # not on the workers: by value
        assert name not in cloudpickle.list_registry_pickle_by_value()    # registered only while pickling
        status = cli.main(["validate", f"{name}:candidate", "--count", "2", "--time-limit", "2",
                           "--scheduler", bare])
    finally:
        sys.modules.pop(name, None)
    out, err = capsys.readouterr()
    assert status == 0 and "verdict: PASS" in out
    # 7: the worker declares no ``exclusive`` and runs two threads: one warning line
    warning = [line for line in err.splitlines() if "warning" in line]
    assert len(warning) == 1 and "declares the resource 'exclusive' and one runs 2 threads" in warning[0]


# ---- 7, 8, 9: the warning, the provenance, the progress line and the logs ---------------------------
class _Info:
    def __init__(self, workers):
        self.workers = workers

    def scheduler_info(self):
        return {"workers": self.workers}


def test_timed_tasks_ask_for_exclusive_and_warn_where_no_worker_has_it(capsys):
    one = {"nthreads": 1, "resources": {}}
    assert sw._resources(_Info({"a": {"nthreads": 4, "resources": {"exclusive": 1}}, "b": one}), "tcp://h:1") \
        == {"exclusive": 1}
    assert sw._resources(_Info({"a": one, "b": one}), "tcp://h:1") is None
    assert capsys.readouterr().err == ""                    # one thread a worker: no two tasks share a process
    assert sw._resources(_Info({}), "tcp://h:1") is None
    assert capsys.readouterr().err == ""                    # no worker yet: said once, by _check_workers

    class _NoWorker:
        def run(self, *args, **kwargs):
            return {}
    sw._check_workers(_NoWorker(), "tcp://h:1")             # a sweep hung without a word
    assert "tcp://h:1 has no worker yet: the tasks wait until one joins" in capsys.readouterr().err


def test_provenance_records_the_scheduler_of_the_environment(tmp_path, bare, experiment, monkeypatch, capsys):
    monkeypatch.setenv(sw.SCHEDULER_ENV, bare)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)             # the progress lines
    levels = []
    real = sw.append_record

    def spy(*args, **kw):                                 # runs as each result arrives
        levels.append((logging.getLogger("distributed").level, logging.getLogger("distributed.client").level))
        return real(*args, **kw)

    monkeypatch.setattr(sw, "append_record", spy)
    before = logging.getLogger("distributed.client").level
    df, _ = run_experiment(NAME, Options(out=tmp_path, progress=True, quick=True))
    assert sorted(df["x"]) == [0, 1, 2, 3]
    execution = json.loads((tmp_path / f"{NAME}.run.json").read_text())["execution"]
    assert execution["scheduler"] == bare and execution["workers"] is None and execution["workers_started"] is None
    assert levels and set(levels) == {(logging.ERROR, logging.CRITICAL)}   # no "Couldn't gather" warnings
    assert logging.getLogger("distributed.client").level == before
    err = capsys.readouterr().err
    assert f"  scheduler {bare}\n" in err and "dashboard" not in err      # --no-dashboard: no link
    monkeypatch.delenv(sw.SCHEDULER_ENV)
    assert sw.scheduler_of(None) is None
    info = run_options(NAME, Options(), 4)
    assert info["execution"]["workers"] == 1 and info["execution"]["scheduler"] is None   # conftest: 1 worker


def test_score_and_validate_name_the_scheduler_though_they_print_their_own_progress(bare, monkeypatch, capsys):
    """They run their sweep with progress=False (their own [i/n] lines), so
    the line naming the scheduler and its dashboard, which the README
    promises for every sweep on a terminal, never came."""
    from epochbench.instances.generators import generate
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    sw.run_tasks(square, [{"x": 1}, {"x": 2}], scheduler=bare, progress=False)
    assert "scheduler" not in capsys.readouterr().err
    fam = generate("leinberger", n=8, k=2, count=2, seed=1)
    seen = []
    from epochbench.scoring import score
    score(fam, ["ff"], scheduler=bare, progress=lambda i, inst: seen.append(i))
    assert seen == [1, 2] and f"  scheduler {bare}\n" in capsys.readouterr().err


def test_the_command_line_says_a_lost_scheduler_in_one_line_with_status_1(monkeypatch, capsys):
    """Not a traceback, not 'bad input' (status 2): ``RunStopped`` is one line, status 1."""
    from epochbench import cli
    from epochbench.sweep import SchedulerLost

    def lose(args):
        raise SchedulerLost("tcp://127.0.0.1:8786", 3, 10, saved=True)

    monkeypatch.setitem(cli.COMMANDS, "list", lose)
    assert cli.main(["list"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("epochbench list: error: lost the scheduler tcp://127.0.0.1:8786: 3 of 10 runs done (saved); "
                   "run the same command to resume")


def test_an_address_where_nothing_listens_is_refused_before_the_previous_run_is_touched(tmp_path):
    import time
    from epochbench.sweep import check_scheduler
    with socket.socket() as s:               # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=rf"--scheduler tcp://127.0.0.1:{port}: cannot connect .*8786"):
        check_scheduler(f"tcp://127.0.0.1:{port}")
    assert time.perf_counter() - t0 < 5


def test_score_records_where_it_ran(tmp_path, monkeypatch):
    from epochbench import cli
    monkeypatch.chdir(tmp_path)
    assert cli.main(["generate", "mkp", "--out", "fam", "--n", "8", "--k", "2", "--count", "2"]) == 0
    monkeypatch.setenv(sw.WORKERS_ENV, "1")
    assert cli.main(["score", "fam", "--methods", "greedy-mkp"]) == 0
    assert json.loads((tmp_path / "fam" / "scores.run.json").read_text())["execution"] == {
        "workers": 1, "scheduler": None, "workers_started": 0}               # in the command's own process
    monkeypatch.setenv(sw.SCHEDULER_ENV, "tcp//nowhere:1")             # checked before any solve
    assert cli.main(["score", "fam", "--methods", "greedy-mkp"]) == 2


def test_workers_started_counts_the_processes_a_sweep_starts():
    assert [sw.workers_started(w, None, n) for w, n in [(1, 9), (4, 1), (4, 0), (4, 3), (4, 9)]] == [0, 0, 0, 3, 4]
    assert sw.workers_started(None, "tcp://h:1", 9) is None and sw.workers_started(4, "tcp://h:1", 9) is None


def _exits(task):
    """A task that ends its worker process (as a user's heuristic calling os._exit would)."""
    if task["n"] == 1:
        os._exit(7)
    return task["n"]


@pytest.mark.parametrize("stop", [True, False])
def test_a_task_that_kills_its_workers_is_named_in_one_line(stop):
    import dask
    import distributed  # noqa: F401 - its defaults are in dask's config before one is changed
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        if stop:
            with pytest.raises(sw.WorkerDied) as err:
                sw.run_tasks(_exits, [{"n": 0}, {"n": 1}], workers=2, progress=False, stop_on_error=True)
            assert err.value.index == 1 and "\n" not in str(err.value)
            assert str(err.value).startswith("task 1 n=1: every worker process that ran task 1 died")
        else:
            done, failures = sw.run_tasks(_exits, [{"n": 0}, {"n": 1}], workers=2, progress=False)
            assert done == {0: 0} and [f.index for f in failures] == [1]
            assert failures[0].line() == f"task 1 n=1: WorkerDied: {sw.died(1)}"


#: a child that answers SIGINT with a handler of its own, as CBC does when TimedCBC stops it
_HANDLES_SIGINT = ("import signal, sys, time\n"
                   "signal.signal(signal.SIGINT, lambda *a: (print('stopped', flush=True), sys.exit(0)))\n"
                   "print('ready', flush=True)\n"
                   "time.sleep(60)\n"
                   "print('not stopped', flush=True)\n")


def _stops_a_child_with_sigint(task: dict) -> dict:
    """A task that starts a child, as TimedCBC starts CBC, and stops it with SIGINT."""
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    child = subprocess.Popen([sys.executable, "-c", _HANDLES_SIGINT], stdout=subprocess.PIPE, text=True)
    try:
        child.stdout.readline()
        child.send_signal(signal.SIGINT)
        out = child.communicate(timeout=30)[0].strip()
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    return {"n": task["n"], "blocked": blocked, "child": out}


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_a_process_a_local_workers_task_starts_gets_sigint():
    """A local cluster's workers start with SIGINT blocked (a terminal's
    Ctrl-C while they start is the command's to handle); a task's thread
    unblocks it, so that a process the task starts is stopped by SIGINT:
    CBC, whose time limit TimedCBC ends with one, was killed after the
    grace period instead, its incumbent and bound lost."""
    done, failures = sw.run_tasks(_stops_a_child_with_sigint, [{"n": 0}, {"n": 1}], workers=2, progress=False)
    assert not failures, [f.line() for f in failures]
    assert [done[i] for i in (0, 1)] == [{"n": i, "blocked": False, "child": "stopped"} for i in (0, 1)]


#: a sweep on a local cluster whose two tasks each start a child 1.5 s after they begin; the
#: process interrupts itself (as Ctrl-C would) as soon as both tasks run, and again 0.5 s later
#: (with the process pool: as soon as both children run)
_STOPPED_BEFORE_THE_CHILDREN = """
import os, signal, sys, threading, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import _processes
from epochbench import sweep as sw
if __name__ == "__main__":
    d, pool = Path(sys.argv[1]), sys.argv[3] == "pool"
    # the pool's workers are terminated at once: its tasks' children start before the stop
    tasks = [{"mark": str(d / f"mark{i}"), "child": str(d / f"child{i}"), "after": 0.0 if pool else 1.5}
             for i in range(2)]
    def stop():
        while not all(Path(t["child" if pool else "mark"]).exists() for t in tasks):
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=stop, daemon=True).start()
    try:
        if pool:                                 # the experiments' former process pool
            from epochbench.experiments import sweep
            sweep(_processes.late_child_rows, tasks, jobs=2, pool=True, progress=False)
        else:
            sw.run_tasks(_processes.start_a_child_late, tasks, workers=2, progress=False)
    except KeyboardInterrupt:
        print("interrupted")
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("where", ["dask", "pool"])
def test_a_process_a_task_starts_after_the_stop_began_is_ended_too(tmp_path, where):
    """A stopped local sweep ends the processes its tasks started; those it
    looked for were the ones alive when the stop began, so a task still
    building its model started CBC a moment later, and that CBC outlived
    its worker and ran to its own time limit (a Ctrl-C 4.5 s into a ``score``
    of milp-cbc with a 60 s limit left two, 3 times in 4).  The workers
    carry a tag in their environment, which every process they start
    inherits; the stop ends whatever carries it.  A second Ctrl-C waits
    until the clean-up ends: it cut it short, before that search.  The
    experiments' former process pool (``pool=True``) terminated its workers
    and left their processes so too."""
    import psutil
    script = tmp_path / "stopped.py"
    script.write_text(_STOPPED_BEFORE_THE_CHILDREN)
    tests = str(Path(__file__).resolve().parent)
    alive = []
    try:
        proc = subprocess.run([sys.executable, str(script), str(tmp_path), tests, where], capture_output=True,
                              text=True, timeout=150)
    finally:                                   # the children never outlive the test, whatever happened
        pids = [int((tmp_path / f"child{i}").read_text()) for i in range(2) if (tmp_path / f"child{i}").exists()]
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                child = psutil.Process(pid)
                if child.status() != psutil.STATUS_ZOMBIE and "time.sleep(120)" in " ".join(child.cmdline()):
                    alive.append(child)
                    child.kill()
    assert proc.stdout.strip() == "interrupted", proc.stdout + proc.stderr[-2000:]
    assert len(pids) == 2, "the tasks were stopped before they started their children: nothing was tested"
    assert not alive, f"{len(alive)} process(es) a task started outlived the stopped sweep"


def test_a_task_is_named_by_its_instance():
    inst = eb.generate("leinberger", count=1, seed=1)[0]
    assert sw._label({"instance": inst, "k": 2}) == f"instance={inst.name} k=2"


def test_a_process_reports_the_code_it_imported_not_the_files_as_they_are_later(monkeypatch):
    """A worker asked again after the checkout changed reported the new
    files' state while it ran the code it had imported."""
    from epochbench import runs
    sw.code_here.cache_clear()
    monkeypatch.setattr(runs, "git_commit", lambda where=None: "a" * 40 + "+dirty")
    monkeypatch.setattr(runs, "git_diff", lambda where=None: "1" * 12)
    try:
        first = sw.code_here()
        monkeypatch.setattr(runs, "git_diff", lambda where=None: "2" * 12)     # the files changed since
        assert sw.code_here() == first and first["diff"] == "1" * 12
        assert not sw._same_code(first, {**first, "diff": "2" * 12})
        assert sw._same_code(first, {**first, "commit": None})                 # a wheel install: version only
    finally:
        sw.code_here.cache_clear()


def test_workers_beside_a_scheduler_are_refused_not_ignored(tmp_path, monkeypatch, capsys):
    """``--workers`` sizes a local cluster; with a scheduler it did nothing
    and ``run.json`` recorded it as if it held."""
    from epochbench import cli
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(sw.SCHEDULER_ENV, raising=False)
    assert cli.main(["generate", "mkp", "--out", "fam", "--n", "8", "--k", "2", "--count", "2"]) == 0
    capsys.readouterr()
    assert cli.main(["score", "fam", "--methods", "greedy-mkp", "--workers", "1",
                     "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert capsys.readouterr().err.strip() == (
        "epochbench score: error: --workers 1 and --scheduler tcp://127.0.0.1:1: the scheduler's workers run "
        "the sweep and --workers sizes a local one; give one of them")
    monkeypatch.setenv(sw.SCHEDULER_ENV, "tcp://127.0.0.1:1")
    assert cli.main(["experiment", NAME, "--workers", "2", "--quiet", "--out", "x"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"epochbench experiment: error: --workers 2 and ${sw.SCHEDULER_ENV} (tcp://127.0.0.1:1): the scheduler's "
        f"workers run the sweep and --workers sizes a local one; unset {sw.SCHEDULER_ENV} to run on local workers")
    assert not (tmp_path / "fam" / "scores.run.json").exists() and not (tmp_path / "x").exists()
    # generate's --jobs is the stream's job count, no sweep option: it was refused with the scheduler set
    assert cli.main(["generate", "workload", "--jobs", "50", "--out", "w.swf"]) == 0
    capsys.readouterr()
    assert cli.main(["experiment", "list", "--workers", "2"]) == 2          # runs nothing: said so
    assert "options of a run; 'experiment list' runs nothing" in capsys.readouterr().err


def test_a_worker_with_another_version_of_a_plugin_is_refused(monkeypatch):
    """An audit ran a sweep on a worker with version 2.0 of a plug-in the
    client had in 1.0: exit 0, version 2.0's values, and run.json said 1.0."""
    from epochbench import runs
    sw.code_here.cache_clear()
    monkeypatch.setattr(runs, "installed_plugins", lambda: [
        {"group": "epochbench.methods", "name": "mine", "value": "mine:reg", "package": "mineplug", "version": "1.0"}])
    try:
        mine = sw.code_here()
        assert mine["plugins"] == {"mineplug": "1.0"}
        theirs = {**mine, "plugins": {"mineplug": "2.0"}}

        class Client:
            def run(self, func, *args, on_error=None):
                return {"tcp://127.0.0.1:9": theirs}

        with pytest.raises(ValueError, match=r"1 worker\(s\) of tcp://h:1 run other code than this client "
                                             r"\(tcp://127.0.0.1:9: epochbench .*, plug-in mineplug 2.0; here: "
                                             r"epochbench .*, plug-in mineplug 1.0\)"):
            sw._check_workers(Client(), "tcp://h:1")
        ok, line = sw._remote(b"", b"", code=theirs)          # a worker that joins later: at its first task
        assert not ok and "plug-in mineplug 1.0) than the client" in line and "plug-in mineplug 2.0" in line
        assert sw._same_code(mine, {**mine, "plugins": {}})                  # one it lacks: the task says so
        assert sw._same_code(mine, {**mine, "plugins": {"mineplug": "1.0", "other": "3"}})
    finally:
        sw.code_here.cache_clear()


def test_a_sweep_whose_workers_all_left_says_so(capsys):
    """Every worker killed mid-run: the sweep waited without a word until
    the audit's timeout killed it."""
    counts = [2, 0, 0, 1, 1]

    class Client:
        def scheduler_info(self, n_workers=-1):
            assert n_workers == 0
            return {"n_workers": counts.pop(0) if counts else 1}

    with sw._watch_workers(Client(), "tcp://h:1", lambda: 7, every=0.01):
        end = time.monotonic() + 30                 # each look in turn, however slow the machine
        while counts and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.05)
    err = capsys.readouterr().err.splitlines()
    assert err == ["epochbench: warning: tcp://h:1 has no worker left: 7 task(s) wait until one joins (Ctrl-C "
                   "stops the run)", "epochbench: tcp://h:1: 1 worker(s) now; the sweep goes on"]


@pytest.mark.parametrize("fails", [False, True])
def test_a_scheduler_that_stops_answering_is_said_and_so_is_its_return(capsys, fails):
    """A stopped scheduler (SIGSTOP, a swapping machine) hung the watcher's
    look with the sweep: the run waited without a word.  A look that then
    fails (the scheduler gone) is no answer: it said "answers again"."""
    frozen, looks = threading.Event(), []

    class Client:
        def scheduler_info(self, n_workers=-1):
            looks.append(n_workers)
            if len(looks) == 2:                     # the second look: no answer until released
                frozen.wait(30)
                if fails:
                    raise OSError("the scheduler is gone")
            elif fails and len(looks) > 2:
                raise OSError("the scheduler is gone")
            return {"n_workers": 1}

    said = []
    with sw._watch_workers(Client(), "tcp://h:1", lambda: 4, every=0.01, silent_after=0.05):
        end = time.monotonic() + 30
        while not any("has not answered" in line for line in said) and time.monotonic() < end:
            said += capsys.readouterr().err.splitlines()
            time.sleep(0.01)
        frozen.set()
        while len(looks) < 4 and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.05)
    said += capsys.readouterr().err.splitlines()
    assert said == ["epochbench: warning: tcp://h:1 has not answered for 0.05 s (stopped, or its machine "
                    "overloaded?): 4 task(s) wait for it (Ctrl-C stops the run)",
                    *([] if fails else ["epochbench: tcp://h:1 answers again; the sweep goes on"])], said


@pytest.mark.parametrize("start", [0, 2])
def test_a_timed_sweep_whose_exclusive_workers_left_says_so_and_a_start_without_workers_is_said_once(
        capsys, start):
    """Timed tasks ask for the resource 'exclusive': when the workers that
    declare it left, a worker without it stayed and the sweep waited in
    silence (the watcher counted all workers).  A scheduler with no worker
    at the start was said twice, by the start's check and the watcher."""
    plain = {"resources": {}}
    timed = {"resources": {"exclusive": 1}}
    looks = [[plain] + [timed] * start, [plain], [plain], [plain, timed]]

    class Client:
        def scheduler_info(self, n_workers=-1):
            workers = looks.pop(0) if looks else [plain, timed]
            return {"n_workers": len(workers), "workers": dict(enumerate(workers))}

    with sw._watch_workers(Client(), "tcp://h:1", lambda: 5, every=0.01, needs={"exclusive": 1}):
        end = time.monotonic() + 30
        while looks and time.monotonic() < end:
            time.sleep(0.01)
        time.sleep(0.05)
    err = capsys.readouterr().err.splitlines()
    left = ["epochbench: warning: tcp://h:1 has no worker with the resource 'exclusive' left: 5 task(s) wait "
            "until one joins (Ctrl-C stops the run)"]
    assert err == (left if start else []) + ["epochbench: tcp://h:1: 1 worker(s) with the resource 'exclusive' "
                                             "now; the sweep goes on"]


@pytest.mark.parametrize("address, said", [
    ("inproc://foo", "--scheduler inproc://foo: an in-process address names no scheduler another process can "
                     "reach; give tcp://HOST:PORT"),
    ("ucx://127.0.0.1:8786", "--scheduler ucx://127.0.0.1:8786: protocol 'ucx' needs UCX for Dask "
                             "(distributed-ucxx), which is not installed here"),
])
def test_a_scheduler_address_no_process_here_can_reach_is_refused_before_dask(address, said):
    """They passed the check unread and failed inside Dask: 'not a Dask
    scheduler? Dask could not read its answer: ValueError: not enough
    values to unpack', though nothing had been contacted."""
    import importlib.util
    if address.startswith("ucx") and any(importlib.util.find_spec(m) for m in ("ucxx", "distributed_ucxx", "ucp")):
        pytest.skip("UCX for Dask is installed here")
    with pytest.raises(ValueError) as info:
        sw.check_scheduler(address)
    assert str(info.value) == said or str(info.value).startswith(said)


def _raises(task):
    raise RuntimeError("stop the sweep")


def test_a_stopped_local_sweep_leaves_the_callers_own_processes_alone():
    """Ending what a stopped sweep's workers started must not reach the
    caller's other children (a first version killed every descendant of the
    process: multiprocessing's resource tracker, and a user's own)."""
    import subprocess
    mine = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(RuntimeError, match="stop the sweep"):
            sw.run_tasks(_raises, [{"n": 0}, {"n": 1}], workers=2, progress=False, stop_on_error=True)
        assert mine.poll() is None
    finally:
        mine.kill()
        mine.wait()


def test_the_worker_count_is_read_from_a_distributed_without_n_workers_too():
    """``scheduler_info(n_workers=0)`` is a 2025 argument; an older
    distributed raised TypeError, which the watcher's guard hid for ever."""
    class Old:
        def scheduler_info(self):
            return {"workers": {"tcp://a:1": {}, "tcp://b:2": {}}}
    assert sw._totals(Old()) == {"workers": {"tcp://a:1": {}, "tcp://b:2": {}}}


def test_the_workers_are_all_asked_for_where_distributed_lists_five_by_default():
    """``distributed`` from 2025.4 lists the first 5 workers unless asked for
    all: a timed sweep's sixth worker, the one with ``exclusive``, was not
    seen."""
    workers = {f"w{i}": {"resources": {"exclusive": 1} if i == 5 else {}} for i in range(6)}

    class Client:
        def scheduler_info(self, n_workers=5):
            return {"workers": dict(list(workers.items())[:n_workers] if n_workers >= 0 else workers)}

    assert sw._resources(Client(), "tcp://h:1") == {"exclusive": 1}
    assert len(sw._workers(Client())) == 6


def test_a_client_whose_close_failed_is_not_closed_again_by_the_garbage_collector():
    """After the scheduler was lost, close(timeout=5) failed and left the
    client 'closing'; its __del__, run by the garbage collector inside
    distributed's LoopRunner lock (a class lock, not reentrant), closed it
    again and waited on that lock for good (180 s of a fresh-clone run)."""
    from types import SimpleNamespace
    stopped = []
    client = SimpleNamespace(status="closing", _loop_runner=SimpleNamespace(stop=lambda: stopped.append(1)))
    sw._abandon(client)
    assert client.status == "closed" and stopped == [1]          # Client.close() returns at once when closed
    broken = SimpleNamespace(status="closing", _loop_runner=SimpleNamespace(stop=lambda: 1 / 0))
    sw._abandon(broken)                                          # a loop that will not stop: marked all the same
    assert broken.status == "closed"
    import inspect

    from distributed import Client
    assert '"closed"' in inspect.getsource(Client.close)         # the status that makes close() a no-op


def test_a_client_the_garbage_collector_finds_under_the_loop_lock_is_closed_by_another_thread():
    """A client not closed (its scheduler lost, its close failed), found by
    the garbage collector while its thread held distributed's LoopRunner
    lock (a class lock, not reentrant): its ``__del__`` closed it there and
    waited on that lock for good (a fresh-clone test run stood 180 s in
    it).  A sweep's client is closed by a thread of its own once the lock
    is let go.  (``__del__`` is called here as the collector calls it: a
    running client is not garbage, its loop holds it.)"""
    from distributed import LocalCluster
    from distributed.utils import LoopRunner
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None,     # in-process
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}) as cluster:
        client = sw._client_class()(cluster, set_as_default=False)
        assert client.status == "running" and client.id in cluster.scheduler.clients

        def collect():
            with LoopRunner._lock:
                client.__del__()
        collector = threading.Thread(target=collect, daemon=True)
        collector.start()
        collector.join(30)
        assert not collector.is_alive(), "__del__ waited on the LoopRunner lock"
        wait_for(lambda: client.status == "closed" and client.id not in cluster.scheduler.clients, 30,
                 "the client closed")
        wait_for(lambda: not client._loop_runner.is_started(), 30, "the client's loop runner stopped")
