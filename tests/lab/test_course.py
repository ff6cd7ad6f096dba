"""A course's daily needs (issue 32 item 5): a roster gives every student a row, whether or not
they handed anything in, and names the folders it does not know; the CSV, Gradescope's results
and the JUnit report come from one run. The oracles are the files the run writes."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from mca.cli.args import command_parser, parse_command, repl_parser
from mca.cli.selftest import parser as selftest_parser
from mca.errors import McaError
from mca.lab.roster import RosterError, parse_roster
from tests.lab.answers import ALL_HONEST
from tests.lab.test_grading import STARTER, grade_flags, hand_in, lab, read_csv


@pytest.mark.slow
def test_a_roster_gives_every_name_a_row_and_one_run_writes_every_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    subs = tmp_path / "class"
    hand_in(subs, "ada", STARTER + ALL_HONEST)
    hand_in(subs, "bo", None)  # a folder, no file
    hand_in(subs, "zed", STARTER)  # not on the roster
    roster = tmp_path / "roster.csv"
    roster.write_text("\ufeffStudent,email\nada,a@x\nbo,b@x\ncy,c@x\n\n")  # Excel's BOM
    out = tmp_path / "out"
    out.mkdir()
    csv_path, gs, junit = out / "grades.csv", out / "gs", out / "class.xml"
    argv = ["grade", str(subs), "--roster", str(roster), "--out", str(csv_path)]
    argv += ["--gradescope", str(gs), "--junit", str(junit), *grade_flags()]
    assert lab(argv, {}) == 0
    rows = read_csv(csv_path)
    assert {k: r["status"] for k, r in rows.items()} == {
        "ada": "ok",
        "bo": "missing exercises.py",
        "cy": "missing (no folder)",
    }
    assert rows["ada"]["total"] == "10" and rows["cy"]["total"] == "0"
    assert sorted(p.name for p in gs.iterdir()) == ["ada", "bo", "cy"]
    ada = json.loads((gs / "ada" / "results" / "results.json").read_text())
    assert ada["score"] == 10.0
    suites = ET.parse(junit).getroot().findall("testsuite")
    assert sorted(s.get("name") or "" for s in suites) == ["ada", "bo", "cy"]
    said = capsys.readouterr()
    assert "1 folder(s) not on the roster, not graded: zed" in said.err + said.out


def test_a_roster_of_lines_or_a_csv() -> None:
    assert parse_roster("# section B\nada\n\n  bo  \nada\n") == ["ada", "bo"]
    assert parse_roster('student,name\n"ada","Ada L"\n,nobody\nbo,B\n') == ["ada", "bo"]
    for bad, why in [
        ("", "no names"),
        ("name,email\nada,a@x\n", "needs a `student` column"),
        ("ada\n../bo\n", "line 2: '../bo' is not a folder name"),
        ("ada\n.git\n", "starts with a dot"),
    ]:
        with pytest.raises(RosterError, match=why.replace("(", r"\(")):
            parse_roster(bad)


WORDS = " ".join(f"word{i}" for i in range(40))  # 270 characters: more than a CSV cell holds


@pytest.mark.slow
def test_a_failure_is_cut_at_a_word_and_whole_in_the_students_log(tmp_path: Path) -> None:
    subs = tmp_path / "class"
    crash = f"\ndef judge_triggers(skills, sentence, paths):\n    raise ValueError({WORDS!r})\n"
    hand_in(subs, "ada", STARTER + ALL_HONEST + crash)
    out, logs = tmp_path / "grades.csv", tmp_path / "logs"
    assert (
        lab(["grade", str(subs), "--out", str(out), "--logs", str(logs), *grade_flags()], {}) == 0
    )
    cells = dict(part.split(": ", 1) for part in read_csv(out)["ada"]["failures"].split("; "))
    shown = cells["7"]
    assert shown.endswith("…") and len(shown) <= 120
    full = f'seed 0: crashed: ValueError: the hand-in said: "{WORDS}"'
    kept = shown[:-1]
    assert full.startswith(kept) and full[len(kept)] == " "  # whole words only
    log = (logs / "ada.log").read_text()
    assert "status: ok" in log and "points: 8/10" in log
    assert f"saw: {full} (ada/exercises.py, line" in log
    assert "check 7 (exercise 4 paths and word boundaries): failed" in log


def _parsers(p: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield p
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _parsers(sub)


def test_no_option_is_taken_for_another_it_abbreviates(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parse_command(["lab", "grade", "class", "--seed", "3"])  # was taken as --seeds 3
    assert "unrecognized arguments: --seed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        selftest_parser().parse_args(["--check-sec", "5"])
    with pytest.raises(SystemExit):
        repl_parser().parse_args(["--mod", "x"])
    everyone = [*_parsers(command_parser()), repl_parser(), selftest_parser()]
    assert len(everyone) > 10
    assert [p.prog for p in everyone if p.allow_abbrev] == []


def test_help_shows_every_default() -> None:
    """Every option of `mca lab grade` says its default in --help (what None or off means)."""
    grade = next(p for p in _parsers(command_parser()) if p.prog.endswith("lab grade"))
    formatter = grade._get_formatter()
    for action in grade._actions:
        if not action.option_strings or action.dest == "help":
            continue
        said = formatter._expand_help(action)
        shown = {None: "default: ", False: "default: off"}.get(action.default)
        assert (shown or f"default: {action.default}") in said, action.dest
        assert " ".join(said.split()) in " ".join(grade.format_help().split())


@pytest.mark.slow
def test_a_refusal_names_what_the_file_itself_imported(tmp_path: Path) -> None:
    subs = tmp_path / "class"
    hand_in(subs, "ada", STARTER + "\nimport mca.lab.checks\n")
    hand_in(subs, "bo", STARTER + "\n__import__('sub' + 'process')\n")
    late = "\ndef judge_triggers(skills, sentence, paths):\n    import mca.lab.checks\n"
    hand_in(subs, "cy", STARTER + late)
    out = tmp_path / "grades.csv"
    assert lab(["grade", str(subs), "--out", str(out), *grade_flags()], {}) == 0
    rows = read_csv(out)
    assert rows["ada"]["status"].startswith(
        'refused: importing it failed: ModuleNotFoundError: the hand-in said: "mca.lab.checks is'
        " not in the grader's child (exercises.py may import mca's data types and the starter's"
    )
    assert rows["bo"]["status"].startswith(
        'refused: importing it failed: ImportError: the hand-in said: "the file imports subprocess'
        " (a hand-in may not"
    )
    assert "mca.lab.checks is not in the grader's child" in rows["cy"]["failures"]


LOOPS = """
def judge_triggers(skills, sentence, paths):
    while True:
        pass

