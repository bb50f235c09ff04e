"""Fixtures of the benchmark suite: instance configurations, a session store
of checked results, and the gap-and-speed table printed at the end."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bench.suite import STORE, summary_table

RESULTS = Path(__file__).resolve().parents[1] / "results"


@pytest.fixture(scope="session")
def quick(request) -> bool:
    return bool(request.config.getoption("--quick"))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not STORE.rows:
        return
    table = summary_table()
    RESULTS.mkdir(exist_ok=True)
    pd.DataFrame(STORE.rows).to_csv(RESULTS / "bench-scores.csv", index=False)
    table.to_csv(RESULTS / "bench-summary.csv", index=False)
    tr = terminalreporter
    tr.section("epochbench: gap against the best bound and median decision time")
    shown = table.copy()
    for col in ("mean_gap", "max_gap"):
        shown[col] = shown[col].map(lambda x: "-" if pd.isna(x) else f"{100 * x:.2f}%")
    shown["optimal"] = shown["optimal"].map(lambda x: f"{100 * x:.0f}%")
    shown["median_ms"] = shown["median_ms"].map(lambda x: f"{x:.3f}")
    tr.write_line(shown.to_string(index=False))
    tr.write_line(f"(tables in {RESULTS}/bench-summary.csv and bench-scores.csv; a gap marked * is "
                  "against an unproven bound, an upper bound on the true gap)")
