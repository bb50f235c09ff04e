"""Every bad input is one line on stderr naming the file and the field (or the
option), exit status 2, and no traceback (issue 14 point 5).

The corpus is built in ``tmp_path``: each case is a function ``tmp -> (argv,
needles)`` run in-process through :func:`epochbench.cli.main`; argparse errors
raise ``SystemExit(2)``, other bad input returns 2.  A few cases also run
through a real subprocess.
"""
from __future__ import annotations

import gzip
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from epochbench.cli import main
from epochbench.instances.generators import GENERATOR_PARAMS, load_generators

ROOT = Path(__file__).resolve().parents[1]

# ---- valid base instances, one per family, and a heuristic that solves each ------------
BASES = {
    "packing": {"kind": "packing", "capacity": [10, 10], "used": [0, 0], "demand": [[2, 3], [4, 1]],
                "objective": "utilization", "estimate": [5.0, 6.0], "profit": [1.0, 2.0], "shadow": 10.0,
                "extra": [1, 1], "runtime_past_shadow": [False, True], "now": 0.0, "meta": {"name": "p"}},
    "epochs": {"kind": "epochs", "capacity": [10, 10], "demand": [[2, 3], [4, 1]], "meta": {"name": "e"}},
    "knapsack": {"kind": "knapsack", "capacity": [10, 10], "weights": [[2, 3], [4, 1]], "profit": [3.0, 4.0],
                 "meta": {"name": "k"}},
    "assignment": {"kind": "assignment", "preference": [[1.0, 2.0], [3.0, 4.0]], "meta": {"name": "a"}},
    "mapping": {"kind": "mapping", "etc": [[1.0, 2.0], [3.0, 4.0]], "ready": [0.0, 0.0], "meta": {"name": "m"}},
}
METHOD = {"packing": "ff", "epochs": "ff", "knapsack": "greedy-mkp", "assignment": "mis", "mapping": "mct"}
#: the JSON shape of every field of every family's instance file
SHAPES = {
    "packing": {"capacity": "array", "demand": "matrix", "used": "array", "estimate": "array",
                "profit": "array", "extra": "array", "shadow": "number", "now": "number",
                "objective": "string", "runtime_past_shadow": "flags"},
    "epochs": {"capacity": "array", "demand": "matrix"},
    "knapsack": {"capacity": "array", "weights": "matrix", "profit": "array"},
    "assignment": {"preference": "matrix"},
    "mapping": {"etc": "matrix", "ready": "array"},
}
REQUIRED = {"packing": ("capacity", "demand"), "epochs": ("capacity", "demand"),
            "knapsack": ("capacity", "weights", "profit"), "assignment": ("preference",), "mapping": ("etc",)}
#: wrong JSON values per shape: lists where scalars go, objects, strings, booleans, nesting errors
WRONG = {
    "array": {"scalar": 5, "string": "1,2", "object": {"a": 1}, "bool": True, "bools": [True, False],
              "strings": ["1", "2"], "nested": [[1], [2]]},
    "matrix": {"scalar": 5, "string": "x", "object": {"a": 1}, "bool": False, "flat": [1, 2],
               "bools": [[True, False], [1, 2]], "strings": [["1", "2"], [1, 2]], "objects": [[{}], [1]]},
    "number": {"list": [1, 2], "object": {"a": 1}, "string": "1", "bool": True},
    "string": {"number": 5, "list": ["utilization"], "object": {}, "bool": True},
    "flags": {"scalar": 1, "ints": [1, 0], "object": {"a": 1}, "string": "yes"},
}


def write_json_text(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def solve_case(family: str, text: str):
    """A case: write ``text`` as the instance file and solve it."""
    def build(tmp: Path):
        path = write_json_text(tmp / f"{family}-bad.json", text)
        return ["solve", str(path), "--method", METHOD[family]], [str(path)]
    return build


def with_field(family: str, field: str, value) -> str:
    d = json.loads(json.dumps(BASES[family]))
    d[field] = value
    return json.dumps(d)


CASES: dict[str, tuple[str, object, tuple]] = {}   # id -> (class, builder, extra needles)


def case(cls: str, name: str, builder, *needles):
    assert name not in CASES, name
    CASES[name] = (cls, builder, needles)


# ---- class: wrong JSON types for every field of every family ---------------------------------
for fam, fields in SHAPES.items():
    for fld, shape in fields.items():
        for label, value in WRONG[shape].items():
            case("json-type", f"{fam}-{fld}-{label}", solve_case(fam, with_field(fam, fld, value)), f"'{fld}'")
    for label, value in {"list": [], "string": "x", "number": 3}.items():
        case("json-type", f"{fam}-meta-{label}", solve_case(fam, with_field(fam, "meta", value)), "'meta'")
    case("json-type", f"{fam}-meta-name-number",
         solve_case(fam, with_field(fam, "meta", {"name": 5})), "'meta.name'")
    case("json-type", f"{fam}-meta-optimum-string",
         solve_case(fam, with_field(fam, "meta", {"name": "x", "optimum": "12"})), "'meta.optimum'")
    case("json-type", f"{fam}-meta-best-known-bool",
         solve_case(fam, with_field(fam, "meta", {"name": "x", "best_known": True})), "'meta.best_known'")

# ---- class: kind not a string, unknown kind, missing fields, not an object -------------------
for label, value in {"number": 5, "list": ["packing"], "object": {"k": "packing"}, "bool": True,
                     "null": None, "unknown": "packingg"}.items():
    case("kind-missing", f"kind-{label}", solve_case("packing", with_field("packing", "kind", value)), "'kind'")
for fam, fields in REQUIRED.items():
    for fld in fields:
        d = {k: v for k, v in BASES[fam].items() if k != fld}
        case("kind-missing", f"{fam}-missing-{fld}", solve_case(fam, json.dumps(d)), f"'{fld}'")
        case("kind-missing", f"{fam}-null-{fld}", solve_case(fam, with_field(fam, fld, None)), f"'{fld}'")
case("kind-missing", "no-kind", solve_case("packing", json.dumps({"capacity": [1]})), "'kind'")
case("kind-missing", "top-level-array", solve_case("packing", "[1, 2]"), "'kind'")
case("kind-missing", "top-level-string", solve_case("packing", '"packing"'), "'kind'")

# ---- class: numbers beyond int64 / float, NaN and Infinity literals ---------------------------
NUMBER_TEXTS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity", "1e400": "1e400", "-1e400": "-1e400",
                "2^63": str(2**63), "-2^64": str(-2**64), "10^30": "1" + "0" * 30}
