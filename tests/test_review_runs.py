"""Findings of a review of the files and records runs leave behind, each
reproduced first; every test fails on the code before its fix.

1. A Ctrl-C that landed while OR-Tools (a pybind11 extension) first
   loaded became ``ImportError("initialization failed")``, read as the
   solver's failure: the command went on solving, recorded a failed run
   and exited 1.
2. Two ``experiment`` runs without ``--out`` started in the same second
   picked one run folder, and the second was refused ("in use") where the
   README promises it a folder of its own (``-2``).
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from epochbench import cli, runs
from epochbench.instances.lazy import LazyModule


# ---- 1 ------------------------------------------------------------------------------------------------
@pytest.fixture
def failing_module(tmp_path, monkeypatch):
    """A module whose import fails as a pybind11 extension's does when a
    Ctrl-C (or the command line's SIGTERM) lands while it initialises."""
    def make(name: str, interrupt: str) -> str:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(f"""
            from epochbench.cli import Terminated
            try:
                raise {interrupt}
            except KeyboardInterrupt as exc:
                raise ImportError("initialization failed") from exc
            """))
        return name
    monkeypatch.syspath_prepend(str(tmp_path))
    return make


@pytest.mark.parametrize("interrupt", ["KeyboardInterrupt()", "Terminated('stopped by SIGTERM')"])
def test_an_interrupt_while_a_solver_module_loads_stays_an_interrupt(failing_module, interrupt):
    lazy = LazyModule(failing_module(f"test_interrupted_{interrupt[0]}", interrupt))
    with pytest.raises(KeyboardInterrupt) as info:
        lazy.load()
    assert type(info.value).__name__ == interrupt.split("(")[0]


def test_an_import_error_of_its_own_is_left_as_it_is(tmp_path, monkeypatch):
    (tmp_path / "test_broken_solver.py").write_text("raise ImportError('no libfoo.so')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ImportError, match="no libfoo"):
        LazyModule("test_broken_solver").load()
    from epochbench.instances.lazy import interrupt_behind
    assert interrupt_behind(ValueError("x")) is None


_INJECT = textwrap.dedent("""
        import importlib.abc, os, signal, sys

        class Hook(importlib.abc.MetaPathFinder):
            fired = False

            def find_spec(self, name, path, target=None):
                if name == TARGET and not Hook.fired:
                    Hook.fired = True
                    os.kill(os.getpid(), signal.SIGINT)
                return None

        TARGET = sys.argv.pop(1)
        sys.meta_path.insert(0, Hook())
        from epochbench.cli import main
        code = main(sys.argv[1:])
        print("fired" if Hook.fired else "not fired", file=sys.stderr)
        sys.exit(code)
        """)


def _interrupted_at(tmp_path, target: str, *argv: str) -> subprocess.CompletedProcess:
    """``epochbench ARGV`` in a process of its own, sent a real SIGINT at the
    moment module ``target`` is first looked for (skipped when it never is)."""
    (tmp_path / "inject.py").write_text(_INJECT)
    proc = subprocess.run([sys.executable, str(tmp_path / "inject.py"), target, *argv], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    if "not fired" in proc.stderr:
        pytest.skip(f"{target} is no longer imported on this path: nothing to inject")
    return proc


@pytest.fixture
def family(tmp_path):
    fam = tmp_path / "fam"
    assert cli.main(["generate", "leinberger", "--out", str(fam), "--n", "8", "--k", "2", "--count", "1",
                     "--seed", "1"]) == 0
    return fam


def test_a_ctrl_c_while_cp_sat_first_loads_ends_the_command_as_interrupted(tmp_path, family):
    """The review's injection: OR-Tools' CP-SAT extension imports its nested module."""
    proc = _interrupted_at(tmp_path, "ortools.util.python.sorted_interval_list", "score", str(family),
                           "--methods", "ff,cpsat", "--workers", "1", "--time-limit", "2")
    assert proc.returncode == 130, proc.stderr
    assert not list(family.glob("scores*.csv"))
    records = [r for r in runs.find_runs(family) if r.get("command") == "score"]
    assert [r["status"] for r in records] == ["interrupted"]


@pytest.mark.parametrize("method", ["milp-cbc", "milp-highs"])
def test_a_ctrl_c_while_pulp_loads_highspy_ends_the_command_as_interrupted(tmp_path, family, method):
    """PuLP imports highspy inside a bare ``except``: a Ctrl-C there was
    swallowed, and ``solve`` ran to its answer (a diff review)."""
    inst = next(family.glob("leinberger-*.json"))
    proc = _interrupted_at(tmp_path, "highspy._core", "solve", str(inst), "--method", method, "--time-limit", "5")
    assert proc.returncode == 130 and "interrupted" in proc.stderr, proc.stderr


# ---- 2 ------------------------------------------------------------------------------------------------
def test_a_run_folder_another_run_holds_gives_way_to_the_next_name(tmp_path, monkeypatch):
    """Two runs started in the same second both chose ``results/rajaei-STAMP``
    while it did not exist; the other locked it first: this one takes
    ``-2``.  A ``--name`` that another run holds is its own error."""
    from epochbench.instances.files import OutputBusy
    monkeypatch.setattr(runs, "stamp", lambda when=None: "20261204-004252")
    taken = tmp_path / "results" / "rajaei-20261204-004252"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from epochbench.instances.files import output_lock
        with output_lock({str(taken)!r}):
            print("held", flush=True)
            time.sleep(60)
        """)], stdout=subprocess.PIPE, text=True)
    choose, calls = runs.run_folder, []

    def chosen_before_it_was_made(root, command, name=None, resumable=None):
        calls.append(name)
        return taken if len(calls) == 1 else choose(root, command, name, resumable)

    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(runs, "run_folder", chosen_before_it_was_made)
        folder, held = runs.claim_run_folder(tmp_path / "results", "rajaei")
        with held:
            assert folder == tmp_path / "results" / "rajaei-20261204-004252-2" and folder.is_dir()
        assert len(calls) == 2                                      # the held one was tried, then the next
        calls.clear()
        with pytest.raises(OutputBusy):
            runs.claim_run_folder(tmp_path / "results", "rajaei", name="rajaei-20261204-004252")
    finally:
        holder.kill()
        holder.wait()


def test_a_new_run_folder_an_ended_run_wrote_meanwhile_is_not_shared(tmp_path, monkeypatch):
    """The name was free when chosen; by the time this run locked it, a run
    of the same second had written it and ended: the next name."""
    monkeypatch.setattr(runs, "stamp", lambda when=None: "20261204-004252")
    first = tmp_path / "results" / "rajaei-20261204-004252"
    choose = runs.run_folder

    def chosen_then_written(*args, **kwargs):
        folder = choose(*args, **kwargs)
        if folder == first and not first.exists():
            first.mkdir(parents=True)
            (first / "rajaei.csv").write_text("x\n1\n")
        return folder

    monkeypatch.setattr(runs, "run_folder", chosen_then_written)
    folder, held = runs.claim_run_folder(tmp_path / "results", "rajaei")
    with held:
        assert folder.name == "rajaei-20261204-004252-2"
    assert (first / "rajaei.csv").read_text() == "x\n1\n"
