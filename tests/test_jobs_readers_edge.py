"""Edge cases of the workload readers of instances/jobs.py: CSV rows longer
than the header, a UTF-8 byte-order mark before an SWF (or tagged CSV)
file, upper-case file suffixes, a sidecar ``.extra.csv`` lacking jobs or holding a
bad value, and where a repeated job id is."""
from __future__ import annotations

import gzip
import re

import numpy as np
import pytest

from epochbench.instances import jobs as jobs_mod
from epochbench.instances.core import InstanceError
from epochbench.instances.jobs import load_workload, make_workload, read_swf, read_table, save_workload, write_swf, \
    write_table

BOM = b"\xef\xbb\xbf"


def job(i: int, procs: int, runtime: int = 100, submit: int | None = None) -> str:
    """One SWF job line: ``procs`` requested and allocated, 200 s requested."""
    submit = 10 * i if submit is None else submit
    return f"{i} {submit} 0 {runtime} {procs} -1 -1 {procs} 200 -1 1 1 1 1 1 -1 -1 -1\n"


SWF_TEXT = "; MaxProcs: 10\n" + job(1, 4) + job(2, 3)


# ---- 1. CSV rows longer than the header ---------------------------------------------------
@pytest.mark.parametrize("rows, line", [
    ("1,0,100,6,100,1\n2,5,50,2,60,1\n", 2),           # every row one field too many
    ("1,0,100,6,100,1\n", 2),                           # the only row
    ("1,0,100,6,100,1,7\n2,5,50,2,60,1,7\n", 2),       # two too many
    ("1,0,100,6,100,\n2,5,50,2,60,\n", 2),             # a trailing comma on every row
    ("\n1,0,100,6,100,1\n", 3),                         # after a blank line
    ("1,0,100,6,100\n2,5,50,2,60,1\n", 3),             # only a later row (pandas' own check)
])
def test_a_csv_row_longer_than_the_header_is_an_error_naming_its_line(tmp_path, rows, line):
    path = tmp_path / "a.csv"
    path.write_text("id,submit,runtime,procs,estimate\n" + rows)
    saw = len(rows.splitlines()[line - 2].split(","))
    with pytest.raises(InstanceError, match=rf"a\.csv: malformed CSV \(.*Expected 5 fields in line {line}, "
                                            rf"saw {saw}\)$") as info:
        read_table(path)
    assert "\n" not in str(info.value)


def test_a_tagged_csv_row_longer_than_the_header_names_its_file_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('# epochbench {"capacity": [8]}\nid,submit,runtime,procs\n1,0,10,2,9\n2,1,10,2,9\n')
    with pytest.raises(InstanceError, match=r"malformed CSV \(.*Expected 4 fields in line 3, saw 5\)"):
        read_table(path)


def test_csv_rows_as_long_as_the_header_read_as_before(tmp_path):
    path = tmp_path / "ok.csv"
    path.write_text("id,submit,runtime,procs,estimate\n1,0,100,6,100\n\n2,5,50,2,\n")
    w = read_table(path, capacity=8)
    assert w.jobs["id"].tolist() == [1, 2] and w.jobs["procs"].tolist() == [6, 2]
    assert w.jobs["estimate"].tolist() == [100.0, 50.0]     # empty: the runtime
    quoted = tmp_path / "q.csv"
    quoted.write_text('id,submit,runtime,procs,licenses\n1,0,100,6,"a;b"\n2,5,50,2,\n')
    assert read_table(quoted, capacity=8).jobs["licenses"].tolist() == ["a;b", ""]


SHORT = "2,5,50,2"          # a torn row: the estimate's field is missing, not empty


@pytest.mark.parametrize("text", [
    "id,submit,runtime,procs,estimate\r1,0,100,6,100\n2,5,50,2,60\n",        # a lone CR ends a line (pandas)
    "id,submit,runtime,procs,estimate,\n1,0,100,6,100\n2,5,50,2,60\n",       # a trailing comma in the header
    "\ufeffid,submit,runtime,procs,estimate\n\n1,0,100,6,100\n  \n2,5,50,2,60",  # BOM, blank lines, no last break
])
@pytest.mark.parametrize("chunk", [1 << 23, 6])
def test_a_csv_that_pandas_reads_whole_passes_the_row_check(tmp_path, monkeypatch, text, chunk):
    monkeypatch.setattr(jobs_mod, "CSV_CHUNK", chunk)
    path = tmp_path / "ok.csv"
    path.write_bytes(text.encode())
    w = read_table(path, capacity=8)
    assert w.jobs["id"].tolist() == [1, 2] and w.jobs["estimate"].tolist() == [100.0, 60.0]


@pytest.mark.parametrize("text, line, fields", [
    (f"id,submit,runtime,procs,estimate\n1,0,100,6,100\n{SHORT}\n3,9,50,2,60\n", 3, 4),
    (f"id,submit,runtime,procs,estimate\n1,0,100,6,100\n{SHORT}", 3, 4),                # cut at the end of the file
    (f"id,submit,runtime,procs,estimate\r\n\r\n1,0,100,6,100\r\n{SHORT}\r\n", 4, 4),  # CRLF, a blank line
    (f'# epochbench {{"capacity": [8]}}\nid,submit,runtime,procs,estimate\n{SHORT}\n', 3, 4),  # tagged
    (f'id,submit,runtime,procs,estimate,licenses\n1,0,100,6,100,"a,b"\n{SHORT},60\n', 3, 5),   # quoted: by csv
    ('id,submit,runtime,procs,estimate,licenses\n1,0,100,6,100,"a\nb"\n2,5,50,2,60\n', 4, 5),  # a break in quotes
    (f"\ufeff\nid,submit,runtime,procs,estimate\n1,0,100,6,100\n{SHORT}\n", 4, 4),   # a BOM, then a blank line
    (f"id,submit,runtime,procs,estimate\r1,0,100,6,100\r{SHORT}\r", 3, 4),      # lines ended by CR alone
    (f"id,submit,runtime,procs,estimate,,\n1,0,100,6,100,,\n1,0,100,6,100,1\n{SHORT}\n", 4, 4),  # empty names
])
@pytest.mark.parametrize("chunk", [1 << 23, 7])
def test_a_csv_row_shorter_than_the_header_is_an_error_naming_its_line(tmp_path, monkeypatch, text, line, fields,
                                                                      chunk):
    """pandas read the missing fields as empty: the torn row ran with its
    runtime as estimate, said only as an adjusted estimate."""
    monkeypatch.setattr(jobs_mod, "CSV_CHUNK", chunk)        # 7 bytes: lines cut between steps
    path = tmp_path / "s.csv"
    path.write_text(text)
    header = text[text.index("id,"):].split("\n")[0].split("\r")[0].rstrip(",").count(",") + 1
    with pytest.raises(InstanceError, match=rf"s\.csv, line {line}: {fields} field\(s\), the header has {header}; give "
                                            r"every field \(an unknown value: an empty field between its commas\)$"):
        read_table(path, capacity=8)


