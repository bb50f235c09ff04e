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
                    help="with --benchmark: folder of the result tables (default ./results)")


def pytest_configure(config):
    if config.getoption("--benchmark") and not config.args_source.name == "ARGS":
        config.args[:] = [str(HERE)]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def pytest_ignore_collect(collection_path, config):
    path = Path(collection_path)
    if _inside(path, HERE):
        return None if config.getoption("--benchmark") else True
    return True if config.getoption("--benchmark") else None
