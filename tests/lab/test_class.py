"""A class of generated hand-ins (tests/lab/handins.py), graded once as `mca lab grade` does,
in mca's sandbox: every row equals what its hand-in deserves, no forgery scores above its honest
code, no hand-in changes another's row or anything outside its own sandbox, nothing outlives
it, and the CSV, the Gradescope results and the JUnit report validate. The oracles (hashes of
the class, a TCP listener, a marker directory, a scan of /proc) are out of the hand-ins' reach.
"""

from __future__ import annotations

import csv
import hashlib
import json
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from mca.lab.grade import Plan, grade
from mca.lab.launch import Limits
from mca.lab.outputs import COLUMNS, MAX_POINTS, Graded, Writer, csv_text, row
from mca.sandbox.probe import probe
from tests.conftest import REPO
from tests.lab.handins import HandIn, World, the_class, write_class
from tests.leftovers import commands_left

MECH = probe()
pytestmark = [
    pytest.mark.xdist_group("lab-class"),  # its session fixture: built on one worker
    pytest.mark.skipif(not MECH.available, reason="no Landlock on this kernel"),
    pytest.mark.slow,  # grades a whole class in sandboxes
]
LIMITS = Limits(seconds=90, check_seconds=3, memory_mb=1024)


@dataclass
class Graded_:
    world: World
    hand_ins: dict[str, HandIn]
    rows: dict[str, dict[str, Any]]
    graded: list[Graded]
    before: dict[str, str]
    after: dict[str, str]
    received: list[bytes]
    survivors: list[str]
    out: Path


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def survivors(token: str) -> list[str]:
    """What the grading left running: the ended children whose group still holds a process,
    as mca's spawner counts them (no scan of /proc; a child in a PID namespace ends whole).
    The hand-ins' sleepers carry `token` only for a person reading a process list."""
    left = commands_left(0)
    return [f"{left} graded child(ren) left a process running"] if left else []


def _listen(server: socket.socket, got: list[bytes], stop: threading.Event) -> None:
    server.settimeout(0.2)
    while not stop.is_set():
        try:
            conn, _ = server.accept()
        except OSError:
            continue
        got.append(conn.recv(200) or b"connected")
        conn.close()


@pytest.fixture(scope="session")  # once a run: xdist may put other tests between its own
def graded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graded_]:
    root = tmp_path_factory.mktemp("lab-class")
    server = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []
    stop = threading.Event()
    listening = threading.Thread(target=_listen, args=(server, got, stop), daemon=True)
    listening.start()
    out = root / "out"
    out.mkdir()
    (root / "markers").mkdir()
    world = World(
        root / "class",
        out / "grades.csv",
        root / "markers",
        server.getsockname()[1],
        secrets.token_hex(6),
    )
    hand_ins = the_class()
    write_class(world, hand_ins)
    before = digest(world.classdir)
    writer = Writer(world.csv, out / "gradescope", out / "class.xml")
    writer.check()
    plan = Plan(
        REPO,
        world.classdir,
        jobs=2,
        seeds=1,
        limits=LIMITS,
        mechanisms=MECH,
        deny=tuple(writer.paths),
    )
    results = grade(plan, writer.add)
    deadline = time.monotonic() + 10
    while survivors(world.token) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = survivors(world.token)
    stop.set()
    listening.join(timeout=5)
    server.close()
    yield Graded_(
        world,
        {h.name: h for h in hand_ins},
        {g.student: row(g) for g in results},
        results,
        before,
        digest(world.classdir),
        got,
        left,
        out,
    )


def test_the_class_has_every_kind_the_issue_names(graded: Graded_) -> None:
    names = set(graded.hand_ins)
    assert len(names) >= 40
    for kind in (
        "complete",
        "only-",
        "forge-",
        "sabotage-",
        "crash-",
        "loop-",
        "fork-",
        "fill-",
        "file-missing",
        "file-misnamed",
        "file-latin-1",
        "survivor",
        "loud-",
    ):
        assert any(kind in n for n in names), kind