@pytest.mark.parametrize("chunk", [1 << 23, 5, 64])
def test_the_row_check_reads_every_full_row_across_its_steps(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(jobs_mod, "CSV_CHUNK", chunk)
    rows = "".join(f"{i},{i},{10 + i},{1 + i % 4},{20 + i}\n" + ("\n" if i % 7 == 0 else "") for i in range(1, 60))
    path = tmp_path / "ok.csv"
    path.write_text("id,submit,runtime,procs,estimate\n" + rows + "60,60,10,1,,")   # too long: pandas' error
    with pytest.raises(InstanceError, match="Expected 5 fields in line"):
        read_table(path, capacity=8)
    path.write_text("id,submit,runtime,procs,estimate\n" + rows + "60,60,10,1,")
    assert read_table(path, capacity=8).jobs["id"].tolist() == list(range(1, 61))


@pytest.mark.parametrize("header", ["id,submit,runtime,estimate,procs,res_mem,res_mem",
                                    "id,submit,runtime,estimate,procs,procs, procs"])
def test_a_csv_column_named_twice_is_an_error(tmp_path, header):
    """pandas read a second ``res_mem`` as ``res_mem.1`` (a third resource)
    and dropped a second ``procs`` without a word."""
    f = tmp_path / "d.csv"
    cells = ",".join(["1", "0", "100", "200", "4"] + ["5"] * (header.count(",") - 4))
    f.write_text(f"{header}\n{cells}\n")
    with pytest.raises(InstanceError, match=r"d\.csv: column '(res_mem|procs)' given twice$"):
        read_table(f)
    trailing = tmp_path / "t.csv"                      # a spreadsheet's trailing commas, a note twice: ignored
    trailing.write_text("id,submit,runtime,estimate,procs,note,note,,\n1,0,100,200,4,a,b,,\n")
    assert read_table(trailing, capacity=8).jobs["procs"].tolist() == [4]


def test_a_sidecar_row_longer_than_its_header_is_an_error(tmp_path):
    path = tmp_path / "s.swf"
    path.write_text(SWF_TEXT)
    (tmp_path / "s.swf.extra.csv").write_text("id,res_mem\n1,5,9\n2,5,9\n")
    with pytest.raises(InstanceError, match=r"s\.swf\.extra\.csv: malformed CSV \(.*Expected 2 fields in line 2"):
        read_swf(path)


# ---- 2. a UTF-8 byte-order mark -------------------------------------------------------------
def _force(monkeypatch, reader: str) -> None:
    """Make read_swf take one of its three ways: the numpy reader of short
    integer files, the compiled parser, or pandas' reader (the parser declining)."""
    if reader == "numpy":
        monkeypatch.setattr(jobs_mod, "kernels_loaded", lambda: False)
        monkeypatch.setattr(jobs_mod, "_swf_body", lambda *a: pytest.fail("numpy reader declined"))
    else:
        monkeypatch.setattr(jobs_mod, "kernels_loaded", lambda: True)
        monkeypatch.setattr(jobs_mod, "_integer_columns", lambda *a: pytest.fail("numpy reader used"))
    if reader == "pandas":
        from epochbench.instances import _swf_parse
        monkeypatch.setattr(_swf_parse, "parse_lines", lambda *args: (0, 0, _swf_parse.BAD))
    elif reader == "compiled":
        monkeypatch.setattr(jobs_mod, "_swf_body", lambda *a: pytest.fail("compiled parser declined"))


def _write(path, data: bytes):
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


LONG_HEAD = "; Version: 2.2\n" + "".join(f"; Note: line {k} of a long header\n" for k in range(12)) + "; MaxProcs: 16\n"


@pytest.mark.parametrize("reader", ["numpy", "compiled", "pandas"])
@pytest.mark.parametrize("name", ["two.swf", "two.swf.gz"])
@pytest.mark.parametrize("chunk", [1 << 23, 40])
def test_a_header_field_after_the_first_job_is_refused_naming_its_line(tmp_path, monkeypatch, reader, name, chunk):
    """The readers skip ``;`` lines after the first job: two traces joined
    into one file ran on the first one's MaxProcs without a word."""
    _force(monkeypatch, reader)
    monkeypatch.setattr(jobs_mod, "SWF_CHUNK", max(chunk, 450))   # the header in the first piece, the jobs cut
    monkeypatch.setattr(jobs_mod, "CSV_CHUNK", chunk)              # pandas' pass: the header cut too
    text = LONG_HEAD + job(1, 4) + "\n; a note\n" + job(2, 3) + "; MaxNodes: 2\n" + job(3, 2)
    path = _write(tmp_path / name, text.encode())
    line = text.splitlines().index("; MaxNodes: 2") + 1
    with pytest.raises(InstanceError, match=rf"{name}, line {line}: header field 'MaxNodes' after the first job "
                                            r"line; a header is read before the jobs only \(two traces joined"):
        read_swf(path)
    indented = _write(tmp_path / f"in-{name}", (LONG_HEAD + job(1, 4) + "  ;maxprocs: 2\n" + job(2, 3)).encode())
    with pytest.raises(InstanceError, match=rf"in-{name}, line 16: header field 'maxprocs' after the first job"):
        read_swf(indented)
    ok = _write(tmp_path / f"ok-{name}", (LONG_HEAD + job(1, 4) + ";Note: a note that has a key\n; Foo: 3\n"
                                          + job(2, 3) + "; MaxProcs is 2 from here on\n").encode())
    w = read_swf(ok)                                          # notes after the jobs: read as before
    assert w.capacity.tolist() == [16] and w.jobs["id"].tolist() == [1, 2]




@pytest.mark.parametrize("reader", ["numpy", "compiled", "pandas"])
@pytest.mark.parametrize("name", ["bom.swf", "bom.swf.gz"])
def test_an_swf_byte_order_mark_is_skipped(tmp_path, monkeypatch, reader, name):
    path = _write(tmp_path / name, BOM + SWF_TEXT.encode())
    _force(monkeypatch, reader)
    w = read_swf(path)
    assert w.capacity.tolist() == [10] and w.meta["capacity_from"] == "MaxProcs"
    assert w.meta["header"] == {"MaxProcs": "10"} and w.meta["MaxProcs"] == 10
    assert w.jobs["id"].tolist() == [1, 2] and w.jobs["procs"].tolist() == [4, 3]


@pytest.mark.parametrize("reader", ["numpy", "compiled", "pandas"])
@pytest.mark.parametrize("name", ["nohead.swf", "nohead.swf.gz"])
def test_a_byte_order_mark_before_the_first_job_line_is_skipped(tmp_path, monkeypatch, reader, name):
    path = _write(tmp_path / name, BOM + (job(1, 4) + job(2, 3)).encode())
    _force(monkeypatch, reader)
    w = read_swf(path)
    assert w.jobs["id"].tolist() == [1, 2] and w.jobs["submit"].tolist() == [10.0, 20.0]
    assert w.capacity.tolist() == [4] and w.meta["capacity_from"] == "largest_job"


@pytest.mark.parametrize("name", ["bad.swf", "bad.swf.gz"])
def test_a_bad_line_after_a_byte_order_mark_keeps_its_number(tmp_path, name):
    path = _write(tmp_path / name, BOM + (SWF_TEXT + "3 30 0 100 2\n").encode())
    with pytest.raises(InstanceError, match=r"line 4: expected 18 fields, got 5"):
        read_swf(path)


@pytest.mark.parametrize("reader", ["numpy", "compiled", "pandas"])
@pytest.mark.parametrize("name", ["long.swf", "long.swf.gz"])
def test_a_header_longer_than_a_piece_is_read_whole(tmp_path, monkeypatch, reader, name):
    """A header longer than the first piece the reader reads (8 MB; here 64
    bytes) lost every field after that piece without a word: the machine
    size came from the widest job, not from MaxProcs; a misspelt field there
    was not named either."""
    _force(monkeypatch, reader)
    monkeypatch.setattr(jobs_mod, "SWF_CHUNK", 64)
    notes = "".join(f"; Note: a long comment line, number {i}\n" for i in range(12))
    text = "; Version: 2.2\n" + notes + "; MaxProcs: 16\n;   continued\n" + job(1, 4) + job(2, 3)
    w = read_swf(_write(tmp_path / name, BOM + text.encode()))
    assert w.capacity.tolist() == [16] and w.jobs["id"].tolist() == [1, 2]
    assert w.meta["header"]["MaxProcs"] == "16\ncontinued"
    misspelt = (text.replace("; MaxProcs: 16", "; maxprocs: 16")).encode()
    line = text.splitlines().index("; MaxProcs: 16") + 1
    with pytest.raises(InstanceError, match=rf"line {line}\b"):
        read_swf(_write(tmp_path / ("bad-" + name), misspelt))


def test_a_byte_order_mark_in_a_small_swf_chunk_is_skipped(tmp_path, monkeypatch):
    path = _write(tmp_path / "chunks.swf", BOM + ("; MaxProcs: 10\n" + "".join(job(i, 1 + i % 4)
                                                                            for i in range(1, 40))).encode())
    _force(monkeypatch, "compiled")
    monkeypatch.setattr(jobs_mod, "SWF_CHUNK", 64)
    w = read_swf(path)
    assert w.capacity.tolist() == [10] and w.jobs["id"].tolist() == list(range(1, 40))


def test_load_workload_reads_an_swf_with_a_byte_order_mark(tmp_path):
    path = _write(tmp_path / "bom.swf", BOM + SWF_TEXT.encode())
    assert load_workload(path).nodes == 10


def test_a_tagged_csv_with_a_byte_order_mark_keeps_its_metadata(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(BOM + b'# epochbench {"capacity": [8]}\nid,submit,runtime,procs\n1,0,10,2\n2,1,10,3\n')
    w = read_table(path)
    assert w.capacity.tolist() == [8] and w.jobs["id"].tolist() == [1, 2]
    assert w.meta["capacity_from"] == "metadata"                   # read from the tag, not the widest job


# ---- 3. upper-case suffixes -----------------------------------------------------------------
def _small() -> jobs_mod.Workload:
    return make_workload({"id": [1, 2], "submit": [0.0, 5.0], "runtime": [10.0, 20.0], "procs": [2, 3],
                          "estimate": [15.0, 25.0]}, 4)


@pytest.mark.parametrize("name", ["C1.CSV", "x.PARQUET", "y.Pq", "z.Csv"])
def test_tables_with_upper_case_suffixes_are_written_and_read(tmp_path, name):
    path = write_table(_small(), tmp_path / name)
    for reader in (read_table, load_workload):
        w = reader(path)
        assert w.capacity.tolist() == [4] and w.jobs["id"].tolist() == [1, 2]
        assert w.jobs["estimate"].tolist() == [15.0, 25.0]


def test_a_hand_written_upper_case_csv_is_read(tmp_path):
    path = tmp_path / "C1.CSV"
    path.write_text("id,submit,runtime,procs,estimate\n1,0,100,6,100\n")
    assert load_workload(path).nodes == 6


@pytest.mark.parametrize("name", ["T.SWF", "t.SWF.GZ", "u.swf.GZ", "v.Swf.Gz"])
def test_swf_files_with_upper_case_suffixes_are_read(tmp_path, name):
    path = tmp_path / name
    data = SWF_TEXT.encode()
    path.write_bytes(gzip.compress(data) if name.lower().endswith(".gz") else data)
    for reader in (read_swf, load_workload):
        w = reader(path)
        assert w.nodes == 10 and w.jobs["id"].tolist() == [1, 2]


@pytest.mark.parametrize("name", ["T.SWF.GZ", "u.swf.Gz"])
def test_write_swf_compresses_an_upper_case_gz(tmp_path, name):
    path = write_swf(_small(), tmp_path / name)
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert read_swf(path).jobs["procs"].tolist() == [2, 3]


def test_save_workload_by_upper_case_suffix(tmp_path):
    for name in ("A.SWF.GZ", "B.CSV", "C.PARQUET"):
        path = save_workload(_small(), tmp_path / name)
        assert load_workload(path).jobs["runtime"].tolist() == [10.0, 20.0]
    assert (tmp_path / "A.SWF.GZ").read_bytes()[:2] == b"\x1f\x8b"


def test_read_table_still_refuses_other_suffixes(tmp_path):
    path = tmp_path / "t.TXT"
    path.write_text("id,submit,runtime,procs\n1,0,10,2\n")
    with pytest.raises(InstanceError, match="read_table reads .csv or .parquet"):
        read_table(path)


# ---- 4. a sidecar lacking jobs ------------------------------------------------------------
def _sidecar_case(tmp_path, jobs: int, rows):
    path = tmp_path / "sc.swf"
    path.write_text("; MaxProcs: 10\n" + "".join(job(i, 2) for i in range(1, jobs + 1)))
    (tmp_path / "sc.swf.extra.csv").write_text("id,res_mem\n" + "".join(f"{i},5\n" for i in rows))
    return path


def test_a_sidecar_without_a_row_for_a_job_names_it(tmp_path):
    path = _sidecar_case(tmp_path, 5, [1, 2, 3, 5])
    with pytest.raises(InstanceError, match=r"sc\.swf: sc\.swf\.extra\.csv has no row for job 4 \(1 job of 5\)$") \
            as info:
        read_swf(path)
    assert "\n" not in str(info.value) and "nan" not in str(info.value)


def test_a_sidecar_lacking_many_jobs_names_the_first_few_and_counts(tmp_path):
    path = _sidecar_case(tmp_path, 12, [3, 1])
    with pytest.raises(InstanceError, match=r"sc\.swf\.extra\.csv has no row for jobs 2, 4, 5, 6, 7, \.\.\. "
                                            r"\(10 jobs of 12\)$"):
        load_workload(path)


def test_a_sidecar_without_rows_lacks_every_job(tmp_path):
    path = _sidecar_case(tmp_path, 2, [])
    with pytest.raises(InstanceError, match=r"has no row for jobs 1, 2 \(2 jobs of 2\)$"):
        read_swf(path)


def test_a_complete_sidecar_in_any_order_is_merged(tmp_path):
    path = _sidecar_case(tmp_path, 5, [5, 3, 1, 2, 4])
    w = read_swf(path)
    assert w.resources == ("procs", "mem") and np.array_equal(w.jobs["res_mem"], [5] * 5)


def test_a_sidecar_of_other_columns_may_leave_jobs_out(tmp_path):
    """Only a resource column needs every job (its demand); other extra
    columns may leave a job out, as before."""
    path = tmp_path / "sc.swf"
    path.write_text("; MaxProcs: 10\n" + "".join(job(i, 2) for i in range(1, 4)))
    (tmp_path / "sc.swf.extra.csv").write_text("id,deadline\n1,50\n3,70\n")
    w = read_swf(path)
    assert w.jobs["deadline"].tolist()[::2] == [50, 70] and np.isnan(w.jobs["deadline"].tolist()[1])


def test_a_stale_sidecar_adding_resources_to_a_stream_epochbench_wrote_is_refused(tmp_path):
    """A K = 3 stream's sidecar beside a K = 1 stream epochbench wrote (the
    ids matched) was merged: the K = 1 stream ran on three resources."""
    from epochbench.instances.workloads import write_workload
    one = write_workload(tmp_path / "one.swf", jobs=6, seed=1)
    three = write_workload(tmp_path / "three.swf", jobs=6, seed=1, k=3)
    (tmp_path / "one.swf.extra.csv").write_bytes((tmp_path / "three.swf.extra.csv").read_bytes())
    with pytest.raises(InstanceError, match=r"one\.swf: written by epochbench with resources procs, but "
                                            r"one\.swf\.extra\.csv adds res_1, res_2: a sidecar of another stream\?"):
        read_swf(one)
    assert read_swf(three).capacity.size == 3
    foreign = tmp_path / "foreign.swf"                        # a trace of elsewhere may get resources this way
    foreign.write_text("\n".join(line for line in one.read_text().splitlines() if not line.startswith(";")) + "\n")
    (tmp_path / "foreign.swf.extra.csv").write_bytes((tmp_path / "three.swf.extra.csv").read_bytes())
    assert read_swf(foreign).capacity.size == 3


def test_a_header_giving_the_machine_size_twice_with_two_numbers_is_refused(tmp_path):
    """``MaxProcs: 8`` then ``MaxProcs: 16``: the first was taken and a
    12-processor job dropped as too wide, without a word."""
    line = "1 0 -1 10 12 -1 -1 12 20 -1 1 1 1 -1 -1 -1 -1 -1\n"
    two = tmp_path / "two.swf"
    two.write_text("; MaxProcs: 8\n; MaxProcs: 16\n" + line)
    with pytest.raises(InstanceError, match=r"two\.swf: header field 'MaxProcs' given twice, as 8 and 16; keep one"):
        read_swf(two)
    same = tmp_path / "same.swf"
    same.write_text("; MaxProcs: 16\n; MaxProcs: 16 (again)\n" + line)
    assert read_swf(same).capacity.tolist() == [16]
    noted = tmp_path / "noted.swf"                  # a continuation line is no second value
    noted.write_text("; MaxNodes: 1024\n; MaxProcs: 4096\n;           4 processors per node\n" + line)
    assert read_swf(noted).capacity.tolist() == [4096]


@pytest.mark.parametrize("capacity", [[2**63], [np.uint64(2**64 - 1)], [1e19]])
def test_a_capacity_past_2_to_the_53_is_refused_not_wrapped(capacity):
    """2**63 wrapped to a negative capacity, and every job was dropped."""
    jobs = {"id": [1], "submit": [0], "runtime": [5], "procs": [3]}
    with pytest.raises(InstanceError, match=r"is beyond 9007199254740992 \(2\*\*53\) units"):
        make_workload(jobs, capacity)
    assert make_workload(jobs, [2**53]).capacity.tolist() == [2**53]


@pytest.mark.parametrize("kill", ["no", None, 0, 1])
def test_kill_at_estimate_is_true_or_false(kill):
    """It went through ``bool()``: ``"no"`` killed jobs at their estimate,
    None did not."""
    jobs = {"id": [1], "submit": [0], "runtime": [5], "procs": [3]}
    with pytest.raises(InstanceError, match=r"kill_at_estimate must be True or False"):
        make_workload(jobs, [4], kill_at_estimate=kill)
    assert make_workload(jobs, [4], kill_at_estimate=np.False_).meta["kill_at_estimate"] is False


@pytest.mark.parametrize("jobs", [[{"id": 1, "submit": 0, "runtime": 5, "procs": 1}], "x", None])
def test_a_job_table_that_is_no_table_is_one_line(jobs):
    """A list of row dicts raised ``AttributeError: 'list' object has no
    attribute 'items'`` from inside."""
    with pytest.raises(InstanceError, match=r"^jobs: expected a pandas DataFrame or a dict of columns, got "):
        make_workload(jobs, [4])


@pytest.mark.parametrize("column", ["procs", "submit", "mem"])
def test_a_column_past_2_to_the_53_is_not_called_seconds(column):
    """A huge ``procs`` (or ``mem``, in KB) was refused as 'float64 seconds
    would lose precision'."""
    jobs = {"id": [1], "submit": [0], "runtime": [5], "procs": [2], column: [2.0**60]}
    with pytest.raises(InstanceError, match=rf"column '{column}' has .* \(above 2\*\*53, where a float64 no longer "
                                            r"holds every whole number\)"):
        make_workload(jobs, [4])


@pytest.mark.parametrize("head, line, key", [
    ("; Version: 2.2\n;   MaxProcs: 8\n", 2, "MaxProcs"),   # indented: read as Version's continuation
    (";   MaxProcs: 8\n", 1, "MaxProcs"),                    # indented under no field: dropped
    ("; maxprocs: 8\n", 1, "MaxProcs"),                      # another case: a field of its own, never read
    ("; MAXNODES: 8\n", 1, "MaxNodes"),
    ("; MaxProcs : 8\n", 1, "MaxProcs"),
    (" ; MaxProcs: 8\n", 1, "MaxProcs"),                     # ';' not first: quoted as written
])
def test_a_header_field_the_reader_would_not_read_is_refused(tmp_path, head, line, key):
    """SWF (Parallel Workloads Archive) spells header fields ``; MaxProcs:
    value``, as written; an indented ``;`` line continues the field above.
    ``; maxprocs: 8`` or ``;   MaxProcs: 8`` were read as no machine size,
    and the machine sized by its largest job (4 here, not 8), without a word."""
    path = tmp_path / "t.swf"
    path.write_text(head + job(1, 2) + job(2, 4))
    with pytest.raises(InstanceError, match=rf"t\.swf, line {line}: header line .* is not read as field '{key}'; "
                                            rf"write it '; {key}: value'") as exc:
        read_swf(path)
    assert repr(head.splitlines()[line - 1]) in str(exc.value)      # the line as it is in the file


def test_header_lines_that_only_mention_a_field_still_read(tmp_path):
    """Fields spelt as SWF does (at most 2 spaces after ';') and notes that
    mention one in their text read as before."""
    path = tmp_path / "t.swf"
    path.write_text("; Version: 2.2\n;  MaxProcs: 8\n;MaxNodes: 8\n; Note: was run with\n"
                    ";       maxprocs set by hand\n;       MaxProcs: 8 is the size of partition 1\n"
                    ";         MaxNodes: as filtered\n" + job(1, 2) + job(2, 4))
    w = read_swf(path)
    assert w.capacity.tolist() == [8] and w.meta["capacity_from"] == "MaxProcs" and w.meta["MaxNodes"] == 8


@pytest.mark.parametrize("name", ["estmate", "Estimate", "user_estimate", "estimates"])
def test_a_column_spelt_like_the_absent_estimate_is_refused(name):
    """It passed through unread and every estimate was the runtime (EASY
    with perfect estimates), ``adjusted`` empty: nothing said so."""
    from epochbench.instances.jobs import make_workload
    jobs = {"id": [1, 2, 3], "submit": [0, 5, 9], "runtime": [50, 30, 40], name: [600, 400, 400],
            "procs": [32, 48, 16]}
    with pytest.raises(InstanceError, match=rf"^memory: column '{name}' is not one epochbench reads, and 'estimate' "
                                            r"is absent: rename it 'estimate'"):
        make_workload(jobs, [64])
    jobs["estimate"] = jobs[name]                   # beside the real column it is just another column
    assert make_workload(jobs, [64]).jobs["estimate"].tolist() == [600, 400, 400]


def test_a_csv_of_swf_fields_with_req_time_and_no_estimate_is_refused(tmp_path):
    """The same job ran killed at its request (field 9) from the SWF file and
    for its whole runtime from a CSV naming the field ``req_time``."""
    from epochbench.instances.jobs import load_workload, make_workload
    path = tmp_path / "rq.csv"
    path.write_text("id,submit,runtime,procs,req_time\n1,0,100,4,50\n")
    with pytest.raises(InstanceError, match=r"rq.csv: has SWF field req_time but no estimate column"):
        load_workload(path)
    w = make_workload({"id": [1], "submit": [0], "runtime": [100], "procs": [4], "req_time": [50],
                       "estimate": [50]}, [8])
    assert w.jobs["estimate"].tolist() == [50]


def test_a_missing_required_column_names_a_column_spelt_like_it():
    from epochbench.instances.jobs import make_workload
    with pytest.raises(InstanceError, match=r"lacks column\(s\) \['submit'\]; did you mean 'Submt' for 'submit'\?$"):
        make_workload({"id": [1], "Submt": [0], "runtime": [5], "procs": [1]}, [4])


def test_a_csv_without_the_required_columns_says_which_it_has(tmp_path):
    """A CSV with another delimiter, or other names, without any spelt like
    the required ones: the message lists the columns read (it said only what
    was missing), and asks about the delimiter for a single column that
    holds one; names in other case are guessed as before."""
    from epochbench.instances.jobs import load_workload
    cases = {"semi.csv": ("id;submit;runtime;estimate;procs\n1;0;10;20;4\n",
                          r"lacks column\(s\) \['id', 'submit', 'runtime', 'procs'\]; it has "
                          r"'id;submit;runtime;estimate;procs' \(is the file comma-separated\?\)$"),
             "other.csv": ("a,b\n1,2\n", r"; it has 'a', 'b'$"),
             "case.csv": ("ID,Submit,Runtime,Procs\n1,0,10,4\n", r"did you mean 'ID' for 'id', 'Submit' for 'submit'")}
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(InstanceError, match=message):
            load_workload(tmp_path / name)


@pytest.mark.parametrize("name", ["deadline_met", "has_deadline", "n_licenses", "license_id", "deadlines"])
def test_columns_near_deadline_or_licenses_pass_through(name):
    """Only an absent estimate changes a run when misspelt: these were
    refused ("rename it 'licenses'" for a count of licenses)."""
    from epochbench.instances.jobs import make_workload
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "procs": [1, 1], name: [1, 0]}, [4])
    assert name in w.jobs.columns


