"""pytest plug-in of the benchmark suite: ``--benchmark`` runs the suite in
this folder instead of the correctness tests, ``--quick`` its small version.

The checkout's root ``conftest.py`` loads it (plain ``pytest`` runs
``tests/``, ``pytest --benchmark`` runs this folder); ``epochbench bench``
loads it with ``-p`` and points pytest at this folder wherever the package
is installed.
"""
from pathlib import Path

#: the folder of the benchmark suite (inside the installed package)
HERE = Path(__file__).resolve().parent


def pytest_addoption(parser):
    group = parser.getgroup("epochbench")
    group.addoption("--benchmark", action="store_true", default=False,
                    help="run the benchmark suite (gap and speed of every method) instead of the tests")
    group.addoption("--quick", action="store_true", default=False,
                    help="with --benchmark: small sizes, few instances, short time limits")
    group.addoption("--results", default=None, metavar="DIR",
                    help="with --benchmark: folder of the result tables, used as it is (a finished earlier "
                         "run's files there are renamed FILE-RUNID.*); default: a run folder of its own, "
                         "./results/bench-YYYYMMDD-HHMMSS")
    group.addoption("--run-name", default=None, metavar="NAME",
                    help="with --benchmark: name of the run folder under ./results (it must not exist)")


def pytest_configure(config):
    if config.getoption("--benchmark") and not config.args_source.name == "ARGS":
        config.args[:] = [str(HERE)]
    if config.getoption("--benchmark"):
        _start_run(config)


def _start_run(config) -> None:
    """Fix this run's results folder and start its provenance record
    (:mod:`epochbench.runs`); a bad or taken ``--run-name`` is a usage error."""
    import sys

    import pytest

    from epochbench import runs
    given, name = config.getoption("--results"), config.getoption("--run-name")
    if given and name:
        raise pytest.UsageError("--run-name names a folder under ./results; with --results the folder is DIR "
                                "itself, give one of them")
    try:
        folder = Path(given).resolve() if given else runs.run_folder(Path("results").resolve(), "bench", name)
    except ValueError as exc:
        raise pytest.UsageError(str(exc).replace("--name", "--run-name")) from None
    problem = runs.unwritable(folder)
    if problem:
        raise pytest.UsageError(f"{'--results' if given else 'results folder'} {problem}")
    rid = f"bench-{runs.stamp()}" if given else folder.name        # DIR given: it may hold several runs
    info = runs.provenance("bench", rid, argv=sys.argv, quick=bool(config.getoption("--quick")),
                           pytest_args=list(config.invocation_params.args))
    config.stash[RUN] = (folder, info)


#: this run's results folder and provenance record (set by ``pytest_configure``)
import pytest as _pytest  # noqa: E402  (the stash key needs pytest, the plug-in's host)

RUN = _pytest.StashKey[tuple]()


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def pytest_ignore_collect(collection_path, config):
    path = Path(collection_path)
    if _inside(path, HERE):
        return None if config.getoption("--benchmark") else True
    return True if config.getoption("--benchmark") else None
