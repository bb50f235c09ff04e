"""What ``--help`` and ``list`` show a user: every option says what it is,
a docstring's parameter names read as the flags they are, and no line
breaks inside a flag (a docs audit read "a farm of machines machines and
licenses licenses", "--runtime-" / "factor", and "with backend method.")."""
from __future__ import annotations

import argparse
import contextlib
import io
import re

import pytest

from epochbench.cli import build_parser, main


def _parsers(parser, path=("epochbench",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _help(*argv) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return out.getvalue()


def test_every_option_and_argument_has_help():
    missing = [(" ".join(path), a.option_strings or a.dest) for path, p in _parsers(build_parser(""))
               for a in p._actions
               if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)) and not a.help]
    assert missing == []


@pytest.mark.parametrize("columns", ["50", "80", "140"])
def test_no_help_line_breaks_inside_a_flag_or_a_hyphenated_word(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    for path, parser in _parsers(build_parser("")):
        text = parser.format_help()
        assert not re.search(r"\w-\n", text), (path, re.findall(r".*\w-\n", text))


def test_a_generators_parameters_read_as_its_flags():
    text = " ".join(_help("generate", "farm-mkp").split())
    assert "a farm of --machines machines and --licenses licenses" in text
    assert "machines machines" not in text.replace("--machines machines", "")
    los = " ".join(_help("generate", "los").split())
    assert "A machine of --machine processors" in los and "floor(load * machine)" in los   # an expression stays


def test_the_listed_exact_methods_name_their_backend():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["list"]) == 0
    text = out.getvalue()
    assert "with backend method" not in text and "``" not in text and "with backend [" not in text
    assert "Best start set of a packing instance with backend milp-highs; see solve_packing." in text
