"""``epochbench experiment NAME``: the experiment registry and the one sweep runner.

An experiment is a list of independent *tasks* (plain dicts: a workload, a
policy, a seed, ...) and a module-level function that runs one task and
returns tidy rows (dicts).  :func:`sweep` runs the tasks, in parallel
processes by default, and :func:`run_experiment` writes ``OUT/NAME.csv``
(one row per run), ``OUT/NAME.png`` and prints the experiment's summary table.

Adding an experiment is one module in this package that calls
:func:`register` with an :class:`Experiment`; :func:`load_experiments`
imports every module here, so nothing else has to list it.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd


@dataclass(frozen=True)
class Options:
    """What the command line says: ``--quick``, ``--jobs``, ``--seeds``, ``--out``."""
    quick: bool = False
    jobs: int | None = None     # worker processes (None: the experiment's default)
    seeds: int | None = None    # repetitions (None: the experiment's default)
    out: Path = Path("results")
    progress: bool = True


@dataclass(frozen=True)
class Experiment:
    """One named experiment.

    ``tasks(opts)`` lists the independent runs; ``run(task)`` (module level,
    picklable) performs one and returns a list of tidy rows; ``table(df)``
    is the summary printed at the end; ``plot(df, path)`` draws ``NAME.png``.
    ``timing=True`` marks experiments whose rows hold wall times: they run
    one process at a time unless ``--jobs`` says otherwise, so that runs do
    not compete for the cores they time.
    """
    name: str
    help: str
    tasks: Callable[[Options], list[dict]]
    run: Callable[[dict], list[dict]]
    table: Callable[[pd.DataFrame], pd.DataFrame]
    plot: Callable[[pd.DataFrame, Path], None] | None = None
    timing: bool = False
    notes: dict = field(default_factory=dict)


EXPERIMENTS: dict[str, Experiment] = {}
_loaded = False


def register(exp: Experiment) -> Experiment:
    old = EXPERIMENTS.get(exp.name)
    if old is not None and old is not exp and old.run is not exp.run:
        raise ValueError(f"experiment {exp.name!r} already registered")
    EXPERIMENTS[exp.name] = exp
    return exp


def load_experiments() -> dict[str, Experiment]:
    """Import every module of this package (each registers its experiments)."""
    global _loaded
    if not _loaded:
        for mod in pkgutil.iter_modules(__path__):
            if not mod.name.startswith("_"):
                importlib.import_module(f"{__name__}.{mod.name}")
        _loaded = True
    return EXPERIMENTS


def _label(task: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in task.items() if isinstance(v, (str, int, float)))[:100]


def sweep(run: Callable[[dict], list[dict]], tasks: list[dict], *, jobs: int | None = None,
          progress: bool = True) -> list[dict]:
    """Run ``run(task)`` for every task; rows in task order, each with ``task``
    (its index) added.  ``jobs`` > 1 uses that many worker processes (default:
    all cores); ``jobs == 1`` runs in this process.  A failing task stops the
    sweep with its error and its task named."""
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    results: list[list[dict] | None] = [None] * len(tasks)
    t0 = time.perf_counter()

    def report(i: int, done: int) -> None:
        if progress:
            print(f"  [{done}/{len(tasks)}] {_label(tasks[i])}  ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)

    if jobs == 1 or len(tasks) <= 1:
        for i, task in enumerate(tasks):
            results[i] = _checked(run, task)
            report(i, i + 1)
    else:
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
            futures = {pool.submit(_checked, run, task): i for i, task in enumerate(tasks)}
            for done, fut in enumerate(as_completed(futures), 1):
                i = futures[fut]
                results[i] = fut.result()
                report(i, done)
    return [{**row, "task": i} for i, rows in enumerate(results) for row in rows]


def _checked(run, task: dict) -> list[dict]:
    try:
        rows = run(task)
    except Exception as exc:
        raise RuntimeError(f"task {task!r} failed: {type(exc).__name__}: {exc}") from exc
    if isinstance(rows, dict):
        rows = [rows]
    return list(rows)


def run_experiment(name: str, opts: Options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run experiment ``name``; write ``OUT/NAME.csv``, ``OUT/NAME.png`` and
    ``OUT/NAME-table.csv``; return (all rows, summary table)."""
    exps = load_experiments()
    if name not in exps:
        raise ValueError(f"unknown experiment {name!r}; known: {', '.join(sorted(exps)) or 'none'}")
    exp = exps[name]
    tasks = exp.tasks(opts)
    if not tasks:
        raise ValueError(f"experiment {name!r} has no runs for these options")
    jobs = opts.jobs if opts.jobs is not None else (1 if exp.timing else None)
    rows = sweep(exp.run, tasks, jobs=jobs, progress=opts.progress)
    df = pd.DataFrame(rows)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    df.to_csv(out / f"{name}.csv", index=False)
    table = exp.table(df)
    table.to_csv(out / f"{name}-table.csv", index=False)
    if exp.plot is not None:
        import matplotlib
        matplotlib.use("Agg")
        exp.plot(df, out / f"{name}.png")
    return df, table


__all__ = ["Options", "Experiment", "EXPERIMENTS", "register", "load_experiments", "sweep",
           "run_experiment"]
