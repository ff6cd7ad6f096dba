"""Diffs for people: split at \\n only, every character readable, whole when asked about."""

from __future__ import annotations

from mca.text.diff import CRLF_NOTE, MAX_DIFF_LINES, NO_EOL, unified


def test_lines_break_at_newlines_only_and_the_rest_shows_as_codes() -> None:
    diff = unified("a.txt", b"x\n", "x\ny\x1cz\u2028w\rv\t \n".encode())
    assert diff.splitlines()[-1] == "+y^\\z\\u2028w^Mv\\t[space]"


def test_a_diff_asked_about_is_never_folded() -> None:
    new = "".join(f"line {i}\n" for i in range(300)).encode()
    assert "+line 299" in unified("a.txt", None, new, None)
    assert "+line 299" in unified("a.txt", b"x\n", new, None)
    folded = unified("a.txt", b"x\n", new)
    assert "more diff lines not shown" in folded and len(folded.splitlines()) == MAX_DIFF_LINES + 1


def test_the_final_newline_is_a_change() -> None:
    diff = unified("a.txt", b"a", b"a\n")
    assert diff.splitlines()[-3:] == ["-a", NO_EOL, "+a"]
    assert unified("a.txt", None, b"one\ntwo").endswith(f"+two\n{NO_EOL}")


def test_crlf_files_are_split_at_crlf_and_say_so() -> None:
    diff = unified("a.txt", b"a\r\nb\r\n", b"a\r\nc\r\n")
    assert diff.startswith(CRLF_NOTE) and "-b\n+c" in diff and "^M" not in diff
    mixed = unified("a.txt", b"a\r\nb\r\n", b"a\nb\r\n")
    assert "+a\n" in mixed and "-a^M" in mixed  # a change of line ending is a change


def test_the_path_is_shown_exactly() -> None:
    assert unified("a\u200b.txt", None, b"x\n").startswith("new file a\\u200b.txt (1 line)")
