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
import json
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


def save_figure(fig, path, title: str | None = None, dpi: int = 110) -> None:
    """Give ``fig`` its ``title``, lay it out, write it to ``path`` and close it
    (every experiment's plot ends this way)."""
    import matplotlib.pyplot as plt

    if title is not None:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)


def _label(task: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in task.items() if isinstance(v, (str, int, float)))[:100]


def _key(task: dict) -> str:
    return json.dumps(task, sort_keys=True, default=str)


def _load_checkpoint(path: Path | None, tasks: list[dict]) -> dict[int, list[dict]]:
    """Rows of the tasks a previous sweep finished (``path``, JSON lines of
    ``{"task": ..., "rows": [...]}``), by index in ``tasks``; tasks not in
    this list are ignored."""
    if path is None or not path.exists():
        return {}
    index = {_key(t): i for i, t in enumerate(tasks)}
    done = {}
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short when the previous sweep was killed
        i = index.get(_key(rec["task"]))
        if i is not None:
            done[i] = rec["rows"]
    return done


def sweep(run: Callable[[dict], list[dict]], tasks: list[dict], *, jobs: int | None = None,
          progress: bool = True, checkpoint: Path | None = None) -> list[dict]:
    """Run ``run(task)`` for every task; rows in task order, each with ``task``
    (its index) added.  ``jobs`` > 1 uses that many worker processes (default:
    all cores); ``jobs == 1`` runs in this process.  A failing task stops the
    sweep with its error and its task named.  ``checkpoint``: a JSON-lines
    file that gets each finished task's rows; tasks already in it are not
    run again (an interrupted sweep resumes)."""
    jobs = (os.cpu_count() or 1) if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    results: list[list[dict] | None] = [None] * len(tasks)
    for i, rows in _load_checkpoint(checkpoint, tasks).items():
        results[i] = rows
    todo = [i for i in range(len(tasks)) if results[i] is None]
    if progress and len(todo) < len(tasks):
        print(f"  resuming: {len(tasks) - len(todo)} of {len(tasks)} tasks done in {checkpoint}",
              file=sys.stderr, flush=True)
    log = open(checkpoint, "a") if checkpoint is not None else None
    t0 = time.perf_counter()

    def finish(i: int, rows: list[dict], done: int) -> None:
        results[i] = rows
        if log is not None:
            log.write(json.dumps({"task": tasks[i], "rows": rows}, default=_plain) + "\n")
            log.flush()
        if progress:
            print(f"  [{done}/{len(todo)}] {_label(tasks[i])}  ({time.perf_counter() - t0:.1f} s)",
                  file=sys.stderr, flush=True)

    try:
        if jobs == 1 or len(todo) <= 1:
            for done, i in enumerate(todo, 1):
                finish(i, _checked(run, tasks[i]), done)
        else:
            with ProcessPoolExecutor(max_workers=min(jobs, len(todo))) as pool:
                futures = {pool.submit(_checked, run, tasks[i]): i for i in todo}
                for done, fut in enumerate(as_completed(futures), 1):
                    finish(futures[fut], fut.result(), done)
    finally:
        if log is not None:
            log.close()
    return [{**row, "task": i} for i, rows in enumerate(results) for row in rows]


def _plain(x):
    """JSON for numpy scalars in rows."""
    return x.item() if hasattr(x, "item") else str(x)


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
    ``OUT/NAME-table.csv``; return (all rows, summary table).  Finished runs
    go to ``OUT/NAME.partial.jsonl`` as they complete; an interrupted
    experiment started again with the same options runs only what is
    missing, and the file is removed once ``NAME.csv`` is written."""
    exps = load_experiments()
    if name not in exps:
        raise ValueError(f"unknown experiment {name!r}; known: {', '.join(sorted(exps)) or 'none'}")
    exp = exps[name]
    tasks = exp.tasks(opts)
    if not tasks:
        raise ValueError(f"experiment {name!r} has no runs for these options")
    jobs = opts.jobs if opts.jobs is not None else (1 if exp.timing else None)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    partial = out / f"{name}.partial.jsonl"
    rows = sweep(exp.run, tasks, jobs=jobs, progress=opts.progress, checkpoint=partial)
    df = pd.DataFrame(rows)
    df.to_csv(out / f"{name}.csv", index=False)
    partial.unlink()  # complete: NAME.csv holds everything
    table = exp.table(df)
    table.to_csv(out / f"{name}-table.csv", index=False)
    if exp.plot is not None:
        import matplotlib
        matplotlib.use("Agg")
        exp.plot(df, out / f"{name}.png")
    return df, table


__all__ = ["Options", "Experiment", "EXPERIMENTS", "register", "load_experiments", "sweep",
           "run_experiment"]
