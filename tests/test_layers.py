"""The package's import structure (ARCHITECTURE.md, "Layout"): layers that
import one way, no cycles, and no old top-level names.

Layers, lowest first: ``epochbench.instances`` <- ``epochbench.heuristics``,
``epochbench.exact`` (never each other) <- ``epochbench.sim`` (reaches
methods through the registry; its compiled loop imports the BL and BB
scores of ``epochbench.heuristics._greedy`` only, so that both engines
compute the same numbers) <- the application layer (every other ``epochbench.*`` module, from ``bench/``).
Every import counts for the layer rule, at module level or inside a
function; cycles are looked for among module-level imports.  The files are
parsed, not imported.
"""
from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
#: package -> folder, as pyproject.toml's package-dir maps them
PACKAGE_DIR = PYPROJECT["tool"]["setuptools"]["package-dir"]
OLD_NAMES = ("instances", "heuristics", "exact", "sim", "bench")
LAYER = {"epochbench.instances": 0, "epochbench.heuristics": 1, "epochbench.exact": 1, "epochbench.sim": 2}
APP = 3
#: pairs of packages of one layer that must not import each other
SIBLINGS = {("epochbench.heuristics", "epochbench.exact"), ("epochbench.exact", "epochbench.heuristics")}


def _module_files() -> dict[str, Path]:
    """Module name -> file, for every module of the package."""
    out = {}
    for pkg, folder in PACKAGE_DIR.items():
        base = ROOT / folder
        for path in base.rglob("*.py"):
            rel = path.relative_to(base).with_suffix("")
            parts = list(rel.parts)
            sub = ".".join([pkg, *parts])
            if parts[0] in {Path(f).name for f in PACKAGE_DIR.values()} - {Path(folder).name}:
                continue                                   # another mapping's folder
            if sub.split(".")[:2] != pkg.split(".")[:2] and pkg != "epochbench":
                continue
            name = sub[:-len(".__init__")] if sub.endswith(".__init__") else sub
            out.setdefault(name, path)
    return out


MODULES = _module_files()


def _package_of(module: str, path: Path) -> str:
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _package_of(module, path).split(".")
    base = base[:len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _targets(module: str, path: Path, node) -> list[str]:
    """The epochbench modules an import statement loads."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        src = _resolve(module, path, node)
        names = [f"{src}.{a.name}" if f"{src}.{a.name}" in MODULES else src for a in node.names]
    return [n for n in names if n == "epochbench" or n.startswith("epochbench.")]


def _imports(module: str, path: Path) -> list[tuple[str, int, bool]]:
    """(target, line, at module level) of every epochbench import of ``module``."""
    tree = ast.parse(path.read_text(), str(path))
    top = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            top.add(id(node))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for t in _targets(module, path, node):
                out.append((t, node.lineno, id(node) in top))
    return out


def _layer(module: str) -> tuple[int, str]:
    for pkg, rank in LAYER.items():
        if module == pkg or module.startswith(pkg + "."):
            return rank, pkg
    return APP, "epochbench"


def test_every_module_is_found():
    assert {"epochbench", "epochbench.cli", "epochbench.instances.registry", "epochbench.sim.engine",
            "epochbench.heuristics.packing", "epochbench.exact.packing", "epochbench.experiments",
            "epochbench.benchmarks.plugin"} <= set(MODULES)


def test_sim_imports_no_method_but_the_greedy_scores():
    """``sim`` reaches methods by name through the registry; the one module of
    a method layer it imports is the greedy heuristics' compiled scores
    (BL-EASY and BB-EASY's compiled loop, sim/greedy_fast.py)."""
    seen = {(target, f"{path.relative_to(ROOT)}:{line}")
            for module, path in MODULES.items() if _layer(module)[1] == "epochbench.sim"
            for target, line, _ in _imports(module, path) if _layer(target)[0] == 1}
    assert {t for t, _ in seen} == {"epochbench.heuristics._greedy"}, sorted(seen)


def test_imports_point_down_the_layers():
    bad = []
    for module, path in sorted(MODULES.items()):
        rank, pkg = _layer(module)
        if module == "epochbench":
            continue
        for target, line, _ in _imports(module, path):
            trank, tpkg = _layer(target)
            if target == "epochbench" and rank < APP:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {module} imports the application layer ({target})")
            elif trank > rank or (pkg, tpkg) in SIBLINGS:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {module} (layer {pkg}) imports {target}")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v, counter=[0]):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    graph = {m: {t for t, _, top in _imports(m, p) if top and t in MODULES and t != m}
             for m, p in MODULES.items()}
    # a package's __init__ importing its own submodules is the package's face, not a cycle
    for m in graph:
        graph[m] = {t for t in graph[m] if not (t.startswith(m + ".") and MODULES[m].name == "__init__.py")}
    cycles = _cycles(graph)
    assert not cycles, "import cycles (module level):\n" + "\n".join(" <-> ".join(c) for c in cycles)


def test_importing_the_package_is_light():
    """``epochbench/__init__`` imports nothing of its own at module level
    (the face resolves on first use)."""
    tree = ast.parse(MODULES["epochbench"].read_text())
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    names = [n.module if isinstance(n, ast.ImportFrom) else n.names[0].name for n in top]
    assert all(n in ("__future__", "importlib") for n in names), names


# ---- no old top-level names ---------------------------------------------------------------
OLD = "|".join(OLD_NAMES)
STRING_PATTERNS = [
    re.compile(rf"import_module\(\s*[fr]?[\"']({OLD})(\.|[\"'])"),        # importlib.import_module("sim.x")
    re.compile(rf"-m\s+({OLD})\."),                                           # python -m bench.cli
    re.compile(rf"setattr\(\s*[\"']({OLD})\."),                               # monkeypatch.setattr("sim.x.y", ...)
    re.compile(rf"(?:=|:)\s*({OLD})\.[\w.]+:\w+"),                          # entry point "name = sim.x:f"
    re.compile(rf"(?:[\"';]|\\n)\s*(?:import|from)\s+({OLD})(?:\.|\s)"),     # code in a string: "import sim.x"
]


def _python_files():
    for folder in (*PACKAGE_DIR.values(), "tests"):
        yield from sorted((ROOT / folder).rglob("*.py"))
    yield ROOT / "conftest.py"


@pytest.mark.parametrize("path", list(_python_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_old_top_level_names(path):
    text = path.read_text()
    bad = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if a.name.split(".")[0] in OLD_NAMES]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] in OLD_NAMES:
                bad.append(node.module)
    if path != Path(__file__).resolve():                  # this file spells the patterns out
        for pat in STRING_PATTERNS:
            bad += [m.group(0) for m in pat.finditer(text)]
    assert not bad, f"{path.relative_to(ROOT)} uses old top-level names: {bad}"


def test_no_old_names_in_the_project_metadata():
    text = (ROOT / "pyproject.toml").read_text()
    scripts = PYPROJECT["project"]["scripts"]
    assert all(v.startswith("epochbench.") for v in scripts.values()), scripts
    for group in PYPROJECT["project"].get("entry-points", {}).values():
        assert all(v.startswith("epochbench.") for v in group.values()), group
    assert not re.search(rf"^\s*packages\s*=.*\b({OLD})\b[\"']", text, re.M) or "epochbench" in text
