"""Job streams (sim/jobs.py): the SWF rules of issue 3, drops by reason, machine
size, kill at estimate, SWF/CSV/Parquet round trips, malformed files, KTH."""
from __future__ import annotations

import gzip
import time

import numpy as np
import pandas as pd
import pytest

from epochbench.instances import InstanceError
from epochbench.instances.data import data_root
from epochbench.instances.jobs import (CORE, SWF_FIELDS, Workload, load_workload, make_workload, read_swf, read_table,
                      write_swf, write_table)

KTH = data_root() / "swf" / "KTH-SP2-1996-2.1-cln.swf.gz"


def line(id, submit, runtime, alloc, req_procs, req_time, *, wait=0, status=1):
    """One SWF job line: the 18 fields, unknown ones -1."""
    fields = [id, submit, wait, runtime, alloc, -1, -1, req_procs, req_time, -1, status, 7, 3, -1, 1, -1, -1, -1]
    return " ".join(map(str, fields))


def swf(tmp_path, lines, header=("; MaxProcs: 64",), name="t.swf"):
    path = tmp_path / name
    text = "\n".join([*header, *lines]) + "\n"
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    return path


def by_id(w: Workload) -> pd.DataFrame:
    return w.jobs.set_index("id")


# ---- SWF rules -------------------------------------------------------------------------
def test_processors_requested_else_allocated(tmp_path):
    w = read_swf(swf(tmp_path, [line(1, 0, 10, 4, 8, 100), line(2, 5, 10, 4, -1, 100),
                                line(3, 6, 10, 4, 0, 100)]))
    assert by_id(w)["procs"].to_dict() == {1: 8, 2: 4, 3: 4}
    assert w.jobs["procs"].dtype == np.int64


def test_estimate_requested_else_runtime_else_one_second(tmp_path):
    w = read_swf(swf(tmp_path, [line(1, 0, 50, 1, 1, 100), line(2, 0, 50, 1, 1, -1),
                                line(3, 0, 0, 1, 1, -1), line(4, 0, 0, 1, 1, 0)]))
    assert by_id(w)["estimate"].to_dict() == {1: 100.0, 2: 50.0, 3: 1.0, 4: 1.0}
    assert by_id(w)["duration"].to_dict() == {1: 50.0, 2: 50.0, 3: 0.0, 4: 0.0}
    assert w.meta["adjusted"] == {"estimate_unknown_set_to_runtime": 1, "estimate_set_to_1s": 2}   # job 2; 3 and 4
    assert (w.jobs["estimate"] > 0).all()


def test_dropped_counted_by_reason_never_silently(tmp_path):
    lines = [line(1, 0, -1, 1, 1, 10), line(2, 0, -1, -1, -1, 10),     # negative runtime (first rule wins)
             line(3, 0, 5, -1, -1, 10), line(4, 0, 5, 0, 0, 10),       # no processors
             line(5, 0, 5, 1, 65, 10),                                 # more than MaxProcs 64
             line(6, 0, 5, 1, 64, 10), line(7, 1, 5, 2, -1, 10)]       # kept
    w = read_swf(swf(tmp_path, lines))
    assert w.dropped == {"negative_runtime": 2, "no_processors": 2, "too_many_processors": 1}
    assert w.jobs["id"].tolist() == [6, 7]
    assert w.nodes == 64


@pytest.mark.parametrize("header, nodes, expect, source", [
    (("; MaxNodes: 32", "; MaxProcs: 64"), None, 64, "MaxProcs"),
    (("; MaxNodes: 32",), None, 32, "MaxNodes"),
    (("; MaxProcs: -1", "; MaxNodes: 32"), None, 32, "MaxNodes"),
    ((), None, 40, "largest_job"),
    (("; MaxProcs: 64",), 16, 16, "nodes"),
])
def test_machine_size_rule(tmp_path, header, nodes, expect, source):
    lines = [line(1, 0, 5, 1, 40, 10), line(2, 0, 5, 1, 16, 10), line(3, 0, -1, 1, 50, 10)]
    w = read_swf(swf(tmp_path, lines, header=header), nodes=nodes)
    assert w.capacity.tolist() == [expect] and w.meta["capacity_from"] == source
    too_many = {16: 1, 32: 1}.get(expect, 0)
    assert w.dropped.get("too_many_processors", 0) == too_many
    assert w.dropped["negative_runtime"] == 1          # the 50-processor job is not the largest job


