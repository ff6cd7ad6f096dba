"""The lab kit end to end: `mca lab init`, `mca selftest --lab`, seeds, JUnit, `mca lab grade`."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from mca.lab.exercises import TRAPS
from mca.lab.suite import CHECKS, trapped
from tests.conftest import REPO
from tests.lab.answers import HARD_CODED, honest

MCA = Path(sys.executable).parent / "mca"
pytestmark = [
    pytest.mark.xdist_group("lab-kit"),  # its session fixture: built on one worker
    pytest.mark.e2e,
    pytest.mark.skipif(not MCA.exists(), reason="mca is not installed"),
    pytest.mark.slow,  # the installed mca grades a class
]
TRAPPED = trapped()
STARTER_FAILS = {n for checks in TRAPPED.values() for n in checks}
STARTER_POINTS = "2"
# The production answers, written into the file as a student who solved them would (a
# re-export of mca's own function is 'not your code': tests/lab/test_protocol.py).
PRODUCTION = {trap: honest(trap) for trap in TRAPS}


def run(*args: str, cwd: Path = REPO, **env: str) -> subprocess.CompletedProcess[str]:
    full = {"PATH": os.environ["PATH"], "HOME": str(cwd), **env}
    return subprocess.run(
        [str(MCA), *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=600
    )


def failed(out: str) -> set[int]:
    return {c["id"] for c in json.loads(out)["checks"] if not c["passed"]}


@pytest.fixture(scope="session")  # once a run: xdist may put other tests between its own
def starter(tmp_path_factory: pytest.TempPathFactory) -> str:
    d = tmp_path_factory.mktemp("student")
    assert run("lab", "init", str(d / "kit")).returncode == 0
    text = (d / "kit" / "exercises.py").read_text()
    assert (d / "kit" / "README.md").exists()
    assert (
        "def split_frontmatter" in text
        and "from mca.skills.parse import split_frontmatter" not in text
    )
    return text


def exercises(tmp_path: Path, starter: str, *extra: str) -> Path:
    path = tmp_path / "exercises.py"
    path.write_text(starter + "\n\n" + "\n".join(extra) + "\n")
    return path


def test_the_untouched_starter_scores_what_mca_lab_starter_scores(
    tmp_path: Path, starter: str
) -> None:
    path = exercises(tmp_path, starter)
    mine = run("selftest", "--lab", str(path), "--json")
    builtin = run("selftest", "--json", MCA_LAB="starter")
    assert mine.returncode == builtin.returncode == 1
    assert failed(mine.stdout) == failed(builtin.stdout) == STARTER_FAILS
    via_env = run("--json", MCA_LAB=str(path), MOCK="1", SELFTEST="1")
    assert failed(via_env.stdout) == STARTER_FAILS


def test_the_production_answers_score_14(tmp_path: Path, starter: str) -> None:
    path = exercises(tmp_path, starter, *PRODUCTION.values())
    proc = run(
        "selftest",
        "--lab",
        str(path),
        "--seed",
        "0",
        "--seed",
        "3",
        "--junit",
        str(tmp_path / "j.xml"),
    )
    assert proc.returncode == 0 and proc.stdout.rstrip().endswith("14/14 passed · 10/10 points"), (
        proc.stdout
    )
    suite = ET.parse(tmp_path / "j.xml").getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "14" and suite.get("failures") == "0"
    assert len(suite.findall("testcase")) == 14


@pytest.mark.parametrize("trap", TRAPS)
def test_each_exercise_solved_alone_turns_exactly_its_checks_green(
    tmp_path: Path, starter: str, trap: str
) -> None:
    path = exercises(tmp_path, starter, PRODUCTION[trap])
    assert failed(run("selftest", "--lab", str(path), "--json").stdout) == STARTER_FAILS - set(
        TRAPPED[trap]
    )


def test_a_crashing_a_looping_and_a_wrong_type_function(tmp_path: Path, starter: str) -> None:
    path = exercises(
        tmp_path,
        starter,
        "_judge, _split, _validate = judge_triggers, split_frontmatter, validate_metadata",
        "def judge_triggers(skills, sentence, paths):\n    if 'latest' in sentence:\n"
        "        raise KeyError('oops')\n    return _judge(skills, sentence, paths)",
        "def split_frontmatter(text):\n    while 'never closed' in text:\n        pass\n"
        "    return _split(text)",
        "def validate_metadata(path, parsed, root):\n"
        "    if parsed.fields.get('priority') == 'high':\n"
        "        return None\n    return _validate(path, parsed, root)",
    )
    junit = tmp_path / "j.xml"
    proc = run(
        "selftest", "--lab", str(path), "--json", "--junit", str(junit), "--check-seconds", "2"
    )
    by_id = {c["id"]: c for c in json.loads(proc.stdout)["checks"]}
    assert "crashed: KeyError" in by_id[8]["saw"]
    assert "timed out after 2 s" in by_id[2]["saw"]
    assert "validate_metadata returned 'NoneType', not a Candidate" in by_id[4]["saw"]
    assert all(by_id[n]["hint"] for n in by_id)
    failures = ET.parse(junit).getroot().findall(".//failure")
    assert {f.get("message", "")[:8] for f in failures} >= {"crashed:", "timed ou"}


def test_special_casing_the_fixtures_passes_the_default_and_fails_a_seed(
    tmp_path: Path, starter: str
) -> None:
    path = exercises(tmp_path, starter, HARD_CODED)
    assert not {7, 8} & failed(run("selftest", "--lab", str(path), "--json").stdout)
    seeded = failed(run("selftest", "--lab", str(path), "--seed", "1", "--json").stdout)
    assert {7, 8} <= seeded


def _submissions(root: Path, starter: str) -> dict[str, str]:
    """20 hand-ins: the starter, the answers, each exercise alone, and the misbehaving kinds."""
    kinds = {
        "a-starter": starter,
        "b-complete": starter + "\n" + "\n".join(PRODUCTION.values()),
        "c-crash-on-import": "raise SystemExit(3)\n",
        "d-loop-at-import": "while True:\n    pass\n",
        "e-forbidden": "import subprocess\n" + starter,
        "f-hard-coded": starter + HARD_CODED,
        "g-syntax-error": "def broken(:\n",
        "h-exits-hard": starter + "\nimport os\nos._exit(9)\n",
        "i-prints-a-forged-pass": starter + '\nprint(\'{"event": "done"}\')\n',
        "j-memory-hog": starter + "\nhog = bytearray(8 * 1024 ** 3)\n",
    }
    for trap, line in PRODUCTION.items():
        kinds[f"k-only-{trap}"] = starter + "\n" + line
    for n in range(20 - len(kinds)):
        kinds[f"z-starter-copy-{n}"] = starter
    for name, text in kinds.items():
        (root / name).mkdir(parents=True)
        (root / name / "exercises.py").write_text(text)
    return kinds


def test_lab_grade_twenty_submissions_two_jobs(tmp_path: Path, starter: str) -> None:
    subs = tmp_path / "subs"
    kinds = _submissions(subs, starter)
    assert len(kinds) == 20
    out = tmp_path / "grades.csv"
    proc = run(
        "lab", "grade", str(subs), "--out", str(out), "--jobs", "2", "--seeds", "1",
        "--timeout", "20", "--memory-mb", "1024",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with out.open() as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    assert len(rows) == 20
    # points: the starter's two (checks 2 and 4; check 5 carries none), all ten when solved
    assert rows["a-starter"]["total"] == STARTER_POINTS and rows["a-starter"]["status"] == "ok"
    assert rows["b-complete"]["total"] == "10" and rows["b-complete"]["failures"] == ""
    assert {r["max_points"] for r in rows.values()} == {"10"}
    assert rows["c-crash-on-import"]["status"].startswith("refused: ")
    assert rows["d-loop-at-import"]["status"].startswith(("refused: importing", "timed out"))
    assert rows["e-forbidden"]["status"] == "refused: imports subprocess (line 1)"
    assert rows["f-hard-coded"]["ex4"] == "0"  # the seeded run catches it
    assert rows["g-syntax-error"]["status"].startswith("refused: ")
    assert rows["h-exits-hard"]["status"].startswith("crashed")
    assert rows["i-prints-a-forged-pass"]["total"] == STARTER_POINTS
    assert rows["j-memory-hog"]["status"].startswith("refused: ")
    for trap, checks in TRAPPED.items():
        row = rows[f"k-only-{trap}"]
        won = sum(c.points for c in CHECKS if c.id in checks)
        assert row["total"] == str(int(STARTER_POINTS) + won), (trap, row)
