"""The public face of epochbench (re-exported by the package): the few names
a user needs, each a thin, checked call into the layer below.  Names below
the face may change between versions; these may not without a deprecation.

Examples
--------
>>> import epochbench as eb
>>> fam = eb.generate("leinberger", n=6, k=2, count=2, seed=1)
>>> [r.status for r in (eb.solve(fam[0], "ff"), eb.solve(fam[0], "cpsat", time_limit=5))]
['feasible', 'optimal']
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from epochbench.instances.core import Result
from epochbench.instances.registry import register
from epochbench.sim.engine import SimResult

__all__ = ["register", "solve", "score", "validate", "generate", "load", "save", "simulate", "Result", "SimResult"]


def solve(instance, method: str, **params) -> Result:
    """Solve ``instance`` with the registered ``method``, checked.

    Parameters
    ----------
    instance : a family's instance (``PackingInstance``, ``EpochsInstance``, ...)
    method : str
        A method of the instance's family (``epochbench list``).
    **params
        ``time_limit`` (seconds, wall time of the whole exact call; default
        10; the budget of a heuristic that has one, e.g. ``sa``) and
        ``threads`` (default 1) for exact methods; any keyword the method
        takes (e.g. ``window=2`` for ``bl``).

    Returns
    -------
    Result
        ``decision``, ``value``, ``status`` (``optimal`` only when proved),
        ``bound`` (None when nothing was proved), ``seconds``, ``info``.  The
        decision has passed the family's independent checker.

    Notes
    -----
    Cost: the method's; the check is linear in the instance's size.
    """
    from epochbench.instances.registry import get, solve as _solve
    if not isinstance(method, str) or not method:
        raise ValueError(f"method: expected a method name, got {method!r}")
    if not hasattr(instance, "kind"):
        raise ValueError(f"instance: expected an epochbench instance, got {type(instance).__name__}")
    m = get(instance.kind, method)
    if not m.exact:
        params.pop("threads", None)             # a heuristic with a budget (sa) takes time_limit; others ignore it
    return _solve(instance, method, **params)


def score(instances: Iterable, methods: Iterable[str] | str, *, time_limit: float = 10.0, threads: int = 1,
          references=(), params: dict | None = None, workers: int | None = 1, scheduler: str | None = None):
    """Score ``methods`` on ``instances``: one tidy row per instance and method.

    Parameters
    ----------
    instances : iterable of instances, or a family folder / instance file path
    methods : names, or one comma-separated string
    time_limit, threads : exact methods' wall-time limit (s) and threads
    references : result files (CSV) with reference values (see the README)
    params : ``{family: {method: {keyword: value}}}``
    workers : 1 (default) scores in this process; N > 1 on a local Dask
        cluster of N processes, None on one of ``$EPOCHBENCH_WORKERS`` or
        every core (as ``epochbench score`` does; a script that starts one
        needs the ``if __name__ == "__main__":`` guard of multiprocessing)
    scheduler : address of a Dask scheduler to score on instead

    Returns
    -------
    pandas.DataFrame
        Columns ``family, instance, method, kind, n, k, value, bound, gap,
        gap_kind, ref_source, beats_reference, units, status, seconds, ...``;
        ``gap`` is NaN where no reference exists (``gap_kind == "no bound"``).
    """
    from .scoring import score as _score
    if isinstance(methods, str):
        methods = [m for m in methods.split(",") if m]
    methods = list(methods)
    if not methods:
        raise ValueError("methods: give at least one method name")
    if isinstance(instances, (str, Path)):
        from epochbench.instances.io import read_family
        path = Path(instances)
        instances = read_family(path) if path.is_dir() else [load(path)]
    return _score(list(instances), methods, time_limit=time_limit, threads=threads,
                  references=references, params=params, workers=workers, scheduler=scheduler)


def validate(func: Callable, family: str = "packing", *, count: int = 30, seed: int = 0,
             time_limit: float = 10.0, exact: str = "cpsat", workers: int | None = 1,
             scheduler: str | None = None):
    """Check a user's heuristic ``func(instance) -> decision`` on edge cases
    and ``count`` random instances of ``family``; every answer is checked
    and scored against ``exact``'s proven optimum next to the built-ins.
    ``workers`` / ``scheduler`` as in :func:`score` (``func`` travels to
    the workers by pickle).  ``func`` gets a copy of each instance
    (read-only arrays as the original's); its answer is checked on the
    original, and changing the copy (``meta``, or an array made writable)
    is a failure.

    Returns
    -------
    Verdict
        ``ok`` (every answer feasible, no false claim, no instance changed),
        ``failures`` (one line each), ``table`` (per-instance gaps and times).
    """
    from .validation import validate as _validate
    if not callable(func):
        raise ValueError(f"func: expected a function, got {type(func).__name__}")
    return _validate(func, family, count=count, seed=seed, time_limit=time_limit, exact=exact,
                     workers=workers, scheduler=scheduler)


def generate(name: str, **params) -> list:
    """Instances of generator ``name`` (``epochbench generate --help``
    lists them), deterministic by ``seed``; unknown names or parameters
    raise ``ValueError`` naming the known ones."""
    from epochbench.instances.generators import generate as _generate
    return _generate(name, **params)


def load(path):
    """Read one instance file (JSON, as written by :func:`save` or
    ``epochbench generate``)."""
    from epochbench.instances.io import load_instance
    return load_instance(path)


def save(instance, path) -> None:
    """Write ``instance`` to ``path`` as JSON (atomically)."""
    from epochbench.instances.io import save_instance
    save_instance(instance, path)


def simulate(workload=None, policy: str = "easy", machine: str | None = None, **options) -> SimResult:
    """Replay a job stream under a registered policy (``epochbench list
    --policies``) on the ``pool``, ``gang`` or ``farm`` machine; see
    :func:`epochbench.sim.runner.simulate`.  ``workload``: a
    :class:`~epochbench.instances.jobs.Workload`, a path (SWF, CSV, Parquet)
    or ``(jobs, capacity)``; None for the farm's generated stream."""
    from epochbench.sim.runner import simulate as _simulate
    return _simulate(workload, policy, machine=machine, **options)
