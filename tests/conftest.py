"""Test-suite settings: sweeps (``score``, ``validate``, ``experiment``)
given no ``--workers`` run in the test's own process, so that the tests'
command lines do not start a Dask cluster each; the tests of the default
itself (``test_sweep.py``) unset this."""
import os

os.environ.setdefault("EPOCHBENCH_WORKERS", "1")
