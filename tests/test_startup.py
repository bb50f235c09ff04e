"""Start-up of a short ``simulate`` (issue 18 item 1): numba is imported only
when a compiled kernel runs, and the numpy / pure-Python twins used before
that give what the compiled kernels give, bit for bit."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from _processes import python_child
from epochbench.instances import jobs as jobs_module
from epochbench.instances._swf_parse import parse_integer_text
from epochbench.instances.jobs import make_workload
from epochbench.instances.lazy import LazyIntrinsic, LazyKernel, load_kernels
from epochbench.sim import easy_python as easy_module
from epochbench.sim import metrics
from epochbench.sim.engine import JobTable
from epochbench.sim.policies import make, run_fast


def _stream(rng, n: int, cap: int, kill: bool):
    """Random jobs with tied arrivals, early ends and (without ``kill``) overruns."""
    submit = np.cumsum(rng.choice([0, 0, 1, 5, 30], n)).astype(float)
    runtime = rng.integers(0, 200, n).astype(float)
    estimate = np.where(rng.random(n) < 0.3, runtime, runtime * rng.uniform(0.5 if not kill else 1.0, 3, n)).round()
    table = {"id": np.arange(1, n + 1), "submit": submit, "runtime": runtime, "estimate": np.maximum(estimate, 1.0),
             "procs": rng.integers(1, cap + 1, n)}
    return make_workload(table, [cap], kill_at_estimate=kill)


def _table(w) -> JobTable:
    from epochbench.instances.table import as_columns
    return JobTable.from_columns(as_columns(w.table), np.asarray(w.capacity, dtype=np.int64))


def _twin_args(t: JobTable, cap: int) -> tuple:
    """The pure-Python EASY's arguments for table ``t`` on ``cap`` processors."""
    return (t.submit.tolist(), t.duration.tolist(), t.estimate.tolist(), t.ids.tolist(), t.demand[:, 0].tolist(),
            cap)


@pytest.mark.parametrize("kill", [True, False])
def test_the_pure_python_easy_is_the_compiled_loop_bit_for_bit(kill):
    load_kernels()
    rng = np.random.default_rng(11 if kill else 12)
    for trial in range(40):
        cap = int(rng.choice([1, 4, 16, 64]))
        w = _stream(rng, int(rng.integers(1, 400)), cap, kill)
        compiled = _table(w)
        passes = run_fast(make("easy"), compiled, w.capacity)
        t = _table(w)
        start, promised, py_passes, _ = easy_module.easy_python(*_twin_args(t, cap))
        assert py_passes == passes, trial
        assert np.array_equal(np.array(start), compiled.start, equal_nan=True), trial
        assert np.array_equal(np.array(promised), compiled.promised, equal_nan=True), trial


def test_the_pure_python_easy_gives_up_at_its_budget_and_the_compiled_loop_takes_over(monkeypatch):
    w = _stream(np.random.default_rng(3), 3000, 8, True)
    t = _table(w)
    args = _twin_args(t, 8)
    assert easy_module.easy_python(*args, budget=-1.0) is None
    assert easy_module.easy_python(*args, budget=float("inf")) is not None    # (the default budget is wall time)
    assert easy_module.easy_python(*args, budget=float("inf"), cap=-1.0) is None
    from epochbench.sim.pool import simulate_pool
    reference = _table(w)
    load_kernels()
    run_fast(make("easy"), reference, w.capacity)
    monkeypatch.setattr("epochbench.sim.policies.kernels_loaded", lambda: False)
    monkeypatch.setattr(easy_module, "PY_BUDGET_S", -1.0)
    again = simulate_pool(w.table, w.capacity, "easy")                  # the twin first, then the compiled loop
    assert again.engine == "fast"
    assert np.array_equal(again.jobs["start"].to_numpy(), reference.start)
    assert np.array_equal(again.jobs["promised"].to_numpy(), reference.promised, equal_nan=True)