def test_kill_at_estimate_on_and_off(tmp_path):
    path = swf(tmp_path, [line(1, 0, 500, 1, 1, 300), line(2, 0, 100, 1, 1, 300)])
    on, off = read_swf(path), read_swf(path, kill_at_estimate=False)
    assert on.jobs["duration"].tolist() == [300.0, 100.0] and on.kill_at_estimate
    assert off.jobs["duration"].tolist() == [500.0, 100.0] and not off.kill_at_estimate
    assert on.jobs["runtime"].tolist() == off.jobs["runtime"].tolist() == [500.0, 100.0]


def test_header_comments_blank_lines_and_sort(tmp_path):
    header = ("; Version: 2.2", "; Computer: Test", ";   continued text", ";", "; Note: one",
              "; Note: two", "; MaxProcs: 64")
    lines = [line(3, 10, 5, 1, 1, 10), "", "; a comment in the body", line(1, 10, 5, 1, 1, 10),
             line(2, 5, 5, 1, 1, 10) + "  ; trailing comment"]
    w = read_swf(swf(tmp_path, lines, header=header))
    assert w.jobs["id"].tolist() == [2, 1, 3]            # by (submit, id)
    assert w.meta["header"]["Computer"] == "Test\ncontinued text"
    assert w.meta["header"]["Note"] == "one\ntwo"
    assert w.meta["MaxProcs"] == 64 and w.meta["MaxNodes"] is None


def test_raw_fields_kept_under_their_names(tmp_path):
    w = read_swf(swf(tmp_path, [line(1, 0, 5, 2, 4, 10, wait=7, status=0)]))
    row = w.jobs.iloc[0]
    assert list(w.jobs.columns[:6]) == list(CORE)
    assert set(SWF_FIELDS) <= set(w.jobs.columns)
    assert (row["wait"], row["alloc_procs"], row["req_procs"], row["req_time"], row["status"], row["user"]) == \
        (7.0, 2, 4, 10.0, 0, 7)


def test_gz_reads_like_plain(tmp_path):
    lines = [line(1, 0, 5, 1, 2, 10), line(2, 3, 5, 1, 3, 10)]
    plain, gz = read_swf(swf(tmp_path, lines)), read_swf(swf(tmp_path, lines, name="t.swf.gz"))
    pd.testing.assert_frame_equal(plain.jobs, gz.jobs)


# ---- malformed files ---------------------------------------------------------------------
@pytest.mark.parametrize("bad, message", [
    ("1 0 0 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1", "line 4: expected 18 fields, got 17"),
    ("1 0 0 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1 9", "line 4: expected 18 fields, got 19"),
    ("1 0 0 five 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1", r"line 4: field 4 \(runtime\) is not a number"),
    ("1 0 0 5 1.5 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1", r"line 4: field 5 \(alloc_procs\) is not an integer"),
])
def test_malformed_line_names_file_and_line(tmp_path, bad, message):
    path = swf(tmp_path, [line(1, 0, 5, 1, 1, 10), "", bad, line(3, 0, 5, 1, 1, 10)], header=("; MaxProcs: 4",))
    with pytest.raises(InstanceError, match=message) as err:
        read_swf(path)
    assert str(path) in str(err.value)


def test_every_line_with_19_fields_is_an_error(tmp_path):
    path = swf(tmp_path, [line(1, 0, 5, 1, 1, 10) + " 0", line(2, 0, 5, 1, 1, 10) + " 0"])
    with pytest.raises(InstanceError, match="line 2: expected 18 fields, got 19"):
        read_swf(path)


def test_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(InstanceError, match="unknown workload format"):
        load_workload(tmp_path / "x.txt")
    with pytest.raises(InstanceError, match="cannot read"):
        read_swf(tmp_path / "absent.swf")


def test_empty_trace(tmp_path):
    w = read_swf(swf(tmp_path, []))
    assert len(w) == 0 and w.nodes == 64 and list(w.jobs.columns[:6]) == list(CORE)


# ---- make_workload -----------------------------------------------------------------------
def frame(**extra):
    base = dict(id=[3, 1, 2, 4], submit=[5.0, 0.0, 5.0, 1.0], runtime=[10.0, 20.0, 30.0, 5.0],
                procs=[2, 4, 1, 1], estimate=[15.0, 10.0, -1.0, np.nan])
    base.update(extra)
    return pd.DataFrame(base)


