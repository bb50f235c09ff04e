"""Root conftest: plain ``pytest`` runs the correctness tests in ``tests/``;
``pytest --benchmark`` runs the benchmark suite in ``bench/`` instead
(``--quick`` for the small version) and prints a gap-and-speed table."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def pytest_addoption(parser):
    group = parser.getgroup("epochbench")
    group.addoption("--benchmark", action="store_true", default=False,
                    help="run the benchmark suite in bench/ (gap and speed of every method)")
    group.addoption("--quick", action="store_true", default=False,
                    help="with --benchmark: small sizes, few instances, short time limits")


def pytest_configure(config):
    if config.getoption("--benchmark") and not config.args_source.name == "ARGS":
        config.args[:] = [str(ROOT / "bench")]


def pytest_ignore_collect(collection_path, config):
    path = Path(collection_path)
    bench = config.getoption("--benchmark")
    if path == ROOT / "bench" or ROOT / "bench" in path.parents:
        return None if bench else True
    if path == ROOT / "tests" or ROOT / "tests" in path.parents:
        return True if bench else None
    return None
