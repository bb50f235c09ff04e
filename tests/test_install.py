"""A plain (non-editable) install: one top-level package ``epochbench``,
importable and runnable from any directory, no file outside the package,
no default data folder."""
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


#: what the wheel is not built from (environments, build outputs, caches)
NOT_SOURCE = shutil.ignore_patterns(".git", ".venv", "build", "dist", "results", "*.egg-info", "__pycache__",
                                    ".hypothesis", ".pytest_cache", ".benchmarks")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A wheel built from a copy of the checkout: a build in the checkout itself writes ``build/`` and
    ``*.egg-info`` there, and two test processes (``pytest -n``) building at once break each other."""
    src = tmp_path_factory.mktemp("src") / "epochbench"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCE)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(src), "-w", str(out)],
                          capture_output=True, text=True, timeout=300)
    wheels = list(out.glob("epochbench-*.whl"))
    if proc.returncode != 0 or not wheels:
        pytest.skip(f"cannot build a wheel here (pip wheel: {proc.stderr.strip().splitlines()[-1:]})")
    return wheels[0]


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    return target


def test_the_wheel_holds_one_top_level_package(wheel):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        top = next(n for n in names if n.endswith("top_level.txt"))
        assert z.read(top).decode().split() == ["epochbench"]
        entry = next(n for n in names if n.endswith("entry_points.txt"))
        assert "epochbench = epochbench.cli:main" in z.read(entry).decode()
    outside = [n for n in names if not n.startswith(("epochbench/", "epochbench-"))]
    assert not outside, outside
    for part in ("epochbench/instances/", "epochbench/heuristics/", "epochbench/exact/", "epochbench/sim/",
                 "epochbench/experiments/", "epochbench/benchmarks/bench_packing.py",
                 "epochbench/benchmarks/conftest.py", "epochbench/benchmarks/plugin.py"):
        assert any(n.startswith(part) for n in names), part
    assert not any("tests/" in n or n.endswith("/results") for n in names)


def _run(installed, tmp_path, code: str, *extra, env_extra=None):
    env = {k: v for k, v in os.environ.items() if k != "EPOCHBENCH_DATA"}
    env["PYTHONPATH"] = str(installed)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, *extra, "-c", code] if code else [sys.executable, *extra],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_installed_package_imports_and_runs_from_an_empty_directory(installed, tmp_path):
    proc = _run(installed, tmp_path, "import epochbench, sys; print(epochbench.__file__); "
                                     "print(epochbench.__version__); "
                                     "print(sorted(m for m in ('ortools', 'pulp', 'highspy') if m in sys.modules))")
    assert proc.returncode == 0, proc.stderr
    where, version, heavy = proc.stdout.split("\n")[:3]
    assert Path(where).resolve().is_relative_to(installed.resolve())
    assert version and heavy == "[]"
    proc = _run(installed, tmp_path, "", "-m", "epochbench.cli", "--version")
    assert proc.returncode == 0 and proc.stdout.startswith("epochbench "), proc.stderr
    proc = _run(installed, tmp_path, "", "-m", "epochbench.cli", "list", "--policies")
    assert proc.returncode == 0 and "pool:" in proc.stdout and "farm:" in proc.stdout, proc.stderr
    assert list(tmp_path.iterdir()) == []                      # nothing written where it ran


def test_installed_package_has_no_default_data_folder(installed, tmp_path):
    proc = _run(installed, tmp_path, "from epochbench.instances.data import data_root, NOT_SET; "
                                     "print(data_root() == NOT_SET)")
    assert proc.stdout.strip() == "True", proc.stderr
    proc = _run(installed, tmp_path, "from epochbench.instances.data import data_root; print(data_root())",
                env_extra={"EPOCHBENCH_DATA": str(tmp_path)})
    assert proc.stdout.strip() == str(tmp_path)
    proc = _run(installed, tmp_path, "", "-m", "epochbench.cli", "--data", str(tmp_path / "nowhere"),
                "generate", "vbp", "--out", "v", "--classes", "1")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "nowhere" in proc.stderr, proc.stderr
