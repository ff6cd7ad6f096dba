"""Resuming (issue 34, item 8): a resumed conversation keeps its id and file, so `--resume ID`
works every time; `mca -c` shows where the conversation left off; a fork is explicit (`--fork`:
a new id, said so); `-c` goes on with the conversation used last."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mca.state.conversations import list_saved
from tests.ptyscreen import MCA, Screen, child_env
from tests.ui.test_daily import mca, sessions

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed in this environment"),
    pytest.mark.slow,  # the installed mca, run as a person would
]


def one_turn(ws: Path, sentence: str, *flags: str) -> dict[str, object]:
    """`mca -p SENTENCE --json` with `flags`: its JSON object (the run must succeed)."""
    r = mca(ws, "-p", sentence, "--json", *flags)
    assert r.returncode == 0, r.stderr
    out: dict[str, object] = json.loads(r.stdout)
    return out


def test_resume_by_id_works_every_time_and_keeps_the_id(ws: Path) -> None:
    first = one_turn(ws, "list")
    sid = str(first["session"])
    for turn in (2, 3, 4):
        again = one_turn(ws, "list", "--resume", sid)
        assert again["session"] == sid and again["turn"] == turn
    [saved] = list_saved(sessions(ws), ws.resolve())
    assert saved.id == sid and saved.turns == 4
    assert len(list(sessions(ws).glob("*.jsonl"))) == 1  # one conversation, one file
    r = mca(ws, "-p", "list", "--resume", sid, "--output-format", "stream-json")
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert lines[0]["type"] == "session.start" and lines[0]["session"] == sid
    # (a notice may come between: what the sandbox holds on this system, say)
    resumed = next(line for line in lines if line["type"] == "session.resumed")
    assert resumed["from"] == sid and resumed["forked_as"] == ""
    assert [line["type"] for line in lines].index("session.resumed") < 3


def test_fork_is_explicit_and_leaves_the_original_as_it_was(ws: Path) -> None:
    sid = str(one_turn(ws, "list")["session"])
    r = mca(ws, "-p", "read nothing.txt", "--json", "--resume", sid, "--fork")
    fork = json.loads(r.stdout)
    assert r.returncode == 0 and fork["session"] != sid and fork["turn"] == 2
    assert f"mca: forked {sid} as {fork['session']} (1 turn)" in r.stderr
    found = {s.id: s for s in list_saved(sessions(ws), ws.resolve())}
    assert set(found) == {sid, fork["session"]}
    assert found[sid].turns == 1 and found[fork["session"]].turns == 2
    assert found[fork["session"]].forked_from == sid
    assert one_turn(ws, "list", "--resume", sid)["session"] == sid  # the original goes on
    alone = mca(ws, "-p", "list", "--fork")
    assert alone.returncode == 2 and "--fork goes with --continue or --resume" in alone.stderr


def test_continue_goes_on_with_the_conversation_used_last(ws: Path) -> None:
    older = str(one_turn(ws, "list")["session"])
    time.sleep(0.05)
    newer = str(one_turn(ws, "read nothing.txt")["session"])
    time.sleep(0.05)
    assert one_turn(ws, "list", "--resume", older)["session"] == older
    assert one_turn(ws, "list", "--continue")["session"] == older  # used last, begun first
    assert [s.id for s in list_saved(sessions(ws), ws.resolve())] == [older, newer]


def test_rewind_reaches_turns_run_before_several_resumes(ws: Path) -> None:
    sid = str(one_turn(ws, 'create b.txt with "one"', "--yes")["session"])
    for sentence in ('create c.txt with "two"', 'create d.txt with "three"'):
        one_turn(ws, sentence, "--yes", "--continue")
    assert {p.name for p in ws.iterdir()} >= {"b.txt", "c.txt", "d.txt"}
    r = mca(ws, "--continue", stdin="/rewind 2\n")
    assert "rewound to before turn 2" in r.stdout, r.stdout
    assert (ws / "b.txt").exists() and not (ws / "c.txt").exists() and not (ws / "d.txt").exists()
    [saved] = list_saved(sessions(ws), ws.resolve())
    assert saved.id == sid and saved.turns == 1


@pytest.mark.pty
def test_continue_shows_where_the_conversation_left_off(ws: Path) -> None:
    (ws / "a.txt").write_text("hello world\n")
    one_turn(ws, "read a.txt")
    one_turn(ws, 'replace "world" with "there" in a.txt', "--continue")
    env = child_env(ws, MOCK="1")
    term = Screen(ws, ["-c"], env, size=(100, 30))  # a tmux pane's size
    term.on_screen("resumed ")
    term.wait_for(lambda _: term.line_at_cursor() == "mca>", "the prompt")
    screen = term.text()
    shown = screen[screen.index("resumed ") :].splitlines()
    assert shown[0].endswith(": 2 turns, 8 messages"), shown
    assert shown[1].startswith("  you  read a.txt")
    assert shown[2].startswith("       → read_file(path=a.txt)")
    assert any(line.startswith("  mca  Here is a.txt") for line in shown)
    assert any(line.startswith('  you  replace "world" with "there" in a.txt') for line in shown)
    assert any(line.startswith("       → edit_file(path=a.txt") for line in shown)
    assert all(len(line) < 100 for line in shown)  # one line each, cut to the screen
    term.close()


def test_a_fork_in_the_repl_after_a_resume_is_a_conversation_of_its_own(ws: Path) -> None:
    first = str(one_turn(ws, "list")["session"])
    second = str(one_turn(ws, "read nothing.txt")["session"])
    r = mca(ws, stdin=f"/resume {first}\nlist\n/resume {second} --fork\nlist\n")
    assert f"resumed {first}: 1 turn" in r.stdout and f"forked {second} as " in r.stdout
    found = {s.id: s for s in list_saved(sessions(ws), ws.resolve())}
    assert len(found) == 3 and found[first].turns == 2 and found[second].turns == 1
    fork = next(s for s in found.values() if s.forked_from == second)
    assert fork.turns == 2 and fork.workspace == str(ws.resolve())  # a whole meta line
    assert fork.id not in (first, second)


@pytest.mark.pty
def test_continue_after_a_turn_ended_part_way_says_so(ws: Path) -> None:
    script = ws.parent / "two-calls.jsonl"
    call = '{"tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]}\n'
    script.write_text(call * 2)  # then nothing: the third model call fails
    r = mca(ws, "-p", "look around", MCA_MOCK_SCRIPT=str(script))
    assert r.returncode == 1 and "the turn's 2 completed tool calls are kept" in r.stderr
    term = Screen(ws, ["-c"], child_env(ws, MOCK="1"), size=(100, 30))
    term.on_screen("its last turn was ended by an error part way")
    term.wait_for(lambda _: term.line_at_cursor() == "mca>", "the prompt")
    term.close()