def _swf_text(rng, lines: int) -> bytes:
    rows = []
    for i in range(lines):
        f = rng.integers(-1, 10**int(rng.integers(1, 16)), 18)
        f[0] = i + 1
        rows.append(rng.choice([" ", "\t", "  "]).join(str(v) for v in f) + rng.choice(["\n", "\r\n", " \n"]))
        if rng.random() < 0.05:
            rows.append(rng.choice(["\n", ";  note\n", "   ; indented note\n", "  \t\n"]))
    return ("; Version: 2.2\n; MaxProcs: 64\n;\n" + "".join(rows)).encode()


def test_the_numpy_swf_reader_reads_what_the_compiled_parser_reads(tmp_path, monkeypatch):
    load_kernels()
    rng = np.random.default_rng(5)
    taken = []
    numpy_reader = jobs_module._integer_columns
    monkeypatch.setattr(jobs_module, "_integer_columns", lambda *a: taken.append(numpy_reader(*a)) or taken[-1])
    for trial in range(12):
        path = tmp_path / f"t{trial}.swf"
        path.write_bytes(_swf_text(rng, int(rng.integers(1, 300))))
        keep = jobs_module.RAW_FIELDS if trial % 3 else ()
        monkeypatch.setattr(jobs_module, "kernels_loaded", lambda: False)
        header, cols = jobs_module._swf_columns(path, str(path), keep)
        assert taken[-1] is not None, trial                     # the numpy reader read it
        monkeypatch.setattr(jobs_module, "kernels_loaded", lambda: True)
        ref_header, ref = jobs_module._swf_columns(path, str(path), keep)
        assert header == ref_header and list(cols.columns) == list(ref.columns)
        for f in ref.columns:
            a, b = np.asarray(cols[f]), np.asarray(ref[f])
            assert a.dtype == b.dtype and np.array_equal(a, b), (trial, f)
            if a.dtype.kind == "f":
                assert np.array_equal(np.signbit(a), np.signbit(b)), (trial, f)
    assert len(taken) == 12


@pytest.mark.parametrize("text", [
    b"1 2 3\n", b"1 2.5\n", b"1 2e3\n", b"1 -0\n", b"1 07\n", b"1 1234567890123456\n", b"1 2 ; comment\n",
    b"1 2-\n", b"1 --2\n", b"1 - 2\n", b"1 2\n3\n", b"", b"; only a header\n", b"1 +2\n", b"1 nan\n"])
def test_the_numpy_swf_reader_declines_what_it_does_not_read_exactly(text):
    assert parse_integer_text(text, 2) is None


def test_the_numpy_swf_reader_takes_blank_and_comment_lines_and_crlf():
    got = parse_integer_text(b"; h: 1\n\n 1\t-2\r\n  ; c\n\n123456789012345 0\n", 2)
    assert got.tolist() == [[1, 123456789012345], [-2, 0]]


def test_the_numpy_metrics_are_the_compiled_kernels_bit_for_bit():
    load_kernels()
    rng = np.random.default_rng(8)
    for trial in range(30):
        n = int(rng.integers(1, 500))
        submit = np.sort(rng.choice(np.arange(50.0), n) * rng.choice([1.0, 0.37]))
        start = submit + rng.choice([0.0, 0.0, 1.0, 2.5, 10.1], n)
        end = start + rng.choice([0.0, 1.0, 3.3, 7.0], n)
        procs = rng.integers(1, 9, n)
        peak = max(int(procs[(start <= t) & (end > t)].sum()) for t in start)   # busy after all events at t
        nodes = int(rng.integers(8, 40)) + (peak if trial % 3 else 0)    # a third may hold more than the machine
        order = np.empty(0, np.int64) if trial % 2 else rng.permutation(n)
        by_submit = np.empty(0, np.int64) if metrics._sorted(submit) else np.argsort(submit, kind="stable")
        ref = metrics._empty_while_waiting(submit, start, end, procs, by_submit, np.argsort(start, kind="stable"),
                                           np.argsort(end, kind="stable"), nodes)
        got = metrics._empty_numpy(submit, start, end, procs, nodes)
        assert got == ref or (np.isnan(got) and np.isnan(ref) and peak > nodes), (trial, got, ref)
        assert np.isnan(got) == (peak > nodes), (trial, got, peak, nodes)    # NaN: jobs sharing nodes in time
        flags = np.empty(n, dtype=bool)
        s = start.copy()
        s[rng.random(n) < 0.05] = np.nan
        metrics._started_late(s, order, flags)
        in_order = flags if order.shape[0] == 0 else flags[order]
        assert np.array_equal(metrics._late_numpy(s, order), in_order), trial