NUMBER_FIELDS = {"packing": ("capacity", "demand"), "epochs": ("capacity",), "knapsack": ("profit", "weights"),
                 "assignment": ("preference",), "mapping": ("etc", "ready")}
for fam, fields in NUMBER_FIELDS.items():
    for fld in fields:
        for label, text in NUMBER_TEXTS.items():
            d = json.loads(json.dumps(BASES[fam]))
            nested = isinstance(d[fld][0], list)
            d[fld] = [["@"] + d[fld][0][1:], *d[fld][1:]] if nested else ["@", *d[fld][1:]]
            case("numbers", f"{fam}-{fld}-{label}", solve_case(fam, json.dumps(d).replace('"@"', text)),
                 f"'{fld}[0]")
case("numbers", "packing-shadow-nan", solve_case("packing", with_field("packing", "shadow", "@").replace(
    '"@"', "NaN")), "'shadow'")
case("numbers", "packing-now-1e400", solve_case("packing", with_field("packing", "now", "@").replace(
    '"@"', "1e400")), "'now'")
case("numbers", "digits-beyond-limit", solve_case("packing", with_field("packing", "now", "@").replace(
    '"@"', "1" + "0" * 5000)))
case("numbers", "nesting-too-deep", solve_case("packing", "[" * 100000 + "]" * 100000))
# each entry finite, their total not: the exact methods' scaling said "math domain error", HiGHS / SciPy worse
case("numbers", "knapsack-profit-sum-overflows", solve_case("knapsack", with_field("knapsack", "profit", [1e308, 1e308])),
     "'profit' sums to more than a float can hold")
case("numbers", "packing-profit-sum-overflows", solve_case("packing", with_field("packing", "profit", [1e308, 1e308])),
     "'profit' sums to more than a float can hold")
case("numbers", "assignment-preference-overflows",
     solve_case("assignment", with_field("assignment", "preference", [[1e308, 1.0], [1.0, 1e308]])),
     "'preference' has entries (up to 1e+308) too large")


# ---- class: files (empty, header-only, truncated .gz, folders, bytes, missing) ----------------
SWF_LINE = "1 0 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n"
SWF_HEAD = "; Version: 2.2\n; MaxProcs: 8\n"


def simulate_file(name: str, content, *extra):
    """A case: write ``content`` (str, bytes, a DataFrame for Parquet, or
    "DIR" for a folder) as ``name`` and simulate it."""
    def build(tmp: Path):
        path = tmp / name
        if isinstance(content, pd.DataFrame):
            content.to_parquet(path, index=False)
        elif content == "DIR":
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif content is not None:
            path.write_text(content)
        return ["simulate", "--workload", str(path), "--policy", "fcfs", "--quiet", *extra], [str(path)]
    return build


EMPTY_JOBS = pd.DataFrame({"id": pd.Series([], dtype="int64"), "submit": pd.Series([], dtype="float64"),
                           "runtime": pd.Series([], dtype="float64"), "procs": pd.Series([], dtype="int64")})
FILES = {
    "swf-empty": ("t.swf", ""),
    "swf-header-only": ("t.swf", SWF_HEAD),
    "swf-missing": ("absent.swf", None),
    "swf-folder": ("t.swf", "DIR"),
    "swf-gz-truncated": ("t.swf.gz", gzip.compress((SWF_HEAD + SWF_LINE * 50).encode())[:-12]),
    "swf-gz-not-gzip": ("t.swf.gz", b"this is not gzip data at all"),
    "swf-gz-half": ("t.swf.gz", gzip.compress((SWF_HEAD + SWF_LINE * 500).encode())[:40]),
    "swf-gz-empty": ("t.swf.gz", b""),
    "swf-all-dropped": ("t.swf", SWF_HEAD + "1 -5 0 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n"),
    "swf-negative-runtime-all": ("t.swf", SWF_HEAD + "1 0 0 -10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n"),
    "csv-empty": ("t.csv", ""),
    "csv-header-only": ("t.csv", "id,submit,runtime,procs\n"),
    "csv-missing": ("absent.csv", None),
    "csv-folder": ("t.csv", "DIR"),
    "csv-not-utf8": ("t.csv", b"id,submit,runtime,procs\n1,0,\xff\xfe,4\n"),
    "csv-tag-not-utf8": ("t.csv", b"# epochbench \xff\xfe\n1,2\n"),
    "csv-bad-tag-json": ("t.csv", "# epochbench {not json\nid,submit,runtime,procs\n1,0,5,1\n"),
    "parquet-empty-table": ("t.parquet", EMPTY_JOBS),
    "parquet-garbage": ("t.parquet", b"PAR1 this is not parquet"),
    "parquet-zero-bytes": ("t.parquet", b""),
    "parquet-folder": ("t.parquet", "DIR"),
    "parquet-missing": ("absent.parquet", None),
    "unknown-suffix": ("t.txt", "1 2 3\n"),
}
SIDECAR_SWF = "; MaxProcs: 8\n" + "1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 1 1 1 -1 -1\n" + \
    "2 5 -1 5 2 -1 -1 2 5 -1 1 1 1 1 1 1 -1 -1\n"
SIDECARS = {"sidecar-id-fraction": ("id,res_mem\n1.5,2\n2,3\n", "not an integer"),
            "sidecar-unknown-id": ("id,res_mem\n1,2\n3,3\n", "not jobs of"),
            "sidecar-swf-field": ("id,res_mem,submit\n1,2,100\n2,3,200\n", "'submit'")}


