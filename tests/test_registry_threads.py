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


def test_blocks_that_ship_one_method_at_once_keep_it_until_the_last_ends():
    key = ("packing", "threads-test-mine")
    m = registry.Method("packing", "threads-test-mine", _mine, "heuristic", "module test")
    assert registry.METHODS.find(key) is None
    inside = threading.Barrier(2)
    seen = []

    def work(i):
        with registry.using((m,)):
            inside.wait()
            if i == 0:
                time.sleep(0.05)          # thread 1 leaves first, thread 0 still needs the method
            else:
                return
            seen.append(registry.get("packing", "threads-test-mine").func)

    assert not _together(2, work)
    assert seen == [_mine]
    assert registry.METHODS.find(key) is None     # gone once the last block ended


def test_a_built_in_method_is_never_removed_by_a_block():
    cpsat = registry.get("knapsack", "cpsat")

    def work(i):
        with registry.using((cpsat,)):
            assert registry.get("knapsack", "cpsat") is cpsat

    assert not _together(4, work) and registry.get("knapsack", "cpsat") is cpsat