def apply_gates(hits, budget, render, in_context, held=None):
    while True:
        pass
"""


@pytest.mark.slow
def test_a_cpu_budget_bounds_a_loopers_slot_and_costs_honest_answers_nothing(
    tmp_path: Path,
) -> None:
    """Exercises 4 and 5 loop; past the hand-in's CPU budget each check gets a short leash:
    the loops fail saying so, and the honest exercises still get every point."""
    subs = tmp_path / "class"
    hand_in(subs, "ada", STARTER + ALL_HONEST + LOOPS)
    out = tmp_path / "grades.csv"
    argv = ["grade", str(subs), "--out", str(out), "--check-seconds", "6", "--cpu-seconds", "3"]
    assert lab([*argv, "--seeds", "0", *grade_flags()], {}) == 0
    ada = read_csv(out)["ada"]
    assert [ada[f"ex{n}"] for n in range(1, 6)] == ["2", "2", "2", "0", "0"]
    failures = dict(part.split(": ", 1) for part in ada["failures"].split("; "))
    assert set(failures) == {"7", "8", "9", "10"}
    cut = [n for n, why in failures.items() if "the hand-in used its 3 s of CPU" in why]
    assert len(cut) >= 3  # the first loop may use its own 6 s; every later one is cut short


def test_the_gradescope_kit_comes_from_the_package_and_says_what_to_keep_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    kit = tmp_path / "kit"
    assert lab(["gradescope", str(kit)], {}) == 0
    assert sorted(p.name for p in kit.iterdir()) == ["README.md", "run_autograder", "setup.sh"]
    assert all(os.access(kit / name, os.X_OK) for name in ("setup.sh", "run_autograder"))
    assert (kit / "run_autograder").read_text().startswith("#!/usr/bin/env bash")
    readme = " ".join((kit / "README.md").read_text().split())
    assert "## Never put these in the autograder image" in (kit / "README.md").read_text()
    for never in ("reference solution", "/autograder/source", "other sections", "keys, tokens"):
        assert never in readme, never
    assert "it reads by allow-list" in readme  # and where it cannot, it says what is at stake
    assert "a hand-in reads what the image holds" in readme
    # unsandboxed, only as an account that reads neither mca nor the autograder's files
    assert "unsandboxed as mca-student (uid N)" in readme
    setup, script = ((kit / n).read_text() for n in ("setup.sh", "run_autograder"))
    assert "useradd" in setup and "chmod -R go-rwx /opt/mca /autograder/source" in setup
    assert "--unsandboxed --as-user mca-student --private" in script and "which route" in script
    with pytest.raises(McaError, match="exists already"):
        lab(["gradescope", str(kit)], {})


@pytest.mark.slow
def test_loops_in_four_exercises_cost_the_fifth_nothing(tmp_path: Path) -> None:
    """Every looping check restarts the child: the restarts are counted per exercise, so the
    honest fifth exercise still runs (main: 'not run: the process was started 8 times')."""
    loops = "".join(
        f"\ndef {name}(*args):\n    while True:\n        pass\n"
        for name in ("split_frontmatter", "validate_metadata", "render_skill", "judge_triggers")
    )
    subs = tmp_path / "class"
    hand_in(subs, "ada", STARTER + ALL_HONEST + loops)
    out = tmp_path / "grades.csv"
    argv = ["grade", str(subs), "--out", str(out), "--check-seconds", "2", "--cpu-seconds", "1"]
    assert lab([*argv, "--seeds", "0", *grade_flags()], {}) == 0
    ada = read_csv(out)["ada"]
    assert [ada[f"ex{n}"] for n in range(1, 6)] == ["0", "0", "0", "0", "2"], ada["failures"]