def sidecar_case(text: str):
    """A case: an SWF file with a side file ``<trace>.extra.csv`` of ``text``."""
    def build(tmp: Path):
        (tmp / "s.swf").write_text(SIDECAR_SWF)
        (tmp / "s.swf.extra.csv").write_text(text)
        return ["simulate", "--workload", str(tmp / "s.swf"), "--policy", "easy", "--quiet"], ["s.swf.extra.csv"]
    return build


for label, (text, needle) in SIDECARS.items():
    case("files", label, sidecar_case(text), needle)
#: a job table's header line that is valid JSON but not what read_table takes
BAD_TAGS = {
    "dropped-list": '{"capacity": [4], "dropped": [1, 2]}',
    "meta-list": '{"capacity": [4], "meta": [1]}',
    "adjusted-list": '{"capacity": [4], "meta": {"adjusted": [1]}}',
    "dropped-word": '{"capacity": [4], "dropped": {"too_many_processors": "x"}}',
    "dropped-negative": '{"capacity": [4], "dropped": {"too_many_processors": -7}}',
    "capacity-fraction": '{"capacity": [4.9]}',
    "capacity-huge": '{"capacity": [1e300]}',
    "kill-string": '{"capacity": [4], "meta": {"kill_at_estimate": "false"}}',
    "resources-number": '{"capacity": [4], "resources": [1]}',
    "version-later": '{"format": "epochbench-workload", "version": 99, "capacity": [4]}',   # read as version 1
    "version-word": '{"version": "1", "capacity": [4]}',
    "format-other": '{"format": "someone-elses-table", "version": 1, "capacity": [4]}',
}
FILES.update({f"csv-tag-{label}": ("t.csv", f"# epochbench {tag}\nid,submit,runtime,procs\n1,0,5,1\n")
              for label, tag in BAD_TAGS.items()})
for label, (name, content) in FILES.items():
    case("files", label, simulate_file(name, content))


def solve_bytes(name: str, data, *needles):
    def build(tmp: Path):
        path = tmp / name
        if data == "DIR":
            path.mkdir()
        elif data is not None:
            path.write_bytes(data)
        return ["solve", str(path), "--method", "ff"], [str(path)]
    return build


case("files", "json-empty", solve_bytes("e.json", b""))
case("files", "json-not-utf8", solve_bytes("e.json", b'{"kind": "packing\xff\xfe"}'), "UTF-8")
case("files", "json-latin1", solve_bytes("e.json", '{"kind": "épochs"}'.encode("latin-1")), "UTF-8")
case("files", "json-folder", solve_bytes("e.json", "DIR"), "folder")
case("files", "json-missing", solve_bytes("e.json", None), "no such file")
case("files", "json-truncated", solve_bytes("e.json", b'{"kind": "packing", "capa'))
case("files", "json-binary", solve_bytes("e.json", bytes(range(256))))


def score_folder(setup):
    def build(tmp: Path):
        folder = tmp / "fam"
        setup(folder)
        return ["score", str(folder), "--methods", "ff", "--time-limit", "1"], [str(folder)]
    return build


def _manifest(files):
    def setup(folder: Path):
        folder.mkdir()
        (folder / "ok.json").write_text(json.dumps(BASES["packing"]))
        (folder.parent / "x.json").write_text(json.dumps(BASES["packing"]))
        (folder / "manifest.json").write_text(json.dumps({"instances": files}))
    return setup


case("files", "score-missing-folder", score_folder(lambda f: None), "no such family folder or instance file")
case("files", "score-empty-folder", score_folder(lambda f: f.mkdir()), "no instance files")
case("files", "score-manifest-not-json", score_folder(
    lambda f: (f.mkdir(), (f / "manifest.json").write_text("{oops"))), "manifest.json")
case("files", "score-manifest-not-utf8", score_folder(
    lambda f: (f.mkdir(), (f / "manifest.json").write_bytes(b'{"instances": ["\xff"]}'))), "manifest.json")

# ---- class: manifest entries outside their folder -----------------------------------------------
for label, entries in {"dotdot": [{"file": "../x.json"}], "absolute": [{"file": "/etc/x.json"}],
                       "nested-dotdot": [{"file": "sub/../../x.json"}],
                       "second-entry": [{"file": "ok.json"}, {"file": "../x.json"}],
                       "not-a-list": {"file": "ok.json"}, "entry-string": ["ok.json"],
                       "file-number": [{"file": 5}], "file-missing": [{"name": "ok.json"}],
                       "file-empty": [{"file": ""}],
                       # said 'no instance files' of a folder holding ok.json
                       "empty-list": []}.items():
    case("manifest", f"manifest-{label}", score_folder(_manifest(entries)), "manifest.json")


# ---- class: malformed OR-Library, VPSolver and ETC files ----------------------------------------
def generate_from(generator: str, rel: str, text, *extra):
    """A case: write ``text`` at ``tmp/data/rel`` and run ``generate GENERATOR --root tmp/data``."""
    def build(tmp: Path):
        root = tmp / "data"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if text == "DIR":
            path.mkdir()
        elif isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return ["generate", generator, "--out", str(tmp / "out"), "--root", str(root), *extra], [str(path)]
    return build


