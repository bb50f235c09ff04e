"""The command line: generate, solve --json, score, list, validate, bad input."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from epochbench.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fam")
    assert main(["generate", "leinberger", "--out", str(folder), "--n", "12", "--k", "2",
                 "--count", "3", "--seed", "5"]) == 0
    return folder


def test_generate_writes_instances_and_manifest(family):
    manifest = json.loads((family / "manifest.json").read_text())
    assert manifest["generator"] == "leinberger" and len(manifest["instances"]) == 3
    for e in manifest["instances"]:
        assert (family / e["file"]).exists()


def test_a_data_sets_manifest_records_the_data_folder_it_was_read_from(tmp_path, monkeypatch):
    """Its params said root: null, the data folder read nowhere; a generated
    family has no such field."""
    from epochbench.instances.data import data_root
    root = data_root()
    if not (root / "braun").is_dir():
        pytest.skip(f"no Braun matrices under {root} (set EPOCHBENCH_DATA)")
    monkeypatch.setenv("EPOCHBENCH_DATA", str(root))
    assert main(["generate", "braun", "--out", str(tmp_path / "br")]) == 0
    manifest = json.loads((tmp_path / "br" / "manifest.json").read_text())
    assert manifest["params"]["root"] is None and manifest["data_folder"] == str(root.resolve())
    assert main(["generate", "leinberger", "--out", str(tmp_path / "le"), "--count", "1"]) == 0
    assert "data_folder" not in json.loads((tmp_path / "le" / "manifest.json").read_text())


@pytest.mark.parametrize("method", ["fcfs", "ff", "bestfit", "worstfit", "bl", "bb", "los",
                                    "cpsat", "milp-cbc", "milp-highs"])
def test_solve_json_has_the_contract_fields(capsys, family, method):
    f = sorted(family.glob("leinberger*.json"))[0]
    code, out, _ = run(capsys, "solve", f, "--method", method, "--json", "--time-limit", "10")
    assert code == 0
    d = json.loads(out)
    for key in ("method", "status", "value", "bound", "seconds", "selected"):
        assert key in d
    assert d["method"] == method
    if method in ("cpsat", "milp-cbc", "milp-highs"):
        assert d["status"] == "optimal" and d["bound"] == pytest.approx(d["value"])
        assert d["info"]["bound_kind"] == "solver"
    else:                                # a heuristic proves nothing: README's info.bound_kind "none"
        assert d["bound"] is None and d["info"]["bound_kind"] == "none"


def test_solve_json_says_unchecked_when_there_is_no_decision(capsys, family, monkeypatch):
    """``checked`` was always true, also for a timeout without a decision
    (``value`` null): the checker had passed nothing."""
    import math
    from epochbench.instances import registry
    from epochbench.instances.core import Result
    f = sorted(family.glob("leinberger*.json"))[0]
    code, out, _ = run(capsys, "solve", f, "--method", "ff", "--json")
    assert code == 0 and json.loads(out)["checked"] is True
    monkeypatch.setattr(registry, "solve", lambda inst, method, **kw: Result(
        "packing", method, (), math.nan, "timeout", 0.01, None, {"bound_kind": "none"}))
    code, out, _ = run(capsys, "solve", f, "--method", "cpsat", "--json", "--time-limit", "0.01")
    d = json.loads(out)
    assert code == 0 and d["status"] == "timeout" and d["value"] is None and d["checked"] is False


def test_solve_epochs_prints_bins(capsys, tmp_path):
    assert main(["generate", "fig1", "--out", str(tmp_path)]) == 0
    f = next(p for p in tmp_path.glob("*.json") if p.name != "manifest.json")
    capsys.readouterr()
    code, out, _ = run(capsys, "solve", f, "--method", "cpsat", "--json")
    d = json.loads(out)
    assert code == 0 and d["value"] == 2 and len(d["bins"]) == 2


def test_score_names_the_files_its_manifest_leaves_out(capsys, family, tmp_path):
    """A file copied into a generated folder is not in its manifest, so it is
    not read: the command says so instead of skipping it silently."""
    import shutil
    folder = tmp_path / "w"
    shutil.copytree(family, folder)
    shutil.copy(sorted(folder.glob("leinberger*.json"))[0], folder / "extra.json")
    code, _, err = run(capsys, "score", folder, "--methods", "ff", "--workers", "1", "--out", tmp_path / "s")
    assert code == 0 and "1 .json file(s) not in manifest.json, not read (extra.json)" in err
    assert len(pd.read_csv(tmp_path / "s.csv")) == 3


def test_score_writes_csv_and_parquet(capsys, family, tmp_path):
    code, out, _ = run(capsys, "score", family, "--methods", "ff,bb,los,cpsat", "--out", tmp_path / "s")
    assert code == 0
    table = pd.read_parquet(tmp_path / "s.parquet")
    assert set(table["method"]) == {"ff", "bb", "los", "cpsat"} and len(table) == 12
    assert (table.loc[table.method == "cpsat", "gap"] == 0).all()
    assert (table["gap"] >= 0).all() and (table["gap_kind"] == "optimum").all()
    assert pd.read_csv(tmp_path / "s.csv").shape == table.shape
    assert "mean_gap" in out and "median_ms" in out


@pytest.mark.parametrize("given", ["o.csv", "o.CSV", "o.parquet", "o.run.json"])
def test_score_out_with_a_files_suffix_is_the_prefix_without_it(capsys, family, tmp_path, given):
    """``--out o.csv`` wrote ``o.csv.csv`` and ``o.csv.parquet``."""
    code, _, _ = run(capsys, "score", family, "--methods", "ff", "--workers", "1", "--out", tmp_path / given)
    assert code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.csv", "o.parquet", "o.run.json"]


def test_list_shows_every_family_and_method(capsys):
    code, out, _ = run(capsys, "list")
    assert code == 0
    for name in ("fcfs", "ff", "bestfit", "worstfit", "bl", "bb", "los", "cpsat", "milp-cbc", "milp-highs"):
        assert f"  {name} " in out
    assert "packing:" in out and "epochs:" in out


@pytest.mark.parametrize("content, field", [
    ('{"kind": "packing", "capacity": [4, 4], "demand": [[1, 2, 3]]}', "demand"),
    ('{"kind": "packing", "capacity": [4, 4], "demand": [[1, -2]]}', "demand"),
    ('{"kind": "packing", "capacity": [4, 4], "used": [5, 0], "demand": [[1, 2]]}', "used"),
    ('{"kind": "epochs", "capacity": [4, 4], "demand": [[5, 1]]}', "demand"),
    ('{"kind": "packing", "demand": [[1, 2]]}', "capacity"),
    ('{"kind": "packing", "capacity": [4], "demand": [[1.5]]}', "demand"),
    ('{"kind": "packing", "capacity": [4], "demand": [[1], [2, 3]]}', "demand"),
    ('{"kind": "nope"}', "kind"),
    ("{not json", "JSON"),
])
def test_bad_input_names_file_and_field_and_exits_non_zero(capsys, tmp_path, content, field):
    f = tmp_path / "bad.json"
    f.write_text(content)
    code, out, err = run(capsys, "solve", f, "--method", "ff")
    assert code != 0 and out == ""
    assert str(f) in err and field in err


def test_validate_builtin_heuristic_passes(capsys):
    code, out, _ = run(capsys, "validate", "epochbench.heuristics.packing:backfill_balanced", "--count", "6")
    assert code == 0 and "verdict: PASS" in out


def test_validate_user_heuristic_passes(capsys):
    code, out, _ = run(capsys, "validate", "sample_heuristics:smallest_first", "--count", "6")
    assert code == 0 and "verdict: PASS" in out


def test_validate_broken_heuristic_fails_naming_the_instance():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    proc = subprocess.run([sys.executable, "-m", "epochbench.cli", "validate", "sample_heuristics:overcommit",
                           "--count", "3"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode != 0
    assert "verdict: FAIL" in proc.stdout
    assert "edge-nothing-fits" in proc.stdout and "over-committed" in proc.stdout


def test_validate_reports_an_exception_with_the_instance(capsys):
    code, out, _ = run(capsys, "validate", "sample_heuristics:crashes", "--count", "1")
    assert code != 0 and "edge-empty-queue" in out and "boom" in out


def test_validate_bad_spec_is_a_clear_error(capsys):
    code, _, err = run(capsys, "validate", "no_such_module:f")
    assert code != 0 and "no_such_module" in err


@pytest.mark.parametrize("argv, command", [(["list", "--nosuch"], "list"), (["list", "packing"], "list"),
                                           (["runs", "--nosuch"], "runs"),
                                           (["score", "x", "--methods", "ff", "--nosuch"], "score")])
def test_an_unknown_argument_is_said_by_its_command(capsys, argv, command):
    """The top-level parser said them: 'epochbench: error: unrecognized
    arguments', where every other error names the command."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert err.startswith(f"epochbench {command}: error: unrecognized arguments: ")


def test_a_score_stopped_mid_sweep_leaves_its_record_and_the_previous_run_alone(capsys, family, tmp_path,
                                                                              monkeypatch):
    """A score that lost its scheduler (or was stopped with Ctrl-C) wrote no
    run.json: the README says every score records one."""
    from epochbench import scoring
    out = tmp_path / "s"
    assert run(capsys, "score", family, "--methods", "ff", "--workers", "1", "--out", out)[0] == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def stopped(*a, **k):
        raise KeyboardInterrupt("interrupted")
    monkeypatch.setattr(scoring, "score", stopped)
    assert run(capsys, "score", family, "--methods", "ff", "--workers", "1", "--out", out)[0] == 130
    records = [p for p in tmp_path.iterdir() if p.name not in before]
    assert len(records) == 1 and records[0].name.startswith("s-") and records[0].name.endswith(".run.json")
    assert json.loads(records[0].read_text())["status"] == "interrupted"
    assert all((tmp_path / name).read_bytes() == data for name, data in before.items())