def test_every_row_equals_what_the_hand_in_deserves(graded: Graded_) -> None:
    wrong = {}
    for name, h in graded.hand_ins.items():
        r = graded.rows.get(name)
        if r is None:
            wrong[name] = "no row"
            continue
        got = {n: r[f"ex{n}"] for n in range(1, 6)}
        if not str(r["status"]).startswith(h.status) or got != h.points:
            wrong[name] = f"{r['status']!r} {got} ({r['failures'][:300]})"
        elif r["total"] != sum(h.points.values()) or r["max_points"] != MAX_POINTS:
            wrong[name] = f"total {r['total']} of {r['max_points']}"
    assert wrong == {}
    assert set(graded.rows) == set(graded.hand_ins)


def test_no_forgery_scores_above_its_honest_code(graded: Graded_) -> None:
    forgeries = [h for h in graded.hand_ins.values() if h.honest is not None]
    assert len(forgeries) >= 8
    for h in forgeries:
        assert h.honest is not None
        r = graded.rows[h.name]
        assert all(r[f"ex{n}"] <= h.honest[n] for n in range(1, 6)), h.name


def test_no_hand_in_reaches_a_classmate_the_grader_or_the_world(graded: Graded_) -> None:
    assert graded.after == graded.before  # no file of the class changed
    assert list(graded.world.marker_dir.iterdir()) == []
    assert graded.received == []
    assert graded.survivors == []
    assert graded.world.csv.read_text() == csv_text(graded.graded)  # nothing rewrote it


def test_a_row_is_the_same_graded_alone(graded: Graded_, tmp_path: Path) -> None:
    """No hand-in changed another's row: the saboteurs' classmates score alone what they
    scored among them."""
    alone = tmp_path / "alone"
    for name in ("complete", "starter", "only-judge"):
        (alone / name).mkdir(parents=True)
        (alone / name / "exercises.py").write_bytes(
            (graded.world.classdir / name / "exercises.py").read_bytes()
        )
    for g in grade(Plan(REPO, alone, limits=LIMITS, mechanisms=MECH)):
        mine, theirs = row(g), graded.rows[g.student]
        assert {k: v for k, v in mine.items() if k != "seconds"} == {
            k: v for k, v in theirs.items() if k != "seconds"
        }


def test_the_outputs_validate(graded: Graded_) -> None:
    with graded.world.csv.open(newline="") as f:
        reader = csv.DictReader(f)
        assert tuple(reader.fieldnames or ()) == COLUMNS
        rows = list(reader)
    assert [r["student"] for r in rows] == sorted(graded.hand_ins)
    for r in rows:
        numbers = [int(r[f"ex{n}"]) for n in range(1, 6)]
        assert int(r["total"]) == sum(numbers) <= int(r["max_points"]) == MAX_POINTS
        assert float(r["seconds"]) >= 0 and "\n" not in r["failures"] and "/" not in r["student"]
        assert not r["status"].startswith("/") and str(graded.world.classdir) not in r["status"]
    results = {
        p.parent.parent.name: json.loads(p.read_text())
        for p in (graded.out / "gradescope").glob("*/results/results.json")
    }
    assert set(results) == set(graded.hand_ins)
    for name, res in results.items():
        assert isinstance(res["score"], float) and isinstance(res["output"], str)
        assert res["score"] == sum(t["score"] for t in res["tests"]) == graded.rows[name]["total"]
        for t in res["tests"]:
            assert isinstance(t["name"], str) and isinstance(t["output"], str)
            assert isinstance(t["score"], float) and 0.0 <= t["score"] <= t["max_score"]
            assert t["visibility"] == "visible" and t.get("status", "passed") in (
                "passed",
                "failed",
            )
    suites = ET.parse(graded.out / "class.xml").getroot()
    assert suites.tag == "testsuites" and len(suites) == len(graded.hand_ins)
    for suite in suites:
        cases = suite.findall("testcase")
        failed = [c for c in cases if c.find("failure") is not None or c.find("error") is not None]
        assert int(suite.get("tests", "-1")) == len(cases)
        assert int(suite.get("failures", "0")) + int(suite.get("errors", "0")) == len(failed)