MKNAP = {  # one problem: n=3 m=2 opt=10, 3 profits, 2x3 weights, 2 capacities
    "empty": "",
    "count-only": "1\n",
    "header-short": "1\n3 2\n",
    "profits-short": "1\n3 2 10\n1 2\n",
    "weights-short": "1\n3 2 10\n1 2 3\n1 1 1\n1 1\n",
    "too-many": "1\n3 2 10\n1 2 3\n1 1 1\n1 1 1\n5 5\n7 7\n",
    "decimal-weight": "1\n3 2 10\n1 2 3\n1 1.5 1\n1 1 1\n5 5\n",
    "decimal-capacity": "1\n3 2 10\n1 2 3\n1 1 1\n1 1 1\n5 5.25\n",
    "decimal-count": "1.0\n3 2 10\n1 2 3\n1 1 1\n1 1 1\n5 5\n",
    "word": "1\n3 2 10\n1 two 3\n1 1 1\n1 1 1\n5 5\n",
    "nan-profit": "1\n3 2 10\nnan 2 3\n1 1 1\n1 1 1\n5 5\n",
    "inf-profit": "1\n3 2 10\ninf 2 3\n1 1 1\n1 1 1\n5 5\n",
    "huge-profit": "1\n3 2 10\n1e400 2 3\n1 1 1\n1 1 1\n5 5\n",
    "negative-n": "1\n-3 2 10\n1 2 3\n",
    "zero-m": "1\n3 0 10\n1 2 3\n",
    "negative-weight": "1\n3 2 10\n1 2 3\n1 -1 1\n1 1 1\n5 5\n",
    "negative-capacity": "1\n3 2 10\n1 2 3\n1 1 1\n1 1 1\n5 -5\n",
    "weight-beyond-int64": f"1\n3 2 10\n1 2 3\n1 {2**64} 1\n1 1 1\n5 5\n",
    "absurd-n": "1\n1000000000000 2 10\n1 2 3\n",
    "absurd-count": "1000000000000\n3 2 10\n1 2 3\n1 1 1\n1 1 1\n5 5\n",
}
for label, text in MKNAP.items():
    case("orlib", f"mknap1-{label}", generate_from("orlib-mknap1", "mknap1.txt", text))
for label in ("empty", "decimal-weight", "weights-short", "too-many", "absurd-n", "word"):
    case("orlib", f"mknapcb-{label}", generate_from("orlib-mknapcb", "mknapcb1.txt", MKNAP[label]))
case("orlib", "mknap1-not-utf8", generate_from("orlib-mknap1", "mknap1.txt", b"1\n3 2 10\n\xff\xfe\n"))
case("orlib", "mknap1-folder", generate_from("orlib-mknap1", "mknap1.txt", "DIR"), "folder")
ASSIGN = {
    "empty": "", "count-mismatch": "3\n1 2 3\n4 5 6\n", "too-many": "2\n1 2\n3 4\n5\n",
    "decimal": "2\n1 2.5\n3 4\n", "negative": "2\n1 -2\n3 4\n", "word": "2\n1 x\n3 4\n",
    "zero-n": "0\n", "negative-n": "-2\n1 2 3 4\n", "beyond-int64": f"2\n1 {2**63}\n3 4\n",
    "absurd-n": "1000000000000\n1 2\n3 4\n", "nan": "2\n1 nan\n3 4\n",
}
for label, text in ASSIGN.items():
    case("orlib", f"assign-{label}", generate_from("orlib-assign", "assign100.txt", text))
case("orlib", "assign-not-utf8", generate_from("orlib-assign", "assign100.txt", b"2\n1 2\n\xff 4\n"))
case("orlib", "assign-folder", generate_from("orlib-assign", "assign100.txt", "DIR"), "folder")
VBP = {  # d=2; capacities; m item types; "sizes multiplicity" lines
    "empty": "",
    "d-zero": "0\n10 10\n1\n1 1 1\n",
    "d-decimal": "2.0\n10 10\n1\n1 1 1\n",
    "capacities-short": "2\n10\n1\n1 1 1\n",
    "capacities-long": "2\n10 10 10\n1\n1 1 1\n",
    "negative-capacity": "2\n10 -10\n1\n1 1 1\n",
    "count-missing": "2\n10 10\n",
    "items-short": "2\n10 10\n3\n1 1 1\n",
    "items-long": "2\n10 10\n1\n1 1 1\n2 2 1\n",
    "item-fields-short": "2\n10 10\n1\n1 1\n",
    "decimal-size": "2\n10 10\n1\n1.5 1 1\n",
    "negative-size": "2\n10 10\n1\n-1 1 1\n",
    "negative-multiplicity": "2\n10 10\n1\n1 1 -1\n",
    "absurd-multiplicity": "2\n10 10\n1\n1 1 1000000000000\n",
    "absurd-total": "2\n10 10\n2\n1 1 6000000\n2 2 6000000\n",
    "beyond-int64": f"2\n10 10\n1\n{2**64} 1 1\n",
    "word": "2\n10 10\n1\n1 x 1\n",
    "size-over-capacity": "2\n10 10\n1\n11 1 1\n",
    "negative-count": "2\n10 10\n-1\n",
}
for label, text in VBP.items():
    case("vbp", f"vbp-{label}", generate_from("vbp", "class1/class1_20_2_0.vbp", text))
case("vbp", "vbp-not-utf8", generate_from("vbp", "class1/class1_20_2_0.vbp", b"2\n10 10\n1\n1 \xff 1\n"))
BRAUN = {
    "empty": "", "header-word": "t m 0\n1 2\n", "header-short": "2\n1 2\n", "header-extra": "1 2 5 7\n1 2\n",
    "header-negative": "1 2 -1\n1 2\n",
    "count-short": "2 2 0\n1 2 3\n", "count-long": "1 2 0\n1 2 3\n", "word": "1 2 0\n1 x\n",
    "nan": "1 2 0\nnan 2\n", "inf": "1 2 0\ninf 2\n", "negative": "1 2 0\n-1 2\n", "zero": "1 2 0\n0 2\n",
    "zero-tasks": "0 2 0\n", "absurd-header": "1000000000 1000000000 0\n1 2\n",
}
for label, text in BRAUN.items():
    case("etc", f"braun-{label}", generate_from("braun", "u_c_hihi.0", text, "--names", "u_c_hihi.0"))
case("etc", "braun-not-utf8", generate_from("braun", "u_c_hihi.0", b"1 2 0\n\xff 2\n", "--names", "u_c_hihi.0"))


