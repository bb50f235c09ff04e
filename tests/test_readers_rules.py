"""Reader and stream rules that a one-token change broke unseen (mutation
review, round 8), on hand-written files: OR-Library's int64 edge (both
sides), m = 0, weights one row per constraint, problems numbered from 1,
an empty mkcbres table; VBP's inclusive item limit, 2**63 and a negative
capacity named by line; the offered load's n / (n - 1) span, NaN for one
arrival time and a capacity of the wrong length; an empty EPOCHBENCH_DATA
counts as unset."""
import math
from pathlib import Path

import pandas as pd
import pytest

from epochbench.instances import data, generators
from epochbench.instances.core import InstanceError
from epochbench.instances.generators import load_vbp
from epochbench.instances.knapsack import load_mknap1, parse_orlib_mkp, read_mkcbres
from epochbench.instances.streams import offered_load


def test_a_19_digit_weight_beyond_int64_is_an_instance_error(tmp_path):
    # 9999999999999999999 has 19 digits and exceeds int64's 9223372036854775807:
    # it must be refused as input (InstanceError naming the file), not crash in numpy.
    path = tmp_path / "mknap1.txt"
    path.write_text("1\n3 2 10\n1 2 3\n1 9999999999999999999 1\n1 1 1\n5 5\n")
    with pytest.raises(InstanceError, match="mknap1.txt"):
        parse_orlib_mkp(path)
    with pytest.raises(InstanceError, match="mknap1.txt"):
        load_mknap1(path)


def test_parser_refuses_a_problem_without_constraints(tmp_path):
    # m = 0: no weights and no capacities follow; the parser itself (public
    # API) must refuse the header rather than return a 0-constraint problem.
    path = tmp_path / "mknap1.txt"
    path.write_text("1\n3 0 10\n1 2 3\n")
    with pytest.raises(InstanceError, match=r"problem 1 header"):
        parse_orlib_mkp(path)


def test_weights_are_read_one_row_per_constraint(tmp_path):
    # n=3, m=2: rows are constraints, so item j's weights are (row0[j], row1[j]).
    path = tmp_path / "mknap1.txt"
    path.write_text("1\n3 2 7.5\n4 5 6\n1 2 3\n10 20 30\n9 99\n")
    ((n, m, opt, profit, w, cap),) = parse_orlib_mkp(path)
    assert (n, m, opt) == (3, 2, 7.5)
    assert profit.tolist() == [4.0, 5.0, 6.0]
    assert w.tolist() == [[1, 10], [2, 20], [3, 30]]
    assert cap.tolist() == [9, 99]


def test_mknap1_problems_are_numbered_from_one_with_header_optima(tmp_path):
    # load_mknap1 docstring: "the 7 problems", names mknap1-1 .. mknap1-7, optimum from each header.
    path = tmp_path / "mknap1.txt"
    path.write_text("2\n"
                    "2 1 3\n1 2\n1 1\n1\n"          # problem 1: n=2 m=1 opt=3
                    "1 1 4\n4\n2\n2\n")             # problem 2: n=1 m=1 opt=4
    insts = load_mknap1(path)
    assert [i.name for i in insts] == ["mknap1-1", "mknap1-2"]
    assert [i.meta["params"]["problem"] for i in insts] == [1, 2]
    assert [i.meta["optimum"] for i in insts] == [3.0, 4.0]


def test_mkcbres_without_problem_rows_is_refused(tmp_path):
    # read_mkcbres: a results file with the 'LP optimal' header but no 'm.n-ii value' rows
    # carries no reference values: InstanceError, not an empty table.
    path = tmp_path / "mkcbres.txt"
    path.write_text("Best known\nnothing here\nLP optimal\n")
    with pytest.raises(InstanceError, match="no problem rows"):
        read_mkcbres(str(path))


