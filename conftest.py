"""Root conftest of the checkout: plain ``pytest`` runs the correctness tests
in ``tests/``; ``pytest --benchmark`` runs the benchmark suite shipped in the
package (``bench/benchmarks``, see :mod:`epochbench.benchmarks.plugin`)."""
pytest_plugins = ["epochbench.benchmarks.plugin"]