# ---- class: SWF numbers that overflow, NaN or negative fields -------------------------------------
def swf_line(**fields) -> str:
    vals = SWF_LINE.split()
    for k, v in fields.items():
        vals[int(k[1:]) - 1] = v
    return " ".join(vals) + "\n"


SWF_BAD = {
    "procs-1e30": SWF_HEAD + swf_line(f8="1e30"),
    "procs-2^63": SWF_HEAD + swf_line(f8=str(2**63)),
    "alloc-1e300": SWF_HEAD + swf_line(f5="1e300", f8="-1"),
    "procs-nan": SWF_HEAD + swf_line(f8="nan"),
    "runtime-nan": SWF_HEAD + swf_line(f4="nan"),
    "submit-inf": SWF_HEAD + swf_line(f2="inf"),
    "procs-decimal": SWF_HEAD + swf_line(f8="2.5"),
    "id-word": SWF_HEAD + swf_line(f1="abc"),
    "fields-17": SWF_HEAD + " ".join(SWF_LINE.split()[:17]) + "\n",
    "fields-19": SWF_HEAD + SWF_LINE.strip() + " 7\n",
    "maxprocs-huge": "; MaxProcs: " + "9" * 30 + "\n" + SWF_LINE,
    "maxnodes-huge": "; MaxNodes: " + str(2**64) + "\n" + SWF_LINE,
    "procs-over-machine-only": "; MaxProcs: 2\n" + SWF_LINE,
    "maxprocs-zero": "; MaxProcs: 0\n" + SWF_LINE,
    "maxprocs-negative": "; MaxProcs: -4\n" + SWF_LINE,
    "maxprocs-word": "; MaxProcs: abc\n" + SWF_LINE,
    "maxprocs-suffix": "; MaxProcs: 12abc\n" + SWF_LINE,
    "csv-procs-1e30": "id,submit,runtime,procs\n1,0,5,1e30\n",
    "csv-procs-word": "id,submit,runtime,procs\n1,0,5,four\n",
    "csv-runtime-inf": "id,submit,runtime,procs\n1,0,inf,1\n",
    "csv-id-decimal": "id,submit,runtime,procs\n1.5,0,5,1\n",
    "csv-all-negative": "id,submit,runtime,procs\n1,0,-5,1\n2,0,-1,1\n",
}
for label, text in SWF_BAD.items():
    case("swf", f"swf-{label}", simulate_file("t.csv" if label.startswith("csv") else "t.swf", text))
case("swf", "swf-nodes-beyond-int64", simulate_file("t.swf", SWF_HEAD + SWF_LINE, "--nodes", str(2**70)),
     "--nodes")


# ---- class: CLI options --------------------------------------------------------------------------
def argv_case(*argv):
    def build(tmp: Path):
        return [str(a).replace("{tmp}", str(tmp)) for a in argv], []
    return build


def instance_file(tmp: Path) -> Path:
    path = tmp / "ok.json"
    path.write_text(json.dumps(BASES["packing"]))
    return path


def solve_with(*opts, method: str = "cpsat"):
    def build(tmp: Path):
        return ["solve", str(instance_file(tmp)), "--method", method, *opts], []
    return build


for value in ("-1", "0", "nan", "inf", "-inf", "abc", "1e400", ""):
    case("options", f"solve-time-limit-{value or 'empty'}", solve_with("--time-limit", value), "--time-limit")
for value in ("0", "-2", "1.5", "x"):
    case("options", f"solve-threads-{value}", solve_with("--threads", value), "--threads")
case("options", "score-time-limit-0", argv_case("score", "{tmp}", "--methods", "ff", "--time-limit", "0"),
     "--time-limit")
case("options", "score-threads-0", argv_case("score", "{tmp}", "--methods", "ff", "--threads", "0"), "--threads")
for value in ("-3", "1.5", "nan", "100000000000"):   # 0 runs the edge cases alone; 1e11: built its instance list silently, 800 MB in 20 s
    case("options", f"validate-count-{value}",
         argv_case("validate", "tests.sample_heuristics:smallest_first", "--count", value), "--count")
case("options", "validate-time-limit-nan",
     argv_case("validate", "tests.sample_heuristics:smallest_first", "--time-limit", "nan"), "--time-limit")
for value in ("0", "-1", "1000000000"):   # 1e9 workers: a local cluster that tried to start them all
    case("options", f"experiment-seeds-{value}", argv_case("experiment", "leinberger", "--seeds", value,
                                                           "--out", "{tmp}/x"), "--seeds")
    case("options", f"experiment-jobs-{value}", argv_case("experiment", "leinberger", "--jobs", value,
                                                          "--out", "{tmp}/x"), "--jobs")
SIM_OPTS = {"--nodes": ("0", "-5", "x"), "--starvation-limit": ("-1", "nan", "inf"),
            "--min-candidates": ("0", "-1"), "--small-threshold": ("-1",), "--mpl": ("0",), "--slice": ("0", "nan"),
            "--switch-overhead": ("-1",), "--machines": ("0",), "--interarrival": ("0", "inf"),
            "--exact-time-limit": ("-1",), "--farm-jobs": ("0",)}
for opt, values in SIM_OPTS.items():
    for value in values:
        case("options", f"simulate{opt}-{value}",
             argv_case("simulate", "--workload", "{tmp}/w.swf", "--policy", "fcfs", opt, value), opt)
for opt, value in (("--mpl", "3"), ("--machines", "3"), ("--slice", "1")):      # another machine's option
    case("options", f"simulate-foreign{opt}",
         argv_case("simulate", "--workload", "{tmp}/w.swf", "--policy", "easy", opt, value), opt)
case("options", "simulate-foreign-starvation-limit-on-gang",
     argv_case("simulate", "--workload", "{tmp}/w.swf", "--policy", "gs", "--starvation-limit", "5"),
     "--starvation-limit")