def test_item_limit_is_inclusive(tmp_path, monkeypatch):
    # a file may hold up to MAX_FILE_ITEMS items ("takes the file *past* the limit" is refused)
    monkeypatch.setattr(generators, "MAX_FILE_ITEMS", 5)
    ok = tmp_path / "ok.vbp"
    ok.write_text("2\n10 10\n2\n1 2 3\n3 4 2\n")          # 3 + 2 = 5 items: exactly the limit
    inst = load_vbp(ok)
    assert inst.capacity.tolist() == [10, 10]
    assert inst.demand.tolist() == [[1, 2]] * 3 + [[3, 4]] * 2
    over = tmp_path / "over.vbp"
    over.write_text("2\n10 10\n2\n1 2 3\n3 4 3\n")        # 6 items: past the limit, line 5 named
    with pytest.raises(InstanceError, match=r"over\.vbp: line 5 .*past 5 items"):
        load_vbp(over)


def test_a_size_of_two_to_the_63_is_refused_with_its_line(tmp_path):
    # 2**63 = 9223372036854775808 is one past int64's maximum: an input error naming
    # the line, not an OverflowError from numpy.
    path = tmp_path / "big.vbp"
    path.write_text("1\n10\n1\n9223372036854775808 1\n")
    with pytest.raises(InstanceError, match=r"big\.vbp: line 4"):
        load_vbp(path)


def test_negative_capacity_error_names_the_line(tmp_path):
    # _parse_vbp docstring: "every error names the line"
    path = tmp_path / "negcap.vbp"
    path.write_text("1\n-5\n1\n2 1\n")
    with pytest.raises(InstanceError, match=r"negcap\.vbp: line 2 \(capacities\)"):
        load_vbp(path)


def test_span_counts_n_over_n_minus_1_gaps():
    # two jobs at t=0 and t=10, 1 proc each, 5 s each, capacity 1:
    # span = 10 * 2 / 1 = 20; work = 2 * 1 * 5 = 10; rho = 10 / (1 * 20) = 0.5
    jobs = pd.DataFrame({"submit": [0.0, 10.0], "procs": [1, 1], "runtime": [5.0, 5.0], "duration": [5.0, 5.0]})
    assert math.isclose(offered_load(jobs, [1]), 0.5)


def test_span_with_three_jobs():
    # three jobs at 0, 4, 8 (4 procs, 3 s each), capacity 8:
    # span = 8 * 3 / 2 = 12; work = 3 * 4 * 3 = 36; rho = 36 / (8 * 12) = 0.375
    jobs = pd.DataFrame({"submit": [0.0, 4.0, 8.0], "procs": [4, 4, 4], "runtime": [3.0, 3.0, 3.0]})
    assert math.isclose(offered_load(jobs, [8]), 0.375)


def test_all_arrivals_at_one_time_give_nan():
    jobs = pd.DataFrame({"submit": [5.0, 5.0, 5.0], "procs": [1, 2, 3], "runtime": [1.0, 1.0, 1.0]})
    assert math.isnan(offered_load(jobs, [4]))


def test_capacity_with_more_entries_than_demand_columns_is_refused():
    # procs only (1 demand column) but 2 capacity entries: the counts disagree.
    # (numpy would broadcast (1,) against (2,) and return a number silently.)
    jobs = pd.DataFrame({"submit": [0.0, 10.0], "procs": [1, 1], "runtime": [5.0, 5.0]})
    with pytest.raises(ValueError, match="capacity has 2 entries"):
        offered_load(jobs, [1, 8])


def test_empty_env_var_is_ignored(monkeypatch):
    monkeypatch.setenv("EPOCHBENCH_DATA", "")
    root = data.data_root()
    assert root != Path("")                      # not the current folder
    assert root == (data._checkout_default() or data.NOT_SET)


def test_a_19_digit_value_within_int64_is_read(tmp_path):
    # int64's largest value has 19 digits: a capacity of 9223372036854775807 is a number the
    # format allows (it was refused as "not an integer within int64" by an 18-digit pattern)
    path = tmp_path / "mknap1.txt"
    path.write_text("1\n2 1 3\n1 2\n1 1\n9223372036854775807\n")
    ((n, m, opt, profit, w, cap),) = parse_orlib_mkp(path)
    assert cap.tolist() == [2 ** 63 - 1] and w.tolist() == [[1], [1]]
