"""A tiny experiment for tests/test_crash_safety.py: cheap deterministic
tasks, a little sleep each, one wall-time column (``seconds``).

Run it as the CLI would: ``python tests/crash_experiment.py experiment
crash-test --out DIR ...`` registers the experiment, then calls
:func:`epochbench.cli.main` with the arguments.
"""
from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from epochbench.experiments import Experiment, Options, register

NAME = "crash-test"
TASKS = 40
SLEEP = 0.1


def tasks(opts: Options) -> list[dict]:
    return [{"point": p, "seed": s} for p in range(TASKS // 2) for s in range(2)]


def run(task: dict) -> list[dict]:
    t0 = time.perf_counter()
    time.sleep(SLEEP)
    rng = np.random.default_rng([task["point"], task["seed"]])
    x = rng.integers(0, 1000, size=20)
    return [{"point": task["point"], "seed": task["seed"], "which": w, "value": int(v),
             "seconds": time.perf_counter() - t0}
            for w, v in (("sum", x.sum()), ("max", x.max()))]


def table(df: pd.DataFrame) -> pd.DataFrame:
    return df.groupby("which", as_index=False)["value"].mean()


EXPERIMENT = register(Experiment(NAME, "test experiment (crash safety)", tasks, run, table))

#: the same rows from two tasks, with a figure (the kept-figure test)
FIGURE = "crash-test-figure"


def few_tasks(opts: Options) -> list[dict]:
    return tasks(opts)[:2]


def plot(df: pd.DataFrame, path) -> None:
    from epochbench.experiments.plotting import figure, save

    fig, axes = figure(1, 1)
    axes[0][0].plot(df["point"], df["value"], "o")
    save(fig, path, title="crash test")


FIGURE_EXPERIMENT = register(Experiment(FIGURE, "test experiment with a figure", few_tasks, run, table, plot))


if __name__ == "__main__":
    from epochbench.cli import main
    sys.exit(main(sys.argv[1:]))