def test_a_csv_line_shorter_than_its_header_is_said_to_be_so(tmp_path):
    """pandas fills the missing fields with NaN: the message said only that
    'procs' has nan, as if the file held one (a longer line names its line)."""
    from epochbench.instances.jobs import load_workload
    path = tmp_path / "s.csv"
    path.write_text("id,submit,runtime,procs\n1,0,100\n")
    with pytest.raises(InstanceError, match=r"s\.csv, line 2: 3 field\(s\), the header has 4; "):
        load_workload(path)
    path.write_text("id,submit,runtime,procs\n1,0,100,\n")
    with pytest.raises(InstanceError, match=r"column 'procs' has nan at job 1 of the input \(id 1\) "
                                            r"\(the job's field is empty or nan\)$"):
        load_workload(path)


# ---- partial executions and CR-only line ends ------------------------------------------------
def _line(i: int, submit: int, runtime: int, status: int) -> str:
    return f"{i} {submit} 0 {runtime} 4 -1 -1 4 200 -1 {status} 1 1 1 1 1 -1 -1\n"


PARTIAL_TEXT = ("; MaxProcs: 8\n" + _line(1, 0, 100, 1)    # job 1's summary line, then its two parts
                + _line(1, 0, 60, 2) + _line(1, 80, 40, 3) + _line(2, 10, 50, 1)
                + _line(3, 20, 70, 0) + _line(3, 20, 30, 4)      # a failed job and its last part
                + _line(4, 30, 20, 3))                           # a part without its summary line: the job


