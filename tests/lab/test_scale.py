"""One scale: `mca selftest --lab FILE` says, beside `N/14 passed`, the points `mca lab grade`
gives the same file, and which checks carry them; `--json` carries both. The oracle is the
grader's own CSV row for the file, graded in the same run of seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mca.cli.selftest import parser, run
from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import row
from mca.sandbox.probe import probe
from tests.conftest import REPO
from tests.lab.answers import HARD_CODED, honest

STARTER = (REPO / "mca" / "lab" / "naive.py").read_text(encoding="utf-8")
MECH = probe()
FILES = {
    "starter": STARTER,
    "split-and-gates": STARTER + honest("split") + honest("gates"),
    "hard-coded-judge": STARTER + honest("judge") + HARD_CODED,  # seed 0 only
}


def _selftest(path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    run(parser().parse_args(["--lab", str(path), "--check-seconds", "10", *flags]), {})
    return capsys.readouterr().out


@pytest.mark.slow
def test_the_self_test_gives_the_points_the_grader_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, text in FILES.items():
        (tmp_path / "class" / name).mkdir(parents=True)
        (tmp_path / "class" / name / "exercises.py").write_text(text)
    mechanisms = MECH if MECH.available else None
    limits = Limits(seconds=120, check_seconds=10, memory_mb=1024)
    rows = {
        g.student: row(g) for g in grade(Plan(REPO, tmp_path / "class", 2, 1, limits, mechanisms))
    }
    for name in FILES:
        path = tmp_path / "class" / name / "exercises.py"
        report = json.loads(_selftest(path, capsys, "--json", "--seed", "0", "--seed", "1"))
        assert (report["points"], report["max_points"]) == (rows[name]["total"], 10), name
        carried = {c["id"]: c["points"] for c in report["checks"]}
        assert carried == {1: 1, 2: 1, 3: 1, 4: 1, 5: 0, 6: 2, 7: 1, 8: 1, 9: 1, 10: 1} | {
            i: 0 for i in range(11, 15)
        }
        text = _selftest(path, capsys, "--seed", "0", "--seed", "1")
        passed = report["passed"]
        assert text.rstrip().endswith(f"{passed}/14 passed · {rows[name]['total']}/10 points")
    assert rows["starter"]["total"] == 2 and rows["hard-coded-judge"]["ex4"] == 0


@pytest.mark.slow
def test_the_text_says_which_checks_carry_the_points(capsys: pytest.CaptureFixture[str]) -> None:
    run(parser().parse_args(["--seed", "0"]), {"MCA_LAB": "starter"})
    text = capsys.readouterr().out
    assert text.rstrip().endswith("7/14 passed · 2/10 points")
    assert "exercise 1 split frontmatter by lines: 1/2 · checks 1 (0/1), 2 (1/1)" in text
    assert "exercise 3 scripts as command lines: 0/2 · checks 6 (0/2)" in text
    assert "checks 5, 11-14 carry no points" in text
    assert "a grade runs seed 0 and 1 seed(s) drawn when it runs" in text  # not seed 0 alone