def test_a_kernel_is_compiled_on_first_call_and_its_module_then_holds_the_dispatcher():
    from epochbench.sim import profile
    load_kernels()
    assert not isinstance(profile.p_add, LazyKernel) and hasattr(profile.p_add, "py_func")
    assert not isinstance(profile._rows_move, LazyIntrinsic)  # numba's intrinsic in its place


_CHILD = """
import json, sys
FIRST = sys.argv[2] == "compiled"
if FIRST:
    from epochbench.instances.lazy import load_kernels
    load_kernels()
from epochbench.cli import main
import io, contextlib
out = io.StringIO()
with contextlib.redirect_stdout(out):
    assert main(["simulate", "--workload", sys.argv[1], "--policy", "easy", "--json", "--quiet"]) == 0
rep = json.loads(out.getvalue())
for key in ("seconds", "jobs_per_second"):
    rep.pop(key)
engine = rep.pop("engine")
print(json.dumps({"numba": "numba" in sys.modules, "engine": engine, "report": rep}))
"""


def test_a_short_simulate_imports_no_numba_and_reports_what_the_compiled_path_reports(tmp_path):
    from epochbench.instances.jobs import write_swf
    swf = write_swf(_stream(np.random.default_rng(2), 600, 16, True), tmp_path / "t.swf")
    runs = {}
    for how in ("twins", "compiled"):
        done = subprocess.run([sys.executable, "-c", _CHILD, str(swf), how], capture_output=True, text=True,
                              cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stderr
        runs[how] = json.loads(done.stdout.splitlines()[-1])
    assert runs["twins"]["numba"] is False and runs["compiled"]["numba"] is True
    assert (runs["twins"]["engine"], runs["compiled"]["engine"]) == ("python", "fast")   # the report says which ran
    assert runs["twins"]["report"] == runs["compiled"]["report"]


def test_entry_points_are_looked_up_only_where_a_distribution_may_declare_them(tmp_path, monkeypatch):
    from importlib.machinery import PathFinder

    from epochbench.instances import catalog
    monkeypatch.setattr(sys, "meta_path", [PathFinder])          # other tests may add finders
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert catalog._may_declare("epochbench.heuristics") is False and catalog.entry_points(group="epochbench.x") == ()
    info = tmp_path / "plug-1.0.dist-info"
    info.mkdir()
    (info / "entry_points.txt").write_text("[epochbench.heuristics]\nx = plug:x\n")
    assert catalog._may_declare("epochbench.heuristics") is True
    assert catalog._may_declare("epochbench.policies") is False
    zipped = tmp_path / "lib.zip"
    zipped.write_bytes(b"PK")
    monkeypatch.setattr(sys, "path", [str(zipped)])
    assert catalog._may_declare("epochbench.policies") is True


def test_out_of_order_flags_by_numpy_are_the_kernels(monkeypatch):
    load_kernels()
    rng = np.random.default_rng(4)
    for trial in range(20):
        n = int(rng.integers(1, 300))
        submit, ids = rng.choice(np.arange(40.0), n), rng.permutation(n)
        start = submit + rng.choice([0.0, 1.0, 5.0], n)
        ref = metrics.out_of_order(submit, ids, start)
        monkeypatch.setattr(metrics, "kernels_loaded", lambda: False)
        assert np.array_equal(metrics.out_of_order(submit, ids, start), ref), trial
        monkeypatch.undo()


def test_columns_go_to_arrow_as_buffers_with_nan_as_null_and_no_pandas():
    import pyarrow as pa
    from epochbench.instances.table import Columns
    rng = np.random.default_rng(1)
    cols = {"i": rng.integers(-5, 5, 70), "u8": rng.integers(0, 5, 70).astype(np.uint8),
            "f": np.where(rng.random(70) < 0.2, np.nan, rng.random(70)), "b": rng.random(70) < 0.5,
            "f32": rng.random(70).astype(np.float32), "strided": np.arange(210.0)[::3]}
    got = Columns(cols).to_arrow()
    want = pa.Table.from_arrays([pa.array(v, from_pandas=v.dtype.kind == "f") for v in cols.values()],
                                names=list(cols))
    assert got.equals(want) and got.column("f").null_count == int(np.isnan(cols["f"]).sum())
    code = ("import sys, numpy as np\nfrom epochbench.instances.table import Columns\n"
            "Columns({'a': np.arange(3), 'b': np.array([1.0, np.nan, 2.0])}).csv_bytes()\n"
            "print('pandas' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_capacity_loss_is_nan_when_a_time_is_nan_on_both_paths(monkeypatch):
    from epochbench.instances.table import Columns
    base = {"id": np.arange(3), "submit": np.array([0.0, 1.0, 2.0]), "start": np.array([0.0, 5.0, 6.0]),
            "end": np.array([5.0, 6.0, 9.0]), "procs": np.array([2, 2, 1]), "duration": np.array([5.0, 1.0, 3.0])}
    for col in ("submit", "start", "end"):
        table = dict(base)
        table[col] = table[col].copy()
        table[col][1] = np.nan
        for loaded in (False, True):
            monkeypatch.setattr(metrics, "kernels_loaded", lambda loaded=loaded: loaded)
            assert np.isnan(metrics.capacity_loss(Columns(table), [2])), (col, loaded)


_FRESH_KERNEL = """
import copy, pickle, sys, threading
import numpy as np
from epochbench.heuristics import _greedy
from epochbench.instances import lazy
k = _greedy.balance_score
assert type(k) is lazy.LazyKernel and not lazy.kernels_loaded()
assert copy.copy(k) is k and copy.deepcopy({"k": k})["k"] is k
assert pickle.loads(pickle.dumps(k)) is k
assert not hasattr(k, "_repr_html_") and not lazy.kernels_loaded()    # a probe loads nothing
# the BLAS-probe hook refuses scipy.linalg to the loading thread only
hook = lazy._NoLinalg()
other = []
threading.Thread(target=lambda: other.append(hook.find_spec("scipy.linalg"))).start()
try:
    hook.find_spec("scipy.linalg")
    raise SystemExit("not refused")
except ImportError:
    pass
held = [k]                                # not a module global: stays the LazyKernel
value = k(np.array([0.5, 0.5]), np.array([0.0, 0.25]), False)
assert lazy.kernels_loaded() and type(_greedy.balance_score) is not lazy.LazyKernel
assert k is _greedy.balance_score                                       # module globals were replaced
assert pickle.loads(pickle.dumps(held[0])) is _greedy.balance_score     # found again by name
print("OK", value, other)
"""


def test_a_kernel_before_loading_copies_and_pickles_by_reference_and_probes_load_nothing():
    done = subprocess.run([sys.executable, "-c", _FRESH_KERNEL], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("OK") and done.stdout.strip().endswith("[None]"), \
        done.stdout + done.stderr


def test_an_exact_methods_warm_up_loads_the_kernels_before_its_clock():
    code = ("from epochbench.exact.starts import warm_up_starts\nfrom epochbench.instances import lazy\n"
            "warm_up_starts('mapping')\nprint(lazy.kernels_loaded())")
    assert python_child(code) == "True"


def test_a_kernel_before_loading_documents_and_binds_like_a_function():
    code = ("import inspect, pydoc\nfrom epochbench.heuristics import _greedy\nfrom epochbench.instances import lazy\n"
            "k = _greedy.balance_score\nclass Holder:\n    score = k\n"
            "assert inspect.isroutine(k) and str(inspect.signature(k)) == '(used, share, fullness)'\n"
            "assert 'BB score' in pydoc.render_doc(k) and Holder.score is k\n"
            "assert Holder().score.__self__.__class__ is Holder and not lazy.kernels_loaded()\nprint('OK')")
    assert python_child(code) == "OK"


def _awkward_arrays(seed: int, trials: int = 3000):
    """Short float arrays with ties, NaN, signed zeros and infinities."""
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        n = int(rng.integers(1, 40))
        yield trial, [rng.random(n) * 1e3, rng.integers(0, 4, n).astype(float),
                      np.where(rng.random(n) < 0.2, np.nan, 1.0), np.where(rng.random(n) < 0.5, -0.0, 0.0),
                      np.where(rng.random(n) < 0.3, -np.inf, np.inf),
                      np.where(rng.random(n) < 0.3, np.inf, rng.random(n))][trial % 6], rng


def _same_float(want: float, got: float) -> bool:
    return (np.isnan(want) and np.isnan(got)) or (want == got and np.signbit(want) == np.signbit(got))


def test_the_median_of_the_metrics_is_numpys_bit_for_bit():
    with np.errstate(invalid="ignore"):
        for _, a, _ in _awkward_arrays(9):
            assert _same_float(float(np.median(a.copy(), overwrite_input=True)), metrics._median(a.copy())), a


def test_the_p90_of_the_metrics_is_numpys_bit_for_bit():
    with np.errstate(invalid="ignore"):
        for trial, a, rng in _awkward_arrays(10):
            q = 0.9 if trial % 2 else float(rng.random())
            want = float(np.quantile(a.copy(), q, overwrite_input=True))
            assert _same_float(want, metrics._quantile(a.copy(), q)), (a, q)


def test_the_pure_python_easy_gives_up_when_its_rest_would_outlast_the_budget(monkeypatch):
    """Read on a clock that ticks a millisecond a reading: the rest, projected
    from the time per job arrived at a look at the clock, against the budget;
    the cap against the time spent."""
    w = _stream(np.random.default_rng(3), 3000, 8, True)
    t = _table(w)
    args = _twin_args(t, 8)
    ticks, cpu_ticks = iter(range(10**9)), iter(range(10**9))
    monkeypatch.setattr(easy_module.time, "perf_counter", lambda: next(ticks) / 1000)
    monkeypatch.setattr(easy_module.time, "process_time", lambda: next(cpu_ticks) / 1000)   # an idle machine
    done = easy_module.easy_python(*args, budget=float("inf"), cap=float("inf"))
    assert done is not None and done[2] > easy_module._CHECK_EVERY      # it looked at the clock
    looks = done[2] // easy_module._CHECK_EVERY
    assert easy_module.easy_python(*args, budget=1e-9, cap=float("inf")) is None        # a rest left at the first look
    assert easy_module.easy_python(*args, budget=float("inf"), cap=looks / 1000 - 1e-6) is None
    assert easy_module.easy_python(*args, budget=float("inf"), cap=looks / 1000 + 1e-6) is not None


def test_the_budget_of_the_pure_python_easy_grows_with_the_load():
    give_up = easy_module._give_up
    # 0.1 s for the first 1,000 of 5,000 jobs: 0.4 s to go
    assert give_up(0.1, 0.1, 1000, 5000, 0.3, 9.0) and not give_up(0.1, 0.1, 1000, 5000, 0.5, 9.0)
    assert not give_up(0.1, 0.05, 1000, 5000, 0.3, 9.0)          # half the time on the processor: 0.6 s
    assert give_up(0.1, 0.001, 1000, 5000, 0.09, 9.0)            # the load counts at most 4 times
    assert not give_up(0.1, 0.2, 1000, 5000, 0.5, 9.0) and not give_up(0.1, 0.0, 1000, 5000, 0.5, 9.0)
    assert give_up(9.5, 9.5, 4999, 5000, 1.0, 9.0)               # past the cap
    assert not give_up(0.3, 0.3, 5000, 5000, 0.0, 9.0)           # nothing left to arrive


def test_a_short_simulate_imports_neither_numpy_ma_nor_difflib(tmp_path):
    """Both cost a short ``simulate`` time it does not need (numpy's
    quantile imports ``numpy.ma`` on first use: 14 ms), and so does
    ``epochbench.runs`` (importlib.metadata and inspect: 19 ms, 7 % of the
    whole command on KTH, where issue 18 wants it below a pure-Python
    script's time), which the command line imports to map an error's
    exit status, not for every command.  Nor the gang and farm machines
    (their matrices, the farm model and CS: 10 to 20 ms): the parser and
    the policy list read their names and options from
    :mod:`epochbench.sim.gang_names` and :mod:`epochbench.sim.farm_names`."""
    from epochbench.instances.jobs import write_swf
    w = _stream(np.random.default_rng(1), 50, 16, True)
    trace = write_swf(w, tmp_path / "s.swf")
    code = ("import sys\nfrom epochbench.cli import main\n"
            f"main(['simulate', '--workload', {str(trace)!r}, '--policy', 'easy', '--json', '--quiet'])\n"
            "print('MODS', 'numpy.ma' in sys.modules, 'difflib' in sys.modules, 'epochbench.runs' in sys.modules)\n"
            "print('MACHINES', sorted(m for m in sys.modules if m.startswith(('epochbench.sim.gang', "
            "'epochbench.sim.farm', 'epochbench.instances.farm'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert "MODS False False False" in done.stdout, done.stdout[-500:] + done.stderr[-2000:]
    assert "MACHINES ['epochbench.sim.farm_names', 'epochbench.sim.gang_names']" in done.stdout, done.stdout[-500:]


def test_a_python_twin_past_its_budget_gives_way_to_a_compiled_loop_loaded_before_the_clock(monkeypatch):
    """``seconds`` is the simulation alone: when the pure-Python twin gives
    up, the compiled loop is loaded (warm_up) before the timed run; the
    twin's attempt and the loading were timed before (a 90,000-job EASY run
    read 1.01 s where the compiled loop takes 0.05 s)."""
    from epochbench.sim import policies, pool
    calls = []
    monkeypatch.setattr(policies, "python_route", lambda pol, table: True)
    monkeypatch.setattr(policies, "run_python", lambda *a, **k: calls.append("twin: past its budget"))
    warm = policies.warm_up
    monkeypatch.setattr(policies, "warm_up", lambda *a: (calls.append("warm_up"), warm(*a)))
    run = policies.run_fast
    monkeypatch.setattr(policies, "run_fast", lambda *a, **k: (calls.append("run_fast"),
                                                              run(*a, **k))[1])
    w = _stream(np.random.default_rng(0), 300, 16, True)
    res = pool.simulate_pool(w.table, w.capacity, "easy")
    assert calls == ["twin: past its budget", "warm_up", "run_fast",      # warm_up's own two-job run
                     "run_fast"] and res.engine == "fast"
    expected = pool.simulate_pool(w.table, w.capacity, "easy", engine="fast")
    assert np.array_equal(res.jobs["start"].to_numpy(), expected.jobs["start"].to_numpy())


NO_CACHE = """
import sys
from numba.core import caching
for locator in caching.CacheImpl._locator_classes:    # no cache folder can be written (read-only package and home)
    locator.from_function = classmethod(lambda cls, py_func, py_file: None)
from epochbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_kernels_compile_without_a_cache_where_numba_can_write_none(tmp_path):
    """A read-only package with a read-only home: every compiled command
    ended in a 36-line traceback ('cannot cache function ...')."""
    import epochbench as eb
    eb.save(eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0], tmp_path / "x.json")
    proc = subprocess.run([sys.executable, "-c", NO_CACHE, "solve", str(tmp_path / "x.json"), "--method", "ff"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.count("\n") == 1 and "numba finds no writable folder for its cache" in proc.stderr
    assert "set NUMBA_CACHE_DIR" in proc.stderr and " ff feasible " in proc.stdout


_CALLER = '''
from epochbench.instances.lazy import njit
from kpkg.b import inner


@njit(cache=True)
def outer(x):
    return inner(x) + 1
'''
_RUN = '''
import sys
sys.path.insert(0, sys.argv[1])
from epochbench.instances import lazy
lazy.KERNEL_PACKAGES = ("kpkg",)
from kpkg.a import outer
print(outer(1))
'''


def test_a_changed_kernel_in_another_file_is_not_run_from_a_stale_cache(tmp_path, monkeypatch):
    """numba's cache checks a kernel against its own file only: after
    kpkg/b.py's kernel changed, kpkg/a.py's caller ran the old compiled
    code from the cache (a mutation of sim/los_fast.py passed every test
    of the event loop that calls it).  The cache folder is emptied when any
    kernel source of the package changed."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)     # the children cache beside kpkg's files
    # and write no byte code: b.py rewritten within one second at the same size ("x * 10", "x * 20") passes
    # Python's check of a .pyc (whole-second mtime and size), and its old code ran (seen since the test run
    # keeps byte code, conftest.py)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    pkg = tmp_path / "kpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(_CALLER)

    def run(value: int) -> str:
        (pkg / "b.py").write_text("from epochbench.instances.lazy import njit\n\n\n@njit(cache=True)\n"
                                  f"def inner(x):\n    return x * {value}\n")
        return python_child(_RUN, str(tmp_path))

    assert run(10) == "11"
    assert run(10) == "11" and list((pkg / "__pycache__").glob("a.outer-*.nbi"))     # from the cache
    assert run(20) == "21"                                                           # not 11
    # a process that imported b.py before it changed on disk runs (and caches) its old code: a later
    # process must not take that cache for the new code's
    edit = ("import pathlib, sys\nb = pathlib.Path(sys.argv[1], 'kpkg', 'b.py')\n"
            "import kpkg.b\nb.write_text(b.read_text().replace('x * 20', 'x * 30'))\n")
    script = _RUN.replace("from kpkg.a import outer", edit + "from kpkg.a import outer")
    assert python_child(script, str(tmp_path)) == "21"                               # its old code
    assert python_child(_RUN, str(tmp_path)) == "31"


@pytest.mark.parametrize("few", [0, 10**9])
def test_the_pure_python_easy_takes_started_jobs_out_of_the_queue_either_way(monkeypatch, few):
    """A pass deletes its few backfilled jobs one by one and filters out many (``_FEW_STARTS``):
    both ways give the compiled loop's schedule, on streams of small jobs where passes start dozens."""
    load_kernels()
    monkeypatch.setattr(easy_module, "_FEW_STARTS", few)
    rng = np.random.default_rng(21)
    for trial in range(12):
        cap = int(rng.choice([64, 256]))
        w = _stream(rng, int(rng.integers(200, 800)), 4, bool(trial % 2))
        w = make_workload(w.table.assign(procs=np.where(rng.random(len(w.table)) < 0.1, cap, w.table["procs"])),
                          [cap], kill_at_estimate=bool(trial % 2))
        compiled = _table(w)
        passes = run_fast(make("easy"), compiled, w.capacity)
        start, promised, py_passes, _ = easy_module.easy_python(*_twin_args(_table(w), cap))
        assert py_passes == passes, trial
        assert np.array_equal(np.array(start), compiled.start, equal_nan=True), trial
        assert np.array_equal(np.array(promised), compiled.promised, equal_nan=True), trial


def test_loaded_kernels_alone_do_not_send_a_short_easy_run_to_the_compiled_loop(monkeypatch, tmp_path):
    """A process that ran a compiled heuristic first (the README's Library
    example) took the compiled loop for a 6-job EASY run, and on a fresh
    installation compiled it: about a minute, where the twin takes a
    millisecond.  The loop counts as ready once compiled in the process or
    in the kernel cache."""
    from types import SimpleNamespace
    from epochbench.instances.lazy import load_kernels
    from epochbench.sim import policies
    load_kernels()
    from epochbench.sim.engine import JobTable
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "estimate": [5, 5], "procs": [2, 2]}, [4])
    table = JobTable.from_columns(w.table, w.capacity)
    easy = policies.make("easy")
    index = tmp_path / "policies._loop-1.py311.nbi"
    fake = SimpleNamespace(signatures=[], _cache=SimpleNamespace(_cache_file=SimpleNamespace(_index_path=str(index))))
    monkeypatch.setattr(policies, "_loop", fake)
    assert not policies.loop_ready() and policies.python_route(easy, table)
    index.write_bytes(b"")                                     # cached: loading it is cheap
    assert policies.loop_ready() and not policies.python_route(easy, table)
    index.unlink()
    fake.signatures = ["compiled here"]
    assert policies.loop_ready()
    monkeypatch.setattr(policies, "_loop", SimpleNamespace(signatures=[]))   # no cache to read: as before
    assert policies.loop_ready()
