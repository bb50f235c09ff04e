"""``epochbench bench`` behaves like pytest with pytest-benchmark: options
pass through, ``--benchmark-disable`` (the usual CI mode) runs every selected
benchmark once untimed, and the leaderboard still comes out, last."""
import os
import subprocess
import sys

import pytest

SELECT = "leinberger-k2-distuniform-n32 and (cpsat or -ff])"


def bench(tmp_path, *extra):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-m", "epochbench", "bench", "--quick", "-k", SELECT, *extra],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("mode", [["--benchmark-only"], ["--benchmark-disable"]], ids=["timed", "disabled"])
def test_selection_runs_and_ends_with_the_leaderboard(tmp_path, mode):
    """Timed (``--benchmark-only``: every benchmark of the suite is one, so
    all run) and untimed."""
    proc = bench(tmp_path, *mode)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "2 passed" in out
    board = out[out.index("epochbench: leaderboards"):]
    assert "packing:" in board and "cpsat" in board and "ff" in board
    assert "passed" in out.rstrip().splitlines()[-1]                 # the leaderboard is the last section
    assert out.index("epochbench: leaderboards") > (out.find("benchmark:") if "benchmark:" in out else -1)
    (run,) = (tmp_path / "results").glob("bench-*")                  # a run folder of its own
    assert (run / "leaderboard-packing.csv").is_file() and (run / "run.json").is_file()


def test_unknown_pytest_option_is_passed_on_and_refused_by_pytest(tmp_path):
    proc = bench(tmp_path, "--no-such-pytest-option")
    assert proc.returncode == 2 and "no-such-pytest-option" in proc.stderr     # bad usage: the commands' 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "epochbench bench: error: pytest refused the arguments passed on to it (above); "
        "'epochbench bench --help' lists bench's own options")
    assert not (tmp_path / "results").exists()


def _json_params_serialise_and_the_histogram_is_drawn(tmp_path, name: str) -> None:
    import json
    text = (tmp_path / name).read_text()
    assert "UNSERIALIZABLE" not in text
    runs = json.loads(text)["benchmarks"]
    assert {r["params"]["method"] for r in runs} == {"cpsat", "ff"}
    assert all(r["params"]["config"] == "leinberger-k2-distuniform-n32" for r in runs)
    assert all("mean_gap" in r["extra_info"] for r in runs)
    assert list(tmp_path.glob("hist*.svg"))
    from epochbench import runs as provenance             # the benchmarked code, not the folder's checkout
    info, ours = json.loads(text)["commit_info"], provenance.commit_info()
    assert info["project"] == "epochbench" and info["id"] == ours["id"] != "unversioned"
    assert info["dirty"] == ours["dirty"]


def _runs(path):
    import json
    return {r["params"]["method"]: r for r in json.loads(path.read_text())["benchmarks"]}


