"""The registry under threads: a Dask worker with two threads looks methods
up, and ships run-time methods in and out (:func:`registry.using`), from
both at once.  Its first run lost knapsack's ``cpsat`` ("no method 'cpsat'
for family 'knapsack'; registered: greedy-mkp, greedy-ratio"): two threads
that missed at once both counted the source they loaded, so the next one
was skipped."""
import threading
import time

from epochbench.instances import registry
from epochbench.instances.catalog import Catalog
from epochbench.instances.core import Result


def _together(n, work):
    """Run ``work(i)`` in ``n`` threads started at one barrier; their exceptions."""
    gate, errors = threading.Barrier(n), []

    def run(i):
        gate.wait()
        try:
            work(i)
        except Exception as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return errors


def test_threads_that_miss_at_once_skip_no_source():
    for _ in range(20):
        cat = Catalog("thing")

        def source(k):
            def load():
                time.sleep(0.002)         # an import takes a while: the other threads miss meanwhile
                cat.add(k, k, same=lambda a, b: a == b)
            return load

        for k in range(6):
            cat.add_source(source(k))
        found = {}
        errors = _together(8, lambda i: found.__setitem__(i, [cat.find(k) for k in range(6)]))
        assert not errors and all(v == list(range(6)) for v in found.values())


def _mine(inst, **kw):
    return Result([], 0.0, "feasible")


def _other(inst, **kw):
    return Result([], 1.0, "feasible")


def test_blocks_that_ship_one_method_at_once_keep_it_until_the_last_ends():
    key = ("packing", "threads-test-mine")
    m = registry.Method("packing", "threads-test-mine", _mine, "heuristic", "module test")
    assert registry.METHODS.find(key) is None
    inside, left = threading.Barrier(2), threading.Event()
    seen = []

    def work(i):
        with registry.using((m,)):
            inside.wait()                 # then leaves first
        left.set()

    def work0(i):
        with registry.using((m,)):
            inside.wait()
            left.wait(10)                 # thread 1 has left; this block still needs the method
            seen.append(registry.get("packing", "threads-test-mine").func)

    assert not _together(2, lambda i: (work0 if i == 0 else work)(i))
    assert seen == [_mine]
    assert registry.METHODS.find(key) is None     # gone once the last block ended


def test_a_block_sees_its_own_method_again_once_a_later_block_with_another_ended():
    key = ("packing", "threads-test-mine")
    first = registry.Method("packing", "threads-test-mine", _mine, "heuristic", "module test")
    second = registry.Method("packing", "threads-test-mine", _other, "heuristic", "module test")
    with registry.using((first,)):
        with registry.using((second,)):
            assert registry.get("packing", "threads-test-mine").func is _other
        assert registry.get("packing", "threads-test-mine").func is _mine
    assert registry.METHODS.find(key) is None


def test_a_block_that_fails_on_entry_releases_what_it_took(monkeypatch):
    key = ("packing", "threads-test-mine")
    m = registry.Method("packing", "threads-test-mine", _mine, "heuristic", "module test")
    bad = registry.Method("packing", "threads-test-bad", _other, "heuristic", "module test")
    real = registry.METHODS.find

    def find(k):
        if k == ("packing", "threads-test-bad"):
            raise RuntimeError("a plug-in failed")
        return real(k)

    monkeypatch.setattr(registry.METHODS, "find", find)
    try:
        with registry.using((m, bad)):
            pass
    except RuntimeError:
        pass
    monkeypatch.undo()
    assert registry.METHODS.find(key) is None and key not in registry._USING


def test_a_built_in_method_is_never_removed_by_a_block():
    cpsat = registry.get("knapsack", "cpsat")

    def work(i):
        with registry.using((cpsat,)):
            assert registry.get("knapsack", "cpsat") is cpsat

    assert not _together(4, work) and registry.get("knapsack", "cpsat") is cpsat


def test_threads_deriving_the_epochs_methods_at_once_do_not_clash():
    """Two threads running the heuristics' source at once both derived
    epochs' ``ff`` from packing's: "method 'ff' for family 'epochs' already
    registered by builtin" (a fresh process, 1 run in 6)."""
    import subprocess
    import sys
    code = ("import sys, threading\n"
            "sys.setswitchinterval(1e-6)\n"
            "from epochbench.instances import registry\n"
            "errors = []\n"
            "def look():\n"
            "    try:\n"
            "        registry.METHODS.find(('epochs', 'ff'))\n"
            "    except Exception as exc:\n"
            "        errors.append(repr(exc))\n"
            "ts = [threading.Thread(target=look) for _ in range(8)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n"
            "print(errors)\n")
    for _ in range(12):   # the clash came in about 1 run in 5
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.stdout.strip() == "[]", out.stdout + out.stderr