@pytest.mark.parametrize("reader", ["numpy", "compiled", "pandas"])
@pytest.mark.parametrize("fields", [None, ()])
def test_partial_executions_are_dropped_and_counted_their_summary_line_is_the_job(tmp_path, monkeypatch, reader,
                                                                                   fields):
    """SWF status 2, 3 and 4 lines repeat a checkpointed job's number after
    its summary line: the file was refused (its id occurred more than once)."""
    path = _write(tmp_path / "partial.swf", PARTIAL_TEXT.encode())
    _force(monkeypatch, reader)
    w = read_swf(path, fields=fields)
    assert w.jobs["id"].tolist() == [1, 2, 3, 4] and w.jobs["runtime"].tolist() == [100.0, 50.0, 70.0, 20.0]
    assert w.dropped == {"partial_execution": 3}
    assert ("status" in w.jobs) == (fields is None)
    if fields is None:
        assert w.jobs["status"].tolist() == [1, 1, 0, 3]


@pytest.mark.parametrize("reader", ["numpy", "compiled", "pandas"])
def test_a_job_of_partial_lines_without_its_summary_line_is_named_as_such(tmp_path, monkeypatch, reader):
    """Two partial lines of job 5 and no summary line: refused, as any
    repeated id is, but the message said only that the id occurred more than
    once, not that the summary line was what was missing."""
    text = PARTIAL_TEXT + _line(5, 40, 30, 2) + _line(5, 90, 30, 3) + _line(6, 50, 10, 1)
    _force(monkeypatch, reader)
    with pytest.raises(InstanceError, match=r"job id 5 has 2 partial-execution lines \(status 2, 3\) and no summary "
                                            r"line \(a line of another status\)"):
        read_swf(_write(tmp_path / "parts.swf", text.encode()))


