"""Root conftest of the checkout: plain ``pytest`` runs the correctness tests
in ``tests/``; ``pytest --benchmark`` runs the benchmark suite shipped in the
package (``bench/benchmarks``, see :mod:`epochbench.benchmarks.plugin`).

``pytest -n auto`` (the README's test command; pytest-xdist) runs the tests
in one process per CPU this process may use (:func:`usable_cpus`), not per
CPU of the host: in a container, psutil's count (xdist's default) can be the
host's."""
from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

pytest_plugins = ["epochbench.benchmarks.plugin"]

#: CPU quota files of this process's cgroup: v2 ("QUOTA PERIOD" or "max PERIOD"), v1 (quota, period;
#: quota -1 when unlimited)
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")
CFS_QUOTA, CFS_PERIOD = Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us")


def cpu_quota() -> float | None:
    """CPUs' worth of time this process's cgroup may use (v2, else v1); None
    when unlimited or unreadable."""
    try:
        quota, period = CPU_MAX.read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError, ZeroDivisionError):
        pass
    try:
        quota, period = int(CFS_QUOTA.read_text()), int(CFS_PERIOD.read_text())
        return quota / period if quota > 0 else None
    except (OSError, ValueError, ZeroDivisionError):
        return None


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask), at most its cgroup
    CPU quota rounded up; at least 1."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = cpu_quota()
    if quota is not None:
        n = min(n, math.ceil(quota))
    return max(1, n)


@pytest.hookimpl(optionalhook=True)    # plain pytest runs without xdist too (-p no:xdist)
def pytest_xdist_auto_num_workers(config):
    """Workers of ``-n auto``: :func:`usable_cpus` (``PYTEST_XDIST_AUTO_NUM_WORKERS``
    still overrides it, through xdist's own hook)."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return usable_cpus()


#: compiles (or loads) the kernels that the tests run, one half per process (tests/kernel_warmup.py)
_WARMUP = Path(__file__).resolve().parent / "tests" / "kernel_warmup.py"
_WARMUP_HALVES = ("sim", "rest")


#: the run's byte-code folder (:func:`_bytecode_for_the_run`), removed when the run ends
_PYCACHE: list[str] = []


def _bytecode_for_the_run(config) -> None:
    """Under ``PYTHONDONTWRITEBYTECODE`` (set on this project's machines)
    no process of the run kept byte code: each ``epochbench`` command that a
    test starts, each worker and each child compiled every
    module it imports from source again, and pytest rewrote every test
    module again in each worker (``epochbench list``: 0.83 s a command
    without byte code, 0.44 s with it, on a loaded machine of the CI kind).
    Here the run's processes keep it instead in one temporary folder of
    their own (``PYTHONPYCACHEPREFIX``, which the children inherit), removed
    when the run ends: nothing is written into the tree, as the variable
    asks.  A run with byte code allowed, or with a prefix of the user's
    own, is left as it is; so is a worker (it inherits the controller's)."""
    import sys
    import tempfile
    if getattr(config, "workerinput", None) is not None or not sys.dont_write_bytecode:
        return
    if os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    folder = tempfile.mkdtemp(prefix="epochbench-pycache-")
    _PYCACHE.append(folder)
    os.environ["PYTHONPYCACHEPREFIX"] = folder
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix, sys.dont_write_bytecode = folder, False


def pytest_unconfigure(config):
    """Remove the run's byte-code folder (:func:`_bytecode_for_the_run`)."""
    import shutil
    while _PYCACHE:
        shutil.rmtree(_PYCACHE.pop(), ignore_errors=True)


def _collect_once(config):
    """Meanwhile a third process collects the run's tests (``--collect-only``,
    no workers): the byte code of every module the test files import and
    pytest's rewritten test modules are then in the run's folder
    (:func:`_bytecode_for_the_run`) when the workers collect, instead of
    each worker compiling them all at once, side by side.  Measured with a
    fresh byte-code folder: one collection took 17.7 s, 12.7 s after the
    warm-up's imports, 4.0 s with that of an earlier collection."""
    import subprocess
    import sys
    return subprocess.Popen([sys.executable, "-m", "pytest", "--collect-only", "-q", *config.args],
                            cwd=config.invocation_params.dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def pytest_configure(config):
    """Keep the run's byte code (:func:`_bytecode_for_the_run`).  Before
    xdist starts its workers: compile (or load) the kernels that the tests
    run, in two processes at once, one half each (``tests/kernel_warmup.py``:
    about 120 and 130 s with a cold cache, a fresh clone; a few seconds
    warm).  It compiled the shared event loop only, and the workers compiled
    the rest on demand, between tests: on one machine within an hour,
    fresh-clone CI took 628 s that way and 579, 697 and 623 s with this
    warm-up (the machine's speed drifts; pytest's own time went 503 s ->
    404, 471 and 451 s).  Nothing is
    asserted: a failure here is the tests' to report
    (``tests/test_kernel_warmup.py``)."""
    import subprocess
    import sys
    _bytecode_for_the_run(config)
    if getattr(config, "workerinput", None) is not None or not getattr(config.option, "numprocesses", None):
        return                                     # a worker, or one process: it compiles as it goes
    if config.getoption("--benchmark", default=False) or config.getoption("--collect-only", default=False):
        return
    procs = [subprocess.Popen([sys.executable, str(_WARMUP), half], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for half in _WARMUP_HALVES]
    procs.append(_collect_once(config))
    for p in procs:
        try:
            p.wait(timeout=400)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
