"""The README's exact figures are what the commands print today (`make figures` rewrites them)."""

from __future__ import annotations

import pytest

from bench.figures import BLOCKS, README, blocks, same


@pytest.mark.slow
def test_every_figure_block_is_current() -> None:
    found = blocks(README.read_text(encoding="utf-8"))
    assert set(found) == set(BLOCKS), found.keys()
    for name, make in BLOCKS.items():
        assert same(name, found[name], make()), (
            f"README block {name!r} is stale: run `make figures`"
        )


def _using_it_lines() -> list[str]:
    text = README.read_text(encoding="utf-8")
    block = text[text.index("## Using it") :].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = []
    for raw in block.splitlines():
        command = raw.split("  #", 1)[0].strip()
        if "mca" in command:
            lines.append(command[command.index("mca") :])
    return lines


def test_the_using_it_commands_parse() -> None:
    import shlex

    from mca.cli_args import parse_command, repl_parser

    lines = _using_it_lines()
    assert len(lines) >= 10
    for line in lines:
        argv = shlex.split(line.replace("[--json]", "--json"))[1:]
        if parse_command(argv) is None:  # a subcommand parses whole, or argparse exits
            repl_parser().parse_args(argv)  # exits (fails the test) on a flag mca lacks


def test_the_command_table_is_the_repl_s() -> None:
    import re

    from mca.ui.commands import SlashCommands

    text = README.read_text(encoding="utf-8")
    table = text[text.index("| command | what it does |") :].split("\n\n", 1)[0]
    documented = set(re.findall(r"^\| `(/[a-z]+)", table, re.M))
    names = set(SlashCommands(None).table)  # type: ignore[arg-type]  # the table needs no REPL
    assert documented == names, documented ^ names