@pytest.mark.parametrize("reader", ["numpy", "compiled", "pandas"])
@pytest.mark.parametrize("name", ["cr.swf", "cr.swf.gz"])
def test_an_swf_whose_lines_end_in_cr_alone_is_refused_in_one_line(tmp_path, monkeypatch, reader, name):
    """The numpy and compiled readers read such a file as one comment line:
    no jobs, and the run said only that the workload was empty."""
    path = _write(tmp_path / name, SWF_TEXT.replace("\n", "\r").encode())
    _force(monkeypatch, reader)
    with pytest.raises(InstanceError, match=r"lines end in a carriage return alone \(CR, classic Mac OS\)"):
        read_swf(path)
    crlf = _write(tmp_path / ("crlf-" + name), SWF_TEXT.replace("\n", "\r\n").encode())
    assert read_swf(crlf).jobs["id"].tolist() == [1, 2]


@pytest.mark.parametrize("bad, says", [("x", r"field 13 \(group\) is not an integer"),
                                       ("1.5", r"field 13 \(group\) is not an integer"),
                                       ("1 7", r"expected 18 fields, got 19")])
def test_a_bad_line_in_a_later_piece_of_the_general_reader_is_named_by_its_line(tmp_path, monkeypatch, bad, says):
    """The general reader reads a few lines at a time and names a bad one
    from the job lines after the pieces it read whole (comment and blank
    lines counted in the line number)."""
    lines = [job(i, 1 + i % 3) for i in range(1, 8)]
    lines.insert(3, "; a note between jobs\n\n")
    lines[6] = lines[6].replace(" 1 1 1 1 1 -1 -1 -1", f" 1 1 {bad} 1 1 -1 -1 -1", 1)     # job 6, file line 9
    path = _write(tmp_path / "late.swf", ("; MaxProcs: 10\n" + "".join(lines)).encode())
    _force(monkeypatch, "pandas")
    monkeypatch.setattr(jobs_mod, "PANDAS_ROWS", 2)
    with pytest.raises(InstanceError, match=rf"late\.swf, line 9: {says}"):
        read_swf(path)


