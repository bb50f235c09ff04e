"""Fixtures of the benchmark suite: instance configurations, a session store
of checked results, and the gap-and-speed table printed at the end."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from epochbench.scoring import shown
from epochbench.suite import STORE, by_generator_and_k, median_ms_by_size, summary_table



def _results(config) -> Path:
    """Folder of the result tables: ``--results DIR``, else ``./results``."""
    return Path(config.getoption("--results") or "results").resolve()


def _write_csv(df: pd.DataFrame, path: Path) -> None:
    """``df`` to ``path`` as CSV, atomically (:mod:`epochbench.instances.files`)."""
    from epochbench.instances.files import atomic_path
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not STORE.rows:
        return
    table = summary_table()
    results = _results(config)
    results.mkdir(parents=True, exist_ok=True)
    _write_csv(pd.DataFrame(STORE.rows), results / "bench-scores.csv")
    _write_csv(table, results / "bench-summary.csv")
    tr = terminalreporter
    tr.section("epochbench: gap against the best bound and median decision time")
    tr.write_line(shown(table).to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    per_k = by_generator_and_k()
    _write_csv(per_k, results / "bench-by-k.csv")
    tr.section("epochbench: gap per generator and K (all sizes)")
    tr.write_line(shown(per_k).to_string(index=False))
    by_n = median_ms_by_size()
    if not by_n.empty:
        tr.section("epochbench: median decision time (ms) per method and queue length n (packing)")
        tr.write_line(by_n.to_string(float_format=lambda x: f"{x:.3f}"))
    tr.write_line(f"(tables in {results}/bench-summary.csv and bench-scores.csv; a gap marked * is not "
                  "against a proven optimum: gap_vs says whether a best-known value or a bound)")
