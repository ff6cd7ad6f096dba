"""README.md and docs/ say what the code does: the figure blocks are what their commands print
today (`make figures` rewrites them), every command shown parses or names a real target, every
relative link leads somewhere, and the tables copied from the code are the code's."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from bench.figures import BLOCKS, DOCS, README, REPO, found, pages, same, size

# The reference pages: each says on its first line after the title whom it is for.
REFERENCE: tuple[str, ...] = ("using", "models", "skills", "lab", "security", "configuration")
REFERENCE += ("benchmarks", "contributing")
# What a page may name that a build or a run writes, not the repository.
GENERATED = {"bench/results.json"}


def text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def doc(name: str) -> str:
    return text(DOCS / f"{name}.md")


@pytest.mark.slow
def test_every_figure_block_is_current() -> None:
    where = found()
    assert set(where) == set(BLOCKS), where.keys()
    for name, make in BLOCKS.items():
        assert len(where[name]) == 1, f"block {name!r} is in {[p for p, _ in where[name]]}"
        ((page, shown),) = where[name]
        assert same(name, shown, make()), (
            f"{page.relative_to(REPO)} block {name!r} is stale: run `make figures`"
        )


def test_the_size_figures_hold() -> None:
    """The README's line counts are within 10% of the files' (fast: no command runs)."""
    ((page, shown),) = found()["size"]
    assert page == README
    assert same("size", shown, size()), f"README.md's sizes are stale: run `make figures`\n{size()}"


def test_a_size_off_by_more_than_a_tenth_is_stale() -> None:
    assert same("size", "the loop 248 lines", "the loop 270 lines")  # 8% under
    assert not same("size", "the loop 220 lines", "the loop 248 lines")  # 11% under
    assert not same("size", "the loop 2,148 lines", "the loop 1,948 lines")  # 10.3% over
    assert not same("size", "the loop 248 lines", "the agent loop 248 lines")


def test_the_readme_is_a_front_door() -> None:
    lines = text(README).splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move reference text to docs/"
    assert "afternoon" not in text(README)  # the size claim is the measured block


def test_each_reference_page_says_whom_it_is_for() -> None:
    """Its title, then one line: "For skill authors: ...", then a blank line."""
    for name in REFERENCE:
        title, blank, first, after = doc(name).splitlines()[:4]
        assert title.startswith("# ") and blank == after == "", name
        assert first.startswith("For "), f"docs/{name}.md: {first!r}"


def _using_it_lines() -> list[str]:
    body = text(README)
    block = body[body.index("## Using it") :].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = []
    for raw in block.splitlines():
        command = raw.split("  #", 1)[0].strip()
        if "mca" in command:
            lines.append(command[command.index("mca") :])
    return lines


def _parses(argv: list[str]) -> bool:
    """Whether mca's own parsers take argv (argparse exits on what they do not)."""
    from mca.cli.args import parse_command, repl_parser

    try:
        if parse_command(argv) is None:  # a subcommand parses whole, or argparse exits
            repl_parser().parse_args(argv)
    except SystemExit:
        return False
    return True


def test_the_using_it_commands_parse() -> None:
    lines = _using_it_lines()
    assert len(lines) >= 10
    for line in lines:
        argv = shlex.split(line.replace("[--json]", "--json"))[1:]
        assert _parses(argv), line


SEPARATORS = {"|", "||", "&&", ";"}
ASSIGNMENT = re.compile(r"[A-Z_][A-Z0-9_]*=")


def shown_commands(body: str) -> list[list[str]]:
    """Each simple command of the page's ```sh blocks, as words: pipelines and `&&` lists
    split, `\\` continuations joined, comments and leading VAR=value assignments dropped, and
    the brackets of an optional part (`[--json]`) taken off."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", body, re.S | re.M):
        for line in block.replace("\\\n", " ").splitlines():
            lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
            lexer.whitespace_split = True
            words: list[str] = []
            for word in [*lexer, ";"]:
                if word not in SEPARATORS:
                    words.append(word.strip("[]"))
                    continue
                while words and ASSIGNMENT.match(words[0]):
                    words.pop(0)
                if words:
                    commands.append(words)
                words = []
    return commands


def _targets() -> set[str]:
    makefile = text(REPO / "Makefile")
    return set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))


def test_every_shown_command_parses_or_names_what_exists() -> None:
    """mca lines parse with mca's parsers and make lines name real targets, on every page."""
    targets = _targets()
    seen = {"mca": 0, "make": 0}
    wrong = []
    for page in pages():
        for words in shown_commands(text(page)):
            line = f"{page.relative_to(REPO)}: {shlex.join(words)}"
            if words[0] == "mca":
                ok = _parses(words[1:])
            elif words[0] == "make":
                ok = all(w in targets for w in words[1:] if not ASSIGNMENT.match(w))
            else:
                continue
            seen[words[0]] += 1
            if not ok:
                wrong.append(line)
    assert wrong == []
    assert seen["mca"] >= 40 and seen["make"] >= 15, seen


