"""The sweep runner on Dask (bench/sweep.py): a real scheduler and workers.

A ``dask scheduler`` and two ``dask worker`` processes are started on
127.0.0.1 (random ports, the address read from a scheduler file) for the
module and stopped in a ``finally``; the experiment is the tiny one of
``tests/crash_experiment.py`` (40 tasks of 0.1 s), run through the real
CLI in a subprocess where a process is killed.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from _processes import kill_group, wait_for, workers_seen

import crash_experiment as cx
import epochbench as eb
from epochbench import cli, sweep as sw
from epochbench.experiments import EXPERIMENTS, Experiment, Options, run_experiment, sweep

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
SCRIPT = Path(cx.__file__).resolve()
DASK = str(Path(sys.executable).with_name("dask"))
WALL = ["seconds"]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
EXPERIMENTS.pop(cx.NAME, None)          # registered only while these tests run (fixture below)
EXPERIMENTS.pop(cx.FIGURE, None)


@pytest.fixture(autouse=True, scope="module")
def _test_experiment():
    EXPERIMENTS[cx.NAME] = cx.EXPERIMENT
    yield
    EXPERIMENTS.pop(cx.NAME, None)


def _env() -> dict:
    """Workers import the test modules (crash_experiment, this file)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}


#: every Dask process a test starts ends by itself after this, should the test
#: (and its ``finally``) be killed: a killed pytest left the scheduler running
BOUND = ["timeout", "900"]


def _worker(address: str) -> subprocess.Popen:
    """One ``dask worker`` (no nanny: killing it loses it for good), one
    thread, the resource ``exclusive`` of timing-sensitive tasks."""
    return subprocess.Popen([*BOUND, DASK, "worker", address, "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1",
                             "--resources", "exclusive=1", "--no-dashboard", "--death-timeout", "60"],
                            cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)


