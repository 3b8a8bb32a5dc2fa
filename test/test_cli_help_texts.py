"""Issue 22, item 4: help texts in plain words.

Quoted failure covered here: "Help texts show raw ``backquotes`` and 'seed 000/004' that mean nothing to a user ...
``modal-map --help`` prints its description twice". Every subcommand's ``--help`` (and ``bag``'s actions') is
scanned for reStructuredText markup (double backquotes, ``:mod:`` roles), the project's internal paper numbers
("seed 000") and a paragraph printed twice.
"""
from __future__ import annotations

import re

import pytest

from flexrobot_ros.cli import COMMANDS, DESCRIPTION, build_parser

BAG_ACTIONS = ("record", "play", "info", "repair")


def help_text(*argv: str) -> str:
    """The text ``flexrobot ARGV --help`` prints."""
    parser = build_parser(argv[0] if argv else None)
    for name in argv:
        parser = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict)
                      and name in a.choices).choices[name]
    return parser.format_help()


def paragraphs(text: str) -> list[str]:
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", text) if block.strip()]


CASES = [()] + [(name,) for name in COMMANDS] + [("bag", action) for action in BAG_ACTIONS]


@pytest.mark.parametrize("argv", CASES, ids=[" ".join(c) or "flexrobot" for c in CASES])
def test_help_is_plain_words_without_repeats(argv):
    text = help_text(*argv)
    assert "``" not in text and ":mod:" not in text and ":class:" not in text and ":func:" not in text, text
    assert not re.search(r"\bseeds? 0\d\d\b", text), text
    seen = paragraphs(text)
    repeated = {p for p in seen if seen.count(p) > 1}
    assert not repeated, repeated
    first_lines = [line.strip() for line in text.splitlines() if len(line.strip()) > 40]
    assert len(first_lines) == len(set(first_lines)), [l for l in first_lines if first_lines.count(l) > 1]


def test_top_level_summaries_are_plain_words():
    for summary in (DESCRIPTION, *COMMANDS.values()):
        assert "``" not in summary and not re.search(r"\bseed 0\d\d\b", summary), summary
