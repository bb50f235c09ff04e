"""The bibliography a reader can follow: every key cited in brackets exists
in ``epochbench.references``, docs/references.md is generated from it, and
nothing cites the specification's papers by their file numbers."""
import re
import subprocess
from pathlib import Path

import pytest

from epochbench.references import REFERENCES, SEEDS, cite, markdown

ROOT = Path(__file__).resolve().parents[1]
#: a citation: a bracketed key that ends in a year, or one of the undated keys
KEY = re.compile(r"\[([a-z]+\d{4}[a-z]?|[a-z]+-(?:dadfar|notes|comparative))\]")
FILES = [ROOT / f for f in subprocess.run(["git", "ls-files", "*.py", "*.md"], cwd=ROOT, capture_output=True,
                                          text=True).stdout.split()] or sorted(ROOT.rglob("*.py"))


def test_docs_references_is_generated_from_the_module():
    assert (ROOT / "docs" / "references.md").read_text() == markdown()


def test_every_cited_key_exists():
    missing = {}
    for path in FILES:
        if path.exists():
            for key in KEY.findall(path.read_text()):
                if key not in REFERENCES:
                    missing.setdefault(key, path.relative_to(ROOT))
    assert not missing, missing


def test_the_five_source_papers_are_cited_and_complete():
    assert sorted(SEEDS) == ["000", "001", "002", "003", "004"]
    for key in SEEDS.values():
        r = REFERENCES[key]
        assert r.authors and r.title and r.venue and r.note
    assert "doi.org/10.1145/1362622.1362686" in cite("capannini2007")
    with pytest.raises(KeyError, match="no reference"):
        cite("nobody2099")


@pytest.mark.parametrize("path", [p for p in FILES if p.suffix == ".py" and "tests" not in p.parts],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_no_citation_by_seed_file_number(path):
    assert not re.search(r"\b[Ss]eeds? 00[0-4]\b", path.read_text())


def test_license_citation_and_changelog_exist():
    assert "BSD 3-Clause" in (ROOT / "LICENSE").read_text() or "Redistribution and use" in (ROOT / "LICENSE").read_text()
    cff = (ROOT / "CITATION.cff").read_text()
    assert "cff-version: 1.2.0" in cff and "title: epochbench" in cff
    assert "## [Unreleased]" in (ROOT / "CHANGELOG.md").read_text()


def test_every_builtin_heuristic_cites_its_paper():
    """A heuristic's docstring names the paper (by key) it implements."""
    import inspect

    from epochbench.instances.registry import methods
    silent = [f"{m.family}:{m.name}" for m in methods()
              if m.kind == "heuristic" and m.origin == "builtin" and not m.func.__name__.startswith("epochs_")
              and not KEY.search(inspect.getdoc(m.func) or "")]
    assert not silent, silent


def test_every_builtin_heuristic_has_numpydoc_sections():
    """Parameters, Returns and References (numpydoc) on every built-in heuristic."""
    import inspect

    from epochbench.instances.registry import methods
    missing = []
    for m in methods():
        if m.kind != "heuristic" or m.origin != "builtin" or m.func.__name__.startswith("epochs_"):
            continue
        doc = inspect.getdoc(m.func) or ""
        missing += [f"{m.family}:{m.name} {s}" for s in ("Parameters\n----------", "Returns\n-------",
                                                          "References\n----------") if s not in doc]
    assert not missing, missing