def test_make_workload_contract():
    w = make_workload(frame(), 8)
    assert w.jobs["id"].tolist() == [1, 4, 2, 3]                   # by (submit, id)
    assert w.jobs["estimate"].tolist() == [10.0, 5.0, 30.0, 15.0]   # unknown -> runtime
    assert w.jobs["duration"].tolist() == [10.0, 5.0, 30.0, 10.0]
    assert dict(w.jobs.dtypes[list(CORE)].astype(str)) == {
        "id": "int64", "submit": "float64", "runtime": "float64", "estimate": "float64", "procs": "int64",
        "duration": "float64"}
    assert w.capacity.tolist() == [8] and w.resources == ("procs",) and w.dropped == {}


def test_make_workload_extra_resources_deadline_licenses():
    df = frame(res_mem=[4, 8, 9, 0], deadline=[np.nan, 100.0, 50.0, np.nan], licenses=["a;b", None, "", "c"])
    w = make_workload(df, [8, 8])
    assert w.resources == ("procs", "mem") and w.dropped == {"too_much_mem": 1}
    assert w.jobs["id"].tolist() == [1, 4, 3]
    assert w.jobs["licenses"].tolist() == ["", "c", "a;b"]
    assert w.jobs["res_mem"].dtype == np.int64
    with pytest.raises(InstanceError, match=r"match capacity \[8\]"):
        make_workload(df, 8)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.drop(columns="procs"), "lacks column"),
    (lambda d: d.assign(id=[1, 1, 2, 3]), "job id 1 occurs more than once"),
    (lambda d: d.assign(submit=[0.0, np.nan, 1.0, 2.0]), "column 'submit'"),
    (lambda d: d.assign(procs=[1.5, 1, 1, 1]), "must hold integers"),
    (lambda d: d.assign(runtime=["a", "b", "c", "d"]), "has 'a', not a number, at job 1 of the input"),
])
def test_make_workload_rejects_malformed_tables(change, message):
    with pytest.raises(InstanceError, match=message):
        make_workload(change(frame()), 8)


def test_make_workload_drops_by_reason():
    df = frame(submit=[-1.0, 0.0, 5.0, 1.0], runtime=[10.0, -1.0, 30.0, 5.0], procs=[2, 4, 0, 9])
    w = make_workload(df, 8, dropped={"negative_runtime": 5})
    assert w.dropped == {"negative_runtime": 6, "negative_submit": 1, "no_processors": 1,
                         "too_many_processors": 1}
    assert len(w) == 0


# ---- round trips ---------------------------------------------------------------------------
def stream(n=200, seed=1) -> Workload:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"id": rng.permutation(n) + 1, "submit": np.round(rng.random(n) * 1e5, 3),
                       "runtime": rng.integers(0, 5000, n).astype(float), "procs": rng.integers(1, 33, n),
                       "estimate": rng.integers(-1, 8000, n).astype(float), "res_mem": rng.integers(0, 64, n),
                       "deadline": np.where(rng.random(n) < 0.5, np.nan, rng.random(n) * 1e6),
                       "licenses": rng.choice(["", "a", "a;b", "x,y"], n)})
    return make_workload(df, [32, 64], kill_at_estimate=False)


@pytest.mark.parametrize("name", ["w.swf", "w.swf.gz", "w.csv", "w.parquet"])
def test_round_trip(tmp_path, name):
    w = stream()
    path = tmp_path / name
    (write_swf if ".swf" in name else write_table)(w, path)
    back = load_workload(path, **({"kill_at_estimate": False} if ".swf" in name else {}))
    cols = list(w.jobs.columns)
    pd.testing.assert_frame_equal(back.jobs[cols], w.jobs)
    assert back.capacity.tolist() == [32, 64] and back.resources == ("procs", "mem")
    assert not back.kill_at_estimate
    if ".swf" in name:
        assert (tmp_path / f"{name}.extra.csv").exists()
        assert (back.jobs["status"] == -1).all() and (back.jobs["req_procs"] == back.jobs["procs"]).all()
    else:
        assert back.meta["adjusted"] == w.meta["adjusted"]


def test_swf_round_trip_keeps_raw_fields_and_header(tmp_path):
    header = ("; Version: 2.2", "; Computer: Test", "; MaxNodes: 64", "; MaxProcs: 64", "; Note: hello")
    lines = [line(1, 0, 5, 2, -1, 10, wait=3), line(2, 3, 0, 3, 4, -1, status=5), line(3, 4, -1, 1, 1, 1)]
    w = read_swf(swf(tmp_path, lines, header=header))
    out = write_swf(w, tmp_path / "again.swf")
    back = read_swf(out)
    pd.testing.assert_frame_equal(back.jobs, w.jobs)
    assert back.meta["header"]["Computer"] == "Test" and back.meta["header"]["Note"].startswith("hello\n")
    assert "negative_runtime=1" in out.read_text()
    assert not (tmp_path / "again.swf.extra.csv").exists()
    twice = write_swf(back, tmp_path / "twice.swf").read_text()
    assert twice.count("epochbench: written from") == 1


