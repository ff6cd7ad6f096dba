"""Diffs for people: split at \\n only, every character readable, whole when asked about; the
diff is data (hunks of lines with their kind), drawn by the faces with one function."""

from __future__ import annotations

from mca.text.diff import MAX_DIFF_LINES, DiffLine, FileDiff, Hunk, file_diff, fold
from mca.ui.diff_view import CRLF_NOTE, NO_EOL, draw_diff


def unified(path: str, old: bytes | None, new: bytes, limit: int | None = MAX_DIFF_LINES) -> str:
    """The diff as every face draws it."""
    return draw_diff(file_diff(path, old, new, limit))


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


def test_a_change_is_hunks_of_lines_with_their_kind() -> None:
    diff = file_diff("a.txt", b"a\nb\nc\n", b"a\nB\nc\nd")
    assert diff.kind == "changed" and not diff.was_empty and diff.hidden == 0
    (hunk,) = diff.hunks
    assert (hunk.old_start, hunk.old_count, hunk.new_start, hunk.new_count) == (1, 3, 1, 4)
    assert hunk.lines == (
        DiffLine(" ", "a"),
        DiffLine("-", "b"),
        DiffLine("+", "B"),
        DiffLine(" ", "c"),
        DiffLine("+", "d", no_eol=True),
    )
    assert diff.to_json()["hunks"][0]["lines"][-1] == {"op": "+", "text": "d", "no_eol": True}


def test_folding_keeps_the_head_and_counts_the_rest() -> None:
    new = "".join(f"line {i}\n" for i in range(300)).encode()
    created = file_diff("a.txt", None, new)
    assert created.kind == "created" and created.lines == 300 and created.hidden == 290
    assert [line.text for line in created.hunks[0].lines] == [f"line {i}" for i in range(10)]
    whole = file_diff("a.txt", b"x\n", new, None)
    assert fold(whole, MAX_DIFF_LINES) == file_diff("a.txt", b"x\n", new)
    assert fold(whole, MAX_DIFF_LINES).hidden == 2 + 1 + 301 - MAX_DIFF_LINES  # files, head, lines


def test_each_kind_is_drawn() -> None:
    assert draw_diff(file_diff("a.txt", b"x\n", b"x\n")) == "a.txt: no change"
    assert draw_diff(FileDiff("a.txt", "deleted", lines=2)) == "deleted file a.txt (it had 2 lines)"
    empty = Hunk(0, 0, 1, 1, (DiffLine("+", "x"),))
    drawn = draw_diff(FileDiff("a.txt", "changed", (empty,), was_empty=True))
    assert drawn == "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x"
