"""The whole command, not the kernel (issue 18): what a user waits for.

Each benchmark times complete processes (interpreter start, imports, reading
the file, simulating, the metrics, exit) or whole simulations, alternating
the two sides of a comparison round by round so that both see the same
machine load, and stores the ratio of the medians in ``extra_info``:

- ``test_simulate_vs_script[kth|250k]``: ``epochbench simulate --policy easy``
  against ``easy_minimal.py`` (a pure-Python EASY reading the same SWF file,
  standard library only) on the KTH trace and on a generated 250,000-job
  stream; both must give the same mean wait;
- ``test_los_vs_easy_kth``: LOS's and EASY's simulation time on KTH (both
  compiled);
- ``test_conservative_vs_easy_saturated``: conservative and EASY on a
  saturated 400,000-job stream (:func:`_saturated`: thousands of jobs
  queued, most ending before their estimate) on 4096 nodes;
- ``test_five_million``: EASY on 5,000,000 jobs, the whole command's peak
  resident memory and its time over the simulation's.

The streams are generated once per session into a temporary folder
(``--quick``: KTH only).  Ratios, never absolute times, are what compare
across machines; no benchmark asserts on time.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from epochbench.instances.data import data_root
from epochbench.suite import rounds as bench_rounds

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"
SCRIPT = Path(__file__).with_name("easy_minimal.py")
#: runs ``epochbench`` in a child and reports its peak resident memory (KB) on stderr at exit:
#: VmHWM of /proc (Linux), not getrusage, whose ru_maxrss after fork and exec starts
#: from the parent's resident size; -1 where /proc is absent
_CHILD = ("import atexit, sys\n"
          "def peak():\n"
          "    try:\n"
          "        lines = open('/proc/self/status').read().splitlines()\n"
          "        return int(next(l.split()[1] for l in lines if l.startswith('VmHWM:')))\n"
          "    except (OSError, StopIteration):\n"
          "        return -1\n"
          "atexit.register(lambda: sys.stderr.write(f'MAXRSS {peak()}\\n'))\n"
          "from epochbench.cli import main\n"
          "sys.exit(main(sys.argv[1:]))\n")


def run_process(argv: list[str]) -> tuple[float, str, int]:
    """Run ``argv``; returns (wall seconds, stdout, peak RSS in KB or -1)."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - t0
    rss = next((int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("MAXRSS ")), -1)
    return seconds, done.stdout, rss


def simulate_argv(trace: Path, policy: str = "easy") -> list[str]:
    return [sys.executable, "-c", _CHILD, "simulate", "--workload", str(trace), "--policy", policy,
            "--json", "--quiet"]


def paired(benchmark, rounds: int, timed, other) -> tuple[list, list]:
    """Time ``timed`` with ``benchmark`` for ``rounds`` rounds, running
    ``other`` before each round (untimed by pytest-benchmark, so the two
    alternate and see the same load); returns both lists of results."""
    mine, theirs = [], []
    benchmark.pedantic(lambda: mine.append(timed()), setup=lambda: theirs.append(other()) and None,
                       rounds=rounds, iterations=1)
    return mine, theirs


@pytest.fixture(scope="session")
def streams(tmp_path_factory, request):
    """Generated streams as SWF files, written once per session (full suite only)."""
    from epochbench.instances.jobs import write_swf
    folder = tmp_path_factory.mktemp("whole")
    made = {}

    def get(name: str) -> Path:
        if request.config.getoption("--quick"):
            pytest.skip(f"{name}: full suite only")
        if name not in made:
            made[name] = write_swf(STREAMS[name](), folder / f"{name}.swf")
        return made[name]
    return get


def _model(**params):
    """A stream of :func:`epochbench.instances.workloads.workload` as a Workload."""
    from epochbench.instances.jobs import make_workload
    from epochbench.instances.workloads import workload
    s = workload(**params)
    return make_workload(s.jobs, s.capacity, source=f"workload {params}")


def _saturated():
    """400,000 lublin03 jobs on 4096 nodes, estimates phi = 0.2 (80 % of jobs end
    early), arrivals in blocks of 50,000 at offered load 1.6 then 0.6
    (:func:`epochbench.instances.workloads.saturated`): conservative's queue
    peaks near 3,000 jobs and every early end compresses it."""
    from epochbench.instances.jobs import make_workload
    from epochbench.instances.workloads import saturated, workload
    s = workload(model="lublin03", jobs=400_000, seed=1, processors=4096, estimates="phi", phi=0.2)
    return make_workload(saturated(s.jobs, s.capacity, high=1.6, low=0.6, period=50_000), s.capacity,
                         source="saturated lublin03 x400000")


#: the generated streams, by name
STREAMS = {
    "250k": lambda: _model(model="lublin03", jobs=250_000, seed=7),
    "saturated-400k": _saturated,
    "5m": lambda: _model(model="lublin03", jobs=5_000_000, seed=8),
}


def _trace(name: str, streams) -> Path:
    if name == "kth":
        if not KTH.exists():
            pytest.skip(f"KTH trace absent at {KTH} (set EPOCHBENCH_DATA)")
        return KTH
    return streams(name)