def test_write_swf_makes_fields_8_and_9_reproduce_procs_and_estimate(tmp_path):
    df = frame(req_procs=[7, 7, 7, 7], alloc_procs=[-1, -1, -1, -1], req_time=[1.0, 1.0, 1.0, 1.0])
    w = make_workload(df, 8)                    # the raw fields disagree with procs / estimate
    back = read_swf(write_swf(w, tmp_path / "x.swf"))
    pd.testing.assert_frame_equal(back.jobs[list(CORE)], w.jobs[list(CORE)])


def test_plain_csv_without_metadata(tmp_path):
    path = tmp_path / "plain.csv"
    frame().to_csv(path, index=False)
    w = read_table(path)
    assert w.capacity.tolist() == [4] and len(w) == 4
    small = read_table(path, nodes=2)
    assert small.dropped == {"too_many_processors": 1} and small.nodes == 2


# ---- the KTH trace ---------------------------------------------------------------------------
@pytest.mark.skipif(not KTH.exists(), reason=f"KTH SWF trace missing at {KTH} (set EPOCHBENCH_DATA)")
def test_kth_trace_loads():
    read_swf(KTH)                                          # warm the page cache and imports
    t = time.perf_counter()
    w = read_swf(KTH, nodes=100)
    seconds = time.perf_counter() - t
    print(f"KTH: {len(w)} jobs, dropped {w.dropped}, adjusted {w.meta['adjusted']}, {seconds:.3f} s")
    assert len(w) == 27992 and w.dropped == {} and w.nodes == 100
    assert w.meta["header"]["MaxProcs"] == "100" and w.jobs["procs"].max() <= 100
    assert (w.jobs["duration"] <= w.jobs["estimate"]).all() and (w.jobs["estimate"] > 0).all()


# ---- the compiled SWF parser against pandas' reader -------------------------------------------
def _general(monkeypatch):
    """Make the compiled parser decline every file: read_swf then takes pandas' C reader."""
    from epochbench.instances import _swf_parse
    monkeypatch.setattr(_swf_parse, "parse_lines", lambda *args: (0, 0, _swf_parse.BAD))


def _number_text(rng, value: float, is_int: bool) -> str:
    """``value`` written one of the ways SWF files write numbers."""
    if is_int:
        return str(int(value)) if rng.random() < 0.8 else f"{'+' if value >= 0 and rng.random() < 0.3 else ''}{int(value)}"
    style = rng.integers(4)
    if style == 0:
        return repr(float(value))
    if style == 1:
        return f"{value:.3f}"
    if style == 2:
        return f"{value:.4e}"
    return str(int(round(value))) if value == round(value) else f"{value:.2f}"


@pytest.mark.parametrize("seed", range(6))
def test_compiled_parser_reads_what_pandas_reads(tmp_path, monkeypatch, seed):
    """Random traces (signs, decimals, exponents, tabs, CRLF, comment and blank
    lines, no newline at the end), parsed in 64-byte steps so that lines
    straddle the steps: the same workload as pandas' reader gives."""
    from epochbench.instances import jobs as jobs_mod
    rng = np.random.default_rng(seed)
    lines = ["; MaxProcs: 64", "; Note: a header", ";   continued"]
    for j in range(300):
        fields = []
        for k, name in enumerate(SWF_FIELDS):
            is_int = name not in ("submit", "wait", "runtime", "avg_cpu", "mem", "req_time", "req_mem", "think_time")
            if name == "id":
                v = j + 1
            elif name in ("alloc_procs", "req_procs"):
                v = rng.integers(-1, 70)
            elif is_int:
                v = rng.integers(-1, 10**int(rng.integers(1, 12)))
            else:
                v = -1.0 if rng.random() < 0.1 else float(rng.integers(0, 10**6)) / (10 ** rng.integers(0, 4))
                v = -v if rng.random() < 0.05 else v
            fields.append(_number_text(rng, v, is_int))
        seps = [(" ", "\t", "  ")[rng.integers(3)] for _ in fields]
        text = "".join(f + s for f, s in zip(fields, seps)).rstrip()
        if rng.random() < 0.1:
            text += " ; a trailing comment"
        lines.append(text)
        if rng.random() < 0.05:
            lines.append(rng.choice(["", "   ", "; a comment line"]))
    end = rng.choice(["\n", "\r\n"])
    path = tmp_path / "r.swf"
    path.write_bytes((end.join(lines) + ("" if seed % 2 else end)).encode())
    monkeypatch.setattr(jobs_mod, "SWF_CHUNK", 64)
    general_reader = jobs_mod._swf_body

    def refuse(*a):
        raise AssertionError("the compiled parser declined a file it reads")
    monkeypatch.setattr(jobs_mod, "_swf_body", refuse)
    fast = read_swf(path)
    monkeypatch.setattr(jobs_mod, "_swf_body", general_reader)
    _general(monkeypatch)
    general = read_swf(path)
    pd.testing.assert_frame_equal(fast.jobs, general.jobs)
    assert fast.dropped == general.dropped and fast.meta == general.meta


