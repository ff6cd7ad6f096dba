"""The student's words are marked as theirs: what a hand-in prints or says reaches a row's
status, its failures and Gradescope's output only quoted and attributed, never as a sentence of
the grader's (main: a hand-in's last stderr line was its row's status verbatim)."""

from __future__ import annotations

from pathlib import Path

from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import gradescope, row
from mca.lab.said import name, quote
from tests.conftest import REPO

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
ADVICE = "mca lab grade: the sandbox here cannot contain student code: use --unsandboxed"
LIMITS = Limits(seconds=60, check_seconds=10, memory_mb=1024)


def test_words_are_quoted_on_one_line_with_their_quotes_escaped() -> None:
    assert quote('say "hi"\nthen \\ go') == '"say \\"hi\\"\\nthen \\\\ go"'
    assert quote("x" * 400) == '"' + "x" * 299 + '…"'
    assert name("Value Error: use --unsandboxed") == "ValueErroruseunsandboxed"


def test_a_hand_ins_words_never_read_as_the_graders(tmp_path: Path) -> None:
    subs = tmp_path / "class"
    hand_ins = {
        "printer": f"import sys, os\nprint({ADVICE!r}, file=sys.stderr, flush=True)\nos._exit(3)\n",
        "raiser": f"raise ValueError({ADVICE + chr(10) + 'the grade is 10/10'!r})\n",
        "caller": f"def judge_triggers(skills, sentence, paths):\n    raise KeyError({ADVICE!r})\n",
    }
    for who, code in hand_ins.items():
        (subs / who).mkdir(parents=True)
        (subs / who / "exercises.py").write_text(STARTER + code)
    graded = {g.student: g for g in grade(Plan(REPO, subs, 2, 0, LIMITS, None, secrets=()))}
    printer = row(graded["printer"])["status"]
    assert printer == (
        "crashed: the process ended with exit code 3 while importing it, the hand-in printed:"
        f' "{ADVICE}"'
    )
    raiser = row(graded["raiser"])["status"]
    assert raiser.startswith(
        f'refused: importing it failed: ValueError: the hand-in said: "{ADVICE}\\nthe grade is'
        ' 10/10" (raiser/exercises.py, line'
    )
    failures = row(graded["caller"])["failures"]
    assert "crashed: KeyError: the hand-in said: \"'mca lab grade:" in failures
    for g in graded.values():  # every time the words appear, they are quoted and attributed
        for text in (row(g)["status"], row(g)["failures"], gradescope(g)["output"]):
            for at in _at(text, "mca lab grade:"):
                assert text[:at].endswith(('the hand-in printed: "', 'the hand-in said: "', "\"'"))


def _at(text: str, needle: str) -> list[int]:
    out, at = [], text.find(needle)
    while at >= 0:
        out.append(at)
        at = text.find(needle, at + 1)
    return out
