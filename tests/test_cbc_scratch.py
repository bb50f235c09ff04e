"""CBC's files live in one folder per process, and a process killed during a
solve (a sweep's worker stopped with its CBC) does not leave them for good:
its MPS, MST and solution files stayed in the temporary folder, about
0.5 MB a solve (an audit).  The next process that solves removes the
folders of processes that are gone."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

import epochbench as eb
from epochbench.exact import _binary

pytest.importorskip("pulp")


@pytest.fixture
def tmp_root(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(_binary, "_scratch", [])
    return tmp_path


def _gone_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_solve_removes_the_files_of_processes_that_are_gone(tmp_root):
    dead = tmp_root / f"{_binary.SCRATCH_PREFIX}{_gone_pid()}"
    alive = tmp_root / f"{_binary.SCRATCH_PREFIX}{os.getppid()}"          # a process that runs: kept
    other = tmp_root / f"{_binary.SCRATCH_PREFIX}notes"                    # not a folder of ours: kept
    for folder in (dead, alive, other):
        folder.mkdir()
        (folder / "x-pulp.mps").write_text("left by a killed solve")
    inst = eb.generate("leinberger", n=8, k=2, count=1, seed=1)[0]
    res = eb.solve(inst, "milp-cbc", time_limit=5)
    assert res.status == "optimal"
    assert not dead.exists() and alive.exists() and other.exists()
    own = tmp_root / f"{_binary.SCRATCH_PREFIX}{os.getpid()}"
    assert own.is_dir() and not list(own.iterdir())                      # a finished solve leaves nothing


def test_a_process_that_ends_removes_its_folder(tmp_path):
    code = ("import epochbench as eb\n"
            "inst = eb.generate('leinberger', n=8, k=2, count=1, seed=1)[0]\n"
            "print(eb.solve(inst, 'milp-cbc', time_limit=5).status)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    assert out.returncode == 0 and out.stdout.strip() == "optimal", out.stderr
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(_binary.SCRATCH_PREFIX)]