for value in ("aging=nan", "aging=inf", "aging=-1", "aging=abc", "min=100", "overhead=-5",
              "base=1e308", "max=1e308", "wait=1e10"):   # 1e308: the matrix overflowed into inf and NaN
    case("options", f"simulate-cs-constant-{value}",
         argv_case("simulate", "--policy", "cs-i-p", "--farm-jobs", "20", "--cs-constant", value),
         value.split("=")[0])
case("options", "simulate-farm-record-epochs",
     argv_case("simulate", "--policy", "cs-i-p", "--farm-jobs", "20", "--record-epochs", "{tmp}/rec"),
     "--record-epochs")
case("options", "simulate-mkp-unknown",
     argv_case("simulate", "--policy", "cs-i-p", "--farm-jobs", "20", "--mkp", "nosuch"), "nosuch")
for value in ("fullness=wrong", "window=-1"):
    case("options", f"simulate-param-{value}",
         argv_case("simulate", "--workload", "{tmp}/w.swf", "--policy", "bl-easy", "--param", value),
         "--param", value.split("=")[0])
for method, value in (("cpsat", "start=bogus"), ("cpsat", "warm=no"), ("cpsat", "seed=1.5"), ("cpsat", "seed=-5"),
                      ("bl", "window=abc")):
    case("options", f"solve-param-{method}-{value}", solve_with("--param", value, method=method),
         "--param", value.split("=")[0])
for opt, value in (("--rtol", "-1"), ("--rtol", "nan"), ("--rtol", "0"), ("--target", "0"), ("--warmup", "1")):
    case("options", f"calibrate{opt}-{value}",
         argv_case("calibrate", "{tmp}/w.swf", "--target", "2", opt, value), opt)
case("options", "calibrate-out-exists", argv_case("calibrate", "{tmp}/w.swf", "--target", "2", "--out", "{tmp}/w.swf"),
     "already exists")
case("options", "unknown-option", argv_case("solve", "x.json", "--method", "ff", "--bogus"), "--bogus")
case("options", "missing-required", argv_case("solve", "x.json"), "--method")
case("options", "unknown-generator", argv_case("generate", "nope", "--out", "{tmp}/o"), "nope")
case("options", "bad-choice", argv_case("generate", "leinberger", "--out", "{tmp}/o", "--dist", "cauchy"),
     "--dist")
GEN_OPTS = {  # explicit cases of the issue; every numeric parameter is also covered below
    ("leinberger", "--count", "0"), ("leinberger", "--count", "-1"), ("leinberger", "--n", "1000000000000"),
    ("leinberger", "--k", "0"), ("leinberger", "--seed", "-1"), ("leinberger", "--load", "1.5"),
    ("leinberger", "--p-pow2", "2"), ("orlib-mknapcb", "--first", "0"), ("orlib-mknapcb", "--first", "-1"),
    ("workload", "--phi", "2"), ("workload", "--phi", "-0.5"), ("workload", "--omega", "-1"),
    ("workload", "--load", "0"), ("workload", "--load-factor", "0"), ("workload", "--runtime-factor", "inf"),
    ("workload", "--jobs", "0"), ("mkp", "--tightness", "2"), ("assign-random", "--density", "-0.1"),
    ("farm-mkp", "--ratio-lo", "1.5"), ("braun-range", "--decimals", "99"), ("los", "--est-min", "0"),
    ("los", "--n", "abc"), ("workload", "--processors", "0"),
}
for gen, opt, value in sorted(GEN_OPTS):
    case("options", f"generate-{gen}{opt}-{value}", argv_case("generate", gen, "--out", "{tmp}/o", opt, value), opt)
# a load so small that the arrivals pass the float limit: numpy's overflow warning came before the line
case("options", "generate-workload-load-tiny", argv_case("generate", "workload", "--out", "{tmp}/o", "--load", "1e-300"),
     "--load 1e-300: spreads the 1000 arrivals")               # the option named (it named column 'submit')


def _numeric_params():
    """Every int / float parameter of the built-in generators (plug-ins aside)."""
    generators = load_generators()
    for gen, spec in sorted(GENERATOR_PARAMS.items()):
        if not generators[gen].__module__.startswith("epochbench.instances."):
            continue
        for name, par in spec.items():
            if par.type in (int, float):
                yield gen, name, par


for gen, name, par in _numeric_params():
    opt = "--" + name.replace("_", "-")
    case("generator-params", f"gp-{gen}{opt}-nan", argv_case("generate", gen, "--out", "{tmp}/o", opt, "nan"), opt)
    if par.bounds is not None:
        lo, hi = par.bounds
        out = hi * 2 + 1 if par.type is int else hi * 2 + 1.0
        case("generator-params", f"gp-{gen}{opt}-above",
             argv_case("generate", gen, "--out", "{tmp}/o", opt, str(out)), opt)


# ---- class: an --out that cannot be written -----------------------------------------------------
def out_under_file(*argv):
    """``{out}`` becomes a path whose parent is a regular file (works as root too)."""
    def build(tmp: Path):
        blocker = tmp / "blocker.txt"
        blocker.write_text("a file, not a folder")
        instance_file(tmp)
        return [str(a).replace("{out}", str(blocker / "sub")).replace("{tmp}", str(tmp)) for a in argv], \
            [str(blocker)]
    return build


case("out", "generate-out-under-file", out_under_file("generate", "fig1", "--out", "{out}"))
def out_is_file(tmp: Path):
    """``--out`` names an existing regular file where a folder goes."""
    path = tmp / "f"
    path.write_text("x")
    return ["generate", "fig1", "--out", str(path)], [str(path)]


case("out", "generate-out-is-file", out_is_file)
case("out", "score-out-under-file", out_under_file("score", "{tmp}/ok.json", "--methods", "ff", "--out",
                                                   "{out}/scores"))
case("out", "simulate-out-under-file", out_under_file("simulate", "--workload", "{tmp}/w.swf", "--policy", "fcfs",
                                                      "--out", "{out}"))
case("out", "simulate-record-under-file", out_under_file("simulate", "--workload", "{tmp}/w.swf", "--policy",
                                                         "fcfs", "--record-epochs", "{out}"))
