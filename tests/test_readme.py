"""README shows: the two set-up commands and what KernelWatch is within its first ten lines, no line over 200
characters, and a figure table that is exactly what `python -m ci.readme_figures` generates from committed files."""
from __future__ import annotations

import copy

import pytest

from ci.readme_figures import FIGURES, ROOT, figure_row, readme_block, table
from runners.resultfile import load

README = (ROOT / "README.md").read_text()


def test_first_ten_lines_give_the_commands_and_what_it_is():
    head = README.splitlines()[:10]
    assert sum("python3 -m venv .venv" in line for line in head) == 2
    assert head[0] == "# KernelWatch"
    text = " ".join(head)
    for words in ("benchmarks", "It is for", "The first command", "the second runs"):
        assert words in text, words


def test_no_line_over_200_characters():
    long = [(n, len(line)) for n, line in enumerate(README.splitlines(), 1) if len(line) > 200]
    assert long == []


def test_figure_table_is_what_the_command_generates():
    assert readme_block(README) == table(), "python -m ci.readme_figures --write"


def test_sections_other_parts_fill_are_there():
    headings = {line for line in README.splitlines() if line.startswith("## ")}
    assert {"## Security", "## Hardware", "## What we measured"} <= headings


def test_a_file_without_commit_or_with_a_dirty_tree_gives_no_figure():
    fig = FIGURES[0]
    doc = load(ROOT / fig.file)
    assert figure_row(doc, fig)[3] == f"`{doc['run']['git']['commit'][:7]}`"
    dirty = copy.deepcopy(doc)
    dirty["run"]["git"]["dirty"] = True
    with pytest.raises(ValueError, match="dirty"):
        figure_row(dirty, fig)
    dirty["run"]["git"] = {"commit": None, "dirty": False}
    with pytest.raises(ValueError, match="no commit"):
        figure_row(dirty, fig)