def test_a_form_feed_or_cp1252_ellipsis_in_a_comment_does_not_shift_the_named_line(tmp_path):
    """str.splitlines breaks at \\x0c and at latin-1 \\x85 (a cp1252
    ellipsis, which Windows tools write into comments); the readers and
    editors do not, so the bad line was named two lines late."""
    text = b"; Note: queue A\x85 then B\x0c page two\n" + (SWF_TEXT + "3 30 0 100 2\n").encode()
    path = _write(tmp_path / "ff.swf", text)
    with pytest.raises(InstanceError, match=r"ff\.swf, line 5: expected 18 fields, got 5"):
        read_swf(path)


@pytest.mark.parametrize("reader", ["numpy", "compiled", "pandas"])
@pytest.mark.parametrize("where", ["comment", "field", "form feed", "vertical tab"])
def test_a_stray_cr_is_white_space_to_every_reader(tmp_path, monkeypatch, reader, where):
    """The numpy and compiled readers take a CR (and VT, FF) for a space;
    pandas' reader ended a line at a CR (a comment's tail became a job
    line) and read them inside a field ('10\\r0'), so a file they read was
    refused by it."""
    head = "; MaxProcs: 10\n" + ("; Note: one\rtwo words\n" if where == "comment" else "")
    between = {"field": "\r", "form feed": "\x0c", "vertical tab": "\x0b"}.get(where)
    first = job(1, 4) if where == "comment" else job(1, 4).replace(" 0 100", between + "0 100", 1)
    path = _write(tmp_path / "cr.swf", (head + first + job(2, 3)).encode())
    _force(monkeypatch, reader)
    assert read_swf(path).jobs["id"].tolist() == [1, 2]


def test_a_bad_line_after_a_cr_in_a_comment_is_named_by_its_line(tmp_path):
    text = "; MaxProcs: 10\n; one\rtwo words\n" + job(1, 4) + "3 30 0 100 2\n"
    path = _write(tmp_path / "crbad.swf", text.encode())
    with pytest.raises(InstanceError, match=r"crbad\.swf, line 4: expected 18 fields, got 5"):
        read_swf(path)


def test_a_time_of_exactly_2_to_the_53_is_read_and_one_past_it_refused():
    jobs = {"id": [1], "submit": [2.0 ** 53], "runtime": [1.0], "procs": [1]}
    assert make_workload(jobs, 4).jobs["submit"].tolist() == [2.0 ** 53]
    with pytest.raises(InstanceError, match=r"column .submit. has .*above 2\*\*53"):
        make_workload({**jobs, "submit": [2.0 ** 53 + 2]}, 4)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_of_a_later_format_version_is_refused(tmp_path, suffix):
    """A job table whose metadata names version 99 was read as version 1."""
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "procs": [1, 2]}, [4])
    path = write_table(w, tmp_path / f"t{suffix}")
    assert read_table(path).capacity.tolist() == [4]               # as written: version 1
    if suffix == ".csv":
        text = path.read_text()
        assert '"version": 1' in text
        path.write_text(text.replace('"version": 1', '"version": 99', 1))
    else:
        import pyarrow.parquet as pq
        table = pq.read_table(path)
        meta = dict(table.schema.metadata)
        meta[jobs_mod.PARQUET_KEY] = meta[jobs_mod.PARQUET_KEY].replace(b'"version": 1', b'"version": 99', 1)
        pq.write_table(table.replace_schema_metadata(meta), path)
    with pytest.raises(InstanceError, match=r"'version' is 99; this epochbench reads version 1 \(a later one "
                                            r"wrote the file\?\)$"):
        read_table(path)


