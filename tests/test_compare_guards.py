"""``compare``'s guards and tables (mutation review, round 7): ``gap:X%``
is on the mean gap, both guards fail a method gone from B, a flag follows
the max gap when the mean stays, and a pytest-benchmark file's mean gap is
weighted by the instances each benchmark scored."""
import json

import pandas as pd
import pytest

from epochbench.compare import COLUMNS, Threshold, compare, load


def _run(rows):
    """A load()-like table: (family, method, solves, gapped, mean_gap, max_gap, median_ms)."""
    return pd.DataFrame(rows, columns=COLUMNS)


def test_the_gap_guard_is_on_the_mean_gap_not_the_max():
    """Rule: ``gap:X%`` fails a method whose MEAN gap grows by more than X
    percentage points; a max gap that grows while the mean does not is
    flagged (gap+) but does not fail, and a mean that grows while the max
    stays fails."""
    a = _run([("packing", "maxup", 10, 10, 0.010, 0.020, 5.0),
              ("packing", "meanup", 10, 10, 0.010, 0.050, 5.0)])
    b = _run([("packing", "maxup", 10, 10, 0.010, 0.090, 5.0),     # max +7 pp, mean +0
              ("packing", "meanup", 10, 10, 0.030, 0.050, 5.0)])   # mean +2 pp, max +0
    table = compare(a, b)
    broken = Threshold.parse("gap:0.5%").broken_by(table)
    assert broken["method"].tolist() == ["meanup"]
    assert table.set_index("method").loc["maxup", "flag"] == "gap+"


def test_the_gap_guard_fails_a_method_gone_from_b():
    """Rule: either guard fails a method measured in A and missing from B
    (worse by an unknown amount); a method new in B fails neither."""
    a = _run([("packing", "kept", 10, 10, 0.01, 0.02, 5.0),
              ("packing", "dropped", 10, 10, 0.01, 0.02, 5.0)])
    b = _run([("packing", "kept", 10, 10, 0.01, 0.02, 5.0),
              ("packing", "added", 10, 10, 0.50, 0.90, 50.0)])
    table = compare(a, b)
    for guard in ("gap:0.5%", "time:20%"):
        assert Threshold.parse(guard).broken_by(table)["method"].tolist() == ["dropped"], guard
    flags = table.set_index("method")["flag"]
    assert flags["dropped"] == "gone" and flags["added"] == "new"


def test_a_benchmark_files_mean_gap_is_weighted_by_instances(tmp_path):
    """Rule (compare.load of a pytest-benchmark JSON file): benchmarks of one
    (family, method) are pooled with weights = their ``extra_info.instances``:
    1 instance at gap 0 and 3 at gap 0.4 give a mean of 0.3 over 4 solves,
    not the 0.2 of an unweighted mean; the max is the largest max."""
    data = {"benchmarks": [
        {"name": "test_ffd[a]", "extra_info": {"family": "packing", "method": "ffd", "instances": 1,
                                               "mean_gap": 0.0, "max_gap": 0.0}, "stats": {"median": 0.001}},
        {"name": "test_ffd[b]", "extra_info": {"family": "packing", "method": "ffd", "instances": 3,
                                               "mean_gap": 0.4, "max_gap": 0.5}, "stats": {"median": 0.003}}]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    row = load(path).iloc[0]
    assert row["family"] == "packing" and row["method"] == "ffd"
    assert row["solves"] == 4 and row["gapped"] == 4
    assert row["mean_gap"] == pytest.approx(0.3) and row["max_gap"] == 0.5
