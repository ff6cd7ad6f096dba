"""Keys a Claude Code or Codex user already knows, on a real terminal (a pyte screen): Shift+Tab
cycles the approval mode, shown under the prompt in its own word and colour; Esc Esc on an empty
line opens the rewind picker, where one digit picks; /help lists the keys."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mca.modes import CYCLE, MODES, next_mode
from mca.ui.prompt_line import prompt_text
from tests.ptyscreen import MCA, Screen, child_env

SHIFT_TAB = "\x1b[Z"


def test_shift_tab_cycles_the_modes_and_never_reaches_yolo() -> None:
    seen, mode = [], "auto-edit"
    for _ in range(6):
        mode = next_mode(mode)
        seen.append(mode)
    assert seen == ["read-only", "ask", "auto-edit"] * 2
    assert set(CYCLE) == set(MODES) - {"yolo"} and next_mode("yolo") == "ask"


def prompt_is(term: Screen, shown: str) -> Callable[[str], bool]:
    return lambda _: term.line_at_cursor() == shown


def started(ws: Path, *args: str) -> Screen:
    term = Screen(ws, list(args), child_env(ws, MOCK="1"), size=(100, 60))
    term.expect("mca>")
    term.on_screen("skills: 0 loaded")
    return term


def test_the_prompt_says_every_mode_but_the_default() -> None:
    assert prompt_text("auto-edit") == [("", "mca> ")]
    for mode in ("read-only", "ask", "yolo"):
        (style, word, *_), (_, rest, *_) = prompt_text(mode)
        assert word == mode and rest == " mca> " and f"mode.{mode}" in style


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_shift_tab_changes_the_mode_the_prompt_shows(ws: Path) -> None:
    """From yolo (started so), each Shift+Tab: ask, auto-edit, read-only, each in its word
    and colour on the prompt's line, and in force (/mode says so)."""
    term = started(ws, "--mode", "yolo")
    term.wait_for(lambda _: term.line_at_cursor() == "yolo mca>", "the prompt in yolo")
    colours = {term.style_of("yolo mca>").fg}
    for mode in ("ask", "auto-edit", "read-only"):
        term.child.send(SHIFT_TAB)
        shown = "mca>" if mode == "auto-edit" else f"{mode} mca>"
        term.wait_for(prompt_is(term, shown), f"{shown!r} as the prompt")
        if mode != "auto-edit":
            colour = term.style_of(shown).fg
            assert colour not in colours, mode  # each mode its own colour
            colours.add(colour)
    prompts = term.text().count("mca>")
    term.child.sendline("/mode")
    term.wait_for(lambda s: s.count("mca>") > prompts, "/mode answered")
    assert "* read-only" in term.text()  # the session's mode, not only its picture
    term.close()


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_esc_esc_opens_the_rewind_picker_and_one_digit_picks(ws: Path) -> None:
    term = started(ws)
    term.child.sendline('create a.txt with "one"')
    term.wait_for(lambda s: s.count("mca>") >= 2, "the first turn")
    term.child.sendline('create b.txt with "two"')
    term.wait_for(lambda s: s.count("mca>") >= 3, "the second turn")
    assert (ws / "b.txt").exists()
    term.child.send("\x1b\x1b")
    term.on_screen("rewind to before which turn? [1-2, Enter: none]")
    term.child.send("2")  # no Enter
    term.on_screen("rewound")
    term.wait_for(lambda s: s.count("mca>") >= 4, "the prompt back")
    assert (ws / "a.txt").exists() and not (ws / "b.txt").exists()
    term.child.send("typed\x1b\x1b")  # Esc Esc on a line with text clears it
    term.wait_for(lambda _: term.line_at_cursor() == "mca>", "the line cleared")
    assert "rewind to before which turn?" not in term.text().split("rewound")[-1]
    term.close()


@pytest.mark.e2e
@pytest.mark.pty
@pytest.mark.slow
@pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment")
def test_help_lists_the_keys(ws: Path) -> None:
    term = started(ws)
    term.child.sendline("/help")
    term.on_screen("keys:")
    screen = term.text()
    for key in ("Shift+Tab", "Esc Esc", "Esc Enter", "Ctrl-D"):
        assert f"  {key} " in screen, key
    term.close()
