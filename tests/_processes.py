"""Helpers of the tests that start and stop processes of their own (Dask
schedulers and workers, Python children): wait for a condition, kill a
process group, run Python code in a fresh process."""
import os
import signal
import subprocess
import sys
import time


def wait_for(cond, timeout: float = 60.0, what: str = "condition") -> None:
    """Poll ``cond()`` every 50 ms until it holds; AssertionError naming
    ``what`` after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL ``proc``'s process group (it was started with
    ``start_new_session=True``) unless it has ended, then reap it."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)


def python_child(code: str, *args: str, timeout: float = 300) -> str:
    """Run ``code`` in a fresh Python process (``python -c code args...``)
    and return what it printed, stripped; AssertionError with the end of
    its stderr when it fails."""
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


def workers_seen(address: str, n: int) -> bool:
    """At least ``n`` workers are connected to the Dask scheduler at
    ``address``.  The question has 10 s to come back, else the answer is
    no (polled again by :func:`wait_for`): a client's plain
    ``scheduler_info()`` once waited for its reply for ever (seen once in
    a fresh-clone CI run, where the test's time limit ended it)."""
    from epochbench.sweep import _client_class        # a client the garbage collector may find is closed safely
    with _client_class()(address, timeout="10s", set_as_default=False) as c:
        try:
            info = c.sync(c.scheduler.identity, n_workers=-1, callback_timeout=10)
        except TimeoutError:
            return False
        return len(info["workers"]) >= n


def start_a_child_late(task: dict) -> int:
    """A sweep's task that writes ``task["mark"]`` when it runs, then after
    ``task["after"]`` seconds starts a child that sleeps for two minutes,
    writes its pid to ``task["child"]`` and waits on it."""
    from pathlib import Path
    Path(task["mark"]).write_text(str(os.getpid()))
    time.sleep(task["after"])
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)   # holds no pipe of the test's
    Path(task["child"]).write_text(str(child.pid))
    return child.wait()


def late_child_rows(task: dict) -> list[dict]:
    """:func:`start_a_child_late` as an experiment's task: its rows."""
    return [{"code": start_a_child_late(task)}]