#: the packages of the ``epochbench`` distribution (pyproject.toml's list)
PACKAGES = ("epochbench", "epochbench.experiments", "epochbench.benchmarks", "epochbench.instances",
            "epochbench.heuristics", "epochbench.exact", "epochbench.sim")


def _byte_compile() -> None:
    """Write the package's byte code (``__pycache__``), as ``pip install``
    does: under ``PYTHONDONTWRITEBYTECODE`` an editable install never gets
    it, and every timed process would compile the modules it imports from
    source (tens of ms), which a user's installed copy does not.  A folder
    that cannot be written is left as it is."""
    import compileall
    import importlib.util
    for name in PACKAGES:
        spec = importlib.util.find_spec(name)
        for folder in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(folder, maxlevels=0, quiet=2)


@pytest.mark.parametrize("name", ["kth", "250k"])
def test_simulate_vs_script(benchmark, streams, request, name):
    trace = _trace(name, streams)
    ours = lambda: run_process(simulate_argv(trace))                       # noqa: E731
    script = lambda: run_process([sys.executable, str(SCRIPT), str(trace)])  # noqa: E731
    _byte_compile()
    ours(), script()                                                       # caches warm (numba, page cache)
    n = bench_rounds(request.config, 9 if name == "kth" else 5)     # KTH: a quarter second a side, noisy
    mine, theirs = paired(benchmark, n, ours, script)
    report = json.loads(mine[-1][1])
    jobs, wait = theirs[-1][1].split()
    assert int(jobs) == report["jobs"] and float(wait) == pytest.approx(report["metrics"]["wait_mean"], rel=1e-9)
    med = statistics.median([m[0] for m in mine]), statistics.median([t[0] for t in theirs])
    benchmark.group = "whole-command"
    benchmark.extra_info.update({
        "stream": name, "jobs": report["jobs"], "rounds": n, "simulate_s_median": med[0], "script_s_median": med[1],
        "ratio_to_script": med[0] / med[1], "simulation_s": report["seconds"], "peak_rss_mb": mine[-1][2] / 1024})


def test_los_vs_easy_kth(benchmark, request):
    from epochbench.instances.jobs import read_swf
    from epochbench.sim.pool import simulate_pool
    if not KTH.exists():
        pytest.skip(f"KTH trace absent at {KTH} (set EPOCHBENCH_DATA)")
    kth = read_swf(KTH, fields=())
    runs = {p: (lambda p=p: simulate_pool(kth.table, kth.capacity, p)) for p in ("easy", "los")}
    for run in runs.values():
        run()
    n = bench_rounds(request.config, 7)
    los, easy = paired(benchmark, n, runs["los"], runs["easy"])
    assert los[-1].engine == easy[-1].engine == "fast"
    med = statistics.median(r.seconds for r in easy), statistics.median(r.seconds for r in los)
    benchmark.group = "whole-command"
    benchmark.extra_info.update({"stream": "kth", "jobs": los[-1].n, "rounds": n, "easy_s_median": med[0],
                                 "los_s_median": med[1], "ratio_los_to_easy": med[1] / med[0]})


def test_conservative_vs_easy_saturated(benchmark, streams, request):
    from epochbench.instances.jobs import read_swf
    from epochbench.sim.pool import simulate_pool
    w = read_swf(_trace("saturated-400k", streams), fields=())
    runs = {p: (lambda p=p: simulate_pool(w.table, w.capacity, p)) for p in ("easy", "conservative")}
    n = bench_rounds(request.config, 2)
    cons, easy = paired(benchmark, n, runs["conservative"], runs["easy"])
    queued = _max_queued(cons[-1])
    med = statistics.median(r.seconds for r in easy), statistics.median(r.seconds for r in cons)
    benchmark.group = "whole-command"
    benchmark.extra_info.update({"stream": "saturated-400k", "jobs": cons[-1].n, "rounds": n,
                                 "max_queued": queued, "easy_s_median": med[0], "conservative_s_median": med[1],
                                 "ratio_conservative_to_easy": med[1] / med[0]})


def _max_queued(result) -> int:
    """The longest queue of a run (jobs submitted and not started)."""
    import numpy as np
    from epochbench.sim.metrics import queue_over_time
    _, queued = queue_over_time(result.table)
    return int(np.max(queued)) if len(queued) else 0


def test_five_million(benchmark, streams, request):
    trace = _trace("5m", streams)
    n = bench_rounds(request.config, 3)
    runs = []
    benchmark.pedantic(lambda: runs.append(run_process(simulate_argv(trace))), rounds=n, iterations=1)
    reports = [json.loads(r[1]) for r in runs]
    whole = statistics.median(r[0] for r in runs)
    sim = statistics.median(r["seconds"] for r in reports)
    benchmark.group = "whole-command"
    benchmark.extra_info.update({"stream": "5m", "jobs": reports[-1]["jobs"], "rounds": n, "whole_s_median": whole,
                                 "simulation_s_median": sim, "ratio_whole_to_simulation": whole / sim,
                                 "peak_rss_mb": max(r[2] for r in runs) / 1024})
