"""Fixtures of the benchmark suite: instance configurations, a session store
of checked results, and the gap-and-speed table printed at the end."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest

from epochbench import runs
from epochbench.benchmarks.plugin import RUN, RUN_FILES, end_status, failure, recorded_status
from epochbench.figures import leaderboard_figure

from epochbench.suite import (MODULE_TABLES, STORE, by_generator_and_k, format_leaderboard, leaderboard,
                              leaderboard_rows, median_ms_by_size, summary_table, with_sets)



def _results(config) -> Path:
    """Folder of this run's tables: ``--results DIR`` as given, else a run
    folder of its own under ``./results`` (see :mod:`epochbench.benchmarks.plugin`)."""
    return config.stash[RUN][0]


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    """``df`` to ``path`` as CSV, atomically (:mod:`epochbench.instances.files`)."""
    from epochbench.instances.files import atomic_path
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def _data_state(terminalreporter) -> dict:
    """Where the reference data was looked for (None: no folder was set), whether it was there, and
    how many benchmarks were skipped for lack of it (their skip reasons name
    ``EPOCHBENCH_DATA``): recorded in ``run.json`` and said under the
    leaderboards, since without it they measure other instances."""
    from epochbench.instances.data import data_state
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if "EPOCHBENCH_DATA" in str(r.longrepr)]
    return {**data_state(), "skipped_for_data": len(skipped)}


def _no_board(tr, data: dict) -> None:
    """One line where a run has no leaderboard because the benchmarks that
    measure gaps were skipped for lack of the reference data (``-k
    knapsack`` without it printed no board and no word why)."""
    if data["skipped_for_data"]:
        tr.write_line("epochbench: no leaderboard: the selected benchmarks that measure gaps were skipped "
                      "(reference data, below)")


def _say_data(tr, data: dict) -> None:
    """One line under the results when the reference data was absent or
    some benchmarks were skipped for lack of it (:func:`_data_state`)."""
    if data["present"] and not data["skipped_for_data"]:
        return
    where = "no folder set" if data["root"] is None else \
        f"{data['root']} {'absent' if not data['present'] else 'incomplete'}"
    tr.write_line(f"Reference data: {where}: "
                  f"{data['skipped_for_data']} benchmark(s) skipped (OR-Library, SWF traces), VBP epochs left "
                  "out, Braun matrices replaced by generated ones: not comparable with a run that had the data "
                  "(set EPOCHBENCH_DATA or pass epochbench --data DIR)")


#: the families a full run has a leaderboard of
BOARD_FAMILIES = ("packing", "epochs", "knapsack", "assignment", "mapping")


#: the families of the benchmark modules this session selected (set when it finishes)
SELECTED = pytest.StashKey[set]()


def _families_selected(config) -> set:
    """The families of the benchmark modules this run selected (bench_FAMILY.py)."""
    return config.stash.get(SELECTED, set())


@pytest.hookimpl(hookwrapper=True, tryfirst=True)  # before pytest-benchmark's, which writes its JSON
def pytest_sessionfinish(session, exitstatus):
    """The packing and epochs benchmarks' ``extra_info`` scored against
    every method's results (:meth:`epochbench.suite.Store.refresh_infos`)
    before pytest-benchmark saves them."""
    session.config.stash[SELECTED] = {Path(str(i.path)).stem.removeprefix("bench_") for i in session.items}
    STORE.refresh_infos()
    yield


@pytest.hookimpl(trylast=True)               # after pytest-benchmark's tables: the answer comes last
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The answer at a glance: one leaderboard per family (every method's gap
    and decision time over all its solves); the full tables go to files."""
    boards = leaderboard()
    tables = {name: rows for name, rows in MODULE_TABLES.items() if rows}
    if not boards and not tables:
        data = _data_state(terminalreporter)
        _no_board(terminalreporter, data)
        _say_data(terminalreporter, data)
        return
    results = _results(config)
    results.mkdir(parents=True, exist_ok=True)
    info = config.stash[RUN][1]
    info["data"] = _data_state(terminalreporter)
    written = [*RUN_FILES, *(f"leaderboard-{family}.csv" for family in boards), *tables]
    status = end_status(exitstatus)          # an earlier run's files were renamed when this one started
    why = failure(config) if status == "failed" else {}
    if STORE.rows:
        _write_csv(pd.DataFrame(STORE.rows), results / "bench-scores.csv")
        _write_csv(summary_table(), results / "bench-summary.csv")
        _write_csv(by_generator_and_k(), results / "bench-by-k.csv")
        by_n = median_ms_by_size()
        if not by_n.empty:
            _write_csv(by_n.reset_index(), results / "bench-ms-by-n.csv")
    for name, rows in tables.items():
        _write_csv(pd.DataFrame(rows), results / name)
    if not boards:
        runs.finish(info, results / runs.RUN_JSON, status, exit_status=recorded_status(exitstatus),
                    files=[f for f in written if (results / f).exists()], **why)
        _no_board(terminalreporter, info["data"])
        _say_data(terminalreporter, info["data"])
        return
    _write_csv(with_sets(leaderboard_rows()), results / "bench-solves.csv")
    tr = terminalreporter
    tr.section("epochbench: leaderboards (gap to the reference, decision time)")
    for family, table in boards.items():
        _write_csv(table, results / f"leaderboard-{family}.csv")
        tr.write_line("")
        tr.write_line(f"{family}:")
        tr.write_line(format_leaderboard(table))
    figure = leaderboard_figure(boards, results / "leaderboard.png")
    files = [f for f in written if (results / f).exists()]
    runs.finish(info, results / runs.RUN_JSON, status, exit_status=recorded_status(exitstatus), files=files, **why)
    tr.write_line("")
    tr.write_line(f"Figure (gap against decision time, Pareto front): {figure}")
    tr.write_line("vs: opt = proven optimum, best = best known value, bound = a valid bound (gap: upper bound)")
    tr.write_line("no ans: solves that gave no decision (the gaps leave them out); times are per decision")
    for family, methods in STORE.reference_only().items():
        tr.write_line(f"{family}: {', '.join(methods)} solved as references only (not selected): not on the board")
    for family, methods in STORE.failed_methods().items():
        tr.write_line(f"{family}: {', '.join(methods)} failed (see the failures above): not on the board where "
                      "they failed")
    _say_data(tr, info["data"])
    if info["data"]["skipped_for_data"]:
        missing = [f for f in BOARD_FAMILIES if f not in boards and f in _families_selected(config)]
        for family in missing:                     # its every benchmark was skipped: no board, said
            tr.write_line(f"{family}: no leaderboard: its benchmarks need the reference data")
    tr.write_line(f"Full tables per configuration in {results}/:")
    for line in textwrap.wrap(", ".join(f for f in files if f.endswith(".csv")), 96,      # those this run wrote
                              break_on_hyphens=False):
        tr.write_line("  " + line)
    tr.write_line(f"Provenance (versions, machine, command line): {results / runs.RUN_JSON}; "
                  "'epochbench runs' lists the runs")