case("out", "experiment-out-under-file", out_under_file("experiment", "leinberger", "--quick", "--out", "{out}"))
case("out", "workload-out-under-file", out_under_file("generate", "workload", "--jobs", "10", "--out",
                                                      "{out}/w.swf"))
case("out", "generate-root-is-file", lambda tmp: (
    ["generate", "vbp", "--root", str(instance_file(tmp)), "--out", str(tmp / "o")], [str(tmp / "ok.json")]),
    "folder")


# ---- the runner ------------------------------------------------------------------------------
def run_inprocess(argv, capsys) -> tuple[int, str]:
    try:
        status = main(argv)
    except SystemExit as exc:           # argparse
        status = exc.code
    return status, capsys.readouterr().err


def assert_one_clear_line(status, err: str, needles) -> None:
    assert status == 2, err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("epochbench"), err
    for needle in needles:
        assert needle in lines[0], (needle, err)


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """``tmp_path`` with a valid workload ``w.swf`` (options cases need one) as the cwd."""
    (tmp_path / "w.swf").write_text(SWF_HEAD + SWF_LINE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_line_status_2(name, workspace, capsys):
    cls, build, needles = CASES[name]
    argv, file_needles = build(workspace)
    status, err = run_inprocess(argv, capsys)
    assert_one_clear_line(status, err, [*file_needles, *needles])


def test_corpus_covers_every_class_with_200_cases():
    counts = pd.Series([cls for cls, _, _ in CASES.values()]).value_counts()
    assert len(CASES) >= 200
    assert set(counts.index) >= {"json-type", "kind-missing", "numbers", "files", "manifest", "orlib", "vbp",
                                 "etc", "swf", "options", "generator-params", "out"}


def test_every_numeric_generator_parameter_has_bounds():
    missing = [(g, n) for g, n, p in _numeric_params() if p.bounds is None]
    assert missing == []


@pytest.mark.parametrize("family", list(BASES))
def test_base_instances_are_valid(family, tmp_path, capsys):
    """The corpus' base files load and solve: each bad case differs by one field."""
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(BASES[family]))
    assert main(["solve", str(path), "--method", METHOD[family], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["status"] in ("feasible", "optimal")


def test_valid_files_of_each_parser_load(tmp_path, capsys):
    """The well-formed versions of the malformed parser inputs generate fine."""
    good = {"orlib-mknap1": ("mknap1.txt", "1\n3 2 10\n1 2 3\n1 1 1\n1 1 1\n5 5\n"),
            "orlib-assign": ("assign100.txt", "2\n1 2\n3 4\n"),
            "vbp": ("class1/class1_20_2_0.vbp", "2\n10 10\n1\n1 1 3\n")}
    for gen, (rel, text) in good.items():
        root = tmp_path / gen
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        assert main(["generate", gen, "--out", str(tmp_path / f"out-{gen}"), "--root", str(root)]) == 0
    (tmp_path / "w.swf").write_text(SWF_HEAD + SWF_LINE)
    assert main(["simulate", "--workload", str(tmp_path / "w.swf"), "--policy", "fcfs", "--quiet"]) == 0
    capsys.readouterr()


def test_nan_and_huge_numbers_never_load_silently(tmp_path):
    """In the API too: NaN, inf and beyond-int64 numbers are refused at load time."""
    from epochbench.instances import InstanceError, load_instance
    for text in ("NaN", "1e400", str(2**63)):
        path = tmp_path / "x.json"
        path.write_text(json.dumps(BASES["knapsack"]).replace("3.0", text, 1))
        with pytest.raises(InstanceError, match="profit"):
            load_instance(path)
    assert math.isfinite(load_instance(instance_file(tmp_path)).capacity.sum())
    assert np.array_equal(load_instance(instance_file(tmp_path)).capacity, [10, 10])


@pytest.mark.parametrize("family", sorted(BASES))
def test_an_unknown_field_is_refused_not_dropped(family, tmp_path):
    """A misspelt field (``estimat``) used to load as if it were absent."""
    from epochbench.instances import InstanceError, load_instance
    path = tmp_path / "x.json"
    path.write_text(json.dumps({**BASES[family], "estimat": [1.0]}))
    with pytest.raises(InstanceError, match=r"x.json: unknown field 'estimat'; known: kind, "):
        load_instance(path)


@pytest.mark.parametrize("etc, said", [([[1, 2], [3, None]], "an array holding an array holding null"),
                                       ([[1, 2], 3], "an array mixing numbers and arrays of numbers"),
                                       ([[1, 2], ["x", 1]], "an array holding an array holding a string")])
def test_a_bad_matrix_entry_is_named(etc, said, tmp_path):
    """The message names what is wrong inside the matrix (it used to say
    "an array holding an array of numbers" for a null inside a row)."""
    from epochbench.instances import InstanceError, load_instance
    path = tmp_path / "x.json"
    path.write_text(json.dumps({**BASES["mapping"], "etc": etc}))
    with pytest.raises(InstanceError, match=f"field 'etc' must be an array of arrays of numbers, got {said}$"):
        load_instance(path)


def test_a_negative_estimate_is_refused(tmp_path):
    from epochbench.instances import InstanceError, PackingInstance
    with pytest.raises(InstanceError, match="field 'estimate' has a negative entry -3.0 at 1"):
        PackingInstance.build([10], [[4], [5]], estimate=[2.0, -3.0])


SUBPROCESS_CASES = ["solve-time-limit--1", "json-not-utf8", "csv-header-only", "generate-workload--phi-2",
                    "vbp-absurd-multiplicity", "generate-workload-load-tiny"]


@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_bad_input_through_a_real_process(name, workspace):
    cls, build, needles = CASES[name]
    argv, file_needles = build(workspace)
    proc = subprocess.run([sys.executable, "-m", "epochbench.cli", *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.stdout == ""
    assert_one_clear_line(proc.returncode, proc.stderr, [*file_needles, *needles])


def test_a_resource_of_capacity_0_is_refused_where_utilization_divides_by_it():
    """A packing step with a capacity of 0 on a resource was scored: that
    resource's share counted 0, so packing everything was worth (K - 1) / K.
    A knapsack's license may have no copy (its objective is a profit)."""
    from epochbench.instances import EpochsInstance, InstanceError, PackingInstance
    with pytest.raises(InstanceError, match=r"^z: field 'capacity' is 0 on resource 0; each resource needs"):
        PackingInstance.build([0, 10], [[0, 5]], source="z")
    with pytest.raises(InstanceError, match="field 'capacity' is 0 on resource 1"):
        EpochsInstance.build([10, 0], [[5, 0]], source="z")
    assert PackingInstance.build([0, 10], [[0, 5]], profit=[2.0], objective="profit").value([0]) == 2.0


@pytest.mark.parametrize("name", ["", " ", "a\tb"])
def test_an_instance_with_an_empty_or_blank_name_is_refused(tmp_path, name):
    from epochbench.instances import InstanceError
    """It was scored as an empty instance cell, which ``compare`` then
    refused ("line 2 has no instance"); solve printed ": ff feasible"."""
    from epochbench.instances.generators import generate
    from epochbench.instances.io import load_instance, save_instance
    save_instance(generate("leinberger", n=6, k=2, count=1, seed=1)[0], tmp_path / "x.json")
    d = json.loads((tmp_path / "x.json").read_text())
    d["meta"]["name"] = name
    (tmp_path / "x.json").write_text(json.dumps(d))
    with pytest.raises(InstanceError, match=r"x\.json: field 'meta\.name' (is .*: set its meta\['name'\]|.* holds a "
                                            r"control or invisible character)"):
        load_instance(tmp_path / "x.json")
    del d["meta"]["name"]
    (tmp_path / "x.json").write_text(json.dumps(d))
    assert load_instance(tmp_path / "x.json").name == "x"             # no name: the file's


@pytest.mark.parametrize("text, what", [("[1, 2]", "an array"), ('"x"', "a string"), ("3", "a number"),
                                        ("null", "null")])
def test_an_instance_file_that_is_no_json_object_says_what_it_is(tmp_path, text, what):
    """It said "field 'kind' missing" of an array."""
    from epochbench.instances import InstanceError
    from epochbench.instances.io import load_instance
    (tmp_path / "x.json").write_text(text)
    with pytest.raises(InstanceError, match=rf"x\.json: a JSON object with 'kind' expected, got {what}$"):
        load_instance(tmp_path / "x.json")


def test_a_name_that_reading_refuses_is_refused_when_saving(tmp_path):
    """A blank name was written ('   .json', and one instance file) and then
    refused when read: a family that could never be read back."""
    from dataclasses import replace

    import epochbench as eb
    from epochbench.instances import InstanceError
    inst = eb.generate("mkp", n=5, k=2, count=1, seed=1)[0]
    blank = replace(inst, meta={**inst.meta, "name": "   "})
    with pytest.raises(InstanceError, match="set its meta\\['name'\\]"):
        eb.save(blank, tmp_path / "x.json")
    with pytest.raises(InstanceError, match="set its meta\\['name'\\]"):
        eb.save([blank], tmp_path / "fam")
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "fam").exists()


@pytest.mark.parametrize("value", ["-inf", "-Infinity", "-1e3", "-nan", "-.5"])
def test_a_negative_number_in_any_spelling_reaches_the_option_check(value, tmp_path, capsys):
    """argparse takes only ``-1`` and ``-1.5`` for numbers; ``--time-limit -inf``
    said "expected one argument", as if the value were missing."""
    status, err = run_inprocess(["solve", str(instance_file(tmp_path)), "--method", "cpsat", "--time-limit", value],
                                capsys)
    assert status == 2
    assert err.strip() == f"epochbench solve: error: argument --time-limit: must be a positive finite number, got {value}"


@pytest.mark.parametrize("value", ["-2,10", "-0.5,1.5", "-1e3,+2", "-2,10,5"])
def test_a_list_of_numbers_led_by_a_negative_one_reaches_the_option_check(value, capsys):
    """``--partitions -2,10`` said "expected one argument" (argparse read it
    as an option); ``--partitions=-2,10`` gave the option's own message."""
    status, err = run_inprocess(["simulate", "--workload", "x.swf", "--policy", "multi-queue",
                                 "--partitions", value], capsys)
    assert status == 2
    assert err.strip() == (f"epochbench simulate: error: argument --partitions: must be sizes > 0, "
                           f"comma-separated, got {value}")


@pytest.mark.parametrize("gen, params, shown", [
    ("leinberger", dict(n=10**7, k=10**4), r"count x n x \(k \+ 1\) = 1e\+12 numbers \(about 7,451 GiB\)"),
    ("leinberger", dict(n=10**4, k=100, count=10**5), r"count x n x \(k \+ 1\) = 1\.01e\+11 numbers"),
    ("assign-farm", dict(n=10**4, machines=10**4, count=100), r"count x n x \(machines \+ licenses\) = 1e\+10"),
    ("braun-range", dict(tasks=10**6, machines=10**4), r"count x tasks x machines = 1e\+10"),
])
def test_a_generator_call_past_the_memory_is_refused_before_it_allocates(gen, params, shown):
    """Each parameter's bound held alone: n = 10**7 with k = 10**4 failed in
    numpy ("Unable to allocate 745 GiB"), and count = 10**5 instances of
    8 MB each filled the memory one after another."""
    from epochbench.instances.generators import MAX_NUMBERS, generate, resolved_params
    with pytest.raises(ValueError, match=rf"^generator '{gen}': {shown}.*, past the 1e\+09 a call may hold; "
                                         r"generate fewer or smaller instances$"):
        generate(gen, **params)
    small = {k: max(1, v // 1000) for k, v in params.items()}      # the same parameters, smaller: accepted
    assert resolved_params(gen, **small)
    assert MAX_NUMBERS == 10**9