@pytest.mark.parametrize("field, shown", [
    (b"1\xc2\xa000", r"'1\xa000'"),              # a no-break space
    ("١٠".encode(), "'١٠'"),                      # Arabic-Indic digits
    (b"\xef\xbb\xbf0", r"'\ufeff0'"),             # a byte-order mark inside the file
    (b"1\xff0", r"'1\\xff0'"),                    # no UTF-8
])
def test_a_bad_swf_field_is_quoted_as_its_utf8_text(tmp_path, monkeypatch, field, shown):
    """The fields were quoted as Latin-1: 'ï»¿0' for a byte-order mark."""
    _force(monkeypatch, "pandas")
    path = tmp_path / "u.swf"
    path.write_bytes(b"1 0 0 " + field + b" 4 -1 -1 4 200 -1 1 1 1 1 1 -1 -1 -1\n")
    with pytest.raises(InstanceError) as info:
        read_swf(path)
    assert str(info.value) == f"{path}, line 1: field 4 (runtime) is not a number: {shown}"


def test_the_row_check_of_a_written_table_counts_commas_not_rows(tmp_path, monkeypatch):
    """The JSON line that write_table puts first holds quotes; a quote
    anywhere sent the whole file to the csv module's reader, row by row."""
    w = make_workload({"id": [1, 2], "submit": [0, 1], "runtime": [5, 5], "procs": [1, 2]}, [4])
    path = write_table(w, tmp_path / "t.csv")
    assert '"' in path.read_text().splitlines()[0]
    monkeypatch.setattr(jobs_mod, "_check_short_rows_quoted", lambda *a: pytest.fail("read row by row"))
    assert read_table(path).jobs["id"].tolist() == [1, 2]
    path.write_text(path.read_text() + "3,2,5\n")
    with pytest.raises(InstanceError, match=r"t\.csv, line 5: 3 field\(s\), the header has "):
        read_table(path)


