"""One table of checks: a check added to it runs and shows in the self-test, the check runner,
the reports (text, JSON, JUnit) and the grader's row. The table is passed in; the lab's own
CHECKS is never changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from mca.cli.selftest import parser, run
from mca.lab.checks import CheckFailed, Lab
from mca.lab.exercises import BY_TRAP, EXERCISES
from mca.lab.outputs import COLUMNS, Graded, Status, row
from mca.lab.results import combine, to_junit, to_text
from mca.lab.suite import CHECKS, Check, run_suite, trapped
from mca.skills.policy import PRODUCTION
from tests.conftest import REPO

SAW = "the fifteenth check saw this"
seen: list[int] = []  # the seed of every run of the fifteenth check


def fifteenth(lab: Lab) -> None:
    seen.append(lab.names.seed)
    raise CheckFailed(SAW)


FIFTEENTH = Check(
    15,
    "a fifteenth check runs wherever the table is read",
    fifteenth,
    "hint: the fifteenth",
    BY_TRAP["gates"],
)
TABLE = (*CHECKS, FIFTEENTH)


@pytest.fixture(autouse=True)
def fresh() -> None:
    seen.clear()


def test_the_table_is_numbered_in_order_and_names_each_check_once() -> None:
    assert [c.id for c in CHECKS] == list(range(1, len(CHECKS) + 1))
    assert len({c.name for c in CHECKS}) == len(CHECKS)
    assert {c.exercise for c in CHECKS if c.exercise} == set(EXERCISES)
    assert set(trapped()) == {e.trap for e in EXERCISES}
    assert COLUMNS[2:-5] == tuple(f"ex{e.number}" for e in EXERCISES)


@pytest.mark.slow
def test_the_self_test_runs_and_reports_a_fifteenth_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "j.xml"
    code = run(parser().parse_args(["--json", "--junit", str(junit)]), {}, checks=TABLE)
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and seen == [0]
    assert (report["passed"], report["total"]) == (14, 15)
    last = report["checks"][-1]
    assert (last["id"], last["passed"], last["saw"]) == (15, False, SAW)
    assert last["exercise"] == "5 domain and budget gates" and last["hint"] == FIFTEENTH.hint
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("15", "1")
    cases = suite.findall("testcase")
    assert cases[-1].get("name") == f"15 {FIFTEENTH.name}"
    assert cases[-1].get("classname") == "mca.selftest.exercise5"
    text = to_text(report["checks"], report["runtime"])
    assert f"15 FAIL  {FIFTEENTH.name}" in text and f"saw: {SAW}" in text
    assert text.endswith("14/15 passed · 10/11 points") and len(CHECKS) == 14


@pytest.mark.slow
def test_the_suite_runs_a_fifteenth_check_on_every_seed() -> None:
    results: list[dict[str, Any]] = list(run_suite(REPO, PRODUCTION, [0, 2], TABLE))
    by_seed = {s: [r["id"] for r in results if r["seed"] == s] for s in (0, 2)}
    shipped = [c.id for c in TABLE if c.shipped_only]
    assert by_seed[0] == [c.id for c in TABLE]
    assert by_seed[2] == [c.id for c in TABLE if c.id not in shipped]
    assert seen == [0, 2]
    combined = combine(results, [0, 2], checks=TABLE)
    assert [c["passed"] for c in combined] == [True] * 14 + [False]
    assert combined[-1]["saw"] == f"seed 0: {SAW}" and combined[-1]["seeds"] == [0, 2]
    assert to_junit(combined, "production").count("<testcase ") == 15
    line = row(Graded("someone", Status.OK, combined, 1.0), TABLE)
    assert (line["ex5"], line["ex1"], line["total"], line["max_points"]) == (2, 2, 10, 11)
    assert line["failures"] == f"15: seed 0: {SAW}"
