"""What a person approves is what they see: any text shown in an approval (a write's diff, a
command, the question's path), drawn by a terminal emulator (pyte, fed the bytes mca wrote),
shows every code point of the original, as itself or as its code, on as many lines."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pyte
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mca.text.diff import file_diff
from mca.tools.allow import CommandQuestion
from mca.ui.face import FaceConfig
from mca.ui.oneshot import StderrUI
from mca.ui.terminal import ReplUI

EXAMPLES = 300
# Any text, weighted towards what hides: controls, breaks, joiners, marks, tags, wide letters.
TRICKY = "\x00\x1b\r\t\x0b\x0c\x1c\x85\u2028\u2029\u200b\u200d\u061c\u0301\u1160\ufe0f\U000e0041"


def texts(codec: str | None) -> st.SearchStrategy[str]:
    """Any text (`codec`: only what it encodes), weighted towards the characters that hide."""
    tricky = st.sampled_from(TRICKY + " \n中é")
    return st.text(st.one_of(st.characters(codec=codec), tricky), max_size=60)


text = texts("utf-8")  # a file's content: what write_file encodes
any_text = texts(None)  # a command or a path may hold lone surrogates (JSON escapes, file names)
COUNTED = re.compile(r"\[(\d+) spaces\]|\[space\]")


def codes(c: str) -> list[str]:
    """Every way mca may show a character it does not draw as itself."""
    i = ord(c)
    forms = [f"\\u{i:04x}", f"\\U{i:08x}", f"\\x{i:02x}"]
    forms += ["^" + chr(i + 64)] if i < 32 else ["^?"] if i == 0x7F else []
    return [*forms, "\\t"] if c == "\t" else forms


def shows(original: str, row: str) -> bool:
    """`row` shows each code point of `original` in order, as itself or as a code; a run of
    spaces may be counted ("[3 spaces]"), an empty line named; nothing else is on the row."""
    if not original and row in ("", "(empty line)"):
        return True
    i = pos = 0
    while i < len(original):
        c = original[i]
        if row.startswith(c, pos):
            i, pos = i + 1, pos + 1
            continue
        counted = COUNTED.match(row, pos) if c == " " else None
        run = len(original) - i - len(original[i:].lstrip(" "))
        if counted and int(counted.group(1) or 1) <= run:
            i, pos = i + int(counted.group(1) or 1), counted.end()
            continue
        form = next((f for f in codes(c) if row.startswith(f, pos)), None)
        if form is None:
            return False
        i, pos = i + 1, pos + len(form)
    return pos == len(row)


def screen(printed: str) -> list[str]:
    """The rows a terminal shows for `printed` (the tty turns each \\n into \\r\\n)."""
    widest = max(len(line) for line in printed.split("\n"))
    term = pyte.Screen(2 * widest + 10, printed.count("\n") + 10)  # nothing wraps or scrolls
    pyte.Stream(term).feed(printed.replace("\n", "\r\n"))
    return [row.rstrip() for row in term.display]


def file_lines(content: str) -> list[str]:
    crlf = "\n" in content and content.count("\n") == content.count("\r\n")
    lines = content.split("\r\n" if crlf else "\n")
    return lines[:-1] if lines[-1] == "" else lines


def check_new_file(printed: str, content: str) -> None:
    lines = file_lines(content)
    rows = screen(printed)
    head = next(i for i, r in enumerate(rows) if r.startswith("new file "))
    start = head + 1 + (rows[head + 1].startswith("(CRLF"))
    shown = rows[start : start + len(lines)]
    assert all(r.startswith("+") for r in shown), shown
    for original, row in zip(lines, shown, strict=True):
        assert shows(original, row[1:]), (original, row)
    after = rows[start + len(lines)] if start + len(lines) < len(rows) else ""
    assert not after.startswith("+"), "more lines on the screen than in the file"


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(text)
def test_a_protected_write_shows_the_new_file_whole(content: str) -> None:
    out = io.StringIO()
    ui = ReplUI(out, lambda q: "n")
    ui.approve_write(
        ".git/config", "git runs it", file_diff(".git/config", None, content.encode(), None)
    )
    check_new_file(out.getvalue(), content)


@pytest.mark.slow
@settings(max_examples=EXAMPLES, deadline=None)
@given(text)
def test_an_ask_mode_write_shows_the_new_file_whole_without_a_terminal_too(content: str) -> None:
    err = io.StringIO()
    ui = StderrUI(
        FaceConfig(workspace=Path("."), home=Path(".")), err=err, stdin=io.StringIO()
    )  # no terminal
    ui.approve_edit("f.txt", file_diff("f.txt", None, content.encode(), None))
    check_new_file(err.getvalue(), content)


def subsequence(lines: list[str], rows: list[str]) -> bool:
    """Each row shows one of `lines`, in their order."""
    it = iter(lines)
    return all(any(shows(line, row) for line in it) for row in rows)


@settings(max_examples=EXAMPLES, deadline=None)
@given(text, text)
def test_an_edit_shows_each_side_line_by_line(before: str, after: str) -> None:
    out = io.StringIO()
    diff = file_diff("f.txt", before.encode(), after.encode(), None)
    ReplUI(out, lambda q: "n").approve_edit("f.txt", diff)
    rows = screen(out.getvalue())
    if "f.txt: no change" in rows:
        assert before == after
        return
    body = rows[next(i for i, r in enumerate(rows) if r.startswith("+++ ")) + 1 :]
    old = [r[1:] for r in body if r[:1] in ("-", " ")]
    new = [r[1:] for r in body if r[:1] in ("+", " ")]
    assert subsequence(file_lines(before), old) and subsequence(file_lines(after), new)


@settings(max_examples=EXAMPLES, deadline=None)
@given(any_text)
def test_a_command_is_shown_whole(command: str) -> None:
    out = io.StringIO()
    ReplUI(out, lambda q: "n").approve(CommandQuestion(command, sandbox="workspace-write"))
    lines = command.split("\n")
    rows = screen(out.getvalue())
    head = next(i for i, r in enumerate(rows) if r.startswith("run_command wants"))
    shown = rows[head + 1 : head + 1 + len(lines)]
    for n, (original, row) in enumerate(zip(lines, shown, strict=True), 1):
        body = row.removeprefix("    ")
        body = body.removeprefix(f"{n:>3} | ") if len(lines) > 1 else body
        assert shows(original, body), (original, row)
    assert not rows[head + 1 + len(lines)].startswith("    "), "more lines than the command has"


@settings(max_examples=EXAMPLES, deadline=None)
@given(any_text.filter(lambda p: "\n" not in p))
def test_the_question_names_the_path_exactly(path: str) -> None:
    asked: list[str] = []

    def no(question: str) -> str:
        asked.append(question)
        return "n"

    ReplUI(io.StringIO(), no).approve_write(path, "r", file_diff(path, b"", b""))
    rows = screen(asked[0])
    question = rows[0]
    assert question.startswith("write ") and question.endswith(" anyway? [y]es / [N]o:")
    assert shows(path, question.removeprefix("write ").removesuffix(" anyway? [y]es / [N]o:"))