@pytest.mark.parametrize("key", ["kill_at_estimate", "adjusted", "names", "header", "capacity_from"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_metadata_key_it_never_writes_is_refused_by_name(tmp_path, suffix, key):
    """A ``kill_at_estimate: false`` at the top of the metadata, not in
    ``meta``, was ignored: the jobs were killed at their estimates, exit 0.
    Each of ``meta``'s keys at the top is refused with the hint, also after
    an unknown key that has none."""
    w = make_workload({"id": [1, 2], "submit": [0.0, 1.0], "runtime": [10.0, 10.0], "estimate": [5.0, 5.0],
                       "procs": [4, 8]}, [8], kill_at_estimate=False)
    path = save_workload(w, tmp_path / f"w{suffix}")
    assert read_table(path).kill_at_estimate is False        # in meta, where write_table puts it
    if suffix == ".csv":
        head, rest = path.read_text().split("\n", 1)
        path.write_text(head[:-1] + f', "bogus": 1, "{key}": false}}\n' + rest)
    else:
        import json

        import pyarrow.parquet as pq
        table = pq.read_table(path)
        info = json.loads(table.schema.metadata[b"epochbench"])
        info[key] = False
        pq.write_table(table.replace_schema_metadata({b"epochbench": json.dumps(info).encode()}), path)
    with pytest.raises(InstanceError, match=rf"unknown key\(s\) .*'{key}'.* go in 'meta'"):
        read_table(path)


def test_fractions_of_a_second_past_2_33_seconds_are_refused(tmp_path):
    """At a submit of 1e12 s a runtime of 10.00003 s ran as 10.0: the
    metrics mixed the two (utilization 1.000003, a bounded slowdown below 1)
    and exit 0.  Whole seconds there are exact, and so are fractions at Unix
    times."""
    def swf(submit, runtime):
        line = f"{{}} {submit} -1 {runtime} 8 -1 -1 8 20 -1 1 1 1 1 1 1 -1 -1"
        path = tmp_path / f"t{submit}-{runtime}.swf"
        path.write_text("; MaxProcs: 8\n" + "\n".join(line.format(i) for i in (1, 2, 3)) + "\n")
        return path
    with pytest.raises(InstanceError, match=r"column 'runtime' has 10\.00003 at job 1 .* a fraction of a second, "
                                             r"and the jobs reach 1e\+12 s, past 2\*\*33 s"):
        load_workload(swf(10**12, 10.00003))
    assert len(load_workload(swf(10**12, 10)).jobs) == 3
    assert len(load_workload(swf(1_700_000_000, 10.00003)).jobs) == 3
    with pytest.raises(InstanceError, match="column 'submit' has 8589934592.5"):
        make_workload({"id": [1], "submit": [2.0**33 + 0.5], "runtime": [5.0], "procs": [1]}, [4])


def test_ends_past_2_53_seconds_are_refused_though_each_value_is_within(tmp_path):
    """Each value passed the 2**53 check, their sum did not: a runtime of
    5,001 s from a submit near 2**53 ended 5,000 s after its start (bounded
    slowdown 0.9998), exit 0.  The last whole second that fits is kept."""
    def jobs(submit, runtime):
        return {"id": [1, 2], "submit": [0.0, submit], "runtime": [5.0, runtime], "procs": [1, 1]}
    with pytest.raises(InstanceError, match=r"t: the jobs reach 9007199254744994 s \(the last submit plus the "
                                            r"longest runtime or estimate\), past 2\*\*53 s"):
        make_workload(jobs(2.0**53 - 1000 + 1, 5001.0), [4], source="t")
    assert make_workload(jobs(2.0**53 - 5001, 5001.0), [4]).jobs["runtime"].tolist() == [5, 5001]


@pytest.mark.parametrize("ident,ok", [("9007199254740993", False), ("9007199254740992", True),
                                      ("9007199254740991", True), ("-9007199254740993", False),
                                      ("4503599627370496.5", False), ("9007199254740990.5", False),
                                      ("4503599627370496", True)])
def test_an_integer_field_past_2_53_is_refused_not_rounded(tmp_path, ident, ok):
    """(mutation review) The general SWF path reads fields as float64, where
    9007199254740993 is 2**53: it passed as id 9007199254740992 (and two such
    ids as a duplicate).  Integer fields at 2**53 are checked on their text."""
    path = tmp_path / "big.swf"
    path.write_text(f"; MaxProcs: 8\n{ident} 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                    "2 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n")
    for read in (lambda: read_swf(path), lambda: jobs_mod._swf_body(path, str(path), ("id",))):
        if ok:
            ids = np.asarray(read().jobs["id"] if hasattr(read(), "jobs") else read()["id"])
            assert int(ident) in ids.tolist()
        else:
            with pytest.raises(InstanceError, match=rf"line 2: field 1 \(id\) is not an integer of at most "
                                                    rf"9007199254740992: '{re.escape(ident)}'"):
                read()


def test_the_text_check_of_large_integer_fields_reads_one_piece_at_a_time(tmp_path, monkeypatch):
    """A legal 2**53 in the first piece checks that piece's lines only (a
    600k-line file re-read every line after it: 2.1 -> 12.5 s), and a later
    piece's own large field is still checked."""
    monkeypatch.setattr(jobs_mod, "PANDAS_ROWS", 3)
    line = "{} 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
    ids = ["9007199254740992", "2", "3", "4", "5", "6", "4503599627370497.5", "8"]
    path = tmp_path / "p.swf"
    path.write_text("; MaxProcs: 8\n" + "".join(line.format(i) for i in ids))
    seen = []
    real = jobs_mod._raise_bad_line
    monkeypatch.setattr(jobs_mod, "_raise_bad_line", lambda *a, **k: (seen.append((a[3], k.get("lines"))),
                                                                       real(*a, **k))[1])
    with pytest.raises(InstanceError, match=r"line 8: field 1 \(id\) is not an integer .*'4503599627370497.5'"):
        jobs_mod._swf_body(path, str(path), ("id",))
    assert seen == [(0, 3), (6, 2)]               # (lines skipped, lines checked) of pieces 1 and 3


# ---- a job wider than any capacity, in a file that gives none ---------------------------------
@pytest.mark.parametrize("nodes", [None, 8])
def test_a_procs_beyond_2_53_is_named_as_that_jobs_not_as_the_capacity(tmp_path, nodes):
    """The capacity guessed from the widest job took the 1e20 of job 1 and
    was refused as "capacity must be positive integers", whatever ``nodes``
    said: the job's own value is named, as a file with a capacity of its own
    names it; a wide job within 2**53 still sets the guessed capacity."""
    path = tmp_path / "w.csv"
    path.write_text("id,submit,runtime,procs,estimate\n1,0,10,99999999999999999999,10\n2,1,5,4,10\n")
    said = r"column 'procs' has 1e\+20 at job 1 of the input \(id 1\) \(above 2\*\*53"
    with pytest.raises(InstanceError, match=said):
        read_table(path, nodes=nodes)
    path.write_text("id,submit,runtime,procs,estimate\n1,0,10,4096,10\n2,1,5,4,10\n")
    w = read_table(path, nodes=nodes)
    assert list(w.capacity) == [nodes or 4096] and len(w) == (1 if nodes else 2)


@pytest.mark.parametrize("rows, message", [
    ("1,5\n2,abc\n", r"sc\.swf\.extra\.csv: column 'res_mem' has 'abc', not a number, at job 2 of the input \(id 2\)$"),
    ("1,5\n2,1.5\n", r"sc\.swf\.extra\.csv: column 'res_mem' must hold integers, got 1\.5 at job 2 of the input"),
    ("1,5\n2,\n", r"sc\.swf\.extra\.csv: column 'res_mem' has nan at job 2 of the input \(id 2\)"),
    ("1,5\n2,5\n1,6\n", r"sc\.swf\.extra\.csv: job id 1 occurs more than once \(jobs 1 and 3 of the input\)$"),
])
def test_a_bad_sidecar_value_is_named_against_the_sidecar(tmp_path, rows, message):
    """A value of the sidecar that the job table's checks refuse names the
    sidecar, not the SWF file, which holds no such column."""
    path = tmp_path / "sc.swf"
    path.write_text("; MaxProcs: 10\n" + job(1, 2) + job(2, 2))
    (tmp_path / "sc.swf.extra.csv").write_text("id,res_mem\n" + rows)
    with pytest.raises(InstanceError, match=message):
        read_swf(path)


# ---- 5. a repeated job number: where ------------------------------------------------------
@pytest.mark.parametrize("gz", [False, True])
def test_a_repeated_swf_job_number_names_its_two_lines(tmp_path, gz):
    """The lines, counted as the file's: the header, a comment, a blank line
    and a partial execution (status 2, dropped with its summary line) come
    between the jobs."""
    lines = ["; MaxProcs: 10\n", job(5, 2), "; a comment\n", job(7, 2).replace(" 1 1 1 1 1 -1", " 2 1 1 1 1 -1"),
             job(7, 2), "\n", job(6, 2), job(7, 2)]
    text = "".join(lines).encode()
    path = tmp_path / ("r.swf.gz" if gz else "r.swf")
    path.write_bytes(gzip.compress(text) if gz else text)
    with pytest.raises(InstanceError, match=r"r\.swf(\.gz)?: job id 7 occurs more than once \(lines 5 and 8\)$"):
        read_swf(path)


def test_a_repeated_job_id_of_a_table_names_both_jobs(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("id,submit,runtime,procs\n3,0,10,2\n4,1,10,2\n3,2,10,2\n")
    with pytest.raises(InstanceError, match=r"r\.csv: job id 3 occurs more than once \(jobs 1 and 3 of the input\)$"):
        read_table(path)


# ---- 5. a resource column misspelt -------------------------------------------------------------
@pytest.mark.parametrize("name", [" res_mem", "Res_mem", "RES_MEM", "res-mem", "res mem"])
def test_a_resource_column_spelt_otherwise_is_refused_not_left_out(tmp_path, name):
    """Only ``res_<name>`` as written is a resource column: `` res_mem`` or
    ``Res_mem`` was read as an unknown column and left out, and two jobs
    that cannot share memory ran side by side, without a word.  The same
    in a sidecar, named against the sidecar."""
    table = tmp_path / "r.csv"
    table.write_text(f"id,submit,runtime,procs,estimate,{name}\n1,0,10,2,10,8\n2,1,10,2,10,8\n")
    with pytest.raises(InstanceError, match=rf"r\.csv: column '{name}' is not one epochbench reads; a resource "
                                            r"column is named res_<name> exactly: rename it 'res_mem'"):
        read_table(table)
    path = tmp_path / "sc.swf"
    path.write_text("; MaxProcs: 10\n" + "".join(job(i, 2) for i in (1, 2)))
    (tmp_path / "sc.swf.extra.csv").write_text(f"id,{name}\n1,5\n2,5\n")
    with pytest.raises(InstanceError, match=rf"sc\.swf\.extra\.csv: column '{name}' is not one epochbench reads"):
        read_swf(path)


def test_a_column_that_only_starts_like_a_resource_is_left_alone(tmp_path):
    table = tmp_path / "r.csv"
    table.write_text("id,submit,runtime,procs,estimate,resolution,res_mem\n1,0,10,2,10,3,8\n2,1,10,2,10,3,8\n")
    assert read_table(table).capacity.tolist() == [2, 8]
