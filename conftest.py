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
