"""Output is not a weapon or a penalty: whatever a hand-in prints (50 MB from one function, 5 MB
to stderr at import, a flood of short lines, raw writes to fd 1 and 2) costs it no points and
its classmates nothing; the grader keeps the first and last few KiB for its own failure text.
The oracle is the row each hand-in gets, graded in the sandbox where this machine has one and
with limits only (--unsandboxed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mca.lab.drain import HEAD, TAIL, Drained
from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import MAX_POINTS, row
from mca.sandbox.probe import Mechanisms, probe
from tests.conftest import REPO
from tests.lab.answers import ALL_HONEST

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
COMPLETE = STARTER + ALL_HONEST
MECH = probe()
LIMITS = Limits(seconds=90, check_seconds=10, memory_mb=1024)
LOUD = {  # solved hand-ins that print: each deserves every point
    "print-50-mb-in-judge": (
        "\n_judge = judge_triggers\n"
        "def judge_triggers(*args):\n"
        "    print('x' * 50_000_000)\n"
        "    return _judge(*args)\n"
    ),
    "stderr-5-mb-at-import": "\nimport sys\nsys.stderr.write('y' * 5_000_000)\n",
    "many-lines-in-split": (
        "\n_split = split_frontmatter\n"
        "def split_frontmatter(text):\n"
        "    for i in range(20_000):\n"
        "        print('line', i)\n"
        "    return _split(text)\n"
    ),
    "raw-fds-in-validate": (
        "\nimport os\n_validate = validate_metadata\n"
        "def validate_metadata(*args):\n"
        "    os.write(1, b'o' * 3_000_000)\n"
        "    os.write(2, b'e' * 3_000_000)\n"
        "    return _validate(*args)\n"
    ),
}
# Dies after printing megabytes: the row says how, with the last line it printed.
DIES_LOUDLY = """
import os, sys
print('z' * 3_000_000)
print('LAST WORDS')
sys.stdout.flush()
os._exit(5)
"""


def _isolations() -> list[object]:
    sandboxed = pytest.param(MECH, id="sandboxed")
    if not MECH.available:
        sandboxed = pytest.param(MECH, id="sandboxed", marks=pytest.mark.skip("no sandbox here"))
    return [sandboxed, pytest.param(None, id="unsandboxed")]


@pytest.mark.slow
@pytest.mark.parametrize("mechanisms", _isolations())
def test_printing_any_amount_costs_no_points(tmp_path: Path, mechanisms: Mechanisms | None) -> None:
    texts = {"quiet": COMPLETE, **{k: COMPLETE + v for k, v in LOUD.items()}}
    texts["dies-loudly"] = STARTER + DIES_LOUDLY
    for name, text in texts.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "exercises.py").write_text(text)
    graded = grade(Plan(REPO, tmp_path, jobs=2, limits=LIMITS, mechanisms=mechanisms))
    rows = {g.student: row(g) for g in graded}
    for name in ("quiet", *LOUD):
        assert (rows[name]["status"], rows[name]["total"]) == ("ok", MAX_POINTS), rows[name]
    dead = rows["dies-loudly"]["status"]
    # its words quoted and said to be its own, after the grader's sentence
    assert dead == (
        "crashed: the process ended with exit code 5 while importing it, the hand-in printed:"
        ' "LAST WORDS"'
    )


def test_what_is_kept_is_the_head_and_the_tail() -> None:
    r, w = os.pipe()
    kept = Drained(r)
    try:
        kept.keep(b"first line\n" + b"a" * (10 << 20))
        for _ in range(1000):
            kept.keep(b"b" * 1000)
        os.write(w, b"\nthe last line\n")
        os.close(w)
        kept.read()
        assert kept.ended
        assert kept.head.startswith(b"first line\n") and len(kept.head) == HEAD
        assert kept.tail.endswith(b"the last line\n") and len(kept.tail) == TAIL
        assert kept.total == 11 + (10 << 20) + 1_000_000 + 15
        assert kept.last_line() == "the last line"
        assert "bytes not kept" in kept.text()
    finally:
        kept.close()