def _start_scheduler(info: Path, procs: list) -> str:
    """Start a ``dask scheduler`` on 127.0.0.1 (appended to ``procs``, for the
    caller's ``finally`` to stop) and return its address."""
    procs.append(subprocess.Popen([*BOUND, DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                   "--scheduler-file", str(info)], cwd=ROOT, env=_env(),
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
    wait_for(lambda: info.exists() and info.stat().st_size > 0, what="the scheduler")
    return json.loads(info.read_text())["address"]


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """The address of a scheduler with two workers on 127.0.0.1."""
    procs = []
    try:
        address = _start_scheduler(tmp_path_factory.mktemp("dask") / "scheduler.json", procs)
        procs += [_worker(address), _worker(address)]
        wait_for(lambda: workers_seen(address, 2), what="two workers")
        yield address
    finally:
        for p in procs[::-1]:
            kill_group(p)


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> pd.DataFrame:
    """The uninterrupted run on a local cluster (the command line's default
    when ``EPOCHBENCH_WORKERS`` is unset: every core; here two workers)."""
    out = tmp_path_factory.mktemp("reference")
    run_experiment(cx.NAME, Options(out=out, jobs=2, progress=False))
    execution = json.loads((out / f"{cx.NAME}.run.json").read_text())["execution"]
    assert execution["workers"] == 2 and execution["workers_started"] == min(2, cx.TASKS)
    return pd.read_csv(out / f"{cx.NAME}.csv")


def _same_apart_from_wall_time(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert len(want) == 2 * cx.TASKS and list(want["task"]) == [i for i in range(cx.TASKS) for _ in "ab"]
    pd.testing.assert_frame_equal(got.drop(columns=WALL), want.drop(columns=WALL))


def _experiment(out: Path, *extra: str) -> subprocess.Popen:
    cmd = [sys.executable, str(SCRIPT), "experiment", cx.NAME, "--out", str(out), "--quiet", *extra]
    return subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def _records(out: Path) -> int:
    part = out / f"{cx.NAME}.partial.jsonl"
    return part.read_bytes().count(b"\n") if part.exists() else 0


def _finish(proc: subprocess.Popen, timeout: float = 60) -> str:
    try:
        _, err = proc.communicate(timeout=timeout)
    finally:
        kill_group(proc)
    assert proc.returncode == 0, err
    return err


# ---- a real scheduler --------------------------------------------------------------------------
def test_scheduler_sweep_equals_the_local_default(tmp_path, scheduler, reference):
    out = tmp_path / "out"
    _finish(_experiment(out, "--scheduler", scheduler))
    _same_apart_from_wall_time(pd.read_csv(out / f"{cx.NAME}.csv"), reference)
    assert not (out / f"{cx.NAME}.partial.jsonl").exists()

def pid_of(task: dict) -> int:
    return os.getpid()


def test_the_scheduler_address_may_come_from_the_environment(scheduler, reference, monkeypatch):
    monkeypatch.setenv(sw.SCHEDULER_ENV, scheduler)
    seen = []
    sw.run_tasks(pid_of, [{}, {}], workers=1, progress=False, on_result=lambda i, pid: seen.append(pid))
    assert len(seen) == 2 and os.getpid() not in seen                # ran on the workers, not here
    rows = sweep(cx.run, cx.tasks(Options())[:4], jobs=1, progress=False)
    assert [r["value"] for r in rows] == list(reference["value"][:8])


def test_killing_a_worker_mid_sweep_loses_nothing(tmp_path, scheduler, reference):
    out = tmp_path / "out"
    extra = _worker(scheduler)
    try:
        wait_for(lambda: workers_seen(scheduler, 3), what="a third worker")
        proc = _experiment(out, "--scheduler", scheduler)
        try:
            wait_for(lambda: proc.poll() is not None or _records(out) >= 6, what="six saved runs")
            assert proc.poll() is None
            os.killpg(extra.pid, signal.SIGKILL)                   # its running task goes to another worker
            _finish(proc)
        finally:
            kill_group(proc)
    finally:
        kill_group(extra)
    _same_apart_from_wall_time(pd.read_csv(out / f"{cx.NAME}.csv"), reference)


def test_killing_the_client_then_resuming_equals_an_uninterrupted_run(tmp_path, scheduler, reference):
    out = tmp_path / "out"
    proc = _experiment(out, "--scheduler", scheduler)
    try:
        wait_for(lambda: proc.poll() is not None or _records(out) >= 4, what="four saved runs")
        assert proc.poll() is None
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        kill_group(proc)
    saved = _records(out)
    assert 4 <= saved < cx.TASKS and not (out / f"{cx.NAME}.csv").exists()
    _finish(_experiment(out, "--scheduler", scheduler))
    _same_apart_from_wall_time(pd.read_csv(out / f"{cx.NAME}.csv"), reference)


# ---- failures ----------------------------------------------------------------------------------
def fails_on_two(task: dict) -> list[dict]:
    if task["x"] == 2:
        raise ZeroDivisionError(f"boom {task['x']}")
    return [{"x": task["x"], "y": task["x"] ** 2}]


def test_a_failing_task_is_listed_and_the_others_finish(tmp_path, scheduler, capsys):
    tasks = [{"x": x} for x in range(5)]
    ck = tmp_path / "ck.jsonl"
    with pytest.raises(sw.SweepFailed) as err:
        sweep(fails_on_two, tasks, scheduler=scheduler, progress=False, checkpoint=ck)
    (f,) = err.value.failures
    assert f.index == 2 and f.task == {"x": 2}
    assert "Traceback" in f.error and "ZeroDivisionError: boom 2" in f.error and "fails_on_two" in f.error
    assert str(err.value).startswith("1 of 5 tasks failed; first: task {'x': 2} failed: ZeroDivisionError")
    assert sorted(r["task"]["x"] for r in map(json.loads, ck.read_text().splitlines())) == [0, 1, 3, 4]

    exp = Experiment("fail-test", "test experiment (one task fails)", lambda o: tasks, fails_on_two,
                     lambda df: df)
    EXPERIMENTS[exp.name] = exp
    try:
        status = cli.main(["experiment", exp.name, "--out", str(tmp_path / "o"), "--quiet", "--workers", "1"])
    finally:
        EXPERIMENTS.pop(exp.name)
    stderr = capsys.readouterr().err
    assert status == 1
    assert "1 of 5 tasks failed" in stderr and "task 2 x=2: ZeroDivisionError: boom 2" in stderr
    assert "Traceback (most recent call last)" in stderr and "rerun the failed ones" in stderr
    assert _records_of(tmp_path / "o" / "fail-test.partial.jsonl") == 4
    assert not (tmp_path / "o" / "fail-test.csv").exists()


def _records_of(path: Path) -> int:
    return len(path.read_text().splitlines())


# ---- subsets -------------------------------------------------------------------------------------
def test_tasks_and_where_select_a_subset_that_a_full_run_reuses(tmp_path, reference, capsys, monkeypatch):
    monkeypatch.setattr(cx, "SLEEP", 0.0)   # every run here is in this process: nothing to interrupt
    out = tmp_path / "out"
    df, _ = run_experiment(cx.NAME, Options(out=out, jobs=1, progress=False, tasks="0:4,10"))
    assert sorted(set(df["task"])) == [0, 1, 2, 3, 10]
    df, _ = run_experiment(cx.NAME, Options(out=out, jobs=1, progress=False, where=("seed=1", "point=3")))
    assert sorted(set(df["task"])) == [7] and set(df["seed"]) == {1}
    assert _records(out) == 6                                       # the subsets' rows are kept
    run_experiment(cx.NAME, Options(out=out, progress=False))       # runs only the other 34
    _same_apart_from_wall_time(pd.read_csv(out / f"{cx.NAME}.csv"), reference)
    assert "reused" in capsys.readouterr().err                      # the full run says what it reused
    assert cli.main(["experiment", cx.NAME, "--out", str(out), "--where", "ta=4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--where: no task has the field 'ta' (fields: point, seed)" in err


def test_select_parses_ranges_and_fields():
    tasks = [{"ta": ta, "seed": s} for ta in (2, 4.0, 8) for s in range(2)]
    assert sw.select(tasks, "0:2,5") == [0, 1, 5]
    assert sw.select(tasks, ":2,5") == [0, 1, 5] and sw.select(tasks, "4:") == [4, 5]
    with pytest.raises(ValueError, match="--tasks: index -1 is outside 0:6"):
        sw.select(tasks, ":2,-1")
    assert sw.select(tasks, where=["ta=4"]) == [2, 3]             # 4 matches 4.0
    with pytest.raises(ValueError, match=r"--where b=2 matches none of the tasks left \(none of them has b\)$"):
        sw.select([{"a": 1}, {"b": 2}], "0", ["b=2"])
    assert sw.select(tasks, "3:", ["ta=4"]) == [3]
    with pytest.raises(ValueError, match=r"--tasks: range 5:2 is empty \(A:B takes A up to B - 1"):
        sw.select(tasks, "0,5:2")                                  # said "select no task", or nothing beside 0
    for spec, where, msg in (("x", (), "--tasks: 'x' is not"), ("9", (), "--tasks: index 9"),
                             (None, ["ta"], "--where: 'ta' is not FIELD=VALUE"),
                             (None, ["ta=5"], r"select no task: --where ta=5 matches none of the tasks "
                                               r"\(ta takes 2, 4.0, 8\)"),
                             ("0:2", ["ta=4"], r"--where ta=4 matches none of the tasks left \(ta takes 2\)")):
        with pytest.raises(ValueError, match=msg):
            sw.select(tasks, spec, where)


# ---- timing-sensitive tasks, progress, score -----------------------------------------------------
def test_timing_tasks_record_host_and_cpu(scheduler):
    rows = sweep(cx.run, cx.tasks(Options())[:3], scheduler=scheduler, progress=False, timing=True)
    assert len(rows) == 6 and {r["host"] for r in rows} == {socket.gethostname()}
    assert all(isinstance(r["cpu"], str) and r["cpu"] for r in rows)
    assert "host" not in sweep(cx.run, cx.tasks(Options())[:1], jobs=1, progress=False)[0]


def test_progress_only_on_a_terminal(monkeypatch, capsys):
    tasks = [{"x": x} for x in (1, 3)]
    sweep(fails_on_two, tasks, jobs=1)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    sweep(fails_on_two, tasks, jobs=1)
    lines = capsys.readouterr().err.splitlines()
    assert [l.split()[0] for l in lines] == ["[1/2]", "[2/2]"] and "ETA" in lines[-1]


def test_score_through_the_scheduler_equals_score_in_process(tmp_path, scheduler, capsys):
    fam = tmp_path / "fam"
    assert cli.main(["generate", "leinberger", "--out", str(fam), "--n", "8", "--k", "2", "--count", "6",
                     "--seed", "3"]) == 0
    for how, extra in (("here", []), ("dask", ["--scheduler", scheduler])):
        assert cli.main(["score", str(fam), "--methods", "ff,cpsat", "--time-limit", "2", "--out",
                         str(tmp_path / how), *extra]) == 0
    capsys.readouterr()
    here, dask = (pd.read_csv(tmp_path / f"{how}.csv") for how in ("here", "dask"))
    assert len(here) == 12 and set(here["status"]) >= {"optimal"}
    pd.testing.assert_frame_equal(here.drop(columns=WALL), dask.drop(columns=WALL))


# ---- the defaults: a local cluster of every core, methods that travel ----------------------------
def test_default_workers_come_from_the_environment_else_every_core(monkeypatch):
    monkeypatch.delenv(sw.WORKERS_ENV, raising=False)
    assert sw.default_workers() == (os.cpu_count() or 1)
    monkeypatch.setenv(sw.WORKERS_ENV, "3")
    assert sw.default_workers() == 3
    top = sw.MAX_WORKERS
    for bad in ("0", "two", "-1", "1000000000"):   # 1e9: a local cluster that tried to start them all
        monkeypatch.setenv(sw.WORKERS_ENV, bad)
        with pytest.raises(ValueError, match=f"EPOCHBENCH_WORKERS must be an integer from 1 to {top}, got '{bad}'"):
            sw.default_workers()
    with pytest.raises(ValueError, match=f"--workers must be an integer from 1 to {top}, got {top + 1}"):
        sw.check_workers(top + 1)


def first_two(inst):
    """A method registered only while a test runs (a worker does not have it)."""
    return list(eb.solve(inst, "ff").decision)[:2]      # a part of a feasible packing is feasible


def first_fit_again(inst):
    """A candidate for ``validate``: the built-in first fit's decision."""
    return list(eb.solve(inst, "ff").decision)


def _spy_clusters(monkeypatch) -> list[int]:
    """Record the worker count of every local cluster a sweep starts."""
    sizes, real = [], sw._on_dask

    def spy(call, tasks, todo, workers, scheduler, *rest, **kw):
        sizes.append(workers)
        return real(call, tasks, todo, workers, scheduler, *rest, **kw)

    monkeypatch.setattr(sw, "_on_dask", spy)
    return sizes


def test_score_defaults_to_a_local_cluster_that_knows_run_time_methods(tmp_path, monkeypatch, capsys):
    fam = tmp_path / "fam"
    assert cli.main(["generate", "leinberger", "--out", str(fam), "--n", "8", "--k", "2", "--count", "4",
                     "--seed", "5"]) == 0
    # methods known only to this process, registered at run time: a module's
    # function (pickled by reference) and a lambda (pickled by value)
    eb.register("packing", "test-sweep-two")(first_two)
    eb.register("packing", "test-sweep-one")(lambda inst: first_two(inst)[:1])
    try:
        methods = "test-sweep-two,test-sweep-one,ff,cpsat"
        assert cli.main(["score", str(fam), "--methods", methods, "--time-limit", "2", "--workers", "1",
                         "--out", str(tmp_path / "here")]) == 0
        monkeypatch.delenv(sw.WORKERS_ENV, raising=False)
        sizes = _spy_clusters(monkeypatch)
        assert cli.main(["score", str(fam), "--methods", methods, "--time-limit", "2",
                         "--out", str(tmp_path / "cluster")]) == 0
    finally:
        from epochbench.instances.registry import _REGISTRY
        for name in ("test-sweep-two", "test-sweep-one"):
            _REGISTRY.pop(("packing", name), None)
            _REGISTRY.pop(("epochs", name), None)
    capsys.readouterr()
    assert sizes == [min(os.cpu_count() or 1, 4)]
    here, cluster = (pd.read_csv(tmp_path / f"{how}.csv") for how in ("here", "cluster"))
    assert len(here) == 16 and set(here["method"]) == set(methods.split(","))
    pd.testing.assert_frame_equal(here.drop(columns=WALL), cluster.drop(columns=WALL))


def test_validate_ships_the_candidate_and_a_timing_experiment_uses_every_core(tmp_path, monkeypatch):
    one = eb.validate(first_fit_again, "packing", count=4, seed=2, time_limit=2)
    monkeypatch.delenv(sw.WORKERS_ENV, raising=False)
    sizes = _spy_clusters(monkeypatch)
    two = eb.validate(first_fit_again, "packing", count=4, seed=2, time_limit=2, workers=2)
    assert one.ok and two.ok and sizes == [2]
    cols = ["instance", "method", "ok", "gap", "gap_kind"]
    pd.testing.assert_frame_equal(one.table[cols], two.table[cols])

    timed = Experiment("timing-test", "test experiment (timing)", lambda o: cx.tasks(o)[:4], cx.run,
                       cx.table, timing=True)
    EXPERIMENTS[timed.name] = timed
    try:
        df, _ = run_experiment(timed.name, Options(out=tmp_path / "t", progress=False))
    finally:
        EXPERIMENTS.pop(timed.name)
    assert sizes == [2, min(os.cpu_count() or 1, 4)] and len(df) == 8
    assert {"host", "cpu"} <= set(df.columns)


# ---- workers that run other code ----------------------------------------------------------------
_OTHER_VERSION = """
import importlib.metadata as md
_real = md.version
md.version = lambda name: "9.9.9" if name == "epochbench" else _real(name)
"""
_NO_EPOCHBENCH = """
import sys
class _Block:
    def find_spec(self, name, path=None, target=None):
        if name == "epochbench" or name.startswith("epochbench."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, _Block())
"""


def _odd_worker(address: str, tmp_path: Path, site: str) -> subprocess.Popen:
    """A worker whose interpreter runs ``site`` first (a sitecustomize.py)."""
    folder = tmp_path / f"site-{abs(hash(site))}"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(site)
    env = {**_env(), "PYTHONPATH": os.pathsep.join([str(folder), _env()["PYTHONPATH"]])}
    return subprocess.Popen([*BOUND, DASK, "worker", address, "--no-nanny", "--nthreads", "1", "--host", "127.0.0.1",
                             "--no-dashboard", "--death-timeout", "60"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def test_workers_that_run_other_code_or_none_are_refused_and_sigint_is_given_back(tmp_path):
    """Rows of a worker with another version were stamped with the client's
    code; a worker without epochbench gave a 45-line traceback; a worker
    started by hand ignored Ctrl-C for good after a sweep."""
    Client = sw._client_class()                         # closed safely if the garbage collector finds it
    procs = []
    try:
        address = _start_scheduler(tmp_path / "scheduler.json", procs)
        procs.append(_worker(address))
        for site, needle in ((_OTHER_VERSION, r"1 worker\(s\) of .* run other code than this client \(.*: "
                                                r"epochbench 9\.9\.9"),
                             (_NO_EPOCHBENCH, r"1 worker\(s\) of .* failed epochbench's check before the sweep \(.*"
                                              r"ModuleNotFoundError")):
            odd = _odd_worker(address, tmp_path, site)
            try:
                wait_for(lambda: workers_seen(address, 2), what="the odd worker")
                with pytest.raises(ValueError, match=needle):
                    sweep(abs, [{"x": 1}], scheduler=address, progress=False)
                with pytest.raises(ValueError, match=needle):           # before an experiment touches its folder
                    sw.probe_scheduler(address)
            finally:
                kill_group(odd)
            wait_for(lambda: not workers_seen(address, 2), what="the odd worker to leave")
        def handlers():
            with Client(address, timeout="10s") as c:
                return c.run(lambda: repr(signal.getsignal(signal.SIGINT)))
        before = handlers()                                             # dask worker's own (it stops on Ctrl-C)
        assert len(sweep(cx.run, cx.tasks(Options())[:1], scheduler=address, progress=False)) == 2
        assert handlers() == before and "SIG_IGN" not in str(before)    # given back after the sweep
    finally:
        for p in procs[::-1]:
            kill_group(p)


def test_a_task_on_a_worker_running_other_code_is_refused_there():
    """Workers were asked for their code once, before the sweep: one that
    joined later, or that its nanny restarted from edited files, ran its
    tasks unchecked and its rows were recorded as the client's commit."""
    import pickle
    mine = sw.code_here()
    other = {**mine, "version": "0.0-other"}
    call, task = pickle.dumps(len), pickle.dumps([1, 2, 3])
    assert sw._remote(call, task, False, mine) == (True, 3)
    ok, line = sw._remote(call, task, False, other)
    assert not ok and "runs other code" in line and "restart it from this code" in line
    from epochbench.instances.core import RunStopped
    with pytest.raises(RunStopped, match="joined or restarted after the check"):   # not bad input: status 1
        sw._remote(call, task, True, other)


def test_tasks_of_a_python_api_call_name_keywords_in_worker_processes():
    """Messages raised in a worker process named command-line flags
    (``--selector``) in a Python API call: the caller's context does not
    travel with the task; run_tasks carries it."""
    from epochbench.instances.arguments import arg, python_names
    from epochbench.sweep import run_tasks
    with python_names():
        done, failures = run_tasks(arg, ["selector", "kill_at_estimate"], workers=2, progress=False)
    assert not failures and done == {0: "selector=", 1: "kill_at_estimate="}
    done, _ = run_tasks(arg, ["selector"], workers=1, progress=False)
    assert done == {0: "--selector"}


def test_the_methods_made_by_factories_pickle_by_reference():
    """The exact methods made by a factory named a module that does not hold
    them (epochbench.exact._binary), the VBP variants none: pickle failed,
    and every task of a sweep sent them by value through cloudpickle.  (The
    epochs methods derived from packing heuristics are closures: by value.)"""
    import pickle
    from epochbench.instances import registry
    made = [(f, n) for f in registry.families() for n in registry.names(f, "exact")]
    made += [("epochs", n) for n in ("ffd-sum", "ffd-max", "ffd-l2", "bc-dot", "bc-l2")]
    for family, name in made:
        func = registry.get(family, name).func
        assert pickle.loads(pickle.dumps(func)) is func, (family, name)


def test_a_ctrl_c_is_not_hidden_by_a_client_close_that_times_out(monkeypatch):
    """Ctrl-C while tasks were handed out: closing the client timed out
    ("timed out after 60 s.") and that TimeoutError replaced the
    KeyboardInterrupt, so score printed a traceback and recorded nothing."""
    import distributed
    from epochbench.sweep import run_tasks
    close = distributed.Client.close

    timed_out = []

    def slow_close(self, *args, **kwargs):
        import inspect
        close(self, *args, **kwargs)
        callers = [f.function for f in inspect.stack(0)[1:4]]
        if not timed_out and "__del__" not in callers:   # the sweep's close, once (not a client collected
            timed_out.append(True)                       # now, of this test or an earlier one)
            raise TimeoutError("timed out after 60 s.")

    def stop(i, value):
        raise KeyboardInterrupt
    monkeypatch.setattr(distributed.Client, "close", slow_close)
    with pytest.raises(KeyboardInterrupt):
        run_tasks(abs, [1, 2, 3], workers=2, progress=False, on_result=stop)
    assert timed_out


def _noting(task: int) -> int:
    """A task that notes something on its input (two texts among the tasks)."""
    from epochbench.instances.core import note
    note(f"input note {task % 2}")
    if task < 0:
        raise ValueError("refused after its note")
    return task


def test_a_task_on_a_worker_sends_its_notes_back_instead_of_printing_them(capfd):
    """:func:`sw._on_worker`: the notes go with the outcome (and with an exception raised to the client),
    other warnings show as before, and a thread running no task is not affected."""
    import warnings
    from epochbench.instances.core import InputNote
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert sw._on_worker(_noting, 3) == (True, 3, ("input note 1",))
        assert sw._on_worker(abs, -2) == (True, 2)                        # no notes: two items, as before
        with pytest.raises(ValueError, match="refused after its note") as err:
            sw._on_worker(_noting, -1, raising=True)
        assert err.value._input_notes == ("input note 1",)
        warnings.warn("not a note")
        _noting(4)                                                        # outside a task: a warning
    assert [(w.category, str(w.message)) for w in got] == [(UserWarning, "not a note"), (InputNote, "input note 0")]
    assert "input note" not in capfd.readouterr().err


def test_notes_raised_on_local_workers_are_said_in_the_callers_process():
    """They printed in Python's form on the workers, and neither the command line's one line nor a
    caller's warning filters saw them."""
    import warnings
    from epochbench.instances.core import InputNote
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        done, failures = sw.run_tasks(_noting, [0, 1, 2, 3], workers=2, progress=False)
    assert not failures and done == {0: 0, 1: 1, 2: 2, 3: 3}
    said = [str(w.message) for w in got if issubclass(w.category, InputNote)]
    assert set(said) == {"input note 0", "input note 1"}