def test_compiled_parser_grows_its_columns(tmp_path, monkeypatch):
    """A .gz trace whose jobs outnumber the first guess of the column length:
    the columns grow (pieces finished first) and nothing is lost or reordered."""
    from epochbench.instances import jobs as jobs_mod
    lines = [line(j, j // 3, 10 + j % 7, 1 + j % 5, -1, 20) for j in range(1, 400)]
    path = swf(tmp_path, lines, name="g.swf.gz")
    want = read_swf(path).jobs
    monkeypatch.setattr(jobs_mod, "SWF_CHUNK", 128)
    monkeypatch.setattr(jobs_mod, "_job_room", lambda nbytes: 3)
    monkeypatch.setattr(jobs_mod, "_swf_body", lambda *a: pytest.fail("fell back to pandas"))
    pd.testing.assert_frame_equal(read_swf(path).jobs, want)


@pytest.mark.parametrize("token", ["12345678901234567", "1e99", "0x10", "nan", "1.5.2", "--3", "7e"])
def test_numbers_the_parser_declines_go_to_the_general_reader(tmp_path, token):
    """A number the compiled parser does not convert exactly, or a token that is
    no number: the general reader decides (same result, or the same error
    naming the line)."""
    path = swf(tmp_path, [line(1, 0, 10, 4, 4, 20), line(2, 5, 10, 4, 4, 20).replace(" 7 3 ", f" {token} 3 ")])
    try:
        got = read_swf(path).jobs
    except InstanceError as exc:
        assert "line 3" in str(exc)
        return
    assert got["user"].tolist()[1] == float(token)


def test_fields_keeps_the_raw_fields_asked_for(tmp_path):
    path = swf(tmp_path, [line(1, 0, 10, 4, 4, 20, status=5), line(2, 3, 10, 2, -1, -1)])
    core = read_swf(path, fields=())
    assert core.table.columns == list(CORE)
    some = read_swf(path, fields=("status", "req_time"))
    assert some.table.columns == [*CORE, "req_time", "status"]
    assert some.jobs["status"].tolist() == [5, 1] and some.jobs["status"].dtype == np.int8
    pd.testing.assert_frame_equal(core.jobs, read_swf(path).jobs[list(CORE)])
    with pytest.raises(InstanceError, match="unknown SWF field"):
        read_swf(path, fields=("nope",))


def test_raw_integer_fields_take_the_narrowest_type(tmp_path):
    path = swf(tmp_path, [line(1, 0, 10, 4, 4, 20, wait=3), line(2, 3, 10, 2, -1, -1, status=2**40)])
    w = read_swf(path)
    assert w.jobs["status"].dtype == np.int64 and w.jobs["user"].dtype == np.int8
    assert w.jobs["id"].dtype == np.int64 and w.jobs["procs"].dtype == np.int64     # the contract's columns
    assert w.jobs["wait"].dtype == np.float64


def test_headers_read_as_written_and_unknown_stays_unknown(tmp_path):
    """A header note after the number and SWF's -1 ("unknown") still read;
    an integral float capacity in a table header is the integer."""
    from epochbench.instances.jobs import read_swf, read_table
    line = "1 0 -1 10 2 -1 -1 2 20 -1 1 1 1 1 1 1 -1 -1\n"
    swf = tmp_path / "h.swf"
    swf.write_text("; MaxProcs: -1\n; MaxNodes: 64 (two processors each)\n" + line)
    assert read_swf(swf).capacity.tolist() == [64]
    csv = tmp_path / "t.csv"
    csv.write_text('# epochbench {"capacity": [4.0], "meta": {"kill_at_estimate": false}}\n'
                   "id,submit,runtime,procs,estimate\n1,0,10,2,5\n")
    w = read_table(csv)
    assert w.capacity.tolist() == [4] and w.meta["kill_at_estimate"] is False
