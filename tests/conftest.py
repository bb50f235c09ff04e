"""Test-suite settings.

* Sweeps (``score``, ``validate``, ``experiment``) given no ``--workers``
  run in the test's own process, so that the tests' command lines do not
  start a Dask cluster each; the tests of the default itself
  (``test_sweep.py``) unset this.
* Under ``pytest -n`` (pytest-xdist, the README's test command), a worker
  carries ``PYTEST_XDIST_*`` variables in its environment; a ``pytest`` or
  ``epochbench bench`` that a test starts would inherit them and take itself
  for a worker (pytest-benchmark then disables benchmarking), so every test
  runs with them unset.
* Tests of wall-time limits widen their tolerance by the number of test
  processes sharing the machine (fixture ``sharing_processes``).
* A test that runs past ``HANG`` seconds fails, naming itself and where it
  was (pytest-timeout), instead of stalling the whole run until CI's limit
  ends it with no word of which test hung (a one-token change to
  ``wake_time`` or to IMFS's odd path loops forever).  The slowest test
  takes about 13 s on a machine of the CI kind with a cold numba cache.
  pytest-timeout's signal is handled only between Python bytecodes, so a
  compiled kernel that loops forever is not stopped by it: ``HARD_GRACE``
  seconds later the test's process is ended outright with every thread's
  traceback on the real stderr, not pytest's capture of it
  (:func:`faulthandler.dump_traceback_later`, whose watchdog is a C thread
  that needs no GIL); under ``pytest -n`` the run goes on and names the
  test whose worker crashed.
* A run started with Ctrl-C ignored (``nohup pytest &``, a background job
  of a script, some batch systems) takes Python's Ctrl-C handler back:
  an ignored SIGINT is inherited by every child, and the tests of Ctrl-C
  (an experiment exits 130, a CBC solve ends) failed, 7 of them.  A
  handled signal is reset to its default in a child that execs.
"""
import faulthandler
import os
import signal

import pytest

os.environ.setdefault("EPOCHBENCH_WORKERS", "1")
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

#: what pytest-xdist puts in a worker's environment
XDIST_VARIABLES = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


#: seconds a test may run before it counts as hung (``pytest.mark.timeout`` overrides it)
HANG = 180
TESTS = os.path.dirname(os.path.abspath(__file__))
#: seconds past a test's timeout after which its process is ended (a hang in compiled code)
HARD_GRACE = 60


def hard_stop(seconds: float, fd: int = 2) -> None:
    """End this process ``seconds`` from now, all threads' tracebacks on
    file descriptor ``fd`` first, whatever holds the GIL (cancelled by
    :func:`faulthandler.cancel_dump_traceback_later`)."""
    faulthandler.dump_traceback_later(seconds, exit=True, file=fd)


def _real_stderr(config) -> int:
    """The process's own stderr while pytest captures file descriptor 2
    (its saved copy; pytest's ``targetfd_save``): the captured one is a
    temporary file that dies with the process, and a hard stop printed
    nothing anywhere."""
    capman = config.pluginmanager.getplugin("capturemanager")
    err = getattr(getattr(capman, "_global_capturing", None), "err", None)
    fd = getattr(err, "targetfd_save", None)
    return fd if isinstance(fd, int) else 2


def pytest_collection_modifyitems(config, items):
    """Every test of this folder fails past ``HANG`` seconds unless it says otherwise."""
    for item in items:
        if str(item.path).startswith(TESTS + os.sep) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(HANG))


@pytest.fixture(autouse=True)
def _hard_stop(request):
    """:func:`hard_stop` at the test's timeout plus ``HARD_GRACE``."""
    marker = request.node.get_closest_marker("timeout")
    limit = (marker.args[0] if marker.args else marker.kwargs.get("timeout")) if marker else None
    if not limit or limit <= 0:
        yield
        return
    hard_stop(limit + HARD_GRACE, _real_stderr(request.config))
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def _children_are_not_xdist_workers(monkeypatch):
    """Child processes of a test start as top-level sessions."""
    for name in XDIST_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def own_methods():
    """Methods a test registers are gone after it: a registry check of the
    exact methods (tests/test_warm_starts.py) saw them in the same process."""
    from epochbench.instances import registry
    state = registry.METHODS.snapshot()
    yield
    registry.METHODS.restore(state)


@pytest.fixture
def sharing_processes(request) -> int:
    """Test processes sharing this machine: the xdist workers under ``pytest -n``, else 1."""
    return int(getattr(request.config, "workerinput", {}).get("workercount", 1))


@pytest.fixture
def registry_restored():
    """The methods a test registers leave with it (a test that runs every
    packing heuristic may share the process)."""
    from epochbench.instances.registry import METHODS
    state = METHODS.snapshot()
    yield
    METHODS.restore(state)



@pytest.fixture
def catalogs_restored():
    """Every catalog a plug-in test adds to (generators, experiments,
    policies, methods) as it was before the test."""
    from epochbench.experiments import CATALOG as EXPS, load_experiments
    from epochbench.instances import generators as gen
    from epochbench.instances.registry import METHODS
    from epochbench.sim import registry as sreg
    gen.load_generators()
    load_experiments()
    sreg.POLICIES.complete()
    states = [(c, c.snapshot()) for c in (gen.CATALOG, EXPS, sreg.POLICIES, METHODS)]
    params = dict(gen.GENERATOR_PARAMS)
    yield
    for c, s in states:
        c.restore(s)
    gen.GENERATOR_PARAMS.clear()
    gen.GENERATOR_PARAMS.update(params)