def test_every_module_run_with_python_m_exists() -> None:
    wrong, seen = [], 0
    for page in pages():
        for name in re.findall(r"`python -m ([\w.]+)", text(page)):
            seen += 1
            module = REPO / name.replace(".", "/")
            if not (module.with_suffix(".py").exists() or (module / "__main__.py").exists()):
                wrong.append(f"{page.name}: {name}")
    assert wrong == [] and seen >= 10, (wrong, seen)


def test_the_command_reader_sees_through_pipes_lists_and_continuations() -> None:
    body = (
        "```sh\n"
        "cd x && printf 'a\\n' | mca ledger compare  # a comment\n"
        "MCA_MODEL=m \\\n  mca skills eval F [--json]\n"
        "# only a comment\n"
        "```\n"
    )
    assert shown_commands(body) == [
        ["cd", "x"],
        ["printf", "a\\n"],
        ["mca", "ledger", "compare"],
        ["mca", "skills", "eval", "F", "--json"],
    ]


def test_the_command_table_is_the_repl_s() -> None:
    from mca.ui.commands import SlashCommands

    body = doc("using")
    table = body[body.index("| command | what it does |") :].split("\n\n", 1)[0]
    documented = set(re.findall(r"^\| `(/[a-z]+)", table, re.M))
    names = set(SlashCommands(None).table)  # type: ignore[arg-type]  # the table needs no REPL
    assert documented == names, documented ^ names


def anchors(body: str) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    out = set()
    for heading in re.findall(r"^#{1,6} (.+)$", body, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def _without_code(body: str) -> str:
    return re.sub(r"^```.*?^```", "", body, flags=re.S | re.M)


def test_every_relative_link_leads_to_a_file_and_heading() -> None:
    wrong = []
    for page in pages():
        for target in re.findall(r"\]\(([^)\s]+)\)", _without_code(text(page))):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            goal = (page.parent / path).resolve() if path else page
            if not goal.exists():
                wrong.append(f"{page.name}: {target}")
            elif anchor and anchor not in anchors(text(goal)):
                wrong.append(f"{page.name}: {target} (no such heading)")
    assert wrong == []


def test_every_path_the_pages_name_exists() -> None:
    """Paths in backquotes (`mca/skills/stage.py`) are today's tree; ARCHITECTURE.md's are held
    by tests/test_architecture.py."""
    wrong = []
    for page in pages():
        if page.name == "ARCHITECTURE.md":
            continue
        for path in re.findall(
            r"`((?:mca|tests|bench|fixtures|skills|docs)/[\w./-]*)`", text(page)
        ):
            if path not in GENERATED and not (REPO / path).exists():
                wrong.append(f"{page.name}: {path}")
    assert wrong == []


def test_the_secret_table_is_the_code_s() -> None:
    """docs/security.md's table of secrets is SECRET_PATHS, no more and no fewer."""
    from mca.sandbox.rights import SECRET_PATHS

    body = doc("security")
    table = body[body.index("| kind | paths |") :].split("\n\n", 1)[0]
    shown = [p for row in table.splitlines()[2:] for p in re.findall(r"`(~[^`]*)`", row)]
    assert len(shown) == len(set(shown)), "a path is in the table twice"
    assert set(shown) == set(SECRET_PATHS), set(shown) ^ set(SECRET_PATHS)


def test_the_table_of_tools_variables_is_the_code_s() -> None:
    """docs/security.md's table of the variables that move credentials is SECRET_VARIABLES."""
    from mca.sandbox.credentials import SECRET_VARIABLES

    body = doc("security")
    table = body[body.index("| kind | variables |") :].split("\n\n", 1)[0]
    shown = [v for row in table.splitlines()[2:] for v in re.findall(r"`\$([^`]*)`", row)]
    code = [f"{name}/{below}" if below else name for name, below in SECRET_VARIABLES]
    assert sorted(shown) == sorted(code), set(shown) ^ set(code)