def test_rounds_options_autosave_compare_json_and_histogram(tmp_path):
    """``--benchmark-min-rounds`` and ``--benchmark-max-time`` decide the
    rounds of timed heuristics (pytest-benchmark's rule: fill max-time, at
    least min-rounds; a tiny max-time leaves min-rounds); an exact method
    is timed once per instance; ``--benchmark-autosave`` saves the run and
    ``--benchmark-compare`` compares the next one with it; the JSON's
    params serialise and ``--benchmark-histogram`` draws (one run for both:
    a run of its own cost 3.4 s)."""
    proc = bench(tmp_path, "--benchmark-autosave", "--benchmark-min-rounds", "7", "--benchmark-max-time", "1e-9",
                 "--benchmark-json", "a.json", "--benchmark-histogram", "hist")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    _json_params_serialise_and_the_histogram_is_drawn(tmp_path, "a.json")
    a = _runs(tmp_path / "a.json")
    assert a["ff"]["stats"]["rounds"] == 7 and a["ff"]["options"]["min_rounds"] == 7
    n = a["cpsat"]["extra_info"]["instances"]
    assert a["cpsat"]["stats"]["rounds"] == n
    (saved,) = (tmp_path / ".benchmarks").rglob("0001_*.json")
    per = a["ff"]["extra_info"]["per_instance"]
    assert len(per) == n and {"instance", "value", "bound", "gap", "gap_kind", "status", "seconds"} <= set(per[0])
    assert {p["gap_kind"] for p in per} == {"optimum"} and all(p["bound"] >= p["value"] for p in per)

    proc = bench(tmp_path, "--benchmark-compare", "--benchmark-json", "b.json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0001" in proc.stdout and "NOW" in proc.stdout
    b = _runs(tmp_path / "b.json")
    assert b["ff"]["stats"]["rounds"] == max(20, 10 * n)           # the suite's default without the options


def test_skip(tmp_path):
    """(``--benchmark-only``: the timed case of test_selection_runs_and_ends_with_the_leaderboard.)"""
    proc = bench(tmp_path, "--benchmark-skip")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 skipped" in proc.stdout


def test_no_configuration_from_the_folders_above_the_suite_applies(tmp_path):
    """pytest looked for its configuration in the folders above the
    installed suite: a project's pyproject.toml around a .venv applied its
    own addopts (``-k zzz`` selected nothing) and conftest files.  Here, in
    a checkout, the folder above is this project's own (pyproject.toml
    with a [tool.pytest.ini_options] table)."""
    proc = bench(tmp_path, "--collect-only", "-v", "--trace-config")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    config = [line for line in proc.stdout.splitlines() if line.startswith(("configfile:", "inifile:"))]
    assert config and all("pyproject.toml" not in line for line in config), config
    conftests = [line for line in proc.stdout.splitlines() if "PLUGIN registered" in line and "conftest" in line]
    assert len(conftests) == 1 and "benchmarks" in conftests[0], conftests      # the suite's own, not the checkout's
    assert not (tmp_path / "results").exists() and not (tmp_path / ".benchmarks").exists()   # nothing written


def test_pytest_addopts_of_the_environment_does_not_reach_the_suite(tmp_path, monkeypatch, capsys):
    """pytest prepends ``$PYTEST_ADDOPTS`` to its arguments: a user's
    setting for another project changed or stopped the benchmark run (here
    an option no plug-in of the suite has: pytest refused the run)."""
    from epochbench import cli
    monkeypatch.setenv("PYTEST_ADDOPTS", "--no-such-option-xyz")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["bench", "--quick", "--results", str(tmp_path / "r"), "-k", "nomatch_xyz"]) == 2
    err = capsys.readouterr().err
    assert "$PYTEST_ADDOPTS ('--no-such-option-xyz') is ignored" in err and "no benchmark selected" in err
    assert os.environ["PYTEST_ADDOPTS"] == "--no-such-option-xyz"          # the caller's environment is kept


def test_a_family_whose_every_board_benchmark_needs_the_data_says_it_has_no_board(tmp_path):
    """Without the data the knapsack board was gone without a word (the
    data line named OR-Library, not the board)."""
    env = dict(os.environ, EPOCHBENCH_DATA=str(tmp_path / "no-data"))
    proc = subprocess.run([sys.executable, "-m", "epochbench", "bench", "--quick", "--benchmark-disable", "-k",
                           "knapsack or (leinberger-k2-distuniform-n32 and -ff])"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "knapsack: no leaderboard: its benchmarks need the reference data" in proc.stdout
    assert "packing: no leaderboard" not in proc.stdout


def test_run_json_records_every_benchmark_modules_seeds_and_time_limits():
    """run.json gave the seeds and limits of the packing and epochs
    configurations only: mapping's exact solves (30 s), assignment's (60 s)
    and its dense matrices' seed 2 were nowhere.  Each module's SETTINGS
    (built from the constants it runs with) is recorded under its name."""
    from types import SimpleNamespace

    from epochbench.benchmarks import bench_assignment, bench_knapsack, bench_mapping, plugin
    items = [SimpleNamespace(module=m) for m in (bench_mapping, bench_assignment, bench_mapping, bench_knapsack)]
    items.append(SimpleNamespace(module=plugin))                 # no SETTINGS: left out
    got = plugin._module_settings(items)
    assert list(got) == ["bench_assignment", "bench_knapsack", "bench_mapping"]
    assert got["bench_mapping"]["time_limits_s"]["exact 32x4, 64x8"] == bench_mapping.EXACT_S == 30.0
    assert got["bench_assignment"]["seeds"]["dense 150 x 150"] == bench_assignment.DENSE_SEED == 2
    assert got["bench_knapsack"]["time_limits_s"]["mkp-bb on mknapcb1 (full suite)"] == bench_knapsack.MKP_BB_S


def test_pytest_benchmark_in_a_checkout_refuses_an_existing_json_file_too(tmp_path):
    """``pytest --benchmark --benchmark-json FILE`` (the checkout's route)
    wrote over an existing file: only ``epochbench bench`` checked it."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    kept = tmp_path / "before.json"
    kept.write_text("baseline")
    proc = subprocess.run([sys.executable, "-m", "pytest", "--benchmark", "--quick", "-p", "no:cacheprovider",
                           "-k", "nothing_matches_this", "--benchmark-json", str(kept),
                           "--results", str(tmp_path / "r")],
                          cwd=root, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 4 and f"--benchmark-json {kept}: exists, and would be written over" in proc.stderr, \
        proc.stdout[-2000:] + proc.stderr[-2000:]
    assert kept.read_text() == "baseline" and not (tmp_path / "r").exists()
