"""A workload built from a user's table keeps what it was checked with.

1. ``make_workload`` kept the caller's arrays when they were already of the
   contract's dtype and order: a later ``cols["submit"] *= 10`` changed the
   checked workload (a run of it then used the new submit times with the old
   durations), and a negative submit written afterwards ran at t = -50.
2. A ``duration`` column was overwritten without a word (``duration=1000``
   ran every job for min(runtime, estimate)).
3. An estimate under another system's name (``walltime``,
   ``requested_time``) passed through unread: every estimate the runtime.
Each test fails on the code before.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import epochbench as eb
from epochbench.instances.core import InstanceError
from epochbench.instances.jobs import make_workload, read_table, write_table


def _cols():
    return {"id": np.arange(1, 4), "submit": np.array([0., 1, 2]), "runtime": np.array([10., 10, 10]),
            "procs": np.array([64, 64, 64])}


def test_a_workload_shares_no_array_with_the_callers_table():
    cols = _cols()
    w = make_workload(cols, 64)
    want = eb.simulate(w, "easy").summary()["wait_mean"]
    cols["submit"] *= 10
    cols["runtime"] *= 2
    cols["submit"][0] = -50.0
    assert w.table["submit"].tolist() == [0.0, 1.0, 2.0] and w.table["runtime"].tolist() == [10.0] * 3
    assert eb.simulate(w, "easy").summary()["wait_mean"] == want == 9.0


def test_a_workload_of_a_dataframe_shares_none_of_its_columns():
    df = pd.DataFrame(_cols())
    w = make_workload(df, 64)
    df.loc[:, "submit"] = df["submit"] * 0.5
    df.loc[0, "runtime"] = np.nan
    assert w.table["submit"].tolist() == [0.0, 1.0, 2.0] and w.table["runtime"].tolist() == [10.0] * 3


def test_a_workloads_arrays_are_read_only():
    w = make_workload(_cols(), 64)
    for name in w.table.columns:
        assert not w.table[name].flags.writeable, name
    with pytest.raises(ValueError, match="read-only"):
        w.table["submit"][0] = 5.0


@pytest.mark.parametrize("edit", [
    lambda f: f.__setitem__("procs", 7),                               # the README's example of a review
    lambda f: f.__setitem__("extra", 1),
    lambda f: f.insert(0, "extra", 1),
    lambda f: f.pop("procs"),
    lambda f: f.__delitem__("runtime"),
    lambda f: f.sort_values("id", ascending=False, inplace=True),
    lambda f: f.rename(columns={"procs": "p"}, inplace=True),
    lambda f: setattr(f, "index", [7, 8, 9]),
])
def test_an_edit_of_the_jobs_frame_never_shows_as_the_workloads_jobs(edit):
    """A column assigned to ``w.jobs`` stayed on the cached frame: the
    workload showed 7 processors a job where every simulation ran 64."""
    import warnings
    w = make_workload(_cols(), 64)
    want = w.jobs.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                 # pandas 3.1 deprecates inplace=True
        edit(w.jobs)
    pd.testing.assert_frame_equal(w.jobs, want)
    assert np.shares_memory(w.jobs["submit"].to_numpy(), w.table["submit"])   # over the table's arrays again
    frame = w.jobs
    assert w.jobs is frame                                                     # unedited: built once


def test_a_text_column_edited_on_the_jobs_frame_never_shows_and_an_empty_frame_is_kept():
    """A text column is copied into pandas' string type, so the frame's own
    array is what is compared; an empty table shares no memory to compare
    (its frame was built again on every call)."""
    w = make_workload({**_cols(), "note": np.array(["a", "b", "c"], dtype=object)}, 64)
    frame = w.jobs
    assert w.jobs is frame
    w.jobs["note"] = ["z", "z", "z"]
    assert w.jobs["note"].tolist() == ["a", "b", "c"]
    w.jobs["note"] = 5
    assert w.jobs["note"].tolist() == ["a", "b", "c"]
    empty = make_workload({k: [] for k in ("id", "submit", "runtime", "procs")}, 8)
    assert empty.jobs is empty.jobs


def test_a_file_readers_table_is_not_copied_again(tmp_path, monkeypatch):
    """The readers give their own arrays away: no second copy at millions of jobs."""
    from epochbench.instances import jobs as jobs_module
    write_table(make_workload(_cols(), 64), tmp_path / "w.csv")
    real, given = jobs_module._private, []
    monkeypatch.setattr(jobs_module, "_private", lambda tab, theirs: given.append(theirs) or real(tab, theirs))
    assert read_table(tmp_path / "w.csv").table["submit"].tolist() == [0.0, 1.0, 2.0]
    assert given == [()]


def test_a_duration_unlike_the_derived_one_is_refused():
    df = pd.DataFrame(_cols()).assign(estimate=[5.0, 20.0, 20.0])
    with pytest.raises(InstanceError, match=r"^memory: column 'duration' is derived, never read: min\(runtime, "
                                            r"estimate\), jobs killed at their estimate; yours differs at job id 1 "
                                            r"\(1000.0, derived 5.0\): drop it"):
        make_workload(df.assign(duration=1000.0), 64)
    with pytest.raises(InstanceError, match=r"the runtime \(kill_at_estimate=False\); yours differs at job id 1 "
                                            r"\(5.0, derived 10.0\)"):
        make_workload(df.assign(duration=[5.0, 10.0, 10.0]), 64, kill_at_estimate=False)
    same = make_workload(df.assign(duration=[5.0, 10.0, 10.0]), 64)
    assert same.table["duration"].tolist() == [5.0, 10.0, 10.0]


def test_a_runs_job_table_given_back_passes_and_a_written_table_reads_with_another_kill_rule(tmp_path):
    df = pd.DataFrame(_cols()).assign(estimate=[5.0, 20.0, 20.0])
    run = eb.simulate(make_workload(df, 64), "easy")
    again = make_workload(run.job_table()[["id", "submit", "runtime", "estimate", "procs", "duration"]], 64)
    assert again.table["duration"].tolist() == [5.0, 10.0, 10.0]
    write_table(make_workload(df, 64), tmp_path / "w.parquet")
    assert read_table(tmp_path / "w.parquet", kill_at_estimate=False).table["duration"].tolist() == [10.0] * 3


@pytest.mark.parametrize("name", ["walltime", "Requested_Time", "TimeLimit", "req_walltime", "wclimit"])
def test_an_estimate_under_another_systems_name_is_refused(name):
    df = pd.DataFrame(_cols())
    with pytest.raises(InstanceError, match=rf"^memory: column '{name}' is not one epochbench reads, and 'estimate' "
                                            r"\(the user's requested time\) is absent: rename it 'estimate'"):
        make_workload(df.assign(**{name: 600.0}), 64)
    kept = make_workload(df.assign(estimate=600.0, **{name: 600.0}), 64)   # beside an estimate: just a column
    assert kept.table[name].tolist() == [600.0] * 3


@pytest.mark.parametrize("column", ["runtime", "procs", "submit"])
@pytest.mark.parametrize("boxed", [False, True])
def test_complex_numbers_in_a_job_table_are_refused(column, boxed):
    """numpy's cast dropped the imaginary part with a ComplexWarning only:
    runtime 5+500j ran as 5."""
    import pandas as pd
    from epochbench.instances.jobs import make_workload
    df = pd.DataFrame({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "procs": [1, 2]})
    values = df[column] + 3j
    df[column] = values.astype(object) if boxed else values
    with pytest.raises(InstanceError, match=rf"^memory: column '{column}' holds complex numbers \((complex128|object)\); "
                                            r"give real numbers$"):
        make_workload(df, [4])


def test_a_column_named_twice_or_given_as_a_generator_says_so():
    """pandas returns both columns of a name given twice, which read as one
    2-D column ("must be 1-D, got shape (2, 2)"); a generator read as a
    0-d array ("got shape ()")."""
    df = pd.DataFrame({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "procs": [1, 2]})
    with pytest.raises(ValueError, match=r"^column 'procs' given twice$"):
        make_workload(pd.concat([df, df[["procs"]]], axis=1), [4])
    for column in ("id", "procs"):                          # the first column, and one after the table's length
        with pytest.raises(ValueError, match=rf"^column '{column}' is a generator; give a list or an array$"):
            make_workload({**df.to_dict("list"), column: (i for i in (1, 2))}, [4])
    assert make_workload(df, [4]).jobs["procs"].tolist() == [1, 2]
